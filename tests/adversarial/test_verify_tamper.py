"""The standalone verifier (`verify.py`, format v1 §8) against the demo site and a tamper matrix
(tests/support/tamper.py).

Each tamper must make `python verify.py SITE` exit 1 and name the file at fault in a FAIL
line; the in-process report (`generator.verify.verify_site`) must fail in exactly that file.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

import generator.verifier as v
from generator.core.signing_key import load_key
from tests.support.tamper import (
    KEYS,
    MANIFEST,
    REVEAL,
    TAMPERS,
    VERIFY_SRC,
    Tamper,
    commitment_of,
    other_signer,
    read_json,
    resign_everything,
    run_verifier,
    t_reveal_byte_changed,
    tampered,
    verify_cli,
    write_canonical,
)


@pytest.mark.parametrize("tamper", TAMPERS, ids=[t.id for t in TAMPERS])
def test_tamper_is_caught(tamper: Tamper, demo_copy: Any) -> None:
    original_vkey = load_key(demo_copy.paths.key_file).vkey
    site = tampered(demo_copy, tamper.mutate)

    r = verify_cli(site.root)
    assert r.rc == 1, f"{tamper.id}: expected exit 1, got {r.rc}\n{r.text}"
    assert r.names_file(tamper.target), f"{tamper.id}: no FAIL line names {tamper.target}\n{r.out}"
    assert "PASS" not in r.out.split("\n")[-1], r.out

    report = v.verify_site(site.root)
    assert not report.ok
    failed_files = {p.file for p in report.failures}
    assert failed_files == tamper.files, (
        f"{tamper.id}: failures should be about exactly {sorted(tamper.files)}, got "
        f"{sorted(failed_files)}:\n" + "\n".join(p.describe() for p in report.failures)
    )
    targeted = [p for p in report.failures if p.file == tamper.target and tamper.message in p.message]
    assert targeted, f"{tamper.id}: no failure in {tamper.target} says {tamper.message!r}:\n" + "\n".join(
        p.describe() for p in report.failures
    )
    for f in tamper.files:
        assert r.names_file(f), f"{tamper.id}: the CLI output has no FAIL line for {f}\n{r.out}"

    if tamper.pin_original_key:
        pinned = verify_cli(site.root, "--key", original_vkey)
        assert pinned.rc == 1, f"{tamper.id}: --key <original vkey> must fail too\n{pinned.text}"
        assert pinned.names_file(tamper.target), pinned.out


def test_tamper_matrix_is_large_enough() -> None:
    assert len(TAMPERS) >= 14
    assert len({t.id for t in TAMPERS}) == len(TAMPERS)


# ---------------------------------------------------------------------------------------------
# The untouched demo site


def test_demo_site_passes(demo_site: Any) -> None:
    r = verify_cli(demo_site.out)
    assert r.rc == 0, f"verify.py on the demo site exited {r.rc}\n{r.text}"
    assert "PASS" in r.out, r.out
    assert not r.fail_lines(), r.out
    # Unpinned, it says it trusts the shipped key and prints the fingerprint (format v1 §8).
    fp = load_key(demo_site.paths.key_file).fingerprint
    assert fp in r.out, f"the fingerprint {fp} is not printed\n{r.out}"
    assert "trusting the key shipped inside the site" in r.out, r.out


def test_demo_site_passes_json(demo_site: Any) -> None:
    r = verify_cli(demo_site.out, "--json")
    assert r.rc == 0, r.text
    report = json.loads(r.out)
    assert report["ok"] is True, report
    assert report["failures"] == []
    assert report["failed"] == 0
    assert report["checks"] > 0
    assert report["key"]["fingerprint"] == load_key(demo_site.paths.key_file).fingerprint


def test_demo_site_passes_in_process(demo_site: Any) -> None:
    report = v.verify_site(demo_site.out)
    assert report.ok, "\n".join(p.describe() for p in report.failures)


# ---------------------------------------------------------------------------------------------
# --key pinning


def test_pin_with_site_vkey_and_fingerprint(demo_site: Any) -> None:
    signer = load_key(demo_site.paths.key_file)
    for pin in (signer.vkey, signer.fingerprint):
        r = verify_cli(demo_site.out, "--key", pin)
        assert r.rc == 0, f"--key {pin} should pass\n{r.text}"
        assert "pinned with --key" in r.out, r.out
        assert "does NOT match" not in r.out, r.out


@pytest.mark.parametrize("form", ["vkey", "fingerprint"])
def test_pin_with_other_key_fails(demo_site: Any, form: str) -> None:
    signer = load_key(demo_site.paths.key_file)
    other = other_signer(signer.name)
    pin = other.vkey if form == "vkey" else other.fingerprint
    r = verify_cli(demo_site.out, "--key", pin)
    assert r.rc == 1, f"--key with another key's {form} must fail\n{r.text}"
    assert r.names_file(KEYS), r.out
    assert "is not the key given with --key" in r.out, r.out
    assert "does NOT match" in r.out, r.out


def test_pin_with_other_name_same_key_fails(demo_site: Any) -> None:
    """A vkey for the right public key under another name is not the program's key."""
    signer = load_key(demo_site.paths.key_file)
    wrong = v.make_vkey("example.org/another-program", signer.public_key)
    r = verify_cli(demo_site.out, "--key", wrong)
    assert r.rc == 1, r.text
    assert "is not the key given with --key" in r.out, r.out


