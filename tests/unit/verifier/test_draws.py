"""The beacon draw (FORMAT.md, "Draws and timestamps"): the sampler against a plain Fisher-Yates
written here from the format's words, its worked example, its spread, and the replay rules of the
`draw` and `retirement-draw` leaves."""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

import pytest

from generator.verifier import Ledger
from generator.verifier.rules.draws import draw_items, draw_positions, draw_seed
from tests.support.ledger_cases import PREFIX, commit, gate, messages, replay, reveal, run, with_

T = "2026-02-01T10:00:00Z"
SIG = "a" * 96


def plain_fisher_yates(n: int, count: int, seed: bytes) -> list[int]:
    """The sampler as FORMAT.md words it, over a whole list: step j swaps position j with
    position j + u, u uniform below n - j from SHA-256(seed || j || attempt), and takes position j."""
    positions = list(range(n))
    picked = []
    for j in range(min(count, n)):
        bound, attempt = n - j, 0
        while True:
            x = int.from_bytes(hashlib.sha256(seed + j.to_bytes(4, "big") + attempt.to_bytes(4, "big")).digest()[:8])
            if x < 2**64 - 2**64 % bound:
                break
            attempt += 1
        k = j + x % bound
        positions[j], positions[k] = positions[k], positions[j]
        picked.append(positions[j])
    return picked


@pytest.mark.parametrize(("n", "count"), [(1, 1), (2, 5), (20, 5), (20, 20), (1000, 25), (1_000_000, 100)])
def test_sparse_sampler_is_the_plain_shuffle(n: int, count: int) -> None:
    for purpose in ("run:a", "run:b", "retirement:7"):
        seed = draw_seed(hashlib.sha256(purpose.encode()).digest(), purpose)
        if n > 100_000:
            picked = draw_positions(n, count, seed)
            assert len(set(picked)) == len(picked) == count and all(0 <= p < n for p in picked)
            continue
        assert draw_positions(n, count, seed) == plain_fisher_yates(n, count, seed)


def test_worked_example_of_the_format() -> None:
    """The example FORMAT.md gives, so the document and the code cannot drift apart."""
    randomness = hashlib.sha256(b"example round signature").digest()
    seed = draw_seed(randomness, "run:example")
    assert seed.hex() == "6b7950283aa879189621d0f1ed5b7e3ca6ededbcfec5a5ea5742451593334a92"
    assert draw_positions(20, 5, seed) == [6, 14, 0, 3, 11]
    pool = [f"b-{i:04d}" for i in range(20, 0, -1)]  # any order: the pool is sorted first
    assert draw_items(pool, randomness, "run:example", 5) == ["b-0001", "b-0004", "b-0007", "b-0012", "b-0015"]


def test_each_position_is_as_likely() -> None:
    counts = Counter(draw_positions(5, 1, draw_seed(i.to_bytes(4, "big"), "spread"))[0] for i in range(5000))
    assert sorted(counts) == [0, 1, 2, 3, 4]
    # 1,000 expected each; a chi-square of 18.5 has p = 0.001 with 4 degrees of freedom.
    assert sum((c - 1000) ** 2 / 1000 for c in counts.values()) < 18.5


def test_purpose_and_randomness_change_the_draw() -> None:
    pool = [f"b-{i:04d}" for i in range(1, 101)]
    r = hashlib.sha256(b"r").digest()
    draws = {tuple(draw_items(pool, r, p, 10)) for p in ("run:one", "run:two", "retirement:1")}
    draws.add(tuple(draw_items(pool, hashlib.sha256(b"s").digest(), "run:one", 10)))
    assert len(draws) == 4


# ---------------------------------------------------------------------------------------------
# The replay


def draw_leaf(run_id: str = "run-1", items: list[str] | None = None, **changes: Any) -> dict[str, Any]:
    leaf = {"type": "draw", "v": 2, "run": run_id, "round": 9, "signature": SIG, "items": items or ["b-0001"], "at": T}
    return with_(leaf, **changes)


def retirement_leaf(items: list[str], **changes: Any) -> dict[str, Any]:
    leaf = {"type": "retirement-draw", "v": 2, "round": 9, "signature": SIG, "items": items, "at": T}
    return with_(leaf, **changes)


BASE = [*PREFIX, commit("b-0001", "b"), commit("b-0002", "b"), run("run-1", "b")]


def problems_of(leaves: list[dict[str, Any]], last: dict[str, Any]) -> str:
    ledger = replay(leaves)
    return messages(ledger.apply(last))


def test_a_draw_is_recorded_for_its_run() -> None:
    ledger = replay([*BASE, draw_leaf(items=["b-0001", "b-0002"])])
    assert ledger.draws["run-1"].items == ("b-0001", "b-0002")
    assert ledger.draws["run-1"].round == 9


