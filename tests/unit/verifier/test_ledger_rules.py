"""The ledger's replay rules (format v1 §4) and the run rules (format v1 §6), table-driven.

`generator.verify.Ledger` is shared by the verifier and the generator, so every rule here is
enforced on a published site and refused at the source.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import rfc8785

from generator.verifier import (
    MAX_LEAF_BYTES,
    Ledger,
    check_methodology,
    check_run_spec,
)
from tests.support.ledger_cases import (
    CASES,
    MIN_SECRET,
    PARAMS,
    PARAMS_SHA,
    PREFIX,
    PUBLIC_ITEMS,
    SPEC_CASES,
    SUBJECT,
    T1,
    T2,
    T3,
    T4,
    T5,
    WITH_CERTIFICATE,
    base_leaves,
    certificate,
    commit,
    gate,
    h,
    messages,
    methodology,
    replay,
    reveal,
    revocation,
    rules,
    run,
    run_leaf,
    secret_items,
    spec,
)

# ---------------------------------------------------------------------------------------------
# A valid ledger


VALID_SEQUENCE = [
    gate("a", True),
    gate("b", False),
    methodology(),
    commit("a-001", "a"),
    reveal("a-001", "public-gate"),
    commit("b-0001", "b"),
    run("run-1", "a"),
    certificate("cert-1", "run-1"),
    reveal("b-0001", "retired", at=T4),
]


def test_valid_sequence_has_no_problems() -> None:
    ledger = Ledger()
    for i, leaf in enumerate(VALID_SEQUENCE):
        problems = ledger.apply(leaf, len(rfc8785.dumps(leaf)))
        assert problems == [], f"entries[{i}] ({leaf['type']}) rejected: {messages(problems)}"
    assert ledger.final_problems() == [], messages(ledger.final_problems())
    assert ledger.size == len(VALID_SEQUENCE)
    assert list(ledger.gates) == ["a", "b"]
    assert ledger.public_gates() == {"a"}
    assert list(ledger.methodologies) == ["2026.1"]
    assert ledger.commit_count == 2
    c = ledger.commit("b-0001")
    assert c is not None and (c.gate, c.commitment, c.index, c.at) == ("b", h("b-0001"), 5, T1)
    assert [x.id for x in ledger.commits()] == ["a-001", "b-0001"]
    assert set(ledger.reveals) == {"a-001", "b-0001"}
    assert list(ledger.runs) == ["run-1"]
    assert ledger.certificate_of_run == {"run-1": "cert-1"}
    assert ledger.last_at == T4


def test_time_may_repeat() -> None:
    """`at` never decreases: equal times are fine."""
    replay([gate("a", True, at=T1), gate("b", False, at=T1), methodology(at=T1)])


# ---------------------------------------------------------------------------------------------
# Broken rules: (prefix of valid leaves, the offending leaf, what the problem must say)


@pytest.mark.parametrize(("prefix", "leaf", "fragment", "leaf_size"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule_broken(prefix: list[dict[str, Any]], leaf: dict[str, Any], fragment: str, leaf_size: int | None) -> None:
    ledger = replay(copy.deepcopy(prefix))
    size = leaf_size if leaf_size is not None else len(rfc8785.dumps(leaf))
    problems = ledger.apply(copy.deepcopy(leaf), size)
    assert any(fragment in p.message for p in problems), (
        f"expected a problem saying {fragment!r}, got: {messages(problems)}"
    )
    where = f"entries[{len(prefix)}]"
    assert all(p.where.startswith(where) for p in problems), (
        f"every problem is located at {where}: {messages(problems)}"
    )
    assert ledger.size == len(prefix) + 1, "a rejected leaf still takes its place in the log"


def test_revocation_is_recorded_in_ledger_order() -> None:
    ledger = replay(
        [
            *WITH_CERTIFICATE,
            run("run-2", "a", at=T3, subject={**SUBJECT, "id": "other", "name": "Other"}),
            certificate("cert-2", "run-2", at=T3),
            revocation("cert-2", "Second first.", at=T4),
            revocation("cert-1", at=T4),
        ]
    )
    assert list(ledger.revocations) == ["cert-2", "cert-1"]
    r = ledger.revocations["cert-2"]
    assert (r.serial, r.reason, r.index, r.at) == ("cert-2", "Second first.", 10, T4)
    assert ledger.final_problems() == []


def test_a_rejected_revocation_is_not_recorded() -> None:
    ledger = replay(WITH_CERTIFICATE)
    assert ledger.apply(revocation(reason="bad\x00"))
    assert ledger.revocations == {}
    assert ledger.apply(revocation()) == []
    assert list(ledger.revocations) == ["cert-1"]


def test_leaf_at_exactly_the_limit_is_accepted() -> None:
    ledger = Ledger()
    assert ledger.apply(gate("a"), MAX_LEAF_BYTES) == []
    assert MAX_LEAF_BYTES == 65535


def test_time_goes_backwards_reports_expected_and_found() -> None:
    ledger = replay([gate("a", at=T2)])
    [p] = ledger.apply(gate("b", False, at=T1))
    assert p.where == "entries[1].at"
    assert p.expected == f"{T2} or later" and p.found == T1


def test_rejected_leaf_changes_nothing() -> None:
    """A leaf that breaks a rule is not recorded (the second commit keeps the first's data)."""
    ledger = replay([*PREFIX, commit("b-0001", "b")])
    assert ledger.apply(commit("b-0001", "a", commitment=h("other")))
    c = ledger.commit("b-0001")
    assert c is not None and (c.gate, c.commitment, c.index) == ("b", h("b-0001"), 3)
    assert ledger.apply(reveal("b-0001", "public-gate"))
    assert "b-0001" not in ledger.reveals


# ---------------------------------------------------------------------------------------------
# Rules only the whole ledger settles


def test_public_item_never_revealed() -> None:
    ledger = replay([*PREFIX, commit("a-001", "a"), reveal("a-001"), commit("a-002", "a"), commit("b-0001", "b")])
    problems = ledger.final_problems()
    assert len(problems) == 1, messages(problems)
    assert "item a-002 of public gate a is never revealed" in problems[0].message
    assert problems[0].where == "entries[5]"


def test_secret_item_never_revealed_is_fine() -> None:
    ledger = replay([*PREFIX, commit("b-0001", "b")])
    assert ledger.final_problems() == []


# ---------------------------------------------------------------------------------------------
# Run specs and run rules (format v1 §6)


def test_default_methodology_is_valid() -> None:
    assert check_methodology(PARAMS) == []


def test_valid_secret_run_passes() -> None:
    s = spec()
    assert check_run_spec(s) == []
    ledger = replay([*base_leaves(), run_leaf(s)])
    assert rules(ledger, s) == [], messages(rules(ledger, s))


def test_valid_public_run_passes() -> None:
    s = spec(gate_id="a", items=PUBLIC_ITEMS)
    assert check_run_spec(s) == []
    ledger = replay([*base_leaves(), run_leaf(s)])
    assert rules(ledger, s) == [], messages(rules(ledger, s))


def test_valid_second_run_passes() -> None:
    """A decided earlier run, then a new run naming it, on fresh sealed items; the first run's
    items may be retired once it is decided."""
    s1 = spec("run-1", items=secret_items(1, 10))
    s2 = spec("run-2", items=secret_items(11, 10), previous_run="run-1")
    ledger = replay(
        [
            *base_leaves(),
            run_leaf(s1, T2),
            certificate("cert-1", "run-1", T3),
            reveal("b-0001", "retired", at=T3),
            run_leaf(s2, T4),
        ]
    )
    assert rules(ledger, s1) == [], messages(rules(ledger, s1))
    assert rules(ledger, s2, {"run-1": s1}) == [], messages(rules(ledger, s2, {"run-1": s1}))


@pytest.mark.parametrize(("doc", "fragment"), [c[1:] for c in SPEC_CASES], ids=[c[0] for c in SPEC_CASES])
def test_run_spec_shape(doc: dict[str, Any], fragment: str) -> None:
    problems = check_run_spec(doc)
    assert any(fragment in p.message for p in problems), f"expected {fragment!r}, got: {messages(problems)}"


def _case_previous_run_wrong() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s1 = spec("run-1", items=secret_items(1, 10))
    s2 = spec("run-2", items=secret_items(11, 10), previous_run=None)
    ledger = replay([*base_leaves(), run_leaf(s1, T2), certificate("cert-1", "run-1", T3), run_leaf(s2, T4)])
    return ledger, s2, {"run-1": s1}


def _case_previous_run_named_on_first_run() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec("run-1", previous_run="run-0")
    return replay([*base_leaves(), run_leaf(s)]), s, {}


def _case_previous_run_open() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s1 = spec("run-1", items=secret_items(1, 10))
    s2 = spec("run-2", items=secret_items(11, 10), previous_run="run-1")
    ledger = replay([*base_leaves(), run_leaf(s1, T2), run_leaf(s2, T3)])
    return ledger, s2, {"run-1": s1}


def _case_previous_run_decided_later() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    """The previous run's certificate comes after the new run's registration: still open then."""
    s1 = spec("run-1", items=secret_items(1, 10))
    s2 = spec("run-2", items=secret_items(11, 10), previous_run="run-1")
    ledger = replay([*base_leaves(), run_leaf(s1, T2), run_leaf(s2, T3), certificate("cert-1", "run-1", T4)])
    return ledger, s2, {"run-1": s1}


def _case_judge_not_independent() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec(judge={**spec()["judge"], "provider": "ACME corp"})
    return replay([*base_leaves(), run_leaf(s)]), s, {}


def _case_too_few_secret_items() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec(items=secret_items(1, MIN_SECRET - 1))
    return replay([*base_leaves(), run_leaf(s)]), s, {}


def _case_secret_item_reused() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s1 = spec("run-1", items=secret_items(1, 10))
    s2 = spec("run-2", items=secret_items(10, 10), previous_run="run-1")  # b-0010 again
    ledger = replay([*base_leaves(), run_leaf(s1, T2), certificate("cert-1", "run-1", T3), run_leaf(s2, T4)])
    return ledger, s2, {"run-1": s1}


def _case_item_revealed_before_decided() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec()
    ledger = replay([*base_leaves(), run_leaf(s, T2), reveal("b-0001", "retired", at=T3)])
    return ledger, s, {}


def _case_item_revealed_before_run() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec()
    ledger = replay(
        [*base_leaves(), reveal("b-0003", "retired", at=T2), run_leaf(s, T3), certificate("cert-1", "run-1", T4)]
    )
    return ledger, s, {}


def _case_public_item_not_revealed() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec(gate_id="a", items=[*PUBLIC_ITEMS, "a-004"])
    ledger = replay([*base_leaves(), commit("a-004", "a", at=T2), run_leaf(s, T2), reveal("a-004", at=T3)])
    return ledger, s, {}


def _case_methodology_unpublished() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec(methodology={"version": "2027.1", "sha256": PARAMS_SHA})
    return replay([*base_leaves(), run_leaf(s)]), s, {}


def _case_methodology_published_after_run() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec(methodology={"version": "2026.2", "sha256": h("2026.2")})
    ledger = replay([*base_leaves(), run_leaf(s, T2), methodology("2026.2", h("2026.2"), at=T3)])
    return ledger, s, {}


def _case_methodology_hash_mismatch() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec(methodology={"version": "2026.1", "sha256": h("not the parameters")})
    return replay([*base_leaves(), run_leaf(s)]), s, {}


def _case_item_not_committed() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec(items=[*secret_items(1, 9), "b-9999"])
    return replay([*base_leaves(), run_leaf(s)]), s, {}


def _case_item_committed_after_run() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec(items=[*secret_items(1, 9), "b-0100"])
    return replay([*base_leaves(), run_leaf(s, T2), commit("b-0100", "b", at=T3)]), s, {}


def _case_item_of_other_gate() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec(items=[*secret_items(1, 10), "a-001"])
    return replay([*base_leaves(), run_leaf(s)]), s, {}


def _case_subject_differs_from_leaf() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec()
    ledger = replay([*base_leaves(), run_leaf(spec(subject={**SUBJECT, "version": "2.0"}))])
    return ledger, s, {}


def _case_gate_differs_from_leaf() -> tuple[Ledger, dict[str, Any], dict[str, dict[str, Any]]]:
    s = spec()
    ledger = replay([*base_leaves(), run("run-1", "a", at=T2)])
    return ledger, s, {}


RULE_CASES = [
    ("previous-run-wrong", _case_previous_run_wrong, "previous_run is not the last run"),
    ("previous-run-named-on-first-run", _case_previous_run_named_on_first_run, "previous_run is not the last run"),
    ("previous-run-still-open", _case_previous_run_open, "still open"),
    ("previous-run-decided-after-registration", _case_previous_run_decided_later, "still open"),
    ("judge-provider-is-subject-organization", _case_judge_not_independent, "independent"),
    ("too-few-secret-items", _case_too_few_secret_items, "too few items for a secret gate"),
    ("secret-item-reused-by-subject", _case_secret_item_reused, "reuses sealed items"),
    ("secret-item-revealed-before-decided", _case_item_revealed_before_decided, "revealed while the run was open"),
    ("secret-item-revealed-before-run", _case_item_revealed_before_run, "already revealed when the run was registered"),
    ("public-item-not-yet-revealed", _case_public_item_not_revealed, "was not revealed before the run"),
    ("methodology-never-published", _case_methodology_unpublished, "not published before the run"),
    ("methodology-published-after-run", _case_methodology_published_after_run, "not published before the run"),
    ("methodology-hash-mismatch", _case_methodology_hash_mismatch, "pinned methodology hash differs"),
    ("item-not-committed", _case_item_not_committed, "b-9999 was not committed before the run"),
    ("item-committed-after-run", _case_item_committed_after_run, "b-0100 was not committed before the run"),
    ("item-of-another-gate", _case_item_of_other_gate, "a-001 is not of the run's gate"),
    ("subject-differs-from-run-leaf", _case_subject_differs_from_leaf, "subject differs from the run's ledger leaf"),
    ("gate-differs-from-run-leaf", _case_gate_differs_from_leaf, "gate differs from the run's ledger leaf"),
]


@pytest.mark.parametrize(("build", "fragment"), [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES])
def test_run_rule_broken(build: Any, fragment: str) -> None:
    ledger, s, earlier = build()
    assert check_run_spec(s) == [], f"the spec itself is well-formed: {messages(check_run_spec(s))}"
    problems = rules(ledger, s, earlier)
    assert any(fragment in p.message for p in problems), f"expected {fragment!r}, got: {messages(problems)}"


def test_judge_rule_only_with_independent_judge() -> None:
    s = spec(judge={**spec()["judge"], "provider": "acme corp"})
    ledger = replay([*base_leaves(), run_leaf(s)])
    relaxed = copy.deepcopy(PARAMS)
    relaxed["certify"]["independent_judge"] = False
    assert rules(ledger, s, params=relaxed) == [], messages(rules(ledger, s, params=relaxed))
    assert any("independent" in p.message for p in rules(ledger, s))


def test_min_items_follows_parameters() -> None:
    s = spec(items=secret_items(1, 3))
    ledger = replay([*base_leaves(), run_leaf(s)])
    relaxed = copy.deepcopy(PARAMS)
    relaxed["certify"]["min_items_secret_gate"] = 3
    assert rules(ledger, s, params=relaxed) == []
    [p] = rules(ledger, s)
    assert p.expected == f"at least {MIN_SECRET}" and p.found == "3"


def test_public_gate_has_no_minimum_and_may_reuse_items() -> None:
    """Public items are known anyway: no minimum, and a subject may run them again."""
    s1 = spec("run-1", gate_id="a", items=PUBLIC_ITEMS)
    s2 = spec("run-2", gate_id="a", items=PUBLIC_ITEMS, previous_run="run-1")
    ledger = replay([*base_leaves(), run_leaf(s1, T2), certificate("cert-1", "run-1", T3), run_leaf(s2, T4)])
    assert rules(ledger, s2, {"run-1": s1}) == [], messages(rules(ledger, s2, {"run-1": s1}))


def test_other_subject_may_use_the_same_sealed_items() -> None:
    """One observation per sealed item per subject: another subject's run is its own chain."""
    s1 = spec("run-1")
    other = {**SUBJECT, "id": "otherbot", "name": "OtherBot", "organization": "Other Inc"}
    s2 = spec("run-2", subject=other)
    ledger = replay([*base_leaves(), run_leaf(s1, T2), run_leaf(s2, T3)])
    assert rules(ledger, s2, {"run-1": s1}) == [], messages(rules(ledger, s2, {"run-1": s1}))


def test_run_rules_after_certificate_reveal_is_fine() -> None:
    """A sealed item retired after the run's certificate is what format v1 §4 asks for."""
    s = spec()
    ledger = replay(
        [*base_leaves(), run_leaf(s, T2), certificate("cert-1", "run-1", T3), reveal("b-0001", "retired", at=T5)]
    )
    assert rules(ledger, s) == [], messages(rules(ledger, s))
