"""Where a release is written before it is published, and how it takes the output's place.

A release is staged in a folder beside the output and swapped in whole once it has passed its
own verification: a failed or killed build leaves the last good site untouched, and a reader
never sees half a release. The folder the swap puts aside, the release before, is kept under
`.<out>.spare-release` and becomes the next build's staging folder: most of its files are
already the published ones (the same files, hard-linked), so that a release after one event
replaces the few files that changed in the last two releases, instead of linking every file of
the site into a fresh folder and removing the old copy (at a million items, 320,000 links and
as many removals). The writer (generator.build.writer) never writes through a file it finds
there, keeps one only where it is the very file the output holds, and removes what the release
does not list; a build from scratch (`--full`) starts from an empty folder.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import shutil
import tempfile
from pathlib import Path

from generator.core import layout
from generator.core.cleanup import Cleanup

# Of layout.BESIDE_OUTPUT_KINDS, the one kept between builds; staging and old copies are leftovers.
_SPARE = "spare-release"
assert _SPARE.partition("-")[0] in layout.BESIDE_OUTPUT_KINDS


def spare_path(out: Path) -> Path:
    return out.parent / f".{out.name}.{_SPARE}"


def is_replaceable_site(out: Path) -> bool:
    """Only an empty directory or a site we built may be replaced wholesale."""
    if not out.exists():
        return True
    if not out.is_dir() or out.is_symlink():
        return False
    if not any(out.iterdir()):
        return True
    try:
        manifest = json.loads((out / layout.MANIFEST).read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("type") == "transparency-manifest"


def _leftovers(out: Path) -> list[Path]:
    return sorted(
        p
        for p in out.parent.glob(f".{out.name}.*-*")
        if p.name.startswith((f".{out.name}.staging-", f".{out.name}.old-"))
    )


def remove_leftovers(out: Path) -> list[Path]:
    """Remove what killed builds left beside `out`: staging folders (a full site each) and old
    copies of a swap. A folder whose build is still running holds a lock on it and is kept.
    If a kill fell between the two renames of a swap, `out` is missing and its old copy is put
    back first."""
    removed = []
    for p in _leftovers(out):
        if not p.is_dir() or p.is_symlink():
            continue
        try:
            fd = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:  # taken meanwhile (a build gave its folder back, or removed it)
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # another build is writing it
            if not _same_folder(fd, p):
                continue  # another folder took the name meanwhile: its build holds it
            if not out.exists() and p.name.startswith(f".{out.name}.old-") and is_replaceable_site(p):
                os.rename(p, out)
                continue
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
        finally:
            os.close(fd)
    return removed


class Staging:
    """The staging folder beside `out`, locked for as long as the build runs: the spare
    release, when there is one and `reuse` (then `reused`), else a fresh folder. Without
    `reuse` a spare is removed, by `cleanup`, in the background."""

    def __init__(self, out: Path, reuse: bool = True, cleanup: Cleanup | None = None) -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        self.out = out
        self.path = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-", dir=out.parent))
        self.reused = False
        self._fd = -1
        spare = spare_path(out)
        if os.path.isdir(spare) and not os.path.islink(spare):
            if reuse:
                self._fd = _take_spare(spare, self.path)
                # Whatever now holds the name is a spare (`_take_spare`): the writer makes any
                # folder's content the release.
                self.reused = self._fd >= 0 or not _is_empty(self.path)
            else:
                _put_aside(spare, out, cleanup or Cleanup())
        if self._fd < 0:
            self._fd = os.open(self.path, os.O_RDONLY)
            fcntl.flock(self._fd, fcntl.LOCK_EX)

    def leave_lock_to_parent(self) -> None:
        """In a process forked from the build: close this copy of the lock's descriptor, so that
        the lock lives and dies with the build's own process (a build killed outright frees its
        staging folder for the next build to remove at once, while its writing process is still
        being killed with it), and is not released here (a lock lives while any descriptor of it
        is open)."""
        self.close()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        self.close()

    def give_back(self) -> None:
        """A build that wrote nothing hands the spare it took back as it was: removing it would
        change the change time of every published file it shares (a link fewer each), which the
        record of what the last build hashed then no longer vouches for. A fresh folder is
        removed."""
        if self.reused and not os.path.lexists(spare_path(self.out)):
            try:
                os.rename(self.path, spare_path(self.out))
                self.close()
                return
            except OSError:
                pass
        self.discard()


def _is_empty(folder: Path) -> bool:
    try:
        with os.scandir(folder) as it:
            return next(it, None) is None
    except OSError:
        return True


def _take_spare(spare: Path, staging: Path) -> int:
    """The spare, renamed over the empty folder `staging` (one atomic step: a build running
    beside this one either takes it first or finds none), locked before it is moved (the lock
    follows the folder), so that another build's clean-up never takes it for a leftover. The
    lock's descriptor, or -1 when it cannot be taken."""
    try:
        fd = os.open(spare, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return -1
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(spare, staging)
    except OSError:
        os.close(fd)
        return -1
    if not _same_folder(fd, staging):
        # Another build kept its own spare under the name between the look and the rename: the
        # folder moved is that one, not the one locked. The caller locks what it now holds.
        os.close(fd)
        return -1
    return fd


def _same_folder(fd: int, path: Path) -> bool:
    """Whether the folder open as `fd` is the one at `path` now."""
    try:
        held, there = os.fstat(fd), os.lstat(path)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)


def _put_aside(folder: Path, out: Path, cleanup: Cleanup) -> None:
    """Move `folder` out of the way under a staging leftover's name (a kill leaves it for the
    next build to remove; never an old copy's, which a build puts back when `out` is missing)
    and remove it in the background."""
    aside = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-", dir=out.parent))
    try:
        os.rename(folder, aside)
    except OSError:
        os.rmdir(aside)
        return
    cleanup.remove(aside)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories in one atomic step (Linux renameat2); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return bool(renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0)


def swap_in(staging: Path, out: Path, cleanup: Cleanup) -> bool:
    """Replace `out` with `staging`. Readers see the old site or the new one, never neither: one
    atomic exchange where the system offers it, else two renames. The old copy is kept as the
    spare release, the next build's staging folder (or, where that name is taken, removed by
    `cleanup` in the background). Whether a folder is being removed that may share files with
    the new site (a spare that was there, or the old copy): removing it changes their change
    times."""
    os.chmod(staging, 0o755)  # mkdtemp creates 0700; a published site is world-readable
    if out.exists() and not out.is_symlink() and _exchange(staging, out):
        return _keep_as_spare(staging, out, cleanup)  # now holds the previous site
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.rmdir(old)
        os.rename(out, old)  # a kill here leaves no `out`: remove_leftovers puts `old` back
        try:
            os.rename(staging, out)
        except OSError:
            os.rename(old, out)
            raise
        return _keep_as_spare(old, out, cleanup)
    os.rename(staging, out)
    return False


def _keep_as_spare(folder: Path, out: Path, cleanup: Cleanup) -> bool:
    removing = False
    spare = spare_path(out)
    if os.path.isdir(spare) and not os.path.islink(spare):
        _put_aside(spare, out, cleanup)
        removing = True
    elif os.path.lexists(spare):
        os.unlink(spare)
    try:
        os.rename(folder, spare)
    except OSError:
        cleanup.remove(folder)
        removing = True
    return removing
