"""C2SP tlog-proof (c2sp.org/tlog-proof@v1, format v1 §9): one artifact's inclusion proof, with the
proven leaf in its `extra` line and the checkpoint it is proven against, checkable offline.

    c2sp.org/tlog-proof@v1
    extra <base64 of the leaf bytes>
    index <N>
    <base64 hash>            one a line, from the leaf's sibling up to the root's child
                             (an empty line)
    <the checkpoint, a signed note, verbatim>

Parsed strictly: a reader of files an attacker chose gets one reading or an error naming the
line, never a guess.
"""

import base64
import re
from dataclasses import dataclass

from generator.verifier.core.errors import FormatError
from generator.verifier.core.public_keys import b64decode_strict

TLOG_PROOF_HEADER = "c2sp.org/tlog-proof@v1"
# 2^63 hashes would need a tree no log reaches; the bound keeps a hostile file from making us
# read a million lines before we notice.
_MAX_PROOF_HASHES = 63
_DECIMAL_RE = re.compile(r"0|[1-9][0-9]{0,18}")


@dataclass(frozen=True)
class TlogProof:
    extra: bytes | None
    index: int
    hashes: tuple[bytes, ...]
    checkpoint: bytes


def format_tlog_proof(extra: bytes | None, index: int, hashes: list[bytes], checkpoint: bytes) -> bytes:
    lines = [TLOG_PROOF_HEADER]
    if extra is not None:
        lines.append("extra " + base64.b64encode(extra).decode())
    lines.append(f"index {index}")
    lines += [base64.b64encode(h).decode() for h in hashes]
    return ("\n".join(lines) + "\n\n").encode() + checkpoint


def parse_tlog_proof(data: bytes) -> TlogProof:
    head, sep, checkpoint = data.partition(b"\n\n")
    if not sep:
        raise FormatError("no empty line before the checkpoint")
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError:
        raise FormatError("the lines before the checkpoint must be ASCII") from None
    lines = text.split("\n")
    if lines[0] != TLOG_PROOF_HEADER:
        raise FormatError(f"line 1 must be {TLOG_PROOF_HEADER!r}")
    k = 1
    extra = None
    if k < len(lines) and lines[k].startswith("extra "):
        extra = _base64_field(lines[k][len("extra ") :], k + 1, "extra")
        k += 1
    if k >= len(lines) or not lines[k].startswith("index "):
        raise FormatError(f"line {k + 1} must be 'index N'")
    number = lines[k][len("index ") :]
    if not _DECIMAL_RE.fullmatch(number) or int(number) >= 2**63:
        raise FormatError(f"line {k + 1}: the index must be a decimal without leading zeros, below 2^63")
    hashes = []
    for n, line in enumerate(lines[k + 1 :], start=k + 2):
        h = _base64_field(line, n, "hash")
        if len(h) != 32:
            raise FormatError(f"line {n}: a hash must be 32 bytes, found {len(h)}")
        hashes.append(h)
    if len(hashes) > _MAX_PROOF_HASHES:
        raise FormatError(f"{len(hashes)} hashes: no tree below 2^63 leaves needs more than {_MAX_PROOF_HASHES}")
    return TlogProof(extra, int(number), tuple(hashes), checkpoint)


def _base64_field(text: str, line: int, what: str) -> bytes:
    try:
        return b64decode_strict(text)
    except (FormatError, ValueError):
        raise FormatError(f"line {line}: the {what} is not canonical base64") from None
