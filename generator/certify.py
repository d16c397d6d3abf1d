"""Certifying a registered run (SPEC §5, §6): from the evaluator's results to a signed verdict.

The evaluator hands over one results file per run. Everything on the certificate that can be
computed is computed here, with the verifier's own engine, from the outputs and the private
answers: the similarity of exact and list fields, every item score, the counts and rates, the
grades and band, the verdict. The grader's proposal only moves the score inside the band, and
it is kept as the JSON text it was written in so that `90.0` can never become `90`.

On a secret gate each result is published sealed, as the hash of a salted details document
kept in the private directory; `retire` publishes it with the item. The grader record (its
proposal and rationale) follows once every item of the certificate is revealed, since the
judge's words may quote answers. On a public gate results are open and the record is
published at once.
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator import canonical, layout
from generator.commitments import locate_sealed, read_located
from generator.datadir import Paths
from generator.errors import InputError, problem
from generator.ledgerfile import LedgerAppender, appending, event_time
from generator.runs import load_spec, methodology_params
from generator.sources import read_text
from generator.verifier import (
    MAX_SAFE_INTEGER,
    SCORED,
    STATUSES,
    FormatError,
    Ledger,
    Problem,
    RunEvent,
    band_score,
    build_open_result,
    check_certificate,
    check_keys,
    check_no_surrogates,
    grade_counts,
    is_id,
    is_reported_field,
    is_time,
    keep_bullets,
    loads_strict,
    number_rule_problems,
    sha256_hex,
    show,
    similarity_form_problem,
    strict_decoder,
    value_kind_problem,
)

Progress = Callable[[str, int, int], None]

RESULTS_KEYS = ("type", "v", "run", "finished_at", "results")


class JsonNumber:
    """A number of the results file that SPEC §1 does not allow in a document (a fraction, an
    exponent, an integer beyond ±(2^53−1)). Kept as its text so the error can quote it."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _int_or_number(text: str) -> Any:
    if len(text.lstrip("-")) > 16 or abs(int(text)) > MAX_SAFE_INTEGER:
        return JsonNumber(text)
    return int(text)


_RESULTS_DECODER = strict_decoder(parse_float=JsonNumber, parse_int=_int_or_number)
_SKIPPER = json.JSONDecoder(parse_float=str, parse_int=str, parse_constant=str)
_WS = " \t\n\r"


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def raw_member_text(text: str, path: tuple[str, ...]) -> str | None:
    """The JSON text of the member at `path` (object keys from the top), exactly as written,
    or None if absent. `text` must already have parsed as strict JSON (no duplicate keys)."""
    i = _skip_ws(text, 0)
    for key in path:
        if text[i] != "{":
            return None
        i = _skip_ws(text, i + 1)
        while text[i] != "}":
            name, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            i = _skip_ws(text, _skip_ws(text, i) + 1)  # past the colon
            if name == key:
                break
            _, i = _SKIPPER.raw_decode(text, i)
            i = _skip_ws(text, i)
            if text[i] == ",":
                i = _skip_ws(text, i + 1)
        else:
            return None
    _, end = _SKIPPER.raw_decode(text, i)
    return text[i:end]


def _numbers(value: Any, where: str) -> list[tuple[str, str]]:
    """Where a value holds numbers SPEC §1 does not allow, as (path, text)."""
    out: list[tuple[str, str]] = []
    stack = [(where, value)]
    while stack:
        w, v = stack.pop()
        if isinstance(v, JsonNumber):
            out.append((w, v.text))
        elif isinstance(v, list):
            stack.extend((f"{w}[{i}]", x) for i, x in enumerate(v))
        elif isinstance(v, dict):
            stack.extend((f"{w}.{k}", x) for k, x in v.items())
    return sorted(out)


@dataclass(frozen=True)
class RunResults:
    doc: dict[str, Any]
    proposed_json: str | None
    rationale: Any  # as received; [] when missing


