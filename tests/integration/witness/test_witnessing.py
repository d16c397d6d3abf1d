"""Witnesses and trust policies through the real commands: a witness cosigns offline and over
HTTP (a separate process), refuses an inconsistent history and, with --rules, a ledger that breaks
the program's rules; the build publishes cosigned checkpoints; verify.py --policy requires them."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import rfc8785

from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.core import layout
from generator.core.proofs import MerkleTree
from generator.core.signing_key import load_key
from generator.program.datadir import Paths
from generator.verifier import TILE_WIDTH, TileBuilder, checkpoint_text, leaf_hash, verify_site
from tests.support.demo import BUNDLE, BuiltSite
from tests.support.history import grow, size_of, vkey_of
from tests.support.programs import item, write_items
from tests.support.witnesses import WitnessFiles, cli, started_witness, write_policy


def run_verifier(*args: str | Path) -> subprocess.CompletedProcess[str]:
    state = [] if args and args[0] == "proof" else ["--no-state"]
    return subprocess.run(
        [sys.executable, "-P", str(BUNDLE), *map(str, args), *state], capture_output=True, text=True, check=False
    )


@pytest.fixture
def witnessed(built_program: BuiltSite, tmp_path: Path) -> tuple[BuiltSite, WitnessFiles, WitnessFiles]:
    log_vkey = vkey_of(built_program.out)
    return (
        built_program,
        WitnessFiles(tmp_path, "w1.example.org", log_vkey),
        WitnessFiles(tmp_path, "w2.example.org", log_vkey),
    )


def test_an_offline_cosignature_is_published_and_a_policy_requires_it(
    witnessed: tuple[BuiltSite, WitnessFiles, WitnessFiles],
) -> None:
    site, w1, w2 = witnessed
    n = size_of(site.out)
    code, line = w1.cosign(site.out, "--out", site.paths.data / "cosignatures" / f"{n}.txt")
    assert code == 0, line
    policy = write_policy(
        site.paths, vkey_of(site.out), [("w1", w1.vkey, None), ("w2", w2.vkey, None)], "group both all w1 w2"
    )
    result = build(site.paths, site.out)
    # The operator hears that the published policy is not met before a reader's check refuses it.
    assert [w for w in result.warnings if "does not meet the quorum" in w and "by w2" in w], result.warnings
    checkpoint = (site.out / layout.CHECKPOINT).read_text()
    assert f"\u2014 {w1.name} " in checkpoint
    assert (site.out / layout.POLICY).read_bytes() == policy.read_bytes()
    r = run_verifier(site.out, "--policy", policy)
    assert r.returncode == 1 and "missing: w2" in r.stdout, r.stdout
    one = write_policy(
        site.paths,
        vkey_of(site.out),
        [("w1", w1.vkey, None), ("w2", w2.vkey, None)],
        "group one any w1 w2",
        name="any-policy.txt",
    )
    assert run_verifier(site.out, "--policy", one).returncode == 0
    # The single-file check applies the same policy.
    manifest = json.loads((site.out / layout.MANIFEST).read_bytes())
    reveal = manifest["reveals"][0]["path"]
    args = ("proof", site.out / reveal, site.out / layout.tlog_proof(reveal))
    assert run_verifier(*args, "--policy", one).returncode == 0
    r = run_verifier(*args, "--policy", policy)
    assert r.returncode == 1 and "missing: w2" in r.stdout
    # A rebuild at the same size keeps the cosignature; a policy of another log fails.
    build(site.paths, site.out)
    assert f"\u2014 {w1.name} " in (site.out / layout.CHECKPOINT).read_text()
    other = write_policy(site.paths, load_other_log_vkey(), [("w1", w1.vkey, None)], "w1")
    r = run_verifier(site.out, "--policy", other)
    assert r.returncode == 1 and "trusts another log" in r.stdout
    code, out = cli("--data", site.paths.data, "build", "--out", site.out)
    assert code != 0 and "names no log key" in out


def load_other_log_vkey() -> str:
    from generator.core.signing_key import generate_signer

    return generate_signer("test.example.org/prog").vkey


def test_a_forged_cosignature_line_in_the_data_stops_the_build(
    witnessed: tuple[BuiltSite, WitnessFiles, WitnessFiles],
) -> None:
    site, w1, _ = witnessed
    n = size_of(site.out)
    code, line = w1.cosign(site.out)
    assert code == 0
    write_policy(site.paths, vkey_of(site.out), [("w1", w1.vkey, None)], "w1")
    stored = site.paths.data / "cosignatures" / f"{n}.txt"
    stored.parent.mkdir()
    stored.write_text(line[:-6] + "AAAAA=\n")
    code, out = cli("--data", site.paths.data, "build", "--out", site.out)
    assert code != 0 and "does not verify" in out and f"cosignatures/{n}.txt" in out


def test_the_witness_cosigns_only_a_consistent_history(
    witnessed: tuple[BuiltSite, WitnessFiles, WitnessFiles],
    make_program: Callable[..., Paths],
    tmp_path: Path,
) -> None:
    site, w1, _ = witnessed
    assert w1.cosign(site.out)[0] == 0
    grow(site.paths, 1, "2026-03-01T00:00:00Z")
    build(site.paths, site.out)
    assert w1.cosign(site.out)[0] == 0, "a consistent growth is cosigned"
    # The same origin and key, a history rewritten from scratch with one more item.
    forged_paths = make_program(name="forged", secret_items=6)
    shutil.copy(site.paths.key_file, forged_paths.key_file)
    shutil.copy(site.paths.data / "keys.json", forged_paths.data / "keys.json")
    forged = tmp_path / "forged-site"
    build(forged_paths, forged)
    assert size_of(forged) > size_of(site.out)
    code, out = w1.cosign(forged)
    assert code == 1 and "consistency proof" in out and "(422)" in out, out
    older = tmp_path / "older"
    shutil.copytree(site.out, older)
    grow(site.paths, 2, "2026-03-02T00:00:00Z")
    build(site.paths, site.out)
    assert w1.cosign(site.out)[0] == 0
    code, out = w1.cosign(older)
    assert code == 1 and "rollback" in out


def _break_the_rules(site: Path, key_file: Path) -> None:
    """A key holder appends an entry that breaks format v1 §4 (a second commit of an item id) and
    republishes tiles and checkpoint consistently: the log grows consistently, yet is wrong."""
    entries = json.loads((site / layout.ENTRIES).read_bytes())["entries"]
    first_commit = next(e for e in entries if e["type"] == "commit")
    raw = [rfc8785.dumps(e) for e in entries] + [rfc8785.dumps({**first_commit, "at": entries[-1]["at"]})]
    shutil.rmtree(site / "ledger" / "tile")
    tiles = TileBuilder()
    for rel, data in [t for r in raw for t in tiles.append(r)] + tiles.finish():
        (site / "ledger" / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / "ledger" / rel).write_bytes(data)
    tree = MerkleTree(leaf_hash(r) for r in raw)
    origin = first_commit and json.loads((site / layout.MANIFEST).read_bytes())["origin"]
    note = load_key(key_file).sign_note(checkpoint_text(origin, len(raw), tree.root()))
    (site / layout.CHECKPOINT).write_bytes(note)


def test_a_witness_with_rules_refuses_a_ledger_that_breaks_them(
    witnessed: tuple[BuiltSite, WitnessFiles, WitnessFiles], tmp_path: Path
) -> None:
    site, w1, w2 = witnessed
    assert w1.cosign(site.out, "--rules")[0] == 0, "an honest ledger passes the rules"
    assert w2.cosign(site.out)[0] == 0
    broken = tmp_path / "broken"
    shutil.copytree(site.out, broken)
    _break_the_rules(broken, site.paths.key_file)
    code, out = w1.cosign(broken, "--rules")
    assert code == 1 and "refused by the witness's rules" in out and "committed" in out, out
    assert w2.cosign(broken)[0] == 0, "a plain witness sees only a consistent growth"


@pytest.fixture
def served_witness(witnessed: tuple[BuiltSite, WitnessFiles, WitnessFiles]) -> Iterator[tuple[str, WitnessFiles]]:
    _, w1, _ = witnessed
    proc, url, _ = started_witness(w1.args())
    try:
        yield url, w1
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def refusing_url() -> Iterator[str]:
    """A loopback URL that refuses every connection: its port is bound, never listened on, and held for the test,
    so that no server of another test can take it."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}"


