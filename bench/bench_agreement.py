"""What judge agreement costs a verifier, printed as figures (never a timed test).

    python bench/bench_agreement.py [--items N] [--labellers L] [--dimensions D] [--scale K]

A label set as large as a real program's (N items, L labellers, D dimensions on a K-point scale,
labels drawn at random with a fixed seed), and the worst a hostile site may send within the
bounds of FORMAT.md (64 dimensions on a 101-point scale, one label each): the seconds
`report_document` takes for each, the whole recomputation verify.py does for a due label set.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from generator.verifier import report_document


def label_set(
    items: int, labellers: int, dimensions: int, scale: int, seed: int = 7
) -> tuple[dict[str, Any], dict[tuple[str, str], int]]:
    rng = random.Random(seed)
    ids = [f"i-{n:06d}" for n in range(items)]
    dims = [f"d{n:02d}" for n in range(dimensions)]
    judge = {(i, d): rng.randrange(1, scale + 1) for i in ids for d in dims}
    rows = [
        {
            "dimension": d,
            "item": i,
            "label": max(1, min(scale, judge[(i, d)] + rng.choice((-1, 0, 0, 1)))),
            "labeller": f"h{p}",
        }
        for d in dims
        for i in ids
        for p in range(labellers)
    ]
    doc = {"id": "bench", "run": "bench-run", "scale": list(range(1, scale + 1)), "labels": rows}
    return doc, judge


def timed(what: str, doc: dict[str, Any], judge: dict[tuple[str, str], int]) -> None:
    start = time.perf_counter()
    report = report_document(doc, "00" * 32, "bench", judge)
    seconds = time.perf_counter() - start
    first = report["dimensions"][0]
    print(
        f"{what}: {len(doc['labels']):,} labels, {len(report['dimensions'])} dimensions: {seconds:.2f} s "
        f"(first dimension: kappa quadratic {first['kappa_quadratic']['value'] if first['kappa_quadratic'] else None})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--labellers", type=int, default=3)
    ap.add_argument("--dimensions", type=int, default=5)
    ap.add_argument("--scale", type=int, default=5)
    a = ap.parse_args()
    timed("a program's label set", *label_set(a.items, a.labellers, a.dimensions, a.scale))
    timed("the bound a hostile site may reach", *label_set(1, 1, 64, 101))


if __name__ == "__main__":
    main()