def read_results(path: Path, file: str) -> RunResults:
    """Parse a results file strictly, keeping the grader's proposal as written."""
    text = read_text(path, file)
    try:
        doc = _RESULTS_DECODER.decode(text)
        check_no_surrogates(doc)
    except json.JSONDecodeError as e:
        raise InputError([problem(file, f"malformed JSON: {e.msg}", f"line {e.lineno} column {e.colno}")]) from None
    except (FormatError, RecursionError, ValueError) as e:
        raise InputError([problem(file, f"malformed JSON: {str(e)[:200]}")]) from None
    if not isinstance(doc, dict):
        raise InputError([problem(file, "must be a run-results object (SPEC §6)", found=type(doc).__name__)])
    grader = doc.get("grader")
    proposed = raw_member_text(text, ("grader", "proposed_score")) if isinstance(grader, dict) else None
    # A missing rationale counts as no elements (SPEC §5) and is recorded as []; anything
    # received, null included, is recorded as it came and judged by keep_bullets.
    rationale = grader.get("rationale", []) if isinstance(grader, dict) else []
    return RunResults(doc, proposed, rationale)


def _plain(v: Any) -> Any:
    if isinstance(v, JsonNumber):
        return v.text
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


@dataclass(frozen=True)
class Certified:
    serial: str
    run: str
    verdict: str
    grade: str
    score: int
    score_rule: str
    summary: dict[str, Any]
    sealed: bool
    at: str


def _check_results_shape(doc: dict[str, Any], spec: dict[str, Any], answers: dict[str, dict[str, Any]]) -> list[Problem]:
    """Every way the results break SPEC §6's input rules, naming item and field."""
    problems = check_keys(doc, RESULTS_KEYS, optional=("grader",))
    if doc.get("type") != "run-results" or doc.get("v") != 1 or isinstance(doc.get("v"), bool):
        problems.append(Problem("wrong type or version", expected='"run-results", v 1', found=f"{show(doc.get('type'))}, v {show(_plain(doc.get('v')))}"))
    grader = doc.get("grader")
    if "grader" in doc:
        problems += check_keys(grader, (), optional=("proposed_score", "rationale"), where="grader")
    results = doc.get("results")
    if not isinstance(results, list):
        return [*problems, Problem("must be a list of results", where="results", found=show(_plain(results)))]
    items = spec["items"]
    named = [r.get("item") if isinstance(r, dict) else None for r in results]
    twice = sorted(i for i, n in Counter(x for x in named if isinstance(x, str)).items() if n > 1)
    if twice:
        problems.append(Problem(f"results name item(s) more than once: {', '.join(twice)}", where="results"))
    named_ids = {x for x in named if isinstance(x, str)}
    missing = [i for i in items if i not in named_ids]
    if missing:
        problems.append(Problem(f"no result for item(s) of the run spec: {', '.join(missing[:20])}{' …' if len(missing) > 20 else ''}", where="results",
                                expected="exactly one result per run-spec item"))
    spec_items = set(items)
    extra = [show(_plain(x)) for x in named if not isinstance(x, str) or x not in spec_items]
    if extra:
        problems.append(Problem(f"results for item(s) not in the run spec: {', '.join(extra[:20])}", where="results"))
    rules = spec["exclusion_rules"]
    for i, r in enumerate(results):
        w = f"results[{i}]"
        if not isinstance(r, dict):
            problems.append(Problem("a result must be an object", where=w, found=show(_plain(r))))
            continue
        item = r.get("item")
        if isinstance(item, str):
            w = f"results[{i}] ({item})"
        status = r.get("status")
        if status not in STATUSES:
            problems.append(Problem("unknown status", where=f"{w}.status", expected=" | ".join(STATUSES), found=show(_plain(status))))
            continue
        if status != SCORED:
            problems += check_keys(r, ("item", "status", "note"), optional=("rule",) if status == "excluded" else (), where=w)
            if "note" in r and not isinstance(r["note"], str):
                problems.append(Problem("a note is text", where=f"{w}.note", found=show(_plain(r["note"]))))
            if status == "excluded":
                rule = r.get("rule")
                if not (isinstance(rule, int) and not isinstance(rule, bool) and 0 <= rule < len(rules)):
                    problems.append(Problem("an excluded result names the index of one of the run spec's exclusion rules", where=f"{w}.rule",
                                            expected=f"an integer from 0 to {len(rules) - 1}" if rules else "an exclusion rule (the run spec has none)", found=show(_plain(rule))))
            continue
        problems += check_keys(r, ("item", "status", "fields"), where=w)
        answer = answers.get(item) if isinstance(item, str) else None
        fields = r.get("fields")
        if not isinstance(fields, list):
            problems.append(Problem("a scored result lists its fields", where=f"{w}.fields", found=show(_plain(fields))))
            continue
        if answer is None:
            continue
        seen: set[str] = set()
        for j, f in enumerate(fields):
            fw = f"{w}.fields[{j}]"
            if not isinstance(f, dict):
                problems.append(Problem("a field must be an object with name and output", where=fw, found=show(_plain(f))))
                continue
            name = f.get("name")
            if isinstance(name, str):
                fw = f"{w}.fields[{j}] ({name})"
            if not isinstance(name, str) or name not in answer:
                problems.append(Problem(f"names a field the item's answer lacks: {show(_plain(name))}", where=f"{fw}.name", expected=", ".join(sorted(answer))))
                continue
            if name in seen:
                problems.append(Problem(f"field {name} is given twice", where=fw))
            seen.add(name)
            a = answer[name]
            reported = is_reported_field(a["kind"], a["tier"])
            if "similarity" in f and not reported:
                problems.append(Problem(f"a {a['tier']} {a['kind']} field's similarity is computed from its output; only non-critical text fields "
                                        "take a reported similarity", where=f"{fw}.similarity", expected="no similarity member", found=show(_plain(f["similarity"]))))
            problems += check_keys({k: v for k, v in f.items() if reported or k != "similarity"}, ("name", "output"),
                                   optional=("similarity",) if reported else (), where=fw)
            if "output" in f:
                bad_numbers = _numbers(f["output"], f"{fw}.output")
                for nw, ntext in bad_numbers:
                    problems.append(Problem("an output holds a number that is not an integer within ±(2^53−1)", where=nw, expected="an integer, or the value as a string", found=ntext))
                if not bad_numbers:
                    want = value_kind_problem(a["kind"], f["output"])
                    if want:
                        article = "an" if a["kind"] == "array" else "a"
                        problems.append(Problem(f"wrong type of output for {article} {a['kind']} field", where=f"{fw}.output", expected=want, found=show(f["output"])))
                    problems += number_rule_problems(f["output"], f"{fw}.output")
            if reported:
                sim = f.get("similarity")
                if "similarity" not in f:
                    problems.append(Problem(f"a {a['tier']} text field needs the reported similarity", where=f"{fw}.similarity", expected='a decimal string in [0, 1], such as "0.93"'))
                elif similarity_form_problem(a["kind"], a["tier"], sim):
                    problems.append(Problem("a similarity is a decimal string in [0, 1]", where=f"{fw}.similarity", expected='a string such as "0.93"', found=show(_plain(sim))))
        absent = sorted(set(answer) - seen)
        if absent:
            problems.append(Problem(f"missing field(s) of the item's answer: {', '.join(absent)}", where=f"{w}.fields", expected="every field of the answer, once"))
    return problems


