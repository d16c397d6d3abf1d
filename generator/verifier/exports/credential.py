"""A certificate as a W3C Verifiable Credential 2.0 in the Open Badges 3.0 achievement-credential shape,
secured by a Data Integrity proof of the `eddsa-jcs-2022` cryptosuite (RFC 8785 and Ed25519), its
issuer the site's `did:web`, its revocation a Bitstring Status List credential the build keeps in
step with the ledger's revocations (FORMAT.md, "Exports").

Everything but the signatures is made here from the published certificate and the ledger, so the
verifier remakes each credential, the status list and the DID document and compares them, and checks
each proof with the key that signed the certificate (the status list's with today's key).
"""

import base64
import hashlib
import re
import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from generator.verifier.core.canonical import canonical_bytes
from generator.verifier.tlog.keyring import KeyRing

VC2_CONTEXT = "https://www.w3.org/ns/credentials/v2"
OB3_CONTEXT = "https://purl.imsglobal.org/spec/ob/v3p0/context-3.0.3.json"
DID_CONTEXTS = ("https://www.w3.org/ns/did/v1", "https://w3id.org/security/multikey/v1")
CREDENTIAL_NAME = "credential.json"
STATUS_LIST_PATH = "credentials/status.json"
DID_PATHS = ("did.json", ".well-known/did.json")
STATUS_LIST_MIN_BITS = 131072  # 16 KiB, the Bitstring Status List's minimum, which hides who is revoked
CRYPTOSUITE = "eddsa-jcs-2022"
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_ED25519_MULTICODEC = b"\xed\x01"
_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def current_keys(ring: KeyRing) -> list[bytes]:
    """The keys the site's DID document names: every key the log has signed with that is not
    revoked, oldest first. A credential signed by a key revoked since is refused by every
    verifier that resolves the DID, as a forgery by whoever holds that key must be."""
    return [span.key.public_key for span in ring.spans if span.reason is None]


def credential_path(serial: str) -> str:
    return f"certificates/{serial}/{CREDENTIAL_NAME}"


def b58encode(data: bytes) -> str:
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = _B58[r] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def b58decode(text: str) -> bytes | None:
    """The bytes of base58btc `text`, or None if it is not base58btc (or too long to be a signature)."""
    if len(text) > 200 or any(c not in _B58 for c in text):
        return None
    n = 0
    for c in text:
        n = n * 58 + _B58.index(c)
    body = n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b""
    return b"\0" * (len(text) - len(text.lstrip("1"))) + body


def did_web(origin: str) -> str:
    """The did:web of a site at https://<origin>/: its path's slashes as colons."""
    return "did:web:" + origin.replace(":", "%3A").replace("/", ":")


def verification_method(origin: str, public_key: bytes) -> str:
    return f"{did_web(origin)}#key-{hashlib.sha256(public_key).hexdigest()[:16]}"


def multikey(public_key: bytes) -> str:
    return "z" + b58encode(_ED25519_MULTICODEC + public_key)


def did_document(origin: str, public_keys: Iterable[bytes]) -> dict[str, Any]:
    """The site's DID document: the keys `current_keys` gives, oldest first, so that a credential
    signed before a rotation still verifies and none signed by a revoked key does."""
    did = did_web(origin)
    methods = [
        {"id": verification_method(origin, k), "type": "Multikey", "controller": did, "publicKeyMultibase": multikey(k)}
        for k in public_keys
    ]
    ids = [m["id"] for m in methods]
    return {
        "@context": list(DID_CONTEXTS),
        "id": did,
        "verificationMethod": methods,
        "authentication": ids,
        "assertionMethod": ids,
    }


