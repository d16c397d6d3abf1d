"""generator/mirror/pull.py's parts: the tiles an update reads past the stored tree (those TiledLog
resumed there reads, in its order), the stored tree rebuilt from the copy's partial tiles (or, when
one is lost, from every tile), the log's checkpoint opened with the pinned keys only, and the
mirror's checkpoint: the log's note and signatures, then the mirror's cosignature at the clock's time."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.core.cosigning_keys import generate_cosigner
from generator.core.signing_key import Signer
from generator.mirror.log_copy import LogCopy, MirrorCheckpoint
from generator.mirror.mirror_errors import MirrorError, Refused
from generator.mirror.pull import new_tiles, open_log_checkpoint, pull, stored_tree
from generator.verifier import (
    ED25519,
    ML_DSA_44,
    TileBuilder,
    checkpoint_text,
    open_note,
    parse_vkey,
    read_tiled_log,
    verify_cosignatures,
)
from tests.support.mirrors import PublishedLog, copy_folder

ORIGIN = "pull-test.example.org/log"


def built(size: int) -> tuple[TileBuilder, dict[str, bytes]]:
    """The log of leaves b"leaf N" at `size`, and every tile of it."""
    builder, tiles = TileBuilder(), dict[str, bytes]()
    for i in range(size):
        tiles.update(builder.append(b"leaf %d" % i))
    tiles.update(builder.finish())
    return builder, tiles


@pytest.mark.parametrize(
    ("first", "size"),
    [(0, 0), (0, 1), (0, 300), (1, 255), (255, 256), (256, 257), (256, 512), (300, 600), (511, 513), (600, 65541)],
)
def test_the_new_tiles_are_those_a_resumed_reader_reads_in_its_order(first: int, size: int) -> None:
    _, tiles = built(size)
    resume, _ = built(first)
    read: list[str] = []

    def reading(rel: str) -> bytes | None:
        read.append(rel)
        return tiles.get(rel)

    for _ in read_tiled_log(reading, size, resume):
        pass
    assert new_tiles(first, size) == read


@pytest.mark.parametrize("size", [0, 1, 255, 256, 257, 600, 65536, 65537 + 300])
def test_the_stored_tree_is_rebuilt_from_its_partial_tiles_or_from_every_tile(size: int, tmp_path: Path) -> None:
    builder, tiles = built(size)
    copy = LogCopy(tmp_path, ORIGIN)
    for rel, data in tiles.items():
        copy.write(rel, data)
    held = MirrorCheckpoint(b"", size, builder.root())
    assert stored_tree(copy, held).state() == builder.state()
    partial = sorted(rel for rel in tiles if ".p/" in rel)
    if partial:  # a partial tile lost: the tree is built again from every entry bundle
        (copy.folder / partial[0]).unlink()
        assert stored_tree(copy, held).state() == builder.state()
        (copy.folder / "tile/entries/000").unlink(missing_ok=True)
        (copy.folder / partial[-1]).unlink(missing_ok=True)  # the partial bundle, when there is one
        with pytest.raises(MirrorError, match="the copy no longer holds the tree its checkpoint signs"):
            stored_tree(copy, held)


def test_a_stored_tree_whose_tiles_give_another_root_is_an_error(tmp_path: Path) -> None:
    _, tiles = built(300)
    copy = LogCopy(tmp_path, ORIGIN)
    for rel, data in tiles.items():
        copy.write(rel, data)
    with pytest.raises(MirrorError, match=r"the stored entries' root .* is not the checkpoint's"):
        stored_tree(copy, MirrorCheckpoint(b"", 300, bytes(32)))


def test_the_log_s_signatures_are_kept_and_others_dropped() -> None:
    """A checkpoint of a key hand-over, signed by the old key and the new, and cosigned by a
    witness: the pinned keys' lines are kept, in order; the rest is not the mirror's to vouch for."""
    old, new = Signer(ORIGIN, bytes(32)), Signer(ORIGIN, bytes(range(32)))
    witness = generate_cosigner("witness.example.org", ED25519)
    text = checkpoint_text(ORIGIN, 5, bytes(range(32)))
    note = old.sign_note(text) + new.sign_note(text).split(b"\n\n")[1] + witness.cosign(text, 9).encode()
    both = open_log_checkpoint(note, [parse_vkey(new.vkey), parse_vkey(old.vkey)])
    assert (both.origin, both.size, both.text) == (ORIGIN, 5, text)
    assert both.signatures.encode() == note.split(b"\n\n")[1].rsplit(b"\n", 2)[0] + b"\n"
    one = open_log_checkpoint(note, [parse_vkey(new.vkey)])
    assert one.signatures.encode() == new.sign_note(text).split(b"\n\n")[1]
    with pytest.raises(Refused, match="does not verify with the pinned log key"):
        open_log_checkpoint(note.replace(b"\n5\n", b"\n6\n"), [parse_vkey(new.vkey)])


@pytest.mark.parametrize("kind", [ED25519, ML_DSA_44])
def test_the_mirror_cosigns_at_the_clock_s_time(kind: str, tmp_path: Path) -> None:
    log = PublishedLog(tmp_path / "site", origin=ORIGIN)
    log.publish(3)
    mirror = generate_cosigner("mirror.example.org", kind)
    result = pull(str(log.site), tmp_path / "mirror", mirror, [parse_vkey(log.vkey)], clock=lambda: 1_800_000_123)
    assert result.cosigned and result.old_size is None and result.size == 3
    note = (copy_folder(tmp_path / "mirror", ORIGIN) / "checkpoint").read_bytes()
    assert verify_cosignatures(note, [mirror.key]) == {"mirror.example.org": 1_800_000_123}
    assert (
        open_note(note, [parse_vkey(log.vkey)]).text
        == (log.site / "ledger/checkpoint").read_text().split("\n\n")[0] + "\n"
    )
