"""A strict reader of DER (ITU-T X.690 section 10), the one encoding of ASN.1 that a timestamp
token, an X.509 certificate and an ECDSA signature must use.

It reads so that one value has one byte string. Refused, with the offset of the offending byte:
an indefinite (BER) length, a length in more bytes than it needs or in the long form when the
short one fits, a high tag number, a value that runs past its parent or is followed by stray
bytes, an INTEGER with a redundant leading byte, a BOOLEAN other than 00 or FF, an OBJECT
IDENTIFIER arc with a redundant leading byte, a BIT STRING with non-zero unused bits, a SET OF out
of order (where its reader asks), and a time other than the DER forms (seconds given, no trailing
zero in the fraction, "Z"). An element keeps its offsets in the buffer it was read from, so its
exact encoded bytes can be hashed or re-signed (signed attributes, a certificate's TBS part).
"""

from dataclasses import dataclass

from generator.verifier.core.errors import FormatError

DER_BOOLEAN = 0x01
DER_INTEGER = 0x02
DER_BIT_STRING = 0x03
DER_OCTET_STRING = 0x04
DER_NULL = 0x05
DER_OID = 0x06
DER_UTF8_STRING = 0x0C
DER_PRINTABLE_STRING = 0x13
DER_IA5_STRING = 0x16
DER_UTC_TIME = 0x17
DER_GENERALIZED_TIME = 0x18
DER_SEQUENCE = 0x30
DER_SET = 0x31

# Deeper than any structure read here; a bound keeps a hostile nesting from exhausting the stack.
_DER_MAX_DEPTH = 32
# Four length bytes: 4 GiB, more than any token or certificate; a bound keeps the arithmetic small.
_DER_MAX_LENGTH_BYTES = 4


def der_context(number: int, constructed: bool = True) -> int:
    """The identifier octet of the context-specific tag [number] (constructed for EXPLICIT tags
    and IMPLICIT ones over a SEQUENCE or SET, primitive for IMPLICIT ones over a primitive type)."""
    return 0x80 | (0x20 if constructed else 0) | number


@dataclass(frozen=True)
class DerElement:
    """One TLV read from `data`: its identifier octet, and where its header and its content start
    and where it ends (offsets in `data`, the whole buffer first read)."""

    data: bytes
    tag: int
    start: int
    content_start: int
    end: int
    depth: int = 0

    @property
    def content(self) -> bytes:
        return self.data[self.content_start : self.end]

    @property
    def encoded(self) -> bytes:
        """The element's exact bytes, identifier and length included."""
        return self.data[self.start : self.end]

    @property
    def constructed(self) -> bool:
        return bool(self.tag & 0x20)


def _der_fail(offset: int, what: str) -> FormatError:
    return FormatError(f"malformed DER at offset {offset}: {what}")


def _der_element_at(data: bytes, at: int, limit: int, depth: int) -> DerElement:
    """The element whose identifier octet is at `at`, which must end by `limit`."""
    if depth > _DER_MAX_DEPTH:
        raise _der_fail(at, f"nested more than {_DER_MAX_DEPTH} deep")
    if at >= limit:
        raise _der_fail(at, "an element was expected, the input ends")
    tag = data[at]
    if tag & 0x1F == 0x1F:
        raise _der_fail(at, "a high tag number (none is used here)")
    if at + 1 >= limit:
        raise _der_fail(at + 1, "the input ends before the length")
    first = data[at + 1]
    content_start = at + 2
    if first < 0x80:
        length = first
    elif first == 0x80:
        raise _der_fail(at + 1, "an indefinite length (BER, not DER)")
    else:
        size = first & 0x7F
        if size > _DER_MAX_LENGTH_BYTES:
            raise _der_fail(at + 1, f"a length in {size} bytes")
        if content_start + size > limit:
            raise _der_fail(at + 1, "the input ends inside the length")
        raw = data[content_start : content_start + size]
        if raw[0] == 0:
            raise _der_fail(at + 1, "a length with a leading zero byte (not minimal)")
        length = int.from_bytes(raw, "big")
        if length < 0x80:
            raise _der_fail(at + 1, f"the length {length} in the long form (not minimal)")
        content_start += size
    end = content_start + length
    if end > limit:
        raise _der_fail(at + 1, f"a length of {length} bytes runs past the end of its container")
    return DerElement(data, tag, at, content_start, end, depth)


def der_read(data: bytes, what: str = "the input") -> DerElement:
    """The one element `data` holds, with nothing after it."""
    element = _der_element_at(data, 0, len(data), 0)
    if element.end != len(data):
        raise _der_fail(element.end, f"{len(data) - element.end} bytes after {what}")
    return element


