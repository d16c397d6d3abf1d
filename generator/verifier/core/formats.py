"""The field formats of format v1 §1 and §3: identifiers, times, hashes, decimals, origins, paths,
equality of JSON values, and the shapes of items and reveal documents."""

import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Any, TypeGuard

from generator.verifier.core.canonical import canonical_text, number_rule_problems
from generator.verifier.core.confusables import draws_nothing
from generator.verifier.core.errors import Problem
from generator.verifier.core.text import show, type_name

FORMAT_VERSION = 1

# A decimal string of the methodology or a similarity: far more digits than any real quantity,
# far fewer than the 4,300 that Python's int() refuses to convert.
MAX_DECIMAL_LENGTH = 1000
HEX64_RE = re.compile(r"^[0-9a-f]{64}$")
ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
GATE_RE = re.compile(r"^[a-z0-9]{1,16}$")
VERSION_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,31}$")
DECIMAL_RE = re.compile(r"^(0|[1-9][0-9]*)(\.[0-9]+)?$")
TIME_RE = re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z$")
KINDS = ("scalar", "text", "array")
TIERS = ("critical", "high", "low")
REVEAL_REASONS = ("public-gate", "retired")


def sha256_hex(data: bytes) -> str:
    """A hash as JSON holds it (format v1 §1): lowercase hex SHA-256."""
    return hashlib.sha256(data).hexdigest()


def is_valid_key_name(name: Any) -> TypeGuard[str]:
    """A C2SP signed-note key name as Go's note package checks it: non-empty, no '+', no space."""
    return isinstance(name, str) and bool(name) and "+" not in name and not any(c.isspace() for c in name)


def is_id(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and ID_RE.fullmatch(value) is not None


# Ids one a line (ID_RE's pattern between newlines): a run's or certificate's items checked by
# one search in C, not a call an item (tens of thousands of runs of 25 items, each verification).
_IDS_LINES_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}(?:\n[a-z0-9][a-z0-9_-]{0,63})*")


def ids_text(values: Sequence[Any]) -> str | None:
    """The ids `values` one a line, if every one is an id (is_id); else None."""
    if not values:
        return ""
    if not all(isinstance(v, str) for v in values):
        return None
    text = "\n".join(values)
    # The count of lines too: a value holding a newline would read as two ids.
    return text if text.count("\n") == len(values) - 1 and _IDS_LINES_RE.fullmatch(text) else None


