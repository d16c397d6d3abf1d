"""`transparency monitor`: following a published log over time, through the real command (click's
CliRunner) and the module: every new event printed once, the state moved only after every new
entry was read and checked, and every way a log can misbehave caught with exit status 1."""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from generator.cli import main
from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.retire import retire_item
from generator.core import layout
from generator.core.signing_key import load_key
from generator.monitor import follow as monitor_module
from generator.program.datadir import Paths
from generator.verifier import (
    Ledger,
    TileBuilder,
    canonical_bytes,
    checkpoint_text,
    parse_canonical,
    parse_checkpoint,
    tile_paths,
    tile_read_order,
)
from tests.support.demo import BuiltSite
from tests.support.programs import item, write_items

ORIGIN = "test.example.org/prog"


def monitor(*args: str | Path, code: int = 0) -> Result:
    """`transparency monitor ARGS`, which must exit with `code`."""
    argv = ["monitor", *map(str, args)]
    result = CliRunner().invoke(main, argv, prog_name="transparency")
    assert result.exit_code == code, (
        f"transparency {' '.join(argv)}: exit {result.exit_code}, wanted {code}\n"
        f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}\nexception: {result.exception!r}"
    )
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result


def entries(site: Path) -> list[dict[str, Any]]:
    return list(parse_canonical((site / layout.ENTRIES).read_bytes())["entries"])


def checkpoint(site: Path) -> tuple[int, str]:
    """The size and base64 root of a site's checkpoint."""
    _, size, root = parse_checkpoint((site / layout.CHECKPOINT).read_text().split("\n\n")[0] + "\n")
    return size, base64.b64encode(root).decode()


def vkey_of(site: Path) -> str:
    keys = json.loads((site / layout.KEYS).read_text())
    return str(next(k["vkey"] for k in keys["keys"] if k["status"] == "active"))


def state_file(state: Path, origin: str = ORIGIN) -> Path:
    return state / f"{hashlib.sha256(origin.encode()).hexdigest()}.json"


def indices(result: Result) -> list[int]:
    return [int(line.split(" ", 1)[0]) for line in result.stdout.splitlines()]


def grow(paths: Paths, n: int, at: str) -> None:
    """One more release's worth of events: an item committed and one retired."""
    write_items(paths, [item(f"b-{900 + n:04d}", "b")], f"more-{n}.yaml")
    commit_new_items(paths, at)
    retire_item(paths, f"b-{900 + n:04d}", f"Retired in release {n}.", at)


@pytest.fixture
def releases(make_program: Callable[..., Paths], tmp_path: Path) -> tuple[Path, Path, Paths]:
    """A site, the same site one release later (two more events), and the program's paths."""
    paths = make_program()
    first = tmp_path / "first"
    build(paths, first)
    later = tmp_path / "later"
    shutil.copytree(first, later)
    grow(paths, 1, "2026-03-01T00:00:00Z")
    build(paths, later)
    return first, later, paths


# -- following a log


def test_the_first_run_prints_every_event_and_pins_the_key(built_program: BuiltSite, tmp_path: Path) -> None:
    site, state = built_program.out, tmp_path / "state"
    r = monitor(site, "--state", state)
    leaves = entries(site)
    lines = r.stdout.splitlines()
    assert indices(r) == list(range(len(leaves)))
    for line, leaf in zip(lines, leaves, strict=True):
        _, at, kind, ident, *_ = line.split(" ")
        assert (at, kind) == (leaf["at"], leaf["type"])
        assert ident == leaf.get("id", leaf.get("version", leaf.get("serial")))
    assert lines[0] == '0 2026-01-05T09:00:00Z gate a name="Gate A" public'
    assert any(" reveal b-0001 gate=b reason=retired note=" in line for line in lines)
    vkey = vkey_of(site)
    assert f"first contact with log {ORIGIN}: trusting the site's keys.json, key {vkey}" in r.stderr
    assert "run again with --key" in r.stderr  # how to pin a key obtained elsewhere instead
    assert (
        r.stderr.splitlines()[-1]
        == f"checked {len(leaves)} new entries ({len(leaves)} shown); now at size {len(leaves)}"
    )
    saved = parse_canonical(state_file(state).read_bytes())  # canonical JSON, named by the origin's hash
    size, root = checkpoint(site)
    assert saved == {
        "checkpoint": base64.b64encode((site / layout.CHECKPOINT).read_bytes()).decode(),
        "origin": ORIGIN,
        "root": root,
        "tree_size": size,
        "type": "monitor-state",
        "v": 1,
        "vkey": vkey,
    }


