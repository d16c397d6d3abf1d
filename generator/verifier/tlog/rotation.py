"""Key rotation and revocation on a site (format v2): keys.json as the ledger's key events imply
it, every checkpoint signed only by keys valid for its size, each rotation handed over by a
checkpoint both keys signed, and a pinned key followed through those hand-overs.

The ledger, not keys.json, says which key was valid when: keys.json is recomputed from the key
events and must agree with them row for row, so an operator cannot quietly back-date a key or
un-revoke one.
"""

from typing import Any

from generator.verifier.core.errors import FormatError, NoteError
from generator.verifier.core.folder import Site
from generator.verifier.core.note import open_note, parse_checkpoint
from generator.verifier.core.public_keys import VerifierKey, parse_vkey
from generator.verifier.core.text import show
from generator.verifier.tlog.keyring import KeyRing


def check_keys_follow_the_ledger(s: Site, rel: str, rows: list[dict[str, Any]], ring: KeyRing) -> None:
    """keys.json's rows (status, times, reason) equal the ledger's key events'."""
    if not rows:
        return
    first = rows[0].get("vkey") if isinstance(rows[0], dict) else None
    try:
        ring.start(parse_vkey(first if isinstance(first, str) else ""))
    except FormatError:
        return  # reported with keys.json
    want = ring.rows(str(rows[0].get("valid_from")))
    members = ("reason", "status", "valid_from", "valid_until", "vkey")
    got = [{k: r[k] for k in members if k in r} if isinstance(r, dict) else r for r in rows]
    s.report.check(
        got == want,
        rel,
        "the keys differ from what the ledger's key events make them (status, validity, reason)",
        show(want, 400),
        show(got, 400),
    )


def checkpoint_signers(data: bytes, ring: KeyRing) -> tuple[tuple[str, int, bytes], list[VerifierKey]]:
    """A checkpoint's (origin, size, root) and the ring's keys that signed it; NoteError if one
    of them failed, or none signed it."""
    note = open_note(data, [s.key for s in ring.spans])
    tree = parse_checkpoint(note.text)
    signers = [k for k in (s.key for s in ring.spans) if any(v.key_id == k.key_id for v in note.verified)]
    return tree, signers


def signer_problems(ring: KeyRing, size: int, signers: list[VerifierKey]) -> list[str]:
    """Why these signers may not sign a tree of `size`, if they may not."""
    problems = []
    for k in signers:
        span = ring.span(k.vkey)
        if span is not None and not span.covers(size):
            until = f"up to size {span.last_size}" if span.last_size is not None else f"from size {span.first_size}"
            why = f"revoked ({span.reason})" if span.reason else "not valid for it"
            problems.append(f"signed by {k.fingerprint}, {why}: that key signs trees {until} only, this one has {size}")
    newest = ring.newest_at(size)
    if newest is not None and newest not in signers:
        problems.append(f"not signed by {newest.fingerprint}, the key valid for a tree of {size} entries")
    return problems


def check_checkpoint_keys(s: Site, rel: str, data: bytes, ring: KeyRing) -> None:
    try:
        (_, size, _), signers = checkpoint_signers(data, ring)
    except (NoteError, FormatError) as e:
        s.report.check(False, rel, f"checkpoint does not verify with the ledger's keys: {e}")
        return
    for problem in signer_problems(ring, size, signers):
        s.report.check(False, rel, problem)
    s.report.checks += 1


def check_hand_overs(s: Site, ring: KeyRing, archived: dict[int, tuple[str, bytes]]) -> None:
    """Every rotation is handed over: the archived checkpoint of the tree that first holds it is
    signed by the key it retires and the key it introduces."""
    for old, new in zip(ring.spans, ring.spans[1:], strict=False):
        size = new.first_size
        rel, data = archived.get(size, ("", b""))
        if not data:
            s.report.check(
                False,
                "ledger/history.json",
                f"no archived hand-over checkpoint of size {size} for the rotation to {new.key.fingerprint}",
            )
            continue
        try:
            _, signers = checkpoint_signers(data, ring)
        except (NoteError, FormatError) as e:
            s.report.check(False, rel, f"hand-over checkpoint does not verify: {e}")
            continue
        s.report.check(
            old.key in signers and new.key in signers,
            rel,
            "the hand-over checkpoint is not signed by both the retired and the new key",
            f"{old.key.fingerprint} and {new.key.fingerprint}",
            ", ".join(k.fingerprint for k in signers),
        )


def check_pin_followed(s: Site, rel: str, ring: KeyRing, pinned: VerifierKey | None) -> None:
    """A key pinned with --key that is no longer the active one is followed to it, through the
    hand-overs (checked above), unless it was revoked."""
    if pinned is None or (ring.active is not None and ring.active.key == pinned):
        return
    span = ring.span(pinned.vkey)
    if span is None:
        s.report.check(False, rel, "the key given with --key is not one of the ledger's keys", pinned.vkey)
    elif span.reason is not None:
        s.report.check(
            False, rel, f"the key given with --key was revoked: {span.reason} (compromised at {span.compromised_at})"
        )
    else:
        s.report.notes.append(
            f"the key given with --key ({pinned.fingerprint}) was rotated; followed through the ledger's hand-over "
            f"checkpoint(s) to {ring.active.key.fingerprint if ring.active else 'no active key'}"
        )
        s.report.checks += 1
