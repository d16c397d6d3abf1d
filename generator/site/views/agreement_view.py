"""What a certificate page shows of the judge's agreement with blind human labels (FORMAT.md,
"Judge agreement"): each published report of the run, dimension by dimension, its sample beside
its figures, and every case where a labeller and the judge disagreed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from generator.verifier import labels_path, loads_strict

STATISTIC_NAMES = (
    ("raw_agreement", "Raw agreement"),
    ("kappa_linear", "Cohen's kappa, linear weights"),
    ("kappa_quadratic", "Cohen's kappa, quadratic weights"),
    ("alpha_ordinal", "Krippendorff's alpha, ordinal"),
)


@dataclass(frozen=True)
class Figure:
    name: str
    value: str | None  # None when the statistic is undefined for this sample
    exact: str | None


@dataclass(frozen=True)
class Disagreement:
    item: str
    labeller: str
    human: int
    judge: int


@dataclass(frozen=True)
class DimensionRow:
    dimension: str
    sample_size: int
    pairs: int
    without_judge: int
    figures: tuple[Figure, ...]
    disagreements: tuple[Disagreement, ...]


@dataclass(frozen=True)
class AgreementView:
    id: str
    path: str  # the report's site path
    labels_path: str
    labels_sha256: str
    scale: tuple[int, ...]
    dimensions: tuple[DimensionRow, ...]


def agreement_views(published: Iterable[tuple[str, bytes]]) -> tuple[AgreementView, ...]:
    """The reports among a certificate's published files, in the order the build made them."""
    out = []
    for rel, data in published:
        if not (rel.startswith("agreement/") and rel.count("/") == 1):
            continue
        doc: dict[str, Any] = loads_strict(data)
        if rel != f"agreement/{doc['id']}.json" or doc["labels"]["path"] != labels_path(doc["id"]):
            continue
        rows = tuple(
            DimensionRow(
                d["dimension"],
                d["sample_size"],
                d["pairs"],
                d["human_labels_without_judge"],
                tuple(
                    Figure(name, d[k]["value"] if d[k] else None, d[k]["exact"] if d[k] else None)
                    for k, name in STATISTIC_NAMES
                ),
                tuple(Disagreement(x["item"], x["labeller"], x["human"], x["judge"]) for x in d["disagreements"]),
            )
            for d in doc["dimensions"]
        )
        out.append(
            AgreementView(doc["id"], rel, doc["labels"]["path"], doc["labels"]["sha256"], tuple(doc["scale"]), rows)
        )
    return tuple(out)
