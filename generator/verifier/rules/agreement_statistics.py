"""Judge agreement: how far an automated judge's ordinal labels agree with human labellers'.

Raw agreement, Cohen's kappa (unweighted, linear, quadratic) for two raters, Krippendorff's
ordinal alpha for any number of raters with missing values, and the per-dimension report that
combines them. Exact rationals throughout, so that the verifier recomputes the published
figures to the digit; agreement_decimal() is the only rounding, for reading.

The definitions follow scikit-learn's `cohen_kappa_score(y1, y2, labels=categories,
weights=...)` and `krippendorff.alpha(..., level_of_measurement="ordinal",
value_domain=categories)`; where those return nan or raise because the statistic is undefined
(no disagreement is possible), these return None.
"""

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Literal, TypedDict

from generator.verifier.core.errors import VerifyError
from generator.verifier.core.text import show

AGREEMENT_PLACES = 6
KappaWeights = Literal["linear", "quadratic"] | None


class AgreementError(VerifyError, ValueError):
    """Labels the agreement statistics cannot take: an empty set, a label outside the scale, a
    labeller labelling the same item and dimension twice."""


class AgreementRow(TypedDict):
    """The agreement of the judge with the human labellers on one dimension."""

    sample_size: int  # items with a judge label and at least one human label
    pairs: int  # (judge, human) pairs: one per human label on a sampled item
    human_labels_without_judge: int  # human labels on items the judge did not label: not in the sample
    raw_agreement: Fraction | None
    kappa_linear: Fraction | None
    kappa_quadratic: Fraction | None
    alpha_ordinal: Fraction | None
    disagreements: list[tuple[str, str, int, int]]  # (item, labeller, human label, judge label)


def _is_label(value: object) -> bool:
    # bool is an int to Python, but True is no point of an ordinal scale.
    return isinstance(value, int) and not isinstance(value, bool)


def agreement_scale(categories: Sequence[int]) -> dict[int, int]:
    """Each category's position on the scale. The scale must be non-empty, strictly increasing
    integers: the positions are what the kappa weights and the ordinal metric are taken on."""
    if len(categories) == 0:
        raise AgreementError("the scale of categories is empty")
    for i, c in enumerate(categories):
        if not _is_label(c):
            raise AgreementError(f"category {i} of the scale is {show(c)}, not an integer")
        if i and c <= categories[i - 1]:
            raise AgreementError(f"the scale {show(list(categories))} is not strictly increasing at category {i}")
    return {c: i for i, c in enumerate(categories)}


def _position(label: object, scale: dict[int, int], record: str) -> int:
    if isinstance(label, bool) or not isinstance(label, int) or label not in scale:
        raise AgreementError(f"{record}: label {show(label)} is not one of the categories {show(list(scale))}")
    return scale[label]


def _paired_positions(
    first: Sequence[int], second: Sequence[int], categories: Sequence[int]
) -> tuple[list[int], list[int], int]:
    scale = agreement_scale(categories)
    if len(first) != len(second):
        raise AgreementError(f"the two raters have {len(first)} and {len(second)} labels: they must be paired")
    if len(first) == 0:
        raise AgreementError("no paired labels")
    a = [_position(x, scale, f"pair {i} {show([x, y])}") for i, (x, y) in enumerate(zip(first, second, strict=True))]
    b = [_position(y, scale, f"pair {i} {show([x, y])}") for i, (x, y) in enumerate(zip(first, second, strict=True))]
    return a, b, len(categories)


def raw_agreement(first: Sequence[int], second: Sequence[int], categories: Sequence[int]) -> Fraction:
    """The share of pairs on which the two raters gave the same label."""
    a, b, _ = _paired_positions(first, second, categories)
    return Fraction(sum(1 for x, y in zip(a, b, strict=True) if x == y), len(a))


def _kappa_weight(i: int, j: int, weights: KappaWeights) -> int:
    if weights is None:
        return 0 if i == j else 1
    if weights == "linear":
        return abs(i - j)
    return (i - j) ** 2