def test_the_build_collects_a_cosignature_over_http_from_a_separate_witness(
    witnessed: tuple[BuiltSite, WitnessFiles, WitnessFiles], served_witness: tuple[str, WitnessFiles]
) -> None:
    site, _, _ = witnessed
    url, w1 = served_witness
    policy = write_policy(site.paths, vkey_of(site.out), [("w1", w1.vkey, url)], "w1")
    result = build(site.paths, site.out)
    assert not result.warnings, result.warnings
    assert f"\u2014 {w1.name} " in (site.out / layout.CHECKPOINT).read_text()
    assert run_verifier(site.out, "--policy", policy).returncode == 0
    grow(site.paths, 1, "2026-03-01T00:00:00Z")
    build(site.paths, site.out)
    assert f"\u2014 {w1.name} " in (site.out / layout.CHECKPOINT).read_text(), "the growth is cosigned too"
    assert run_verifier(site.out, "--policy", policy).returncode == 0
    assert verify_site(site.out).ok


def test_an_unreachable_witness_is_named_and_the_site_still_published(
    witnessed: tuple[BuiltSite, WitnessFiles, WitnessFiles], refusing_url: str
) -> None:
    site, w1, _ = witnessed
    url = refusing_url
    policy = write_policy(site.paths, vkey_of(site.out), [("w1", w1.vkey, url)], "w1")
    started = time.monotonic()
    result = build(site.paths, site.out)
    assert time.monotonic() - started < 60
    assert any("witness w1" in w and "no answer" in w for w in result.warnings), result.warnings
    r = run_verifier(site.out, "--policy", policy)
    assert r.returncode == 1 and "missing: w1" in r.stdout
    offline = build(site.paths, site.out, offline=True)
    # Offline, no witness is asked (nothing is named as unreachable), but the unmet quorum is said.
    assert not [w for w in offline.warnings if "witness w1" in w]
    assert [w for w in offline.warnings if "does not meet the quorum" in w and "by w1" in w], offline.warnings


