"""Witnessed checkpoints under a trust policy (c2sp.org/tlog-policy, tlog-cosignature): the
log's key must be one the policy names, and the checkpoint must carry valid cosignatures from
enough of the policy's witnesses for its quorum. A checkpoint a quorum of independent witnesses
cosigned is one the operator could not show to anyone else with a different history."""

from generator.verifier.core.errors import NoteError
from generator.verifier.core.public_keys import VerifierKey
from generator.verifier.tlog.policy import Policy, evaluate, witnessed_by


def policy_logs(policy: Policy, origin: str) -> list[VerifierKey]:
    """Every log key `policy` names for `origin`, in its order: during a rotation a policy names
    the retired key and the active one, and a checkpoint signed by any of them is the log's."""
    return [k for k in policy.log_keys if k.name == origin]


def policy_problems(policy: Policy, origin: str, public_key: bytes, checkpoint: bytes) -> list[str]:
    """What keeps `checkpoint` (a note by `origin`'s `public_key`) from satisfying `policy`."""
    if not any(k.public_key == public_key for k in policy_logs(policy, origin)):
        return [f"the policy names no log key {origin} with this site's key; it trusts another log"]
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