@pytest.mark.parametrize(
    ("leaf", "message"),
    [
        (draw_leaf("run-9"), "draw for a run that was not registered before"),
        (draw_leaf(items=["b-0002", "b-0001"]), "items must be in sorted order"),
        (draw_leaf(items=["b-0001", "b-0001"]), "items must be distinct"),
        (draw_leaf(signature="ab"), "malformed round signature"),
        (draw_leaf(round=0), "must be a round number"),
        (draw_leaf(v=1), "unsupported version"),
        (with_(draw_leaf(), items=[]), "a run's draw lists its items"),
    ],
)
def test_draw_leaf_rules(leaf: dict[str, Any], message: str) -> None:
    assert message in problems_of(BASE, leaf)


def test_a_run_is_drawn_once_and_before_it_is_decided() -> None:
    assert "is drawn twice" in problems_of([*BASE, draw_leaf()], draw_leaf())
    decided = [*BASE, {"type": "run-withdrawn", "v": 2, "run": "run-1", "reason": "Pulled.", "at": T}]
    assert "already decided" in problems_of(decided, draw_leaf())


def test_a_retirement_draw_is_followed_by_its_reveals_in_order() -> None:
    leaves = [*BASE, retirement_leaf(["b-0001", "b-0002"])]
    ledger = replay([*leaves, reveal("b-0001", "retired", T), reveal("b-0002", "retired", T)])
    assert ledger.drawn_retirement == {"b-0001": 0, "b-0002": 0}
    assert ledger.final_problems() == []
    found = problems_of(leaves, reveal("b-0002", "retired", T))
    assert "must be followed by the reveal of each item it drew" in found
    unfinished = replay([*leaves, reveal("b-0001", "retired", T)])
    assert "leaves items unrevealed" in messages(unfinished.final_problems())


def test_an_empty_retirement_draw_needs_no_reveal() -> None:
    ledger = replay([*BASE, retirement_leaf([])])
    assert ledger.final_problems() == [] and ledger.retirement_draws[0].previous_at == BASE[-1]["at"]


def test_snapshot_keeps_the_draws() -> None:
    from generator.verifier.memory.ledger_snapshot import load_snapshot, snapshot_bytes

    ledger = replay([*BASE, draw_leaf(), retirement_leaf(["b-0002"])])
    loaded, _ = load_snapshot(snapshot_bytes(ledger, {}))
    assert loaded.draws == ledger.draws and loaded.retirement_draws == ledger.retirement_draws
    assert "must be followed" in messages(loaded.apply(draw_leaf("run-1")))
    assert isinstance(loaded, Ledger)


def test_a_pin_that_names_quicknet_must_be_quicknet() -> None:
    from generator.verifier.rules.beacon import QUICKNET, beacon_problems
    from tests.support.beacon import OwnBeacon

    own = OwnBeacon().pin()
    assert beacon_problems(own) == []
    posing = own | {"chain_hash": QUICKNET["chain_hash"]}
    assert "not drand quicknet's" in messages(beacon_problems(posing))
    genuine = {"name": "drand quicknet", "scheme": "bls-unchained-g1-rfc9380", **QUICKNET}
    assert beacon_problems(genuine) == []
    assert "no point of the curve" in messages(beacon_problems(own | {"public_key": "8" + "0" * 191}))


@pytest.mark.parametrize("seed", range(6))
def test_the_pool_index_is_the_listed_pool(seed: int) -> None:
    """At every registration of a random ledger (commits and reveals on two gates, runs between
    them, some items already run by the subject), the swept index gives the pool that listing
    every commitment gives, by size and by rank, whichever order the runs are read in."""
    import random

    from generator.verifier.rules.draw_pools import pool_index
    from generator.verifier.rules.drawn_items import run_pool

    rng = random.Random(seed)
    leaves: list[dict[str, Any]] = list(PREFIX)
    committed: list[str] = []
    retired: set[str] = set()
    runs = 0
    for n in range(300):
        roll = rng.random()
        if roll < 0.6:
            item = f"{rng.choice('ab')}-{n:04d}"
            committed.append(item)
            leaves.append(commit(item, item[0], at=T))
            if item[0] == "a":
                leaves.append(reveal(item, at=T))
        elif roll < 0.8 and committed:
            sealed = [i for i in committed if i[0] == "b" and i not in retired]
            if sealed:
                retired.add(chosen := rng.choice(sealed))
                leaves.append(reveal(chosen, "retired", at=T))
        else:
            runs += 1
            leaves.append(run(f"run-{runs}", "b", at=T))
    ledger = replay(leaves)
    order = list(ledger.runs.values())
    for runs_in in (order, list(reversed(order))):
        for r in runs_in:
            seen = {i for i in committed if rng.random() < 0.2}
            want = utf8_sorted_ids(run_pool(ledger, r, seen))
            size, pool = pool_index(ledger).pool(r, seen)
            try:
                assert size == len(want) and [pool.at(k) for k in range(size)] == want
            finally:
                pool.close()


