"""The spec-only witness client (tests/support/spec_witness_client.py) against published vectors, before
it is trusted to judge the project's witness: RFC 6962 roots and consistency proofs (transparency-dev/
merkle's tables), draft-ietf-plants-merkle-tree-certs' accumulated subtree vectors and worked examples,
Go's sumdb/note notes, the request bodies and signed message printed in the C2SP specs; and every
way a proof, a note or a cosignature is wrong refused, so that its acceptances mean something."""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey
from nacl.signing import SigningKey

from tests.support import spec_witness_client as c
from tests.support.demo import REPO

VECTORS = REPO / "tests" / "vectors"
RFC6962 = json.loads((VECTORS / "rfc6962_merkle.json").read_text(encoding="utf-8"))
NOTES = json.loads((VECTORS / "signed_note.json").read_text(encoding="utf-8"))

# draft-ietf-plants-merkle-tree-certs, "Subtree Test Vectors" (ietf-plants-wg/merkle-tree-certs at
# d7362d6c441463b4e9c7064fa8bb48ee65929585): trees of leaves d[i] = the byte i, up to 130 leaves.
# That version also counts the empty subtrees [x, x) (hash SHA-256(), empty proof), which -03 had not.
SUBTREE_HASHES_VECTOR = "b82806ad4265bb151c1119c0f4db437bb4d1a1f887b3a7fba1cd4ebf552e3e81"
SUBTREE_PROOFS_VECTOR = "10fa99b37bf9bf9ffa26b412fbd98bd75363256d0b75d61bc4538b9c9c5a0a74"
DRAFT_TREE = c.Tree([c.leaf_hash(bytes([i])) for i in range(130)])


def test_the_client_imports_nothing_of_the_project() -> None:
    """Its value is that it is a second reading: it may use the standard library, PyNaCl and cryptography."""
    tree = ast.parse(Path(c.__file__).read_text(encoding="utf-8"))
    roots = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    roots |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert roots - sys.stdlib_module_names == {"nacl", "cryptography"}, roots


# ---------------------------------------------------------------- Merkle trees and proofs


def test_rfc6962_roots_and_consistency_proofs() -> None:
    tree = c.Tree([c.leaf_hash(bytes.fromhex(x)) for x in RFC6962["leaves"]])
    assert tree.hash(0, 0).hex() == RFC6962["empty_root"]
    for row in RFC6962["roots"]:
        assert tree.hash(0, row["size"]).hex() == row["root"], row
    rows = RFC6962["consistency"] + RFC6962["derived_consistency_all"]
    for row in rows:
        m, n = row["size1"], row["size2"]
        proof = tree.consistency_proof(m, n)
        assert [h.hex() for h in proof] == row["proof"], row
        assert c.verify_subtree_consistency(0, m, n, proof, tree.hash(0, m), tree.hash(0, n)), row
    assert tree.consistency_proof(0, 5) == [], "tlog-witness: no proof from the empty tree"


def test_the_draft_s_accumulated_subtree_vectors() -> None:
    hashes, proofs = hashlib.sha256(), hashlib.sha256()
    for end in range(131):
        for start in range(end + 1):
            if start == end or c.is_valid_subtree(start, end):
                hashes.update(f"[{start}, {end}) {DRAFT_TREE.hash(start, end).hex()}\n".encode())
    checked = 0
    for n in range(131):
        for end in range(n + 1):
            for start in range(end + 1):
                if start == end:
                    proofs.update(f"[{start}, {end}) {n}\n".encode())
                elif c.is_valid_subtree(start, end):
                    proof = DRAFT_TREE.subtree_consistency_proof(start, end, n)
                    proofs.update((f"[{start}, {end}) {n}" + "".join(f" {h.hex()}" for h in proof) + "\n").encode())
                    root, node = DRAFT_TREE.hash(0, n), DRAFT_TREE.hash(start, end)
                    assert c.verify_subtree_consistency(start, end, n, proof, node, root), (start, end, n)
                    checked += 1
    assert hashes.hexdigest() == SUBTREE_HASHES_VECTOR
    assert proofs.hexdigest() == SUBTREE_PROOFS_VECTOR
    assert checked > 30_000


