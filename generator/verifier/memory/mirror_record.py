"""The record `verify.py mirror` keeps of the files it wrote into a mirror's folder: each file's
path, SHA-256 and stat identity (size, mtime_ns, ctime_ns, inode), beside the verifier's state
file (`mirrors/<key>.txt`, the key the SHA-256 of the folder's real path).

The mirror hashed every file it wrote, as it arrived, against the signed list that named it. A
later run stats a file instead of reading it again when its identity is the one recorded, and
hands the verifier those hashes (folder.Site's `known`), so that following a release reads only
what changed. Why that is sound: the record lies in the verifier's own state folder, and the
mirror's folder is the user's alone (both are refused otherwise: anyone else who could write
them could say what a file holds); a file changed in place gets a new ctime, which no process
can set back, and a file replaced gets a new inode. What the record cannot see is the user's
own process rewriting a file and setting the system clock back: `--full` rehashes everything.

The file (version 2) is a line `transparency-verify mirror record v2`, a line with the site's
URL as given, a line `<n> <sha256>`, then the n paths, each ending with a newline and sorted by
path bytes, and last n values of 64 bytes, one a path in the same order (folder.known_value: the
SHA-256, then size, mtime_ns, ctime_ns and inode as little-endian 64-bit integers); `<sha256>`
hashes everything after its line. It is read and written in C, without a Python step a file: at
300,000 files the text of version 1 (`<sha256> <size> <mtime_ns> <ctime_ns> <inode> <path>` a
line) took two seconds to read and one to write, each run. A record of version 1 is still read,
and written again as version 2. The paths are checked where one is used as a path (a file the
mirror removes, mirror_folder.swap_in), not all of them at each reading: the record is the
user's own file, and its hash says it is whole.
"""

import hashlib
import itertools
import os
import re
from pathlib import Path

from generator.verifier.core.folder import known_value
from generator.verifier.core.formats import all_safe_paths, is_safe_path
from generator.verifier.memory.checkpoint_memory import read_hashed, write_hashed
from generator.verifier.memory.folder_memory import FolderRecord, folders_path, load_folders
from generator.verifier.memory.release_memory import private_to_user

RECORD_HEADER = "transparency-verify mirror record v2"
RECORD_HEADER_V1 = "transparency-verify mirror record v1"
_VALUE_BYTES = 64
_HEX64 = re.compile(r"[0-9a-f]{64}")
# A line is under 250 bytes; ten million files is far beyond any site this format makes.
RECORD_MAX_BYTES = 1 << 32


# A file the mirror wrote: its SHA-256 and its stat identity when it was last hashed, as one
# 64-byte value (folder.known_value), the form folder.Site's `known` takes: the record of 300,000
# files is handed to the verification as it is, not copied, and held small while it runs.
Written = bytes


def record_path(state_folder: Path, site_folder: Path) -> Path:
    """Where the record of the mirror in `site_folder` lies, in the verifier's state folder."""
    key = hashlib.sha256(os.path.realpath(site_folder).encode("utf-8", "surrogateescape")).hexdigest()
    return state_folder / "mirrors" / f"{key[:32]}.txt"


def load_record(path: Path, site_folder: Path) -> tuple[dict[str, Written], str | None]:
    """The files the record says the mirror wrote, and why it was not used (None when it was):
    an absent record is an empty one; one another user could have written, or a damaged one, is
    not used at all (the mirror then hashes what it finds, and removes nothing it did not write)."""
    if not path.exists():
        return {}, None
    for p in (site_folder, path.parent, path):
        if not private_to_user(p):
            return {}, f"{p} is not this user's alone (another could have written it): the mirror's record is not used"
    try:
        with path.open("rb") as f:
            data = f.read(RECORD_MAX_BYTES + 1)
        if len(data) > RECORD_MAX_BYTES:
            raise ValueError(f"larger than {RECORD_MAX_BYTES} bytes")
        if data.startswith(RECORD_HEADER_V1.encode() + b"\n"):
            return _parse(data.decode("utf-8")), None
        return _parse_v2(data), None
    except (OSError, ValueError) as e:
        return {}, f"{path}: the mirror's record is not used ({getattr(e, 'strerror', None) or e})"