def test_a_run_without_news_prints_nothing_and_a_new_release_prints_exactly_its_events(
    releases: tuple[Path, Path, Paths], tmp_path: Path
) -> None:
    first, later, _ = releases
    state = tmp_path / "state"
    n = len(entries(first))
    monitor(first, "--state", state)
    before = state_file(state).read_bytes()
    r = monitor(first, "--state", state)
    assert r.stdout == "" and "first contact" not in r.stderr
    assert r.stderr.splitlines()[-1] == f"checked 0 new entries (0 shown); now at size {n}"
    assert state_file(state).read_bytes() == before
    r = monitor(later, "--state", state)
    assert r.stdout.splitlines() == [
        f"{n} 2026-03-01T00:00:00Z commit b-0901 gate=b",
        f'{n + 1} 2026-03-01T00:00:00Z reveal b-0901 gate=b reason=retired note="Retired in release 1."',
    ]
    assert r.stderr.splitlines()[-1] == f"checked 2 new entries (2 shown); now at size {n + 2}"
    assert parse_canonical(state_file(state).read_bytes())["tree_size"] == n + 2
    assert monitor(later, "--state", state).stdout == ""


def test_filters_choose_what_is_printed_never_what_is_checked(demo_site: BuiltSite, tmp_path: Path) -> None:
    site = demo_site.out
    leaves = entries(site)
    gate_of = {leaf["id"]: leaf["gate"] for leaf in leaves if leaf["type"] == "commit"}
    runs = {leaf["id"]: leaf for leaf in leaves if leaf["type"] == "run"}
    run_of_serial = {leaf["serial"]: leaf["run"] for leaf in leaves if leaf["type"] == "certificate"}

    def run_of(leaf: dict[str, Any]) -> dict[str, Any] | None:
        if leaf["type"] == "revocation":  # a certificate's revocation is about its run
            return runs.get(run_of_serial.get(leaf["serial"], ""))
        return runs.get(leaf["id"] if leaf["type"] == "run" else leaf.get("run", ""))

    def gate(leaf: dict[str, Any]) -> str | None:
        if leaf["type"] in ("gate", "commit"):
            return str(leaf["id"] if leaf["type"] == "gate" else leaf["gate"])
        if leaf["type"] == "reveal":
            return gate_of[leaf["id"]]
        run = run_of(leaf)
        return str(run["gate"]) if run else None

    def expect(keep: Callable[[dict[str, Any]], bool]) -> list[int]:
        return [i for i, leaf in enumerate(leaves) if keep(leaf)]

    def shown(*args: str) -> list[int]:
        r = monitor(site, "--state", tmp_path / f"state-{len(os.listdir(tmp_path))}", *args)
        assert r.stderr.splitlines()[-1].startswith(f"checked {len(leaves)} new entries ({len(indices(r))} shown)")
        return indices(r)

    # Following certificates never hides that one was revoked: a revocation is news about a certificate.
    certificates = expect(lambda leaf: leaf["type"] in ("certificate", "revocation"))
    revocations = expect(lambda leaf: leaf["type"] == "revocation")
    assert revocations and set(revocations) < set(certificates)
    assert shown("--type", "certificate") == certificates
    assert shown("--type", "revocation") == revocations
    # A run's draw and withdrawal are news about the run.
    assert shown("--type", "run", "--type", "certificate") == expect(
        lambda leaf: leaf["type"] in ("run", "draw", "run-withdrawn", "certificate", "revocation")
    )
    on_b = expect(lambda leaf: gate(leaf) == "b")
    assert {leaves[i]["type"] for i in on_b} >= {"gate", "commit", "reveal", "run", "certificate"}
    assert shown("--gate", "b") == on_b
    subject = next(iter(runs.values()))["subject"]

    def of_subject(leaf: dict[str, Any]) -> bool:
        run = run_of(leaf) if leaf["type"] in ("run", "certificate", "revocation") else None
        return run is not None and run["subject"]["id"] == subject["id"]

    theirs = expect(of_subject)
    assert len(theirs) >= 2
    assert shown("--subject", subject["id"]) == theirs
    assert shown("--subject", subject["name"]) == theirs
    assert shown("--subject", subject["id"], "--gate", "a", "--type", "certificate") == expect(
        lambda leaf: of_subject(leaf) and gate(leaf) == "a" and leaf["type"] in ("certificate", "revocation")
    )
    assert shown("--subject", "nobody-at-all") == []
    monitor(site, "--type", "nonsense", code=2)
    # A name the log does not have shows nothing, and says so (a warning: the log itself is fine).
    r = monitor(site, "--state", tmp_path / "state-typo", "--gate", "z", "--gate", "b", "--subject", "nobody-at-all")
    assert "monitor: warning: --gate z: the log has no gate z" in r.stderr
    assert "--gate b:" not in r.stderr
    assert "monitor: warning: --subject nobody-at-all: no run of the log has a subject" in r.stderr
    r = monitor(site, "--state", tmp_path / "state-known", "--gate", "b", "--subject", subject["name"])
    assert "warning: --" not in r.stderr


