"""The operator's item sources (PRIVATE/items/*.yaml|json): scanned, validated, never kept whole.

Every problem of every file is reported at once; memory holds ids and where they were seen, not
items, so a million of them can be committed.
"""

from __future__ import annotations

import hashlib
import os
import re
from array import array
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core.generator_errors import InputError, problem
from generator.core.strict_input import load_data_file, parse_json, parse_yaml, read_bytes
from generator.program.datadir import Paths
from generator.verifier import (
    GATE_RE,
    ID_RE,
    FormatError,
    IdIndex,
    Ledger,
    Problem,
    check_item,
    is_gate_id,
    is_id,
    loads_strict,
    show,
)

ITEM_SOURCE_KEYS = ("id", "gate", "prompt", "answer")


@dataclass(frozen=True)
class SourceRead:
    """A JSON source file as a scan read it whole: its size, identity and times when it was
    opened, and the SHA-256 of the very bytes parsed (what the commit's index vouches for)."""

    size: int
    ino: int
    mtime_ns: int
    ctime_ns: int
    sha256: str


@dataclass(frozen=True)
class ItemSource:
    id: str
    gate: str
    item: dict[str, Any]
    file: str
    where: str


def source_files(paths: Paths) -> list[Path]:
    """The item source files a scan reads, in its order."""
    if not paths.items_dir.is_dir():
        raise InputError(
            [
                problem(
                    paths.show(paths.items_dir),
                    "no item sources directory (it holds *.yaml or *.json files with an 'items' list)",
                )
            ]
        )
    return sorted(
        p for p in paths.items_dir.iterdir() if p.suffix in (".yaml", ".yml", ".json") and not p.name.startswith(".")
    )


def _source_rows(
    paths: Paths, path: Path, problems: list[Problem], read_whole: dict[Path, SourceRead] | None = None
) -> list[Any] | None:
    file = paths.show(path)
    try:
        if read_whole is not None and path.suffix == ".json":
            try:
                st: os.stat_result | None = os.stat(path)
            except OSError:
                st = None  # read_bytes names the problem
            data = read_bytes(path, file)
            raw = parse_json(data, file)
            if st is not None and len(data) == st.st_size:  # else it changed while read: left for the next scan
                read_whole[path] = SourceRead(
                    st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, hashlib.sha256(data).hexdigest()
                )
        else:
            raw = load_data_file(path, file)
    except InputError as e:
        problems += e.problems
        return _rows_before_error(path, e)
    rows = raw.get("items") if isinstance(raw, dict) else None
    if not isinstance(rows, list):
        problems.append(problem(file, "must be a mapping with a list 'items'", found=type(raw).__name__))
        return None
    unknown_top = sorted(set(raw) - {"items"})
    if unknown_top:
        problems.append(problem(file, f"unknown top-level key(s) {', '.join(unknown_top)}"))
    return rows


def scan_item_sources(
    paths: Paths,
    ledger: Ledger,
    wanted: Container[str] | None = None,
    mentioning: set[str] | None = None,
    skip: Container[Path] = (),
    elsewhere: Callable[[str], str | None] | None = None,
    read_whole: dict[Path, SourceRead] | None = None,
) -> Iterator[ItemSource]:
    """Validate every item source and yield the valid ones, file by file, in name order.

    Raises InputError with every problem of every file once the scan ends, so a caller that
    writes must consume the whole scan first. Memory stays small: per item only its id and
    where it was seen. With `wanted` (a second pass over sources already scanned whole, or the
    items a retire reveals), only those ids' rows are checked, and no duplicate index is kept.
    With `mentioning`, files whose text names none of those ids are skipped unparsed: retiring
    items of a million must not parse them all.

    The files in `skip` are not read (a commit's: unchanged since a commit that landed read them
    whole); `elsewhere` names where an id is among them, for a duplicate. Each JSON file read
    whole is entered in `read_whole`.
    """
    problems: list[Problem] = []
    files = source_files(paths)
    # Where each id was first seen (file number and row, packed), in flat arrays: a million ids.
    seen = _Seen(elsewhere)

    def place(packed: int) -> str:
        return f"{paths.show(files[packed >> 32])} items[{packed & 0xFFFFFFFF}]"

    for file_no, path in enumerate(files):
        if path in skip:
            continue
        if mentioning is not None:
            try:
                if not _mentions(path.read_text(encoding="utf-8", errors="replace"), mentioning):
                    continue
            except OSError:
                pass  # _source_rows reports it
        rows = _source_rows(paths, path, problems, read_whole)
        if rows is None:
            continue
        file = paths.show(path)
        for i, row in enumerate(rows):
            if wanted is not None:
                if isinstance(row, dict) and isinstance(row.get("id"), str) and row["id"] in wanted:
                    found = _check_source(row, file, f"items[{i}]", ledger, _Seen(), place)
                    problems += found
                    if not found:
                        yield ItemSource(
                            row["id"],
                            row["gate"],
                            {"prompt": row["prompt"], "answer": row["answer"]},
                            file,
                            f"items[{i}]",
                        )
                continue
            where = f"items[{i}]"
            found = _check_source(row, file, where, ledger, seen, place)
            problems += found
            if not found:
                seen.add(row["id"], (file_no << 32) | i)
                yield ItemSource(
                    row["id"], row["gate"], {"prompt": row["prompt"], "answer": row["answer"]}, file, where
                )
            elif isinstance(row, dict) and is_id(row.get("id")) and row["id"] not in seen:
                seen.add(row["id"], (file_no << 32) | i)
    if problems:
        raise InputError(problems, "the item sources have problems; nothing was written")