def der_children(element: DerElement) -> list[DerElement]:
    """The elements inside a constructed element, in order; they must fill it exactly."""
    if not element.constructed:
        raise _der_fail(element.start, f"tag 0x{element.tag:02x} is primitive, a constructed element was expected")
    out = []
    at = element.content_start
    while at < element.end:
        child = _der_element_at(element.data, at, element.end, element.depth + 1)
        out.append(child)
        at = child.end
    return out


def der_expect(element: DerElement, tag: int, what: str) -> DerElement:
    """`element`, which must carry `tag`."""
    if element.tag != tag:
        raise _der_fail(element.start, f"{what}: tag 0x{element.tag:02x} where 0x{tag:02x} was expected")
    return element


def der_explicit(element: DerElement, number: int, what: str) -> DerElement:
    """The one element inside the EXPLICIT tag [number]."""
    children = der_children(der_expect(element, der_context(number), what))
    if len(children) != 1:
        raise _der_fail(element.start, f"{what}: an EXPLICIT tag around {len(children)} elements, not one")
    return children[0]


def der_sequence(element: DerElement, what: str, low: int = 0, high: int | None = None) -> list[DerElement]:
    """The children of a SEQUENCE, which must number between `low` and `high`."""
    children = der_children(der_expect(element, DER_SEQUENCE, what))
    if len(children) < low or (high is not None and len(children) > high):
        wanted = f"{low}" if high == low else f"{low} to {high if high is not None else 'any'}"
        raise _der_fail(element.start, f"{what}: {len(children)} elements where {wanted} were expected")
    return children


def der_set_of(element: DerElement, what: str, tag: int = DER_SET) -> list[DerElement]:
    """The members of a SET OF (or of an IMPLICIT tag over one), which DER sorts by their encodings
    (X.690 11.6): signed attributes are signed as the bytes they are, and these are the only bytes."""
    members = der_children(der_expect(element, tag, what))
    encodings = [m.encoded for m in members]
    for before, after, member in zip(encodings, encodings[1:], members[1:], strict=False):
        if _der_set_key(after, len(before)) < _der_set_key(before, len(after)):
            raise _der_fail(member.start, f"{what}: a SET OF whose members are not in DER order")
    return members


def _der_set_key(encoding: bytes, other_length: int) -> bytes:
    # X.690 11.6: the shorter encoding is compared as if padded at its end with zero bytes.
    return encoding + bytes(max(0, other_length - len(encoding)))


def der_integer(element: DerElement, what: str, tag: int = DER_INTEGER) -> int:
    """The value of an INTEGER (two's complement, minimal)."""
    content = der_expect(element, tag, what).content
    if not content:
        raise _der_fail(element.start, f"{what}: an INTEGER of no bytes")
    if len(content) > 1 and ((content[0] == 0x00 and content[1] < 0x80) or (content[0] == 0xFF and content[1] >= 0x80)):
        raise _der_fail(element.content_start, f"{what}: an INTEGER with a redundant leading byte")
    return int.from_bytes(content, "big", signed=True)


def der_positive_integer(element: DerElement, what: str, tag: int = DER_INTEGER) -> int:
    """The value of an INTEGER that must be at least 1 (a serial number, a key's modulus)."""
    value = der_integer(element, what, tag)
    if value < 1:
        shown = str(value) if value.bit_length() <= 64 else f"a {value.bit_length()}-bit number"
        raise _der_fail(element.content_start, f"{what}: {shown}, where a positive INTEGER was expected")
    return value


def der_boolean(element: DerElement, what: str) -> bool:
    content = der_expect(element, DER_BOOLEAN, what).content
    if content not in (b"\x00", b"\xff"):
        raise _der_fail(element.content_start, f"{what}: a BOOLEAN other than 00 or FF")
    return content == b"\xff"


def der_null(element: DerElement, what: str) -> None:
    if der_expect(element, DER_NULL, what).content:
        raise _der_fail(element.content_start, f"{what}: a NULL with content")


