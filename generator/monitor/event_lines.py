"""What the monitor prints of the entries it checked: the filters (--type, --gate, --subject), and
each new event as one escaped line or one JSON object."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from generator.monitor.monitor_errors import Unreadable
from generator.verifier import (
    LEAF_KEYS,
    FormatError,
    Ledger,
    RunEvent,
    parse_cosigner_vkey,
    parse_vkey,
    printable,
    show,
)

# Every type the verifier's Ledger knows: one it does not know is a rule problem, never printed.
EVENT_TYPES = tuple(LEAF_KEYS)

# What following a type also prints: a revocation is news about a certificate, a withdrawal news
# about a run (and so is its draw), and whoever follows certificates or runs must never miss that
# one was withdrawn.
_ALSO_SHOWN = {"certificate": ("revocation",), "run": ("run-withdrawn", "draw")}


@dataclass(frozen=True)
class Filters:
    """What to print. Given kinds combine with and; the values of one kind with or. `--type
    certificate` also prints revocations (of certificates), `--type run` withdrawals of runs: see
    _ALSO_SHOWN."""

    types: frozenset[str] = frozenset()
    gates: frozenset[str] = frozenset()
    subjects: frozenset[str] = frozenset()  # a subject's id or its exact name

    @classmethod
    def of(cls, types: Iterable[str] = (), gates: Iterable[str] = (), subjects: Iterable[str] = ()) -> Filters:
        unknown = sorted(set(types) - set(EVENT_TYPES))
        if unknown:
            raise Unreadable(f"--type {', '.join(unknown)}: not an event type (one of {', '.join(EVENT_TYPES)})")
        shown = set(types).union(*(_ALSO_SHOWN.get(t, ()) for t in types))
        return cls(frozenset(shown), frozenset(gates), frozenset(subjects))

    def match(self, leaf: dict[str, Any], ledger: Ledger) -> bool:
        """Whether an entry the ledger has just applied (so that what it refers to is known) is shown."""
        if self.types and leaf["type"] not in self.types:
            return False
        gate, run = _about(leaf, ledger)
        if self.gates and gate not in self.gates:
            return False
        return not self.subjects or (run is not None and bool({run.subject["id"], run.subject["name"]} & self.subjects))

    def absent(self, ledger: Ledger) -> list[str]:
        """What the filters name that the whole replayed log does not have: a typo shows nothing,
        which must not read as a quiet log."""
        subjects = {name for run in ledger.runs.values() for name in (run.subject["id"], run.subject["name"])}
        return [f"--gate {g}: the log has no gate {g}" for g in sorted(self.gates - set(ledger.gates))] + [
            f"--subject {s}: no run of the log has a subject with this id or name"
            for s in sorted(self.subjects - subjects)
        ]


def _about(leaf: dict[str, Any], ledger: Ledger) -> tuple[str | None, RunEvent | None]:
    """The gate and the run an applied entry is about, when it is about one: a certificate's run,
    and the run of the certificate an event names by its serial (a revocation)."""
    kind = leaf["type"]
    if kind == "gate":
        return leaf["id"], None
    if kind == "commit":
        return leaf["gate"], None
    if kind == "reveal":
        commit = ledger.commit(leaf["id"])
        return (commit.gate if commit else None), None
    if kind == "run":
        run_id = leaf["id"]
    elif isinstance(leaf.get("run"), str):
        run_id = leaf["run"]
    else:
        # A revocation names its certificate; a retirement draw is about no run.
        cert = ledger.certificates.get(leaf["serial"]) if isinstance(leaf.get("serial"), str) else None
        run_id = cert.run if cert else None
    run = ledger.runs.get(run_id) if run_id is not None else None
    return (run.gate if run else None), run


# The member that names what an event is about, for event types this module does not describe.
_ID_MEMBERS = ("id", "serial", "version", "vkey", "run")


def event_line(index: int, leaf: dict[str, Any], ledger: Ledger) -> str:
    """`<index> <at> <type> <id> <detail>`, every part escaped: names come from the site."""
    kind = leaf["type"]
    gate, run = _about(leaf, ledger)
    id_member = next((k for k in _ID_MEMBERS if k in leaf), None)
    ident = _key_text(leaf[id_member]) if id_member == "vkey" else str(leaf[id_member]) if id_member else "-"
    about = [f"gate={gate}"] if gate else []
    if run:
        about.append(f"subject={show(run.subject['name'])} ({run.subject['id']})")
    if kind == "gate":
        detail = [f"name={show(leaf['name'])}", "public" if leaf["public"] else "secret"]
    elif kind == "methodology":
        detail = [f"sha256={leaf['sha256']}"]
    elif kind in ("commit", "run"):
        detail = about
    elif kind == "reveal":
        detail = [*about, f"reason={leaf['reason']}"] + ([f"note={show(leaf['note'], 60)}"] if leaf["note"] else [])
    elif kind == "certificate":
        detail = [f"run={leaf['run']}", *about]
    else:  # an event this module has no words for (yet): what it is about, then its other members
        rest = sorted(k for k in leaf if k not in ("type", "v", "at", id_member))
        detail = [*about, *(f"{k}={_key_text(leaf[k]) if k == 'replaces' else show(leaf[k], 60)}" for k in rest)]
    return printable(" ".join([str(index), leaf["at"], kind, ident, *detail]))


def _key_text(vkey: Any) -> str:
    """A key of a key event as a reader compares it: its type and fingerprint (an ML-DSA-44 vkey is
    1,752 characters long), or the value as it is when it is no key."""
    for parse, kind in ((parse_vkey, "Ed25519"), (parse_cosigner_vkey, "ML-DSA-44")):
        try:
            return f"{kind}:{parse(vkey).fingerprint}"
        except (FormatError, TypeError):
            continue
    return show(vkey, 60)


def event_json(index: int, leaf: Any) -> str:
    # ASCII only: whatever the leaf holds reaches the terminal as \u escapes, which JSON decodes back.
    return json.dumps({"index": index, "leaf": leaf}, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