def indexed_source(paths: Paths, ledger: Ledger, item_id: str, path: Path, n: int, raw: bytes) -> ItemSource | None:
    """The item source of `item_id` from its row alone (`raw`, row `n` of `path`, where an index
    says it is), checked as a scan checks it; None when the row is not that item's, or has a
    problem (a scan then finds and reports it)."""
    try:
        row = loads_strict(raw)
    except FormatError:
        return None
    if not isinstance(row, dict) or row.get("id") != item_id:
        return None
    file, where = paths.show(path), f"items[{n}]"
    if _check_source(row, file, where, ledger, _Seen(), lambda packed: ""):
        return None
    return ItemSource(item_id, row["gate"], {"prompt": row["prompt"], "answer": row["answer"]}, file, where)


_LINE_RE = re.compile(r"^line (\d+),")
_ENTRY_RE = re.compile(r"^( *)- ", re.M)


def _rows_before_error(path: Path, error: InputError) -> list[Any] | None:
    """The items written before a YAML syntax error, so that their problems are reported in
    the same run as the error: the text up to the list entry the error falls in, parsed alone.
    Nothing from a file with an error is ever committed; this only finds more problems."""
    first = error.problems[0]
    m = _LINE_RE.match(first.where)
    if path.suffix not in (".yaml", ".yml") or not first.message.startswith("malformed YAML") or m is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.split("\n")[: int(m.group(1)) - 1]
    entries = [n for n, line in enumerate(lines) if _ENTRY_RE.match(line)]
    if not entries:
        return None
    indent = len(_ENTRY_RE.match(lines[entries[0]]).group(1))  # type: ignore[union-attr]
    last = max(n for n in entries if lines[n].startswith(" " * indent + "- "))
    try:
        raw = parse_yaml("\n".join(lines[:last]), str(path))
    except InputError:
        return None
    rows = raw.get("items") if isinstance(raw, dict) else None
    return rows if isinstance(rows, list) else None


_ID_TOKEN_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def _mentions(text: str, ids: set[str]) -> bool:
    if len(ids) <= 16:
        return any(i in text for i in ids)
    return any(m.group() in ids for m in _ID_TOKEN_RE.finditer(text))


class _Seen:
    """Ids seen so far and where, on the verifier's compact IdIndex; `outside` names where an id
    is in the files not read."""

    def __init__(self, outside: Callable[[str], str | None] | None = None) -> None:
        self._ids = IdIndex()
        self._where = array("Q")
        self._outside = outside

    def __contains__(self, item_id: str) -> bool:
        return item_id in self._ids

    def add(self, item_id: str, packed: int) -> None:
        self._ids.add(item_id)
        self._where.append(packed)

    def where(self, item_id: str, place: Callable[[int], str]) -> str | None:
        """Where `item_id` was seen before, if it was."""
        o = self._ids.get(item_id)
        if o is not None:
            return place(self._where[o])
        return self._outside(item_id) if self._outside is not None else None


def _check_source(
    row: Any, file: str, where: str, ledger: Ledger, seen: _Seen, place: Callable[[int], str]
) -> list[Problem]:
    if not isinstance(row, dict):
        return [problem(file, "an item must be a mapping", where, found=type(row).__name__)]
    problems: list[Problem] = []
    item_id = row.get("id")
    label = f"{where} ({item_id})" if isinstance(item_id, str) else where
    if not is_id(item_id):
        problems.append(
            problem(
                file,
                "malformed item id (lowercase letters, digits, '_' and '-', at most 64, starting with a letter "
                "or digit)",
                f"{where}.id",
                expected=ID_RE.pattern,
                found=show(item_id),
            )
        )
    elif (before := seen.where(item_id, place)) is not None:
        problems.append(
            problem(
                file,
                f"duplicate item id {item_id}",
                f"{where}.id",
                expected="ids unique across all item files",
                found=f"also at {before}",
            )
        )
    gate = row.get("gate")
    if not is_gate_id(gate):
        problems.append(problem(file, "malformed gate id", f"{label}.gate", expected=GATE_RE.pattern, found=show(gate)))
    elif gate not in ledger.gates:
        problems.append(
            problem(
                file,
                "unknown gate (declare it first with 'transparency gate add')",
                f"{label}.gate",
                expected=", ".join(ledger.gates) or "a declared gate",
                found=gate,
            )
        )
    unknown = sorted(set(row) - set(ITEM_SOURCE_KEYS))
    if unknown:
        problems.append(
            problem(file, f"unknown key(s) {', '.join(unknown)}", label, expected=", ".join(ITEM_SOURCE_KEYS))
        )
    problems += [p.at(file, label) for p in check_item({"prompt": row.get("prompt"), "answer": row.get("answer")}, "")]
    return problems
