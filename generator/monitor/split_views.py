"""Split views caught: the witnesses' latest checkpoints of a log (witness_views.py) compared with
each other and with the log this monitor read, every inconsistency told with both its sides.

- Two views of one size with different roots are a split view: the log signed both trees.
- A view within the log the monitor read (no larger than the site's checkpoint) must have the
  log's root at its size. That root is read from the site's own hash tiles and tied to the
  checkpoint's root by a consistency proof made from the same tiles (tile_proofs), so a wrong
  tile is the site's inconsistency, never taken for a witness's. A view with another root saw a
  fork.
- Of two views of different sizes within the log, the smaller must be consistent with the larger:
  when the larger is the log's, the smaller must be the log's too, and the pair is named.
- A view larger than the site's checkpoint cannot be checked here: the site shows this monitor an
  older tree than a witness cosigned (a stale view served to the monitor), or the witness saw a
  fork this monitor cannot check yet. It is a warning naming both sizes; a split view it is part
  of is still an inconsistency.
- A cosignature dated in the future, or older than --max-age (cosignature_age_problems, the rule
  verify.py shares), is an inconsistency too.
"""

from __future__ import annotations

import base64
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from generator.monitor.monitor_errors import Inconsistent
from generator.monitor.witness_views import Unseen, View
from generator.verifier import (
    FormatError,
    ProofError,
    consistency_proof_from_tiles,
    cosignature_age_problems,
    root_from_tiles,
    verify_consistency,
)

INCONSISTENT = "inconsistent"  # exit status 1, the state not moved
WARNING = "warning"
NOTE = "note"
_LAST_PRINTABLE_SECOND = 253402300799  # 9999-12-31T23:59:59Z

# A hash tile of the site, by its path under the log's prefix (`tile/0/000`), or None if absent.
ReadTile = Callable[[str], bytes | None]


@dataclass(frozen=True)
class Finding:
    level: str  # INCONSISTENT, WARNING or NOTE
    witnesses: tuple[str, ...]  # the policy names of the witnesses it concerns
    text: str


@dataclass(frozen=True)
class Judged:
    """The views, the witnesses that gave none, the log's root at each view's size (None for a
    view beyond the site's checkpoint), and what was found, in the policy's order."""

    views: list[View]
    unseen: list[Unseen]
    log_roots: dict[str, bytes | None]
    findings: list[Finding]
    size: int
    root: bytes

    @property
    def inconsistencies(self) -> list[str]:
        return [f.text for f in self.findings if f.level == INCONSISTENT]


def b64(h: bytes) -> str:
    return base64.b64encode(h).decode()


def when(timestamp: int) -> str:
    if not 0 <= timestamp <= _LAST_PRINTABLE_SECOND:
        return f"timestamp {timestamp}"
    return f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(timestamp))} (timestamp {timestamp})"


def described(v: View) -> str:
    """One side of an inconsistency: who cosigned which tree, and when."""
    return f"witness {v.witness} ({v.url}) cosigned size {v.size}, root {b64(v.root)}, at {when(v.timestamp)}"


def _caching(read: ReadTile) -> ReadTile:
    """Each tile read once though several views and both proofs need it."""
    read_so_far: dict[str, bytes | None] = {}

    def get(rel: str) -> bytes | None:
        if rel not in read_so_far:
            read_so_far[rel] = read(rel)
        return read_so_far[rel]

    return get


def log_root_at(read: ReadTile, size: int, log_size: int, log_root: bytes) -> bytes:
    """The root of the log's first `size` leaves, from the site's tiles of the log at `log_size`,
    proven by a consistency proof from the same tiles to `log_root`. Raise Inconsistent when the
    tiles do not hold the tree the checkpoint signs."""
    if size == log_size:
        return log_root
    try:
        root = root_from_tiles(read, size, log_size)
        proof, _ = consistency_proof_from_tiles(read, size, log_size)
        verify_consistency(size, log_size, proof, root, log_root)
    except (FormatError, ProofError) as e:
        raise Inconsistent(
            [
                f"ledger/tile: the tiles do not prove the log's root at size {size} to its checkpoint (size "
                f"{log_size}, root {b64(log_root)}): {e}"
            ]
        ) from None
    return root