@dataclass
class _Decided:
    certified: Certified
    leaf: dict[str, Any]
    data: bytes
    record: bytes
    details: list[tuple[str, bytes]]


def certify_run(
    paths: Paths, source: Path, at: str | None = None, serial: str | None = None, expires_at: str | None = None
) -> Certified:
    """Decide the run the results in `source` belong to; refuse (writing nothing) on any problem."""
    return certify_runs(paths, [source], at, serial, expires_at)[0]


def certify_runs(
    paths: Paths, sources: list[Path], at: str | None = None, serial: str | None = None, expires_at: str | None = None,
    progress: Progress | None = None,
) -> list[Certified]:
    """Decide the runs of several results files under one lock and one ledger replay, all or
    nothing: any problem in any file refuses the whole batch, which writes nothing. Files are
    decided one at a time, so memory holds one run, not the batch."""
    if serial is not None and len(sources) != 1:
        raise InputError([problem("--serial", "a serial names one certificate: give one results file with --serial")])
    with appending(paths, "certify") as app:
        ledger = app.ledger
        when = event_time(at, ledger)
        problems: list[Problem] = []
        if expires_at is not None and not (is_time(expires_at) and expires_at > when):
            problems.append(problem("--expires-at", "must be a time after the issue time", expected=f"YYYY-MM-DDTHH:MM:SSZ after {when}", found=expires_at))
        plan = _plan(paths, ledger, sources, problems, progress)
        sealed = locate_sealed(paths, {i: c.commitment for _, run, spec in plan if not ledger.gates[run.gate].public
                                       for i in spec["items"] if (c := ledger.commit(i)) is not None})
        params_of: dict[str, dict[str, Any] | None] = {}
        leaves: list[dict[str, Any]] = []
        certified: list[Certified] = []
        for n, (source, run, spec) in enumerate(plan, start=1):
            file = str(source)
            res = read_results(source, file)  # again: a batch's parsed results are not all kept
            version = spec["methodology"]["version"]
            if version not in params_of:
                params_of[version] = methodology_params(paths, ledger, version, problems)
            params = params_of[version]
            if params is None:
                problems.append(problem(file, f"the methodology {version} pinned by run {run.id} is not published"))
                continue
            answers = _answers(paths, ledger, spec["items"], ledger.gates[run.gate].public, sealed, problems)
            d = _decide(ledger, file, res, run, spec, params, answers, serial or run.id, when, expires_at, problems)
            if d is not None and not problems:
                _stage_decided(app, d)
                leaves.append(d.leaf)
                certified.append(d.certified)
            if progress:
                progress("certifying", n, len(plan))
        if problems:
            what = f"run {show(_plain(plan[0][1].id))}" if len(sources) == 1 and plan else f"these {len(sources)} runs"
            raise InputError(problems, f"cannot certify {what}; nothing was written")
        app.append(leaves)
    return certified


