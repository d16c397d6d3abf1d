"""`transparency key add-ml-dsa` and `transparency key rotate --ml-dsa`: the log's ML-DSA-44 key
(c2sp.org/tlog-cosignature, type 0x06), a second line of keys beside the Ed25519 one.

Adding the key appends a `key-addition` leaf: from the tree that holds it, every checkpoint
carries a signature by the ML-DSA-44 key as well as the Ed25519 one, so a checkpoint outlasts a
computer that could forge Ed25519. The tree that first holds the addition is signed by the
Ed25519 key, so a reader who trusts that key learns the new one from the log. A rotation of the
ML-DSA-44 key is a `key-rotation` leaf whose keys are both ML-DSA-44 keys; the retired private
key is kept in PRIVATE/retired-keys/ until the build that signs the hand-over. The trust policy
gets a `log` line for the new key in the same transaction, so a verifier holding it requires
both signatures. Each command is one journal transaction: a kill leaves all of it or none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.build.cosigning import POLICY_FILE
from generator.commands.keys import files_naming
from generator.core.cosigning_keys import Cosigner, generate_cosigner, load_cosigner
from generator.core.generator_errors import InputError, KeyFileError, problem
from generator.core.key_schedule import retired_ml_dsa_key_file
from generator.core.signing_key import load_key
from generator.program.datadir import Paths
from generator.program.ledgerfile import appending, event_time
from generator.verifier import KEY_ADDITION, KEY_ROTATION, ML_DSA_44, FormatError, Problem, parse_policy

_POLICY_ITEM_SEP = re.compile(rb"[ \t]+")


@dataclass(frozen=True)
class MlDsaKeyChange:
    """The key now signing, the one it replaced (None for an addition), the policy's change, and
    the other small files that still name the replaced key (left as they are)."""

    new: Cosigner
    old: Cosigner | None
    policy: str | None
    flagged: tuple[str, ...] = ()


def _policy_with(paths: Paths, old_vkey: str | None, new_vkey: str) -> tuple[bytes | None, str | None]:
    """The trust policy with a `log` line for the new key: in place of the old key's line, or
    after the last `log` line of the log (a first key); None if the program has no policy."""
    path = paths.data / POLICY_FILE
    if not path.is_file():
        return None, None
    lines = path.read_bytes().splitlines(keepends=True)
    replaced, last_log = False, -1
    for n, line in enumerate(lines):
        items = _POLICY_ITEM_SEP.split(line.rstrip(b"\r\n").strip(b" \t"))
        if items[0] == b"log":
            last_log = n
            if old_vkey is not None and len(items) >= 2 and items[1] == old_vkey.encode():
                lines[n] = line.replace(old_vkey.encode(), new_vkey.encode(), 1)
                replaced = True
    if not replaced:
        if last_log >= 0 and not lines[last_log].endswith(b"\n"):
            lines[last_log] += b"\n"
        lines.insert(last_log + 1, b"log " + new_vkey.encode() + b"\n")
    policy = b"".join(lines)
    try:
        parse_policy(policy)
    except FormatError as e:
        raise InputError(
            [problem(paths.show(path), f"not a valid trust policy ({e}); fix it, then try again")],
            "the ML-DSA-44 key was not changed",
        ) from None
    verb = "replaces the old one" if replaced else "was added"
    return policy, f"{paths.show(path)}: a log line for the ML-DSA-44 key {verb}"


def add_ml_dsa_key(paths: Paths, at: str | None = None) -> MlDsaKeyChange:
    """Give the log its first ML-DSA-44 key: a `key-addition` leaf, PRIVATE/ml-dsa-44.key and the
    policy's log line, in one transaction."""
    with appending(paths, "key add-ml-dsa") as app:
        problems: list[Problem] = []
        ring = app.ledger.keys
        if ring.ml_dsa or paths.ml_dsa_key_file.exists():
            problems.append(
                problem(
                    paths.show(paths.ml_dsa_key_file),
                    "the log has an ML-DSA-44 key already; replace it with 'transparency key rotate --ml-dsa'",
                )
            )
        origin = ring.spans[0].key.name if ring.spans else None
        if origin is None:
            origin = _origin_of_signing_key(paths, problems)
        when = event_time(at, app.ledger, problems)
        if problems or origin is None:
            raise InputError(problems, "no ML-DSA-44 key was added")
        new = generate_cosigner(origin, ML_DSA_44)
        lines = app.prepare([{"type": KEY_ADDITION, "v": 2, "vkey": new.key.vkey, "at": when}])
        app.tx.stage(paths.ml_dsa_key_file, new.private_text.encode() + b"\n", 0o600)
        policy, said = _policy_with(paths, None, new.key.vkey)
        if policy is not None:
            app.tx.stage(paths.data / POLICY_FILE, policy)
        app.tx.add_lines(lines)
    return MlDsaKeyChange(new, None, said)


def rotate_ml_dsa_key(paths: Paths, at: str | None = None) -> MlDsaKeyChange:
    """Replace the log's ML-DSA-44 key by a new one: a `key-rotation` leaf, the new key file, the
    old one kept for the hand-over, and the policy's log line, in one transaction."""
    with appending(paths, "key rotate --ml-dsa") as app:
        problems: list[Problem] = []
        active = app.ledger.keys.active_ml_dsa
        old = None
        try:
            old = load_cosigner(paths.ml_dsa_key_file)
        except KeyFileError as e:
            problems.append(problem(paths.show(paths.ml_dsa_key_file), str(e)))
        if active is None:
            problems.append(
                problem(
                    "key rotate --ml-dsa", "the log has no ML-DSA-44 key; add one with 'transparency key add-ml-dsa'"
                )
            )
        elif old is not None and old.key != active.key:
            problems.append(
                problem(
                    paths.show(paths.ml_dsa_key_file), "is not the log's active ML-DSA-44 key", expected=active.key.vkey
                )
            )
        when = event_time(at, app.ledger, problems)
        if problems or old is None:
            raise InputError(problems, "the ML-DSA-44 key was not rotated")
        new = generate_cosigner(old.name, ML_DSA_44)
        leaf = {"type": KEY_ROTATION, "v": 2, "vkey": new.key.vkey, "replaces": old.key.vkey, "at": when}
        lines = app.prepare([leaf])
        retired = retired_ml_dsa_key_file(paths.private, old.key.key_id.hex())
        app.tx.stage(retired, old.private_text.encode() + b"\n", 0o600)
        app.tx.stage(paths.ml_dsa_key_file, new.private_text.encode() + b"\n", 0o600)
        policy, said = _policy_with(paths, old.key.vkey, new.key.vkey)
        if policy is not None:
            app.tx.stage(paths.data / POLICY_FILE, policy)
        app.tx.add_lines(lines)
    flagged = tuple(
        f"{paths.show(f)} still names the old ML-DSA-44 key: update it if it follows the program's key (a "
        "witness's logs file or log list: replace the old key by the new one)"
        for f in files_naming(paths, old.key.vkey)
    )
    return MlDsaKeyChange(new, old, said, flagged)


def _origin_of_signing_key(paths: Paths, problems: list[Problem]) -> str | None:
    try:
        return load_key(paths.key_file, program_has_keys=True).name
    except KeyFileError as e:
        problems.append(problem(paths.show(paths.key_file), str(e)))
        return None
