"""Format v3 sites (docs/formats/v3.md): the demo built as a program that chose `format: 3`, one
release after it, and what an attacker holding the key does to hide a change in one."""

from __future__ import annotations

import shutil
from pathlib import Path

import generator.verifier as v
from generator.commands.build import build
from generator.commands.retire import retire_item
from generator.core.proofs import MerkleTree
from generator.core.signing_key import Signer, load_key
from generator.program.datadir import Paths
from generator.program.sealed import iter_sealed
from tests.support.demo import BuiltSite, copy_demo_data
from tests.support.tamper import resign, resign_sums

LATER = "2027-01-04T09:00:00Z"  # after the demo's last event


def choose_format(paths: Paths, fmt: int) -> None:
    """Append `format: N` to the program's program.yaml."""
    f = paths.data / "program.yaml"
    f.write_text(f.read_text(encoding="utf-8") + f"format: {fmt}\n", encoding="utf-8")


def v3_demo(root: Path, fmt: int = 3) -> BuiltSite:
    """The demo's data, made a v3 program (or v4: v3 with the manifest's lists in parts,
    docs/formats/v4.md), built into `root`/public (offline)."""
    paths = copy_demo_data(root / "data")
    choose_format(paths, fmt)
    out = root / "public"
    build(paths, out, offline=True)
    return BuiltSite(paths, out)


def one_event(site: BuiltSite, at: str = LATER) -> str:
    """One release more: the first item still sealed retired, and the site built again; the
    item's id."""
    paths = site.paths
    item = sorted(i for i, _ in iter_sealed(paths) if not paths.reveal_file(i).exists())[0]
    retire_item(paths, item, "Retired for a v3 release.", at)
    build(paths, site.out, offline=True)
    return item


def demo_signer(site: BuiltSite) -> Signer:
    return load_key(site.paths.private / "signing.key")


def leaves_of(site: Path) -> list[bytes]:
    """The ledger's leaves, read from its entry bundles (a v3 site has no entries document)."""
    size = v.parse_checkpoint((site / "ledger/checkpoint").read_text().split("\n\n")[0] + "\n")[1]

    def read(rel: str) -> bytes | None:
        p = site / "ledger" / rel
        return p.read_bytes() if p.is_file() else None

    return list(v.read_tiled_log(read, size))


def tree_of(site: Path) -> MerkleTree:
    return MerkleTree(v.leaf_hash(raw) for raw in leaves_of(site))


def hide(site: BuiltSite, *signed: str) -> None:
    """What a key holder does after a change: each signed document's signature remade, and the
    checksum list made anew over the files as they are, and signed."""
    signer = demo_signer(site)
    for rel in signed:
        resign(site.out, rel, signer)
    resign_sums(site.out, signer)


def copy_release(out: Path, memory: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A release and the verifier's memory of one before it, copied into `tmp_path`: each test
    changes its own."""
    site, copied = tmp_path / "site", tmp_path / "releases"
    shutil.copytree(out, site)
    shutil.copytree(memory, copied)
    copied.chmod(0o700)
    return site, copied
