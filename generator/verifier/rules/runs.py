"""Runs (format v1 §4, §6): the run spec's shape and the rules a registered run obeys."""

from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.core.formats import (
    GATE_RE,
    VERSION_RE,
    as_dict,
    as_list,
    check_keys,
    is_gate_id,
    is_hex64,
    is_id,
    is_int,
    same,
    sha256_hex,
)
from generator.verifier.core.text import show
from generator.verifier.rules.drawn_items import drawn_spec_problems, run_draw_problems
from generator.verifier.rules.events import RunEvent
from generator.verifier.rules.ledger import Ledger
from generator.verifier.rules.methodology_rules import Methodology
from generator.verifier.rules.subjects import check_subject, name_problems, subject_fold

RUN_SPEC_KEYS = (
    "type",
    "v",
    "id",
    "previous_run",
    "subject",
    "gate",
    "question",
    "items",
    "budget",
    "repetitions",
    "metrics",
    "exclusion_rules",
    "methodology",
    "judge",
)
# FORMAT.md reading 4: the budget members this project gives a meaning, each a count (seconds,
# tokens); other members are the program's own, any JSON value.
BUDGET_LIMITS = ("max_wall_clock_seconds", "max_output_tokens_per_item")


def check_run_spec(spec: Any) -> list[Problem]:
    """Problems with a run spec's shape (format v1 §6; a drawn run's, FORMAT.md "Draws and timestamps")."""
    # A spec that draws its items is v 2 and names a draw where v1 lists items: a v1 reader
    # refuses it rather than read a run without items.
    drawn = isinstance(spec, dict) and "draw" in spec
    keys = tuple("draw" if k == "items" else k for k in RUN_SPEC_KEYS) if drawn else RUN_SPEC_KEYS
    problems = check_keys(spec, keys)
    if not isinstance(spec, dict):
        return problems
    # Every problem of a spec names its field, as the checks below do: a member that is missing or
    # not allowed is named by itself.
    unknown = ", ".join(sorted(str(k) for k in spec if k not in keys))
    missing = {f"missing {k!r}": k for k in keys}
    problems = [p.at("", missing.get(p.message, unknown)) if not p.where else p for p in problems]
    version = 2 if drawn else 1
    if spec.get("type") != "run-spec" or not (is_int(spec.get("v")) and spec["v"] == version):
        problems.append(
            Problem(
                "wrong type or version",
                where="type" if spec.get("type") != "run-spec" else "v",
                expected=f'"run-spec", v {version}',
                found=f"{show(spec.get('type'))}, v {show(spec.get('v'))}",
            )
        )
    if not is_id(spec.get("id")):
        problems.append(Problem("malformed run id", where="id", found=show(spec.get("id"))))
    prev = spec.get("previous_run")
    if prev is not None and not is_id(prev):
        problems.append(Problem("must be a run id or null", where="previous_run", found=show(prev)))
    problems += check_subject(spec.get("subject"), "subject")
    items = spec.get("items")
    if drawn:
        problems += drawn_spec_problems(spec)
    elif not (isinstance(items, list) and items and all(is_id(i) for i in items)):
        problems.append(Problem("must be a non-empty list of item ids", where="items", found=show(items)))
    elif len(set(items)) != len(items):
        dup = sorted({i for i in items if items.count(i) > 1})
        problems.append(Problem("items must be distinct", where="items", found=", ".join(dup)))
    if spec.get("repetitions") != 1 or not is_int(spec.get("repetitions")):
        problems.append(
            Problem("repetitions is 1 in v1", where="repetitions", expected="1", found=show(spec.get("repetitions")))
        )
    question = spec.get("question")
    if not (isinstance(question, str) and question.strip()):
        problems.append(Problem("must be a non-empty string", where="question", found=show(question)))
    if not is_gate_id(spec.get("gate")):
        problems.append(
            Problem("malformed gate id", where="gate", expected=GATE_RE.pattern, found=show(spec.get("gate")))
        )
    budget = spec.get("budget")
    if "budget" in spec and not isinstance(budget, dict):
        problems.append(Problem("must be an object", where="budget", found=show(budget)))
    elif isinstance(budget, dict):
        for k in BUDGET_LIMITS:
            if k in budget and not (is_int(budget[k]) and budget[k] >= 1):
                problems.append(
                    Problem("must be a whole number, at least 1", where=f"budget.{k}", found=show(budget[k]))
                )
    metrics = spec.get("metrics")
    if "metrics" in spec and not (isinstance(metrics, list) and all(isinstance(x, str) for x in metrics)):
        problems.append(Problem("must be a list of strings", where="metrics", found=show(metrics)))
    rules = spec.get("exclusion_rules")
    if not (isinstance(rules, list) and all(isinstance(r, str) for r in rules)):
        problems.append(Problem("must be a list of strings", where="exclusion_rules", found=show(rules)))
    problems += _methodology_pin_shape(spec.get("methodology"))
    problems += _judge_shape(spec.get("judge"))
    return problems


