"""What a beacon drew, recomputed (FORMAT.md, "Draws and timestamps"): a drawn run's items from the
pool its registration fixed, and each scheduled retirement's items from the sealed items its round
found, the round itself following from the methodology's schedule.

Every rule here is one the verifier can recompute from the ledger, the run specs, the methodology
and the round's signature; none takes the operator's word for a pool, a round or an item.
"""

from collections.abc import Mapping
from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.core.formats import as_dict, as_list, check_keys, is_hex64, is_int
from generator.verifier.core.text import show
from generator.verifier.rules.beacon import (
    Beacon,
    RetirementSchedule,
    round_randomness,
    round_signature_problems,
    time_text,
    unix_time,
)
from generator.verifier.rules.draw_pools import Pool, open_runs, pool_index
from generator.verifier.rules.draws import (
    MAX_DRAWN_ITEMS,
    MAX_ROUND,
    RetirementDraw,
    draw_positions,
    draw_seed,
    utf8_sorted,
)
from generator.verifier.rules.events import RunEvent
from generator.verifier.rules.ledger import Ledger
from generator.verifier.rules.methodology_rules import Methodology

DRAW_SPEC_KEYS = ("beacon", "round", "count")
MAX_ROUND_DELAY = 86400  # seconds: a drawn run names a round published within a day of its registration


def effective_spec(spec: dict[str, Any], ledger: Ledger) -> dict[str, Any]:
    """A run spec as the rest of the checks read it: a drawn spec gets the items its draw
    recorded (none before the draw), so that every later rule reads `items` alike."""
    if "draw" not in spec:
        return spec
    draw = ledger.draws.get(str(spec.get("id")))
    return {**spec, "items": list(draw.items) if draw else []}


def run_pool(ledger: Ledger, run: RunEvent, seen: set[str]) -> list[str]:
    """A drawn run's eligible items: its gate's, committed before its registration and not
    revealed before it, less those its subject already ran on the gate (`seen`)."""
    pool = []
    for c in ledger.commits(0, ledger.commits_before(run.index)):
        if c.gate != run.gate or c.id in seen:
            continue
        r = ledger.reveals.get(c.id)
        if r is None or r.index > run.index:
            pool.append(c.id)
    return pool


def run_draw_problems(
    ledger: Ledger, run: RunEvent, spec: dict[str, Any], m: Methodology | None, seen: set[str]
) -> list[Problem]:
    """A drawn run: its pinned beacon, a round after its registration, and (once drawn) the round's
    signature and the items it draws."""
    want = as_dict(spec.get("draw"))
    beacon = m.beacon if m is not None else None
    if beacon is None:
        return [Problem("the run draws its items, but its methodology pins no beacon", where="draw.beacon")]
    problems = []
    if want.get("beacon") != beacon.chain_hash:
        return [
            Problem(
                "not the beacon the methodology pins", "", "draw.beacon", beacon.chain_hash, show(want.get("beacon"))
            )
        ]
    round_number, count = want["round"], want["count"]
    published, registered = beacon.round_time(round_number), unix_time(run.at)
    if published <= registered:
        problems.append(
            Problem(
                "the round was published before the run was registered: its randomness was known",
                where="draw.round",
                expected=f"a round after {run.at}",
                found=f"round {round_number}, published {time_text(published)}",
            )
        )
    elif published > registered + MAX_ROUND_DELAY:
        problems.append(
            Problem(
                "the round is more than a day after the registration: a run cannot wait on a far round and hold "
                "its gate's items",
                where="draw.round",
                expected=f"a round published by {time_text(registered + MAX_ROUND_DELAY)}",
                found=f"round {round_number}, published {time_text(published)}",
            )
        )
    # The pool is fixed by the registration: too small a pool is refused then, not after the round.
    pools = pool_index(ledger)
    size, pool = pools.pool(run, seen)
    try:
        return problems + _drawn_problems(ledger, run, beacon, round_number, count, published, size, pool)
    finally:
        pool.close()


