"""What beacon draws cost a verifier at scale, printed as figures (never a timed test).

    python bench/bench_draws.py [--items N ...] [--runs R] [--listed-up-to N]

A replayed ledger of N sealed items on two secret gates (and a public gate of N/1000), R runs
after them, half drawn on gate c and waiting for a round, half holding 25 listed items, then: the
seconds to build the pool index (once per replayed ledger), to check one drawn run's pool (its size
and 25 ranks), and to draw one scheduled retirement (two items, over both secret gates, every open
run held out); and, up to `--listed-up-to` items, the same retirement drawn from the listed pool,
the way FORMAT.md words it, to show that the two agree and what listing cost.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from typing import Any

from generator.verifier import Ledger, draw_items, open_run_holds, retirement_draw, round_randomness
from generator.verifier.rules.draw_pools import pool_index

T = "2026-02-01T10:00:00Z"
SIGNATURE = hashlib.sha256(b"bench round").hexdigest() + "00" * 16


def ledger_of(items: int, runs: int) -> tuple[Ledger, dict[str, dict[str, Any]]]:
    ledger = Ledger()
    leaves: list[dict[str, Any]] = [
        {"type": "gate", "v": 1, "id": g, "name": f"Gate {g}", "public": g == "a", "at": T} for g in ("a", "b", "c")
    ]
    leaves.append({"type": "methodology", "v": 1, "version": "2026.1", "sha256": "0" * 64, "at": T})
    for n in range(items + items // 1000):
        gate = "a" if n < items // 1000 else "bc"[n % 2]
        leaves.append(
            {"type": "commit", "v": 1, "id": f"{gate}-{n:07d}", "gate": gate, "commitment": "1" * 64, "at": T}
        )
    specs: dict[str, dict[str, Any]] = {}
    for r in range(runs):
        run_id = f"run-{r:05d}"
        gate = "bc"[r % 2]
        subject = {"id": f"subject-{r % 50}", "name": f"Subject {r % 50}", "version": "1.0", "organization": "Bench"}
        leaves.append(
            {"type": "run", "v": 1, "id": run_id, "sha256": "2" * 64, "subject": subject, "gate": gate, "at": T}
        )
        if r % 2:
            specs[run_id] = {"draw": {"round": 10**6 + r}}  # waiting for a round after the retirement's
        else:
            first = items // 1000 + (r * 25) % max(1, items - 25)
            specs[run_id] = {"items": [f"{'bc'[(first + k) % 2]}-{first + k:07d}" for k in range(25)]}
    for leaf in leaves:
        problems = ledger.apply(leaf)
        if problems:
            raise SystemExit(f"the bench's ledger breaks a rule: {problems[0].describe()}")
    return ledger, specs


def seconds(f: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    value = f()
    return time.perf_counter() - start, value


def bench(items: int, runs: int, listed_up_to: int) -> None:
    built, (ledger, specs) = seconds(lambda: ledger_of(items, runs))
    print(f"{items:,} sealed items, {runs:,} runs: ledger replayed in {built:.1f} s (not what is measured)")
    indexed, _ = seconds(lambda: pool_index(ledger))
    print(f"  pool index built: {indexed:.2f} s, once per replayed ledger")
    run = next(r for r in ledger.runs.values() if "draw" in specs[r.id])
    pools = pool_index(ledger)

    def one_run() -> int:
        size, pool = pools.pool(run, set())
        try:
            [pool.at(k * (size // 25)) for k in range(25)]
        finally:
            pool.close()
        return size

    swept, size = seconds(one_run)
    taken, _ = seconds(one_run)
    print(
        f"  a drawn run's pool ({size:,} items), its size and 25 ranks: {taken * 1000:.1f} ms "
        f"({swept * 1000:.1f} ms the first time, which sweeps the index to its leaf)"
    )
    # The round is before the waiting runs' rounds: their gates are held out whole. A round after
    # them (they would then hold nothing) leaves both gates in the pool, less the listed runs' items.
    for round_number, what in ((10**6, "the drawn runs waiting: gate c held whole"), (10**7, "both gates drawn from")):
        taken, (size, drawn) = seconds(
            lambda r=round_number: retirement_draw(ledger, ledger.size, specs, r, SIGNATURE, 2)
        )
        print(f"  a scheduled retirement ({what}; pool {size:,}): {taken * 1000:.1f} ms -> {drawn}")
        if items <= listed_up_to:
            listed, (want_size, want) = seconds(lambda r=round_number: _listed(ledger, specs, r))
            same = "the same draw" if (want_size, want) == (size, drawn) else f"ANOTHER DRAW {want_size} {want}"
            print(f"    the listed pool, as FORMAT.md words it: {listed * 1000:.1f} ms, {same}")


def _listed(ledger: Ledger, specs: dict[str, dict[str, Any]], round_number: int) -> tuple[int, list[str]]:
    index = ledger.size
    held, waiting = open_run_holds(ledger, index, specs, round_number)
    public = ledger.public_gates()
    pool = [
        c.id
        for c in ledger.commits(0, ledger.commits_before(index))
        if c.gate not in public and c.gate not in waiting and c.id not in held and c.id not in ledger.reveals
    ]
    items = draw_items(pool, round_randomness(SIGNATURE), f"retirement:{round_number}", 2)
    return len(pool), items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--runs", type=int, default=2_000)
    ap.add_argument("--listed-up-to", type=int, default=1_000_000)
    a = ap.parse_args()
    for n in a.items:
        bench(n, a.runs, a.listed_up_to)


if __name__ == "__main__":
    main()
