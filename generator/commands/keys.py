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

import re
from dataclasses import dataclass, replace
from pathlib import Path

from generator.build.cosigning import COSIGNATURES_DIR, POLICY_FILE
from generator.core import canonical_json
from generator.core.generator_errors import InputError, problem
from generator.core.signing_key import Signer, generate_signer, load_key, retired_key_file
from generator.program.datadir import Paths, PublicKey, load_public_keys, public_keys_document
from generator.program.ledgerfile import appending, event_time
from generator.verifier import KEY_REVOCATION, KEY_ROTATION, FormatError, Problem, is_time, parse_policy, parse_vkey

_POLICY_ITEM_SEP = re.compile(rb"[ \t]+")
# Folders of the data and private directories that hold the program's records (each file checked
# by its own rules, and there may be a million): never searched for a key's name.
_RECORD_DIRS = frozenset(
    {"reveals", "runs", "certificates", "methodology", "checkpoints", COSIGNATURES_DIR, "sealed", "items", "results"}
    | {"cache", "agreement", "retired-keys", "private", ".pending"}
)
_MAX_SEARCHED_BYTES = 1 << 16


@dataclass(frozen=True)
class Rotation:
    """A rotation done: the keys, and what it did about the files that name a key."""

    old: Signer
    new: Signer
    updated: tuple[str, ...] = ()  # files changed in the rotation's own transaction, and how
    flagged: tuple[str, ...] = ()  # files that still name the old key, left as they are


def rotated_policy(policy: bytes, old: str, new: str) -> tuple[bytes, int]:
    """The trust policy with the old key replaced by the new one on every `log` line that names
    it (every other byte kept), and how many lines changed.

    Replaced, not joined: from the next build on, the checkpoint is signed by the new key (the
    hand-over by both), so the new key alone is what a reader's policy needs; a policy that still
    trusted the retired key would go on accepting checkpoints signed by a key the program has
    given up, which is how a fork made by whoever holds the old key would pass."""
    out: list[bytes] = []
    changed = 0
    for line in policy.splitlines(keepends=True):
        body = line.rstrip(b"\r\n")
        items = _POLICY_ITEM_SEP.split(body.strip(b" \t"))
        if len(items) >= 2 and items[0] == b"log" and items[1] == old.encode():
            start = body.index(b"log") + 3
            line = body[:start] + body[start:].replace(old.encode(), new.encode(), 1) + line[len(body) :]
            changed += 1
        out.append(line)
    return b"".join(out), changed


def files_naming(paths: Paths, vkey: str) -> list[Path]:
    """Small files of the data and private directories, and one folder down (the program's
    records aside), whose bytes hold `vkey`: a witness's logs file kept beside the program, a
    copy of the policy, a note. keys.json, the ledger and the policy are the rotation's own."""
    needle = vkey.encode()
    own = {paths.keys_file.resolve(), paths.ledger_file.resolve(), (paths.data / POLICY_FILE).resolve()}
    found: list[Path] = []
    for root in (paths.data, paths.private):
        if not root.is_dir():
            continue
        for entry in sorted(root.iterdir()):
            inside = entry.is_dir() and not entry.is_symlink() and entry.name not in _RECORD_DIRS
            for f in sorted(entry.iterdir()) if inside else [entry]:
                try:
                    if f.is_symlink() or not f.is_file() or f.resolve() in own or f in found:
                        continue
                    if f.stat().st_size <= _MAX_SEARCHED_BYTES and needle in f.read_bytes():
                        found.append(f)
                except OSError:
                    continue
    return found


def rotate_key(paths: Paths, at: str | None = None) -> tuple[Signer, Signer]:
    """Introduce a new signing key; returns (old, new)."""
    done = rotate(paths, at)
    return done.old, done.new


