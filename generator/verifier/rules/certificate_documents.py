"""The private documents of a certificate (format v1 §6): result details and the grader record, their
shapes, and when they fall due. Pure: no I/O."""

from collections.abc import Container, Iterable
from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.core.formats import (
    check_keys,
    is_hex64,
    is_v1,
    same,
)
from generator.verifier.core.text import show
from generator.verifier.rules.lineage import lineage_skeleton


def due_records(
    results: list[dict[str, Any]], items: Iterable[str], public: bool, revealed: Container[str]
) -> tuple[list[dict[str, Any]], bool]:
    """When a certificate's private documents fall due (format v1 §6): the sealed results whose
    details document is due (their item is revealed), in result order, and whether the grader
    record is due (at once on a public gate, else once every item of the run is revealed).
    The verifier, the build and `retire` all ask here."""
    sealed = [
        r
        for r in results
        if isinstance(r.get("details"), str) and isinstance(r.get("item"), str) and r["item"] in revealed
    ]
    return sealed, public or all(i in revealed for i in items)


DETAILS_KEYS = ("type", "v", "serial", "salt", "result")
GRADER_RECORD_KEYS = ("type", "v", "serial", "salt", "proposed_json", "rationale")


def check_details_document(doc: Any, serial: str, sealed: dict[str, Any]) -> list[Problem]:
    """A published details document against the sealed result whose hash it matched."""
    problems = _salted_document_problems(doc, "result-details", DETAILS_KEYS, serial)
    if not isinstance(doc, dict):
        return problems
    r = doc.get("result")
    if isinstance(r, dict):
        for k in ("item", "status"):
            if r.get(k) != sealed.get(k):
                problems.append(
                    Problem(
                        f"{k} differs from the sealed result's",
                        where=f"result.{k}",
                        expected=show(sealed.get(k)),
                        found=show(r.get(k)),
                    )
                )
        # The sealed result shows every attempt's number, status and time; the opened one must
        # tell the same chain, or the published lineage would not be the one that was signed.
        if not same(lineage_skeleton(r), lineage_skeleton(sealed)):
            problems.append(
                Problem(
                    "the attempts differ from the sealed result's",
                    where="result",
                    expected=show(lineage_skeleton(sealed), 200),
                    found=show(lineage_skeleton(r), 200),
                )
            )
    return problems


def _salted_document_problems(doc: Any, kind: str, keys: tuple[str, ...], serial: str) -> list[Problem]:
    """The members, type, serial and salt of a certificate's details document or grader record."""
    problems = check_keys(doc, keys)
    if not isinstance(doc, dict):
        return problems
    if doc.get("type") != kind or not is_v1(doc):
        problems.append(
            Problem(
                "wrong type or version",
                expected=f'"{kind}", v 1',
                found=f"{show(doc.get('type'))}, v {show(doc.get('v'))}",
            )
        )
    if doc.get("serial") != serial:
        problems.append(
            Problem(
                "serial differs from the certificate's", where="serial", expected=serial, found=show(doc.get("serial"))
            )
        )
    if not is_hex64(doc.get("salt")):
        problems.append(Problem("a salt is 64 lowercase hex digits", where="salt", found=show(doc.get("salt"))))
    return problems


def check_grader_record(doc: Any, serial: str) -> list[Problem]:
    problems = _salted_document_problems(doc, "grader-record", GRADER_RECORD_KEYS, serial)
    if not isinstance(doc, dict):
        return problems
    if not (doc.get("proposed_json") is None or isinstance(doc.get("proposed_json"), str)):
        problems.append(
            Problem(
                "the proposal is kept as its JSON text, or null",
                where="proposed_json",
                found=show(doc.get("proposed_json")),
            )
        )
    return problems
