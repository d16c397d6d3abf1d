"""`transparency agreement register` and `agreement report` (FORMAT.md, "Judge agreement (v2)").

`register` commits a blind human label set in the ledger: salted, hashed, the labels kept in the
private directory. It refuses a run whose certificate is issued, because the certificate
discloses the judge's labels and labels made after that are not blind. `report` measures the
judge against the labels with the verifier's own statistics, from the certificate's judge labels;
the build publishes the same report once it is due.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core import canonical_json
from generator.core.generator_errors import InputError, problem
from generator.core.strict_input import load_json
from generator.program.agreement_reports import measured_report
from generator.program.datadir import Paths
from generator.program.documents import load_spec, read_document
from generator.program.ledgerfile import appending, event_time, reading, replay_from
from generator.verifier import (
    ID_RE,
    MAX_LEAF_BYTES,
    Problem,
    check_keys,
    is_hex64,
    is_id,
    label_rows_problems,
    label_set_due,
    scale_problems,
    sha256_hex,
    show,
)

INPUT_KEYS = ("scale", "labels")


@dataclass(frozen=True)
class RegisteredLabels:
    id: str
    run: str
    sha256: str
    at: str
    labels: int
    labellers: int
    dimensions: tuple[str, ...]


def label_set_leaf(set_id: str, run_id: str, digest: str, at: str) -> dict[str, Any]:
    return {"type": "label-set", "v": 2, "id": set_id, "run": run_id, "sha256": digest, "at": at}


def _sorted_rows(rows: list[Any]) -> list[Any]:
    def key(r: Any) -> tuple[str, str, str]:
        if isinstance(r, dict):
            return tuple(str(r.get(k)) for k in ("dimension", "item", "labeller"))  # type: ignore[return-value]
        return ("", "", "")

    return sorted(rows, key=key)


def register_label_set(paths: Paths, source: Path, run_id: str, set_id: str, at: str | None = None) -> RegisteredLabels:
    """Commit the human labels of `source` (JSON: `scale` and `labels`) for run `run_id` as label
    set `set_id`; refuse, writing nothing, labels of a decided run, of an item not in the run,
    off the scale, or given twice."""
    file = paths.show(source)
    given = load_json(source, file)
    problems: list[Problem] = []
    if not is_id(set_id):
        problems.append(problem("--id", "malformed label-set id", expected=ID_RE.pattern, found=show(set_id)))
    if not is_id(run_id):
        problems.append(problem("--run", "malformed run id", expected=ID_RE.pattern, found=show(run_id)))
    problems += [p.at(file) for p in check_keys(given, INPUT_KEYS)]
    fields = given if isinstance(given, dict) else {}
    with appending(paths, "agreement register") as app:
        ledger = app.ledger
        when = event_time(at, ledger, problems)
        ledger_file = paths.show(paths.ledger_file)
        run = ledger.runs.get(run_id)
        if set_id in ledger.label_sets:
            problems.append(
                problem(
                    ledger_file,
                    f"label set {set_id} is already committed (entries[{ledger.label_sets[set_id].index}])",
                    "id",
                    expected="a new label-set id",
                )
            )
        spec = None
        if run is None and is_id(run_id):
            problems.append(problem("--run", f"run {run_id} is not registered; labels are of a registered run's items"))
        elif run is not None:
            if run_id in ledger.certificate_of_run:
                serial = ledger.certificate_of_run[run_id]
                problems.append(
                    problem(
                        "--run",
                        f"run {run_id}'s certificate {serial} (entries[{ledger.certificates[serial].index}]) has "
                        "already disclosed the judge's scores: labels committed now would not be blind, and are "
                        "refused",
                        expected="a run whose certificate is not yet issued",
                        found=f"certificate {serial}",
                    )
                )
            spec = load_spec(paths, ledger, run_id, problems)
        # Every row is checked, at its index in the file, whatever else is wrong.
        scale = fields.get("scale")
        bad_scale = [p.at(file) for p in scale_problems(scale)] if "scale" in fields else []
        rows = fields.get("labels")
        found = (
            label_rows_problems(rows, None if bad_scale else scale, set(spec["items"]) if spec else None, ordered=False)
            if "labels" in fields
            else []
        )
        problems += bad_scale + [p.at(file) for p in found]
        if problems or spec is None or not isinstance(rows, list) or not isinstance(scale, list):
            raise InputError(problems, f"cannot register label set {show(set_id)}; nothing was written")
        rubric = spec["judge"]["rubric_sha256"]
        labels = [
            {"dimension": r["dimension"], "item": r["item"], "label": r["label"], "labeller": r["labeller"]}
            for r in _sorted_rows(rows)
        ]
        doc = {
            "type": "label-set",
            "v": 2,
            "id": set_id,
            "run": run_id,
            "rubric_sha256": rubric,
            "scale": scale,
            "labels": labels,
            "salt": secrets.token_bytes(32).hex(),
        }
        data = canonical_json.dumps(doc)
        leaf = label_set_leaf(set_id, run_id, sha256_hex(data), when)
        if len(canonical_json.dumps(leaf)) > MAX_LEAF_BYTES:  # an id is short: only a broken rule gets here
            raise InputError([problem(ledger_file, "the label-set leaf is too large")])
        app.append([leaf])
        app.stage(paths.label_set_file(set_id), data, mode=0o600)
    return RegisteredLabels(
        set_id,
        run_id,
        leaf["sha256"],
        when,
        len(labels),
        len({r["labeller"] for r in labels}),
        tuple(sorted({r["dimension"] for r in labels})),
    )


@dataclass(frozen=True)
class LabelSetReport:
    report: dict[str, Any]
    due: bool  # whether the build publishes it now


def _opened_results(
    paths: Paths, serial: str, cert: dict[str, Any], public: bool, problems: list[Problem]
) -> list[Any]:
    """The certificate's open results: its own on a public gate; on a secret one each details
    document (published or still private), checked against the sealed result's hash."""
    if public:
        return list(cert["results"])
    out = []
    for r in cert["results"]:
        if not is_hex64(r.get("details")):
            continue
        for private in (False, True):
            path = paths.details_file(serial, r["item"], private=private)
            if path.is_file():
                break
        loaded = read_document(paths, path, r["details"], f"details of {r['item']} in certificate {serial}", problems)
        if loaded is not None:
            out.append(loaded[1].get("result"))
    return out


