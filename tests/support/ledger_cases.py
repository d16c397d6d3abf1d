"""Ledgers and run specs as tables of cases: leaf builders for every event of the format v1 §4 table, the
cases that break a replay rule (CASES) and those that break the run spec's shape (SPEC_CASES), each with what
the problem must say. tests/unit/verifier/test_ledger_rules.py runs them through the replay and the run rules,
tests/integration/site/test_schemas.py through the JSON Schemas."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

import rfc8785

from generator.verifier import MAX_LEAF_BYTES, Ledger, Problem, check_run_rules, parse_methodology
from tests.support.demo import REPO

PARAMS: dict[str, Any] = json.loads((REPO / "generator" / "defaults" / "methodology.json").read_text(encoding="utf-8"))
PARAMS_SHA = hashlib.sha256(rfc8785.dumps(PARAMS)).hexdigest()
MIN_SECRET = PARAMS["certify"]["min_items_secret_gate"]

T0 = "2026-01-05T09:00:00Z"
T1 = "2026-01-12T10:00:00Z"
T2 = "2026-02-01T00:00:00Z"
T3 = "2026-03-01T00:00:00Z"
T4 = "2026-04-01T00:00:00Z"
T5 = "2026-05-01T00:00:00Z"

SUBJECT = {"id": "extractbot", "name": "ExtractBot", "version": "1.0", "organization": "Acme Corp"}


def h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Leaf builders (format v1 §4 table)


def gate(gid: str = "a", public: bool = True, at: str = T0, name: str | None = None) -> dict[str, Any]:
    return {"type": "gate", "v": 1, "id": gid, "name": name or f"Gate {gid.upper()}", "public": public, "at": at}


def methodology(version: str = "2026.1", sha256: str = PARAMS_SHA, at: str = T0) -> dict[str, Any]:
    return {"type": "methodology", "v": 1, "version": version, "sha256": sha256, "at": at}


def commit(item_id: str, gate_id: str, at: str = T1, commitment: str | None = None) -> dict[str, Any]:
    return {
        "type": "commit",
        "v": 1,
        "id": item_id,
        "gate": gate_id,
        "commitment": commitment if commitment is not None else h(item_id),
        "at": at,
    }


def reveal(item_id: str, reason: str = "public-gate", at: str = T1, note: str = "revealed") -> dict[str, Any]:
    return {"type": "reveal", "v": 1, "id": item_id, "reason": reason, "note": note, "at": at}


def run(
    run_id: str = "run-1",
    gate_id: str = "b",
    at: str = T2,
    subject: dict[str, Any] | None = None,
    sha256: str | None = None,
) -> dict[str, Any]:
    return {
        "type": "run",
        "v": 1,
        "id": run_id,
        "sha256": sha256 or h(run_id),
        "subject": dict(subject or SUBJECT),
        "gate": gate_id,
        "at": at,
    }


def certificate(serial: str = "cert-1", run_id: str = "run-1", at: str = T3) -> dict[str, Any]:
    return {"type": "certificate", "v": 1, "serial": serial, "run": run_id, "sha256": h(serial), "at": at}


def revocation(serial: str = "cert-1", reason: str = "Withdrawn.", at: str = T4) -> dict[str, Any]:
    """A format v2 event: v is 2."""
    return {"type": "revocation", "v": 2, "serial": serial, "reason": reason, "at": at}


def with_(leaf: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = dict(leaf)
    out.update(changes)
    return out


def without(leaf: dict[str, Any], key: str) -> dict[str, Any]:
    out = dict(leaf)
    del out[key]
    return out


def replay(leaves: Iterable[dict[str, Any]]) -> Ledger:
    """Apply leaves that must all be valid."""
    ledger = Ledger()
    for i, leaf in enumerate(leaves):
        problems = ledger.apply(leaf, len(rfc8785.dumps(leaf)))
        assert problems == [], f"setup leaf entries[{i}] {leaf} was rejected: {[p.message for p in problems]}"
    return ledger


def messages(problems: list[Problem]) -> str:
    return "; ".join(f"{p.where}: {p.message}" for p in problems) or "(no problems)"


PREFIX = [gate("a", True), gate("b", False), methodology()]
WITH_ITEMS = [*PREFIX, commit("a-001", "a"), reveal("a-001"), commit("b-0001", "b")]
WITH_RUN = [*WITH_ITEMS, run("run-1", "a")]
WITH_CERTIFICATE = [*WITH_RUN, certificate("cert-1", "run-1")]

BIG_NOTE = "x" * (MAX_LEAF_BYTES + 1)

CASES: list[tuple[str, list[dict[str, Any]], dict[str, Any], str, int | None]] = [
    # id, prefix, leaf, message fragment, leaf_size (None: its canonical size)
    ("time-goes-backwards", [gate("a", at=T2)], gate("b", False, at=T1), "time goes backwards", None),
    ("time-malformed-space", [], gate("a", at="2026-01-05 09:00:00Z"), "malformed time", None),
    ("time-malformed-month-13", [], gate("a", at="2026-13-05T09:00:00Z"), "malformed time", None),
    ("time-malformed-fraction", [], gate("a", at="2026-01-05T09:00:00.5Z"), "malformed time", None),
    ("time-malformed-offset", [], gate("a", at="2026-01-05T09:00:00+00:00"), "malformed time", None),
    ("time-not-a-string", [], gate("a", at=1767603600), "malformed time", None),
    ("unknown-event-type", PREFIX, {"type": "audit", "v": 1, "at": T1}, "unknown event type", None),
    ("missing-type", PREFIX, {"v": 1, "id": "c", "at": T1}, "unknown event type", None),
    ("missing-member", [], without(gate("a"), "name"), "missing 'name'", None),
    ("missing-at", [], without(gate("a"), "at"), "missing 'at'", None),
    ("extra-member", [], with_(gate("a"), extra=1), "unknown member 'extra'", None),
    ("v-2", [], with_(gate("a"), v=2), "unsupported version", None),
    ("v-true", [], with_(gate("a"), v=True), "unsupported version", None),
    ("v-string", [], with_(gate("a"), v="1"), "unsupported version", None),
    ("gate-declared-twice", [gate("a")], gate("a", False, at=T1), "gate a is declared twice", None),
    ("gate-id-uppercase", [], gate("A"), "malformed gate id", None),
    ("gate-id-too-long", [], gate("a" * 17), "malformed gate id", None),
    ("gate-id-dash", [], gate("a-b"), "malformed gate id", None),
    ("gate-public-not-bool", [], with_(gate("a"), public=1), "must be true or false", None),
    ("commit-to-undeclared-gate", PREFIX, commit("c-001", "c"), "gate that was not declared", None),
    ("commit-before-gate-declared", [gate("a")], commit("b-0001", "b"), "gate that was not declared", None),
    (
        "item-committed-twice",
        [*PREFIX, commit("b-0001", "b")],
        commit("b-0001", "b", commitment=h("other")),
        "item b-0001 is committed twice",
        None,
    ),
    ("item-id-malformed", PREFIX, commit("B-0001", "b"), "malformed item id", None),
    ("commitment-uppercase", PREFIX, commit("b-0001", "b", commitment=h("x").upper()), "malformed commitment", None),
    ("commitment-short", PREFIX, commit("b-0001", "b", commitment=h("x")[:63]), "malformed commitment", None),
    ("reveal-uncommitted", PREFIX, reveal("a-009"), "not committed before", None),
    ("reveal-twice", WITH_ITEMS, reveal("a-001", at=T2), "item a-001 is revealed twice", None),
    ("reveal-secret-as-public-gate", WITH_ITEMS, reveal("b-0001", "public-gate"), "reason does not match gate b", None),
    (
        "reveal-public-as-retired",
        [*PREFIX, commit("a-001", "a")],
        reveal("a-001", "retired"),
        "reason does not match gate a",
        None,
    ),
    ("reveal-unknown-reason", WITH_ITEMS, reveal("b-0001", "leaked"), "unknown reveal reason", None),
    ("reveal-note-not-string", WITH_ITEMS, reveal("b-0001", "retired", note=None), "note must be a string", None),  # type: ignore[arg-type]
    (
        "methodology-published-twice",
        PREFIX,
        methodology(sha256=h("other"), at=T1),
        "methodology 2026.1 is published twice",
        None,
    ),
    ("methodology-version-malformed", [], methodology(version="v 1"), "malformed methodology version", None),
    ("methodology-hash-malformed", [], methodology(sha256="abc"), "malformed hash", None),
    ("run-id-twice", WITH_RUN, run("run-1", "a", at=T3), "run run-1 is registered twice", None),
    ("run-on-undeclared-gate", WITH_ITEMS, run("run-1", "z"), "gate that was not declared", None),
    (
        "run-subject-without-name",
        WITH_ITEMS,
        with_(run("run-1", "a"), subject={"id": "acme", "organization": "Acme"}),
        "missing 'name'",
        None,
    ),
    (
        "run-subject-look-alike",
        WITH_RUN,
        run("run-2", "a", at=T3, subject={**SUBJECT, "id": "other", "name": "extractb0t"}),
        "the name looks like the name of subject extractbot",
        None,
    ),
    (
        "run-subject-cyrillic-look-alike",
        WITH_RUN,
        run("run-2", "a", at=T3, subject={**SUBJECT, "id": "other", "name": "\u0415xtract\u0412ot"}),
        "mixes letters of scripts that are not written together",
        None,
    ),
    (
        "run-subject-renamed",
        WITH_RUN,
        run("run-2", "a", at=T3, subject={**SUBJECT, "name": "ExtractBot Pro"}),
        "subject extractbot was registered as 'ExtractBot': a subject keeps its name",
        None,
    ),
    (
        "run-subject-zero-width",
        WITH_ITEMS,
        run("run-1", "a", subject={**SUBJECT, "name": "Extract\u200bBot"}),
        "holds invisible, control or format characters",
        None,
    ),
    (
        "run-subject-decomposed",
        WITH_ITEMS,
        run("run-1", "a", subject={**SUBJECT, "organization": "Acme Corp\u0301"}),
        "not in Unicode normal form NFC",
        None,
    ),
    (
        "run-subject-without-id",
        WITH_ITEMS,
        with_(run("run-1", "a"), subject={"name": "X", "version": "1", "organization": "Acme"}),
        "missing 'id'",
        None,
    ),
    ("certificate-unregistered-run", WITH_RUN, certificate("cert-1", "run-9"), "run that was not registered", None),
    (
        "two-certificates-for-one-run",
        [*WITH_RUN, certificate("cert-1", "run-1")],
        certificate("cert-2", "run-1", at=T4),
        "run run-1 already has a certificate",
        None,
    ),
    (
        "serial-used-twice",
        [
            *WITH_RUN,
            run("run-2", "a", at=T2, subject={**SUBJECT, "id": "other", "name": "Other"}),
            certificate("cert-1", "run-1"),
        ],
        certificate("cert-1", "run-2", at=T4),
        "serial cert-1 is used twice",
        None,
    ),
    (
        "revocation-unknown-serial",
        WITH_CERTIFICATE,
        revocation("cert-9"),
        "revocation of a certificate that was not issued before",
        None,
    ),
    (
        "revocation-before-its-certificate",
        WITH_RUN,
        revocation("cert-1"),
        "revocation of a certificate that was not issued before",
        None,
    ),
    (
        "revocation-twice",
        [*WITH_CERTIFICATE, revocation()],
        revocation(reason="Again.", at=T5),
        "certificate cert-1 is revoked twice",
        None,
    ),
    ("revocation-v1", WITH_CERTIFICATE, with_(revocation(), v=1), "unsupported version", None),
    ("revocation-v-true", WITH_CERTIFICATE, with_(revocation(), v=True), "unsupported version", None),
    ("revocation-time-backwards", WITH_CERTIFICATE, revocation(at=T2), "time goes backwards", None),
    ("revocation-missing-reason", WITH_CERTIFICATE, without(revocation(), "reason"), "missing 'reason'", None),
    ("revocation-extra-member", WITH_CERTIFICATE, with_(revocation(), note="x"), "unknown member 'note'", None),
    ("revocation-reason-not-string", WITH_CERTIFICATE, with_(revocation(), reason=1), "reason must be a string", None),
    ("revocation-reason-empty", WITH_CERTIFICATE, revocation(reason=""), "must be a non-empty string", None),
    ("revocation-reason-blank", WITH_CERTIFICATE, revocation(reason=" \u3000"), "must be a non-empty string", None),
    (
        "revocation-reason-newline",
        WITH_CERTIFICATE,
        revocation(reason="Withdrawn.\nPASS"),
        "holds invisible, control or format characters",
        None,
    ),
    (
        "revocation-reason-bidi-override",
        WITH_CERTIFICATE,
        revocation(reason="\u202etext"),
        "holds invisible, control or format characters",
        None,
    ),
    ("revocation-serial-not-string", WITH_CERTIFICATE, with_(revocation(), serial=1), "serial must be a string", None),
    ("leaf-over-65535-bytes", PREFIX, reveal("a-001", note=BIG_NOTE), "larger than a C2SP entry bundle allows", None),
    ("leaf-size-argument-over-limit", [], gate("a"), "larger than a C2SP entry bundle allows", MAX_LEAF_BYTES + 1),
]


def secret_items(first: int, count: int) -> list[str]:
    return [f"b-{i:04d}" for i in range(first, first + count)]


PUBLIC_ITEMS = ["a-001", "a-002", "a-003"]
SECRET_ITEMS = secret_items(1, 25)


def base_leaves() -> list[dict[str, Any]]:
    """Gates a (public) and b (secret), the default methodology, three public items committed
    and revealed, twenty-five secret items committed."""
    leaves = [gate("a", True), gate("b", False), methodology()]
    for i in PUBLIC_ITEMS:
        leaves += [commit(i, "a"), reveal(i)]
    leaves += [commit(i, "b") for i in SECRET_ITEMS]
    return leaves


def spec(
    run_id: str = "run-1",
    gate_id: str = "b",
    items: list[str] | None = None,
    previous_run: str | None = None,
    **changes: Any,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "type": "run-spec",
        "v": 1,
        "id": run_id,
        "previous_run": previous_run,
        "subject": dict(SUBJECT),
        "gate": gate_id,
        "question": "Does it extract the fields?",
        "items": list(items if items is not None else secret_items(1, MIN_SECRET)),
        "budget": {"max_tokens": 4096},
        "repetitions": 1,
        "metrics": ["pass_rate"],
        "exclusion_rules": ["The item's source document was unreadable."],
        "methodology": {"version": "2026.1", "sha256": PARAMS_SHA},
        "judge": {
            "provider": "Independent Judges Ltd",
            "model": "judge-1",
            "version": "1",
            "rubric_sha256": h("rubric"),
            "seed": 7,
        },
    }
    doc.update(changes)
    return doc


def run_leaf(s: dict[str, Any], at: str = T2) -> dict[str, Any]:
    return run(s["id"], s["gate"], at=at, subject=s["subject"], sha256=hashlib.sha256(rfc8785.dumps(s)).hexdigest())


def rules(
    ledger: Ledger,
    s: dict[str, Any],
    earlier: dict[str, dict[str, Any]] | None = None,
    params: dict[str, Any] | None = PARAMS,
) -> list[Problem]:
    return check_run_rules(
        ledger, ledger.runs[s["id"]], s, parse_methodology(params) if params is not None else None, earlier or {}
    )


SPEC_CASES = [
    ("items-empty", spec(items=[]), "must be a non-empty list of item ids"),
    ("items-repeated", spec(items=[*secret_items(1, 10), "b-0001"]), "items must be distinct"),
    ("items-malformed-id", spec(items=["B 1"]), "must be a non-empty list of item ids"),
    ("repetitions-2", spec(repetitions=2), "repetitions is 1 in v1"),
    ("repetitions-true", spec(repetitions=True), "repetitions is 1 in v1"),
    ("previous-run-malformed", spec(previous_run="Run 1"), "must be a run id or null"),
    ("wrong-type", spec(type="run"), "wrong type or version"),
    ("unknown-member", spec(extra=1), "unknown member 'extra'"),
    ("judge-seed-float-like", spec(judge={**spec()["judge"], "seed": "7"}), "must be an integer or null"),
    ("methodology-hash-malformed", spec(methodology={"version": "2026.1", "sha256": "x"}), "malformed hash"),
    ("subject-empty-organization", spec(subject={**SUBJECT, "organization": "  "}), "must be a non-empty string"),
    ("judge-provider-empty", spec(judge={**spec()["judge"], "provider": "   "}), "must be a non-empty string"),
    (
        "judge-provider-padded",
        spec(judge={**spec()["judge"], "provider": "  ACME corp\t"}),
        "invisible, control or format characters",
    ),
]
