"""check.js reaches today's checkpoint from a proof pinned to an older one by a consistency proof it
makes from the site's hash tiles (generator/verifier/browser/check.js consistencyFromTiles,
docs/formats/in-browser.md), as format v3 needs: its proofs stay pinned to the release that first
published them, and no file holds a proof from each older size to today's.

Under Node: the proof check.js makes from a synthetic log's tiles is, hash for hash and tile for
tile, the one generator/verifier/tlog/tile_proofs.py makes, and both are the one
generator/core/proofs.py makes from the leaves, for every pair of sizes up to 40 and around the tile
boundaries 256, 512 and 65536; a missing tile could not be checked, a short one fails. In Chromium:
the demo grown by one event and built again, its `ledger/consistency/<size>.json` deleted (as v3
publishes none), the last release's `.tlog-proof` sent to the check-a-file page is valid and
reaches today's checkpoint; with a tampered tile it fails, with the roots that disagree, and with
a missing one it could not be checked.

Node or Chromium missing skips these tests, saying why; with CI set they fail instead.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from generator.commands.build import build
from generator.commands.retire import retire_item
from generator.core import layout
from generator.program.sealed import iter_sealed
from generator.verifier.core.errors import FormatError
from generator.verifier.tlog.tile_proofs import consistency_proof_from_tiles
from tests.support.browser import Browsing, browser, serve
from tests.support.check_js import OUTCOMES, js
from tests.support.demo import BuiltSite, copy_demo_data
from tests.support.tiled_logs import old_sizes, tiled_log

# ---------------------------------------------------------------------------------------------
# 1. Under Node: the same proofs as Python's, from a synthetic log's tiles

SMALL = range(1, 41)
NEAR_256 = [255, 256, 257, 300, 511, 512, 513, 600, 767, 768, 769]
NEAR_65536 = [65535, 65536, 65537, 70000]


@pytest.fixture(scope="module")
def tiles_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    log = tiled_log([*SMALL, *NEAR_256, *NEAR_65536])
    folder = tmp_path_factory.mktemp("tiles")
    log.write(folder)
    return folder, log


def test_check_js_makes_the_proofs_python_makes(tiles_folder: tuple[Path, Any]) -> None:
    folder, log = tiles_folder
    cases = [(m, n) for n in SMALL for m in range(n + 1)]
    cases += [(m, n) for n in [*NEAR_256, *NEAR_65536] for m in old_sizes(n)]
    assert (256, 65536) in cases and (65535, 65537) in cases and (255, 257) in cases and (512, 769) in cases
    got = js("tiles", folder=str(folder), cases=cases)
    wrong = []
    for (m, n), have in zip(cases, got, strict=True):
        proof, read = consistency_proof_from_tiles(log.read(n).get, m, n)
        assert proof == log.tree.consistency_proof(m, n), (m, n)
        if have != {"proof": [h.hex() for h in proof], "tiles": read}:
            wrong.append(((m, n), have, read))
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, first: {wrong[:2]}"


def test_a_missing_tile_could_not_be_checked_and_a_short_one_fails(tmp_path: Path) -> None:
    log = tiled_log([600])
    got = []
    for name, change in (("missing", lambda f: f.unlink()), ("short", lambda f: f.write_bytes(f.read_bytes()[:-1]))):
        log.write(tmp_path / name)
        change(tmp_path / name / "tile/0/002.p/88")
        got += js("tiles", folder=str(tmp_path / name), cases=[[520, 600]])
    assert got == [
        "could not check: the site has no ledger/tile/0/002.p/88, a hash tile of today's tree",
        "failed: ledger/tile/0/002.p/88: 2815 bytes, not the 2816 of its 88 hashes",
    ]
    # Two bad tiles: the one reported is the first the proof needs, as Python reads them, not the first to answer.
    log.write(tmp_path / "both")
    short = tmp_path / "both" / "tile/1/000.p/2"
    short.write_bytes(short.read_bytes()[:-1])
    (tmp_path / "both" / "tile/0/002.p/88").unlink()
    tiles = log.read(600) | {"tile/1/000.p/2": short.read_bytes()}
    del tiles["tile/0/002.p/88"]
    with pytest.raises(FormatError) as e:
        consistency_proof_from_tiles(tiles.get, 520, 600)
    [js_said] = js("tiles", folder=str(tmp_path / "both"), cases=[[520, 600]])
    assert str(e.value) == "tile/0/002.p/88: missing"
    assert js_said == "could not check: the site has no ledger/tile/0/002.p/88, a hash tile of today's tree"


# ---------------------------------------------------------------------------------------------
# 2. The demo grown by one release, its consistency proof deleted: in Chromium

REVEAL = layout.reveal("b-0002")
LATER = "2027-01-04T09:00:00Z"  # after the demo's last event


def tree_size(site: Path) -> int:
    return int((site / layout.CHECKPOINT).read_text(encoding="utf-8").split("\n")[1])


@dataclass
class Grown:
    """The demo after one more release: the last release's proof of REVEAL (pinned to its
    checkpoint of `old` entries), the hashes of the site's consistency proof from `old` before it
    was deleted, and the new site in three forms, served: as built but without that proof
    ("grown"), with a hash of today's tile changed ("tampered"), and without that tile ("missing")."""

    old: int
    new: int
    proof: Path
    consistency: list[str]
    folders: dict[str, Path]
    served: dict[str, Browsing]

    @property
    def tile(self) -> str:
        return layout.tile(f"tile/0/000.p/{self.new}")


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory, demo_site: BuiltSite) -> Iterator[Grown]:
    root = tmp_path_factory.mktemp("grown")
    paths = copy_demo_data(root / "data")
    site = root / "grown"
    shutil.copytree(demo_site.out, site)
    proof = root / "b-0002.json.tlog-proof"
    shutil.copyfile(demo_site.out / layout.tlog_proof(REVEAL), proof)
    sealed = sorted(item for item, _ in iter_sealed(paths) if not paths.reveal_file(item).exists())
    retire_item(paths, sealed[0], "Retired to grow the ledger by one event.", LATER)
    build(paths, site, offline=True)
    old, new = tree_size(demo_site.out), tree_size(site)
    assert old < new < 256, (old, new)  # one partial tile: today's tree, all of it
    # The new release archives the old checkpoint, byte for byte the one the old proof carries.
    assert proof.read_bytes().endswith(b"\n\n" + (site / layout.archived_checkpoint(old)).read_bytes())
    assert (site / layout.tlog_proof(REVEAL)).read_bytes() != proof.read_bytes()  # v2 remade it against today's
    consistency = site / layout.consistency_proof(old)
    hashes = json.loads(consistency.read_bytes())["hashes"]
    consistency.unlink()  # as format v3 publishes no proof from each older size to today's
    folders = {"grown": site, "tampered": root / "tampered", "missing": root / "missing"}
    for name in ("tampered", "missing"):
        shutil.copytree(site, folders[name])
    tile = layout.tile(f"tile/0/000.p/{new}")
    data = (site / tile).read_bytes()
    (folders["tampered"] / tile).write_bytes(bytes(32) + data[32:])
    (folders["missing"] / tile).unlink()
    with browser() as chromium, ExitStack() as stack:
        served = {n: Browsing(stack.enter_context(serve(f)), chromium) for n, f in folders.items()}
        yield Grown(old, new, proof, hashes, folders, served)


