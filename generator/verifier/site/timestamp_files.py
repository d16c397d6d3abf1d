"""A site's timestamp tokens (FORMAT.md, "Draws and timestamps"): each RFC 3161 token over an
archived checkpoint, checked against the certificate of the authority the program lists, and the
times of the events it holds bounded by it.

Every time in the ledger is the operator's word; a token is an outside authority's word that a
checkpoint existed at its time. So no event inside that checkpoint may claim a later time: the
ledger's times never decrease, and the last event a token's checkpoint holds is the one checked.
"""

import re
from dataclasses import dataclass
from typing import Any

from generator.verifier.core.errors import FormatError
from generator.verifier.core.folder import Site
from generator.verifier.core.formats import as_dict, as_list, check_keys, is_id, is_int
from generator.verifier.crypto.timestamp_token import verify_timestamp_token
from generator.verifier.crypto.x509 import read_x509_certificate, x509_timestamping_problem
from generator.verifier.rules.beacon import time_text, unix_time
from generator.verifier.rules.ledger import Ledger
from generator.verifier.rules.methodology_rules import Methodology

AUTHORITIES_PATH = "ledger/timestamp-authorities.json"
TIMESTAMPS_FOLDER = "ledger/timestamps/"
TOKEN_RE = re.compile(r"ledger/timestamps/([1-9][0-9]{0,18})/([a-z0-9][a-z0-9_-]{0,63})\.tst")


@dataclass(frozen=True)
class OutsideBound:
    """An authority's word that the first `size` events existed by `time`."""

    size: int
    authority: str
    time: str


def timestamp_token_path(size: int, authority: str) -> str:
    return f"{TIMESTAMPS_FOLDER}{size}/{authority}.tst"


def checkpoint_body(note: bytes) -> bytes:
    """The signed body of a checkpoint (its lines up to the blank line): what a token stamps, so
    that cosignatures added to the archived file later do not change it."""
    end = note.find(b"\n\n")
    return note if end < 0 else note[: end + 1]


def authorities_problems(doc: Any) -> list[str]:
    """The shape of the authority list: `{"type":"timestamp-authorities","v":1,"authorities":[…]}`,
    each authority a distinct `name`, its `url`, and its `certificate` (PEM) allowed to stamp."""
    if not (isinstance(doc, dict) and doc.get("type") == "timestamp-authorities" and doc.get("v") == 1):
        return ['must be {"type":"timestamp-authorities","v":1,"authorities":[…]}']
    rows = doc.get("authorities")
    if not isinstance(rows, list):
        return ["authorities must be a list"]
    problems = [p.message for p in check_keys(doc, ("type", "v", "authorities"))]
    names = set()
    for n, row in enumerate(rows):
        where = f"authorities[{n}]"
        problems += [f"{where}: {p.message}" for p in check_keys(row, ("name", "url", "certificate"))]
        if not isinstance(row, dict):
            continue
        if not is_id(row.get("name")) or row["name"] in names:
            problems.append(f"{where}.name: must be a distinct id (lowercase letters, digits, - and _)")
        names.add(row.get("name"))
        if not (isinstance(row.get("url"), str) and row["url"].startswith(("https://", "http://"))):
            problems.append(f"{where}.url: must be an http(s) URL")
        try:
            cert = read_x509_certificate(str(row.get("certificate", "")).encode())
        except FormatError as e:
            problems.append(f"{where}.certificate: {e}")
            continue
        if why := x509_timestamping_problem(cert):
            problems.append(f"{where}.certificate: may not sign timestamp tokens: {why}")
    return problems


def check_timestamps(s: Site, ledger: Ledger, history: dict[str, Any] | None) -> list[OutsideBound]:
    """Every token under ledger/timestamps/ against its listed authority and archived checkpoint,
    and the events it holds against its time; the bounds that passed, oldest size first."""
    report = s.report
    tokens = sorted(f for f in s.files_found if f.startswith(TIMESTAMPS_FOLDER))
    if not tokens and AUTHORITIES_PATH not in s.files_found:
        return []
    authorities: dict[str, str] = {}
    loaded = s.document(AUTHORITIES_PATH, "the timestamp authorities")
    if loaded is not None:
        found = authorities_problems(loaded[1])
        for p in found:
            report.check(False, AUTHORITIES_PATH, p)
        if not found:
            authorities = {r["name"]: r["certificate"] for r in loaded[1]["authorities"]}
    # The history's own check reports a malformed row; a token is only matched against sound ones.
    rows = as_list(as_dict(history).get("checkpoints"))
    archived = {r["tree_size"]: r["checkpoint"] for r in rows if is_int(as_dict(r).get("tree_size"))}
    bounds = []
    for rel in tokens:
        bound = _check_token(s, ledger, rel, authorities, archived)
        if bound is not None:
            bounds.append(bound)
    for b in bounds:
        report.notes.append(
            f"checkpoint {b.size} timestamped by {b.authority} at {b.time}: events 0-{b.size - 1} existed by then"
        )
    return sorted(bounds, key=lambda b: (b.size, b.time, b.authority))


