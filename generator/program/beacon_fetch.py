"""Reading a beacon round over HTTP (drand's API, `GET RELAY/CHAIN_HASH/public/ROUND`) from the
first of several relays that answers with a round the pinned key verifies, in bounded time.

A relay is not trusted: what it serves is checked against the pinned key before it is stored,
so a relay that lies is only one that failed.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from generator.verifier import Beacon, round_document_problems, round_signature_problems

# drand's public relays for the League of Entropy's chains, tried in this order.
DEFAULT_RELAYS = (
    "https://api.drand.sh",
    "https://api2.drand.sh",
    "https://api3.drand.sh",
    "https://drand.cloudflare.com",
)
MAX_ROUND_BYTES = 4096


@dataclass
class FetchFailed(Exception):
    """No relay served the round; one line per relay tried, saying why."""

    round: int
    failures: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"no relay served round {self.round}:\n" + "\n".join(f"  {f}" for f in self.failures)


def fetch_round(beacon: Beacon, round_number: int, relays: tuple[str, ...], timeout: float) -> bytes:
    """The round's JSON (as the relay sent it) from the first relay whose answer is a round of
    the number asked, signed by the pinned key; FetchFailed naming each relay's failure."""
    failures = []
    for relay in relays:
        url = f"{relay.rstrip('/')}/{beacon.chain_hash}/public/{round_number}"
        try:
            with urllib.request.urlopen(
                urllib.request.Request(url, headers={"Accept": "application/json"}), timeout=timeout
            ) as r:
                body: bytes = r.read(MAX_ROUND_BYTES + 1)
        except urllib.error.HTTPError as e:
            failures.append(f"{relay}: HTTP {e.code} {e.reason}")
            continue
        except (urllib.error.URLError, OSError) as e:
            failures.append(f"{relay}: {getattr(e, 'reason', e)}")
            continue
        if len(body) > MAX_ROUND_BYTES:
            failures.append(f"{relay}: the answer is larger than a round ({MAX_ROUND_BYTES} bytes at most)")
            continue
        why = _round_problem(body, beacon, round_number)
        if why is None:
            return body
        failures.append(f"{relay}: {why}")
    raise FetchFailed(round_number, failures)


def _round_problem(body: bytes, beacon: Beacon, round_number: int) -> str | None:
    try:
        doc = json.loads(body)
    except ValueError:
        return "the answer is not JSON"
    found = round_document_problems(doc)
    if not found and doc["round"] != round_number:
        return f"it served round {doc['round']}, not {round_number}"
    if not found:
        found = round_signature_problems(beacon, round_number, doc["signature"], "signature")
    return None if not found else found[0].message
