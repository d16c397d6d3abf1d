"""A result's attempts (FORMAT.md, "Attempts and lineage"): every earlier try of an item kept
with its result, each retry tied to the attempt it repeats, an exclusion to the attempt it set
aside. One set of rules for the results file `certify` reads and the certificate the verifier
reads, so that what certify accepts is exactly what the verifier passes.

Why these rules: a retry is how an operator could re-roll a failure until it passes, and an
exclusion how one could drop it. Only an infrastructure error or an item that did not run may be
tried again; an exclusion may follow any attempt, but it is on record beside the attempt it
excludes, so a reader sees what was set aside and under which rule."""

from collections.abc import Callable, Container
from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.core.formats import check_keys, is_int, is_time
from generator.verifier.core.text import show

# The statuses after which trying again is fair: nothing about the subject's answer was learned.
RETRIABLE = ("infra_error", "not_run")
# What an earlier attempt may have come to (an exclusion ends a chain, it is not an attempt).
ATTEMPT_STATUSES = ("scored", "infra_error", "not_run", "missing_label")
ATTEMPT_KEYS = ("attempt", "retry_of", "status", "at")
# Notes and the harness's own result are the operator's and the tool's words: on a secret gate they
# may speak of the item, so a sealed result keeps only the skeleton and its details document the rest.
ATTEMPT_OPEN_KEYS = ("note", "native")
# The evidence files an attempt produced, by name: which bytes to read for it. Names of files the
# certificate lists in any case, so a sealed attempt keeps them.
ATTEMPT_EVIDENCE = "evidence"


def lineage_keys(r: dict[str, Any]) -> tuple[str, ...]:
    """The members a result may carry besides its v1 ones: none without earlier attempts."""
    if "attempts" not in r:
        return ()
    if r.get("status") == "excluded":
        return ("attempts", "excludes", "at")
    return ("attempts", "attempt", "retry_of", "at")


def lineage_skeleton(r: dict[str, Any]) -> dict[str, Any]:
    """The lineage members of a result as a sealed result carries them: every number, status and
    time, no note and no native result."""
    out = {k: r[k] for k in lineage_keys(r) if k in r and k != "attempts"}
    if isinstance(r.get("attempts"), list):
        out["attempts"] = [
            {k: a[k] for k in (*ATTEMPT_KEYS, ATTEMPT_EVIDENCE) if k in a} if isinstance(a, dict) else a
            for a in r["attempts"]
        ]
    elif "attempts" in r:
        out["attempts"] = r["attempts"]
    return out


def attempts_made(r: dict[str, Any]) -> int:
    """How many times the item was tried: the earlier attempts, and the final result unless it is
    an exclusion."""
    earlier = r.get("attempts")
    n = len(earlier) if isinstance(earlier, list) else 0
    return n + (0 if r.get("status") == "excluded" else 1)


def lineage_problems(
    r: dict[str, Any],
    where: str,
    *,
    sealed: bool,
    max_attempts: int | None = None,
    not_before: str | None = None,
    not_after: str | None = None,
    render: Callable[[Any], str] = show,
    evidence_names: Container[str] = (),
) -> list[Problem]:
    """Every way a result's attempts break the chain rules. The result's own v1 members (and that
    no other member is present) are checked by its caller; `not_before` is the run's
    registration, `not_after` the results' `finished_at`, when they are known times;
    `evidence_names` the names of the evidence files an attempt may name."""
    if "attempts" not in r:
        stray = sorted(k for k in ("attempt", "retry_of", "excludes", "at") if k in r)
        if stray:
            return [
                Problem(
                    f"{', '.join(stray)} belong(s) to a result with earlier attempts, and this one lists none",
                    where=where,
                    expected="an 'attempts' list, or none of these members",
                )
            ]
        return []
    earlier = r["attempts"]
    if not isinstance(earlier, list) or not earlier:
        return [
            Problem(
                "attempts is a non-empty list of the earlier attempts, oldest first",
                where=f"{where}.attempts",
                found=render(earlier),
            )
        ]
    problems: list[Problem] = []
    excluded = r.get("status") == "excluded"
    for i, a in enumerate(earlier):
        # The last earlier attempt of an exclusion may have come to anything: it is what was set aside.
        ends_chain = excluded and i == len(earlier) - 1
        problems += _attempt_problems(a, i, f"{where}.attempts[{i}]", ends_chain, sealed, evidence_names, render)
    problems += _final_attempt_problems(r, where, len(earlier), excluded, render)
    times = [
        (f"{where}.attempts[{i}].at", a["at"]) for i, a in enumerate(earlier) if isinstance(a, dict) and _has_time(a)
    ]
    if _has_time(r):
        times.append((f"{where}.at", r["at"]))
    problems += _time_order(times, not_before, not_after)
    made = attempts_made(r)
    if max_attempts is not None and made > max_attempts:
        problems.append(
            Problem(
                f"{made} attempts, more than the methodology's retry limit allows",
                where=f"{where}.attempts",
                expected=f"at most {max_attempts} attempts",
                found=str(made),
            )
        )
    return problems


