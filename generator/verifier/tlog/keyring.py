"""The program's keys over the ledger's history (format v2): which key may sign a tree of which
size.

A key is valid for an interval of tree sizes. The first key (keys.json's first row) is valid
from size 0. A `key-rotation` leaf at index r introduces a new key, valid from size r + 1, and
ends the key it replaces at size r + 1: the checkpoint of size r + 1, the hand-over, is the one
tree both may sign, so a reader who trusted the old key learns the new one from a checkpoint
the old key signed. A `key-revocation` leaf records a compromise: the key is then valid only for
the trees whose every leaf is older than the compromise. A signature is accepted only from a key
valid for the tree (or, for a detached signature, the leaf) it covers: what an old key signed
before it was retired or compromised still verifies; anything it signs later does not.
"""

import bisect
from dataclasses import dataclass, field
from typing import Any

from generator.verifier.core.errors import FormatError, Problem
from generator.verifier.core.public_keys import VerifierKey, parse_vkey
from generator.verifier.core.text import show

KEY_ROTATION = "key-rotation"
KEY_REVOCATION = "key-revocation"


@dataclass
class KeySpan:
    key: VerifierKey
    valid_from: str | None  # the rotation's time; None for the first key (keys.json says)
    first_size: int
    valid_until: str | None = None
    last_size: int | None = None  # None: still valid for every later tree
    reason: str | None = None  # set when revoked
    compromised_at: str | None = None

    def covers(self, size: int) -> bool:
        return self.first_size <= size and (self.last_size is None or size <= self.last_size)

    @property
    def status(self) -> str:
        if self.reason is not None:
            return "revoked"
        return "active" if self.last_size is None else "retired"


@dataclass
class KeyRing:
    """Replayed from the ledger's key events. The first key is learnt from the first rotation's
    `replaces` (or, without rotations, from keys.json), so the ledger needs no key of its own."""

    spans: list[KeySpan] = field(default_factory=list)
    _time_starts: list[str] = field(default_factory=list)  # each distinct leaf time, in order
    _time_index: list[int] = field(default_factory=list)  # the first leaf index with that time

    def note_time(self, index: int, at: str) -> None:
        if not self._time_starts or at != self._time_starts[-1]:
            self._time_starts.append(at)
            self._time_index.append(index)

    def leaf_time(self, index: int) -> str:
        """The time of leaf `index` (one the ring has noted)."""
        return self._time_starts[bisect.bisect_right(self._time_index, index) - 1]

    def leaves_before(self, at: str, size: int) -> int:
        """How many of the first `size` leaves are older than `at`."""
        i = bisect.bisect_left(self._time_starts, at)
        return min(size, self._time_index[i]) if i < len(self._time_index) else size

    def span(self, vkey: str) -> KeySpan | None:
        return next((s for s in self.spans if s.key.vkey == vkey), None)

    @property
    def active(self) -> KeySpan | None:
        return self.spans[-1] if self.spans and self.spans[-1].reason is None else None

    def valid_at(self, size: int) -> list[VerifierKey]:
        return [s.key for s in self.spans if s.covers(size)]

    def newest_at(self, size: int) -> VerifierKey | None:
        """The key that must sign a checkpoint of `size`: the newest key valid for it."""
        valid = [s.key for s in self.spans if s.covers(size) and s.reason is None] or self.valid_at(size)
        return valid[-1] if valid else None

    def start(self, key: VerifierKey) -> None:
        if not self.spans:
            self.spans.append(KeySpan(key, None, 0))

    def apply_rotation(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        try:
            new = parse_vkey(leaf["vkey"])
            old = parse_vkey(leaf["replaces"])
        except FormatError as e:
            return [Problem(f"not a verifier key: {e}", where="vkey")]
        self.start(old)
        current = self.active
        if current is None or current.key != old:
            want = current.key.vkey if current else "(no active key: the last one was revoked)"
            return [
                Problem("replaces a key that is not the active one", where="replaces", expected=want, found=old.vkey)
            ]
        if new.name != old.name:
            return [Problem("the new key must have the log's name", where="vkey", expected=old.name, found=new.name)]
        if self.span(new.vkey) is not None:
            return [Problem("this key was used before: a key is introduced once", where="vkey", found=new.vkey)]
        current.valid_until, current.last_size = leaf["at"], index + 1
        self.spans.append(KeySpan(new, leaf["at"], index + 1))
        return []

    def apply_revocation(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        span = self.span(leaf["vkey"]) if isinstance(leaf["vkey"], str) else None
        if span is None:
            return [Problem("revokes a key the ledger never introduced", where="vkey", found=show(leaf["vkey"]))]
        if span.reason is not None:
            return [Problem("this key is already revoked", where="vkey", found=span.key.vkey)]
        if span is self.active:
            return [Problem("the active key cannot be revoked: rotate to a new key first", where="vkey")]
        problems = []
        if not leaf["reason"].strip():
            problems.append(Problem("a revocation needs a reason", where="reason"))
        compromised = leaf["compromised_at"]
        if compromised > leaf["at"]:
            problems.append(
                Problem("a compromise cannot be recorded before it happens", where="compromised_at", found=compromised)
            )
        if problems:
            return problems
        span.reason, span.compromised_at = leaf["reason"], compromised
        span.valid_until = min(span.valid_until or compromised, compromised)
        # The trees whose every leaf is older than the compromise: none of them can hold a leaf
        # an attacker with the key could have signed.
        last = self.leaves_before(compromised, index + 1)
        span.last_size = last if span.last_size is None else min(span.last_size, last)
        return []

    def rows(self, first_valid_from: str) -> list[dict[str, Any]]:
        """keys.json's rows as the ledger implies them (without public_key, fingerprint, pem)."""
        out = []
        for s in self.spans:
            row: dict[str, Any] = {
                "status": s.status,
                "valid_from": s.valid_from or first_valid_from,
                "valid_until": s.valid_until,
                "vkey": s.key.vkey,
            }
            if s.reason is not None:
                row["reason"] = s.reason
            out.append(row)
        return out
