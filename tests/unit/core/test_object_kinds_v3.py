"""What a store keeps for good in a format v3 site (docs/formats/v3.md, 7): the files v3 writes once
(inclusion proofs, archived checkpoints, consistency proofs) are immutable there, and pages in a
v2 site, whose releases rewrite them; the rest is classified alike in both."""

from __future__ import annotations

import pytest

from generator.build.release_continuity import is_immutable
from generator.core.object_kinds import IMMUTABLE_CACHE, PAGE_CACHE, Kind, headers_for, kind_of
from generator.publish.publisher import PublishError, plan, removable

WRITTEN_ONCE_IN_V3 = (
    "reveals/b-0001.json.tlog-proof",
    "certificates/c-1.json.tlog-proof",
    "ledger/checkpoints/9",
    "ledger/checkpoints/0",
    "ledger/consistency/3-9.json",
)


@pytest.mark.parametrize("path", WRITTEN_ONCE_IN_V3)
def test_what_v3_writes_once_is_immutable_there_only(path: str) -> None:
    assert kind_of(path, 3) is Kind.IMMUTABLE
    assert headers_for(path, 3).cache_control == IMMUTABLE_CACHE
    assert kind_of(path) is Kind.PAGE and kind_of(path, 2) is Kind.PAGE
    assert headers_for(path).cache_control == PAGE_CACHE
    assert not removable(path, 3) and removable(path, 2)
    assert is_immutable(path, 3) and not is_immutable(path, 2)


@pytest.mark.parametrize(
    "path",
    [
        "ledger/consistency/3.json",  # v2's shape: no v3 file has it
        "ledger/consistency/3-9.json.sig",
        "ledger/checkpoints/09",
        "ledger/checkpoint",
        "ledger/history.json",
        "ledger/commitments.json",
        "ledger/commitments/0.json",  # a part is rewritten when one of its rows changes
        "reveals/b-0001.json.tlog-proof/x",
        "index.html",
    ],
)
def test_the_rest_of_a_v3_site_is_classified_as_in_v2(path: str) -> None:
    assert kind_of(path, 3) is kind_of(path, 2)


def test_a_plan_for_a_v3_site_refuses_to_rewrite_a_proof() -> None:
    proof = "reveals/b-0001.json.tlog-proof"
    listing = [(proof, "b" * 64)]
    assert plan(listing, iter([(proof, "a" * 64)]), 2).pages == listing
    with pytest.raises(PublishError) as caught:
        plan(listing, iter([(proof, "a" * 64)]), 3)
    assert any(p.startswith(proof) and "never rewritten" in p for p in caught.value.problems), caught.value.problems
