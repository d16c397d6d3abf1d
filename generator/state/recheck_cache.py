"""Certificates a build has already recomputed, remembered in `<private>/cache/rechecks.json`.

Recomputing a certificate (every similarity, item score, rate, interval, grade and bullet)
costs about 10 ms; a program of twenty thousand pays minutes for each build although issued
certificates never change. A certificate's recomputation reads only: its own bytes (the ledger
holds their SHA-256), its run's spec (likewise), its methodology's parameters (likewise), which
of its items are revealed and under which commitment, and which of its details documents and
grader record are published (each checked against the hash the certificate holds before this
is asked). The key is the SHA-256 of all of these and of the code (generator.core.digest), and the
memo keeps, under it, what the recomputation could only take as asserted; a certificate whose
recomputation found any problem is never remembered, so it is recomputed, and reported, every
time.

The memo also keeps, with an empty list, the SHA-256 of each run spec whose shape passed
(gather._gather_specs): a shape is a function of the spec's bytes and of the code alone.

The site a build publishes is still verified whole by the verifier it ships, which trusts no
memo: an edited memo can at worst let a build reach that check with a bad certificate, which
it then refuses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.core.digest import digest_of
from generator.state.cache_file import Staged, code_bound_bytes, read_code_bound, stage_cache

RECHECKS_NAME = "rechecks.json"


class RecheckMemo:
    def __init__(self, private: Path | None, read: bool = True) -> None:
        """`private`: the private directory whose cache/ holds the memo; None remembers nothing.
        `read=False` uses nothing remembered but remembers this build's."""
        self.path = private / "cache" / RECHECKS_NAME if private is not None else None
        self.old: dict[str, list[str]] = {}
        self.new: dict[str, list[str]] = {}
        if self.path is not None and read:
            self.old = _load(self.path)

    @staticmethod
    def key(*inputs: Any) -> str:
        return digest_of(inputs)

    def get(self, key: str) -> list[str] | None:
        """What the recomputation under `key` took as asserted, if it passed before."""
        found = self.old.get(key)
        if found is not None:
            self.new[key] = found
        return found

    def put(self, key: str, asserted: list[str]) -> None:
        self.new[key] = asserted

    def stage(self) -> Staged | None:
        """Keep the certificates of this build (those no longer in the ledger are forgotten),
        written beside the memo's place until the caller commits it. A failure to write costs
        the next build its recomputations, no more."""
        if self.path is None or self.new == self.old:
            return None
        return stage_cache(self.path, code_bound_bytes("certificates", self.new))


def _load(path: Path) -> dict[str, list[str]]:
    rows = read_code_bound(path, "certificates")
    return {
        k: v
        for k, v in rows.items()
        if isinstance(k, str) and isinstance(v, list) and all(isinstance(x, str) for x in v)
    }
