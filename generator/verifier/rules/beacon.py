"""The randomness beacon a methodology pins (FORMAT.md, "Draws and timestamps"), its rounds, and the
draws the methodology asks for: which beacon, whether secret-gate runs must be drawn, and the
retirement schedule.

The beacon is a drand chain of the `bls-unchained-g1-rfc9380` scheme (drand's quicknet): round `r`
is published at `genesis_time + (r - 1) * period` seconds, its signature is a BLS12-381 signature
on G1 of SHA-256(r as 8 bytes, big-endian) under the chain's key on G2, and its randomness is the
SHA-256 of the signature. A round is checked here against the pinned key, offline.
"""

import calendar
import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.verifier.core.errors import FormatError, Problem
from generator.verifier.core.formats import check_keys, is_hex64, is_int, is_time
from generator.verifier.core.text import show
from generator.verifier.crypto.bls12_381 import decode_g2
from generator.verifier.crypto.drand import (
    DRAND_QUICKNET_CHAIN_HASH,
    DRAND_QUICKNET_GENESIS_TIME,
    DRAND_QUICKNET_PERIOD,
    DRAND_QUICKNET_PUBLIC_KEY,
    verify_drand_round,
)

BEACON_SCHEME = "bls-unchained-g1-rfc9380"
BEACON_KEYS = ("name", "scheme", "chain_hash", "public_key", "genesis_time", "period")
DRAWS_KEYS = ("secret_gate_runs", "retirements")
SECRET_GATE_RUNS = ("required", "allowed")
RETIREMENT_KEYS = ("items", "every_seconds")
MIN_INTERVAL = 60  # seconds between scheduled retirements, at least
_HEX = frozenset("0123456789abcdef")
_YEAR_10000 = 253402300800
QUICKNET = {
    "chain_hash": DRAND_QUICKNET_CHAIN_HASH.hex(),
    "public_key": DRAND_QUICKNET_PUBLIC_KEY.hex(),
    "genesis_time": DRAND_QUICKNET_GENESIS_TIME,
    "period": DRAND_QUICKNET_PERIOD,
}


