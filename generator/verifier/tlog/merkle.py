"""RFC 6962 / RFC 9162 Merkle trees (format v1 §4): leaf and node hashes, the root of a stream of
leaves, and the verification of inclusion and consistency proofs. Making proofs is the
generator's work (generator/core/proofs.py); checking them is this module's."""

import hashlib
from collections.abc import Iterable, Sequence

from generator.verifier.core.errors import ProofError, RootMismatchError

# RFC 6962 domain separation: a leaf can never be confused with an interior node.

_LEAF_HASH_PREFIX = b"\x00"
_NODE_HASH_PREFIX = b"\x01"


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(_LEAF_HASH_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(_NODE_HASH_PREFIX + left + right).digest()


EMPTY_ROOT = hashlib.sha256(b"").digest()


class MerkleStream:
    """The root of a growing tree in O(log n) memory: one hash per perfect subtree."""

    def __init__(self) -> None:
        self.size = 0
        self._stack: list[bytes] = []  # perfect subtrees, largest first

    def append(self, leaf: bytes) -> None:
        """Add a leaf hash (not the leaf's bytes)."""
        h = leaf
        n = self.size
        while n & 1:
            h = node_hash(self._stack.pop(), h)
            n >>= 1
        self._stack.append(h)
        self.size += 1

    def root(self) -> bytes:
        if not self._stack:
            return EMPTY_ROOT
        # RFC 6962 splits at the largest power of two below n, so the perfect subtrees of the
        # binary decomposition of n fold together from the right.
        h = self._stack[-1]
        for left in reversed(self._stack[:-1]):
            h = node_hash(left, h)
        return h


def merkle_root(leaf_hashes: Iterable[bytes]) -> bytes:
    stream = MerkleStream()
    for h in leaf_hashes:
        stream.append(h)
    return stream.root()


def _check_hashes(proof: Sequence[bytes], *others: bytes) -> None:
    for h in (*proof, *others):
        if not isinstance(h, bytes) or len(h) != 32:
            raise ProofError("every hash must be 32 bytes")


def root_from_inclusion_proof(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """RFC 9162 §2.1.3.2: the root that `proof` yields for the leaf hash at `index`."""
    if size <= 0 or not 0 <= index < size:
        raise ProofError(f"index {index} is outside a tree of size {size}")
    _check_hashes(proof, leaf)
    fn, sn = index, size - 1
    r = leaf
    for p in proof:
        if sn == 0:
            raise ProofError(f"proof has {len(proof)} hashes, more than a tree of size {size} needs")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"proof has {len(proof)} hashes, fewer than index {index} of size {size} needs")
    return r


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes) -> None:
    _check_hashes((), root)
    computed = root_from_inclusion_proof(index, size, leaf, proof)
    if computed != root:
        raise RootMismatchError(root, computed)


def verify_consistency(old_size: int, new_size: int, proof: Sequence[bytes], old_root: bytes, new_root: bytes) -> None:
    """RFC 9162 §2.1.4.2: raise ProofError unless `proof` shows old_root is a prefix of new_root."""
    _check_hashes(proof, old_root, new_root)
    if old_size < 0 or new_size < old_size:
        raise ProofError(f"sizes {old_size} → {new_size}: the new tree must not be smaller")
    if old_size == new_size:
        if proof:
            raise ProofError("a proof between equal sizes must be empty")
        if old_root != new_root:
            raise RootMismatchError(old_root, new_root)
        return
    if old_size == 0:
        if proof:
            raise ProofError("a proof from the empty tree must be empty")
        return
    if not proof:
        raise ProofError("empty consistency proof between different sizes")
    hashes = list(proof)
    if old_size & (old_size - 1) == 0:
        hashes.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = hashes[0]
    for c in hashes[1:]:
        if sn == 0:
            raise ProofError(f"proof has {len(proof)} hashes, more than {old_size} → {new_size} needs")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"proof has {len(proof)} hashes, fewer than {old_size} → {new_size} needs")
    if fr != old_root:
        raise RootMismatchError(old_root, fr)
    if sr != new_root:
        raise RootMismatchError(new_root, sr)
