"""Each way a Merkle proof can be wrong fails verify_inclusion / verify_consistency with its own
error: the exception class and what its message says, not merely "some ProofError".

Proofs are made by generator/core/proofs.py over the RFC 6962 vector leaves (tests/vectors/
rfc6962_merkle.json) and checked valid before each is damaged. Like the vector tests, every
case runs on the package (the `verifier` fixture), which the bundled verify.py joins.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from generator.core.proofs import consistency_proof, inclusion_proof
from tests.support.demo import REPO

VECTORS = json.loads((REPO / "tests" / "vectors" / "rfc6962_merkle.json").read_text(encoding="utf-8"))
LEAF_HASHES = [hashlib.sha256(b"\x00" + bytes.fromhex(x)).digest() for x in VECTORS["leaves"]]
ROOTS = {r["size"]: bytes.fromhex(r["root"]) for r in VECTORS["roots"]} | {0: hashlib.sha256(b"").digest()}
OTHER = hashlib.sha256(b"some other hash").digest()


@pytest.fixture
def v(verifier):
    return verifier


def incl(index: int, size: int) -> tuple[bytes, list[bytes], bytes]:
    """Leaf hash, proof and root of a valid inclusion proof."""
    return LEAF_HASHES[index], inclusion_proof(LEAF_HASHES[:size], index), ROOTS[size]


def cons(m: int, n: int) -> tuple[list[bytes], bytes, bytes]:
    """Proof, old root and new root of a valid consistency proof."""
    return consistency_proof(LEAF_HASHES[:n], m), ROOTS[m], ROOTS[n]


def inclusion_error(v, index: int, size: int, leaf, proof, root) -> Exception:
    with pytest.raises(v.ProofError) as e:
        v.verify_inclusion(index, size, leaf, proof, root)
    return e.value


def consistency_error(v, m: int, n: int, proof, old, new) -> Exception:
    with pytest.raises(v.ProofError) as e:
        v.verify_consistency(m, n, proof, old, new)
    return e.value


def said(e: Exception) -> str:
    return f"{type(e).__name__}: {e}"


# --- sizes and indexes -------------------------------------------------------------------------


@pytest.mark.parametrize("index,size", [(8, 8), (9, 8), (1, 1), (2**64, 8)])
def test_inclusion_index_at_or_past_the_size(v, index: int, size: int) -> None:
    leaf, proof, root = incl(0, size)
    e = inclusion_error(v, index, size, leaf, proof, root)
    assert said(e) == f"ProofError: index {index} is outside a tree of size {size}"


@pytest.mark.parametrize("index", [-1, -8, -(2**64)])
def test_inclusion_negative_index(v, index: int) -> None:
    leaf, proof, root = incl(0, 8)
    assert (
        said(inclusion_error(v, index, 8, leaf, proof, root))
        == f"ProofError: index {index} is outside a tree of size 8"
    )


@pytest.mark.parametrize("size", [0, -1])
def test_inclusion_in_a_tree_without_leaves(v, size: int) -> None:
    e = inclusion_error(v, 0, size, LEAF_HASHES[0], [], ROOTS[0])
    assert said(e) == f"ProofError: index 0 is outside a tree of size {size}"


def test_consistency_from_the_empty_tree_with_a_proof(v) -> None:
    proof, _, new = cons(3, 8)
    e = consistency_error(v, 0, 8, proof, ROOTS[0], new)
    assert said(e) == "ProofError: a proof from the empty tree must be empty"


@pytest.mark.parametrize("size", [0, 1, 5, 8])
def test_consistency_between_equal_sizes_with_a_proof(v, size: int) -> None:
    e = consistency_error(v, size, size, [LEAF_HASHES[0]], ROOTS[size], ROOTS[size])
    assert said(e) == "ProofError: a proof between equal sizes must be empty"


@pytest.mark.parametrize("size", [0, 1, 5, 8])
def test_consistency_between_equal_sizes_with_different_roots(v, size: int) -> None:
    e = consistency_error(v, size, size, [], ROOTS[size], OTHER)
    assert type(e) is v.RootMismatchError and (e.expected, e.computed) == (ROOTS[size], OTHER)
    assert str(e) == f"computed root {OTHER.hex()} does not match expected root {ROOTS[size].hex()}"


def test_consistency_between_equal_sizes_with_a_proof_and_different_roots(v) -> None:
    """The proof's shape is refused before the roots are compared."""
    e = consistency_error(v, 4, 4, [OTHER], ROOTS[4], OTHER)
    assert said(e) == "ProofError: a proof between equal sizes must be empty"


