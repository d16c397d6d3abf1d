"""generator/monitor/split_views.py: witnesses' views compared with each other and with a log read from its
hash tiles, on synthetic logs at the sizes worth trying (powers of two, tile boundaries, the empty tree), with
the clock given: a view with the log's root passes at every size, any other root is a fork naming both roots,
a wrong tile is the site's inconsistency and never a witness's, and cosignatures are judged by their time."""

from __future__ import annotations

import base64
import json

import pytest

from generator.monitor.monitor_errors import Inconsistent
from generator.monitor.split_views import INCONSISTENT, NOTE, WARNING, judge, summary, view_lines
from generator.monitor.witness_views import Unseen, View
from generator.verifier import COSIGNATURE_CLOCK_SKEW, EMPTY_ROOT
from tests.support.tiled_logs import TiledLog, old_sizes, tiled_log

NOW = 1_800_000_000


def view(name: str, size: int, root: bytes, timestamp: int = NOW - 5) -> View:
    return View(name, f"https://{name}.example.org", size, root, timestamp)


def b64(h: bytes) -> str:
    return base64.b64encode(h).decode()


def other(root: bytes) -> bytes:
    return bytes([root[0] ^ 1]) + root[1:]


def root_at(log: TiledLog, size: int) -> bytes:
    return log.tree.subtree_root(0, size) if size else EMPTY_ROOT


@pytest.fixture(scope="module")
def logs() -> dict[int, TiledLog]:
    return {n: tiled_log([n]) for n in (1, 2, 5, 256, 257, 700, 65537)}


def test_a_view_with_the_log_s_root_passes_and_any_other_root_is_a_fork_at_every_size(
    logs: dict[int, TiledLog],
) -> None:
    for n, log in logs.items():
        tiles, root = log.read(n), root_at(log, n)
        for m in old_sizes(n) if n < 65537 else [0, 1, 255, 256, 257, 4096, 65535, 65536, 65537]:
            good = judge([view("w1", m, root_at(log, m))], [], n, root, tiles.get, NOW, None)
            assert good.findings == [] and good.log_roots == {"w1": root_at(log, m)}, (n, m)
            bad = judge([view("w1", m, other(root_at(log, m)))], [], n, root, tiles.get, NOW, None)
            assert [(f.level, f.witnesses) for f in bad.findings] == [(INCONSISTENT, ("w1",))], (n, m)
            text = bad.findings[0].text
            assert text.startswith(f"fork: witness w1 (https://w1.example.org) cosigned size {m}, root ")
            assert b64(other(root_at(log, m))) in text
            assert text.endswith(
                f"but the log this monitor read has root {b64(root_at(log, m))} at size {m} (its checkpoint: size "
                f"{n}, root {b64(root)})"
            )


def test_a_wrong_or_missing_tile_is_the_site_s_inconsistency_never_a_fork(logs: dict[int, TiledLog]) -> None:
    log, n = logs[700], 700
    root = root_at(log, n)
    read: list[str] = []

    def get(path: str) -> bytes | None:
        read.append(path)
        return log.read(n).get(path)

    assert judge([view("w1", 300, root_at(log, 300))], [], n, root, get, NOW, None).findings == []
    assert len(read) >= 3
    for path in read:
        tiles = dict(log.read(n))
        tiles[path] = bytes(b ^ 1 for b in tiles[path])  # every hash of the tile wrong
        for seen in (root_at(log, 300), other(root_at(log, 300))):  # whatever the witness saw
            with pytest.raises(Inconsistent) as caught:
                judge([view("w1", 300, seen)], [], n, root, tiles.get, NOW, None)
            assert caught.value.lines[0].startswith(
                f"ledger/tile: the tiles do not prove the log's root at size 300 to its checkpoint (size {n}, root "
                f"{b64(root)}): "
            ), path
        del tiles[path]
        with pytest.raises(Inconsistent, match=f"{path}: missing"):
            judge([view("w1", 300, root_at(log, 300))], [], n, root, tiles.get, NOW, None)


def test_each_tile_is_read_once_for_all_the_views() -> None:
    log = tiled_log([700])
    read: list[str] = []

    def get(path: str) -> bytes | None:
        read.append(path)
        return log.read(700).get(path)

    views = [view(f"w{m}", m, root_at(log, m)) for m in (3, 256, 300, 513, 699)]
    assert judge(views, [], 700, root_at(log, 700), get, NOW, None).findings == []
    assert len(read) == len(set(read))


def test_views_of_one_size_with_two_roots_are_a_split_view_even_beyond_the_log(logs: dict[int, TiledLog]) -> None:
    log, n = logs[257], 257
    tiles, root = log.read(n), root_at(log, n)
    a, b = view("a", 300, b"\x01" * 32, NOW - 9), view("b", 300, b"\x02" * 32, NOW - 8)
    judged = judge([a, b], [], n, root, tiles.get, NOW, None)
    levels = [(f.level, f.witnesses) for f in judged.findings]
    assert levels == [(WARNING, ("a",)), (WARNING, ("b",)), (INCONSISTENT, ("a", "b"))]
    assert judged.findings[0].text.startswith("witness a (https://a.example.org) cosigned size 300, root AQEB")
    assert f"a larger tree than the site's checkpoint (size {n}, root {b64(root)})" in judged.findings[0].text
    assert judged.inconsistencies == [
        f"split view: two trees of size 300 cosigned: witness a (https://a.example.org) cosigned size 300, root "
        f"{b64(a.root)}, at 2027-01-15T07:59:51Z (timestamp {NOW - 9}); witness b (https://b.example.org) cosigned "
        f"size 300, root {b64(b.root)}, at 2027-01-15T07:59:52Z (timestamp {NOW - 8})"
    ]
    # The same root twice is no split view, and neither is a view beyond the log alone.
    same = judge([a, view("c", 300, a.root)], [], n, root, tiles.get, NOW, None)
    assert [f.level for f in same.findings] == [WARNING, WARNING]


