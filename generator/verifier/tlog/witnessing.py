"""Witnessed checkpoints under a trust policy (c2sp.org/tlog-policy, tlog-cosignature): the
log's key must be one the policy names, and the checkpoint must carry valid cosignatures from
enough of the policy's witnesses for its quorum. A checkpoint a quorum of independent witnesses
cosigned is one the operator could not show to anyone else with a different history.

A cosignature also says when its witness saw the tree. One dated in the future (beyond the
COSIGNATURE_CLOCK_SKEW two honest clocks may disagree by) or older than the reader allows is
reported by one rule, cosignature_age_problems, which the monitor and verify.py share."""

import re
import time

from generator.verifier.core.errors import FormatError, NoteError
from generator.verifier.core.public_keys import VerifierKey
from generator.verifier.tlog.cosignature import CosignerKey, cosigned_by
from generator.verifier.tlog.policy import Policy, evaluate, witnessed_by


def policy_logs(policy: Policy, origin: str) -> list[VerifierKey]:
    """Every log key `policy` names for `origin`, in its order: during a rotation a policy names
    the retired key and the active one, and a checkpoint signed by any of them is the log's."""
    return [k for k in policy.log_keys if k.name == origin]


def ml_dsa_log_signers(policy: Policy, origin: str, checkpoint: bytes) -> tuple[list[CosignerKey], list[str]]:
    """The policy's ML-DSA-44 keys for `origin` whose signature on `checkpoint` verifies, and the
    problems: a line by one of them that does not verify, or none at all when the policy names
    any (a policy naming an ML-DSA-44 key for the log requires that signature type)."""
    keys = [k for k in policy.ml_dsa_log_keys if k.name == origin]
    try:
        signed = list(cosigned_by(checkpoint, keys))
    except NoteError as e:
        return [], [f"the log's ML-DSA-44 signature does not verify: {e}"]
    if keys and not signed:
        return [], [
            f"the policy requires the log's ML-DSA-44 signature and the checkpoint has none by "
            f"{', '.join(k.fingerprint for k in keys)}"
        ]
    return signed, []


def policy_problems(policy: Policy, origin: str, public_key: bytes, checkpoint: bytes) -> list[str]:
    """What keeps `checkpoint` (a note by `origin`'s Ed25519 `public_key`) from satisfying
    `policy`: a log key of each signature type the policy names for the log, then the quorum."""
    named = policy_logs(policy, origin)
    if named and not any(k.public_key == public_key for k in named):
        return [f"the policy names no log key {origin} with this site's key; it trusts another log"]
    if not named and not any(k.name == origin for k in policy.ml_dsa_log_keys):
        return [f"the policy names no log key {origin}; it trusts another log"]
    _, problems = ml_dsa_log_signers(policy, origin, checkpoint)
    if problems:
        return problems
    try:
        cosigned = witnessed_by(policy, checkpoint)
    except NoteError as e:
        return [f"a cosignature by a witness of the policy does not verify: {e}"]
    ok, missing = evaluate(policy, cosigned)
    if ok:
        return []
    return [
        f"the checkpoint lacks the cosignatures the policy's quorum ({policy.quorum}) needs; "
        f"cosigned by {', '.join(sorted(cosigned)) or 'no witness of the policy'}; missing: {', '.join(missing)}"
    ]


# Seconds a cosignature may be dated ahead of this clock: two honest clocks disagree by a few
# seconds (NTP keeps them within one); a minute also covers a witness that rounds up.
COSIGNATURE_CLOCK_SKEW = 60
_MAX_AGE_RE = re.compile(r"([1-9][0-9]{0,9})([smhd])")
_MAX_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_LAST_PRINTABLE_SECOND = 253402300799  # 9999-12-31T23:59:59Z, the last time strftime can write


def parse_max_age(text: str) -> int:
    """A maximum age as `--max-age` takes it, in seconds: a whole number from 1 without leading
    zeros, then its unit, s, m, h or d (`3600s`, `90m`, `36h`, `7d`); FormatError otherwise."""
    found = _MAX_AGE_RE.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        raise FormatError(
            f"{text!r} is not a duration; expected a whole number then s, m, h or d, e.g. 3600s, 36h or 7d"
        )
    return int(found.group(1)) * _MAX_AGE_UNITS[found.group(2)]


def _age_text(seconds: int) -> str:
    """`1d 12h 5m 3s`, the zero parts left out."""
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return " ".join(parts) or "0s"


def _cosigned_at(timestamp: int) -> str:
    if not 0 <= timestamp <= _LAST_PRINTABLE_SECOND:
        return f"timestamp {timestamp}"
    return f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(timestamp))} (timestamp {timestamp})"


def cosignature_age_problems(timestamps: dict[str, int], now: int, max_age: int | None) -> list[str]:
    """What is wrong with the times of these cosignatures (POSIX seconds, by witness name) on a
    clock that reads `now`: one dated more than COSIGNATURE_CLOCK_SKEW seconds in the future, one
    older than `max_age` seconds (None: any age will do). One line each, by name."""
    problems = []
    for name in sorted(timestamps):
        timestamp = timestamps[name]
        ahead, age = timestamp - now, now - timestamp
        dated = f"the cosignature by {name} is dated {_cosigned_at(timestamp)}"
        if ahead > COSIGNATURE_CLOCK_SKEW:
            problems.append(
                f"{dated}, {_age_text(ahead)} in the future of this clock's {_cosigned_at(now)}; expected at most "
                f"{COSIGNATURE_CLOCK_SKEW}s ahead"
            )
        elif max_age is not None and age > max_age:
            problems.append(
                f"{dated}, {_age_text(age)} before this clock's {_cosigned_at(now)}; expected at most "
                f"{_age_text(max_age)} old"
            )
    return problems
