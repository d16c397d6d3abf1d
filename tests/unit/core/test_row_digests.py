"""Page keys with rows hashed once a build (generator/core/digest.py, RowDigests): the same
values give the same key in every build, any changed value of a row another key, and a key made
so never equals one made by `digest_of`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from generator.core.digest import RowDigests, Unhashable, digest_of, digest_with_rows


@dataclass(frozen=True)
class _Row:
    id: str
    status: str


@dataclass(frozen=True)
class _Group:
    name: str
    rows: tuple[_Row, ...]


def _page(rows: tuple[_Row, ...]) -> tuple[object, ...]:
    group = _Group("g", rows)
    return ("system.html", "systems/g/index.html", {"system": group, "rows": rows[:2], "first": 1})


def test_the_same_values_give_the_same_key_in_another_build() -> None:
    rows = tuple(_Row(f"run-{i}", "certified") for i in range(5))
    again = tuple(_Row(f"run-{i}", "certified") for i in range(5))  # other objects, equal values
    one = digest_with_rows(_page(rows), RowDigests((_Row, _Group)))
    two = digest_with_rows(_page(again), RowDigests((_Row, _Group)))
    assert one == two
    # Asked again within the build, from what it remembers: the same.
    digests = RowDigests((_Row, _Group))
    assert digest_with_rows(_page(rows), digests) == digest_with_rows(_page(rows), digests) == one


def test_a_changed_row_changes_the_key_where_it_is_shown_or_held() -> None:
    rows = tuple(_Row(f"run-{i}", "certified") for i in range(5))
    before = digest_with_rows(_page(rows), RowDigests((_Row, _Group)))
    for changed in (0, 4):  # a row shown on the page, and one only the group holds
        other = tuple(dataclasses.replace(r, status="revoked") if n == changed else r for n, r in enumerate(rows))
        assert digest_with_rows(_page(other), RowDigests((_Row, _Group))) != before


def test_keys_with_rows_are_apart_from_plain_keys_and_unpicklable_values_refused() -> None:
    rows = (_Row("run-1", "certified"),)
    assert digest_with_rows(_page(rows), RowDigests(())) != digest_of(_page(rows))
    with pytest.raises(Unhashable):
        digest_with_rows((lambda: None,), RowDigests((_Row,)))