def test_the_proof_from_the_tiles_is_the_one_the_site_published(grown: Grown) -> None:
    """Python and check.js make from the new site's tiles the very proof the build wrote (and the
    fixture deleted): ledger/consistency/<old>.json's hashes."""
    ledger = grown.folders["grown"] / layout.LEDGER_PREFIX

    def read(path: str) -> bytes | None:
        return (ledger / path).read_bytes() if (ledger / path).is_file() else None

    proof, tiles = consistency_proof_from_tiles(read, grown.old, grown.new)
    assert [h.hex() for h in proof] == grown.consistency and tiles == [f"tile/0/000.p/{grown.new}"]
    assert js("tiles", folder=str(ledger), cases=[[grown.old, grown.new]]) == [
        {"proof": grown.consistency, "tiles": tiles}
    ]


def send(b: Browsing, file: Path) -> tuple[str, list[dict[str, str]]]:
    """`file` given to the check-a-file page; the outcome's words and each step's status and text."""
    tab = b.open(layout.CHECK_PAGE, 1280)
    page = tab.page
    page.get_by_label(re.compile("^Choose a certificate")).set_input_files(str(file))
    section = "document.querySelector('[data-file-check]')"
    page.wait_for_function(f"({OUTCOMES})({section})", timeout=60_000)
    text = str(page.locator("[data-file-check] [aria-live=polite]").inner_text())
    steps = page.locator("[data-file-check] [data-check-steps] li").evaluate_all(
        "lis => lis.map(li => ({status: li.dataset.status, text: li.textContent}))"
    )
    assert not tab.errors or all("404" in e for e in tab.errors), tab.errors
    tab.close()
    return text, steps


def step(steps: list[dict[str, str]], name: str) -> dict[str, str]:
    [found] = [s for s in steps if s["text"].split(": ", 1)[1].startswith(name)]
    return found


def test_the_last_release_s_proof_reaches_today_s_checkpoint_through_the_tiles(grown: Grown) -> None:
    text, steps = send(grown.served["grown"], grown.proof)
    assert text.startswith("Valid: its commit entry "), (text, steps)
    assert f"whose checkpoint of {grown.new} entries is signed by SHA256:" in text, text
    inclusion = step(steps, "Checking the inclusion proof")
    assert inclusion["status"] == "passed" and f"of a tree of {grown.old} entries)" in inclusion["text"], inclusion
    today = step(steps, "Checking it is part of today's ledger")
    assert today == {
        "status": "passed",
        "text": f"✓ passed: Checking it is part of today's ledger (the consistency proof from {grown.old} to "
        f"{grown.new} entries made from the site's hash tile {grown.tile} proves that the tree of {grown.old} "
        f"entries begins today's tree of {grown.new})",
    }, today


def test_a_tampered_tile_fails_with_the_roots(grown: Grown) -> None:
    text, steps = send(grown.served["tampered"], grown.proof)
    failed = [s for s in steps if s["status"] == "failed"]
    assert len(failed) == 1 and failed[0] == steps[-1], steps
    head = (
        f"the consistency proof from {grown.old} to {grown.new} entries made from the site's hash tile "
        f"{grown.tile}: the proof leads to root [A-Za-z0-9+/]{{43}}=, not [A-Za-z0-9+/]{{43}}="
    )
    assert re.fullmatch(f'Not valid: this file failed "Checking it is part of today\'s ledger": {head}\\.', text), text
    assert re.fullmatch(f"✗ failed: Checking it is part of today's ledger \\({head}\\)", failed[0]["text"]), failed


def test_a_missing_tile_could_not_be_checked(grown: Grown) -> None:
    text, steps = send(grown.served["missing"], grown.proof)
    assert text == (
        f"Could not check this file: the site has no {grown.tile}, a hash tile of today's tree. "
        "That says nothing either way; verify.py can check it."
    ), (text, steps)
