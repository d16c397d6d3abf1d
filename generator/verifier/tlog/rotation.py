"""Key rotation and revocation on a site (format v2): keys.json as the ledger's key events imply
it, every checkpoint signed only by keys valid for its size, each rotation handed over by a
checkpoint both keys signed, and a pinned key followed through those hand-overs.

A log with an ML-DSA-44 key (keyring.py) is held to the same rules on that line of keys: its
newest key valid for a size must sign the checkpoint of that size, in the cosignature format
(c2sp.org/tlog-cosignature, `subtree/v1`) under the log's own name, and the checkpoint that
first holds a `key-addition` or an ML-DSA-44 rotation is signed by the key it brings.

The ledger, not keys.json, says which key was valid when: keys.json is recomputed from the key
events and must agree with them row for row, so an operator cannot quietly back-date a key or
un-revoke one.
"""

import base64
from typing import Any, TypeAlias

from generator.verifier.core.errors import FormatError, NoteError, Problem
from generator.verifier.core.folder import Site
from generator.verifier.core.formats import check_keys
from generator.verifier.core.note import open_note, parse_checkpoint
from generator.verifier.core.public_keys import VerifierKey, parse_vkey
from generator.verifier.core.text import show
from generator.verifier.tlog.cosignature import ML_DSA_44, CosignerKey, cosigned_by, parse_cosigner_vkey
from generator.verifier.tlog.keyring import KeyRing, KeySpan

LogKey: TypeAlias = VerifierKey | CosignerKey
ML_DSA_KEYS_MEMBER = "ml_dsa_44_keys"


def check_keys_follow_the_ledger(
    s: Site, rel: str, rows: list[dict[str, Any]], ring: KeyRing, ml_dsa_rows: list[Any] | None = None
) -> None:
    """keys.json's rows (status, times, reason) equal the ledger's key events', for both lines of
    keys: `keys` (Ed25519) and `ml_dsa_44_keys` (absent while the log has no ML-DSA-44 key)."""
    members = ("reason", "status", "valid_from", "valid_until", "vkey")
    want_ml = ring.ml_dsa_rows()
    got_ml = [{k: r[k] for k in members if k in r} if isinstance(r, dict) else r for r in ml_dsa_rows or []]
    s.report.check(
        got_ml == want_ml,
        rel,
        f"{ML_DSA_KEYS_MEMBER} differs from what the ledger's key events make it (status, validity, reason)",
        show(want_ml, 400),
        show(got_ml, 400),
    )
    if not rows:
        return
    first = rows[0].get("vkey") if isinstance(rows[0], dict) else None
    try:
        ring.start(parse_vkey(first if isinstance(first, str) else ""))
    except FormatError:
        return  # reported with keys.json
    want = ring.rows(str(rows[0].get("valid_from")))
    got = [{k: r[k] for k in members if k in r} if isinstance(r, dict) else r for r in rows]
    s.report.check(
        got == want,
        rel,
        "the keys differ from what the ledger's key events make them (status, validity, reason)",
        show(want, 400),
        show(got, 400),
    )


def ml_dsa_key_row_problems(rows: Any, origin: str) -> list[Problem]:
    """The shape of keys.json's `ml_dsa_44_keys` rows: each an ML-DSA-44 vkey (type 0x06) named by
    the origin, with its base64 key and fingerprint; whether they follow the ledger is checked
    with the ledger (check_keys_follow_the_ledger)."""
    if not isinstance(rows, list):
        return [Problem("must be a list", where=ML_DSA_KEYS_MEMBER, found=show(rows))]
    problems: list[Problem] = []
    for n, row in enumerate(rows):
        w = f"{ML_DSA_KEYS_MEMBER}[{n}]"
        problems += check_keys(
            row, ("fingerprint", "public_key", "status", "valid_from", "valid_until", "vkey"), ("reason",), w
        )
        if problems:
            continue
        try:
            key = parse_cosigner_vkey(row["vkey"])
        except FormatError as e:
            problems.append(Problem(f"not a verifier key: {e}", where=f"{w}.vkey"))
            continue
        if key.kind != ML_DSA_44 or key.name != origin:
            problems.append(
                Problem("an ML-DSA-44 key (type 0x06) named by the origin", where=f"{w}.vkey", expected=origin)
            )
        if row["public_key"] != base64.b64encode(key.public_key).decode() or row["fingerprint"] != key.fingerprint:
            problems.append(Problem("public_key or fingerprint differs from the vkey's key", where=w))
    return problems


