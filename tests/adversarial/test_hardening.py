"""Regression tests for what a review of the first version found: each would have shipped."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.retire import retire_items
from generator.core import canonical_json
from generator.core.generator_errors import InputError
from generator.core.signing_key import load_key
from generator.core.strict_input import parse_yaml
from generator.program.datadir import Paths
from tests.support.demo import BuiltSite
from tests.support.programs import item, write_items

# -- strict YAML: numbers that are really text


@pytest.mark.parametrize("text", ["a: 0123", "a: 0110482339", "a: -012", "a: +00"])
def test_a_number_with_a_leading_zero_is_refused(text: str) -> None:
    with pytest.raises(InputError, match="leading zero; quote it") as e:
        parse_yaml(text, "items.yaml")
    assert e.value.problems[0].where == "line 1, column 4"


def test_an_integer_too_long_to_convert_is_refused() -> None:
    with pytest.raises(InputError, match="too large"):
        parse_yaml("a: " + "9" * 5000, "items.yaml")


def test_leading_zero_answers_are_never_committed(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=1, secret_items=0, retired=0)
    (paths.items_dir / "more.yaml").write_text(
        "items:\n  - id: b-0100\n    gate: b\n    prompt: p\n    answer:\n      account: {kind: scalar, tier: "
        "critical, value: 0110482339}\n"
    )
    before = paths.ledger_file.read_bytes()
    with pytest.raises(InputError, match="leading zero"):
        commit_new_items(paths, "2026-03-01T00:00:00Z")
    assert paths.ledger_file.read_bytes() == before


# -- the verifier fails cleanly on any shape


def _run(site: Path) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(
        [sys.executable, str(site / "verify.py"), str(site)], capture_output=True, text=True, timeout=120
    )
    assert "internal error of the verifier" not in p.stdout, p.stdout[-3000:]  # a bug, not a verdict
    return p


def _rewrite_manifest(site: Path, change: Callable[[dict], None]) -> None:
    m = json.loads((site / "transparency.json").read_bytes())
    change(m)
    (site / "transparency.json").write_bytes(canonical_json.dumps(m))


def _plant(site: Path, name: str) -> None:
    if name == "gate-id-list":
        _rewrite_manifest(site, lambda m: m["gates"][0].__setitem__("id", [1]))
    elif name == "reveal-id-object":
        _rewrite_manifest(site, lambda m: m["reveals"][0].__setitem__("id", {"a": 1}))
    elif name == "huge-integer":
        p = site / "transparency.json"
        p.write_bytes(p.read_bytes()[:-1] + b',"zz":' + b"9" * 5000 + b"}")
    elif name == "deep-nesting":
        (site / "transparency.json").write_bytes(b"[" * 100000 + b"]" * 100000)
    elif name == "symlink-loop":
        (site / "keys.json").unlink()
        os.symlink("keys.json", site / "keys.json")
    elif name == "vkey-integer":
        k = json.loads((site / "keys.json").read_bytes())
        k["keys"][0]["vkey"] = 5
        (site / "keys.json").write_bytes(canonical_json.dumps(k))
    elif name == "fifo":
        os.mkfifo(site / "fifo")
    elif name == "empty-folder":
        (site / "empty").mkdir()
    elif name == "v-true":
        p = site / "ledger/entries.json"
        p.write_bytes(p.read_bytes().replace(b'"type":"ledger-entries","v":1}', b'"type":"ledger-entries","v":true}'))


@pytest.mark.parametrize(
    ("name", "file"),
    [
        ("gate-id-list", "transparency.json"),
        ("reveal-id-object", "transparency.json"),
        ("huge-integer", "transparency.json"),
        ("deep-nesting", "transparency.json"),
        ("symlink-loop", "keys.json"),
        ("vkey-integer", "keys.json"),
        ("fifo", "fifo"),
        ("empty-folder", "empty"),
        ("v-true", "ledger/entries.json"),
    ],
)
def test_malformed_shapes_fail_cleanly(demo_copy: BuiltSite, name: str, file: str) -> None:
    _plant(demo_copy.out, name)
    p = _run(demo_copy.out)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    assert f"FAIL {file}" in p.stdout


# -- the generator's own safety


def test_the_demo_key_is_a_demo_wherever_it_is_kept(demo_site: BuiltSite, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(demo_site.paths.data, data, ignore=shutil.ignore_patterns("private"))
    private = tmp_path / "elsewhere"
    shutil.copytree(demo_site.paths.private, private)
    os.chmod(private / "signing.key", 0o600)
    paths = Paths(data, private)
    assert not paths.private_in_data
    out = tmp_path / "public"
    build(paths, out)
    assert "demo-banner" in (out / "index.html").read_text()


def test_keys_json_is_validated_before_building(built_program: BuiltSite) -> None:
    keys = json.loads(built_program.paths.keys_file.read_text())
    keys["keys"][0]["valid_until"] = "tomorrow"
    built_program.paths.keys_file.write_text(json.dumps(keys))
    with pytest.raises(InputError) as e:
        build(built_program.paths, built_program.out)
    assert [(p.file.endswith("keys.json"), p.where) for p in e.value.problems] == [(True, "keys[0].valid_until")]


def test_a_directory_with_a_bogus_manifest_is_not_replaced(built_program: BuiltSite, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "transparency.json").write_text("[]")
    (other / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not a site built by transparency"):
        build(built_program.paths, other)
    assert (other / "notes.txt").read_text() == "mine"


def test_a_refused_commit_leaves_no_public_reveal_file(
    make_program: Callable[..., Paths], monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = make_program(public_items=1, secret_items=0, retired=0)
    write_items(paths, [item("a-100", "a")], "more.yaml")
    before = sorted(p.name for p in paths.reveals_dir.iterdir())
    ledger = paths.ledger_file.read_bytes()

    # Fails after everything is staged, before the commit point.
    def full(*_: object) -> None:
        raise OSError("disk full (simulated)")

    monkeypatch.setattr("generator.program.journal.Transaction._sync_folders", full)
    with pytest.raises(OSError, match="disk full"):
        commit_new_items(paths, "2026-03-01T00:00:00Z")
    assert sorted(p.name for p in paths.reveals_dir.iterdir()) == before
    assert paths.ledger_file.read_bytes() == ledger
    assert not (paths.private / ".pending").exists()


def test_retire_names_the_id_given_twice(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=0, secret_items=2, retired=0)
    with pytest.raises(InputError, match="given twice: b-0001"):
        retire_items(paths, ["b-0001", "b-0002", "b-0001"], "x", "2026-03-01T00:00:00Z")


def test_serve_on_a_busy_port_is_a_clear_error(built_program: BuiltSite) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(main, ["serve", str(built_program.out), "--port", str(port)])
    assert result.exit_code == 2
    assert "cannot listen" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_signer_never_shows_its_seed(built_program: BuiltSite) -> None:
    signer = load_key(built_program.paths.key_file)
    assert signer.seed.hex() not in repr(signer)


# -- bounded input


BILLION_LAUGHS = """\
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
items:
  - {id: b-0100, gate: b, prompt: *i, answer: {x: {kind: text, tier: low, value: *i}}}