def test_json_lines_hold_the_index_and_the_leaf(demo_site: BuiltSite, tmp_path: Path) -> None:
    r = monitor(demo_site.out, "--state", tmp_path / "state", "--json")
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert rows == [{"index": i, "leaf": leaf} for i, leaf in enumerate(entries(demo_site.out))]
    assert r.stdout.isascii()


def test_both_signatures_of_the_checkpoint_are_named_and_a_key_event_shows_its_fingerprint(
    demo_site: BuiltSite, tmp_path: Path
) -> None:
    """The demo's log signs with Ed25519 and ML-DSA-44: the monitor says which signatures it
    checked, and prints a key event's key as its type and fingerprint, not a 1,752-character vkey."""
    keys = json.loads((demo_site.out / "keys.json").read_bytes())
    r = monitor(demo_site.out, "--state", tmp_path / "state", "--type", "key-addition")
    ml = keys["ml_dsa_44_keys"][-1]["fingerprint"]
    assert f"each verified: Ed25519 {keys['keys'][-1]['fingerprint']}, ML-DSA-44 {ml}" in r.stderr
    assert r.stdout.split()[2:] == ["key-addition", f"ML-DSA-44:{ml}"]


def test_progress_is_reported_on_long_runs(
    built_program: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(monitor_module, "_PROGRESS_EVERY", 5)
    r = monitor(built_program.out, "--state", tmp_path / "state")
    n = len(entries(built_program.out))
    assert f"monitor: read 5 of {n} entries" in r.stderr and f"monitor: read 10 of {n} entries" in r.stderr


# -- what a log must never do


@pytest.fixture
def rewritten(releases: tuple[Path, Path, Paths], make_program: Callable[..., Paths], tmp_path: Path) -> Path:
    """A history rewritten from scratch with the same key: one commitment more, all re-signed."""
    _, _, paths = releases
    forged_paths = make_program(name="forged", secret_items=4)
    shutil.copy(paths.key_file, forged_paths.key_file)
    shutil.copy(paths.data / "keys.json", forged_paths.data / "keys.json")
    forged = tmp_path / "forged-site"
    build(forged_paths, forged)
    return forged


def test_a_history_rewritten_with_the_same_key_is_caught(
    releases: tuple[Path, Path, Paths], rewritten: Path, tmp_path: Path
) -> None:
    first, _, _ = releases
    state = tmp_path / "state"
    monitor(rewritten, "--state", tmp_path / "fresh")  # the forgery is consistent on its own
    monitor(first, "--state", state)
    before = state_file(state).read_bytes()
    r = monitor(rewritten, "--state", state, code=1)
    assert "INCONSISTENT: history rewritten" in r.stderr and r.stdout == ""
    assert checkpoint(first)[1] in r.stderr, "the root this monitor saw is printed"
    n = checkpoint(first)[0]
    assert checkpoint(rewritten)[0] > n
    assert f"first {n} entries have root " in r.stderr
    assert state_file(state).read_bytes() == before, "a failed run never moves the state"


def test_the_same_size_with_another_root_is_caught_without_reading_tiles(
    releases: tuple[Path, Path, Paths], make_program: Callable[..., Paths], tmp_path: Path
) -> None:
    first, _, paths = releases
    other = make_program(name="same-size", secret_items=3, retired=["b-0002"])
    shutil.copy(paths.key_file, other.key_file)
    shutil.copy(paths.data / "keys.json", other.data / "keys.json")
    forged = tmp_path / "same-size-site"
    build(other, forged)
    assert checkpoint(forged)[0] == checkpoint(first)[0] and checkpoint(forged)[1] != checkpoint(first)[1]
    state = tmp_path / "state"
    monitor(first, "--state", state)
    shutil.rmtree(forged / "ledger" / "tile")
    r = monitor(forged, "--state", state, code=1)
    assert "history rewritten" in r.stderr
    assert checkpoint(first)[1] in r.stderr and checkpoint(forged)[1] in r.stderr


def test_an_older_site_served_again_is_a_rollback(releases: tuple[Path, Path, Paths], tmp_path: Path) -> None:
    first, later, _ = releases
    state = tmp_path / "state"
    monitor(later, "--state", state)
    before = state_file(state).read_bytes()
    r = monitor(first, "--state", state, code=1)
    (old, old_root), (new, new_root) = checkpoint(first), checkpoint(later)
    assert f"INCONSISTENT: rolled back: the site's checkpoint has {old} entries (root {old_root})" in r.stderr
    assert f"the {new} (root {new_root}) this monitor saw before" in r.stderr
    assert state_file(state).read_bytes() == before


def test_a_tampered_tile_is_caught_on_first_contact_and_after_growth(
    releases: tuple[Path, Path, Paths], tmp_path: Path
) -> None:
    first, later, _ = releases
    fresh = tmp_path / "fresh"
    bad = tmp_path / "bad"
    shutil.copytree(first, bad)
    tile = min((bad / "ledger" / "tile" / "0").rglob("*/*"))  # the same one on every file system
    data = bytearray(tile.read_bytes())
    data[40] ^= 0x01
    tile.write_bytes(bytes(data))
    r = monitor(bad, "--state", fresh, code=1)
    assert "INCONSISTENT: ledger/tile: the tiles do not hold the log its checkpoint signs" in r.stderr
    assert "hash 1 is" in r.stderr and r.stdout == ""
    assert not state_file(fresh).exists(), "nothing is pinned after a failed first run"
    state = tmp_path / "state"
    monitor(first, "--state", state)
    before = state_file(state).read_bytes()
    shutil.rmtree(bad)
    shutil.copytree(later, bad)
    bundle = bad / layout.tile(f"tile/entries/000.p/{checkpoint(later)[0]}")
    bundle.write_bytes(bundle.read_bytes().replace(b"b-0901", b"b-0902"))
    r = monitor(bad, "--state", state, code=1)
    assert "ledger/tile" in r.stderr and r.stdout == ""
    assert state_file(state).read_bytes() == before
    (later / bundle.relative_to(bad)).unlink()
    r = monitor(later, "--state", state, code=1)
    assert "missing" in r.stderr


def _extend_with(site: Path, paths: Paths, leaf: dict[str, Any]) -> None:
    """Append `leaf` to the site's log: new tiles and a checkpoint signed with the program's own
    key. The log is an honest extension; only the leaf breaks a ledger rule."""
    builder = TileBuilder()
    leaves = [canonical_bytes(e) for e in entries(site)] + [canonical_bytes(leaf)]
    tiles = [t for raw in leaves for t in builder.append(raw)] + builder.finish()
    for rel, data in tiles:
        target = site / layout.tile(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    signer = load_key(paths.key_file)
    note = signer.sign_note(checkpoint_text(ORIGIN, len(leaves), builder.root()))
    (site / layout.CHECKPOINT).write_bytes(note)


def test_a_new_entry_that_breaks_a_ledger_rule_is_an_inconsistency(
    releases: tuple[Path, Path, Paths], tmp_path: Path
) -> None:
    first, _, paths = releases
    state = tmp_path / "state"
    monitor(first, "--state", state)
    before = state_file(state).read_bytes()
    site = tmp_path / "extended"
    shutil.copytree(first, site)
    leaf = {"at": "2026-03-01T00:00:00Z", "commitment": "0" * 64, "gate": "zz", "id": "x-1", "type": "commit", "v": 1}
    _extend_with(site, paths, leaf)
    r = monitor(site, "--state", state, code=1)
    n = checkpoint(first)[0]
    assert "INCONSISTENT: the ledger breaks its rules (1 problem(s)):" in r.stderr
    assert f"INCONSISTENT: entries[{n}].gate: commit to a gate that was not declared before" in r.stderr
    assert r.stdout == "" and state_file(state).read_bytes() == before


# -- trust


def test_the_key_is_pinned_on_first_contact_and_a_new_key_is_an_inconsistency(
    releases: tuple[Path, Path, Paths], make_program: Callable[..., Paths], tmp_path: Path
) -> None:
    first, later, _ = releases
    rekeyed_paths = make_program(name="rekeyed")  # the same origin, its own key
    rekeyed = tmp_path / "rekeyed-site"
    build(rekeyed_paths, rekeyed)
    assert vkey_of(rekeyed) != vkey_of(first)
    state = tmp_path / "state"
    r = monitor(first, "--state", state, "--key", vkey_of(first))
    assert "trusting the key given with --key" in r.stderr
    assert "obtained out of band" in r.stderr and "run again with --key" not in r.stderr  # it was given
    before = state_file(state).read_bytes()
    r = monitor(rekeyed, "--state", state, code=1)
    assert "does not verify with the pinned key" in r.stderr and vkey_of(first) in r.stderr
    r = monitor(later, "--state", state, "--key", vkey_of(rekeyed), code=1)
    assert "is not the key this monitor pinned" in r.stderr
    assert state_file(state).read_bytes() == before
    monitor(later, "--state", state, "--key", vkey_of(first))
    # On first contact, a pinned key the site does not sign with, by vkey or by fingerprint.
    r = monitor(first, "--state", tmp_path / "s2", "--key", vkey_of(rekeyed), code=1)
    assert "does not verify with the key" in r.stderr
    fingerprint = json.loads((rekeyed / layout.KEYS).read_text())["keys"][0]["fingerprint"]
    r = monitor(first, "--state", tmp_path / "s3", "--key", fingerprint, code=1)
    assert "is not the key given with --key" in r.stderr
    right = json.loads((first / layout.KEYS).read_text())["keys"][0]["fingerprint"]
    r = monitor(first, "--state", tmp_path / "s4", "--key", right)
    assert "trusting the key pinned with --key" in r.stderr
    assert "run again with --key" not in r.stderr and "pin it with --key" not in r.stderr
    for pin in ("SHA256:abc", "not-a-key"):
        assert "--key" in monitor(first, "--state", tmp_path / "s5", "--key", pin, code=2).stderr
    assert not state_file(tmp_path / "s2").exists()


# -- the state


def test_a_damaged_state_stops_the_run_and_is_kept(built_program: BuiltSite, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    damaged = [
        b'{"logs":[],"type":"verifier-state","v":1}',
        b"not json",
    ]
    monitor(built_program.out, "--state", tmp_path / "good")
    good = state_file(tmp_path / "good").read_bytes()
    doc = json.loads(good)
    doc["tree_size"] += 1  # a size its own checkpoint does not sign
    damaged.append(canonical_bytes(doc))
    for data in damaged:
        state_file(state).write_bytes(data)
        r = monitor(built_program.out, "--state", state, code=2)
        assert "the monitor's state is damaged" in r.stderr and "left as it is" in r.stderr
        assert state_file(state).read_bytes() == data


def test_the_state_file_is_only_ever_the_old_or_the_new(
    releases: tuple[Path, Path, Paths], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, later, _ = releases
    state = tmp_path / "state"
    monitor(first, "--state", state)
    before = state_file(state).read_bytes()

    def killed(src: object, dst: object) -> None:
        raise OSError("killed before the rename")

    with monkeypatch.context() as m:
        m.setattr(os, "replace", killed)
        with open(os.devnull, "w") as out, pytest.raises(OSError, match="killed"):
            monitor_module.monitor(str(later), state_dir=state, out=out)
    assert state_file(state).read_bytes() == before
    stem = state_file(state).stem
    # The state, its lock and the replay of the first run: no temporary file is left.
    assert sorted(p.name for p in state.iterdir()) == sorted([f"{stem}.json", f"{stem}.lock", f"{stem}.ledger"])
    # Nothing was remembered, so the next run prints the same new events again: none is ever lost.
    n = checkpoint(first)[0]
    assert indices(monitor(later, "--state", state)) == [n, n + 1]


def _reading(m: pytest.MonkeyPatch) -> list[str]:
    """The paths each later monitor run reads, in order."""
    read: list[str] = []
    opened = monitor_module.open_site

    def open_site(site: str) -> tuple[str, Callable[[str, int], bytes | None]]:
        label, fetch = opened(site)

        def logged(rel: str, limit: int) -> bytes | None:
            read.append(rel)
            return fetch(rel, limit)

        return label, logged

    m.setattr(monitor_module, "open_site", open_site)
    return read


def test_a_later_run_replays_only_the_new_entries_from_the_saved_replay(
    releases: tuple[Path, Path, Paths], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, later, _ = releases
    state = tmp_path / "state"
    monitor(first, "--state", state)
    n = len(entries(first))
    read = _reading(monkeypatch)
    r = monitor(later, "--state", state)
    assert indices(r) == [n, n + 1]
    tiles = [rel for rel in read if rel.startswith("ledger/tile/")]
    # The new entries' bundle alone: no hash tile, no bundle before the remembered size.
    assert tiles == [layout.tile(f"tile/entries/000.p/{n + 2}")], tiles
    assert "reading the whole log" not in r.stderr


def test_a_damaged_or_foreign_replay_is_set_aside_and_the_whole_log_read(
    releases: tuple[Path, Path, Paths], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, later, _ = releases
    n = len(entries(first))
    for damage in ("flip", "other tree"):
        state = tmp_path / f"state-{damage}"
        monitor(first, "--state", state)
        replay = state_file(state).with_suffix(".ledger")
        if damage == "flip":
            data = bytearray(replay.read_bytes())
            data[len(data) // 2] ^= 1
            replay.write_bytes(bytes(data))
        else:  # a replay of the later tree beside a state of the first: not the state's
            other = tmp_path / f"other-{damage}"
            monitor(later, "--state", other)
            shutil.copyfile(state_file(other).with_suffix(".ledger"), replay)
        with monkeypatch.context() as m:
            read = _reading(m)
            r = monitor(later, "--state", state)
        assert indices(r) == [n, n + 1], damage
        assert any(rel.startswith("ledger/tile/0/") for rel in read), f"{damage}: the hash tiles were read"


def test_a_rewritten_history_is_caught_from_the_saved_replay_and_named(
    releases: tuple[Path, Path, Paths], tmp_path: Path
) -> None:
    first, later, paths = releases
    state = tmp_path / "state"
    monitor(first, "--state", state)
    before = state_file(state).read_bytes()
    forged = tmp_path / "forged"
    shutil.copytree(later, forged)
    leaves = entries(first)
    leaves[1] = {**leaves[1], "name": "Gate Z"}  # an old entry changed, then the log re-signed
    builder = TileBuilder()
    tiles = [t for raw in map(canonical_bytes, leaves + entries(later)[len(leaves) :]) for t in builder.append(raw)]
    for rel, data in tiles + builder.finish():
        (forged / layout.tile(rel)).parent.mkdir(parents=True, exist_ok=True)
        (forged / layout.tile(rel)).write_bytes(data)
    note = load_key(paths.key_file).sign_note(checkpoint_text(ORIGIN, len(entries(later)), builder.root()))
    (forged / layout.CHECKPOINT).write_bytes(note)
    r = monitor(forged, "--state", state, code=1)
    assert "reading the whole log" in r.stderr
    assert f"INCONSISTENT: history rewritten: the site's first {len(leaves)} entries have root" in r.stderr
    assert state_file(state).read_bytes() == before


def test_the_default_state_lives_in_the_user_cache(built_program: BuiltSite, _own_verifier_state: Path) -> None:
    monitor(built_program.out)
    assert state_file(_own_verifier_state / "transparency-monitor").is_file()
    assert monitor(built_program.out).stdout == ""


# -- over HTTP


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def served(site: Path, handler: type[http.server.BaseHTTPRequestHandler] = _Quiet) -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def test_a_site_over_http_on_localhost_is_followed_like_a_folder(
    releases: tuple[Path, Path, Paths], tmp_path: Path
) -> None:
    first, later, _ = releases
    by_folder = monitor(later, "--state", tmp_path / "a").stdout
    state = tmp_path / "b"
    with served(first) as url:
        monitor(url, "--state", state)
    with served(later) as url:
        r = monitor(url + "/", "--state", state)
        n = checkpoint(first)[0]
        assert r.stdout.splitlines() == by_folder.splitlines()[n:]
    with served(first) as url:
        assert "rolled back" in monitor(url, "--state", state, code=1).stderr


def test_only_https_or_localhost_http_and_no_redirect_to_another_scheme(
    built_program: BuiltSite, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    for url in ("http://example.org/site/", "ftp://127.0.0.1/", "https://user:pw@example.org/", "https://h/?q=1"):
        r = monitor(url, "--state", state, code=2)
        assert r.stderr.startswith(f"monitor: {url}: ")

    class Redirecting(_Quiet):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", "https://127.0.0.1:9/ledger/checkpoint")
            self.end_headers()

    with served(built_program.out, Redirecting) as url:
        r = monitor(url, "--state", state, code=2)
    assert "redirected to https://127.0.0.1:9/ledger/checkpoint, which is refused" in r.stderr
    assert monitor(tmp_path / "nowhere", "--state", state, code=2).stderr.startswith("monitor: ")


def test_over_http_the_tiles_come_over_few_kept_alive_connections_several_at_a_time(
    make_program: Callable[..., Paths], tmp_path: Path
) -> None:
    """An HTTP/1.1 server that counts its connections and the requests in flight at once: a run
    reads every tile over a handful of connections (the read-ahead's threads), not one each."""
    connections: list[object] = []
    in_flight = {"now": 0, "most": 0}
    lock = threading.Lock()

    class KeptAlive(_Quiet):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            with lock:
                connections.append(self.client_address)

        def do_GET(self) -> None:
            with lock:
                in_flight["now"] += 1
                in_flight["most"] = max(in_flight["most"], in_flight["now"])
            try:
                threading.Event().wait(0.02)  # long enough for the next requests to arrive
                super().do_GET()
            finally:
                with lock:
                    in_flight["now"] -= 1

    paths = make_program(secret_items=2400, retired=0)  # ten bundles, their tiles, two levels
    site = paths.data.parent / "public"
    build(paths, site)
    requests = len(list(tile_read_order(checkpoint(site)[0])))
    with served(site, KeptAlive) as url:
        monitor(url, "--state", tmp_path / "state")
    assert requests > 20
    assert len(connections) <= 9  # the checkpoint's and keys' reader, and the read-ahead's 8 threads
    assert len(connections) < requests
    assert in_flight["most"] > 1


# -- hostile text


def test_names_from_the_site_cannot_write_to_the_terminal() -> None:
    ledger = Ledger()
    leaf = {
        "at": "2026-01-01T00:00:00Z",
        "id": "a",
        "name": "A\x1b[2J\nPASS\u202e",
        "public": True,
        "type": "gate",
        "v": 1,
    }
    assert ledger.apply(leaf) == []
    line = monitor_module.event_line(0, leaf, ledger)
    assert line.isprintable() and "\x1b" not in line and "\u202e" not in line
    assert json.loads(monitor_module.event_json(0, leaf))["leaf"] == leaf
    assert monitor_module.event_json(0, leaf).isascii()


def _monitor_process(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The monitor as its own process, with a deadline: a read that blocks fails the test instead
    of holding the suite forever."""
    return subprocess.run(
        [sys.executable, "-m", "generator", "monitor", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_fifo_in_the_site_or_the_state_is_refused_not_waited_on(built_program: BuiltSite, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(built_program.out, site)
    for rel in [layout.CHECKPOINT, layout.KEYS, layout.tile(tile_paths(checkpoint(site)[0])[0][0])]:
        copy = tmp_path / f"site-{len(os.listdir(tmp_path))}"
        shutil.copytree(site, copy)
        (copy / rel).unlink()
        os.mkfifo(copy / rel)
        r = _monitor_process(copy, "--state", tmp_path / f"state-{len(os.listdir(tmp_path))}")
        assert r.returncode == 2 and f"{rel}: not a regular file" in r.stderr, (rel, r.stderr)
    # The monitor's own state, a FIFO too: refused, and kept as it is.
    state = tmp_path / "fifo-state"
    state.mkdir()
    os.mkfifo(state_file(state))
    r = _monitor_process(site, "--state", state)
    assert r.returncode == 2 and "cannot read the monitor's state (not a regular file" in r.stderr, r.stderr
    assert stat.S_ISFIFO(os.lstat(state_file(state)).st_mode)
    # A link at the checkpoint's place is not followed either.
    (site / layout.CHECKPOINT).unlink()
    (site / layout.CHECKPOINT).symlink_to(built_program.out / layout.CHECKPOINT)
    r = _monitor_process(site, "--state", tmp_path / "state-link")
    assert r.returncode == 2, r.stderr