def test_two_sizes_within_the_log_the_smaller_must_be_the_larger_s_tree(logs: dict[int, TiledLog]) -> None:
    log, n = logs[700], 700
    tiles, root = log.read(n), root_at(log, n)
    large, small = view("large", 512, root_at(log, 512)), view("small", 300, other(root_at(log, 300)))
    judged = judge([large, small], [], n, root, tiles.get, NOW, None)
    assert [(f.level, f.witnesses) for f in judged.findings] == [
        (INCONSISTENT, ("small",)),
        (INCONSISTENT, ("small", "large")),
    ]
    pair = judged.findings[1].text
    assert pair.startswith("small and large saw inconsistent trees: witness small (https://small.example.org) cosigned")
    assert pair.endswith(
        f"a tree whose root at size 300 is {b64(root_at(log, 300))} (the log's, as the site's tiles prove)"
    )
    # A larger view off the log ties nothing to the smaller one: only its own fork is said.
    judged = judge(
        [view("large", 512, other(root_at(log, 512))), view("small", 300, root_at(log, 300))],
        [],
        n,
        root,
        tiles.get,
        NOW,
        None,
    )
    assert [(f.level, f.witnesses) for f in judged.findings] == [(INCONSISTENT, ("large",))]


def test_cosignature_times_are_judged_by_the_clock_given(logs: dict[int, TiledLog]) -> None:
    log, n = logs[5], 5
    tiles, root = log.read(n), root_at(log, n)

    def problems(timestamp: int, max_age: int | None) -> list[str]:
        return judge([view("w1", n, root, timestamp)], [], n, root, tiles.get, NOW, max_age).inconsistencies

    assert problems(NOW + COSIGNATURE_CLOCK_SKEW, None) == []
    [ahead] = problems(NOW + COSIGNATURE_CLOCK_SKEW + 1, None)
    assert ahead.startswith("witness w1 (https://w1.example.org): the cosignature by w1 is dated ")
    assert "1m 1s in the future" in ahead
    assert problems(NOW - 10**9, None) == []
    assert problems(NOW - 3600, 3600) == []
    [old] = problems(NOW - 3601, 3600)
    assert old.endswith(
        "1h 1s before this clock's 2027-01-15T08:00:00Z (timestamp 1800000000); expected at most 1h old"
    )


def test_the_witnesses_that_gave_no_view_are_warnings_and_the_json_holds_every_witness(
    logs: dict[int, TiledLog],
) -> None:
    log, n = logs[257], 257
    tiles, root = log.read(n), root_at(log, n)
    unseen = [
        Unseen("quiet", "https://quiet.example.org", "absent", "no checkpoint of the log: it never cosigned one"),
        Unseen("local", None, "no-url", "the policy gives no URL for it: not asked"),
    ]
    views = [view("w1", 257, root, NOW - 1), view("w2", 256, root_at(log, 256)), view("ahead", 300, b"\x03" * 32)]
    judged = judge(views, unseen, n, root, tiles.get, NOW, None)
    assert [(f.level, f.witnesses) for f in judged.findings] == [
        (WARNING, ("ahead",)),
        (WARNING, ("quiet",)),
        (NOTE, ("local",)),
    ]
    assert (
        judged.findings[1].text
        == "witness quiet (https://quiet.example.org): no checkpoint of the log: it never cosigned one"
    )
    assert judged.findings[2].text == "witness local: the policy gives no URL for it: not asked"
    assert summary(judged) == (
        "witnesses: w1 at size 257, w2 at size 256, ahead at size 300: 2 of 3 within the log and consistent with it "
        "(size 257), no split view"
    )
    rows = [json.loads(line) for line in view_lines(judged)]
    assert all(line.isascii() for line in view_lines(judged))
    assert rows[0] == {
        "witness": {
            "name": "w1",
            "url": "https://w1.example.org",
            "checkpoint": {"size": 257, "root": b64(root), "cosigned": NOW - 1},
            "log": "consistent",
            "findings": [],
        }
    }
    assert [(r["witness"]["name"], r["witness"]["log"], r["witness"].get("unseen")) for r in rows] == [
        ("w1", "consistent", None),
        ("w2", "consistent", None),
        ("ahead", "beyond", None),
        ("quiet", None, "absent"),
        ("local", None, "no-url"),
    ]
    assert rows[2]["witness"]["findings"] == [{"level": WARNING, "text": judged.findings[0].text}]
    assert summary(judge([], unseen, n, root, tiles.get, NOW, None)) == (
        "witnesses: no witness gave a view of this log: nothing compared"
    )
