"""Judge agreement (FORMAT.md, "Judge agreement (v2)"): blind human label sets, committed in the
ledger before the judge's scores are disclosed, and the report that measures the judge against
them, one document the generator publishes and the verifier recomputes from the same code.

Why a commitment first: labels written after the labellers saw the judge's scores measure how
well people copy, not how well the judge agrees. The ledger can show that a label set was fixed
before the certificate that discloses the judge's labels, not that nobody showed them earlier;
the methodology page says so. The salt keeps the commitment from telling a handful of ordinal
labels apart by guessing.

Why the judge's labels come from the certificate: it is signed and bound in the ledger after the
label set, so the published labels of neither side can change once the other is public, and the
report is only ever recomputed, never taken on trust. What the ledger cannot order is the
operator's private access: it holds both sides before it certifies, and could fit the judge's
labels to the committed ones (or choose which human labels to commit) unnoticed. Every scored
result must label every dimension the humans labelled, so that leaving out the judge where it
disagrees is refused; the rest is said on the methodology page."""

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.core.formats import ID_RE, check_keys, is_hex64, is_id, is_int
from generator.verifier.core.text import show
from generator.verifier.rules.agreement_statistics import (
    AgreementError,
    agreement_decimal,
    agreement_report,
    agreement_scale,
)


@dataclass(frozen=True)
class LabelSetEvent:
    id: str
    run: str
    sha256: str
    index: int
    at: str


LABEL_SET_KEYS = ("type", "v", "id", "run", "rubric_sha256", "scale", "labels", "salt")
LABEL_KEYS = ("labeller", "item", "dimension", "label")
JUDGE_LABELS = "judge_labels"
# An ordinal rubric has a handful of points; the bound keeps kappa's k×k tables small whatever a
# hostile site lists.
MAX_SCALE = 101
# A rubric has a few dimensions; the bounds keep one small file from costing a verifier hours.
MAX_DIMENSIONS = 64
MAX_LABELS = 1_000_000
MAX_LABEL = 2**53 - 1
REPORT_TYPE = "agreement-report"
STATISTICS = ("raw_agreement", "kappa_linear", "kappa_quadratic", "alpha_ordinal")


def labels_path(set_id: str) -> str:
    return f"agreement/{set_id}/labels.json"


def report_path(set_id: str) -> str:
    return f"agreement/{set_id}.json"


def label_set_event_problems(
    leaf: dict[str, Any], earlier: LabelSetEvent | None, registered: bool, certificate: tuple[str, int] | None
) -> list[Problem]:
    """A label-set ledger leaf (its members' types already checked): a new id, of a run
    registered before and not yet certified (`certificate`: its serial and leaf index, if it is)."""
    set_id, run_id = leaf["id"], leaf["run"]
    problems = []
    if not is_id(set_id):
        problems.append(Problem("malformed label-set id", where="id", expected=ID_RE.pattern, found=show(set_id)))
    elif earlier is not None:
        problems.append(
            Problem(
                f"label set {set_id} is committed twice",
                where="id",
                found=f"committed before at entries[{earlier.index}]",
            )
        )
    if not registered:
        problems.append(Problem("label set for a run that was not registered before", where="run", found=show(run_id)))
    elif certificate is not None:
        # The certificate discloses the judge's labels: a label set after it is not blind.
        problems.append(
            Problem(
                f"label set committed after certificate {certificate[0]} (entries[{certificate[1]}]) disclosed the "
                f"judge's scores of run {run_id}: human labels must be committed blind",
                where="run",
                expected="a run whose certificate is not yet issued",
                found=run_id,
            )
        )
    if not is_hex64(leaf["sha256"]):
        problems.append(Problem("malformed hash", where="sha256", found=show(leaf["sha256"])))
    return problems


def _is_point(value: Any) -> bool:
    return is_int(value) and abs(value) <= MAX_LABEL


def judge_labels_problems(value: Any, where: str, render: Any = show) -> list[Problem]:
    """A scored result's `judge_labels`: the judge's ordinal label by rubric dimension, an object
    of id -> integer with at least one dimension."""
    w = f"{where}.{JUDGE_LABELS}"
    if not isinstance(value, dict) or not value:
        return [
            Problem(
                "the judge's labels are an object of rubric dimension -> integer label",
                where=w,
                found=render(value),
            )
        ]
    if len(value) > MAX_DIMENSIONS:
        return [
            Problem("too many rubric dimensions", where=w, expected=f"at most {MAX_DIMENSIONS}", found=str(len(value)))
        ]
    problems = []
    for k, v in value.items():
        if not is_id(k):
            problems.append(Problem("a rubric dimension is an id", where=w, expected=ID_RE.pattern, found=render(k)))
        elif not _is_point(v):
            problems.append(
                Problem("a judge's label is an integer on the rubric's scale", where=f"{w}.{k}", found=render(v))
            )
    return problems