def test_the_draft_s_worked_examples() -> None:
    t = DRAFT_TREE
    assert t.subtree_consistency_proof(4, 8, 14) == [t.hash(0, 4), t.hash(8, 14)]
    assert t.subtree_consistency_proof(8, 13, 14) == [t.hash(12, 13), t.hash(13, 14), t.hash(8, 12), t.hash(0, 8)]
    assert [c.is_valid_subtree(*r) for r in [(4, 8), (8, 13), (0, 13), (3, 5), (16, 100), (5, 5), (7, 9)]] == [
        True,
        True,
        True,
        False,
        False,
        False,  # -03, the version tlog-witness cites: a subtree is not empty
        False,
    ]


@pytest.mark.parametrize(("start", "end", "n"), [(4, 8, 14), (8, 13, 14), (0, 5, 14), (12, 13, 14), (16, 20, 37)])
def test_every_wrong_subtree_proof_is_refused(start: int, end: int, n: int) -> None:
    t = DRAFT_TREE
    proof, node, root = t.subtree_consistency_proof(start, end, n), t.hash(start, end), t.hash(0, n)
    assert c.verify_subtree_consistency(start, end, n, proof, node, root)
    wrong: list[tuple[int, int, int, list[bytes], bytes, bytes]] = [
        (start, end, n, proof, node, t.hash(0, n - 1)),
        (start, end, n, proof, t.hash(start, end - 1) if end - 1 > start else t.hash(0, 0), root),
        (start, end, n, [*proof, proof[0]], node, root),
        (start, end, n, proof[:-1], node, root),
        (start, end, end - 1, proof, node, root),
    ]
    for i in range(len(proof)):
        flipped = bytearray(proof[i])
        flipped[0] ^= 1
        wrong.append((start, end, n, [*proof[:i], bytes(flipped), *proof[i + 1 :]], node, root))
    for case in wrong:
        assert not c.verify_subtree_consistency(*case), case


# ---------------------------------------------------------------- signed notes and keys


def test_go_s_signed_notes_open_as_signed_note_says() -> None:
    for case in NOTES["open"]:
        keys = [c.parse_vkey(v) for v in case["verifiers"]]
        if case["expect"] == "ok":
            text, verified = c.open_note(bytes.fromhex(case["note_hex"]), keys)
            assert text == case["text"] and set(verified) <= set(keys) and verified, case["description"]
        else:
            with pytest.raises(c.SpecViolation):
                c.open_note(bytes.fromhex(case["note_hex"]), keys)
    peter = [c.parse_vkey(NOTES["vkey"])]
    for case in NOTES["malformed"]:
        if "101 copies" in case["description"]:
            continue  # a limit Go chose; signed-note only requires accepting 16
        with pytest.raises(c.SpecViolation):
            c.open_note(bytes.fromhex(case["note_hex"]), peter)
    for case in NOTES["bad_vkeys"]:
        with pytest.raises(c.SpecViolation):
            c.parse_vkey(case["vkey"])
    row = NOTES["checkpoint"]
    cp, verified = c.open_checkpoint(row["signed"].encode(), [c.parse_vkey(row["vkey"])])
    assert (cp.origin, cp.size, list(verified.values())) == ("go.sum database tree", 31700353, [None])


def test_a_checkpoint_must_be_well_formed() -> None:
    root = base64.b64encode(bytes(32)).decode()
    assert c.parse_checkpoint(f"o\n0\n{root}\next\n").extensions == ("ext",)
    for bad in [f"o\n01\n{root}\n", f"o\n1\n{root}", "o\n1\nAAAA\n", f"o\n1\n{root}\n\n", f"\n1\n{root}\n"]:
        with pytest.raises(c.SpecViolation):
            c.parse_checkpoint(bad)


