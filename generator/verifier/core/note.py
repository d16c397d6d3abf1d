"""C2SP signed notes (format v1 §2) and tlog checkpoints (format v1 §4), opened as Go's
sumdb/note.Open opens them."""

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass

from generator.verifier.core.errors import FormatError, NoteError
from generator.verifier.core.formats import is_valid_key_name
from generator.verifier.core.public_keys import VerifierKey, b64decode_strict, ed25519_verify

_NOTE_SIG_PREFIX = "\u2014 "


@dataclass(frozen=True)
class NoteSignature:
    name: str
    key_id: bytes
    signature: bytes


@dataclass(frozen=True)
class SignedNote:
    text: str
    verified: tuple[NoteSignature, ...]
    unverified: tuple[NoteSignature, ...]


def note_signature_line(name: str, kid: bytes, signature: bytes) -> str:
    return f"{_NOTE_SIG_PREFIX}{name} {base64.b64encode(kid + signature).decode()}\n"


_MAX_NOTE_SIGNATURES = 100


def split_note(data: bytes) -> tuple[str, list[tuple[str, bytes]]]:
    """A signed note's text, and the name and decoded bytes (key ID first) of each signature
    line, every line's form checked: what open_note and the cosignature check both read."""
    try:
        msg = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NoteError("note is not valid UTF-8") from None
    if any(c < " " and c != "\n" for c in msg):
        raise NoteError("note holds a control character other than newline")
    split = msg.rfind("\n\n")
    if split < 0:
        raise NoteError("note has no empty line before its signatures")
    text, sigs = msg[: split + 1], msg[split + 2 :]
    if not sigs or not sigs.endswith("\n"):
        raise NoteError("note's signature block is empty or does not end with a newline")
    out: list[tuple[str, bytes]] = []
    for count, line in enumerate(sigs[:-1].split("\n"), start=1):
        if count > _MAX_NOTE_SIGNATURES:
            raise NoteError(f"note has more than {_MAX_NOTE_SIGNATURES} signatures")
        if not line.startswith(_NOTE_SIG_PREFIX):
            raise NoteError(f"signature line {line[:40]!r} does not start with '— '")
        name, sep, b64 = line[len(_NOTE_SIG_PREFIX) :].partition(" ")
        try:
            raw = base64.b64decode(b64.encode("ascii"), validate=True)
        except (ValueError, UnicodeEncodeError):
            raise NoteError(f"signature by {name!r} is not base64") from None
        if not sep or not b64 or not is_valid_key_name(name) or len(raw) < 5:
            raise NoteError(f"malformed signature line {line[:60]!r}")
        out.append((name, raw))
    return text, out


def open_note(data: bytes, verifiers: Sequence[VerifierKey]) -> SignedNote:
    """Open a C2SP signed note as golang.org/x/mod/sumdb/note.Open does.

    Signatures by unknown keys are ignored; a failing signature by a known key rejects the
    note; at least one signature by a known key must verify.
    """
    text, lines = split_note(data)
    known = {(v.name, v.key_id): v for v in verifiers}
    verified: list[NoteSignature] = []
    unverified: list[NoteSignature] = []
    seen: set[tuple[str, bytes]] = set()
    for name, raw in lines:
        sig = NoteSignature(name, raw[:4], raw[4:])
        v = known.get((name, raw[:4]))
        if v is None:
            if sig not in unverified:
                unverified.append(sig)
            continue
        if (name, raw[:4]) in seen:
            continue  # as Go's note.Open: a repeated signature by one key is dropped unchecked
        seen.add((name, raw[:4]))
        if not ed25519_verify(v.public_key, sig.signature, text.encode("utf-8")):
            raise NoteError(f"signature by {name} (key ID {raw[:4].hex()}) does not verify")
        verified.append(sig)
    if not verified:
        raise NoteError("note has no signature by a known key")
    return SignedNote(text, tuple(verified), tuple(unverified))


def checkpoint_text(origin: str, size: int, root: bytes) -> str:
    """The C2SP tlog-checkpoint body: origin, tree size, base64 root hash."""
    return f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n"


def parse_checkpoint(text: str) -> tuple[str, int, bytes]:
    lines = text.split("\n")
    if len(lines) < 4 or lines[-1] != "":
        raise FormatError("a checkpoint has an origin line, a size line and a root line")
    origin, size, root_b64 = lines[0], lines[1], lines[2]
    if not re.fullmatch(r"0|[1-9][0-9]{0,19}", size):
        raise FormatError(f"checkpoint size {size!r} is not a decimal number without leading zeros")
    if int(size) > 2**64 - 1:
        raise FormatError(f"checkpoint size {size} is beyond a tree's 64-bit size")
    root = b64decode_strict(root_b64)
    if len(root) != 32:
        raise FormatError("checkpoint root is not 32 bytes")
    return origin, int(size), root