def _methodology_pin_shape(m: Any) -> list[Problem]:
    problems = check_keys(m, ("version", "sha256"), where="methodology")
    if not isinstance(m, dict):
        return problems
    if "version" in m and not (isinstance(m["version"], str) and VERSION_RE.fullmatch(m["version"])):
        problems.append(
            Problem(
                "malformed methodology version",
                where="methodology.version",
                expected=VERSION_RE.pattern,
                found=show(m["version"]),
            )
        )
    if "sha256" in m and not is_hex64(m["sha256"]):
        problems.append(Problem("malformed hash", where="methodology.sha256", found=show(m["sha256"])))
    return problems


def _judge_shape(judge: Any) -> list[Problem]:
    problems = check_keys(
        judge, ("provider", "model", "version", "rubric_sha256", "seed"), optional=JUDGE_PINS, where="judge"
    )
    if not isinstance(judge, dict):
        return problems
    problems += judge_pin_problems(judge)
    if "provider" in judge:
        # The independence rule compares it with the subject's organization: it must read
        # as what it is, like the organization itself.
        problems += name_problems(judge["provider"], "judge.provider")
    for k in ("model", "version"):
        if k in judge and not isinstance(judge[k], str):
            problems.append(Problem("must be a string", where=f"judge.{k}", found=show(judge[k])))
    if "rubric_sha256" in judge and not is_hex64(judge["rubric_sha256"]):
        problems.append(Problem("malformed hash", where="judge.rubric_sha256", found=show(judge["rubric_sha256"])))
    if "seed" in judge and not (judge["seed"] is None or is_int(judge["seed"])):
        problems.append(Problem("must be an integer or null", where="judge.seed", found=show(judge["seed"])))
    return problems


# Format v2 (FORMAT.md, "Judge pinning"): what else must be fixed before a judge is trusted.
JUDGE_PINS = ("rubric", "score_direction", "route", "transcript_scope")
SCORE_DIRECTIONS = ("higher_is_better", "lower_is_better")