def scale_problems(scale: Any, where: str = "scale") -> list[Problem]:
    if not isinstance(scale, list) or not 2 <= len(scale) <= MAX_SCALE or not all(_is_point(c) for c in scale):
        return [
            Problem(
                "the scale is the rubric's ordinal categories, 2 to 101 integers",
                where=where,
                found=show(scale, 80),
            )
        ]
    try:
        agreement_scale(scale)
    except AgreementError as e:
        return [Problem(str(e), where=where, expected="strictly increasing integers")]
    return []


def label_rows_problems(
    rows: Any, scale: list[int] | None, items: Container[str] | None, where: str = "labels", ordered: bool = True
) -> list[Problem]:
    """Human label rows, each problem at the row's own index: each labeller's ordinal label of
    one item on one dimension (on `scale` and of `items`, when known), no labeller labelling an
    item's dimension twice, at most MAX_DIMENSIONS dimensions and MAX_LABELS rows, and, when
    `ordered` (a committed label set), sorted by dimension, item and labeller."""
    if not isinstance(rows, list) or not rows:
        return [Problem("labels are a non-empty list of human labels", where=where, found=show(rows, 80))]
    if len(rows) > MAX_LABELS:
        return [Problem("too many labels", where=where, expected=f"at most {MAX_LABELS}", found=str(len(rows)))]
    problems: list[Problem] = []
    keys: list[tuple[str, str, str] | None] = []
    points = set(scale) if scale is not None else None
    for i, r in enumerate(rows):
        w = f"{where}[{i}]"
        found = check_keys(r, LABEL_KEYS, where=w)
        if not isinstance(r, dict):
            problems += found
            keys.append(None)
            continue
        for k in ("labeller", "dimension"):
            if k in r and not is_id(r[k]):
                found.append(Problem(f"a {k} is an id", where=f"{w}.{k}", expected=ID_RE.pattern, found=show(r[k])))
        if "item" in r and not (isinstance(r["item"], str) and (items is None or r["item"] in items)):
            found.append(Problem("labels an item that is not the run's", where=f"{w}.item", found=show(r["item"])))
        if "label" in r and not (_is_point(r["label"]) and (points is None or r["label"] in points)):
            found.append(
                Problem(
                    "a label is one of the scale's categories",
                    where=f"{w}.label",
                    expected=show(scale) if scale is not None else "an integer",
                    found=show(r["label"]),
                )
            )
        problems += found
        keys.append((r["dimension"], r["item"], r["labeller"]) if not found else None)
    dimensions = {k[0] for k in keys if k is not None}
    if len(dimensions) > MAX_DIMENSIONS:
        problems.append(
            Problem(
                "too many rubric dimensions",
                where=where,
                expected=f"at most {MAX_DIMENSIONS}",
                found=str(len(dimensions)),
            )
        )
    seen: dict[tuple[str, str, str], int] = {}
    for i, key in enumerate(keys):
        if key is None:
            continue
        if key in seen:
            problems.append(
                Problem(
                    f"labeller {key[2]} labels item {key[1]} on {key[0]} twice (first at {where}[{seen[key]}])",
                    where=f"{where}[{i}]",
                    found=show(list(key)),
                )
            )
        seen.setdefault(key, i)
    if ordered and not problems:
        for i in range(1, len(keys)):
            a, b = keys[i - 1], keys[i]
            if a is not None and b is not None and b < a:
                problems.append(
                    Problem(
                        "labels are sorted by dimension, then item, then labeller",
                        where=f"{where}[{i}]",
                        found=show(list(b)),
                    )
                )
                break
    return problems


