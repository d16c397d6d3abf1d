"""The `transparency` command, driven through click's CliRunner (and `serve` in a subprocess).

Every command is exercised as an operator would type it: a whole program's life in a temporary
directory, then each way a command must refuse, with exit status 2, a message on stderr that
names what is wrong, and nothing written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from generator.cli import main
from generator.core.signing_key import generate_signer
from generator.program.datadir import Paths
from generator.program.sealed import iter_sealed
from generator.verifier import sha256_hex
from tests.support.demo import REPO, BuiltSite
from tests.support.files import tree
from tests.support.programs import item, write_items

DEFAULT_PARAMS = REPO / "generator" / "defaults" / "methodology.json"
DEFAULT_PROSE = REPO / "generator" / "defaults" / "methodology.md"


# ---------------------------------------------------------------------------------------------
# Helpers


def run(args: list[str], code: int = 0, paths: Paths | None = None) -> Result:
    """Invoke the command (with --data/--private first when `paths` is given); check the exit status."""
    argv = (["--data", str(paths.data), "--private", str(paths.private)] if paths else []) + [str(a) for a in args]
    result = CliRunner().invoke(main, argv, prog_name="transparency")
    assert result.exit_code == code, (
        f"transparency {' '.join(argv)}: exit {result.exit_code}, wanted {code}\n"
        f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}\nexception: {result.exception!r}"
    )
    if code == 2:
        # A refusal is a message, never a traceback.
        assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result


def cli_refused(args: list[str], paths: Paths | None = None) -> str:
    """Run a command that must be refused with exit 2 and change nothing of the program; return
    its stderr, which says why."""
    before = tree(paths.data, paths.private) if paths else {}
    result = run(args, 2, paths)
    err = result.stderr
    assert err.strip(), "a refusal must say why on stderr"
    assert (tree(paths.data, paths.private) if paths else {}) == before, "a refused command changed a file"
    return err


def ledger_lines(paths: Paths) -> list[dict]:
    return [json.loads(line) for line in paths.ledger_file.read_bytes().splitlines()]


@pytest.fixture
def program(make_program: Callable[..., Paths]) -> Paths:
    """gates a (public) and b (secret); a-001, a-002 revealed; b-0001 retired; b-0002, b-0003 sealed.
    Its last event is at 2026-02-01T00:00:00Z."""
    return make_program()


# ---------------------------------------------------------------------------------------------
# Help and version


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["init"],
        ["keygen"],
        ["gate"],
        ["gate", "add"],
        ["methodology"],
        ["methodology", "publish"],
        ["commit"],
        ["retire"],
        ["build"],
        ["verify"],
        ["serve"],
    ],
    ids=lambda a: " ".join(a) or "group",
)
def test_help(argv: list[str]) -> None:
    result = run([*argv, "--help"])
    assert "Usage:" in result.stdout
    assert " ".join(["transparency", *argv]) in result.stdout
    assert run([*argv, "-h"]).stdout == result.stdout


def test_group_help_lists_every_command() -> None:
    out = run(["--help"]).stdout
    for name in ("init", "keygen", "gate", "methodology", "commit", "retire", "build", "verify", "serve"):
        assert re.search(rf"^\s+{name}\b", out, re.M), name
    assert "Exit status" in out
    # The copy a site ships is not the verifier to trust (README): --help must not send an auditor to it.
    assert "checked by public/verify.py" not in out and "never the copy the site ships" in " ".join(out.split())


def test_version() -> None:
    from generator import __version__

    out = run(["--version"]).stdout
    assert "transparency" in out and __version__ in out


def test_python_dash_m_generator_help() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "generator", "--help"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "Usage:" in proc.stdout and "verify" in proc.stdout


# ---------------------------------------------------------------------------------------------
# A whole program's life, command by command


def test_program_life(tmp_path: Path) -> None:
    data, private = tmp_path / "data", tmp_path / "private"
    paths = Paths(data, private)

    out = run(
        [
            "init",
            "--name",
            "Life program",
            "--origin",
            "test.example.org/x",
            "--description",
            "A *test*.",
            "--methodology",
            DEFAULT_PARAMS,
            "--prose",
            DEFAULT_PROSE,
            "--at",
            "2026-01-05T09:00:00Z",
        ],
        paths=paths,
    ).stdout
    assert "verifier key test.example.org/x+" in out and "fingerprint  SHA256:" in out
    for f in (paths.program_file, paths.keys_file, paths.ledger_file, paths.key_file):
        assert f.is_file(), f
    assert paths.items_dir.is_dir() and paths.sealed_dir.is_dir() and paths.reveals_dir.is_dir()
    assert stat.S_IMODE(paths.key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    program = yaml.safe_load(paths.program_file.read_text())
    assert program["name"] == "Life program" and program["origin"] == "test.example.org/x"
    leaves = ledger_lines(paths)
    gates = [leaf for leaf in leaves if leaf["type"] == "gate"]
    assert [(g["id"], g["public"]) for g in gates] == [("a", True), ("b", False)]
    methodologies = [leaf for leaf in leaves if leaf["type"] == "methodology"]
    assert [m["version"] for m in methodologies] == ["2026.1"]
    assert (paths.methodology_dir / "2026.1.json").is_file()
    assert sha256_hex((paths.methodology_dir / "2026.1.json").read_bytes()) == methodologies[0]["sha256"]
    assert all(leaf["at"] == "2026-01-05T09:00:00Z" for leaf in leaves)

    write_items(paths, [item("a-001", "a"), item("a-002", "a"), item("b-001", "b"), item("b-002", "b")])
    out = run(["commit", "--at", "2026-01-06T10:00:00Z"], paths=paths).stdout
    assert "Committed 4 new item(s): 2 revealed (public gate), 2 sealed" in out
    assert sorted(p.name for p in paths.reveals_dir.iterdir()) == ["a-001.json", "a-002.json"]
    sealed = dict(iter_sealed(paths))
    assert sorted(sealed) == ["b-001", "b-002"]
    assert all(p.suffix == ".jsonl" and p.stat().st_mode & 0o077 == 0 for p in paths.sealed_dir.iterdir())
    # Committing again is a no-op.
    assert "Committed 0 new item(s)" in run(["commit", "--at", "2026-01-06T10:00:00Z"], paths=paths).stdout

    out = run(
        ["retire", "b-001", "--note", "Retired: seen in the wild.", "--at", "2026-01-07T00:00:00Z"], paths=paths
    ).stdout
    assert "Retired b-001 at 2026-01-07T00:00:00Z" in out
    assert (paths.reveals_dir / "b-001.json").read_bytes() == sealed["b-001"]
    assert ledger_lines(paths)[-1] == {
        "type": "reveal",
        "v": 1,
        "id": "b-001",
        "reason": "retired",
        "note": "Retired: seen in the wild.",
        "at": "2026-01-07T00:00:00Z",
    }

    out = run(["gate", "add", "c", "--name", "Gate C", "--secret", "--at", "2026-01-08T00:00:00Z"], paths=paths).stdout
    assert "Declared gate c (secret)" in out
    assert ledger_lines(paths)[-1] == {
        "type": "gate",
        "v": 1,
        "id": "c",
        "name": "Gate C",
        "public": False,
        "at": "2026-01-08T00:00:00Z",
    }

    params = json.loads(DEFAULT_PARAMS.read_text())
    params["version"] = "2026.2"
    params_path = tmp_path / "params.json"
    params_path.write_text(json.dumps(params, indent=2))
    prose_path = tmp_path / "prose.md"
    shutil.copy(DEFAULT_PROSE, prose_path)
    out = run(
        ["methodology", "publish", params_path, "--prose", prose_path, "--at", "2026-01-09T00:00:00Z"], paths=paths
    ).stdout
    assert "Published methodology 2026.2" in out
    last = ledger_lines(paths)[-1]
    assert last["type"] == "methodology" and last["version"] == "2026.2" and last["at"] == "2026-01-09T00:00:00Z"
    assert sha256_hex((paths.methodology_dir / "2026.2.json").read_bytes()) == last["sha256"]

    site = tmp_path / "public"
    result = run(["build", "--out", site], paths=paths)
    assert "Built" in result.stdout and "Signed by SHA256:" in result.stdout
    assert "DEMO" not in result.stderr  # the private directory is outside the data directory
    assert (site / "transparency.json").is_file() and (site / "reveals" / "b-001.json").is_file()
    assert not (site / "reveals" / "b-002.json").exists()

    out = run(["verify", site]).stdout
    assert "PASS" in out and "FAIL" not in out

    report = json.loads(run(["verify", site, "--json"]).stdout)
    assert report["ok"] is True and report["failed"] == 0 and report["failures"] == []
    assert report["counts"]["commitments"] == 4 and report["counts"]["revealed"] == 3
    assert report["counts"]["gates"] == 3 and report["counts"]["methodology versions"] == 2

    vkey = json.loads(paths.keys_file.read_text())["keys"][0]["vkey"]
    assert "PASS" in run(["verify", site, "--key", vkey]).stdout
    fingerprint = report["key"]["fingerprint"]
    assert "PASS" in run(["verify", site, "--key", fingerprint]).stdout

    wrong = generate_signer("test.example.org/x").vkey
    result = run(["verify", site, "--key", wrong], 1)
    assert "FAIL" in result.stdout and "--key" in result.stdout
    report = json.loads(run(["verify", site, "--key", wrong, "--json"], 1).stdout)
    assert report["ok"] is False and report["failed"] >= 1

    # A rebuild from the same data is byte-identical, and still verifies.
    before = tree(site)
    run(["build", "--out", site], paths=paths)
    assert tree(site) == before


def test_keygen_writes_a_new_key(program: Paths, tmp_path: Path) -> None:
    target = tmp_path / "keys" / "other.key"
    out = run(["keygen", "--out", target], paths=program).stdout
    assert target.is_file() and stat.S_IMODE(target.stat().st_mode) == 0o600
    text = target.read_text().strip()
    assert text.startswith("PRIVATE+KEY+test.example.org/prog+")  # the origin from program.yaml
    assert "verifier key test.example.org/prog+" in out


def test_keygen_with_origin_needs_no_program(tmp_path: Path) -> None:
    paths = Paths(tmp_path / "nodata", tmp_path / "nopriv")
    target = tmp_path / "k.key"
    run(["keygen", "--origin", "other.example.org/y", "--out", target], paths=paths)
    assert target.read_text().startswith("PRIVATE+KEY+other.example.org/y+")


# ---------------------------------------------------------------------------------------------
# Refusals: exit 2, a message naming what is wrong, nothing written


def test_init_over_existing_program(program: Paths) -> None:
    before = tree(program.data, program.private)
    err = cli_refused(["init", "--name", "Again", "--origin", "test.example.org/prog"], program)
    assert err.startswith("error:")
    assert "already there" in err and "refusing to overwrite" in err
    assert str(program.data) in err or "program.yaml" in err
    assert tree(program.data, program.private) == before


def test_init_bad_origin(tmp_path: Path) -> None:
    paths = Paths(tmp_path / "data", tmp_path / "private")
    err = cli_refused(["init", "--name", "X", "--origin", "bad origin with spaces"], paths)
    assert "--origin" in err and "not a valid origin" in err
    assert "bad origin with spaces" in err  # what was found
    assert "URL without scheme" in err  # what was expected
    assert not paths.data.exists() and not paths.private.exists()


def test_init_uppercase_gate_id(tmp_path: Path) -> None:
    paths = Paths(tmp_path / "data", tmp_path / "private")
    err = cli_refused(["init", "--name", "X", "--origin", "test.example.org/x", "--gate", "A:x:public"], paths)
    assert "--gate" in err and "A:x:public" in err
    assert "^[a-z0-9]{1,16}$" in err
    assert not paths.data.exists() and not paths.private.exists()


def test_init_reports_every_bad_option_at_once(tmp_path: Path) -> None:
    """One run lists all problems: a bad origin and two bad gates, not just the first found."""
    paths = Paths(tmp_path / "data", tmp_path / "private")
    err = cli_refused(
        ["init", "--name", "X", "--origin", "bad origin", "--gate", "A:x:public", "--gate", "b:y:maybe"], paths
    )
    assert "A:x:public" in err
    assert "b:y:maybe" in err
    assert "--origin" in err and "bad origin" in err
    assert not paths.data.exists()


def test_keygen_refuses_to_overwrite(program: Paths, tmp_path: Path) -> None:
    target = tmp_path / "existing.key"
    target.write_text("precious\n")
    err = cli_refused(["keygen", "--origin", "test.example.org/prog", "--out", target], program)
    assert str(target) in err and "refusing to overwrite" in err
    assert target.read_text() == "precious\n"
    # The default target, the program's key, is refused the same way.
    key_before = program.key_file.read_bytes()
    err = cli_refused(["keygen"], program)
    assert "signing.key" in err and "refusing to overwrite" in err
    assert program.key_file.read_bytes() == key_before


def test_keygen_without_program_or_origin(tmp_path: Path) -> None:
    paths = Paths(tmp_path / "data", tmp_path / "private")
    err = cli_refused(["keygen"], paths)
    assert "--origin" in err and "program.yaml" in err
    assert not paths.private.exists() and not paths.data.exists()


def test_gate_add_existing_id(program: Paths) -> None:
    before = tree(program.data)
    err = cli_refused(
        ["gate", "add", "b", "--name", "Gate B again", "--secret", "--at", "2026-03-01T00:00:00Z"], program
    )
    assert "ledger.jsonl" in err and "gate b is declared twice" in err
    assert "nothing was written" in err
    assert tree(program.data) == before


@pytest.mark.parametrize("gate_id", ["C", "c!", "a-b", "x" * 17, ""])
def test_gate_add_malformed_id(program: Paths, gate_id: str) -> None:
    before = tree(program.data)
    err = cli_refused(["gate", "add", gate_id, "--name", "Bad", "--public", "--at", "2026-03-01T00:00:00Z"], program)
    assert "malformed gate id" in err
    assert "^[a-z0-9]{1,16}$" in err
    assert tree(program.data) == before


def test_retire_unknown_id(program: Paths) -> None:
    before = tree(program.data)
    err = cli_refused(["retire", "nope-1", "--note", "x", "--at", "2026-03-01T00:00:00Z"], program)
    assert "nope-1" in err and "never committed" in err
    assert tree(program.data) == before


def test_retire_twice(program: Paths) -> None:
    before = tree(program.data)
    err = cli_refused(["retire", "b-0001", "--note", "again", "--at", "2026-03-01T00:00:00Z"], program)
    assert "b-0001" in err and "already revealed" in err and "retired" in err
    assert tree(program.data) == before


def test_retire_public_item(program: Paths) -> None:
    before = tree(program.data)
    err = cli_refused(["retire", "a-001", "--note", "x", "--at", "2026-03-01T00:00:00Z"], program)
    assert "a-001" in err and "already revealed" in err and "public-gate" in err
    assert tree(program.data) == before


def test_retire_after_source_edit(program: Paths) -> None:
    src = program.items_dir / "items.yaml"
    doc = yaml.safe_load(src.read_text())
    row = next(r for r in doc["items"] if r["id"] == "b-0002")
    row["prompt"] = "A different prompt."
    src.write_text(yaml.safe_dump(doc, sort_keys=False))
    before = tree(program.data)
    err = cli_refused(["retire", "b-0002", "--note", "x", "--at", "2026-03-01T00:00:00Z"], program)
    assert "b-0002" in err and "changed since it was committed" in err
    assert "items.yaml" in err
    assert tree(program.data) == before
    assert not program.reveal_file("b-0002").exists()


@pytest.mark.parametrize(
    "at",
    [
        "2026-03-01",
        "2026-03-01 00:00:00Z",
        "2026-03-01T00:00:00+01:00",
        "2026-13-01T00:00:00Z",
        "2026-03-01T00:00:00.5Z",
        "now",
    ],
)
def test_at_malformed(program: Paths, at: str) -> None:
    before = tree(program.data)
    err = cli_refused(["gate", "add", "c", "--name", "Gate C", "--public", "--at", at], program)
    assert "--at" in err and "malformed time" in err
    assert "YYYY-MM-DDTHH:MM:SSZ" in err and at in err
    assert tree(program.data) == before


@pytest.mark.parametrize(
    "command",
    [
        ["gate", "add", "c", "--name", "Gate C", "--public"],
        ["commit"],
        ["retire", "b-0002", "--note", "x"],
    ],
)
def test_at_before_last_event(program: Paths, command: list[str]) -> None:
    write_items(program, [item("b-0100", "b")], "more.yaml")  # something new for commit to do
    before = tree(program.data)
    err = cli_refused([*command, "--at", "2026-01-31T23:59:59Z"], program)
    assert "--at" in err and "before the ledger's last event" in err
    assert "2026-02-01T00:00:00Z or later" in err
    assert tree(program.data) == before


def test_a_bad_at_is_reported_with_every_other_problem(program: Paths) -> None:
    err = cli_refused(["revoke", "nosuch", "--reason", "", "--at", "2020-01-01T00:00:00Z"], program)
    assert "--at" in err and "before the ledger's last event" in err
    assert "no certificate nosuch was issued" in err  # not hidden by the time
    assert re.search(r"^  --reason\b.*empty", err, re.M), err


@pytest.mark.parametrize(
    "command",
    [
        ["withdraw", "run-x", "--reason", "never run"],
        ["revoke", "cert-x", "--reason", "wrong"],
        ["gate", "add", "c", "--name", "Gate C", "--public"],
        ["retire", "b-0002", "--note", "x"],
    ],
)
def test_a_clock_before_the_last_event_is_not_called_at(program: Paths, command: list[str]) -> None:
    """Without --at the event's time is the clock's; the refusal says so instead of naming --at."""
    run(["gate", "add", "z", "--name", "Gate Z", "--public", "--at", "2999-01-01T00:00:00Z"], paths=program)
    err = cli_refused(command, program)
    assert not re.search(r"^\s*--at\b", err, re.M), err  # no problem is filed under an option never given
    assert "before the ledger's last event" in err and "now (no --at given): " in err
    assert "2999-01-01T00:00:00Z or later (give it with --at)" in err


def test_methodology_publish_existing_version(program: Paths) -> None:
    before = tree(program.data)
    err = cli_refused(
        ["methodology", "publish", DEFAULT_PARAMS, "--prose", DEFAULT_PROSE, "--at", "2026-03-01T00:00:00Z"], program
    )
    assert "2026.1" in err and "already published" in err
    assert "methodology.json" in err
    assert tree(program.data) == before


def test_methodology_publish_names_a_fraction_and_every_other_problem(program: Paths, tmp_path: Path) -> None:
    params = json.loads(DEFAULT_PARAMS.read_text())
    params["version"] = "2026.9"
    params["item_threshold"] = "THRESHOLD"
    params["colour"] = "blue"
    source = tmp_path / "m1.json"
    source.write_text(json.dumps(params, indent=1).replace('"THRESHOLD"', "0.8"))
    err = cli_refused(["methodology", "publish", source, "--prose", DEFAULT_PROSE], program)
    assert "m1.json [item_threshold]: a non-integer number 0.8 (line " in err
    assert 'expected: an integer, or the quantity as a decimal string such as "0.8"' in err
    assert "unknown member 'colour'" in err  # not hidden by the number


def test_methodology_publish_missing_file(program: Paths, tmp_path: Path) -> None:
    before = tree(program.data)
    result = run(["methodology", "publish", tmp_path / "nope.json", "--prose", DEFAULT_PROSE], 2, program)
    assert "nope.json" in result.stderr
    assert tree(program.data) == before


def test_build_key_readable_by_others(program: Paths, tmp_path: Path) -> None:
    os.chmod(program.key_file, 0o644)
    out = tmp_path / "site"
    err = cli_refused(["build", "--out", out], program)
    assert "signing.key" in err and "readable by others" in err and "0644" in err
    assert "chmod 600" in err
    assert not out.exists()


def test_build_key_missing(program: Paths, tmp_path: Path) -> None:
    program.key_file.unlink()
    out = tmp_path / "site"
    err = cli_refused(["build", "--out", out], program)
    assert "signing.key" in err and "no signing key" in err
    # The program has its key already (keys.json): a new one is the wrong advice.
    assert "keygen" not in err and "this program already has its key" in err and "--private" in err
    assert not out.exists()


def test_a_missing_private_directory_is_named_and_never_created(program: Paths, tmp_path: Path) -> None:
    """A new shell without TRANSPARENCY_PRIVATE: every command says the private directory is not
    there, and none creates it (not even a lock file or a cache)."""
    elsewhere = Paths(program.data, tmp_path / "not-the-private-dir")
    err = cli_refused(["build", "--out", tmp_path / "site"], elsewhere)
    assert f"no private directory at {elsewhere.private}" in err and "keygen" not in err
    for command in (["commit"], ["retire", "b-0002", "--note", "x"], ["withdraw", "run-x", "--reason", "r"]):
        err = cli_refused(command, elsewhere)
        assert "no private directory there; pass --private" in err, command
    out = run(["status"], paths=elsewhere).stdout
    assert f"Site: no private directory at {elsewhere.private}" in out and "no build recorded yet" not in out
    assert not elsewhere.private.exists()
    out = run(["status"], paths=program).stdout
    assert f"Site: no build recorded in {program.private}" in out


def test_build_with_another_key(built_program: BuiltSite) -> None:
    paths, site = built_program.paths, built_program.out
    published = json.loads(paths.keys_file.read_text())["keys"][0]["vkey"]
    paths.key_file.unlink()
    run(["keygen"], paths=paths)  # a fresh key, same origin, at the key path
    before = tree(site)
    err = cli_refused(["build", "--out", site], paths)
    assert "signing.key" in err and "does not match the published key" in err
    assert published in err  # expected
    assert tree(site) == before


def test_build_refuses_a_foreign_directory(program: Paths, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my own notes\n")
    (out / "sub").mkdir()
    (out / "sub" / "x.bin").write_bytes(b"\x00\x01")
    before = tree(out)
    err = cli_refused(["build", "--out", out], program)
    assert str(out) in err and "not a site built by transparency" in err
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "prog"]  # no staging left behind


def test_build_into_an_empty_directory(program: Paths, tmp_path: Path) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    run(["build", "--out", out], paths=program)
    assert (out / "transparency.json").is_file()


def test_build_strict_refuses_warnings(program: Paths, tmp_path: Path) -> None:
    with program.program_file.open("a") as f:
        f.write("colour: blue\n")
    out = tmp_path / "site"
    result = run(["build", "--out", out], paths=program)
    assert "colour" in result.stderr and "warning" in result.stderr
    shutil.rmtree(out)
    err = cli_refused(["build", "--strict", "--out", out], program)
    assert "--strict" in err and "colour" in err
    assert not out.exists()


def test_verify_missing_directory(tmp_path: Path) -> None:
    err = cli_refused(["verify", tmp_path / "nowhere"])
    assert "nowhere" in err and "not a directory" in err
    assert err.count("nowhere") == 1, err  # the site is named once, not `nowhere: nowhere: …`


def test_verify_directory_that_is_not_a_site(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hi")
    err = cli_refused(["verify", tmp_path])
    assert "transparency.json" in err


def test_verify_malformed_key_is_a_usage_error(built_program: BuiltSite) -> None:
    """Format v1 §8: exit 2 when the arguments are wrong; a --key that is neither a verifier key nor
    SHA256:<hex> is a wrong argument, not a failed verification."""
    result = run(["verify", built_program.out, "--key", "garbage"], 2)
    assert "--key" in result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["--bogus"],
        ["build", "--bogus"],
        ["verify", "--bogus"],
        ["nosuchcommand"],
        ["retire"],  # missing ID
        ["retire", "b-0002"],  # missing --note
        ["gate", "add", "c", "--name", "C"],  # missing --public/--secret
        ["init", "--name", "X"],  # missing --origin
        ["serve", "--port", "notanumber"],
    ],
)
def test_usage_errors(argv: list[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["--data", str(tmp_path / "d"), *argv])
    assert result.exit_code == 2, result.output
    assert "Usage:" in result.stderr or "Error" in result.stderr
    assert not (tmp_path / "d").exists()


# ---------------------------------------------------------------------------------------------
# Verification failures: exit 1


def test_verify_tampered_reveal(built_program: BuiltSite, tmp_path: Path) -> None:
    site = tmp_path / "tampered"
    shutil.copytree(built_program.out, site)
    run(["verify", site])
    target = site / "reveals" / "a-001.json"
    data = bytearray(target.read_bytes())
    i = data.index(b"Extract")
    data[i] = ord("e")
    target.write_bytes(bytes(data))
    result = run(["verify", site], 1)
    assert "FAIL" in result.stdout and "reveals/a-001.json" in result.stdout
    assert "PASS" not in result.stdout
    report = json.loads(run(["verify", site, "--json"], 1).stdout)
    assert report["ok"] is False
    assert any("reveals/a-001.json" in (f["file"] or "") for f in report["failures"])
    # The original is untouched and still passes.
    run(["verify", built_program.out])


# ---------------------------------------------------------------------------------------------
# serve


def test_serve(built_program: BuiltSite) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator", "serve", str(built_program.out), "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = _readline(proc, 20)
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, f"no address in the first line: {line!r}"
        port = int(m.group(1))
        assert port > 0
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=10) as resp:
            assert resp.status == 200
            body = resp.read().decode("utf-8")
        title = re.search(r"<title>(.*?)</title>", body, re.S)
        assert title and "Test program" in title.group(1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/transparency.json", timeout=10) as resp:
            assert resp.read() == (built_program.out / "transparency.json").read_bytes()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]


def _readline(proc: subprocess.Popen[str], timeout: float) -> str:
    """The first stdout line of `proc`, or fail after `timeout` seconds (never hang the suite)."""
    import threading

    box: list[str] = []
    t = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    t.start()
    t.join(timeout)
    if not box:
        proc.kill()
        pytest.fail(f"serve printed nothing within {timeout} s")
    return box[0]


def test_serve_missing_site(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["serve", str(tmp_path / "nowhere"), "--port", "0"])
    assert result.exit_code == 2
    assert "nowhere" in result.stderr