def _drawn_problems(
    ledger: Ledger,
    run: RunEvent,
    beacon: Beacon,
    round_number: int,
    count: int,
    published: int,
    size: int,
    pool: Pool,
) -> list[Problem]:
    """run_draw_problems, once the pool is known: its size, the draw leaf, the round, the items."""
    problems = []
    if size < count:
        problems.append(
            Problem(
                f"the run's pool holds {size} eligible items, fewer than the {count} it draws: a draw of all "
                "of a small pool is no draw",
                where="draw.count",
                expected=f"at most {size}",
                found=str(count),
            )
        )
    draw = ledger.draws.get(run.id)
    if draw is None:
        withdrawn = ledger.withdrawals.get(run.id)
        if run.id in ledger.certificate_of_run:
            problems.append(Problem("the run was certified without its draw", where="draw"))
        elif withdrawn is not None and unix_time(withdrawn.at) >= published:
            problems.append(
                Problem(
                    f"the run was withdrawn (entries[{withdrawn.index}]) once its round was published, without its "
                    "draw: the operator could see the items and register again with another round",
                    where="draw",
                    expected="the draw recorded before a withdrawal dated after the round",
                )
            )
        return problems
    where = f"ledger entries[{draw.index}]"
    if draw.round != round_number:
        problems.append(
            Problem("the draw is not of the round the spec named", where, "round", str(round_number), str(draw.round))
        )
        return problems
    if unix_time(draw.at) < beacon.round_time(round_number):
        problems.append(Problem("the draw is dated before its round was published", where, "at"))
    problems += [p.at(where) for p in round_signature_problems(beacon, draw.round, draw.signature, "signature")]
    revealed = pool_index(ledger).revealed_between(run.gate, run.index, draw.index)
    if revealed is not None:
        problems.append(
            Problem(
                f"an item of the run's gate was revealed (entries[{revealed}]) while the run waited for its draw: "
                "the pool its registration fixed is gone",
                where="draw",
            )
        )
    if problems:
        return problems
    seed = draw_seed(round_randomness(draw.signature), f"run:{run.id}")
    items = utf8_sorted([pool.at(p) for p in draw_positions(size, count, seed)])
    if list(draw.items) != items:
        problems.append(
            Problem("the items are not the round's draw", where, "items", show(items, 400), show(list(draw.items), 400))
        )
    return problems


def drawn_spec_problems(spec: dict[str, Any]) -> list[Problem]:
    """The `draw` member of a v2 run spec: the beacon's chain hash, a round, a count."""
    draw = spec.get("draw")
    problems = check_keys(draw, DRAW_SPEC_KEYS, where="draw")
    if not isinstance(draw, dict):
        return problems
    if "beacon" in draw and not is_hex64(draw["beacon"]):
        problems.append(Problem("must be the beacon's chain hash", where="draw.beacon", found=show(draw["beacon"])))
    for k, most in (("round", MAX_ROUND), ("count", MAX_DRAWN_ITEMS)):
        if k in draw and not (is_int(draw[k]) and 1 <= draw[k] <= most):
            problems.append(
                Problem(f"must be a whole number from 1 to {most}", where=f"draw.{k}", found=show(draw[k], 40))
            )
    return problems


def draw_required_problem(
    ledger: Ledger, run: RunEvent, spec: dict[str, Any], methodologies: Mapping[str, Methodology]
) -> Problem | None:
    """A run on a secret gate that lists its items once any methodology published before it
    requires draws: pinning an older version does not step back from the requirement."""
    gate = ledger.gates.get(run.gate)
    if "draw" in spec or gate is None or gate.public:
        return None
    for e in sorted(ledger.methodologies.values(), key=lambda e: e.index):
        m = methodologies.get(e.version)
        if e.index < run.index and m is not None and m.draws_required:
            return Problem(
                f"methodology {e.version} (entries[{e.index}]) requires a secret-gate run to draw its items; "
                "a run registered after it cannot list them, whatever version it pins",
                where="items",
            )
    return None


def required_draw_problems(
    ledger: Ledger, methodologies: Mapping[str, Methodology], specs: dict[str, dict[str, Any]]
) -> list[Problem]:
    """draw_required_problem for every run, and a draw recorded for a run whose spec lists its
    items (a round shown on the site as having drawn what the operator chose)."""
    problems = []
    for run_id, spec in specs.items():
        run = ledger.runs.get(run_id)
        if run is None:
            continue
        found = draw_required_problem(ledger, run, spec, methodologies)
        if found is not None:
            problems.append(found.at(f"runs/{run_id}.json"))
        if "draw" not in spec and run_id in ledger.draws:
            where = f"entries[{ledger.draws[run_id].index}]"
            problems.append(Problem(f"a draw recorded for run {run_id}, whose spec lists its items", where=where))
    return problems


# ---------------------------------------------------------------------------------------------
# Scheduled retirements


def retirement_draw(
    ledger: Ledger, index: int, specs: dict[str, dict[str, Any]], round_number: int, signature: str, count: int
) -> tuple[int, list[str]]:
    """The size of the pool a retirement drawn at leaf `index` by `round_number` draws from, and the
    items it draws: secret gates' items committed and not revealed before it, less the items of
    runs still open then (open_run_holds), read from the pool index without listing them."""
    held, waiting = open_run_holds(ledger, index, specs, round_number)
    public = ledger.public_gates()
    gates = [g for g in ledger.gates if g not in public and g not in waiting]
    size, pool = pool_index(ledger).union_pool(index, gates, held)
    try:
        seed = draw_seed(round_randomness(signature), f"retirement:{round_number}")
        return size, utf8_sorted([pool.at(p) for p in draw_positions(size, count, seed)])
    finally:
        pool.close()