def _plan(
    paths: Paths, ledger: Ledger, sources: list[Path], problems: list[Problem], progress: Progress | None
) -> list[tuple[Path, RunEvent, dict[str, Any]]]:
    """Which registered, undecided run each results file decides, and that run's spec."""
    plan: list[tuple[Path, RunEvent, dict[str, Any]]] = []
    named: dict[str, str] = {}
    for n, source in enumerate(sources, start=1):
        file = str(source)
        try:
            run_id = read_results(source, file).doc.get("run")
        except InputError as e:
            problems += e.problems
            continue
        run = ledger.runs.get(run_id) if isinstance(run_id, str) else None
        if run is None:
            problems.append(problem(file, f"run {show(_plain(run_id))} is not registered; register its spec first with 'transparency register'", "run"))
        elif run.id in ledger.certificate_of_run:
            s = ledger.certificate_of_run[run.id]
            problems.append(problem(file, f"run {run.id} is already certified (certificate {s}, {ledger.certificates[s].at}); every run gets exactly one certificate", "run"))
        elif run.id in named:
            problems.append(problem(file, f"run {run.id} is decided twice in this batch (also by {named[run.id]})", "run"))
        else:
            named[run.id] = file
            spec = load_spec(paths, ledger, run.id, problems)
            if spec is not None:
                plan.append((source, run, spec))
        if progress and n % 1000 == 0:
            progress("reading results", n, len(sources))
    return plan


def _stage_decided(app: LedgerAppender, d: _Decided) -> None:
    """A decided run's private documents and its certificate, written when the batch commits."""
    c, paths = d.certified, app.paths
    for item_id, data in d.details:
        app.stage(paths.details_file(c.serial, item_id, private=True), data, mode=0o600)
    app.stage(paths.grader_record_file(c.serial, private=c.sealed), d.record, mode=0o600 if c.sealed else 0o644)
    app.stage(paths.certificate_file(c.serial), d.data)