def certificate_credential(
    cert: Mapping[str, Any], cert_sha256: str, program: Mapping[str, str], gate_name: str, status_index: int
) -> dict[str, Any]:
    """The unsigned credential of `cert` (its bytes' SHA-256 `cert_sha256`): its subject, gate,
    verdict, grade, score and pass rate, the certificate itself as evidence, its status entry."""
    origin, serial, subject = program["origin"], str(cert["serial"]), cert["subject"]
    base = f"https://{origin}/"
    achievement = f"{base}gates/{cert['gate']}/"
    rates = cert["summary"]
    results: list[tuple[str, str, str, str]] = [("verdict", "Verdict", "Status", str(cert["verdict"]))]
    if cert.get("grade") is not None:
        results.append(("grade", "Grade", "LetterGrade", str(cert["grade"])))
    if cert.get("score") is not None:
        results.append(("score", "Score out of 100", "ScaledScore", str(cert["score"])))
    if rates.get("pass_rate") is not None:
        results.append(("pass-rate", "Pass rate", "Percent", str(rates["pass_rate"])))
    status = f"{base}{STATUS_LIST_PATH}"
    doc: dict[str, Any] = {
        "@context": [VC2_CONTEXT, OB3_CONTEXT],
        "id": f"{base}{credential_path(serial)}",
        "type": ["VerifiableCredential", "OpenBadgeCredential"],
        "name": f"{subject['name']} {subject['version']}: certificate {serial} ({cert['verdict']})",
        "issuer": {"id": did_web(origin), "type": ["Profile"], "name": program["origin"], "url": base},
        "validFrom": cert["issued_at"],
        "credentialSubject": {
            "id": f"{base}systems/{subject['id']}/",
            "type": ["AchievementSubject"],
            "achievement": {
                "id": achievement,
                "type": ["Achievement"],
                "name": f"{program['origin']}: {gate_name}",
                "description": f"Evaluated on {gate_name} under methodology {cert['methodology']['version']} "
                f"(SHA-256 {cert['methodology']['sha256']}), run {cert['run']}.",
                "criteria": {
                    "narrative": f"The verdict, grade and score of certificate {serial}, which its "
                    "signed document holds and the site's verify.py recomputes."
                },
                "resultDescription": [
                    {"id": f"{achievement}#{key}", "type": ["ResultDescription"], "name": name, "resultType": kind}
                    for key, name, kind, _ in results
                ],
            },
            "result": [
                {"type": ["Result"], "resultDescription": f"{achievement}#{key}", "value": value}
                for key, _, _, value in results
            ],
        },
        "evidence": [
            {
                "id": f"{base}certificates/{serial}.json",
                "type": ["Evidence"],
                "name": f"Certificate {serial}",
                "description": f"The signed certificate, of SHA-256 {cert_sha256}, leaf of the program's log.",
            }
        ],
        "credentialStatus": {
            "id": f"{status}#{status_index}",
            "type": "BitstringStatusListEntry",
            "statusPurpose": "revocation",
            "statusListIndex": str(status_index),
            "statusListCredential": status,
        },
    }
    if cert.get("expires_at") is not None:
        doc["validUntil"] = cert["expires_at"]
    return doc


