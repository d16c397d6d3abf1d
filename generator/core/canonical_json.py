"""Canonical JSON (RFC 8785) for everything the generator hashes or signs.

Documents are produced with the `rfc8785` package and must also satisfy the number rules of
format v1 §1, under which they equal the standard-library form the verifier checks. Producing them
through both guards against either implementation drifting.
"""

from __future__ import annotations

from typing import Any

import rfc8785

from generator.verifier import Problem, canonical_bytes, number_rule_problems

__all__ = ["NotCanonicalizable", "dumps", "dumps_checked", "dumps_validated"]


class NotCanonicalizable(ValueError):
    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        first = problems[0]
        super().__init__(f"{first.message} at {first.where or 'top level'}: {first.found}")


def dumps(value: Any) -> bytes:
    """The JCS bytes of `value`; raise NotCanonicalizable if it breaks the number rules."""
    problems = number_rule_problems(value)
    if problems:
        raise NotCanonicalizable(problems)
    data = rfc8785.dumps(value)
    if data != canonical_bytes(value):  # pragma: no cover - would be a bug in one of the two
        raise AssertionError("rfc8785 and the verifier's canonical form disagree")
    return data


def dumps_checked(value: Any) -> bytes:
    """The number rules checked, then the fast canonical form (see dumps_validated)."""
    problems = number_rule_problems(value)
    if problems:
        raise NotCanonicalizable(problems)
    return canonical_bytes(value)


def dumps_validated(value: Any) -> bytes:
    """Canonical bytes of a value already checked against the number rules, without rfc8785.

    For the bulk paths (a million reveal documents and commitment rows), where the pure-Python
    rfc8785 costs more than everything else together. Under the rules of format v1 §1 the two forms
    are byte for byte equal; tests/unit/verifier/test_canonical_stream.py checks it on generated values.
    """
    return canonical_bytes(value)
