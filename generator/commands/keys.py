"""`transparency key rotate` and `transparency key revoke` (format v2 key events).

A rotation appends a `key-rotation` leaf naming the new key and the key it replaces, makes the
new key the signing key, and keeps the old private key in PRIVATE/retired-keys/ for one thing
only: the next build signs the hand-over checkpoint (the tree that first holds the rotation)
with both keys, so that a reader who trusted the old key can follow to the new one. After that
build the retired key file may be destroyed. A revocation records that a key was compromised,
when and why: what it signed before that time still verifies, anything later does not.
Everything a command writes goes through one journal transaction: a kill at any moment leaves
the old key or the new one in place, never neither.
"""

from __future__ import annotations

from dataclasses import replace

from generator import canonical
from generator.datadir import Paths, PublicKey, load_public_keys, public_keys_document
from generator.errors import InputError, problem
from generator.keys import Signer, generate_signer, load_key, retired_key_file
from generator.ledgerfile import appending, event_time
from generator.verifier import KEY_REVOCATION, KEY_ROTATION, is_time, parse_vkey


def rotate_key(paths: Paths, at: str | None = None) -> tuple[Signer, Signer]:
    """Introduce a new signing key; returns (old, new)."""
    with appending(paths, "key rotate") as app:
        old = load_key(paths.key_file)
        keys = load_public_keys(paths, old.name)
        active = next(k for k in keys if k.status == "active")
        if active.vkey != old.vkey:
            raise InputError(
                [problem(paths.show(paths.key_file), "is not the active key of keys.json", expected=active.vkey)]
            )
        when = event_time(at, app.ledger)
        new = generate_signer(old.name)
        leaf = {"type": KEY_ROTATION, "v": 2, "vkey": new.vkey, "replaces": old.vkey, "at": when}
        lines = app.prepare([leaf])
        rows = [replace(k, status="retired", valid_until=when) if k.vkey == old.vkey else k for k in keys]
        rows.append(PublicKey(new.vkey, when, None, "active", None))
        app.tx.stage(retired_key_file(paths.private, old.key_id.hex()), old.skey.encode() + b"\n", 0o600)
        app.tx.stage(paths.key_file, new.skey.encode() + b"\n", 0o600)
        app.tx.stage(paths.keys_file, canonical.dumps(public_keys_document(rows)) + b"\n")
        app.tx.add_lines(lines)
    return old, new


def revoke_key(paths: Paths, key: str, reason: str, compromised_at: str, at: str | None = None) -> PublicKey:
    """Record a retired key's compromise; returns its new row."""
    with appending(paths, "key revoke") as app:
        keys = load_public_keys(paths, None)
        target = next((k for k in keys if key in (k.vkey, parse_vkey(k.vkey).fingerprint)), None)
        problems = []
        if target is None:
            problems.append(problem("key revoke", f"{key!r} is not a key of keys.json (give its vkey or fingerprint)"))
        elif target.status == "active":
            problems.append(
                problem("key revoke", "the active key cannot be revoked: run 'transparency key rotate' first")
            )
        elif target.status == "revoked":
            problems.append(problem("key revoke", "this key is already revoked"))
        if not reason.strip():
            problems.append(problem("--reason", "a revocation needs a reason"))
        if not is_time(compromised_at):
            problems.append(problem("--compromised-at", "malformed time", expected="YYYY-MM-DDTHH:MM:SSZ"))
        if problems:
            raise InputError(problems, "nothing was revoked")
        assert target is not None
        when = event_time(at, app.ledger)
        leaf = {
            "type": KEY_REVOCATION,
            "v": 2,
            "vkey": target.vkey,
            "reason": reason,
            "compromised_at": compromised_at,
            "at": when,
        }
        lines = app.prepare([leaf])
        until = min(target.valid_until or compromised_at, compromised_at)
        row = replace(target, status="revoked", reason=reason, valid_until=until)
        rows = [row if k.vkey == target.vkey else k for k in keys]
        app.tx.stage(paths.keys_file, canonical.dumps(public_keys_document(rows)) + b"\n")
        app.tx.add_lines(lines)
    return row
