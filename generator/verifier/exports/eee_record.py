"""A certificate as an Every Eval Ever record (schema 0.3.0): the aggregate record (the pass rate with
its Wilson interval, the methodology's score and its grade as levels, the judge under llm_scoring)
and, where the gate is public, the instance-level rows of its scored items. Made from the published
certificate, its run spec, the methodology and the items' reveal documents alone, and written byte
for byte the same by the build and by the verifier, which compares (FORMAT.md, "Exports").

The record carries the certificate's SHA-256, its ledger leaf and the path of its inclusion proof,
so that the coalition's datastore can trace it back. Its datastore path is
`data/<collection>/<developer>/<model>/<uuid>.json`, the collection the program's origin with `/`
as `_`, the developer and model the subject's organization and id (as the model id), the UUID (a
version 4 form) made from the certificate's SHA-256; the instance rows sit beside it as
`<uuid>_samples.jsonl`.
"""

import calendar
import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from generator.verifier.rules.ledger import Ledger
from generator.verifier.rules.methodology_rules import Methodology

EEE_SCHEMA_VERSION = "0.3.0"
EEE_FOLDER = "eee"
_SLUG_RE = re.compile(r"[^a-z0-9._-]+")


def slug(text: str) -> str:
    """A datastore path component: lower case, runs of anything but letters, digits, '.', '_'
    and '-' as one '-'."""
    return _SLUG_RE.sub("-", text.lower()).strip("-.") or "unnamed"


class Unremade(Exception):
    """An export cannot be remade from what the site holds; the reason is failed where that is checked."""


def record_uuid(cert_sha256: str) -> str:
    """A UUID of version 4's form made from the certificate's SHA-256, so that the same
    certificate is always the same record."""
    h = bytearray(bytes.fromhex(cert_sha256)[:16])
    h[6] = (h[6] & 0x0F) | 0x40
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def model_id(subject: Mapping[str, Any]) -> str:
    return f"{slug(str(subject['organization']))}/{slug(str(subject['id']))}-{slug(str(subject['version']))}"


def datastore_folder(origin: str, subject: Mapping[str, Any]) -> str:
    developer, model = model_id(subject).split("/")
    return f"data/{slug(origin.replace('/', '_'))}/{developer}/{model}"


def export_paths(serial: str, cert_sha256: str, instances: bool) -> tuple[str, str | None]:
    """The site paths of a certificate's record and, when it has instance rows, of their file."""
    base = f"certificates/{serial}/{EEE_FOLDER}/{record_uuid(cert_sha256)}"
    return f"{base}.json", (f"{base}_samples.jsonl" if instances else None)


def epoch_seconds(at: str) -> int:
    """A time of the project's form (UTC, whole seconds) as seconds since the epoch."""
    return calendar.timegm(time.strptime(at, "%Y-%m-%dT%H:%M:%SZ"))


def eee_paths(serial: str, cert_sha256: str, public: bool) -> list[str]:
    """The site paths of a certificate's Every Eval Ever files: the record, and on a public gate
    its instance rows."""
    record, samples = export_paths(serial, cert_sha256, public)
    return [record] if samples is None else [record, samples]


def _number(text: Any) -> float:
    return float(text)


def _results(
    cert: Mapping[str, Any], spec: Mapping[str, Any], levels: list[str], source: dict[str, Any], name: str
) -> list[dict[str, Any]]:
    common = {"evaluation_name": name, "source_data": source, "evaluation_timestamp": cert["finished_at"]}
    made = (_pass_rate(cert), _score(cert), _grade(cert, spec, levels))
    return [{"evaluation_result_id": f"{cert['serial']}/{r[0]}", **common, **r[1]} for r in made if r is not None]


