"""Text from a site, made safe to show: to a terminal, in JSON, in a message.

Every name and value the verifier prints came from files an attacker chose.
"""

import json
import re
from typing import Any


def printable(text: str) -> str:
    r"""`text` with everything that could change how a terminal shows it escaped.

    Names and values come from files an attacker chose: a file named "x\nPASS: all checks
    passed.\x1b[8m" must print as one visible line, not as a fake verdict hiding the real one.
    Escaped: control characters, bidi overrides and other format characters, separators other
    than the space, runs of three spaces or more, unassigned code points, and the bytes of a file
    name that is not UTF-8 (Python's surrogate escapes, shown as \xNN). A backslash is doubled,
    so every escape can be told from the same text written literally.
    """
    if text.isprintable() and "\\" not in text and "   " not in text:
        return text
    out = []
    for i, ch in enumerate(text):
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == " " and (text[i - 2 : i] == "  " or text[i + 1 : i + 3] == "  " or text[i - 1 : i + 2] == "   "):
            out.append("\\x20")  # a run of spaces could push a fake line onto the terminal's next row
        elif ch.isprintable():
            out.append(ch)
        elif 0xDC80 <= o <= 0xDCFF:  # an undecodable byte of a file name (surrogateescape)
            out.append(f"\\x{o - 0xDC00:02x}")
        elif o <= 0xFF:
            out.append(f"\\x{o:02x}")
        elif o <= 0xFFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    return "".join(out)


_JSON_UNSAFE_RE = re.compile("[^\n -~]")


def _json_escape(m: re.Match[str]) -> str:
    ch = m.group()
    if ch.isprintable():
        return ch
    o = ord(ch)
    if o > 0xFFFF:  # a JSON \u escape names UTF-16 code units
        o -= 0x10000
        return f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}"
    return f"\\u{o:04x}"


def safe_json(value: Any) -> str:
    """JSON text for a terminal: what printable() escapes is written as a \\u escape, which
    JSON readers decode back to the same string."""
    return _JSON_UNSAFE_RE.sub(_json_escape, json.dumps(value, ensure_ascii=False, indent=2))


def type_name(value: Any) -> str:
    """A JSON value's type in words, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a fraction"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def show(value: Any, limit: int = 80) -> str:
    """A short printable rendering of a found value for an error message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
