"""A certificate as a SCITT transparent statement (RFC 9943 architecture): the certificate as a COSE_Sign1
signed statement (RFC 9052) by the key that signed it, with an RFC 9942 receipt of its inclusion in
the program's log (verifiable data structure 1, RFC9162_SHA256: the RFC 6962 tree this ledger is)
in its unprotected header (label 394). FORMAT.md, "Exports", holds the profile; in short:

- statement: protected `{1: -8 (EdDSA), 3: "application/json", 4: <key id>, 15: {1: <issuer>, 2:
  <subject>}}`, unprotected `{394: [<receipt>]}`, payload the certificate's bytes as published;
- the leaf: a relying party remakes the ledger's certificate event from the payload alone,
  `{"at": issued_at, "run": run, "serial": serial, "sha256": SHA-256 of the payload, "type":
  "certificate", "v": 1}` as canonical JSON (RFC 8785), and that is the leaf the receipt proves;
- receipt: protected `{1: -8, 4: <key id>, 15: {1: <issuer>, 2: <subject>}, 395: 1}`, unprotected
  `{396: {-1: [bstr .cbor [tree_size, leaf_index, [hashes]]]}}`, payload detached (the root),
  signed by the same key; the tree size is that of the first archived checkpoint of the log
  (`ledger/checkpoints/N`) past the leaf, so that the receipt is written once and its root is
  one the site's history signs.

The issuer is `https://<origin>/`, the subject the certificate's site path; the key id the key's
fingerprint (SHA-256 of the raw Ed25519 public key, as bytes).
"""

import hashlib
from collections.abc import Callable
from typing import Any

from generator.verifier.core.canonical import canonical_bytes
from generator.verifier.core.errors import FormatError, ProofError
from generator.verifier.exports.cbor import Tag, dumps, loads
from generator.verifier.tlog.merkle import leaf_hash, root_from_inclusion_proof

ALG_EDDSA = -8
COSE_SIGN1_TAG = 18
HDR_ALG, HDR_CTY, HDR_KID, HDR_CWT = 1, 3, 4, 15
HDR_RECEIPTS, HDR_VDS, HDR_VDP = 394, 395, 396
VDS_RFC9162_SHA256 = 1
INCLUSION_PROOFS = -1
CONTENT_TYPE = "application/json"
STATEMENT_NAME = "transparent-statement.cose"


def statement_path(serial: str) -> str:
    return f"certificates/{serial}/{STATEMENT_NAME}"


def cose_key_id(public_key: bytes) -> bytes:
    return hashlib.sha256(public_key).digest()


def certificate_leaf(cert: dict[str, Any], payload: bytes) -> bytes:
    """The ledger's certificate event remade from the statement's payload (the profile's leaf)."""
    return canonical_bytes(
        {
            "at": cert["issued_at"],
            "run": cert["run"],
            "serial": cert["serial"],
            "sha256": hashlib.sha256(payload).hexdigest(),
            "type": "certificate",
            "v": 1,
        }
    )


def _claims(origin: str, serial: str) -> dict[int, str]:
    return {1: f"https://{origin}/", 2: f"certificates/{serial}.json"}


def statement_protected(origin: str, serial: str, kid: bytes) -> bytes:
    return dumps({HDR_ALG: ALG_EDDSA, HDR_CTY: CONTENT_TYPE, HDR_KID: kid, HDR_CWT: _claims(origin, serial)})


def receipt_protected(origin: str, serial: str, kid: bytes) -> bytes:
    return dumps({HDR_ALG: ALG_EDDSA, HDR_KID: kid, HDR_CWT: _claims(origin, serial), HDR_VDS: VDS_RFC9162_SHA256})


def to_be_signed(protected: bytes, payload: bytes) -> bytes:
    """COSE's Sig_structure for a COSE_Sign1 with no external data (RFC 9052, section 4.4)."""
    return dumps(["Signature1", protected, b"", payload])


def transparent_statement(
    payload: bytes,
    origin: str,
    serial: str,
    public_key: bytes,
    sign: Callable[[bytes], bytes],
    tree_size: int,
    leaf_index: int,
    path: list[bytes],
    root: bytes,
) -> bytes:
    """The transparent statement of a certificate whose published bytes are `payload`, signed by
    `sign` (the key of `public_key`), with the receipt of leaf `leaf_index` in the tree of
    `tree_size` leaves whose root is `root` (`path` the leaf's inclusion proof)."""
    kid = cose_key_id(public_key)
    proof = dumps([tree_size, leaf_index, list(path)])
    r_protected = receipt_protected(origin, serial, kid)
    receipt = dumps(
        Tag(
            COSE_SIGN1_TAG,
            [r_protected, {HDR_VDP: {INCLUSION_PROOFS: [proof]}}, None, sign(to_be_signed(r_protected, root))],
        )
    )
    s_protected = statement_protected(origin, serial, kid)
    signature = sign(to_be_signed(s_protected, payload))
    return dumps(Tag(COSE_SIGN1_TAG, [s_protected, {HDR_RECEIPTS: [receipt]}, payload, signature]))


