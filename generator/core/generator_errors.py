"""The generator's exception tree: one leaf per way a command can refuse to go on."""

from __future__ import annotations

from collections.abc import Iterable

from generator.verifier import Problem


class TransparencyError(Exception):
    """Base of every error the generator raises on purpose; carries an exit status."""

    exit_code = 2


class InputError(TransparencyError):
    """Bad input: every problem found in one run, each naming its file, field and expectation."""

    def __init__(self, problems: Iterable[Problem], summary: str | None = None) -> None:
        self.problems = list(problems)
        self.summary = summary or f"{len(self.problems)} problem{'s' if len(self.problems) != 1 else ''} in the input"
        super().__init__(self.describe())

    def __reduce__(self) -> tuple[type[InputError], tuple[list[Problem], str]]:
        # As made, not as described: a build's failure crosses from its writing process.
        return (type(self), (self.problems, self.summary))

    def describe(self) -> str:
        lines = [self.summary + ":"]
        lines += ["  " + p.describe().replace("\n", "\n  ") for p in self.problems]
        return "\n".join(lines)


class KeyFileError(TransparencyError):
    """A signing key that is missing, unreadable, exposed or not the published one."""


class VerificationFailed(TransparencyError):
    """A built site failed its own verification; nothing was published."""

    exit_code = 1

    def __init__(self, report_text: str) -> None:
        self.report_text = report_text
        super().__init__("the built site failed verification; the previous site is untouched\n" + report_text)

    def __reduce__(self) -> tuple[type[VerificationFailed], tuple[str]]:
        return (type(self), (self.report_text,))


def problem(file: str, message: str, where: str = "", expected: object = None, found: object = None) -> Problem:
    """A Problem located in `file`, with expected and found rendered as text."""
    return Problem(
        message,
        file,
        where,
        None if expected is None else str(expected),
        None if found is None else str(found),
    )