def load_mirror_memory(
    record: Path | None, site_folder: Path
) -> tuple[dict[str, Written], FolderRecord | None, list[str]]:
    """The mirror's record `record` (None: none is kept) of the files it wrote into
    `site_folder`, what the last walk of that folder found (folder_memory.py), and why either
    is not used."""
    if record is None:
        return {}, None, []
    files, why = load_record(record, site_folder)
    folders, why_folders = load_folders(folders_path(record), site_folder)
    return files, folders, [w for w in (why, why_folders) if w]


def _parse_v2(data: bytes) -> dict[str, Written]:
    _url, n, body = read_hashed(data, RECORD_HEADER)
    cut = len(body) - _VALUE_BYTES * n
    names = body[:cut].decode("utf-8").split("\n") if cut > 0 else [""]
    # Each path ends with a newline: n of them leave n + 1 pieces, the last empty.
    if cut < 0 or len(names) != n + 1 or names.pop() != "":
        raise ValueError(f"does not hold the {n} paths and values its third line names")
    values = body[cut:]
    files = dict(zip(names, (values[i : i + _VALUE_BYTES] for i in range(0, len(values), _VALUE_BYTES)), strict=True))
    if len(files) != n:
        raise ValueError("names a path twice")
    return files


def _parse(text: str) -> dict[str, Written]:
    """A record of version 1."""
    header, _, rest = text.partition("\n")
    _url, second, body = rest.partition("\n")
    if header != RECORD_HEADER_V1 or not second or not text.endswith("\n"):
        raise ValueError(f"not a record beginning with {RECORD_HEADER_V1!r}")
    # The body split into lines (300,000 strings) only when it is not plain.
    plain = _parse_plain(body)
    return plain if plain is not None else _parse_by_line(body)


def _parse_by_line(body: str) -> dict[str, Written]:
    """The record's lines one by one (after its two first), naming the first one malformed."""
    files: dict[str, Written] = {}
    for n, line in enumerate(body.split("\n")[:-1], start=3):
        fields = line.split(" ", 5)
        if len(fields) != 6 or not _HEX64.fullmatch(fields[0]) or not is_safe_path(fields[5]) or fields[5] in files:
            raise ValueError(f"line {n} is malformed")
        value = known_value(fields[0], (int(fields[1]), int(fields[2]), int(fields[3]), int(fields[4])))
        if value is None:  # times or an inode past 64 bits: never recorded so
            raise ValueError(f"line {n} is malformed")
        files[fields[5]] = value
    return files


_ROW = re.compile(r"([0-9a-f]{64}) (-?[0-9]{1,20}) (-?[0-9]{1,20}) (-?[0-9]{1,20}) (-?[0-9]{1,20}) ([^\n]+)\n")


def _parse_plain(body: str) -> dict[str, Written] | None:
    """The record's lines read by one search in C when every one is plain (what save_record
    writes); None otherwise, and the line-by-line reading names the line that is not."""
    rows: list[tuple[str, str, str, str, str, str]] = _ROW.findall(body)
    # The rows cover the text exactly: their fields and six separators each.
    if sum(map(len, itertools.chain.from_iterable(rows))) + 6 * len(rows) != len(body):
        return None
    if not all_safe_paths([row[5] for row in rows]):
        return None
    files: dict[str, Written] = {}
    for sha, size, mtime, ctime, inode, path in rows:
        value = known_value(sha, (int(size), int(mtime), int(ctime), int(inode)))
        if value is None:
            return None
        files[path] = value
    return files if len(files) == len(rows) else None


def save_record(path: Path, url: str, files: dict[str, Written]) -> None:
    """Write the record whole (version 2), replacing the last one atomically, in a folder only
    the user may read."""
    # Sorted as strings: a path is valid UTF-8, whose byte order is its code points' order.
    names = sorted(files)
    body = b"".join((("".join(rel + "\n" for rel in names)).encode("utf-8"), b"".join(map(files.__getitem__, names))))
    write_hashed(path, RECORD_HEADER, url.replace("\n", " "), len(names), body)