def der_oid(element: DerElement, what: str) -> str:
    """The dotted form of an OBJECT IDENTIFIER ("1.2.840.113549.1.7.2")."""
    content = der_expect(element, DER_OID, what).content
    if not content:
        raise _der_fail(element.start, f"{what}: an OBJECT IDENTIFIER of no bytes")
    if content[-1] & 0x80:
        raise _der_fail(element.end - 1, f"{what}: an OBJECT IDENTIFIER ends inside an arc")
    arcs: list[int] = []
    value = 0
    for i, byte in enumerate(content):
        if value == 0 and byte == 0x80:
            raise _der_fail(element.content_start + i, f"{what}: an arc with a redundant leading byte")
        value = value << 7 | (byte & 0x7F)
        if value >> 64:  # no algorithm this verifier reads has an arc that large
            raise _der_fail(element.content_start + i, f"{what}: an OBJECT IDENTIFIER arc of more than 64 bits")
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    first = min(arcs[0] // 40, 2)
    return ".".join(str(a) for a in [first, arcs[0] - 40 * first, *arcs[1:]])


def der_octet_string(element: DerElement, what: str, tag: int = DER_OCTET_STRING) -> bytes:
    return der_expect(element, tag, what).content


def der_bit_string(element: DerElement, what: str, whole_bytes: bool = True) -> tuple[bytes, int]:
    """The bytes of a BIT STRING and its count of unused bits, which DER sets to zero; a key or a
    signature (`whole_bytes`) has none."""
    content = der_expect(element, DER_BIT_STRING, what).content
    if not content:
        raise _der_fail(element.start, f"{what}: a BIT STRING of no bytes")
    unused = content[0]
    if unused > 7 or (len(content) == 1 and unused):
        raise _der_fail(element.content_start, f"{what}: a BIT STRING with {unused} unused bits")
    if whole_bytes and unused:
        raise _der_fail(element.content_start, f"{what}: a BIT STRING that is not whole bytes")
    if unused and content[-1] & ((1 << unused) - 1):
        raise _der_fail(element.end - 1, f"{what}: a BIT STRING whose unused bits are not zero")
    return content[1:], unused


def _der_digits(text: str, element: DerElement, what: str) -> None:
    if not (text.isascii() and text.isdigit()):
        raise _der_fail(element.content_start, f"{what}: a time that is not digits where digits go")


def _der_calendar(year: int, month: int, day: int, hour: int, minute: int, second: int) -> bool:
    if not (1 <= month <= 12 and hour <= 23 and minute <= 59 and second <= 59):
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    return 1 <= day <= days


def _der_time(element: DerElement, what: str, digits: str, century: str) -> str:
    """The ISO 8601 form ("2026-01-02T03:04:05Z") of YYYYMMDDHHMMSS digits."""
    year = int(century + digits[:2]) if century else int(digits[:4])
    rest = digits[2:] if century else digits[4:]
    month, day, hour, minute, second = (int(rest[i : i + 2]) for i in range(0, 10, 2))
    if not _der_calendar(year, month, day, hour, minute, second):
        raise _der_fail(element.content_start, f"{what}: not a date and time of the calendar")
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}Z"


def der_generalized_time(element: DerElement, what: str) -> tuple[str, str]:
    """A GeneralizedTime in its DER form (YYYYMMDDHHMMSS[.fff]Z): the time truncated to the second
    in ISO 8601 ("2026-01-02T03:04:05Z"), and the text as the element holds it."""
    raw = der_expect(element, DER_GENERALIZED_TIME, what).content
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise _der_fail(element.content_start, f"{what}: a time that is not ASCII") from None
    if len(text) < 15 or not text.endswith("Z"):
        raise _der_fail(element.content_start, f"{what}: a GeneralizedTime other than YYYYMMDDHHMMSS[.f]Z")
    _der_digits(text[:14], element, what)
    fraction = text[14:-1]
    if fraction:
        # X.690 11.7: a decimal point, digits, and no trailing zero (nor a point alone).
        if fraction[0] != "." or len(fraction) == 1 or fraction.endswith("0"):
            raise _der_fail(element.content_start, f"{what}: a fraction of a second not in its DER form")
        _der_digits(fraction[1:], element, what)
    return _der_time(element, what, text[:14], ""), text


def der_utc_time(element: DerElement, what: str) -> str:
    """A UTCTime (YYMMDDHHMMSSZ, years 50-99 in the 1900s, RFC 5280 4.1.2.5.1) in ISO 8601."""
    raw = der_expect(element, DER_UTC_TIME, what).content
    if len(raw) != 13 or raw[-1:] != b"Z":
        raise _der_fail(element.content_start, f"{what}: a UTCTime other than YYMMDDHHMMSSZ")
    digits = raw[:12].decode("ascii", "replace")
    _der_digits(digits, element, what)
    return _der_time(element, what, digits, "19" if int(digits[:2]) >= 50 else "20")


def der_time(element: DerElement, what: str) -> str:
    """An X.509 Time (UTCTime or GeneralizedTime) in ISO 8601, to the second."""
    if element.tag == DER_UTC_TIME:
        return der_utc_time(element, what)
    return der_generalized_time(element, what)[0]


def der_text(element: DerElement, what: str) -> str:
    """A directory string (UTF8String, PrintableString or IA5String) as text."""
    if element.tag not in (DER_UTF8_STRING, DER_PRINTABLE_STRING, DER_IA5_STRING):
        raise _der_fail(element.start, f"{what}: tag 0x{element.tag:02x} is not a string type read here")
    try:
        return element.content.decode("utf-8" if element.tag == DER_UTF8_STRING else "ascii")
    except UnicodeDecodeError:
        raise _der_fail(element.content_start, f"{what}: a string that is not in its encoding") from None
