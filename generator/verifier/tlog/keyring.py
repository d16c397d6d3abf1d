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

A log may also sign its checkpoints with an ML-DSA-44 key (c2sp.org/tlog-cosignature's type
0x06, named by the origin), a second line of keys beside the Ed25519 one: a `key-addition` leaf
at index r introduces the first, valid from size r + 1, in a tree the Ed25519 key signs; from
then on every checkpoint carries both signatures. `key-rotation` and `key-revocation` work on
either line of keys, told apart by the vkey's type; the two lines never replace each other.
"""

import bisect
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from generator.verifier.core.errors import FormatError, Problem
from generator.verifier.core.public_keys import VerifierKey, parse_vkey
from generator.verifier.core.text import show
from generator.verifier.tlog.cosignature import ML_DSA_44, CosignerKey, parse_cosigner_vkey

KEY_ROTATION = "key-rotation"
KEY_REVOCATION = "key-revocation"
KEY_ADDITION = "key-addition"
K = TypeVar("K", VerifierKey, CosignerKey)


@dataclass
class KeySpan(Generic[K]):
    key: K
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

    spans: list[KeySpan[VerifierKey]] = field(default_factory=list)
    ml_dsa: list[KeySpan[CosignerKey]] = field(default_factory=list)  # the ML-DSA-44 keys, if any
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

    def span(self, vkey: str) -> KeySpan[Any] | None:
        """The span of the key `vkey`, of either line of keys."""
        found: KeySpan[Any] | None = next((s for s in self.spans if s.key.vkey == vkey), None)
        return found or next((s for s in self.ml_dsa if s.key.vkey == vkey), None)

    @property
    def active(self) -> KeySpan[VerifierKey] | None:
        return _active(self.spans)

    @property
    def active_ml_dsa(self) -> KeySpan[CosignerKey] | None:
        return _active(self.ml_dsa)

    def valid_at(self, size: int) -> list[VerifierKey]:
        return [s.key for s in self.spans if s.covers(size)]

    def newest_at(self, size: int) -> VerifierKey | None:
        """The Ed25519 key that must sign a checkpoint of `size`: the newest key valid for it."""
        return _newest_at(self.spans, size)

    def newest_ml_dsa_at(self, size: int) -> CosignerKey | None:
        """The ML-DSA-44 key that must sign a checkpoint of `size`, if the log had one by then."""
        return _newest_at(self.ml_dsa, size)

    def start(self, key: VerifierKey) -> None:
        if not self.spans:
            self.spans.append(KeySpan(key, None, 0))

    def apply_rotation(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        try:
            new_ml = parse_cosigner_vkey(leaf["vkey"])
        except FormatError:
            new_ml = None
        if new_ml is not None:
            return self._rotate_ml_dsa(index, leaf, new_ml)
        try:
            new = parse_vkey(leaf["vkey"])
            old = parse_vkey(leaf["replaces"])
        except FormatError as e:
            return [Problem(f"not a verifier key: {e}", where="vkey")]
        self.start(old)
        return _rotate(self.spans, index, leaf, old, new, self.span(new.vkey) is not None)

    def _rotate_ml_dsa(self, index: int, leaf: dict[str, Any], new: CosignerKey) -> list[Problem]:
        try:
            old = parse_cosigner_vkey(leaf["replaces"])
        except FormatError as e:
            return [Problem(f"not an ML-DSA-44 key as the new one is: {e}", where="replaces")]
        if new.kind != ML_DSA_44 or old.kind != ML_DSA_44:
            return [Problem("a log's second line of keys is ML-DSA-44 (type 0x06)", where="vkey", found=new.vkey)]
        return _rotate(self.ml_dsa, index, leaf, old, new, self.span(new.vkey) is not None)

    def apply_addition(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        """A `key-addition`: the log's first ML-DSA-44 key, valid from the tree that holds it."""
        try:
            key = parse_cosigner_vkey(leaf["vkey"])
        except FormatError as e:
            return [Problem(f"not an ML-DSA-44 verifier key (type 0x06): {e}", where="vkey")]
        if key.kind != ML_DSA_44:
            return [Problem("a key-addition adds an ML-DSA-44 key (type 0x06)", where="vkey", found=key.vkey)]
        if self.ml_dsa:
            return [
                Problem(
                    "the log has an ML-DSA-44 key already: replace it with a key-rotation",
                    where="vkey",
                    found=key.vkey,
                )
            ]
        if self.spans and key.name != self.spans[0].key.name:
            return [Problem("the key must have the log's name", where="vkey", expected=self.spans[0].key.name)]
        self.ml_dsa.append(KeySpan(key, leaf["at"], index + 1))
        return []

    def apply_revocation(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        span = self.span(leaf["vkey"]) if isinstance(leaf["vkey"], str) else None
        if span is None:
            return [Problem("revokes a key the ledger never introduced", where="vkey", found=show(leaf["vkey"]))]
        if span.reason is not None:
            return [Problem("this key is already revoked", where="vkey", found=span.key.vkey)]
        if span is self.active or span is self.active_ml_dsa:
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
        return [_row(s, first_valid_from) for s in self.spans]

    def ml_dsa_rows(self) -> list[dict[str, Any]]:
        """keys.json's `ml_dsa_44_keys` rows as the ledger implies them (without public_key and
        fingerprint): every ML-DSA-44 key entered by a leaf, so each has its own time."""
        return [_row(s, "") for s in self.ml_dsa]


def _row(s: KeySpan[Any], first_valid_from: str) -> dict[str, Any]:
    row: dict[str, Any] = {
        "status": s.status,
        "valid_from": s.valid_from or first_valid_from,
        "valid_until": s.valid_until,
        "vkey": s.key.vkey,
    }
    if s.reason is not None:
        row["reason"] = s.reason
    return row


def _active(spans: list[KeySpan[K]]) -> KeySpan[K] | None:
    return spans[-1] if spans and spans[-1].reason is None else None


def _newest_at(spans: list[KeySpan[K]], size: int) -> K | None:
    valid = [s.key for s in spans if s.covers(size) and s.reason is None] or [s.key for s in spans if s.covers(size)]
    return valid[-1] if valid else None


def _rotate(
    spans: list[KeySpan[K]], index: int, leaf: dict[str, Any], old: K, new: K, used_before: bool
) -> list[Problem]:
    """Replace the active key of one line of keys (`spans`) by `new`, from the tree that holds
    the rotation: the problems if `old` is not that active key or `new` cannot follow it."""
    current = _active(spans)
    if current is None or current.key != old:
        want = current.key.vkey if current else "(no active key: the last one was revoked)"
        return [Problem("replaces a key that is not the active one", where="replaces", expected=want, found=old.vkey)]
    if new.name != old.name:
        return [Problem("the new key must have the log's name", where="vkey", expected=old.name, found=new.name)]
    if used_before:
        return [Problem("this key was used before: a key is introduced once", where="vkey", found=new.vkey)]
    current.valid_until, current.last_size = leaf["at"], index + 1
    spans.append(KeySpan(new, leaf["at"], index + 1))
    return []
