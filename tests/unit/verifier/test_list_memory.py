"""The verifier's memory of a tree of checksum lists (generator/verifier/memory/list_memory.py): what
one run writes, the next reads back by prefix and SHA-256, each subtree a run of lists carried
whole; anything torn, edited or of another log, code or rule is not used."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from generator.verifier.memory.list_memory import ListRecord, _subtree_sizes, load_lists

ORIGIN, RULES, RULE = "example.org/log", "r" * 64, "bit"


def body(*names: str) -> bytes:
    return b"".join(f"{hashlib.sha256(n.encode()).hexdigest()}  {n}\n".encode() for n in names)


# A tree met root first, each node followed by every node below it.
TREE = [
    ("", True, body("sums/0.sha256", "sums/1.sha256")),
    ("1", True, body("sums/10.sha256", "sums/11.sha256")),
    ("11", False, body("a", "b")),
    ("10", False, body("c")),
    ("0", False, body("d", "e", "f")),
]


def written(tmp_path: Path, tree: list[tuple[str, bool, bytes]] = TREE) -> Path:
    record = ListRecord()
    for prefix, inner, data in tree:
        record.read(prefix, inner, data)
    path = tmp_path / "x.lists"
    path.write_bytes(b"".join(bytes(c) for c in record.chunks(ORIGIN, RULES, RULE)))
    return path


def test_subtree_sizes_count_each_node_and_all_below_it() -> None:
    assert _subtree_sizes([p for p, _, _ in TREE]) == [5, 3, 1, 1, 1]
    assert _subtree_sizes(["", "0", "00", "01", "1"]) == [5, 3, 1, 1, 1]
    assert _subtree_sizes([]) == []


def test_a_subtree_is_found_by_its_prefix_and_sha256_and_read_back_whole(tmp_path: Path) -> None:
    memory, why = load_lists(written(tmp_path), ORIGIN, RULES, RULE)
    assert memory is not None and why is None
    sha = hashlib.sha256(TREE[1][2]).hexdigest()
    span = memory.subtree("1", sha)
    assert span is not None
    assert [(k.prefix, k.inner, bytes(k.body)) for k in memory.lists(span)] == TREE[1:4]
    assert memory.subtree("1", "0" * 64) is None, "another SHA-256 is another list"
    assert memory.subtree("01", sha) is None


def test_a_subtree_taken_is_written_again_as_it_was(tmp_path: Path) -> None:
    first = written(tmp_path)
    memory, _ = load_lists(first, ORIGIN, RULES, RULE)
    assert memory is not None
    record = ListRecord()
    record.read("", True, TREE[0][2])
    span = memory.subtree("1", hashlib.sha256(TREE[1][2]).hexdigest())
    assert span is not None
    record.taken(memory, span)
    record.read("0", False, TREE[4][2])
    again = b"".join(bytes(c) for c in record.chunks(ORIGIN, RULES, RULE))
    assert again == first.read_bytes()


@pytest.mark.parametrize(
    "origin, rules, rule",
    [("other.example/log", RULES, RULE), (ORIGIN, "s" * 64, RULE), (ORIGIN, RULES, "hex digit")],
)
def test_the_lists_of_another_log_code_or_rule_are_not_used(tmp_path: Path, origin: str, rules: str, rule: str) -> None:
    memory, why = load_lists(written(tmp_path), origin, rules, rule)
    assert memory is None and why is not None and "not used" in why


def test_any_rule_serves_a_reader_of_rows(tmp_path: Path) -> None:
    assert load_lists(written(tmp_path), ORIGIN, RULES, None)[0] is not None


@pytest.mark.parametrize("cut", ["a byte of the lists", "the end", "the header", "a line", "a header nested deep"])
def test_a_torn_or_edited_file_is_not_used(tmp_path: Path, cut: str) -> None:
    path = written(tmp_path)
    data = bytearray(path.read_bytes())
    if cut == "a byte of the lists":
        data[-3] ^= 1
    elif cut == "the end":
        del data[-5:]
    elif cut == "the header":
        data[2] ^= 1
    elif cut == "a header nested deep":
        data[: data.index(b"\n")] = b"[" * 4000
    else:
        at = data.index(b"\n") + 1
        data[at] = ord("x")  # a line's kind
        data[at + 2 : at + 2] = b"0"  # and its prefix
    path.write_bytes(bytes(data))
    memory, why = load_lists(path, ORIGIN, RULES, RULE)
    assert memory is None and why is not None and str(path) in why


def test_a_missing_file_is_no_memory_and_no_note(tmp_path: Path) -> None:
    assert load_lists(tmp_path / "none.lists", ORIGIN, RULES, RULE) == (None, None)
