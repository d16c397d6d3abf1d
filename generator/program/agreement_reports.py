"""The judge-agreement files a build publishes (FORMAT.md, "Judge agreement (v2)"): each label
set of a certified run, once due, byte for byte as `transparency agreement register` committed
it, and its report, made by the verifier's own code from the same labels and the certificate's
judge labels, so that the site never publishes a figure its verifier would recompute otherwise."""

from __future__ import annotations

from typing import Any

from generator.core import canonical_json
from generator.core.generator_errors import problem
from generator.program.datadir import Paths
from generator.program.documents import load_spec, read_document
from generator.verifier import (
    JUDGE_LABELS,
    AgreementError,
    LabelSetEvent,
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


def committed_label_set(
    paths: Paths, event: LabelSetEvent, spec: dict[str, Any], problems: list[Problem]
) -> tuple[bytes, dict[str, Any]] | None:
    """The private label set of a ledger event, its bytes hashing to the leaf and its document a
    label set of the run; None, with the problems recorded, when it is not."""
    path = paths.label_set_file(event.id)
    loaded = read_document(paths, path, event.sha256, f"label set {event.id}", problems)
    if loaded is None:
        return None
    shape = label_set_problems(loaded[1], event.id, event.run, spec)
    if shape:
        problems += [p.at(paths.show(path)) for p in shape]
        return None
    return loaded


def measured_report(
    paths: Paths, event: LabelSetEvent, spec: dict[str, Any], serial: str, opened: list[Any], problems: list[Problem]
) -> tuple[bytes, dict[str, Any]] | None:
    """The committed label set's bytes and its report against the judge's labels of certificate
    `serial` (its open results: its own, or its details documents'), as the build publishes it and
    `agreement report` shows it; None, with the problems recorded, when it cannot be made."""
    loaded = committed_label_set(paths, event, spec, problems)
    if loaded is None:
        return None
    data, doc = loaded
    coverage = judge_coverage_problems(doc, opened)
    if coverage:
        problems += [p.at(paths.show(paths.certificate_file(serial))) for p in coverage]
        return None
    try:
        return data, report_document(doc, sha256_hex(data), serial, judge_labels_of(opened))
    except AgreementError as e:
        problems.append(
            problem(
                paths.show(paths.label_set_file(event.id)),
                f"the judge's labels of certificate {serial} cannot be measured: {e}",
            )
        )
        return None


def agreement_files(
    paths: Paths,
    ledger: Ledger,
    events: list[LabelSetEvent],
    cert: dict[str, Any],
    spec: dict[str, Any],
    public: bool,
    opened: list[Any],
    problems: list[Problem],
) -> tuple[tuple[str, bytes], ...]:
    """The site path and bytes of every due label set of the certificate's run (`events`) and of
    its report; problems for a private label set that is missing, changed or malformed."""
    out: list[tuple[str, bytes]] = []
    if not events or not label_set_due(public, True, spec["items"], ledger.reveals):
        return ()
    for event in events:
        made = measured_report(paths, event, spec, cert["serial"], opened, problems)
        if made is not None:
            out += [(labels_path(event.id), made[0]), (report_path(event.id), canonical_json.dumps(made[1]))]
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
        loaded = committed_label_set(paths, event, spec, problems)
        if loaded is None:
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
