"""Subtrees and subtree consistency proofs (generator/verifier/tlog/subtrees.py, checking; the
maker in generator/core/proofs.py): the draft's accumulated test vectors (draft-ietf-plants-
merkle-tree-certs, "Subtree Test Vectors", trees up to 130 leaves), its worked examples, every
valid subtree of every tree of 1..40 leaves made and verified, and every way a proof is wrong
refused with the error that says why."""

from __future__ import annotations

import functools
import hashlib

import pytest

from generator.core.proofs import MerkleTree, subtree_consistency_proof
from generator.verifier import EMPTY_ROOT, ProofError, RootMismatchError, leaf_hash
from generator.verifier.tlog.merkle import verify_consistency, verify_inclusion
from generator.verifier.tlog.subtrees import is_valid_subtree, verify_subtree_consistency

# The draft's trees: leaf d[i] is the single byte i.
VECTOR_SIZE = 130
SUBTREE_HASHES_VECTOR = "b82806ad4265bb151c1119c0f4db437bb4d1a1f887b3a7fba1cd4ebf552e3e81"
CONSISTENCY_PROOFS_VECTOR = "10fa99b37bf9bf9ffa26b412fbd98bd75363256d0b75d61bc4538b9c9c5a0a74"


@functools.cache
def tree() -> MerkleTree:
    return MerkleTree(leaf_hash(bytes([i])) for i in range(VECTOR_SIZE))


def subtree_hash(start: int, end: int) -> bytes:
    return EMPTY_ROOT if start == end else tree().subtree_root(start, end)


def valid_subtrees(n: int) -> list[tuple[int, int]]:
    return [(start, end) for end in range(n + 1) for start in range(end + 1) if is_valid_subtree(start, end)]


# ---------------------------------------------------------------- the draft's vectors and examples


def test_the_accumulated_subtree_hashes_vector():
    h = hashlib.sha256()
    for start, end in valid_subtrees(VECTOR_SIZE):
        h.update(f"[{start}, {end}) {subtree_hash(start, end).hex()}\n".encode())
    assert h.hexdigest() == SUBTREE_HASHES_VECTOR


def test_the_accumulated_subtree_consistency_proofs_vector():
    h = hashlib.sha256()
    for n in range(VECTOR_SIZE + 1):
        for start, end in valid_subtrees(n):
            proof = subtree_consistency_proof(tree(), start, end, n)
            h.update((f"[{start}, {end}) {n}" + "".join(f" {p.hex()}" for p in proof) + "\n").encode())
    assert h.hexdigest() == CONSISTENCY_PROOFS_VECTOR


def test_the_draft_s_worked_examples():
    t = tree()
    # [4, 8) in a tree of 14: MTH(D[0:4]) and MTH(D[8:14]).
    assert subtree_consistency_proof(t, 4, 8, 14) == [t.subtree_root(0, 4), t.subtree_root(8, 14)]
    # [8, 13) in a tree of 14: d[12], d[13], MTH(D[8:12]), MTH(D[0:8]).
    assert subtree_consistency_proof(t, 8, 13, 14) == [
        t.subtree_root(12, 13),
        t.subtree_root(13, 14),
        t.subtree_root(8, 12),
        t.subtree_root(0, 8),
    ]
    # [0, end) is RFC 9162's consistency proof; [i, i+1) an inclusion proof.
    for n in range(1, 41):
        for end in range(1, n + 1):
            assert subtree_consistency_proof(t, 0, end, n) == t.consistency_proof(end, n)
            assert subtree_consistency_proof(t, end - 1, end, n) == t.inclusion_proof(end - 1, n)


@pytest.mark.parametrize(
    ("start", "end", "valid"),
    [
        (0, 0, True),
        (5, 5, True),
        (0, 13, True),
        (8, 13, True),
        (4, 8, True),
        (12, 13, True),
        (4, 9, False),  # 5 leaves need an 8-aligned start
        (6, 10, False),
        (2, 5, False),
        (1, 3, False),
        (3, 2, False),
        (-1, 0, False),
        (0, 2**63 + 1, True),  # the overflow the draft warns of: Python's ints have none
        (2**63, 2**64, True),
        (1, 2**63 + 1, False),
        (True, 2, False),
    ],
)
def test_is_valid_subtree(start, end, valid):
    assert is_valid_subtree(start, end) is valid


# ---------------------------------------------------------------- every subtree of every small tree


def test_every_valid_subtree_of_every_tree_up_to_40_verifies():
    t = tree()
    checked = 0
    for n in range(1, 41):
        root = t.root(n)
        for start, end in valid_subtrees(n):
            proof = subtree_consistency_proof(t, start, end, n)
            assert len(proof) <= 63
            verify_subtree_consistency(start, end, subtree_hash(start, end), n, root, proof)
            checked += 1
    assert checked > 1000