@dataclass(frozen=True)
class Beacon:
    """A pinned drand chain: what identifies it, and what times and checks its rounds."""

    name: str
    chain_hash: str
    public_key: bytes  # 96 bytes, a compressed G2 point
    genesis_time: int
    period: int

    def round_time(self, round_number: int) -> int:
        """The Unix time at which the round is published, in seconds."""
        return self.genesis_time + (round_number - 1) * self.period

    def first_round_at(self, unix_time: int) -> int:
        """The first round published at or after `unix_time`."""
        if unix_time <= self.genesis_time:
            return 1
        return 1 + -(-(unix_time - self.genesis_time) // self.period)


@dataclass(frozen=True)
class RetirementSchedule:
    """A methodology's scheduled retirements: `items` sealed items every `every_seconds` seconds from
    the methodology's publication, none due after `until` (if given)."""

    items: int
    every_seconds: int
    until: str | None = None

    def due_times(self, start: int, end: int) -> range:
        """The due times (Unix seconds) after `start` up to `end`, and up to `until`."""
        last = min(end, unix_time(self.until)) if self.until is not None else end
        return range(start + self.every_seconds, last + 1, self.every_seconds)


def _is_hex(value: Any, digits: int) -> bool:
    return isinstance(value, str) and len(value) == digits and set(value) <= _HEX


def beacon_problems(doc: Any, where: str = "beacon") -> list[Problem]:
    """The shape of a pinned beacon."""
    problems = check_keys(doc, BEACON_KEYS, where=where)
    if not isinstance(doc, dict):
        return problems
    if "name" in doc and not (isinstance(doc["name"], str) and doc["name"].strip()):
        problems.append(Problem("must be a non-empty string", where=f"{where}.name", found=show(doc["name"])))
    if "scheme" in doc and doc["scheme"] != BEACON_SCHEME:
        problems.append(
            Problem(
                "unsupported beacon scheme", where=f"{where}.scheme", expected=BEACON_SCHEME, found=show(doc["scheme"])
            )
        )
    if "chain_hash" in doc and not is_hex64(doc["chain_hash"]):
        problems.append(Problem("must be 64 lowercase hex digits", where=f"{where}.chain_hash"))
    if "public_key" in doc and not _is_hex(doc["public_key"], 192):
        problems.append(Problem("must be a compressed G2 point, 192 lowercase hex digits", where=f"{where}.public_key"))
    elif "public_key" in doc:
        try:
            decode_g2(bytes.fromhex(doc["public_key"]), "the beacon's key")
        except FormatError as e:
            problems.append(Problem(str(e), where=f"{where}.public_key"))
    # drand's quicknet is named by its chain hash: a pin that uses the hash must be quicknet's, or a
    # key the operator holds could pass for the League of Entropy's.
    if doc.get("chain_hash") == QUICKNET["chain_hash"]:
        for k in ("public_key", "genesis_time", "period"):
            if k in doc and doc[k] != QUICKNET[k]:
                quicknet = show(QUICKNET[k])
                problems.append(
                    Problem("not drand quicknet's, whose chain hash it names", "", f"{where}.{k}", quicknet)
                )
    for k in ("genesis_time", "period"):
        if k in doc and not (is_int(doc[k]) and doc[k] >= 1):
            problems.append(Problem("must be a whole number, at least 1", where=f"{where}.{k}", found=show(doc[k])))
    return problems


def draws_problems(doc: Any, beacon: Any) -> list[Problem]:
    """The shape of a methodology's `draws`: it needs a pinned beacon (`beacon`, the member as
    given, None when there is none), and retirements no more often than its rounds."""
    has_beacon = beacon is not None
    problems = check_keys(doc, DRAWS_KEYS[:1], optional=DRAWS_KEYS[1:], where="draws")
    if not isinstance(doc, dict):
        return problems
    if not has_beacon:
        problems.append(Problem("draws need a pinned beacon", where="draws", expected="a beacon member"))
    if "secret_gate_runs" in doc and doc["secret_gate_runs"] not in SECRET_GATE_RUNS:
        problems.append(
            Problem(
                "unknown rule",
                where="draws.secret_gate_runs",
                expected=" | ".join(SECRET_GATE_RUNS),
                found=show(doc["secret_gate_runs"]),
            )
        )
    retirements = doc.get("retirements")
    if retirements is not None:
        where = "draws.retirements"
        found = check_keys(retirements, RETIREMENT_KEYS, optional=("until",), where=where)
        if isinstance(retirements, dict):
            items, every = retirements.get("items"), retirements.get("every_seconds")
            if "items" in retirements and not (is_int(items) and items >= 1):
                found.append(Problem("must be a whole number, at least 1", where=f"{where}.items", found=show(items)))
            if "every_seconds" in retirements and not (is_int(every) and every >= MIN_INTERVAL):
                at_least = f"a whole number of seconds, at least {MIN_INTERVAL}"
                found.append(
                    Problem("not an interval", where=f"{where}.every_seconds", expected=at_least, found=show(every))
                )
            period = beacon.get("period") if isinstance(beacon, dict) else None
            if is_int(every) and is_int(period) and every < period:
                slower = f"at least {period} (the beacon's period: two due times would share a round)"
                found.append(
                    Problem("due more often than the beacon makes rounds", "", f"{where}.every_seconds", slower)
                )
            if "until" in retirements and not is_time(retirements["until"]):
                found.append(Problem("malformed time", where=f"{where}.until", expected="YYYY-MM-DDTHH:MM:SSZ"))
        problems += found
    return problems


def parse_beacon(doc: dict[str, Any]) -> Beacon:
    """A beacon whose shape beacon_problems found valid."""
    key = bytes.fromhex(doc["public_key"])
    return Beacon(doc["name"], doc["chain_hash"], key, doc["genesis_time"], doc["period"])


def parse_schedule(draws: dict[str, Any] | None) -> RetirementSchedule | None:
    retirements = (draws or {}).get("retirements")
    if retirements is None:
        return None
    return RetirementSchedule(retirements["items"], retirements["every_seconds"], retirements.get("until"))


def unix_time(at: str) -> int:
    """A ledger time (YYYY-MM-DDTHH:MM:SSZ, as formats.TIME_RE admits it) as Unix seconds.

    Computed from the fields without a calendar's check, so that a time the pattern admits but no
    calendar has ("2026-02-30") still orders as its text does instead of stopping a check."""
    y, mo, d, h, mi, s = (int(at[0:4]), int(at[5:7]), int(at[8:10]), int(at[11:13]), int(at[14:16]), int(at[17:19]))
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))