def _pass_rate(cert: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    summary = cert["summary"]
    if summary.get("pass_rate") is None:
        return None
    counts = {k: str(summary[k]) for k in ("total", "scored", "passed", "not_run", "infra_error", "excluded")}
    score: dict[str, Any] = {"score": _number(summary["pass_rate"]), "details": counts}
    ci = summary.get("pass_rate_ci95")
    if isinstance(ci, list) and len(ci) == 2:
        score["uncertainty"] = {
            "confidence_interval": {
                "lower": _number(ci[0]),
                "upper": _number(ci[1]),
                "confidence_level": 0.95,
                "method": "wilson",
            },
            "num_samples": int(summary["scored"]),
        }
    metric = {
        "evaluation_description": "Share of the scored items whose score reached the item threshold",
        "metric_id": "pass_rate",
        "metric_name": "Pass rate",
        "metric_kind": "pass_rate",
        "metric_unit": "percent",
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0,
        "max_score": 100,
    }
    return "pass_rate", {"metric_config": metric, "score_details": score}


def _score(cert: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    if cert.get("score") is None:
        return None
    metric = {
        "evaluation_description": f"The certificate's score under rule {cert['score_rule']}",
        "metric_id": "certificate_score",
        "metric_name": "Certificate score",
        "metric_kind": "score",
        "metric_unit": "points",
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0,
        "max_score": 100,
    }
    details = {"score": cert["score"], "details": {"verdict": str(cert["verdict"])}}
    return "score", {"metric_config": metric, "score_details": details}


def _judges(judge: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "judges": [
            {
                "model_info": {
                    "name": str(judge["model"]),
                    "id": f"{slug(str(judge['provider']))}/{slug(str(judge['model']))}",
                    "developer": str(judge["provider"]),
                    "additional_details": {
                        "deployment_type": "unknown",
                        "model_availability": "unknown",
                        "version": str(judge["version"]),
                        "seed": str(judge["seed"]),
                    },
                }
            }
        ],
        "input_prompt": f"the rubric of SHA-256 {judge['rubric_sha256']}",
    }


def _grade(cert: Mapping[str, Any], spec: Mapping[str, Any], levels: list[str]) -> tuple[str, dict[str, Any]] | None:
    if cert.get("grade") not in levels:
        return None
    metric: dict[str, Any] = {
        "evaluation_description": "The certificate's grade, from the lowest band to the highest",
        "metric_id": "certificate_grade",
        "metric_name": "Grade",
        "metric_kind": "grade",
        "lower_is_better": False,
        "score_type": "levels",
        "level_names": levels,
        "has_unknown_level": False,
    }
    judge = spec.get("judge")
    if isinstance(judge, Mapping):
        metric["llm_scoring"] = _judges(judge)
    worst, best = cert.get("worst_case_grade"), cert.get("best_case_grade")
    details = {"grade": str(cert["grade"]), "worst_case": str(worst), "best_case": str(best)}
    return "grade", {
        "metric_config": metric,
        "score_details": {"score": levels.index(cert["grade"]), "details": details},
    }


def eee_record(
    cert: Mapping[str, Any],
    cert_sha256: str,
    leaf_index: int,
    spec: Mapping[str, Any],
    levels: list[str],
    program: Mapping[str, str],
    commitments: Mapping[str, str],
    samples: bytes | None,
) -> dict[str, Any]:
    """The aggregate record of `cert` (its bytes' SHA-256 `cert_sha256`, ledger leaf
    `leaf_index`), for the program at `program['origin']` (named by its origin, which never changes,
    where its name may: an export is written once); `levels` are
    the methodology's grades, lowest first. Sealed items are named by their `commitments`;
    `samples` is the instance file, when there is one."""
    serial, subject = cert["serial"], cert["subject"]
    proof = f"certificates/{serial}.json.tlog-proof"
    source: dict[str, Any]
    if commitments:
        source = {
            "dataset_name": f"{program['origin']}: gate {cert['gate']} (sealed)",
            "source_type": "other",
            "additional_details": {f"commitment.{i}": c for i, c in sorted(commitments.items())},
        }
    else:
        source = {
            "dataset_name": f"{program['origin']}: gate {cert['gate']}",
            "source_type": "url",
            "url": [f"https://{program['origin']}/items/"],
        }
    name = f"{program['origin']}, gate {cert['gate']}"
    record: dict[str, Any] = {
        "schema_version": EEE_SCHEMA_VERSION,
        "evaluation_id": f"{program['origin']}/certificates/{serial}",
        "evaluation_timestamp": cert["finished_at"],
        "retrieved_timestamp": str(epoch_seconds(cert["issued_at"])),
        "source_metadata": {
            "source_name": program["origin"],
            "source_type": "evaluation_run",
            "source_organization_name": program["origin"],
            "source_organization_url": f"https://{program['origin']}/",
            "evaluator_relationship": "third_party",
            "additional_details": {
                "certificate": f"certificates/{serial}.json",
                "certificate_sha256": cert_sha256,
                "ledger_leaf_index": str(leaf_index),
                "inclusion_proof": proof,
                "log_origin": program["origin"],
                "verdict": str(cert["verdict"]),
                "run": str(cert["run"]),
            },
        },
        "eval_library": {
            "name": "transparency",
            "version": str(cert["methodology"]["version"]),
            "additional_details": {"methodology_sha256": str(cert["methodology"]["sha256"])},
        },
        "model_info": {
            "name": f"{subject['name']} {subject['version']}",
            "id": model_id(subject),
            "developer": str(subject["organization"]),
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "evaluation_results": _results(cert, spec, levels, source, name),
    }
    if samples is not None:
        uuid = record_uuid(cert_sha256)
        record["detailed_evaluation_results"] = {
            "format": "jsonl",
            "file_path": f"{datastore_folder(program['origin'], subject)}/{uuid}_samples.jsonl",
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(samples).hexdigest(),
            "total_rows": samples.count(b"\n"),
        }
    return record


def _compact(value: Any) -> str:
    """An item's answer or a subject's outputs as one line of JSON, keys sorted, text as it is."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def sample_hash(raw: str, reference: list[str]) -> str:
    """The coalition's hash of a sample: SHA-256 of {"raw", "reference"} as compact JSON, keys sorted."""
    text = json.dumps({"raw": raw, "reference": reference}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def eee_samples(cert: Mapping[str, Any], program: Mapping[str, str], items: Mapping[str, Mapping[str, Any]]) -> bytes:
    """The instance rows of a certificate on a public gate: one per scored item, its prompt, the
    answer as the reference, the subject's outputs, its score and whether it passed. `items`
    holds each item's reveal document."""
    serial, subject = cert["serial"], cert["subject"]
    lines = []
    for r in cert["results"]:
        if r.get("status") != "scored" or r["item"] not in items:
            continue
        item = items[r["item"]]["item"]
        answer = {str(n): f["value"] for n, f in sorted(item["answer"].items())}
        reference = [_compact(answer)]
        output = {str(f["name"]): f["output"] for f in r["fields"]}
        row = {
            "schema_version": EEE_SCHEMA_VERSION,
            "evaluation_id": f"{program['origin']}/certificates/{serial}",
            "model_id": model_id(subject),
            "evaluation_name": f"{program['origin']}, gate {cert['gate']}",
            "evaluation_result_id": f"{serial}/pass_rate",
            "sample_id": r["item"],
            "sample_hash": sample_hash(item["prompt"], reference),
            "interaction_type": "single_turn",
            "input": {"raw": item["prompt"], "reference": reference},
            "output": {"raw": [_compact(output)]},
            "answer_attribution": [
                {
                    "turn_idx": 0,
                    "source": "output.raw",
                    "extracted_value": _compact(output),
                    "extraction_method": "custom",
                    "is_terminal": True,
                }
            ],
            "evaluation": {"score": _number(r["score"]), "is_correct": bool(r["passed"])},
            "metadata": {"item": r["item"], "score": str(r["score"])},
        }
        lines.append(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
    return "".join(lines).encode("utf-8")


def eee_bytes(record: Mapping[str, Any]) -> bytes:
    """An aggregate record as published: two spaces of indent, UTF-8, a newline at the end."""
    return (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def eee_export(
    cert: Mapping[str, Any],
    cert_sha256: str,
    leaf_index: int,
    spec: Mapping[str, Any],
    methodology: Methodology,
    program: Mapping[str, str],
    public: bool,
    reveal_of: Callable[[str], Mapping[str, Any] | None],
    ledger: Ledger,
) -> list[tuple[str, bytes]]:
    """A certificate's Every Eval Ever files (site path, bytes), as the build writes them and the
    verifier remakes them: on a public gate the record and its instance rows (each item's reveal
    document from `reveal_of`: the item as committed); on a secret gate the record alone, its
    items named by their ledger commitments, since their texts are sealed when the certificate is
    issued. The grades are the pinned `methodology`'s, lowest first."""
    levels = [g.name for g in reversed(methodology.grades)]
    items = [str(i) for i in spec.get("items", [])]
    if public:
        reveals = {i: doc for i in items if (doc := reveal_of(i)) is not None}
        scored = [r["item"] for r in cert["results"] if r.get("status") == "scored"]
        if any(i not in reveals for i in scored):
            raise Unremade("an item's reveal document cannot be read as its commitment")
        samples: bytes | None = eee_samples(cert, program, reveals)
        commitments: dict[str, str] = {}
    else:
        samples = None
        commitments = {i: c.commitment for i in items if (c := ledger.commit(i)) is not None}
    record = eee_record(cert, cert_sha256, leaf_index, spec, levels, program, commitments, samples)
    record_path, samples_path = export_paths(str(cert["serial"]), cert_sha256, samples is not None)
    out = [(record_path, eee_bytes(record))]
    if samples is not None and samples_path is not None:
        out.append((samples_path, samples))
    return out
