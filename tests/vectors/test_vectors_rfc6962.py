"""RFC 6962 Merkle tree vectors from transparency-dev/merkle (tests/vectors/rfc6962_merkle.json).

Indexes in the vector file are 0-based (the upstream inclusion table is 1-based;
see the file's "source" field for the conversion).
"""

import hashlib
import importlib
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

VECTORS = json.loads((ROOT / "tests" / "vectors" / "rfc6962_merkle.json").read_text(encoding="utf-8"))
B = bytes.fromhex
LEAVES = [B(x) for x in VECTORS["leaves"]]
ROOTS = {r["size"]: B(r["root"]) for r in VECTORS["roots"]}
ROOTS[0] = B(VECTORS["empty_root"])
# Leaf hashes computed from the RFC 6962 definition, independent of the project
# code, and cross-checked against the upstream NodeHashes() level 0.
LEAF_HASHES = [hashlib.sha256(b"\x00" + d).digest() for d in LEAVES]


def _hx(bs):
    return [b.hex() for b in bs]


@pytest.fixture
def v(verifier):
    return verifier


@pytest.fixture(scope="module")
def proofs():
    return importlib.import_module("generator.core.proofs")


def test_vector_file_is_self_consistent():
    assert _hx(LEAF_HASHES) == VECTORS["subtree_hashes"][0]
    assert VECTORS["empty_root"] == hashlib.sha256(b"").hexdigest()
    assert sorted(ROOTS) == list(range(9))
    assert all(n["description"].startswith("derived") for n in VECTORS["negative"])


HASHER = VECTORS["hasher"]


@pytest.mark.parametrize("case", HASHER, ids=[c["description"] for c in HASHER])
def test_hasher(v, case):
    if case["kind"] == "leaf":
        assert v.leaf_hash(B(case["input"])) == B(case["hash"])
    elif case["kind"] == "node":
        assert v.node_hash(B(case["input"]["left"]), B(case["input"]["right"])) == B(case["hash"])
    else:
        assert case["kind"] == "empty_root"
        assert v.merkle_root([]) == B(case["hash"])


SUBTREES = [(lvl, i) for lvl, row in enumerate(VECTORS["subtree_hashes"]) for i in range(len(row))]


@pytest.mark.parametrize("lvl,i", SUBTREES, ids=[f"level{lv}-node{i}" for lv, i in SUBTREES])
def test_subtree_hashes(v, lvl, i):
    nh = VECTORS["subtree_hashes"]
    if lvl == 0:
        assert v.leaf_hash(LEAVES[i]) == B(nh[0][i])
    else:
        assert v.node_hash(B(nh[lvl - 1][2 * i]), B(nh[lvl - 1][2 * i + 1])) == B(nh[lvl][i])


@pytest.mark.parametrize("size", range(0, 9), ids=[f"size{n}" for n in range(0, 9)])
def test_roots(v, size):
    leaf_hashes = [v.leaf_hash(d) for d in LEAVES[:size]]
    assert leaf_hashes == LEAF_HASHES[:size]
    assert v.merkle_root(leaf_hashes) == ROOTS[size]


def _check_inclusion(v, proofs, e):
    i, n, proof = e["index"], e["size"], [B(p) for p in e["proof"]]
    assert _hx(proofs.inclusion_proof(LEAF_HASHES[:n], i)) == e["proof"]
    assert v.root_from_inclusion_proof(i, n, LEAF_HASHES[i], proof) == ROOTS[n]
    assert v.verify_inclusion(i, n, LEAF_HASHES[i], proof, ROOTS[n]) is None


def _check_consistency(v, proofs, e):
    m, n, proof = e["size1"], e["size2"], [B(p) for p in e["proof"]]
    assert _hx(proofs.consistency_proof(LEAF_HASHES[:n], m)) == e["proof"]
    assert v.verify_consistency(m, n, proof, ROOTS[m], ROOTS[n]) is None


INCL = VECTORS["inclusion"]
CONS = VECTORS["consistency"]
INCL_ALL = VECTORS["derived_inclusion_all"]
CONS_ALL = VECTORS["derived_consistency_all"]


@pytest.mark.parametrize("e", INCL, ids=[f"upstream-index{e['index']}-size{e['size']}" for e in INCL])
def test_inclusion_upstream(v, proofs, e):
    _check_inclusion(v, proofs, e)


@pytest.mark.parametrize("e", INCL_ALL, ids=[f"derived-index{e['index']}-size{e['size']}" for e in INCL_ALL])
def test_inclusion_derived_all(v, proofs, e):
    _check_inclusion(v, proofs, e)


@pytest.mark.parametrize("e", CONS, ids=[f"upstream-{e['size1']}-to-{e['size2']}" for e in CONS])
def test_consistency_upstream(v, proofs, e):
    _check_consistency(v, proofs, e)


@pytest.mark.parametrize("e", CONS_ALL, ids=[f"derived-{e['size1']}-to-{e['size2']}" for e in CONS_ALL])
def test_consistency_derived_all(v, proofs, e):
    _check_consistency(v, proofs, e)


NEG = VECTORS["negative"]


@pytest.mark.parametrize("n", NEG, ids=[n["description"] for n in NEG])
def test_negative_rejected(v, n):
    """Each negative vector fails with its own error, not merely some ProofError."""
    proof = [B(p) for p in n["proof"]]
    with pytest.raises(v.ProofError) as e:
        if n["type"] == "inclusion":
            v.verify_inclusion(n["index"], n["size"], B(n["leaf_hash"]), proof, B(n["root"]))
        else:
            assert n["type"] == "consistency"
            v.verify_consistency(n["size1"], n["size2"], proof, B(n["root1"]), B(n["root2"]))
    assert f"{type(e.value).__name__}: {e.value}" == n["error"]