def time_text(seconds: int) -> str:
    """Unix seconds as a ledger time (or, past year 9999, in seconds)."""
    if not 0 <= seconds < _YEAR_10000:
        return f"Unix time {seconds}"
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


# Rounds already checked in this process: a site names a round in one leaf, and several checks
# (the run's rules, the replay's, the build's self-check) read it.
_CHECKED_ROUNDS: dict[tuple[bytes, int, str], bool] = {}


def round_signature_problems(beacon: Beacon, round_number: int, signature: str, where: str) -> list[Problem]:
    """A round's signature against the pinned key (a forged or another chain's round fails)."""
    key = (beacon.public_key, round_number, signature)
    if key not in _CHECKED_ROUNDS:
        try:
            _CHECKED_ROUNDS[key] = verify_drand_round(beacon.public_key, round_number, bytes.fromhex(signature))
        except (ValueError, FormatError):  # not a point of the curve: not a signature either
            _CHECKED_ROUNDS[key] = False
    if _CHECKED_ROUNDS[key]:
        return []
    return [
        Problem(
            f"round {round_number}'s signature does not verify against the pinned key of beacon {beacon.name}",
            where=where,
            found=signature[:16] + "…",
        )
    ]


def round_randomness(signature: str) -> bytes:
    """A round's randomness: SHA-256 of its signature's bytes."""
    return hashlib.sha256(bytes.fromhex(signature)).digest()


def round_document_problems(doc: Any, where: str = "") -> list[Problem]:
    """A round as drand's HTTP API serves it: `round`, `signature`, and `randomness` (which must be
    the SHA-256 of the signature); other members are ignored."""
    if not isinstance(doc, dict):
        return [Problem("must be an object", where=where, found=show(doc))]
    problems = []
    if not (is_int(doc.get("round")) and doc["round"] >= 1):
        problems.append(Problem("must be a round number, at least 1", where="round", found=show(doc.get("round"))))
    sig = doc.get("signature")
    if not (isinstance(sig, str) and _is_hex(sig, 96)):
        problems.append(Problem("must be 96 lowercase hex digits (a G1 signature)", where="signature", found=show(sig)))
    elif "randomness" in doc and doc["randomness"] != round_randomness(sig).hex():
        problems.append(
            Problem(
                "randomness is not the SHA-256 of the signature",
                where="randomness",
                expected=round_randomness(sig).hex(),
                found=show(doc["randomness"]),
            )
        )
    return problems


def beacon_notes(methodologies: Mapping[str, Any]) -> list[str]:
    """What a pass cannot say of each pinned beacon that is not drand's quicknet."""
    out = []
    for version, m in sorted(methodologies.items()):
        b = getattr(m, "beacon", None)
        if b is not None and b.chain_hash != QUICKNET["chain_hash"]:
            out.append(
                f"methodology {version} pins the beacon {b.name!r} (chain {b.chain_hash[:16]}…), not drand's quicknet: "
                "its draws are only as far from the operator's choice as that beacon's key holders are"
            )
    return out
