"""Logs for a mirror to follow: a log published as a site folder (`ledger/checkpoint` signed by its
key, `ledger/tile/…`) at any size, grown, rolled back, forked or with a tile altered; the demo
site copied; mirror keys made through the real command; and what a mirror's folder holds."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from generator.cli import main
from generator.core.signing_key import Signer
from generator.verifier import TileBuilder, checkpoint_text, tile_paths
from tests.support.demo import REPO

ORIGIN = "mirror-test.example.org/log"
LOG_SEED = bytes(range(32))


class PublishedLog:
    """A log of leaves b"<prefix> 0", b"<prefix> 1", … (the first `shared` of them b"leaf N"
    whatever the prefix, so that two logs of one key can share a history and then fork), published
    into `site` as a program's site publishes it."""

    def __init__(
        self, site: Path, prefix: bytes = b"leaf", shared: int = 0, origin: str = ORIGIN, seed: bytes = LOG_SEED
    ) -> None:
        self.site = site
        self.prefix = prefix
        self.shared = shared
        self.signer = Signer(origin, seed)
        self.size = 0

    @property
    def vkey(self) -> str:
        return self.signer.vkey

    def leaf(self, i: int) -> bytes:
        return b"leaf %d" % i if i < self.shared else b"%s %d" % (self.prefix, i)

    def publish(self, size: int) -> bytes:
        """The log at `size` leaves: every tile of that size written beside those already there
        (full tiles are the same bytes; each size has partial tiles of its own), then the signed
        checkpoint. Its root."""
        builder = TileBuilder()
        tiles: dict[str, bytes] = {}
        for i in range(size):
            tiles.update(builder.append(self.leaf(i)))
        tiles.update(builder.finish())
        for rel, data in sorted(tiles.items()):
            path = self.site / "ledger" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        root = builder.root()
        (self.site / "ledger" / "checkpoint").write_bytes(
            self.signer.sign_note(checkpoint_text(self.signer.name, size, root))
        )
        self.size = size
        return root


def site_tiles(site: Path, size: int) -> dict[str, bytes]:
    """The tiles of a site's log at `size` leaves (tile/…), as the site serves them."""
    return {rel: (site / "ledger" / rel).read_bytes() for rel, _ in tile_paths(size)}


def copy_tiles(copy: Path) -> dict[str, bytes]:
    """Every file under a log's copy's tile/ folder (tile/…)."""
    return {p.relative_to(copy).as_posix(): p.read_bytes() for p in sorted((copy / "tile").rglob("*")) if p.is_file()}


def copy_folder(out: Path, origin: str = ORIGIN) -> Path:
    """Where a mirror in `out` keeps its copy of the log `origin`."""
    return out / hashlib.sha256(origin.encode()).hexdigest()


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file under `folder`, by relative path: a folder compared before and after a run."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def demo_site(target: Path) -> tuple[Path, str]:
    """A copy of the repository's built demo site (public/), and its log's active key."""
    shutil.copytree(REPO / "public", target)
    keys = json.loads((target / "keys.json").read_text())
    return target, str(next(k["vkey"] for k in keys["keys"] if k["status"] == "active"))


def cli(*argv: str | Path) -> tuple[int, str, str]:
    """`transparency ARGV`: its exit status, stdout and stderr."""
    result = CliRunner().invoke(main, [str(a) for a in argv], prog_name="transparency")
    return result.exit_code, result.stdout, result.stderr


def mirror_key(folder: Path, kind: str, name: str = "mirror.example.org") -> tuple[Path, str]:
    """A new mirror key of `kind`, made by `transparency mirror key`: its file and its vkey."""
    path = folder / f"{name}.{kind}.key"
    code, out, err = cli("mirror", "key", name, "--key", path, "--type", kind)
    assert code == 0, err
    return path, out.strip()


def private_site_and_state(tmp_path: Path, record_name: str) -> tuple[Path, Path]:
    """A site folder and where a mirror's memory file named `record_name` goes, both private as
    the verifier requires of its state folder."""
    site, state = tmp_path / "site", tmp_path / "state"
    site.mkdir(mode=0o700)
    state.mkdir(mode=0o700)
    tmp_path.chmod(0o700)
    return site, state / "mirrors" / record_name
