"""The commitment list's rows as the ledger implies them, whole (format v1 §4) or in the parts of a
format v3 site (docs/formats/v3.md, 4): what the build writes and what the verifier compares the
published bytes with.

A v3 list is an index, `ledger/commitments.json` (+ `.sig`), naming parts of 1,000 rows each,
`ledger/commitments/<k>.json` for k from 0, with their row counts and SHA-256. A part names no
tree size, so a part whose rows did not change keeps its bytes from one release to the next.
"""

import hashlib
import itertools
from collections.abc import Container, Iterator, Mapping
from json.encoder import encode_basestring

from generator.verifier.core.canonical import canonical_bytes, parse_canonical
from generator.verifier.core.errors import FormatError
from generator.verifier.core.folder import Site
from generator.verifier.core.text import show
from generator.verifier.rules.events import Commit
from generator.verifier.rules.ledger import Ledger

# Rows made and compared in batches of this many: the bytes of a million rows at once would be
# hundreds of megabytes.
ROW_BATCH = 10_000
# Rows of one part of a v3 commitment list: a pool page's worth (layout.PAGE_SIZE).
COMMITMENT_PART_ROWS = 1000
COMMITMENT_PARTS_DIR = "ledger/commitments"


def commitment_part_path(k: int) -> str:
    """Where part `k` (from 0) of a v3 commitment list is: its rows 1000k to 1000k + 999."""
    return f"{COMMITMENT_PARTS_DIR}/{k}.json"


