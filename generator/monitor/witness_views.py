"""What the witnesses of a trust policy say they saw of a log: each one's latest cosigned checkpoint,
read from its monitoring URL (c2sp.org/tlog-witness, "Monitor Retrieval Mechanism":
`GET <URL>/<lowercase hex SHA-256 of the origin>/checkpoint`, which tlog-mirror serves too) in
bounded size and time, and opened with the log keys the policy names for the origin and the
witness's own key.

The policy's URL of a witness is taken as its monitoring prefix as well as its submission prefix
(tlog-witness lets a witness use one value for both; tlog-policy recommends the submission prefix).
A witness that does not answer, answers 404 (it never cosigned a checkpoint of this log) or
answers with what does not verify gives no view: that is said, as a warning, and proves nothing
against the log. Comparing the views is split_views.py's work.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from generator import __version__
from generator.core.regularfile import TooLarge, read_regular
from generator.monitor.monitor_errors import Unreadable
from generator.verifier import (
    FormatError,
    HttpRemote,
    NoteError,
    Policy,
    PolicyWitness,
    RemoteUnreadable,
    cosigned_by,
    open_note,
    parse_checkpoint,
    parse_max_age,
    parse_policy,
    policy_logs,
    show,
    split_note,
    verify_cosignatures,
    windowed,
)

MAX_POLICY_BYTES = 1 << 20
MAX_VIEW_BYTES = 1 << 16  # a checkpoint with a hundred cosignatures is under 20 kB (ML-DSA-44's: 3.3 kB each)
VIEW_TIMEOUT = 10.0  # seconds a witness's connection may stay silent
VIEW_DEADLINE = 30.0  # seconds one witness may take in all, so that a slow one cannot hold the run
_AT_ONCE = 8  # witnesses asked at the same time

# A witness's monitoring URL and a path under it, to the bytes (None: 404), or RemoteUnreadable.
GetView = Callable[[str, str], bytes | None]


@dataclass(frozen=True)
class View:
    """A witness's latest cosigned checkpoint of the log, verified: the log's signature by a key the
    policy names for the origin, the witness's cosignature by its policy key."""

    witness: str  # its name in the policy
    url: str
    size: int
    root: bytes
    timestamp: int  # of the witness's cosignature: when it says it saw this tree


@dataclass(frozen=True)
class Unseen:
    """A witness of the policy that gave no view, and why: `kind` is one of "no-url" (the policy
    gives none, so it was not asked), "absent" (404), "unreachable", "invalid"."""

    witness: str
    url: str | None
    kind: str
    why: str


@dataclass(frozen=True)
class WitnessOptions:
    """`--witnesses POLICY` and `--max-age DURATION`, read and checked before the site is."""

    policy: Policy
    label: str  # the policy file, for messages
    max_age: int | None  # seconds; None: any age will do


def read_witness_options(policy_path: Path, max_age: str | None) -> WitnessOptions:
    """The policy file and the maximum age, parsed; Unreadable (exit status 2) naming the file and
    line, or the option, and what was expected."""
    age = None
    if max_age is not None:
        try:
            age = parse_max_age(max_age)
        except FormatError as e:
            raise Unreadable(f"--max-age: {e}") from None
    try:
        data = read_regular(policy_path, MAX_POLICY_BYTES)
    except TooLarge:
        raise Unreadable(f"--witnesses {policy_path}: larger than {MAX_POLICY_BYTES} bytes; not a policy") from None
    except OSError as e:
        raise Unreadable(f"--witnesses {policy_path}: {e.strerror or e}") from None
    try:
        policy = parse_policy(data)
    except FormatError as e:
        raise Unreadable(f"--witnesses {policy_path}: {e}") from None
    return WitnessOptions(policy, str(policy_path), age)


def view_path(origin: str) -> str:
    """Where a witness serves its latest checkpoint of `origin`, under its monitoring URL."""
    return hashlib.sha256(origin.encode("utf-8")).hexdigest() + "/checkpoint"


