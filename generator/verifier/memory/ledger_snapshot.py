"""A replayed ledger saved and loaded whole (FORMAT.md, "State snapshots"): what lets a command,
a build or a verifier start from the last event it saw instead of replaying a million.

A snapshot is a cache, never a source of truth: it names the tree it was made from (its size,
its root and the compact range that grows the root) and the exact bytes it read (their length
and SHA-256), and whoever loads it checks those bytes are still there before trusting a field.
The file ends with the SHA-256 of everything before it, so a torn or edited file is refused
and the ledger replayed. The big arrays are stored as raw machine words (a million commits in
about 70 MB, read back without a Python object each); the rest is JSON.
"""

import hashlib
import io
import json
import sys
from array import array
from typing import Any, BinaryIO

from generator.verifier.core.errors import FormatError
from generator.verifier.core.idindex import IdIndex
from generator.verifier.core.public_keys import parse_vkey
from generator.verifier.rules.draws import Draw, RetirementDraw
from generator.verifier.rules.events import CertificateEvent, Commit, Gate, MethodologyEvent, Reveal, RunEvent
from generator.verifier.rules.labelsets import LabelSetEvent
from generator.verifier.rules.ledger import Ledger
from generator.verifier.rules.withdrawals import Revocation, Withdrawal
from generator.verifier.tlog.cosignature import parse_cosigner_vkey
from generator.verifier.tlog.keyring import KeySpan
from generator.verifier.tlog.merkle import MerkleStream

SNAPSHOT_MAGIC = b"transparency ledger snapshot v3\n"
# The arrays of a Ledger and its IdIndex, in file order, with their typecodes ("B": raw bytes):
# also the layout of the generator's commit arrays (state/ledger_cache.py).
SNAPSHOT_SECTIONS = (
    ("ids_blob", "B"),
    ("ids_ends", "Q"),
    ("ids_table", "i"),
    ("commit_index", "q"),
    ("commit_gate", "H"),
    ("commitments", "B"),
    ("commit_time", "I"),
)
_ = Commit  # the rows these arrays hold, one per committed item


def frontier_of(stream: MerkleStream) -> dict[str, Any]:
    """The compact range of a tree: its size and one hash per perfect subtree, largest first."""
    return {"size": stream.size, "hashes": [h.hex() for h in stream._stack]}


def stream_from(frontier: dict[str, Any]) -> MerkleStream:
    stream = MerkleStream()
    stream.size = frontier["size"]
    stream._stack = [bytes.fromhex(h) for h in frontier["hashes"]]
    if len(stream._stack) != bin(stream.size).count("1"):
        raise FormatError("the compact range does not fit its size")
    return stream


def snapshot_chunks(ledger: Ledger, extra: dict[str, Any], spans: int | None = None) -> list[bytes | memoryview]:
    """`ledger` (a replay's state) and the caller's `extra` JSON (what binds it to its ledger
    bytes), as the pieces of one file, to be written one after the other: the big arrays are
    views of the ledger's own, not copies, so that saving a million commits costs no second copy
    of them (nor a third, joined). `spans`: how many key spans the replay itself made, when a
    check after it has since given the ring its first key from keys.json (rotation.py, gather): a
    snapshot holds what a replay makes, nothing else. Write them before the ledger changes."""
    _salt, blob, ends, table = ledger._commit_ids.parts()
    arrays: dict[str, Any] = {
        "ids_blob": blob,
        "ids_ends": ends,
        "ids_table": table,
        "commit_index": ledger._commit_index,
        "commit_gate": ledger._commit_gate,
        "commitments": ledger._commitments,
        "commit_time": ledger._commit_time,
    }
    raw = [memoryview(arrays[name]).cast("B") for name, _ in SNAPSHOT_SECTIONS]
    header = _header(ledger, extra, spans)
    header["sections"] = [[name, code, len(data)] for (name, code), data in zip(SNAPSHOT_SECTIONS, raw, strict=True)]
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    return checksummed([SNAPSHOT_MAGIC, len(text).to_bytes(8, "big"), text, *raw])


def checksummed(pieces: list[Any]) -> list[Any]:
    """`pieces` (bytes-like) followed by the SHA-256 of them all, taken without joining them: the
    trailer a snapshot, and a cache written in pieces, ends with."""
    h = hashlib.sha256()
    for piece in pieces:
        h.update(piece)
    return [*pieces, h.digest()]


def snapshot_bytes(ledger: Ledger, extra: dict[str, Any], spans: int | None = None) -> bytes:
    """The pieces of snapshot_chunks as one file's bytes."""
    return b"".join(snapshot_chunks(ledger, extra, spans))


