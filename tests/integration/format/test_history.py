"""History nobody can rewrite (FORMAT.md v2): archived checkpoints, consistency proofs,
inclusion proofs for single artifacts, --since and the state file, through the real commands."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.commands.build import build
from generator.core import layout
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.verifier import (
    format_tlog_proof,
    leaf_hash,
    parse_canonical,
    parse_tlog_proof,
    verify_consistency,
    verify_site,
)
from tests.support.demo import BUNDLE, BuiltSite
from tests.support.history import grow, size_of, vkey_of


def run_verifier(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", str(BUNDLE), *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


# -- archived checkpoints and consistency proofs


def test_every_build_that_grows_the_ledger_archives_its_checkpoint(built_program: BuiltSite) -> None:
    site = built_program.out
    first = (site / layout.CHECKPOINT).read_bytes()
    n1 = size_of(site)
    grow(built_program.paths, 1, "2026-03-01T00:00:00Z")
    build(built_program.paths, site)
    n2 = size_of(site)
    build(built_program.paths, site)  # a rebuild without growth archives nothing new
    grow(built_program.paths, 2, "2026-03-02T00:00:00Z")
    build(built_program.paths, site)
    n3 = size_of(site)
    history = parse_canonical((site / layout.HISTORY).read_bytes())
    assert [r["tree_size"] for r in history["checkpoints"]] == [n1, n2, n3]
    assert (site / layout.archived_checkpoint(n1)).read_bytes() == first, "an archived checkpoint is kept verbatim"
    assert (site / layout.archived_checkpoint(n3)).read_bytes() == (site / layout.CHECKPOINT).read_bytes()
    for row in history["checkpoints"][:-1]:
        doc = parse_canonical((site / row["consistency"]).read_bytes())
        assert (doc["old_size"], doc["new_size"]) == (row["tree_size"], n3)
        verify_consistency(
            doc["old_size"],
            doc["new_size"],
            [bytes.fromhex(h) for h in doc["hashes"]],
            bytes.fromhex(doc["old_root"]),
            bytes.fromhex(doc["new_root"]),
        )
    assert history["checkpoints"][-1]["consistency"] is None
    assert verify_site(site).ok
    page = (site / layout.HISTORY_PAGE).read_text()
    for n in (n1, n2, n3):
        assert f'href="../{layout.archived_checkpoint(n)}"' in page


def test_a_tampered_archive_fails_the_verifier_and_stops_the_next_build(built_program: BuiltSite) -> None:
    site = built_program.out
    grow(built_program.paths, 1, "2026-03-01T00:00:00Z")
    build(built_program.paths, site)
    history = parse_canonical((site / layout.HISTORY).read_bytes())
    old = history["checkpoints"][0]
    proof = site / old["consistency"]
    doc = json.loads(proof.read_bytes())
    doc["hashes"][0] = doc["hashes"][0][:-1] + ("0" if doc["hashes"][0][-1] != "0" else "1")
    proof.write_bytes(json.dumps(doc, separators=(",", ":"), sort_keys=True).encode())
    report = verify_site(site)
    assert any(p.file == old["consistency"] and "fails" in p.message for p in report.failures), report.render()
    archived = site / old["checkpoint"]
    archived.write_bytes(archived.read_bytes().replace(b"\n\n", b"\n\n\n", 1))
    with pytest.raises(InputError, match="checkpoint history cannot be carried forward"):
        build(built_program.paths, site)


# -- one artifact alone: .tlog-proof and `verify.py proof`


def test_every_reveal_and_certificate_has_a_proof_that_checks_alone(demo_site: BuiltSite, tmp_path: Path) -> None:
    site = demo_site.out
    manifest = parse_canonical((site / layout.MANIFEST).read_bytes())
    artifacts = [r["path"] for r in manifest["reveals"]] + [c["path"] for c in manifest["certificates"]]
    assert artifacts and all((site / layout.tlog_proof(a)).is_file() for a in artifacts)
    # Alone: the two files copied out of the site, nothing else beside them.
    for rel in (manifest["reveals"][-1]["path"], manifest["certificates"][0]["path"]):
        alone = tmp_path / Path(rel).name
        shutil.copy(site / rel, alone)
        shutil.copy(site / layout.tlog_proof(rel), f"{alone}.tlog-proof")
        r = run_verifier("proof", alone, f"{alone}.tlog-proof", "--key", vkey_of(site))
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.startswith(f"PASS: {alone} is committed by leaf ")
        r = run_verifier("proof", alone, f"{alone}.tlog-proof", "--key", vkey_of(site), "--json")
        assert json.loads(r.stdout)["ok"] is True


def test_a_proof_of_another_file_a_flipped_hash_or_another_key_fails(demo_site: BuiltSite, tmp_path: Path) -> None:
    site = demo_site.out
    manifest = parse_canonical((site / layout.MANIFEST).read_bytes())
    reveal, cert = manifest["reveals"][0]["path"], manifest["certificates"][0]["path"]
    vkey = vkey_of(site)
    r = run_verifier("proof", site / cert, site / layout.tlog_proof(reveal), "--key", vkey)
    assert r.returncode == 1 and "does not commit to this file's SHA-256" in r.stdout
    proof = parse_tlog_proof((site / layout.tlog_proof(reveal)).read_bytes())
    assert proof.extra is not None
    for i in range(len(proof.hashes)):
        hashes = list(proof.hashes)
        hashes[i] = bytes([hashes[i][0] ^ 1]) + hashes[i][1:]
        bad = tmp_path / f"flipped-{i}.tlog-proof"
        bad.write_bytes(format_tlog_proof(proof.extra, proof.index, hashes, proof.checkpoint))
        r = run_verifier("proof", site / reveal, bad, "--key", vkey)
        assert r.returncode == 1 and "computed root" in r.stdout, r.stdout
    wrong_index = tmp_path / "index.tlog-proof"
    wrong_index.write_bytes(format_tlog_proof(proof.extra, proof.index + 1, list(proof.hashes), proof.checkpoint))
    assert run_verifier("proof", site / reveal, wrong_index, "--key", vkey).returncode == 1
    other = "other.example.org/log+00000000+" + base64.b64encode(b"\x01" + bytes(32)).decode()
    r = run_verifier("proof", site / reveal, site / layout.tlog_proof(reveal), "--key", other)
    assert r.returncode == 2 and "key ID" in r.stderr  # a malformed vkey is the caller's error
    tampered = tmp_path / "reveal.json"
    tampered.write_bytes((site / reveal).read_bytes().replace(b'"prompt":"', b'"prompt":"X', 1))
    r = run_verifier("proof", tampered, site / layout.tlog_proof(reveal), "--key", vkey)
    assert r.returncode == 1 and "does not commit" in r.stdout


def test_the_site_check_fails_a_proof_that_does_not_prove_its_artifact(demo_copy: BuiltSite) -> None:
    site = demo_copy.out
    manifest = parse_canonical((site / layout.MANIFEST).read_bytes())
    reveal = manifest["reveals"][0]["path"]
    other = manifest["reveals"][1]["path"]
    shutil.copy(site / layout.tlog_proof(other), site / layout.tlog_proof(reveal))
    report = verify_site(site)
    assert any(p.file == layout.tlog_proof(reveal) for p in report.failures), report.render()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"c2sp.org/tlog-proof@v2\nindex 0\n\nx", "line 1 must be"),
        (b"c2sp.org/tlog-proof@v1\nindex 01\n\nx", "leading zeros"),
        (b"c2sp.org/tlog-proof@v1\nextra !!\nindex 0\n\nx", "extra is not canonical base64"),
        (b"c2sp.org/tlog-proof@v1\nindex 0\n" + base64.b64encode(bytes(31)) + b"\n\nx", "32 bytes"),
        (b"c2sp.org/tlog-proof@v1\nindex 0\nx", "no empty line"),
        (b"c2sp.org/tlog-proof@v1\n\xc3\xa9\n\nx", "ASCII"),
        (b"c2sp.org/tlog-proof@v1\nextra AA==\n\nx", "index N"),
    ],
)
def test_a_malformed_tlog_proof_is_refused_with_its_line(text: bytes, message: str) -> None:
    from generator.verifier import FormatError

    with pytest.raises(FormatError, match=message):
        parse_tlog_proof(text)


def test_a_tlog_proof_round_trips() -> None:
    leaf = b'{"type":"commit"}'
    data = format_tlog_proof(leaf, 5, [leaf_hash(b"a"), leaf_hash(b"b")], b"origin\n6\nroot\n\n- sig\n")
    p = parse_tlog_proof(data)
    assert (p.extra, p.index, p.hashes) == (leaf, 5, (leaf_hash(b"a"), leaf_hash(b"b")))
    assert p.checkpoint == b"origin\n6\nroot\n\n- sig\n"


# -- remembering: --since and the state file


@pytest.fixture
def rewritten(make_program: Callable[..., Paths], tmp_path: Path) -> tuple[Path, Path, Path]:
    """An honest site, the same site one release later, and a history rewritten from scratch
    with the same key: one commitment replaced, everything re-signed."""
    paths = make_program()
    honest = tmp_path / "honest"
    build(paths, honest)
    later = tmp_path / "later"
    shutil.copytree(honest, later)
    grow(paths, 1, "2026-03-01T00:00:00Z")
    build(paths, later)
    forged_paths = make_program(name="forged", secret_items=4)
    shutil.copy(paths.key_file, forged_paths.key_file)
    shutil.copy(paths.data / "keys.json", forged_paths.data / "keys.json")
    forged = tmp_path / "forged-site"
    build(forged_paths, forged)
    assert size_of(forged) >= size_of(honest)
    return honest, later, forged


def test_since_proves_a_later_release_extends_a_saved_checkpoint(rewritten: tuple[Path, Path, Path]) -> None:
    honest, later, _ = rewritten
    r = run_verifier(later, "--since", honest / layout.CHECKPOINT, "--no-state")
    assert r.returncode == 0, r.stdout


def test_since_catches_a_history_rewritten_and_re_signed_with_the_same_key(
    rewritten: tuple[Path, Path, Path],
) -> None:
    honest, _, forged = rewritten
    assert run_verifier(forged, "--no-state").returncode == 0, "the forgery passes on its own"
    r = run_verifier(forged, "--since", honest / layout.CHECKPOINT, "--no-state")
    assert r.returncode == 1
    assert "does not extend this checkpoint" in r.stdout
    honest_root = (honest / layout.CHECKPOINT).read_text().split("\n")[2]
    assert honest_root in r.stdout, "both roots are printed"


def test_since_catches_an_older_site_served_again(rewritten: tuple[Path, Path, Path]) -> None:
    honest, later, _ = rewritten
    r = run_verifier(honest, "--since", later / layout.CHECKPOINT, "--no-state")
    assert r.returncode == 1 and "rolled back or forked" in r.stdout


def test_the_state_file_catches_a_rollback_and_a_rewrite_by_itself(
    rewritten: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    honest, later, forged = rewritten
    state = tmp_path / "state.json"
    assert run_verifier(honest, "--state", state).returncode == 0
    assert run_verifier(later, "--state", state).returncode == 0
    remembered = json.loads(state.read_text())["logs"]
    assert remembered["test.example.org/prog"]["tree_size"] == size_of(later)
    before = state.read_bytes()
    r = run_verifier(honest, "--state", state)
    assert r.returncode == 1 and "rolled back" in r.stdout
    r = run_verifier(forged, "--state", state)
    assert r.returncode == 1 and "does not extend" in r.stdout
    assert state.read_bytes() == before, "a failed run never writes the state"


def test_the_default_state_lives_in_the_user_cache(rewritten: tuple[Path, Path, Path], tmp_path: Path) -> None:
    honest, later, _ = rewritten
    cache = tmp_path / "xdg"
    assert run_verifier(later, env={"XDG_CACHE_HOME": str(cache)}).returncode == 0
    assert (cache / "transparency-verify" / "state.json").is_file()
    assert run_verifier(honest, env={"XDG_CACHE_HOME": str(cache)}).returncode == 1


def test_a_damaged_state_stops_the_run_and_is_kept(demo_site: BuiltSite, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text('{"logs":[],"type":"verifier-state","v":1}')
    r = run_verifier(demo_site.out, "--state", state)
    assert r.returncode == 2 and "state is damaged" in r.stderr
    assert state.read_text() == '{"logs":[],"type":"verifier-state","v":1}'


def test_a_saved_checkpoint_of_another_key_fails(rewritten: tuple[Path, Path, Path], tmp_path: Path) -> None:
    honest, _, _ = rewritten
    note = (honest / layout.CHECKPOINT).read_bytes()
    head, _, sig = note.partition(b"\n\n")
    forged = tmp_path / "cp"
    forged.write_bytes(head + b"\n\n" + sig[:-10] + b"AAAAAAAAA=\n")
    r = run_verifier(honest, "--since", forged, "--no-state")
    assert r.returncode == 1 and "not one of the site's" in r.stdout


# -- tiles


def test_a_build_after_one_more_event_rewrites_no_full_tile(make_program: Callable[..., Paths]) -> None:
    paths = make_program(secret_items=300, retired=0)
    out = paths.data.parent / "public"
    build(paths, out)
    n = size_of(out)
    assert n > 256
    tiles = out / "ledger" / "tile"
    full = {p: (p.stat().st_ino, p.read_bytes()) for p in tiles.rglob("*") if p.is_file() and ".p" not in p.parts[-2]}
    assert {p.relative_to(tiles).as_posix() for p in full} == {"0/000", "entries/000"}
    grow(paths, 1, "2026-03-01T00:00:00Z")
    build(paths, out)
    for p, (inode, data) in full.items():
        assert p.stat().st_ino == inode and p.read_bytes() == data, f"{p} was rewritten"
    partial = {p.relative_to(tiles).as_posix() for p in tiles.rglob("*") if p.is_file() and p not in full}
    w = size_of(out) - 256
    # Today's partial tiles, and those of the archived size before it, whose tile is still partial
    # (C2SP tlog-tiles: a log serves the partial tiles of every size it made a checkpoint for).
    assert partial == {f"0/001.p/{w}", f"entries/001.p/{w}", f"0/001.p/{w - 1}", f"entries/001.p/{w - 1}", "1/000.p/1"}
    assert run_verifier(out, "--from-tiles", "--no-state").returncode == 0


def test_the_site_check_and_a_check_from_tiles_alone_catch_a_changed_tile(demo_copy: BuiltSite) -> None:
    site = demo_copy.out
    bundle = min((site / "ledger" / "tile" / "entries").rglob("*/*"))  # the same one on every file system
    data = bytearray(bundle.read_bytes())
    data[5] ^= 0x01
    bundle.write_bytes(bytes(data))
    for args in ((), ("--from-tiles",)):
        r = run_verifier(site, "--no-state", *args)
        assert r.returncode == 1 and "ledger/tile" in r.stdout, r.stdout