def http_get(url: str, rel: str) -> bytes | None:
    """GET `rel` under `url`, bounded in size and time: the bytes, None on 404 or 410, or
    RemoteUnreadable. A view is signed twice, so plain http anywhere can at worst hide it."""
    remote = HttpRemote(
        url, file_deadline=VIEW_DEADLINE, timeout=VIEW_TIMEOUT, user_agent=f"transparency-monitor/{__version__}"
    )
    try:
        return remote.get(rel, MAX_VIEW_BYTES)
    finally:
        remote.close()


def check_origin_named(options: WitnessOptions, origin: str) -> None:
    """The policy must name a key for the log, or no view could be verified (Unreadable)."""
    if not policy_logs(options.policy, origin) and not any(k.name == origin for k in options.policy.ml_dsa_log_keys):
        named = sorted({log.key.name for log in options.policy.logs})
        raise Unreadable(
            f"--witnesses {options.label}: the policy names no key of the log {origin}, so no witness's checkpoint "
            f"of it can be verified; it names the logs {', '.join(map(show, named)) or '(none)'}"
        )


def fetch_views(options: WitnessOptions, origin: str, get: GetView = http_get) -> tuple[list[View], list[Unseen]]:
    """Every witness of the policy that has a URL, asked for its latest checkpoint of `origin`, a
    few at once: the verified views and the witnesses that gave none, both in the policy's order."""
    check_origin_named(options, origin)
    rel = view_path(origin)

    def one(w: PolicyWitness) -> View | Unseen:
        if w.url is None:
            return Unseen(w.name, None, "no-url", "the policy gives no URL for it: not asked")
        try:
            data = get(w.url, rel)
        except RemoteUnreadable as e:
            return Unseen(w.name, w.url, "unreachable", f"no usable answer: {e}")
        if data is None:
            return Unseen(w.name, w.url, "absent", f"no checkpoint of {origin}: it never cosigned one")
        try:
            return open_view(options.policy, w, origin, data)
        except (NoteError, FormatError) as e:
            return Unseen(w.name, w.url, "invalid", f"its answer is not a checkpoint of {origin} it cosigned: {e}")

    views: list[View] = []
    unseen: list[Unseen] = []
    for result in windowed(one, options.policy.witnesses, _AT_ONCE, _AT_ONCE):
        if isinstance(result, View):
            views.append(result)
        else:
            unseen.append(result)
    return views, unseen


def open_view(policy: Policy, witness: PolicyWitness, origin: str, data: bytes) -> View:
    """A witness's answer opened: a checkpoint of `origin`, signed by ANY log key the policy names
    for the origin (of either type), and cosigned by `witness`'s key. NoteError or FormatError
    saying what is wrong.

    Any one key, not one of each type as a reader's policy asks: a witness keeps only the log's
    lines it verified (a witness that knows the Ed25519 key alone drops the ML-DSA-44 line), and a
    log showing a fork to a witness need sign it with one key only. A tree any trusted key signed
    is the log's word, and a split view among such trees is the log's misbehaviour all the same."""
    text, _ = split_note(data)
    ed25519 = policy_logs(policy, origin)
    ml_dsa = [k for k in policy.ml_dsa_log_keys if k.name == origin]
    try:
        if ed25519:
            text = open_note(data, ed25519).text
    except NoteError as e:
        if not ml_dsa or "no signature by a known key" not in str(e):
            raise
        ed25519 = []  # none of them signed: one of the ML-DSA-44 keys must
    if not ed25519 and not cosigned_by(data, ml_dsa):
        raise NoteError("note has no signature by a known key: none by the log keys the policy names")
    cp_origin, size, root = parse_checkpoint(text)
    if cp_origin != origin:
        raise NoteError(f"it is a checkpoint of {show(cp_origin)}")
    cosigned = verify_cosignatures(data, [witness.key])
    if witness.key.name not in cosigned:
        raise NoteError(f"it carries no cosignature by the witness's key {witness.key.vkey}")
    assert witness.url is not None
    return View(witness.name, witness.url, size, root, cosigned[witness.key.name])


def policy_trusts(options: WitnessOptions, origin: str, public_keys: Sequence[bytes]) -> bool:
    """Whether the policy names for `origin` one of the keys this monitor trusts for the log."""
    named = [k.public_key for k in policy_logs(options.policy, origin)]
    named += [k.public_key for k in options.policy.ml_dsa_log_keys if k.name == origin]
    return any(k in named for k in public_keys)
