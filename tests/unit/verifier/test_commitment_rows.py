"""The commitment list compared as bytes: a document whose rows are byte for byte the canonical
rows the ledger implies passes without a row being parsed, and every other document is read row
by row, exactly as before. The two readings must give the same report on any document, so each
test runs the check twice, once with the byte comparison turned off, and compares."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.verifier.core.folder import MANIFEST_PATH, Site
from generator.verifier.core.report import Report
from generator.verifier.rules.events import Commit
from generator.verifier.rules.ledger import Ledger
from generator.verifier.site import commitment_parts, ledger_files

CLIST = "ledger/commitments.json"


@pytest.fixture(scope="module")
def replayed(demo_site: Any) -> tuple[Path, Ledger, str, bytes]:
    """The demo site, its replayed ledger, its origin and its public key."""
    site = demo_site.out
    manifest = json.loads((site / MANIFEST_PATH).read_bytes())
    report = Report(str(site))
    s = Site(site, report)
    key = _vkey(site, manifest)
    ledger = ledger_files.check_ledger(s, manifest, manifest["origin"], key)
    assert ledger is not None and report.ok, report.failures
    return site, ledger, manifest["origin"], key


def _vkey(site: Path, manifest: dict[str, Any]) -> bytes:
    from generator.verifier.site.release import check_keys_document

    report = Report(str(site))
    key = check_keys_document(Site(site, report), manifest, manifest["origin"], None, [])
    assert key is not None
    return key


def _report(folder: Path, ledger: Ledger, origin: str, key: bytes) -> tuple[int, list[str]]:
    report = Report(str(folder))
    ledger_files.check_commitment_list(Site(folder, report), CLIST, origin, key, ledger)
    return report.checks, [f"{p.file} {p.where} {p.message} {p.expected} {p.found}" for p in report.failures]


def _both(folder: Path, ledger: Ledger, origin: str, key: bytes) -> tuple[int, list[str]]:
    """The report with the byte comparison, after asserting it is the row-by-row report."""
    fast = _report(folder, ledger, origin, key)
    saved = ledger_files._rows_as_expected
    ledger_files._rows_as_expected = lambda data, ledger: None  # type: ignore[assignment]
    try:
        slow = _report(folder, ledger, origin, key)
    finally:
        ledger_files._rows_as_expected = saved
    assert fast == slow
    return fast


def _with(tmp_path: Path, site: Path, data: bytes) -> Path:
    folder = tmp_path / "site"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "ledger").mkdir(parents=True)
    for name in ("commitments.json", "commitments.json.sig"):
        shutil.copy(site / "ledger" / name, folder / "ledger" / name)
    (folder / CLIST).write_bytes(data)
    return folder


def test_a_published_list_is_compared_as_bytes_not_parsed(
    replayed: tuple[Path, Ledger, str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    site, ledger, origin, key = replayed
    assert ledger.commit_count > 10
    monkeypatch.setattr(ledger_files, "_check_rows", lambda *a: pytest.fail("a row was parsed"))
    checks, failures = _report(site, ledger, origin, key)
    assert failures == []
    assert checks >= ledger.commit_count


def test_batches_meet_where_one_ends(
    replayed: tuple[Path, Ledger, str, bytes], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    site, ledger, _origin, _key = replayed
    monkeypatch.setattr(commitment_parts, "ROW_BATCH", 3)
    data = (site / CLIST).read_bytes()
    assert ledger_files._rows_as_expected(data, ledger) is not None
    # A row left out where two batches meet, or one too many: the comparison fails, rows are read.
    rows = json.loads(data)["commitments"]
    for edited in (rows[:3] + rows[4:], rows + rows[-1:], rows[:-1]):
        doc = json.loads(data)
        doc["commitments"] = edited
        assert ledger_files._rows_as_expected(_canonical(doc), ledger) is None


def _canonical(doc: Any) -> bytes:
    from generator.verifier.core.canonical import canonical_bytes

    return canonical_bytes(doc)


def _first_row_span(data: bytes) -> tuple[int, int]:
    start = data.index(b"[") + 1
    return start, data.index(b"}", start) + 1


EDITS: dict[str, Callable[[bytes], bytes]] = {
    "unchanged": lambda d: d,
    "an id's letter escaped": lambda d: d.replace(b'"id":"a-', b'"id":"\\u0061-', 1),
    "a space after a colon": lambda d: d.replace(b'"gate":', b'"gate": ', 1),
    "an index written 3.0": lambda d: d.replace(b'"index":3,', b'"index":3.0,', 1),
    "an index written 3e0": lambda d: d.replace(b'"index":3,', b'"index":3e0,', 1),
    "an index written true": lambda d: d.replace(b'"index":3,', b'"index":true,', 1),
    "a row's keys reordered": lambda d: d.replace(b'{"at":', b'{"commitment":"x","at":', 1),
    "a status flipped": lambda d: d.replace(b'"status":"sealed"', b'"status":"revealed"', 1),
    "a row doubled": lambda d: (
        d[: _first_row_span(d)[1]] + b"," + d[slice(*_first_row_span(d))] + d[_first_row_span(d)[1] :]
    ),
    "the first row gone": lambda d: d[: _first_row_span(d)[0]] + d[_first_row_span(d)[1] + 1 :],
    "the last row gone": lambda d: d[: d.rindex(b",{", 0, d.index(b"]"))] + d[d.index(b"]") :],
    "bytes after the document": lambda d: d + b" ",
    "the tail's members swapped": lambda d: d.replace(b',"origin":', b',"zz":0,"origin":', 1),
    "no tail": lambda d: d[: d.index(b"]") + 1] + b"}",
    "no closing bracket": lambda d: d[: d.index(b"]")],
    "a control character raw in a string": lambda d: d.replace(b'"gate":"', b'"gate":"\x01', 1),
    "a NUL escaped the long way": lambda d: d.replace(b'"gate":"', b'"gate":"\\u0000', 1),
    "a newline escaped the long way": lambda d: d.replace(b'"gate":"', b'"gate":"\\u000a', 1),
    "not UTF-8": lambda d: d.replace(b'"gate":"', b'"gate":"\xff', 1),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_every_edit_gets_the_report_rows_read_one_by_one_give(
    edit: str, replayed: tuple[Path, Ledger, str, bytes], tmp_path: Path
) -> None:
    site, ledger, origin, key = replayed
    data = (site / CLIST).read_bytes()
    edited = EDITS[edit](data)
    assert (edited == data) == (edit == "unchanged"), "the edit must change the bytes"
    _checks, failures = _both(_with(tmp_path, site, edited), ledger, origin, key)
    if edit == "unchanged":
        assert failures == []
    else:
        assert failures, f"{edit}: not reported"
        if edit != "no tail":  # rows as expected, the members after them wrong
            assert ledger_files._rows_as_expected(edited, ledger) is None


# The list replaces the profile's (tests/conftest.py), so it names too_slow again.
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_byte_changed_gets_the_same_report(
    data: st.DataObject, replayed: tuple[Path, Ledger, str, bytes], tmp_path: Path
) -> None:
    site, ledger, origin, key = replayed
    original = (site / CLIST).read_bytes()
    at = data.draw(st.integers(0, len(original) - 1))
    new = data.draw(st.sampled_from(b'0 \\"u,:{}[]aeft1.-\x00\x7f\xc3'))
    edited = original[:at] + bytes([new]) + original[at + 1 :]
    _checks, failures = _both(_with(tmp_path, site, edited), ledger, origin, key)
    assert bool(failures) == (edited != original)


class _Rows:
    """What commitment_rows_bytes reads of a ledger: its commits in order and its reveals."""

    def __init__(self, commits: list[Commit], reveals: set[str]) -> None:
        self._commits, self.reveals = commits, reveals

    def commits(self, start: int = 0, stop: int | None = None) -> Iterator[Commit]:
        return iter(self._commits[start:stop])


_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(_TEXT, _TEXT, _TEXT, _TEXT, st.integers(0, 2**53 - 1), st.booleans()), max_size=7),
    batch=st.integers(1, 3),
)
def test_the_rows_are_rfc8785_whatever_the_strings(
    rows: list[tuple[str, str, str, str, int, bool]], batch: int
) -> None:
    commits = [Commit(id=i, gate=g, commitment=c, index=n, at=a) for i, g, c, a, n, _ in rows]
    revealed = {i for i, _g, _c, _a, _n, r in rows if r}
    saved = commitment_parts.ROW_BATCH
    commitment_parts.ROW_BATCH = batch
    try:
        made = b"".join(ledger_files.commitment_rows_bytes(_Rows(commits, revealed)))  # type: ignore[arg-type]
    finally:
        commitment_parts.ROW_BATCH = saved
    want = b",".join(
        rfc8785.dumps(
            {"at": c.at, "commitment": c.commitment, "gate": c.gate, "id": c.id, "index": c.index}
            | {"status": "revealed" if c.id in revealed else "sealed"}
        )
        for c in commits
    )
    assert made == want