def judge_pin_problems(judge: dict[str, Any]) -> list[Problem]:
    """A pinned judge gives all four pins or none: a rubric hash without its text cannot be
    read, and a text without a direction or a scope cannot be applied the same way twice."""
    given = [k for k in JUDGE_PINS if k in judge]
    if not given:
        return []
    problems = []
    missing = [k for k in JUDGE_PINS if k not in judge]
    if missing:
        problems.append(
            Problem(
                f"a pinned judge gives {', '.join(JUDGE_PINS)} together; missing {', '.join(missing)}",
                where="judge",
            )
        )
    rubric = judge.get("rubric")
    if "rubric" in judge:
        if not (isinstance(rubric, str) and rubric.strip()):
            problems.append(Problem("the rubric's own text, non-empty", where="judge.rubric", found=show(rubric, 80)))
        elif is_hex64(judge.get("rubric_sha256")) and sha256_hex(rubric.encode("utf-8")) != judge["rubric_sha256"]:
            problems.append(
                Problem(
                    "rubric_sha256 is not the SHA-256 of the rubric's text (UTF-8)",
                    where="judge.rubric_sha256",
                    expected=sha256_hex(rubric.encode("utf-8")),
                    found=judge["rubric_sha256"],
                )
            )
    if "score_direction" in judge and judge["score_direction"] not in SCORE_DIRECTIONS:
        problems.append(
            Problem(
                "unknown score direction",
                where="judge.score_direction",
                expected=" | ".join(SCORE_DIRECTIONS),
                found=show(judge["score_direction"]),
            )
        )
    for k in ("route", "transcript_scope"):
        if k in judge and not (isinstance(judge[k], str) and judge[k].strip()):
            problems.append(Problem("must be a non-empty string", where=f"judge.{k}", found=show(judge[k])))
    return problems


def check_run_rules(
    ledger: Ledger,
    run: RunEvent,
    spec: dict[str, Any],
    m: Methodology | None,
    earlier_specs: dict[str, dict[str, Any]],
) -> list[Problem]:
    """The rules a registered run must obey given the ledger around it (format v1 §4, §6).

    `earlier_specs` holds the specs of runs registered before this one, for the
    one-observation rule. Used by the verifier and by `register`. A drawn run's spec is read as
    drawn_items.effective_spec gives it (its items those its draw recorded), and so are the
    earlier ones.
    """
    problems = _run_leaf_problems(run, spec)
    problems += _methodology_pin_problems(ledger, run, as_dict(spec.get("methodology")))
    gate = ledger.gates.get(run.gate)
    secret = gate is not None and not gate.public
    items = as_list(spec.get("items"))
    problems += _run_items_problems(ledger, run, items, secret)
    # previous_run: the last run of the same subject name and gate, decided before this one.
    same_subject = ledger.runs_before(run)
    prev = same_subject[-1].id if same_subject else None
    if spec.get("previous_run") != prev:
        problems.append(
            Problem(
                "previous_run is not the last run of this subject on this gate",
                where="previous_run",
                expected=show(prev),
                found=show(spec.get("previous_run")),
            )
        )
    if prev is not None:
        decided = ledger.decided_at(prev)
        if decided is None or decided > run.index:
            problems.append(Problem(f"registered while the previous run {prev} was still open", where="previous_run"))
    draw = as_dict(spec.get("draw"))
    if draw:
        seen = {i for r in same_subject for i in as_list(earlier_specs.get(r.id, {}).get("items"))}
        problems += run_draw_problems(ledger, run, spec, m, seen)
    elif secret and m is not None and m.draws_required:
        problems.append(Problem("the methodology requires a secret-gate run to draw its items", where="items"))
    if m is not None:
        problems += _methodology_requirements(m, spec, draw.get("count", 0) if draw else len(items), secret)
    if secret:
        problems += _reused_items(set(items), same_subject, earlier_specs)
    return problems


def _run_leaf_problems(run: RunEvent, spec: dict[str, Any]) -> list[Problem]:
    """The spec's id, subject and gate against the run's ledger leaf."""
    problems = []
    if spec.get("id") != run.id:
        problems.append(
            Problem("run spec id differs from the ledger", where="id", expected=run.id, found=show(spec.get("id")))
        )
    if not same(spec.get("subject"), run.subject):
        problems.append(
            Problem(
                "subject differs from the run's ledger leaf",
                where="subject",
                expected=show(run.subject),
                found=show(spec.get("subject")),
            )
        )
    if spec.get("gate") != run.gate:
        problems.append(
            Problem(
                "gate differs from the run's ledger leaf", where="gate", expected=run.gate, found=show(spec.get("gate"))
            )
        )
    return problems


