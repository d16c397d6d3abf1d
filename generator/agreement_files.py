"""The judge-agreement files a build publishes (FORMAT.md, "Judge agreement (v2)"): each label
set of a certified run, once due, byte for byte as `transparency agreement register` committed
it, and its report, made by the verifier's own code from the same labels and the certificate's
judge labels, so that the site never publishes a figure its verifier would recompute otherwise."""

from __future__ import annotations

from typing import Any

from generator import canonical
from generator.datadir import Paths
from generator.documents import load_spec, read_document
from generator.errors import problem
from generator.verifier import (
    JUDGE_LABELS,
    AgreementError,
    Ledger,
    Problem,
    judge_coverage_problems,
    judge_labels_of,
    label_set_due,
    label_set_problems,
    labels_path,
    report_document,
    report_path,
    sha256_hex,
    show,
)


def agreement_files(
    paths: Paths,
    ledger: Ledger,
    cert: dict[str, Any],
    spec: dict[str, Any],
    public: bool,
    opened: list[Any],
    problems: list[Problem],
) -> tuple[tuple[str, bytes], ...]:
    """The site path and bytes of every due label set of the certificate's run and of its report;
    problems for a private label set that is missing, changed or malformed."""
    out: list[tuple[str, bytes]] = []
    for event in ledger.label_sets.values():
        if event.run != cert["run"] or not label_set_due(public, True, spec["items"], ledger.reveals):
            continue
        path = paths.label_set_file(event.id)
        loaded = read_document(paths, path, event.sha256, f"label set {event.id}", problems)
        if loaded is None:
            continue
        data, doc = loaded
        file = paths.show(path)
        shape = label_set_problems(doc, event.id, event.run, spec)
        if shape:
            problems += [p.at(file) for p in shape]
            continue
        coverage = judge_coverage_problems(doc, opened)
        if coverage:
            problems += [p.at(paths.show(paths.certificate_file(cert["serial"]))) for p in coverage]
            continue
        try:
            report = report_document(doc, sha256_hex(data), cert["serial"], judge_labels_of(opened))
        except AgreementError as e:
            problems.append(
                problem(file, f"the judge's labels of certificate {cert['serial']} cannot be measured: {e}")
            )
            continue
        out += [(labels_path(event.id), data), (report_path(event.id), canonical.dumps(report))]
    return tuple(out)


def judge_scale_problems(paths: Paths, ledger: Ledger, run_id: str, doc: dict[str, Any], file: str) -> list[Problem]:
    """For `certify`: the judge's labels of the results against every label set of the run: each
    on the set's scale, and every scored result labelled on every dimension the humans labelled.
    The certificate is final, so a report it could never be measured by is refused now, not at
    the build that would publish it."""
    problems: list[Problem] = []
    rows = doc.get("results")
    results = rows if isinstance(rows, list) else []
    spec = load_spec(paths, ledger, run_id, problems)
    for event in ledger.label_sets.values():
        if event.run != run_id or spec is None:
            continue
        path = paths.label_set_file(event.id)
        loaded = read_document(paths, path, event.sha256, f"label set {event.id}", problems)
        if loaded is None:
            continue
        shape = label_set_problems(loaded[1], event.id, event.run, spec)
        if shape:
            problems += [p.at(paths.show(path)) for p in shape]
            continue
        label_set = loaded[1]
        scale = set(label_set["scale"])
        for i, r in enumerate(results):
            labels = r.get(JUDGE_LABELS) if isinstance(r, dict) else None
            for dim, label in labels.items() if isinstance(labels, dict) else ():
                if isinstance(label, int) and not isinstance(label, bool) and label not in scale:
                    problems.append(
                        problem(
                            file,
                            f"the judge's label is not on the scale of label set {event.id}, which measures it",
                            f"results[{i}] ({r.get('item')}).{JUDGE_LABELS}.{dim}",
                            expected=show(label_set["scale"]),
                            found=show(label),
                        )
                    )
        problems += [p.at(file) for p in judge_coverage_problems(label_set, results)]
    return problems