"""


def test_a_yaml_bomb_is_refused_at_once(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=1, secret_items=0, retired=0)
    (paths.items_dir / "bomb.yaml").write_text(BILLION_LAUGHS)
    result = CliRunner().invoke(main, ["--data", str(paths.data), "commit", "--at", "2026-03-01T00:00:00Z"])
    assert result.exit_code == 2
    assert "bomb.yaml [line 2, column 8]: malformed YAML: aliases (*name) are not allowed" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("deep.yaml", "items: " + "[" * 200 + "]" * 200, "nested more than 64 levels deep"),
        ("deep.json", '{"items": ' + "[" * 200 + "]" * 200 + "}", "nested more than 64 levels deep"),
        ("deeper.json", '{"items": ' + "[" * 100000 + "]" * 100000 + "}", "nested too deeply"),
    ],
)
def test_deep_nesting_in_a_source_is_refused(
    make_program: Callable[..., Paths], name: str, text: str, message: str
) -> None:
    paths = make_program(public_items=1, secret_items=0, retired=0)
    (paths.items_dir / name).write_text(text)
    with pytest.raises(InputError, match=message):
        commit_new_items(paths, "2026-03-01T00:00:00Z")


def test_a_source_too_large_is_refused_before_it_is_read(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=1, secret_items=0, retired=0)
    huge = paths.items_dir / "huge.yaml"
    with huge.open("wb") as f:  # sparse: 200 MB of nothing, read back only if the size is not checked first
        f.truncate(200 * 1024 * 1024)
    with pytest.raises(InputError) as e:
        commit_new_items(paths, "2026-03-01T00:00:00Z")
    hit = [p for p in e.value.problems if "too large" in p.message]
    assert hit and hit[0].file.endswith("huge.yaml") and "209,715,200 bytes" in (hit[0].found or "")


def test_keygen_never_leaves_half_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.core.signing_key import generate_signer, write_key

    target = tmp_path / "signing.key"
    monkeypatch.setattr(
        "generator.core.signing_key.os.link", lambda a, b: (_ for _ in ()).throw(OSError("killed (simulated)"))
    )
    with pytest.raises(OSError):
        write_key(target, generate_signer("test.example.org/k"))
    assert not target.exists() and not list(tmp_path.iterdir())


def test_the_build_s_mark_is_replaced_never_written_through_a_link(built_program: BuiltSite, tmp_path: Path) -> None:
    """A link planted at the mark the build writes (to tell its inputs' identities) is replaced, its
    target untouched: the build calls _mark once its inputs are a clock tick old."""
    from generator.state.build_cache import MARK_NAME, _mark

    paths = built_program.paths
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"someone else's file\n")
    mark = paths.private / "cache" / MARK_NAME
    mark.unlink(missing_ok=True)
    mark.symlink_to(victim)
    _mark(paths)
    assert victim.read_bytes() == b"someone else's file\n"
    assert not mark.is_symlink() and mark.is_file()


def test_a_key_s_temporary_file_is_never_written_through(tmp_path: Path) -> None:
    from generator.core.signing_key import generate_signer, write_key

    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me\n")
    target = tmp_path / "private" / "signing.key"
    target.parent.mkdir()
    (target.parent / f".signing.key.{os.getpid()}.tmp").symlink_to(victim)
    write_key(target, generate_signer("test.example.org/k"))
    assert victim.read_bytes() == b"keep me\n"
    assert target.is_file() and not target.is_symlink()


# -- pages isolate text from data


def test_untrusted_text_is_isolated_on_pages(make_program: Callable[..., Paths], tmp_path: Path) -> None:
    from bs4 import BeautifulSoup

    paths = make_program(public_items=1, secret_items=2, retired=0)
    retire_items(paths, ["b-0002"], "Leaked \u202eto a forum\u202c today.", "2026-03-01T00:00:00Z")
    out = tmp_path / "site"
    build(paths, out)
    page = BeautifulSoup((out / "items" / "b-0002.html").read_text(), "html.parser")
    isolated = [b.get_text() for b in page.find_all("bdi")]
    assert "Leaked \u202eto a forum\u202c today." in isolated
    assert page.find("pre", class_="prompt")["dir"] == "auto"


# -- the verifier's published hash


def test_the_readme_publishes_this_release_s_verifier_hash() -> None:
    """The verifier release table (docs/verifier-releases.md, which README links under "Verifier releases")
    names the SHA-256 of the verify.py this release ships, so that anyone can tell a genuine copy from a
    site's own."""
    from generator import __version__
    from tests.support.demo import REPO

    digest = hashlib.sha256((REPO / "generator" / "verify.py").read_bytes()).hexdigest()
    table = (REPO / "docs" / "verifier-releases.md").read_text()
    assert f"| {__version__} | `{digest}` |" in table, (
        f"docs/verifier-releases.md needs: | {__version__} | `{digest}` | (make bundle writes it)"
    )
    readme = (REPO / "README.md").read_text()
    assert "Verifier releases" in readme and "(docs/verifier-releases.md)" in readme


def test_a_yaml_source_with_too_many_values_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("generator.core.strict_input.MAX_YAML_NODES", 1000)
    with pytest.raises(InputError, match="more than 1,000 values in one YAML file"):
        parse_yaml("[" + "0, " * 2000 + "0]", "big.yaml")
    assert parse_yaml("[" + "0, " * 500 + "0]", "ok.yaml") == [0] * 501
