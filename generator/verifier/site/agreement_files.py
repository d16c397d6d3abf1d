"""A site's judge-agreement files (FORMAT.md, "Judge agreement (v2)"): each label set the ledger
commits, absent until it is due and then published byte for byte as committed, and its report,
which must be exactly the one recomputed here from the published labels and the judge's labels
of the run's certificate. A key holder can sign any figure; only a recomputed one is evidence."""

import os
from collections.abc import Mapping
from typing import Any

from generator.verifier.core.canonical import canonical_bytes
from generator.verifier.core.folder import Site
from generator.verifier.core.formats import sha256_hex
from generator.verifier.core.text import show
from generator.verifier.rules.agreement_statistics import AgreementError
from generator.verifier.rules.labelsets import (
    judge_coverage_problems,
    judge_labels_of,
    label_set_due,
    label_set_problems,
    labels_path,
    report_document,
    report_path,
)
from generator.verifier.rules.ledger import Ledger

# What the certificate check hands over for each run it read: the certificate's serial and the
# open results the judge's labels are read from (a public certificate's own, or the results of
# its published details documents).
Judged = Mapping[str, tuple[str, list[Any]]]


def check_label_sets(s: Site, ledger: Ledger, specs: Mapping[str, dict[str, Any]], judged: Judged) -> None:
    report = s.report
    _check_no_stray_files(s, ledger)
    for event in ledger.label_sets.values():
        run = ledger.runs[event.run]
        spec = specs.get(event.run)
        if spec is None:
            continue  # the run spec's own failure is reported by the run check
        gate = ledger.gates.get(run.gate)
        public = bool(gate and gate.public)
        due = label_set_due(public, event.run in ledger.certificate_of_run, spec["items"], ledger.reveals)
        lrel, rrel = labels_path(event.id), report_path(event.id)
        if not due:
            for rel in (lrel, rrel):
                report.check(
                    not os.path.lexists(s.root / rel),
                    rel,
                    f"label set {event.id} published before the judge's labels of run {event.run} are: "
                    "human labels of sealed items say how good the subject's answers were",
                    "not yet published",
                    "published",
                )
            continue
        loaded = s.document(lrel, f"label set {event.id}")
        if loaded is None:
            continue
        data, doc = loaded
        digest = sha256_hex(data)
        if not report.check(
            digest == event.sha256,
            lrel,
            f"label set {event.id} is not the one committed in the ledger at entries[{event.index}]",
            event.sha256,
            digest,
        ):
            continue
        shape = label_set_problems(doc, event.id, event.run, spec)
        if not report.add(shape, lrel, checks=1):
            continue
        got = s.document(rrel, f"agreement report of label set {event.id}")
        if got is None:
            continue
        if event.run not in judged:
            report.check(
                False,
                rrel,
                f"agreement report of label set {event.id} cannot be recomputed: the certificate of run "
                f"{event.run} could not be read",
            )
            continue
        serial, results = judged[event.run]
        # Reported at the report: it is the measurement that a silent judge would flatter.
        if not report.add(judge_coverage_problems(doc, results), rrel, checks=1):
            continue
        try:
            want = report_document(doc, digest, serial, judge_labels_of(results))
        except AgreementError as e:
            report.check(False, rrel, f"the judge's labels of certificate {serial} cannot be measured: {e}")
            continue
        if canonical_bytes(want) == got[0]:
            report.checks += 1
            dims = len(want["dimensions"])
            report.notes.append(
                f"label set {event.id}: the judge's agreement with blind human labels on {dims} dimension(s) "
                "recomputed exactly"
            )
            continue
        report.check(False, rrel, *_first_difference(want, got[1]))


def _first_difference(want: dict[str, Any], found: Any) -> tuple[str, str, str, str]:
    """The message, expected and found values and the member of the first place a published
    report differs from the recomputed one."""
    if not isinstance(found, dict):
        return ("an agreement report is an object", "the recomputed report", show(found, 80), "")
    for k in sorted(want.keys() | found.keys()):
        if k not in want or k not in found or k == "dimensions":
            continue
        if canonical_bytes(want[k]) != canonical_bytes(found[k]):
            return ("differs from the recomputed report", show(want[k], 120), show(found[k], 120), k)
    extra = sorted(found.keys() - want.keys())
    missing = sorted(want.keys() - found.keys())
    if extra or missing:
        return ("the report's members are not a report's", show(sorted(want)), show(sorted(found)), "")
    rows, published = want["dimensions"], found["dimensions"]
    if not isinstance(published, list) or len(published) != len(rows):
        return (
            "the report's dimensions are not the label set's and the judge's",
            show([r["dimension"] for r in rows]),
            show(published, 120),
            "dimensions",
        )
    for i, (w, f) in enumerate(zip(rows, published, strict=True)):
        if not isinstance(f, dict):
            return ("a dimension's row is an object", show(w, 120), show(f, 120), f"dimensions[{i}]")
        for k in sorted(w.keys() | f.keys()):
            if k not in w or k not in f or canonical_bytes(w[k]) != canonical_bytes(f[k]):
                return (
                    f"the figure differs from the one recomputed from the published labels ({w['dimension']})",
                    show(w.get(k), 120),
                    show(f.get(k), 120),
                    f"dimensions[{i}].{k}",
                )
    return ("differs from the recomputed report", "", "", "")


def _check_no_stray_files(s: Site, ledger: Ledger) -> None:
    """Nothing under agreement/ but the files of committed label sets: a report of labels no
    ledger entry committed would read as evidence it is not. (A committed set's files published
    before they are due are the due check's to report.)"""
    folder = s.root / "agreement"
    if not folder.is_dir() or folder.is_symlink():
        return
    known = {p for e in ledger.label_sets.values() for p in (labels_path(e.id), report_path(e.id))}
    for here, dirs, names in os.walk(folder):
        rel_dir = os.path.relpath(here, s.root).replace(os.sep, "/")
        if rel_dir.count("/") >= 1:
            # Deeper than agreement/<id>/ nothing of a label set lives: report the folder, not its tree.
            for d in sorted(dirs):
                s.report.check(False, f"{rel_dir}/{d}", "a folder under agreement/ that no label set of the ledger has")
            dirs.clear()
        for name in sorted(names):
            rel = f"{rel_dir}/{name}"
            s.report.check(
                rel in known,
                rel,
                "a file under agreement/ that no label set of the ledger has",
                "agreement/<id>.json or agreement/<id>/labels.json of a committed label set",
                "a stray file",
            )