def test_a_malformed_policy_is_the_caller_s_error(demo_site: BuiltSite, tmp_path: Path) -> None:
    bad = tmp_path / "policy.txt"
    bad.write_text("log nonsense\nquorum none\n")
    r = run_verifier(demo_site.out, "--policy", bad)
    assert r.returncode == 2 and "--policy" in r.stderr


def test_the_demo_witness_cosigns_the_demo_over_http_and_the_policy_requires_it(
    demo_copy: BuiltSite, tmp_path: Path
) -> None:
    """The demo's witness, run as a separate process with a copy of its key and state, is asked
    by a build over HTTP; the demo's own policy then requires its cosignature."""
    paths = demo_copy.paths
    witness_dir = paths.private / "demo-witness"
    state = tmp_path / "wstate"
    shutil.copytree(witness_dir / "state", state)
    name = "witness.demo.example.org"
    args = ["--key", witness_dir / "witness.key", "--name", name, "--state", state, "--logs", witness_dir / "logs.txt"]
    proc, url, _ = started_witness(args)
    try:
        policy = paths.data / "policy.txt"
        policy.write_text(
            policy.read_text().replace(
                (witness_dir / "witness.vkey").read_text().strip(),
                (witness_dir / "witness.vkey").read_text().strip() + f" {url}",
            )
        )
        shutil.rmtree(paths.data / "cosignatures")
        fresh = tmp_path / "fresh-site"
        result = build(paths, fresh)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert not result.warnings, result.warnings
    assert f"\u2014 {name} " in (fresh / layout.CHECKPOINT).read_text()
    r = run_verifier(fresh, "--policy", fresh / layout.POLICY)
    assert r.returncode == 0, r.stdout
    stripped = tmp_path / "stripped"
    shutil.copytree(fresh, stripped)
    cp = stripped / layout.CHECKPOINT
    cp.write_text("".join(line for line in cp.read_text().splitlines(keepends=True) if name not in line))
    r = run_verifier(stripped, "--policy", fresh / layout.POLICY)
    assert r.returncode == 1 and "missing: demo-witness" in r.stdout


@contextmanager
def _serving(w: WitnessFiles, *extra: str | Path) -> Iterator[str]:
    """`transparency witness serve` as a separate process on a free loopback port: its URL."""
    proc, url, _ = started_witness([*w.args(), *extra])
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_witness_with_rules_over_a_mirror_cosigns_the_build_that_grows_the_log(
    witnessed: tuple[BuiltSite, WitnessFiles, WitnessFiles], tmp_path: Path
) -> None:
    """The witness's mirror holds the last release, never the one being built: the build sends the
    new tiles and reveals with its request, and the witness replays the rules over them and the
    mirror's older entries, in the one build that needs the cosignature."""
    site, w1, _ = witnessed
    mirror = tmp_path / "mirror"
    mirror.mkdir()  # first contact: the mirror holds nothing yet, the build sends the whole log
    with _serving(w1, "--rules", mirror) as url:
        policy = write_policy(site.paths, vkey_of(site.out), [("w1", w1.vkey, url)], "w1")
        first = build(site.paths, site.out)
        assert not first.warnings, first.warnings
        n1 = size_of(site.out)
        shutil.rmtree(mirror)
        shutil.copytree(site.out, mirror)  # the mirror syncs the published release
        grow(site.paths, 1, "2026-03-01T00:00:00Z")
        retire = cli("--data", site.paths.data, "retire", "b-0901", "--note", "Retired", "--at", "2026-03-01T00:00:01Z")
        assert retire[0] == 0, retire[1]
        code, out = cli("--data", site.paths.data, "build", "--out", site.out)
        assert code == 0 and "witness w1" not in out and "quorum" not in out, out
    assert size_of(site.out) > n1 and f"\u2014 {w1.name} " in (site.out / layout.CHECKPOINT).read_text()
    assert run_verifier(site.out, "--policy", policy).returncode == 0
    assert (mirror / layout.CHECKPOINT).read_bytes() != (site.out / layout.CHECKPOINT).read_bytes()