def label_set_report(paths: Paths, set_id: str) -> LabelSetReport:
    """The report of label set `set_id` against its run's certificate, as the build publishes it."""
    problems: list[Problem] = []
    with reading(paths):
        ledger, found, _ = replay_from(paths, save=False)
        if found:
            raise InputError(found, "cannot read the program's ledger")
        event = ledger.label_sets.get(set_id)
        if event is None:
            known = ", ".join(ledger.label_sets) or "none"
            raise InputError([problem("LABEL_SET", f"no label set {set_id} is committed (committed: {known})")])
        serial = ledger.certificate_of_run.get(event.run)
        if serial is None:
            raise InputError(
                [
                    problem(
                        "LABEL_SET",
                        f"run {event.run} has no certificate yet: the judge's labels are the ones its certificate "
                        "binds, so certify the run first ('transparency certify')",
                    )
                ]
            )
        cert = read_document(
            paths, paths.certificate_file(serial), ledger.certificates[serial].sha256, f"certificate {serial}", problems
        )
        spec = load_spec(paths, ledger, event.run, problems)
        if cert is None or spec is None:
            raise InputError(problems, f"cannot report on label set {set_id}")
        public = ledger.gates[ledger.runs[event.run].gate].public
        opened = _opened_results(paths, serial, cert[1], public, problems)
        made = measured_report(paths, event, spec, serial, opened, problems) if not problems else None
        if made is None:
            raise InputError(problems, f"cannot report on label set {set_id}")
        report = made[1]
        return LabelSetReport(report, label_set_due(public, True, spec["items"], ledger.reveals))


def report_text(r: LabelSetReport) -> str:
    """The report for a terminal: per dimension, its sample and the four figures."""
    doc = r.report
    lines = [
        f"label set {doc['id']}: run {doc['run']}, certificate {doc['serial']}, scale {show(doc['scale'])}",
        "published by the next build" if r.due else "not yet due: published once every item of the run is revealed",
    ]
    for d in doc["dimensions"]:
        lines.append(
            f"  {d['dimension']}: {d['sample_size']} item(s), {d['pairs']} judge-human pair(s), "
            f"{len(d['disagreements'])} disagreement(s)"
        )
        for k, label in (
            ("raw_agreement", "raw agreement"),
            ("kappa_linear", "Cohen's kappa, linear weights"),
            ("kappa_quadratic", "Cohen's kappa, quadratic weights"),
            ("alpha_ordinal", "Krippendorff's alpha, ordinal"),
        ):
            v = d[k]
            lines.append(f"    {label}: {'undefined' if v is None else v['value'] + ' (' + v['exact'] + ')'}")
    return "\n".join(lines) + "\n"