# ---------------------------------------------------------------- what the C2SP texts print
# Copied from C2SP/C2SP at 5ba5ee830903e91240fc6f9f3a7a9293d49e69c9: tlog-witness.md's example request
# bodies (the sign-subtree one ends where the spec elides its signature) and tlog-cosignature.md's
# example Ed25519 signed message.

ADD_CHECKPOINT_EXAMPLE = """old 20852014
PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=
jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=
5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=
/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=

example.com/behind-the-sofa
20852163
CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=

— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=
— example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=
"""  # noqa: E501
SIGN_SUBTREE_EXAMPLE_HEAD = """subtree 8 13
mbsQCg+dEIMGlpqeGgk94JutQwKKS2Lo5IuDhKmDjiU=
CD82D2LDm0phY0+xKbHyZfq3Hw21lVkuV7Zis5EFg0k=
h/ghL5nyaXTIBAklqDnisM+SFdbA3izoGZ5oRYMZzc0=
8qtnAAU9sTKQx/zt3E4v8Jt2a9IMQUf0QUawvePF9y0=
KuO5BNOmginG34Lm5G3e2GuiWliGo3K0ebzGpvI0fEg=

example.com/behind-the-sofa
14
/CcKVZM9n65aH7jLaIZuUB4/MSlEFQ4+ldwUC21rDHM=

"""
COSIGNATURE_V1_EXAMPLE = """cosignature/v1
time 1679315147
example.com/behind-the-sofa
20852163
CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=
"""


def test_the_add_checkpoint_body_is_tlog_witness_s_example() -> None:
    head, checkpoint = ADD_CHECKPOINT_EXAMPLE.split("\n\n", 1)
    proof = [base64.b64decode(line) for line in head.split("\n")[1:]]
    assert c.add_checkpoint_body(20852014, proof, checkpoint.encode()) == ADD_CHECKPOINT_EXAMPLE.encode()
    with pytest.raises(ValueError, match="at most 63"):
        c.add_checkpoint_body(1, [bytes(32)] * 64, checkpoint.encode())


def test_the_sign_subtree_body_is_tlog_witness_s_example() -> None:
    head, checkpoint = SIGN_SUBTREE_EXAMPLE_HEAD.split("\n\n", 1)
    hashes = [base64.b64decode(line) for line in head.split("\n")[1:]]
    body = c.sign_subtree_body(8, 13, hashes[0], hashes[1:], checkpoint.encode())
    assert body == SIGN_SUBTREE_EXAMPLE_HEAD.encode()
    # The example's hashes are illustrative: its proof is not one of [8, 13) in a tree of 14 leaves.
    cp = c.parse_checkpoint(checkpoint[:-1])
    assert not c.verify_subtree_consistency(8, 13, cp.size, hashes[1:], hashes[0], cp.root)


def test_the_ed25519_cosigned_message_is_tlog_cosignature_s_example() -> None:
    text = COSIGNATURE_V1_EXAMPLE.split("\n", 2)[2]
    assert c.cosignature_v1_message(text, 1679315147) == COSIGNATURE_V1_EXAMPLE.encode()


# ---------------------------------------------------------------- cosignatures of both types

ORIGIN = "example.com/behind-the-sofa"
ROOT = base64.b64decode("CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=")
TEXT = f"{ORIGIN}\n20852163\n{base64.b64encode(ROOT).decode()}\n"


def _line(key: c.PublicKey, blob: bytes) -> c.Signature:
    return c.parse_signature_lines(f"\u2014 {key.name} {base64.b64encode(key.key_id + blob).decode()}\n")[0]