def rotate(paths: Paths, at: str | None = None) -> Rotation:
    """Introduce a new signing key, and put it in place of the old one on the trust policy's
    `log` lines in the same transaction; say which other files still name the old key."""
    updated: list[str] = []
    policy_path = paths.data / POLICY_FILE
    with appending(paths, "key rotate") as app:
        old = load_key(paths.key_file, program_has_keys=True)
        keys = load_public_keys(paths, old.name)
        active = next(k for k in keys if k.status == "active")
        problems: list[Problem] = []
        if active.vkey != old.vkey:
            problems.append(
                problem(paths.show(paths.key_file), "is not the active key of keys.json", expected=active.vkey)
            )
        when = event_time(at, app.ledger, problems)
        if problems:
            raise InputError(problems, "the key was not rotated")
        new = generate_signer(old.name)
        leaf = {"type": KEY_ROTATION, "v": 2, "vkey": new.vkey, "replaces": old.vkey, "at": when}
        lines = app.prepare([leaf])
        rows = [replace(k, status="retired", valid_until=when) if k.vkey == old.vkey else k for k in keys]
        rows.append(PublicKey(new.vkey, when, None, "active", None))
        app.tx.stage(retired_key_file(paths.private, old.key_id.hex()), old.skey.encode() + b"\n", 0o600)
        app.tx.stage(paths.key_file, new.skey.encode() + b"\n", 0o600)
        app.tx.stage(paths.keys_file, canonical_json.dumps(public_keys_document(rows)) + b"\n")
        if policy_path.is_file():
            policy, changed = rotated_policy(policy_path.read_bytes(), old.vkey, new.vkey)
            try:
                parse_policy(policy)
            except FormatError as e:
                raise InputError(
                    [problem(paths.show(policy_path), f"not a valid trust policy ({e}); fix it, then rotate")],
                    "the key was not rotated",
                ) from None
            if changed:
                app.tx.stage(policy_path, policy)
                lines_word = "line" if changed == 1 else "lines"
                updated.append(f"{paths.show(policy_path)}: the log key on {changed} {lines_word} is now the new key")
        app.tx.add_lines(lines)
    flagged = [
        f"{paths.show(f)} still names the old key: update it if it follows the program's key (a witness's logs "
        "file: replace the old key by the new one, do not add it)"
        for f in files_naming(paths, old.vkey)
    ]
    if policy_path.is_file() and not updated:
        flagged.insert(
            0,
            f"{paths.show(policy_path)} has no log line with the old key, so it was left as it is: the build refuses "
            "a policy that names no key signing the program's checkpoint",
        )
    return Rotation(old, new, tuple(updated), tuple(flagged))


def revoke_key(paths: Paths, key: str, reason: str, compromised_at: str, at: str | None = None) -> PublicKey:
    """Record a retired key's compromise; returns its new row."""
    with appending(paths, "key revoke") as app:
        keys = load_public_keys(paths, None)
        target = next((k for k in keys if key in (k.vkey, parse_vkey(k.vkey).fingerprint)), None)
        ml_dsa = next((s for s in app.ledger.keys.ml_dsa if key in (s.key.vkey, s.key.fingerprint)), None)
        if target is None and ml_dsa is not None:
            # An ML-DSA-44 key lives in the ledger alone (keys.json's rows for it are derived).
            status = (
                "revoked" if ml_dsa.reason else ("active" if ml_dsa is app.ledger.keys.active_ml_dsa else "retired")
            )
            target = PublicKey(ml_dsa.key.vkey, ml_dsa.valid_from or "", ml_dsa.valid_until, status, ml_dsa.reason)
        problems: list[Problem] = []
        if target is None:
            problems.append(problem("key revoke", f"{key!r} is not a key of keys.json (give its vkey or fingerprint)"))
        elif target.status == "active":
            problems.append(
                problem(
                    "key revoke",
                    "the active key cannot be revoked: run 'transparency key rotate"
                    + (" --ml-dsa" if ml_dsa is not None else "")
                    + "' first",
                )
            )
        elif target.status == "revoked":
            problems.append(problem("key revoke", "this key is already revoked"))
        if not reason.strip():
            problems.append(problem("--reason", "a revocation needs a reason"))
        if not is_time(compromised_at):
            problems.append(problem("--compromised-at", "malformed time", expected="YYYY-MM-DDTHH:MM:SSZ"))
        when = event_time(at, app.ledger, problems)
        if problems:
            raise InputError(problems, "nothing was revoked")
        assert target is not None
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
        if ml_dsa is None:
            rows = [row if k.vkey == target.vkey else k for k in keys]
            app.tx.stage(paths.keys_file, canonical_json.dumps(public_keys_document(rows)) + b"\n")
        app.tx.add_lines(lines)
    return row