def _sign1(value: Any, what: str) -> list[Any]:
    if not (isinstance(value, Tag) and value.number == COSE_SIGN1_TAG):
        raise FormatError(f"{what} is not a tagged COSE_Sign1 (tag 18)")
    parts = value.value
    if not (
        isinstance(parts, list) and len(parts) == 4 and isinstance(parts[0], bytes) and isinstance(parts[3], bytes)
    ):
        raise FormatError(f"{what} is not [protected, unprotected, payload, signature]")
    return parts


def read_transparent_statement(data: bytes) -> tuple[list[Any], list[Any], tuple[int, int, list[bytes]]]:
    """The statement's and its one receipt's parts, and the receipt's inclusion proof
    (tree size, leaf index, path); FormatError for anything else."""
    statement = _sign1(loads(data), "the transparent statement")
    unprotected = statement[1]
    if not (isinstance(unprotected, dict) and set(unprotected) == {HDR_RECEIPTS}):
        raise FormatError("the statement's unprotected header holds other than its receipts (394)")
    receipts = unprotected[HDR_RECEIPTS]
    if not (isinstance(receipts, list) and len(receipts) == 1 and isinstance(receipts[0], bytes)):
        raise FormatError("the statement carries other than one receipt")
    receipt = _sign1(loads(receipts[0]), "the receipt")
    vdp = receipt[1]
    proofs = vdp.get(HDR_VDP) if isinstance(vdp, dict) and set(vdp) == {HDR_VDP} else None
    inclusion = proofs.get(INCLUSION_PROOFS) if isinstance(proofs, dict) and set(proofs) == {INCLUSION_PROOFS} else None
    if not (isinstance(inclusion, list) and len(inclusion) == 1 and isinstance(inclusion[0], bytes)):
        raise FormatError("the receipt's unprotected header is not {396: {-1: [one inclusion proof]}}")
    proof = loads(inclusion[0])
    if not (
        isinstance(proof, list)
        and len(proof) == 3
        and type(proof[0]) is int
        and type(proof[1]) is int
        and isinstance(proof[2], list)
        and all(isinstance(h, bytes) and len(h) == 32 for h in proof[2])
    ):
        raise FormatError("the receipt's inclusion proof is not [tree_size, leaf_index, [32-byte hashes]]")
    if receipt[2] is not None:
        raise FormatError("the receipt's payload (the root) is not detached")
    return statement, receipt, (proof[0], proof[1], proof[2])


def statement_problems(
    data: bytes,
    cert: dict[str, Any],
    payload: bytes,
    origin: str,
    public_key: bytes,
    verify: Callable[[bytes, bytes, bytes], bool],
    leaf_index: int,
    roots: dict[int, bytes],
) -> list[str]:
    """What is wrong with a published transparent statement of `cert` (bytes `payload`, ledger
    leaf `leaf_index`, signed by `public_key`; `verify(key, signature, message)`), given the roots
    of the log's archived checkpoints by size."""
    try:
        statement, receipt, (size, index, path) = read_transparent_statement(data)
    except FormatError as e:
        return [str(e)]
    serial, kid = str(cert["serial"]), cose_key_id(public_key)
    problems = []
    if statement[0] != statement_protected(origin, serial, kid):
        problems.append("the statement's protected header is not the profile's for this certificate and key")
    if statement[2] != payload:
        problems.append("the statement's payload is not the certificate's bytes")
    elif not verify(public_key, statement[3], to_be_signed(statement[0], payload)):
        problems.append("the statement's signature does not verify with the key that signed the certificate")
    if receipt[0] != receipt_protected(origin, serial, kid):
        problems.append("the receipt's protected header is not the profile's for this certificate and key")
    want_size = min((n for n in roots if n > leaf_index), default=None)
    if index != leaf_index or size != want_size:
        problems.append(
            f"the receipt proves leaf {index} in a tree of {size}, and the certificate is leaf {leaf_index}, "
            f"whose receipt is in the first archived checkpoint past it ({want_size})"
        )
        return problems
    try:
        root = root_from_inclusion_proof(index, size, leaf_hash(certificate_leaf(cert, payload)), path)
    except (ProofError, FormatError) as e:
        return [*problems, f"the receipt's inclusion proof: {e}"]
    if root != roots[size]:
        problems.append(f"the receipt's inclusion proof does not lead to the root of archived checkpoint {size}")
    elif not verify(public_key, receipt[3], to_be_signed(receipt[0], root)):
        problems.append("the receipt's signature does not verify with the key that signed the certificate")
    return problems
