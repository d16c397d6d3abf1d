"""What a run's check on a site (publication.check_runs) is a function of, so that the verifier's
memory (memory/release_memory.py) can vouch for a run that passed in the release verified last
without reading or parsing its spec again.

A run's check reads its manifest row, its spec (by the SHA-256 this run verified it has), its
leaf, the leaves that decided it and the run before it of the same subject and gate, its draw,
its gate, its pinned methodology, and whether and when each of its items was revealed; the
items, commitments and specs of earlier runs it compares with are fixed by leaves older than it.
The key below hashes all of them. What the checks after it need of a remembered run's spec (its
items as its draw gives them, its draw, its methodology's version) is remembered beside the key
and given to them as a SpecSummary; a certificate checked in full reads the spec itself, and a
run a label set measures is always checked in full (the label sets' check reads its judge).

As for certificates (certificate_memo.py), the key is trusted only when the replay went on from
the release the check passed in.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.verifier.core.canonical import canonical_bytes, parse_canonical
from generator.verifier.core.errors import FormatError
from generator.verifier.core.formats import ids_text, is_id, is_safe_path, sha256_hex
from generator.verifier.memory.release_memory import Memory
from generator.verifier.rules.events import RunEvent
from generator.verifier.rules.ledger import Ledger
from generator.verifier.site.certificate_memo import Vouched


class SpecSummary(dict[str, Any]):
    """What the checks after the runs' read of a remembered run's spec: `id`, `items` (as its
    draw gives them), `methodology` (its `version`) and, for a drawn run, `draw`. Not a spec:
    whoever needs the whole reads the file (certificate_files)."""


@dataclass(frozen=True)
class RunLooked:
    """What a passing run check found in the spec, for the next run to go on from."""

    items: tuple[str, ...]
    draw: dict[str, Any] | None
    version: str
    checks: int

    def summary(self, run_id: str) -> SpecSummary:
        out = SpecSummary(id=run_id, items=list(self.items), methodology={"version": self.version})
        if self.draw is not None:
            out["draw"] = dict(self.draw)
        return out

    def saved(self, key: str) -> list[Any]:
        draw = canonical_bytes(self.draw).decode("utf-8") if self.draw is not None else ""
        return [key, "\n".join(self.items), draw, self.version, self.checks]

    @staticmethod
    def loaded(saved: list[Any]) -> tuple[str, "RunLooked"] | None:
        """A remembered check (saved), or None for anything this code did not write."""
        if len(saved) != 5:
            return None
        key, items, draw, version, checks = saved
        if not (
            isinstance(key, str)
            and isinstance(items, str)
            and isinstance(draw, str)
            and isinstance(version, str)
            and isinstance(checks, int)
        ):
            return None
        try:
            parsed = parse_canonical(draw.encode("utf-8")) if draw else None
        except FormatError:
            return None
        if parsed is not None and not isinstance(parsed, dict):
            return None
        return key, RunLooked(tuple(items.split("\n")) if items else (), parsed, version, checks)

    @staticmethod
    def of(spec: dict[str, Any], checks: int) -> "RunLooked | None":
        """What to remember of a spec that passed (as effective_spec gives it), or None."""
        items, draw = spec.get("items"), spec.get("draw")
        version = spec.get("methodology", {}).get("version") if isinstance(spec.get("methodology"), dict) else None
        if not (isinstance(items, list) and all(is_id(i) for i in items) and isinstance(version, str)):
            return None
        if draw is not None and not isinstance(draw, dict):
            return None
        return RunLooked(tuple(items), draw, version, checks)


@dataclass(frozen=True)
class RunContext:
    """What every run's key is computed against in one run of the verifier."""

    ledger: Ledger
    vouched: Vouched
    methodologies: Mapping[str, str]  # version -> methodology_digest of the file this run parsed
    # The runs a label set measures: the label sets' check reads their whole spec (its judge's
    # rubric), so they are always checked in full.
    measured: frozenset[str]


def run_key(
    memory: Memory, x: RunContext, row: Mapping[str, Any], run: RunEvent, looked: RunLooked, earlier: str
) -> str | None:
    """The key of everything the check of run `row` read, given what it found (`looked`) and
    `earlier`, the chain of the runs before it of its subject and gate (earlier_chain); None
    when its spec is not a file this run verified (it is then checked in full)."""
    ledger = x.ledger
    path = row.get("spec")
    sha = x.vouched(path) if is_safe_path(path) else None
    items = ids_text(looked.items)
    if sha is None or run.id in x.measured or items is None:
        return None
    before = ledger.runs_before(run)
    prev = before[-1] if before else None
    gate = ledger.gates.get(run.gate)
    published = ledger.methodologies.get(looked.version)
    draw = ledger.draws.get(run.id)
    revealed = ledger.reveals
    # The items, then when each revealed one was: most are not.
    reveals = [items, *([i, revealed[i].index] for i in looked.items if i in revealed)]
    return memory.recheck_key(
        "run",
        dict(row),
        [path, sha],
        [run.id, run.sha256, run.subject, run.gate, run.index, run.at, ledger.decided_at(run.id)],
        [prev.id, prev.index, ledger.decided_at(prev.id)] if prev is not None else None,
        [gate.public, gate.index] if gate is not None else None,
        [looked.version, published.sha256, published.index] if published is not None else looked.version,
        x.methodologies.get(looked.version),
        draw.index if draw is not None else None,
        reveals,
        earlier,
    )


def earlier_chain(chain: str, run_id: str, spec: Mapping[str, Any] | None) -> str:
    """The chain of a subject's runs on a gate after run `run_id` with `spec` (None: its spec did
    not pass) is added: what a later run of theirs compares its items with (the one-observation
    rule, a draw's pool), one SHA-256 in ledger order, so that no run hashes its predecessors'
    items one by one."""
    items = spec.get("items") if spec is not None else None
    shown = canonical_bytes(items).decode("utf-8") if isinstance(items, list) else "!"
    return sha256_hex(f"{chain}\n{run_id}\n{shown}".encode())