def judge(
    views: list[View],
    unseen: list[Unseen],
    log_size: int,
    log_root: bytes,
    read: ReadTile,
    now: int,
    max_age: int | None,
) -> Judged:
    """Every view against the log of `log_size` and `log_root` (whose hash tiles `read` serves),
    every pair against each other, every cosignature's time against `now` and `max_age`."""
    read = _caching(read)
    roots = {v.witness: log_root_at(read, v.size, log_size, log_root) if v.size <= log_size else None for v in views}
    found: list[Finding] = []
    for v in views:
        found += _against_log(v, roots[v.witness], log_size, log_root)
        for problem in cosignature_age_problems({v.witness: v.timestamp}, now, max_age):
            found.append(Finding(INCONSISTENT, (v.witness,), f"witness {v.witness} ({v.url}): {problem}"))
    for a, b in itertools.combinations(views, 2):
        found += _pair(a, b, roots)
    for u in unseen:
        level = NOTE if u.kind == "no-url" else WARNING
        found.append(Finding(level, (u.witness,), f"witness {u.witness}{f' ({u.url})' if u.url else ''}: {u.why}"))
    return Judged(views, unseen, roots, found, log_size, log_root)


def _against_log(v: View, at_size: bytes | None, log_size: int, log_root: bytes) -> list[Finding]:
    """What a view says of the log: nothing checkable beyond its checkpoint; a fork within it
    when its root is not the log's (`at_size`) at its size."""
    checkpoint = f"size {log_size}, root {b64(log_root)}"
    if at_size is None:
        text = (
            f"{described(v)}, a larger tree than the site's checkpoint ({checkpoint}): the site shows this monitor "
            f"an older tree than {v.witness} saw, or {v.witness} saw a fork this monitor cannot check yet (or the "
            "log grew while this monitor read it: run again)"
        )
        return [Finding(WARNING, (v.witness,), text)]
    if at_size == v.root:
        return []
    text = (
        f"fork: {described(v)}; but the log this monitor read has root {b64(at_size)} at size {v.size} "
        f"(its checkpoint: {checkpoint})"
    )
    return [Finding(INCONSISTENT, (v.witness,), text)]


def _pair(a: View, b: View, roots: dict[str, bytes | None]) -> list[Finding]:
    """What two views say of each other: a split view at one size; at two sizes within the log,
    a smaller one that is not the larger's (the log's) tree at its size."""
    if a.size == b.size:
        if a.root == b.root:
            return []
        text = f"split view: two trees of size {a.size} cosigned: {described(a)}; {described(b)}"
        return [Finding(INCONSISTENT, (a.witness, b.witness), text)]
    small, large = (a, b) if a.size < b.size else (b, a)
    small_log, large_log = roots[small.witness], roots[large.witness]
    if large_log != large.root or small_log is None or small_log == small.root:
        return []  # the larger is beyond the log or not the log's: nothing ties the two together
    text = (
        f"{small.witness} and {large.witness} saw inconsistent trees: {described(small)}; {described(large)}, a tree "
        f"whose root at size {small.size} is {b64(small_log)} (the log's, as the site's tiles prove)"
    )
    return [Finding(INCONSISTENT, (small.witness, large.witness), text)]


def summary(judged: Judged) -> str:
    """One line on what the views showed, when nothing was inconsistent."""
    if not judged.views:
        return "witnesses: no witness gave a view of this log: nothing compared"
    within = [v for v in judged.views if judged.log_roots[v.witness] is not None]
    sizes = ", ".join(f"{v.witness} at size {v.size}" for v in judged.views)
    return (
        f"witnesses: {sizes}: {len(within)} of {len(judged.views)} within the log and consistent with it "
        f"(size {judged.size}), no split view"
    )


def view_lines(judged: Judged) -> list[str]:
    """One JSON line per witness of the policy (ASCII only): its view, how it stands to the log,
    and what was found about it."""
    lines: list[str] = []
    for v in judged.views:
        at_size = judged.log_roots[v.witness]
        standing = "beyond" if at_size is None else "consistent" if at_size == v.root else "fork"
        row: dict[str, object] = {
            "name": v.witness,
            "url": v.url,
            "checkpoint": {"size": v.size, "root": b64(v.root), "cosigned": v.timestamp},
            "log": standing,
            "findings": _findings_of(judged, v.witness),
        }
        lines.append(_json_line(row))
    for u in judged.unseen:
        row = {
            "name": u.witness,
            "url": u.url,
            "checkpoint": None,
            "log": None,
            "unseen": u.kind,
            "findings": _findings_of(judged, u.witness),
        }
        lines.append(_json_line(row))
    return lines


def _findings_of(judged: Judged, witness: str) -> list[dict[str, str]]:
    return [{"level": f.level, "text": f.text} for f in judged.findings if witness in f.witnesses]


def _json_line(row: dict[str, object]) -> str:
    return json.dumps({"witness": row}, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
