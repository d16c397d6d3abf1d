"""generator/mirror/log_copy.py: the mirror's copy of a log on disk, each file written whole and
durably, never through a link, read back only as a regular file, its checkpoint refused unless this
mirror cosigned it for this log, and one run at a time."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from generator.core.cosigning_keys import generate_cosigner
from generator.mirror.log_copy import LogCopy, origin_hash
from generator.mirror.mirror_errors import MirrorError
from generator.verifier import ED25519, ML_DSA_44, checkpoint_text

ORIGIN = "copy-test.example.org/log"


def test_a_log_s_folder_is_named_by_the_sha_256_of_its_origin(tmp_path: Path) -> None:
    assert origin_hash(ORIGIN) == hashlib.sha256(ORIGIN.encode()).hexdigest()
    assert LogCopy(tmp_path, ORIGIN).folder == tmp_path / origin_hash(ORIGIN)


def test_a_file_is_written_whole_with_its_folders_and_no_temporary_file_left(tmp_path: Path) -> None:
    copy = LogCopy(tmp_path / "mirror", ORIGIN)
    copy.write("tile/entries/x001/234/056.p/7", b"bundle")
    path = copy.folder / "tile/entries/x001/234/056.p/7"
    assert path.read_bytes() == b"bundle"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in copy.folder.rglob(".*")] == []
    copy.write("tile/entries/x001/234/056.p/7", b"again")
    assert copy.read("tile/entries/x001/234/056.p/7") == b"again"


def test_a_link_in_the_copy_is_replaced_never_written_through_nor_read(tmp_path: Path) -> None:
    copy = LogCopy(tmp_path / "mirror", ORIGIN)
    copy.write("tile/0/000", b"tile")
    outside = tmp_path / "outside"
    outside.write_bytes(b"someone else's")
    link = copy.folder / "tile/0/001"
    os.symlink(outside, link)
    assert copy.read("tile/0/001") is None and not copy.holds("tile/0/001")
    copy.write("tile/0/001", b"mine")
    assert outside.read_bytes() == b"someone else's"
    assert not link.is_symlink() and link.read_bytes() == b"mine"
    assert copy.read("tile/0/nothing") is None and copy.read("tile") is None  # missing, a folder


def test_a_file_in_the_way_of_a_folder_is_an_error_naming_the_path(tmp_path: Path) -> None:
    copy = LogCopy(tmp_path / "mirror", ORIGIN)
    copy.write("tile/1", b"a file where a folder must be")
    with pytest.raises(MirrorError, match=r"tile/1/000.p/1: cannot write it"):
        copy.write("tile/1/000.p/1", b"h" * 32)


@pytest.mark.parametrize("kind", [ED25519, ML_DSA_44])
def test_the_checkpoint_is_this_mirror_s_of_this_log_or_an_error(kind: str, tmp_path: Path) -> None:
    mirror = generate_cosigner("mirror.example.org", kind)
    copy = LogCopy(tmp_path / "mirror", ORIGIN)
    assert copy.checkpoint(mirror.key) is None
    text = checkpoint_text(ORIGIN, 7, bytes(range(32)))
    note = (text + "\n" + mirror.cosign(text, 1_800_000_000)).encode()
    copy.write_checkpoint(note)
    held = copy.checkpoint(mirror.key)
    assert held is not None and (held.note, held.size, held.root) == (note, 7, bytes(range(32)))
    other = generate_cosigner("mirror.example.org", kind)
    with pytest.raises(MirrorError, match="not cosigned by this mirror's key"):
        copy.checkpoint(other.key)
    copy.write_checkpoint(note.replace(b"\n7\n", b"\n8\n"))
    with pytest.raises(MirrorError, match=r"not a checkpoint this mirror wrote: .* does not verify"):
        copy.checkpoint(mirror.key)
    elsewhere = checkpoint_text("other.example.org/log", 7, bytes(32))
    copy.write_checkpoint((elsewhere + "\n" + mirror.cosign(elsewhere, 1)).encode())
    with pytest.raises(MirrorError, match=r'a checkpoint of "other\.example\.org/log", not of "copy-test'):
        copy.checkpoint(mirror.key)
    copy.write_checkpoint(b"not a note")
    with pytest.raises(MirrorError, match="not a checkpoint this mirror wrote"):
        copy.checkpoint(mirror.key)


def test_one_run_at_a_time_per_log(tmp_path: Path) -> None:
    copy = LogCopy(tmp_path / "mirror", ORIGIN)
    with copy.locked():
        with (
            pytest.raises(MirrorError, match="another run is updating this copy"),
            LogCopy(tmp_path / "mirror", ORIGIN).locked(),
        ):
            pass
        with LogCopy(tmp_path / "mirror", "another.example.org/log").locked():
            pass  # another log's copy is another lock
    with copy.locked():
        pass
