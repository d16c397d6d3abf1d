"""The monitor's two errors, an inconsistency of the log (exit status 1) and a site or argument it
cannot read (exit status 2), and a verifier problem said as one line of either. Its state has an
error of its own, with the state (generator.state.monitor_state.MonitorStateError, exit status 2)."""

from __future__ import annotations

from generator.core.generator_errors import TransparencyError
from generator.verifier import Problem


class Inconsistent(TransparencyError):
    """Something a log must never do. The run stops and its state is not moved (exit status 1).
    `lines` are raw text from the site: escape them (printable) before showing them."""

    exit_code = 1

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        super().__init__("\n".join(lines))


class Unreadable(TransparencyError):
    """The site could not be read, or an argument is wrong (exit status 2)."""


def problem_text(p: Problem) -> str:
    text = f"{p.where + ': ' if p.where else ''}{p.message}"
    if p.expected is not None:
        text += f" (expected {p.expected})"
    if p.found is not None:
        text += f" (found {p.found})"
    return text