def _decide(
    ledger: Ledger, file: str, res: RunResults, run: RunEvent, spec: dict[str, Any], params: dict[str, Any],
    answers: dict[str, dict[str, Any]], serial: str, when: str, expires_at: str | None, problems: list[Problem],
) -> _Decided | None:
    """The certificate of one run, or None (with the problems recorded)."""
    before = len(problems)
    doc = res.doc
    if not is_id(serial):
        problems.append(problem("--serial", "malformed serial", expected="^[a-z0-9][a-z0-9_-]{0,63}$", found=serial))
    elif serial in ledger.certificates:
        problems.append(problem(file, f"serial {serial} is already used by the certificate of run {ledger.certificates[serial].run}; choose another with --serial"))
    finished = doc.get("finished_at")
    if not is_time(finished):
        problems.append(problem(file, "malformed time", "finished_at", expected="YYYY-MM-DDTHH:MM:SSZ", found=show(_plain(finished))))
    elif not run.at <= finished <= when:
        problems.append(problem(file, "finished_at must lie between the run's registration and the certificate's issue time", "finished_at",
                                expected=f"{run.at} ≤ finished_at ≤ {when}", found=finished))
    public = ledger.gates[run.gate].public
    problems += [p.at(file) for p in _check_results_shape(doc, spec, answers)]
    bad = _numbers(res.rationale, "grader.rationale")
    for nw, ntext in bad:
        problems.append(problem(file, "the rationale holds a number SPEC §1 does not allow, so the grader record could not keep it as received", nw, found=ntext))
    if not bad:
        problems += [p.at(file) for p in number_rule_problems(res.rationale, "grader.rationale")]
    if len(problems) > before:
        return None

    by_item = {r["item"]: r for r in doc["results"]}
    open_results: list[dict[str, Any]] = []
    for item_id in spec["items"]:
        r = by_item[item_id]
        if r["status"] == SCORED:
            given = {f["name"]: (f["output"], f.get("similarity")) for f in r["fields"]}
            open_results.append(build_open_result(item_id, answers[item_id], given, params))
        else:
            o = {"item": item_id, "status": r["status"], "note": r["note"]}
            if r["status"] == "excluded":
                o["rule"] = r["rule"]
            open_results.append(o)
    counts = Counter(r["status"] for r in open_results)
    passed = sum(1 for r in open_results if r.get("passed") is True)
    grading = grade_counts(dict(counts), passed, params)
    score, rule = band_score(res.proposed_json, grading.band)
    scored_ids = {r["item"] for r in open_results if r["status"] == SCORED}
    kept, dropped = keep_bullets(res.rationale, scored_ids)
    record = canonical.dumps({"type": "grader-record", "v": 1, "serial": serial, "salt": secrets.token_bytes(32).hex(),
                              "proposed_json": res.proposed_json, "rationale": res.rationale})
    details: list[tuple[str, bytes]] = []
    if public:
        results = open_results
    else:
        results = []
        for o in open_results:
            data = canonical.dumps({"type": "result-details", "v": 1, "serial": serial, "salt": secrets.token_bytes(32).hex(), "result": o})
            details.append((o["item"], data))
            results.append({"item": o["item"], "status": o["status"], "details": sha256_hex(data)})
    cert = {
        "type": "certificate", "v": 1, "serial": serial, "run": run.id, "issued_at": when, "expires_at": expires_at,
        "subject": spec["subject"], "gate": spec["gate"], "methodology": spec["methodology"],
        "run_spec": {"path": layout.run_spec(run.id), "sha256": run.sha256}, "finished_at": finished,
        "results": results, "summary": grading.summary,
        "grade": grading.grade, "band": grading.band, "worst_case_grade": grading.worst_case_grade,
        "best_case_grade": grading.best_case_grade,
        "grader": {"record": sha256_hex(record), "kept": len(kept), "dropped": dropped},
        "score": score, "score_rule": rule, "verdict": grading.verdict,
    }
    data = canonical.dumps(cert)
    own = check_certificate(cert, spec, params, public, layout.run_spec(run.id), run.sha256)
    if own:  # pragma: no cover - the engine and the checker disagreeing is a bug, never input
        raise AssertionError("certify produced a certificate its own checks reject: " + "; ".join(p.describe() for p in own))
    leaf = {"type": "certificate", "v": 1, "serial": serial, "run": run.id, "sha256": sha256_hex(data), "at": when}
    certified = Certified(serial, run.id, grading.verdict, grading.grade, score, rule, grading.summary, not public, when)
    return _Decided(certified, leaf, data, record, details)


def _answers(
    paths: Paths, ledger: Ledger, items: list[str], public: bool, sealed: dict[str, tuple[Path, int, int]], problems: list[Problem]
) -> dict[str, dict[str, Any]]:
    """The answer of every item of a run: from the published reveal on a public gate, from the
    sealed document on a secret one, each checked against its commitment."""
    out: dict[str, dict[str, Any]] = {}
    for item_id in items:
        c = ledger.commit(item_id)
        if c is None:
            continue
        if not public:
            where = sealed.get(item_id)
            if where is None:
                problems.append(problem(paths.show(paths.sealed_dir), f"no sealed document of {item_id} hashes to its commitment; its answer is needed to score it"))
            else:
                out[item_id] = loads_strict(read_located(where))["item"]["answer"]
            continue
        file = paths.reveal_file(item_id)
        try:
            data = file.read_bytes()
        except OSError:
            problems.append(problem(paths.show(file), f"the reveal document of {item_id} is missing"))
            continue
        if sha256_hex(data) != c.commitment:
            problems.append(problem(paths.show(file), f"the reveal document of {item_id} does not hash to its commitment", expected=c.commitment, found=sha256_hex(data)))
            continue
        out[item_id] = loads_strict(data)["item"]["answer"]
    return out
