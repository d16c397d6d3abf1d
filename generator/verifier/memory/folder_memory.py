"""What the walk of a mirror's folder found in each of its folders, kept beside the mirror's record
(`mirrors/<key>.folders`), so that the next walk reads again only the folders that changed. (A
build keeps the same record of each folder it stages a release into, for its own check.)

Finding every file of a site means reading every folder: at a million items that is 60,000
folders, four seconds of a mirror's update that otherwise costs about twenty. A folder's own
identity (size, mtime_ns, ctime_ns and inode, as for a file: folder.identity_of) changes
whenever an entry is added to it, removed from it or renamed in or out of it, and its change
time cannot be set back without setting the system's clock; so a folder whose identity is the
one recorded holds the entries it held then, and a walk takes them from here instead of reading
the folder (folder.Site.files). A file changed in place does not change its folder: that is what
the mirror's record, and the check of every file's SHA-256, are for.

Only a plain folder is recorded: one whose walk found nothing to report in it (no link, device,
Python code, empty or too deep folder, unreadable entry, nor the verifier's own environment),
whose entries all have safe names, and which last changed more than a clock tick before the
walk began (folder.FOLDER_TICK_NS: two changes within one tick can leave the same times), on a
filesystem with times finer than a millisecond (a network filesystem whose server's clock runs
behind this machine's by more than the tick is not told apart: keep a mirror on a local disk,
or use `--full`); never the site's own folder, which holds the
verifier (whose path the manifest names). On Windows, where a folder's times can be set back,
no folder is recorded. The record is trusted as the mirror's record is (see
mirror_record.py): it lies in the verifier's own state folder, and neither it, its folder nor
the mirror's folder may be written by anyone but the user; `--full` reads every folder.

The file is text: a line `transparency-verify mirror folders v1`, a line with the SHA-256 of the
verifier's code (release_memory.rules_version: what makes a folder plain is that code's to say,
so another version's record is not used), a line `<n> <sha256>` (the SHA-256 of everything
after that line), then one line a folder, sorted by path:
`<identity, 64 hex digits> <path>` then a NUL, the names of its files joined by `/`, a NUL, and
the names of its folders joined by `/` (the site's own folder has the path `.`).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from generator.verifier.core.folder import FolderSeen
from generator.verifier.memory.checkpoint_memory import read_hashed, write_hashed
from generator.verifier.memory.release_memory import private_to_user, rules_version

FOLDERS_HEADER = "transparency-verify mirror folders v1"
FOLDERS_MAX_BYTES = 1 << 31


@dataclass
class FolderRecord:
    """The folders of one mirror as its last walk found them, and where to keep what this walk finds."""

    path: Path | None  # None: nothing is kept (the record could not be trusted)
    remembered: Mapping[str, FolderSeen] = field(default_factory=dict)

    def save(self, seen: Mapping[str, FolderSeen]) -> str | None:
        """Keep `seen` for the next walk; why it could not be kept, or None."""
        if self.path is None:
            return None
        try:
            save_folders(self.path, seen)
        except OSError as e:
            return f"could not write {self.path}: {e.strerror or e}"
        return None


def folders_path(record: Path) -> Path:
    """The folders' file beside the mirror's record `mirrors/<key>.txt`."""
    return record.with_suffix(".folders")


def load_folders(path: Path, site_folder: Path) -> tuple[FolderRecord, str | None]:
    """The folders kept for the mirror in `site_folder`, and why they are not used (None when
    they are, or there are none yet); a record another user could have written is neither used
    nor written."""
    for p in (site_folder, path.parent, path):
        if p.exists() and not private_to_user(p):
            return FolderRecord(None), f"{p} is not this user's alone: every folder of the mirror is read"
    if not path.exists():
        return FolderRecord(path), None
    try:
        with path.open("rb") as f:
            data = f.read(FOLDERS_MAX_BYTES + 1)
        if len(data) > FOLDERS_MAX_BYTES:
            raise ValueError(f"larger than {FOLDERS_MAX_BYTES} bytes")
        return FolderRecord(path, _parse_folders(data)), None
    except (OSError, ValueError) as e:
        why = f"{path}: not used, every folder of the mirror is read ({getattr(e, 'strerror', None) or e})"
        return FolderRecord(path), why


def _parse_folders(data: bytes) -> dict[str, FolderSeen]:
    version, count, body = read_hashed(data, FOLDERS_HEADER)
    # What makes a folder plain is this code's to say: a record another version of the verifier
    # wrote might hold a folder that this one would report (a rule made stricter since).
    if version != rules_version().encode():
        raise ValueError("written by another version of the verifier")
    lines = body.decode("utf-8", "surrogateescape").split("\n")
    if lines.pop() != "" or len(lines) != count:
        raise ValueError(f"does not hold the {count} folders its third line names")
    folders: dict[str, FolderSeen] = {}
    for n, line in enumerate(lines, start=4):
        head, nul, rest = line.partition("\0")
        files, nul2, subs = rest.partition("\0")
        rel = head[65:]
        if not (nul and nul2 and len(head) > 65 and head[64] == " ") or rel in folders:
            raise ValueError(f"line {n} is malformed")
        folders["" if rel == "." else rel] = (bytes.fromhex(head[:64]), files, subs)
    return folders


def save_folders(path: Path, seen: Mapping[str, FolderSeen]) -> None:
    """Write the folders whole, replacing the last ones atomically, in a folder only the user may read."""
    rows = [f"{seen[rel][0].hex()} {rel or '.'}\0{seen[rel][1]}\0{seen[rel][2]}\n" for rel in sorted(seen)]
    write_hashed(path, FOLDERS_HEADER, rules_version(), len(rows), "".join(rows).encode("utf-8", "surrogateescape"))