def status_bits(count: int, revoked: Iterable[int]) -> bytes:
    """The list's bits, one a certificate by its position among the ledger's certificates (bit 0
    the first byte's most significant), set for a revoked one; at least the minimum length."""
    size = max(STATUS_LIST_MIN_BITS, (count + 7) // 8 * 8)
    bits = bytearray(size // 8)
    for i in revoked:
        bits[i // 8] |= 0x80 >> (i % 8)
    return bytes(bits)


def encoded_list(bits: bytes) -> str:
    """GZIP (no name, time 0, so the same bits are the same text) as multibase base64url."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return "u" + base64.urlsafe_b64encode(c.compress(bits) + c.flush()).rstrip(b"=").decode("ascii")


def decoded_list(text: Any, limit: int) -> bytes | None:
    """The bits of an encoded list, at most `limit` bytes of them (a GZIP bomb is refused), or None."""
    if not (isinstance(text, str) and text.startswith("u") and _B64URL.fullmatch(text[1:])):
        return None  # a character outside base64url is refused, as a strict decoder refuses it
    body = text[1:]
    try:
        data = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        d = zlib.decompressobj(31)
        out = d.decompress(data, limit + 1)
    except (ValueError, zlib.error):
        return None
    return out if len(out) <= limit and d.eof and not d.unused_data else None


def status_list_credential(program: Mapping[str, str], bits: bytes, valid_from: str) -> dict[str, Any]:
    origin = program["origin"]
    url = f"https://{origin}/{STATUS_LIST_PATH}"
    return {
        "@context": [VC2_CONTEXT],
        "id": url,
        "type": ["VerifiableCredential", "BitstringStatusListCredential"],
        "issuer": did_web(origin),
        "validFrom": valid_from,
        "credentialSubject": {
            "id": f"{url}#list",
            "type": "BitstringStatusList",
            "statusPurpose": "revocation",
            "encodedList": encoded_list(bits),
        },
    }


def proof_options(doc: Mapping[str, Any], created: str, method: str) -> dict[str, Any]:
    """The proof without its value, with the document's context (vc-di-eddsa, eddsa-jcs-2022)."""
    return {
        "type": "DataIntegrityProof",
        "cryptosuite": CRYPTOSUITE,
        "created": created,
        "verificationMethod": method,
        "proofPurpose": "assertionMethod",
        "@context": doc["@context"],
    }


def signing_input(doc: Mapping[str, Any], options: Mapping[str, Any]) -> bytes:
    """SHA-256 of the canonical proof options, then of the canonical document (without proof)."""
    unsecured = {k: v for k, v in doc.items() if k != "proof"}
    return hashlib.sha256(canonical_bytes(dict(options))).digest() + hashlib.sha256(canonical_bytes(unsecured)).digest()


def secured(doc: Mapping[str, Any], created: str, method: str, sign: Callable[[bytes], bytes]) -> bytes:
    """The document with its proof, as published: canonical JSON (RFC 8785)."""
    options = proof_options(doc, created, method)
    proof = {**options, "proofValue": "z" + b58encode(sign(signing_input(doc, options)))}
    return canonical_bytes({**doc, "proof": proof})


def proof_problems(
    found: Any,
    want: Mapping[str, Any],
    created: str,
    method: str,
    public_key: bytes,
    verify: Callable[[bytes, bytes, bytes], bool],
) -> list[str]:
    """What is wrong with a published secured document against the unsigned one remade (`want`),
    its proof's time and method, and the key it must verify with."""
    if not isinstance(found, dict):
        return ["not a JSON object"]
    problems = []
    if {k: v for k, v in found.items() if k != "proof"} != dict(want):
        problems.append("differs from the document remade from the certificate and the ledger")
    proof = found.get("proof")
    options = proof_options(want, created, method)
    if not (isinstance(proof, dict) and {k: v for k, v in proof.items() if k != "proofValue"} == options):
        return [*problems, "its proof is not the eddsa-jcs-2022 proof of the expected key, time and purpose"]
    value = proof.get("proofValue")
    signature = b58decode(value[1:]) if isinstance(value, str) and value.startswith("z") else None
    if signature is None or len(signature) != 64 or not verify(public_key, signature, signing_input(want, options)):
        problems.append("its proof's signature does not verify")
    return problems


def certificate_ordinals(certificates: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Each certificate's place in the status list: its position among the ledger's certificate
    events (serial, leaf index), in ledger order, which never changes once it is issued."""
    return {serial: n for n, (serial, _) in enumerate(sorted(certificates, key=lambda c: c[1]))}


def revocation_bits(ordinals: Mapping[str, int], revoked: Iterable[str]) -> bytes:
    return status_bits(len(ordinals), (ordinals[s] for s in revoked if s in ordinals))


def status_problems(
    found: Any,
    program: Mapping[str, str],
    bits: bytes,
    valid_from: str,
    method: str,
    public_key: bytes,
    verify: Callable[[bytes, bytes, bytes], bool],
) -> list[str]:
    """What is wrong with the published status list: its bits against the ledger's revocations
    (compared decoded: another GZIP may encode the same bits otherwise), its other members
    against those remade, its proof by today's key."""
    want = status_list_credential(program, bits, valid_from)
    if not isinstance(found, dict) or not isinstance(found.get("credentialSubject"), dict):
        return ["not a status list credential"]
    got = decoded_list(found["credentialSubject"].get("encodedList"), len(bits))
    if got != bits:
        return ["its bits are not the ledger's revocations (a revoked certificate shown valid, or the reverse)"]
    # The list as published, checked member by member and signed over its own encoding.
    same = {
        **want,
        "credentialSubject": {**want["credentialSubject"], "encodedList": found["credentialSubject"]["encodedList"]},
    }
    return proof_problems(found, same, valid_from, method, public_key, verify)