def _header(ledger: Ledger, extra: dict[str, Any], spans: int | None) -> dict[str, Any]:
    ring = ledger.keys
    return {
        "byteorder": sys.byteorder,
        "ids_salt": ledger._commit_ids.parts()[0].hex(),
        "size": ledger.size,
        "last_at": ledger.last_at,
        "gates": [[g.id, g.name, g.public, g.index, g.at] for g in ledger.gates.values()],
        "gate_ids": ledger._gate_ids,
        "methodologies": [[m.version, m.sha256, m.index, m.at] for m in ledger.methodologies.values()],
        "reveals": [[r.id, r.reason, r.note, r.index, r.at] for r in ledger.reveals.values()],
        "runs": [[r.id, r.sha256, r.subject, r.gate, r.index, r.at] for r in ledger.runs.values()],
        "certificates": [[c.serial, c.run, c.sha256, c.index, c.at] for c in ledger.certificates.values()],
        "revocations": [[r.serial, r.reason, r.index, r.at] for r in ledger.revocations.values()],
        "label_sets": [[e.id, e.run, e.sha256, e.index, e.at] for e in ledger.label_sets.values()],
        "withdrawals": [[w.run, w.reason, w.index, w.at] for w in ledger.withdrawals.values()],
        "draws": [[d.run, d.round, d.signature, list(d.items), d.index, d.at] for d in ledger.draws.values()],
        "retirement_draws": [
            [d.round, d.signature, list(d.items), d.index, d.at, d.previous_at] for d in ledger.retirement_draws
        ],
        "pending_reveals": ledger._pending_reveals,
        "previous_at": ledger._previous_at,
        "subject_names": list(ledger.subject_names.items()),
        "subject_folds": list(ledger._subject_folds.items()),
        "times": ledger._times,
        "key_spans": [
            [s.key.vkey, s.valid_from, s.first_size, s.valid_until, s.last_size, s.reason, s.compromised_at]
            for s in ring.spans[:spans]
        ],
        "ml_dsa_spans": [
            [s.key.vkey, s.valid_from, s.first_size, s.valid_until, s.last_size, s.reason, s.compromised_at]
            for s in ring.ml_dsa
        ],
        "key_time_starts": ring._time_starts,
        "key_time_index": ring._time_index,
        "extra": extra,
    }


def load_snapshot(data: bytes) -> tuple[Ledger, dict[str, Any]]:
    """The Ledger and `extra` saved by snapshot_bytes; FormatError for anything else (a torn
    file, an edited one, one from a machine of another byte order)."""
    return read_snapshot(io.BytesIO(data), len(data))


def read_snapshot(f: BinaryIO, size: int) -> tuple[Ledger, dict[str, Any]]:
    """load_snapshot from the `size` bytes of open file `f` (seekable), read a section at a time
    into the ledger's arrays: never the whole file in memory beside them. Nothing is parsed before
    the checksum at the file's end holds (a first pass hashes the file a megabyte at a time): a
    torn or edited file is refused as such, whatever it was torn into."""
    if size < len(SNAPSHOT_MAGIC) + 40 or f.read(len(SNAPSHOT_MAGIC)) != SNAPSHOT_MAGIC:
        raise FormatError("not a ledger snapshot of this version")
    body = size - 32
    h = hashlib.sha256(SNAPSHOT_MAGIC)
    left = body - len(SNAPSHOT_MAGIC)
    while left > 0:
        data = f.read(min(left, 1 << 20))
        if not data:
            break
        h.update(data)
        left -= len(data)
    if left or h.digest() != f.read(33):
        raise FormatError("the snapshot's checksum does not match its bytes (torn or edited)")
    f.seek(len(SNAPSHOT_MAGIC))
    reader = _BoundedReader(f, body - len(SNAPSHOT_MAGIC))
    try:
        parsed = _read_sections(reader)
        if reader.left:
            raise FormatError("the snapshot has bytes after its last section")
        return _load(*parsed)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError, RecursionError) as e:
        # Only a file written by hand gets here: its checksum held, its fields did not.
        raise FormatError(f"the snapshot's fields are malformed ({type(e).__name__}: {e})") from None


class _BoundedReader:
    """Reads at most `left` bytes of `f`: a section's length is the file's word, not a bound."""

    def __init__(self, f: BinaryIO, left: int) -> None:
        self.f, self.left = f, left

    def read(self, n: int) -> bytes:
        if n > self.left:
            raise FormatError("the snapshot is cut short")
        data = self.f.read(n)
        if len(data) != n:
            raise FormatError("the snapshot is cut short")
        self.left -= n
        return data