def test_a_witness_refusal_prints_as_escaped_lines(
    witnessed: tuple[BuiltSite, WitnessFiles, WitnessFiles], tmp_path: Path
) -> None:
    """A witness that lost its replay must read the whole log, and a mirror that lags behind what
    it last cosigned cannot give it the older entries: the witness refuses, listing the problems
    one a line, and the build prints them as lines."""
    site, w1, _ = witnessed
    # Past one full tile: the build then sends only the tiles the log at the witness's size lacked.
    write_items(site.paths, [item(f"b-{i:04d}", "b") for i in range(1000, 1000 + TILE_WIDTH)], "bulk.yaml")
    commit_new_items(site.paths, "2026-02-28T00:00:00Z")
    mirror = tmp_path / "mirror"
    mirror.mkdir()  # and never synced: it lacks the full tile the witness already replayed
    with _serving(w1, "--rules", mirror) as url:
        write_policy(site.paths, vkey_of(site.out), [("w1", w1.vkey, url)], "w1")
        assert not [w for w in build(site.paths, site.out).warnings if "witness w1" in w]
        for replay in w1.state.glob("*.ledger"):
            replay.unlink()
        grow(site.paths, 1, "2026-03-01T00:00:00Z")
        code, out = cli("--data", site.paths.data, "build", "--out", site.out)
    assert code == 0, out
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("warning: witness w1"))
    assert lines[start].endswith("refused with HTTP 422: refused by the witness's rules:"), lines[start]
    assert lines[start + 1].startswith("  | - the log cannot be read from the site: ") and "missing" in lines[start + 1]
    assert "\\x0a" not in out


def test_a_witness_with_its_replay_needs_only_the_new_entries(
    witnessed: tuple[BuiltSite, WitnessFiles, WitnessFiles], tmp_path: Path
) -> None:
    """The witness keeps the ledger as of the checkpoint it last cosigned: a later request is
    replayed from there, reading only the entries the build sends, so a mirror that lags behind
    (here, emptied after the first request) does not stop it."""
    site, w1, _ = witnessed
    write_items(site.paths, [item(f"b-{i:04d}", "b") for i in range(1000, 1000 + TILE_WIDTH)], "bulk.yaml")
    commit_new_items(site.paths, "2026-02-28T00:00:00Z")
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    with _serving(w1, "--rules", mirror) as url:
        write_policy(site.paths, vkey_of(site.out), [("w1", w1.vkey, url)], "w1")
        shutil.copytree(site.out, mirror, dirs_exist_ok=True)  # the first request reads the whole log
        assert not [w for w in build(site.paths, site.out).warnings if "witness w1" in w]
        assert len(list(w1.state.glob("*.ledger"))) == 1
        shutil.rmtree(mirror)
        mirror.mkdir()  # and from now on never synced
        grow(site.paths, 1, "2026-03-01T00:00:00Z")
        result = build(site.paths, site.out)
    assert not [w for w in result.warnings if "witness w1" in w], result.warnings
    note = (site.out / layout.CHECKPOINT).read_text()
    assert f"\n— {w1.name} " in note  # cosigned by w1 at the new size


def test_witness_cosign_refuses_a_fifo_in_the_site_instead_of_waiting(
    witnessed: tuple[BuiltSite, WitnessFiles, WitnessFiles], tmp_path: Path
) -> None:
    site, w1, _ = witnessed
    n = size_of(site.out)
    for rel in [layout.CHECKPOINT, layout.tile(f"tile/entries/000.p/{n}"), layout.tile(f"tile/0/000.p/{n}")]:
        copy = tmp_path / f"site-{len(os.listdir(tmp_path))}"
        shutil.copytree(site.out, copy)
        (copy / rel).unlink()
        os.mkfifo(copy / rel)
        r = subprocess.run(
            [sys.executable, "-m", "generator", "witness", "cosign", str(copy), *map(str, w1.args()), "--rules"],
            capture_output=True,
            text=True,
            timeout=60,  # a read that blocks fails the test instead of holding the suite
            check=False,
        )
        assert r.returncode == 1 and "refused" in r.stderr, (rel, r.stderr)
        assert rel.rpartition("/")[2] in r.stderr or "no ledger/checkpoint" in r.stderr, (rel, r.stderr)