def open_run_holds(
    ledger: Ledger, index: int, specs: dict[str, dict[str, Any]], round_number: int | None = None
) -> tuple[set[str], set[str]]:
    """What the runs registered before leaf `index` and not decided before it hold: the items of
    those whose items are fixed, and the gates of the drawn runs still waiting then for a round
    later than `round_number` (the retirement's), which hold their gate's whole pool. A drawn run
    whose round is already out and that is not drawn holds nothing: the operator was to draw it."""
    items: set[str] = set()
    waiting: set[str] = set()
    for run in open_runs(ledger).at(index):
        spec = specs.get(run.id, {})
        draw = ledger.draws.get(run.id)
        named = as_dict(spec.get("draw")).get("round")
        if "draw" in spec and (draw is None or draw.index > index):
            if round_number is None or not is_int(named) or named > round_number:
                waiting.add(run.gate)
        else:
            items.update(as_list(spec.get("items")))
    return items, waiting


def _regimes(
    ledger: Ledger, methodologies: dict[str, Methodology]
) -> list[tuple[int, str, int, str, Methodology | None]]:
    """Each methodology's time in force: (its leaf, its time, the next one's leaf and time, or the
    ledger's end and last time; the methodology)."""
    events = sorted(ledger.methodologies.values(), key=lambda e: e.index)
    # Before the first methodology no schedule is in force.
    first = events[0] if events else None
    out: list[tuple[int, str, int, str, Methodology | None]] = [
        (-1, "", first.index if first else ledger.size, first.at if first else ledger.last_at, None)
    ]
    for n, e in enumerate(events):
        end, end_at = (events[n + 1].index, events[n + 1].at) if n + 1 < len(events) else (ledger.size, ledger.last_at)
        out.append((e.index, e.at, end, end_at, methodologies.get(e.version)))
    return out


def retirement_problems(
    ledger: Ledger, methodologies: dict[str, Methodology], specs: dict[str, dict[str, Any]]
) -> list[Problem]:
    """Every scheduled retirement drawn when due, of the round the schedule names, with the items
    that round draws; none drawn without a schedule in force."""
    problems = []
    draws = ledger.retirement_draws
    for start, start_at, end, end_at, m in _regimes(ledger, methodologies):
        mine = [d for d in draws if start < d.index < end]
        schedule, beacon = (m.retirement_schedule, m.beacon) if m is not None else (None, None)
        if schedule is None or beacon is None:
            problems += [
                Problem("a retirement was drawn with no retirement schedule in force", where=f"entries[{d.index}]")
                for d in mine
            ]
            continue
        due = _due_rounds(beacon, schedule, unix_time(start_at), unix_time(end_at), len(mine) + 1)
        for n, round_number in enumerate(due):
            if n >= len(mine):
                problems.append(
                    Problem(
                        f"the retirement scheduled for {time_text(beacon.round_time(round_number))} (round "
                        f"{round_number}) was not drawn",
                        expected="a retirement-draw leaf before any later leaf",
                    )
                )
                continue
            problems += _retirement_draw_problems(ledger, mine[n], round_number, beacon, schedule, specs)
        problems += [
            Problem("a retirement drawn before it was due", where=f"entries[{d.index}]") for d in mine[len(due) :]
        ]
    return problems


def _due_rounds(beacon: Beacon, schedule: RetirementSchedule, anchor: int, end: int, most: int) -> list[int]:
    """The rounds of the first `most` retirements due by `end` (one more than were drawn is enough
    to name the one missing): a due time's round is published at or after it, and is due once it
    is published by then."""
    rounds: list[int] = []
    for t in schedule.due_times(anchor, end):
        r = beacon.first_round_at(t)
        if beacon.round_time(r) > end or len(rounds) == most:
            break
        rounds.append(r)
    return rounds


def _retirement_draw_problems(
    ledger: Ledger,
    d: RetirementDraw,
    round_number: int,
    beacon: Beacon,
    schedule: RetirementSchedule,
    specs: dict[str, dict[str, Any]],
) -> list[Problem]:
    where = f"entries[{d.index}]"
    if d.round != round_number:
        return [Problem("not the round the schedule names", where, "round", str(round_number), str(d.round))]
    published = beacon.round_time(round_number)
    problems = []
    if unix_time(d.previous_at) >= published or unix_time(d.at) < published:
        problems.append(
            Problem(
                "a scheduled retirement is the first leaf dated at or after its round",
                where,
                "at",
                f"the leaf before it dated before {time_text(published)}, and it at or after",
                f"the leaf before it at {d.previous_at}, this one at {d.at}",
            )
        )
    problems += [p.at("", where) for p in round_signature_problems(beacon, d.round, d.signature, "signature")]
    if problems:
        return problems
    _, items = retirement_draw(ledger, d.index, specs, d.round, d.signature, schedule.items)
    if list(d.items) != items:
        problems.append(
            Problem("the items are not the round's draw", where, "items", show(items, 400), show(list(d.items), 400))
        )
    return problems