def _methodology_pin_problems(ledger: Ledger, run: RunEvent, pin: dict[str, Any]) -> list[Problem]:
    """The pinned methodology: a version published before the run, with the hash it was published with."""
    version = pin.get("version")
    published = ledger.methodologies.get(version) if isinstance(version, str) else None
    if published is None or published.index > run.index:
        return [
            Problem(
                "pins a methodology version not published before the run",
                where="methodology.version",
                found=show(pin.get("version")),
            )
        ]
    if published.sha256 != pin.get("sha256"):
        return [
            Problem(
                "pinned methodology hash differs from the published one",
                where="methodology.sha256",
                expected=published.sha256,
                found=show(pin.get("sha256")),
            )
        ]
    return []


def _run_items_problems(ledger: Ledger, run: RunEvent, items: list[Any], secret: bool) -> list[Problem]:
    """Each item committed to the run's gate before the run; a public gate's revealed before it, a
    secret gate's still sealed when the run was registered and until it was decided."""
    problems = []
    cert_index = ledger.decided_at(run.id)  # a withdrawal decides a run as a certificate does
    for item_id in items:
        c = ledger.commit_place(item_id) if isinstance(item_id, str) else None
        if c is None or c[0] > run.index:
            problems.append(Problem(f"item {item_id} was not committed before the run", where="items"))
            continue
        if c[1] != run.gate:
            problems.append(
                Problem(f"item {item_id} is not of the run's gate", where="items", expected=run.gate, found=c[1])
            )
        r = ledger.reveals.get(item_id)
        if not secret:
            if r is None or r.index > run.index:
                problems.append(Problem(f"public-gate item {item_id} was not revealed before the run", where="items"))
        elif r is not None and r.index < run.index:
            problems.append(
                Problem(
                    f"item {item_id} of a secret gate was already revealed when the run was registered: its result "
                    "would be contaminated",
                    where="items",
                    expected="a sealed item",
                    found=f"revealed at entries[{r.index}]",
                )
            )
        elif r is not None and (cert_index is None or r.index < cert_index):
            problems.append(
                Problem(
                    f"sealed item {item_id} was revealed while the run was open",
                    where="items",
                    expected="revealed after the certificate",
                    found=f"revealed at entries[{r.index}]",
                )
            )
    return problems


def _methodology_requirements(m: Methodology, spec: dict[str, Any], item_count: int, secret: bool) -> list[Problem]:
    """What the pinned methodology asks of a run: a judge independent of the subject's
    organization, if it says so, and enough items on a secret gate."""
    problems = []
    if m.independent_judge:
        judge, subject = as_dict(spec.get("judge")), as_dict(spec.get("subject"))
        provider, organization = judge.get("provider"), subject.get("organization")
        if not (isinstance(provider, str) and isinstance(organization, str)) or subject_fold(provider) in (
            "",
            subject_fold(organization),
        ):
            problems.append(
                Problem(
                    "the judge must be independent of the subject's organization",
                    where="judge.provider",
                    expected=f"not {subject.get('organization')!r}",
                    found=show(judge.get("provider")),
                )
            )
    if secret and item_count < m.min_items_secret_gate:
        problems.append(
            Problem(
                "too few items for a secret gate",
                where="items",
                expected=f"at least {m.min_items_secret_gate}",
                found=str(item_count),
            )
        )
    return problems


def _reused_items(
    mine: set[Any], same_subject: list[RunEvent], earlier_specs: dict[str, dict[str, Any]]
) -> list[Problem]:
    """The one-observation rule: a subject meets a sealed item in one run only."""
    problems = []
    for earlier in same_subject:
        reused = sorted(mine & set(as_list(earlier_specs.get(earlier.id, {}).get("items"))))
        if reused:
            problems.append(
                Problem(
                    f"reuses sealed items already run by this subject on this gate in run {earlier.id}",
                    where="items",
                    found=", ".join(reused[:5]),
                )
            )
    return problems
