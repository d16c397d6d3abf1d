"""A result's score edits (FORMAT.md, "Score edits"): the hand edits of a harness's scores that
the result rests on, each with who made it, when and why. One rule for the results file `certify`
reads and the certificate (or details document) the verifier reads.

Why they are carried: a score changed by hand after the evaluation is a result the evaluation did
not produce. The importer refuses one unless the operator accepts edits, and then every edit is
on record beside the result it changed, so that a reader sees it and who answers for it."""

from collections.abc import Callable
from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.core.formats import check_keys, is_time
from generator.verifier.core.text import show

SCORE_EDITS = "score_edits"
SCORE_EDIT_KEYS = ("scorer", "from", "to", "by", "at", "reason")
# Bounds of what a page shows and a reader reads: a few edits of a result, names and a sentence or two.
MAX_SCORE_EDITS = 100
MAX_NAME = 200
MAX_REASON = 2000


def _text_problem(value: Any, limit: int) -> bool:
    return not (isinstance(value, str) and value.strip() and len(value) <= limit)


def score_edits_problems(value: Any, where: str, render: Callable[[Any], str] = show) -> list[Problem]:
    """Every way a result's `score_edits` breaks its rules: a non-empty list of {scorer, from, to,
    by, at, reason}, sorted by scorer, each scorer's edits in the order they were made. `from` is
    the score's value before the edit (null when the edit made the score), `to` its value after."""
    w = f"{where}.{SCORE_EDITS}"
    if not isinstance(value, list) or not value:
        return [
            Problem(
                "score edits are a non-empty list of {scorer, from, to, by, at, reason}",
                where=w,
                found=render(value),
            )
        ]
    if len(value) > MAX_SCORE_EDITS:
        return [Problem("too many score edits", where=w, expected=f"at most {MAX_SCORE_EDITS}", found=str(len(value)))]
    problems: list[Problem] = []
    keys: list[tuple[str, str]] = []
    for i, e in enumerate(value):
        ew = f"{w}[{i}]"
        problems += check_keys(e, SCORE_EDIT_KEYS, where=ew)
        if not isinstance(e, dict):
            continue
        for k, limit, what in (
            ("scorer", MAX_NAME, "the name of the scorer whose score was edited"),
            ("by", MAX_NAME, "who edited the score"),
            ("reason", MAX_REASON, "why the score was edited, in the editor's words"),
        ):
            if k in e and _text_problem(e[k], limit):
                problems.append(
                    Problem(
                        f"{k} is {what}",
                        where=f"{ew}.{k}",
                        expected=f"text other than white space, at most {limit} characters",
                        found=render(e[k]),
                    )
                )
        if "at" in e and not is_time(e["at"]):
            problems.append(
                Problem(
                    "malformed time: when the score was edited, in UTC",
                    where=f"{ew}.at",
                    expected="YYYY-MM-DDTHH:MM:SSZ",
                    found=render(e["at"]),
                )
            )
        if "to" in e and e["to"] is None:
            problems.append(Problem("an edit gives the score a value", where=f"{ew}.to", found="null"))
        if isinstance(e.get("scorer"), str) and is_time(e.get("at")):
            keys.append((e["scorer"], e["at"]))
    if len(keys) == len(value) and keys != sorted(keys):
        problems.append(
            Problem(
                "score edits are sorted by scorer, and each scorer's in the order they were made",
                where=w,
                found=render([f"{s} {t}" for s, t in keys]),
            )
        )
    return problems
