"""Making RFC 9162 proofs (§2.1.3 inclusion, §2.1.4 consistency) from a log's leaf hashes.

The verifier only checks proofs (generator.verifier.merkle); the generator makes them here,
and every proof it publishes is checked by the verifier's code before the site is swapped in.
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.verifier import ProofError, node_hash


def largest_power_of_two_below(n: int) -> int:
    """RFC 6962 splits a tree of n leaves at this size."""
    return 1 << ((n - 1).bit_length() - 1)


def subtree_root(hashes: Sequence[bytes], lo: int, hi: int) -> bytes:
    """MTH(D[lo:hi]) of RFC 6962 §2.1."""
    if hi - lo == 1:
        return hashes[lo]
    k = largest_power_of_two_below(hi - lo)
    return node_hash(subtree_root(hashes, lo, lo + k), subtree_root(hashes, lo + k, hi))


def inclusion_proof(leaf_hashes: Sequence[bytes], index: int) -> list[bytes]:
    """RFC 9162 §2.1.3.1 PATH(index, D[n]), leaf to root."""
    n = len(leaf_hashes)
    if not 0 <= index < n:
        raise ProofError(f"index {index} is outside a tree of size {n}")
    proof: list[bytes] = []
    lo, hi = 0, n
    while hi - lo > 1:
        k = largest_power_of_two_below(hi - lo)
        if index < lo + k:
            proof.append(subtree_root(leaf_hashes, lo + k, hi))
            hi = lo + k
        else:
            proof.append(subtree_root(leaf_hashes, lo, lo + k))
            lo = lo + k
    proof.reverse()
    return proof


def consistency_proof(leaf_hashes: Sequence[bytes], old_size: int) -> list[bytes]:
    """RFC 9162 §2.1.4.1 PROOF(m, D[n]) from the tree of the first `old_size` leaves."""
    n = len(leaf_hashes)
    if not 0 <= old_size <= n:
        raise ProofError(f"old size {old_size} is outside 0..{n}")
    if old_size in (0, n):
        return []
    proof: list[bytes] = []
    lo, hi, m, complete = 0, n, old_size, True
    while True:
        if m == hi - lo:
            if not complete:
                proof.append(subtree_root(leaf_hashes, lo, hi))
            break
        k = largest_power_of_two_below(hi - lo)
        if m <= k:
            proof.append(subtree_root(leaf_hashes, lo + k, hi))
            hi = lo + k
        else:
            proof.append(subtree_root(leaf_hashes, lo, lo + k))
            lo, m, complete = lo + k, m - k, False
    proof.reverse()
    return proof
