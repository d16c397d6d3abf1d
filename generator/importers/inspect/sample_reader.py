"""Reads the samples of one Inspect log into results, one per item of the run: what each sample came
to (scored, infra_error, not_run, excluded), its earlier attempts and its score edits, with every
problem recorded rather than raised."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.core.generator_errors import problem
from generator.importers.common.answer_fields import AnswerReader, excluded_result
from generator.importers.common.field_values import native_value, note_text, time_text
from generator.importers.common.mapping_rules import Exclusion, Mapping
from generator.importers.inspect.inspect_mapping import accepts_score_edits
from generator.importers.inspect.sample_values import is_cancellation, lookup, sample_label
from generator.verifier import (
    SCORED,
    FormatError,
    Problem,
    check_no_surrogates,
    show,
)

if TYPE_CHECKING:  # inspect_ai ships its types (py.typed); at run time it is imported only to read a log
    from inspect_ai.log import EvalRetryError, EvalSample


UNFINISHED = ("cancelled", "error")  # statuses of a finished log that may leave samples unrun


@dataclass
class SampleReader:
    """Reads the samples of one log into results, recording every problem."""

    file: str  # the log, as shown
    map_file: str
    mapping: Mapping
    answers: dict[str, dict[str, Any]]
    finished: str
    problems: list[Problem]

    def add(self, message: str, where: str = "", expected: object = None, found: object = None) -> None:
        self.problems.append(problem(self.file, message, where, expected, found))

    def result(self, item: str, sample: EvalSample) -> dict[str, Any] | None:
        before = len(self.problems)
        r = self.final(item, sample)
        exclusion = self.mapping.exclude.get(item)
        if exclusion is not None:
            r = self.excluded(r, sample, exclusion)
        elif sample.error_retries:
            earlier, at = self.lineage(sample, sample.error_retries)
            n = len(earlier)
            r.update({"attempt": n + 1, "retry_of": n, "at": at, "attempts": earlier})
        edits = self.score_edits(sample)
        if edits:
            r["score_edits"] = edits
        return r if len(self.problems) == before else None

    def score_edits(self, sample: EvalSample) -> list[dict[str, Any]]:
        """Every hand edit of the sample's scores, by scorer and in the order made, as the
        results carry them; each one a problem unless the mapping accepts edits. A score's
        `history` starts with the score as its scorer gave it (no provenance) and then lists
        each edit; a score an edit made starts with that edit."""
        label = sample_label(sample)
        out: list[dict[str, Any]] = []
        for name, score in sorted((sample.scores or {}).items()):
            history = list(score.history or [])
            # The events keep each edit too: a log whose history was emptied still shows them.
            recorded = sum(
                1 for e in sample.events or [] if e.event == "score_edit" and getattr(e, "score_name", None) == name
            )
            original = len(history) > 1 and history[0].provenance is None
            edits = history[1:] if original else history
            if len(edits) != recorded and (recorded or edits):
                self.add(
                    f"{label}: score {name}: the log's events record {recorded} edit(s) of it and its history "
                    f"{len(edits)}: the log was changed other than through Inspect's edit_score",
                    f"scores.{name}.history",
                )
                continue
            value: Any = history[0].value if original else None
            for k, edit in enumerate(edits):
                new = value if edit.value == "UNCHANGED" else edit.value
                p = edit.provenance
                by = p.author if p is not None else None
                at = time_text(p.timestamp) if p is not None else None
                reason = p.reason if p is not None else None
                e = {
                    "scorer": name,
                    "from": None if value is None else native_value(value),
                    "to": native_value(new),
                    "by": by,
                    "at": at,
                    "reason": reason,
                }
                value = new
                told = f"score {name} was edited by {show(by)} at {at or '?'} ({show(reason)}), from {show(e['from'])} "
                where = f"scores.{name}.history[{k + (1 if original else 0)}]"
                if not accepts_score_edits(self.mapping):
                    self.add(
                        f"{label}: {told}to {show(e['to'])}: a certificate would rest on a score changed by hand "
                        "after the evaluation; import the log as its scorers left it, or set accept_score_edits: true "
                        "in the mapping to carry every edit (who, when, why) into the results and the certificate",
                        where,
                    )
                elif not (isinstance(by, str) and by.strip() and at and isinstance(reason, str) and reason.strip()):
                    self.add(
                        f"{label}: {told}to {show(e['to'])}: an accepted edit states who made it, when and why "
                        "(Inspect's ProvenanceData author, timestamp and reason), and this one does not",
                        f"{where}.provenance",
                    )
                else:
                    try:
                        check_no_surrogates(e)
                    except FormatError as err:
                        self.add(f"{label}: score {name}'s edit: {err}", where)
                        continue
                    out.append(e)
            if edits and native_value(value) != native_value(score.value):
                self.add(
                    f"{label}: score {name}'s history ends at {show(native_value(value))}, and its value is "
                    f"{show(native_value(score.value))}: the log was changed other than through Inspect's edit_score",
                    f"scores.{name}.value",
                )
        return out  # by scorer (the loop's order), each scorer's in the order made

    def excluded(self, final: dict[str, Any], sample: EvalSample, exclusion: Exclusion) -> dict[str, Any]:
        """The excluded result of an item whose sample came to `final`: that outcome is the last
        attempt of the chain, the one the exclusion sets aside (FORMAT.md, "Attempts and
        lineage"), kept with the scores Inspect gave it, since an exclusion that hid what it
        excluded could drop a failure unseen."""
        earlier, at = self.lineage(sample, sample.error_retries or [])
        n = len(earlier)
        last: dict[str, Any] = {"attempt": n + 1, "retry_of": n or None, "status": final["status"]}
        if "note" in final:
            last["note"] = final["note"]
        last["at"] = at
        native = self.native(sample)
        if native:
            last["native"] = native
        w = f"exclude.{final['item']}.at"
        if exclusion.at < at:
            self.problems.append(
                problem(
                    self.map_file,
                    f"the exclusion of item {final['item']} is dated before the attempt it sets aside "
                    f"({sample_label(sample)}, {last['status']} at {at})",
                    w,
                    expected=f"{at} or later",
                    found=exclusion.at,
                )
            )
        elif self.finished and exclusion.at > self.finished:
            # The chain rules bound every time of a result by the results' finished_at.
            self.problems.append(
                problem(
                    self.map_file,
                    "the exclusion is dated after the evaluation finished (the log's stats.completed_at, the "
                    "results' finished_at), and no time of a result may be later",
                    w,
                    expected=f"{at} to {self.finished}",
                    found=exclusion.at,
                )
            )
        return excluded_result(final["item"], exclusion, [*earlier, last])

    def native(self, sample: EvalSample) -> dict[str, Any]:
        """What Inspect itself made of the sample: its score values by scorer (a float as its
        Python text, as format v1 §1 numbers require), or nothing when no scorer ran."""
        if not sample.scores:
            return {}
        out = {"scores": {name: native_value(score.value) for name, score in sorted(sample.scores.items())}}
        try:
            check_no_surrogates(out)
        except FormatError as e:
            self.add(f"{sample_label(sample)}: its scores: {e}")
        return out

    def final(self, item: str, sample: EvalSample) -> dict[str, Any]:
        label = sample_label(sample)
        if sample.invalidation is not None and item not in self.mapping.exclude:
            self.add(
                f"{label} is marked invalid in the log: give its item a status by hand (exclude it in the mapping), "
                "or clear the mark"
            )
        if sample.error is not None:
            if is_cancellation(sample.error.message):
                return {"item": item, "status": "not_run", "note": note_text(f"cancelled: {sample.error.message}")}
            return {"item": item, "status": "infra_error", "note": note_text(sample.error.message)}
        if sample.limit is not None:
            lim = sample.limit
            reason = f": {lim.reason}" if lim.reason else ""
            return {
                "item": item,
                "status": "not_run",
                "note": note_text(f"stopped by its {lim.type} limit ({lim.limit:g}){reason}"),
            }
        answer = self.answers.get(item)
        if answer is None:  # its answer could not be read, which is reported already
            return {"item": item, "status": SCORED, "fields": []}
        reader = AnswerReader(
            self.file, self.map_file, self.mapping, self.problems, "the completion", "output.completion"
        )
        if reader.reads_answer(answer) and not sample.output.completion.strip():
            error = f": {sample.output.error}" if sample.output.error else ""
            return {"item": item, "status": "not_run", "note": note_text(f"the model gave no output{error}")}
        return reader.scored(
            item, label, answer, sample.output.completion, lambda source, parsed: lookup(source, sample, parsed)
        )

    def lineage(self, sample: EvalSample, retries: Iterable[EvalRetryError]) -> tuple[list[dict[str, Any]], str]:
        """Every error Inspect retried, oldest first, as an earlier attempt, and the time of the
        final attempt. An attempt's time is that of the last event Inspect kept with its
        error; when it kept none, the time of the attempt after it (the start of the final
        attempt, for the last), the latest the failed attempt can have ended."""
        retries = list(retries)
        final_at = time_text(sample.completed_at) or self.finished
        bound = time_text(sample.started_at) or final_at
        times: list[str] = []
        for r in reversed(retries):
            stamps = [t for t in (time_text(e.timestamp) for e in r.events or []) if t is not None]
            bound = max(stamps) if stamps else bound
            times.append(bound)
        times.reverse()
        attempts = [
            {
                "attempt": i + 1,
                "retry_of": i if i else None,
                "status": "not_run" if is_cancellation(r.message) else "infra_error",
                "note": note_text(r.message),
                "at": at,
            }
            for i, (r, at) in enumerate(zip(retries, times, strict=True))
        ]
        return attempts, final_at