def test_a_full_rekey_fails_even_unpinned_once_the_ledger_names_its_keys(demo_copy: Any) -> None:
    """A site re-keyed completely (keys.json, PEM and every signature by another key). Under
    v1 it was self-consistent and passed unpinned; the demo's ledger now records its keys (a
    rotation and a revocation, format v2), so keys.json must follow the ledger's key events and
    the archived checkpoints carry the keys of their time: the re-key fails without --key, and
    with the original key pinned."""
    root = demo_copy.out
    original = load_key(demo_copy.paths.key_file)
    doc = read_json(root, KEYS)
    origin = doc["origin"]
    other = other_signer(origin)
    active = next(k for k in doc["keys"] if k["status"] == "active")
    (root / active["pem"]).unlink()
    new_pem = f"keys/{other.key_id.hex()}.pem"
    (root / new_pem).write_bytes(other.pem)
    active.update(
        vkey=other.vkey,
        public_key=base64.b64encode(other.public_key).decode(),
        fingerprint=other.fingerprint,
        pem=new_pem,
    )
    write_canonical(root, KEYS, doc)
    resign_everything(root, other, origin)

    unpinned = verify_cli(root)
    assert unpinned.rc == 1, f"a re-key the ledger's key events contradict must fail\n{unpinned.text}"
    assert "key events" in unpinned.out and other.fingerprint in unpinned.out, unpinned.out
    for pin in (original.vkey, original.fingerprint):
        r = verify_cli(root, "--key", pin)
        assert r.rc == 1, f"--key {pin} must catch the re-keyed site\n{r.text}"
        assert "is not the key given with --key" in r.out, r.out


# ---------------------------------------------------------------------------------------------
# Exit status 2


def test_exit_2_missing_directory(demo_site: Any, tmp_path: Path) -> None:
    r = run_verifier(demo_site.out / "verify.py", str(tmp_path / "no-such-site"), cwd=tmp_path)
    assert r.rc == 2, f"a missing directory must exit 2\n{r.text}"
    assert "not a directory" in r.err, r.err


def test_exit_2_directory_without_manifest(demo_site: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "index.html").write_text("<p>hello</p>", encoding="utf-8")
    r = run_verifier(demo_site.out / "verify.py", str(empty), cwd=tmp_path)
    assert r.rc == 2, f"a directory without transparency.json must exit 2\n{r.text}"
    assert "transparency.json" in r.err, r.err


def test_exit_2_unknown_option(demo_site: Any) -> None:
    r = verify_cli(demo_site.out, "--no-such-option")
    assert r.rc == 2, f"an unknown option must exit 2\n{r.text}"
    assert "--no-such-option" in r.err, r.err


# ---------------------------------------------------------------------------------------------
# Standalone: no generator package, no repository on the path


