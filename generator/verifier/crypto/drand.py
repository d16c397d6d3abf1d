"""drand's randomness beacon, the scheme bls-unchained-g1-rfc9380 of its quicknet chain: a round's
message, randomness, time and signature check, and a chain's hash.

A round r is published at genesis + (r - 1) * period seconds. Its signature is a BLS signature on
G1 (48 bytes) of SHA-256(r as 8 bytes, big-endian) under the chain's key on G2 (96 bytes), with
the domain separation tag below; its randomness is the SHA-256 of the signature's bytes.
"""

import hashlib

from generator.verifier.core.errors import FormatError
from generator.verifier.crypto.bls12_381 import verify_g1_signature

DRAND_SCHEME_G1_RFC9380 = "bls-unchained-g1-rfc9380"
DRAND_DST_G1 = b"BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_"

# quicknet, the League of Entropy's 3-second chain, as its chain info gives it.
DRAND_QUICKNET_PUBLIC_KEY = bytes.fromhex(
    "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d106451"
    "0d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a"
)
DRAND_QUICKNET_PERIOD = 3
DRAND_QUICKNET_GENESIS_TIME = 1692803367
DRAND_QUICKNET_GROUP_HASH = bytes.fromhex("f477d5c89f21a17c863a7f937c6a6d15859414d2be09cd448d4279af331c5d3e")
DRAND_QUICKNET_BEACON_ID = "quicknet"
DRAND_QUICKNET_CHAIN_HASH = bytes.fromhex("52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971")


def _drand_check_round(round_number: int) -> None:
    if isinstance(round_number, bool) or not isinstance(round_number, int) or not 1 <= round_number < 1 << 64:
        raise FormatError(f"a drand round is a whole number from 1 to 2^64 - 1; found {round_number!r}")


def drand_round_message(round_number: int) -> bytes:
    """What an unchained round signs (hashed to G1 in turn): SHA-256 of the round as 8 bytes."""
    _drand_check_round(round_number)
    return hashlib.sha256(round_number.to_bytes(8, "big")).digest()


def drand_randomness(signature: bytes) -> bytes:
    """A round's randomness: SHA-256 of its signature's bytes."""
    return hashlib.sha256(signature).digest()


def drand_round_time(genesis_time: int, period: int, round_number: int) -> int:
    """The Unix time, in seconds, at which the round is published (round 1 at genesis)."""
    _drand_check_round(round_number)
    return genesis_time + (round_number - 1) * period


def drand_chain_hash(public_key: bytes, period: int, genesis_time: int, group_hash: bytes, beacon_id: str) -> bytes:
    """A chain's hash, as drand's chain.Info.Hash computes it: SHA-256 of the period in seconds
    (uint32, big-endian), the genesis time (int64, big-endian), the public key, the group hash
    and, unless the beacon ID is "" or "default", the beacon ID. The scheme ID is not hashed."""
    data = period.to_bytes(4, "big") + genesis_time.to_bytes(8, "big", signed=True) + public_key + group_hash
    if beacon_id not in ("", "default"):
        data += beacon_id.encode("utf-8")
    return hashlib.sha256(data).digest()


def verify_drand_round(public_key: bytes, round_number: int, signature: bytes) -> bool:
    """Whether `signature` is the round's signature under the chain key `public_key`, for the
    scheme bls-unchained-g1-rfc9380. Raises FormatError if the key is not a compressed G2 point,
    the signature not a compressed G1 point, or the round not a valid round number."""
    return verify_g1_signature(public_key, drand_round_message(round_number), signature, DRAND_DST_G1)