def _read_sections(reader: _BoundedReader) -> tuple[dict[str, Any], dict[str, Any]]:
    length = int.from_bytes(reader.read(8), "big")
    header = json.loads(reader.read(length))
    if header["byteorder"] != sys.byteorder:
        raise FormatError(f"the snapshot was made on a {header['byteorder']}-endian machine")
    if [s[:2] for s in header["sections"]] != [list(s) for s in SNAPSHOT_SECTIONS]:
        raise FormatError("the snapshot's sections are not this version's")
    sections: dict[str, Any] = {}
    for name, code, size in header["sections"]:
        if not isinstance(size, int) or size < 0:
            raise FormatError(f"the snapshot's section {name} has no length")
        chunk = reader.read(size)
        if code == "B":
            sections[name] = bytearray(chunk)
        else:
            a = array(code)
            if size % a.itemsize:
                raise FormatError(f"the snapshot's section {name} is not whole {code} words")
            a.frombytes(chunk)
            sections[name] = a
        del chunk
    return header, sections


def _load(header: dict[str, Any], sections: dict[str, Any]) -> tuple[Ledger, dict[str, Any]]:
    ends, table, blob = sections["ids_ends"], sections["ids_table"], sections["ids_blob"]
    commits = len(ends)
    if (
        len(table) < 2 * commits
        or len(table) & (len(table) - 1)
        or (commits and ends[-1] != len(blob))
        or any(len(sections[n]) != commits for n in ("commit_index", "commit_gate", "commit_time"))
        or len(sections["commitments"]) != 32 * commits
    ):
        raise FormatError("the snapshot's commit arrays disagree in length")
    ledger = Ledger()
    ledger.size, ledger.last_at = header["size"], header["last_at"]
    ledger._commit_ids = IdIndex.from_parts(bytes.fromhex(header["ids_salt"]), blob, ends, table)
    ledger._commit_index = sections["commit_index"]
    ledger._commit_gate = sections["commit_gate"]
    ledger._commitments = sections["commitments"]
    ledger._commit_time = sections["commit_time"]
    ledger._times = header["times"]
    ledger._gate_ids = header["gate_ids"]
    ledger._gate_ordinals = {g: n for n, g in enumerate(ledger._gate_ids)}
    ledger.gates = {g[0]: Gate(*g) for g in header["gates"]}
    ledger.methodologies = {m[0]: MethodologyEvent(*m) for m in header["methodologies"]}
    ledger.reveals = {r[0]: Reveal(*r) for r in header["reveals"]}
    for row in header["runs"]:
        run = RunEvent(*row)
        ledger.runs[run.id] = run
        ledger.runs_by_subject.setdefault((run.subject["name"], run.gate), []).append(run)
    for row in header["certificates"]:
        cert = CertificateEvent(*row)
        ledger.certificates[cert.serial] = cert
        ledger.certificate_of_run[cert.run] = cert.serial
    ledger.revocations = {r[0]: Revocation(*r) for r in header["revocations"]}
    ledger.label_sets = {e[0]: LabelSetEvent(*e) for e in header["label_sets"]}
    ledger.withdrawals = {w[0]: Withdrawal(*w) for w in header["withdrawals"]}
    ledger.draws = {d[0]: Draw(d[0], d[1], d[2], tuple(d[3]), d[4], d[5]) for d in header["draws"]}
    ledger.retirement_draws = [RetirementDraw(d[0], d[1], tuple(d[2]), *d[3:]) for d in header["retirement_draws"]]
    ledger.drawn_retirement = {i: n for n, d in enumerate(ledger.retirement_draws) for i in d.items}
    ledger._pending_reveals, ledger._previous_at = list(header["pending_reveals"]), header["previous_at"]
    ledger.subject_names = dict(header["subject_names"])
    ledger._subject_folds = dict(header["subject_folds"])
    ring = ledger.keys
    ring.spans = [KeySpan(parse_vkey(s[0]), *s[1:]) for s in header["key_spans"]]
    ring.ml_dsa = [KeySpan(parse_cosigner_vkey(s[0]), *s[1:]) for s in header["ml_dsa_spans"]]
    ring._time_starts, ring._time_index = header["key_time_starts"], header["key_time_index"]
    if max(ledger._commit_gate, default=0) >= max(len(ledger._gate_ids), 1) or max(
        ledger._commit_time, default=0
    ) >= max(len(ledger._times), 1):
        raise FormatError("the snapshot's commits point past its gates or times")
    return ledger, header["extra"]
