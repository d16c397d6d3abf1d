"""Canonical JSON (format v1 §1): strict parsing, the number rules, canonical bytes, and a streaming
reader for documents of a million elements.

Under the number rules (integers within ±(2^53−1), no fractions or exponents, object keys in
the Basic Multilingual Plane) RFC 8785 equals the standard library's sorted, compact
serialisation, so the verifier needs no third-party package to check canonical form.
"""

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from generator.verifier.core.errors import FormatError, Problem

MAX_SAFE_INTEGER = 2**53 - 1


def _reject_constant(name: str) -> Any:
    raise FormatError(f"{name} is not valid JSON")


def _pairs_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise FormatError(f"duplicate key {dup!r}")
    return result


def _reject_fraction(text: str) -> Any:
    raise FormatError(f"a non-integer number {text} (format v1 §1: integers only; write other quantities as strings)")


def strict_decoder(
    parse_float: Callable[[str], Any] = _reject_fraction, parse_int: Callable[[str], Any] | None = None
) -> json.JSONDecoder:
    """A JSON decoder that refuses duplicate keys and NaN; numbers as `parse_float` and
    `parse_int` say (a results file keeps a fraction to quote it in an error)."""
    return json.JSONDecoder(
        object_pairs_hook=_pairs_without_duplicates,
        parse_constant=_reject_constant,
        parse_float=parse_float,
        parse_int=parse_int,
    )


_STRICT_DECODER = strict_decoder()


_SURROGATE_RE = re.compile("[\ud800-\udfff]")
# Conservative: an escaped backslash followed by "ud800" matches too, and is then walked.
_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F]")


def check_no_surrogates(value: Any) -> None:
    # json.loads turns "\ud800" escapes into lone surrogates, which no UTF-8 document can hold.
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if _SURROGATE_RE.search(v):
                raise FormatError("string holds a lone surrogate")
        elif isinstance(v, dict):
            for k, item in v.items():
                if _SURROGATE_RE.search(k):
                    raise FormatError("object key holds a lone surrogate")
                stack.append(item)
        elif isinstance(v, list):
            stack.extend(v)


def loads_strict(data: bytes) -> Any:
    """Parse JSON bytes strictly: UTF-8 only, no duplicate keys, no lone surrogates, no NaN,
    and no fractions or exponents, which no document of format v1 §1 may hold."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"not valid UTF-8 at byte {e.start}") from None
    try:
        value = _STRICT_DECODER.decode(text)
    except json.JSONDecodeError as e:
        raise FormatError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise FormatError("JSON nested too deeply") from None
    except ValueError as e:  # an integer of thousands of digits, beyond what int() converts
        raise FormatError(f"not valid JSON: {str(e)[:100]}") from None
    # A lone surrogate can only come from a \uD800-\uDFFF escape (strict UTF-8 decoding refuses
    # encoded ones): a text without one needs no walk over every string it holds.
    if _SURROGATE_ESCAPE_RE.search(text):
        check_no_surrogates(value)
    return value


def canonical_text(value: Any) -> str:
    """The canonical (RFC 8785) text of a value that obeys the number rules of format v1 §1."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def canonical_bytes(value: Any) -> bytes:
    """The canonical (RFC 8785) bytes of a value that obeys the number rules of format v1 §1.

    Under those rules JCS equals this standard-library serialisation, which lets the verifier
    check canonical form without any third-party package.
    """
    return canonical_text(value).encode("utf-8")


_NON_BMP_RE = re.compile("[\U00010000-\U0010ffff]")


def number_rule_problems(value: Any, where: str = "") -> list[Problem]:
    """Where a value breaks format v1 §1: fractions, exponents, huge integers, keys beyond the BMP."""
    problems: list[Problem] = []
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, bool) or v is None or isinstance(v, str):
            continue
        if isinstance(v, float):
            problems.append(
                Problem("a non-integer number", where=path, expected="an integer or a string", found=repr(v))
            )
        elif isinstance(v, int):
            if abs(v) > MAX_SAFE_INTEGER:
                problems.append(Problem("an integer beyond ±(2^53−1)", where=path, found=str(v)))
        elif isinstance(v, list):
            stack.extend((f"{path}[{i}]", x) for i, x in enumerate(v))
        elif isinstance(v, dict):
            for k, x in v.items():
                if _NON_BMP_RE.search(k):
                    problems.append(
                        Problem("object key outside the Basic Multilingual Plane", where=path, found=repr(k))
                    )
                stack.append((f"{path}.{k}" if path else k, x))
        else:
            problems.append(Problem("not a JSON value", where=path, found=type(v).__name__))
    problems.reverse()
    return problems


def _parse_int_checked(text: str) -> int:
    if len(text) > 17:  # 2^53 - 1 has 16 digits; never hand int() thousands of them
        raise FormatError(f"an integer beyond ±(2^53−1): {text[:20]}…")
    value = int(text)
    if abs(value) > MAX_SAFE_INTEGER:
        raise FormatError(f"an integer beyond ±(2^53−1): {text}")
    return value


# Parses with the C decoder: no Python hook per object. Fractions, NaN and integers beyond
# 2^53 - 1 are refused as they are read.
_FAST_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_reject_fraction, parse_int=_parse_int_checked
)


# Only a 4-byte UTF-8 sequence (lead byte 0xF0-0xF4) can put a key outside the BMP: without
# one, walking the value for the number rules finds nothing the decoder did not refuse.
_NEEDS_WALK_RE = re.compile(rb"[\xf0-\xf4]")


def _needs_number_walk(data: bytes) -> bool:
    return _NEEDS_WALK_RE.search(data) is not None


