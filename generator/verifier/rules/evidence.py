"""Raw evidence bound by hash (FORMAT.md, "Evidence files"): the files an evaluation produced
(an Inspect `.eval` log, trajectories, a judge's raw outputs), listed in the certificate by name,
SHA-256, size and the items they concern, kept privately and published by the rule of details
documents, so that a certificate can be traced to the exact bytes its evaluator produced.

Why the items: a log of a secret gate's run holds the subject's outputs and so, read beside the
scores, the answers. A file is due once every item it concerns is revealed (at once on a public
gate), the same moment a details document of each of those items would be."""

import re
from collections.abc import Container
from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.core.formats import PYTHON_CODE_SUFFIXES, check_keys, is_hex64, is_int
from generator.verifier.core.text import show

# A name is one path segment the verifier joins to a folder it chose: nothing in it can climb out,
# hide (a leading dot), pass for a signature or proof of another file, or be Python code.
EVIDENCE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$(?!\n)")
EVIDENCE_NAME_MAX = 128
EVIDENCE_KEYS = ("name", "sha256", "size", "items")
MAX_EVIDENCE_SIZE = 2**53 - 1


def evidence_path(serial: str, name: str) -> str:
    return f"certificates/{serial}/evidence/{name}"


def is_evidence_name(name: Any) -> bool:
    return (
        isinstance(name, str)
        and len(name) <= EVIDENCE_NAME_MAX
        and EVIDENCE_NAME_RE.fullmatch(name) is not None
        and not name.lower().endswith((".sig", ".tlog-proof", *PYTHON_CODE_SUFFIXES))
    )


def evidence_due(entry: dict[str, Any], public: bool, revealed: Container[str]) -> bool:
    return public or all(i in revealed for i in entry["items"])


def evidence_problems(evidence: Any, items: list[str], where: str = "evidence") -> list[Problem]:
    """The shape of a certificate's evidence list: named files, sorted and distinct, each with a
    SHA-256, a size and the run's items it concerns."""
    if not isinstance(evidence, list) or not evidence:
        return [Problem("evidence is a non-empty list of files", where=where, found=show(evidence, 80))]
    problems: list[Problem] = []
    spec_items = set(items)
    names: list[Any] = []
    for i, e in enumerate(evidence):
        w = f"{where}[{i}]"
        problems += check_keys(e, EVIDENCE_KEYS, where=w)
        if not isinstance(e, dict):
            continue
        names.append(e.get("name"))
        problems += evidence_entry_problems(e, w, spec_items)
    texts = [n for n in names if isinstance(n, str)]
    if len(texts) == len(names) and texts != sorted(set(texts)):
        problems.append(
            Problem("evidence files are sorted by name, each name once", where=where, found=show(names, 200))
        )
    return problems


def evidence_entry_problems(e: dict[str, Any], w: str, spec_items: Container[str]) -> list[Problem]:
    """One evidence file's members other than the list's order."""
    problems = []
    if "name" in e and not is_evidence_name(e["name"]):
        problems.append(
            Problem(
                "an evidence file's name is one safe path segment",
                where=f"{w}.name",
                expected=f"letters, digits, '_', '-' and inner dots, at most {EVIDENCE_NAME_MAX} characters",
                found=show(e["name"]),
            )
        )
    if "sha256" in e and not is_hex64(e["sha256"]):
        problems.append(Problem("a SHA-256 is 64 lowercase hex digits", where=f"{w}.sha256", found=show(e["sha256"])))
    if "size" in e and not (is_int(e["size"]) and 0 <= e["size"] <= MAX_EVIDENCE_SIZE):
        problems.append(Problem("a size is a count of bytes", where=f"{w}.size", found=show(e["size"])))
    concerned = e.get("items")
    if "items" in e and not (
        isinstance(concerned, list)
        and concerned
        and all(isinstance(i, str) and i in spec_items for i in concerned)
        and len(set(concerned)) == len(concerned)
    ):
        problems.append(
            Problem(
                "an evidence file names the run's items it concerns, each once",
                where=f"{w}.items",
                expected="a non-empty list of the run spec's item ids",
                found=show(concerned, 120),
            )
        )
    return problems