def label_set_problems(doc: Any, set_id: str, run_id: str, spec: dict[str, Any]) -> list[Problem]:
    """A label-set document against its ledger leaf (id, run) and its run spec (items, rubric)."""
    if not isinstance(doc, dict):
        return [Problem("a label set is an object", found=show(doc, 80))]
    problems = check_keys(doc, LABEL_SET_KEYS)
    if doc.get("type") != "label-set" or not (is_int(doc.get("v")) and doc["v"] == 2):
        problems.append(
            Problem(
                "wrong type or version",
                expected='"label-set", v 2',
                found=f"{show(doc.get('type'))}, v {show(doc.get('v'))}",
            )
        )
    if doc.get("id") != set_id:
        problems.append(
            Problem(
                "id differs from the ledger's label-set leaf", where="id", expected=set_id, found=show(doc.get("id"))
            )
        )
    if doc.get("run") != run_id:
        problems.append(
            Problem(
                "run differs from the ledger's label-set leaf", where="run", expected=run_id, found=show(doc.get("run"))
            )
        )
    rubric = spec.get("judge", {}).get("rubric_sha256") if isinstance(spec.get("judge"), dict) else None
    if doc.get("rubric_sha256") != rubric:
        problems.append(
            Problem(
                "the labellers' rubric is not the judge's: humans label with the rubric the run spec pins",
                where="rubric_sha256",
                expected=show(rubric),
                found=show(doc.get("rubric_sha256")),
            )
        )
    if "salt" in doc and not is_hex64(doc["salt"]):
        problems.append(Problem("a salt is 32 bytes in hex", where="salt", found=show(doc["salt"])))
    scale = doc.get("scale")
    bad_scale = scale_problems(scale)
    problems += bad_scale
    problems += label_rows_problems(doc.get("labels"), None if bad_scale else scale, set(spec.get("items", [])))
    return problems


def label_set_due(public: bool, certified: bool, items: Iterable[str], revealed: Container[str]) -> bool:
    """A label set and its report are published once the certificate has disclosed the judge's
    labels: at once on a public gate, on a secret one when every item of the run is revealed (a
    human label of a sealed item says how good the subject's answer was, as a pass would)."""
    return certified and (public or all(i in revealed for i in items))


def judge_labels_of(results: Iterable[Any]) -> dict[tuple[str, str], int]:
    """The judge's label by (item, dimension), from open results (a public certificate's, or the
    `result` of each published details document)."""
    out: dict[tuple[str, str], int] = {}
    for r in results:
        if (
            isinstance(r, dict)
            and isinstance(r.get("item"), str)
            and r.get("status") == "scored"
            and isinstance(r.get(JUDGE_LABELS), dict)
        ):
            for dim, label in r[JUDGE_LABELS].items():
                out[(r["item"], dim)] = label
    return out


def judge_coverage_problems(label_set: dict[str, Any], results: Iterable[Any]) -> list[Problem]:
    """Every scored result labelled by the judge on every dimension the label set's humans
    labelled: a judge's label left out where it would disagree would raise every figure."""
    dimensions = sorted({r["dimension"] for r in label_set["labels"]})
    problems = []
    for r in results:
        if not (isinstance(r, dict) and r.get("status") == "scored" and isinstance(r.get("item"), str)):
            continue
        labels = r.get(JUDGE_LABELS)
        missing = [d for d in dimensions if not (isinstance(labels, dict) and d in labels)]
        if missing:
            problems.append(
                Problem(
                    f"the judge did not label scored item {r['item']} on {', '.join(missing)}, which label set "
                    f"{label_set['id']} measures it on",
                    where=f"{r['item']}.{JUDGE_LABELS}",
                    expected=f"a label on each of {', '.join(dimensions)}",
                    found=show(sorted(labels) if isinstance(labels, dict) else None),
                )
            )
    return problems


def _figure(value: Fraction | None) -> dict[str, str] | None:
    if value is None:
        return None
    exact = f"{value.numerator}/{value.denominator}" if value.denominator != 1 else str(value.numerator)
    return {"exact": exact, "value": agreement_decimal(value) or ""}


def report_document(
    label_set: dict[str, Any], labels_sha256: str, serial: str, judge: Mapping[tuple[str, str], int]
) -> dict[str, Any]:
    """The published report of a valid label set against the judge's labels of certificate
    `serial`. AgreementError if a judge's label is not on the label set's scale."""
    human = [(r["labeller"], r["item"], r["dimension"], r["label"]) for r in label_set["labels"]]
    rows = agreement_report(human, judge, label_set["scale"])
    return {
        "type": REPORT_TYPE,
        "v": 2,
        "id": label_set["id"],
        "run": label_set["run"],
        "serial": serial,
        "labels": {"path": labels_path(label_set["id"]), "sha256": labels_sha256},
        "scale": label_set["scale"],
        "dimensions": [
            {
                "dimension": dim,
                "sample_size": row["sample_size"],
                "pairs": row["pairs"],
                "human_labels_without_judge": row["human_labels_without_judge"],
                **{k: _figure(row[k]) for k in STATISTICS},  # type: ignore[literal-required]
                "disagreements": [
                    {"item": item, "labeller": labeller, "human": h, "judge": j}
                    for item, labeller, h, j in row["disagreements"]
                ],
            }
            for dim, row in rows.items()
        ],
    }