def parse_canonical_text(text: str, data: bytes | None = None) -> Any:
    """Parse one canonical JSON text; raise FormatError, as precisely as possible, if it is not."""
    try:
        value = _FAST_DECODER.decode(text)
    except json.JSONDecodeError as e:
        raise FormatError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise FormatError("JSON nested too deeply") from None
    _require_canonical(value, text, data if data is not None else text.encode("utf-8"))
    return value


def _require_canonical(value: Any, text: str, raw: bytes) -> None:
    """Speed matters: a ledger holds a million documents. Canonical form is checked by equality
    with the re-serialisation, which also rules out duplicate keys (one would be lost) and
    escaped lone surrogates (they would come back unescaped); only when the text differs is it
    parsed again, slowly, to say why."""
    if _needs_number_walk(raw):
        rules = number_rule_problems(value)
        if rules:
            p = rules[0]
            raise FormatError(f"{p.message} at {p.where or 'top level'}" + (f": {p.found}" if p.found else ""))
    try:
        canonical = canonical_text(value)
    except RecursionError:
        raise FormatError("JSON nested too deeply") from None
    if canonical != text:
        _STRICT_DECODER.decode(text)  # raises for a duplicate key
        check_no_surrogates(value)
        raise FormatError("bytes are not in canonical (RFC 8785) form")


def parse_canonical(data: bytes) -> Any:
    """Parse published JSON bytes and require them to be canonical; raise FormatError if not."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError(f"not valid UTF-8 at byte {e.start}") from None
    return parse_canonical_text(text, data)


def iter_canonical_array(
    data: bytes, key: str, window: int = 1 << 20, start: int = 0, ends_at: list[int] | None = None
) -> tuple[Iterator[tuple[Any, bytes]], dict[str, Any]]:
    """Stream the elements of a large canonical document's first-sorted list `key`.

    A ledger of a million leaves is a document of hundreds of megabytes; parsing it whole would
    build a million dicts at once. A canonical document whose first key (in sorted order) is
    `key` starts with `{"key":[`, so its elements can be decoded one window at a time, each
    checked for canonical form on its own. Returns (elements, rest): the iterator yields
    (element, its canonical bytes); `rest` holds the document's other members once the
    iterator is exhausted. Raises FormatError for anything that is not canonical.

    `start`, if not 0, is the offset just after an element (where an earlier run stopped, whose
    bytes up to there the caller has checked): the elements after it are yielded. `ends_at`, if
    given, receives the offset just after the last element.
    """
    prefix = b'{"' + key.encode() + b'":['
    if not data.startswith(prefix):
        raise FormatError(f"document does not start with {prefix.decode()!r} (canonical form with {key!r} first)")
    rest: dict[str, Any] = {}

    def elements() -> Iterator[tuple[Any, bytes]]:
        pos = start or len(prefix)
        n = len(data)
        first = not start
        while True:
            if data[pos : pos + 1] == b"]":
                if ends_at is not None:
                    ends_at.append(pos)
                pos += 1
                break
            if not first:
                if data[pos : pos + 1] != b",":
                    raise FormatError(f"expected ',' or ']' at byte {pos}")
                pos += 1
            first = False
            # Parse as many elements from a window as it holds; an element cut by the window's
            # end is parsed again from a fresh window.
            text, value, stop, end = _decode_window(data, pos, window)
            idx = 0
            while True:
                raw_text = text[idx:stop]
                raw = raw_text.encode("utf-8")
                try:
                    _require_canonical(value, raw_text, raw)
                except FormatError as e:
                    raise FormatError(f"element at byte {pos}: {e}") from None
                yield value, raw
                pos += len(raw)
                idx = stop
                # Another whole element in this window?
                if text[idx : idx + 1] != ",":
                    break
                try:
                    value, stop = _FAST_DECODER.raw_decode(text, idx + 1)
                except (json.JSONDecodeError, RecursionError):
                    break  # cut by the window's end (or malformed): retry from a fresh window
                if stop == len(text) and end < n:
                    break
                pos += 1
                idx += 1
        rest.update(members_after(data, pos, key))

    return elements(), rest


def _decode_window(data: bytes, pos: int, window: int) -> tuple[str, Any, int, int]:
    """The text of a window of `data` from `pos` that ends on a character boundary and holds at
    least one whole element, the element, where its text stops, and where the window ends in
    `data`: a window too small for the element is tried again four times as large."""
    n = len(data)
    size = window
    while True:
        end = min(n, pos + size)
        while end < n and (data[end] & 0xC0) == 0x80:
            end -= 1
        try:
            text = data[pos:end].decode("utf-8")
        except UnicodeDecodeError as e:
            raise FormatError(f"not valid UTF-8 at byte {pos + e.start}") from None
        try:
            value, stop = _FAST_DECODER.raw_decode(text, 0)
        except json.JSONDecodeError:
            stop = -1
        except RecursionError:
            raise FormatError(f"element at byte {pos} nested too deeply") from None
        # A bare number can end exactly where the window cuts it: read more to be sure.
        if stop < 0 or (stop == len(text) and end < n):
            if end >= n:
                raise FormatError(f"malformed JSON element at byte {pos}") from None
            size *= 4
            continue
        return text, value, stop, end


def members_after(data: bytes, pos: int, key: str) -> dict[str, Any]:
    """The members of a canonical document after its first-sorted list `key`, which ends just
    before `pos`. Raises FormatError unless they are canonical and sort after `key`."""
    tail = data[pos:]
    if tail == b"}":
        return {}
    if not tail.startswith(b","):
        raise FormatError(f"expected ',' or '}}' after the {key!r} list at byte {pos}")
    others = parse_canonical(b"{" + tail[1:])
    if not isinstance(others, dict) or any(k <= key for k in others):
        raise FormatError(f"members after {key!r} are not in canonical order")
    return others