def _check_token(
    s: Site, ledger: Ledger, rel: str, authorities: dict[str, str], archived: dict[int, Any]
) -> OutsideBound | None:
    report = s.report
    m = TOKEN_RE.fullmatch(rel)
    if m is None:
        report.check(False, rel, "not a token's path", "ledger/timestamps/<size>/<authority>.tst", rel)
        return None
    size, name = int(m.group(1)), m.group(2)
    if name not in authorities:
        report.check(False, rel, f"a token of {name}, which the timestamp authorities do not list", AUTHORITIES_PATH)
        return None
    checkpoint = archived.get(size)
    if not isinstance(checkpoint, str) or size > ledger.size:
        report.check(False, rel, f"a token over size {size}, which the checkpoint history does not archive")
        return None
    note, token = s.read(checkpoint, f"checkpoint {size}"), s.read(rel, "a timestamp token")
    if note is None or token is None:
        return None
    try:
        stamped = verify_timestamp_token(token, authorities[name].encode(), checkpoint_body(note), f"checkpoint {size}")
    except (FormatError, ValueError, OverflowError) as e:
        # ValueError: a number too long to print, in a token nobody signed yet.
        report.check(False, rel, f"the timestamp token does not verify: {e}")
        return None
    last = ledger.keys.leaf_time(size - 1)
    first_late = ledger.keys.leaves_before(time_text(unix_time(stamped.gen_time) + 1), size)
    if not report.check(
        last <= stamped.gen_time,
        rel,
        f"an event is dated after the time {name} stamped a checkpoint that already holds it",
        f"entries[{first_late}] and every later event of checkpoint {size} dated {stamped.gen_time} or earlier",
        f"entries[{size - 1}] dated {last}",
    ):
        return None
    return OutsideBound(size, name, stamped.gen_time)


def check_draws_logged_in_time(
    s: Site,
    ledger: Ledger,
    bounds: list[OutsideBound],
    specs: dict[str, dict[str, Any]],
    methodologies: dict[str, Methodology],
) -> None:
    """What a draw rests on was logged before its round: no token over a checkpoint that does not
    yet hold it may be dated at or after the round's publication. For a drawn run that is its
    registration; for a scheduled retirement, every leaf before it (its pool). The log then still
    lacked them, so the operator wrote them once the round was public, whatever times they carry."""
    for run_id, spec in specs.items():
        draw, run = as_dict(spec.get("draw")), ledger.runs.get(run_id)
        m = methodologies.get(str(as_dict(spec.get("methodology")).get("version")))
        if draw and run is not None and m is not None and m.beacon is not None and is_int(draw.get("round")):
            _logged_before(s, bounds, run.index + 1, m.beacon.round_time(draw["round"]), f"run {run_id}'s registration")
    by_index = sorted(ledger.methodologies.values(), key=lambda e: e.index)
    for d in ledger.retirement_draws:
        before = [e for e in by_index if e.index < d.index]
        m = methodologies.get(before[-1].version) if before else None
        if m is not None and m.beacon is not None:
            _logged_before(
                s,
                bounds,
                d.index,
                m.beacon.round_time(d.round),
                f"the leaves before the retirement drawn at entries[{d.index}]",
            )


def _logged_before(s: Site, bounds: list[OutsideBound], size: int, published: int, what: str) -> None:
    """No token dated at or after `published` over a checkpoint of fewer than `size` leaves."""
    at = time_text(published)
    late = [b for b in bounds if b.size < size and b.time >= at]
    if late:
        b = late[0]
        s.report.check(
            False,
            timestamp_token_path(b.size, b.authority),
            f"{what} was logged after its round was public: {b.authority} stamped checkpoint {b.size}, which "
            f"does not hold it, at {b.time}",
            f"logged before the round's publication, {at}",
            f"logged after {b.time}",
        )
