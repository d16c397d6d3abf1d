"""Draws by a public randomness beacon (FORMAT.md, "Draws and timestamps"): the sampler that turns a
round's randomness into items, and the two ledger events that record a draw.

The operator names, before a round exists, which round will choose: a drawn run's spec names it
at registration, a scheduled retirement's round follows from the methodology's schedule. Once
the round is published, anyone holding its signature recomputes the items: the eligible ids
sorted by their UTF-8 bytes, and positions among them picked by SHA-256 from the round's
randomness and the draw's purpose (so that two runs drawing on one round draw independently).

The sampler is a Fisher-Yates shuffle stopped after `count` steps, kept sparse (only the swapped
positions are held), so a draw of `k` items from a pool of `n` costs O(k) hashes and memory, not
O(n); each step's uniform integer comes from SHA-256 by rejection, so no position is likelier than
another.
"""

import hashlib
from dataclasses import dataclass
from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.core.formats import ID_RE, is_id, is_int
from generator.verifier.core.text import show

DRAW = "draw"
RETIREMENT_DRAW = "retirement-draw"
DRAW_DOMAIN = b"transparency-draw/v1\x00"
MAX_DRAWN_ITEMS = 500  # the items a leaf lists: 500 ids of 64 characters fit a C2SP entry's 64 KiB
MAX_ROUND = 2**64 - 1  # drand's rounds are unsigned 64-bit numbers
_TWO_64 = 1 << 64


@dataclass(frozen=True)
class Draw:
    """A drawn run's `draw` leaf: the round that chose its items, and the items."""

    run: str
    round: int
    signature: str
    items: tuple[str, ...]
    index: int
    at: str


@dataclass(frozen=True)
class RetirementDraw:
    """A `retirement-draw` leaf: the scheduled round, the items it retired, and the time of the
    leaf before it (the pool was fixed by events all dated before the round)."""

    round: int
    signature: str
    items: tuple[str, ...]
    index: int
    at: str
    previous_at: str


def draw_seed(randomness: bytes, purpose: str) -> bytes:
    """The sampler's seed: the round's randomness bound to what is drawn ("run:<id>" or
    "retirement:<round>")."""
    return hashlib.sha256(DRAW_DOMAIN + randomness + purpose.encode("utf-8")).digest()


def _uniform_below(seed: bytes, step: int, bound: int) -> int:
    """A uniform integer in [0, bound) for sampler step `step`: 64-bit words of
    SHA-256(seed || step || try), the first one below the largest multiple of `bound` taken."""
    limit = _TWO_64 - _TWO_64 % bound
    attempt = 0
    while True:
        word = hashlib.sha256(seed + step.to_bytes(4, "big") + attempt.to_bytes(4, "big")).digest()[:8]
        x = int.from_bytes(word, "big")
        if x < limit:
            return x % bound
        attempt += 1


def draw_positions(pool_size: int, count: int, seed: bytes) -> list[int]:
    """Positions (0-based, in the sorted pool) of `min(count, pool_size)` distinct items, in the
    order drawn: step j swaps position j with position j + uniform(pool_size - j)."""
    swapped: dict[int, int] = {}
    picked = []
    for j in range(min(count, pool_size)):
        k = j + _uniform_below(seed, j, pool_size - j)
        at_k = swapped.get(k, k)
        swapped[k] = swapped.get(j, j)
        picked.append(at_k)
    return picked


def utf8_sorted(ids: list[str]) -> list[str]:
    """Ids in the order of their UTF-8 bytes (for ids, which are ASCII, plain string order)."""
    return sorted(ids, key=lambda i: i.encode("utf-8"))


def draw_items(pool: list[str], randomness: bytes, purpose: str, count: int) -> list[str]:
    """The items a round draws from `pool` (any order: it is sorted here), in sorted order."""
    ordered = utf8_sorted(pool)
    return utf8_sorted([ordered[p] for p in draw_positions(len(ordered), count, draw_seed(randomness, purpose))])


# ---------------------------------------------------------------------------------------------
# The two events, as the replay checks them (their items and rounds are checked where the
# methodology and the run specs are known).


def _round_and_items_problems(leaf: dict[str, Any]) -> list[Problem]:
    problems = []
    if not (is_int(leaf["round"]) and 1 <= leaf["round"] <= MAX_ROUND):
        problems.append(Problem("must be a round number, 1 to 2^64 - 1", where="round", found=show(leaf["round"], 40)))
    sig = leaf["signature"]
    if not (isinstance(sig, str) and len(sig) == 96 and all(c in "0123456789abcdef" for c in sig)):
        problems.append(
            Problem("malformed round signature", where="signature", expected="96 lowercase hex digits", found=show(sig))
        )
    items = leaf["items"]
    if not (isinstance(items, list) and all(is_id(i) for i in items)):
        problems.append(Problem("must be a list of item ids", where="items", expected=ID_RE.pattern, found=show(items)))
    elif len(set(items)) != len(items):
        problems.append(Problem("items must be distinct", where="items", found=show(items)))
    elif items != utf8_sorted(items):
        problems.append(Problem("items must be in sorted order", where="items", expected=show(utf8_sorted(items))))
    elif len(items) > MAX_DRAWN_ITEMS:
        problems.append(Problem("too many items", where="items", expected=f"at most {MAX_DRAWN_ITEMS}"))
    return problems


def draw_event_problems(
    leaf: dict[str, Any], registered: bool, decided: str | None, earlier: Draw | None
) -> list[Problem]:
    """A `draw` leaf: a round's draw for a run registered before it and not yet decided, once."""
    run = leaf["run"]
    problems = _round_and_items_problems(leaf)
    if not registered:
        problems.append(Problem("draw for a run that was not registered before", where="run", found=show(run)))
    elif earlier is not None:
        problems.append(Problem(f"run {run} is drawn twice (first at entries[{earlier.index}])", where="run"))
    elif decided is not None:
        problems.append(Problem(f"run {run} was already decided ({decided}) when its items were drawn", where="run"))
    if isinstance(leaf["items"], list) and not leaf["items"]:
        problems.append(Problem("a run's draw lists its items", where="items", expected="at least one item"))
    return problems


def retirement_draw_event_problems(leaf: dict[str, Any]) -> list[Problem]:
    """A `retirement-draw` leaf's shape (what it retires follows it: a reveal per item, in order)."""
    return _round_and_items_problems(leaf)


def pending_reveal_problem(expected: str, leaf: dict[str, Any], draw: RetirementDraw) -> Problem | None:
    """The leaf after a retirement draw must reveal its next item, as retired."""
    if leaf.get("type") == "reveal" and leaf.get("id") == expected and leaf.get("reason") == "retired":
        return None
    return Problem(
        f"the retirement drawn at entries[{draw.index}] must be followed by the reveal of each item it drew, in order",
        where="",
        expected=f'a reveal of {expected}, reason "retired"',
        found=f"{show(leaf.get('type'))} {show(leaf.get('id'))}",
    )
