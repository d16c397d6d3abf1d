"""The answers certificates are scored and rechecked against, read from reveal documents.

One loader for every reader: the verifier (reveal files of a site), the build (reveal files
of the data directory) and `certify` (the sealed store, for a secret gate). Each document is
checked against the item's commitment in the ledger and against the shape of format v1 §3 before its
answer is used; answers are cached, a bounded number, since a public item serves many runs.
"""

from collections.abc import Callable, Iterable
from typing import Any

from generator.verifier.core.canonical import parse_canonical
from generator.verifier.core.errors import FormatError
from generator.verifier.core.formats import check_reveal_document, sha256_hex
from generator.verifier.rules.ledger import Ledger

# Answers kept at once: far more than the items of one run, far fewer than a million.
ANSWER_CACHE = 20_000


class RevealedAnswers:
    """Answers by item id. `fetch(item_id)` returns the bytes of the item's reveal document,
    or None if there are none to read; with `sealed=True` the items need not be revealed yet
    (the private store of `certify`)."""

    def __init__(self, ledger: Ledger, fetch: Callable[[str], bytes | None], sealed: bool = False) -> None:
        self.ledger = ledger
        self.fetch = fetch
        self.sealed = sealed
        self._cache: dict[str, tuple[dict[str, Any] | None, str | None]] = {}

    def load(self, item_id: str) -> tuple[dict[str, Any] | None, str | None]:
        """(the answer, None), or (None, why there is none)."""
        hit = self._cache.get(item_id)
        if hit is not None:
            return hit
        found = self._load(item_id)
        if len(self._cache) >= ANSWER_CACHE:
            self._cache.clear()
        self._cache[item_id] = found
        return found

    def _load(self, item_id: str) -> tuple[dict[str, Any] | None, str | None]:
        commit = self.ledger.commit(item_id)
        if commit is None:
            return None, f"item {item_id} was never committed"
        if not self.sealed and item_id not in self.ledger.reveals:
            return None, f"item {item_id} is not revealed"
        data = self.fetch(item_id)
        if data is None:
            return None, f"the reveal document of {item_id} is missing"
        digest = sha256_hex(data)
        if digest != commit.commitment:
            return (
                None,
                f"the reveal document of {item_id} does not hash to its commitment (expected {commit.commitment}, "
                f"found {digest})",
            )
        try:
            doc = parse_canonical(data)
        except FormatError as e:
            return None, f"the reveal document of {item_id}: {e}"
        if check_reveal_document(doc):
            return None, f"the reveal document of {item_id} is not an item-reveal document of format v1 §3"
        return doc["item"]["answer"], None

    def answer(self, item_id: str) -> dict[str, Any] | None:
        return self.load(item_id)[0]

    def answers(self, items: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The answers of those of `items` that have one."""
        out = {}
        for i in items:
            a = self.answer(i)
            if a is not None:
                out[i] = a
        return out
