"""Subtrees of a Merkle tree and their consistency proofs (draft-ietf-plants-merkle-tree-certs,
"Subtrees": the definition of a subtree and "Verifying a Subtree Consistency Proof"), as a
C2SP tlog-witness `sign-subtree` request carries them.

A subtree [start, end) of a tree of n leaves is MTH(D[start:end]), for 0 <= start <= end <= n
and start a multiple of BIT_CEIL(end - start): aligned so that a short proof shows its leaves
are those of the whole tree. A subtree starting at 0 is a prefix of the tree, and its proof is
RFC 9162's consistency proof; a subtree of one leaf has an inclusion proof for its proof.

The draft's current text makes the empty subtree [x, x) valid (its hash is the empty tree's,
its proof empty); revision 03, which tlog-witness cites, did not. Both are checked here as the
current text says; a caller that wants revision 03's reading refuses start == end itself.
Making these proofs is the generator's work (generator/core/proofs.py).
"""

from collections.abc import Sequence

from generator.verifier.core.errors import ProofError, RootMismatchError
from generator.verifier.tlog.merkle import EMPTY_ROOT, node_hash


def _is_size(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_valid_subtree(start: int, end: int) -> bool:
    """Whether [start, end) is a subtree: 0 <= start <= end, and start is a multiple of the
    smallest power of two at least end - start (1 for the empty subtree)."""
    if not _is_size(start) or not _is_size(end) or start > end:
        return False
    size = end - start
    bit_ceil = 1 << (size - 1).bit_length() if size > 1 else 1
    return start % bit_ceil == 0


def _check_subtree_hashes(proof: Sequence[bytes], *others: bytes) -> None:
    for h in (*proof, *others):
        if not isinstance(h, bytes) or len(h) != 32:
            raise ProofError("every hash must be 32 bytes")


def verify_subtree_consistency(
    start: int, end: int, subtree_hash: bytes, size: int, root: bytes, proof: Sequence[bytes]
) -> None:
    """Raise ProofError unless `proof` shows that the subtree [start, end) with hash `subtree_hash`
    holds leaves start..end-1 of the tree of `size` leaves with root hash `root` (RootMismatchError
    when the proof recomputes another subtree hash or root)."""
    _check_subtree_hashes(proof, subtree_hash, root)
    if not is_valid_subtree(start, end):
        raise ProofError(f"[{start}, {end}) is not a subtree: its start must be aligned to its size's power of two")
    if not _is_size(size) or end > size:
        raise ProofError(f"the subtree [{start}, {end}) ends beyond the tree's size {size}")
    if start == end:
        if proof:
            raise ProofError("the proof of an empty subtree must be empty")
        if subtree_hash != EMPTY_ROOT:
            raise RootMismatchError(EMPTY_ROOT, subtree_hash)
        return
    fn, sn, tn = start, end - 1, size - 1
    # Climb to the lowest node the subtree and the tree share: the subtree's own root when it is
    # full or ends the tree, else the root of its first full left part, which the proof opens with.
    if sn == tn:
        while fn != sn:
            fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
    else:
        while fn != sn and sn & 1:
            fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
    hashes = list(proof)
    if fn == sn:
        fr = sr = subtree_hash
    elif not hashes:
        raise ProofError(f"the proof of [{start}, {end}) in a tree of size {size} cannot be empty")
    else:
        fr = sr = hashes.pop(0)
    for c in hashes:
        if tn == 0:
            raise ProofError(f"the proof has {len(proof)} hashes, more than [{start}, {end}) in {size} needs")
        if sn & 1 or sn == tn:
            if fn < sn:
                fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not sn & 1:  # sn > 0 here: sn == tn == 0 was refused above
                fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
    if tn != 0:
        raise ProofError(f"the proof has {len(proof)} hashes, fewer than [{start}, {end}) in {size} needs")
    if fr != subtree_hash:
        raise RootMismatchError(subtree_hash, fr)
    if sr != root:
        raise RootMismatchError(root, sr)
