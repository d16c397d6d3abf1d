"""The report: what passed, what failed, and what could only be taken as asserted."""

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.core.text import printable

PASS_MEANING = (
    "A pass means the artifacts are authentic (signed by the key above) and consistent with "
    "each other, with the ledger and with the methodology. It does not mean the evaluation "
    "itself was right, nor that the times the operator wrote are true: a ledger's order proves "
    "sequence only from a checkpoint someone else saved."
)


@dataclass
class Report:
    """What passed, what failed and what could only be taken as asserted.

    `checks` counts real comparisons: each hash compared, signature verified, document parsed
    in canonical form, rule set applied to one document or leaf, and derived field recomputed.
    """

    site: str
    checks: int = 0
    failures: list[Problem] = field(default_factory=list)
    asserted: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    key: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    demo_key: bool = False
    debug: list[str] = field(default_factory=list)  # tracebacks of internal errors, with --debug
    # The checkpoint this run verified (origin, tree_size, root in base64), for the state file
    # and for readers of --json; its note's bytes too, so a state can be rechecked later.
    tree: dict[str, Any] = field(default_factory=dict)
    checkpoint: bytes = b""
    # The raw public keys the log has signed with: the state file remembers them for its origin.
    log_keys: list[bytes] = field(default_factory=list)
    # States of certificates, not failures: a pass never makes a revoked or expired one valid.
    revoked: list[dict[str, Any]] = field(default_factory=list)  # serial, run, at, reason, index
    expired: list[dict[str, Any]] = field(default_factory=list)  # serial, expires_at
    withdrawn: list[dict[str, Any]] = field(default_factory=list)  # run, at, reason, index: never to be certified
    # What the reader may have done to cause the failures (not a verdict on the site): said after them.
    hints: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def check(
        self, ok: bool, file: str, message: str, expected: Any = None, found: Any = None, where: str = ""
    ) -> bool:
        self.checks += 1
        if not ok:
            self.failures.append(
                Problem(
                    message,
                    file,
                    where,
                    None if expected is None else str(expected),
                    None if found is None else str(found),
                )
            )
        return ok

    def internal_error(self, file: str, error: Exception, trace: str | None) -> None:
        """A bug in the verifier met while checking `file`: a failure (fail closed), said as
        what it is, never as a verdict on the site."""
        self.failures.append(
            Problem(
                f"internal error of the verifier while checking this file ({type(error).__name__}: "
                f"{str(error)[:300]}); "
                "the rest of the site was not checked. This is a bug in the verifier: run it with --debug and report "
                "the traceback",
                file,
            )
        )
        if trace is not None:
            self.debug.append(trace)

    def add(self, problems: Iterable[Problem], file: str, checks: int = 1) -> bool:
        """Count `checks` checks and record each problem as located in `file`."""
        self.checks += checks
        before = len(self.failures)
        self.failures.extend(p.at(file) if not p.file else p for p in problems)
        return len(self.failures) == before

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "site": self.site,
            "checks": self.checks,
            "failed": len(self.failures),
            "failures": [dataclasses.asdict(p) for p in self.failures],
            "asserted": self.asserted,
            "notes": self.notes,
            "warnings": self.warnings,
            "key": self.key,
            "demo_key": self.demo_key,
            "counts": self.counts,
            "tree": self.tree,
            "revoked": self.revoked,
            "expired": self.expired,
            "withdrawn": self.withdrawn,
            "hints": self.hints,
            "meaning": PASS_MEANING,
        }

    def render(self) -> str:
        """The report for a person. Every text that came from the site goes through printable()."""
        lines = [f"Verifying {printable(self.site)}"]
        if self.key:
            lines.append(f"Key: {printable(self.key.get('source', ''))}")
            if self.key.get("fingerprint"):
                lines.append(f"  fingerprint {printable(self.key['fingerprint'])}")
        for w in self.warnings:
            lines.append(f"WARNING: {printable(w)}")
        if self.counts:
            lines.append("Read: " + ", ".join(f"{v} {printable(k)}" for k, v in self.counts.items()))
        for n in self.notes:
            lines.append(f"Note: {printable(n)}")
        for a in self.asserted:
            lines.append(f"Asserted, not verified: {printable(a)}")
        for p in self.failures[:200]:
            lines.append("FAIL " + p.describe())
        if len(self.failures) > 200:
            lines.append(f"... and {len(self.failures) - 200} more failures (use --json for all)")
        if self.ok:
            lines.append(f"PASS: all {self.checks} checks passed.")
            lines.append(PASS_MEANING)
            if self.revoked or self.expired:
                lines.append(
                    f"{len(self.revoked)} certificate(s) revoked and {len(self.expired)} expired (named in the notes "
                    "above): the pass says their files are authentic, not that they are still valid."
                )
        else:
            lines.append(f"FAILED: {len(self.failures)} of {self.checks} checks failed.")
        lines += [f"Hint: {printable(h)}" for h in self.hints]
        return "\n".join(lines)


def environment_hints(root: Path, failures: Iterable[Problem]) -> list[str]:
    """A Python environment the auditor made inside the site (`python3 -m venv verify-env` in the
    site's folder) fails as hundreds of extra files; one line names the folder and what to run.
    Only folders that hold a failing file are looked at, each once."""
    folders: dict[str, bool] = {}
    hints: list[str] = []
    for p in failures:
        name = PurePosixPath(p.file)
        if not p.file or name.is_absolute() or ".." in name.parts:  # a name the site wrote: look inside it only
            continue
        for parent in reversed(name.parents[:-1]):
            folder = str(parent)
            if folder not in folders:
                folders[folder] = (root / folder / "pyvenv.cfg").is_file()
                if folders[folder]:
                    hints.append(
                        f"{folder} looks like a Python environment: if you made it, run the verifier with "
                        f"{folder}/bin/python (a site must not ship one)"
                    )
            if folders[folder]:
                break
    return hints