def test_cosignatures_of_both_types_verify_and_every_change_is_refused() -> None:
    ed_sk = SigningKey(hashlib.sha256(b"spec client ed25519").digest())
    ml_sk = MLDSA44PrivateKey.from_seed_bytes(hashlib.sha256(b"spec client ml-dsa-44").digest())
    ed = c.PublicKey("witness.example/w1", c.COSIGNATURE_ED25519, bytes(ed_sk.verify_key))
    ml = c.PublicKey("witness.example/w1", c.COSIGNATURE_ML_DSA_44, ml_sk.public_key().public_bytes_raw())
    assert c.parse_vkey(ml.vkey) == ml and c.parse_vkey(ed.vkey) == ed
    assert ed.key_id != ml.key_id, "the type byte is in the key ID"
    ts = 1_700_000_000
    ed_blob = ts.to_bytes(8, "big") + ed_sk.sign(c.cosignature_v1_message(TEXT, ts)).signature
    ml_blob = ts.to_bytes(8, "big") + ml_sk.sign(c.cosigned_message(ml.name, ts, ORIGIN, 0, 20852163, ROOT))
    assert c.verify_line(ed, TEXT, _line(ed, ed_blob)) == ts
    assert c.verify_line(ml, TEXT, _line(ml, ml_blob)) == ts
    note = (TEXT + "\n" + _line(ed, ed_blob).line + _line(ml, ml_blob).line).encode()
    assert c.open_checkpoint(note, [ed, ml])[1] == {ed: ts, ml: ts}
    for blob, key in [(ed_blob, ed), (ml_blob, ml)]:
        for i in (7, 8, len(blob) - 1):  # the timestamp, the signature's first and last byte
            bad = bytearray(blob)
            bad[i] ^= 1
            with pytest.raises(c.SpecViolation, match="does not verify"):
                c.verify_line(key, TEXT, _line(key, bytes(bad)))
        with pytest.raises(c.SpecViolation, match="bytes, not"):
            c.verify_line(key, TEXT, _line(key, blob[:-1]))
    with pytest.raises(c.SpecViolation, match="exceeds 2"):
        c.verify_line(ml, TEXT, _line(ml, (2**63).to_bytes(8, "big") + ml_blob[8:]))


def test_a_subtree_cosignature_must_carry_timestamp_zero() -> None:
    ml_sk = MLDSA44PrivateKey.from_seed_bytes(hashlib.sha256(b"spec client subtree").digest())
    ml = c.PublicKey("witness.example/w1", c.COSIGNATURE_ML_DSA_44, ml_sk.public_key().public_bytes_raw())
    h = DRAFT_TREE.hash(8, 13)
    good = bytes(8) + ml_sk.sign(c.cosigned_message(ml.name, 0, ORIGIN, 8, 13, h))
    c.verify_subtree_line(ml, ORIGIN, 8, 13, h, _line(ml, good))
    with pytest.raises(c.SpecViolation, match="does not verify"):
        c.verify_subtree_line(ml, ORIGIN, 8, 12, h, _line(ml, good))
    stamped = (5).to_bytes(8, "big") + ml_sk.sign(c.cosigned_message(ml.name, 5, ORIGIN, 8, 13, h))
    with pytest.raises(c.SpecViolation, match="timestamp 5, not 0"):
        c.verify_subtree_line(ml, ORIGIN, 8, 13, h, _line(ml, stamped))


# ---------------------------------------------------------------- answers


def test_a_409_answer_is_read_only_when_it_is_what_the_spec_says() -> None:
    assert c.Answer(409, "text/x.tlog.size", b"14\n").tree_size() == 14
    for answer in [
        c.Answer(409, "text/plain", b"14\n"),
        c.Answer(409, "text/x.tlog.size", b"14"),
        c.Answer(409, "text/x.tlog.size", b"014\n"),
        c.Answer(200, "text/x.tlog.size", b"14\n"),
    ]:
        with pytest.raises(c.SpecViolation):
            answer.tree_size()
    with pytest.raises(c.SpecViolation, match="not a signature line"):
        c.Answer(200, "text/plain", b"- w AAAAAAA=\n").lines()