def checkpoint_signers(data: bytes, ring: KeyRing) -> tuple[tuple[str, int, bytes], list[LogKey]]:
    """A checkpoint's (origin, size, root) and the ring's keys that signed it, of both types;
    NoteError if one of them failed, or no Ed25519 key of the ring signed it."""
    note = open_note(data, [s.key for s in ring.spans])
    tree = parse_checkpoint(note.text)
    signers: list[LogKey] = [k for k in (s.key for s in ring.spans) if any(v.key_id == k.key_id for v in note.verified)]
    # Named by the origin, or it is no key of this log's (a key-addition of another name is refused
    # by keys.json's rows too, but a replay that never reads them must not count it).
    signers += cosigned_by(data, [span.key for span in ring.ml_dsa if span.key.name == tree[0]])
    return tree, signers


def _line_problems(spans: list[KeySpan[Any]], newest: LogKey | None, size: int, signers: list[LogKey]) -> list[str]:
    problems = []
    for k in signers:
        span = next((s for s in spans if s.key == k), None)
        if span is not None and not span.covers(size):
            until = f"up to size {span.last_size}" if span.last_size is not None else f"from size {span.first_size}"
            why = f"revoked ({span.reason})" if span.reason else "not valid for it"
            problems.append(f"signed by {k.fingerprint}, {why}: that key signs trees {until} only, this one has {size}")
    if newest is not None and newest not in signers:
        kind = "ML-DSA-44 key" if isinstance(newest, CosignerKey) else "key"
        problems.append(f"not signed by {newest.fingerprint}, the {kind} valid for a tree of {size} entries")
    return problems


def signer_problems(ring: KeyRing, size: int, signers: list[LogKey]) -> list[str]:
    """Why these signers may not sign a tree of `size`, if they may not; or which key that must
    sign it, of either line of keys, did not."""
    return _line_problems(ring.spans, ring.newest_at(size), size, signers) + _line_problems(
        ring.ml_dsa, ring.newest_ml_dsa_at(size), size, signers
    )


def check_checkpoint_keys(s: Site, rel: str, data: bytes, ring: KeyRing) -> None:
    try:
        (_, size, _), signers = checkpoint_signers(data, ring)
    except (NoteError, FormatError) as e:
        s.report.check(False, rel, f"checkpoint does not verify with the ledger's keys: {e}")
        return
    problems = signer_problems(ring, size, signers)
    for problem in problems:
        s.report.check(False, rel, problem)
    s.report.checks += 1
    if ring.ml_dsa and not problems:
        named = ", ".join(
            f"{'ML-DSA-44' if isinstance(k, CosignerKey) else 'Ed25519'} {k.fingerprint}" for k in signers
        )
        s.report.notes.append(f"the checkpoint's signatures by the log, each verified: {named}")


def check_hand_overs(
    s: Site, ring: KeyRing, archived: dict[int, tuple[str, bytes]], unjudged: int | None = None
) -> None:
    """Every rotation is handed over: the archived checkpoint of the tree that first holds it is
    signed by the key it retires and the key it introduces; the tree that first holds a
    `key-addition`, by the ML-DSA-44 key it adds. A hand-over of size `unjudged` is today's
    checkpoint, which failed and was reported there: what restates it is not judged again."""
    pairs: list[tuple[KeySpan[Any] | None, KeySpan[Any]]] = list(zip(ring.spans, ring.spans[1:], strict=False))
    if ring.ml_dsa:
        pairs += [(None, ring.ml_dsa[0]), *zip(ring.ml_dsa, ring.ml_dsa[1:], strict=False)]
    for old, new in pairs:
        size = new.first_size
        if size == unjudged:
            continue
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
        # A key revoked as compromised before the tree that brought it covers no size at all:
        # it may sign nothing, so the hand-over is not asked for its signature.
        want = [span.key for span in (old, new) if span is not None and span.covers(size)]
        s.report.check(
            all(k in signers for k in want),
            rel,
            "the hand-over checkpoint is not signed by both the retired and the new key"
            if old is not None
            else "the checkpoint that first holds the ML-DSA-44 key's addition is not signed by that key",
            " and ".join(k.fingerprint for k in want),
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
