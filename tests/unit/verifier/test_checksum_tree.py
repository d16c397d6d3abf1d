"""The checksum list's tree (docs/formats/v3.md, 5): its shape is a function of the set of paths,
every leaf holds at most 64 files, every other node but the root more, each file sits in the
leaf its key names, and the lists' lines are the build's."""

from __future__ import annotations

import hashlib
import random

from generator.verifier import build_tree, inner_list, leaf_list, list_path, part_path, path_key, read_lists

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
