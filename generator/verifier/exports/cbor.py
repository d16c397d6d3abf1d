"""The part of CBOR (RFC 8949) that COSE messages of this site use, encoded deterministically (its
section 4.2.1: the shortest form of every head, definite lengths, map keys in the bytewise order of
their encodings) and decoded strictly: a decoder for files an attacker chose, which refuses
indefinite lengths, heads longer than needed, a map key given twice, nesting deeper than a bound and
bytes after the item, so that one message has one encoding and the bytes checked are the bytes read.

Values: int, bytes, str, list, dict (int or str keys), None, True, False, and Tag (a tag number and
its content). Floats and other simple values are refused.
"""

from dataclasses import dataclass
from typing import Any

from generator.verifier.core.errors import FormatError

MAX_DEPTH = 16


@dataclass(frozen=True)
class Tag:
    number: int
    value: Any


def _head(major: int, n: int) -> bytes:
    if n < 24:
        return bytes([major << 5 | n])
    for extra, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if n < 1 << (8 * size):
            return bytes([major << 5 | extra]) + n.to_bytes(size, "big")
    raise FormatError(f"a CBOR integer of {n.bit_length()} bits is too large")


def dumps(value: Any) -> bytes:
    """The deterministic encoding of `value`."""
    if value is None:
        return b"\xf6"
    if value is True:
        return b"\xf5"
    if value is False:
        return b"\xf4"
    if isinstance(value, int):
        return _head(0, value) if value >= 0 else _head(1, -1 - value)
    if isinstance(value, bytes):
        return _head(2, len(value)) + value
    if isinstance(value, str):
        data = value.encode("utf-8")
        return _head(3, len(data)) + data
    if isinstance(value, list | tuple):
        return _head(4, len(value)) + b"".join(dumps(v) for v in value)
    if isinstance(value, dict):
        pairs = sorted((dumps(k), dumps(v)) for k, v in value.items())
        return _head(5, len(pairs)) + b"".join(k + v for k, v in pairs)
    if isinstance(value, Tag):
        return _head(6, value.number) + dumps(value.value)
    raise FormatError(f"no CBOR encoding here for a {type(value).__name__}")


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, n: int) -> bytes:
        if n > len(self.data) - self.at:
            raise FormatError(f"CBOR ends inside an item (byte {self.at}, {n} more wanted)")
        out = self.data[self.at : self.at + n]
        self.at += n
        return out

    def head(self) -> tuple[int, int]:
        first = self.take(1)[0]
        major, info = first >> 5, first & 0x1F
        if info < 24:
            return major, info
        if info > 27:
            raise FormatError(f"CBOR item at byte {self.at - 1}: an indefinite length or a reserved head")
        size = 1 << (info - 24)
        n = int.from_bytes(self.take(size), "big")
        if n < (24 if size == 1 else 1 << (4 * size)):
            raise FormatError(f"CBOR item at byte {self.at - size - 1}: a head longer than its value needs")
        return major, n

    def item(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise FormatError("CBOR nested too deeply")
        major, n = self.head()
        if major == 0:
            return n
        if major == 1:
            return -1 - n
        if major == 2:
            return self.take(n)
        if major == 3:
            try:
                return self.take(n).decode("utf-8")
            except UnicodeDecodeError:
                raise FormatError("a CBOR text string that is not UTF-8") from None
        if major == 4:
            return [self.item(depth + 1) for _ in range(n)]
        if major == 5:
            out: dict[Any, Any] = {}
            for _ in range(n):
                key = self.item(depth + 1)
                if not isinstance(key, int | str) or isinstance(key, bool):
                    raise FormatError("a CBOR map key that is not an integer or a text string")
                if key in out:
                    raise FormatError(f"the CBOR map key {key!r} is given twice")
                out[key] = self.item(depth + 1)
            return out
        if major == 6:
            return Tag(n, self.item(depth + 1))
        simple = {20: False, 21: True, 22: None}
        if n in simple:
            return simple[n]
        raise FormatError(f"a CBOR simple value or float ({n}) where none is used")


def loads(data: bytes) -> Any:
    """The one item `data` encodes, decoded strictly (see the module's docstring)."""
    r = _Reader(data)
    value = r.item(0)
    if r.at != len(data):
        raise FormatError(f"{len(data) - r.at} bytes after the CBOR item")
    if dumps(value) != data:
        raise FormatError("not the deterministic encoding of what it holds (map keys out of order)")
    return value
