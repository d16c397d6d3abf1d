"""Every file under ledger/, beside an artifact (*.tlog-proof), under a certificate's evidence/ and
in the record's folders (certificates/, reveals/, runs/, methodology/, keys/) is one the verifier
expects or a failure naming it (issue 24, item 17). Each forgery is made by a
holder of the demo's signing key: the file added, SHA256SUMS re-signed, and verify.py must exit 1
naming the file."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import generator.verifier as v
from generator.commands.build import build
from generator.core import layout
from generator.core.signing_key import Signer, load_key
from generator.program.datadir import Paths
from generator.verifier import checkpoint_text, leaf_hash
from generator.verifier.site import accounting
from tests.support.demo import BUNDLE, BuiltSite
from tests.support.history import grow
from tests.support.tamper import resign_sums


def run_verifier(site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", str(BUNDLE), str(site), "--no-state"], capture_output=True, text=True)


def fails_naming(site: Path, rel: str, words: str) -> None:
    r = run_verifier(site)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = [line for line in r.stdout.splitlines() if line.startswith(f"FAIL {rel}:")]
    assert lines and any(words in line for line in lines), r.stdout


@pytest.fixture
def forged(demo_site: BuiltSite, tmp_path: Path) -> tuple[Path, Signer, str, int]:
    site = tmp_path / "site"
    shutil.copytree(demo_site.out, site)
    text = (site / layout.CHECKPOINT).read_text().split("\n")
    return site, load_key(demo_site.paths.key_file), text[0], int(text[1])


def test_the_pristine_demo_has_every_file_accounted_for(demo_site: BuiltSite) -> None:
    r = run_verifier(demo_site.out)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_program_with_several_releases_passes(built_program: BuiltSite) -> None:
    for day in (2, 3, 4):
        grow(built_program.paths, day, f"2026-03-0{day}T00:00:00Z")
        build(built_program.paths, built_program.out)
    assert len(list((built_program.out / "ledger" / "checkpoints").iterdir())) >= 3
    r = run_verifier(built_program.out)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_signed_checkpoint_of_a_fork_in_no_history_row_fails(forged: tuple[Path, Signer, str, int]) -> None:
    site, signer, origin, size = forged
    rel = "ledger/checkpoints/77"
    assert size > 77
    (site / rel).write_bytes(signer.sign_note(checkpoint_text(origin, 77, leaf_hash(b"another history"))))
    resign_sums(site, signer)
    fails_naming(site, rel, "no row of the checkpoint history archives")


def test_a_signed_checkpoint_beyond_today_s_size_fails(forged: tuple[Path, Signer, str, int]) -> None:
    site, signer, origin, size = forged
    rel = f"ledger/checkpoints/{size + 3}"
    (site / rel).write_bytes(signer.sign_note(checkpoint_text(origin, size + 3, leaf_hash(b"later"))))
    resign_sums(site, signer)
    fails_naming(site, rel, "no row of the checkpoint history archives")


def test_a_partial_tile_wider_than_the_log_fails(forged: tuple[Path, Signer, str, int]) -> None:
    site, signer, _, size = forged
    assert size < 250
    tile = (site / f"ledger/tile/0/000.p/{size}").read_bytes()
    rel = "ledger/tile/0/000.p/250"
    (site / rel).write_bytes(tile + bytes(32 * (250 - size)))
    resign_sums(site, signer)
    fails_naming(site, rel, "a tile of no size the log published")


def _bundle_prefix(data: bytes, count: int) -> bytes:
    pos = 0
    for _ in range(count):
        pos += 2 + int.from_bytes(data[pos : pos + 2], "big")
    return data[:pos]


def _archived_size(site: Path) -> int:
    rows = json.loads((site / layout.HISTORY).read_bytes())["checkpoints"]
    return rows[-2]["tree_size"]


def test_a_partial_tile_of_an_archived_size_is_checked(forged: tuple[Path, Signer, str, int]) -> None:
    """The archived size's partial tiles, cut from today's, pass; holding another history, they fail."""
    site, signer, _, size = forged
    m = _archived_size(site)
    hashes = (site / f"ledger/tile/0/000.p/{size}").read_bytes()
    bundle = (site / f"ledger/tile/entries/000.p/{size}").read_bytes()
    (site / f"ledger/tile/0/000.p/{m}").write_bytes(hashes[: 32 * m])
    (site / f"ledger/tile/entries/000.p/{m}").write_bytes(_bundle_prefix(bundle, m))
    resign_sums(site, signer)
    r = run_verifier(site)
    assert r.returncode == 0, r.stdout + r.stderr
    rel = f"ledger/tile/0/000.p/{m}"
    (site / rel).write_bytes(leaf_hash(b"another history") + hashes[32 : 32 * m])
    resign_sums(site, signer)
    fails_naming(site, rel, f"does not hold the ledger's first {m} entries")


def test_a_malformed_consistency_proof_of_no_history_row_fails(forged: tuple[Path, Signer, str, int]) -> None:
    site, signer, _, _ = forged
    rel = "ledger/consistency/50.json"
    (site / rel).write_bytes(b'{"hashes":"not a proof"}')
    resign_sums(site, signer)
    fails_naming(site, rel, "a consistency proof of no row of the checkpoint history")


def test_a_tlog_proof_beside_no_artifact_fails(forged: tuple[Path, Signer, str, int]) -> None:
    site, signer, _, _ = forged
    proof = next(iter(sorted((site / "reveals").glob("*.tlog-proof"))))
    rel = "reveals/no-such-item.json.tlog-proof"
    (site / rel).write_bytes(proof.read_bytes())
    resign_sums(site, signer)
    fails_naming(site, rel, "an inclusion proof beside no artifact")


def test_an_evidence_file_no_certificate_lists_fails(forged: tuple[Path, Signer, str, int]) -> None:
    """Beside a certificate that lists evidence, and under one that lists none (a secret gate's)."""
    site, signer, _, _ = forged
    manifest = json.loads((site / layout.MANIFEST).read_bytes())
    serials = [row["serial"] for row in manifest["certificates"]]
    listing = [s for s in serials if (site / "certificates" / s / "evidence").is_dir()]
    bare = [s for s in serials if s not in listing]
    assert listing and bare
    extra = f"certificates/{listing[0]}/evidence/extra.log"
    unlisted = f"certificates/{bare[0]}/evidence/run.log"
    for rel in (extra, unlisted):
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(base64.b64encode(b"an evaluation log nobody listed"))
    resign_sums(site, signer)
    fails_naming(site, extra, "an evidence file that no certificate of the manifest lists")
    fails_naming(site, unlisted, "an evidence file that no certificate of the manifest lists")


@pytest.mark.parametrize(
    "rel",
    [
        "certificates/quill-a-3/evidence/sub/quill-a-3.eval",  # nested under a listed evidence file's folder
        "certificates/quill-a-3/evidence2/quill-a-3.eval",  # a folder beside evidence/
        "certificates/quill-a-3/details/a-001.json",  # a details document the manifest does not list
        "certificates/quill-a-3/notes.html",
        "certificates/quill-a-9.json",  # a certificate of no ledger entry
        "certificates/quill-a-3.json.bak",
        "reveals/b-9999.json",  # a reveal of an item the ledger never revealed
        "runs/quill-a-9.json",
        "methodology/2027.1.md",
        "keys/00000000.pem",
    ],
)
def test_a_file_in_an_artifact_folder_that_nothing_names_fails(rel: str, forged: tuple[Path, Signer, str, int]) -> None:
    site, signer, _, _ = forged
    assert (site / "certificates/quill-a-3/evidence/quill-a-3.eval").is_file()  # the demo's layout
    (site / rel).parent.mkdir(parents=True, exist_ok=True)
    (site / rel).write_text("a forged record\n")
    resign_sums(site, signer)
    fails_naming(site, rel, f"a file under {rel.split('/')[0]}/ that no document of the site accounts for")


def test_an_archived_size_s_partial_tiles_are_checked_without_reading_the_log_again(
    make_program: Callable[..., Paths], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over 256 entries, with two archived sizes whose partial tiles are kept: each is held against
    the head of today's tile at its place, and no other tile is read for it (re-hashing the tiled
    log for every archived size would cost the history's rows times the log)."""
    paths = make_program(secret_items=300, retired=0)
    site = paths.data.parent / "public"
    build(paths, site)
    for day in (1, 2):
        grow(paths, day, f"2026-03-0{day}T00:00:00Z")
        build(paths, site)
    size = json.loads((site / layout.HISTORY).read_bytes())["tree_size"]
    archived = [r["tree_size"] for r in json.loads((site / layout.HISTORY).read_bytes())["checkpoints"][:-1]]
    assert size > 256 and all(256 < m < size for m in archived), (size, archived)
    hashes = (site / f"ledger/tile/0/001.p/{size - 256}").read_bytes()
    bundle = (site / f"ledger/tile/entries/001.p/{size - 256}").read_bytes()
    kept = set()
    for m in archived:
        kept |= {f"tile/0/001.p/{m - 256}", f"tile/entries/001.p/{m - 256}"}
        (site / f"ledger/tile/0/001.p/{m - 256}").write_bytes(hashes[: 32 * (m - 256)])
        (site / f"ledger/tile/entries/001.p/{m - 256}").write_bytes(_bundle_prefix(bundle, m - 256))
    signer = load_key(paths.key_file)
    resign_sums(site, signer)
    reads: list[str] = []
    tile_reader = accounting.tile_reader

    def counting(s: Any) -> Callable[[str], bytes | None]:
        read = tile_reader(s)

        def counted(rel: str) -> bytes | None:
            reads.append(rel)
            return read(rel)

        return counted

    monkeypatch.setattr(accounting, "tile_reader", counting)
    report = v.verify_site(site)
    assert report.ok, report.render()
    today = {f"tile/0/001.p/{size - 256}", f"tile/entries/001.p/{size - 256}"}
    assert kept <= set(reads) <= kept | today, sorted(set(reads))
    rel = f"ledger/tile/entries/001.p/{archived[0] - 256}"
    prefix = _bundle_prefix(bundle, archived[0] - 256)
    (site / rel).write_bytes(prefix[:-1] + bytes([prefix[-1] ^ 1]))
    resign_sums(site, signer)
    fails_naming(site, rel, f"is not the head of today's tile ledger/tile/entries/001.p/{size - 256}")
