"""The ledger (format v1 §4, and format v2's events): its event types, and the replay checking every rule in order."""

import bisect
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.core.formats import (
    GATE_RE,
    ID_RE,
    REVEAL_REASONS,
    VERSION_RE,
    check_keys,
    is_gate_id,
    is_hex64,
    is_id,
    is_int,
    is_time,
)
from generator.verifier.core.idindex import IdIndex
from generator.verifier.core.text import show, type_name
from generator.verifier.rules.draws import (
    DRAW,
    RETIREMENT_DRAW,
    Draw,
    RetirementDraw,
    draw_event_problems,
    pending_reveal_problem,
    retirement_draw_event_problems,
)
from generator.verifier.rules.events import CertificateEvent, Commit, Gate, MethodologyEvent, Reveal, RunEvent
from generator.verifier.rules.labelsets import LabelSetEvent, label_set_event_problems
from generator.verifier.rules.subjects import known_subject_problems, prose_problems, subject_fold
from generator.verifier.rules.withdrawals import RUN_WITHDRAWN, Revocation, Withdrawal, withdrawal_problems
from generator.verifier.tlog.keyring import KEY_ADDITION, KEY_REVOCATION, KEY_ROTATION, KeyRing

MAX_LEAF_BYTES = 65535
LEAF_KEYS: dict[str, tuple[str, ...]] = {
    "gate": ("type", "v", "id", "name", "public", "at"),
    "methodology": ("type", "v", "version", "sha256", "at"),
    "commit": ("type", "v", "id", "gate", "commitment", "at"),
    "reveal": ("type", "v", "id", "reason", "note", "at"),
    "run": ("type", "v", "id", "sha256", "subject", "gate", "at"),
    "certificate": ("type", "v", "serial", "run", "sha256", "at"),
    "revocation": ("type", "v", "serial", "reason", "at"),
    "label-set": ("type", "v", "id", "run", "sha256", "at"),
    KEY_ROTATION: ("type", "v", "vkey", "replaces", "at"),
    KEY_REVOCATION: ("type", "v", "vkey", "reason", "compromised_at", "at"),
    KEY_ADDITION: ("type", "v", "vkey", "at"),
    RUN_WITHDRAWN: ("type", "v", "run", "reason", "at"),
    DRAW: ("type", "v", "run", "round", "signature", "items", "at"),
    RETIREMENT_DRAW: ("type", "v", "round", "signature", "items", "at"),
}
# An event that format v2 adds carries v 2, so that a v1 verifier refuses it rather than misread it.
LEAF_VERSIONS = {"revocation": 2, "label-set": 2, KEY_ROTATION: 2, KEY_REVOCATION: 2, RUN_WITHDRAWN: 2}
LEAF_VERSIONS |= {DRAW: 2, RETIREMENT_DRAW: 2, KEY_ADDITION: 2}
_LEAF_KEY_SETS = {kind: frozenset(keys) for kind, keys in LEAF_KEYS.items()}
# The JSON type of each member (beyond type, v and at), checked before any lookup uses it.
_LEAF_TYPES: dict[str, dict[str, type]] = {
    "gate": {"id": str, "name": str, "public": bool},
    "methodology": {"version": str, "sha256": str},
    "commit": {"id": str, "gate": str, "commitment": str},
    "reveal": {"id": str, "reason": str, "note": str},
    "run": {"id": str, "sha256": str, "subject": dict, "gate": str},
    "certificate": {"serial": str, "run": str, "sha256": str},
    "revocation": {"serial": str, "reason": str},
    "label-set": {"id": str, "run": str, "sha256": str},
    KEY_ROTATION: {"vkey": str, "replaces": str},
    KEY_REVOCATION: {"vkey": str, "reason": str, "compromised_at": str},
    KEY_ADDITION: {"vkey": str},
    RUN_WITHDRAWN: {"run": str, "reason": str},
    DRAW: {"run": str, "signature": str, "items": list},
    RETIREMENT_DRAW: {"signature": str, "items": list},
}
_TYPE_WORDS = {str: "a string", bool: "true or false", dict: "an object", list: "a list"}
Rule = Callable[[int, dict[str, Any]], list[Problem]]