@pytest.mark.parametrize("m,n", [(8, 7), (2, 1), (1, 0), (8, 0)])
def test_consistency_to_a_smaller_tree(v, m: int, n: int) -> None:
    e = consistency_error(v, m, n, [OTHER], ROOTS[m], ROOTS[n])
    assert said(e) == f"ProofError: sizes {m} → {n}: the new tree must not be smaller"


def test_consistency_from_a_negative_size(v) -> None:
    e = consistency_error(v, -1, 8, [], ROOTS[0], ROOTS[8])
    assert said(e).startswith("ProofError: sizes -1 → 8")


def test_consistency_empty_proof_between_different_sizes(v) -> None:
    e = consistency_error(v, 3, 8, [], ROOTS[3], ROOTS[8])
    assert said(e) == "ProofError: empty consistency proof between different sizes"


# --- hashes of the wrong length ----------------------------------------------------------------

BAD_HASHES = [OTHER[:31], OTHER + b"\x00", b"", OTHER.hex().encode()]
BAD_IDS = ["31-bytes", "33-bytes", "empty", "64-bytes-hex"]


@pytest.mark.parametrize("bad", BAD_HASHES, ids=BAD_IDS)
@pytest.mark.parametrize("where", ["proof-first", "proof-last", "leaf", "root"])
def test_inclusion_hash_of_the_wrong_length(v, bad: bytes, where: str) -> None:
    leaf, proof, root = incl(5, 7)
    if where == "proof-first":
        proof[0] = bad
    elif where == "proof-last":
        proof[-1] = bad
    elif where == "leaf":
        leaf = bad
    else:
        root = bad
    assert said(inclusion_error(v, 5, 7, leaf, proof, root)) == "ProofError: every hash must be 32 bytes"


@pytest.mark.parametrize("bad", BAD_HASHES, ids=BAD_IDS)
@pytest.mark.parametrize("where", ["proof-first", "proof-last", "old-root", "new-root"])
def test_consistency_hash_of_the_wrong_length(v, bad: bytes, where: str) -> None:
    proof, old, new = cons(3, 7)
    if where == "proof-first":
        proof[0] = bad
    elif where == "proof-last":
        proof[-1] = bad
    elif where == "old-root":
        old = bad
    else:
        new = bad
    assert said(consistency_error(v, 3, 7, proof, old, new)) == "ProofError: every hash must be 32 bytes"


def test_a_hash_that_is_not_bytes(v) -> None:
    leaf, proof, root = incl(2, 5)
    for args in [(leaf, [proof[0].hex(), *proof[1:]], root), (bytearray(leaf), proof, root), (leaf, proof, None)]:
        assert said(inclusion_error(v, 2, 5, *args)) == "ProofError: every hash must be 32 bytes"


# --- proofs of the wrong length ----------------------------------------------------------------

INCLUSIONS = [(i, n) for n in range(1, 9) for i in range(n)]
CONSISTENCIES = [(m, n) for n in range(2, 9) for m in range(1, n)]


@pytest.mark.parametrize("index,size", INCLUSIONS, ids=[f"{i}-of-{n}" for i, n in INCLUSIONS])
def test_inclusion_proof_one_hash_too_long_or_too_short(v, index: int, size: int) -> None:
    leaf, proof, root = incl(index, size)
    v.verify_inclusion(index, size, leaf, proof, root)
    k = len(proof)
    for longer in ([*proof, OTHER], [OTHER, *proof], [*proof, proof[-1] if proof else leaf]):
        e = inclusion_error(v, index, size, leaf, longer, root)
        assert said(e) == f"ProofError: proof has {k + 1} hashes, more than a tree of size {size} needs"
    for shorter in [proof[:-1], proof[1:]] if proof else []:
        e = inclusion_error(v, index, size, leaf, shorter, root)
        assert said(e) == f"ProofError: proof has {k - 1} hashes, fewer than index {index} of size {size} needs"


