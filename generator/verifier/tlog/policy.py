"""Trust policies (c2sp.org/tlog-policy): which logs and witnesses a verifier knows, and the
quorum of witness cosignatures a checkpoint needs.

    log <vkey> [<url>]
    witness <name> <vkey> [<url>]
    group <name> all|any|<k> <name>...
    quorum <name>|none

Items are separated by spaces and tabs; blank lines and lines whose first item starts with `#`
are ignored. Where the spec leaves a choice, this module reads it so:

- A log key is an Ed25519 note key (type 0x01) or an ML-DSA-44 key (type 0x06: a log signing
  its checkpoint in the cosignature format, as c2sp.org/tlog-checkpoint recommends); a witness
  key is an Ed25519 (0x04) or ML-DSA-44 (0x06) cosigner key (see cosignature.py). Other types
  are refused by name, not skipped. A log key's name is taken as the log's origin.
- "Signed by any one of the listed logs" is read per signature type: a checkpoint must carry a
  valid signature by one of the origin's Ed25519 keys if the policy names any, and by one of its
  ML-DSA-44 keys if it names any. A policy naming both types for one log requires both; one
  naming one type requires that one. (Rotation is unaffected: several keys of one type remain
  alternatives.) A reader that takes "any" literally accepts whatever this reading accepts.
- "Each defined name can be listed as a group member at most once" holds across the whole file,
  not within one group: so every witness counts towards the quorum along one path only, the
  spec's stated purpose (Sigsum's reference parser reads it the same way).
- Duplicate keys are looked for among logs and among witnesses, not between the two.
- A numeric threshold is decimal without sign or leading zeros, 1 <= k <= n.
- A URL is kept as written, but one starting with `#` is refused: it is a comment written at the
  end of a line, which the format does not have.
- The last line may lack its newline. Octets with the high bit set are opaque: a name is kept as
  its octets (decoded with surrogateescape, so two names are equal iff their octets are); a vkey
  must be UTF-8, as signed-note key names are.
- No limit on the number of logs, witnesses or groups (evaluation is linear in the file).
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from generator.verifier.core.errors import FormatError
from generator.verifier.core.public_keys import VerifierKey
from generator.verifier.tlog.cosignature import CosignerKey, cosigned_by, parse_cosigner_vkey
from generator.verifier.tlog.log_list import parse_log_key

QUORUM_NONE = "none"
_POLICY_SPACE_RE = re.compile(rb"[ \t]+")
_POLICY_THRESHOLD_RE = re.compile(r"[1-9][0-9]{0,8}|0")


@dataclass(frozen=True)
class PolicyLog:
    key: VerifierKey | CosignerKey
    url: str | None = None


@dataclass(frozen=True)
class PolicyWitness:
    """A witness: its name in the policy (which is not its key's name), key and URL."""

    name: str
    key: CosignerKey
    url: str | None = None


@dataclass(frozen=True)
class PolicyGroup:
    """A group witnesses a checkpoint iff at least `threshold` of its members do."""

    name: str
    threshold: int
    members: tuple[str, ...]


@dataclass(frozen=True)
class Policy:
    """A parsed policy: groups in the order defined (every member before its group), and the
    name of the quorum: a witness, a group, or `none`."""

    logs: tuple[PolicyLog, ...]
    witnesses: tuple[PolicyWitness, ...]
    groups: tuple[PolicyGroup, ...]
    quorum: str

    @property
    def log_keys(self) -> tuple[VerifierKey, ...]:
        """The Ed25519 keys to open a checkpoint with (open_note): any one of them may sign it."""
        return tuple(log.key for log in self.logs if isinstance(log.key, VerifierKey))

    @property
    def ml_dsa_log_keys(self) -> tuple[CosignerKey, ...]:
        """The logs' ML-DSA-44 keys: if the policy names any for an origin, one must sign."""
        return tuple(log.key for log in self.logs if isinstance(log.key, CosignerKey))


class _PolicyParser:
    def __init__(self, later: dict[str, int]) -> None:
        self.later = later  # every name a witness or group line defines, and the first such line
        self.defined: dict[str, int] = {QUORUM_NONE: 0}
        self.member_of: dict[str, tuple[str, int]] = {}
        self.logs: list[PolicyLog] = []
        self.log_lines: dict[bytes, int] = {}
        self.witnesses: list[PolicyWitness] = []
        self.witness_lines: dict[bytes, int] = {}
        self.groups: list[PolicyGroup] = []
        self.quorum: tuple[str, int] | None = None

    def new_name(self, name: str) -> None:
        if name == QUORUM_NONE:
            raise FormatError("'none' is predefined (the empty quorum); expected another name")
        if name in self.defined:
            raise FormatError(f"duplicate name {name!r} (defined on line {self.defined[name]}); expected a new name")

    def reference(self, name: str, role: str) -> None:
        if name in self.defined:
            return
        if name in self.later:
            raise FormatError(
                f"{role} {name!r} is defined later, on line {self.later[name]}; expected a witness or group "
                "defined on an earlier line"
            )
        raise FormatError(f"{role} {name!r} is not defined; expected a witness or group defined on an earlier line")

    def log(self, args: list[str], lineno: int) -> None:
        if not 1 <= len(args) <= 2:
            raise FormatError(f"a log line is `log <vkey> [<url>]`; found {_counted(args)} after `log`")
        key: VerifierKey | CosignerKey
        try:
            key = parse_log_key(_vkey_text(args[0]))
        except FormatError as e:
            hint = " (a witness's key: use a witness line)" if _is_cosigner_vkey(args[0]) else ""
            raise FormatError(
                f"log key: {e}{hint}; expected an Ed25519 note vkey (type 0x01) or an ML-DSA-44 vkey (type 0x06)"
            ) from None
        if key.public_key in self.log_lines:
            raise FormatError(f"duplicate log: the same public key as line {self.log_lines[key.public_key]}")
        self.log_lines[key.public_key] = lineno
        self.logs.append(PolicyLog(key, _url(args[1:])))

    def witness(self, args: list[str], lineno: int) -> None:
        if not 2 <= len(args) <= 3:
            raise FormatError(
                f"a witness line is `witness <name> <vkey> [<url>]`; found {_counted(args)} after `witness`"
            )
        self.new_name(args[0])
        try:
            key = parse_cosigner_vkey(_vkey_text(args[1]))
        except FormatError as e:
            raise FormatError(f"witness {args[0]!r} key: {e}; expected a cosigner vkey (type 0x04 or 0x06)") from None
        if key.public_key in self.witness_lines:
            raise FormatError(f"duplicate witness: the same public key as line {self.witness_lines[key.public_key]}")
        self.witness_lines[key.public_key] = lineno
        self.defined[args[0]] = lineno
        self.witnesses.append(PolicyWitness(args[0], key, _url(args[2:])))

    def group(self, args: list[str], lineno: int) -> None:
        if len(args) < 3:
            raise FormatError("a group line is `group <name> all|any|<k> <member>...` with at least one member")
        name, word, members = args[0], args[1], args[2:]
        self.new_name(name)
        n = len(members)
        if word == "all":
            k = n
        elif word == "any":
            k = 1
        elif _POLICY_THRESHOLD_RE.fullmatch(word):
            k = int(word)
            if not 1 <= k <= n:
                raise FormatError(f"group {name!r}: threshold {k} is out of range; expected 1 <= k <= {n}")
        else:
            raise FormatError(f"group {name!r}: threshold {word!r}; expected all, any or a decimal number 1..{n}")
        for m in members:
            if m == QUORUM_NONE:
                raise FormatError(f"group {name!r}: 'none' cannot be a group member")
            if m == name:
                raise FormatError(f"group {name!r} lists itself; expected witnesses or groups defined earlier")
            if m in self.member_of:
                parent, where = self.member_of[m]
                raise FormatError(
                    f"group {name!r}: {m!r} is already a member of group {parent!r} (line {where}); a name can be "
                    "a group member only once"
                )
            self.reference(m, f"group {name!r}: member")
            self.member_of[m] = (name, lineno)
        self.defined[name] = lineno
        self.groups.append(PolicyGroup(name, k, tuple(members)))

    def set_quorum(self, args: list[str], lineno: int) -> None:
        if len(args) != 1:
            raise FormatError(f"a quorum line is `quorum <name>`; found {_counted(args)} after `quorum`")
        if self.quorum is not None:
            raise FormatError(f"a second quorum line (the first is line {self.quorum[1]}); expected exactly one")
        self.reference(args[0], "quorum")
        self.quorum = (args[0], lineno)


def _counted(args: list[str]) -> str:
    hint = " (a comment must be on a line of its own)" if any(a.startswith("#") for a in args) else ""
    return f"{len(args)} item{'' if len(args) == 1 else 's'}{hint}"


def _vkey_text(item: str) -> str:
    raw = item.encode("utf-8", "surrogateescape")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError("a vkey is UTF-8 text") from None


def _is_cosigner_vkey(item: str) -> bool:
    try:
        parse_cosigner_vkey(_vkey_text(item))
    except FormatError:
        return False
    return True


def _url(rest: list[str]) -> str | None:
    if not rest:
        return None
    if rest[0].startswith("#"):
        raise FormatError("a comment must be on a line of its own (a URL cannot start with '#')")
    return rest[0]


def _policy_raw_lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline that ends the last line
    return lines


def _policy_lines(data: bytes) -> list[tuple[int, list[str]]]:
    """The numbered lines that are neither blank nor comments, split into items."""
    lines = _policy_raw_lines(data)
    out: list[tuple[int, list[str]]] = []
    for lineno, line in enumerate(lines, start=1):
        bad = next((b for b in line if (b < 0x20 and b != 0x09) or b == 0x7F), None)
        if bad is not None:
            hint = " (a Windows line ending?)" if bad == 0x0D else ""
            raise FormatError(f"policy line {lineno}: control character 0x{bad:02x}{hint}; only tab and newline")
        items = [i for i in _POLICY_SPACE_RE.split(line) if i]
        if not items or items[0].startswith(b"#"):
            continue
        out.append((lineno, [i.decode("utf-8", "surrogateescape") for i in items]))
    return out


def parse_policy(data: bytes | str) -> Policy:
    """Parse a policy file; raise FormatError naming the line and what was expected there."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    lines = _policy_lines(data)
    later: dict[str, int] = {}
    for lineno, items in lines:
        if items[0] in ("witness", "group") and len(items) > 1:
            later.setdefault(items[1], lineno)
    p = _PolicyParser(later)
    actions = {"log": p.log, "witness": p.witness, "group": p.group, "quorum": p.set_quorum}
    for lineno, items in lines:
        action = actions.get(items[0])
        try:
            if action is None:
                raise FormatError(f"unknown keyword {items[0]!r}; expected log, witness, group or quorum")
            action(items[1:], lineno)
        except FormatError as e:
            raise FormatError(f"policy line {lineno}: {e}") from None
    if p.quorum is None:
        count = len(_policy_raw_lines(data))
        raise FormatError(
            f"policy: {f'ends after line {count}' if count else 'is empty'} without a quorum line; expected exactly "
            "one `quorum <name>` line (`quorum none` requires no cosignature)"
        )
    return Policy(tuple(p.logs), tuple(p.witnesses), tuple(p.groups), p.quorum[0])


def evaluate(policy: Policy, valid_witness_names: Iterable[str]) -> tuple[bool, list[str]]:
    """Whether the witnesses named (by their policy names) satisfy the quorum and, if not, the
    sorted names of the witnesses whose missing cosignature keeps it from being satisfied.

    Those are the witnesses without a valid cosignature that sit below the quorum along
    unsatisfied groups only: any one of them cosigning brings an unsatisfied group closer to
    its threshold, while a witness in an already satisfied group would change nothing. Names
    that are not witnesses of the policy are ignored. The list is empty iff the quorum holds.
    """
    valid = set(valid_witness_names)
    witness_names = {w.name for w in policy.witnesses}
    holds: dict[str, bool] = {QUORUM_NONE: True}
    holds.update({name: name in valid for name in witness_names})
    members: dict[str, tuple[str, ...]] = {}
    for g in policy.groups:
        missing = [m for m in g.members if m not in holds]
        if missing:
            raise ValueError(f"group {g.name!r} lists {missing[0]!r} before it is defined")
        holds[g.name] = sum(holds[m] for m in g.members) >= g.threshold
        members[g.name] = g.members
    if policy.quorum not in holds:
        raise ValueError(f"the quorum {policy.quorum!r} is not defined")
    if holds[policy.quorum]:
        return True, []
    blocking: set[str] = set()
    seen: set[str] = set()
    stack = [policy.quorum]
    while stack:
        name = stack.pop()
        if name in seen or holds[name]:
            continue
        seen.add(name)
        if name in members:
            stack.extend(members[name])
        else:
            blocking.add(name)
    return False, sorted(blocking)


def witnessed_by(policy: Policy, note_bytes: bytes) -> dict[str, int]:
    """The policy's witnesses that validly cosigned the checkpoint note, by policy name, with
    each cosignature's timestamp (NoteError as verify_cosignatures). Each is checked on its own,
    since two witnesses of a policy may share a key name (a policy names each key once)."""
    stamps = cosigned_by(note_bytes, [w.key for w in policy.witnesses])
    return {w.name: stamps[w.key] for w in policy.witnesses if w.key in stamps}