class Ledger:
    """Replays ledger leaves in order, keeping what later checks need and nothing more.

    Built for a million commits: per committed item it keeps about 70 bytes in flat arrays (id,
    commitment, leaf index, gate, time) and no Python object, never the leaf itself. Used by the
    verifier on a site and by the generator on its data, so both enforce the same rules.
    """

    def __init__(self) -> None:
        self.size = 0
        self.last_at = ""
        self.gates: dict[str, Gate] = {}
        self.methodologies: dict[str, MethodologyEvent] = {}
        self.reveals: dict[str, Reveal] = {}
        self.runs: dict[str, RunEvent] = {}
        self.certificates: dict[str, CertificateEvent] = {}
        self.certificate_of_run: dict[str, str] = {}
        self.revocations: dict[str, Revocation] = {}  # by serial, in ledger order
        self.label_sets: dict[str, LabelSetEvent] = {}  # blind human label sets, in ledger order
        self.withdrawals: dict[str, Withdrawal] = {}  # by run, in ledger order
        self.draws: dict[str, Draw] = {}  # drawn runs' draws, by run
        self.retirement_draws: list[RetirementDraw] = []  # in ledger order
        self.drawn_retirement: dict[str, int] = {}  # item -> its retirement draw's position in that list
        self._pending_reveals: list[str] = []  # what the last retirement draw still has to reveal, reversed
        self.keys = KeyRing()  # the program's keys over time (format v2 key events)
        # The runs of each (subject name, gate), in ledger order: previous_run and the
        # one-observation rule look at one subject's runs, never at all of them.
        self.runs_by_subject: dict[tuple[str, str], list[RunEvent]] = {}
        self.subject_names: dict[str, str] = {}  # subject id -> its name
        self._subject_folds: dict[str, str] = {}  # subject_fold(name) -> subject id
        self._commit_ids = IdIndex()
        self._commit_index = array("q")
        self._commit_gate = array("H")
        self._commitments = bytearray()
        # `at` never decreases, so times are stored once each and commits point at them.
        self._times: list[str] = []
        self._commit_time = array("I")
        self._gate_ids: list[str] = []
        self._gate_ordinals: dict[str, int] = {}
        self._previous_at = ""

    # -- queries

    @property
    def commit_count(self) -> int:
        return len(self._commit_ids)

    def is_committed(self, item_id: str) -> bool:
        return item_id in self._commit_ids

    def commit_position(self, item_id: str) -> int | None:
        return self._commit_ids.get(item_id)  # its row in the commitment list, counted from 0

    def commitment_bytes(self, stop: int) -> bytes:
        return bytes(self._commitments[: 32 * stop])  # the first `stop` commitments, 32 bytes each

    def commit(self, item_id: str) -> Commit | None:
        n = self._commit_ids.get(item_id)
        return None if n is None else self._commit_at(n)

    def commit_place(self, item_id: str) -> tuple[int, str] | None:  # leaf and gate: what a run asks of its items
        n = self._commit_ids.get(item_id)
        return None if n is None else (self._commit_index[n], self._gate_ids[self._commit_gate[n]])

    def _commit_at(self, n: int) -> Commit:
        gate, at = self._gate_ids[self._commit_gate[n]], self._times[self._commit_time[n]]
        commitment = self._commitments[32 * n : 32 * n + 32].hex()
        return Commit(self._commit_ids.key(n), gate, commitment, self._commit_index[n], at)

    def commits(self, start: int = 0, stop: int | None = None) -> Iterator[Commit]:
        """Commits in ledger order (the `start`-th up to the `stop`-th)."""
        for n in range(start, len(self._commit_ids) if stop is None else min(stop, len(self._commit_ids))):
            yield self._commit_at(n)

    def commits_before(self, index: int) -> int:  # how many commits precede leaf `index`
        return bisect.bisect_left(self._commit_index, index)

    def runs_before(self, run: RunEvent) -> list[RunEvent]:
        """The runs registered before `run` for the same subject name and gate, in order."""
        runs = self.runs_by_subject.get((str(run.subject.get("name")), run.gate), [])
        return runs[: bisect.bisect_left(runs, run.index, key=lambda r: r.index)]

    def public_gates(self) -> set[str]:
        return {g.id for g in self.gates.values() if g.public}

    def gate_counts(self) -> dict[str, tuple[int, int]]:  # per gate: its items committed, and revealed
        committed = Counter(self._commit_gate)
        revealed = Counter(self._commit_gate[self._commit_ids.get(i) or 0] for i in self.reveals)  # all committed
        return {g: (committed[o], revealed[o]) for o, g in enumerate(self._gate_ids)}

    # -- replay

    def apply(self, leaf: Any, leaf_size: int | None = None) -> list[Problem]:
        """Apply the next leaf; return the rules it breaks (each located as 'entries[i]')."""
        index = self.size
        self.size += 1
        where = f"entries[{index}]"
        problems = self._apply(index, leaf, leaf_size)
        return [p.at("", where) for p in problems]

    def _apply(self, index: int, leaf: Any, leaf_size: int | None) -> list[Problem]:
        if not isinstance(leaf, dict):
            return [Problem("a leaf must be an object", found=type_name(leaf))]
        if leaf_size is not None and leaf_size > MAX_LEAF_BYTES:
            limit, size = f"at most {MAX_LEAF_BYTES} bytes", f"{leaf_size} bytes"
            return [Problem("leaf is larger than a C2SP entry bundle allows", "", "", limit, size)]
        if self._pending_reveals:
            pending = pending_reveal_problem(self._pending_reveals.pop(), leaf, self.retirement_draws[-1])
            if pending is not None:
                self._pending_reveals.clear()
                return [pending]
        kind = leaf.get("type")
        keys = LEAF_KEYS.get(kind) if isinstance(kind, str) else None
        if keys is None or not isinstance(kind, str):
            expected = " | ".join(LEAF_KEYS)
            return [Problem("unknown event type (a v1 verifier never skips one)", "", "type", expected, show(kind))]
        problems = [] if leaf.keys() == _LEAF_KEY_SETS[kind] else check_keys(leaf, keys)
        version = LEAF_VERSIONS.get(kind, 1)
        if not (is_int(leaf.get("v")) and leaf["v"] == version):
            problems.append(Problem("unsupported version", where="v", expected=str(version), found=show(leaf.get("v"))))
        at = leaf.get("at")
        if not is_time(at):
            problems.append(Problem("malformed time", where="at", expected="YYYY-MM-DDTHH:MM:SSZ", found=show(at)))
        elif at < self.last_at:
            problems.append(Problem("time goes backwards", where="at", expected=f"{self.last_at} or later", found=at))
        else:
            previous_at, self.last_at = self.last_at, at
            self.keys.note_time(index, at)
            if kind == RETIREMENT_DRAW:
                self._previous_at = previous_at
        for k, t in _LEAF_TYPES[kind].items():
            if k in leaf and type(leaf[k]) is not t:
                problems.append(Problem(f"{k} must be {_TYPE_WORDS[t]}", where=k, found=show(leaf[k])))
        if problems:
            return problems
        ring = {KEY_ROTATION: self.keys.apply_rotation, KEY_ADDITION: self.keys.apply_addition}
        apply: Rule = ring.get(kind) or getattr(self, f"_apply_{kind.replace('-', '_')}")
        return apply(index, leaf)

    def _apply_gate(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        gid = leaf["id"]
        problems = []
        if not is_gate_id(gid):
            problems.append(Problem("malformed gate id", where="id", expected=GATE_RE.pattern, found=show(gid)))
        if not (isinstance(leaf["name"], str) and leaf["name"]):
            problems.append(Problem("gate name must be a non-empty string", where="name", found=show(leaf["name"])))
        if not isinstance(leaf["public"], bool):
            problems.append(Problem("must be true or false", where="public", found=show(leaf["public"])))
        if gid in self.gates:
            problems.append(
                Problem(
                    f"gate {gid} is declared twice",
                    where="id",
                    expected="declared once",
                    found=f"declared before at entries[{self.gates[gid].index}]",
                )
            )
        if problems:
            return problems
        if len(self._gate_ids) >= 65535:
            return [Problem("too many gates")]
        self.gates[gid] = Gate(gid, leaf["name"], leaf["public"], index, leaf["at"])
        self._gate_ordinals[gid] = len(self._gate_ids)
        self._gate_ids.append(gid)
        return []

    def _apply_methodology(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        version, digest = leaf["version"], leaf["sha256"]
        problems = []
        if not (isinstance(version, str) and VERSION_RE.fullmatch(version)):
            problems.append(
                Problem(
                    "malformed methodology version", where="version", expected=VERSION_RE.pattern, found=show(version)
                )
            )
        if not is_hex64(digest):
            problems.append(
                Problem("malformed hash", where="sha256", expected="64 lowercase hex digits", found=show(digest))
            )
        if version in self.methodologies:
            problems.append(
                Problem(
                    f"methodology {version} is published twice",
                    where="version",
                    found=f"published before at entries[{self.methodologies[version].index}]",
                )
            )
        if not problems:
            self.methodologies[version] = MethodologyEvent(version, digest, index, leaf["at"])
        return problems

    def _apply_commit(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        item_id, gate, commitment = leaf["id"], leaf["gate"], leaf["commitment"]
        problems = []
        if not is_id(item_id):
            problems.append(Problem("malformed item id", where="id", expected=ID_RE.pattern, found=show(item_id)))
        elif (earlier := self._commit_ids.get(item_id)) is not None:
            problems.append(
                Problem(
                    f"item {item_id} is committed twice",
                    where="id",
                    found=f"committed before at entries[{self._commit_index[earlier]}]",
                )
            )
        if gate not in self.gates:
            problems.append(
                Problem(
                    "commit to a gate that was not declared before",
                    where="gate",
                    expected=", ".join(self.gates) or "a declared gate",
                    found=show(gate),
                )
            )
        if not is_hex64(commitment):
            problems.append(
                Problem(
                    "malformed commitment",
                    where="commitment",
                    expected="64 lowercase hex digits",
                    found=show(commitment),
                )
            )
        if problems:
            return problems
        self._commit_ids.add(item_id)
        self._commit_index.append(index)
        self._commit_gate.append(self._gate_ordinals[gate])
        self._commitments += bytes.fromhex(commitment)
        if not self._times or self._times[-1] != leaf["at"]:
            self._times.append(leaf["at"])
        self._commit_time.append(len(self._times) - 1)
        return []

    def _apply_reveal(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        item_id, reason, note = leaf["id"], leaf["reason"], leaf["note"]
        problems = []
        c = self.commit(item_id) if isinstance(item_id, str) else None
        if c is None:
            problems.append(Problem("reveal of an item that was not committed before", where="id", found=show(item_id)))
        elif item_id in self.reveals:
            problems.append(
                Problem(
                    f"item {item_id} is revealed twice",
                    where="id",
                    found=f"revealed before at entries[{self.reveals[item_id].index}]",
                )
            )
        if reason not in REVEAL_REASONS:
            problems.append(
                Problem(
                    "unknown reveal reason", where="reason", expected=" | ".join(REVEAL_REASONS), found=show(reason)
                )
            )
        elif c is not None:
            # The reason states which kind of gate the item is from; a mismatch misleads readers.
            want = "public-gate" if self.gates[c.gate].public else "retired"
            if reason != want:
                problems.append(
                    Problem(f"reason does not match gate {c.gate}", where="reason", expected=want, found=reason)
                )
        if not isinstance(note, str):
            problems.append(Problem("note must be a string", where="note", found=type_name(note)))
        if not problems:
            self.reveals[item_id] = Reveal(item_id, reason, note, index, leaf["at"])
        return problems

    def _apply_run(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        run_id = leaf["id"]
        problems = []
        if not is_id(run_id):
            problems.append(Problem("malformed run id", where="id", expected=ID_RE.pattern, found=show(run_id)))
        elif run_id in self.runs:
            problems.append(
                Problem(
                    f"run {run_id} is registered twice",
                    where="id",
                    found=f"registered before at entries[{self.runs[run_id].index}]",
                )
            )
        if not is_hex64(leaf["sha256"]):
            problems.append(Problem("malformed hash", where="sha256", found=show(leaf["sha256"])))
        problems += self.subject_problems(leaf["subject"])
        if leaf["gate"] not in self.gates:
            problems.append(
                Problem("run on a gate that was not declared before", where="gate", found=show(leaf["gate"]))
            )
        if not problems:
            sid, name = leaf["subject"]["id"], leaf["subject"]["name"]
            self.subject_names.setdefault(sid, name)
            self._subject_folds.setdefault(subject_fold(name), sid)
            self.runs[run_id] = RunEvent(run_id, leaf["sha256"], leaf["subject"], leaf["gate"], index, leaf["at"])
            self.runs_by_subject.setdefault((name, leaf["gate"]), []).append(self.runs[run_id])
        return problems

    def subject_problems(self, subject: Any) -> list[Problem]:
        """A new run's subject: subjects.known_subject_problems, against the subjects so far."""
        return known_subject_problems(subject, self.subject_names, self._subject_folds)

    def _apply_certificate(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        serial, run_id = leaf["serial"], leaf["run"]
        problems = []
        if not is_id(serial):
            problems.append(Problem("malformed serial", where="serial", expected=ID_RE.pattern, found=show(serial)))
        elif serial in self.certificates:
            problems.append(
                Problem(
                    f"serial {serial} is used twice",
                    where="serial",
                    found=f"used before at entries[{self.certificates[serial].index}]",
                )
            )
        if run_id not in self.runs:
            problems.append(
                Problem("certificate for a run that was not registered before", where="run", found=show(run_id))
            )
        elif run_id in self.certificate_of_run:
            problems.append(
                Problem(f"run {run_id} already has a certificate", where="run", found=self.certificate_of_run[run_id])
            )
        elif run_id in self.withdrawals:
            problems.append(
                Problem(f"run {run_id} was withdrawn at entries[{self.withdrawals[run_id].index}]", "", "run")
            )
        if not is_hex64(leaf["sha256"]):
            problems.append(Problem("malformed hash", where="sha256", found=show(leaf["sha256"])))
        if not problems:
            self.certificates[serial] = CertificateEvent(serial, run_id, leaf["sha256"], index, leaf["at"])
            self.certificate_of_run[run_id] = serial
        return problems

    def _apply_key_revocation(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        if not is_time(leaf["compromised_at"]):
            return [Problem("malformed time", where="compromised_at", expected="YYYY-MM-DDTHH:MM:SSZ")]
        problems = prose_problems(leaf["reason"], "reason")
        return problems or self.keys.apply_revocation(index, leaf)

    def _apply_revocation(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        serial, earlier = leaf["serial"], self.revocations.get(leaf["serial"])
        problems = prose_problems(leaf["reason"], "reason")
        if serial not in self.certificates:
            problems.append(
                Problem("revocation of a certificate that was not issued before", "", "serial", found=serial)
            )
        elif earlier is not None:
            problems.append(
                Problem(f"certificate {serial} is revoked twice (first at entries[{earlier.index}])", where="serial")
            )
        if not problems:
            self.revocations[serial] = Revocation(serial, leaf["reason"], index, leaf["at"])
        return problems

    def _apply_run_withdrawn(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        run = leaf["run"]
        found = withdrawal_problems(leaf, run in self.runs, self.certificate_of_run.get(run), self.withdrawals.get(run))
        if not found:
            self.withdrawals[run] = Withdrawal(run, leaf["reason"], index, leaf["at"])
        return found

    def _apply_draw(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        run, decided = leaf["run"], self.certificate_of_run.get(leaf["run"])
        if decided is None and run in self.withdrawals:
            decided = f"withdrawn at entries[{self.withdrawals[run].index}]"
        problems = draw_event_problems(leaf, run in self.runs, decided, self.draws.get(run))
        if not problems:
            self.draws[run] = Draw(run, leaf["round"], leaf["signature"], tuple(leaf["items"]), index, leaf["at"])
        return problems

    def _apply_retirement_draw(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        problems = retirement_draw_event_problems(leaf)
        if not problems:
            items = tuple(leaf["items"])
            self.retirement_draws.append(
                RetirementDraw(leaf["round"], leaf["signature"], items, index, leaf["at"], self._previous_at)
            )
            self.drawn_retirement.update(dict.fromkeys(items, len(self.retirement_draws) - 1))
            self._pending_reveals = list(reversed(items))
        return problems

    def decided_at(self, run_id: str) -> int | None:  # the leaf that decided a run: certificate or withdrawal
        serial, withdrawn = self.certificate_of_run.get(run_id), self.withdrawals.get(run_id)
        return self.certificates[serial].index if serial else withdrawn.index if withdrawn else None

    def _apply_label_set(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        certified = self.certificate_of_run.get(leaf["run"])
        problems = label_set_event_problems(
            leaf,
            self.label_sets.get(leaf["id"]),
            leaf["run"] in self.runs,
            None if certified is None else (certified, self.certificates[certified].index),
        )
        if not problems:
            self.label_sets[leaf["id"]] = LabelSetEvent(leaf["id"], leaf["run"], leaf["sha256"], index, leaf["at"])
        return problems

    def final_problems(self) -> list[Problem]:
        """Rules that only the whole ledger can settle."""
        problems = []
        if self._pending_reveals:
            draw = self.retirement_draws[-1]
            problems.append(
                Problem(
                    f"the retirement drawn at entries[{draw.index}] leaves items unrevealed",
                    expected="a reveal of each item it drew",
                    found=", ".join(reversed(self._pending_reveals)),
                )
            )
        public = self.public_gates()
        public_ordinals = {self._gate_ordinals[g] for g in public}
        for n, gate_ordinal in enumerate(self._commit_gate):
            if gate_ordinal not in public_ordinals:
                continue
            item_id, gate = self._commit_ids.key(n), self._gate_ids[gate_ordinal]
            if item_id not in self.reveals:
                problems.append(
                    Problem(
                        f"item {item_id} of public gate {gate} is never revealed",
                        where=f"entries[{self._commit_index[n]}]",
                    )
                )
        return problems