@pytest.mark.parametrize("m,n", CONSISTENCIES, ids=[f"{m}-to-{n}" for m, n in CONSISTENCIES])
def test_consistency_proof_one_hash_too_long_or_too_short(v, m: int, n: int) -> None:
    proof, old, new = cons(m, n)
    v.verify_consistency(m, n, proof, old, new)
    k = len(proof)
    for longer in ([*proof, OTHER], [OTHER, *proof], [*proof, proof[-1]]):
        assert said(consistency_error(v, m, n, longer, old, new)) == (
            f"ProofError: proof has {k + 1} hashes, more than {m} → {n} needs"
        )
    for shorter in (proof[:-1], proof[1:]):
        assert said(consistency_error(v, m, n, shorter, old, new)) == (
            f"ProofError: proof has {k - 1} hashes, fewer than {m} → {n} needs"
            if shorter
            else "ProofError: empty consistency proof between different sizes"
        )


# --- one flipped bit anywhere ------------------------------------------------------------------


def flips(h: bytes):
    """`h` with each one of its bits flipped in turn."""
    for bit in range(8 * len(h)):
        yield h[: bit // 8] + bytes([h[bit // 8] ^ (0x80 >> bit % 8)]) + h[bit // 8 + 1 :]


FLIP_INCLUSIONS = [(0, 8), (5, 7), (6, 7), (3, 4), (4, 5), (0, 2)]
FLIP_CONSISTENCIES = [(1, 8), (3, 7), (4, 8), (6, 8), (5, 6), (2, 3)]


@pytest.mark.parametrize("index,size", FLIP_INCLUSIONS, ids=[f"{i}-of-{n}" for i, n in FLIP_INCLUSIONS])
def test_inclusion_any_flipped_bit_is_a_root_mismatch(v, index: int, size: int) -> None:
    leaf, proof, root = incl(index, size)
    v.verify_inclusion(index, size, leaf, proof, root)
    cases = [(f, proof, root, "leaf") for f in flips(leaf)]
    cases += [
        (leaf, [*proof[:j], f, *proof[j + 1 :]], root, f"proof[{j}]")
        for j in range(len(proof))
        for f in flips(proof[j])
    ]
    cases += [(leaf, proof, f, "root") for f in flips(root)]
    assert len(cases) == 256 * (len(proof) + 2)
    for leaf2, proof2, root2, where in cases:
        e = inclusion_error(v, index, size, leaf2, proof2, root2)
        assert type(e) is v.RootMismatchError, (where, said(e))
        assert e.expected == root2 and e.computed != root2, where


@pytest.mark.parametrize("m,n", FLIP_CONSISTENCIES, ids=[f"{m}-to-{n}" for m, n in FLIP_CONSISTENCIES])
def test_consistency_any_flipped_bit_is_a_root_mismatch(v, m: int, n: int) -> None:
    proof, old, new = cons(m, n)
    v.verify_consistency(m, n, proof, old, new)
    cases = [
        ([*proof[:j], f, *proof[j + 1 :]], old, new, f"proof[{j}]") for j in range(len(proof)) for f in flips(proof[j])
    ]
    cases += [(proof, f, new, "old root") for f in flips(old)]
    cases += [(proof, old, f, "new root") for f in flips(new)]
    assert len(cases) == 256 * (len(proof) + 2)
    for proof2, old2, new2, where in cases:
        e = consistency_error(v, m, n, proof2, old2, new2)
        assert type(e) is v.RootMismatchError, (where, said(e))
        assert e.expected in (old2, new2) and e.computed != e.expected, where