def test_standalone_copy_of_verify_py(demo_site: Any, tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    tool.mkdir()
    shutil.copy2(demo_site.out / "verify.py", tool / "verify.py")
    site = tmp_path / "elsewhere" / "site"
    shutil.copytree(demo_site.out, site)
    assert sorted(p.name for p in tool.iterdir()) == ["verify.py"]
    r = run_verifier(tool / "verify.py", str(site), cwd=tool, isolated=True)
    assert r.rc == 0, f"standalone verify.py failed\n{r.text}"
    assert "PASS" in r.out, r.out


def test_standalone_defaults_to_its_own_folder(demo_site: Any, tmp_path: Path) -> None:
    site = tmp_path / "downloaded"
    shutil.copytree(demo_site.out, site)
    r = run_verifier(Path("verify.py"), cwd=site, isolated=True)
    assert r.rc == 0, f"verify.py without SITE, run inside the site, failed\n{r.text}"
    assert "PASS" in r.out, r.out
    assert str(site.resolve()) in r.out, f"it should verify its own folder\n{r.out}"


# ---------------------------------------------------------------------------------------------
# Only the standard library and PyNaCl


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"line {node.lineno}: relative import in a standalone module"
            found.append((node.lineno, node.module or ""))
    return found


def test_verify_py_imports_only_stdlib_and_nacl() -> None:
    tree = ast.parse(VERIFY_SRC.read_text(encoding="utf-8"), filename=str(VERIFY_SRC))
    imports = _imported_modules(tree)
    assert any(name.split(".")[0] == "nacl" for _, name in imports), "expected PyNaCl imports"
    allowed = set(sys.stdlib_module_names) | {"nacl", "__future__"}
    bad = [(line, name) for line, name in imports if name.split(".")[0] not in allowed]
    assert not bad, f"generator/verify.py imports non-stdlib modules: {bad}"
    # Dynamic imports would dodge this check.
    calls = [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and (
            (isinstance(n.func, ast.Name) and n.func.id == "__import__")
            or (isinstance(n.func, ast.Attribute) and n.func.attr == "import_module")
        )
    ]
    assert not calls, f"dynamic imports at lines {calls}"


def test_import_check_sees_nested_imports() -> None:
    """The AST walk finds imports inside try blocks and functions (so the test above does)."""
    src = "try:\n    import yaml\nexcept ImportError:\n    pass\ndef f():\n    from requests import get\n"
    names = {name for _, name in _imported_modules(ast.parse(src))}
    assert names == {"yaml", "requests"}


def test_site_verify_py_is_byte_identical(demo_site: Any) -> None:
    assert (demo_site.out / "verify.py").read_bytes() == VERIFY_SRC.read_bytes(), (
        "the site's verify.py differs from generator/verify.py"
    )
    manifest = read_json(demo_site.out, MANIFEST)
    assert manifest["verifier"] == "verify.py"


# ---------------------------------------------------------------------------------------------
# The in-process API agrees with the command line


_BY_ID = {t.id: t for t in TAMPERS}


@pytest.mark.parametrize(
    "tamper_id", ["reveal-byte-changed-resigned", "commitment-list-status-flipped", "extra-file-added"]
)
def test_in_process_report_matches_cli(tamper_id: str, demo_copy: Any) -> None:
    site = tampered(demo_copy, _BY_ID[tamper_id].mutate)
    r = verify_cli(site.root, "--json")
    assert r.rc == 1, r.text
    cli = json.loads(r.out)
    report = v.verify_site(str(site.root))
    assert report.ok is cli["ok"] is False
    api_failures = [
        {"file": p.file, "message": p.message, "where": p.where, "expected": p.expected, "found": p.found}
        for p in report.failures
    ]
    cli_failures = [{k: f[k] for k in ("file", "message", "where", "expected", "found")} for f in cli["failures"]]
    assert api_failures == cli_failures
    assert report.checks == cli["checks"]


def test_reveal_commitment_failure_carries_expected_and_found(demo_copy: Any) -> None:
    commitment, index = commitment_of(demo_copy.out, "a-001")
    site = tampered(demo_copy, t_reveal_byte_changed)
    actual = hashlib.sha256((site.root / REVEAL).read_bytes()).hexdigest()
    assert actual != commitment
    report = v.verify_site(site.root)
    [p] = [p for p in report.failures if p.file == REVEAL]
    assert "commitment" in p.message
    # `expected` is the commitment, followed by where the ledger holds it.
    assert p.expected is not None and re.match(r"[0-9a-f]{64}\b", p.expected), p.expected
    assert p.expected.split()[0] == commitment, p.expected
    assert f"entries[{index}]" in p.expected, p.expected
    assert p.found == actual, p.found
