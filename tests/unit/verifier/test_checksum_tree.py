"""The checksum list's tree (docs/formats/v3.md, 5): its shape is a function of the set of paths,
every leaf holds at most 64 files, every other node but the root more, each file sits in the
leaf its key names, and the lists' lines are the build's. Format v4's tree (docs/formats/v4.md,
3) the same by bits and 16 files, and how full its leaves are does not cycle with the size."""

from __future__ import annotations

import hashlib
import random

from generator.verifier import (
    TreeRule,
    build_tree,
    inner_list,
    leaf_list,
    list_path,
    part_path,
    path_key,
    read_lists,
    tree_rule,
)

LEAF = 64


def paths(n: int) -> list[str]:
    return [f"items/item-{i:06d}.html" for i in range(n)]


def check_shape(files: list[str]) -> None:
    tree = build_tree(files)
    placed = [p for leaf in tree.leaves.values() for p in leaf]
    assert sorted(placed) == sorted(files), "every file in exactly one leaf"
    assert tree.inner[""], "the root always has children"
    for prefix, leaf in tree.leaves.items():
        assert prefix, "the root is never a leaf"
        assert 0 < len(leaf) <= LEAF, prefix
        assert all(path_key(p).startswith(prefix) for p in leaf), prefix
        assert leaf == sorted(leaf, key=str.encode), prefix

    def count(p: str) -> int:
        return len(tree.leaves[p]) if p in tree.leaves else sum(count(c) for c in tree.inner[p])

    for prefix, children in tree.inner.items():
        if prefix:
            assert count(prefix) > LEAF, f"{prefix}: an inner node of {count(prefix)} files"
        digits = sorted({path_key(p)[len(prefix)] for p in files if path_key(p).startswith(prefix)})
        assert [c[-1] for c in children] == digits, f"{prefix}: a child for each digit its keys continue with"


def test_the_tree_of_a_large_site_has_its_shape() -> None:
    files = paths(64 * 16 * 3)
    check_shape(files)
    tree = build_tree(files)
    assert max(map(len, tree.leaves)) >= 2, "more than 64*16 files: leaves two digits deep"


def test_small_sites_and_edges() -> None:
    check_shape(["index.html"])
    check_shape(paths(64))
    check_shape(paths(65))
    tree = build_tree(["a", "b"])
    assert set(tree.leaves) == {path_key("a")[0], path_key("b")[0]}, "a leaf under the root for each first digit"


def test_the_shape_depends_on_the_set_alone() -> None:
    files = paths(3000)
    shuffled = files[:]
    random.Random(7).shuffle(shuffled)
    assert build_tree(files) == build_tree(shuffled)


def test_lists_and_reading_them_back() -> None:
    files = paths(2000)
    digests = {p: hashlib.sha256(p.encode()).hexdigest() for p in files}
    tree = build_tree(files)
    store: dict[str, bytes] = {}
    for prefix in tree.leaves:
        store[list_path(prefix)] = leaf_list(tree, prefix, digests)
        digests[list_path(prefix)] = hashlib.sha256(store[list_path(prefix)]).hexdigest()
        digests[part_path(prefix)] = "0" * 64
    for prefix in tree.lists_bottom_up():
        store[list_path(prefix)] = inner_list(tree, prefix, digests, parts=True)
        digests[list_path(prefix)] = hashlib.sha256(store[list_path(prefix)]).hexdigest()
    root = store.pop(list_path(""))
    assert b"sums/" in root and b"download/" not in root, "2,000 files: the root's children are inner nodes"
    rows, problems = read_lists(root, store.get)
    assert problems == []
    assert set(rows) == set(files) | set(store) | {part_path(p) for p in tree.leaves}
    some = next(iter(tree.leaves))
    store[list_path(some)] += b"x"
    rows, problems = read_lists(root, store.get)
    assert any(list_path(some) in p and "SHA-256" in p for p in problems), problems
    assert not set(tree.leaves[some]) & set(rows), "a list that is not its parent's bytes adds nothing"


def bits(path: str) -> str:
    """A path's key as bits, computed apart from the verifier's own reading of a hex key."""
    return format(int.from_bytes(hashlib.sha256(path.encode()).digest(), "big"), "0256b")


def check_bit_shape(files: list[str]) -> TreeRule:
    rule = tree_rule(4)
    tree = rule.build(files)
    placed = [p for leaf in tree.leaves.values() for p in leaf]
    assert sorted(placed) == sorted(files), "every file in exactly one leaf"
    for prefix, leaf in tree.leaves.items():
        assert prefix and set(prefix) <= {"0", "1"}, prefix
        assert 0 < len(leaf) <= rule.leaf_files == 16, prefix
        assert all(bits(p).startswith(prefix) for p in leaf), prefix

    def count(p: str) -> int:
        return len(tree.leaves[p]) if p in tree.leaves else sum(count(c) for c in tree.inner[p])

    for prefix, children in tree.inner.items():
        if prefix:
            assert count(prefix) > 16, f"{prefix}: an inner node of {count(prefix)} files"
        want = sorted({bits(p)[len(prefix)] for p in files if bits(p).startswith(prefix)})
        assert [c[-1] for c in children] == want, prefix
    return rule


def test_a_v4_tree_splits_by_bits() -> None:
    for n in (1, 16, 17, 3000):
        check_bit_shape(paths(n))
    rule = tree_rule(4)
    assert rule.build(paths(3000)) == rule.build(list(reversed(paths(3000))))
    assert rule.key("index.html") == bits("index.html")


def test_a_v4_trees_leaves_are_as_full_at_every_size_and_a_v3_trees_cycle() -> None:
    """What a release rewrites of the download is its touched leaves' files: by bits, a leaf
    holds about the same number at any size; by hex digits, sixteenfold more at some sizes than
    at others."""
    sizes = [1000 * 2**k for k in range(6)]  # 1,000 to 32,000 files

    def files_beside_a_change(rule: TreeRule, n: int) -> float:
        """The files of the leaf a file picked at random is in, on average: what its part holds."""
        tree = rule.build(paths(n))
        return sum(len(leaf) ** 2 for leaf in tree.leaves.values()) / n

    by_bits = [files_beside_a_change(tree_rule(4), n) for n in sizes]
    by_hex = [files_beside_a_change(tree_rule(3), n) for n in sizes]
    assert max(by_bits) / min(by_bits) < 1.2 and all(8 <= f <= 16 for f in by_bits), by_bits
    assert max(by_hex) / min(by_hex) > 3.5, by_hex
