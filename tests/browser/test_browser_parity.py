"""The parity table of check.js (generator/verifier/browser/check.parity.json): the in-browser port
of the verifier's rules names, section by section, the Python module and functions it follows, and
every constant it writes a second time must equal the Python one.

check.js is published byte for byte, so the table is a file beside it, not a part of it. These tests
fail when a section of check.js is not in the table (or the table names one check.js lacks), when a
named module or function no longer exists (a rename the port did not follow), and when a path, a
bound, a list of keys or a pattern differs between the two.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
from typing import Any

import pytest

from tests.support.browser import unavailable
from tests.support.demo import REPO

BROWSER = REPO / "generator" / "verifier" / "browser"
CHECK_JS = BROWSER / "check.js"
TABLE: dict[str, Any] = json.loads((BROWSER / "check.parity.json").read_text(encoding="utf-8"))

# A section of check.js starts at a comment of dashes and its name: `// -------- the two checks`.
MARKER_RE = re.compile(r"^ *// -{10,} (.+?) *$", re.MULTILINE)


def markers() -> list[str]:
    return MARKER_RE.findall(CHECK_JS.read_text(encoding="utf-8"))


def python_value(ref: str) -> Any:
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


def js_constants(names: list[str]) -> dict[str, Any]:
    """The named constants of check.js as Node evaluates them: the script's closure is opened by
    exporting them under one extra name, on a copy; a pattern is given as its source."""
    node = shutil.which("node")
    if node is None:
        unavailable("Node.js is not installed (Debian: apt install nodejs)")
    source = CHECK_JS.read_text(encoding="utf-8")
    tail = "})(typeof module !== "
    assert source.count(tail) == 1, "check.js no longer ends with its closure's call"
    exposed = source.replace(tail, f"exports.__parity = {{{', '.join(names)}}};\n{tail}")
    program = (
        "const m = { exports: {} };"
        "new Function('module', 'exports', require('fs').readFileSync(0, 'utf8'))(m, m.exports);"
        "process.stdout.write(JSON.stringify(m.exports.__parity,"
        " (k, v) => v instanceof RegExp ? { regexp: v.source, flags: v.flags } : v));"
    )
    out = subprocess.run([node, "-e", program], input=exposed, capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def test_every_section_of_check_js_is_in_the_table_and_only_those() -> None:
    found = markers()
    listed = [s["marker"] for s in TABLE["sections"]]
    assert len(found) >= 10, found
    assert listed == found


def test_every_named_module_and_function_exists() -> None:
    for section in TABLE["sections"]:
        assert section["follows"] or section.get("browser_only"), f"{section['marker']}: follows nothing, says no why"
        for module, functions in section["follows"].items():
            assert module.startswith("generator."), module
            loaded = importlib.import_module(module)
            for fn in functions:
                assert callable(getattr(loaded, fn, None)), f"{section['marker']}: {module}.{fn} does not exist"


def test_every_constant_check_js_repeats_equals_the_python_one() -> None:
    rows = TABLE["constants"]
    got = js_constants([r["js"] for r in rows])
    for row in rows:
        js_value, py_value = got[row["js"]], python_value(row["python"])
        if isinstance(py_value, re.Pattern):
            assert js_value["flags"] in ("", "u"), row
            # JavaScript gives a pattern's `/` as `\/`.
            python_pattern = py_value.pattern.replace(row.get("python_only", ""), "")
            assert js_value["regexp"].replace("\\/", "/") == python_pattern, row
            continue
        if isinstance(py_value, tuple):
            py_value = [*row.get("js_only", []), *py_value]
        if isinstance(py_value, bytes):
            py_value = py_value.decode("latin-1")  # check.js writes a byte string as the text of those code points
        assert js_value == py_value, f"check.js {row['js']} = {js_value!r}, Python {row['python']} = {py_value!r}"


def test_the_constants_compared_include_the_paths_and_bounds() -> None:
    names = {r["js"] for r in TABLE["constants"]}
    assert {"CHECKPOINT_PATH", "POLICY_PATH", "KEYS_PATH", "REVOCATIONS_PATH", "MAX_DIMENSIONS"} <= names
    assert not names & set(TABLE["browser_only_constants"])
    for name in [*names, *TABLE["browser_only_constants"]]:
        assert re.search(rf"\b{name} = ", CHECK_JS.read_text(encoding="utf-8")), f"check.js defines no {name}"


@pytest.mark.parametrize("broken", ["module", "function", "constant"])
def test_the_table_fails_on_a_rename_the_port_did_not_follow(broken: str, monkeypatch: pytest.MonkeyPatch) -> None:
    table = json.loads(json.dumps(TABLE))
    if broken == "module":
        table["sections"][0]["follows"] = {"generator.verifier.core.no_such_module": ["f"]}
    elif broken == "function":
        table["sections"][0]["follows"] = {"generator.verifier.core.public_keys": ["no_such_function"]}
    else:
        table["constants"] = [{"js": "MAX_DIMENSIONS", "python": "generator.verifier.rules.score_edits:MAX_NAME"}]
    monkeypatch.setitem(globals(), "TABLE", table)
    check = (
        test_every_constant_check_js_repeats_equals_the_python_one
        if broken == "constant"
        else test_every_named_module_and_function_exists
    )
    with pytest.raises((AssertionError, ModuleNotFoundError)):
        check()