def is_gate_id(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and GATE_RE.fullmatch(value) is not None


def is_time(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and TIME_RE.fullmatch(value) is not None


def is_hex64(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and HEX64_RE.fullmatch(value) is not None


def is_decimal(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and DECIMAL_RE.fullmatch(value) is not None and len(value) <= MAX_DECIMAL_LENGTH


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def is_origin(value: Any) -> TypeGuard[str]:
    # A character that draws nothing (a variation selector, a Hangul filler) makes an origin that
    # reads exactly as another: no honest log needs one.
    return (
        isinstance(value, str)
        and bool(value)
        and not value.startswith("{")
        and "://" not in value
        and is_valid_key_name(value)
        and value.isprintable()
        and not any(draws_nothing(ch) for ch in value)
    )


# Files Python would import or run if they sat next to a module search path: a site has no
# business shipping any, apart from the verifier the manifest names.
PYTHON_CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyw", ".pyd", ".pth", ".so")


# What makes a path unsafe, in one search in C (every path of a site is checked, some many
# times: 1.4 million calls as a mirror follows the bench's 322,000 files): a segment that is
# empty (a leading '/', '//', a trailing '/'), '.' or '..'; a backslash; a control character.
_UNSAFE_PATH = re.compile(r"(?:^|/)\.{0,2}(?:/|$)|[\\\x00-\x1f]")


def is_safe_path(value: Any) -> TypeGuard[str]:
    """A site-relative path: '/' separated, never absolute, never '..', no backslash."""
    return isinstance(value, str) and _UNSAFE_PATH.search(value) is None


# A checksum list's lines (format v1 §7) read in C: every line `<64 hex>  <path>` with its
# newline; the paths then checked all at once, one per line (a newline cannot be in one).
_SUMS_ROW = re.compile(r"([0-9a-f]{64})  ([^\n]+)\n")
_UNSAFE_PATH_LINE = re.compile(r"(?m)(?:^|/)\.{0,2}(?:/|$)|[\\\x00-\x09\x0b-\x1f]")


def all_safe_paths(paths: list[str]) -> bool:
    """Whether every path is safe (is_safe_path): one search over them all, joined by newlines
    (so a path holding one, which would read as two, is refused by the count of them)."""
    joined = "\n".join(paths)
    return all(paths) and joined.count("\n") == len(paths) - 1 and _UNSAFE_PATH_LINE.search(joined) is None


def plain_sums_rows(text: str) -> list[tuple[str, str]] | None:
    """The (SHA-256, path) of every line of a checksum list's text when each line is well
    formed, ends with a newline and names a safe path, in strictly increasing order (by code
    point, which is the order of the UTF-8 bytes); else None, and the caller reads it line by
    line to say what is wrong. A list of 300,000 lines is read here without a Python step a line."""
    # Only a text ending with a newline can be plain, and only there is the search linear: on
    # a last line without one, every `<64 hex>  ` in it would read to the end and back.
    if not text.endswith("\n"):
        return None
    rows: list[tuple[str, str]] = _SUMS_ROW.findall(text)
    if not rows:
        return None
    paths = [path for _, path in rows]
    # The matches cover the text exactly (no line left out, nothing before or between them).
    if 67 * len(rows) + sum(map(len, paths)) != len(text) or not all_safe_paths(paths):
        return None
    if paths != sorted(paths) or len(set(paths)) != len(paths):
        return None
    return rows


_SCALAR_TYPES = (str, int, bool, type(None))


def same(a: Any, b: Any) -> bool:
    """Equality of two JSON values as format v1 §1 defines it (equal canonical bytes): 1 is not true."""
    if type(a) in _SCALAR_TYPES and type(b) in _SCALAR_TYPES:
        # For strings, integers, booleans and null, equal canonical bytes means same type and
        # value (bool is not int here: type() is exact). Most comparisons are these.
        return type(a) is type(b) and a == b
    try:
        return canonical_text(a) == canonical_text(b)
    except (TypeError, ValueError, RecursionError):
        return False


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, bool)) or is_int(v)


def value_kind_problem(kind: str, value: Any) -> str | None:
    """Why `value` cannot be the value of a field of `kind`, or None (format v1 §5 answer values)."""
    if kind == "scalar" and not _is_scalar(value):
        return "a string, an integer, a boolean or null"
    if kind == "text" and not isinstance(value, str):
        return "a string"
    if kind == "array" and not (isinstance(value, list) and all(_is_scalar(x) for x in value)):
        return "a list of strings, integers, booleans or nulls"
    return None


def check_keys(obj: Any, required: Iterable[str], optional: Iterable[str] = (), where: str = "") -> list[Problem]:
    """Problems with the member names of an object: missing required ones, unknown ones."""
    if not isinstance(obj, dict):
        return [Problem("must be an object", where=where, found=type_name(obj))]
    req, opt = list(required), set(optional)
    problems = [Problem(f"missing {k!r}", where=where) for k in req if k not in obj]
    unknown = sorted(k for k in obj if k not in req and k not in opt)
    if unknown:
        problems.append(
            Problem(f"unknown member{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}", where=where)
        )
    return problems


def check_answer(answer: Any, where: str = "answer") -> list[Problem]:
    """Problems with an item's answer: fields, kinds, tiers and value types (format v1 §3, §5)."""
    if not isinstance(answer, dict) or not answer:
        return [Problem("must be an object with at least one field", where=where, found=type_name(answer))]
    problems: list[Problem] = []
    for name, f in answer.items():
        w = f"{where}.{name}"
        if not name:
            problems.append(Problem("field names must not be empty", where=where))
        keys = check_keys(f, ("kind", "tier", "value"), where=w)
        if keys:
            problems.extend(keys)
            if not isinstance(f, dict):
                continue
        kind, tier = f.get("kind"), f.get("tier")
        if "kind" in f and kind not in KINDS:
            problems.append(Problem("unknown kind", where=f"{w}.kind", expected=" | ".join(KINDS), found=show(kind)))
        if "tier" in f and tier not in TIERS:
            problems.append(Problem("unknown tier", where=f"{w}.tier", expected=" | ".join(TIERS), found=show(tier)))
        if kind in KINDS and "value" in f:
            want = value_kind_problem(kind, f["value"])
            if want:
                problems.append(
                    Problem(f"value of a {kind} field", where=f"{w}.value", expected=want, found=show(f["value"]))
                )
    return problems


def check_item(item: Any, where: str = "item") -> list[Problem]:
    """Problems with a committed item: a prompt string and a well-formed answer."""
    if not isinstance(item, dict):
        return [Problem("must be an object", where=where, found=type_name(item))]
    problems: list[Problem] = []
    if not isinstance(item.get("prompt"), str):
        problems.append(Problem("'prompt' must be a string", where=where, found=type_name(item.get("prompt"))))
    problems += check_answer(item.get("answer"), f"{where}.answer" if where else "answer")
    problems += number_rule_problems(item, where)
    return problems


REVEAL_KEYS = ("type", "v", "id", "gate", "salt", "item")


def check_reveal_document(doc: Any) -> list[Problem]:
    """Problems with a reveal document's shape (format v1 §3); its hash is checked elsewhere."""
    problems = check_keys(doc, REVEAL_KEYS)
    if not isinstance(doc, dict):
        return problems
    if doc.get("type") != "item-reveal" or not is_v1(doc):
        problems.append(
            Problem(
                "wrong type or version",
                expected='"item-reveal", v 1',
                found=f"{show(doc.get('type'))}, v {show(doc.get('v'))}",
            )
        )
    if not is_id(doc.get("id")):
        problems.append(Problem("malformed item id", where="id", found=show(doc.get("id"))))
    if not is_gate_id(doc.get("gate")):
        problems.append(Problem("malformed gate id", where="gate", found=show(doc.get("gate"))))
    if not is_hex64(doc.get("salt")):
        problems.append(Problem("salt must be 64 lowercase hex digits", where="salt", found=show(doc.get("salt"))))
    if "item" in doc:
        problems += check_item(doc["item"])
    return problems


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one: for reading a member of a document
    whose shape another check reports."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """`value` if it is a JSON list, else an empty one (as as_dict)."""
    return value if isinstance(value, list) else []


# The manifest's `v` names the site's format: 1 for a v1 or v2 site (v2 only adds files beside
# v1's), 3 for a v3 site (docs/formats/v3.md), 4 for a v4 site (docs/formats/v4.md: v3 with the
# manifest's lists in parts), which earlier readers must not take for theirs.
MANIFEST_V3 = 3
MANIFEST_V4 = 4


def site_format(manifest: dict[str, Any]) -> int:
    """The format a manifest says its site has: 3 or 4 for a v3 or v4 manifest, else 2 (which
    reads v1 too). Every rule of format 3 holds in format 4: `site_format(m) >= MANIFEST_V3`."""
    v = manifest.get("v")
    return v if is_int(v) and v in (MANIFEST_V3, MANIFEST_V4) else 2


def is_v1(doc: dict[str, Any]) -> bool:
    """The document's `v` is the integer 1 (true is not 1)."""
    return is_int(doc.get("v")) and doc.get("v") == FORMAT_VERSION
