"""Every command survives a kill at any moment: afterwards the next command finishes or undoes
what was interrupted, the data is either as it was or as the command leaves it, and the site
builds and verifies.

Each command is killed at every step of its commit (generator.program.journal.crash_point), in a real
process, and with SIGKILL at moments chosen from outside while it works on a larger program.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from importlib.resources import files as package_files
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.commands.build import build
from generator.commands.certify import certify_run
from generator.commands.commit import commit_new_items
from generator.commands.gate import GateSpec
from generator.commands.init import init_program
from generator.commands.keys import rotate_key
from generator.commands.register import register_run
from generator.commands.retire import retire_item
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.program.ledgerfile import finish_interrupted
from generator.verifier import verify_site
from tests.support.crashes import crash_points, files, kill_after, run_cli, step_labels, steps_worth_testing
from tests.support.programs import item, new_program, write_items
from tests.support.runs import results, run_spec, scored, write_json

T0 = "2026-01-05T09:00:00Z"
T_CMD = "2026-04-01T00:00:00Z"
SECRET10 = [f"b-{i:04d}" for i in range(1, 11)]


def _base(root: Path) -> Paths:
    """A program with a certified secret-gate run, ready for every command below."""
    paths = new_program(root / "data", root / "private", secret_items=14, retired=["b-0014"])
    spec = run_spec(paths, "run-1", "b", SECRET10)
    register_run(paths, write_json(root / "in" / "run-1.json", spec), "2026-03-01T00:00:00Z")
    doc = results("run-1", [scored(i, passing=n % 3 != 0) for n, i in enumerate(SECRET10)], proposed=80)
    certify_run(paths, write_json(root / "in" / "results-1.json", doc), "2026-03-02T00:00:00Z")
    return paths


def _args(paths: Paths, *command: str) -> list[str]:
    return ["--data", str(paths.data), "--private", str(paths.private), *command]


def _commit(paths: Paths, root: Path) -> list[str]:
    write_items(
        paths, [item("a-100", "a"), item("a-101", "a")] + [item(f"b-01{i:02d}", "b") for i in range(5)], "more.yaml"
    )
    return _args(paths, "commit", "--at", T_CMD)


def _retire(paths: Paths, root: Path) -> list[str]:
    return _args(paths, "retire", "b-0001", "b-0011", "--note", "Rotation.", "--at", T_CMD)


def _register(paths: Paths, root: Path) -> list[str]:
    other = {"id": "other", "name": "Other Reader", "version": "2", "organization": "Other Org"}
    f = write_json(root / "in" / "run-2.json", run_spec(paths, "run-2", "b", SECRET10, subject=other))
    return _args(paths, "register", str(f), "--at", T_CMD)


def _certify(paths: Paths, root: Path) -> list[str]:
    other = {"id": "other", "name": "Other Reader", "version": "2", "organization": "Other Org"}
    register_run(
        paths,
        write_json(root / "in" / "run-2.json", run_spec(paths, "run-2", "b", SECRET10, subject=other)),
        "2026-03-10T00:00:00Z",
    )
    f = write_json(
        root / "in" / "results-2.json",
        results("run-2", [scored(i) for i in SECRET10], proposed=95, finished_at="2026-03-11T00:00:00Z"),
    )
    return _args(paths, "certify", str(f), "--at", T_CMD)


def _methodology(paths: Paths, root: Path) -> list[str]:
    params = json.loads((package_files("generator") / "defaults" / "methodology.json").read_text())
    params["version"] = "2026.2"
    p = write_json(root / "in" / "2026.2.json", params)
    prose = root / "in" / "2026.2.md"
    prose.write_text("# Version 2026.2\n\nThreshold {{ item_threshold }}.\n")
    return _args(paths, "methodology", "publish", str(p), "--prose", str(prose), "--at", T_CMD)


def _gate(paths: Paths, root: Path) -> list[str]:
    return _args(paths, "gate", "add", "c", "--name", "Gate C", "--secret", "--at", T_CMD)


def _revoke(paths: Paths, root: Path) -> list[str]:
    return _args(paths, "revoke", "run-1", "--reason", "A grading bug was found.", "--at", T_CMD)


def _key_rotate(paths: Paths, root: Path) -> list[str]:
    return _args(paths, "key", "rotate", "--at", T_CMD)


def _key_revoke(paths: Paths, root: Path) -> list[str]:
    old, _ = rotate_key(paths, "2026-03-03T00:00:00Z")
    return _args(
        paths, "key", "revoke", old.fingerprint, "--reason", "Leaked.", "--compromised-at", T_CMD, "--at", T_CMD
    )


SCENARIOS: dict[str, Callable[[Paths, Path], list[str]]] = {
    "commit": _commit,
    "retire": _retire,
    "register": _register,
    "certify": _certify,
    "methodology publish": _methodology,
    "gate add": _gate,
    "revoke": _revoke,
    "key rotate": _key_rotate,
    "key revoke": _key_revoke,
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("crash-base")
    _base(root)
    return root


def _copy(base: Path, to: Path) -> Paths:
    shutil.copytree(base, to)
    return Paths(to / "data", to / "private")


def _ledger(paths: Paths) -> list[bytes]:
    return paths.ledger_file.read_bytes().splitlines()


def _check_recovered(
    paths: Paths,
    out: Path,
    before_files: dict[str, bytes | None],
    before: list[bytes],
    new_events: int,
    argv: list[str],
) -> str:
    """The next command (a build) finishes or undoes the interrupted one; return which."""
    build(paths, out)
    report = verify_site(out)
    assert report.ok, report.render()
    assert not (paths.private / ".pending").exists() and not (paths.private / ".pending.done").exists()
    assert not [p for p in paths.data.rglob(".*.tmp")], "a temporary file was left in the data"
    lines = _ledger(paths)
    if lines == before:
        assert files(paths) == before_files, "rolled back, yet something changed"
        again = CliRunner().invoke(main, argv)  # and the command can simply be run again
        assert again.exit_code == 0, again.output
        build(paths, out)
        assert verify_site(out).ok
        return "rolled back"
    assert lines[: len(before)] == before and len(lines) == len(before) + new_events
    return "completed"


@pytest.mark.slow
@pytest.mark.parametrize("command", list(SCENARIOS))
def test_a_command_killed_at_any_step_is_finished_or_undone(base: Path, tmp_path: Path, command: str) -> None:
    probe = _copy(base, tmp_path / "probe")
    argv = SCENARIOS[command](probe, tmp_path / "probe")
    before = _ledger(probe)
    labels = step_labels(argv, tmp_path)
    new_events = len(_ledger(probe)) - len(before)
    assert len(labels) >= 5 and new_events >= 1
    outcomes = []
    for n in steps_worth_testing(labels):
        root = tmp_path / f"at-{n}"
        paths = _copy(base, root)
        argv = SCENARIOS[command](paths, root)
        before_files, before = files(paths), _ledger(paths)
        r = run_cli(argv, crash_at=n)
        assert r.returncode == 137, f"step {n}: {r.stdout}{r.stderr}"
        # Killed before the record was set aside, or after: then the command is done, and what is
        # left of its record is deleted by the next command.
        assert (paths.private / ".pending").exists() or (paths.private / ".pending.done").exists()
        outcomes.append(_check_recovered(paths, root / "public", before_files, before, new_events, argv))
        shutil.rmtree(root)
    assert "rolled back" in outcomes and "completed" in outcomes  # both sides of the commit point were hit


def test_a_finished_command_s_record_half_deleted_is_no_command_to_finish(base: Path, tmp_path: Path) -> None:
    """A kill while a finished command's record is deleted (files go one at a time, in no set
    order) must not leave a record the next command tries to finish: the record is set aside
    first, and what is left of it is only deleted."""
    paths = _copy(base, tmp_path / "p")
    before = _ledger(paths)
    leftover = paths.private / ".pending.done"
    leftover.mkdir()
    (leftover / "ready.json").write_text('{"lines_sha256": "' + "0" * 64 + '"}')  # its ledger lines already gone
    r = CliRunner().invoke(main, _args(paths, "gate", "add", "c", "--name", "Gate C", "--public", "--at", T_CMD))
    assert r.exit_code == 0, r.output
    assert "interrupted" not in r.output
    assert not leftover.exists()
    assert len(_ledger(paths)) == len(before) + 1


def test_recovery_says_what_it_did(base: Path, tmp_path: Path) -> None:
    paths = _copy(base, tmp_path / "p")
    argv = _retire(paths, tmp_path / "p")
    assert run_cli(argv, crash_at=1).returncode == 137
    r = CliRunner().invoke(main, _args(paths, "gate", "add", "c", "--name", "Gate C", "--public", "--at", T_CMD))
    assert r.exit_code == 0, r.output
    assert "note: rolled back an interrupted 'retire'" in r.output
    steps = crash_points(_retire(probe := _copy(base, tmp_path / "q"), tmp_path / "q"), tmp_path)
    assert probe.ledger_file.exists()
    paths = _copy(base, tmp_path / "r")
    assert run_cli(_retire(paths, tmp_path / "r"), crash_at=steps - 1).returncode == 137
    assert (
        finish_interrupted(paths)
        == "completed an interrupted 'retire': its ledger events and files are now all in place"
    )


def test_a_sealed_text_never_reaches_the_public_data_before_its_reveal(base: Path, tmp_path: Path) -> None:
    """At every step of a retire, the retired item's reveal file is in data/ only if the ledger
    already holds its reveal leaf: the data directory is meant to be publishable."""
    steps = crash_points(_retire(_copy(base, tmp_path / "probe"), tmp_path / "probe"), tmp_path)
    for n in range(1, steps + 1):
        paths = _copy(base, tmp_path / f"at-{n}")
        assert run_cli(_retire(paths, tmp_path / f"at-{n}"), crash_at=n).returncode == 137
        revealed = b'"id":"b-0001","note":"Rotation."' in paths.ledger_file.read_bytes()
        if (
            paths.reveal_file("b-0001").exists()
            or (paths.data / "certificates" / "run-1" / "details" / "b-0001.json").exists()
        ):
            assert revealed, f"step {n}: the item's text is public before its reveal is in the ledger"
        shutil.rmtree(tmp_path / f"at-{n}")


@pytest.mark.slow
def test_init_killed_at_any_step(tmp_path: Path) -> None:
    def argv(root: Path) -> list[str]:
        return [
            "--data",
            str(root / "data"),
            "--private",
            str(root / "private"),
            "init",
            "--name",
            "P",
            "--origin",
            "crash.example.org/init",
            "--at",
            T0,
        ]

    steps = crash_points(argv(tmp_path / "probe"), tmp_path)
    outcomes = set()
    for n in range(1, steps + 1):
        root = tmp_path / f"at-{n}"
        assert run_cli(argv(root), crash_at=n).returncode == 137
        paths = Paths(root / "data", root / "private")
        r = CliRunner().invoke(main, argv(root))  # init again: finishes the first, or starts over
        if r.exit_code == 0:
            outcomes.add("rolled back")
        else:
            assert "a program is already there" in r.output, r.output
            outcomes.add("completed")
        assert paths.key_file.exists() and paths.program_file.exists() and paths.keys_file.exists()
        build(paths, root / "public")
        assert verify_site(root / "public").ok
    assert outcomes == {"rolled back", "completed"}


# -- SIGKILL from outside, at moments the commands did not choose


@pytest.mark.slow
def test_sigkill_during_a_large_commit(tmp_path: Path) -> None:
    import time

    base = tmp_path / "base"
    paths = Paths(base / "data", base / "private")
    init_program(
        paths, "P", "crash.example.org/big", [GateSpec("a", "Gate A", True), GateSpec("b", "Gate B", False)], "", T0
    )
    rows = [item(f"b-{i:05d}", "b") for i in range(6000)] + [item(f"a-{i:03d}", "a") for i in range(30)]
    paths.items_dir.mkdir(parents=True, exist_ok=True)
    (paths.items_dir / "big.json").write_text(json.dumps({"items": rows}))
    before_files, before = files(paths), _ledger(paths)
    probe = _copy(base, tmp_path / "probe")
    started = time.monotonic()
    assert run_cli(_args(probe, "commit", "--at", T_CMD)).returncode == 0
    took = time.monotonic() - started
    outcomes = set()
    fractions = [0.4, 0.6, 0.75, 0.85, 0.95]
    for k, fraction in enumerate(fractions):
        if k == len(fractions) - 1 and "rolled back" not in outcomes and fraction > 0.005:
            # A probe slowed by a busy machine can put every kill after the commit finished: kill
            # earlier and earlier until one interrupts it (one before any write leaves the files as
            # they were), so that the outcome this test needs never rests on the machine's load.
            fractions.append(min(fractions) / 2)
        paths = _copy(base, tmp_path / f"k{k}")
        code = kill_after(_args(paths, "commit", "--at", T_CMD), took * fraction)
        finish_interrupted(paths)
        if _ledger(paths) == before:
            assert files(paths) == before_files
            outcomes.add("rolled back")
        else:
            assert len(_ledger(paths)) == len(before) + 6060
            outcomes.add("completed" if code else "finished before the kill")
        commit_new_items(paths, T_CMD)  # can always be run (again), and is then done
        assert len(_ledger(paths)) == len(before) + 6060
        shutil.rmtree(tmp_path / f"k{k}")
    assert "rolled back" in outcomes, outcomes


@pytest.mark.slow
def test_sigkill_during_a_build_leaves_the_site_and_no_staging(base: Path, tmp_path: Path) -> None:
    paths = _copy(base, tmp_path / "p")
    out = tmp_path / "p" / "public"
    build(paths, out)
    published = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    retire_item(paths, "b-0012", "More.", T_CMD)
    argv = _args(paths, "build", "--out", str(out))
    for delay in (0.3, 0.45, 0.6, 0.75):
        kill_after(argv, delay)
        now = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
        assert now == published or verify_site(out).ok, "the site is the last one or the new one, never half of each"
    leftovers = list(out.parent.glob(".public.staging-*"))
    build(paths, out)
    assert verify_site(out).ok
    assert not list(out.parent.glob(".public.staging-*")) and not list(out.parent.glob(".public.old-*")), leftovers


def test_a_build_puts_back_a_site_a_killed_swap_moved_aside(built_program: object, tmp_path: Path) -> None:
    from tests.support.demo import BuiltSite

    assert isinstance(built_program, BuiltSite)
    out = built_program.out
    aside = out.parent / ".public.old-x1"
    out.rename(aside)  # what a kill between the two renames of a swap leaves
    build(built_program.paths, out)
    assert verify_site(out).ok and not aside.exists()


def test_a_ledger_changed_behind_an_interrupted_command_is_refused(base: Path, tmp_path: Path) -> None:
    paths = _copy(base, tmp_path / "p")
    argv = _retire(paths, tmp_path / "p")
    steps = crash_points(_retire(_copy(base, tmp_path / "q"), tmp_path / "q"), tmp_path)
    # Past the commit point, before the append finishes: then someone edits the ledger.
    for n in range(1, steps + 1):
        paths = _copy(base, tmp_path / f"at-{n}")
        assert run_cli(_retire(paths, tmp_path / f"at-{n}"), crash_at=n).returncode == 137
        if (paths.private / ".pending" / "ready.json").exists():
            break
    with paths.ledger_file.open("ab") as f:
        f.write(b'{"junk":1}\n')
    with pytest.raises(InputError, match=r"someone else changed it|not the lines an interrupted command was appending"):
        finish_interrupted(paths)
    assert argv


# -- what a review found: the journal under odd conditions


def test_init_and_commands_work_across_file_systems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """data/ and the private directory on different file systems (as a real program keeps
    them): no file can be renamed from one to the other, so each is copied whole, then renamed."""
    import errno
    import os as real_os

    data, private = tmp_path / "fs1" / "data", tmp_path / "fs2" / "private"
    rename = real_os.replace

    def replace(src: object, dst: object) -> None:
        if (str(tmp_path / "fs1") in str(src)) != (str(tmp_path / "fs1") in str(dst)):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        rename(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr("generator.program.journal.os.replace", replace)
    paths = Paths(data, private)
    init_program(
        paths, "P", "crash.example.org/xfs", [GateSpec("a", "Gate A", True), GateSpec("b", "Gate B", False)], "", T0
    )
    write_items(paths, [item("a-001", "a"), item("b-0001", "b")])
    commit_new_items(paths, "2026-01-12T10:00:00Z")
    retire_item(paths, "b-0001", "Rotation.", "2026-02-01T00:00:00Z")
    assert not (private / ".pending").exists()
    build(paths, tmp_path / "public")
    assert verify_site(tmp_path / "public").ok


def test_one_command_at_a_time(base: Path, tmp_path: Path) -> None:
    from generator.program import journal

    paths = _copy(base, tmp_path / "p")
    with journal.locked(paths):
        r = CliRunner().invoke(main, _args(paths, "gate", "add", "c", "--name", "Gate C", "--public", "--at", T_CMD))
        assert r.exit_code == 2 and "another transparency command is changing the program" in r.output
    fresh = Paths(tmp_path / "fresh" / "data", tmp_path / "fresh" / "private")
    with journal.locked(fresh, create=True):  # an init under way: a second one waits its turn
        r = CliRunner().invoke(
            main,
            [
                "--data",
                str(fresh.data),
                "--private",
                str(fresh.private),
                "init",
                "--name",
                "P",
                "--origin",
                "x.example.org/p",
            ],
        )
        assert r.exit_code == 2 and "another transparency command is changing the program" in r.output
    assert not fresh.key_file.exists()


def test_staged_files_are_private(base: Path, tmp_path: Path) -> None:
    paths = _copy(base, tmp_path / "p")
    labels = step_labels(_retire(_copy(base, tmp_path / "q"), tmp_path / "q"), tmp_path)
    assert run_cli(_retire(paths, tmp_path / "p"), crash_at=labels.index("committed") + 1).returncode == 137
    pending = paths.private / ".pending"
    assert pending.stat().st_mode & 0o777 == 0o700
    staged = [p for p in pending.rglob("*") if p.is_file()]
    assert staged and all(p.stat().st_mode & 0o077 == 0 for p in staged), (
        "a staged reveal or key must not be readable by others"
    )


@pytest.mark.parametrize("tamper", ["staged-outside", "wrong-hash", "set-uid-mode", "not-an-object", "bad-length"])
def test_a_damaged_record_of_an_interrupted_command_is_refused(base: Path, tmp_path: Path, tamper: str) -> None:
    paths = _copy(base, tmp_path / "p")
    labels = step_labels(_retire(_copy(base, tmp_path / "q"), tmp_path / "q"), tmp_path)
    assert run_cli(_retire(paths, tmp_path / "p"), crash_at=labels.index("committed") + 1).returncode == 137
    ready_file = paths.private / ".pending" / "ready.json"
    ready = json.loads(ready_file.read_text())
    move = ready["moves"][0]
    if tamper == "staged-outside":
        move["staged"] = "../signing.key"
    elif tamper == "wrong-hash":
        move["sha256"] = "0" * 64
    elif tamper == "set-uid-mode":
        move["mode"] = 0o4777
    elif tamper == "not-an-object":
        ready = []
    else:
        ready["ledger_bytes"] = "x"
    ready_file.write_text(json.dumps(ready))
    before = files(paths)
    with pytest.raises(InputError, match="cannot finish an interrupted command"):
        finish_interrupted(paths)
    assert {k: v for k, v in files(paths).items() if "/.pending/" not in k} == {
        k: v for k, v in before.items() if "/.pending/" not in k
    }