def cohen_kappa(
    first: Sequence[int], second: Sequence[int], categories: Sequence[int], weights: KappaWeights = None
) -> Fraction | None:
    """Cohen's kappa of two raters over paired labels, 1 - Σ w·O / Σ w·E.

    O is the k×k table of counts of (first, second) label pairs, E the table the marginals
    give by chance, E_ij = r_i·c_j / n, and w the disagreement weights on the positions i, j of
    the labels in `categories`: 1 off the diagonal (unweighted), |i-j| (linear), (i-j)²
    (quadratic). None when Σ w·E is 0, which happens exactly when every label of both raters is
    the same category: no disagreement was possible, so none can be corrected for."""
    if weights not in (None, "linear", "quadratic"):
        raise AgreementError(f"kappa weights {show(weights)}: use None, 'linear' or 'quadratic'")
    a, b, k = _paired_positions(first, second, categories)
    observed = [[0] * k for _ in range(k)]
    for x, y in zip(a, b, strict=True):
        observed[x][y] += 1
    rows = [sum(r) for r in observed]
    cols = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    n = len(a)
    # Only the categories somebody used add to either sum: a 101-point scale costs what its used
    # points cost, whatever a hostile label set lists.
    used_rows = [i for i in range(k) if rows[i]]
    used_cols = [j for j in range(k) if cols[j]]
    # Scaled by n so that both sums stay integers: Σ w·E = Σ w·r·c / n.
    disagreement = n * sum(
        _kappa_weight(i, j, weights) * observed[i][j] for i in used_rows for j in used_cols if observed[i][j]
    )
    chance = sum(_kappa_weight(i, j, weights) * rows[i] * cols[j] for i in used_rows for j in used_cols)
    if chance == 0:
        return None
    return 1 - Fraction(disagreement, chance)


def krippendorff_alpha_ordinal(units: Sequence[Sequence[int | None]], categories: Sequence[int]) -> Fraction | None:
    """Krippendorff's alpha, ordinal metric, of the labels `units[u][r]` (rater r on unit u,
    None where missing): 1 - (n-1) · Σ o_ck·δ²_ck / Σ n_c·n_k·δ²_ck.

    The coincidence o_ck adds, for every unit with m ≥ 2 labels, 1/(m-1) for each ordered pair
    of two different raters' labels (c, k); n_c = Σ_k o_ck and n = Σ n_c, the number of pairable
    labels. δ²_ck = (Σ_{g from c to k} n_g - (n_c + n_k)/2)², the sum over the categories of the
    scale between c and k inclusive, so that a category nobody used changes nothing. None when no
    unit has two labels or all pairable labels are one category (the expected disagreement is 0)."""
    scale = agreement_scale(categories)
    if len(units) == 0:
        raise AgreementError("no units")
    k = len(categories)
    raters = len(units[0])
    # Sparse, by (c, d): only pairs of categories some unit holds, so a 101-point scale costs what
    # its used points cost.
    coincidence: dict[tuple[int, int], Fraction] = {}
    for u, unit in enumerate(units):
        if len(unit) != raters:
            raise AgreementError(f"unit {u} has {len(unit)} raters' labels, unit 0 has {raters}")
        counts = [0] * k
        for r, label in enumerate(unit):
            if label is not None:
                counts[_position(label, scale, f"unit {u} rater {r}")] += 1
        m = sum(counts)
        if m < 2:
            continue  # a lone label has no other to be compared with
        present = [c for c in range(k) if counts[c]]  # at most m categories, not the whole scale
        for c in present:
            for d in present:
                pairs = counts[c] * counts[d] - (counts[c] if c == d else 0)
                if pairs:
                    coincidence[(c, d)] = coincidence.get((c, d), Fraction(0)) + Fraction(pairs, m - 1)
    marginal = [Fraction(0)] * k
    for (c, _), o in coincidence.items():
        marginal[c] += o
    n = sum(marginal)
    if n == 0:
        return None
    below = [Fraction(0)]  # below[g] = n_0 + … + n_(g-1)
    for g in range(k):
        below.append(below[-1] + marginal[g])

    def delta(c: int, d: int) -> Fraction:
        lo, hi = min(c, d), max(c, d)
        return (below[hi + 1] - below[lo] - (marginal[lo] + marginal[hi]) / 2) ** 2

    used = [c for c in range(k) if marginal[c]]  # a category nobody used adds 0 to both sums
    observed = sum((o * delta(c, d) for (c, d), o in coincidence.items() if c != d), Fraction(0))
    expected = sum((marginal[c] * marginal[d] * delta(c, d) for c in used for d in used if c != d), Fraction(0))
    if expected == 0:
        return None
    return 1 - (n - 1) * observed / expected


def _record_text(index: int, record: object) -> str:
    return f"human label record {index} {show(list(record) if isinstance(record, tuple) else record)}"