def _attempt_problems(
    a: Any,
    i: int,
    aw: str,
    ends_chain: bool,
    sealed: bool,
    evidence_names: Container[str],
    render: Callable[[Any], str],
) -> list[Problem]:
    """One earlier attempt, the `i`th from 0: its members, its number, the attempt it repeats,
    a status after which it may be tried again, and its note, time and evidence names."""
    problems = check_keys(
        a,
        ATTEMPT_KEYS,
        optional=(ATTEMPT_EVIDENCE,) if sealed else (ATTEMPT_EVIDENCE, *ATTEMPT_OPEN_KEYS),
        where=aw,
    )
    if not isinstance(a, dict):
        return problems
    if ATTEMPT_EVIDENCE in a:
        problems += _attempt_evidence_problems(a[ATTEMPT_EVIDENCE], f"{aw}.{ATTEMPT_EVIDENCE}", evidence_names, render)
    if "attempt" in a and not (is_int(a["attempt"]) and a["attempt"] == i + 1):
        problems.append(
            Problem(
                "attempts are numbered 1, 2, … in order, with no gap",
                where=f"{aw}.attempt",
                expected=str(i + 1),
                found=render(a["attempt"]),
            )
        )
    want_of = None if i == 0 else i
    if "retry_of" in a and not (a["retry_of"] is None if want_of is None else _is_int_of(a["retry_of"], want_of)):
        problems.append(
            Problem(
                "the first attempt repeats nothing; every later one repeats the attempt just before it",
                where=f"{aw}.retry_of",
                expected=show(want_of),
                found=render(a["retry_of"]),
            )
        )
    status = a.get("status")
    if "status" in a and status not in ATTEMPT_STATUSES:
        problems.append(
            Problem(
                "an earlier attempt's status is what that attempt came to",
                where=f"{aw}.status",
                expected=" | ".join(ATTEMPT_STATUSES),
                found=render(status),
            )
        )
    elif "status" in a and status not in RETRIABLE and not ends_chain:
        problems.append(
            Problem(
                f"an attempt that came to {status} was tried again: only an infrastructure error or an item "
                "that did not run may be retried",
                where=f"{aw}.status",
                expected=" | ".join(RETRIABLE),
                found=render(status),
            )
        )
    if "note" in a and not isinstance(a["note"], str):
        problems.append(Problem("a note is text", where=f"{aw}.note", found=render(a["note"])))
    if "at" in a and not is_time(a["at"]):
        problems.append(
            Problem("malformed time", where=f"{aw}.at", expected="YYYY-MM-DDTHH:MM:SSZ", found=render(a["at"]))
        )
    return problems


def _final_attempt_problems(
    r: dict[str, Any], where: str, n: int, excluded: bool, render: Callable[[Any], str]
) -> list[Problem]:
    """The result after `n` earlier attempts: an exclusion excludes the last of them, any other
    result is attempt n + 1 and repeats attempt n; either has its time."""
    problems = []
    if excluded:
        if "excludes" not in r:
            problems.append(Problem("missing 'excludes'", where=where))
        elif not _is_int_of(r["excludes"], n):
            problems.append(
                Problem(
                    "an exclusion after attempts excludes the last of them, which ended the chain",
                    where=f"{where}.excludes",
                    expected=str(n),
                    found=render(r["excludes"]),
                )
            )
    else:
        for k, want in (("attempt", n + 1), ("retry_of", n)):
            if k not in r:
                problems.append(Problem(f"missing {k!r}", where=where))
            elif not _is_int_of(r[k], want):
                problems.append(
                    Problem(
                        "the final result is the attempt after the last earlier one, and repeats it",
                        where=f"{where}.{k}",
                        expected=str(want),
                        found=render(r[k]),
                    )
                )
    if "at" not in r:
        problems.append(Problem("missing 'at'", where=where))
    elif not is_time(r["at"]):
        problems.append(
            Problem("malformed time", where=f"{where}.at", expected="YYYY-MM-DDTHH:MM:SSZ", found=render(r["at"]))
        )
    return problems


def _has_time(d: dict[str, Any]) -> bool:
    return "at" in d and is_time(d["at"])


def _time_order(times: list[tuple[str, str]], not_before: str | None, not_after: str | None) -> list[Problem]:
    """Attempts in the order they were made, none before the run was registered and none after
    the final one or after the run finished (times of one form compare as text)."""
    problems = []
    previous: tuple[str, str] | None = None
    for w, t in times:
        if not_before is not None and t < not_before:
            problems.append(
                Problem("an attempt before the run was registered", where=w, expected=f"≥ {not_before}", found=t)
            )
        if not_after is not None and t > not_after:
            problems.append(Problem("an attempt after the run finished", where=w, expected=f"≤ {not_after}", found=t))
        if previous is not None and t < previous[1]:
            problems.append(
                Problem(
                    f"an attempt made before the one it follows ({previous[0]})",
                    where=w,
                    expected=f"≥ {previous[1]}",
                    found=t,
                )
            )
        previous = (w, t)
    return problems


def _attempt_evidence_problems(
    names: Any, where: str, listed: Container[str], render: Callable[[Any], str]
) -> list[Problem]:
    if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)):
        return [
            Problem(
                "an attempt's evidence is a non-empty list of evidence file names", where=where, found=render(names)
            )
        ]
    if names != sorted(set(names)):
        return [Problem("evidence names are sorted and distinct", where=where, found=render(names))]
    unknown = [n for n in names if n not in listed]
    if unknown:
        return [
            Problem(
                "names an evidence file the certificate does not list",
                where=where,
                expected="names of the evidence list",
                found=render(unknown),
            )
        ]
    return []


def _is_int_of(value: Any, want: int) -> bool:
    return is_int(value) and value == want