def commitment_part_count(commits: int) -> int:
    return -(-commits // COMMITMENT_PART_ROWS)


def _row_text(c: Commit, revealed: bool) -> str:
    enc = encode_basestring
    return (
        f'{{"at":{enc(c.at)},"commitment":{enc(c.commitment)},"gate":{enc(c.gate)},"id":{enc(c.id)},'
        f'"index":{c.index},"status":"{"revealed" if revealed else "sealed"}"}}'
    )


def commitment_rows_bytes(ledger: Ledger, start: int = 0, stop: int | None = None) -> Iterator[bytes]:
    """The commitment list's rows (the `start`-th to the `stop`-th) as the ledger implies them,
    in canonical form, comma-joined, a batch at a time: what the build writes and what the check
    compares a document with.

    RFC 8785 escapes in a string what json's encoder escapes (the quote, the backslash and the
    controls, those with a short form in it) and nothing else, and an integer is its digits.
    Raises UnicodeEncodeError on a lone surrogate, which the ledger's rules keep out."""
    reveals = ledger.reveals
    commits = ledger.commits(start, stop)
    first = True
    while batch := [_row_text(c, c.id in reveals) for c in itertools.islice(commits, ROW_BATCH)]:
        yield (("" if first else ",") + ",".join(batch)).encode("utf-8")
        first = False


def commitment_part_bytes(ledger: Ledger, origin: str, k: int) -> bytes:
    """Part `k` of a v3 commitment list, JCS
    `{"commitments":[…],"origin":O,"part":k,"type":"commitment-list-part","v":1}`."""
    start = k * COMMITMENT_PART_ROWS
    rows = b"".join(commitment_rows_bytes(ledger, start, start + COMMITMENT_PART_ROWS))
    tail = canonical_bytes({"origin": origin, "part": k, "type": "commitment-list-part", "v": 1})
    return b'{"commitments":[' + rows + b"]," + tail[1:]


def commitment_index_bytes(ledger: Ledger, origin: str, parts: list[tuple[str, int, str]]) -> bytes:
    """The v3 list's index over `parts` (path, row count, SHA-256), JCS
    `{"count":C,"origin":O,"parts":[{"count":K,"path":P,"sha256":H}],"tree_size":N,"type":"commitment-list","v":2}`."""
    return canonical_bytes(
        {
            "count": ledger.commit_count,
            "origin": origin,
            "parts": [{"count": n, "path": p, "sha256": h} for p, n, h in parts],
            "tree_size": ledger.size,
            "type": "commitment-list",
            "v": 2,
        }
    )


def parts_touched_since(ledger: Ledger, since_size: int, since_commits: int) -> tuple[set[int], int]:
    """The parts of the commitment list an event after a tree of `since_size` leaves, holding
    `since_commits` commits, can have changed: a part's rows are its items' commitments, fixed
    once committed, and their status, changed only by a reveal. So: the parts holding an item
    revealed since, and every part from the one the next commit falls in. Returns those parts,
    and the first of the second kind. Reads only the reveals since (they are the last, in
    ledger order)."""
    touched: set[int] = set()
    for r in reversed(ledger.reveals.values()):
        if r.index < since_size:
            break
        if (p := ledger.commit_position(r.id)) is not None:
            touched.add(p // COMMITMENT_PART_ROWS)
    return touched, since_commits // COMMITMENT_PART_ROWS


def part_rows(ledger: Ledger, k: int) -> int:
    return min(COMMITMENT_PART_ROWS, ledger.commit_count - k * COMMITMENT_PART_ROWS)


class UnchangedParts:
    """The parts of the commitment list that no event after the release verified last can have
    changed, with the SHA-256 each had then: a part's rows are its items' commitments, fixed once
    committed, and their status, changed only by a reveal. So a part is unchanged unless it
    holds a row committed since (the last part then, and those after it) or an item revealed
    since; and then its file is the one checked then if it is listed with the same SHA-256 (and
    its bytes have it)."""

    def __init__(
        self,
        ledger: Ledger,
        since_size: int,
        since_commits: int,
        shas: list[str],
        listed: Mapping[str, str],
        matched: Container[str],
    ) -> None:
        self.shas, self.listed, self.matched = shas, listed, matched
        self.touched, self.first_touched = parts_touched_since(ledger, since_size, since_commits)
        self.used = 0  # parts taken as they were checked then, for the report

    def sha256(self, k: int, path: str) -> str | None:
        if k >= self.first_touched or k >= len(self.shas) or k in self.touched:
            return None
        sha = self.shas[k]
        if self.listed.get(path) != sha or path not in self.matched:
            return None
        self.used += 1
        return sha


def check_commitment_parts(
    s: Site, rel: str, origin: str, key: bytes, ledger: Ledger, unchanged: UnchangedParts | None = None
) -> list[str]:
    """A v3 commitment list: its signed index and every part, each byte for byte the one the
    ledger implies (canonical JSON has one form per value: equal bytes are equal rows). With
    `unchanged`, a part no event since the release verified last touched, whose file is listed
    with the SHA-256 it had then, is not read nor made again. Returns every part's SHA-256 as
    the ledger implies it, for the verifier's memory."""
    report = s.report
    index = s.read(rel, "commitment list")
    if index is not None:
        s.signed(rel, index, key, "commitment list")
    parts: list[tuple[str, int, str]] = []
    for k in range(commitment_part_count(ledger.commit_count)):
        path = commitment_part_path(k)
        known = unchanged.sha256(k, path) if unchanged is not None else None
        if known is not None:
            parts.append((path, part_rows(ledger, k), known))
            continue
        want = commitment_part_bytes(ledger, origin, k)
        parts.append((path, part_rows(ledger, k), hashlib.sha256(want).hexdigest()))
        data = s.read(path, f"part {k} of the commitment list")
        if data is None or data == want:
            continue
        report.check(
            False,
            path,
            f"part {k} of the commitment list is not the rows the ledger implies{_first_row_differing(data, want)}",
            f"{len(want)} bytes, SHA-256 {parts[-1][2]}",
            f"{len(data)} bytes, SHA-256 {hashlib.sha256(data).hexdigest()}",
        )
    report.checks += ledger.commit_count
    if index is not None:
        want_index = commitment_index_bytes(ledger, origin, parts)
        report.check(
            index == want_index,
            rel,
            "the commitment list's index is not the one the ledger implies (its count, parts or tree size)",
            show(want_index.decode("utf-8", "replace"), 300),
            show(index.decode("utf-8", "replace"), 300),
        )
    return [sha for _, _, sha in parts]


def _first_row_differing(data: bytes, want: bytes) -> str:
    """Which row of a part differs first, when the part parses: a reader is told where to look."""
    try:
        found, expected = parse_canonical(data), parse_canonical(want)
    except FormatError as e:
        return f" ({e})"
    if not isinstance(found, dict):
        return ""
    rows, want_rows = found.get("commitments"), expected["commitments"]
    if not isinstance(rows, list):
        return ""
    for i, (row, want_row) in enumerate(zip(rows, want_rows, strict=False)):
        if row != want_row:
            return f" (row {i}: {show(row, 200)}, expected {show(want_row, 200)})"
    if len(rows) != len(want_rows):
        return f" ({len(rows)} rows, expected {len(want_rows)})"
    return " (its other members)"