def agreement_report(
    human_labels: Iterable[tuple[str, str, str, int]],
    judge_labels: Mapping[tuple[str, str], int],
    categories: Sequence[int],
) -> dict[str, AgreementRow]:
    """Per dimension, the judge's agreement with the human labellers.

        `human_labels` are (labeller, item, dimension, label) records, `judge_labels` the judge's
        label by (item, dimension). The sample of a dimension is its items with a judge label and at
        least one human label; human labels on other items are counted, not used. Every human label
        on a sampled item makes one (judge, human) pair: raw agreement and kappa are over these
        pairs, judge first. Alpha takes the sampled items as units and the judge and each labeller
        as raters. Disagreements are the pairs whose labels differ, as (item, labeller, human label,
        judge label), sorted by item then labeller. A dimension with an empty sample has None for
        every statistic (so does every dimension when the judge labelled nothing: a run whose scored
    results carry no judge labels). Dimensions are those of either input, in sorted order."""
    scale = agreement_scale(categories)
    human: dict[str, dict[str, dict[str, int]]] = {}  # dimension -> item -> labeller -> label
    count = 0
    for index, record in enumerate(human_labels):
        count += 1
        if not isinstance(record, tuple) or len(record) != 4:
            raise AgreementError(f"{_record_text(index, record)}: not (labeller, item, dimension, label)")
        labeller, item, dimension, label = record
        if not all(isinstance(s, str) for s in (labeller, item, dimension)):
            raise AgreementError(f"{_record_text(index, record)}: labeller, item and dimension must be strings")
        _position(label, scale, _record_text(index, record))
        by_labeller = human.setdefault(dimension, {}).setdefault(item, {})
        if labeller in by_labeller:
            raise AgreementError(
                f"{_record_text(index, record)}: labeller {show(labeller)} already labelled item {show(item)} "
                f"on dimension {show(dimension)}"
            )
        by_labeller[labeller] = label
    if count == 0:
        raise AgreementError("no human labels")
    judged: dict[str, dict[str, int]] = {}
    for key, label in judge_labels.items():
        where = f"judge label {show(list(key) if isinstance(key, tuple) else key)}"
        if not isinstance(key, tuple) or len(key) != 2 or not all(isinstance(s, str) for s in key):
            raise AgreementError(f"{where}: the key must be (item, dimension), two strings")
        _position(label, scale, where)
        judged.setdefault(key[1], {})[key[0]] = label
    return {d: _agreement_row(human.get(d, {}), judged.get(d, {}), categories) for d in sorted(human.keys() | judged)}


def _agreement_row(human: dict[str, dict[str, int]], judge: dict[str, int], categories: Sequence[int]) -> AgreementRow:
    sample = sorted(item for item in human if item in judge)
    labellers = sorted({labeller for item in sample for labeller in human[item]})
    judge_side: list[int] = []
    human_side: list[int] = []
    disagreements: list[tuple[str, str, int, int]] = []
    for item in sample:
        for labeller in sorted(human[item]):
            judge_side.append(judge[item])
            human_side.append(human[item][labeller])
            if human[item][labeller] != judge[item]:
                disagreements.append((item, labeller, human[item][labeller], judge[item]))
    units = [[judge[item], *(human[item].get(labeller) for labeller in labellers)] for item in sample]
    pairs = len(judge_side)
    return {
        "sample_size": len(sample),
        "pairs": pairs,
        "human_labels_without_judge": sum(len(labels) for item, labels in human.items() if item not in judge),
        "raw_agreement": raw_agreement(judge_side, human_side, categories) if pairs else None,
        "kappa_linear": cohen_kappa(judge_side, human_side, categories, "linear") if pairs else None,
        "kappa_quadratic": cohen_kappa(judge_side, human_side, categories, "quadratic") if pairs else None,
        "alpha_ordinal": krippendorff_alpha_ordinal(units, categories) if units else None,
        "disagreements": disagreements,
    }


def agreement_decimal(value: Fraction | None) -> str | None:
    """An exact statistic as published: 6 decimals, the 7th and beyond rounded half away from
    zero from the exact value (never through a float), zero always unsigned; None stays None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (Fraction, int)):
        raise AgreementError(f"{show(repr(value))} is not an exact value: a float has already been rounded")
    scaled = abs(Fraction(value)) * 10**AGREEMENT_PLACES
    digits = scaled.numerator // scaled.denominator
    if 2 * (scaled - digits) >= 1:
        digits += 1
    text = str(digits).rjust(AGREEMENT_PLACES + 1, "0")
    sign = "-" if value < 0 and digits else ""
    return f"{sign}{text[:-AGREEMENT_PLACES]}.{text[-AGREEMENT_PLACES:]}"
