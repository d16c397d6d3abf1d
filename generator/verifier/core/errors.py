"""The verifier's exceptions, and Problem: one failed check, located and explained.

One tree: every error raised on purpose is a VerifyError, with a leaf for each kind. A rule
that finds something wrong returns Problems instead of raising, so that one run reports them
all.
"""

import dataclasses
from dataclasses import dataclass

from generator.verifier.core.text import printable


class VerifyError(Exception):
    """Base of every error the verifier raises on purpose."""


class FormatError(VerifyError, ValueError):
    """Bytes that are not what the format says they must be."""


class ProofError(VerifyError, ValueError):
    """A Merkle proof that is malformed or does not prove what it claims."""


class RootMismatchError(ProofError):
    """A proof recomputes to a root other than the expected one."""

    def __init__(self, expected: bytes, computed: bytes) -> None:
        super().__init__(f"computed root {computed.hex()} does not match expected root {expected.hex()}")
        self.expected = expected
        self.computed = computed


class NoteError(VerifyError, ValueError):
    """A signed note that is malformed or lacks a valid signature by a known key."""


@dataclass(frozen=True)
class Problem:
    """One failed check: where it is, what is wrong, and the two values that disagree."""

    message: str
    file: str = ""
    where: str = ""
    expected: str | None = None
    found: str | None = None

    def at(self, file: str, where: str = "") -> "Problem":
        """The same problem, located in `file` (and under `where` inside it)."""
        inner = f"{where}.{self.where}" if where and self.where else (where or self.where)
        return dataclasses.replace(self, file=file, where=inner)

    def describe(self) -> str:
        """The problem for a person: one line (and one each for expected and found), every
        part of it escaped by printable()."""
        head = printable(self.file or "site")
        if self.where:
            head += f" [{printable(self.where)}]"
        text = f"{head}: {printable(self.message)}"
        if self.expected is not None:
            text += f"\n      expected: {printable(self.expected)}"
        if self.found is not None:
            text += f"\n      found:    {printable(self.found)}"
        return text


class SiteUnreadable(VerifyError):
    """The site could not be read at all (exit status 2)."""


class ScoringError(VerifyError, ValueError):
    """The scoring engine was given what format v1 §5 cannot score (a bug in its caller, or data a
    shape check should have refused first)."""