def utf8_sorted_ids(ids: list[str]) -> list[str]:
    return sorted(ids, key=lambda i: i.encode("utf-8"))


def listed_retirement_draw(
    ledger: Ledger, index: int, specs: dict[str, dict[str, Any]], round_number: int, signature: str, count: int
) -> tuple[int, list[str]]:
    """A scheduled retirement's draw as FORMAT.md words it, by listing every commitment: the secret
    gates' items committed and not revealed before the retirement, less those an open run holds
    (a waiting drawn run holds its whole gate), sorted, then the sampler."""
    from generator.verifier import round_randomness

    held: set[str] = set()
    for r in ledger.runs.values():
        decided = ledger.decided_at(r.id)
        if r.index < index and (decided is None or decided > index):
            spec = specs[r.id]
            draw = ledger.draws.get(r.id)
            if "draw" in spec and (draw is None or draw.index > index):
                if spec["draw"]["round"] > round_number:
                    held.update(c.id for c in ledger.commits(0, ledger.commits_before(index)) if c.gate == r.gate)
            else:
                held.update(spec.get("items", []))
    public = ledger.public_gates()
    pool = [
        c.id
        for c in ledger.commits(0, ledger.commits_before(index))
        if c.gate not in public
        and c.id not in held
        and (c.id not in ledger.reveals or ledger.reveals[c.id].index > index)
    ]
    return len(pool), draw_items(pool, round_randomness(signature), f"retirement:{round_number}", count)


@pytest.mark.parametrize("seed", range(6))
def test_a_retirement_s_draw_from_the_pool_index_is_the_listed_one(seed: int) -> None:
    """On random ledgers (a public gate and two secret ones, commits, reveals, runs that hold their
    listed items and drawn runs that hold their whole gate while they wait, withdrawals that end
    what a run holds, at their own leaf and after), the draw read from
    the swept pool index, across gates in one UTF-8 order, is the draw of the listed pool, at every
    leaf and for rounds before and after the drawn runs', whichever order the leaves are met in."""
    import random

    from generator.verifier.rules.drawn_items import retirement_draw

    rng = random.Random(seed)
    leaves: list[dict[str, Any]] = [*PREFIX, gate("c", False)]
    committed: list[str] = []
    specs: dict[str, dict[str, Any]] = {}
    decided: set[str] = set()
    for n in range(250):
        roll = rng.random()
        if roll < 0.6:
            item = f"{rng.choice('abc')}-{rng.randrange(10_000):04d}-{n}"
            committed.append(item)
            leaves.append(commit(item, item[0], at=T))
            if item[0] == "a":
                leaves.append(reveal(item, at=T))
        elif roll < 0.75:
            sealed = [
                i for i in committed if i[0] != "a" and i not in {x["id"] for x in leaves if x["type"] == "reveal"}
            ]
            if sealed:
                leaves.append(reveal(rng.choice(sealed), "retired", at=T))
        elif roll < 0.8 and specs:
            undecided = [r for r in specs if r not in decided]
            if undecided:
                decided.add(chosen := rng.choice(undecided))
                leaves.append({"type": "run-withdrawn", "v": 2, "run": chosen, "reason": "Pulled.", "at": T})
        else:
            run_id = f"run-{len(specs) + 1}"
            g = rng.choice("bc")
            if rng.random() < 0.5:
                specs[run_id] = {"draw": {"round": rng.randrange(1, 20)}}
            else:
                specs[run_id] = {"items": rng.sample(committed, min(3, len(committed)))}
            leaves.append(run(run_id, g, at=T))
    ledger = replay(leaves)
    # A retirement's own leaf is its draw (or, for a command, the next leaf): never a reveal.
    sizes = [i for i in range(len(PREFIX), ledger.size, 2) if leaves[i]["type"] != "reveal"] + [ledger.size]
    for order in (sizes, list(reversed(sizes))):
        for index in order:
            for round_number in (5, 25):
                signature = hashlib.sha256(f"{seed}-{index}-{round_number}".encode()).hexdigest() * 2
                want = listed_retirement_draw(ledger, index, specs, round_number, signature[:96], 4)
                got = retirement_draw(ledger, index, specs, round_number, signature[:96], 4)
                assert got == want, (index, round_number)
