"""Values read out of one Inspect sample: its label in messages, whether an error is Inspect's record
of a cancellation, and a source looked up in the sample (its completion parsed as a JSON object, its
metadata, store or scores). What is not Inspect's own is in generator/importers/common/field_values.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from generator.importers.common.field_values import MISSING, descend
from generator.importers.common.mapping_rules import Source

if TYPE_CHECKING:  # inspect_ai ships its types (py.typed); at run time it is imported only to read a log
    from inspect_ai.log import EvalSample


# How Inspect records a sample cancelled under it as an error (inspect_ai._util.error, not public).
_CANCELLED_PREFIXES = ("CancelledError(", "Cancelled(")


def is_cancellation(message: str | None) -> bool:
    return message is not None and message.startswith(_CANCELLED_PREFIXES)


def sample_label(sample: EvalSample) -> str:
    return f"sample {sample.id}" + (f" (epoch {sample.epoch})" if sample.epoch != 1 else "")


def sample_labels(samples: list[EvalSample]) -> list[str]:
    return [sample_label(s) for s in sorted(samples, key=lambda s: (str(s.id), s.epoch))]


def lookup(source: Source, sample: EvalSample, completion: dict[str, Any] | None) -> Any:
    """The value at `source` in the sample, or MISSING."""
    if source.root == "id":
        return str(sample.id)
    if source.root == "completion":
        return sample.output.completion if not source.path else descend(completion, source.path)
    if source.root == "metadata":
        return descend(sample.metadata, source.path)
    if source.root == "store":
        return descend(sample.store, source.path)
    score = (sample.scores or {}).get(source.scorer or "")
    if score is None:
        return MISSING
    if source.part == "answer":
        return MISSING if score.answer is None else score.answer
    return descend(score.metadata if source.part == "metadata" else score.value, source.path)
