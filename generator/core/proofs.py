"""Making RFC 9162 proofs (§2.1.3 inclusion, §2.1.4 consistency) from a log's leaf hashes.

The verifier only checks proofs (generator.verifier.tlog.merkle); the generator makes them here,
and every proof it publishes is checked by the verifier's code before the site is swapped in.

A build proves tens of thousands of artifacts against a million-leaf log, so MerkleTree keeps
every complete aligned subtree's hash (level k holds the roots of the 2^k-leaf subtrees, one
bytearray a level, about 64 bytes a leaf in all): any MTH(D[lo:hi]) then costs O(log n) hash
lookups and a proof O(log² n), never a pass over the leaves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from generator.verifier import ProofError, is_valid_subtree, node_hash

_EMPTY_ROOT = bytes.fromhex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")


def largest_power_of_two_below(n: int) -> int:
    """RFC 6962 splits a tree of n leaves at this size."""
    return 1 << ((n - 1).bit_length() - 1)


class MerkleTree:
    """An append-only RFC 6962 tree that answers roots and proofs for any prefix of itself."""

    def __init__(self, leaf_hashes: Iterable[bytes] = ()) -> None:
        self._levels: list[bytearray] = [bytearray()]
        self.size = 0
        for h in leaf_hashes:
            self.append(h)

    def append(self, leaf_hash: bytes) -> None:
        if len(leaf_hash) != 32:
            raise ProofError("a leaf hash must be 32 bytes")
        self._levels[0] += leaf_hash
        self.size += 1
        # Each new leaf completes one aligned subtree per trailing one bit of its position.
        level, n = 0, self.size
        while n % 2 == 0:
            row = self._levels[level]
            combined = node_hash(bytes(row[-64:-32]), bytes(row[-32:]))
            level += 1
            if level == len(self._levels):
                self._levels.append(bytearray())
            self._levels[level] += combined
            n //= 2

    def leaf_hashes(self, lo: int, hi: int) -> bytes:
        """The hashes of leaves lo..hi, end to end: what binds those leaves' bytes."""
        return bytes(self._levels[0][32 * lo : 32 * hi])

    def _complete(self, level: int, index: int) -> bytes:
        return bytes(self._levels[level][32 * index : 32 * index + 32])

    def subtree_root(self, lo: int, hi: int) -> bytes:
        """MTH(D[lo:hi]) of RFC 6962 §2.1, for lo aligned as RFC 9162's recursion leaves it."""
        if not 0 <= lo < hi <= self.size:
            raise ProofError(f"range {lo}..{hi} is outside a tree of size {self.size}")
        n = hi - lo
        if n & (n - 1) == 0 and lo % n == 0:
            return self._complete(n.bit_length() - 1, lo // n)
        k = largest_power_of_two_below(n)
        return node_hash(self.subtree_root(lo, lo + k), self.subtree_root(lo + k, hi))

    def root(self, size: int | None = None) -> bytes:
        size = self.size if size is None else size
        if not 0 <= size <= self.size:
            raise ProofError(f"size {size} is outside 0..{self.size}")
        return _EMPTY_ROOT if size == 0 else self.subtree_root(0, size)

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        """RFC 9162 §2.1.3.1 PATH(index, D[size]), leaf to root."""
        n = self.size if size is None else size
        if not 0 < n <= self.size or not 0 <= index < n:
            raise ProofError(f"index {index} is outside a tree of size {n}")
        proof: list[bytes] = []
        lo, hi = 0, n
        while hi - lo > 1:
            k = largest_power_of_two_below(hi - lo)
            if index < lo + k:
                proof.append(self.subtree_root(lo + k, hi))
                hi = lo + k
            else:
                proof.append(self.subtree_root(lo, lo + k))
                lo = lo + k
        proof.reverse()
        return proof

    def consistency_proof(self, old_size: int, new_size: int | None = None) -> list[bytes]:
        """RFC 9162 §2.1.4.1 PROOF(old_size, D[new_size])."""
        n = self.size if new_size is None else new_size
        if not 0 <= old_size <= n <= self.size:
            raise ProofError(f"sizes {old_size} → {n} are outside 0..{self.size} or decrease")
        if old_size in (0, n):
            return []
        proof: list[bytes] = []
        lo, hi, m, complete = 0, n, old_size, True
        while True:
            if m == hi - lo:
                if not complete:
                    proof.append(self.subtree_root(lo, hi))
                break
            k = largest_power_of_two_below(hi - lo)
            if m <= k:
                proof.append(self.subtree_root(lo + k, hi))
                hi = lo + k
            else:
                proof.append(self.subtree_root(lo, lo + k))
                lo, m, complete = lo + k, m - k, False
        proof.reverse()
        return proof


def subtree_root(hashes: Sequence[bytes], lo: int, hi: int) -> bytes:
    """MTH(D[lo:hi]) of RFC 6962 §2.1, straight from the definition (for tests and small logs)."""
    if hi - lo == 1:
        return hashes[lo]
    k = largest_power_of_two_below(hi - lo)
    return node_hash(subtree_root(hashes, lo, lo + k), subtree_root(hashes, lo + k, hi))


def inclusion_proof(leaf_hashes: Sequence[bytes], index: int) -> list[bytes]:
    """RFC 9162 §2.1.3.1 PATH(index, D[n]) of a whole list of leaf hashes."""
    if not 0 <= index < len(leaf_hashes):
        raise ProofError(f"index {index} is outside a tree of size {len(leaf_hashes)}")
    return MerkleTree(leaf_hashes).inclusion_proof(index)


def consistency_proof(leaf_hashes: Sequence[bytes], old_size: int) -> list[bytes]:
    """RFC 9162 §2.1.4.1 PROOF(m, D[n]) from the tree of the first `old_size` leaves."""
    if not 0 <= old_size <= len(leaf_hashes):
        raise ProofError(f"old size {old_size} is outside 0..{len(leaf_hashes)}")
    return MerkleTree(leaf_hashes).consistency_proof(old_size)


def subtree_consistency_proof(tree: MerkleTree, start: int, end: int, size: int | None = None) -> list[bytes]:
    """SUBTREE_PROOF(start, end, D[size]) of draft-ietf-plants-merkle-tree-certs ("Generating a
    Subtree Consistency Proof"): the hashes that show the subtree [start, end) is part of the tree
    of `size` leaves (default: the whole tree), checked by verify_subtree_consistency."""
    n = tree.size if size is None else size
    if not is_valid_subtree(start, end):
        raise ProofError(f"[{start}, {end}) is not a subtree: its start must be aligned to its size's power of two")
    if not end <= n <= tree.size:
        raise ProofError(f"the subtree [{start}, {end}) of a tree of size {n} is outside 0..{tree.size}")
    if start == end:
        return []
    proof: list[bytes] = []
    # The descent of SUBTREE_SUBPROOF: [lo, hi) is the node reached, [s, e) the subtree within it,
    # `known` whether the verifier already holds this node's subtree hash (omitted from the proof).
    lo, hi, s, e, known = 0, n, start, end, True
    while not (s == 0 and e == hi - lo):
        k = largest_power_of_two_below(hi - lo)
        if e <= k:
            proof.append(tree.subtree_root(lo + k, hi))
            hi = lo + k
        elif k <= s:
            proof.append(tree.subtree_root(lo, lo + k))
            lo, s, e = lo + k, s - k, e - k
        else:  # s == 0 < k < e: the subtree's own root is not a node of this tree
            proof.append(tree.subtree_root(lo, lo + k))
            lo, e, known = lo + k, e - k, False
    if not known:
        proof.append(tree.subtree_root(lo, hi))
    proof.reverse()
    return proof