def test_a_prefix_subtree_is_an_rfc_9162_consistency_and_a_leaf_an_inclusion():
    """The two special cases read by the older checkers agree with the subtree checker."""
    t = tree()
    for n in range(1, 41):
        for end in range(1, n + 1):
            proof = subtree_consistency_proof(t, 0, end, n)
            verify_consistency(end, n, proof, t.root(end), t.root(n))
            proof = subtree_consistency_proof(t, end - 1, end, n)
            verify_inclusion(end - 1, n, t.subtree_root(end - 1, end), proof, t.root(n))


def test_every_tampered_proof_of_every_tree_up_to_40_is_refused():
    t = tree()
    for n in range(1, 41):
        root = t.root(n)
        for start, end in valid_subtrees(n):
            if start == end:
                continue
            good = subtree_hash(start, end)
            proof = subtree_consistency_proof(t, start, end, n)
            for i in range(len(proof)):
                bad = list(proof)
                bad[i] = bytes(32)
                with pytest.raises(ProofError):
                    verify_subtree_consistency(start, end, good, n, root, bad)
            with pytest.raises(ProofError):
                verify_subtree_consistency(start, end, good, n, root, [*proof, bytes(32)])
            if proof:
                with pytest.raises(ProofError):
                    verify_subtree_consistency(start, end, good, n, root, proof[:-1])
            with pytest.raises(RootMismatchError):
                verify_subtree_consistency(start, end, bytes(32), n, root, proof)
            with pytest.raises(RootMismatchError):
                verify_subtree_consistency(start, end, good, n, bytes(32), proof)


# ---------------------------------------------------------------- refusals and their messages


def test_a_wrong_subtree_hash_names_both_hashes():
    t = tree()
    proof = subtree_consistency_proof(t, 8, 13, 14)
    with pytest.raises(RootMismatchError) as e:
        verify_subtree_consistency(8, 13, t.subtree_root(8, 12), 14, t.root(14), proof)
    assert e.value.expected == t.subtree_root(8, 12)
    assert e.value.computed == t.subtree_root(8, 13)


def test_the_proof_of_another_subtree_or_tree_is_refused():
    t = tree()
    proof = subtree_consistency_proof(t, 8, 12, 14)
    with pytest.raises(ProofError):
        verify_subtree_consistency(8, 12, t.subtree_root(8, 12), 13, t.root(13), proof)
    with pytest.raises(ProofError):
        verify_subtree_consistency(8, 13, t.subtree_root(8, 13), 14, t.root(14), proof)


@pytest.mark.parametrize(
    ("start", "end", "size", "message"),
    [
        (4, 9, 14, r"\[4, 9\) is not a subtree"),
        (3, 2, 14, r"\[3, 2\) is not a subtree"),
        (8, 16, 14, r"ends beyond the tree's size 14"),
        (0, 1, -1, r"ends beyond the tree's size -1"),
    ],
)
def test_an_invalid_subtree_is_refused_before_any_hashing(start, end, size, message):
    with pytest.raises(ProofError, match=message):
        verify_subtree_consistency(start, end, bytes(32), size, bytes(32), [])


def test_hashes_of_the_wrong_length_are_refused():
    with pytest.raises(ProofError, match="32 bytes"):
        verify_subtree_consistency(0, 1, bytes(31), 1, bytes(32), [])
    with pytest.raises(ProofError, match="32 bytes"):
        verify_subtree_consistency(0, 1, bytes(32), 2, bytes(32), [bytes(33)])


def test_the_empty_subtree():
    verify_subtree_consistency(3, 3, EMPTY_ROOT, 5, tree().root(5), [])
    with pytest.raises(RootMismatchError):
        verify_subtree_consistency(3, 3, bytes(32), 5, tree().root(5), [])
    with pytest.raises(ProofError, match="must be empty"):
        verify_subtree_consistency(3, 3, EMPTY_ROOT, 5, tree().root(5), [bytes(32)])


def test_an_empty_proof_where_one_is_needed_says_so():
    with pytest.raises(ProofError, match="cannot be empty"):
        verify_subtree_consistency(8, 13, tree().subtree_root(8, 13), 14, tree().root(14), [])


def test_the_maker_refuses_what_is_not_a_subtree_of_its_tree():
    t = MerkleTree(leaf_hash(bytes([i])) for i in range(10))
    with pytest.raises(ProofError, match="not a subtree"):
        subtree_consistency_proof(t, 4, 9)
    with pytest.raises(ProofError, match=r"outside 0\.\.10"):
        subtree_consistency_proof(t, 8, 10, 11)
    with pytest.raises(ProofError, match=r"outside 0\.\.10"):
        subtree_consistency_proof(t, 8, 10, 9)
