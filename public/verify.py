#!/usr/bin/env python3
"""Offline verifier for a transparency site (public formats v1).

    python3 -P /path/to/verify.py SITE [--key VKEY_OR_FINGERPRINT] [--json] [--debug]
    python3 -P /path/to/verify.py mirror URL DIR [--key VKEY_OR_FINGERPRINT] [--jobs N]

Checks every hash, signature and Merkle root of a downloaded site, replays its ledger and
recomputes what follows from it, every certificate's scores, grades and verdict included.
Needs only Python 3.11+ and PyNaCl. Exit status: 0 every check passed, 1 at least one failed,
2 the site could not be read, the arguments are wrong, or the verifier cannot run.

A copy found inside a site proves nothing by itself: it was shipped by the party being checked.
Obtain verify.py from the transparency-site project (generator/verify.py at the release the
site names), compare its SHA-256 with the one the project publishes for the release (README,
"Verifier releases"), keep it outside the site's folder and run it there; -P keeps Python from
importing modules from the script's folder.

GENERATED FILE: do not edit. It is the modules of generator/verifier/ bundled in this order by
`python -m generator.verifier.bundle`; read them there, one format concept each. Contents:

    generator/verifier/core/isolation.py                lines   114 to   267
    generator/verifier/core/text.py                     lines   268 to   351
    generator/verifier/core/errors.py                   lines   352 to   418
    generator/verifier/core/canonical.py                lines   419 to   727
    generator/verifier/core/confusables_table.py        lines   728 to  1064
    generator/verifier/core/confusables.py              lines  1065 to  1171
    generator/verifier/core/formats.py                  lines  1172 to  1470
    generator/verifier/core/sodium.py                   lines  1471 to  1514
    generator/verifier/core/public_keys.py              lines  1515 to  1791
    generator/verifier/core/note.py                     lines  1792 to  1901
    generator/verifier/crypto/mldsa.py                  lines  1902 to  2199
    generator/verifier/tlog/merkle.py                   lines  2200 to  2340
    generator/verifier/tlog/subtrees.py                 lines  2341 to  2419
    generator/verifier/tlog/tlogproof.py                lines  2420 to  2492
    generator/verifier/tlog/tiles.py                    lines  2493 to  2845
    generator/verifier/tlog/tile_proofs.py              lines  2846 to  2953
    generator/verifier/tlog/cosignature.py              lines  2954 to  3253
    generator/verifier/tlog/log_list.py                 lines  3254 to  3483
    generator/verifier/tlog/policy.py                   lines  3484 to  3770
    generator/verifier/tlog/witnessing.py               lines  3771 to  3887
    generator/verifier/core/idindex.py                  lines  3888 to  3971
    generator/verifier/crypto/der.py                    lines  3972 to  4299
    generator/verifier/crypto/rsa.py                    lines  4300 to  4417
    generator/verifier/crypto/ecdsa.py                  lines  4418 to  4585
    generator/verifier/crypto/signatures.py             lines  4586 to  4772
    generator/verifier/crypto/x509.py                   lines  4773 to  4971
    generator/verifier/crypto/timestamp_token.py        lines  4972 to  5374
    generator/verifier/crypto/hash_to_g1.py             lines  5375 to  5652
    generator/verifier/crypto/bls12_381.py              lines  5653 to  6143
    generator/verifier/crypto/drand.py                  lines  6144 to  6215
    generator/verifier/rules/beacon.py                  lines  6216 to  6467
    generator/verifier/rules/methodology_rules.py       lines  6468 to  6827
    generator/verifier/rules/scoring.py                 lines  6828 to  7127
    generator/verifier/rules/agreement_statistics.py    lines  7128 to  7387
    generator/verifier/rules/labelsets.py               lines  7388 to  7726
    generator/verifier/rules/subjects.py                lines  7727 to  7992
    generator/verifier/rules/withdrawals.py             lines  7993 to  8031
    generator/verifier/rules/events.py                  lines  8032 to  8090
    generator/verifier/rules/draws.py                   lines  8091 to  8236
    generator/verifier/tlog/keyring.py                  lines  8237 to  8445
    generator/verifier/rules/ledger.py                  lines  8446 to  8928
    generator/verifier/rules/draw_pools.py              lines  8929 to  9162
    generator/verifier/rules/drawn_items.py             lines  9163 to  9498
    generator/verifier/exports/eee_record.py            lines  9499 to  9837
    generator/verifier/exports/cbor.py                  lines  9838 to  9959
    generator/verifier/exports/scitt_statement.py       lines  9960 to 10145
    generator/verifier/exports/credential.py            lines 10146 to 10450
    generator/verifier/memory/ledger_snapshot.py        lines 10451 to 10694
    generator/verifier/memory/checkpoint_memory.py      lines 10695 to 10872
    generator/verifier/memory/list_memory.py            lines 10873 to 11077
    generator/verifier/memory/release_memory.py         lines 11078 to 11448
    generator/verifier/rules/answers.py                 lines 11449 to 11516
    generator/verifier/rules/runs.py                    lines 11517 to 11889
    generator/verifier/rules/lineage.py                 lines 11890 to 12175
    generator/verifier/rules/score_edits.py             lines 12176 to 12261
    generator/verifier/rules/evidence.py                lines 12262 to 12356
    generator/verifier/rules/certificates.py            lines 12357 to 12824
    generator/verifier/rules/certificate_documents.py   lines 12825 to 12920
    generator/verifier/rules/recheck.py                 lines 12921 to 13287
    generator/verifier/core/report.py                   lines 13288 to 13450
    generator/verifier/core/windowed.py                 lines 13451 to 13481
    generator/verifier/core/folder.py                   lines 13482 to 13910
    generator/verifier/core/checksum_tree.py            lines 13911 to 14136
    generator/verifier/tlog/rotation.py                 lines 14137 to 14321
    generator/verifier/memory/folder_memory.py          lines 14322 to 14402
    generator/verifier/memory/mirror_record.py          lines 14403 to 14539
    generator/verifier/site/manifest_parts.py           lines 14540 to 14698
    generator/verifier/site/release.py                  lines 14699 to 15006
    generator/verifier/site/checksum_lists.py           lines 15007 to 15307
    generator/verifier/site/zip_layout.py               lines 15308 to 15507
    generator/verifier/site/download.py                 lines 15508 to 15902
    generator/verifier/site/history.py                  lines 15903 to 16272
    generator/verifier/site/history_v3.py               lines 16273 to 16451
    generator/verifier/site/commitment_parts.py         lines 16452 to 16640
    generator/verifier/site/ledger_files.py             lines 16641 to 16999
    generator/verifier/site/certificate_memo.py         lines 17000 to 17160
    generator/verifier/site/run_memo.py                 lines 17161 to 17282
    generator/verifier/site/publication.py              lines 17283 to 17512
    generator/verifier/rules/revocations.py             lines 17513 to 17632
    generator/verifier/site/export_files.py             lines 17633 to 17865
    generator/verifier/site/certificate_records.py      lines 17866 to 18031
    generator/verifier/site/certificate_files.py        lines 18032 to 18488
    generator/verifier/site/agreement_files.py          lines 18489 to 18633
    generator/verifier/site/timestamp_files.py          lines 18634 to 18812
    generator/verifier/site/log_list_file.py            lines 18813 to 18884
    generator/verifier/site/accounting.py               lines 18885 to 19190
    generator/verifier/site/remote.py                   lines 19191 to 19461
    generator/verifier/site/mirror_folder.py            lines 19462 to 19751
    generator/verifier/site/mirror.py                   lines 19752 to 20074
    generator/verifier/site/verify_site.py              lines 20075 to 20484
    generator/verifier/site/command_line.py             lines 20485 to 20947
"""

# ==============================================================================================
# generator/verifier/core/isolation.py: Keeping the site's code out of the verifier.
# ==============================================================================================

import sys

if __name__ == "__main__" and sys.version_info < (3, 11):
    # Before anything an older Python cannot run (sys.flags.safe_path is 3.11's): a verifier that
    # cannot run says so and exits 2, never 1, the code of a failed verification.
    sys.stderr.write(
        f"verify.py: cannot run: it needs Python 3.11 or newer, and {sys.executable} is "
        f"{sys.version_info[0]}.{sys.version_info[1]}; run it with a newer one: python3.11 -P verify.py SITE "
        "(or later)\n"
    )
    sys.exit(2)

if __name__ == "__main__" and not sys.flags.safe_path and sys.path:
    del sys.path[0]

import os  # already loaded (frozen) by every interpreter that runs a script


def _real(path: str) -> str:
    try:
        return os.path.realpath(path or ".")
    except (OSError, ValueError):
        return path


def _untrusted_dirs() -> set[str]:
    """This file's folder and the working directory: a site's folder, when run as documented."""
    dirs = {_real(os.path.dirname(os.path.abspath(__file__)))}
    try:  # noqa: SIM105 - contextlib is not imported yet, on purpose
        dirs.add(_real(os.getcwd()))
    except OSError:  # the working directory was removed
        pass
    return dirs


if __name__ == "__main__":
    # PYTHONPATH or an odd launcher can still name the current folder ('' or '.') or this one.
    _UNTRUSTED = _untrusted_dirs()
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and _real(p) not in _UNTRUSTED]


def own_file() -> str:
    """The verify.py this code is: this very file in the bundle, else the bundle the project
    generates beside the package (generator/verify.py, two folders up from this module)."""
    here = os.path.abspath(__file__)
    if os.path.basename(here) == "verify.py":
        return here
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(here))), "verify.py")


def interpreter_dirs() -> list[str]:
    """The running interpreter's own installation: its prefixes, that is a virtual environment's
    folder (whose site-packages the auditor's own pip filled) and the Python it was made from."""
    return sorted({_real(p) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix) if p})


def interpreter_folder_in(root: str) -> str | None:
    """The running interpreter's prefix (a virtual environment's folder), as a '/' path relative
    to `root`, when it lies strictly inside that folder; else None. The site's walk leaves it
    out: it holds the auditor's Python and PyNaCl, not files of the site."""
    base, prefix = _real(root), _real(sys.prefix)
    if prefix == base or not path_within(prefix, base):
        return None
    return os.path.relpath(prefix, base).replace(os.sep, "/")


def path_within(entry: str, folder: str) -> bool:
    """Whether path `entry` is `folder` or lies under it (both as given: resolve them first)."""
    return entry == folder or entry.startswith(folder.rstrip(os.sep) + os.sep)


def foreign_modules(untrusted: list[str]) -> list[tuple[str, str]]:
    """Loaded modules that came from the current folder, or from inside an untrusted folder
    (the site, this file's folder), as (name, file). A module's search-path entry is found by
    walking up from its file once per dotted part of its name.

    The innermost folder holding the entry decides: a module of the running interpreter's own
    installation (interpreter_dirs) is not the site's code even when that installation, a virtual
    environment the auditor made, lies inside the site's folder; but a site inside that
    installation is still the site, and anything else inside the site is refused. Whoever runs a
    Python the site shipped has already run the site's code: no check made from inside can undo
    that, which is why the documentation has the auditor make their own environment."""
    roots = [_real(d) for d in untrusted]
    cwd = _untrusted_dirs()
    own = interpreter_dirs()
    found = []
    for name, module in sorted(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) if spec is not None and getattr(spec, "has_location", False) else None
        if name == "__main__" or not isinstance(origin, str):
            continue
        entry = os.path.dirname(_real(origin))
        for _ in range(name.count(".") + (os.path.basename(origin).startswith("__init__.") and 1)):
            entry = os.path.dirname(entry)
        refused = max([len(r) for r in roots if path_within(entry, r)] + [len(entry) if entry in cwd else -1])
        trusted = max([len(p) for p in own if path_within(entry, p)], default=-1)
        # Both are folders holding the entry, so the longer path is the inner one; a tie is refused.
        if refused >= 0 and refused >= trusted:
            found.append((name, origin))
    return found


# ==============================================================================================
# The standard library, imported once the site's folder is off sys.path
# ==============================================================================================
import argparse
import base64
import binascii
import bisect
import calendar
import contextlib
import ctypes
import dataclasses
import datetime
import functools
import hashlib
import http.client
import io
import itertools
import json
import math
import operator
import re
import shutil
import ssl
import stat
import struct
import tempfile
import threading
import time
import traceback
import unicodedata
import urllib.parse
import urllib.request
import weakref
import zipfile
import zlib
from array import array
from collections import Counter, deque
from collections.abc import Callable, Container, Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache, partial
from json.encoder import encode_basestring
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import IO, Any, BinaryIO, Generic, Literal, TextIO, TypeAlias, TypedDict, TypeGuard, TypeVar
from urllib.parse import urlsplit

# ==============================================================================================
# generator/verifier/core/text.py: Text from a site, made safe to show: to a terminal, in JSON, in a message.
# ==============================================================================================

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


# ==============================================================================================
# generator/verifier/core/errors.py: The verifier's exceptions, and Problem: one failed check, located and explained.
# ==============================================================================================

class VerifyError(Exception):
    """Base of every error the verifier raises on purpose."""


class FormatError(VerifyError, ValueError):
    """Bytes that are not what the format says they must be."""


class ProofError(VerifyError, ValueError):
    """A Merkle proof that is malformed or does not prove what it claims."""


class RootMismatchError(ProofError):
    """A proof recomputes to a root other than the expected one."""

    def __init__(self, expected: bytes, computed: bytes) -> None:
        super().__init__(f"computed root {computed.hex()} does not match expected root {expected.hex()}")
        self.expected = expected
        self.computed = computed


class NoteError(VerifyError, ValueError):
    """A signed note that is malformed or lacks a valid signature by a known key."""


@dataclass(frozen=True)
class Problem:
    """One failed check: where it is, what is wrong, and the two values that disagree."""

    message: str
    file: str = ""
    where: str = ""
    expected: str | None = None
    found: str | None = None

    def at(self, file: str, where: str = "") -> "Problem":
        """The same problem, located in `file` (and under `where` inside it)."""
        inner = f"{where}.{self.where}" if where and self.where else (where or self.where)
        return dataclasses.replace(self, file=file, where=inner)

    def describe(self) -> str:
        """The problem for a person: one line (and one each for expected and found), every
        part of it escaped by printable()."""
        head = printable(self.file or "site")
        if self.where:
            head += f" [{printable(self.where)}]"
        text = f"{head}: {printable(self.message)}"
        if self.expected is not None:
            text += f"\n      expected: {printable(self.expected)}"
        if self.found is not None:
            text += f"\n      found:    {printable(self.found)}"
        return text


class SiteUnreadable(VerifyError):
    """The site could not be read at all (exit status 2)."""


class ScoringError(VerifyError, ValueError):
    """The scoring engine was given what format v1 §5 cannot score (a bug in its caller, or data a
    shape check should have refused first)."""


# ==============================================================================================
# generator/verifier/core/canonical.py: Canonical JSON (format v1 §1): strict parsing, the number rules, canonical
#     bytes, and a streaming reader for documents of a million elements.
# ==============================================================================================

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


# ==============================================================================================
# generator/verifier/core/confusables_table.py: Unicode's confusables table (UTS #39, section 4), as data: generated,
#     never edited by hand.
# ==============================================================================================

CONFUSABLES_VERSION = "17.0.0"


CONFUSABLES_SHA256 = "ec88ecebcf89f63f813d460842b0cf8322744b40a0b2c06f88a2cea48c0351ea"


CONFUSABLES_TABLE = (
    "c-m}T+qLAX4*Z`eb_g~Y1L5$@KZILV2)DcMnKip9VGQCafk8O;=OX_9bK$R+KR5r}k&b`<_`BvmfBxO=-<A1$9}IQ(zv%w%@h>)d7I+^23Vi&Z_v"
    "v2=e<1^fe+3b>{I6botA;;c+rOIN_pjZ5*ZFsae=Yu9c+K7aI#RpzT91D*{p$&-E5dRA-C!d88&PQ>@I;#Ka0)*0*yVpS{oO149Dnincb-p#=ZV)"
    "hEPv;D!L4vXJ8+WLBb32ykeSYKkg4`}6(A3fznf^%uf~7pbvy`pX-fON^vZ%a^6lVe7B9-{yeb@I08xkIuitPSbBTgDgD3yU<%v9=rNX`cf^mJLN"
    "DM{<!ix!sul%3sWc(LWN=}{!@|XMvUVv~^)ToIw<)>s)(Yp-QR7QHC|J?|dk*iz9eP*Xbv;Vu)P|kd_>dzckZV^*Pebx001y%n%OF5U%b9mLdN+$"
    "QeYgo+VDUv)_jU#Yj(^F*SWU&ab8T|#+ELvDRRsscOguIoADBv^&p?_C_DacSUI;2~@o+B-^$(Yx3G|W&|vi1Ip8zM#z2OL{5S7d|^V&;RXM%E6M"
    "Lt`gd2uYl9E*9|_J78E4^^azMZy4ER*tA+AV$*6_u@Ds&ke*f|`8Af5Q2#p*WVa2t;HAyK6P@Zr7djnM?C0NkA&u_fPPk}L<gFv^8_&nZYE-61Kv"
    "f&O(IfB{df9p6t$C8~fb^y#ibS3n5DG{OX`{2PZi=RJ{&VbJXl#z%3vJk)to?t^p$rooznn`Yj_P+9apH#eUkh;J-+<%W9#5QK6-bDV<|iCP5X7}"
    "Z3%!CpL}T0#Wm+r%yRAVDTnmmpNI9?{4F*&rG7(naLE~^iHO9u{LKKv5{yTezTj>6|K7i|Ai5YptAju+SI1XDFRgsaH;oKTu^dNCKQJNf9_^>Ret"
    "`5U6U64t$-qEyAB#F)t5oJ8r7`%!u`UMd*hBXW#=6DmLRWN*0*3r#eT&2Lk7%!qXSpOp4NmH!mV^s?tpzAB)e5vSjKsFoli!KT#l$)|!g+m_&Qh0"
    "Py!i@4nCq-vOuW?1=m`j97Fd)%_BDnW3;EKi!g;rrOUUb|uO(a#b<WwzNV%55www%74v7Cu!f*2dJ+u$IpU>sdD(7BhB6ttD)tk}?zJW@r!(fbfc"
    "=vJ;%bn$8a%Msb?<*y!as%ox-Q^d#Sus9nhc}6ydBS1dU?_9%+W9%^VTF(7=B&9sT$0(4%K_jw1&=8IrE=OiaX2>?s_=~`(1&jv%MA*~AWjA0LG|"
    "n>eKkpFOpKwpL7VlQ=dlwh&Z?zZiqdJfGdHG*V1QD^*p>O+(@&pM`U^5~1JI152gml7iG$z<aSMg*aq{ZS*R^iVoW;QT-qa=}JRQ^30t!q#<BGm%"
    "K7$ckQ08p>+5ygQ~-J|K2=ot_ZRXCGlq)#gr2sj91Pq77V(QY9UJ=!aztB1V8Nai80F2tYHmNY&~vGEX87b1j^ate;2xx=BHf-|KEK@>4lh2j}Zp"
    "{<iAsXK5WR}gd62;!^z>v*H8<9i63b7azCjS;@a-Q0cs@KQAtcr@;l^*~93!a^&)@h(IRYrgqKA<BM&V@MYkWMd1$J7~E~7!qJd3L!xLdawYfiiU"
    "X5YJEfbpxItXgd%}uI4G>>CJIzPFwhmeHPHSTsw;75Ut(}BmL^p{IG)1Eqe<_i=g#hoe;6V?8n?nj{h()28BYkagt+Hq-Hw0Paq%q&fRgoaq-tCT"
    "hxC6JwYn3|xz(HNR7GDWS|!rDPF47IN`7A_(mFa^)$et#`n^uo?{#)IhwG#ag9En9@$W)^33N`fd7-zUnlFeh6ypWa<;x8>u(~f-$p+bTjY`(#G*"
    "UA*XwPT~7c@zf+yy1VWxNkP5-Q>412w%1J<bKZ4C$%%e)(1P7o?v{V9;YU$qX=9@E3GXR^El48R?uX_zV3~ZQ;7q+^*|VRbS|zauOxR1$pSGU?6q"
    "qX=e&-YZo*RK)4hXCp^Nn>g<AmjdX5>Lr+HKUJ!DoB3}Vz=lKK@Bd94~5O+-Jc3U;QZvQ}PY-masg+`<6c00ME-!kjMfDlkzh%wS(<3xogD(Q%sq"
    "APw#D6gno4OSQA*JT6OMOD^Pr7CL>G7SxcBgK^^J%yY+R{+1&gDZ0&x>v3^X84Vn`IQI;4%D4twk``%S%Zd$ycOYG-o%(HT^0gk3F_By*;Ap5f^W"
    "mNv{we`s%ImH+GCNtzUr~nnF}LO+z?II5~{2?I9=_olCh;*TpV83Kz=P{_QH_jG`1soPSkug92eh&$@nJDAMf(=Muk+ms6!0P7nIh^>I!-*TDRe;"
    "G@+WV3E_o-YR&d8$Xm!wxJ%o*#-T0^xk?4&8qdIaVVJT86b?@H;GiST8!l3haL|v?@&iVXGaqoz)ye~k6QVp|JO~JOvVHvv$nfdP_!p?RI|!_Bv0"
    "p;n4eT#a>i{}*12~goRDj0FVIiQ?pzntuZ6X9|BVl!mKrIk2LKeyyOC|*L3)D>5+FS-i`Fp$&6DN%!GBWVY**3|}0Y4<EmVq-qyuv9Sl4qwzln{j"
    "B4(matJ`q?c5a9s=O)h0uhCh_BfMF@1X@!gk)T+P@niU0hsBC)3A0!h6d4On=yIM+Ur;*NFuhiOQWLR&rN)a0MiB285RJhPp@nM`|c^)=_3R6=lh"
    "M0R<B22%W%RKHQzZNRiYQ>Ez|MA-oI+q;o0|{cly3aLLxz8*$=7wmXzI0=RCkyccq#BzH2YI8iZ^y|%Ht(nf5efi$_4@Djc#G=<!d?DU%x<n2>@b"
    "|8OgM#JaM866dXL2u8#H+ePUU~IT^*#?_;XXSIuWH5s~c{X47@p=5?xo48kqQAmxg|axpKe-oB>B`I`^&Sa^Gw&aFS%>eZR{QWL4?03=X;|Ofbe7"
    "2{XVYivq@@dkQc5r@&(P_}-r)jZqjmH9CFD6=Rq1$=6XzOe~I10kYjYj$#PQ=1wes!~vf5UgBU^43FinF!O^mW#_rVaCL)nnk9%4Uj7P$cPXib*?"
    "Qu_oaGb?Q<xVNKuIq@<^iS8nT%XE25T6V?-~!4Q>1I9ON|hC`CIF#^-~tLf6Aar8@SuK92Pw)ikczYNLwYXSld(5z{zTWVY7unTWNLqGiI(aFy%I"
    "^`67<a`7ECG^TPp@N`=F)jhWHiS3~M+)VN1_W+yi_N4cvWl;W6H-oSIU$hlf1Rmq#a$O}}PdvaVuP0y78m-;Zy-E+0rX)Shg{s?X+h5c!hkb5!@;"
    "i0BP1d@yp5lAu~ZaEsW;&I8*oF~FP&E*Wa!Hw#mkt+ml6;=%HDUcZMr@$ihpMrO&{8+U|F5scbMo#>%TU8o4^XCGa-f64ZF-+v*V_ad_udKO8b^~"
    "f3%tO=KY;2q>|BIt)7>J`UuE$uRCPOE<njpm)mQ()1{Fl-+mdn3XEL%t>sdYQCoz%L6Ve6#|la-xRtXAEU6NxR`hYt<C1g#w|+fIVZp60|{s`pBB"
    "5XW7VM(5olm7%nH#EY&Pc2aHTs&~MBMhX>cqH^Qb*qA7@R&O#IJf+*PQ&kCbN$hHHletUgB^5IAz(Qu;SjY}#Fb|F4iA|W{*@iK>NOMh-6Q}f$FA"
    "1&Gv&>NZ9)n{-i==-(@P2S`Kl#mvGgpl>qj6@;hB9Vq89{_GRmzwXWy~`&l##69bf>bBk0Gpgp!N`-XGLeqP<||i6%rGuO|Q`Yq4yitD@6L2p&$v"
    "9H@`$phLp>7{>#@Y-h9RVHVXYoi-OIcaJ|+RGIiU7^sUe+hOpj4j1W)xzW4{swJbPMJw0pj>|c(HbHyAt*Wf9>_!S+j{1657Cl4pRN*k>pLzd)<B"
    "CVDkD4Q8_Bsb#og%=}i6etL`1+arAkn8cUShW>YTTUMC{a27~L0y$2{$(^p)z!Jms<8fEe&u2une$*PjRK`+Q;ctZg<s`cP`gFBOTgDk5e>1NEP("
    "*G;jL@E<rseQ?SBRH+^jD*EUgSz9KuCb9n!{JHe+-zp7G$hC%4Fn)p)TQFBmJ0Th2rmr%&w{h!$}MRfnyskPCE=vTC$&sT6VFD$l|S{bcZ8dDT)$"
    "R=7!hqM*_WDy^W>3MLc64Y|dzwlIQX%C|70hQPP*D;#EfADUsW7me_oj$!IhFob0&=*1dF!BCSu_{Z>(A@~c1j(j2S&GNMxNWti#*M?eZL3_!VKo"
    "<-miWP%LhBjZ=av+fFtMk`GtK=1AMO9Wbp6WE*S1b9t%C2%Mp8wUfl*I~_r$XPa6(NwD3bkh828=Y2lbR55P4K_rjzvQ;s0Hyrm{cea%dY}Q!)^I"
    "9uC^ph?Qzj7w{?Kb0d67-a1j;e7Zuq>6nOmvCL6_Yhd=T)$O7I&F;vKjim`Kralps|<V%HaQz5zPL~@fX!LRZiW&^BD>Z?iN+VNQzZRm_(tyy1e7"
    "}Xj^x`v^*p_d4wmo!ZCTfSAU4aM9ro`wp4hv!-`rGEg9=HG#v`45E0Gqi&S<*@lR;b}fEe^gz&n9gY!=|ap1LltjFHH_z&sV=M%ZLgN!(#lD)oS>"
    "Dq1GzvCXc+k#rhARS(AwLHLO{JEcW_@h&aWIpw`eEBBgK<6a)b$WgSy*JZ~#@eq4TwZ_nDi5bTCzKDCFi6Ts(JpUR7FfnLCsKgnRQyw=#!#55l)$"
    "sBP#eDj_JS$o;?8k#0b`7*<;XMh|XiM`+*;?Wkc|+t7|0dQXF<*pT)9>K=X7Yqxss7(+Y8)*kpMtNHa~^@Qcu{yNl*4h}j-O15M!wRN<IjuPpf_*"
    "$6Z&s)u_V|w^`Z}p&#kuxGmG!t@w31clJ`PCe;Kw;@9kB)g@try%|{j7U-h6#*!yt&Xbm+MvvXcf!7$sydx{s%X$z9+w-?+zW4y~SCFi*$oj+wK="
    "vXiFWn*jGF17+CoPfq^StxYvth^lq<+5@<=Yj=5b&>-_|qJJ`RDX<SF^e$tMwQi|+|-on+_JMF_lWSq`0)3NZYiFa$_9RqqtbLkyip*eR9-n|uIz"
    "i<bem^}f*1xvZY1uGfF4n40Iu-#Cp7#})D;Ewjx8{)^f)Qf`)_6q5_o^}6kpg|4jr30OEU^pERwgU}ipm7W+*8}2ox$$qD=f8o$VW9gBl<0sM9a7"
    "E9-#`}_=<owoj6dLDeqF=#2&$)nVR1m69LVZ`v>h1s#)-!n$)6Q2{Lw21dgVZU4z!?wUOB2IQ}GT)^1%%f$ofFd4UFUivUXs4H!ji$cOg!U=Ho(~"
    "%~<G*1$4ww@F*i_?+Zhlo)|?ZWXnXw%{V|i(C~v=HBnJBPWbt6zw?40!b20DP(3G9QT+XzXT`I^KVbNuoqxd7{DJx5$#EkGXs8i0#=lva&WX4W&>"
    "6IU(TEd`4S&Gh_-y}X+wsG{^Wy>3>)CGrG_mtQw%88OgWt-J!>M%xaM=d#dFXTLdV1<h2VDA`VSA&??<n}`J-;J#nL+hQUS#=@f0g=>y;SfJLj}A"
    "D)|WAWq?Ugk*RfLOBK^U2$AjAd4s?2Pd2@ctuj>Z}E|6pmoe${VoUR8i#<yQ2uc)|9lDXJ7nNG`%sLY4S8+QeYR7^KekFQed$;uGpcFb_OP<OJdH"
    "QnYO9O{NBc>a*Qh`fGCCZebxlH8kvF`PdnJ5kdQ_weX7x1&0*hjb*vLo(*`en`fA#wT69t8~NjZhlB@7Al)O^|U@uD@ieQKQZ@*)YI|gND0k{WK`"
    "~WNHXcphh%=8`;a>V=fC~*+V$;6HeC4jQ+)Tg9}CgN$4}&^0tU&v$y14!hdfEvCor?>+Nbg!zy8hrct~Y`e&xd-56NQp=R@8k-B$*^|ByR+e|_@1"
    "Gws7ek|BS8W#4~FgZcI8A=y~{6P2>>pXR9S`})-^JhSSXen>KJnlZEcoSG9Ib#tnT(IT1i%ReNudR-66tX|<EnWO98<fW+M^OPC9(nFGsD?g;zD4"
    "SG{uKJM7(e>$Iii%mdhJHW>W+5E<A*n2kT~@(wQl+8!`+4pxg!qt*IV6R90+(k{U}=Q<^i}3Jw1;GlLf_<icRW3rjppV9jEUFa{;rd|tGIt|ljI6"
    "R<R-}mCY+lj8+TR&B<qKKg0$tgNtO`5+??E}cXB-4<PH+g<+n+Wpp*IFb~K>p!RL*8CCP+H#)o7r#I$m>pXP_`B+E*CKdld`ciSR22YqFK2ObZp!"
    "1KvI^OlYexj9Ye<M$L|a*rP)P5vPnX;OVCUDk98AM%Od{tgl!Qt_ol?!fseaaLI>AMy!OUzK7xPwnyhFy0?OaY_{36Z3pXmPS54<c=Vpj~|<Sb|3"
    "Ny;vYYzk*`JWr;ESm>AgtfImb_Xd4i;eB$GKmB#Vw;p^aqG<@)`uMYW^v`)StGDYWxjj)&yaaxT&sFK$28yTz{xu$asBG*LYbPctKv<$fB7$oL_j"
    "=+hoHOa9Ux%4ghQ220(7rF;(=<$K5|V~;dt?s20Yk5FgK^?XPU$kjb0tG4=wWV-cw1cBZS56McY_m`Nc@rg7&@#QbMU(18)mn^H#&|Le@TOE6BuX"
    "B&Z?by7ubF<N&>^J|E8gt&RPa*E?xA3J}wfjq#YVm7)ZfTQ}M=d{vEwX%RTCIK!*R6eu{fV!CDPwIsq!OPWa_6WYU;0{qRo+gwyKg@x)IZhulzqR"
    "x{8segI~*&Z-=8M%yc@Tl3Zj3MN>)mLl**vM<(t3ykjlchQrY`A<Ksg<eslXN@o_vs*fz$wN#$s`FC}$+lu9N(t}iuje3!<!zY1b}>!%}qsdOWMs"
    "dS@!>2TvwVn+K?k4FEHkKg#xbH;o~mM*uTofkXAJioN1>Atk3>A&=nd41_6Gi<#?O>f>0N$zKSNcP|PC^0LlysLJ8h9$-F$%n$Vhh)vn{*cPY*rW"
    "=3&iACo;X&ZR1n0E{1e*V$eI_S283)YtPj1T%5!J>$tK94Dxpn@cdunIAFWSF$a=W5!sppnOoo*;;ZNmi0+7<7)=zY?y>(m1V)=SR^Kbk-VKK2_J"
    "F}dCD<Q~VsNHNfHmd!o>WQ@BP6=faIu6}N1)X4_V&zF3O-`yA(V-z=<du}nh4}z+VIsk2N^#%qP%nJ7mF>Bn~DEC?{XwFYJ^Ybv=Vl-H2bSHQ8K|"
    "yyqM&P;VNN#wpgz<85ezVH2dyHdhL*=PWj%)Mw$(@eko?9K6K6mSiA=EW@`Jw5do;qD_O1uboP~;EpNumqcA(Fu-7HSgMk&?sS-~%>UZj4+{oIMF"
    "7ypTP)?8!|c2-%ZpPYQ`7WKXg^sU(Wfdg7wFb+HR{kZfXdQ+=hs$+4o|<Wx;?7bL&bpWOe*`4M+MGS`BMyR%R3eXP-fSGX&2uY$9eyEdjR|FPKSu"
    "@CNxBwA0d<B6JI@rU_Zp|JsRqa=|%QK5+ie!H|2JzR)Ycvk1NkUi1nu9I6Q**PyBC18u^)=9m>wsi$%PysOe3C49$VO#J*VE%Qz${u`i0>llO>q&"
    "n{I)v=Wv?pv*7!Qcnll!zMOr0~NYo`w-Ydv8pbFy^pa^@zWurh{rPR16_E5${W71biTI?=@)KrB=3RG@1Ij~FIeiQH^kF$k^XqKa1$V8RnEOEFn^"
    "RvxE1K=wq9V<p7>D&}jwDk`2XWKYyQ7DF5@mTx+iud$bG6S1}PWDF{Mn3n8pCmsA)kh_cwb`6o-K`I^+8wwTvD_KLymixrq=OAQHtZ^kay1bA*Q3"
    "<SwGtaOr-(uleF5F>yB`cR~CBU)r%3a8wSO>{$9#rqS>s3!M{A=jej#F|_ERrJ6E@VM%aMFXRt+Mj3HaJlhamOi<J+a~_BD|12vEnFf{8XB+Vy(Z"
    "bIK)bg&zZVvje!E=qRPx|vFpjyX)o?PRfxvSQ}N^uR)uKRpPGm!WKXO=HF7~+lY3e9M5m^BcI)a^9-Y~yE(T;_tWZ097F95ASJjhYCBj2}+@eZkP"
    "pm|`2rpz$tVB9_q1weQuj`35kj{oM7P2Q+DxIZ5bqi=cnfA`0;F$~A6MJWHbfMk?WKXPNO_m@Pmup%HPAh}S0-@3ZWKXONCaZu7%QaW`3Wt@!yhx"
    "lv_Qc9y@}MIX`D+Gyg31X;)%eS8x+2!l6}Y@alHE9P|H^vCwjNBNg;PWlS}~eH3shzU1sZqzt|!%=Fg~v1hSNAdyFKwFhLAm(_Jn!j`fWHZPwuoQ"
    "WR+{TK=#Dj6CLopgzSl8qYMfjDuTu2Ehf%>1J^x)?1{ys6Qf-21hOZ=o)i+dkUg=Iag{_8vL{wDJR=ymx(Q@YtYq9E(S+8Mi-JYTLzqS~c&+*m?6"
    "2JaOtiw96bn@40;L!?LhH%BT41<EWTEwh%U#?DeR6*@<)St?%Vjli{qf@2#lZC`l9U;Nt5f!j9CKlcB;^CQMBB5dpx&Ob(zzbBh$RBJW7-1q<BN7"
    "qD;(2aLpJlm)gU8Ts9X&)lALiNh$Khtz-1tNM$RY@7O7TCy~#+n&axC)ZnM7FRxm2M)5|CRl{lGL<DoHrOW}5ED(8XfEHgTaxpOJa+(b<kJj`_(_"
    "~t}H>E4Go33c-ej0U#**aOV1#!JnZd!T`CB651^DaxXr1Uw(ZIM@*7!~G8Op)!!@4%HpE1@HRdLFV`=FoupQu-l50dxtmKNcu%8@pwJY2Fb8VWs6"
    "IvMv@)2rC{QQn~Kk15{A2qL1ZJ?@=GzIlBh<o&6Z{a2cxn&$gR!faI20Ip4_gh4C~-8UF6}eok*M4Pwt83<l=@HV5QtW>HN!iQ#jm}FAYnUdt{ke"
    "jMwb6+!L!=USvT>jxP}<?a&4yTViCJj9hh#1=SqE%ixd_^*NZK^*xvoRDO>}60zBL#;8xhU?X<>wihvb8j2enk02j@K9&z&58x<{^-(gd{fKb$a-"
    "j^KN$1E}3n?I1sje|Av4x~1+Trq8dCf*79yebiAyIgzX0ogCoO)YGWs{o8uI5Q(A$wx7tLgB16|yHLyBZne@)D1<tS5WyQfxM~v%RN&7{OrO24og"
    "g>duHv!UkkkZQ>#h4|W3a7?tz^o}f<B87M{)=Z=YsGe~l=Ff<+wBiOv}+XyypQ;@m)6ywf*!WNsO5nYF(gt-h7OvrNM>3N^){meD8%;niky(Y6V3"
    "P;VtnG`q18R8Oa;fiZv<1AcL<<>VN>)MeH5Z4L%!ey<}ZXT;Q^8$tXNg0ex8^6tnK;;LcdUPVs@!}*xLRBa6DIO}v@``y3eujQ{ejX1RzqR3q$K>"
    "&}Q4}<tn&-(}9ewYXdh6Z}g#dE<6<=asa|+HAVLXH1xrtXk>$DZX+Qtj8_VJ#Ln>i`6yX^?z)*>Fy1JI!^g06FU0PFiUcNFntD!^$TmyU!l+;~*y"
    "<bI*Zc%2Rc!F4)9-#Nyzn7Jv3h9WvM!ZDCrXL!&LfM=ghh2a6W%ESC>SBwuOTp7>Jv)eKq!M!^?Y|G(*`*!S9kw_jidazqZ-Go_y&x1=R!WRz9=!"
    "CFYMiAy{#f9oV#(r{_&j)uIXjpjYeBi<p`7;9x-0MSipkwO8y#pO>(y?20PFA`QKQwTA(Al|0o;uUy8u`sG%Z)o|k1PNlsP3cDvVs3Al`~@Qr#S~"
    "_G~7u;;}zUV!|phy&di<MI&x0xs&gG1hdZ<|HtSj_o0v|p)y-iv7YIGI=sE3;xlWpMZwcfB+|yiVt~d8GH<){y8_iATW^>DO*}gj6(_Ck+H+OwiB"
    "nl6@?JO1GI^BMp*<2n1rCW_|``|fuygYC|&}kTkd-1RYT<|{(-U}KPEudw@Sw?h@2(CZ=@5GkVHkki9vV|vZrSJX2inr5WMg?>4k5~K(kag()fS$"
    "`!|J;S+cyf?%$S#dLpwdF}!L`!l$yw1D?WW8f96Tj6*K4%na+>epDJXZS2R>(|KzkVhIKqdO#SIT==>=Mg2=ZZ@g_;IrMZ~oWhKbw(9_dp~nQS>m"
    "C2{?sIl~Q4w@xGzR92ZwIJk<tjClZ8GkK%^_MqE3RSnelsZ?N@*02Ps+D*I&dAgCH*)geWnI^gD$3q&Owml9Wac1r@S~_m^SyU9|xYp|U)utW>15"
    "dR&jhv33BNj!o6Z*gamCkWX(8apoX9K=?6Be1#;Icj>vg4M8<#uxiSCQe)eLC6E`VV`6O#jGrTwrkAMYL#s$EADAz6v=)CkbQ$og~nd2|7ujDH9$"
    "JmD`t#Mu0-Q!irGFOz7Uyg`Kw8RKAa{u%58<F#)GT=#D#QE=AN=!SK*Hd3JNTG`uADT=_>QxL71SV90n-siBioH2%<;6q<hMj1u#`&>5#+W<|Jb<"
    "&v?bz!KsH@}@Vt?0j&?3Ria=_pk8qyQ5X3Q~AI<<r;kJazK-uaN!i{slw4x09~GZq8k_UJW8h5WiH8`w^hWwP2{-qUWWxYrSpP;(chQ3f$P8P>Aj"
    "#)@uAEk>1A>W>9gFzQ_t&ZUC^kuYV5XRzsJe}<fMw10+O8T{FOnspiwdc70Dsxq+A|Ux2N}lM#YCR51D+4<S=fx{6#A*NYWKxQN}SOl)9D<K+-jd"
    "4#;V3A_p{n!LF+P2zO)q;7sdQ&1pheWsipkqWKBR=@atZSvUM1bE_rstME(<HbFEiet**36Nt$Tf?MAz0Ib0{ew$!}aVDEk^_a$JehsX73tUuVqZ"
    ">7Ff^FGOaaydQJ7oQeLEY-1&JNxR>f|uothIB1!liY%bs3X!js_F_Ci*6}2S!*&N#!W3oIgI~<9BO-cIZH^8}ojdba8=SbIdQChNV3^S_SfJSFNL"
    "2AYn&b7M6{pA&jZ8qb(rE1LTetf7BfbE5B1vOwlBdR=*s%*RsE(%^mJ1WyU!#HuFA?76`ID`^R%xC2=&rQ@Bitl2LBSJ57j?pXRI>`PofDWEhH^t"
    "cjANSseI~AsGx=o_&9`akPaa<`@4|v&WMKX=9XePRoqzKd5P@C4gk|4D}#0ZbZ~8sD<N)qa|zIJAP=n(V~_G8m8n~#I!`@9f=~gH`ORG470*B%G="
    ")>ta)$`*fF`dDb|GM#iA~~y>QS;S^%`Wu{}BWWD$FQB2YB6(&T0CV->#F073VneGW&vHonP2ChQh(F{&6gWtO0Xsj@soku56PxY5dj^R|PBXl_*8"
    "gTjN#gT_XvddE|Tj-Omnpo7R0v5;sz#;c?U)i)ZHlRl#lntn0}&(^X6sPNvbW_|}lk+WA{vJ1!;_~{AgB%%hF91(Rm_QOk`QPM>ub2PHwCCfE85p"
    "|^$iKw<F+VQ&C8d9clFWQZgX#i1yl&q?dx<z@TqNvNLBq|t{McqafQPHR>DjC&8Wuv;K&Tr`Q80PVCG|gi(MP+t*7+);b<zcL$ubYQ)rvXbI#$ei"
    "+-aMwTJ&etCZx7=%MJt)jX<DVmDx)<BXRwGb!77df7cYWcTnG-OFF2Jlq3o#`Ja^HE+Twjteiw?UYnO<qu!}>~y~{#W+yx=(DFsn^7lEj<^DnCI%"
    "!^VjvQ@Gu@~TCvpuDQkYA3Jyv#Kep@~mFUsyVBavZ~E$q^vr#>L{zitS-u`tzy)ws%lhxx96f(y7c<xp@#ZUYN)r>Xi-C@5iL>5VzexlZV@d?S&W"
    "v&qAW(sVpSHSWw9!Y(Xv>T#b{Zq%3`!ER%J0-7OS!tEsHh%Q5BF0ne${<ZW!%Y5uKKoD$!V)2+il|xE|-M;W!_J!~#Vqzxd#Xe%${OP9lDSZhRQm"
    ")GZ)y)cOKiIR<6g;o~|&NDQ2>HP7SHnWKFZM*}F17EU0akNpC(?rC!{)U{p1arqs(g(u<~Q01$f=oymz#mXc&t~x4Mfvc91p`n!rRcSea25&qE%`"
    "lKEEqDOkdPY+wlH#|Pk_v`SnjFFOCl6W<WG52<AD%-ZZG|{@A@8&Xa?Zk0orXRLX>5=m{FVHDYw?I{Zk^jY9Zh?@JoL-B(Smpg)zLbEYzSKWjhtj"
    "Qx>J&!)(G_68dRj5t8}3Sqdp`0vm=e3>_o@EDdU6Al#vL%LfadHh`qUBlBni($rLU^Q;~_3NYV%5$fghQ==|BnIB1=)N|(-10OfMyDNR-^4VP!g-"
    "LlEaR+I0so^EokrxutBm8RsGeZyZggvbxoZA>OrcP(ZaxM9g;HgvC7Q2%&}+-L3;JRGN4nYM0nX55qZC6F4Y;CTk+G1Knf)H)_`QvUPIdRC|#v0W"
    "5?NL|_=&zD23i9}Rh63r}fWyvKOWDI;tyNO&~a%{-uXm3^6EHCoRij+GZ0XMC!@Gy#sp*XkncVWM<BR0LBQBYs2O9d`m2;zdmK^%#pJ?MojUHVj@"
    "BD`Lhs;h#=9hZeb;LeUg^N(DeDd!}j7I!jQG+ZfS40%hN#{7d1qKcLOSr*i{y1{$FMRCi+YRg*O4s45B>(;Ef^tHpr+GXK>uDSk`>KoRqNYBC!&-"
    "2WV8=xIeGXpUIRo|1dqRJ)1lfAj!ahv-B&f8F!<EdUY93JcCrZIqP&Bb}ZH|mMawHgMuwRqD~HXXX9Wx&tz2rVM6L^O27uF@c}so=LXWk1gGZ1C1"
    "nTRtBXp-r-y?$TU&PM8{D<CKHTOF9}|<+IkN0g|T6jlCra6fLDR8c*cv5f2vA=qnEvt3C2$F$XN3Eanuim1E5vTRGQyL@U~o=XmBg%Dps4Z``UV_"
    "tt38xL=&M?p%}UD!N%K8Lbq3Gy|wIe+RG@1{y@7Z?f?@^a;-K1T$^WIUZpyG}_^Kh*_#SPciQaAWt%X@U`bbt%eW0*ZABdF{rRN$_W+=EtAUSYL6"
    "0=buri4u@={OFxpe*HI66DrNk!Rp+e4r;-Dh8@MJFBYOa-V>-&YV%CF5;e%uYpm^;-1#=!3-EFFIKliSSg>-)QF<FIlY=LTS_ljD($V-CT$45ezA"
    "(n!T~&%14PzxL_@BrWCeu<)YGT0rR6x$Sy8oo;^Shn;7as6F&crok|WT<f)+t8J5R(862~CNg`_XJ<@NkJVASM*qRE{5a6NP+4PH=l3116Y_JxS-"
    "679^S_=gvSTFnY-oLAUdOeTajpT2bH8zpXZRUB13uP3#-qP$$QaJ{=sBLLa7&C1j(<y%4i10LD<o%+oH-7zS<uiM(13~xHU?M88Hsj;&~>u91wgB"
    "Kl^|Pv4Gw~mR)dGiZ<?3Yu2VNSvhcet5D!&w5ppC>53Br8bB+W0;1Cix_z#R1fg7fQCMs2#!;k^Qa2O;)mnB;a6JgLG@8G`U$=Vn+tvVYs#3L(d>"
    "M6BsHo!quJt*TC9_}#o2C`dMEU4+)$aCQ`;mN18Mbz{Ltq?V?$_xz)Y!d?mLv&O!M&Zh>lOGk{qFA5}OfJ$68UW8;;ZR{{u0S-6I0N&6PHy39{!5"
    "2S1N}B>);l2RlZ$#|ZiG&|(fOBd4tN7<O-gDk&>>RRyXeX(bG3J%Gp8(bzfgKoEqaR7Iy)?nWT$zv*3g&JRQ;hhZ#4h%t#F;@eK=7bI_7X5`^?Zj"
    "?t%yIF9&wmfzA!Y#QOy_<aa+&C8&AIv@948Ce+JcPEpZUAR2b&vGAO_P$yD+U?@@H8Z?ZP*;U3sx<!?Ofg)Eg6#k$I2_dz?0eN81$U_ZeunBNBKO"
    "j7z1u4FcCcr*8XcJ|MdvwcKsKO4~N12q4gGR`Qig<eZA>4fC5A(3|Uyg^>gM7S(&I$bpT_6*&3$Q5X!KRZGif6T0HIpA62EV^dXyoDadY4}UZoN^"
    "7DiKD#lj;qRxQCOo3Lbb5GIu^PX9*|E2{RlZT78};cj6!N<A!xEOU)A<$+1z+6CKH)3dim1CpqA1sYb|oMxI_ji4qUAlV^UX@VDOO26yqoZxx<RX"
    "Yy->gd2~-qj!6v@u11$0?Zq&+!_LZnO$Jg)@|lkIc4rvT=DxxmT79*yv_W$GcoQ3e!K^wRg@$I{_149T%~P?VlFm>OpJP=DMyY{gVT=bsOi&?_Qd"
    "!XItS#*4db12u}M2Deex*=Lm<9^;Sj?Q<MVqUnx5vo*=i;~iwqhGpZqQ|)*IlDHVJ^h-=r!!F@y%Sz3FKQ?N%D#Zz^w)>=@33Xikpf|D^d{M{zl6"
    "%aLEH-Q+p_pcY0myn!S7<mC?`$*wo_sgQ*(prWVzMqgQP{ALo=O7zu4`Q>+$d&-Zd5S1>?L`Jo0-W*Y#o;LOumchlI6BQo^R8Cjtr2&=vahF@|Oq"
    "Vw6s!BJ=R3Le#iTifyDOY5~JuUtoYU6?X5x7o2F~y84=YfN)*VE_3*FNV8KPc$#VtxaLV5j~TXmdX34Vs)UY`X!H)F-9J4}}~HXhtGl?Cq15QZJ5"
    "66O-78ZbsyZ$TMxs2c>q?=r!jXlh#y2Vj8lrM;)1_E8-m$3%}NIW=hi%@#aFr<YtMxDn9Uc5BX6uQwebcTO5johW07+W;`fLSQ@mtpDQ`w1`65>0"
    "|I}AYA;P;#G<n2e7LB0^P^BxyW$6-rv8CB4<aUi{17A|N^=%*CZ$0U#`RvBwSZ{S(@w+^g6feDt{-5a1fmi+6GYRY9*|CoFs2I?Af4**Pyv7#Gv*"
    "iRRF0qw05LvHF_KfvDFRW&n3!z<DL#lRr@opB#UIm!(vYMcPE0%!E!_cuzgsN_ibP6OBqkIIAjS+u0%DTsV&(zi$oQaAKw$EXOwq|%*n~=vipELI"
    "K2oD*G@)Fi#*d&A%0;3nBOvhC!~v9xgjog=`0EtK6KY24QL%u(u3mwONE#ZSp?ajzSQ=10($rWC)dOOeZ$R|`Vj6{(<#>0&gzAw`E(J`e9{FtK1+"
    "x+$<_$_nKD)xj{}#^^+DQ%?A~98gD3%}1foZsg#sZ}18%=^SThLt~s1+$q{_vWD2`wf^b$c2liyHo+&*Z2E2Ym+R%7Va@C9h_S2@6yb#)A1uPMr8"
    "axu8JT8_`7jtl%$8j6oLyQq15ltHWXzlgoM+{FN@$iS#b`tBwU$X$(%oVWTlTe!`eEktVfZ(nwmR9*U6_3W5eaXi9lRp+KZ}Zz>J)1Ao$2XQLva0"
    "l7($U@kEq%0tBtJt_}%HRw@5dJ6s~m-c88Ca*!C8r9SQN{wo2AcIDgF~$-(sw3o?D%9k(c2b3!oIKN(OhzmD=e4Z|h3mDiM_W5QxA5?G0BzynLY3"
    "Dh9xhaQZPz(4V0doSadNfZ>a`PxDwtn;aRy`J$*O}7wNerQyp$NPT`nsgiZLn#o*P_%csT^cnCG<xhfes3hrDJz0QGO8*%LJ)MpraZ@Z3_ONrBfc"
    "63SiAjU&=g{K4xpr~~+;neG8pm*xaC7He%T&B)Ul45mnAa+v0UzM$=hp1UKYQ+YG<!TTweg^%MQ{p(n;H{%|>*TRQafAVJ1!;Uw5GwH#5FP1eA|B"
    "!YJ)te!Y@FY}UhrRu>;js^U`(@W-ANKakq{lw&?U$L4ec0P;v&3`Q+nd!7MtZp&-{oI6ZoJw0h&%f0N$7f?@Accv2T|HNU&cM!LzZ=@)SF!omM-m"
    "+FHU9LV=*}%{^l|r;Fn#GZ8X6zTOYi{VVU{ZXYu_q^Kr8f!}YR$0CFAcC%RuY5BxIy!D}p*)sJmo17!ZSui=*^kZoVXFH0coILipg&Af&Fvbo`x{"
    "f{r38}OSiUBq+83C%1J*;fUBYQz7wzTsaPToyxEV0U<(z4gm>$UX$`mj#1;2;MJKBKr`$U)lOP*Y1~jk$sTeFY_W_r_cQ|FS1XN`(^fG9~t*6m-|"
    "q-U&crFp>V&9kL&~Be%T$_N4)(qI<YO~_%r&K;UUl6D?gToJa@AESQ_%nG|9FW<d<oZZ63%k(<H~!PGkPH2jrK1l2;n_We><N`y{W_`s=i~U-n71"
    "=^nrAlPIe)O|nmh`(>5nVvyusN5TEFMY4~A`(=w{pZ)gB7RmVxBQisxVt-j6Ay?Z1$-7r9GbH^X%gYjoUlvHdEP?oCfn=Nh@XPoJ2jyjVBtLDpAG"
    "^i&r<3$01Zb-u=*hj7cRY;>Xh!R4PhbuFGz_36A5WVAn)!O|<5@;EBz)X)8tsgBMth^Z(ZT4;=-cS<w=G94`ZhWn9gVI=C!?Fu+2~<(F?t$Z7kzG"
    "io6)Dy-RRA~K694#<WC<u>ygu<PvyVr0w&SQe~r=jIhFsK+YYb%SK0|(wDRA$iE`1(f8+fSi&p+y%$EMC{I}+Ie9C_tafes_`_XoI<-hw~KBw~EL"
    ")h;t|1Hh^T={Q2q|?%|BOQ-tznghF<y=GGqLp)saHHL#cg;EFJkWslqObKl@A#DSz{bDm+upa9qaEy02#ikadD!8Vb80X~uMgYtu$(&kwEeulzTY"
    ">$(_dfk<1SgJOj89nS~bswjYWI=jz6p=`}HM1xni_^%isC;>r*!^M=x6W4?MEJ==HhV#T{PxPyCRv=(yhB`Sr?waMk$td6mbo^73WHzgwbL{zJX3"
    "r}_19|9-+N{}<Q07Clz_&3d9=`S-!nyVghkyzA>)^*?t{x|DxT5RLYWo|ax)_i}JK!gK!^7o?5g`GJS<+{Lkpi<>w$5x9qA6F0YTY=W!B5239#o5"
    ";4EWYcAD`82xPmXbyDnlWDDcVHUjxkHQ-dn0&>-9zvr<wI!S$tF5E-UKZ_Jj5i&M({I3dI%c8cnD`4Z`vEjo4$<WO$XZsv+3J5!fZO)R+vriT|t}"
    "9wjE~E#Wuujy4seQO*h*Vv+4e~?l#@@&^4DI{^q*&a??D`;a>cW)hxJj1!6S|BUZC8Vl@jRR<kf-H47tFvoK;c3nNyuFyd(zMnBEM=%-m2-K>x|-"
    "K~%}J*<#7J*|+9UU$-bI9oT<e3+Zg3VGAs3VG9)74oKo74oKUE96Z_E96aU8`p=wsoh&I{?xc%{H?o6Km4gMUi@_?_Tq0S@y%c6?w8y1)-mp(3W;"
    "}zaf3j`Wcj+YcI=hGdzef~xyG`(xs2qIeA%zsLA-YUUi?S}E#~5<rn8>T0k-l9xm3i!8TK`K!4VH^gu`9`g61Um#JoHB@F>B$gy~4%G3W{=-ulQ("
    "neHCfG&Ce_1m_#P#X-y7ftyG|D)nEeG_z9*{Du~o9m3H{FEU>K-JDjs%3B9-j^<hizAqhs<h?I9wZel>x!vZz124y6&GKXt<P>zZi+8|8T13S-&R"
    "b>hE)7TD+%0kE+<CtV-W@3M==}U$U5$wyH=WnNsB>7Iw?`aBqiO@<@ED<yr$bk@U>=wba!@_O=~zbOJrug%IGzdU;yNK}C(-^In8ee7bkmjkzjX8"
    "I?IUjm0S8>BN`)(s#f^Wda$T<`-kE`%CmQljovVmFBHcc@4u{s1__+^1k@sOlpgDOx1@EM2<6q{^RQz;a_we8AX8Gp2)LrAh%tKxHalCH9t#zNwb"
    "tDvf{#UrAu(;NV+FyZAMKpk}0)z~fEAak-0u7Oes|$C`l_M}5zyEU=1yBLfZ3esmz}1sz0tKeg7!GZv@LVdw1>R$DaQ{Z3-3Y~{J8|fG9xEuk(k#"
    "fmX)UPG>chntI_-MU<$Z5-t9J4inw<!GzyqFi$2tvOXla613tZCZ>GHm5x{d~p3av^6h8w!Mjew^n=<2@9!aa9^Jh1hPZhy)b4R75yxyNA0+YD$K"
    "LR<a|EkP(Q8rVuqRpT994kC1U3oqTE?c_y9C-{Z8(Bg#CE1Bob3hhj+gJR{<)u!g#b&~@vN>H!U)5(>oavv+Su19iogN{lTU7*GLB4|y!5d>C)uE"
    "7C5?T*70Mw>GE68Cu>gI;l6q*{2V6fbiv9M{aSQ@Pi@pv>HzvmHnPEVcow@P;Q|P+D%<59G2f(78-vm7AL}%1JO*HRu|eauCQ4QsIej&nU-S*_!J"
    "(YvKJz+y+*7<5A)DNBsF$B4-|>65P5GwnV9mx>F)TnU3qW-4dbLM*2|#=>k+hubcD)*Y$dnaNVybxDEydLf$vTqga4RzBgf(uVDH3){k$KZzk;WC"
    "4|yxC(MA$-W&p4_r@dOv5Puha~E}#z6MuU=IMe!;IeYdDS@&|WrfK^T_$`p4ELtW<#j3IVO@L&SI6-S56)M*y1!UHtZcr+nwBeD+b5IHvc0YMwTD"
    "Sy@Ho^(G*>~Dx)`hH+T94`)U{*Prc}5x5C%8!<SE>HZ8s`W7N^K(o9jMhjIbD4VrPV%2PG6C#tyxRu|h2>cHN>*(AFi5x-~^zbn^LJRzrD9%AuQc"
    "O1_V0S@b4(J|u5Fx!pr%lKvqZ$?LUpTJjyfm$~G3zm~a5zT=m@#^sk@3$7)<7R$sz`Cb^4U;Q<~2*37Pm@WCUShhGFFYAjXzZT2L<Y%!=480c17*"
    "+f>ynX78&x#r2`>dF;f#evzEl-o@_}FPac)d(~>@=@8(r4}V@mr}qNtV4pwVu|;-k_LlTA*61R3-CTZr-j@a=~ChC8A_ZuS)KWiWc&CAx{Z-SdNn"
    "j4~s6akp@aPsNq+y<LYq7>YlvphT584x?U=mwRNU_)9ynvqKhAi=_Ye^{)%9zr_dC@a=muq0fY^ThK$NvUW0&B!eUULeiv`7z|L~5-1wai0=xDW="
    "n^jr%eEn0ZgoBst`ZfZwr)cQ;s{MvlMEWN6w<kvPoBH<;6`n41gP3WS$OfxlVz^-uz)Ksjb+@~u75AQZpRM17he0p>vc=jnE`TBbbt_U(Rj@pZn!"
    "}YK*wlHt!|z82fDQf6W|#)d#oS3%#q~BB(tre_bBVNYsHeca#a5zpCBK*%!)L8>?4!BKicQ>M*P@Ee*Dtomq|W)_)51tq|&G#@`<25eu|)f>={3P"
    "<K?$sn~xvar7_7(?jY^_*g}5%+~cQPN&F^J?;x+Q{K_P59y>EKiJQk4_w8f1oEdB%^_3T+EVH&Y27>(9Ew{0^$7S30A^Y(fia~w`YFj|>vAfss++"
    "+X5$0Yl6yTYl!|2JCq__AYbMn~cI8M1BsgkSoypS!~4??IW_>feL+$+GIt;C+e7_W7#uMAct+DuDca>Cn^9;O(~G%fRhT@-u?RU0^ROw@i2VFHS#"
    "JZujRq_<b^?Nbi>r0vUh5i1awp>x)Q_BfsuX09jsF81y*m_nigI>S*7RgOxJ+x1SPvzJ6Q^GG8A<Fx5I<_Zajz&zI~1>0VzYdz1~_>)6?n4czPa;"
    "%cti+KkH(?$w?M;v>5h!AF!mWi{WQCVQNZC{xYM`bf6p-{g&lsbR)2dFLUN^NYx>jTw`79;Vjx6yrK)doye69yG(r>kk7D>j1^|eSYd1L_@S=8}v"
    "q58#90~=i#O-AkKPLx>Q!@O#~6eD+MPnNJQ2cGej~bz>^45VGLwM-0L~{uC7N+ddizJ4{~+#j!eiOAg<AM#&<$0`aXyfrq-C&0A+A>D?aY9nB?!&"
    "Cw0Zbt$R@%aBJ7Wa^covw_?V``*w_l7x(c_ARumy<1IJY@dBm6a1P}cn!<4}>djbqmYPSQfG|}*JM+P5c{-U7PAOK|JFdZ=EGtf_x;W(t8#h_HuC"
    "3`i5KkN@mLIq7omFpOj^mVH-b6*SOhBmL0-Y9!7H3rZTvfaW-@vRy8=Qaw@^&yj%t_K6m>Q-esSonUyK$mw9}|+y&7wdkzdp&I=Lw*sH)u&F>S_O"
    "ryaZ};AwPNLoYxh4mFab?{U$)D-_n`x#k<nG{5-b|D%|ylfuFHJ(@qDkLdqAn#_^IOUT}%o1v$910xv)A@R`gTPsb*e^Tn-?>kZvj%F^K0z25aMm"
    "5M{@qWyJ86liwFGZsu}QGu-0z^$X5u|SDRN0J{V;AdyfwKKj6(NNDR1pay@&jI{-wY5P0)WV>6C2rgVqJhPxblYyvfy+Hp?^6DHmLJ#Es_Km<9k>"
    "Z?ax#JWqWq}hMaBm?9lY8QH|(WJPAN2JWg4{SFbm_8u;vv}S*zRPo=a%l$~-wMKxrrqZf$KWHCcKH<VqX%)N-Jvr0Y_A=pUu9OlioWs@KMIZS9&_"
    "7gQ(4ECaR58}!EHG?q|n^lC3$U<<eWv^7}a^hJwlL~adMYvS>2bRQzLzov5GhCQd&spT@&7Bo%tYx%K%OvapOy!+zQbgnJ6KwNnoECbp_3Qggt*N"
    "Rh~2;$wGQ+Jhy!cv2Rnu~g9;tr`y4w80A>5a0s@l4)adf$z0JaOx2R5<Q5SDWO{{}I{Rc^@!su*{rkAn_2A=@+KKgF@4hQ);}YN<5=}Y0(de{HZT"
    "wE>LPj=Z3vQrNIq*(~$#i*t-V#!)zO4zT)F$vX|bap%t~9Oj9dGPidj1GQXU5ACe2)u$R=|xM6SAIS&vG)l6akRXOt}V;@-tJVsPimxUWLy%5J|^"
    "@XA@a^#s7bndBG%5Lr45Y^S13hzKy-{R>4U&R5&=Syva=M1LGs&Yf-#r$%I9uIo}IgSkS;|@JZA??sRh1fsTr=fetEKa#Y@2q;)RziW$KaRmxSM}"
    "*%@qxcXV+qu0@T_;awOSI4Cappyf4mEM^=_KAI@L;K5kf7IXBjSy^4y_!M4@Z#g_}I)c;D(h+@W_ny-Qn}s(s!p9#zg<eB<szAj*%6obqekkaTXe"
    "E_CP(lwSx!v>18oU5<Z}5Zs}+`Z?EDsjUOiytLBg4!v7r1XoxO$9HM@y`PK^3hvzpO9N^xTAdKLeyeml7ql*xX=ndcTZ6i4V;B!U+$z(~_U9BI+n"
    ">f~uHiL}4E*|aYaAb3T))WGpndp4t_HuUXjB>OAChW=8<q#l89FBPDaJe~e>E~dsZ2?=%A*o%9M^@h>kW>7s!M**8fuB$V0ZEAybL`tVp2<l^1Cu"
    "QfOeRIWaFg#P(OlBh+1SWd3=H=h$hdZ-cjQQ?^o}QB{ZoY48;=HcIL^Wsgaw{Cl9B_mdVxRhVLdnl;5EihM8QdLGN-Vx1Lh|dX@pdw>S^3c(gS*s"
    "Ew0nTLTY?Odf58a^s0GzO*jCi-!vWk@TxU#4F(0D|n%D;y%vFYm~Lsc=Gb(%q_{27bk0jF%ZgcteD$6<pf0gR^*SDCqt%?tCM%nb0p-&$&jl|joO"
    "@ddP;jfO-TC#nA*vshe6@EjKQ{1pv}ch?NHY)LzEDqweyzK$qy>p+&y{nHr<q=JZ=kFn}~Q#wHM+g-&5guK!;k8u4PW_p@n)Fls2LcEl8!|?9<BR"
    ">Do0~@O<qxIhGV2p*V*89Ls<)^9Y4>!onjIj^iJ%dJdlYbKz&ZkQI(Lm)MGn&h*_(mwQi>N|Jj|)$WUzo}*aoh{xoq-uuY%;}N&@F6B((Qy!r>C("
    "A%bC@$twM<|B;Jn#A@FFZn#)DCnPJtbJ-5enXyIeFDIB$M8t83d&ZJxr&>fKW5ndP+TU#n-gMgNUcZD9Z|$sx&t!)Wb4$>Ows%s|LfVJsm{c_@9J"
    "45n~D5_^;C75sE^sfXi*Ms)b1pqeLt`LNPf073g7@kSZKE{zvi$Jq+3~a|t~ReNbuib?OXgJcu9a*pmzNFl2~n+}v27$tm=(RH+#iex9q;+zRxt)"
    "YJo@hoycnm(as>)@<?yZfkWn<;+kx9uS+XkDKjJy^MPb4$8|yqZOB<peZ*QqzEfft1yf(a?q{}7}?lV>5<=zsBZGaHX5LwvYRcxn@y2fiWDjwx(b"
    "!9)c~n<;U5vrK5?iik&`+#lh}3#jyw%o$v%`WO!QdfRJx!i15xQJRC#!*c&O?=Qo6eQc%F#Uwvu?T@fHeHRmlOAuKVbEgWpLw;1`-zIaQP??*^S{"
    "vxgIgLZxdpZ7N+-0eDOK?VAwoc~OzzZRPhB7>-I;P-COgwFV+8U7C*ZwsIg=11+emVTE6=s+t5Xr%2%~w3;HZTX+O>biKiE%T1{4u97)uYe404<?"
    "1w<N_A0coOF7YIF&9}*bty}*-%(`N+&XnLZx3r0}p5hH4`4t<axu%L-&!#T7m98cv9)Q#T5^2YU)oDv@u?KT8LPFJjj_S2n&?1SgKO%yGv2&YEiL"
    "JX$VA6x~!Y&n5ViolrHO1P`Z*=IYa46UIQwWt`t>%P`Xl9sX^(2*kF#JbXk|;5z$ihM%hC(l&&P<$a~?f!__@$;vMp-r~~r=>FR_$Kw1-X$pfUT6"
    "H@7#>UvA*B7ao6PPK6!i*S(~Na><VR(LF8b<vi#c;T^#s50fTh}CU*EFvB9Yr6yUSVWb`(XoiE_-JAwsqkqQ1CS-i-E`h}797uwS9L>v*FMzMp?B"
    "%qJ5cy@!D#@6;^ji4CPH%xE-sPFGpF+s%2Xy%I^1r-{Z2RGDVPbJU?cP^fIYZ2rDv4LG*US$&rotSVG&gxqa;BgTq(dsR1z3mI3TQG(Viejl}8{s"
    "hEy%190X4069Eu+XCgfQ$g-_G{m8j?<xz&N*AW*rrK<IlLXfw;0N~0?jOE*j^y(yH89+2|#LJD@U+R_j8y8PO9+n;t^0BwoaBje1fjsdP-vZYLVS"
    "{@a?G*1JzKQfE@|&Pe%wph@zyfW9z5$Oyl1JV;F2L1*1<nn~-z4xGTpNT9jK7ohb;mc6-b8*Ah3hBAEXC1>Xm6sw3Ghn=v+@(O09OYVI5(i~&dTP"
    "}zyj9>VFU1+*fJoY45SV61}r~CST|@J^bKgMl<kAp(g;8>88|l}KWq_P3Rr;rurZ{t!Oc|+%Os`Jhe(T1kx@2%h_Z~iu3+^|v_-67{Y_9*F>{hs1"
    "Qb*YoEv~&$_Rc8GjMGXHlT=7;J88BAa4NvIMVZDnt`@K-+=sZSfJ?u0a^}tnn*d{gnJYIO>jRZn==;%7P$GL5pFa$nVZcm=2ml?x!v5&SJ`|)Al("
    "{E>S>^p1#d-;LG(q0H*voSc8w$>Iv~=U$cv!-t(?w&h$`ada$N20P4peXpEQix$9lTbnlD0IJXuzp<1XMV4Gx){<$j1g{ER*PjC+H)L9%igd4sZQ"
    "gq@8|n)^4u==Pym#N5C6MUM|n&7C%PzCGsg_ONoB=YM&+Z%>uu^#A2~eR-~O<^1{oJ@1dFieScHkM!%2U-7VvX8HA~zaDLazQJya)0!gBMLaK25V"
    "hk~2K=PZj(7e8J^Xh%?YMqD_)Q`02yY`4Su|phNQ+ppW+N0qc@tcPE<3hngktMPD7LYP727m|5uC@HIJa1{7*F@{(7UI9dFYkv*F)b-j0xIQC$Zj"
    "T{`!tNEn+=k{>FY%j8Fu15i1ynTfc*KBNS{H!OWg>5qby83h!H4!Q8os^#pnIx5Y;5xgr$oGJ>)38xV>04y|v;9V{+lJ)ud&U0?hj#7$r;>avLSg"
    "yLh@7fZ(PT2Wz~`^hju=}aTYjy@8d_Kr-9pH}ePpYkD?e`gVJZ#0SZPB22j?l%$F07?dwm0i^0eiyYE-bKwlZ6v7v@(PMYD4A}AVjgdT+1WjcYZ="
    "$>P2&EtsKwUqRx1sQK;R)%ojbPM2*nnSP;6-tE4FNeA}DX7zPcd4J6*d?@YB<^+XTNpUAs+iAD#$CpxcxlLKedoYg9g`y+QqRk1^qTVH*zD3pNZY"
    "^{t62^{t7nxNPWK5tKK<rgp4BwFT2u7O^FQi19ZERXMI-HK?bP=dBh69Tn8QsgqRNlp|F(<w-S*^L`C_UXNb`J-<k{`~Dd?@7EyDZvgF1KLh8Te?"
    "4p<Tq#)1t=QXZ@T6WVLa~n5;Hk>lM6`iWvBlE}#-=M8cQ@5%uwt=E4(!2`I`4<LKf~gRF}^$$Yx)^lV}5xk_VP2d#`^2gUR^%+H!)rvn>zDDq~p`"
    "e)A{PYRG**joBXTCrt3|FSHGk>{d7fL`1lak;gn2%b-q+q4^gS4Y6MFpwO6l7*56bTX}o$>diS?{yqa=0@ujG<i7rK*{j1AlYn_TZhgX-$_nU}6("
    "m$sk>7QRMQav-5pH`jgm+nOqe;?tW`%C!e@fvyZe6?RH>TapkJTLbV_r<-$eeo}GU#?e+E!Hme{{7SFsJB1Tx}=x1F8L*`OL<A_QeV=V3jHIXOMe"
    "OIGF}3@%$I<sivI}cdcFj7bw((de@W|ly`*&wFKNyDHy&xti!dK)UDHci^BdqJplf*vXzmky1axgL0bTn`K-cjS&~?59bUR)Gx}7fp&5N2JG2Hx1"
    "47ckgU|V<z*ml1JY>TfR+S03s@|)o!M)}$B5u^Na_=wTgUfs3zMX)Kf@e-VEz62+a!#skspRc~FuZg>nYFf4{LDRBb37VGeO3<`y%@P}DWm_Qj^b"
    "v@Cof=Rl?&T!}dwmJP-d;km_g9bZHl<M-^QRAv<GT-XV)k^d;Xa*f_*btP*QeKv@Y8F?s~agmd^Kp!*huI>UikB7`FJS6TY(yH1#0wH#f`VZG3KX"
    "4_f$;}_7qJIB%Y&*=PB`=H+7M!n+m4Ja?qRin~2siM5H&7tz(ENZ=zaJh-h!3zsf=$<JV)_C<CH%^7SE38<|A7H{osk5plhVV8e%q`%UaYLPUBKu"
    "liyG?8mFV*a&&2*~eqhqkUH~FFSiYD2e)E`CP<YjELam%io(gKSkd;@%j+{Q}nzk?L~x7(RWU^K1BQ!eLvHi$lt}@&+_Y0UqyemH_=~3e~vdXUq#"
    "PJ*M~S?Mep33@UNoZldeUCpL)>5>s=2n{?vm@KlR}9Pd&Kuss~NPc0Fh!w(G(5-?YbX+VdxEfBd9PRoljZ&Ux9Z%XhI5cfji-F}n{RiP`=Ak(jg("
    "`^}S2KRo&T%TswLQ$ND5`*pyVpE<hkFU&*nbY%o!_Hb-v!(I$q`!KbDH|hO&_>aeW<=Se=_Sjl-*st6#59Wk(oyUVY36EN`L*!qNCrN8Rq5gX8rG"
    "tmlM^)KzjE~29<yl6s5cl!xalSkl>Fquq$}Ly&zdf$4?d&+hug4y#o>$&=zsvPb|K<5LdRaE^ckkXsde{H*Y~P+M&i-GXW9wf#k-2p+3lWcBk3G8"
    "W!i(<L!+$*1E7!||sc5@lel<wWvV4BO5`R6?%R_N&$@PRNFAs&NzaDL?cl(w8>#=8BPhRH7Lm|?$&apktmj_cx?$^U_1<zVnx_&*vR`hnH_pisEl"
    "5NH`E&KAwo7j<-kH?CmzC6U(?s~iHr2g?(uWa3N>`3RwLm{$z#lgmxZB1l%rF=c~dLe9Wb9>w`53;5C+H1YBYrgj7kzXEqrEIlod(>Z#w)LwWNB{"
    "MBCT{zc`5HFqQI21a^ED{S!~J^r&ltEou3wMv83UKcy=!E9#NQBUOO)-AKV#4GC_kf$JnK(qFYVI~mq-6Js^u}Z+P*#JR_e{89<O4Q$1~5^9`4nJ"
    "<l%oRyk0-Ou7;mZR_~wQU-xwC@p!e76-R!xRD~$7+$z%gibEdlH$?x9bo|s!ox8`GM>}3!NFL8La(nE#*N&t4A3oakGd#BNBTCx+(*j!j=@HYG%l"
    "A4?*POz=J)B)>x&HKZ{aBjKTxKyed9`)9KCkz1!mq0I44+i?%)4vqu_bC+Q=<M%L9S<N)93n}w*p@K?flDld3*f1<BRPnkFS{J^Z)T~S$gTY!5x*"
    "@X}@=U&Ou96yvuFUG(9(O(lov9=K(@Y+Ur2;^v-j$0<C=jbt2w}!cCMzSJ&`p1&!A`KMtZogmN9s5_chvt87p=XdCpu!1u3V?p!YIV==9px5~h!a"
    "B_^4LW%pFXbRuJs#1RR9O-)DU|;M++;1W-+bDrJz3{VGMxwll`X<_&(CulH#!r^3buj>KwHG)ya2t5tLN{r9%RpEgENF7yK-?g0@Y>KZa(NT=O|&"
    ";*B2$L>7qG<*ndM)=)`(=3e*wS2wSg&Mqud+B4bldAb)BJ=H~}s16SNKb>T^RYZvu0ze-5p<38;e+xDEUU*9Onzi^TmV;+sfsLfwy`Y*0678<4-7"
    "U~DiAv||IQi3Dx~zrnQu`D0aUI1`8)qz&{1j-YH%H)tDZb&p_dFb!}CYyl0!1a1Sr!L@<Ds1e*7#0}C0d2RX_THX?<8?+6&jUHOg5|{?Gh9zJti("
    "|MA{07$sVXbYCac>YeNE@uNbc|wdHMg1D*It03l_vrFN;TG!6T!KG+rV#dZLmc$3t`@GB0eLj`ua>ibbe@!AG7?>w#vy~Hrs<`;_amC%+&DYZ3WB"
    "i%gV##4FIfO+VE!;(t<y$iT3+h6|~vUqNH_xW}deB6*;dW)_avkX(ny)b5l4i@pE@8?eKFuwyf|Uba|+Yu8i7DS<`2H+z6iO7TT_vQ}*lV>TZ}x8"
    "~RSq`Eibi7-%<NdAMYnWXe)LW0rM%y4)~Am)oo8>Q3A#Tlh@jYAXk_8UmM_w8<g2V>2FZyuRu3#yYyXA867V{gPX>LGN{phj!$-QGU|89tF)DX+_"
    "Q(okA)9&V%-o5C#tKR2nj>41$-QtgEI;=vLxQ*qx7IJ2ZM=kMj2;`jvGV(0RCZ9~42*Z8k(VYmXq(RtbSD-4JwH1OehbElGf;vjprqSHi&hBjCAN"
    "f%v!5<8@7y04$*G5S+$A(dFF)ezU^sMa2Pz>y-+xRq9HZ_jGrG)8ekYNJ7BtRwkm$*yQa=WubLtHW3B+B}OrHU3#kJZKX8UejXxy2qBtUe-jF9dg"
    "tK}W8WXfzCZFREq|ViLw`DB+H;TSB@h>5o_%S7$xDg>q-zN{3&TVC2d~^9_QaVfUA&|%A41nEpX)r=t=WWOF?8{)Zxf)IrKlIU3sn!@y3&~_$jlI"
    "t-S<UUWQm4IV;e2h=zeGd+Wls^Tr}tyhLD$K2_jwrDNuD+G*PE14247W<98*@d+*e$c*|pO0=zX_Z#QdS7w^-{Vh^IMD-wvH>!?D57KH$G3Exn(D"
    "797PG?JzIyL!@fVnoZN4bU3H3F=?rp=`j(^OyozcXpjeIBB>+;9d-cGjS9nXse(D?>=GD!CAWvw8Yi~tiE}4h1WO%@eaZv5dZjluV47^n*e@G5N^"
    "b(e2HvDESa5HlN7dg12K=)S6!-jo+tNg8?qFEc<8YZA^U~LdI%d~71Sk<VDt2{w#T5?se}A7jDE?$IIR`&H~*hM-@M%Q>#xMwl79WO{QLj;H~G*1"
    "^B?q=g@8-O$1j%u$*W&;R@xYYc<~|84WxK7ZyL~>nKungA>J==3UPb7@&h$AmrG~@1tPT4%z@<OWvsbGAznbF)ObllQEG*!VwDE(T_{R}_bwE1z<"
    "U>p%7FJS)I*5ruK0MHf#TyG3stf31ZPz&yd9w_9B)Es$}ew1=*ti9Hl<N{qvNez;54Fea{IjyPvCVSZ_R-HC)ec{Wbtaf)HM$!IC)ZCh?eif8!vP"
    "kOex4nM__vd&M#bqy>J!2gk?ggt}tDgVQ$swE#vi61kW>~&8>^(i6u}8csfI1Y%mu{lw!AlQ+EUK>TUp+L;=7OW&paXb-kB0b_39mroh;tP>kd{("
    "WsVU(ji#^yK0p%X|w^L$x4Byas5m@<tkR1OrsHO=9+FhB;d&{fm`DeKw3qgn#_(7Y}PQct+Dt_o#smgZhNRN!U9PH764C~5zuO%9zo66rJ5+y77r"
    "s>8PI5-cz{lODVd=g3<;(^noG2uMYc+c449NL<r6<X^N>$^g$eS>Z=ct@<=5Y0X!5DAkp1OT<ul$spOCUMQe=E&`-G3rieH9CwvX~9TO*Ip>)rJ0"
    "uNZjxU=5@^QNSI#7+ckzo7!_zdu}p`)HFi$F3WHPOP9h}YZcVB)%oA)c*_PwJA!#f(<Zu&7t*ZUGU!LNUcNQ2bOdePWqIDZsV$+rZz}9k5N=*C#v"
    "XF(PO*#NTmtEq4xg771i;N2zj?*h(jM+91K0w6DH*q}x^e<V%EL{?+b>{>;my0MJh`UI&0@HDKUL5p+PKIBw3rwLoPp`qO&w?Bjt9QixZQ!8RpVX"
    "<HowM=4w%Lf6!q7}9S-bVjk_DJDA1+JHSKC>0+X{20G4<akR?k3Ck?G}^8%%N<Hm(cY>cJDHttpk;%7u<zv*I1@iTN=FhNlk8#g2b@xx9eeui#~B"
    "pAwl;|7Eve&%6m&C^(&wA3r$Rj`el4ZM<|9bYA(OCtrMMvun51zt%|TTv1;eKYS#PtH7bW8>K|jPvGXUcfBFmuGh}e7n%C6g$n}OOkgQyk}-QE!$"
    "&W1#m7!s?%2erALTz-AYXyto3x-re|4o8KtLXPr}D2BMI77WMy{RnU^I)KxYbVr-}IMUZ|+DI<2(t=rKVokvdDKEp)HPKC0n$SwDA4Npk7Wtq8gH"
    "xBRMQhBj~Srbw=3O!UNTV71zQnO+aD20s9qSS7gB`T&-i2Ow*!1TuX}u)0sD&0e-XfTGq1u+(vYrq<VK=bfz&Kv&ihOtrp#=|Vq&bCu|I%KR#USL"
    "*|iNmPQcD(pJfpboIqP5@n8OR$6=0FR9dRE;G7O^Q7LmoEfp$3cLm{RlWYQOw+zpqQQPo)YjJjsT>La_WK=g1fg20*)Ijq1QRxh{`OgI*KJ({}E`"
    "CqMce|6iZIl{RpNcZNGS-vsj`vQn5s{KVr$tP9DK!)rv7}RV&SqDrU5sRjo8Zs+f6u?25TqwW7_eYSqVofo|36hgB<@)2i0%uxh38Q|0t>R;?TXm"
    "DB68YQ2J0>vdbTUeT)cN>;5`wrahKRqIu)TCZl+%EfB&!_Czz=4sW+jR=aF9~%^Na8|9{aG;oVluzKc+T=b0MacaF%3#QrcU`+@mB_6E3pA@uUc0"
    "9}^42|Z!b|tW3Gdt!C%SS^z*%k5>Y_NI`5tk?>-LmK-nJ)}c-fv<x|7u=&Frn1i`C{`tu|@2eZ}0ZHfdXM#XPMx<6$|9r`0AeOHpQ{x7v)C)n*J<"
    "oAI{V<gsz(RHk|avejlRR+~IBE`E4oT>L~ERWBV66_{3=JT0!A^02u0;g<x(%r6OwnV%69v%Vn++*X_XcA%K~;XpC-tHFx7ShezN!HT(AwXUxO1m"
    "jb!{8S*253AOETD4-fwW^gSdBhSe@`xoG<Pl5xwrb7Msui=aRjrtWt!mB1s+Fh0#Zqoot-P6LML4ZCsp0E&t_UeG6?^etveio|Rxh-jBUX7Aw<0X"
    "VsssA{s*ZYCb=1?UgR4hMV%gCpxU4#Au<D@Nr3kr{ue@s+Um#m`aOHkQ*sbunV87y-R`^`77xV43!f)<V_?###5Uk8GQCMZ(qLq0|R^}~RnPcj(%"
    "Dh!8b6UPpj%fHsoY3x#IHB1aaniTE>s#LSE${l4cYVvdzU5ut@~&@r*SEauTi*38@A{T^eapMP<z3(Mu5Woaw!9l#-i<Bq#+G+u%e%4V-PrPOY<V"
    "}fyc=8IjV<rSmUm;zyRqfn*z#^{c{jJbn_J$^E$`-*cXP|Tx#it_$-BAb-Q4nSZh1GiyqjCz%`NZdmUnZ@yJ_++947C=Ve&2<Chx*w@-7@E@4{j7"
    "E*vK2!eL@A946+%VPY;ECe*@VLM<F7)WT^(Eu1FQ!f8T{D`Tp=aGFpHr^&K#nk?g5nW`+DCd<NUvMih?%eaiDDhsEHuyC3P3(iDXa3;cnGZ7Y?iL"
    "l^IgmLjrHO0j@)f5-sR8zs3EDO$LS#Td&7F^xHWLa<~%Yrjm7M#hl;7yhVZ?Y_SlV!o1EDPRbS@0&yf;U+fyvefQO_l|3vMhKLVZoaS3*JOn@Fv2"
    "-Ws)mgCb`08k}F&$xp+_1s<O)jR=7+mh0CN;xJ)XA%cN4cOe%%Tq*4ebl|nFK6oLt(5KI__V8SQ_6GkDJFyeJmt6qW$qYz9Og<!%c1QSLfm@o?AB"
    "aC>r#saqqqi~xr3bzTPaGNj+w+W+gn=lHu38QeEFbcN`qi~xr3bzTPaGNj+w+W*_{b9vyQYqXfl|nqMf~Y?z=4f&%P=8R&>s&E`Nv;r0a`6(1Ra4"
    "L(R!v2dWg(g@3(;g*h$hPd^#}12O{j%vLM<c{Y9X0W3(169NG8-mGNBfd3AK<+sD)%gEhH0aA(>DM)E`#NCfx${hZVDlxsXiEg=AtbWD|2Co0tpv"
    "Bj!T(8(dbc+2mcwChtNvc^9(DyO2%Zg>3RJWRrIxo4gCz<Xy-n??N_t7woeWfXTaHpPc|q-i2cFF4*TM0F!s2n7j+c<XtEx??N$o7mCTdP)y#1V)"
    "8B&lXsz*ybIOjU8pASLN$38s>!=hP2PoS@-9@9ccGfR3)SRZs3z}1HF+1R$-7WZ-i2!NE>x3up_;r4&E#EZChtNsc^8_=yU<MDg=X?Dw2!<CEpA}"
    ")E;N&Op_#l3&E#EZChtNsc^8_=yU@10>s#LSE${l4cYVvdzU5ut@~+$bF7z$<`WAeB3%<SuU$^-k7pqr}`WA(Ki^9G|;n<>ZY*9G2C>&c9jx7p@&"
    "F{k4GI4B~IJQh2TPBVz6UUZ`W6Q*0^Sdy%a2#7W&Mh407LIcZ$GL^$+`@5g;W)Q&oLe}~Ega_-j`JlP=N6803&**I<J`h=nsB@i6OQ*`!tp*#INp"
    "Z|$NMnhcpoMl@56-SeVA~(4-<~}VZ!k~Y@&A`CMEB~q~v}4uc~XivR#E?|F?=$LIS}+Igm&HC0t7~%*@X$C6f)t7;K&jF9{l#ODV@d&(3g{c80sO"
    "Gu)+};V$hAcWGw~^ek5T9K=A+&KT&~83R2#!=>68F4fL(sTQk&4#K6{87|dQxKv9q(6bc2)l&FYOW|8Bg>SVKzSUCrR_+sI$|-y+ceyI%@U7f)$C"
    "9S-t=PY~s+HHY5ajT!*o?<&wH&?`+muwTIeaU22C7<f_*U#RSGDHwt=Ju?YR%zWEr)Nl9KO|Z_*To|TP=rgwJUrpR)|!sSNK-!kW{r^;ajmaQq_8"
    "eZv|tIs`U!rij8Ng)+>CgUEy2p3f~HTA64rWzSXYqtzi67wU+R$R>HSh3EyfZe5;l4tyaRfS_$83C48%u@U2$Dw^|9`Y9)NDmGG@r!naxp-)a`V)"
    "hv9g*^h4pKUje9t!Cj{&BC{ug>MC8k*d|gx0;1-H4EQr7QWRie5+abR`49DT5I@LtKnO%hHteRz7@v^RjoCAtJUzWR>QYi4c}@te5=*)tyaUgf>K"
    "G<TEn-3TS?Vg!?#)s-)b#<tF`d0*21@13*Txje5<wat=7V~S_|K5EqtrB@U7Ouw^|F|YAt-LweYRh!naxv-)cR4tM%}$*2A}258q0LD3-MU_*Uz6"
    "f$*(hj8e7s@U7Ovw^|S1YCU|b_3*9M!?)T9--@fNRIMX?tBvrjhMksrgAKR(diBd=^~+;u&B@W!!jhxaGmmgyhWJOhd_QXeptVv_JqA)WdkmEHQx"
    "Aev&tNrT(Xo@K3$6YcyhejsKo}&@e`hfMor6V~tCybPSZzMqE9B^n`o>!NAi59j6>@aO^0C9!ReM16Fn=uQ>Z|ha#4Wdg7VEYSUA)OG5E6m(QXl^"
    "o@m~El_&u^RzqLi>0moP75(`MaRB;|1<w-3(tK)uRDbP_0qj*4l!}@tvKLCCXkOly*&YM@~F;9<?K#>C!J6{|PvPJ<-C_(AnyLbqdb~!+*A@QGYC"
    "HfvA&buW<#6%rp;f)D`s8i{^Wf{<GVL*tPXh3fZ1A2ce?;T-4?+gQa?`1&m69)9YVL+fklL5s7+(RNX84wmC1@f;9u&OLO_(~X%$4@dKEW^owz7_"
    "_AbvPLi*fQgXa~lvMC>Gu$C>hYV`cjXe!ho<FA~ak*ijo0U9Nt|9RF7XG)+1VJ1qBCd0DCB8Kou*(G$2qOSEba$fUv{Dl;e!*smHAvtJw2N1H$%;"
    "`085*R6VSs0aXzDvaTyu2x&m|%wa&Flam2eP*}@=KrOe5=i${)IXuJ)@o@?u5*;DVxg|U!gs5kP5cPb+fI!161F9*4h`QpeigiV%nSLuTMIceJaf"
    "?L*#dQ3%%77|qdI)+LP)!j^)HK6@YPw}WH9fyGc*B5dih!c#hyg*OCj$bF9t{X2dNLqz=*fUUp%(@O3OyPS2=r(`pwFxNs&50zV`~`e^fDkUU~L1"
    "+zeUUuVpOb)ss^rO8PIhu1M(<L2INs#7|<1cO9eHYst1G>0(BYC)z(*i8_*ST21xp%u00kD10va?-o49!u5TMq`Dq{J{8bL{wn}`D%OX+Sl}vHUm"
    "ateDP^n=+*jgLu^<_Y1gaLVMCIj-=Oa@ebE3dp^KpvmTfb3WXWM>$Vr7$4N%Yf_(1G2IV2wW8czncZv>|_Vl!+<<UlL6UW24r^_5U7@AK&b8b;kO"
    "M43tud}M`|*l8g9RWf-VfGUR%T97Lx(t(C9Xx`ddVVZF<{R4S3uZ22|%VAdlQ+K=oM$R9D~Pp<7f>3!hQjxeN$vVf@O2w`D*czR7@ES#{lP8BnXs"
    "fLdDy)cQ7{_R~Jv{8bJQ<wAUHcaB8gCC-+xN3>geM7y=8Wk5YI1L_g)f&x+o<nf#gsQ*@8kC+$4kTRe?mH~N0Cj-I)85QOcT^LZ0s2BW@VL;;u0~"
    ")`Zg~xSaKqF$`8k^)Clx0A}!hl9y2IR3`7|`h3fJOwspre!ljXMm;gS}-y<J}s@#yS}gqP=ZE^S6jIqG6K9sRlgi3j;#fCj*)m286Ir1~gaS0ya2"
    "R&s;tOd-P;L^Il&)+kj?-#GrSJx<=3^1LEc?y-Ul0unjp3=>BORcllM0+m`ru-HEmk=iU-}$j1>7DBW;+?Id5DY7<9kSlH*_jvx}Vaeofj*fOgR!"
    "5#DS*e)|6Y!Ia2*dWMkpUNFUq*hbPPhTmImGWFE-z(*3rTngxzexE#B4xyKOnFUyRZ>t8T#+&&Ii?J*b*2oSb*2oCb*2nnYNb3@%5$ZBuauva^1D"
    "+0B4u#dGG&BtOc{Hqm@@WIF=gzbV#?S<#gxAoIe=tLDU<e`ps$q2N_no7@0IeiQhry;A5(r2m*RZGi*WNCFrK&F%H+j1&*a8K2>#bhG?~VWEuXS1"
    "hYz6)>IL;V6L=4u*8}1$E<{-;7916wSa76E!GLsu6HuIDaHRWBfOMP+i06Tbbp93S(Qb1`yxoE5<MA&?C$DWHI&~_-5l<Zx>822%YaevOlTH%?{o"
    "ECeC!N^?YCMn!)OoB8Xz*Yf5U&>?x>qUAXCvIZtX#i^($-npI!lUJ9BlQZt(3HtlD1OPR!Z7RNn0stD<yBG<gJvvm6HFcB5zgXKdQ)E6?rQl?_yu"
    "O5Z9Ld+Ol6;;%m!!Z8@(kXW7z~EnWE|UD;BUEk)T<l&$iz6>VG5wq>-XXxqZtwnN)u+g7=4McXcb?E=^?K;4S2yC`)RrT!^O-HNV%6kT@_>n>v5m"
    "R5IR>$bGI?W?UO*><VhE_K^YvaRyB-8S29n{Df)ZJo5OleVj}ZJo5OleTrzwodxiN#8o@TPJ<D$o@w=eQT%x(N5pm>AOYtt*5^A)VH3-R>jz=7+V"
    "!%YhY{*jIDvOH88dY#@4{t8W>vxV{2e+4a}{9xiv7i2Ikhl{G)-nH8B5ZU~Ub}t%12UFt-L~Xy60ADMlzSF+&?@;RB;6=u3og4r5`E9WU(8=~~$R"
    "Wm(u=rY-DVsxIt~sx6G!w}m}ZoVI@tJb5pjNUe@|>jNDo9@BbEe9Y@H^YL1b7az-dEPS-}Xnd^evGTF4N1U``q4n7L-?1JCALn|UeB2-3e0<j9!^"
    "d|$zI^=F<A+C_rQ%~^dCMwqVtLCdZ(@1NDsN(W%PMbTdCMwqVtLCdZ(@1NDsN(W%PMbTdA+NQN0zs&@}}`8UyRN&PT_bpA@KXidz@FLrHh3y%q8#"
    "#=~A`9bH@u+9J+>hp`zgG{dmE`)MM@!ERLlmMY>p^%Gp1?P?6H}tQV@pvI>oZjLGst*Z^O`zTdhvpZAM6{mWisz<lr3wJ`?hj``D~?>}I0m)~F-b"
    "NuQXZ-yUsM`KGn-eUtTFw)0%qZ4<PJH})gCIJfZ8Rr>3OqX#S_F;M~_NjlE4ZE}=@Kv6W@X^4luLcOVQB+J?t%&}^)DO;{GEHnG?-=uZn5%%-`Y^"
    "wsvq2wb7*c|d_%Kxf)({>M#v@PH@rSrNf*E4FswS{L4&E&=_{I~4bG%NTKbmn$fY-*O`{Y&e=mB{>JYrQ|2~UY<oD$&m@90-~?K`?FUia?3Wjc(c"
    "NMHFco!GKe+E)Rw?9tER(7b!b-{u&Hl#`42UrN|hR=_!!@`HUyPxB<MhUMTq92Pcj|Ld6)(6%&;wUS|5hW|x!h8qQw-7aDpxRJnre_sEk3GJ5K$4"
    "7uK_+ZNSUwT0QO^UGeHT1EsTN@x2;Jr|Qm|MB@0UDAwbz;<_9fU=^WPk|&-M9cT2=@^nAi9w{2)o1H35Q6`0I^<pe}ot+btUGdI?(?Ezv4Lq{2Y2"
    "EJLDdI69h|DWol?kI6F%06?skO$4zvmFGy9z)X>=;<)X+~jXt}+Kvy@EGL|=Qr8e+ZaEcWR5M9OjP<$*+v*sPXpvB9CIQ*s$ut1$Mv%}P>_Z5Vog"
    "RN97sA`f5;@zfK4HE-h4Jfq$O+;^iRZMSyO-x&WuH$^@XIMl(l*JT}D<Fu8FQxG8>Ie02E=u78b1_B7WNNNd6<FtTWhpS9x?ui+@Qx!<KUl~<D(w"
    "T@bNOb%AfL-p1YGPfO_@OAmrCIYsE-2SJjo^DasNPAMFv-*Of!Sb@e;)3uMu9LV;$5bIwKrx0mNCUlk(uKKq<@^rv-{+z<B{2tOT?lSVd6=2oE+W"
    "B+d=suq7Z4DBa4<<*lc3yG61G_~0$|j<s)-va$M&`y?EepicyJdE3ikat-_z1ToU5Z*l7WU~OO}yf%tcFt?N`L&4H&W)=lbRK^PLd0sM<0*1d&AJ"
    "6EU9Aec@0{aL=-IPO|tWtXiU2r!-Ou(x1a*SIo?B&;nTLNBY2-4tjQaB%|l#!T;xyb#|?+o;9%+C;psnCYGi%%)Iiszwk!QGnm!Tf>V>dt=a3m19"
    "btPl71Wkw#saO}_rHN`u1LP$JMegQ(e`OzHRnUq@!K=1v@KEP>rO92%}N*gtc;|aI=J{(X0HzHt<4%Q+1TJ<j#$FUx%9y<-6O9?-Gt^8c%C(-~@l"
    "u>V3V}B}jfmQbBW!6|{e_jgYW1;LVl@P2}AM?X%`<qxgthYyh4%g$OLPB^eRV1fu&qje7CW#_DFl<g1#G@dG`rrYiz$6(~gKoH6A$KN+n=9Ur<>>"
    "ITS$60Hr5~LCc@HQEElahS!CesZYwG7ZZk$S!Md^r%&WBn0P^o+>fRB|NQe7RBJuf8%?=ZcnL)<iVQw3li{vM@_`=&l>0~aD4s?~vcH+h?Z=td3%"
    "!z@r<0($r64p!JlHizWIpzBmGG)O0?-!(A{0`{M`nBA2p#25@TgMe7JoGcMWVc~Z$3_Azw7vnH6m^z$6vI%&K^&SwzLiKJKizPKZ48~Gn={XXcEG"
    "JL6sua98spw~zL7NAq<WNk8GkL9(-txXZmXrG(WjDM$N#;EfhE4U|yoX#>$~%;9x+C7AG^lvY`;NpS@xnM6CvP9GddmyuC<HHOkW0L|CQNy-<PVZ"
    "jK-?f5Z*ddZaZts$TB*n;aJdqWZ34Q)ChvE@|MENqKhcvq#LRGXJ-q2crF(FYR)+p$K$Zxr{~jX~f>gOvh{yhUcthE-Nisjo0w+1b6JV~ms*-SQx"
    "h7>i!3D|EW4mNkAA~_e&g$JTZ9FAA?qI5N__&3sHp+t|&+a=2lW0}}J#fpHQJ|OXtIPx!GI?x5h)s(p3yPWKDaGS{mVPNU+}krK1U3b9b@@2)G2{"
    "ubF(6xf0m`<A#lyt%t=<;<DyK^7p?AvOT!>xdsdx_Y_pL^Q4VF_85l?}1iiu5@V8#R_Nhb67&{GWcw;qgp$9m{J?x!2l5w2-kNqd)^@5!3Nj)8kB"
    "ZOnzMufPr9w?akS{r%9X_k#>zFX1WTTEHZVPC!h2(2zSe4Lr3GmWbpX@;bd!Nr2ijUxe7a!k)Zi2KhC8;63t_GvO5FCm@!YZ{-Zbcpqi$5<j1^#!"
    "X5}0&^7kE5aaw{F*Qp{B9P?1LO+wN5D%YqJW6rXrJ8!WVc^^Tm9`d2r&X?SlB_Ed`K7EPB8R#BCbv>_6bhXOAyD|6C<t;_T-Zdrem(*$_%c0!etf"
    "oVBI5R5|;vE4<5U!j>(0~4t?P=r>55~bL#pSdkkv)u&yzXW9-Lc_uFwaHaBJHihda=bsUf7P|KkYMBb@Po*xK)_=|<bft9Q9XE?F~3ROVt%T;Y-o"
    "99J0*|F{5lRmN4)5Cs349_@JbBrxRGA>L+T{pX$j_n79VRYw_>yz!EW9O%xdhLq#;g>SU=A2KG;^KgET*}BB;rB_@@85Much@1xRzThY$pESI%At"
    "cUrepF$<4wmGunh9T^(HbEY)Gi=M7jsd8#a-^0(Q}h0^-UMDcytR>)_z0W3Ye7!Z0;OCUjs>$zRIDRqe3|Anpfix1bMF4|eYz^H9YS(;$&^5roLb"
    "P@rS_pcws7$E9Lm^#*jAJBJ><U^-9D5Vwqh0vd1tDhX_}z4QUDAL~_e=yow01*Rf4#`aAHw%tSK3oB57Q1z6lV`J%5JH#=Y$x&U$)`i4~xf_JOW#"
    "8CddOu17J1d6Xx}xuw^@&ZUxAcK+rq7`da7mO0!^GYYA2mK4zR8TlI`*4B>Qb=d^p%_*GS^p)7Q0Tfx~htKs%V`aGCNjd!0yvrD89$c{`wI%&|y<"
    "~9yEKqmxX)OTt78ckDBZE>5CzHUqBbyu1BwLOl~Af?O}5}7<qS(nq$tx@#nAAO4_mJHXK9lhY2=N2Q$R#9yhm><MQrt^L5czbdQ_cDd`Y5kEx$Q="
    "&I^$h(T+-hiAc-1mHnTQ}EC^;@j?_vqLJ)LudCzO8fO3O*y*Ii4jNl$k_+*eCv_3zhwjHm=s{}-5EDeeR~1wZ2{D`9&scNCpzM0o0;->-0ZI@vWL"
    "w+Fx1Dc=qxkvu-S*)dg}sbsoBG3AARfX3w~uPpa)aALl2vMgwJn1Y;GFecMqE#GUEY)=11^a6H<<08yevB!HFtW4^IDhSqWX_i$P@fz}ca4agmGM"
    "@W76ym7~jCI04iL=D@zBEOF})1K*DQu*H}hZbP$ATAbKdcc?YtMxr8_z$<O?G9Z>Vb?;!7HiiQo)Y2vw4{m82f-bWMRfH~cJy_SEm$p|~OmR~Ky2"
    "w=x2n^FTGIljrHPQ)*IZ){!nXVl8b+Ak~Sr+a+D)RLnI{Pq>@_Oj(kjlceUk!mhcJ`s0U<IUTH<laZA3b*VQ5?02JCZJjRQ=|*v7wK>0oKmJddJ0"
    "ZHuc(-Z0a^Vc=n+U#qi*nT-ku9D6#?FGVa3s9_$^v)ow9`d8;e*=-In<mJiYMBWLN+bBj0&H_X*f-SdO_{iep{@v}$E`r5VpFs|z!KYN5Mi7<^A<"
    "@Wg5gH!$P6Ir*z7pnqA#_(c6pr`;IL3fS)`U^sDS>+2x?^6&n|COVd?h&-VrW_tYdyt}}n?tGJBWQ<uJ3s|aL0{Y)r^@sQ+8r^KgbOR%RIPXf?XF"
    "1)yJ>Xwn;t>CKVrfkL=G+CLaDBPz$0ky@M#bqS+7|>kD$F1*IO*WL|ldt+QTho_+dRs0py2s0#(U@jQpiW5kPzNppV^ok4PG;8<!lpN6;iJ2mBTs"
    "9zlCg+zGLeR5+h7JcRa+F%jl}*JO+_4qQ1G9~ay{R|$FjoW8BNb?zm^n%6CeWto`|;vtH3K-cqq=`HSi<7~;m$)-Dg=jMFBdg~HDY(4`KwEuu#;E"
    "2=BG33A$v;VIUyFrh1=#vYWo%-+?y1#5q1LvI{h9tvdXs<?=%46uR`I2#hO+AtufFGgD{GIxl%lu^}=4u}1&OM)4K!@x8AHtuDm;"
)


# ==============================================================================================
# generator/verifier/core/confusables.py: Unicode's confusables (UTS #39, section 4) and the look-alike fold of a
#     log's origin.
# ==============================================================================================

# A prototype may be a capital (0 -> O), folded only by the next round's casefold: the fold
# repeats until nothing changes, within a bound that no crafted origin can stretch.
_FOLD_ROUNDS = 4


# Default_Ignorable_Code_Point as DerivedCoreProperties.txt, Version 17.0.0, lists it (4,174 code
# points). Unicode derives it as Other_Default_Ignorable_Code_Point + Cf (format characters) +
# Variation_Selector - White_Space - FFF9..FFFB (interlinear annotation) - 13430..13440 (Egyptian
# hieroglyph format controls) - Prepended_Concatenation_Mark. The standard library has no such
# property, and its Unicode database is that of the running Python (older than this table's), so
# the ranges are written out rather than derived from unicodedata.category at run time.
DEFAULT_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD),  # SOFT HYPHEN
    (0x034F, 0x034F),  # COMBINING GRAPHEME JOINER
    (0x061C, 0x061C),  # ARABIC LETTER MARK
    (0x115F, 0x1160),  # HANGUL CHOSEONG FILLER, HANGUL JUNGSEONG FILLER
    (0x17B4, 0x17B5),  # KHMER VOWEL INHERENT AQ, AA
    (0x180B, 0x180F),  # MONGOLIAN FREE VARIATION SELECTORS ONE-FOUR, MONGOLIAN VOWEL SEPARATOR
    (0x200B, 0x200F),  # ZERO WIDTH SPACE..RIGHT-TO-LEFT MARK
    (0x202A, 0x202E),  # LEFT-TO-RIGHT EMBEDDING..RIGHT-TO-LEFT OVERRIDE
    (0x2060, 0x206F),  # WORD JOINER..NOMINAL DIGIT SHAPES (2065 reserved)
    (0x3164, 0x3164),  # HANGUL FILLER
    (0xFE00, 0xFE0F),  # VARIATION SELECTOR-1..16
    (0xFEFF, 0xFEFF),  # ZERO WIDTH NO-BREAK SPACE
    (0xFFA0, 0xFFA0),  # HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),  # reserved
    (0x1BCA0, 0x1BCA3),  # SHORTHAND FORMAT LETTER OVERLAP..UP STEP
    (0x1D173, 0x1D17A),  # MUSICAL SYMBOL BEGIN BEAM..END PHRASE
    (0xE0000, 0xE0FFF),  # LANGUAGE TAG, TAG SPACE..CANCEL TAG, VARIATION SELECTOR-17..256, reserved
)


# Not default-ignorable, yet drawn as an empty cell: an origin reads the same with it or without.
BLANKS = frozenset({0x2800})  # BRAILLE PATTERN BLANK


def is_default_ignorable(ch: str) -> bool:
    """Unicode's Default_Ignorable_Code_Point: a character that draws nothing where it is not supported."""
    cp = ord(ch)
    return any(low <= cp <= high for low, high in DEFAULT_IGNORABLE_RANGES)


def draws_nothing(ch: str) -> bool:
    """A character a reader cannot see: default-ignorable, or a blank."""
    return is_default_ignorable(ch) or ord(ch) in BLANKS


def invisible_characters(text: str) -> str:
    """The characters of `text` that draw nothing, named ("U+034F COMBINING GRAPHEME JOINER"), for
    an error message: printed as they are, they would show nothing."""
    found = sorted({ch for ch in text if draws_nothing(ch)})
    return ", ".join(f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')}" for ch in found)


@cache
def confusable_prototypes() -> dict[int, str]:
    """Every source code point of confusables.txt -> its prototype (one or more characters)."""
    text = zlib.decompress(base64.b85decode("".join(CONFUSABLES_TABLE))).decode("ascii")
    table: dict[int, str] = {}
    for line in text.splitlines():
        source, *target = line.split(" ")
        table[int(source, 16)] = "".join(chr(int(t, 16)) for t in target)
    return table


def skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, default-ignorable characters removed, each character replaced by
    its prototype, NFD again. Two strings are confusable when their skeletons are equal ("rn" and
    "m", "l" and "1", "ɑ" and "a", "ab" and "ab" with a COMBINING GRAPHEME JOINER between)."""
    decomposed = "".join(ch for ch in unicodedata.normalize("NFD", text) if not is_default_ignorable(ch))
    return unicodedata.normalize("NFD", decomposed.translate(confusable_prototypes()))


def _small_capital(ch: str) -> str:
    # A small capital (ɢ, ʀ) is drawn as its capital at the height of a small letter, so it reads as
    # the letter itself; UTS #39 leaves most of them out because it does not fold case.
    name = unicodedata.name(ch, "")
    if name.startswith("LATIN LETTER SMALL CAPITAL "):
        letter = name.removeprefix("LATIN LETTER SMALL CAPITAL ")
        if len(letter) == 1 and "A" <= letter <= "Z":
            return letter.lower()
    return ch


def origin_fold(origin: str) -> str:
    """What an origin looks like to a reader: case, compatibility forms, small capitals and every
    UTS #39 confusable folded, what draws nothing removed, until nothing changes. Two origins with
    the same fold are one log to whoever reads them."""
    text = origin
    for _ in range(_FOLD_ROUNDS):
        text = "".join(ch for ch in text if ord(ch) not in BLANKS)
        # Skeleton first, case second: UTS #39 maps "I" to "l", which folding case first would lose.
        # And since case does not matter in an origin (hosts ignore it), "i", whose capital is that
        # "I", is folded with "l" too.
        plain = "".join(ch if ch.isascii() else _small_capital(ch) for ch in unicodedata.normalize("NFKC", text))
        folded = skeleton(plain).casefold().replace("i", "l")
        if folded == text:
            break
        text = folded
    return text


# ==============================================================================================
# generator/verifier/core/formats.py: The field formats of format v1 §1 and §3: identifiers, times, hashes, decimals,
#     origins, paths, equality of JSON values, and the shapes of items and reveal documents.
# ==============================================================================================

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


# ==============================================================================================
# generator/verifier/core/sodium.py: PyNaCl, and libsodium's detached Ed25519 functions reached through ctypes.
# ==============================================================================================

try:
    import nacl.exceptions
    import nacl.signing

    NACL = True
except ImportError:  # pragma: no cover - exercised by hand on machines without PyNaCl
    NACL = False


def sodium_function(name: str, argtypes: list[Any]) -> Any:
    """A libsodium function from PyNaCl's own library, through ctypes, or None."""
    if not NACL:
        return None
    try:
        from nacl import _sodium

        f = getattr(ctypes.CDLL(_sodium.__file__), name)
    except (ImportError, OSError, AttributeError):
        return None
    f.argtypes = argtypes
    f.restype = ctypes.c_int
    return f


_VERIFY_DETACHED = sodium_function(
    "crypto_sign_verify_detached", [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p]
)


def verify_detached(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """libsodium's verdict on a 64-byte signature by a 32-byte key (PyNaCl must be there)."""
    if _VERIFY_DETACHED is not None:
        return bool(_VERIFY_DETACHED(bytes(signature), bytes(message), len(message), bytes(public_key)) == 0)
    try:
        nacl.signing.VerifyKey(public_key).verify(message, signature)
        return True
    except (nacl.exceptions.BadSignatureError, nacl.exceptions.ValueError, nacl.exceptions.TypeError):
        return False


# ==============================================================================================
# generator/verifier/core/public_keys.py: Keys and signatures (format v1 §2): Ed25519 verification, key IDs, verifier
#     keys, fingerprints, PEM files, and pinning a key from the command line.
# ==============================================================================================

KEY_STATUSES = ("active", "retired", "revoked")


# C2SP signed-note: the signature type byte of an Ed25519 key.
_ALG_ED25519 = b"\x01"


# DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the 32 key bytes follow.
_SPKI_ED25519_PREFIX = bytes.fromhex("302a300506032b6570032100")


# Keys whose private half is published (the demo program's, in the project's repository):
# anyone can sign with them, so a site they sign proves nothing, however well it verifies.
PUBLISHED_PRIVATE_KEYS = frozenset(
    {
        "SHA256:1f4dd2f8d7bced8f341897bd961d73084b9ae5ec03a172e574d197012b534c13",  # the first, rotated out
        "SHA256:13fa4089af669bb603a137d0ff19e2ff39fa83fc2fd6947f0454bd6b240a7183",
    }
)


DEMO_KEY_WARNING = (
    "this site is signed with the project's published DEMO key, whose private half anyone can "
    "download: its signatures prove nothing, and its systems, organizations and results are invented"
)


def ed25519_verify(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """True iff `signature` is a valid RFC 8032 Ed25519 signature of `message`."""
    if not NACL:
        raise VerifyError("PyNaCl is not installed: python3 -m pip install pynacl (or apt install python3-nacl)")
    if len(public_key) != 32 or len(signature) != 64:
        return False
    return verify_detached(public_key, signature, message)


def key_id(name: str, public_key: bytes) -> bytes:
    """C2SP signed-note key ID: SHA-256(name ‖ 0x0A ‖ 0x01 ‖ key)[:4]."""
    return hashlib.sha256(name.encode("utf-8") + b"\n" + _ALG_ED25519 + public_key).digest()[:4]


def make_vkey(name: str, public_key: bytes) -> str:
    if not is_valid_key_name(name):
        raise FormatError(f"{name!r} is not a valid key name")
    b64 = base64.b64encode(_ALG_ED25519 + public_key).decode()
    return f"{name}+{key_id(name, public_key).hex()}+{b64}"


@dataclass(frozen=True)
class VerifierKey:
    name: str
    key_id: bytes
    public_key: bytes

    @property
    def vkey(self) -> str:
        return make_vkey(self.name, self.public_key)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)


def b64decode_strict(text: str) -> bytes:
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise FormatError(f"{text[:40]!r} is not standard padded base64") from None
    if base64.b64encode(raw).decode() != text:
        raise FormatError(f"{text[:40]!r} is not in canonical base64 form")
    return raw


def parse_verifier_key(
    vkey: str, typed_key: Callable[[bytes], bytes], key_id_of: Callable[[str, bytes], bytes]
) -> tuple[str, bytes, bytes]:
    """The name, key ID and public key of a C2SP signed-note verifier key,
    `<name>+<8 hex key ID>+<base64(type ‖ key)>` (the base64 part may hold '+'): the one reading
    of the grammar, for a log's note keys and a witness's cosigner keys alike. What differs by
    kind of key is given: `typed_key` takes the decoded type-and-key bytes and returns the key
    or raises FormatError if the type or length is not its kind's; `key_id_of` gives the key ID
    the name and key must have."""
    parts = vkey.split("+", 2)
    if len(parts) != 3:
        raise FormatError("a verifier key has the form <name>+<key ID>+<base64 key>")
    name, hexid, b64 = parts
    if not is_valid_key_name(name):
        raise FormatError(f"{name!r} is not a valid key name")
    if not re.fullmatch(r"[0-9a-f]{8}", hexid):
        raise FormatError(f"key ID {hexid!r} is not 8 lowercase hex digits")
    public_key = typed_key(b64decode_strict(b64))
    kid = key_id_of(name, public_key)
    if kid.hex() != hexid:
        raise FormatError(f"key ID {hexid} does not match the name and key (they give {kid.hex()})")
    return name, kid, public_key


def _note_key(raw: bytes) -> bytes:
    if len(raw) != 33 or raw[:1] != _ALG_ED25519:
        raise FormatError("the key is not an Ed25519 key (0x01 followed by 32 bytes)")
    return raw[1:]


def parse_vkey(vkey: str) -> VerifierKey:
    """Parse a note (log) key, `<name>+<8 hex key ID>+<base64(0x01 ‖ 32-byte key)>`."""
    if not isinstance(vkey, str):
        raise FormatError(f"a verifier key is a string, not {type_name(vkey)}")
    return VerifierKey(*parse_verifier_key(vkey, _note_key, key_id))


def fingerprint(public_key: bytes) -> str:
    return "SHA256:" + sha256_hex(public_key)


def public_key_pem(public_key: bytes) -> bytes:
    """A PEM SubjectPublicKeyInfo file of an Ed25519 key, as `openssl` reads it."""
    b64 = base64.b64encode(_SPKI_ED25519_PREFIX + public_key).decode()
    return f"-----BEGIN PUBLIC KEY-----\n{b64}\n-----END PUBLIC KEY-----\n".encode()


def public_key_from_pem(pem: bytes) -> bytes:
    lines = pem.decode("ascii", "replace").strip().splitlines()
    if len(lines) < 3 or lines[0] != "-----BEGIN PUBLIC KEY-----" or lines[-1] != "-----END PUBLIC KEY-----":
        raise FormatError("not a PEM public key")
    der = b64decode_strict("".join(lines[1:-1]))
    if len(der) != 44 or not der.startswith(_SPKI_ED25519_PREFIX):
        raise FormatError("not an Ed25519 SubjectPublicKeyInfo")
    return der[len(_SPKI_ED25519_PREFIX) :]


def check_key_pin(pin: str) -> None:
    """Raise FormatError unless `pin` is a verifier key or a `SHA256:<64 hex>` fingerprint."""
    pin = pin.strip()
    if pin.startswith("SHA256:"):
        if not HEX64_RE.fullmatch(pin[7:]):
            raise FormatError("a fingerprint is SHA256: followed by 64 lowercase hex digits")
    else:
        parse_vkey(pin)


PUBLISHED_KEY_MEMBERS = ("vkey", "public_key", "fingerprint", "pem", "valid_from", "valid_until", "status")


DATA_KEY_MEMBERS = ("vkey", "valid_from", "valid_until", "status")


@dataclass(frozen=True)
class KeyRow:
    """One key as keys.json lists it, its rules already checked."""

    key: VerifierKey
    valid_from: str
    valid_until: str | None
    status: str
    reason: str | None
    pem: str | None  # the PEM file's site path (published keys only)


def key_rows(rows: Any, origin: str | None, published: bool) -> tuple[list[KeyRow], list[Problem]]:
    """The keys of a keys.json `keys` list (every one with a valid shape and verifier key, even
    if it breaks another rule), and every rule they break (format v1 §2): well-formed
    verifier keys named by the origin, the published public key and fingerprint agreeing with
    them, known statuses, a reason for a revoked key, times in order, no key twice, and exactly
    one active key in v1. `published` is the site's document (with public_key, fingerprint and
    pem); otherwise the program's own data/keys.json."""
    if not isinstance(rows, list) or not rows:
        return [], [Problem("must be a non-empty list of keys", where="keys", found=show(rows))]
    members = PUBLISHED_KEY_MEMBERS if published else DATA_KEY_MEMBERS
    out: list[KeyRow] = []
    problems: list[Problem] = []
    previous_from = ""
    seen: set[str] = set()
    for i, k in enumerate(rows):
        w = f"keys[{i}]"
        shape = check_keys(k, members, ("reason",), where=w)
        if shape:
            problems += shape
            continue
        try:
            vk = parse_vkey(k["vkey"])
        except FormatError as e:
            problems.append(Problem(f"vkey: {e}", where=f"{w}.vkey", found=show(k["vkey"])))
            continue
        if origin is not None and vk.name != origin:
            problems.append(Problem("key name must be the origin", where=f"{w}.vkey", expected=origin, found=vk.name))
        if vk.vkey in seen:
            problems.append(Problem("the same key is listed twice", where=f"{w}.vkey", found=vk.vkey))
        seen.add(vk.vkey)
        if published:
            problems += _published_key_problems(k, vk, w)
        problems += _key_status_problems(k, w)
        if not (is_time(k["valid_from"]) and k["valid_from"] >= previous_from):
            problems.append(
                Problem(
                    "valid_from malformed or out of order",
                    where=f"{w}.valid_from",
                    expected=f"YYYY-MM-DDTHH:MM:SSZ, {previous_from or 'the first'} or later",
                    found=show(k["valid_from"]),
                )
            )
        else:
            previous_from = k["valid_from"]
        if not (k["valid_until"] is None or is_time(k["valid_until"])):
            problems.append(
                Problem("valid_until must be a time or null", where=f"{w}.valid_until", found=show(k["valid_until"]))
            )
        if published and not is_safe_path(k["pem"]):
            problems.append(Problem("unsafe or malformed path", where=f"{w}.pem", found=show(k["pem"])))
        # Kept with its problems: a reader still learns which key the site claims, and what
        # else it publishes is checked against that key.
        out.append(
            KeyRow(
                vk,
                str(k["valid_from"]),
                k["valid_until"] if is_time(k["valid_until"]) else None,
                str(k["status"]),
                k["reason"] if isinstance(k.get("reason"), str) else None,
                k["pem"] if published and is_safe_path(k["pem"]) else None,
            )
        )
    active = sum(1 for k in rows if isinstance(k, dict) and k.get("status") == "active")
    if active != 1:
        problems.append(Problem("v1 has exactly one active key", where="keys", expected="1", found=str(active)))
    return out, problems


def _published_key_problems(k: dict[str, Any], vk: VerifierKey, w: str) -> list[Problem]:
    """The published document's public key and fingerprint, which must be the vkey's."""
    problems = []
    b64 = base64.b64encode(vk.public_key).decode()
    if k["public_key"] != b64:
        problems.append(
            Problem(
                "public_key differs from the vkey's key",
                where=f"{w}.public_key",
                expected=b64,
                found=show(k["public_key"]),
            )
        )
    if k["fingerprint"] != vk.fingerprint:
        problems.append(
            Problem(
                "fingerprint differs from the key",
                where=f"{w}.fingerprint",
                expected=vk.fingerprint,
                found=show(k["fingerprint"]),
            )
        )
    return problems


def _key_status_problems(k: dict[str, Any], w: str) -> list[Problem]:
    """A known status, and a reason for a revoked key."""
    problems = []
    status = k["status"]
    if status not in KEY_STATUSES:
        problems.append(
            Problem("unknown key status", where=f"{w}.status", expected=" | ".join(KEY_STATUSES), found=show(status))
        )
    reason = k.get("reason")
    if status == "revoked" and not isinstance(reason, str):
        problems.append(
            Problem(
                "a revoked key needs a reason",
                where=f"{w}.reason",
                expected="a string 'reason'",
                found=show(reason),
            )
        )
    return problems


# ==============================================================================================
# generator/verifier/core/note.py: C2SP signed notes (format v1 §2) and tlog checkpoints (format v1 §4), opened as
#     Go's sumdb/note.Open opens them.
# ==============================================================================================

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


# ==============================================================================================
# generator/verifier/crypto/mldsa.py: ML-DSA-44 signature verification (FIPS 204, the Module-Lattice-Based Digital
#     Signature Standard, August 2024): pure ML-DSA.Verify with its context string, ML-DSA.Verify_internal on a
#     formatted message M', and the same check on an "external mu" that ACVP also tests.
# ==============================================================================================

ML_DSA_44_PUBLIC_KEY_SIZE = 1312


ML_DSA_44_SIGNATURE_SIZE = 2420


# FIPS 204 section 4, Table 1, for ML-DSA-44.
_MLDSA_Q = 8380417


_MLDSA_D = 13


_MLDSA_TAU = 39


_MLDSA_LAMBDA_BYTES = 32  # lambda / 4: the length of the commitment hash c~


_MLDSA_GAMMA1 = 1 << 17


_MLDSA_GAMMA2 = (_MLDSA_Q - 1) // 88


_MLDSA_K = 4


_MLDSA_L = 4


_MLDSA_BETA = 78  # tau * eta, eta = 2


_MLDSA_OMEGA = 80


_MLDSA_Z_BYTES = 32 * 18  # one polynomial of z: 256 coefficients of bitlen(gamma1 - 1) + 1 = 18 bits


_MLDSA_T1_BYTES = 32 * 10  # one polynomial of t1: 256 coefficients of bitlen(q - 1) - d = 10 bits


_MLDSA_W1_MOD = (_MLDSA_Q - 1) // (2 * _MLDSA_GAMMA2)  # 44 possible high parts


_MLDSA_N_INV = 8347681  # 256^-1 mod q, the inverse NTT's final scale


def _mldsa_zetas() -> list[int]:
    """zeta^brv8(k) mod q for k = 0..255, zeta = 1753 the 512th root of unity (FIPS 204 Appendix B)."""
    return [pow(1753, int(f"{k:08b}"[::-1], 2), _MLDSA_Q) for k in range(256)]


_MLDSA_ZETAS = _mldsa_zetas()


# Algorithm 41 takes zetas[m] for m = 1, 2, ... layer after layer: the layer whose butterflies span
# `length` has 128 / length blocks, block b using zetas[blocks + b]. Algorithm 42 walks them back,
# negated: block b of the same layer uses -zetas[2 * blocks - 1 - b].
_MLDSA_LAYERS = [(128 >> i, 1 << i) for i in range(8)]  # (length, blocks), from the NTT's first layer


_MLDSA_NTT_ZETAS = {blocks: _MLDSA_ZETAS[blocks : 2 * blocks] for _, blocks in _MLDSA_LAYERS}


_MLDSA_INTT_ZETAS = {
    blocks: [_MLDSA_Q - z for z in reversed(_MLDSA_ZETAS[blocks : 2 * blocks])] for _, blocks in _MLDSA_LAYERS
}


def _mldsa_ntt(f: list[int]) -> list[int]:
    """NTT(f) (Algorithm 41), coefficients left unreduced: each layer adds at most q to their size."""
    q = _MLDSA_Q
    w = list(f)
    for length, blocks in _MLDSA_LAYERS:
        zetas = _MLDSA_NTT_ZETAS[blocks]
        if length >= blocks:
            for b, z in enumerate(zetas):
                s = 2 * length * b
                lo, hi = w[s : s + length], w[s + length : s + 2 * length]
                t = [z * x % q for x in hi]
                w[s : s + length] = [a + c for a, c in zip(lo, t, strict=True)]
                w[s + length : s + 2 * length] = [a - c for a, c in zip(lo, t, strict=True)]
        else:
            step = 2 * length
            for j in range(length):
                lo, hi = w[j::step], w[j + length :: step]
                t = [z * x % q for z, x in zip(zetas, hi, strict=True)]
                w[j::step] = [a + c for a, c in zip(lo, t, strict=True)]
                w[j + length :: step] = [a - c for a, c in zip(lo, t, strict=True)]
    return w


def _mldsa_intt(f: list[int]) -> list[int]:
    """NTT^-1(f) (Algorithm 42), reduced into [0, q)."""
    q = _MLDSA_Q
    w = list(f)
    for length, blocks in reversed(_MLDSA_LAYERS):
        zetas = _MLDSA_INTT_ZETAS[blocks]
        if length >= blocks:
            for b, z in enumerate(zetas):
                s = 2 * length * b
                lo, hi = w[s : s + length], w[s + length : s + 2 * length]
                w[s : s + length] = [(a + c) % q for a, c in zip(lo, hi, strict=True)]
                w[s + length : s + 2 * length] = [z * (a - c) % q for a, c in zip(lo, hi, strict=True)]
        else:
            step = 2 * length
            for j in range(length):
                lo, hi = w[j::step], w[j + length :: step]
                w[j::step] = [(a + c) % q for a, c in zip(lo, hi, strict=True)]
                w[j + length :: step] = [z * (a - c) % q for z, a, c in zip(zetas, lo, hi, strict=True)]
    return [_MLDSA_N_INV * x % q for x in w]


def _mldsa_unpack(data: bytes, bits: int) -> list[int]:
    """The 256 unsigned `bits`-bit integers packed little-endian in `data` (SimpleBitUnpack, Algorithm 18)."""
    n = int.from_bytes(data, "little")
    mask = (1 << bits) - 1
    return [(n >> shift) & mask for shift in range(0, 256 * bits, bits)]


def _mldsa_rej_ntt_poly(seed: bytes) -> list[int]:
    """RejNTTPoly (Algorithm 30): a polynomial in the NTT domain, each coefficient three bytes of
    SHAKE-128(seed) with the top bit cleared, those of q or more skipped (CoeffFromThreeBytes)."""
    size = 5 * 168  # five SHAKE-128 blocks: 280 candidates, enough unless 25 are rejected (p < 2^-100)
    while True:
        stream = hashlib.shake_128(seed).digest(size)
        candidates = [
            b0 | b1 << 8 | (b2 & 0x7F) << 16
            for b0, b1, b2 in zip(stream[0::3], stream[1::3], stream[2::3], strict=True)
        ]
        kept = [c for c in candidates if c < _MLDSA_Q]
        if len(kept) >= 256:
            return kept[:256]
        size += 168


def _mldsa_expand_a(rho: bytes) -> list[list[list[int]]]:
    """ExpandA (Algorithm 32): A-hat[r][s] from rho || s || r, the column index first."""
    return [[_mldsa_rej_ntt_poly(rho + bytes((s, r))) for s in range(_MLDSA_L)] for r in range(_MLDSA_K)]


def _mldsa_sample_in_ball(c_tilde: bytes) -> list[int]:
    """SampleInBall (Algorithm 29): the challenge c, tau coefficients of +-1, from SHAKE-256(c~):
    eight bytes of signs, then one byte per candidate position, those beyond i rejected."""
    size = 8 + 136
    while True:
        stream = hashlib.shake_256(c_tilde).digest(size)
        signs = int.from_bytes(stream[:8], "little")
        c = [0] * 256
        pos = 8
        for i in range(256 - _MLDSA_TAU, 256):
            while pos < size and stream[pos] > i:
                pos += 1
            if pos == size:
                break
            j = stream[pos]
            pos += 1
            c[i] = c[j]
            c[j] = 1 - 2 * (signs >> (i + _MLDSA_TAU - 256) & 1)
        else:
            return c
        size += 136  # the stream ran out (rare): squeeze more and start over, the same prefix gives the same c


def _mldsa_hint_unpack(y: bytes) -> list[list[int]] | None:
    """HintBitUnpack (Algorithm 21): for each of the k polynomials, the positions of its hints,
    or None for an encoding FIPS 204 refuses: a count that decreases or exceeds omega, positions
    not strictly increasing within a polynomial, or a non-zero byte after the last position."""
    hints: list[list[int]] = []
    index = 0
    for i in range(_MLDSA_K):
        end = y[_MLDSA_OMEGA + i]
        if end < index or end > _MLDSA_OMEGA:
            return None
        positions = list(y[index:end])
        if any(a >= b for a, b in itertools.pairwise(positions)):
            return None
        hints.append(positions)
        index = end
    if any(y[index:_MLDSA_OMEGA]):
        return None
    return hints


def _mldsa_use_hint(w: list[int], positions: list[int]) -> list[int]:
    """UseHint (Algorithm 40) on a polynomial reduced into [0, q): its high parts r1 (Decompose,
    Algorithm 36, with 2 gamma2 = 190464), each hinted one moved by one toward the sign of r0."""
    g2 = _MLDSA_GAMMA2
    m = _MLDSA_W1_MOD
    # r1 = ceil((r - gamma2) / (2 gamma2)) makes r0 = r - 2 gamma2 r1 lie in (-gamma2, gamma2];
    # r - r0 = q - 1 gives r1 = 44, which mod 44 is the 0 Decompose sets (its r0 - 1 keeps r0 <= 0).
    raw = [(r + g2 - 1) // (2 * g2) for r in w]
    w1 = [r1 % m for r1 in raw]
    for i in positions:
        r0 = w[i] - raw[i] * 2 * g2
        w1[i] = (w1[i] + 1) % m if r0 > 0 else (w1[i] - 1) % m
    return w1


def _mldsa_w1_encode(w1: list[list[int]]) -> bytes:
    """w1Encode (Algorithm 28): each coefficient of w1 in 6 bits, little-endian, four to three bytes."""
    return b"".join(
        (a | b << 6 | c << 12 | d << 18).to_bytes(3, "little")
        for poly in w1
        for a, b, c, d in zip(poly[0::4], poly[1::4], poly[2::4], poly[3::4], strict=True)
    )


def _mldsa_verify_mu(public_key: bytes, mu: bytes, signature: bytes) -> bool:
    """Steps 1-4 and 7-13 of ML-DSA.Verify_internal (Algorithm 8), given mu = H(tr || M', 64)."""
    c_tilde = signature[:_MLDSA_LAMBDA_BYTES]
    hints = _mldsa_hint_unpack(signature[-(_MLDSA_OMEGA + _MLDSA_K) :])
    if hints is None:
        return False
    # z = BitUnpack(., gamma1 - 1, gamma1): gamma1 minus an 18-bit integer, in [-gamma1 + 1, gamma1].
    z_start = _MLDSA_LAMBDA_BYTES
    z = [
        [_MLDSA_GAMMA1 - u for u in _mldsa_unpack(signature[start : start + _MLDSA_Z_BYTES], 18)]
        for start in range(z_start, z_start + _MLDSA_L * _MLDSA_Z_BYTES, _MLDSA_Z_BYTES)
    ]
    bound = _MLDSA_GAMMA1 - _MLDSA_BETA
    if any(abs(x) >= bound for poly in z for x in poly):
        return False
    rho = public_key[:32]
    t1 = [
        _mldsa_unpack(public_key[start : start + _MLDSA_T1_BYTES], 10)
        for start in range(32, 32 + _MLDSA_K * _MLDSA_T1_BYTES, _MLDSA_T1_BYTES)
    ]
    a_hat = _mldsa_expand_a(rho)
    z_hat = [_mldsa_ntt(poly) for poly in z]
    c_hat = _mldsa_ntt(_mldsa_sample_in_ball(c_tilde))
    q = _MLDSA_Q
    w1: list[list[int]] = []
    for r in range(_MLDSA_K):
        t1_hat = _mldsa_ntt([x << _MLDSA_D for x in t1[r]])
        acc = [-c * t for c, t in zip(c_hat, t1_hat, strict=True)]
        for s in range(_MLDSA_L):
            acc = [x + a * b for x, a, b in zip(acc, a_hat[r][s], z_hat[s], strict=True)]
        w_approx = _mldsa_intt([x % q for x in acc])
        w1.append(_mldsa_use_hint(w_approx, hints[r]))
    expected = hashlib.shake_256(mu + _mldsa_w1_encode(w1)).digest(_MLDSA_LAMBDA_BYTES)
    return expected == c_tilde


def _mldsa_bytes(value: object, name: str) -> bytes:
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"ML-DSA-44: {name} must be bytes, not {type(value).__name__}")
    return bytes(value)


def _mldsa_sizes_fit(public_key: bytes, signature: bytes) -> bool:
    return len(public_key) == ML_DSA_44_PUBLIC_KEY_SIZE and len(signature) == ML_DSA_44_SIGNATURE_SIZE


def ml_dsa_44_verify_mu(public_key: bytes, mu: bytes, signature: bytes) -> bool:
    """ML-DSA-44 verification given mu = SHAKE-256(SHAKE-256(pk, 64) || M', 64) computed elsewhere
    (the "external mu" of ACVP and of draft-ietf-lamps-dilithium-certificates); False unless mu
    is 64 bytes."""
    public_key = _mldsa_bytes(public_key, "the public key")
    mu = _mldsa_bytes(mu, "mu")
    signature = _mldsa_bytes(signature, "the signature")
    if not _mldsa_sizes_fit(public_key, signature) or len(mu) != 64:
        return False
    return _mldsa_verify_mu(public_key, mu, signature)


def ml_dsa_44_verify_internal(public_key: bytes, message_prime: bytes, signature: bytes) -> bool:
    """ML-DSA.Verify_internal (Algorithm 8) on an already-formatted M' (what ACVP's 'internal' interface tests)."""
    public_key = _mldsa_bytes(public_key, "the public key")
    message_prime = _mldsa_bytes(message_prime, "the message")
    signature = _mldsa_bytes(signature, "the signature")
    if not _mldsa_sizes_fit(public_key, signature):
        return False
    tr = hashlib.shake_256(public_key).digest(64)
    mu = hashlib.shake_256(tr + message_prime).digest(64)
    return _mldsa_verify_mu(public_key, mu, signature)


def ml_dsa_44_verify(public_key: bytes, message: bytes, signature: bytes, context: bytes = b"") -> bool:
    """Pure ML-DSA-44 verification (FIPS 204 Algorithm 3): M' = 0x00 || len(ctx) || ctx || M.
    False for a context longer than 255 bytes, which FIPS 204 does not verify against."""
    public_key = _mldsa_bytes(public_key, "the public key")
    message = _mldsa_bytes(message, "the message")
    signature = _mldsa_bytes(signature, "the signature")
    context = _mldsa_bytes(context, "the context")
    if len(context) > 255:
        return False
    return ml_dsa_44_verify_internal(public_key, bytes((0, len(context))) + context + message, signature)


# ==============================================================================================
# generator/verifier/tlog/merkle.py: RFC 6962 / RFC 9162 Merkle trees (format v1 §4): leaf and node hashes, the root
#     of a stream of leaves, and the verification of inclusion and consistency proofs. Making proofs is the
#     generator's work (generator/core/proofs.py); checking them is this module's.
# ==============================================================================================

_LEAF_HASH_PREFIX = b"\x00"


_NODE_HASH_PREFIX = b"\x01"


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(_LEAF_HASH_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(_NODE_HASH_PREFIX + left + right).digest()


EMPTY_ROOT = hashlib.sha256(b"").digest()


class MerkleStream:
    """The root of a growing tree in O(log n) memory: one hash per perfect subtree."""

    def __init__(self) -> None:
        self.size = 0
        self._stack: list[bytes] = []  # perfect subtrees, largest first

    def append(self, leaf: bytes) -> None:
        """Add a leaf hash (not the leaf's bytes)."""
        h = leaf
        n = self.size
        while n & 1:
            h = node_hash(self._stack.pop(), h)
            n >>= 1
        self._stack.append(h)
        self.size += 1

    def root(self) -> bytes:
        if not self._stack:
            return EMPTY_ROOT
        # RFC 6962 splits at the largest power of two below n, so the perfect subtrees of the
        # binary decomposition of n fold together from the right.
        h = self._stack[-1]
        for left in reversed(self._stack[:-1]):
            h = node_hash(left, h)
        return h


def merkle_root(leaf_hashes: Iterable[bytes]) -> bytes:
    stream = MerkleStream()
    for h in leaf_hashes:
        stream.append(h)
    return stream.root()


def _check_hashes(proof: Sequence[bytes], *others: bytes) -> None:
    for h in (*proof, *others):
        if not isinstance(h, bytes) or len(h) != 32:
            raise ProofError("every hash must be 32 bytes")


def root_from_inclusion_proof(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """RFC 9162 §2.1.3.2: the root that `proof` yields for the leaf hash at `index`."""
    if size <= 0 or not 0 <= index < size:
        raise ProofError(f"index {index} is outside a tree of size {size}")
    _check_hashes(proof, leaf)
    fn, sn = index, size - 1
    r = leaf
    for p in proof:
        if sn == 0:
            raise ProofError(f"proof has {len(proof)} hashes, more than a tree of size {size} needs")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"proof has {len(proof)} hashes, fewer than index {index} of size {size} needs")
    return r


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes) -> None:
    _check_hashes((), root)
    computed = root_from_inclusion_proof(index, size, leaf, proof)
    if computed != root:
        raise RootMismatchError(root, computed)


def verify_consistency(old_size: int, new_size: int, proof: Sequence[bytes], old_root: bytes, new_root: bytes) -> None:
    """RFC 9162 §2.1.4.2: raise ProofError unless `proof` shows old_root is a prefix of new_root."""
    _check_hashes(proof, old_root, new_root)
    if old_size < 0 or new_size < old_size:
        raise ProofError(f"sizes {old_size} → {new_size}: the new tree must not be smaller")
    if old_size == new_size:
        if proof:
            raise ProofError("a proof between equal sizes must be empty")
        if old_root != new_root:
            raise RootMismatchError(old_root, new_root)
        return
    if old_size == 0:
        if proof:
            raise ProofError("a proof from the empty tree must be empty")
        return
    if not proof:
        raise ProofError("empty consistency proof between different sizes")
    hashes = list(proof)
    if old_size & (old_size - 1) == 0:
        hashes.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = hashes[0]
    for c in hashes[1:]:
        if sn == 0:
            raise ProofError(f"proof has {len(proof)} hashes, more than {old_size} → {new_size} needs")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"proof has {len(proof)} hashes, fewer than {old_size} → {new_size} needs")
    if fr != old_root:
        raise RootMismatchError(old_root, fr)
    if sr != new_root:
        raise RootMismatchError(new_root, sr)


# ==============================================================================================
# generator/verifier/tlog/subtrees.py: Subtrees of a Merkle tree and their consistency proofs (draft-ietf-plants-
#     merkle-tree-certs, "Subtrees": the definition of a subtree and "Verifying a Subtree Consistency Proof"), as a
#     C2SP tlog-witness `sign-subtree` request carries them.
# ==============================================================================================

def _is_size(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_valid_subtree(start: int, end: int) -> bool:
    """Whether [start, end) is a subtree: 0 <= start <= end, and start is a multiple of the
    smallest power of two at least end - start (1 for the empty subtree)."""
    if not _is_size(start) or not _is_size(end) or start > end:
        return False
    size = end - start
    bit_ceil = 1 << (size - 1).bit_length() if size > 1 else 1
    return start % bit_ceil == 0


def _check_subtree_hashes(proof: Sequence[bytes], *others: bytes) -> None:
    for h in (*proof, *others):
        if not isinstance(h, bytes) or len(h) != 32:
            raise ProofError("every hash must be 32 bytes")


def verify_subtree_consistency(
    start: int, end: int, subtree_hash: bytes, size: int, root: bytes, proof: Sequence[bytes]
) -> None:
    """Raise ProofError unless `proof` shows that the subtree [start, end) with hash `subtree_hash`
    holds leaves start..end-1 of the tree of `size` leaves with root hash `root` (RootMismatchError
    when the proof recomputes another subtree hash or root)."""
    _check_subtree_hashes(proof, subtree_hash, root)
    if not is_valid_subtree(start, end):
        raise ProofError(f"[{start}, {end}) is not a subtree: its start must be aligned to its size's power of two")
    if not _is_size(size) or end > size:
        raise ProofError(f"the subtree [{start}, {end}) ends beyond the tree's size {size}")
    if start == end:
        if proof:
            raise ProofError("the proof of an empty subtree must be empty")
        if subtree_hash != EMPTY_ROOT:
            raise RootMismatchError(EMPTY_ROOT, subtree_hash)
        return
    fn, sn, tn = start, end - 1, size - 1
    # Climb to the lowest node the subtree and the tree share: the subtree's own root when it is
    # full or ends the tree, else the root of its first full left part, which the proof opens with.
    if sn == tn:
        while fn != sn:
            fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
    else:
        while fn != sn and sn & 1:
            fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
    hashes = list(proof)
    if fn == sn:
        fr = sr = subtree_hash
    elif not hashes:
        raise ProofError(f"the proof of [{start}, {end}) in a tree of size {size} cannot be empty")
    else:
        fr = sr = hashes.pop(0)
    for c in hashes:
        if tn == 0:
            raise ProofError(f"the proof has {len(proof)} hashes, more than [{start}, {end}) in {size} needs")
        if sn & 1 or sn == tn:
            if fn < sn:
                fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not sn & 1:  # sn > 0 here: sn == tn == 0 was refused above
                fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn, tn = fn >> 1, sn >> 1, tn >> 1
    if tn != 0:
        raise ProofError(f"the proof has {len(proof)} hashes, fewer than [{start}, {end}) in {size} needs")
    if fr != subtree_hash:
        raise RootMismatchError(subtree_hash, fr)
    if sr != root:
        raise RootMismatchError(root, sr)


# ==============================================================================================
# generator/verifier/tlog/tlogproof.py: C2SP tlog-proof (c2sp.org/tlog-proof@v1, format v1 §9): one artifact's
#     inclusion proof, with the proven leaf in its `extra` line and the checkpoint it is proven against, checkable
#     offline.
# ==============================================================================================

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


# ==============================================================================================
# generator/verifier/tlog/tiles.py: C2SP tlog-tiles (format v1 §9): the paths of a log's hash tiles and entry bundles,
#     the building of every tile as the log's leaves stream in, and the reading of a tiled log with every tile
#     checked.
# ==============================================================================================

_TILE_HEIGHT = 8  # a tile is the bottom of a height-8 subtree: 256 hashes


TILE_WIDTH = 1 << _TILE_HEIGHT


TILE_HASH_BYTES = 32


_TILE_MAX_LEVEL = 63  # C2SP: <L> is 0..63


_ENTRY_MAX_BYTES = 0xFFFF  # the big-endian uint16 length before each leaf of a bundle


_ENTRIES_PREFIX = "tile/entries/"


def tile_number_path(n: int) -> str:
    """<N> of a tile path: 3-digit groups, each but the last prefixed by x, so that no name is
    both a file and a directory (1234067 is x001/x234/067, 5 is 005)."""
    if n < 0:
        raise FormatError(f"tile index {n} is negative")
    digits = str(n)
    digits = "0" * (-len(digits) % 3) + digits
    groups = [digits[i : i + 3] for i in range(0, len(digits), 3)]
    return "/".join(["x" + g for g in groups[:-1]] + groups[-1:])


def _tile_width_suffix(width: int) -> str:
    if not 1 <= width <= TILE_WIDTH:
        raise FormatError(f"tile width {width} is outside 1..{TILE_WIDTH}")
    return "" if width == TILE_WIDTH else f".p/{width}"


def hash_tile_path(level: int, index: int, width: int) -> str:
    if not 0 <= level <= _TILE_MAX_LEVEL:
        raise FormatError(f"tile level {level} is outside 0..{_TILE_MAX_LEVEL}")
    return f"tile/{level}/{tile_number_path(index)}{_tile_width_suffix(width)}"


def entry_bundle_path(index: int, width: int) -> str:
    return f"{_ENTRIES_PREFIX}{tile_number_path(index)}{_tile_width_suffix(width)}"


def _tiles_of_row(count: int, path: Callable[[int, int], str]) -> list[tuple[str, int]]:
    """The tiles holding `count` consecutive hashes (or entries): full ones, then the partial."""
    full, rest = divmod(count, TILE_WIDTH)
    row = [(path(i, TILE_WIDTH), TILE_WIDTH) for i in range(full)]
    return [*row, (path(full, rest), rest)] if rest else row


def tile_paths(size: int) -> list[tuple[str, int]]:
    """Every tile of a log of `size` leaves, with its width: the hash tiles level by level (a hash
    tile is 32 bytes × width), then the entry bundles (whose bytes depend on the leaves).

    Level L has floor(size / 256**L) hashes, so its partial tile has that many mod 256; an empty
    tile does not exist, and the levels end where no complete 256**L-leaf subtree is left."""
    if size < 0:
        raise FormatError(f"a log cannot have {size} leaves")
    out: list[tuple[str, int]] = []
    count, level = size, 0
    while count:
        out += _tiles_of_row(count, functools.partial(hash_tile_path, level))
        count, level = count // TILE_WIDTH, level + 1
    return out + _tiles_of_row(size, entry_bundle_path)


def parse_entry_bundle(data: bytes, width: int, where: str = "entry bundle") -> list[bytes]:
    """The `width` leaves of an entry bundle, each stored as its length (big-endian uint16) then
    its bytes. Fewer entries, a length running past the end or bytes after the last are refused."""
    _tile_width_suffix(width)
    leaves: list[bytes] = []
    pos = 0
    for i in range(width):
        if pos == len(data):
            raise FormatError(f"{where}: ends after {i} of its {width} entries")
        if pos + 1 == len(data):
            raise FormatError(f"{where}: the length of entry {i} is cut off after its first byte")
        n = int.from_bytes(data[pos : pos + 2], "big")
        pos += 2
        if len(data) - pos < n:
            raise FormatError(f"{where}: entry {i} claims {n} bytes but only {len(data) - pos} remain")
        leaves.append(data[pos : pos + n])
        pos += n
    if pos != len(data):
        raise FormatError(f"{where}: {len(data) - pos} bytes after its {width} entries")
    return leaves


class NotResumable(ProofError):
    """The log read does not begin with the leaves of the state it was resumed from."""


class TileBuilder:
    """Every tile of a log, built as its leaves are appended. Memory: one unfinished tile per level
    (log_256 of the size levels) and the unfinished entry bundle. Work: each leaf costs one leaf
    hash, and each full tile the 255 node hashes of its root, which goes one level up."""

    def __init__(self) -> None:
        self.size = 0
        self._levels: list[list[bytes]] = [[]]  # hashes of each level's rightmost, unfinished tile
        self._entries = bytearray()  # the unfinished entry bundle

    def append(self, leaf: bytes) -> list[tuple[str, bytes]]:
        """Add a leaf; return the full tiles (entry bundle, hash tiles of any level) it completes."""
        if len(leaf) > _ENTRY_MAX_BYTES:
            raise FormatError(
                f"leaf {self.size} is {len(leaf)} bytes, more than the {_ENTRY_MAX_BYTES} that the uint16"
                f" length prefix of {entry_bundle_path(self.size >> _TILE_HEIGHT, TILE_WIDTH)} allows"
            )
        self._entries += len(leaf).to_bytes(2, "big")
        self._entries += leaf
        self._levels[0].append(leaf_hash(leaf))
        self.size += 1
        if self.size % TILE_WIDTH:
            return []  # 255 leaves in 256 stop here
        # The leaf completes a bundle, a level-0 tile and perhaps one tile on each level above. A
        # full tile never changes again: publish it, and carry its root one level up.
        done = [(entry_bundle_path((self.size >> _TILE_HEIGHT) - 1, TILE_WIDTH), bytes(self._entries))]
        self._entries.clear()
        level = 0
        while len(row := self._levels[level]) == TILE_WIDTH:
            index = (self.size >> (_TILE_HEIGHT * (level + 1))) - 1
            done.append((hash_tile_path(level, index, TILE_WIDTH), b"".join(row)))
            self._levels[level] = []
            if level + 1 == len(self._levels):
                self._levels.append([])
            self._levels[level + 1].append(merkle_root(row))
            level += 1
        return done

    def finish(self) -> list[tuple[str, bytes]]:
        """The partial tiles of the log at its current size (a checkpoint's): each level's
        unfinished tile and the unfinished entry bundle. Appending may go on afterwards."""
        out = [
            (hash_tile_path(level, self.size >> (_TILE_HEIGHT * (level + 1)), len(row)), b"".join(row))
            for level, row in enumerate(self._levels)
            if row
        ]
        if self.size % TILE_WIDTH:
            out.append((entry_bundle_path(self.size >> _TILE_HEIGHT, self.size % TILE_WIDTH), bytes(self._entries)))
        return out

    def unfinished(self) -> bytes:
        """The unfinished bundle's bytes: the leaves after the last whole 256."""
        return bytes(self._entries)

    def state(self) -> dict[str, object]:
        """What resumed() needs to go on from here: the size, each level's unfinished row (hex)
        and the unfinished bundle's bytes (hex); a few KiB whatever the size of the log."""
        return {
            "size": self.size,
            "levels": [[h.hex() for h in row] for row in self._levels],
            "entries": self._entries.hex(),
        }

    @classmethod
    def resumed(cls, state: object) -> "TileBuilder":
        """A builder in the state state() gave; FormatError if it is not one (a size that its
        rows and bundle do not fit)."""
        if not isinstance(state, dict):
            raise FormatError("a tile builder's state is an object")
        size, levels, entries = state.get("size"), state.get("levels"), state.get("entries")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise FormatError("a tile builder's size is a count")
        if not isinstance(levels, list) or not levels or not isinstance(entries, str):
            raise FormatError("a tile builder's state has its levels and its unfinished bundle")
        b = cls()
        try:
            b._levels = [[bytes.fromhex(h) for h in row] for row in levels]
            b._entries = bytearray.fromhex(entries)
        except (TypeError, ValueError) as e:
            raise FormatError(f"a tile builder's state holds something other than hex: {e}") from None
        count = size
        for row in b._levels:
            if len(row) != count % TILE_WIDTH or any(len(h) != TILE_HASH_BYTES for h in row):
                raise FormatError("a tile builder's rows do not fit its size")
            count //= TILE_WIDTH
        if count:
            raise FormatError("a tile builder's levels do not reach the top of its tree")
        if size % TILE_WIDTH:
            leaves = parse_entry_bundle(
                bytes(b._entries), size % TILE_WIDTH, where="a tile builder's unfinished bundle"
            )
            if [leaf_hash(leaf) for leaf in leaves] != b._levels[0]:
                raise FormatError("a tile builder's first row is not the hashes of its unfinished bundle's leaves")
        elif b._entries:
            raise FormatError("a tile builder of whole bundles holds an unfinished one")
        b.size = size
        return b

    def root(self) -> bytes:
        """The RFC 6962 root of the leaves so far, from the unfinished tiles alone: read from the top
        level down, their hashes are the roots of the tree's complete subtrees, largest first, once
        each tile is split into complete subtrees by the binary digits of its width."""
        subtrees: list[bytes] = []
        for row in reversed(self._levels):
            start = 0
            for bit in (1 << k for k in reversed(range(_TILE_HEIGHT))):
                if len(row) & bit:
                    subtrees.append(merkle_root(row[start : start + bit]))
                    start += bit
        if not subtrees:
            return EMPTY_ROOT
        # RFC 6962 splits at the largest power of two below the size, so they fold from the right.
        root = subtrees.pop()
        while subtrees:
            root = node_hash(subtrees.pop(), root)
        return root


def tile_read_order(size: int) -> Iterator[str]:
    """The paths TiledLog reads for a log of `size` leaves, in the order it reads them: each entry
    bundle, then the full hash tiles its leaves complete (level 0, and a level above each time a
    tile below completes its 256th), and after the last bundle the partial hash tiles, level by
    level. A reader fetching ahead fetches these (a test holds the two to the same order)."""
    bundles = -(-size // TILE_WIDTH)
    for index in range(bundles):
        width = min(TILE_WIDTH, size - index * TILE_WIDTH)
        yield entry_bundle_path(index, width)
        if width == TILE_WIDTH:
            done, level = index + 1, 0  # full tiles at this level so far
            yield hash_tile_path(level, done - 1, TILE_WIDTH)
            while done % TILE_WIDTH == 0:
                done, level = done // TILE_WIDTH, level + 1
                yield hash_tile_path(level, done - 1, TILE_WIDTH)
    yield from (p for p in partial_tile_paths(size) if not p.startswith(_ENTRIES_PREFIX))


def partial_tile_paths(size: int) -> list[str]:
    """The partial tiles of a log of `size` leaves: each level's, if its count is no multiple of
    256, level by level, then the partial entry bundle, if any. A look at log_256(size) levels,
    where tile_paths lists every tile."""
    out = []
    count, level = size, 0
    while count:
        if count % TILE_WIDTH:
            out.append(hash_tile_path(level, count // TILE_WIDTH, count % TILE_WIDTH))
        count, level = count // TILE_WIDTH, level + 1
    if size % TILE_WIDTH:
        out.append(entry_bundle_path(size // TILE_WIDTH, size % TILE_WIDTH))
    return out


class TiledLog(Iterator[bytes]):
    """The leaves of a tiled log of `size` leaves, in order, read from its entry bundles through
    `read` (a path to its bytes, or None when missing). Every hash tile of the log is compared with
    the one the leaves give, and a bundle's leaves are yielded only once every tile they complete
    has been checked. After the last leaf, root() is their RFC 6962 root, for the caller to compare
    with its checkpoint. Memory: one bundle, and one tile per level."""

    def __init__(self, read: Callable[[str], bytes | None], size: int, resume: TileBuilder | None = None) -> None:
        if size < 0:
            raise FormatError(f"a log cannot have {size} leaves")
        if resume is not None and resume.size > size:
            raise FormatError(f"a log of {size} leaves cannot go on from {resume.size}")
        self.size = size
        self._read = read
        # Resumed, the tiles that hold only leaves before `first` are not read: the caller knows
        # them to be the ones it checked when it built `resume` (release_memory.py).
        self._built = resume or TileBuilder()
        self.first = self._built.size
        self._root: bytes | None = None
        self._leaves = self._each_leaf()

    def __next__(self) -> bytes:
        return next(self._leaves)

    @property
    def builder(self) -> TileBuilder:
        """The tiles built so far: after the last leaf, the state to resume from next time."""
        return self._built

    def root(self) -> bytes:
        if self._root is None:
            raise RuntimeError("the root of a tiled log is known only once its last leaf has been read")
        return self._root

    def _each_leaf(self) -> Iterator[bytes]:
        bundles = -(-self.size // TILE_WIDTH)
        for index in range(self.first // TILE_WIDTH, bundles):
            width = min(TILE_WIDTH, self.size - index * TILE_WIDTH)
            bundle = entry_bundle_path(index, width)
            data = self._fetch_tile(bundle)
            leaves = parse_entry_bundle(data, width, where=bundle)
            if (done := self.first - index * TILE_WIDTH) > 0:
                # The bundle the resumed builder stopped in: its first leaves are those it holds.
                if not data.startswith(self._built.unfinished()):
                    raise NotResumable(f"{bundle}: its first {done} entries are not those the log had at {self.first}")
                leaves = leaves[done:]
            made = [tile for leaf in leaves for tile in self._built.append(leaf)]
            if index == bundles - 1:
                made += self._built.finish()
            for path, expected in made:
                # A bundle parsed strictly re-encodes to its own bytes: only hash tiles need reading.
                if not path.startswith(_ENTRIES_PREFIX):
                    self._check_hash_tile(path, expected, bundle)
            yield from leaves
        if self.first == self.size and not self.size % TILE_WIDTH:
            # Resumed at this very size, on a whole bundle: no bundle is read, but the partial
            # tiles of the levels above are this release's files, and are checked all the same.
            for path, expected in self._built.finish():
                self._check_hash_tile(path, expected, "the leaves")
        self._root = self._built.root()

    def _fetch_tile(self, path: str) -> bytes:
        data = self._read(path)
        if data is None:
            raise FormatError(f"{path}: missing")
        return data

    def _check_hash_tile(self, path: str, expected: bytes, bundle: str) -> None:
        data = self._fetch_tile(path)
        if len(data) != len(expected):
            raise FormatError(
                f"{path}: {len(data)} bytes, not the {len(expected)} of its {len(expected) // TILE_HASH_BYTES} hashes"
            )
        if data == expected:
            return
        n = TILE_HASH_BYTES
        i = next(i for i in range(0, len(data), n) if data[i : i + n] != expected[i : i + n]) // n
        # A level-0 tile is checked right after the bundle under it, so hash i is that bundle's leaf i.
        source = f"leaf {i} of {bundle} hashes" if path.startswith("tile/0/") else "the leaves under it hash"
        found, computed = data[i * n : (i + 1) * n].hex(), expected[i * n : (i + 1) * n].hex()
        raise ProofError(f"{path}: hash {i} is {found}, but {source} to {computed}")


def read_tiled_log(read: Callable[[str], bytes | None], size: int, resume: TileBuilder | None = None) -> TiledLog:
    """The leaves of the tiled log of `size` leaves that `read` serves, every tile checked (TiledLog);
    with `resume`, only the leaves after its size, and the tiles they complete or leave partial."""
    return TiledLog(read, size, resume)


def bundles_from(start: int, size: int) -> list[tuple[str, int, int]]:
    """The entry bundles holding leaves `start` to `size` - 1 of a log of `size` leaves: (path,
    width, how many of its first entries come before `start`). What a reader that remembers the
    tree up to `start` (its compact range) reads to extend it, and nothing else."""
    if not 0 <= start <= size:
        raise FormatError(f"entries from {start} of a log of {size} leaves")
    out = []
    for i in range(start // TILE_WIDTH, -(-size // TILE_WIDTH)):
        width = min(TILE_WIDTH, size - i * TILE_WIDTH)
        out.append((entry_bundle_path(i, width), width, max(0, start - i * TILE_WIDTH)))
    return out


# ==============================================================================================
# generator/verifier/tlog/tile_proofs.py: Consistency proofs read from a log's hash tiles (C2SP tlog-tiles, RFC 9162
#     §2.1.4.1): PROOF(m, D[n]) made from the tiles of the log at size n, reading only the O(log n) tiles that hold
#     its nodes.
# ==============================================================================================

_LEVELS_PER_TILE = TILE_WIDTH.bit_length() - 1  # 8: a level-L tile holds the level-8L nodes of the tree


def consistency_ranges(old_size: int, new_size: int) -> list[tuple[int, int]]:
    """The leaf ranges [lo, hi) whose MTH are the hashes of RFC 9162 §2.1.4.1 PROOF(old_size,
    D[new_size]), in the proof's order (the order generator/core/proofs.py gives them)."""
    if not 0 <= old_size <= new_size:
        raise ProofError(f"sizes {old_size} → {new_size}: the new tree must not be smaller")
    if old_size in (0, new_size):
        return []
    ranges: list[tuple[int, int]] = []
    lo, hi, m, complete = 0, new_size, old_size, True
    while m != hi - lo:
        k = 1 << ((hi - lo - 1).bit_length() - 1)  # RFC 6962 splits at the largest power of two below
        if m <= k:
            ranges.append((lo + k, hi))
            hi = lo + k
        else:
            ranges.append((lo, lo + k))
            lo, m, complete = lo + k, m - k, False
    if not complete:
        ranges.append((lo, hi))
    ranges.reverse()
    return ranges


def complete_subtrees(lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """The aligned complete subtrees (height, index) whose RFC 6962 fold is MTH(D[lo:hi]), largest
    first, for a range as the proof's recursion leaves it (lo a multiple of the power of two at or
    above hi - lo): the binary digits of hi - lo, from the top."""
    while lo < hi:
        height = (hi - lo).bit_length() - 1
        while lo % (1 << height):
            height -= 1
        yield height, lo >> height
        lo += 1 << height


def _tile_of(height: int, index: int, size: int) -> tuple[str, int, int, int]:
    """Where node (height, index) of the tree of `size` leaves lies: the path of the level-L tile
    (its width at that size), the first of its hashes under the node, and how many."""
    level, rest = divmod(height, _LEVELS_PER_TILE)
    first = index << rest
    tile = first >> _LEVELS_PER_TILE
    width = min(TILE_WIDTH, (size >> (_LEVELS_PER_TILE * level)) - tile * TILE_WIDTH)
    return hash_tile_path(level, tile, width), width, first % TILE_WIDTH, 1 << rest


class _Tiles:
    """The hash tiles read so far, each read once and its length checked."""

    def __init__(self, read: Callable[[str], bytes | None]) -> None:
        self._read = read
        self.read: dict[str, bytes] = {}

    def hashes(self, path: str, width: int, start: int, count: int) -> list[bytes]:
        if path not in self.read:
            data = self._read(path)
            if data is None:
                raise FormatError(f"{path}: missing")
            if len(data) != width * TILE_HASH_BYTES:
                raise FormatError(f"{path}: {len(data)} bytes, not the {width * TILE_HASH_BYTES} of its {width} hashes")
            self.read[path] = data
        data = self.read[path]
        n = TILE_HASH_BYTES
        return [data[i * n : (i + 1) * n] for i in range(start, start + count)]


def consistency_proof_from_tiles(
    read: Callable[[str], bytes | None], old_size: int, new_size: int
) -> tuple[list[bytes], list[str]]:
    """PROOF(old_size, D[new_size]) from the hash tiles of the log at `new_size` that `read` serves
    (a path under the log prefix, `tile/<L>/<N>[.p/<W>]`, to its bytes or None), and the paths of
    the tiles it read, in the order it first read them. A missing tile, or one of the wrong
    length, raises FormatError naming it; a tile with wrong hashes gives a proof that
    merkle.verify_consistency refuses."""
    tiles = _Tiles(read)
    proof: list[bytes] = []
    for lo, hi in consistency_ranges(old_size, new_size):
        subtrees = [merkle_root(tiles.hashes(*_tile_of(h, i, new_size))) for h, i in complete_subtrees(lo, hi)]
        node = subtrees.pop()
        while subtrees:  # RFC 6962 folds a range's complete subtrees from the right
            node = node_hash(subtrees.pop(), node)
        proof.append(node)
    return proof, list(tiles.read)


def root_from_tiles(read: Callable[[str], bytes | None], old_size: int, new_size: int) -> bytes:
    """MTH(D[0:old_size]), the root of the log's first `old_size` leaves, from the hash tiles of
    the log at `new_size` that `read` serves (as consistency_proof_from_tiles reads them): its
    complete subtrees folded from the right. Nothing vouches for it until a consistency proof from
    the same tiles verifies it against the root of the tree of `new_size`."""
    if not 0 <= old_size <= new_size:
        raise ProofError(f"sizes {old_size} → {new_size}: the new tree must not be smaller")
    tiles = _Tiles(read)
    subtrees = [merkle_root(tiles.hashes(*_tile_of(h, i, new_size))) for h, i in complete_subtrees(0, old_size)]
    node = subtrees.pop() if subtrees else merkle_root([])
    while subtrees:
        node = node_hash(subtrees.pop(), node)
    return node


# ==============================================================================================
# generator/verifier/tlog/cosignature.py: Witness cosignatures (c2sp.org/tlog-cosignature): cosigner keys and their
#     vkeys, the signed messages of both types, the signature line, and checking a checkpoint's cosignatures and a
#     log's own signature lines of either type.
# ==============================================================================================

ED25519 = "ed25519"


ML_DSA_44 = "ml-dsa-44"


COSIGNATURE_KINDS = (ED25519, ML_DSA_44)


# c2sp.org/signed-note signature types.
_TYPE_BYTE = {ED25519: 0x04, ML_DSA_44: 0x06}


_KIND_OF_TYPE = {t: k for k, t in _TYPE_BYTE.items()}


_KEY_SIZE = {ED25519: 32, ML_DSA_44: ML_DSA_44_PUBLIC_KEY_SIZE}


_SIGNATURE_SIZE = {ED25519: 64, ML_DSA_44: ML_DSA_44_SIGNATURE_SIZE}


KIND_LABEL = {ED25519: "Ed25519", ML_DSA_44: "ML-DSA-44"}


_COSIG_TYPE_NOTE_ED25519 = 0x01


_COSIG_HEADER = b"cosignature/v1\n"


_SUBTREE_LABEL = b"subtree/v1\n\x00"


MAX_COSIGNATURE_TIMESTAMP = 2**63 - 1


_MAX_U64 = 2**64 - 1


def cosignature_key_id(name: str, public_key: bytes, kind: str = ED25519) -> bytes:
    """A cosigner's key ID: SHA-256(name ‖ 0x0A ‖ type byte ‖ public key)[:4]."""
    return hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([_TYPE_BYTE[kind]]) + public_key).digest()[:4]


@dataclass(frozen=True)
class CosignerKey:
    """A cosigner's public key as a verifier knows it: the name on its signature lines, the key
    (32 bytes for Ed25519, 1312 for ML-DSA-44) and its type."""

    name: str
    public_key: bytes
    kind: str = ED25519

    def __post_init__(self) -> None:
        if not is_valid_key_name(self.name):
            raise FormatError(f"{self.name!r} is not a valid key name")
        if self.kind not in _TYPE_BYTE:
            raise FormatError(f"unknown cosignature type {self.kind!r}; expected one of {', '.join(_TYPE_BYTE)}")
        if not isinstance(self.public_key, bytes) or len(self.public_key) != _KEY_SIZE[self.kind]:
            raise FormatError(f"an {KIND_LABEL[self.kind]} cosigner key is {_KEY_SIZE[self.kind]} bytes")

    @property
    def key_id(self) -> bytes:
        return cosignature_key_id(self.name, self.public_key, self.kind)

    @property
    def vkey(self) -> str:
        return make_cosigner_vkey(self.name, self.public_key, self.kind)

    @property
    def fingerprint(self) -> str:
        """`SHA256:` and the hex SHA-256 of the raw public key, as for the log's keys."""
        return "SHA256:" + hashlib.sha256(self.public_key).hexdigest()

    @property
    def label(self) -> str:
        return KIND_LABEL[self.kind]


def make_cosigner_vkey(name: str, public_key: bytes, kind: str = ED25519) -> str:
    """`<name>+<hex key ID>+<base64(type byte ‖ key)>`."""
    key = CosignerKey(name, public_key, kind)  # checks the name and the key's length
    b64 = base64.b64encode(bytes([_TYPE_BYTE[kind]]) + key.public_key).decode()
    return f"{name}+{key.key_id.hex()}+{b64}"


def _cosigner_kind(raw: bytes) -> str:
    kind = _KIND_OF_TYPE.get(raw[0]) if raw else None
    if raw and raw[0] == _COSIG_TYPE_NOTE_ED25519:
        raise FormatError(
            "this is an Ed25519 note key (type 0x01), as a log signs with; a cosigner's key is of type 0x04 "
            "(Ed25519) or 0x06 (ML-DSA-44)"
        )
    if kind is None or len(raw) != 1 + _KEY_SIZE[kind]:
        raise FormatError(
            "the key is not a cosigner key (0x04 followed by a 32-byte Ed25519 key, or 0x06 followed by a "
            "1312-byte ML-DSA-44 key)"
        )
    return kind


def parse_cosigner_vkey(vkey: str) -> CosignerKey:
    """Parse a cosigner vkey, `<name>+<8 hex key ID>+<base64(type ‖ key)>` of type 0x04 or 0x06,
    and check that the key ID is the one the name, type and key give."""
    if not isinstance(vkey, str):
        raise FormatError("a verifier key is a string")
    kinds: list[str] = []

    def key_of(raw: bytes) -> bytes:
        kinds.append(_cosigner_kind(raw))
        return raw[1:]

    def key_id_of(name: str, public_key: bytes) -> bytes:
        return cosignature_key_id(name, public_key, kinds[-1])

    name, _, public_key = parse_verifier_key(vkey, key_of, key_id_of)
    return CosignerKey(name, public_key, kinds[-1])


def _check_timestamp(timestamp: int) -> None:
    if isinstance(timestamp, bool) or not isinstance(timestamp, int):
        raise FormatError("a cosignature timestamp is an integer")
    if not 0 <= timestamp <= MAX_COSIGNATURE_TIMESTAMP:
        raise FormatError(f"cosignature timestamp {timestamp} is outside 0..2^63-1")


def cosignature_message(checkpoint_text: str, timestamp: int) -> bytes:
    """The bytes an Ed25519 cosigner signs: `cosignature/v1`, `time <decimal timestamp>`, then
    the whole note text (every line of the checkpoint, its final newline included)."""
    _check_timestamp(timestamp)
    if not checkpoint_text.endswith("\n"):
        raise FormatError("a note text ends with a newline")
    return _COSIG_HEADER + f"time {timestamp}\n".encode("ascii") + checkpoint_text.encode("utf-8")


def _short_bytes(value: str, what: str) -> bytes:
    raw = value.encode("utf-8")
    if not 1 <= len(raw) <= 255:
        raise FormatError(f"the {what} is {len(raw)} bytes; the subtree/v1 message holds 1 to 255")
    return bytes([len(raw)]) + raw


def subtree_message(cosigner: str, timestamp: int, origin: str, start: int, end: int, root: bytes) -> bytes:
    """The bytes an ML-DSA-44 cosigner signs (the `cosigned_message` structure): a signature on
    the subtree [start, end) of `origin`'s log with root hash `root`. A checkpoint is the subtree
    [0, size); a subtree that starts elsewhere carries no timestamp."""
    _check_timestamp(timestamp)
    for value in (start, end):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_U64:
            raise FormatError(f"a subtree bound is an unsigned 64-bit integer, not {value!r}")
    if start > end:
        raise FormatError(f"a subtree [{start}, {end}) ends before it starts")
    if start != 0 and timestamp != 0:
        raise FormatError("a subtree that does not start at 0 is signed with timestamp 0")
    if len(root) != 32:
        raise FormatError("a subtree's root hash is 32 bytes")
    return (
        _SUBTREE_LABEL
        + _short_bytes(cosigner, "cosigner name")
        + struct.pack(">Q", timestamp)
        + _short_bytes(origin, "log origin")
        + struct.pack(">QQ", start, end)
        + root
    )


def cosignature_line(name: str, key_id: bytes, timestamp: int, signature: bytes) -> str:
    """The note signature line of a cosignature of either type, newline included."""
    if not is_valid_key_name(name):
        raise FormatError(f"{name!r} is not a valid key name")
    if len(key_id) != 4 or len(signature) not in _SIGNATURE_SIZE.values():
        raise FormatError("a cosignature has a 4-byte key ID and a 64-byte Ed25519 or 2420-byte ML-DSA-44 signature")
    _check_timestamp(timestamp)
    return note_signature_line(name, key_id, timestamp.to_bytes(8, "big") + signature)


def cosignature_verifies(key: CosignerKey, text: str, timestamp: int, signature: bytes) -> bool:
    """Whether `signature` is `key`'s cosignature, made at `timestamp`, of the checkpoint whose
    note text is `text` (origin, size and root read from it: FormatError if it is no checkpoint)."""
    if len(signature) != _SIGNATURE_SIZE[key.kind]:
        return False
    if key.kind == ED25519:
        return ed25519_verify(key.public_key, signature, cosignature_message(text, timestamp))
    origin, size, root = parse_checkpoint(text)
    try:
        message = subtree_message(key.name, timestamp, origin, 0, size, root)
    except FormatError:
        return False  # an origin of more than 255 bytes: no ML-DSA-44 signature can cover it
    return ml_dsa_44_verify(key.public_key, message, signature)


def subtree_cosignature_verifies(key: CosignerKey, origin: str, start: int, end: int, root: bytes, raw: bytes) -> bool:
    """Whether `raw` (a signature line's bytes: key ID, timestamp, signature) is `key`'s ML-DSA-44
    cosignature of the subtree [start, end) with root `root`; a subtree not at 0 must carry
    timestamp 0. Ed25519 cosignatures cannot sign a subtree."""
    if key.kind != ML_DSA_44 or len(raw) != 12 + ML_DSA_44_SIGNATURE_SIZE or raw[:4] != key.key_id:
        return False
    timestamp = int.from_bytes(raw[4:12], "big")
    try:
        message = subtree_message(key.name, timestamp, origin, start, end, root)
    except FormatError:
        return False
    return ml_dsa_44_verify(key.public_key, message, raw[12:])


def verify_cosignatures(note_bytes: bytes, witnesses: Sequence[CosignerKey]) -> dict[str, int]:
    """The witnesses that validly cosigned the checkpoint note, by name, with the timestamp of
    each one's cosignature.

    As signed-note asks: a line whose name and key ID are not both a given witness's is ignored
    (the log's own signature among them: checking it is open_note's work); a line that is a
    given witness's must verify, or the note is rejected (NoteError), as it is if it is
    malformed or its text is not a checkpoint. As Go's note.Open, only the first line of each
    witness counts; later ones are dropped unchecked. Timestamps are returned, not judged: a
    caller that rejects cosignatures from the future (the spec allows it) compares them with
    its clock. The names must be distinct (ValueError otherwise): they key the result. A
    cosigner may hold one key of each type under one name; give them one call each.
    """
    known: dict[tuple[str, bytes], CosignerKey] = {}
    for w in witnesses:
        if any(name == w.name for name, _ in known):
            raise ValueError(f"witness name {w.name!r} is given twice; verify them one at a time")
        known[(w.name, w.key_id)] = w
    text, lines = split_note(note_bytes)
    if any(not line for line in text[:-1].split("\n")):
        raise NoteError("the cosigned note is not a checkpoint: its text holds an empty line")
    try:
        parse_checkpoint(text)
    except FormatError as e:
        raise NoteError(f"the cosigned note is not a checkpoint: {e}") from None
    out: dict[str, int] = {}
    for name, raw in lines:
        key = known.get((name, raw[:4]))
        if key is None or name in out:
            continue
        where = f"{key.label} cosignature by {name} (key ID {raw[:4].hex()})"
        if len(raw) != 12 + _SIGNATURE_SIZE[key.kind]:
            raise NoteError(f"{where} is {len(raw)} bytes, not 4 + 8 + {_SIGNATURE_SIZE[key.kind]}")
        timestamp = int.from_bytes(raw[4:12], "big")
        if timestamp > MAX_COSIGNATURE_TIMESTAMP:
            raise NoteError(f"{where} has timestamp {timestamp}, beyond 2^63-1")
        if not cosignature_verifies(key, text, timestamp, raw[12:]):
            raise NoteError(f"{where} does not verify")
        out[name] = timestamp
    return out


def cosigned_by(note_bytes: bytes, keys: Sequence[CosignerKey]) -> dict[CosignerKey, int]:
    """Which of `keys` validly cosigned the checkpoint note, each with its cosignature's timestamp:
    verify_cosignatures for each key on its own, since two keys may share a name (a cosigner's
    Ed25519 and ML-DSA-44 keys, two witnesses of a policy). NoteError as verify_cosignatures."""
    out: dict[CosignerKey, int] = {}
    for key in keys:
        found = verify_cosignatures(note_bytes, [key])
        if key.name in found:
            out[key] = found[key.name]
    return out


def log_signature_lines(note: bytes, keys: Sequence[VerifierKey | CosignerKey]) -> dict[VerifierKey | CosignerKey, str]:
    """The signature lines of `note` by a log's `keys` (Ed25519 note keys, ML-DSA-44 keys) that
    verify, by key, in the note's order (the first of each key: a repeated line is dropped
    unchecked, as Go's note.Open does). NoteError if a line by one of the keys fails, or if none of
    them signed."""
    text, lines = split_note(note)
    known = {(key.name, key.key_id): key for key in keys}
    verified: dict[VerifierKey | CosignerKey, str] = {}
    seen: set[tuple[str, bytes]] = set()
    for name, raw in lines:
        key = known.get((name, raw[:4]))
        if key is None or (name, raw[:4]) in seen:
            continue
        seen.add((name, raw[:4]))
        label = "ML-DSA-44 " if isinstance(key, CosignerKey) else ""
        if not _log_line_verifies(key, text, raw):
            raise NoteError(f"{label}signature by {name} (key ID {raw[:4].hex()}) does not verify")
        verified[key] = note_signature_line(name, raw[:4], raw[4:])
    if not verified:
        raise NoteError("no signature by a known key of the log")
    return verified


def _log_line_verifies(key: VerifierKey | CosignerKey, text: str, raw: bytes) -> bool:
    if isinstance(key, VerifierKey):
        return ed25519_verify(key.public_key, raw[4:], text.encode("utf-8"))
    if len(raw) < 12:
        return False
    try:
        return cosignature_verifies(key, text, int.from_bytes(raw[4:12], "big"), raw[12:])
    except FormatError:  # a timestamp beyond 2^63-1, or a text that is no checkpoint
        return False


# ==============================================================================================
# generator/verifier/tlog/log_list.py: The witness network's log list (`logs/v0`): the logs a witness cosigns, each
#     with its key, origin, bastion, daily quota of add-checkpoint requests and contact; read with every problem named
#     by its line, and written.
# ==============================================================================================

LOG_LIST_HEADER = "logs/v0"


LOG_LIST_FIELDS = ("vkey", "origin", "bastion", "qpd", "contact")


# The documented order, then the one of the format's own example.
_LOG_LIST_ORDERS = (LOG_LIST_FIELDS, ("vkey", "origin", "qpd", "bastion", "contact"))


_QPD_RE = re.compile(r"0|[1-9][0-9]{0,17}")


MAX_LOG_ORIGIN_BYTES = 255


def parse_log_key(vkey: str) -> VerifierKey | CosignerKey:
    """A log's key from its vkey: an Ed25519 note key (0x01) or an ML-DSA-44 key (0x06);
    FormatError naming what it is otherwise."""
    try:
        return parse_vkey(vkey)
    except FormatError as note_error:
        try:
            key = parse_cosigner_vkey(vkey)
        except FormatError:
            raise note_error from None
        if key.kind != ML_DSA_44:
            raise FormatError(
                "this is an Ed25519 cosigner key (type 0x04), as witnesses sign with; a log's key is an Ed25519 "
                "note key (type 0x01) or an ML-DSA-44 key (type 0x06)"
            ) from None
        return key


def log_origin_problem(origin: str) -> str | None:
    """Why `origin` cannot be a log's origin line, or None."""
    if not origin or not origin.isprintable() or origin != origin.strip():
        return f"{origin!r} is not an origin line: printable text, without surrounding spaces"
    if len(origin.encode("utf-8")) > MAX_LOG_ORIGIN_BYTES:
        return f"the origin is {len(origin.encode('utf-8'))} bytes, more than {MAX_LOG_ORIGIN_BYTES}"
    return None


@dataclass(frozen=True)
class ListedLog:
    """One log of a log list. `origin` None is `origin none`: the key's name is the origin."""

    vkey: str
    origin: str | None
    bastion: str | None
    qpd: int
    contact: str
    line: int = field(default=0, compare=False)  # where the log starts in the list read (0: not read)

    @property
    def key(self) -> VerifierKey | CosignerKey:
        return parse_log_key(self.vkey)

    @property
    def log_origin(self) -> str:
        return self.key.name if self.origin is None else self.origin


def _log_value_problem(keyword: str, value: str) -> str | None:
    if keyword == "vkey":
        try:
            parse_log_key(value)
        except FormatError as e:
            return f"vkey: {e}"
    elif keyword == "origin" and value != "none":
        return log_origin_problem(value)
    elif keyword == "bastion" and value != "none":
        url = urlsplit(value)
        if url.scheme not in ("https", "http") or not url.hostname:
            return f"bastion: {value!r} is neither `none` nor an https:// or http:// URL"
    elif keyword == "qpd" and not _QPD_RE.fullmatch(value):
        return f"qpd: {value!r} is not a number of requests a day (decimal, no leading zeros)"
    elif not value:
        return f"{keyword}: the value is empty"
    return None


def _next_keywords(keywords: list[str]) -> list[str]:
    """The keywords a log's next line may have, after its lines of `keywords`."""
    n = len(keywords)
    return sorted({o[n] for o in _LOG_LIST_ORDERS if n < len(o) and list(o[:n]) == keywords})


def _read_listed_log(group: list[tuple[int, str, str]], source: str) -> tuple[ListedLog | None, list[Problem]]:
    """One log from its lines (line number, keyword, value), or the problems that keep it out."""
    problems: list[Problem] = []
    keywords = [keyword for _, keyword, _ in group]
    for j, (n, keyword, _) in enumerate(group):
        allowed = _next_keywords(keywords[:j])
        if keyword not in allowed:
            expected = "` or `".join(allowed)
            problems.append(Problem(f"expected the log's `{expected}` line", source, f"line {n}", found=keyword))
            break
    if not problems and len(group) < len(LOG_LIST_FIELDS):
        missing = "` or `".join(_next_keywords(keywords))
        problems.append(Problem(f"the log ends before its `{missing}` line", source, f"line {group[0][0]}"))
    for n, keyword, value in group:
        why = _log_value_problem(keyword, value)
        if why is not None:
            problems.append(Problem(why, source, f"line {n}"))
    if problems:
        return None, problems
    values = {keyword: value for _, keyword, value in group}
    log = ListedLog(
        values["vkey"],
        None if values["origin"] == "none" else values["origin"],
        None if values["bastion"] == "none" else values["bastion"],
        int(values["qpd"]),
        values["contact"],
        group[0][0],
    )
    why = log_origin_problem(log.log_origin) if log.origin is None else None
    if why is not None:
        return None, [Problem(f"origin none makes the key's name the origin: {why}", source, f"line {log.line}")]
    return log, []


def _log_list_lines(text: str) -> list[tuple[int, str, str]]:
    """(line number, keyword, value) of every line that is neither blank nor a comment."""
    out = []
    for n, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if line and not line.startswith("#"):
            keyword, _, value = line.partition(" ")
            out.append((n, keyword, value.strip()))
    return out


def _agreement_problems(logs: list[ListedLog], source: str) -> list[Problem]:
    """Two logs with one key, or two logs of one origin that differ on its quota."""
    problems = []
    first_of_key: dict[str, ListedLog] = {}
    first_of_origin: dict[str, ListedLog] = {}
    for log in logs:
        where = f"line {log.line}"
        same_key = first_of_key.setdefault(log.key.vkey, log)
        if same_key is not log:
            problems.append(Problem(f"the key is listed already, at line {same_key.line}", source, where))
        same_origin = first_of_origin.setdefault(log.log_origin, log)
        if same_origin is not log and same_origin.qpd != log.qpd:
            problems.append(
                Problem(
                    f"{log.log_origin!r} is listed already, at line {same_origin.line}: one log has one quota",
                    source,
                    where,
                    expected=f"qpd {same_origin.qpd}",
                    found=f"qpd {log.qpd}",
                )
            )
    return problems


def parse_log_list(text: str, source: str = "log list") -> tuple[list[ListedLog], list[Problem]]:
    """The logs of a log list, in its order, and every problem of the list at once, each located
    in `source` at its line. A log with a problem is left out; the list is valid only if there
    is none."""
    lines = _log_list_lines(text)
    problems: list[Problem] = []
    if lines and lines[0][1] == LOG_LIST_HEADER:
        if lines[0][2]:
            problems.append(Problem(f"the first line is `{LOG_LIST_HEADER}` alone", source, f"line {lines[0][0]}"))
        lines = lines[1:]
    else:
        where = f"line {lines[0][0]}" if lines else "line 1"
        found = " ".join(lines[0][1:]).strip() if lines else "nothing"
        problems.append(Problem(f"a log list starts with the line `{LOG_LIST_HEADER}`", source, where, found=found))
    logs: list[ListedLog] = []
    i = 0
    while i < len(lines):
        n, keyword, _ = lines[i]
        if keyword != "vkey":
            problems.append(Problem("expected a `vkey` line, which starts a log", source, f"line {n}", found=keyword))
            i += 1
            continue
        end = i + 1
        while end < len(lines) and end - i < len(LOG_LIST_FIELDS) and lines[end][1] != "vkey":
            end += 1
        log, found_problems = _read_listed_log(lines[i:end], source)
        problems += found_problems
        if log is not None:
            logs.append(log)
        i = end
    problems += _agreement_problems(logs, source)
    return logs, problems


def _listed_entry(log: ListedLog) -> str:
    values = {
        "vkey": log.vkey,
        "origin": log.origin or "none",
        "bastion": log.bastion or "none",
        "qpd": str(log.qpd),
        "contact": log.contact,
    }
    return "".join(f"{keyword} {values[keyword]}\n" for keyword in LOG_LIST_FIELDS)


def format_log_list(logs: Sequence[ListedLog]) -> str:
    """A log list of `logs`, each in the documented order, an empty line between two logs."""
    return f"{LOG_LIST_HEADER}\n" + "".join("\n" + _listed_entry(log) for log in logs)


def program_log_list_entry(vkey: str, origin: str | None, qpd: int, contact: str) -> str:
    """The lines of a log list that describe a program's log (no `logs/v0` line: an entry to
    add to a list): its vkey, `origin none` when the origin is the key's name (as recommended
    for new logs) or else the origin, no bastion, `qpd` requests a day and the `contact`.
    FormatError naming the value that cannot be written."""
    key = parse_log_key(vkey)
    if isinstance(qpd, bool) or not isinstance(qpd, int) or not _QPD_RE.fullmatch(str(qpd)):
        raise FormatError(f"qpd: {qpd!r} is not a number of requests a day")
    if not contact or contact != contact.strip() or not contact.isprintable():
        raise FormatError(f"contact: {contact!r} is not one line of printable text")
    log = ListedLog(key.vkey, None if origin in (None, key.name) else origin, None, qpd, contact)
    why = log_origin_problem(log.log_origin)
    if why is not None:
        raise FormatError(f"origin: {why}")
    return _listed_entry(log)


# ==============================================================================================
# generator/verifier/tlog/policy.py: Trust policies (c2sp.org/tlog-policy): which logs and witnesses a verifier knows,
#     and the quorum of witness cosignatures a checkpoint needs.
# ==============================================================================================

QUORUM_NONE = "none"


_POLICY_SPACE_RE = re.compile(rb"[ \t]+")


_POLICY_THRESHOLD_RE = re.compile(r"[1-9][0-9]{0,8}|0")


@dataclass(frozen=True)
class PolicyLog:
    key: VerifierKey | CosignerKey
    url: str | None = None


@dataclass(frozen=True)
class PolicyWitness:
    """A witness: its name in the policy (which is not its key's name), key and URL."""

    name: str
    key: CosignerKey
    url: str | None = None


@dataclass(frozen=True)
class PolicyGroup:
    """A group witnesses a checkpoint iff at least `threshold` of its members do."""

    name: str
    threshold: int
    members: tuple[str, ...]


@dataclass(frozen=True)
class Policy:
    """A parsed policy: groups in the order defined (every member before its group), and the
    name of the quorum: a witness, a group, or `none`."""

    logs: tuple[PolicyLog, ...]
    witnesses: tuple[PolicyWitness, ...]
    groups: tuple[PolicyGroup, ...]
    quorum: str

    @property
    def log_keys(self) -> tuple[VerifierKey, ...]:
        """The Ed25519 keys to open a checkpoint with (open_note): any one of them may sign it."""
        return tuple(log.key for log in self.logs if isinstance(log.key, VerifierKey))

    @property
    def ml_dsa_log_keys(self) -> tuple[CosignerKey, ...]:
        """The logs' ML-DSA-44 keys: if the policy names any for an origin, one must sign."""
        return tuple(log.key for log in self.logs if isinstance(log.key, CosignerKey))


class _PolicyParser:
    def __init__(self, later: dict[str, int]) -> None:
        self.later = later  # every name a witness or group line defines, and the first such line
        self.defined: dict[str, int] = {QUORUM_NONE: 0}
        self.member_of: dict[str, tuple[str, int]] = {}
        self.logs: list[PolicyLog] = []
        self.log_lines: dict[bytes, int] = {}
        self.witnesses: list[PolicyWitness] = []
        self.witness_lines: dict[bytes, int] = {}
        self.groups: list[PolicyGroup] = []
        self.quorum: tuple[str, int] | None = None

    def new_name(self, name: str) -> None:
        if name == QUORUM_NONE:
            raise FormatError("'none' is predefined (the empty quorum); expected another name")
        if name in self.defined:
            raise FormatError(f"duplicate name {name!r} (defined on line {self.defined[name]}); expected a new name")

    def reference(self, name: str, role: str) -> None:
        if name in self.defined:
            return
        if name in self.later:
            raise FormatError(
                f"{role} {name!r} is defined later, on line {self.later[name]}; expected a witness or group "
                "defined on an earlier line"
            )
        raise FormatError(f"{role} {name!r} is not defined; expected a witness or group defined on an earlier line")

    def log(self, args: list[str], lineno: int) -> None:
        if not 1 <= len(args) <= 2:
            raise FormatError(f"a log line is `log <vkey> [<url>]`; found {_counted(args)} after `log`")
        key: VerifierKey | CosignerKey
        try:
            key = parse_log_key(_vkey_text(args[0]))
        except FormatError as e:
            hint = " (a witness's key: use a witness line)" if _is_cosigner_vkey(args[0]) else ""
            raise FormatError(
                f"log key: {e}{hint}; expected an Ed25519 note vkey (type 0x01) or an ML-DSA-44 vkey (type 0x06)"
            ) from None
        if key.public_key in self.log_lines:
            raise FormatError(f"duplicate log: the same public key as line {self.log_lines[key.public_key]}")
        self.log_lines[key.public_key] = lineno
        self.logs.append(PolicyLog(key, _url(args[1:])))

    def witness(self, args: list[str], lineno: int) -> None:
        if not 2 <= len(args) <= 3:
            raise FormatError(
                f"a witness line is `witness <name> <vkey> [<url>]`; found {_counted(args)} after `witness`"
            )
        self.new_name(args[0])
        try:
            key = parse_cosigner_vkey(_vkey_text(args[1]))
        except FormatError as e:
            raise FormatError(f"witness {args[0]!r} key: {e}; expected a cosigner vkey (type 0x04 or 0x06)") from None
        if key.public_key in self.witness_lines:
            raise FormatError(f"duplicate witness: the same public key as line {self.witness_lines[key.public_key]}")
        self.witness_lines[key.public_key] = lineno
        self.defined[args[0]] = lineno
        self.witnesses.append(PolicyWitness(args[0], key, _url(args[2:])))

    def group(self, args: list[str], lineno: int) -> None:
        if len(args) < 3:
            raise FormatError("a group line is `group <name> all|any|<k> <member>...` with at least one member")
        name, word, members = args[0], args[1], args[2:]
        self.new_name(name)
        n = len(members)
        if word == "all":
            k = n
        elif word == "any":
            k = 1
        elif _POLICY_THRESHOLD_RE.fullmatch(word):
            k = int(word)
            if not 1 <= k <= n:
                raise FormatError(f"group {name!r}: threshold {k} is out of range; expected 1 <= k <= {n}")
        else:
            raise FormatError(f"group {name!r}: threshold {word!r}; expected all, any or a decimal number 1..{n}")
        for m in members:
            if m == QUORUM_NONE:
                raise FormatError(f"group {name!r}: 'none' cannot be a group member")
            if m == name:
                raise FormatError(f"group {name!r} lists itself; expected witnesses or groups defined earlier")
            if m in self.member_of:
                parent, where = self.member_of[m]
                raise FormatError(
                    f"group {name!r}: {m!r} is already a member of group {parent!r} (line {where}); a name can be "
                    "a group member only once"
                )
            self.reference(m, f"group {name!r}: member")
            self.member_of[m] = (name, lineno)
        self.defined[name] = lineno
        self.groups.append(PolicyGroup(name, k, tuple(members)))

    def set_quorum(self, args: list[str], lineno: int) -> None:
        if len(args) != 1:
            raise FormatError(f"a quorum line is `quorum <name>`; found {_counted(args)} after `quorum`")
        if self.quorum is not None:
            raise FormatError(f"a second quorum line (the first is line {self.quorum[1]}); expected exactly one")
        self.reference(args[0], "quorum")
        self.quorum = (args[0], lineno)


def _counted(args: list[str]) -> str:
    hint = " (a comment must be on a line of its own)" if any(a.startswith("#") for a in args) else ""
    return f"{len(args)} item{'' if len(args) == 1 else 's'}{hint}"


def _vkey_text(item: str) -> str:
    raw = item.encode("utf-8", "surrogateescape")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError("a vkey is UTF-8 text") from None


def _is_cosigner_vkey(item: str) -> bool:
    try:
        parse_cosigner_vkey(_vkey_text(item))
    except FormatError:
        return False
    return True


def _url(rest: list[str]) -> str | None:
    if not rest:
        return None
    if rest[0].startswith("#"):
        raise FormatError("a comment must be on a line of its own (a URL cannot start with '#')")
    return rest[0]


def _policy_raw_lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline that ends the last line
    return lines


def _policy_lines(data: bytes) -> list[tuple[int, list[str]]]:
    """The numbered lines that are neither blank nor comments, split into items."""
    lines = _policy_raw_lines(data)
    out: list[tuple[int, list[str]]] = []
    for lineno, line in enumerate(lines, start=1):
        bad = next((b for b in line if (b < 0x20 and b != 0x09) or b == 0x7F), None)
        if bad is not None:
            hint = " (a Windows line ending?)" if bad == 0x0D else ""
            raise FormatError(f"policy line {lineno}: control character 0x{bad:02x}{hint}; only tab and newline")
        items = [i for i in _POLICY_SPACE_RE.split(line) if i]
        if not items or items[0].startswith(b"#"):
            continue
        out.append((lineno, [i.decode("utf-8", "surrogateescape") for i in items]))
    return out


def parse_policy(data: bytes | str) -> Policy:
    """Parse a policy file; raise FormatError naming the line and what was expected there."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    lines = _policy_lines(data)
    later: dict[str, int] = {}
    for lineno, items in lines:
        if items[0] in ("witness", "group") and len(items) > 1:
            later.setdefault(items[1], lineno)
    p = _PolicyParser(later)
    actions = {"log": p.log, "witness": p.witness, "group": p.group, "quorum": p.set_quorum}
    for lineno, items in lines:
        action = actions.get(items[0])
        try:
            if action is None:
                raise FormatError(f"unknown keyword {items[0]!r}; expected log, witness, group or quorum")
            action(items[1:], lineno)
        except FormatError as e:
            raise FormatError(f"policy line {lineno}: {e}") from None
    if p.quorum is None:
        count = len(_policy_raw_lines(data))
        raise FormatError(
            f"policy: {f'ends after line {count}' if count else 'is empty'} without a quorum line; expected exactly "
            "one `quorum <name>` line (`quorum none` requires no cosignature)"
        )
    return Policy(tuple(p.logs), tuple(p.witnesses), tuple(p.groups), p.quorum[0])


def evaluate(policy: Policy, valid_witness_names: Iterable[str]) -> tuple[bool, list[str]]:
    """Whether the witnesses named (by their policy names) satisfy the quorum and, if not, the
    sorted names of the witnesses whose missing cosignature keeps it from being satisfied.

    Those are the witnesses without a valid cosignature that sit below the quorum along
    unsatisfied groups only: any one of them cosigning brings an unsatisfied group closer to
    its threshold, while a witness in an already satisfied group would change nothing. Names
    that are not witnesses of the policy are ignored. The list is empty iff the quorum holds.
    """
    valid = set(valid_witness_names)
    witness_names = {w.name for w in policy.witnesses}
    holds: dict[str, bool] = {QUORUM_NONE: True}
    holds.update({name: name in valid for name in witness_names})
    members: dict[str, tuple[str, ...]] = {}
    for g in policy.groups:
        missing = [m for m in g.members if m not in holds]
        if missing:
            raise ValueError(f"group {g.name!r} lists {missing[0]!r} before it is defined")
        holds[g.name] = sum(holds[m] for m in g.members) >= g.threshold
        members[g.name] = g.members
    if policy.quorum not in holds:
        raise ValueError(f"the quorum {policy.quorum!r} is not defined")
    if holds[policy.quorum]:
        return True, []
    blocking: set[str] = set()
    seen: set[str] = set()
    stack = [policy.quorum]
    while stack:
        name = stack.pop()
        if name in seen or holds[name]:
            continue
        seen.add(name)
        if name in members:
            stack.extend(members[name])
        else:
            blocking.add(name)
    return False, sorted(blocking)


def witnessed_by(policy: Policy, note_bytes: bytes) -> dict[str, int]:
    """The policy's witnesses that validly cosigned the checkpoint note, by policy name, with
    each cosignature's timestamp (NoteError as verify_cosignatures). Each is checked on its own,
    since two witnesses of a policy may share a key name (a policy names each key once)."""
    stamps = cosigned_by(note_bytes, [w.key for w in policy.witnesses])
    return {w.name: stamps[w.key] for w in policy.witnesses if w.key in stamps}


# ==============================================================================================
# generator/verifier/tlog/witnessing.py: Witnessed checkpoints under a trust policy (c2sp.org/tlog-policy, tlog-
#     cosignature): the log's key must be one the policy names, and the checkpoint must carry valid cosignatures from
#     enough of the policy's witnesses for its quorum. A checkpoint a quorum of independent witnesses cosigned is one
#     the operator could not show to anyone else with a different history.
# ==============================================================================================

def policy_logs(policy: Policy, origin: str) -> list[VerifierKey]:
    """Every log key `policy` names for `origin`, in its order: during a rotation a policy names
    the retired key and the active one, and a checkpoint signed by any of them is the log's."""
    return [k for k in policy.log_keys if k.name == origin]


def ml_dsa_log_signers(policy: Policy, origin: str, checkpoint: bytes) -> tuple[list[CosignerKey], list[str]]:
    """The policy's ML-DSA-44 keys for `origin` whose signature on `checkpoint` verifies, and the
    problems: a line by one of them that does not verify, or none at all when the policy names
    any (a policy naming an ML-DSA-44 key for the log requires that signature type)."""
    keys = [k for k in policy.ml_dsa_log_keys if k.name == origin]
    try:
        signed = list(cosigned_by(checkpoint, keys))
    except NoteError as e:
        return [], [f"the log's ML-DSA-44 signature does not verify: {e}"]
    if keys and not signed:
        return [], [
            f"the policy requires the log's ML-DSA-44 signature and the checkpoint has none by "
            f"{', '.join(k.fingerprint for k in keys)}"
        ]
    return signed, []


def policy_problems(policy: Policy, origin: str, public_key: bytes, checkpoint: bytes) -> list[str]:
    """What keeps `checkpoint` (a note by `origin`'s Ed25519 `public_key`) from satisfying
    `policy`: a log key of each signature type the policy names for the log, then the quorum."""
    named = policy_logs(policy, origin)
    if named and not any(k.public_key == public_key for k in named):
        return [f"the policy names no log key {origin} with this site's key; it trusts another log"]
    if not named and not any(k.name == origin for k in policy.ml_dsa_log_keys):
        return [f"the policy names no log key {origin}; it trusts another log"]
    _, problems = ml_dsa_log_signers(policy, origin, checkpoint)
    if problems:
        return problems
    try:
        cosigned = witnessed_by(policy, checkpoint)
    except NoteError as e:
        return [f"a cosignature by a witness of the policy does not verify: {e}"]
    ok, missing = evaluate(policy, cosigned)
    if ok:
        return []
    return [
        f"the checkpoint lacks the cosignatures the policy's quorum ({policy.quorum}) needs; "
        f"cosigned by {', '.join(sorted(cosigned)) or 'no witness of the policy'}; missing: {', '.join(missing)}"
    ]


# Seconds a cosignature may be dated ahead of this clock: two honest clocks disagree by a few
# seconds (NTP keeps them within one); a minute also covers a witness that rounds up.
COSIGNATURE_CLOCK_SKEW = 60


_MAX_AGE_RE = re.compile(r"([1-9][0-9]{0,9})([smhd])")


_MAX_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


_LAST_PRINTABLE_SECOND = 253402300799  # 9999-12-31T23:59:59Z, the last time strftime can write


def parse_max_age(text: str) -> int:
    """A maximum age as `--max-age` takes it, in seconds: a whole number from 1 without leading
    zeros, then its unit, s, m, h or d (`3600s`, `90m`, `36h`, `7d`); FormatError otherwise."""
    found = _MAX_AGE_RE.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        raise FormatError(
            f"{text!r} is not a duration; expected a whole number then s, m, h or d, e.g. 3600s, 36h or 7d"
        )
    return int(found.group(1)) * _MAX_AGE_UNITS[found.group(2)]


def _age_text(seconds: int) -> str:
    """`1d 12h 5m 3s`, the zero parts left out."""
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return " ".join(parts) or "0s"


def _cosigned_at(timestamp: int) -> str:
    if not 0 <= timestamp <= _LAST_PRINTABLE_SECOND:
        return f"timestamp {timestamp}"
    return f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(timestamp))} (timestamp {timestamp})"


def cosignature_age_problems(timestamps: dict[str, int], now: int, max_age: int | None) -> list[str]:
    """What is wrong with the times of these cosignatures (POSIX seconds, by witness name) on a
    clock that reads `now`: one dated more than COSIGNATURE_CLOCK_SKEW seconds in the future, one
    older than `max_age` seconds (None: any age will do). One line each, by name."""
    problems = []
    for name in sorted(timestamps):
        timestamp = timestamps[name]
        ahead, age = timestamp - now, now - timestamp
        dated = f"the cosignature by {name} is dated {_cosigned_at(timestamp)}"
        if ahead > COSIGNATURE_CLOCK_SKEW:
            problems.append(
                f"{dated}, {_age_text(ahead)} in the future of this clock's {_cosigned_at(now)}; expected at most "
                f"{COSIGNATURE_CLOCK_SKEW}s ahead"
            )
        elif max_age is not None and age > max_age:
            problems.append(
                f"{dated}, {_age_text(age)} before this clock's {_cosigned_at(now)}; expected at most "
                f"{_age_text(max_age)} old"
            )
    return problems


# ==============================================================================================
# generator/verifier/core/idindex.py: A compact set of ids in insertion order: the speed and memory work of the ledger
#     replay, kept apart from its rules.
# ==============================================================================================

class IdIndex:
    """Ids numbered in insertion order, held in flat arrays: no Python object per id.

    A million ids as a million str keys of a dict cost about 150 MiB, and, interleaved with the
    short-lived objects of parsing, fragment the heap so that the process never gives the
    memory back. Here they cost about 26 bytes each: the UTF-8 bytes in one blob, an end offset,
    and a slot in an open-addressing table of ordinals.

    The table's hash is BLAKE2b keyed with a salt of its own rather than Python's `hash`, which
    changes with every process: a saved index (generator.verifier.memory.ledger_snapshot) is loaded as it
    was, without hashing a million ids again, and the salt, never shown to whoever chose the
    ids, still keeps them from crowding one slot.
    """

    def __init__(self, salt: bytes | None = None) -> None:
        self._salt = os.urandom(16) if salt is None else salt
        self._blob = bytearray()
        self._ends = array("Q")
        self._table = array("i", [-1]) * 1024
        self._mask = 1023

    def _hash(self, key: bytes) -> int:
        return int.from_bytes(hashlib.blake2b(key, digest_size=8, key=self._salt).digest(), "little")

    def __len__(self) -> int:
        return len(self._ends)

    def _slot(self, key: bytes) -> int:
        """The table slot holding `key`, or the empty slot where it would go."""
        table, ends, blob, mask = self._table, self._ends, self._blob, self._mask
        h = self._hash(key) & mask
        while True:
            o = table[h]
            if o < 0 or blob[(ends[o - 1] if o else 0) : ends[o]] == key:
                return h
            h = (h + 1) & mask

    def get(self, key: str) -> int | None:
        o = self._table[self._slot(key.encode())]
        return None if o < 0 else o

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def add(self, key: str) -> int:
        """Number a new key (the caller has checked it is not there)."""
        raw = key.encode()
        o = len(self._ends)
        self._blob += raw
        self._ends.append(len(self._blob))
        self._table[self._slot(raw)] = o
        if 2 * len(self._ends) > len(self._table):
            self._grow()
        return o

    def key(self, o: int) -> str:
        return self._blob[(self._ends[o - 1] if o else 0) : self._ends[o]].decode()

    def _grow(self) -> None:
        self._table = array("i", [-1]) * (2 * len(self._table))
        self._mask = len(self._table) - 1
        start = 0
        for o, end in enumerate(self._ends):
            self._table[self._slot(bytes(self._blob[start:end]))] = o
            start = end

    def parts(self) -> "tuple[bytes, bytearray, array[int], array[int]]":
        """What a snapshot saves: the salt, the blob, the ends and the table."""
        return self._salt, self._blob, self._ends, self._table

    @classmethod
    def from_parts(cls, salt: bytes, blob: bytearray, ends: "array[int]", table: "array[int]") -> "IdIndex":
        """An index from `parts()`; the caller has checked their sizes agree (a power-of-two
        table more than twice as long as the ends, ends never past the blob)."""
        index = cls(salt)
        index._blob, index._ends, index._table, index._mask = blob, ends, table, len(table) - 1
        return index


# ==============================================================================================
# generator/verifier/crypto/der.py: A strict reader of DER (ITU-T X.690 section 10), the one encoding of ASN.1 that a
#     timestamp token, an X.509 certificate and an ECDSA signature must use.
# ==============================================================================================

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


# ==============================================================================================
# generator/verifier/crypto/rsa.py: RSA signature verification (RFC 8017): RSASSA-PKCS1-v1_5 and RSASSA-PSS with MGF1,
#     over SHA-256, SHA-384 or SHA-512, for a public key given as its modulus and exponent.
# ==============================================================================================

# RFC 8017 section 9.2, note 1: the DER of DigestInfo up to the digest itself.
_RSA_DIGEST_INFO_PREFIX = {
    "sha256": bytes.fromhex("3031300d060960864801650304020105000420"),
    "sha384": bytes.fromhex("3041300d060960864801650304020205000430"),
    "sha512": bytes.fromhex("3051300d060960864801650304020305000440"),
}


RSA_HASHES = tuple(_RSA_DIGEST_INFO_PREFIX)


# A key below 2048 bits is within reach of a well-funded factoring effort (NIST SP 800-131A).
RSA_MIN_BITS = 2048


# Above 16384 bits the modular exponentiation is slow enough to be a way to stall the verifier.
RSA_MAX_BITS = 16384


# A larger exponent is legal but unused; the exponent of a key the site supplies bounds the work of
# each verification (BoringSSL draws the same line at 33 bits).
RSA_MAX_EXPONENT = (1 << 32) + 1


@dataclass(frozen=True)
class RsaPublicKey:
    """An RSA public key: its modulus n and public exponent e."""

    n: int
    e: int

    @property
    def size(self) -> int:
        """k of RFC 8017: the modulus's length in bytes."""
        return (self.n.bit_length() + 7) // 8


def rsa_public_key(n: int, e: int) -> RsaPublicKey:
    """The key (n, e), refused unless it is one an RSA key pair can have at a size used today."""
    if not RSA_MIN_BITS <= n.bit_length() <= RSA_MAX_BITS:
        raise FormatError(f"an RSA modulus of {n.bit_length()} bits (from {RSA_MIN_BITS} to {RSA_MAX_BITS} are read)")
    if n % 2 == 0:
        raise FormatError("an RSA modulus that is even")
    if e < 3 or e % 2 == 0 or e > RSA_MAX_EXPONENT:
        shown = str(e) if e.bit_length() <= 128 else f"{e.bit_length()} bits"
        raise FormatError(f"an RSA public exponent of {shown} (an odd number from 3 to 2^32 + 1 is read)")
    return RsaPublicKey(n, e)


def _rsa_hash(name: str, data: bytes) -> bytes:
    if name not in _RSA_DIGEST_INFO_PREFIX:
        raise FormatError(f"RSA with the hash {name!r} is not supported (SHA-256, SHA-384, SHA-512 are)")
    return hashlib.new(name, data).digest()


def _rsa_open(key: RsaPublicKey, signature: bytes, length: int) -> bytes | None:
    """RSAVP1 of RFC 8017 section 5.2.2 on a signature of k bytes, as `length` bytes, or None when
    the signature is out of range or the result does not fit."""
    if len(signature) != key.size:
        return None
    s = int.from_bytes(signature, "big")
    if s >= key.n:
        return None
    m = pow(s, key.e, key.n)
    if m >= 1 << (8 * length):
        return None
    return m.to_bytes(length, "big")


def rsa_verify_pkcs1v15(key: RsaPublicKey, hash_name: str, message: bytes, signature: bytes) -> bool:
    """RSASSA-PKCS1-V1_5-VERIFY (RFC 8017 section 8.2.2) of `signature` on `message`."""
    digest_info = _RSA_DIGEST_INFO_PREFIX.get(hash_name, b"") + _rsa_hash(hash_name, message)
    if key.size < len(digest_info) + 11:
        return False
    expected = b"\x00\x01" + b"\xff" * (key.size - len(digest_info) - 3) + b"\x00" + digest_info
    return _rsa_open(key, signature, key.size) == expected


def _rsa_mgf1(hash_name: str, seed: bytes, length: int) -> bytes:
    """MGF1 (RFC 8017 appendix B.2.1) with the hash `hash_name`."""
    out = b""
    counter = 0
    while len(out) < length:
        out += hashlib.new(hash_name, seed + counter.to_bytes(4, "big")).digest()
        counter += 1
    return out[:length]


def rsa_verify_pss(key: RsaPublicKey, hash_name: str, salt_length: int, message: bytes, signature: bytes) -> bool:
    """RSASSA-PSS-VERIFY (RFC 8017 section 8.1.2) of `signature` on `message`, with MGF1 over the
    same hash and the salt length the algorithm's parameters name."""
    m_hash = _rsa_hash(hash_name, message)
    h_len = len(m_hash)
    em_bits = key.n.bit_length() - 1
    em_len = (em_bits + 7) // 8
    if salt_length < 0 or em_len < h_len + salt_length + 2:
        return False
    em = _rsa_open(key, signature, em_len)
    if em is None or em[-1] != 0xBC:
        return False
    masked_db, h = em[: em_len - h_len - 1], em[em_len - h_len - 1 : -1]
    top_bits = 8 * em_len - em_bits  # the leftmost bits of EM that the modulus leaves zero
    if masked_db[0] >> (8 - top_bits):
        return False
    db = bytearray(a ^ b for a, b in zip(masked_db, _rsa_mgf1(hash_name, h, len(masked_db)), strict=True))
    db[0] &= 0xFF >> top_bits
    padding = em_len - h_len - salt_length - 2
    if any(db[:padding]) or db[padding] != 0x01:
        return False
    salt = bytes(db[len(db) - salt_length :]) if salt_length else b""
    return hashlib.new(hash_name, bytes(8) + m_hash + salt).digest() == h


# ==============================================================================================
# generator/verifier/crypto/ecdsa.py: ECDSA signature verification (FIPS 186-5 section 6.4.2, SEC 1 section 4.1.4) on
#     the NIST curves P-256 and P-384, with SHA-256, SHA-384 or SHA-512, for a signature in its DER form.
# ==============================================================================================

@dataclass(frozen=True)
class EcCurve:
    """A short Weierstrass curve y^2 = x^3 - 3x + b over the prime field of p, with a generator
    (gx, gy) of prime order n (the parameters of SEC 2 section 2.4.2 and 2.5.1, FIPS 186-5)."""

    name: str
    oid: str
    p: int
    b: int
    gx: int
    gy: int
    n: int

    @property
    def field_bytes(self) -> int:
        return (self.p.bit_length() + 7) // 8


EC_P256 = EcCurve(
    name="P-256",
    oid="1.2.840.10045.3.1.7",  # prime256v1 / secp256r1
    p=0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF,
    b=0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B,
    gx=0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
    gy=0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
    n=0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
)


EC_P384 = EcCurve(
    name="P-384",
    oid="1.3.132.0.34",  # secp384r1
    p=int("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFF0000000000000000FFFFFFFF", 16),
    b=int("B3312FA7E23EE7E4988E056BE3F82D19181D9C6EFE8141120314088F5013875AC656398D8A2ED19D2A85C8EDD3EC2AEF", 16),
    gx=int("AA87CA22BE8B05378EB1C71EF320AD746E1D3B628BA79B9859F741E082542A385502F25DBF55296C3A545E3872760AB7", 16),
    gy=int("3617DE4A96262C6F5D9E98BF9292DC29F8F41DBD289A147CE9DA3113B5F0B8C00A60B1CE1D7E819D7A431D7C90EA0E5F", 16),
    n=int("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973", 16),
)


EC_CURVES = {curve.oid: curve for curve in (EC_P256, EC_P384)}


EC_HASHES = ("sha256", "sha384", "sha512")


# A point in Jacobian coordinates (X, Y, Z) stands for (X/Z^2, Y/Z^3); Z = 0 is the point at infinity.
_EcJacobian = tuple[int, int, int]


_EC_INFINITY: _EcJacobian = (1, 1, 0)


@dataclass(frozen=True)
class EcPublicKey:
    """A public key: a point (x, y) of the curve other than infinity."""

    curve: EcCurve
    x: int
    y: int


def ec_public_key(curve: EcCurve, point: bytes) -> EcPublicKey:
    """The key an uncompressed SEC 1 point (04 || X || Y) encodes, refused unless the point lies
    on the curve (SEC 1 section 3.2.2.1: with cofactor 1 that is all a full check needs)."""
    size = curve.field_bytes
    if point[:1] in (b"\x02", b"\x03"):
        raise FormatError(f"a compressed {curve.name} point (only the uncompressed form 04 || X || Y is read)")
    if len(point) != 1 + 2 * size or point[0] != 0x04:
        raise FormatError(f"a {curve.name} public key that is not an uncompressed point of {1 + 2 * size} bytes")
    x = int.from_bytes(point[1 : 1 + size], "big")
    y = int.from_bytes(point[1 + size :], "big")
    if x >= curve.p or y >= curve.p:
        raise FormatError(f"a {curve.name} public key with a coordinate outside the field")
    if (y * y - (x * x * x - 3 * x + curve.b)) % curve.p:
        raise FormatError(f"a {curve.name} public key that is not a point of the curve")
    return EcPublicKey(curve, x, y)


def _ec_double(point: _EcJacobian, p: int) -> _EcJacobian:
    # "dbl-2001-b" of the Explicit-Formulas Database, for a = -3.
    x1, y1, z1 = point
    if z1 == 0 or y1 == 0:
        return _EC_INFINITY
    delta = z1 * z1 % p
    gamma = y1 * y1 % p
    beta = x1 * gamma % p
    alpha = 3 * (x1 - delta) * (x1 + delta) % p
    x3 = (alpha * alpha - 8 * beta) % p
    z3 = ((y1 + z1) * (y1 + z1) - gamma - delta) % p
    y3 = (alpha * (4 * beta - x3) - 8 * gamma * gamma) % p
    return x3, y3, z3


def _ec_add(one: _EcJacobian, two: _EcJacobian, p: int) -> _EcJacobian:
    """The sum of two points, either of which may be infinity or equal to the other or to its
    negation (the cases an adversarial signature aims at)."""
    x1, y1, z1 = one
    x2, y2, z2 = two
    if z1 == 0:
        return two
    if z2 == 0:
        return one
    z1z1, z2z2 = z1 * z1 % p, z2 * z2 % p
    u1, u2 = x1 * z2z2 % p, x2 * z1z1 % p
    s1, s2 = y1 * z2 * z2z2 % p, y2 * z1 * z1z1 % p
    if u1 == u2:
        return _ec_double(one, p) if s1 == s2 else _EC_INFINITY
    h = (u2 - u1) % p
    r = (s2 - s1) % p
    hh = h * h % p
    hhh = h * hh % p
    v = u1 * hh % p
    x3 = (r * r - hhh - 2 * v) % p
    y3 = (r * (v - x3) - s1 * hhh) % p
    z3 = h * z1 * z2 % p
    return x3, y3, z3


def _ec_combination(curve: EcCurve, u1: int, u2: int, key: EcPublicKey) -> _EcJacobian:
    """u1*G + u2*Q, by one pass of doublings over the bits of both scalars (Shamir's trick)."""
    p = curve.p
    g: _EcJacobian = (curve.gx, curve.gy, 1)
    q: _EcJacobian = (key.x, key.y, 1)
    table = (_EC_INFINITY, g, q, _ec_add(g, q, p))
    acc = _EC_INFINITY
    for i in range(max(u1.bit_length(), u2.bit_length()) - 1, -1, -1):
        acc = _ec_double(acc, p)
        index = (u1 >> i & 1) | (u2 >> i & 1) << 1
        if index:
            acc = _ec_add(acc, table[index], p)
    return acc


def ec_signature_values(signature: bytes) -> tuple[int, int]:
    """(r, s) of an ECDSA signature in its DER form: SEQUENCE { INTEGER r, INTEGER s }."""
    r_element, s_element = der_sequence(der_read(signature, "the ECDSA signature"), "the ECDSA signature", 2, 2)
    return der_integer(r_element, "the ECDSA signature's r"), der_integer(s_element, "the ECDSA signature's s")


def ecdsa_verify(key: EcPublicKey, hash_name: str, message: bytes, signature: bytes) -> bool:
    """Whether `signature` (DER) is a valid ECDSA signature by `key` on `message`, hashed with
    `hash_name`; False also for a signature that is not in its DER form."""
    if hash_name not in EC_HASHES:
        raise FormatError(f"ECDSA with the hash {hash_name!r} is not supported (SHA-256, SHA-384, SHA-512 are)")
    curve = key.curve
    try:
        r, s = ec_signature_values(signature)
    except FormatError:
        return False
    if not (1 <= r < curve.n and 1 <= s < curve.n):
        return False
    digest = hashlib.new(hash_name, message).digest()
    # FIPS 186-5 6.4.2 step 4: the leftmost bits of the hash, as many as n has.
    e = int.from_bytes(digest, "big") >> max(0, 8 * len(digest) - curve.n.bit_length())
    w = pow(s, -1, curve.n)
    x, _, z = _ec_combination(curve, e * w % curve.n, r * w % curve.n, key)
    if z == 0:
        return False
    affine_x = x * pow(z * z, -1, curve.p) % curve.p
    return affine_x % curve.n == r


# ==============================================================================================
# generator/verifier/crypto/signatures.py: Public keys and signature algorithms as X.509 and CMS name them: a
#     SubjectPublicKeyInfo read into a key that verifies, an AlgorithmIdentifier into the scheme and hash it stands
#     for.
# ==============================================================================================

PKIX_HASH_OIDS = {
    "2.16.840.1.101.3.4.2.1": "sha256",
    "2.16.840.1.101.3.4.2.2": "sha384",
    "2.16.840.1.101.3.4.2.3": "sha512",
}


_SIG_SHA1_OID = "1.3.14.3.2.26"


_SIG_RSA_ENCRYPTION = "1.2.840.113549.1.1.1"


_SIG_RSA_PSS = "1.2.840.113549.1.1.10"


_SIG_MGF1 = "1.2.840.113549.1.1.8"


_SIG_EC_PUBLIC_KEY = "1.2.840.10045.2.1"


_SIG_RSA_PKCS1 = {
    "1.2.840.113549.1.1.11": "sha256",  # sha256WithRSAEncryption
    "1.2.840.113549.1.1.12": "sha384",
    "1.2.840.113549.1.1.13": "sha512",
}


_SIG_ECDSA = {
    "1.2.840.10045.4.3.2": "sha256",  # ecdsa-with-SHA256
    "1.2.840.10045.4.3.3": "sha384",
    "1.2.840.10045.4.3.4": "sha512",
}


_SIG_NAMES = {
    _SIG_SHA1_OID: "SHA-1",
    "1.2.840.113549.1.1.5": "sha1WithRSAEncryption",
    "1.2.840.10045.4.1": "ecdsa-with-SHA1",
    "1.2.840.10040.4.3": "dsa-with-sha1",
    "1.3.101.112": "Ed25519",
    "2.16.840.1.101.3.4.2.4": "SHA-224",
}


def _sig_named(oid: str) -> str:
    return f"{_SIG_NAMES[oid]} ({oid})" if oid in _SIG_NAMES else oid


def _sig_parameters_absent_or_null(rest: list[DerElement], what: str) -> None:
    """RFC 4055 section 2.1 and RFC 5754 section 2: a SHA-2 algorithm's parameters are absent or
    NULL, and both must be accepted."""
    if rest:
        der_null(rest[0], f"{what}'s parameters")


def pkix_hash_algorithm(element: DerElement, what: str) -> str:
    """The hash ("sha256", "sha384" or "sha512") an AlgorithmIdentifier names."""
    fields = der_sequence(element, what, 1, 2)
    oid = der_oid(fields[0], what)
    if oid not in PKIX_HASH_OIDS:
        raise FormatError(f"{what}: the hash algorithm {_sig_named(oid)} is not supported (SHA-256, -384, -512 are)")
    _sig_parameters_absent_or_null(fields[1:], what)
    return PKIX_HASH_OIDS[oid]


@dataclass(frozen=True)
class SignatureAlgorithm:
    """What an AlgorithmIdentifier of a signature names: its scheme ("rsa-pkcs1v15", "rsa-pss" or
    "ecdsa"), its hash (None for rsaEncryption, whose hash CMS gives as the digest algorithm), and
    for RSASSA-PSS the salt length."""

    scheme: str
    hash_name: str | None
    salt_length: int = 0


def _sig_pss_parameters(element: DerElement, what: str) -> SignatureAlgorithm:
    """RSASSA-PSS-params (RFC 8017 appendix A.2.3): a SHA-2 hash, MGF1 over that same hash, a salt
    length, and the trailer field 1; the defaults (SHA-1, a salt of 20) leave SHA-1 in, so refused."""
    elements = der_sequence(element, f"{what}'s RSASSA-PSS parameters", 0, 4)
    tags = [f.tag for f in elements]
    if tags != sorted(set(tags)) or not set(tags) <= {der_context(i) for i in range(4)}:
        raise FormatError(f"{what}: RSASSA-PSS parameters other than [0] to [3], each once and in order")
    fields = {f.tag: f for f in elements}
    if der_context(0) not in fields:
        raise FormatError(f"{what}: RSASSA-PSS with the default hash, SHA-1, which is not supported")
    hash_name = pkix_hash_algorithm(der_explicit(fields[der_context(0)], 0, what), f"{what}'s PSS hash")
    if der_context(1) not in fields:
        raise FormatError(f"{what}: RSASSA-PSS with the default mask generation, MGF1 over SHA-1, not supported")
    mgf = der_sequence(der_explicit(fields[der_context(1)], 1, what), f"{what}'s mask generation", 2, 2)
    if der_oid(mgf[0], f"{what}'s mask generation") != _SIG_MGF1:
        raise FormatError(f"{what}: RSASSA-PSS with a mask generation function other than MGF1")
    if pkix_hash_algorithm(mgf[1], f"{what}'s MGF1 hash") != hash_name:
        raise FormatError(f"{what}: RSASSA-PSS with MGF1 over a hash other than the signature's")
    salt = 20
    if der_context(2) in fields:
        salt = der_integer(der_explicit(fields[der_context(2)], 2, what), f"{what}'s salt length")
    if der_context(3) in fields and der_integer(der_explicit(fields[der_context(3)], 3, what), what) != 1:
        raise FormatError(f"{what}: RSASSA-PSS with a trailer field other than 1 (0xBC)")
    if salt < 0:
        raise FormatError(f"{what}: RSASSA-PSS with a negative salt length")
    return SignatureAlgorithm("rsa-pss", hash_name, salt)


def pkix_signature_algorithm(element: DerElement, what: str) -> SignatureAlgorithm:
    """The signature algorithm an AlgorithmIdentifier names."""
    fields = der_sequence(element, what, 1, 2)
    oid = der_oid(fields[0], what)
    if oid == _SIG_RSA_ENCRYPTION or oid in _SIG_RSA_PKCS1:
        _sig_parameters_absent_or_null(fields[1:], what)
        return SignatureAlgorithm("rsa-pkcs1v15", _SIG_RSA_PKCS1.get(oid))
    if oid == _SIG_RSA_PSS:
        if len(fields) != 2:
            raise FormatError(f"{what}: RSASSA-PSS without its parameters")
        return _sig_pss_parameters(fields[1], what)
    if oid in _SIG_ECDSA:
        if len(fields) != 1:  # RFC 5758 section 3.2: the parameters MUST be absent
            raise FormatError(f"{what}: ECDSA with parameters, which RFC 5758 leaves absent")
        return SignatureAlgorithm("ecdsa", _SIG_ECDSA[oid])
    raise FormatError(f"{what}: the signature algorithm {_sig_named(oid)} is not supported")


@dataclass(frozen=True)
class SignatureKey:
    """A public key read from a SubjectPublicKeyInfo, which verifies signatures."""

    key: RsaPublicKey | EcPublicKey

    def describe(self) -> str:
        if isinstance(self.key, RsaPublicKey):
            return f"RSA {self.key.n.bit_length()}"
        return f"ECDSA {self.key.curve.name}"

    def verify(self, algorithm: SignatureAlgorithm, message: bytes, signature: bytes) -> bool:
        """Whether `signature` is this key's signature on `message` under `algorithm`; raises
        FormatError when the algorithm is not one this key signs with."""
        if algorithm.hash_name is None:
            raise FormatError(f"{algorithm.scheme} without the hash it is used with")
        if isinstance(self.key, RsaPublicKey):
            if algorithm.scheme == "rsa-pkcs1v15":
                return rsa_verify_pkcs1v15(self.key, algorithm.hash_name, message, signature)
            if algorithm.scheme == "rsa-pss":
                return rsa_verify_pss(self.key, algorithm.hash_name, algorithm.salt_length, message, signature)
        elif algorithm.scheme == "ecdsa":
            return ecdsa_verify(self.key, algorithm.hash_name, message, signature)
        raise FormatError(f"a {algorithm.scheme} signature algorithm for an {self.describe()} key")


def _sig_rsa_key(key_bytes: bytes) -> RsaPublicKey:
    """RSAPublicKey (RFC 8017 appendix A.1.1): SEQUENCE { modulus, publicExponent }."""
    n_element, e_element = der_sequence(der_read(key_bytes, "the RSA public key"), "the RSA public key", 2, 2)
    return rsa_public_key(
        der_positive_integer(n_element, "the RSA modulus"), der_positive_integer(e_element, "the RSA exponent")
    )


def read_subject_public_key_info(data: bytes | DerElement) -> SignatureKey:
    """The key a SubjectPublicKeyInfo (RFC 5280 section 4.1.2.7) holds: rsaEncryption (RFC 3279
    2.3.1, NULL parameters) or id-ecPublicKey on a named curve, P-256 or P-384 (RFC 5480)."""
    element = der_read(data, "the SubjectPublicKeyInfo") if isinstance(data, bytes) else data
    algorithm, key_bits = der_sequence(element, "the SubjectPublicKeyInfo", 2, 2)
    fields = der_sequence(algorithm, "the public key's algorithm", 1, 2)
    oid = der_oid(fields[0], "the public key's algorithm")
    key_bytes = der_bit_string(key_bits, "the subject public key")[0]
    if oid == _SIG_RSA_ENCRYPTION:
        if len(fields) != 2 or fields[1].tag != DER_NULL:
            raise FormatError("an rsaEncryption public key whose parameters are not NULL (RFC 3279 2.3.1)")
        der_null(fields[1], "the rsaEncryption parameters")
        return SignatureKey(_sig_rsa_key(key_bytes))
    if oid == _SIG_EC_PUBLIC_KEY:
        if len(fields) != 2 or fields[1].tag != DER_OID:
            raise FormatError("an EC public key whose parameters are not a named curve (RFC 5480 2.1.1)")
        curve_oid = der_oid(der_expect(fields[1], DER_OID, "the named curve"), "the named curve")
        if curve_oid not in EC_CURVES:
            raise FormatError(f"an EC public key on the curve {curve_oid}, not P-256 or P-384")
        return SignatureKey(ec_public_key(EC_CURVES[curve_oid], key_bytes))
    raise FormatError(f"a public key of the algorithm {_sig_named(oid)}, not RSA or EC")


# ==============================================================================================
# generator/verifier/crypto/x509.py: The parts of an X.509 certificate (RFC 5280) a timestamp token is checked
#     against: its public key, its hashes, its issuer and serial number, its subject key identifier, its validity
#     dates and its key usages.
# ==============================================================================================

X509_EKU_TIME_STAMPING = "1.3.6.1.5.5.7.3.8"


_X509_EXT_KEY_USAGE = "2.5.29.15"


_X509_EXT_EXTENDED_KEY_USAGE = "2.5.29.37"


_X509_EXT_SUBJECT_KEY_IDENTIFIER = "2.5.29.14"


_X509_ATTRIBUTE_NAMES = {
    "2.5.4.3": "CN",
    "2.5.4.6": "C",
    "2.5.4.7": "L",
    "2.5.4.8": "ST",
    "2.5.4.10": "O",
    "2.5.4.11": "OU",
    "2.5.4.5": "serialNumber",
    "1.2.840.113549.1.9.1": "emailAddress",
}


_X509_PEM_BEGIN = b"-----BEGIN CERTIFICATE-----"


_X509_PEM_END = b"-----END CERTIFICATE-----"


@dataclass(frozen=True)
class X509Certificate:
    """What a certificate says that a timestamp token is checked against. Names are kept as their
    DER (compared byte for byte, which DER makes exact) and as text for a person."""

    der: bytes
    serial: int
    issuer: bytes
    subject: bytes
    issuer_text: str
    subject_text: str
    not_before: str  # ISO 8601, "2026-01-02T03:04:05Z"
    not_after: str
    public_key: SignatureKey
    subject_key_identifier: bytes | None
    key_usage: frozenset[str] | None  # None: the certificate has no keyUsage extension
    extended_key_usage: tuple[str, ...] | None  # OIDs; None: no extendedKeyUsage extension
    extended_key_usage_critical: bool

    def digest(self, hash_name: str) -> bytes:
        """The hash of the certificate's DER ("sha1" for an ESSCertID, "sha256" for most v2 ones)."""
        return hashlib.new(hash_name, self.der).digest()


def _x509_der_of(data: bytes) -> bytes:
    """The DER of one certificate given as DER or as one PEM block (RFC 7468: text may come before
    the block, as `openssl x509 -text` writes it, and blank space after)."""
    begin = data.find(_X509_PEM_BEGIN)
    if begin < 0:
        return data
    end = data.find(_X509_PEM_END, begin)
    if data.count(_X509_PEM_BEGIN) != 1 or end < 0 or data[end + len(_X509_PEM_END) :].strip():
        raise FormatError("a PEM file of other than one certificate")
    body = data[begin + len(_X509_PEM_BEGIN) : end]
    try:
        return base64.b64decode(b"".join(body.split()), validate=True)
    except (binascii.Error, ValueError):
        raise FormatError("a PEM block whose body is not base64") from None


def x509_name_text(name: DerElement) -> str:
    """A Name (RFC 5280 4.1.2.4) for a person: "C=DE, O=Example, CN=Example TSA", in its order."""
    parts = []
    for rdn in der_sequence(name, "a name"):
        for attribute in der_set_of(rdn, "a relative distinguished name"):
            kind, value = der_sequence(attribute, "a name's attribute", 2, 2)
            oid = der_oid(kind, "a name's attribute type")
            try:
                text = der_text(value, "a name's attribute value")
            except FormatError:
                text = "#" + value.encoded.hex()
            parts.append(f"{_X509_ATTRIBUTE_NAMES.get(oid, oid)}={text}")
    return ", ".join(parts)


@dataclass
class _X509Extensions:
    subject_key_identifier: bytes | None = None
    key_usage: frozenset[str] | None = None
    extended_key_usage: tuple[str, ...] | None = None
    extended_key_usage_critical: bool = False


# RFC 5280 4.2.1.3, in the order of their bits.
_X509_KEY_USAGE_BITS = (
    *("digitalSignature", "nonRepudiation", "keyEncipherment", "dataEncipherment"),
    *("keyAgreement", "keyCertSign", "cRLSign", "encipherOnly", "decipherOnly"),
)


def _x509_key_usage(value: bytes) -> frozenset[str]:
    bits, _ = der_bit_string(der_read(value, "the key usage"), "the key usage", whole_bytes=False)
    number = int.from_bytes(bits, "big")
    width = 8 * len(bits)
    return frozenset(name for i, name in enumerate(_X509_KEY_USAGE_BITS) if i < width and number >> (width - 1 - i) & 1)


def _x509_extensions(element: DerElement) -> _X509Extensions:
    out = _X509Extensions()
    seen: set[str] = set()
    for extension in der_sequence(der_explicit(element, 3, "the extensions"), "the extensions", 1):
        fields = der_sequence(extension, "an extension", 2, 3)
        oid = der_oid(fields[0], "an extension's identifier")
        if oid in seen:
            raise FormatError(f"the certificate has the extension {oid} twice (RFC 5280 4.2)")
        seen.add(oid)
        critical = False
        if len(fields) == 3:
            critical = der_boolean(der_expect(fields[1], DER_BOOLEAN, "critical"), "an extension's criticality")
            if not critical:  # X.690 11.5: a value equal to its DEFAULT is left out
                raise FormatError(f"the extension {oid} states critical FALSE, which DER leaves out")
        value = der_octet_string(fields[-1], "an extension's value")
        if oid == _X509_EXT_SUBJECT_KEY_IDENTIFIER:
            out.subject_key_identifier = der_octet_string(der_read(value, "the key identifier"), "the key identifier")
        elif oid == _X509_EXT_KEY_USAGE:
            out.key_usage = _x509_key_usage(value)
        elif oid == _X509_EXT_EXTENDED_KEY_USAGE:
            purposes = der_sequence(der_read(value, "the extended key usage"), "the extended key usage", 1)
            out.extended_key_usage = tuple(der_oid(p, "a key purpose") for p in purposes)
            out.extended_key_usage_critical = critical
    return out


def read_x509_certificate(data: bytes) -> X509Certificate:
    """The certificate `data` holds, as DER or PEM."""
    der = _x509_der_of(data)
    tbs_element, algorithm, signature = der_sequence(der_read(der, "the certificate"), "the certificate", 3, 3)
    der_sequence(algorithm, "the certificate's signature algorithm", 1, 2)
    der_bit_string(signature, "the certificate's signature")
    tbs = der_sequence(tbs_element, "the certificate's TBSCertificate", 6, 10)
    if tbs[0].tag == der_context(0):
        version = der_integer(der_explicit(tbs[0], 0, "the version"), "the version")
        if version not in (1, 2):  # v1 is the DEFAULT, which DER leaves out
            raise FormatError(f"a certificate of the version number {version} (v2 or v3, 1 or 2, expected)")
        tbs = tbs[1:]
    if len(tbs) < 6:
        raise FormatError("the certificate's TBSCertificate has too few fields")
    serial_element, inner_algorithm, issuer, validity, subject, key_info, *optional = tbs
    if inner_algorithm.encoded != algorithm.encoded:  # RFC 5280 4.1.1.2
        raise FormatError("the certificate names two signature algorithms, inside and outside its TBSCertificate")
    serial = der_integer(serial_element, "the serial number")
    not_before, not_after = der_sequence(validity, "the validity", 2, 2)
    extensions = _X509Extensions()
    tags = [e.tag for e in optional]
    if tags != sorted(set(tags)) or not set(tags) <= {0x81, 0x82, der_context(3)}:
        raise FormatError("the certificate's TBSCertificate ends in other than [1], [2], [3], each once, in order")
    if optional and optional[-1].tag == der_context(3):
        extensions = _x509_extensions(optional[-1])
    return X509Certificate(
        der=der,
        serial=serial,
        issuer=issuer.encoded,
        subject=subject.encoded,
        issuer_text=x509_name_text(issuer),
        subject_text=x509_name_text(subject),
        not_before=der_time(not_before, "notBefore"),
        not_after=der_time(not_after, "notAfter"),
        public_key=read_subject_public_key_info(key_info),
        subject_key_identifier=extensions.subject_key_identifier,
        key_usage=extensions.key_usage,
        extended_key_usage=extensions.extended_key_usage,
        extended_key_usage_critical=extensions.extended_key_usage_critical,
    )


def x509_timestamping_problem(certificate: X509Certificate) -> str | None:
    """Why the certificate may not sign timestamp tokens, or None. RFC 3161 section 2.3: an
    extendedKeyUsage, if there is one, must be critical and name id-kp-timeStamping only; a
    keyUsage, if there is one, must allow signatures (digitalSignature or nonRepudiation)."""
    eku = certificate.extended_key_usage
    if eku is not None:
        if X509_EKU_TIME_STAMPING not in eku:
            return f"its extendedKeyUsage ({', '.join(eku)}) lacks id-kp-timeStamping ({X509_EKU_TIME_STAMPING})"
        if len(eku) != 1:
            return f"its extendedKeyUsage names other purposes than id-kp-timeStamping ({', '.join(eku)})"
        if not certificate.extended_key_usage_critical:
            return "its extendedKeyUsage id-kp-timeStamping is not marked critical"
    usage = certificate.key_usage
    if usage is not None and not usage & {"digitalSignature", "nonRepudiation"}:
        return f"its keyUsage ({', '.join(sorted(usage)) or 'none'}) allows no signature"
    return None


# ==============================================================================================
# generator/verifier/crypto/timestamp_token.py: RFC 3161 timestamp tokens, read and verified against a pinned
#     authority certificate: the proof, signed by a timestamp authority, that a hash existed at a time.
# ==============================================================================================

TST_INFO_OID = "1.2.840.113549.1.9.16.1.4"  # id-ct-TSTInfo


_TST_SIGNED_DATA = "1.2.840.113549.1.7.2"


_TST_CONTENT_TYPE = "1.2.840.113549.1.9.3"


_TST_MESSAGE_DIGEST = "1.2.840.113549.1.9.4"


_TST_SIGNING_CERTIFICATE = "1.2.840.113549.1.9.16.2.12"


_TST_SIGNING_CERTIFICATE_V2 = "1.2.840.113549.1.9.16.2.47"


_TST_STATUS = ("granted", "grantedWithMods", "rejection", "waiting", "revocationWarning", "revocationNotification")


# PKIFailureInfo (RFC 3161 section 2.4.2), by the number of its bit.
_TST_FAILURES = {
    0: "badAlg",
    2: "badRequest",
    5: "badDataFormat",
    14: "timeNotAvailable",
    15: "unacceptedPolicy",
    16: "unacceptedExtension",
    17: "addInfoNotAvailable",
    25: "systemFailure",
}


# RFC 3161 section 2.4.2's order of TSTInfo's optional fields, after genTime.
_TST_OPTIONAL_ORDER = (DER_SEQUENCE, DER_BOOLEAN, DER_INTEGER, der_context(0), der_context(1))


@dataclass(frozen=True)
class TimestampToken:
    """What a timestamp token states. gen_time is ISO 8601 truncated to the second;
    gen_time_exact is the GeneralizedTime as the token has it ("20260102030405.25Z")."""

    gen_time: str
    gen_time_exact: str
    hash_algorithm: str  # of the message imprint: "sha256", "sha384" or "sha512"
    hashed_message: bytes
    serial: int
    policy: str
    nonce: int | None
    tsa_name: str | None
    accuracy_micros: int | None  # the accuracy given, in microseconds; None: not given
    ordering: bool
    token: bytes  # the TimeStampToken's DER, taken out of a TimeStampResp when it came in one
    certificates: tuple[bytes, ...]  # the certificates the token carries (never trusted)
    authority: X509Certificate | None = None  # the pinned certificate it verified against


@dataclass(frozen=True)
class _TstSigner:
    """The SignerInfo's parts (RFC 5652 section 5.3) a verification needs."""

    sid_issuer: bytes | None  # DER of the issuer Name, for an IssuerAndSerialNumber
    sid_serial: int | None
    sid_key_identifier: bytes | None  # for a subjectKeyIdentifier
    digest_algorithm: str
    signed_attributes: DerElement
    signature_algorithm: DerElement
    signature: bytes


@dataclass(frozen=True)
class _TstParsed:
    token: TimestampToken
    tst_info: bytes
    signer: _TstSigner
    tsa_directory_name: bytes | None


def _tst_refusal_detail(rest: list[DerElement]) -> str:
    """The statusString and failInfo of a PKIStatusInfo, for a person."""
    words = []
    for element in rest:
        if element.tag == DER_SEQUENCE:
            words += [der_text(t, "the status text") for t in der_children(element)]
        else:
            bits, _ = der_bit_string(element, "the failure information", whole_bytes=False)
            if len(bits) > 4:  # RFC 3161 names 26 bits: a longer string is read no further
                words.append(f"failure information of {len(bits)} bytes")
                continue
            number, width = int.from_bytes(bits, "big"), 8 * len(bits)
            set_bits = [i for i in range(width) if number >> (width - 1 - i) & 1]
            words += [_TST_FAILURES.get(i, f"failure bit {i}") for i in set_bits]
    return f": {'; '.join(words)}" if words else ""


def _tst_unwrap(element: DerElement) -> DerElement:
    """The ContentInfo, given one or a TimeStampResp (RFC 3161 section 2.4.2) that holds one."""
    first = der_children(der_expect(element, DER_SEQUENCE, "the token"))
    if first and first[0].tag != DER_SEQUENCE:
        return element
    fields = der_sequence(element, "the TimeStampResp", 1, 2)
    info = der_sequence(fields[0], "the PKIStatusInfo", 1, 3)
    status = der_integer(info[0], "the PKIStatus")
    if status not in (0, 1):
        name = _TST_STATUS[status] if 0 <= status < len(_TST_STATUS) else f"unknown, {status.bit_length()} bits"
        raise FormatError(f"the authority refused the request (status {name}){_tst_refusal_detail(info[1:])}")
    if len(fields) != 2:
        raise FormatError("the authority's reply grants the request but holds no token")
    return fields[1]


def _tst_general_name(element: DerElement) -> tuple[str, bytes | None]:
    """A GeneralName (RFC 5280 4.2.1.6) as text, and the DER of the Name for a directoryName."""
    if element.tag == der_context(4):
        name = der_explicit(element, 4, "the TSA name")
        return x509_name_text(name), name.encoded
    if element.tag in (0x81, 0x82, 0x86):  # rfc822Name, dNSName, uniformResourceIdentifier
        return element.content.decode("ascii", "replace"), None
    return f"[{element.tag & 0x1F}] {element.content.hex()}", None


def _tst_accuracy(element: DerElement) -> int:
    """An Accuracy (RFC 3161 2.4.2): seconds, [0] millis and [1] micros, each optional."""
    scales = {DER_INTEGER: 1_000_000, 0x80: 1000, 0x81: 1}
    fields = der_children(der_expect(element, DER_SEQUENCE, "the accuracy"))
    tags = [f.tag for f in fields]
    if [t for t in scales if t in tags] != tags:
        raise FormatError("the accuracy holds other than seconds, [0] millis and [1] micros, each once, in order")
    micros = 0
    for part in fields:
        value = der_integer(part, "the accuracy", part.tag)
        if value < 0 or (part.tag != DER_INTEGER and not 1 <= value <= 999):
            raise FormatError(f"the accuracy holds {value} where {'0 or more' if part.tag == DER_INTEGER else '1-999'}")
        micros += value * scales[part.tag]
    return micros


def _tst_info(content: bytes, token: bytes, certificates: tuple[bytes, ...]) -> tuple[TimestampToken, bytes | None]:
    """What a TSTInfo (RFC 3161 section 2.4.2) states, and the DER of the TSA's Name if given."""
    fields = der_sequence(der_read(content, "the TSTInfo"), "the TSTInfo", 5, 10)
    if der_integer(fields[0], "the TSTInfo version") != 1:
        raise FormatError("a TSTInfo of a version other than 1")
    imprint_algorithm, hashed = der_sequence(fields[2], "the message imprint", 2, 2)
    imprint_hash = pkix_hash_algorithm(imprint_algorithm, "the message imprint's hash algorithm")
    hashed_message = der_octet_string(hashed, "the hashed message")
    if len(hashed_message) != hashlib.new(imprint_hash).digest_size:
        raise FormatError(f"the message imprint holds {len(hashed_message)} bytes, not a {imprint_hash} hash")
    gen_time, exact = der_generalized_time(fields[4], "genTime")
    tags = [f.tag for f in fields[5:]]
    if [t for t in _TST_OPTIONAL_ORDER if t in tags] != tags:
        raise FormatError("the TSTInfo's optional fields are not accuracy, ordering, nonce, tsa, extensions in order")
    optional = {f.tag: f for f in fields[5:]}
    if DER_BOOLEAN in optional and not der_boolean(optional[DER_BOOLEAN], "ordering"):
        raise FormatError("the TSTInfo states ordering FALSE, which DER leaves out")
    tsa_name = directory_name = None
    if der_context(0) in optional:
        tsa_name, directory_name = _tst_general_name(der_explicit(optional[der_context(0)], 0, "the TSA"))
    stated = TimestampToken(
        gen_time=gen_time,
        gen_time_exact=exact,
        hash_algorithm=imprint_hash,
        hashed_message=hashed_message,
        serial=der_positive_integer(fields[3], "the serial number"),
        policy=der_oid(fields[1], "the policy"),
        nonce=der_integer(optional[DER_INTEGER], "the nonce") if DER_INTEGER in optional else None,
        tsa_name=tsa_name,
        accuracy_micros=_tst_accuracy(optional[DER_SEQUENCE]) if DER_SEQUENCE in optional else None,
        ordering=DER_BOOLEAN in optional,
        token=token,
        certificates=certificates,
    )
    return stated, directory_name


def _tst_signer(element: DerElement) -> _TstSigner:
    """The one SignerInfo (RFC 5652 section 5.3) of a token."""
    fields = der_sequence(element, "the SignerInfo", 6, 7)
    version = der_integer(fields[0], "the SignerInfo version")
    issuer = serial = key_id = None
    if fields[1].tag == DER_SEQUENCE and version == 1:
        issuer_element, serial_element = der_sequence(fields[1], "the signer's IssuerAndSerialNumber", 2, 2)
        der_sequence(issuer_element, "the signer's issuer")
        issuer, serial = issuer_element.encoded, der_integer(serial_element, "the signer's serial number")
    elif fields[1].tag == 0x80 and version == 3:
        key_id = der_octet_string(fields[1], "the signer's key identifier", 0x80)
    else:
        raise FormatError(f"a SignerInfo of version {version} with a signer identifier of tag 0x{fields[1].tag:02x}")
    if fields[3].tag != der_context(0):
        raise FormatError("the SignerInfo has no signed attributes (a timestamp token needs them)")
    if len(fields) == 7 and fields[6].tag != der_context(1):
        raise FormatError("the SignerInfo ends in other than its unsigned attributes")
    return _TstSigner(
        sid_issuer=issuer,
        sid_serial=serial,
        sid_key_identifier=key_id,
        digest_algorithm=pkix_hash_algorithm(fields[2], "the SignerInfo's digest algorithm"),
        signed_attributes=fields[3],
        signature_algorithm=fields[4],
        signature=der_octet_string(fields[5], "the signature"),
    )


def _tst_signed_data(content_info: DerElement) -> tuple[bytes, tuple[bytes, ...], _TstSigner]:
    """The eContent (a TSTInfo's DER), the certificates and the signer of a ContentInfo that holds
    a SignedData (RFC 5652 sections 3 and 5)."""
    kind, wrapped = der_sequence(content_info, "the ContentInfo", 2, 2)
    if der_oid(kind, "the content type") != _TST_SIGNED_DATA:
        raise FormatError(f"a ContentInfo of the type {der_oid(kind, 'the content type')}, not signedData")
    fields = der_sequence(der_explicit(wrapped, 0, "the content"), "the SignedData", 4, 6)
    if der_integer(fields[0], "the SignedData version") != 3:  # RFC 5652 5.1: eContentType other than id-data
        raise FormatError("a SignedData of a version other than 3")
    for algorithm in der_set_of(fields[1], "the digest algorithms"):
        der_sequence(algorithm, "a digest algorithm", 1, 2)
    e_type, e_content = der_sequence(fields[2], "the EncapsulatedContentInfo", 2, 2)
    if der_oid(e_type, "the eContentType") != TST_INFO_OID:
        raise FormatError(f"the token's content is {der_oid(e_type, 'the eContentType')}, not id-ct-TSTInfo")
    tst_info = der_octet_string(der_explicit(e_content, 0, "the eContent"), "the eContent", DER_OCTET_STRING)
    rest = fields[3:-1]
    tags = [f.tag for f in rest]
    if tags not in ([], [der_context(0)], [der_context(1)], [der_context(0), der_context(1)]):
        raise FormatError("the SignedData holds other than certificates [0] and CRLs [1] before its signers")
    certificates = tuple(c.encoded for c in der_children(rest[0])) if der_context(0) in tags else ()
    signers = der_set_of(fields[-1], "the SignerInfos")
    if len(signers) != 1:
        raise FormatError(f"a timestamp token with {len(signers)} signers (RFC 3161 2.4.2: one, the authority)")
    return tst_info, certificates, _tst_signer(signers[0])


def _tst_parse(token_der: bytes) -> _TstParsed:
    content_info = _tst_unwrap(der_read(token_der, "the token"))
    tst_info, certificates, signer = _tst_signed_data(content_info)
    token, directory_name = _tst_info(tst_info, content_info.encoded, certificates)
    return _TstParsed(token, tst_info, signer, directory_name)


def read_timestamp_token(token_der: bytes) -> TimestampToken:
    """What a timestamp token (or a TimeStampResp holding one) states, read but not verified."""
    return _tst_parse(token_der).token


def _tst_attributes(element: DerElement) -> dict[str, list[DerElement]]:
    """The signed attributes (RFC 5652 5.3), by type, each given once, each with its values."""
    out: dict[str, list[DerElement]] = {}
    for attribute in der_set_of(element, "the signed attributes", der_context(0)):
        kind, values = der_sequence(attribute, "a signed attribute", 2, 2)
        oid = der_oid(kind, "a signed attribute's type")
        if oid in out:
            raise FormatError(f"the signed attribute {oid} is given twice")
        out[oid] = der_set_of(values, f"the values of the signed attribute {oid}")
    return out


def _tst_single(attributes: dict[str, list[DerElement]], oid: str, name: str) -> DerElement | None:
    values = attributes.get(oid)
    if values is None:
        return None
    if len(values) != 1:
        raise FormatError(f"the signed attribute {name} has {len(values)} values, not one")
    return values[0]


def _tst_issuer_serial_problem(element: DerElement, certificate: X509Certificate, name: str) -> str | None:
    """Why an IssuerSerial (RFC 2634 5.4.1) does not name the certificate, or None."""
    names, serial = der_sequence(element, f"{name}'s issuerSerial", 2, 2)
    if der_integer(serial, f"{name}'s serial number") != certificate.serial:
        return f"the signed attribute {name} names the serial number {der_integer(serial, name)}"
    issuers = [g for g in der_sequence(names, f"{name}'s issuer", 1) if g.tag == der_context(4)]
    if not any(der_explicit(g, 4, f"{name}'s issuer").encoded == certificate.issuer for g in issuers):
        return f"the signed attribute {name} names an issuer other than the certificate's"
    return None


def _tst_cert_id_problem(attributes: dict[str, list[DerElement]], certificate: X509Certificate) -> str | None:
    """Why the signingCertificate (ESSCertID, RFC 2634 5.4) and signingCertificateV2 (ESSCertIDv2,
    RFC 5035 section 3) attributes do not name the certificate, or None; at least one must be
    there, and the first certificate either names is the signer's."""
    found = False
    for oid, name in (
        (_TST_SIGNING_CERTIFICATE, "signingCertificate"),
        (_TST_SIGNING_CERTIFICATE_V2, "signingCertificateV2"),
    ):
        value = _tst_single(attributes, oid, name)
        if value is None:
            continue
        found = True
        certs = der_sequence(der_sequence(value, name, 1, 2)[0], f"{name}'s certificates", 1)
        fields = der_sequence(certs[0], f"{name}'s first certificate", 1, 3)
        hash_name = "sha1"
        if oid == _TST_SIGNING_CERTIFICATE_V2:
            hash_name = "sha256"
            if fields[0].tag == DER_SEQUENCE:
                hash_name = pkix_hash_algorithm(fields[0], f"{name}'s hash algorithm")
                fields = fields[1:]
        if not fields or len(fields) > 2:
            raise FormatError(f"the signed attribute {name} names its first certificate in other than its fields")
        if der_octet_string(fields[0], f"{name}'s certificate hash") != certificate.digest(hash_name):
            return f"the signed attribute {name} names another certificate (its {hash_name} hash differs)"
        if len(fields) == 2 and (problem := _tst_issuer_serial_problem(fields[1], certificate, name)):
            return problem
    return None if found else "neither signingCertificate nor signingCertificateV2 is among the signed attributes"


def _tst_check_signed_attributes(parsed: _TstParsed, certificate: X509Certificate) -> None:
    attributes = _tst_attributes(parsed.signer.signed_attributes)
    content_type = _tst_single(attributes, _TST_CONTENT_TYPE, "contentType")
    if content_type is None:
        raise FormatError("the signed attribute contentType is missing")
    if (kind := der_oid(content_type, "contentType")) != TST_INFO_OID:
        raise FormatError(f"the signed attribute contentType is {kind}, not id-ct-TSTInfo ({TST_INFO_OID})")
    digest = _tst_single(attributes, _TST_MESSAGE_DIGEST, "messageDigest")
    if digest is None:
        raise FormatError("the signed attribute messageDigest is missing")
    algorithm = parsed.signer.digest_algorithm
    if der_octet_string(digest, "messageDigest") != hashlib.new(algorithm, parsed.tst_info).digest():
        raise FormatError(f"the signed attribute messageDigest is not the {algorithm} of the token's TSTInfo")
    if problem := _tst_cert_id_problem(attributes, certificate):
        raise FormatError(f"the token's signer is not the pinned authority certificate: {problem}")


def _tst_issuer_and_serial(der: bytes) -> tuple[bytes, int] | None:
    """The issuer (DER) and serial number of a certificate the token carries, or None when it is
    not a certificate read here (it is compared, never used, so it need not be readable)."""
    try:
        tbs = der_children(der_sequence(der_read(der, "a certificate"), "a certificate", 3, 3)[0])
        tbs = tbs[1:] if tbs and tbs[0].tag == der_context(0) else tbs
        return tbs[2].encoded, der_integer(tbs[0], "a serial number")
    except (FormatError, IndexError):
        return None


def _tst_check_signer(parsed: _TstParsed, certificate: X509Certificate) -> None:
    """The SignerInfo's identifier, a signer certificate the token carries, and the TSA name the
    TSTInfo gives, if any, must each designate the pinned certificate."""
    signer = parsed.signer
    pinned = (
        f"the pinned authority certificate ({certificate.subject_text}, serial {certificate.serial} of "
        f"{certificate.issuer_text})"
    )
    if signer.sid_key_identifier is not None:
        if signer.sid_key_identifier != certificate.subject_key_identifier:
            raise FormatError(f"the token's signer (key identifier {signer.sid_key_identifier.hex()}) is not {pinned}")
    elif (signer.sid_issuer, signer.sid_serial) != (certificate.issuer, certificate.serial):
        issuer = x509_name_text(der_read(signer.sid_issuer or b"", "the signer's issuer"))
        raise FormatError(f"the token's signer (serial {signer.sid_serial} of {issuer}) is not {pinned}")
    for carried in parsed.token.certificates:
        if _tst_issuer_and_serial(carried) == (certificate.issuer, certificate.serial) and carried != certificate.der:
            raise FormatError(f"the token carries a certificate with the issuer and serial of {pinned}, not it")
    if parsed.tsa_directory_name is not None and parsed.tsa_directory_name != certificate.subject:
        raise FormatError(f"the token names the authority {parsed.token.tsa_name}, not the subject of {pinned}")


def _tst_check_signature(parsed: _TstParsed, certificate: X509Certificate) -> None:
    signer = parsed.signer
    algorithm = pkix_signature_algorithm(signer.signature_algorithm, "the SignerInfo's signature algorithm")
    if algorithm.hash_name is None:  # rsaEncryption: CMS hashes with the digest algorithm (RFC 3370 3.2)
        algorithm = dataclasses.replace(algorithm, hash_name=signer.digest_algorithm)
    elif algorithm.hash_name != signer.digest_algorithm:
        raise FormatError(
            f"the signature algorithm hashes with {algorithm.hash_name}, the SignerInfo's digest algorithm is "
            f"{signer.digest_algorithm}"
        )
    # RFC 5652 5.4: the signature covers the DER of the attributes as a SET OF, not as their [0] tag.
    signed = b"\x31" + signer.signed_attributes.encoded[1:]
    if not certificate.public_key.verify(algorithm, signed, signer.signature):
        raise FormatError(
            f"the signature does not verify against the pinned authority certificate ({certificate.subject_text}, "
            f"{certificate.public_key.describe()}, {algorithm.scheme} with {algorithm.hash_name})"
        )


def verify_timestamp_token(
    token_der: bytes, authority_certificate: bytes, data: bytes, data_name: str = "the data"
) -> TimestampToken:
    """What a timestamp token (or a TimeStampResp holding one) states, once verified: signed by the
    key of `authority_certificate` (PEM or DER), which must be allowed to sign timestamps, and
    timestamping `data` (`data_name` says what it is in errors: "the checkpoint"). Raises
    FormatError naming the first check that fails."""
    parsed = _tst_parse(token_der)
    try:
        certificate = read_x509_certificate(authority_certificate)
    except FormatError as error:
        raise FormatError(f"the pinned authority certificate cannot be read: {error}") from None
    if problem := x509_timestamping_problem(certificate):
        raise FormatError(f"the pinned authority certificate may not sign timestamp tokens: {problem}")
    _tst_check_signer(parsed, certificate)
    _tst_check_signed_attributes(parsed, certificate)
    _tst_check_signature(parsed, certificate)
    token = parsed.token
    expected = hashlib.new(token.hash_algorithm, data).digest()
    if expected != token.hashed_message:
        raise FormatError(
            f"the message imprint is not the hash of {data_name}: the token's {token.hash_algorithm} is "
            f"{token.hashed_message.hex()}, {data_name} hashes to {expected.hex()}"
        )
    return dataclasses.replace(token, authority=certificate)


# ==============================================================================================
# generator/verifier/crypto/hash_to_g1.py: Hashing to BLS12-381's group G1 (RFC 9380, suite
#     BLS12381G1_XMD:SHA-256_SSWU_RO_), and the G1 arithmetic it needs: the message half of a drand quicknet signature
#     check.
# ==============================================================================================

# The base field's prime (RFC 9380 section 8.8.1; the BLS12-381 parameters of
# draft-irtf-cfrg-pairing-friendly-curves, section 4.2.1).
BLS12_381_P = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB


G1Point = tuple[int, int] | None


# E1': y^2 = x^3 + A'x + B', and the SWU constant Z, from RFC 9380 section 8.8.1.
_H2C_A = 0x144698A3B8E9433D693A02C96D4982B0EA985383EE66A8D8E8981AEFD881AC98936F8DA0E0F97F5CF428082D584C1D


_H2C_B = 0x12E2908D11688030018B12E8753EEE3B2016C1F0F24F4070A0B9C14FCEF35EF55A23215A316CEAA5D1CC48E98E172BE0


_H2C_Z = 11


_H2C_H_EFF = 0xD201000000010001


_H2C_L = 64  # bytes per field element: ceil((381 + 128) / 8)


_H2C_SQRT_EXPONENT = (BLS12_381_P + 1) // 4  # p = 3 mod 4: a square root is a^((p+1)/4)


# The 11-isogeny map from E1' to E1 (RFC 9380 Appendix E.2): the coefficients k_(1,i) of x_num,
# k_(2,i) of x_den, k_(3,i) of y_num and k_(4,i) of y_den, lowest degree first. x_den and y_den are
# monic: their leading coefficients (of x'^10 and x'^15) are 1 and are not listed.
_H2C_ISO_X_NUM = (
    0x11A05F2B1E833340B809101DD99815856B303E88A2D7005FF2627B56CDB4E2C85610C2D5F2E62D6EAEAC1662734649B7,
    0x17294ED3E943AB2F0588BAB22147A81C7C17E75B2F6A8417F565E33C70D1E86B4838F2A6F318C356E834EEF1B3CB83BB,
    0xD54005DB97678EC1D1048C5D10A9A1BCE032473295983E56878E501EC68E25C958C3E3D2A09729FE0179F9DAC9EDCB0,
    0x1778E7166FCC6DB74E0609D307E55412D7F5E4656A8DBF25F1B33289F1B330835336E25CE3107193C5B388641D9B6861,
    0xE99726A3199F4436642B4B3E4118E5499DB995A1257FB3F086EEB65982FAC18985A286F301E77C451154CE9AC8895D9,
    0x1630C3250D7313FF01D1201BF7A74AB5DB3CB17DD952799B9ED3AB9097E68F90A0870D2DCAE73D19CD13C1C66F652983,
    0xD6ED6553FE44D296A3726C38AE652BFB11586264F0F8CE19008E218F9C86B2A8DA25128C1052ECADDD7F225A139ED84,
    0x17B81E7701ABDBE2E8743884D1117E53356DE5AB275B4DB1A682C62EF0F2753339B7C8F8C8F475AF9CCB5618E3F0C88E,
    0x80D3CF1F9A78FC47B90B33563BE990DC43B756CE79F5574A2C596C928C5D1DE4FA295F296B74E956D71986A8497E317,
    0x169B1F8E1BCFA7C42E0C37515D138F22DD2ECB803A0C5C99676314BAF4BB1B7FA3190B2EDC0327797F241067BE390C9E,
    0x10321DA079CE07E272D8EC09D2565B0DFA7DCCDDE6787F96D50AF36003B14866F69B771F8C285DECCA67DF3F1605FB7B,
    0x6E08C248E260E70BD1E962381EDEE3D31D79D7E22C837BC23C0BF1BC24C6B68C24B1B80B64D391FA9C8BA2E8BA2D229,
)


_H2C_ISO_X_DEN = (
    0x8CA8D548CFF19AE18B2E62F4BD3FA6F01D5EF4BA35B48BA9C9588617FC8AC62B558D681BE343DF8993CF9FA40D21B1C,
    0x12561A5DEB559C4348B4711298E536367041E8CA0CF0800C0126C2588C48BF5713DAA8846CB026E9E5C8276EC82B3BFF,
    0xB2962FE57A3225E8137E629BFF2991F6F89416F5A718CD1FCA64E00B11ACEACD6A3D0967C94FEDCFCC239BA5CB83E19,
    0x3425581A58AE2FEC83AAFEF7C40EB545B08243F16B1655154CCA8ABC28D6FD04976D5243EECF5C4130DE8938DC62CD8,
    0x13A8E162022914A80A6F1D5F43E7A07DFFDFC759A12062BB8D6B44E833B306DA9BD29BA81F35781D539D395B3532A21E,
    0xE7355F8E4E667B955390F7F0506C6E9395735E9CE9CAD4D0A43BCEF24B8982F7400D24BC4228F11C02DF9A29F6304A5,
    0x772CAACF16936190F3E0C63E0596721570F5799AF53A1894E2E073062AEDE9CEA73B3538F0DE06CEC2574496EE84A3A,
    0x14A7AC2A9D64A8B230B3F5B074CF01996E7F63C21BCA68A81996E1CDF9822C580FA5B9489D11E2D311F7D99BBDCC5A5E,
    0xA10ECF6ADA54F825E920B3DAFC7A3CCE07F8D1D7161366B74100DA67F39883503826692ABBA43704776EC3A79A1D641,
    0x95FC13AB9E92AD4476D6E3EB3A56680F682B4EE96F7D03776DF533978F31C1593174E4B4B7865002D6384D168ECDD0A,
)


_H2C_ISO_Y_NUM = (
    0x90D97C81BA24EE0259D1F094980DCFA11AD138E48A869522B52AF6C956543D3CD0C7AEE9B3BA3C2BE9845719707BB33,
    0x134996A104EE5811D51036D776FB46831223E96C254F383D0F906343EB67AD34D6C56711962FA8BFE097E75A2E41C696,
    0xCC786BAA966E66F4A384C86A3B49942552E2D658A31CE2C344BE4B91400DA7D26D521628B00523B8DFE240C72DE1F6,
    0x1F86376E8981C217898751AD8746757D42AA7B90EEB791C09E4A3EC03251CF9DE405ABA9EC61DECA6355C77B0E5F4CB,
    0x8CC03FDEFE0FF135CAF4FE2A21529C4195536FBE3CE50B879833FD221351ADC2EE7F8DC099040A841B6DAECF2E8FEDB,
    0x16603FCA40634B6A2211E11DB8F0A6A074A7D0D4AFADB7BD76505C3D3AD5544E203F6326C95A807299B23AB13633A5F0,
    0x4AB0B9BCFAC1BBCB2C977D027796B3CE75BB8CA2BE184CB5231413C4D634F3747A87AC2460F415EC961F8855FE9D6F2,
    0x987C8D5333AB86FDE9926BD2CA6C674170A05BFE3BDD81FFD038DA6C26C842642F64550FEDFE935A15E4CA31870FB29,
    0x9FC4018BD96684BE88C9E221E4DA1BB8F3ABD16679DC26C1E8B6E6A1F20CABE69D65201C78607A360370E577BDBA587,
    0xE1BBA7A1186BDB5223ABDE7ADA14A23C42A0CA7915AF6FE06985E7ED1E4D43B9B3F7055DD4EBA6F2BAFAAEBCA731C30,
    0x19713E47937CD1BE0DFD0B8F1D43FB93CD2FCBCB6CAF493FD1183E416389E61031BF3A5CCE3FBAFCE813711AD011C132,
    0x18B46A908F36F6DEB918C143FED2EDCC523559B8AAF0C2462E6BFE7F911F643249D9CDF41B44D606CE07C8A4D0074D8E,
    0xB182CAC101B9399D155096004F53F447AA7B12A3426B08EC02710E807B4633F06C851C1919211F20D4C04F00B971EF8,
    0x245A394AD1ECA9B72FC00AE7BE315DC757B3B080D4C158013E6632D3C40659CC6CF90AD1C232A6442D9D3F5DB980133,
    0x5C129645E44CF1102A159F748C4A3FC5E673D81D7E86568D9AB0F5D396A7CE46BA1049B6579AFB7866B1E715475224B,
    0x15E6BE4E990F03CE4EA50B3B42DF2EB5CB181D8F84965A3957ADD4FA95AF01B2B665027EFEC01C7704B456BE69C8B604,
)


_H2C_ISO_Y_DEN = (
    0x16112C4C3A9C98B252181140FAD0EAE9601A6DE578980BE6EEC3232B5BE72E7A07F3688EF60C206D01479253B03663C1,
    0x1962D75C2381201E1A0CBD6C43C348B885C84FF731C4D59CA4A10356F453E01F78A4260763529E3532F6102C2E49A03D,
    0x58DF3306640DA276FAAAE7D6E8EB15778C4855551AE7F310C35A5DD279CD2ECA6757CD636F96F891E2538B53DBF67F2,
    0x16B7D288798E5395F20D23BF89EDB4D1D115C5DBDDBCD30E123DA489E726AF41727364F2C28297ADA8D26D98445F5416,
    0xBE0E079545F43E4B00CC912F8228DDCC6D19C9F0F69BBB0542EDA0FC9DEC916A20B15DC0FD2EDEDDA39142311A5001D,
    0x8D9E5297186DB2D9FB266EAAC783182B70152C65550D881C5ECD87B6F0F5A6449F38DB9DFA9CCE202C6477FAAF9B7AC,
    0x166007C08A99DB2FC3BA8734ACE9824B5EECFDFA8D0CF8EF5DD365BC400A0051D5FA9C01A58B1FB93D1A1399126A775C,
    0x16A3EF08BE3EA7EA03BCDDFABBA6FF6EE5A4375EFA1F4FD7FEB34FD206357132B920F5B00801DEE460EE415A15812ED9,
    0x1866C8ED336C61231A1BE54FD1D74CC4F9FB0CE4C6AF5920ABC5750C4BF39B4852CFE2F7BB9248836B233D9D55535D4A,
    0x167A55CDA70A6E1CEA820597D94A84903216F763E13D87BB5308592E7EA7D4FBC7385EA3D529B35E346EF48BB8913F55,
    0x4D2F259EEA405BD48F010A01AD2911D9C6DD039BB61A6290E591B36E636A5C871A5C29F4F83060400F8B49CBA8F6AA8,
    0xACCBB67481D033FF5852C1E48C50C477F94FF8AEFCE42D28C0F9A88CEA7913516F968986F7EBBEA9684B529E2561092,
    0xAD6B9514C767FE3C3613144B45F1496543346D98ADF02267D5CEEF9A00D9B8693000763E3B90AC11E99B138573345CC,
    0x2660400EB2E4F3B628BDD0D53CD76F2BF565B94E72927C1CB748DF27942480E420517BD8714CC80D1FADC1326ED06F7,
    0xE0FA1D816DDC03E6B24255E0D7819C171C40F65E273B853324EFCD6356CAA205CA2F570F13497804415473A1D634B8F,
)


def expand_message_xmd(msg: bytes, dst: bytes, len_in_bytes: int) -> bytes:
    """RFC 9380 section 5.3.1 with SHA-256: `len_in_bytes` uniformly random bytes from `msg`,
    domain-separated by `dst` (a DST over 255 bytes is first hashed, as section 5.3.3 says)."""
    if len(dst) > 255:
        dst = hashlib.sha256(b"H2C-OVERSIZE-DST-" + dst).digest()
    ell = -(-len_in_bytes // 32)
    if ell > 255 or len_in_bytes > 65535 or len_in_bytes < 0:
        raise ValueError(f"expand_message_xmd cannot give {len_in_bytes} bytes")
    dst_prime = dst + bytes([len(dst)])
    b_0 = hashlib.sha256(bytes(64) + msg + len_in_bytes.to_bytes(2, "big") + b"\x00" + dst_prime).digest()
    b_i = hashlib.sha256(b_0 + b"\x01" + dst_prime).digest()
    blocks = [b_i]
    for i in range(2, ell + 1):
        mixed = bytes(x ^ y for x, y in zip(b_0, b_i, strict=True))
        b_i = hashlib.sha256(mixed + bytes([i]) + dst_prime).digest()
        blocks.append(b_i)
    return b"".join(blocks)[:len_in_bytes]


def hash_to_field_fp(msg: bytes, dst: bytes, count: int) -> list[int]:
    """RFC 9380 section 5.2 for the base field (m = 1, L = 64): `count` elements of it."""
    uniform = expand_message_xmd(msg, dst, count * _H2C_L)
    return [int.from_bytes(uniform[i * _H2C_L : (i + 1) * _H2C_L], "big") % BLS12_381_P for i in range(count)]


def _h2c_sqrt(a: int) -> int | None:
    """A square root of `a` in the base field, or None if it has none."""
    root = pow(a, _H2C_SQRT_EXPONENT, BLS12_381_P)
    return root if root * root % BLS12_381_P == a % BLS12_381_P else None


def _h2c_sswu(u: int) -> tuple[int, int]:
    """The simplified SWU map (RFC 9380 section 6.6.2) onto E1', written plainly rather than as the
    straight-line program of Appendix F.2: both give the same point, and nothing here is secret."""
    p = BLS12_381_P
    z_u2 = _H2C_Z * u * u % p
    denominator = (z_u2 * z_u2 + z_u2) % p
    if denominator == 0:
        x1 = _H2C_B * pow(_H2C_Z * _H2C_A, -1, p) % p
    else:
        x1 = (-_H2C_B) * pow(_H2C_A, -1, p) * (1 + pow(denominator, -1, p)) % p
    y = _h2c_sqrt((x1 * x1 * x1 + _H2C_A * x1 + _H2C_B) % p)
    x = x1
    if y is None:
        # Then g(Z u^2 x1) is a square: RFC 9380 section 6.6.2 guarantees it for this Z.
        x = z_u2 * x1 % p
        y = _h2c_sqrt((x * x * x + _H2C_A * x + _H2C_B) % p)
        if y is None:  # pragma: no cover - excluded by the choice of Z
            raise ArithmeticError("simplified SWU found no square root")
    if u % 2 != y % 2:  # sgn0 for m = 1 is the parity (section 4.1)
        y = p - y
    return x, y


def _h2c_polynomial(coefficients: tuple[int, ...], x: int, monic: bool) -> int:
    """The polynomial with these coefficients (lowest degree first, and a leading 1 if `monic`) at
    x, by Horner's rule."""
    p = BLS12_381_P
    value = 1 if monic else 0
    for k in reversed(coefficients):
        value = (value * x + k) % p
    return value


def _h2c_iso_map(point: tuple[int, int]) -> G1Point:
    """The 11-isogeny from E1' to E1 (RFC 9380 section 6.6.3 and Appendix E.2)."""
    x, y = point
    x_den = _h2c_polynomial(_H2C_ISO_X_DEN, x, monic=True)
    y_den = _h2c_polynomial(_H2C_ISO_Y_DEN, x, monic=True)
    if x_den == 0 or y_den == 0:
        return None  # the isogeny's kernel: section 6.6.3 maps it to the identity
    p = BLS12_381_P
    x_num = _h2c_polynomial(_H2C_ISO_X_NUM, x, monic=False)
    y_num = _h2c_polynomial(_H2C_ISO_Y_NUM, x, monic=False)
    return x_num * pow(x_den, -1, p) % p, y * y_num * pow(y_den, -1, p) % p


def map_to_curve_g1(u: int) -> G1Point:
    """RFC 9380's map_to_curve for this suite: simplified SWU onto E1', then the 11-isogeny to E1
    (a point of E1, not yet cleared of its cofactor)."""
    return _h2c_iso_map(_h2c_sswu(u))


def g1_on_curve(point: G1Point) -> bool:
    """Whether the point lies on E1: y^2 = x^3 + 4 (infinity does)."""
    if point is None:
        return True
    x, y = point
    return (y * y - x * x * x - 4) % BLS12_381_P == 0


def g1_neg(point: G1Point) -> G1Point:
    """-P on E1."""
    return None if point is None else (point[0], -point[1] % BLS12_381_P)


def g1_add(one: G1Point, two: G1Point) -> G1Point:
    """P + Q on E1, for any two points of the curve (a doubling, inverses and infinity included)."""
    if one is None:
        return two
    if two is None:
        return one
    p = BLS12_381_P
    x1, y1 = one
    x2, y2 = two
    if x1 == x2:
        if (y1 + y2) % p == 0:
            return None  # Q = -P, or a point of order 2 doubled
        slope = 3 * x1 * x1 * pow(2 * y1, -1, p) % p
    else:
        slope = (y2 - y1) * pow(x2 - x1, -1, p) % p
    x3 = (slope * slope - x1 - x2) % p
    return x3, (slope * (x1 - x3) - y1) % p


def _h2c_jacobian_double(x: int, y: int, z: int) -> tuple[int, int, int]:
    """2P for P = (X/Z^2, Y/Z^3) on E1 (dbl-2009-l, for a = 0); Z = 0 is infinity, and a point of
    order 2 (Y = 0) doubles to Z = 0 by itself."""
    p = BLS12_381_P
    a, b = x * x % p, y * y % p
    c = b * b % p
    d = 2 * ((x + b) * (x + b) - a - c) % p
    e = 3 * a % p
    x3 = (e * e - 2 * d) % p
    return x3, (e * (d - x3) - 8 * c) % p, 2 * y * z % p


def _h2c_jacobian_add_affine(x1: int, y1: int, z1: int, x2: int, y2: int) -> tuple[int, int, int]:
    """P + Q for P Jacobian and Q = (x2, y2) affine, not infinity (madd-2007-bl)."""
    p = BLS12_381_P
    if z1 == 0:
        return x2, y2, 1
    z1z1 = z1 * z1 % p
    h = (x2 * z1z1 - x1) % p
    r = 2 * (y2 * z1 * z1z1 - y1) % p
    if h == 0:
        return _h2c_jacobian_double(x1, y1, z1) if r == 0 else (1, 1, 0)
    hh = h * h % p
    i = 4 * hh % p
    j = h * i % p
    v = x1 * i % p
    x3 = (r * r - j - 2 * v) % p
    return x3, (r * (v - x3) - 2 * y1 * j) % p, ((z1 + h) * (z1 + h) - z1z1 - hh) % p


def g1_mul(point: G1Point, scalar: int) -> G1Point:
    """[k]P on E1 for any point of it and k >= 0, by double-and-add from the top bit (k is
    public), in Jacobian coordinates: one inversion at the end instead of one per step."""
    if scalar < 0:
        raise ValueError("g1_mul takes a scalar of at least 0")
    if point is None or scalar == 0:
        return None
    x, y = point
    acc = (x, y, 1)
    for bit in bin(scalar)[3:]:
        acc = _h2c_jacobian_double(*acc)
        if bit == "1":
            acc = _h2c_jacobian_add_affine(*acc, x, y)
    if acc[2] == 0:
        return None
    z_inv = pow(acc[2], -1, BLS12_381_P)
    z_inv2 = z_inv * z_inv % BLS12_381_P
    return acc[0] * z_inv2 % BLS12_381_P, acc[1] * z_inv2 * z_inv % BLS12_381_P


def hash_to_g1(message: bytes, dst: bytes) -> G1Point:
    """RFC 9380 hash_to_curve for BLS12381G1_XMD:SHA-256_SSWU_RO_: the message's point of G1
    (None only with negligible probability, when the sum of the two mapped points clears to the
    identity)."""
    u0, u1 = hash_to_field_fp(message, dst, 2)
    return g1_mul(g1_add(map_to_curve_g1(u0), map_to_curve_g1(u1)), _H2C_H_EFF)


# ==============================================================================================
# generator/verifier/crypto/bls12_381.py: BLS signature verification on the pairing-friendly curve BLS12-381, for
#     signatures on G1 under keys on G2 (the "minimal-signature-size" variant of draft-irtf-cfrg-bls-signature,
#     drand's quicknet).
# ==============================================================================================

# The order of G1, G2 and GT (draft-irtf-cfrg-pairing-friendly-curves section 4.2.1).
BLS12_381_R = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001


# |x| for the BLS parameter x = -0xd201000000010000; x is negative, which the code below accounts for.
_BLS_X_ABS = 0xD201000000010000


_BLS_X_BITS = bin(_BLS_X_ABS)[3:]  # the bits after the leading one, most significant first


Fp2 = tuple[int, int]


Fp6 = tuple[Fp2, Fp2, Fp2]


Fp12 = tuple[Fp6, Fp6]


G2Point = tuple[Fp2, Fp2] | None


# The generator of G2 (draft-irtf-cfrg-pairing-friendly-curves section 4.2.1).
BLS12_381_G2: tuple[Fp2, Fp2] = (
    (
        0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
        0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E,
    ),
    (
        0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
        0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE,
    ),
)


_BLS_B2: Fp2 = (4, 4)  # the twist's constant term 4(1 + u)


_BLS_FP2_ZERO: Fp2 = (0, 0)


_BLS_FP2_ONE: Fp2 = (1, 0)


_BLS_FP6_ZERO: Fp6 = (_BLS_FP2_ZERO, _BLS_FP2_ZERO, _BLS_FP2_ZERO)


_BLS_FP6_ONE: Fp6 = (_BLS_FP2_ONE, _BLS_FP2_ZERO, _BLS_FP2_ZERO)


BLS12_381_FP12_ONE: Fp12 = (_BLS_FP6_ONE, _BLS_FP6_ZERO)


def _bls_fp2_add(a: Fp2, b: Fp2) -> Fp2:
    return (a[0] + b[0]) % BLS12_381_P, (a[1] + b[1]) % BLS12_381_P


def _bls_fp2_sub(a: Fp2, b: Fp2) -> Fp2:
    return (a[0] - b[0]) % BLS12_381_P, (a[1] - b[1]) % BLS12_381_P


def _bls_fp2_neg(a: Fp2) -> Fp2:
    return -a[0] % BLS12_381_P, -a[1] % BLS12_381_P


def _bls_fp2_mul(a: Fp2, b: Fp2) -> Fp2:
    a0, a1 = a
    b0, b1 = b
    return (a0 * b0 - a1 * b1) % BLS12_381_P, (a0 * b1 + a1 * b0) % BLS12_381_P


def _bls_fp2_sqr(a: Fp2) -> Fp2:
    a0, a1 = a
    return (a0 + a1) * (a0 - a1) % BLS12_381_P, 2 * a0 * a1 % BLS12_381_P


def _bls_fp2_mul_xi(a: Fp2) -> Fp2:
    """a(1 + u): the non-residue the tower is built on."""
    return (a[0] - a[1]) % BLS12_381_P, (a[0] + a[1]) % BLS12_381_P


def _bls_fp2_inv(a: Fp2) -> Fp2:
    a0, a1 = a
    norm_inv = pow(a0 * a0 + a1 * a1, -1, BLS12_381_P)
    return a0 * norm_inv % BLS12_381_P, -a1 * norm_inv % BLS12_381_P


def _bls_fp2_pow(a: Fp2, exponent: int) -> Fp2:
    result = _BLS_FP2_ONE
    for bit in bin(exponent)[2:]:
        result = _bls_fp2_sqr(result)
        if bit == "1":
            result = _bls_fp2_mul(result, a)
    return result


def _bls_fp_sqrt(a: int) -> int | None:
    root = pow(a, (BLS12_381_P + 1) // 4, BLS12_381_P)
    return root if root * root % BLS12_381_P == a % BLS12_381_P else None


def _bls_fp2_sqrt(a: Fp2) -> Fp2 | None:
    """A square root of a in Fp2, or None. With u^2 = -1, (x0 + x1 u)^2 = a gives x0^2 - x1^2 = a0
    and 2 x0 x1 = a1, so x0^2 = (a0 + n)/2 for a root n of the norm a0^2 + a1^2; the candidate is
    checked by squaring it, so a wrong guess can only give None, never a wrong root."""
    p = BLS12_381_P
    a0, a1 = a
    if a1 == 0:
        root = _bls_fp_sqrt(a0)
        if root is not None:
            return root, 0
        root = _bls_fp_sqrt(-a0 % p)  # -1 is not a square mod p, so -a0 is
        return None if root is None else (0, root)
    norm_root = _bls_fp_sqrt((a0 * a0 + a1 * a1) % p)
    if norm_root is None:
        return None
    half = pow(2, -1, p)
    x0 = _bls_fp_sqrt((a0 + norm_root) * half % p)
    if x0 is None:
        x0 = _bls_fp_sqrt((a0 - norm_root) * half % p)
    if x0 is None or x0 == 0:
        return None
    candidate = (x0, a1 * pow(2 * x0, -1, p) % p)
    return candidate if _bls_fp2_sqr(candidate) == (a0 % p, a1 % p) else None


def _bls_fp6_add(a: Fp6, b: Fp6) -> Fp6:
    return _bls_fp2_add(a[0], b[0]), _bls_fp2_add(a[1], b[1]), _bls_fp2_add(a[2], b[2])


def _bls_fp6_sub(a: Fp6, b: Fp6) -> Fp6:
    return _bls_fp2_sub(a[0], b[0]), _bls_fp2_sub(a[1], b[1]), _bls_fp2_sub(a[2], b[2])


def _bls_fp6_neg(a: Fp6) -> Fp6:
    return _bls_fp2_neg(a[0]), _bls_fp2_neg(a[1]), _bls_fp2_neg(a[2])


def _bls_fp6_mul_v(a: Fp6) -> Fp6:
    """a v, as v^3 = 1 + u."""
    return _bls_fp2_mul_xi(a[2]), a[0], a[1]


def _bls_fp6_mul(a: Fp6, b: Fp6) -> Fp6:
    """Schoolbook on the 36 integer products, each output coefficient reduced once."""
    (a00, a01), (a10, a11), (a20, a21) = a
    (b00, b01), (b10, b11), (b20, b21) = b
    # (r_ij, i_ij): the real and u parts of a_i b_j (+ a_j b_i), not yet reduced.
    r00, i00 = a00 * b00 - a01 * b01, a00 * b01 + a01 * b00
    r11, i11 = a10 * b10 - a11 * b11, a10 * b11 + a11 * b10
    r22, i22 = a20 * b20 - a21 * b21, a20 * b21 + a21 * b20
    r01 = a00 * b10 - a01 * b11 + a10 * b00 - a11 * b01
    i01 = a00 * b11 + a01 * b10 + a10 * b01 + a11 * b00
    r02 = a00 * b20 - a01 * b21 + a20 * b00 - a21 * b01
    i02 = a00 * b21 + a01 * b20 + a20 * b01 + a21 * b00
    r12 = a10 * b20 - a11 * b21 + a20 * b10 - a21 * b11
    i12 = a10 * b21 + a11 * b20 + a20 * b11 + a21 * b10
    p = BLS12_381_P
    # c0 = a0b0 + (1+u)(a1b2 + a2b1), c1 = a0b1 + a1b0 + (1+u)a2b2, c2 = a0b2 + a1b1 + a2b0
    return (
        ((r00 + r12 - i12) % p, (i00 + r12 + i12) % p),
        ((r01 + r22 - i22) % p, (i01 + r22 + i22) % p),
        ((r02 + r11) % p, (i02 + i11) % p),
    )


def _bls_fp6_inv(a: Fp6) -> Fp6:
    a0, a1, a2 = a
    c0 = _bls_fp2_sub(_bls_fp2_sqr(a0), _bls_fp2_mul_xi(_bls_fp2_mul(a1, a2)))
    c1 = _bls_fp2_sub(_bls_fp2_mul_xi(_bls_fp2_sqr(a2)), _bls_fp2_mul(a0, a1))
    c2 = _bls_fp2_sub(_bls_fp2_sqr(a1), _bls_fp2_mul(a0, a2))
    norm = _bls_fp2_add(_bls_fp2_mul(a0, c0), _bls_fp2_mul_xi(_bls_fp2_add(_bls_fp2_mul(a2, c1), _bls_fp2_mul(a1, c2))))
    norm_inv = _bls_fp2_inv(norm)
    return _bls_fp2_mul(c0, norm_inv), _bls_fp2_mul(c1, norm_inv), _bls_fp2_mul(c2, norm_inv)


def _bls_fp12_mul(a: Fp12, b: Fp12) -> Fp12:
    """Karatsuba over Fp6: three Fp6 products instead of four."""
    a0, a1 = a
    b0, b1 = b
    t0 = _bls_fp6_mul(a0, b0)
    t1 = _bls_fp6_mul(a1, b1)
    t2 = _bls_fp6_mul(_bls_fp6_add(a0, a1), _bls_fp6_add(b0, b1))
    return _bls_fp6_add(t0, _bls_fp6_mul_v(t1)), _bls_fp6_sub(_bls_fp6_sub(t2, t0), t1)


def _bls_fp12_sqr(a: Fp12) -> Fp12:
    """(a0 + a1 w)^2 with two Fp6 products: (a0 + a1)(a0 + v a1) - (1 + v) a0 a1, and 2 a0 a1."""
    a0, a1 = a
    t = _bls_fp6_mul(a0, a1)
    s = _bls_fp6_mul(_bls_fp6_add(a0, a1), _bls_fp6_add(a0, _bls_fp6_mul_v(a1)))
    return _bls_fp6_sub(_bls_fp6_sub(s, t), _bls_fp6_mul_v(t)), _bls_fp6_add(t, t)


def _bls_fp12_conj(a: Fp12) -> Fp12:
    """a^(p^6): the inverse of an element of norm 1, so of every element after the easy part."""
    return a[0], _bls_fp6_neg(a[1])


def _bls_fp12_inv(a: Fp12) -> Fp12:
    a0, a1 = a
    norm_inv = _bls_fp6_inv(_bls_fp6_sub(_bls_fp6_mul(a0, a0), _bls_fp6_mul_v(_bls_fp6_mul(a1, a1))))
    return _bls_fp6_mul(a0, norm_inv), _bls_fp6_neg(_bls_fp6_mul(a1, norm_inv))


def _bls_fp6_mul_by_01(x: Fp6, a: Fp2, b: Fp2) -> tuple[int, int, int, int, int, int]:
    """x (a + b v), its six integers not yet reduced: x0 a + (1+u) x2 b, x0 b + x1 a, x1 b + x2 a."""
    (x00, x01), (x10, x11), (x20, x21) = x
    a0, a1 = a
    b0, b1 = b
    r2b, i2b = x20 * b0 - x21 * b1, x20 * b1 + x21 * b0
    return (
        x00 * a0 - x01 * a1 + r2b - i2b,
        x00 * a1 + x01 * a0 + r2b + i2b,
        x00 * b0 - x01 * b1 + x10 * a0 - x11 * a1,
        x00 * b1 + x01 * b0 + x10 * a1 + x11 * a0,
        x10 * b0 - x11 * b1 + x20 * a0 - x21 * a1,
        x10 * b1 + x11 * b0 + x20 * a1 + x21 * a0,
    )


def _bls_fp12_mul_line(f: Fp12, a: Fp2, b: Fp2, c: int) -> Fp12:
    """f (a + b v + c v w) for c in Fp, the sparse shape of a Miller loop's line values: about
    half the work of a full product. With l0 = a + b v and l1 = c v, the product is
    (f0 l0 + v f1 l1) + (f0 l1 + f1 l0) w, and multiplying by c v or c v^2 only shifts."""
    p = BLS12_381_P
    f0, f1 = f
    (f00, f01, f02), (f10, f11, f12) = f
    u0, u1, u2, u3, u4, u5 = _bls_fp6_mul_by_01(f0, a, b)
    w0, w1, w2, w3, w4, w5 = _bls_fp6_mul_by_01(f1, a, b)
    # v f1 l1 = c v^2 f1 = c ((1+u) f11, (1+u) f12, f10)
    c0 = (
        ((u0 + c * (f11[0] - f11[1])) % p, (u1 + c * (f11[0] + f11[1])) % p),
        ((u2 + c * (f12[0] - f12[1])) % p, (u3 + c * (f12[0] + f12[1])) % p),
        ((u4 + c * f10[0]) % p, (u5 + c * f10[1]) % p),
    )
    # f0 l1 = c v f0 = c ((1+u) f02, f00, f01)
    c1 = (
        ((w0 + c * (f02[0] - f02[1])) % p, (w1 + c * (f02[0] + f02[1])) % p),
        ((w2 + c * f00[0]) % p, (w3 + c * f00[1]) % p),
        ((w4 + c * f01[0]) % p, (w5 + c * f01[1]) % p),
    )
    return c0, c1


def _bls_fp12_cyclotomic_sqr(a: Fp12) -> Fp12:
    """The square of an element of the cyclotomic subgroup (Granger and Scott, eprint 2009/565),
    seeing Fp12 as Fp4[w]/(w^3 - s) with Fp4 = Fp2[s]/(s^2 - (1 + u)), s = w^3:
    (A + B w + C w^2)^2 = (3A^2 - 2 conj(A)) + (3 s C^2 + 2 conj(B)) w + (3 B^2 - 2 conj(C)) w^2."""
    p = BLS12_381_P
    (a0, a1, a2), (b0, b1, b2) = a

    def fp4_sqr(x: Fp2, y: Fp2) -> tuple[Fp2, Fp2]:
        # (x + y s)^2 = (x^2 + (1+u) y^2) + 2xy s
        x2 = _bls_fp2_sqr(x)
        y2 = _bls_fp2_sqr(y)
        return _bls_fp2_add(x2, _bls_fp2_mul_xi(y2)), _bls_fp2_mul((2 * x[0], 2 * x[1]), y)

    # A = a0 + b1 s, B = b0 + a2 s, C = a1 + b2 s (the coefficients of w^0..w^5 regrouped)
    ta0, ta1 = fp4_sqr(a0, b1)
    tb0, tb1 = fp4_sqr(b0, a2)
    tc0, tc1 = fp4_sqr(a1, b2)
    stc0 = _bls_fp2_mul_xi(tc1)  # s C^2 = (1+u) tc1 + tc0 s
    return (
        (
            ((3 * ta0[0] - 2 * a0[0]) % p, (3 * ta0[1] - 2 * a0[1]) % p),
            ((3 * tb0[0] - 2 * a1[0]) % p, (3 * tb0[1] - 2 * a1[1]) % p),
            ((3 * tc0[0] - 2 * a2[0]) % p, (3 * tc0[1] - 2 * a2[1]) % p),
        ),
        (
            ((3 * stc0[0] + 2 * b0[0]) % p, (3 * stc0[1] + 2 * b0[1]) % p),
            ((3 * ta1[0] + 2 * b1[0]) % p, (3 * ta1[1] + 2 * b1[1]) % p),
            ((3 * tb1[0] + 2 * b2[0]) % p, (3 * tb1[1] + 2 * b2[1]) % p),
        ),
    )


# (1 + u)^(k (p - 1) / 6) and (1 + u)^(k (p^2 - 1) / 6) for k = 0..5: w^k raised to p (or p^2) is
# w^k times the k-th. As z^p = conj(z) in Fp2, the second are the norms of the first.
_BLS_FROBENIUS_1 = tuple(_bls_fp2_pow((1, 1), k * (BLS12_381_P - 1) // 6) for k in range(6))


_BLS_FROBENIUS_2 = tuple(_bls_fp2_mul(g, (g[0], -g[1] % BLS12_381_P)) for g in _BLS_FROBENIUS_1)


def _bls_fp12_frobenius(a: Fp12, power: int) -> Fp12:
    """a^(p^power) for power 1 or 2. a[0] holds the coefficients of w^0, w^2, w^4 and a[1] those of
    w^1, w^3, w^5; raising to p also conjugates each coefficient (u^p = -u)."""
    table = _BLS_FROBENIUS_1 if power == 1 else _BLS_FROBENIUS_2

    def term(c: Fp2, k: int) -> Fp2:
        return _bls_fp2_mul((c[0], -c[1] % BLS12_381_P) if power == 1 else c, table[k])

    (a0, a1, a2), (b0, b1, b2) = a
    return (term(a0, 0), term(a1, 2), term(a2, 4)), (term(b0, 1), term(b1, 3), term(b2, 5))


def _bls_cyclotomic_exp_x(a: Fp12) -> Fp12:
    """a^x for a in the cyclotomic subgroup, where the inverse is the conjugate (x < 0)."""
    result = a
    for bit in _BLS_X_BITS:
        result = _bls_fp12_cyclotomic_sqr(result)
        if bit == "1":
            result = _bls_fp12_mul(result, a)
    return _bls_fp12_conj(result)


def _bls_final_exponentiation(f: Fp12) -> Fp12:
    """f^(3 (p^12 - 1) / r). The easy part (p^6 - 1)(p^2 + 1) lands in the cyclotomic subgroup;
    the hard part uses 3 (p^4 - p^2 + 1)/r = (x - 1)^2 (x + p)(x^2 + p^2 - 1) + 3, true of every
    BLS12 curve (eprint 2020/875), at five exponentiations by x. The factor 3 is prime
    to r, so the result is 1 exactly when the plain final exponentiation is: a pairing check is
    unaffected, and pairing() is the optimal ate pairing cubed."""
    f = _bls_fp12_mul(_bls_fp12_conj(f), _bls_fp12_inv(f))
    f = _bls_fp12_mul(_bls_fp12_frobenius(f, 2), f)
    a = _bls_fp12_mul(_bls_cyclotomic_exp_x(f), _bls_fp12_conj(f))  # f^(x-1)
    b = _bls_fp12_mul(_bls_cyclotomic_exp_x(a), _bls_fp12_conj(a))  # f^((x-1)^2)
    c = _bls_fp12_mul(_bls_cyclotomic_exp_x(b), _bls_fp12_frobenius(b, 1))  # b^(x+p)
    d = _bls_fp12_mul(_bls_cyclotomic_exp_x(_bls_cyclotomic_exp_x(c)), _bls_fp12_frobenius(c, 2))
    d = _bls_fp12_mul(d, _bls_fp12_conj(c))  # c^(x^2+p^2-1)
    return _bls_fp12_mul(d, _bls_fp12_mul(_bls_fp12_cyclotomic_sqr(f), f))


def _bls_g2_chord(one: tuple[Fp2, Fp2], two: tuple[Fp2, Fp2]) -> tuple[Fp2, G2Point]:
    """The slope of the line through P and Q (the tangent if P = Q) and P + Q, for points that
    are not infinity; a vertical line gives slope 0 and infinity."""
    x1, y1 = one
    x2, y2 = two
    if x1 == x2:
        if _bls_fp2_add(y1, y2) == _BLS_FP2_ZERO:
            return _BLS_FP2_ZERO, None
        x1_sq = _bls_fp2_sqr(x1)
        slope = _bls_fp2_mul((3 * x1_sq[0], 3 * x1_sq[1]), _bls_fp2_inv((2 * y1[0], 2 * y1[1])))
    else:
        slope = _bls_fp2_mul(_bls_fp2_sub(y2, y1), _bls_fp2_inv(_bls_fp2_sub(x2, x1)))
    x3 = _bls_fp2_sub(_bls_fp2_sub(_bls_fp2_sqr(slope), x1), x2)
    return slope, (x3, _bls_fp2_sub(_bls_fp2_mul(slope, _bls_fp2_sub(x1, x3)), y1))


def _bls_g2_mul(point: G2Point, scalar: int) -> G2Point:
    """[k]P on the twist, for any point of it and k >= 0."""
    result: G2Point = None
    for bit in bin(scalar)[2:]:
        if result is not None:
            result = _bls_g2_chord(result, result)[1]
        if bit == "1" and point is not None:
            result = point if result is None else _bls_g2_chord(result, point)[1]
    return result


def _bls_g2_lines(q: tuple[Fp2, Fp2]) -> tuple[tuple[Fp2, Fp2], ...]:
    """The Miller loop's lines for Q in G2 (not infinity), as (-slope, slope x_T - y_T) for each
    step in order: they depend on Q alone, so a key's are computed once.

    Mapped into E(Fp12) by (x, y) -> (x / w^2, y / w^3), the line through T with twist slope s has
    the value y_P - s x_P / w + (s x_T - y_T) / w^3 at P. Times w^3, it is
    (s x_T - y_T) - s x_P v + y_P v w; w^3 lies in the subfield Fp4 (its square is 1 + u), which
    the final exponentiation sends to 1. The loop starts at Q and never meets a vertical line:
    T = [k]Q with 1 < k < |x| < r - 1."""
    t = q
    lines: list[tuple[Fp2, Fp2]] = []
    for bit in _BLS_X_BITS:
        for other in (t, q) if bit == "1" else (t,):
            slope, after = _bls_g2_chord(t, other)
            lines.append((_bls_fp2_neg(slope), _bls_fp2_sub(_bls_fp2_mul(slope, t[0]), t[1])))
            if after is None:  # pragma: no cover - excluded above for Q in G2
                raise ArithmeticError("a Miller loop step reached infinity")
            t = after
    return tuple(lines)


def _bls_miller_loop(pairs: list[tuple[tuple[int, int], tuple[tuple[Fp2, Fp2], ...]]]) -> Fp12:
    """The product of f_{x,Q}(P) over the (P, lines of Q) pairs, sharing the squarings."""
    p = BLS12_381_P
    f = BLS12_381_FP12_ONE
    step = 0
    for bit in _BLS_X_BITS:
        f = _bls_fp12_sqr(f)
        for _ in range(2 if bit == "1" else 1):
            for (xp, yp), lines in pairs:
                neg_slope, constant = lines[step]
                f = _bls_fp12_mul_line(f, constant, (neg_slope[0] * xp % p, neg_slope[1] * xp % p), yp)
            step += 1
    # x < 0: f_{x,Q} is 1 / f_{|x|,Q} up to a vertical line the final exponentiation removes, and
    # after it 1/f and the conjugate agree.
    return _bls_fp12_conj(f)


def pairing(p: G1Point, q: G2Point) -> Fp12:
    """The optimal ate pairing e(P, Q) cubed (see _bls_final_exponentiation): non-degenerate and
    bilinear all the same, 1 when P or Q is infinity. For tests; verification uses products."""
    if p is None or q is None:
        return BLS12_381_FP12_ONE
    return _bls_final_exponentiation(_bls_miller_loop([(p, _bls_g2_lines(q))]))


def _bls_compressed_body(data: bytes, length: int, what: str) -> tuple[bool, bytes]:
    """The sign flag and the bytes with the three flag bits cleared, of a compressed point that is
    not infinity; anything else raises FormatError."""
    if not isinstance(data, bytes | bytearray) or len(data) != length:
        found = len(data) if isinstance(data, bytes | bytearray) else type(data).__name__
        raise FormatError(f"{what} must be {length} bytes, a compressed point; found {found}")
    compressed, infinity, sign = data[0] & 0x80, data[0] & 0x40, data[0] & 0x20
    body = bytes([data[0] & 0x1F]) + bytes(data[1:])
    if not compressed:
        raise FormatError(f"{what} is not a compressed point: its compression flag (the first bit) is 0")
    if infinity:
        if sign or any(body):
            raise FormatError(f"{what} has the infinity flag but is not the canonical encoding of infinity")
        raise FormatError(f"{what} is the point at infinity, which is never a valid key or signature")
    return bool(sign), body


def _bls_fp_is_larger(y: int) -> bool:
    """Whether y is the larger of y and -y, the half the sign flag names."""
    return y > (BLS12_381_P - 1) // 2


def decode_g1(data: bytes, what: str = "G1 point") -> tuple[int, int]:
    """A 48-byte compressed point of G1, checked to be canonical, on the curve, in the subgroup of
    order r, and not infinity; FormatError otherwise (`what` names it in the message)."""
    sign, body = _bls_compressed_body(data, 48, what)
    x = int.from_bytes(body, "big")
    if x >= BLS12_381_P:
        raise FormatError(f"{what}: x is not below the field prime")
    y = _bls_fp_sqrt((x * x * x + 4) % BLS12_381_P)
    if y is None:
        raise FormatError(f"{what}: no point of the curve has this x")
    if _bls_fp_is_larger(y) != sign:
        y = -y % BLS12_381_P
    point = (x, y)
    if g1_mul(point, BLS12_381_R) is not None:
        raise FormatError(f"{what}: the point is not in the subgroup of order r")
    return point


def decode_g2(data: bytes, what: str = "G2 point") -> tuple[Fp2, Fp2]:
    """A 96-byte compressed point of G2 (x as c1 then c0, each 48 bytes big-endian), checked as
    decode_g1 checks; the sign flag names the larger y by its u part, or its real part if that is 0."""
    sign, body = _bls_compressed_body(data, 96, what)
    x1, x0 = int.from_bytes(body[:48], "big"), int.from_bytes(body[48:], "big")
    if x0 >= BLS12_381_P or x1 >= BLS12_381_P:
        raise FormatError(f"{what}: a coordinate of x is not below the field prime")
    x = (x0, x1)
    y = _bls_fp2_sqrt(_bls_fp2_add(_bls_fp2_mul(_bls_fp2_sqr(x), x), _BLS_B2))
    if y is None:
        raise FormatError(f"{what}: no point of the curve has this x")
    larger = _bls_fp_is_larger(y[1]) if y[1] else _bls_fp_is_larger(y[0])
    if larger != sign:
        y = _bls_fp2_neg(y)
    point = (x, y)
    if _bls_g2_mul(point, BLS12_381_R) is not None:
        raise FormatError(f"{what}: the point is not in the subgroup of order r")
    return point


@functools.lru_cache(maxsize=1)
def _bls_negated_generator_lines() -> tuple[tuple[Fp2, Fp2], ...]:
    x, y = BLS12_381_G2
    return _bls_g2_lines((x, _bls_fp2_neg(y)))


@functools.lru_cache(maxsize=16)
def _bls_public_key_lines(public_key_g2: bytes) -> tuple[tuple[Fp2, Fp2], ...]:
    return _bls_g2_lines(decode_g2(public_key_g2, "BLS public key"))


def verify_g1_signature(public_key_g2: bytes, message: bytes, signature_g1: bytes, dst: bytes) -> bool:
    """Whether `signature_g1` (48 bytes) is a BLS signature of `message` under `public_key_g2`
    (96 bytes), with the message hashed to G1 by RFC 9380's BLS12381G1_XMD:SHA-256_SSWU_RO_ under
    `dst`: e(signature, g2) = e(H(message), key), checked as the product
    e(signature, -g2) e(H(message), key) = 1 with one final exponentiation.

    Raises FormatError when the key or the signature is not a valid compressed point of its group
    (infinity included); returns False only for valid points that do not verify."""
    key_lines = _bls_public_key_lines(bytes(public_key_g2))
    signature = decode_g1(signature_g1, "BLS signature")
    hashed = hash_to_g1(message, dst)
    pairs = [(signature, _bls_negated_generator_lines())]
    if hashed is not None:  # e(infinity, key) = 1: the check is then e(signature, -g2) = 1
        pairs.append((hashed, key_lines))
    return _bls_final_exponentiation(_bls_miller_loop(pairs)) == BLS12_381_FP12_ONE


# ==============================================================================================
# generator/verifier/crypto/drand.py: drand's randomness beacon, the scheme bls-unchained-g1-rfc9380 of its quicknet
#     chain: a round's message, randomness, time and signature check, and a chain's hash.
# ==============================================================================================

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


# ==============================================================================================
# generator/verifier/rules/beacon.py: The randomness beacon a methodology pins (FORMAT.md, "Draws and timestamps"),
#     its rounds, and the draws the methodology asks for: which beacon, whether secret-gate runs must be drawn, and
#     the retirement schedule.
# ==============================================================================================

BEACON_SCHEME = "bls-unchained-g1-rfc9380"


BEACON_KEYS = ("name", "scheme", "chain_hash", "public_key", "genesis_time", "period")


DRAWS_KEYS = ("secret_gate_runs", "retirements")


SECRET_GATE_RUNS = ("required", "allowed")


RETIREMENT_KEYS = ("items", "every_seconds")


MIN_INTERVAL = 60  # seconds between scheduled retirements, at least


_HEX = frozenset("0123456789abcdef")


_YEAR_10000 = 253402300800


QUICKNET = {
    "chain_hash": DRAND_QUICKNET_CHAIN_HASH.hex(),
    "public_key": DRAND_QUICKNET_PUBLIC_KEY.hex(),
    "genesis_time": DRAND_QUICKNET_GENESIS_TIME,
    "period": DRAND_QUICKNET_PERIOD,
}


@dataclass(frozen=True)
class Beacon:
    """A pinned drand chain: what identifies it, and what times and checks its rounds."""

    name: str
    chain_hash: str
    public_key: bytes  # 96 bytes, a compressed G2 point
    genesis_time: int
    period: int

    def round_time(self, round_number: int) -> int:
        """The Unix time at which the round is published, in seconds."""
        return self.genesis_time + (round_number - 1) * self.period

    def first_round_at(self, unix_time: int) -> int:
        """The first round published at or after `unix_time`."""
        if unix_time <= self.genesis_time:
            return 1
        return 1 + -(-(unix_time - self.genesis_time) // self.period)


@dataclass(frozen=True)
class RetirementSchedule:
    """A methodology's scheduled retirements: `items` sealed items every `every_seconds` seconds from
    the methodology's publication, none due after `until` (if given)."""

    items: int
    every_seconds: int
    until: str | None = None

    def due_times(self, start: int, end: int) -> range:
        """The due times (Unix seconds) after `start` up to `end`, and up to `until`."""
        last = min(end, unix_time(self.until)) if self.until is not None else end
        return range(start + self.every_seconds, last + 1, self.every_seconds)


def _is_hex(value: Any, digits: int) -> bool:
    return isinstance(value, str) and len(value) == digits and set(value) <= _HEX


def beacon_problems(doc: Any, where: str = "beacon") -> list[Problem]:
    """The shape of a pinned beacon."""
    problems = check_keys(doc, BEACON_KEYS, where=where)
    if not isinstance(doc, dict):
        return problems
    if "name" in doc and not (isinstance(doc["name"], str) and doc["name"].strip()):
        problems.append(Problem("must be a non-empty string", where=f"{where}.name", found=show(doc["name"])))
    if "scheme" in doc and doc["scheme"] != BEACON_SCHEME:
        problems.append(
            Problem(
                "unsupported beacon scheme", where=f"{where}.scheme", expected=BEACON_SCHEME, found=show(doc["scheme"])
            )
        )
    if "chain_hash" in doc and not is_hex64(doc["chain_hash"]):
        problems.append(Problem("must be 64 lowercase hex digits", where=f"{where}.chain_hash"))
    if "public_key" in doc and not _is_hex(doc["public_key"], 192):
        problems.append(Problem("must be a compressed G2 point, 192 lowercase hex digits", where=f"{where}.public_key"))
    elif "public_key" in doc:
        try:
            decode_g2(bytes.fromhex(doc["public_key"]), "the beacon's key")
        except FormatError as e:
            problems.append(Problem(str(e), where=f"{where}.public_key"))
    # drand's quicknet is named by its chain hash: a pin that uses the hash must be quicknet's, or a
    # key the operator holds could pass for the League of Entropy's.
    if doc.get("chain_hash") == QUICKNET["chain_hash"]:
        for k in ("public_key", "genesis_time", "period"):
            if k in doc and doc[k] != QUICKNET[k]:
                quicknet = show(QUICKNET[k])
                problems.append(
                    Problem("not drand quicknet's, whose chain hash it names", "", f"{where}.{k}", quicknet)
                )
    for k in ("genesis_time", "period"):
        if k in doc and not (is_int(doc[k]) and doc[k] >= 1):
            problems.append(Problem("must be a whole number, at least 1", where=f"{where}.{k}", found=show(doc[k])))
    return problems


def draws_problems(doc: Any, beacon: Any) -> list[Problem]:
    """The shape of a methodology's `draws`: it needs a pinned beacon (`beacon`, the member as
    given, None when there is none), and retirements no more often than its rounds."""
    has_beacon = beacon is not None
    problems = check_keys(doc, DRAWS_KEYS[:1], optional=DRAWS_KEYS[1:], where="draws")
    if not isinstance(doc, dict):
        return problems
    if not has_beacon:
        problems.append(Problem("draws need a pinned beacon", where="draws", expected="a beacon member"))
    if "secret_gate_runs" in doc and doc["secret_gate_runs"] not in SECRET_GATE_RUNS:
        problems.append(
            Problem(
                "unknown rule",
                where="draws.secret_gate_runs",
                expected=" | ".join(SECRET_GATE_RUNS),
                found=show(doc["secret_gate_runs"]),
            )
        )
    retirements = doc.get("retirements")
    if retirements is not None:
        where = "draws.retirements"
        found = check_keys(retirements, RETIREMENT_KEYS, optional=("until",), where=where)
        if isinstance(retirements, dict):
            items, every = retirements.get("items"), retirements.get("every_seconds")
            if "items" in retirements and not (is_int(items) and items >= 1):
                found.append(Problem("must be a whole number, at least 1", where=f"{where}.items", found=show(items)))
            if "every_seconds" in retirements and not (is_int(every) and every >= MIN_INTERVAL):
                at_least = f"a whole number of seconds, at least {MIN_INTERVAL}"
                found.append(
                    Problem("not an interval", where=f"{where}.every_seconds", expected=at_least, found=show(every))
                )
            period = beacon.get("period") if isinstance(beacon, dict) else None
            if is_int(every) and is_int(period) and every < period:
                slower = f"at least {period} (the beacon's period: two due times would share a round)"
                found.append(
                    Problem("due more often than the beacon makes rounds", "", f"{where}.every_seconds", slower)
                )
            if "until" in retirements and not is_time(retirements["until"]):
                found.append(Problem("malformed time", where=f"{where}.until", expected="YYYY-MM-DDTHH:MM:SSZ"))
        problems += found
    return problems


def parse_beacon(doc: dict[str, Any]) -> Beacon:
    """A beacon whose shape beacon_problems found valid."""
    key = bytes.fromhex(doc["public_key"])
    return Beacon(doc["name"], doc["chain_hash"], key, doc["genesis_time"], doc["period"])


def parse_schedule(draws: dict[str, Any] | None) -> RetirementSchedule | None:
    retirements = (draws or {}).get("retirements")
    if retirements is None:
        return None
    return RetirementSchedule(retirements["items"], retirements["every_seconds"], retirements.get("until"))


def unix_time(at: str) -> int:
    """A ledger time (YYYY-MM-DDTHH:MM:SSZ, as formats.TIME_RE admits it) as Unix seconds.

    Computed from the fields without a calendar's check, so that a time the pattern admits but no
    calendar has ("2026-02-30") still orders as its text does instead of stopping a check."""
    y, mo, d, h, mi, s = (int(at[0:4]), int(at[5:7]), int(at[8:10]), int(at[11:13]), int(at[14:16]), int(at[17:19]))
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))


def time_text(seconds: int) -> str:
    """Unix seconds as a ledger time (or, past year 9999, in seconds)."""
    if not 0 <= seconds < _YEAR_10000:
        return f"Unix time {seconds}"
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


# Rounds already checked in this process: a site names a round in one leaf, and several checks
# (the run's rules, the replay's, the build's self-check) read it.
_CHECKED_ROUNDS: dict[tuple[bytes, int, str], bool] = {}


def round_signature_problems(beacon: Beacon, round_number: int, signature: str, where: str) -> list[Problem]:
    """A round's signature against the pinned key (a forged or another chain's round fails)."""
    key = (beacon.public_key, round_number, signature)
    if key not in _CHECKED_ROUNDS:
        try:
            _CHECKED_ROUNDS[key] = verify_drand_round(beacon.public_key, round_number, bytes.fromhex(signature))
        except (ValueError, FormatError):  # not a point of the curve: not a signature either
            _CHECKED_ROUNDS[key] = False
    if _CHECKED_ROUNDS[key]:
        return []
    return [
        Problem(
            f"round {round_number}'s signature does not verify against the pinned key of beacon {beacon.name}",
            where=where,
            found=signature[:16] + "…",
        )
    ]


def round_randomness(signature: str) -> bytes:
    """A round's randomness: SHA-256 of its signature's bytes."""
    return hashlib.sha256(bytes.fromhex(signature)).digest()


def round_document_problems(doc: Any, where: str = "") -> list[Problem]:
    """A round as drand's HTTP API serves it: `round`, `signature`, and `randomness` (which must be
    the SHA-256 of the signature); other members are ignored."""
    if not isinstance(doc, dict):
        return [Problem("must be an object", where=where, found=show(doc))]
    problems = []
    if not (is_int(doc.get("round")) and doc["round"] >= 1):
        problems.append(Problem("must be a round number, at least 1", where="round", found=show(doc.get("round"))))
    sig = doc.get("signature")
    if not (isinstance(sig, str) and _is_hex(sig, 96)):
        problems.append(Problem("must be 96 lowercase hex digits (a G1 signature)", where="signature", found=show(sig)))
    elif "randomness" in doc and doc["randomness"] != round_randomness(sig).hex():
        problems.append(
            Problem(
                "randomness is not the SHA-256 of the signature",
                where="randomness",
                expected=round_randomness(sig).hex(),
                found=show(doc["randomness"]),
            )
        )
    return problems


def beacon_notes(methodologies: Mapping[str, Any]) -> list[str]:
    """What a pass cannot say of each pinned beacon that is not drand's quicknet."""
    out = []
    for version, m in sorted(methodologies.items()):
        b = getattr(m, "beacon", None)
        if b is not None and b.chain_hash != QUICKNET["chain_hash"]:
            out.append(
                f"methodology {version} pins the beacon {b.name!r} (chain {b.chain_hash[:16]}…), not drand's quicknet: "
                "its draws are only as far from the operator's choice as that beacon's key holders are"
            )
    return out


# ==============================================================================================
# generator/verifier/rules/methodology_rules.py: Methodology parameters (format v1 §5): every rule of a valid
#     parameter file, and the file parsed once into the immutable object the scoring engine reads.
# ==============================================================================================

METHODOLOGY_KEYS = (
    "type",
    "v",
    "version",
    "tiers",
    "item_threshold",
    "text_similarity",
    "grade_cutoffs",
    "lowest_grade",
    "bands",
    "certify",
)


DRAW_KEYS = ("beacon", "draws")  # format v2 (FORMAT.md, "Draws and timestamps")


def _fraction_in(value: Any, lo: Fraction, hi: Fraction, lo_open: bool = False) -> bool:
    if not is_decimal(value) or len(value) > MAX_DECIMAL_LENGTH:
        return False
    x = Fraction(value)
    return (lo < x if lo_open else lo <= x) and x <= hi


def check_methodology(params: Any) -> list[Problem]:
    """Every way a methodology parameter file breaks format v1 §5 (empty when it is valid)."""
    problems = check_keys(params, METHODOLOGY_KEYS, optional=DRAW_KEYS)
    if not isinstance(params, dict):
        return problems
    # A methodology that pins a beacon is v 2, so that a reader without draws refuses it
    # instead of certifying runs whose items it cannot check.
    version = 2 if any(k in params for k in DRAW_KEYS) else 1
    if params.get("type") != "methodology" or not (is_int(params.get("v")) and params["v"] == version):
        problems.append(
            Problem(
                "wrong type or version",
                expected=f'"methodology", v {version}',
                found=f"{show(params.get('type'))}, v {show(params.get('v'))}",
            )
        )
    if "beacon" in params:
        problems += beacon_problems(params["beacon"])
    if "draws" in params:
        problems += draws_problems(params["draws"], params.get("beacon"))
    if not (isinstance(params.get("version"), str) and VERSION_RE.fullmatch(params["version"])):
        problems.append(
            Problem(
                "malformed version", where="version", expected=VERSION_RE.pattern, found=show(params.get("version"))
            )
        )
    problems += _tiers_problems(params.get("tiers"))
    if "item_threshold" in params and not _fraction_in(params["item_threshold"], Fraction(0), Fraction(1)):
        problems.append(
            Problem(
                "threshold must be a decimal string in [0, 1]",
                where="item_threshold",
                found=show(params["item_threshold"]),
            )
        )
    problems += _text_similarity_problems(params.get("text_similarity"))
    grades, found = _grades(params)
    problems += found
    bands = params.get("bands")
    if "bands" in params and not isinstance(bands, dict):
        problems.append(Problem("must be an object", where="bands", found=type_name(bands)))
    elif isinstance(bands, dict):
        problems += _bands_problems(bands, grades)
    problems += _certify_problems(params.get("certify"), grades)
    return problems


def _tiers_problems(tiers: Any) -> list[Problem]:
    """Each tier's weight (above 0) and similarity floor (in [0, 1])."""
    problems = check_keys(tiers, TIERS, where="tiers")
    if not isinstance(tiers, dict):
        return problems
    for t in TIERS:
        tier = tiers.get(t)
        if not isinstance(tier, dict):
            if t in tiers:  # a missing tier is check_keys' to report
                problems.append(Problem("a tier is an object", where=f"tiers.{t}", found=type_name(tier)))
            continue
        problems += check_keys(tier, ("weight", "min_similarity"), where=f"tiers.{t}")
        w = tier.get("weight")
        if "weight" in tier and not (is_decimal(w) and Fraction(w) > 0):
            problems.append(
                Problem(
                    "weight must be a decimal string above 0",
                    where=f"tiers.{t}.weight",
                    expected='a string such as "0.7"',
                    found=show(w),
                )
            )
        f = tier.get("min_similarity")
        if "min_similarity" in tier and not _fraction_in(f, Fraction(0), Fraction(1)):
            problems.append(
                Problem("floor must be a decimal string in [0, 1]", where=f"tiers.{t}.min_similarity", found=show(f))
            )
    return problems


def _text_similarity_problems(ts: Any) -> list[Problem]:
    problems = check_keys(ts, ("measure", "model", "version"), where="text_similarity")
    if not isinstance(ts, dict):
        return problems
    if "measure" in ts and ts["measure"] != "cosine":
        problems.append(
            Problem("unknown measure", where="text_similarity.measure", expected='"cosine"', found=show(ts["measure"]))
        )
    for k in ("model", "version"):
        if k in ts and not (isinstance(ts[k], str) and ts[k]):
            problems.append(Problem("must be a non-empty string", where=f"text_similarity.{k}", found=show(ts[k])))
    return problems


def _grades(params: dict[str, Any]) -> tuple[list[str], list[Problem]]:
    """The grades, best first (each cut-off's, then the lowest), and the problems of the
    cut-offs (strictly descending pass rates) and of the grades' names (distinct)."""
    grades: list[str] = []
    problems: list[Problem] = []
    cutoffs = params.get("grade_cutoffs")
    if "grade_cutoffs" in params and not isinstance(cutoffs, list):
        problems.append(Problem("must be a list", where="grade_cutoffs", found=type_name(cutoffs)))
    elif isinstance(cutoffs, list):
        previous: Fraction | None = None
        for i, c in enumerate(cutoffs):
            w = f"grade_cutoffs[{i}]"
            problems += check_keys(c, ("grade", "min_pass_rate"), where=w)
            if not isinstance(c, dict):
                continue
            if isinstance(c.get("grade"), str) and c["grade"]:
                grades.append(c["grade"])
            elif "grade" in c:
                problems.append(
                    Problem("grade must be a non-empty string", where=f"{w}.grade", found=show(c.get("grade")))
                )
            rate = c.get("min_pass_rate")
            if not _fraction_in(rate, Fraction(0), Fraction(100)) or not isinstance(rate, str):
                problems.append(
                    Problem("must be a decimal string in [0, 100]", where=f"{w}.min_pass_rate", found=show(rate))
                )
                continue
            if previous is not None and Fraction(rate) >= previous:
                problems.append(
                    Problem(
                        "cut-offs must be strictly descending",
                        where=f"{w}.min_pass_rate",
                        expected=f"below {previous}",
                        found=rate,
                    )
                )
            previous = Fraction(rate)
    lowest = params.get("lowest_grade")
    if isinstance(lowest, str) and lowest:
        grades.append(lowest)
    elif "lowest_grade" in params:
        problems.append(Problem("must be a non-empty string", where="lowest_grade", found=show(lowest)))
    if len(set(grades)) != len(grades):
        dup = sorted({g for g in grades if grades.count(g) > 1})
        problems.append(Problem("grades must be distinct", where="grade_cutoffs", found=", ".join(dup)))
    return grades, problems


def _bands_problems(bands: dict[str, Any], grades: list[str]) -> list[Problem]:
    """One band per grade, each [min, max] within 0..100 and wholly above the next grade's."""
    problems = []
    for g in grades:
        if g not in bands:
            problems.append(Problem(f"grade {g!r} has no band", where="bands"))
    for g in sorted(set(bands) - set(grades)):
        problems.append(Problem(f"band for unknown grade {g!r}", where="bands"))
    previous_band: tuple[str, list[int]] | None = None
    # With a grade named twice the order of bands means nothing; that error is reported above.
    ordered = len(set(grades)) == len(grades)
    for g in grades:
        b = bands.get(g)
        if b is None:
            continue
        if not (isinstance(b, list) and len(b) == 2 and all(is_int(x) for x in b) and 0 <= b[0] <= b[1] <= 100):
            problems.append(Problem("a band is [min, max] with 0 ≤ min ≤ max ≤ 100", where=f"bands.{g}", found=show(b)))
            previous_band = None
            continue
        if ordered and previous_band is not None and previous_band[1][0] <= b[1]:
            problems.append(
                Problem(
                    f"band of {previous_band[0]} must lie wholly above the band of {g}",
                    where=f"bands.{g}",
                    expected=f"max below {previous_band[1][0]}",
                    found=show(b),
                )
            )
        previous_band = (g, b)
    return problems


def _certify_problems(certify: Any, grades: list[str]) -> list[Problem]:
    """What a certificate needs: the least grade, scored fraction and secret-gate size, whether
    the judge must be independent, and the retry limit if there is one."""
    problems = check_keys(
        certify,
        ("min_grade", "min_scored_fraction", "independent_judge", "min_items_secret_gate"),
        optional=("max_attempts",),
        where="certify",
    )
    if not isinstance(certify, dict):
        return problems
    if "min_grade" in certify and certify["min_grade"] not in grades:
        problems.append(
            Problem(
                "must be one of the grades",
                where="certify.min_grade",
                expected=", ".join(grades),
                found=show(certify["min_grade"]),
            )
        )
    if "min_scored_fraction" in certify and not _fraction_in(
        certify["min_scored_fraction"], Fraction(0), Fraction(1), lo_open=True
    ):
        problems.append(
            Problem(
                "must be a decimal string in (0, 1]",
                where="certify.min_scored_fraction",
                found=show(certify["min_scored_fraction"]),
            )
        )
    if "independent_judge" in certify and not isinstance(certify["independent_judge"], bool):
        problems.append(
            Problem(
                "must be true or false", where="certify.independent_judge", found=show(certify["independent_judge"])
            )
        )
    for k in ("max_attempts", "min_items_secret_gate"):
        if k in certify and not (is_int(certify[k]) and certify[k] >= 1):
            problems.append(Problem("must be an integer of at least 1", where=f"certify.{k}", found=show(certify[k])))
    return problems


@dataclass(frozen=True)
class Tier:
    name: str
    weight: Fraction
    min_similarity: Fraction
    weight_text: str  # as published, for pages
    min_similarity_text: str


@dataclass(frozen=True)
class Grade:
    name: str
    min_pass_rate: Fraction | None  # None for the lowest grade, below every cut-off
    min_pass_rate_text: str | None
    band: tuple[int, int]


@dataclass(frozen=True)
class Methodology:
    """A valid parameter file, parsed once (parse_methodology): the engine's only input besides
    the results. Grades run best first, the lowest last."""

    version: str
    tiers: Mapping[str, Tier]
    item_threshold: Fraction
    item_threshold_text: str
    grades: tuple[Grade, ...]
    min_grade: str
    min_scored_fraction: Fraction
    min_scored_fraction_text: str
    independent_judge: bool
    min_items_secret_gate: int
    similarity_model: str
    similarity_version: str
    document: Mapping[str, Any]  # the parameter file as published, for pages
    max_attempts: int | None = None  # the retry limit, when the methodology sets one
    beacon: Beacon | None = None  # the randomness beacon it pins, if any
    draws_required: bool = False  # whether a secret-gate run must draw its items
    retirement_schedule: RetirementSchedule | None = None
    _rank: dict[str, int] = field(init=False, repr=False, compare=False)
    _by_name: dict[str, Grade] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_rank", {g.name: i for i, g in enumerate(self.grades)})
        object.__setattr__(self, "_by_name", {g.name: g for g in self.grades})

    @property
    def grade_order(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.grades)

    @property
    def lowest_grade(self) -> str:
        return self.grades[-1].name

    def band(self, grade: str) -> tuple[int, int]:
        return self._by_name[grade].band

    def reaches(self, grade: str, least: str) -> bool:
        """Whether `grade` is `least` or better."""
        return self._rank[grade] <= self._rank[least]

    def is_grade(self, grade: Any) -> bool:
        return isinstance(grade, str) and grade in self._rank


def parse_methodology(doc: Any) -> Methodology:
    """The methodology of a parameter file; FormatError naming the first rule it breaks."""
    problems = check_methodology(doc)
    if problems:
        p = problems[0]
        raise FormatError(
            f"not a valid methodology: {p.message}"
            + (f" at {p.where}" if p.where else "")
            + (f" ({p.found})" if p.found else "")
        )
    tiers = {
        t: Tier(
            t,
            Fraction(doc["tiers"][t]["weight"]),
            Fraction(doc["tiers"][t]["min_similarity"]),
            doc["tiers"][t]["weight"],
            doc["tiers"][t]["min_similarity"],
        )
        for t in TIERS
    }
    grades = [
        Grade(
            c["grade"],
            Fraction(c["min_pass_rate"]),
            c["min_pass_rate"],
            (doc["bands"][c["grade"]][0], doc["bands"][c["grade"]][1]),
        )
        for c in doc["grade_cutoffs"]
    ]
    lowest = doc["lowest_grade"]
    grades.append(Grade(lowest, None, None, (doc["bands"][lowest][0], doc["bands"][lowest][1])))
    c = doc["certify"]
    return Methodology(
        doc["version"],
        MappingProxyType(tiers),
        Fraction(doc["item_threshold"]),
        doc["item_threshold"],
        tuple(grades),
        c["min_grade"],
        Fraction(c["min_scored_fraction"]),
        c["min_scored_fraction"],
        c["independent_judge"],
        c["min_items_secret_gate"],
        doc["text_similarity"]["model"],
        doc["text_similarity"]["version"],
        MappingProxyType(doc),
        c.get("max_attempts"),
        parse_beacon(doc["beacon"]) if "beacon" in doc else None,
        doc.get("draws", {}).get("secret_gate_runs") == "required",
        parse_schedule(doc.get("draws")),
    )


# ==============================================================================================
# generator/verifier/rules/scoring.py: The scoring engine (format v1 §5): similarity, item score, pass rates, the
#     Wilson interval, grades, the score inside the band, the grader's bullets and the verdict.
# ==============================================================================================

Z = Fraction(49, 25)  # 1.96, the 95 % normal quantile of format v1 §5


REPORTED_SIMILARITY_RE = re.compile(r"^(0(\.[0-9]+)?|1(\.0+)?)$")


RATIO_RE = re.compile(r"^([1-9][0-9]*)/([1-9][0-9]*)$")


PROPOSAL_RE = re.compile(r"^-?(0|[1-9][0-9]*)$")


# The statuses of a result (format v1 §5), defined here once: scored, or one of the non-scored.
SCORED = "scored"


NON_SCORED = ("infra_error", "not_run", "missing_label", "excluded")


STATUSES = (SCORED, *NON_SCORED)


@functools.lru_cache(maxsize=4096)
def decimal_value(text: str) -> Fraction:
    """The exact value of a decimal string. Cached: a methodology's few weights, floors and
    cut-offs, and the reported similarities, come back for every field of every item."""
    return Fraction(text)


def round_half_up(x: Fraction, places: int) -> str:
    """A non-negative exact value as a decimal string with exactly `places` decimals."""
    if x < 0:
        raise ScoringError("round_half_up takes a non-negative value")
    scaled = x * 10**places
    n = scaled.numerator // scaled.denominator
    if 2 * (scaled - n) >= 1:
        n += 1
    digits = str(n).rjust(places + 1, "0")
    return f"{digits[:-places]}.{digits[-places:]}" if places else digits


def item_score_text(score: Fraction) -> str:
    """An item score as published: 6 decimals, half-up."""
    return round_half_up(score, 6)


def rate_text(rate: Fraction) -> str:
    """A percentage as published: 4 decimals, half-up."""
    return round_half_up(rate, 4)


def is_exact_field(kind: str, tier: str) -> bool:
    """Critical fields and scalar fields are compared for equality (format v1 §5)."""
    return tier == "critical" or kind == "scalar"


def is_reported_field(kind: str, tier: str) -> bool:
    """Only a non-critical text field takes its similarity from the evaluator's report."""
    return kind == "text" and tier != "critical"


def jaccard_similarity(output: Sequence[Any], answer: Sequence[Any]) -> str:
    """|A∩B| / |A∪B| over the sets of elements (identity by canonical bytes) as "0", "1" or p/q."""
    a = {canonical_bytes(x) for x in output}
    b = {canonical_bytes(x) for x in answer}
    union = len(a | b)
    s = Fraction(len(a & b), union) if union else Fraction(1)
    return similarity_text(s)


def similarity_text(s: Fraction) -> str:
    """A computed similarity: "0", "1", or the reduced fraction "p/q"."""
    if s == 0:
        return "0"
    if s == 1:
        return "1"
    return f"{s.numerator}/{s.denominator}"


def computed_similarity(kind: str, tier: str, output: Any, answer: Any) -> str | None:
    """S of an exact or array field from its output and the answer; None for a reported field."""
    if is_exact_field(kind, tier):
        return "1" if same(output, answer) else "0"
    if kind == "array":
        if not isinstance(output, list) or not isinstance(answer, list):
            return "0"
        return jaccard_similarity(output, answer)
    return None


def _is_reduced_ratio(text: str) -> bool:
    try:
        similarity_value(text)
    except ScoringError:
        return False
    return True


def similarity_value(text: str) -> Fraction:
    """The exact value of a similarity string (a decimal or p/q); ScoringError if it is neither."""
    if not isinstance(text, str) or len(text) > MAX_DECIMAL_LENGTH:
        raise ScoringError(f"not a similarity: {text!r}")
    if REPORTED_SIMILARITY_RE.fullmatch(text):
        return decimal_value(text)
    m = RATIO_RE.fullmatch(text)
    if m:
        s = Fraction(int(m[1]), int(m[2]))
        if s < 1 and f"{s.numerator}/{s.denominator}" == text:
            return s
    raise ScoringError(f"not a similarity: {text!r}")


def similarity_form_problem(kind: str, tier: str, text: Any) -> str | None:
    """What a field's similarity string must look like for its kind and tier, if it does not."""
    if is_exact_field(kind, tier):
        return None if text in ("0", "1") else '"0" or "1" (an exact comparison)'
    if kind == "array":
        if text in ("0", "1") or (isinstance(text, str) and RATIO_RE.fullmatch(text) and _is_reduced_ratio(text)):
            return None
        return '"0", "1" or a reduced fraction "p/q" with 0 < p < q (a Jaccard similarity)'
    if isinstance(text, str) and len(text) <= MAX_DECIMAL_LENGTH and REPORTED_SIMILARITY_RE.fullmatch(text):
        return None
    return 'a decimal string in [0, 1], as reported (such as "0.93")'


@dataclass(frozen=True)
class ItemScore:
    score: Fraction
    passed: bool
    below_floor: tuple[str, ...]  # the fields that missed their tier's floor

    @property
    def text(self) -> str:
        return item_score_text(self.score)


def score_item(fields: Iterable[tuple[str, str, Fraction]], m: Methodology) -> ItemScore:
    """Σ S·W / Σ W over (name, tier, S); passes iff ≥ item_threshold and every floor is met."""
    num = den = Fraction(0)
    below: list[str] = []
    for name, tier_name, s in fields:
        tier = m.tiers[tier_name]
        num += s * tier.weight
        den += tier.weight
        if s < tier.min_similarity:
            below.append(name)
    if not den:
        raise ScoringError("an item has at least one field")
    score = num / den
    return ItemScore(score, score >= m.item_threshold and not below, tuple(below))


def build_open_result(
    item_id: str, answer: dict[str, Any], given: dict[str, tuple[Any, str | None]], m: Methodology
) -> dict[str, Any]:
    """The open form of a scored result (format v1 §6) from each field's output (and, for a
    reported field, its similarity). `given` must name exactly the answer's fields."""
    fields = []
    scored = []
    for name in sorted(answer):  # code-point order
        a = answer[name]
        output, reported = given[name]
        sim = computed_similarity(a["kind"], a["tier"], output, a["value"])
        if sim is None:
            form = similarity_form_problem(a["kind"], a["tier"], reported)
            if form:
                raise ScoringError(
                    f"field {name} of item {item_id}: the reported similarity must be {form}, not {show(reported)}"
                )
            sim = str(reported)
        fields.append({"name": name, "kind": a["kind"], "tier": a["tier"], "similarity": sim, "output": output})
        scored.append((name, a["tier"], similarity_value(sim)))
    s = score_item(scored, m)
    return {"item": item_id, "status": SCORED, "score": s.text, "passed": s.passed, "fields": fields}


def pass_rates(passed: int, scored: int, total: int) -> tuple[Fraction, Fraction, Fraction]:
    """The pass rate, and its worst and best cases over the non-scored results, in percent."""
    rate = Fraction(100 * passed, scored) if scored else Fraction(0)
    worst = Fraction(100 * passed, total) if total else Fraction(0)
    best = Fraction(100 * (passed + total - scored), total) if total else Fraction(0)
    return rate, worst, best


def wilson_interval(x: int, n: int) -> list[str]:
    """The 95 % Wilson score interval of x/n in percent, exactly as format v1 §5 defines it."""
    if not 0 <= x <= n:
        raise ScoringError("0 ≤ passed ≤ scored")
    if n == 0:
        return ["0.0000", "100.0000"]
    z2 = Z * Z
    r = z2 + Fraction(4 * x * (n - x), n)
    scaled = r * 10**80
    root = Fraction(math.isqrt(scaled.numerator // scaled.denominator), 10**40)
    bounds = []
    for sign in (-1, 1):
        b = (2 * x + z2 + sign * Z * root) / (2 * (n + z2)) * 100
        bounds.append(rate_text(min(max(b, Fraction(0)), Fraction(100))))
    return bounds


def grade_for(rate: Fraction, m: Methodology) -> str:
    """The first grade whose cut-off the rate reaches, else the lowest grade."""
    for g in m.grades:
        if g.min_pass_rate is None or rate >= g.min_pass_rate:
            return g.name
    raise ScoringError("a methodology ends with its lowest grade")  # pragma: no cover - parse_methodology makes it so


def proposal_integer(proposed_json: str | None) -> int | None:
    """The grader's proposal as an integer, if its JSON text is a plain integer in range."""
    if proposed_json is None or len(proposed_json) > 20 or not PROPOSAL_RE.fullmatch(proposed_json):
        return None
    value = int(proposed_json)
    return value if abs(value) <= MAX_SAFE_INTEGER else None


def band_score(proposed_json: str | None, band: Sequence[int]) -> tuple[int, str]:
    """The score inside the locked band and the rule that produced it (fail-closed)."""
    lo, hi = band
    p = proposal_integer(proposed_json)
    if p is None:
        return (lo + hi) // 2, "midpoint-fallback"
    if lo <= p <= hi:
        return p, "as-proposed"
    return min(max(p, lo), hi), "clamped"


def keep_bullets(rationale: Any, scored_ids: Container[str]) -> tuple[list[Any], int]:
    """The rationale bullets kept, and how many were dropped. A rationale that is not a list
    (null included) is one dropped element; a missing one is recorded as []."""
    if not isinstance(rationale, list):
        return [], 1
    kept = [b for b in rationale if _is_grounded_bullet(b, scored_ids)]
    return kept, len(rationale) - len(kept)


def _is_grounded_bullet(b: Any, scored_ids: Container[str]) -> bool:
    if not (isinstance(b, dict) and set(b) == {"text", "evidence_refs"} and isinstance(b["text"], str)):
        return False
    refs = b["evidence_refs"]
    return isinstance(refs, list) and bool(refs) and all(isinstance(r, str) and r in scored_ids for r in refs)


def verdict_for(grade: str, worst_grade: str, best_grade: str, scored: int, total: int, m: Methodology) -> str:
    """The fail-closed verdict: the first of format v1 §5's four rules that applies."""

    def reaches(g: str) -> bool:
        return m.reaches(g, m.min_grade)

    if not reaches(best_grade):
        return "not-certified"
    if scored == 0 or Fraction(scored, total) < m.min_scored_fraction:
        return "incomplete"
    if reaches(grade) and reaches(worst_grade):
        return "certified"
    return "not-certified"


@dataclass(frozen=True)
class Grading:
    """Everything a certificate derives from its counts, without the grader's proposal."""

    summary: dict[str, Any]
    grade: str
    band: list[int]
    worst_case_grade: str
    best_case_grade: str
    verdict: str


def grade_counts(counts: dict[str, int], passed: int, m: Methodology) -> Grading:
    """Summary, grades, band and verdict from the status counts and the number passed."""
    unknown = sorted(set(counts) - set(STATUSES))
    if unknown:
        raise ScoringError(f"unknown status(es): {', '.join(unknown)}")
    total = sum(counts.get(s, 0) for s in STATUSES)
    scored = counts.get(SCORED, 0)
    if not 0 <= passed <= scored:
        raise ScoringError("0 ≤ passed ≤ scored")
    rate, worst, best = pass_rates(passed, scored, total)
    summary = {
        "total": total,
        "scored": scored,
        "passed": passed,
        **{s: counts.get(s, 0) for s in NON_SCORED},
        "pass_rate": rate_text(rate),
        "pass_rate_ci95": wilson_interval(passed, scored),
        "worst_case_pass_rate": rate_text(worst),
        "best_case_pass_rate": rate_text(best),
    }
    grade, wg, bg = grade_for(rate, m), grade_for(worst, m), grade_for(best, m)
    return Grading(summary, grade, list(m.band(grade)), wg, bg, verdict_for(grade, wg, bg, scored, total, m))


# ==============================================================================================
# generator/verifier/rules/agreement_statistics.py: Judge agreement: how far an automated judge's ordinal labels agree
#     with human labellers'.
# ==============================================================================================

AGREEMENT_PLACES = 6


KappaWeights = Literal["linear", "quadratic"] | None


class AgreementError(VerifyError, ValueError):
    """Labels the agreement statistics cannot take: an empty set, a label outside the scale, a
    labeller labelling the same item and dimension twice."""


class AgreementRow(TypedDict):
    """The agreement of the judge with the human labellers on one dimension."""

    sample_size: int  # items with a judge label and at least one human label
    pairs: int  # (judge, human) pairs: one per human label on a sampled item
    human_labels_without_judge: int  # human labels on items the judge did not label: not in the sample
    raw_agreement: Fraction | None
    kappa_linear: Fraction | None
    kappa_quadratic: Fraction | None
    alpha_ordinal: Fraction | None
    disagreements: list[tuple[str, str, int, int]]  # (item, labeller, human label, judge label)


def _is_label(value: object) -> bool:
    # bool is an int to Python, but True is no point of an ordinal scale.
    return isinstance(value, int) and not isinstance(value, bool)


def agreement_scale(categories: Sequence[int]) -> dict[int, int]:
    """Each category's position on the scale. The scale must be non-empty, strictly increasing
    integers: the positions are what the kappa weights and the ordinal metric are taken on."""
    if len(categories) == 0:
        raise AgreementError("the scale of categories is empty")
    for i, c in enumerate(categories):
        if not _is_label(c):
            raise AgreementError(f"category {i} of the scale is {show(c)}, not an integer")
        if i and c <= categories[i - 1]:
            raise AgreementError(f"the scale {show(list(categories))} is not strictly increasing at category {i}")
    return {c: i for i, c in enumerate(categories)}


def _position(label: object, scale: dict[int, int], record: str) -> int:
    if isinstance(label, bool) or not isinstance(label, int) or label not in scale:
        raise AgreementError(f"{record}: label {show(label)} is not one of the categories {show(list(scale))}")
    return scale[label]


def _paired_positions(
    first: Sequence[int], second: Sequence[int], categories: Sequence[int]
) -> tuple[list[int], list[int], int]:
    scale = agreement_scale(categories)
    if len(first) != len(second):
        raise AgreementError(f"the two raters have {len(first)} and {len(second)} labels: they must be paired")
    if len(first) == 0:
        raise AgreementError("no paired labels")
    a = [_position(x, scale, f"pair {i} {show([x, y])}") for i, (x, y) in enumerate(zip(first, second, strict=True))]
    b = [_position(y, scale, f"pair {i} {show([x, y])}") for i, (x, y) in enumerate(zip(first, second, strict=True))]
    return a, b, len(categories)


def raw_agreement(first: Sequence[int], second: Sequence[int], categories: Sequence[int]) -> Fraction:
    """The share of pairs on which the two raters gave the same label."""
    a, b, _ = _paired_positions(first, second, categories)
    return Fraction(sum(1 for x, y in zip(a, b, strict=True) if x == y), len(a))


def _kappa_weight(i: int, j: int, weights: KappaWeights) -> int:
    if weights is None:
        return 0 if i == j else 1
    if weights == "linear":
        return abs(i - j)
    return (i - j) ** 2


def cohen_kappa(
    first: Sequence[int], second: Sequence[int], categories: Sequence[int], weights: KappaWeights = None
) -> Fraction | None:
    """Cohen's kappa of two raters over paired labels, 1 - Σ w·O / Σ w·E.

    O is the k×k table of counts of (first, second) label pairs, E the table the marginals
    give by chance, E_ij = r_i·c_j / n, and w the disagreement weights on the positions i, j of
    the labels in `categories`: 1 off the diagonal (unweighted), |i-j| (linear), (i-j)²
    (quadratic). None when Σ w·E is 0, which happens exactly when every label of both raters is
    the same category: no disagreement was possible, so none can be corrected for."""
    if weights not in (None, "linear", "quadratic"):
        raise AgreementError(f"kappa weights {show(weights)}: use None, 'linear' or 'quadratic'")
    a, b, k = _paired_positions(first, second, categories)
    observed = [[0] * k for _ in range(k)]
    for x, y in zip(a, b, strict=True):
        observed[x][y] += 1
    rows = [sum(r) for r in observed]
    cols = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    n = len(a)
    # Only the categories somebody used add to either sum: a 101-point scale costs what its used
    # points cost, whatever a hostile label set lists.
    used_rows = [i for i in range(k) if rows[i]]
    used_cols = [j for j in range(k) if cols[j]]
    # Scaled by n so that both sums stay integers: Σ w·E = Σ w·r·c / n.
    disagreement = n * sum(
        _kappa_weight(i, j, weights) * observed[i][j] for i in used_rows for j in used_cols if observed[i][j]
    )
    chance = sum(_kappa_weight(i, j, weights) * rows[i] * cols[j] for i in used_rows for j in used_cols)
    if chance == 0:
        return None
    return 1 - Fraction(disagreement, chance)


def krippendorff_alpha_ordinal(units: Sequence[Sequence[int | None]], categories: Sequence[int]) -> Fraction | None:
    """Krippendorff's alpha, ordinal metric, of the labels `units[u][r]` (rater r on unit u,
    None where missing): 1 - (n-1) · Σ o_ck·δ²_ck / Σ n_c·n_k·δ²_ck.

    The coincidence o_ck adds, for every unit with m ≥ 2 labels, 1/(m-1) for each ordered pair
    of two different raters' labels (c, k); n_c = Σ_k o_ck and n = Σ n_c, the number of pairable
    labels. δ²_ck = (Σ_{g from c to k} n_g - (n_c + n_k)/2)², the sum over the categories of the
    scale between c and k inclusive, so that a category nobody used changes nothing. None when no
    unit has two labels or all pairable labels are one category (the expected disagreement is 0)."""
    scale = agreement_scale(categories)
    if len(units) == 0:
        raise AgreementError("no units")
    k = len(categories)
    raters = len(units[0])
    # Sparse, by (c, d): only pairs of categories some unit holds, so a 101-point scale costs what
    # its used points cost.
    coincidence: dict[tuple[int, int], Fraction] = {}
    for u, unit in enumerate(units):
        if len(unit) != raters:
            raise AgreementError(f"unit {u} has {len(unit)} raters' labels, unit 0 has {raters}")
        counts = [0] * k
        for r, label in enumerate(unit):
            if label is not None:
                counts[_position(label, scale, f"unit {u} rater {r}")] += 1
        m = sum(counts)
        if m < 2:
            continue  # a lone label has no other to be compared with
        present = [c for c in range(k) if counts[c]]  # at most m categories, not the whole scale
        for c in present:
            for d in present:
                pairs = counts[c] * counts[d] - (counts[c] if c == d else 0)
                if pairs:
                    coincidence[(c, d)] = coincidence.get((c, d), Fraction(0)) + Fraction(pairs, m - 1)
    marginal = [Fraction(0)] * k
    for (c, _), o in coincidence.items():
        marginal[c] += o
    n = sum(marginal)
    if n == 0:
        return None
    below = [Fraction(0)]  # below[g] = n_0 + … + n_(g-1)
    for g in range(k):
        below.append(below[-1] + marginal[g])

    def delta(c: int, d: int) -> Fraction:
        lo, hi = min(c, d), max(c, d)
        return (below[hi + 1] - below[lo] - (marginal[lo] + marginal[hi]) / 2) ** 2

    used = [c for c in range(k) if marginal[c]]  # a category nobody used adds 0 to both sums
    observed = sum((o * delta(c, d) for (c, d), o in coincidence.items() if c != d), Fraction(0))
    expected = sum((marginal[c] * marginal[d] * delta(c, d) for c in used for d in used if c != d), Fraction(0))
    if expected == 0:
        return None
    return 1 - (n - 1) * observed / expected


def _record_text(index: int, record: object) -> str:
    return f"human label record {index} {show(list(record) if isinstance(record, tuple) else record)}"


def agreement_report(
    human_labels: Iterable[tuple[str, str, str, int]],
    judge_labels: Mapping[tuple[str, str], int],
    categories: Sequence[int],
) -> dict[str, AgreementRow]:
    """Per dimension, the judge's agreement with the human labellers.

        `human_labels` are (labeller, item, dimension, label) records, `judge_labels` the judge's
        label by (item, dimension). The sample of a dimension is its items with a judge label and at
        least one human label; human labels on other items are counted, not used. Every human label
        on a sampled item makes one (judge, human) pair: raw agreement and kappa are over these
        pairs, judge first. Alpha takes the sampled items as units and the judge and each labeller
        as raters. Disagreements are the pairs whose labels differ, as (item, labeller, human label,
        judge label), sorted by item then labeller. A dimension with an empty sample has None for
        every statistic (so does every dimension when the judge labelled nothing: a run whose scored
    results carry no judge labels). Dimensions are those of either input, in sorted order."""
    scale = agreement_scale(categories)
    human: dict[str, dict[str, dict[str, int]]] = {}  # dimension -> item -> labeller -> label
    count = 0
    for index, record in enumerate(human_labels):
        count += 1
        if not isinstance(record, tuple) or len(record) != 4:
            raise AgreementError(f"{_record_text(index, record)}: not (labeller, item, dimension, label)")
        labeller, item, dimension, label = record
        if not all(isinstance(s, str) for s in (labeller, item, dimension)):
            raise AgreementError(f"{_record_text(index, record)}: labeller, item and dimension must be strings")
        _position(label, scale, _record_text(index, record))
        by_labeller = human.setdefault(dimension, {}).setdefault(item, {})
        if labeller in by_labeller:
            raise AgreementError(
                f"{_record_text(index, record)}: labeller {show(labeller)} already labelled item {show(item)} "
                f"on dimension {show(dimension)}"
            )
        by_labeller[labeller] = label
    if count == 0:
        raise AgreementError("no human labels")
    judged: dict[str, dict[str, int]] = {}
    for key, label in judge_labels.items():
        where = f"judge label {show(list(key) if isinstance(key, tuple) else key)}"
        if not isinstance(key, tuple) or len(key) != 2 or not all(isinstance(s, str) for s in key):
            raise AgreementError(f"{where}: the key must be (item, dimension), two strings")
        _position(label, scale, where)
        judged.setdefault(key[1], {})[key[0]] = label
    return {d: _agreement_row(human.get(d, {}), judged.get(d, {}), categories) for d in sorted(human.keys() | judged)}


def _agreement_row(human: dict[str, dict[str, int]], judge: dict[str, int], categories: Sequence[int]) -> AgreementRow:
    sample = sorted(item for item in human if item in judge)
    labellers = sorted({labeller for item in sample for labeller in human[item]})
    judge_side: list[int] = []
    human_side: list[int] = []
    disagreements: list[tuple[str, str, int, int]] = []
    for item in sample:
        for labeller in sorted(human[item]):
            judge_side.append(judge[item])
            human_side.append(human[item][labeller])
            if human[item][labeller] != judge[item]:
                disagreements.append((item, labeller, human[item][labeller], judge[item]))
    units = [[judge[item], *(human[item].get(labeller) for labeller in labellers)] for item in sample]
    pairs = len(judge_side)
    return {
        "sample_size": len(sample),
        "pairs": pairs,
        "human_labels_without_judge": sum(len(labels) for item, labels in human.items() if item not in judge),
        "raw_agreement": raw_agreement(judge_side, human_side, categories) if pairs else None,
        "kappa_linear": cohen_kappa(judge_side, human_side, categories, "linear") if pairs else None,
        "kappa_quadratic": cohen_kappa(judge_side, human_side, categories, "quadratic") if pairs else None,
        "alpha_ordinal": krippendorff_alpha_ordinal(units, categories) if units else None,
        "disagreements": disagreements,
    }


def agreement_decimal(value: Fraction | None) -> str | None:
    """An exact statistic as published: 6 decimals, the 7th and beyond rounded half away from
    zero from the exact value (never through a float), zero always unsigned; None stays None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (Fraction, int)):
        raise AgreementError(f"{show(repr(value))} is not an exact value: a float has already been rounded")
    scaled = abs(Fraction(value)) * 10**AGREEMENT_PLACES
    digits = scaled.numerator // scaled.denominator
    if 2 * (scaled - digits) >= 1:
        digits += 1
    text = str(digits).rjust(AGREEMENT_PLACES + 1, "0")
    sign = "-" if value < 0 and digits else ""
    return f"{sign}{text[:-AGREEMENT_PLACES]}.{text[-AGREEMENT_PLACES:]}"


# ==============================================================================================
# generator/verifier/rules/labelsets.py: Judge agreement (FORMAT.md, "Judge agreement (v2)"): blind human label sets,
#     committed in the ledger before the judge's scores are disclosed, and the report that measures the judge against
#     them, one document the generator publishes and the verifier recomputes from the same code.
# ==============================================================================================

@dataclass(frozen=True)
class LabelSetEvent:
    id: str
    run: str
    sha256: str
    index: int
    at: str


LABEL_SET_KEYS = ("type", "v", "id", "run", "rubric_sha256", "scale", "labels", "salt")


LABEL_KEYS = ("labeller", "item", "dimension", "label")


JUDGE_LABELS = "judge_labels"


# An ordinal rubric has a handful of points; the bound keeps kappa's k×k tables small whatever a
# hostile site lists.
MAX_SCALE = 101


# A rubric has a few dimensions; the bounds keep one small file from costing a verifier hours.
MAX_DIMENSIONS = 64


MAX_LABELS = 1_000_000


MAX_LABEL = 2**53 - 1


REPORT_TYPE = "agreement-report"


STATISTICS = ("raw_agreement", "kappa_linear", "kappa_quadratic", "alpha_ordinal")


def labels_path(set_id: str) -> str:
    return f"agreement/{set_id}/labels.json"


def report_path(set_id: str) -> str:
    return f"agreement/{set_id}.json"


def label_set_event_problems(
    leaf: dict[str, Any], earlier: LabelSetEvent | None, registered: bool, certificate: tuple[str, int] | None
) -> list[Problem]:
    """A label-set ledger leaf (its members' types already checked): a new id, of a run
    registered before and not yet certified (`certificate`: its serial and leaf index, if it is)."""
    set_id, run_id = leaf["id"], leaf["run"]
    problems = []
    if not is_id(set_id):
        problems.append(Problem("malformed label-set id", where="id", expected=ID_RE.pattern, found=show(set_id)))
    elif earlier is not None:
        problems.append(
            Problem(
                f"label set {set_id} is committed twice",
                where="id",
                found=f"committed before at entries[{earlier.index}]",
            )
        )
    if not registered:
        problems.append(Problem("label set for a run that was not registered before", where="run", found=show(run_id)))
    elif certificate is not None:
        # The certificate discloses the judge's labels: a label set after it is not blind.
        problems.append(
            Problem(
                f"label set committed after certificate {certificate[0]} (entries[{certificate[1]}]) disclosed the "
                f"judge's scores of run {run_id}: human labels must be committed blind",
                where="run",
                expected="a run whose certificate is not yet issued",
                found=run_id,
            )
        )
    if not is_hex64(leaf["sha256"]):
        problems.append(Problem("malformed hash", where="sha256", found=show(leaf["sha256"])))
    return problems


def _is_point(value: Any) -> bool:
    return is_int(value) and abs(value) <= MAX_LABEL


def judge_labels_problems(value: Any, where: str, render: Any = show) -> list[Problem]:
    """A scored result's `judge_labels`: the judge's ordinal label by rubric dimension, an object
    of id -> integer with at least one dimension."""
    w = f"{where}.{JUDGE_LABELS}"
    if not isinstance(value, dict) or not value:
        return [
            Problem(
                "the judge's labels are an object of rubric dimension -> integer label",
                where=w,
                found=render(value),
            )
        ]
    if len(value) > MAX_DIMENSIONS:
        return [
            Problem("too many rubric dimensions", where=w, expected=f"at most {MAX_DIMENSIONS}", found=str(len(value)))
        ]
    problems = []
    for k, v in value.items():
        if not is_id(k):
            problems.append(Problem("a rubric dimension is an id", where=w, expected=ID_RE.pattern, found=render(k)))
        elif not _is_point(v):
            problems.append(
                Problem("a judge's label is an integer on the rubric's scale", where=f"{w}.{k}", found=render(v))
            )
    return problems


def scale_problems(scale: Any, where: str = "scale") -> list[Problem]:
    if not isinstance(scale, list) or not 2 <= len(scale) <= MAX_SCALE or not all(_is_point(c) for c in scale):
        return [
            Problem(
                "the scale is the rubric's ordinal categories, 2 to 101 integers",
                where=where,
                found=show(scale, 80),
            )
        ]
    try:
        agreement_scale(scale)
    except AgreementError as e:
        return [Problem(str(e), where=where, expected="strictly increasing integers")]
    return []


def label_rows_problems(
    rows: Any, scale: list[int] | None, items: Container[str] | None, where: str = "labels", ordered: bool = True
) -> list[Problem]:
    """Human label rows, each problem at the row's own index: each labeller's ordinal label of
    one item on one dimension (on `scale` and of `items`, when known), no labeller labelling an
    item's dimension twice, at most MAX_DIMENSIONS dimensions and MAX_LABELS rows, and, when
    `ordered` (a committed label set), sorted by dimension, item and labeller."""
    if not isinstance(rows, list) or not rows:
        return [Problem("labels are a non-empty list of human labels", where=where, found=show(rows, 80))]
    if len(rows) > MAX_LABELS:
        return [Problem("too many labels", where=where, expected=f"at most {MAX_LABELS}", found=str(len(rows)))]
    problems: list[Problem] = []
    keys: list[tuple[str, str, str] | None] = []
    points = set(scale) if scale is not None else None
    for i, r in enumerate(rows):
        w = f"{where}[{i}]"
        found = check_keys(r, LABEL_KEYS, where=w)
        if not isinstance(r, dict):
            problems += found
            keys.append(None)
            continue
        for k in ("labeller", "dimension"):
            if k in r and not is_id(r[k]):
                found.append(Problem(f"a {k} is an id", where=f"{w}.{k}", expected=ID_RE.pattern, found=show(r[k])))
        if "item" in r and not (isinstance(r["item"], str) and (items is None or r["item"] in items)):
            found.append(Problem("labels an item that is not the run's", where=f"{w}.item", found=show(r["item"])))
        if "label" in r and not (_is_point(r["label"]) and (points is None or r["label"] in points)):
            found.append(
                Problem(
                    "a label is one of the scale's categories",
                    where=f"{w}.label",
                    expected=show(scale) if scale is not None else "an integer",
                    found=show(r["label"]),
                )
            )
        problems += found
        keys.append((r["dimension"], r["item"], r["labeller"]) if not found else None)
    dimensions = {k[0] for k in keys if k is not None}
    if len(dimensions) > MAX_DIMENSIONS:
        problems.append(
            Problem(
                "too many rubric dimensions",
                where=where,
                expected=f"at most {MAX_DIMENSIONS}",
                found=str(len(dimensions)),
            )
        )
    seen: dict[tuple[str, str, str], int] = {}
    for i, key in enumerate(keys):
        if key is None:
            continue
        if key in seen:
            problems.append(
                Problem(
                    f"labeller {key[2]} labels item {key[1]} on {key[0]} twice (first at {where}[{seen[key]}])",
                    where=f"{where}[{i}]",
                    found=show(list(key)),
                )
            )
        seen.setdefault(key, i)
    if ordered and not problems:
        for i in range(1, len(keys)):
            a, b = keys[i - 1], keys[i]
            if a is not None and b is not None and b < a:
                problems.append(
                    Problem(
                        "labels are sorted by dimension, then item, then labeller",
                        where=f"{where}[{i}]",
                        found=show(list(b)),
                    )
                )
                break
    return problems


def label_set_problems(doc: Any, set_id: str, run_id: str, spec: dict[str, Any]) -> list[Problem]:
    """A label-set document against its ledger leaf (id, run) and its run spec (items, rubric)."""
    if not isinstance(doc, dict):
        return [Problem("a label set is an object", found=show(doc, 80))]
    problems = check_keys(doc, LABEL_SET_KEYS)
    if doc.get("type") != "label-set" or not (is_int(doc.get("v")) and doc["v"] == 2):
        problems.append(
            Problem(
                "wrong type or version",
                expected='"label-set", v 2',
                found=f"{show(doc.get('type'))}, v {show(doc.get('v'))}",
            )
        )
    if doc.get("id") != set_id:
        problems.append(
            Problem(
                "id differs from the ledger's label-set leaf", where="id", expected=set_id, found=show(doc.get("id"))
            )
        )
    if doc.get("run") != run_id:
        problems.append(
            Problem(
                "run differs from the ledger's label-set leaf", where="run", expected=run_id, found=show(doc.get("run"))
            )
        )
    rubric = spec.get("judge", {}).get("rubric_sha256") if isinstance(spec.get("judge"), dict) else None
    if doc.get("rubric_sha256") != rubric:
        problems.append(
            Problem(
                "the labellers' rubric is not the judge's: humans label with the rubric the run spec pins",
                where="rubric_sha256",
                expected=show(rubric),
                found=show(doc.get("rubric_sha256")),
            )
        )
    if "salt" in doc and not is_hex64(doc["salt"]):
        problems.append(Problem("a salt is 32 bytes in hex", where="salt", found=show(doc["salt"])))
    scale = doc.get("scale")
    bad_scale = scale_problems(scale)
    problems += bad_scale
    problems += label_rows_problems(doc.get("labels"), None if bad_scale else scale, set(spec.get("items", [])))
    return problems


def label_set_due(public: bool, certified: bool, items: Iterable[str], revealed: Container[str]) -> bool:
    """A label set and its report are published once the certificate has disclosed the judge's
    labels: at once on a public gate, on a secret one when every item of the run is revealed (a
    human label of a sealed item says how good the subject's answer was, as a pass would)."""
    return certified and (public or all(i in revealed for i in items))


def judge_labels_of(results: Iterable[Any]) -> dict[tuple[str, str], int]:
    """The judge's label by (item, dimension), from open results (a public certificate's, or the
    `result` of each published details document)."""
    out: dict[tuple[str, str], int] = {}
    for r in results:
        if (
            isinstance(r, dict)
            and isinstance(r.get("item"), str)
            and r.get("status") == "scored"
            and isinstance(r.get(JUDGE_LABELS), dict)
        ):
            for dim, label in r[JUDGE_LABELS].items():
                out[(r["item"], dim)] = label
    return out


def judge_coverage_problems(label_set: dict[str, Any], results: Iterable[Any]) -> list[Problem]:
    """Every scored result labelled by the judge on every dimension the label set's humans
    labelled: a judge's label left out where it would disagree would raise every figure."""
    dimensions = sorted({r["dimension"] for r in label_set["labels"]})
    problems = []
    for r in results:
        if not (isinstance(r, dict) and r.get("status") == "scored" and isinstance(r.get("item"), str)):
            continue
        labels = r.get(JUDGE_LABELS)
        missing = [d for d in dimensions if not (isinstance(labels, dict) and d in labels)]
        if missing:
            problems.append(
                Problem(
                    f"the judge did not label scored item {r['item']} on {', '.join(missing)}, which label set "
                    f"{label_set['id']} measures it on",
                    where=f"{r['item']}.{JUDGE_LABELS}",
                    expected=f"a label on each of {', '.join(dimensions)}",
                    found=show(sorted(labels) if isinstance(labels, dict) else None),
                )
            )
    return problems


def _figure(value: Fraction | None) -> dict[str, str] | None:
    if value is None:
        return None
    exact = f"{value.numerator}/{value.denominator}" if value.denominator != 1 else str(value.numerator)
    return {"exact": exact, "value": agreement_decimal(value) or ""}


def report_document(
    label_set: dict[str, Any], labels_sha256: str, serial: str, judge: Mapping[tuple[str, str], int]
) -> dict[str, Any]:
    """The published report of a valid label set against the judge's labels of certificate
    `serial`. AgreementError if a judge's label is not on the label set's scale."""
    human = [(r["labeller"], r["item"], r["dimension"], r["label"]) for r in label_set["labels"]]
    rows = agreement_report(human, judge, label_set["scale"])
    return {
        "type": REPORT_TYPE,
        "v": 2,
        "id": label_set["id"],
        "run": label_set["run"],
        "serial": serial,
        "labels": {"path": labels_path(label_set["id"]), "sha256": labels_sha256},
        "scale": label_set["scale"],
        "dimensions": [
            {
                "dimension": dim,
                "sample_size": row["sample_size"],
                "pairs": row["pairs"],
                "human_labels_without_judge": row["human_labels_without_judge"],
                **{k: _figure(row[k]) for k in STATISTICS},  # type: ignore[literal-required]
                "disagreements": [
                    {"item": item, "labeller": labeller, "human": h, "judge": j}
                    for item, labeller, h, j in row["disagreements"]
                ],
            }
            for dim, row in rows.items()
        ],
    }


# ==============================================================================================
# generator/verifier/rules/subjects.py: Subjects and the names people read (format v1 §6, FORMAT.md reading 22).
# ==============================================================================================

SUBJECT_KEYS = ("id", "name", "version", "organization")


# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties) that are not Cf already: the
# Hangul fillers, combining grapheme joiner, Mongolian and variation selectors, and the like.
_IGNORABLE_RE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)


# Unicode's recommended scripts for identifiers (UTS #31 table 4), by the first word of their
# letters' names. Scripts of limited use (Cherokee, whose letters look like Latin capitals, say)
# are not for names.
_RECOMMENDED_SCRIPTS = frozenset(
    {
        "LATIN",
        "GREEK",
        "CYRILLIC",
        "ARMENIAN",
        "HEBREW",
        "ARABIC",
        "GEORGIAN",
        "HAN",
        "HIRAGANA",
        "KATAKANA",
        "HANGUL",
        "BOPOMOFO",
        "DEVANAGARI",
        "BENGALI",
        "GURMUKHI",
        "GUJARATI",
        "ORIYA",
        "TAMIL",
        "TELUGU",
        "KANNADA",
        "MALAYALAM",
        "SINHALA",
        "THAI",
        "LAO",
        "TIBETAN",
        "MYANMAR",
        "ETHIOPIC",
        "KHMER",
        "THAANA",
    }
)


# The single scripts a name may combine with Latin and Han, as Unicode's "highly restrictive"
# profile does (UTS #39 §5.2): Japanese, Korean and Chinese writing mix them by nature.
_SCRIPT_SETS = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
)


_SCRIPT_ALIASES = {"CJK": "HAN", "IDEOGRAPHIC": "HAN", "KATAKANA-HIRAGANA": "KATAKANA"}


# Latin letters of real alphabets that are not an ASCII letter with marks. Any other Latin
# letter (phonetic letters, small capitals, clicks: "ᴄ", "ɑ", "ǀ") is refused: they exist to look
# like the plain ones.
_LATIN_EXTRA = frozenset("ßæÆøØœŒđĐłŁþÞðÐŋŊħĦ")


# What a letter looks like (after case folding): the Cyrillic, Greek and Armenian letters that
# look like Latin ones, Han characters that look like Katakana, and digits that look like
# letters. A subset of UTS #39's confusables, applied by subject_fold.
_CONFUSABLES = str.maketrans(
    {
        **dict(zip("асԁеһіјӏорԛѕуԝхүѵ", "acdehijlopqsywxyv", strict=True)),  # Cyrillic
        **dict(zip("αικνορτυχγω", "aikvoptuxyw", strict=True)),  # Greek
        **dict(zip("օսհոզ", "ouhnq", strict=True)),  # Armenian
        **dict(
            zip("力口工二八卜夕〇一", "カロエニハトタoー", strict=True)
        ),  # Han that reads as Katakana, ideographic zero
        "0": "o",
        "1": "i",
        "|": "i",
        "l": "i",
        "ı": "i",  # l, I and 1 look alike in most fonts
    }
)


def _script(ch: str) -> str | None:
    """The script of a letter or digit, from its Unicode name ("CYRILLIC CAPITAL LETTER O"), or
    None for what every script shares: punctuation, symbols, spaces, marks, ASCII digits."""
    category = unicodedata.category(ch)
    if category[0] not in "LN" or "0" <= ch <= "9":
        return None
    word = unicodedata.name(ch, "UNKNOWN").split()[0]
    if word == "DIGIT":
        return None
    return _SCRIPT_ALIASES.get(word, word)


def _odd_latin(ch: str) -> bool:
    """A Latin letter that is neither an ASCII letter (with or without marks) nor one of the
    ordinary letters of a real alphabet."""
    if ch.isascii() or ch in _LATIN_EXTRA or _script(ch) != "LATIN":
        return False
    base = unicodedata.normalize("NFD", ch)[0]
    return not (base.isascii() and base.isalpha())


def name_problems(text: Any, where: str, scripts: bool = True) -> list[Problem]:
    """Why a subject's name, version or organization (or a judge's provider) could mislead a
    reader, if it could.

    Refused: anything but a non-empty string; text not in NFC, or holding compatibility letters
    or digits (fullwidth, ligature or styled) whose plain form differs; control, format,
    private-use, unassigned or invisible characters (zero-width spaces, bidi controls, Hangul
    fillers); spaces other than U+0020, at either end or doubled; and, with `scripts`, letters of
    scripts not recommended for identifiers, odd Latin letters, and letters of scripts that are
    not written together (Latin with Cyrillic, say).
    """
    if not isinstance(text, str) or not text.strip():
        return [Problem("must be a non-empty string", where=where, found=show(text))]
    problems = []
    if not unicodedata.is_normalized("NFC", text):
        problems.append(
            Problem(
                "not in Unicode normal form NFC (the same letters written another way)", where=where, found=ascii(text)
            )
        )
    elif any(unicodedata.category(c)[0] in "LN" and unicodedata.normalize("NFKC", c) != c for c in text):
        problems.append(
            Problem(
                "holds compatibility characters (fullwidth, ligature or styled letters); write their plain form",
                where=where,
                expected=unicodedata.normalize("NFKC", text),
                found=ascii(text),
            )
        )
    hidden = sorted({f"U+{ord(c):04X}" for c in text if (not c.isprintable() and c != " ") or _IGNORABLE_RE.match(c)})
    if hidden:
        problems.append(
            Problem(
                "holds invisible, control or format characters",
                where=where,
                expected="visible characters and single spaces",
                found=", ".join(hidden[:10]),
            )
        )
    if text != " ".join(text.split(" ")).strip() or "  " in text:
        problems.append(Problem("begins or ends with a space, or holds two in a row", where=where, found=show(text)))
    if scripts:
        used = {sc for c in text if (sc := _script(c)) is not None}
        odd = sorted(used - _RECOMMENDED_SCRIPTS)
        if odd:
            problems.append(
                Problem(
                    "holds letters of a script not recommended for names (UTS #31)",
                    where=where,
                    expected="letters of a script in common use",
                    found=", ".join(odd),
                )
            )
        latin = sorted({f"{c} U+{ord(c):04X}" for c in text if _odd_latin(c)})
        if latin:
            problems.append(
                Problem(
                    "holds Latin letters made to look like others (phonetic letters, small capitals, clicks)",
                    where=where,
                    expected="letters of an alphabet, with or without accents",
                    found=", ".join(latin[:10]),
                )
            )
        if len(used) > 1 and not any(used <= allowed for allowed in _SCRIPT_SETS):
            problems.append(
                Problem(
                    "mixes letters of scripts that are not written together",
                    where=where,
                    expected="one script (Latin, Han and Kana, or Latin, Han and Hangul, may mix)",
                    found=", ".join(sorted(used)),
                )
            )
    return problems


def prose_problems(text: Any, where: str) -> list[Problem]:
    """Why a note people read beside a verdict (a revocation's reason) could mislead them, if it
    could: it must be a non-empty string of visible characters and plain spaces, on one line.
    A control or format character could hide words, reorder them (a bidi override) or forge a
    line of a terminal's report; a page shows the text as written."""
    if not isinstance(text, str) or not text.strip():
        return [Problem("must be a non-empty string", where=where, found=show(text))]
    hidden = sorted({f"U+{ord(c):04X}" for c in text if not c.isprintable() or _IGNORABLE_RE.match(c)})
    if hidden:
        return [
            Problem(
                "holds invisible, control or format characters",
                where=where,
                expected="visible characters and spaces, on one line",
                found=", ".join(hidden[:10]),
            )
        ]
    return []


def check_subject(subject: Any, where: str = "subject") -> list[Problem]:
    """A run's subject (format v1 §6 and FORMAT.md): an id, and a name, version and organization
    that each read as what they are."""
    problems = check_keys(subject, SUBJECT_KEYS, where=where)
    if not isinstance(subject, dict):
        return problems
    if "id" in subject and not is_id(subject["id"]):
        problems.append(
            Problem("a subject id is an id", where=f"{where}.id", expected=ID_RE.pattern, found=show(subject["id"]))
        )
    for k in ("name", "organization", "version"):
        if k in subject:
            problems += name_problems(subject[k], f"{where}.{k}", scripts=k != "version")
    return problems


def subject_fold(name: str) -> str:
    """What a name looks like: two names with the same fold would be read as one.

    NFKC, case folding, the confusables above (l, i and 1 become one letter), case folding
    again, and runs of spaces made one."""
    t = unicodedata.normalize("NFKC", name).casefold()
    return " ".join(t.translate(_CONFUSABLES).casefold().split())


def known_subject_problems(subject: Any, names: dict[str, str], folds: dict[str, str]) -> list[Problem]:
    """A new run's subject, against the subjects registered so far (`names`: id -> name, `folds`:
    subject_fold(name) -> id): well formed (check_subject), with one id for one name, and no
    two names that look alike. Then format v1 §6's rules, which follow a subject by its name,
    follow it by its id as well, and a look-alike name cannot start a fresh chain of
    attempts that sees sealed items again."""
    shape = check_subject(subject)
    if shape:
        return shape
    sid, name = subject["id"], subject["name"]
    known = names.get(sid)
    if known is not None and known != name:
        return [
            Problem(
                f"subject {sid} was registered as {known!r}: a subject keeps its name (a new name is a new "
                "subject, with a new id)",
                where="subject.name",
                expected=known,
                found=name,
            )
        ]
    other = folds.get(subject_fold(name))
    if other is not None and other != sid:
        return [
            Problem(
                f"the name looks like the name of subject {other} ({names[other]!r}): two subjects "
                "cannot have names a reader would confuse",
                where="subject.name",
                expected=f"a name unlike {names[other]!r}, or subject id {other}",
                found=f"{name!r} for subject id {sid}",
            )
        ]
    return []


# ==============================================================================================
# generator/verifier/rules/withdrawals.py: Withdrawn runs (format v2, FORMAT.md "Events v2 adds: run withdrawal"): a
#     registered run that will never be run.
# ==============================================================================================

RUN_WITHDRAWN = "run-withdrawn"


@dataclass(frozen=True)
class Revocation:
    serial: str
    reason: str
    index: int
    at: str


@dataclass(frozen=True)
class Withdrawal:
    run: str
    reason: str
    index: int
    at: str


def withdrawal_problems(
    leaf: dict[str, Any], registered: bool, certificate: str | None, earlier: Withdrawal | None
) -> list[Problem]:
    """The rules of a run-withdrawn leaf, given what the ledger says of its run so far."""
    run = leaf["run"]
    problems = prose_problems(leaf["reason"], "reason")
    if not registered:
        problems.append(Problem("withdrawal of a run that was not registered before", where="run", found=run))
    elif certificate is not None:
        problems.append(Problem(f"run {run} already has a certificate ({certificate}): revoke it instead", where="run"))
    elif earlier is not None:
        problems.append(Problem(f"run {run} is withdrawn twice (first at entries[{earlier.index}])", where="run"))
    return problems


# ==============================================================================================
# generator/verifier/rules/events.py: The ledger's events as the replay keeps them (format v1 §4): one frozen record
#     per kind, with the leaf index and time it was recorded at.
# ==============================================================================================

@dataclass(frozen=True)
class Gate:
    id: str
    name: str
    public: bool
    index: int
    at: str


@dataclass(frozen=True)
class MethodologyEvent:
    version: str
    sha256: str
    index: int
    at: str


@dataclass(frozen=True)
class Commit:
    id: str
    gate: str
    commitment: str
    index: int
    at: str


@dataclass(frozen=True)
class Reveal:
    id: str
    reason: str
    note: str
    index: int
    at: str


@dataclass(frozen=True)
class RunEvent:
    id: str
    sha256: str
    subject: dict[str, Any]
    gate: str
    index: int
    at: str


@dataclass(frozen=True)
class CertificateEvent:
    serial: str
    run: str
    sha256: str
    index: int
    at: str


# ==============================================================================================
# generator/verifier/rules/draws.py: Draws by a public randomness beacon (FORMAT.md, "Draws and timestamps"): the
#     sampler that turns a round's randomness into items, and the two ledger events that record a draw.
# ==============================================================================================

DRAW = "draw"


RETIREMENT_DRAW = "retirement-draw"


DRAW_DOMAIN = b"transparency-draw/v1\x00"


MAX_DRAWN_ITEMS = 500  # the items a leaf lists: 500 ids of 64 characters fit a C2SP entry's 64 KiB


MAX_ROUND = 2**64 - 1  # drand's rounds are unsigned 64-bit numbers


_TWO_64 = 1 << 64


@dataclass(frozen=True)
class Draw:
    """A drawn run's `draw` leaf: the round that chose its items, and the items."""

    run: str
    round: int
    signature: str
    items: tuple[str, ...]
    index: int
    at: str


@dataclass(frozen=True)
class RetirementDraw:
    """A `retirement-draw` leaf: the scheduled round, the items it retired, and the time of the
    leaf before it (the pool was fixed by events all dated before the round)."""

    round: int
    signature: str
    items: tuple[str, ...]
    index: int
    at: str
    previous_at: str


def draw_seed(randomness: bytes, purpose: str) -> bytes:
    """The sampler's seed: the round's randomness bound to what is drawn ("run:<id>" or
    "retirement:<round>")."""
    return hashlib.sha256(DRAW_DOMAIN + randomness + purpose.encode("utf-8")).digest()


def _uniform_below(seed: bytes, step: int, bound: int) -> int:
    """A uniform integer in [0, bound) for sampler step `step`: 64-bit words of
    SHA-256(seed || step || try), the first one below the largest multiple of `bound` taken."""
    limit = _TWO_64 - _TWO_64 % bound
    attempt = 0
    while True:
        word = hashlib.sha256(seed + step.to_bytes(4, "big") + attempt.to_bytes(4, "big")).digest()[:8]
        x = int.from_bytes(word, "big")
        if x < limit:
            return x % bound
        attempt += 1


def draw_positions(pool_size: int, count: int, seed: bytes) -> list[int]:
    """Positions (0-based, in the sorted pool) of `min(count, pool_size)` distinct items, in the
    order drawn: step j swaps position j with position j + uniform(pool_size - j)."""
    swapped: dict[int, int] = {}
    picked = []
    for j in range(min(count, pool_size)):
        k = j + _uniform_below(seed, j, pool_size - j)
        at_k = swapped.get(k, k)
        swapped[k] = swapped.get(j, j)
        picked.append(at_k)
    return picked


def utf8_sorted(ids: list[str]) -> list[str]:
    """Ids in the order of their UTF-8 bytes (for ids, which are ASCII, plain string order)."""
    return sorted(ids, key=lambda i: i.encode("utf-8"))


def draw_items(pool: list[str], randomness: bytes, purpose: str, count: int) -> list[str]:
    """The items a round draws from `pool` (any order: it is sorted here), in sorted order."""
    ordered = utf8_sorted(pool)
    return utf8_sorted([ordered[p] for p in draw_positions(len(ordered), count, draw_seed(randomness, purpose))])


def _round_and_items_problems(leaf: dict[str, Any]) -> list[Problem]:
    problems = []
    if not (is_int(leaf["round"]) and 1 <= leaf["round"] <= MAX_ROUND):
        problems.append(Problem("must be a round number, 1 to 2^64 - 1", where="round", found=show(leaf["round"], 40)))
    sig = leaf["signature"]
    if not (isinstance(sig, str) and len(sig) == 96 and all(c in "0123456789abcdef" for c in sig)):
        problems.append(
            Problem("malformed round signature", where="signature", expected="96 lowercase hex digits", found=show(sig))
        )
    items = leaf["items"]
    if not (isinstance(items, list) and all(is_id(i) for i in items)):
        problems.append(Problem("must be a list of item ids", where="items", expected=ID_RE.pattern, found=show(items)))
    elif len(set(items)) != len(items):
        problems.append(Problem("items must be distinct", where="items", found=show(items)))
    elif items != utf8_sorted(items):
        problems.append(Problem("items must be in sorted order", where="items", expected=show(utf8_sorted(items))))
    elif len(items) > MAX_DRAWN_ITEMS:
        problems.append(Problem("too many items", where="items", expected=f"at most {MAX_DRAWN_ITEMS}"))
    return problems


def draw_event_problems(
    leaf: dict[str, Any], registered: bool, decided: str | None, earlier: Draw | None
) -> list[Problem]:
    """A `draw` leaf: a round's draw for a run registered before it and not yet decided, once."""
    run = leaf["run"]
    problems = _round_and_items_problems(leaf)
    if not registered:
        problems.append(Problem("draw for a run that was not registered before", where="run", found=show(run)))
    elif earlier is not None:
        problems.append(Problem(f"run {run} is drawn twice (first at entries[{earlier.index}])", where="run"))
    elif decided is not None:
        problems.append(Problem(f"run {run} was already decided ({decided}) when its items were drawn", where="run"))
    if isinstance(leaf["items"], list) and not leaf["items"]:
        problems.append(Problem("a run's draw lists its items", where="items", expected="at least one item"))
    return problems


def retirement_draw_event_problems(leaf: dict[str, Any]) -> list[Problem]:
    """A `retirement-draw` leaf's shape (what it retires follows it: a reveal per item, in order)."""
    return _round_and_items_problems(leaf)


def pending_reveal_problem(expected: str, leaf: dict[str, Any], draw: RetirementDraw) -> Problem | None:
    """The leaf after a retirement draw must reveal its next item, as retired."""
    if leaf.get("type") == "reveal" and leaf.get("id") == expected and leaf.get("reason") == "retired":
        return None
    return Problem(
        f"the retirement drawn at entries[{draw.index}] must be followed by the reveal of each item it drew, in order",
        where="",
        expected=f'a reveal of {expected}, reason "retired"',
        found=f"{show(leaf.get('type'))} {show(leaf.get('id'))}",
    )


# ==============================================================================================
# generator/verifier/tlog/keyring.py: The program's keys over the ledger's history (format v2): which key may sign a
#     tree of which size.
# ==============================================================================================

KEY_ROTATION = "key-rotation"


KEY_REVOCATION = "key-revocation"


KEY_ADDITION = "key-addition"


K = TypeVar("K", VerifierKey, CosignerKey)


@dataclass
class KeySpan(Generic[K]):
    key: K
    valid_from: str | None  # the rotation's time; None for the first key (keys.json says)
    first_size: int
    valid_until: str | None = None
    last_size: int | None = None  # None: still valid for every later tree
    reason: str | None = None  # set when revoked
    compromised_at: str | None = None

    def covers(self, size: int) -> bool:
        return self.first_size <= size and (self.last_size is None or size <= self.last_size)

    @property
    def status(self) -> str:
        if self.reason is not None:
            return "revoked"
        return "active" if self.last_size is None else "retired"


@dataclass
class KeyRing:
    """Replayed from the ledger's key events. The first key is learnt from the first rotation's
    `replaces` (or, without rotations, from keys.json), so the ledger needs no key of its own."""

    spans: list[KeySpan[VerifierKey]] = field(default_factory=list)
    ml_dsa: list[KeySpan[CosignerKey]] = field(default_factory=list)  # the ML-DSA-44 keys, if any
    _time_starts: list[str] = field(default_factory=list)  # each distinct leaf time, in order
    _time_index: list[int] = field(default_factory=list)  # the first leaf index with that time

    def note_time(self, index: int, at: str) -> None:
        if not self._time_starts or at != self._time_starts[-1]:
            self._time_starts.append(at)
            self._time_index.append(index)

    def leaf_time(self, index: int) -> str:
        """The time of leaf `index` (one the ring has noted)."""
        return self._time_starts[bisect.bisect_right(self._time_index, index) - 1]

    def leaves_before(self, at: str, size: int) -> int:
        """How many of the first `size` leaves are older than `at`."""
        i = bisect.bisect_left(self._time_starts, at)
        return min(size, self._time_index[i]) if i < len(self._time_index) else size

    def span(self, vkey: str) -> KeySpan[Any] | None:
        """The span of the key `vkey`, of either line of keys."""
        found: KeySpan[Any] | None = next((s for s in self.spans if s.key.vkey == vkey), None)
        return found or next((s for s in self.ml_dsa if s.key.vkey == vkey), None)

    @property
    def active(self) -> KeySpan[VerifierKey] | None:
        return _active(self.spans)

    @property
    def active_ml_dsa(self) -> KeySpan[CosignerKey] | None:
        return _active(self.ml_dsa)

    def valid_at(self, size: int) -> list[VerifierKey]:
        return [s.key for s in self.spans if s.covers(size)]

    def newest_at(self, size: int) -> VerifierKey | None:
        """The Ed25519 key that must sign a checkpoint of `size`: the newest key valid for it."""
        return _newest_at(self.spans, size)

    def newest_ml_dsa_at(self, size: int) -> CosignerKey | None:
        """The ML-DSA-44 key that must sign a checkpoint of `size`, if the log had one by then."""
        return _newest_at(self.ml_dsa, size)

    def start(self, key: VerifierKey) -> None:
        if not self.spans:
            self.spans.append(KeySpan(key, None, 0))

    def apply_rotation(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        try:
            new_ml = parse_cosigner_vkey(leaf["vkey"])
        except FormatError:
            new_ml = None
        if new_ml is not None:
            return self._rotate_ml_dsa(index, leaf, new_ml)
        try:
            new = parse_vkey(leaf["vkey"])
            old = parse_vkey(leaf["replaces"])
        except FormatError as e:
            return [Problem(f"not a verifier key: {e}", where="vkey")]
        self.start(old)
        return _rotate(self.spans, index, leaf, old, new, self.span(new.vkey) is not None)

    def _rotate_ml_dsa(self, index: int, leaf: dict[str, Any], new: CosignerKey) -> list[Problem]:
        try:
            old = parse_cosigner_vkey(leaf["replaces"])
        except FormatError as e:
            return [Problem(f"not an ML-DSA-44 key as the new one is: {e}", where="replaces")]
        if new.kind != ML_DSA_44 or old.kind != ML_DSA_44:
            return [Problem("a log's second line of keys is ML-DSA-44 (type 0x06)", where="vkey", found=new.vkey)]
        return _rotate(self.ml_dsa, index, leaf, old, new, self.span(new.vkey) is not None)

    def apply_addition(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        """A `key-addition`: the log's first ML-DSA-44 key, valid from the tree that holds it."""
        try:
            key = parse_cosigner_vkey(leaf["vkey"])
        except FormatError as e:
            return [Problem(f"not an ML-DSA-44 verifier key (type 0x06): {e}", where="vkey")]
        if key.kind != ML_DSA_44:
            return [Problem("a key-addition adds an ML-DSA-44 key (type 0x06)", where="vkey", found=key.vkey)]
        if self.ml_dsa:
            return [
                Problem(
                    "the log has an ML-DSA-44 key already: replace it with a key-rotation",
                    where="vkey",
                    found=key.vkey,
                )
            ]
        if self.spans and key.name != self.spans[0].key.name:
            return [Problem("the key must have the log's name", where="vkey", expected=self.spans[0].key.name)]
        self.ml_dsa.append(KeySpan(key, leaf["at"], index + 1))
        return []

    def apply_revocation(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        span = self.span(leaf["vkey"]) if isinstance(leaf["vkey"], str) else None
        if span is None:
            return [Problem("revokes a key the ledger never introduced", where="vkey", found=show(leaf["vkey"]))]
        if span.reason is not None:
            return [Problem("this key is already revoked", where="vkey", found=span.key.vkey)]
        if span is self.active or span is self.active_ml_dsa:
            return [Problem("the active key cannot be revoked: rotate to a new key first", where="vkey")]
        problems = []
        if not leaf["reason"].strip():
            problems.append(Problem("a revocation needs a reason", where="reason"))
        compromised = leaf["compromised_at"]
        if compromised > leaf["at"]:
            problems.append(
                Problem("a compromise cannot be recorded before it happens", where="compromised_at", found=compromised)
            )
        if problems:
            return problems
        span.reason, span.compromised_at = leaf["reason"], compromised
        span.valid_until = min(span.valid_until or compromised, compromised)
        # The trees whose every leaf is older than the compromise: none of them can hold a leaf
        # an attacker with the key could have signed.
        last = self.leaves_before(compromised, index + 1)
        span.last_size = last if span.last_size is None else min(span.last_size, last)
        return []

    def rows(self, first_valid_from: str) -> list[dict[str, Any]]:
        """keys.json's rows as the ledger implies them (without public_key, fingerprint, pem)."""
        return [_row(s, first_valid_from) for s in self.spans]

    def ml_dsa_rows(self) -> list[dict[str, Any]]:
        """keys.json's `ml_dsa_44_keys` rows as the ledger implies them (without public_key and
        fingerprint): every ML-DSA-44 key entered by a leaf, so each has its own time."""
        return [_row(s, "") for s in self.ml_dsa]


def _row(s: KeySpan[Any], first_valid_from: str) -> dict[str, Any]:
    row: dict[str, Any] = {
        "status": s.status,
        "valid_from": s.valid_from or first_valid_from,
        "valid_until": s.valid_until,
        "vkey": s.key.vkey,
    }
    if s.reason is not None:
        row["reason"] = s.reason
    return row


def _active(spans: list[KeySpan[K]]) -> KeySpan[K] | None:
    return spans[-1] if spans and spans[-1].reason is None else None


def _newest_at(spans: list[KeySpan[K]], size: int) -> K | None:
    valid = [s.key for s in spans if s.covers(size) and s.reason is None] or [s.key for s in spans if s.covers(size)]
    return valid[-1] if valid else None


def _rotate(
    spans: list[KeySpan[K]], index: int, leaf: dict[str, Any], old: K, new: K, used_before: bool
) -> list[Problem]:
    """Replace the active key of one line of keys (`spans`) by `new`, from the tree that holds
    the rotation: the problems if `old` is not that active key or `new` cannot follow it."""
    current = _active(spans)
    if current is None or current.key != old:
        want = current.key.vkey if current else "(no active key: the last one was revoked)"
        return [Problem("replaces a key that is not the active one", where="replaces", expected=want, found=old.vkey)]
    if new.name != old.name:
        return [Problem("the new key must have the log's name", where="vkey", expected=old.name, found=new.name)]
    if used_before:
        return [Problem("this key was used before: a key is introduced once", where="vkey", found=new.vkey)]
    current.valid_until, current.last_size = leaf["at"], index + 1
    spans.append(KeySpan(new, leaf["at"], index + 1))
    return []


# ==============================================================================================
# generator/verifier/rules/ledger.py: The ledger (format v1 §4, and format v2's events): its event types, and the
#     replay checking every rule in order.
# ==============================================================================================

MAX_LEAF_BYTES = 65535


LEAF_KEYS: dict[str, tuple[str, ...]] = {
    "gate": ("type", "v", "id", "name", "public", "at"),
    "methodology": ("type", "v", "version", "sha256", "at"),
    "commit": ("type", "v", "id", "gate", "commitment", "at"),
    "reveal": ("type", "v", "id", "reason", "note", "at"),
    "run": ("type", "v", "id", "sha256", "subject", "gate", "at"),
    "certificate": ("type", "v", "serial", "run", "sha256", "at"),
    "revocation": ("type", "v", "serial", "reason", "at"),
    "label-set": ("type", "v", "id", "run", "sha256", "at"),
    KEY_ROTATION: ("type", "v", "vkey", "replaces", "at"),
    KEY_REVOCATION: ("type", "v", "vkey", "reason", "compromised_at", "at"),
    KEY_ADDITION: ("type", "v", "vkey", "at"),
    RUN_WITHDRAWN: ("type", "v", "run", "reason", "at"),
    DRAW: ("type", "v", "run", "round", "signature", "items", "at"),
    RETIREMENT_DRAW: ("type", "v", "round", "signature", "items", "at"),
}


# An event that format v2 adds carries v 2, so that a v1 verifier refuses it rather than misread it.
LEAF_VERSIONS = {"revocation": 2, "label-set": 2, KEY_ROTATION: 2, KEY_REVOCATION: 2, RUN_WITHDRAWN: 2}


LEAF_VERSIONS |= {DRAW: 2, RETIREMENT_DRAW: 2, KEY_ADDITION: 2}


_LEAF_KEY_SETS = {kind: frozenset(keys) for kind, keys in LEAF_KEYS.items()}


# The JSON type of each member (beyond type, v and at), checked before any lookup uses it.
_LEAF_TYPES: dict[str, dict[str, type]] = {
    "gate": {"id": str, "name": str, "public": bool},
    "methodology": {"version": str, "sha256": str},
    "commit": {"id": str, "gate": str, "commitment": str},
    "reveal": {"id": str, "reason": str, "note": str},
    "run": {"id": str, "sha256": str, "subject": dict, "gate": str},
    "certificate": {"serial": str, "run": str, "sha256": str},
    "revocation": {"serial": str, "reason": str},
    "label-set": {"id": str, "run": str, "sha256": str},
    KEY_ROTATION: {"vkey": str, "replaces": str},
    KEY_REVOCATION: {"vkey": str, "reason": str, "compromised_at": str},
    KEY_ADDITION: {"vkey": str},
    RUN_WITHDRAWN: {"run": str, "reason": str},
    DRAW: {"run": str, "signature": str, "items": list},
    RETIREMENT_DRAW: {"signature": str, "items": list},
}


_TYPE_WORDS = {str: "a string", bool: "true or false", dict: "an object", list: "a list"}


Rule = Callable[[int, dict[str, Any]], list[Problem]]


class Ledger:
    """Replays ledger leaves in order, keeping what later checks need and nothing more.

    Built for a million commits: per committed item it keeps about 70 bytes in flat arrays (id,
    commitment, leaf index, gate, time) and no Python object, never the leaf itself. Used by the
    verifier on a site and by the generator on its data, so both enforce the same rules.
    """

    def __init__(self) -> None:
        self.size = 0
        self.last_at = ""
        self.gates: dict[str, Gate] = {}
        self.methodologies: dict[str, MethodologyEvent] = {}
        self.reveals: dict[str, Reveal] = {}
        self.runs: dict[str, RunEvent] = {}
        self.certificates: dict[str, CertificateEvent] = {}
        self.certificate_of_run: dict[str, str] = {}
        self.revocations: dict[str, Revocation] = {}  # by serial, in ledger order
        self.label_sets: dict[str, LabelSetEvent] = {}  # blind human label sets, in ledger order
        self.withdrawals: dict[str, Withdrawal] = {}  # by run, in ledger order
        self.draws: dict[str, Draw] = {}  # drawn runs' draws, by run
        self.retirement_draws: list[RetirementDraw] = []  # in ledger order
        self.drawn_retirement: dict[str, int] = {}  # item -> its retirement draw's position in that list
        self._pending_reveals: list[str] = []  # what the last retirement draw still has to reveal, reversed
        self.keys = KeyRing()  # the program's keys over time (format v2 key events)
        # The runs of each (subject name, gate), in ledger order: previous_run and the
        # one-observation rule look at one subject's runs, never at all of them.
        self.runs_by_subject: dict[tuple[str, str], list[RunEvent]] = {}
        self.subject_names: dict[str, str] = {}  # subject id -> its name
        self._subject_folds: dict[str, str] = {}  # subject_fold(name) -> subject id
        self._commit_ids = IdIndex()
        self._commit_index = array("q")
        self._commit_gate = array("H")
        self._commitments = bytearray()
        # `at` never decreases, so times are stored once each and commits point at them.
        self._times: list[str] = []
        self._commit_time = array("I")
        self._gate_ids: list[str] = []
        self._gate_ordinals: dict[str, int] = {}
        self._previous_at = ""

    # -- queries

    @property
    def commit_count(self) -> int:
        return len(self._commit_ids)

    def is_committed(self, item_id: str) -> bool:
        return item_id in self._commit_ids

    def commit_position(self, item_id: str) -> int | None:
        return self._commit_ids.get(item_id)  # its row in the commitment list, counted from 0

    def commitment_bytes(self, stop: int) -> bytes:
        return bytes(self._commitments[: 32 * stop])  # the first `stop` commitments, 32 bytes each

    def commit(self, item_id: str) -> Commit | None:
        n = self._commit_ids.get(item_id)
        return None if n is None else self._commit_at(n)

    def commit_place(self, item_id: str) -> tuple[int, str] | None:  # leaf and gate: what a run asks of its items
        n = self._commit_ids.get(item_id)
        return None if n is None else (self._commit_index[n], self._gate_ids[self._commit_gate[n]])

    def _commit_at(self, n: int) -> Commit:
        gate, at = self._gate_ids[self._commit_gate[n]], self._times[self._commit_time[n]]
        commitment = self._commitments[32 * n : 32 * n + 32].hex()
        return Commit(self._commit_ids.key(n), gate, commitment, self._commit_index[n], at)

    def commits(self, start: int = 0, stop: int | None = None) -> Iterator[Commit]:
        """Commits in ledger order (the `start`-th up to the `stop`-th)."""
        for n in range(start, len(self._commit_ids) if stop is None else min(stop, len(self._commit_ids))):
            yield self._commit_at(n)

    def commits_before(self, index: int) -> int:  # how many commits precede leaf `index`
        return bisect.bisect_left(self._commit_index, index)

    def runs_before(self, run: RunEvent) -> list[RunEvent]:
        """The runs registered before `run` for the same subject name and gate, in order."""
        runs = self.runs_by_subject.get((str(run.subject.get("name")), run.gate), [])
        return runs[: bisect.bisect_left(runs, run.index, key=lambda r: r.index)]

    def public_gates(self) -> set[str]:
        return {g.id for g in self.gates.values() if g.public}

    def gate_counts(self) -> dict[str, tuple[int, int]]:  # per gate: its items committed, and revealed
        committed = Counter(self._commit_gate)
        revealed = Counter(self._commit_gate[self._commit_ids.get(i) or 0] for i in self.reveals)  # all committed
        return {g: (committed[o], revealed[o]) for o, g in enumerate(self._gate_ids)}

    # -- replay

    def apply(self, leaf: Any, leaf_size: int | None = None) -> list[Problem]:
        """Apply the next leaf; return the rules it breaks (each located as 'entries[i]')."""
        index = self.size
        self.size += 1
        where = f"entries[{index}]"
        problems = self._apply(index, leaf, leaf_size)
        return [p.at("", where) for p in problems]

    def _apply(self, index: int, leaf: Any, leaf_size: int | None) -> list[Problem]:
        if not isinstance(leaf, dict):
            return [Problem("a leaf must be an object", found=type_name(leaf))]
        if leaf_size is not None and leaf_size > MAX_LEAF_BYTES:
            limit, size = f"at most {MAX_LEAF_BYTES} bytes", f"{leaf_size} bytes"
            return [Problem("leaf is larger than a C2SP entry bundle allows", "", "", limit, size)]
        if self._pending_reveals:
            pending = pending_reveal_problem(self._pending_reveals.pop(), leaf, self.retirement_draws[-1])
            if pending is not None:
                self._pending_reveals.clear()
                return [pending]
        kind = leaf.get("type")
        keys = LEAF_KEYS.get(kind) if isinstance(kind, str) else None
        if keys is None or not isinstance(kind, str):
            expected = " | ".join(LEAF_KEYS)
            return [Problem("unknown event type (a v1 verifier never skips one)", "", "type", expected, show(kind))]
        problems = [] if leaf.keys() == _LEAF_KEY_SETS[kind] else check_keys(leaf, keys)
        version = LEAF_VERSIONS.get(kind, 1)
        if not (is_int(leaf.get("v")) and leaf["v"] == version):
            problems.append(Problem("unsupported version", where="v", expected=str(version), found=show(leaf.get("v"))))
        at = leaf.get("at")
        if not is_time(at):
            problems.append(Problem("malformed time", where="at", expected="YYYY-MM-DDTHH:MM:SSZ", found=show(at)))
        elif at < self.last_at:
            problems.append(Problem("time goes backwards", where="at", expected=f"{self.last_at} or later", found=at))
        else:
            previous_at, self.last_at = self.last_at, at
            self.keys.note_time(index, at)
            if kind == RETIREMENT_DRAW:
                self._previous_at = previous_at
        for k, t in _LEAF_TYPES[kind].items():
            if k in leaf and type(leaf[k]) is not t:
                problems.append(Problem(f"{k} must be {_TYPE_WORDS[t]}", where=k, found=show(leaf[k])))
        if problems:
            return problems
        ring = {KEY_ROTATION: self.keys.apply_rotation, KEY_ADDITION: self.keys.apply_addition}
        apply: Rule = ring.get(kind) or getattr(self, f"_apply_{kind.replace('-', '_')}")
        return apply(index, leaf)

    def _apply_gate(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        gid = leaf["id"]
        problems = []
        if not is_gate_id(gid):
            problems.append(Problem("malformed gate id", where="id", expected=GATE_RE.pattern, found=show(gid)))
        if not (isinstance(leaf["name"], str) and leaf["name"]):
            problems.append(Problem("gate name must be a non-empty string", where="name", found=show(leaf["name"])))
        if not isinstance(leaf["public"], bool):
            problems.append(Problem("must be true or false", where="public", found=show(leaf["public"])))
        if gid in self.gates:
            problems.append(
                Problem(
                    f"gate {gid} is declared twice",
                    where="id",
                    expected="declared once",
                    found=f"declared before at entries[{self.gates[gid].index}]",
                )
            )
        if problems:
            return problems
        if len(self._gate_ids) >= 65535:
            return [Problem("too many gates")]
        self.gates[gid] = Gate(gid, leaf["name"], leaf["public"], index, leaf["at"])
        self._gate_ordinals[gid] = len(self._gate_ids)
        self._gate_ids.append(gid)
        return []

    def _apply_methodology(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        version, digest = leaf["version"], leaf["sha256"]
        problems = []
        if not (isinstance(version, str) and VERSION_RE.fullmatch(version)):
            problems.append(
                Problem(
                    "malformed methodology version", where="version", expected=VERSION_RE.pattern, found=show(version)
                )
            )
        if not is_hex64(digest):
            problems.append(
                Problem("malformed hash", where="sha256", expected="64 lowercase hex digits", found=show(digest))
            )
        if version in self.methodologies:
            problems.append(
                Problem(
                    f"methodology {version} is published twice",
                    where="version",
                    found=f"published before at entries[{self.methodologies[version].index}]",
                )
            )
        if not problems:
            self.methodologies[version] = MethodologyEvent(version, digest, index, leaf["at"])
        return problems

    def _apply_commit(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        item_id, gate, commitment = leaf["id"], leaf["gate"], leaf["commitment"]
        problems = []
        if not is_id(item_id):
            problems.append(Problem("malformed item id", where="id", expected=ID_RE.pattern, found=show(item_id)))
        elif (earlier := self._commit_ids.get(item_id)) is not None:
            problems.append(
                Problem(
                    f"item {item_id} is committed twice",
                    where="id",
                    found=f"committed before at entries[{self._commit_index[earlier]}]",
                )
            )
        if gate not in self.gates:
            problems.append(
                Problem(
                    "commit to a gate that was not declared before",
                    where="gate",
                    expected=", ".join(self.gates) or "a declared gate",
                    found=show(gate),
                )
            )
        if not is_hex64(commitment):
            problems.append(
                Problem(
                    "malformed commitment",
                    where="commitment",
                    expected="64 lowercase hex digits",
                    found=show(commitment),
                )
            )
        if problems:
            return problems
        self._commit_ids.add(item_id)
        self._commit_index.append(index)
        self._commit_gate.append(self._gate_ordinals[gate])
        self._commitments += bytes.fromhex(commitment)
        if not self._times or self._times[-1] != leaf["at"]:
            self._times.append(leaf["at"])
        self._commit_time.append(len(self._times) - 1)
        return []

    def _apply_reveal(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        item_id, reason, note = leaf["id"], leaf["reason"], leaf["note"]
        problems = []
        c = self.commit(item_id) if isinstance(item_id, str) else None
        if c is None:
            problems.append(Problem("reveal of an item that was not committed before", where="id", found=show(item_id)))
        elif item_id in self.reveals:
            problems.append(
                Problem(
                    f"item {item_id} is revealed twice",
                    where="id",
                    found=f"revealed before at entries[{self.reveals[item_id].index}]",
                )
            )
        if reason not in REVEAL_REASONS:
            problems.append(
                Problem(
                    "unknown reveal reason", where="reason", expected=" | ".join(REVEAL_REASONS), found=show(reason)
                )
            )
        elif c is not None:
            # The reason states which kind of gate the item is from; a mismatch misleads readers.
            want = "public-gate" if self.gates[c.gate].public else "retired"
            if reason != want:
                problems.append(
                    Problem(f"reason does not match gate {c.gate}", where="reason", expected=want, found=reason)
                )
        if not isinstance(note, str):
            problems.append(Problem("note must be a string", where="note", found=type_name(note)))
        if not problems:
            self.reveals[item_id] = Reveal(item_id, reason, note, index, leaf["at"])
        return problems

    def _apply_run(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        run_id = leaf["id"]
        problems = []
        if not is_id(run_id):
            problems.append(Problem("malformed run id", where="id", expected=ID_RE.pattern, found=show(run_id)))
        elif run_id in self.runs:
            problems.append(
                Problem(
                    f"run {run_id} is registered twice",
                    where="id",
                    found=f"registered before at entries[{self.runs[run_id].index}]",
                )
            )
        if not is_hex64(leaf["sha256"]):
            problems.append(Problem("malformed hash", where="sha256", found=show(leaf["sha256"])))
        problems += self.subject_problems(leaf["subject"])
        if leaf["gate"] not in self.gates:
            problems.append(
                Problem("run on a gate that was not declared before", where="gate", found=show(leaf["gate"]))
            )
        if not problems:
            sid, name = leaf["subject"]["id"], leaf["subject"]["name"]
            self.subject_names.setdefault(sid, name)
            self._subject_folds.setdefault(subject_fold(name), sid)
            self.runs[run_id] = RunEvent(run_id, leaf["sha256"], leaf["subject"], leaf["gate"], index, leaf["at"])
            self.runs_by_subject.setdefault((name, leaf["gate"]), []).append(self.runs[run_id])
        return problems

    def subject_problems(self, subject: Any) -> list[Problem]:
        """A new run's subject: subjects.known_subject_problems, against the subjects so far."""
        return known_subject_problems(subject, self.subject_names, self._subject_folds)

    def _apply_certificate(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        serial, run_id = leaf["serial"], leaf["run"]
        problems = []
        if not is_id(serial):
            problems.append(Problem("malformed serial", where="serial", expected=ID_RE.pattern, found=show(serial)))
        elif serial in self.certificates:
            problems.append(
                Problem(
                    f"serial {serial} is used twice",
                    where="serial",
                    found=f"used before at entries[{self.certificates[serial].index}]",
                )
            )
        if run_id not in self.runs:
            problems.append(
                Problem("certificate for a run that was not registered before", where="run", found=show(run_id))
            )
        elif run_id in self.certificate_of_run:
            problems.append(
                Problem(f"run {run_id} already has a certificate", where="run", found=self.certificate_of_run[run_id])
            )
        elif run_id in self.withdrawals:
            problems.append(
                Problem(f"run {run_id} was withdrawn at entries[{self.withdrawals[run_id].index}]", "", "run")
            )
        if not is_hex64(leaf["sha256"]):
            problems.append(Problem("malformed hash", where="sha256", found=show(leaf["sha256"])))
        if not problems:
            self.certificates[serial] = CertificateEvent(serial, run_id, leaf["sha256"], index, leaf["at"])
            self.certificate_of_run[run_id] = serial
        return problems

    def _apply_key_revocation(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        if not is_time(leaf["compromised_at"]):
            return [Problem("malformed time", where="compromised_at", expected="YYYY-MM-DDTHH:MM:SSZ")]
        problems = prose_problems(leaf["reason"], "reason")
        return problems or self.keys.apply_revocation(index, leaf)

    def _apply_revocation(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        serial, earlier = leaf["serial"], self.revocations.get(leaf["serial"])
        problems = prose_problems(leaf["reason"], "reason")
        if serial not in self.certificates:
            problems.append(
                Problem("revocation of a certificate that was not issued before", "", "serial", found=serial)
            )
        elif earlier is not None:
            problems.append(
                Problem(f"certificate {serial} is revoked twice (first at entries[{earlier.index}])", where="serial")
            )
        if not problems:
            self.revocations[serial] = Revocation(serial, leaf["reason"], index, leaf["at"])
        return problems

    def _apply_run_withdrawn(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        run = leaf["run"]
        found = withdrawal_problems(leaf, run in self.runs, self.certificate_of_run.get(run), self.withdrawals.get(run))
        if not found:
            self.withdrawals[run] = Withdrawal(run, leaf["reason"], index, leaf["at"])
        return found

    def _apply_draw(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        run, decided = leaf["run"], self.certificate_of_run.get(leaf["run"])
        if decided is None and run in self.withdrawals:
            decided = f"withdrawn at entries[{self.withdrawals[run].index}]"
        problems = draw_event_problems(leaf, run in self.runs, decided, self.draws.get(run))
        if not problems:
            self.draws[run] = Draw(run, leaf["round"], leaf["signature"], tuple(leaf["items"]), index, leaf["at"])
        return problems

    def _apply_retirement_draw(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        problems = retirement_draw_event_problems(leaf)
        if not problems:
            items = tuple(leaf["items"])
            self.retirement_draws.append(
                RetirementDraw(leaf["round"], leaf["signature"], items, index, leaf["at"], self._previous_at)
            )
            self.drawn_retirement.update(dict.fromkeys(items, len(self.retirement_draws) - 1))
            self._pending_reveals = list(reversed(items))
        return problems

    def decided_at(self, run_id: str) -> int | None:  # the leaf that decided a run: certificate or withdrawal
        serial, withdrawn = self.certificate_of_run.get(run_id), self.withdrawals.get(run_id)
        return self.certificates[serial].index if serial else withdrawn.index if withdrawn else None

    def _apply_label_set(self, index: int, leaf: dict[str, Any]) -> list[Problem]:
        certified = self.certificate_of_run.get(leaf["run"])
        problems = label_set_event_problems(
            leaf,
            self.label_sets.get(leaf["id"]),
            leaf["run"] in self.runs,
            None if certified is None else (certified, self.certificates[certified].index),
        )
        if not problems:
            self.label_sets[leaf["id"]] = LabelSetEvent(leaf["id"], leaf["run"], leaf["sha256"], index, leaf["at"])
        return problems

    def final_problems(self) -> list[Problem]:
        """Rules that only the whole ledger can settle."""
        problems = []
        if self._pending_reveals:
            draw = self.retirement_draws[-1]
            problems.append(
                Problem(
                    f"the retirement drawn at entries[{draw.index}] leaves items unrevealed",
                    expected="a reveal of each item it drew",
                    found=", ".join(reversed(self._pending_reveals)),
                )
            )
        public = self.public_gates()
        public_ordinals = {self._gate_ordinals[g] for g in public}
        for n, gate_ordinal in enumerate(self._commit_gate):
            if gate_ordinal not in public_ordinals:
                continue
            item_id, gate = self._commit_ids.key(n), self._gate_ids[gate_ordinal]
            if item_id not in self.reveals:
                problems.append(
                    Problem(
                        f"item {item_id} of public gate {gate} is never revealed",
                        where=f"entries[{self._commit_index[n]}]",
                    )
                )
        return problems


# ==============================================================================================
# generator/verifier/rules/draw_pools.py: Drawn runs' and scheduled retirements' pools at the scale of a million
#     items: the sorted eligible ids of a gate (or of several gates, in one order) at any leaf, counted and indexed
#     without listing them (FORMAT.md, "Draws and timestamps").
# ==============================================================================================

class _GateTree:
    """One gate's ids in UTF-8 order, and a Fenwick tree of which are in the pool."""

    def __init__(self, ids: list[str]) -> None:
        self.ids = sorted(ids, key=lambda i: i.encode("utf-8"))
        self.position = {item: n for n, item in enumerate(self.ids)}
        self.tree = [0] * (len(self.ids) + 1)
        self.size = 0
        self.top = 1 << max(len(self.ids), 1).bit_length()

    def add(self, item: str, delta: int) -> None:
        n = self.position[item] + 1
        self.size += delta
        while n < len(self.tree):
            self.tree[n] += delta
            n += n & -n

    def prefix(self, n: int) -> int:
        """How many of the first `n` ids (in UTF-8 order) are in the pool."""
        total = 0
        while n > 0:
            total += self.tree[n]
            n -= n & -n
        return total

    def at_or_before(self, item: str) -> int:
        """How many ids of the pool are at or before `item` in UTF-8 order (`item` of any gate)."""
        return self.prefix(bisect.bisect_right(self.ids, item.encode("utf-8"), key=lambda i: i.encode("utf-8")))

    def select(self, k: int) -> str:
        """The `k`-th (from 0) id of the pool."""
        n, step = 0, self.top
        while step:
            if n + step < len(self.tree) and self.tree[n + step] <= k:
                n += step
                k -= self.tree[n]
            step >>= 1
        return self.ids[n]


class Pool:
    """A run's pool, read by rank; close() puts back the items its subject ran."""

    def __init__(self, tree: _GateTree | None, taken: list[str]) -> None:
        self._tree = tree
        self._taken = taken

    def at(self, rank: int) -> str:
        assert self._tree is not None
        return self._tree.select(rank)

    def close(self) -> None:
        for i in self._taken:
            if self._tree is not None:
                self._tree.add(i, 1)
        self._taken = []


class UnionPool:
    """A scheduled retirement's pool over several gates, read by rank in one UTF-8 order;
    close() puts back the items open runs held."""

    def __init__(self, ordered: list[str], trees: list[_GateTree], taken: list[tuple[_GateTree, str]]) -> None:
        self._ordered = ordered
        self._trees = trees
        self._taken = taken

    def at(self, rank: int) -> str:
        """The `rank`-th (from 0) id: the first in the joint order with more than `rank` at or before it."""
        lo, hi = 0, len(self._ordered) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if sum(t.at_or_before(self._ordered[mid]) for t in self._trees) > rank:
                hi = mid
            else:
                lo = mid + 1
        return self._ordered[lo]

    def close(self) -> None:
        for tree, item in self._taken:
            tree.add(item, 1)
        self._taken = []


class PoolIndex:
    """The pools of a replayed ledger's drawn runs, swept once in ledger order."""

    def __init__(self, ledger: Ledger) -> None:
        # No reference to the ledger is kept: the index is the value of a weak mapping keyed by it.
        self.size = ledger.size
        by_gate: dict[str, list[str]] = {}
        self._events: list[tuple[int, int, str, str]] = []  # (leaf, +1 commit / -1 reveal, gate, id)
        for c in ledger.commits():
            by_gate.setdefault(c.gate, []).append(c.id)
            self._events.append((c.index, 1, c.gate, c.id))
        gate_of = {}
        for r in ledger.reveals.values():
            revealed = ledger.commit(r.id)
            if revealed is not None:
                gate_of[r.id] = revealed.gate
                self._events.append((r.index, -1, revealed.gate, r.id))
        self._events.sort(key=lambda e: e[0])
        self._gates = {g: _GateTree(ids) for g, ids in by_gate.items()}
        # Each gate's reveals by leaf index, for "was any revealed between two leaves".
        self._reveal_leaves: dict[str, list[int]] = {}
        for item, gate in gate_of.items():
            self._reveal_leaves.setdefault(gate, []).append(ledger.reveals[item].index)
        for leaves in self._reveal_leaves.values():
            leaves.sort()
        self._next = 0
        self._at = 0
        self._ordered: list[str] | None = None  # every gate's ids in one UTF-8 order, made when first asked

    def _sweep_to(self, index: int) -> None:
        """The trees as they stood before leaf `index`."""
        if index < self._at:
            self._next = 0
            for tree in self._gates.values():
                tree.tree = [0] * len(tree.tree)
                tree.size = 0
        while self._next < len(self._events) and self._events[self._next][0] < index:
            _, delta, gate, item = self._events[self._next]
            self._gates[gate].add(item, delta)
            self._next += 1
        self._at = index

    def pool(self, run: RunEvent, seen: set[str]) -> tuple[int, Pool]:
        """The size of the run's pool, and a way to read its ids by rank."""
        self._sweep_to(run.index)
        tree = self._gates.get(run.gate)
        if tree is None:
            return 0, Pool(None, [])
        # Items the subject ran leave the pool while it is read, and come back after.
        taken = [i for i in sorted(seen) if i in tree.position and self._in_pool(tree, i)]
        for i in taken:
            tree.add(i, -1)
        return tree.size, Pool(tree, taken)

    def union_pool(self, index: int, gates: Iterable[str], held: set[str]) -> tuple[int, UnionPool]:
        """The size of the pool the gates' items form before leaf `index` (committed, not
        revealed), less the `held` ones, and a way to read its ids by rank in one UTF-8 order."""
        self._sweep_to(index)
        trees = [self._gates[g] for g in sorted(set(gates)) if g in self._gates]
        if self._ordered is None:
            self._ordered = sorted((i for t in self._gates.values() for i in t.ids), key=lambda i: i.encode("utf-8"))
        taken = []
        for tree in trees:
            for item in sorted(held):
                if item in tree.position and self._in_pool(tree, item):
                    tree.add(item, -1)
                    taken.append((tree, item))
        return sum(t.size for t in trees), UnionPool(self._ordered, trees, taken)

    def _in_pool(self, tree: _GateTree, item: str) -> bool:
        n, total = tree.position[item] + 1, 0
        lo = n - 1
        while n > 0:
            total += tree.tree[n]
            n -= n & -n
        while lo > 0:
            total -= tree.tree[lo]
            lo -= lo & -lo
        return total == 1

    def revealed_between(self, gate: str, after: int, before: int) -> int | None:
        """The leaf of a reveal of `gate` strictly between two leaves, if any."""
        leaves = self._reveal_leaves.get(gate, [])
        n = bisect.bisect_right(leaves, after)
        return leaves[n] if n < len(leaves) and leaves[n] < before else None


class OpenRuns:
    """The runs open at a leaf (registered before it, not decided before it), swept in ledger order
    as the pool index is: a scheduled retirement reads the runs open then, not every run."""

    def __init__(self, ledger: Ledger) -> None:
        self.size = ledger.size
        # (first leaf it is open at / first leaf it is no longer open at, kind, run): open at leaf i
        # iff registered before i and not decided at or before i.
        events: list[tuple[int, int, str]] = []
        self._runs = dict(ledger.runs)
        for run in ledger.runs.values():
            events.append((run.index + 1, 0, run.id))
            decided = ledger.decided_at(run.id)
            if decided is not None:
                events.append((decided, 1, run.id))
        self._events = sorted(events)
        self._open: dict[str, RunEvent] = {}
        self._next = 0
        self._at = 0

    def at(self, index: int) -> list[RunEvent]:
        """The runs open at leaf `index`, in registration order."""
        if index < self._at:
            self._open, self._next = {}, 0
        while self._next < len(self._events) and self._events[self._next][0] <= index:
            _, kind, run_id = self._events[self._next]
            if kind == 0:
                self._open[run_id] = self._runs[run_id]
            else:
                self._open.pop(run_id, None)
            self._next += 1
        self._at = index
        return sorted(self._open.values(), key=lambda r: r.index)


_INDEXES: "weakref.WeakKeyDictionary[Ledger, PoolIndex]" = weakref.WeakKeyDictionary()


_OPEN: "weakref.WeakKeyDictionary[Ledger, OpenRuns]" = weakref.WeakKeyDictionary()


def open_runs(ledger: Ledger) -> OpenRuns:
    """The ledger's open-runs sweep, made once per replayed state (again when the ledger grew)."""
    found = _OPEN.get(ledger)
    if found is None or found.size != ledger.size:
        found = _OPEN[ledger] = OpenRuns(ledger)
    return found


def pool_index(ledger: Ledger) -> PoolIndex:
    """The ledger's pool index, made once per replayed state (again when the ledger grew)."""
    index = _INDEXES.get(ledger)
    if index is None or index.size != ledger.size:
        index = _INDEXES[ledger] = PoolIndex(ledger)
    return index


# ==============================================================================================
# generator/verifier/rules/drawn_items.py: What a beacon drew, recomputed (FORMAT.md, "Draws and timestamps"): a drawn
#     run's items from the pool its registration fixed, and each scheduled retirement's items from the sealed items
#     its round found, the round itself following from the methodology's schedule.
# ==============================================================================================

DRAW_SPEC_KEYS = ("beacon", "round", "count")


MAX_ROUND_DELAY = 86400  # seconds: a drawn run names a round published within a day of its registration


def effective_spec(spec: dict[str, Any], ledger: Ledger) -> dict[str, Any]:
    """A run spec as the rest of the checks read it: a drawn spec gets the items its draw
    recorded (none before the draw), so that every later rule reads `items` alike."""
    if "draw" not in spec:
        return spec
    draw = ledger.draws.get(str(spec.get("id")))
    return {**spec, "items": list(draw.items) if draw else []}


def run_pool(ledger: Ledger, run: RunEvent, seen: set[str]) -> list[str]:
    """A drawn run's eligible items: its gate's, committed before its registration and not
    revealed before it, less those its subject already ran on the gate (`seen`)."""
    pool = []
    for c in ledger.commits(0, ledger.commits_before(run.index)):
        if c.gate != run.gate or c.id in seen:
            continue
        r = ledger.reveals.get(c.id)
        if r is None or r.index > run.index:
            pool.append(c.id)
    return pool


def run_draw_problems(
    ledger: Ledger, run: RunEvent, spec: dict[str, Any], m: Methodology | None, seen: set[str]
) -> list[Problem]:
    """A drawn run: its pinned beacon, a round after its registration, and (once drawn) the round's
    signature and the items it draws."""
    want = as_dict(spec.get("draw"))
    beacon = m.beacon if m is not None else None
    if beacon is None:
        return [Problem("the run draws its items, but its methodology pins no beacon", where="draw.beacon")]
    problems = []
    if want.get("beacon") != beacon.chain_hash:
        return [
            Problem(
                "not the beacon the methodology pins", "", "draw.beacon", beacon.chain_hash, show(want.get("beacon"))
            )
        ]
    round_number, count = want["round"], want["count"]
    published, registered = beacon.round_time(round_number), unix_time(run.at)
    if published <= registered:
        problems.append(
            Problem(
                "the round was published before the run was registered: its randomness was known",
                where="draw.round",
                expected=f"a round after {run.at}",
                found=f"round {round_number}, published {time_text(published)}",
            )
        )
    elif published > registered + MAX_ROUND_DELAY:
        problems.append(
            Problem(
                "the round is more than a day after the registration: a run cannot wait on a far round and hold "
                "its gate's items",
                where="draw.round",
                expected=f"a round published by {time_text(registered + MAX_ROUND_DELAY)}",
                found=f"round {round_number}, published {time_text(published)}",
            )
        )
    # The pool is fixed by the registration: too small a pool is refused then, not after the round.
    pools = pool_index(ledger)
    size, pool = pools.pool(run, seen)
    try:
        return problems + _drawn_problems(ledger, run, beacon, round_number, count, published, size, pool)
    finally:
        pool.close()


def _drawn_problems(
    ledger: Ledger,
    run: RunEvent,
    beacon: Beacon,
    round_number: int,
    count: int,
    published: int,
    size: int,
    pool: Pool,
) -> list[Problem]:
    """run_draw_problems, once the pool is known: its size, the draw leaf, the round, the items."""
    problems = []
    if size < count:
        problems.append(
            Problem(
                f"the run's pool holds {size} eligible items, fewer than the {count} it draws: a draw of all "
                "of a small pool is no draw",
                where="draw.count",
                expected=f"at most {size}",
                found=str(count),
            )
        )
    draw = ledger.draws.get(run.id)
    if draw is None:
        withdrawn = ledger.withdrawals.get(run.id)
        if run.id in ledger.certificate_of_run:
            problems.append(Problem("the run was certified without its draw", where="draw"))
        elif withdrawn is not None and unix_time(withdrawn.at) >= published:
            problems.append(
                Problem(
                    f"the run was withdrawn (entries[{withdrawn.index}]) once its round was published, without its "
                    "draw: the operator could see the items and register again with another round",
                    where="draw",
                    expected="the draw recorded before a withdrawal dated after the round",
                )
            )
        return problems
    where = f"ledger entries[{draw.index}]"
    if draw.round != round_number:
        problems.append(
            Problem("the draw is not of the round the spec named", where, "round", str(round_number), str(draw.round))
        )
        return problems
    if unix_time(draw.at) < beacon.round_time(round_number):
        problems.append(Problem("the draw is dated before its round was published", where, "at"))
    problems += [p.at(where) for p in round_signature_problems(beacon, draw.round, draw.signature, "signature")]
    revealed = pool_index(ledger).revealed_between(run.gate, run.index, draw.index)
    if revealed is not None:
        problems.append(
            Problem(
                f"an item of the run's gate was revealed (entries[{revealed}]) while the run waited for its draw: "
                "the pool its registration fixed is gone",
                where="draw",
            )
        )
    if problems:
        return problems
    seed = draw_seed(round_randomness(draw.signature), f"run:{run.id}")
    items = utf8_sorted([pool.at(p) for p in draw_positions(size, count, seed)])
    if list(draw.items) != items:
        problems.append(
            Problem("the items are not the round's draw", where, "items", show(items, 400), show(list(draw.items), 400))
        )
    return problems


def drawn_spec_problems(spec: dict[str, Any]) -> list[Problem]:
    """The `draw` member of a v2 run spec: the beacon's chain hash, a round, a count."""
    draw = spec.get("draw")
    problems = check_keys(draw, DRAW_SPEC_KEYS, where="draw")
    if not isinstance(draw, dict):
        return problems
    if "beacon" in draw and not is_hex64(draw["beacon"]):
        problems.append(Problem("must be the beacon's chain hash", where="draw.beacon", found=show(draw["beacon"])))
    for k, most in (("round", MAX_ROUND), ("count", MAX_DRAWN_ITEMS)):
        if k in draw and not (is_int(draw[k]) and 1 <= draw[k] <= most):
            problems.append(
                Problem(f"must be a whole number from 1 to {most}", where=f"draw.{k}", found=show(draw[k], 40))
            )
    return problems


def draw_required_problem(
    ledger: Ledger, run: RunEvent, spec: dict[str, Any], methodologies: Mapping[str, Methodology]
) -> Problem | None:
    """A run on a secret gate that lists its items once any methodology published before it
    requires draws: pinning an older version does not step back from the requirement."""
    gate = ledger.gates.get(run.gate)
    if "draw" in spec or gate is None or gate.public:
        return None
    for e in sorted(ledger.methodologies.values(), key=lambda e: e.index):
        m = methodologies.get(e.version)
        if e.index < run.index and m is not None and m.draws_required:
            return Problem(
                f"methodology {e.version} (entries[{e.index}]) requires a secret-gate run to draw its items; "
                "a run registered after it cannot list them, whatever version it pins",
                where="items",
            )
    return None


def required_draw_problems(
    ledger: Ledger, methodologies: Mapping[str, Methodology], specs: dict[str, dict[str, Any]]
) -> list[Problem]:
    """draw_required_problem for every run, and a draw recorded for a run whose spec lists its
    items (a round shown on the site as having drawn what the operator chose)."""
    problems = []
    for run_id, spec in specs.items():
        run = ledger.runs.get(run_id)
        if run is None:
            continue
        found = draw_required_problem(ledger, run, spec, methodologies)
        if found is not None:
            problems.append(found.at(f"runs/{run_id}.json"))
        if "draw" not in spec and run_id in ledger.draws:
            where = f"entries[{ledger.draws[run_id].index}]"
            problems.append(Problem(f"a draw recorded for run {run_id}, whose spec lists its items", where=where))
    return problems


def retirement_draw(
    ledger: Ledger, index: int, specs: dict[str, dict[str, Any]], round_number: int, signature: str, count: int
) -> tuple[int, list[str]]:
    """The size of the pool a retirement drawn at leaf `index` by `round_number` draws from, and the
    items it draws: secret gates' items committed and not revealed before it, less the items of
    runs still open then (open_run_holds), read from the pool index without listing them."""
    held, waiting = open_run_holds(ledger, index, specs, round_number)
    public = ledger.public_gates()
    gates = [g for g in ledger.gates if g not in public and g not in waiting]
    size, pool = pool_index(ledger).union_pool(index, gates, held)
    try:
        seed = draw_seed(round_randomness(signature), f"retirement:{round_number}")
        return size, utf8_sorted([pool.at(p) for p in draw_positions(size, count, seed)])
    finally:
        pool.close()


def open_run_holds(
    ledger: Ledger, index: int, specs: dict[str, dict[str, Any]], round_number: int | None = None
) -> tuple[set[str], set[str]]:
    """What the runs registered before leaf `index` and not decided before it hold: the items of
    those whose items are fixed, and the gates of the drawn runs still waiting then for a round
    later than `round_number` (the retirement's), which hold their gate's whole pool. A drawn run
    whose round is already out and that is not drawn holds nothing: the operator was to draw it."""
    items: set[str] = set()
    waiting: set[str] = set()
    for run in open_runs(ledger).at(index):
        spec = specs.get(run.id, {})
        draw = ledger.draws.get(run.id)
        named = as_dict(spec.get("draw")).get("round")
        if "draw" in spec and (draw is None or draw.index > index):
            if round_number is None or not is_int(named) or named > round_number:
                waiting.add(run.gate)
        else:
            items.update(as_list(spec.get("items")))
    return items, waiting


def _regimes(
    ledger: Ledger, methodologies: dict[str, Methodology]
) -> list[tuple[int, str, int, str, Methodology | None]]:
    """Each methodology's time in force: (its leaf, its time, the next one's leaf and time, or the
    ledger's end and last time; the methodology)."""
    events = sorted(ledger.methodologies.values(), key=lambda e: e.index)
    # Before the first methodology no schedule is in force.
    first = events[0] if events else None
    out: list[tuple[int, str, int, str, Methodology | None]] = [
        (-1, "", first.index if first else ledger.size, first.at if first else ledger.last_at, None)
    ]
    for n, e in enumerate(events):
        end, end_at = (events[n + 1].index, events[n + 1].at) if n + 1 < len(events) else (ledger.size, ledger.last_at)
        out.append((e.index, e.at, end, end_at, methodologies.get(e.version)))
    return out


def retirement_problems(
    ledger: Ledger, methodologies: dict[str, Methodology], specs: dict[str, dict[str, Any]]
) -> list[Problem]:
    """Every scheduled retirement drawn when due, of the round the schedule names, with the items
    that round draws; none drawn without a schedule in force."""
    problems = []
    draws = ledger.retirement_draws
    for start, start_at, end, end_at, m in _regimes(ledger, methodologies):
        mine = [d for d in draws if start < d.index < end]
        schedule, beacon = (m.retirement_schedule, m.beacon) if m is not None else (None, None)
        if schedule is None or beacon is None:
            problems += [
                Problem("a retirement was drawn with no retirement schedule in force", where=f"entries[{d.index}]")
                for d in mine
            ]
            continue
        due = _due_rounds(beacon, schedule, unix_time(start_at), unix_time(end_at), len(mine) + 1)
        for n, round_number in enumerate(due):
            if n >= len(mine):
                problems.append(
                    Problem(
                        f"the retirement scheduled for {time_text(beacon.round_time(round_number))} (round "
                        f"{round_number}) was not drawn",
                        expected="a retirement-draw leaf before any later leaf",
                    )
                )
                continue
            problems += _retirement_draw_problems(ledger, mine[n], round_number, beacon, schedule, specs)
        problems += [
            Problem("a retirement drawn before it was due", where=f"entries[{d.index}]") for d in mine[len(due) :]
        ]
    return problems


def _due_rounds(beacon: Beacon, schedule: RetirementSchedule, anchor: int, end: int, most: int) -> list[int]:
    """The rounds of the first `most` retirements due by `end` (one more than were drawn is enough
    to name the one missing): a due time's round is published at or after it, and is due once it
    is published by then."""
    rounds: list[int] = []
    for t in schedule.due_times(anchor, end):
        r = beacon.first_round_at(t)
        if beacon.round_time(r) > end or len(rounds) == most:
            break
        rounds.append(r)
    return rounds


def _retirement_draw_problems(
    ledger: Ledger,
    d: RetirementDraw,
    round_number: int,
    beacon: Beacon,
    schedule: RetirementSchedule,
    specs: dict[str, dict[str, Any]],
) -> list[Problem]:
    where = f"entries[{d.index}]"
    if d.round != round_number:
        return [Problem("not the round the schedule names", where, "round", str(round_number), str(d.round))]
    published = beacon.round_time(round_number)
    problems = []
    if unix_time(d.previous_at) >= published or unix_time(d.at) < published:
        problems.append(
            Problem(
                "a scheduled retirement is the first leaf dated at or after its round",
                where,
                "at",
                f"the leaf before it dated before {time_text(published)}, and it at or after",
                f"the leaf before it at {d.previous_at}, this one at {d.at}",
            )
        )
    problems += [p.at("", where) for p in round_signature_problems(beacon, d.round, d.signature, "signature")]
    if problems:
        return problems
    _, items = retirement_draw(ledger, d.index, specs, d.round, d.signature, schedule.items)
    if list(d.items) != items:
        problems.append(
            Problem("the items are not the round's draw", where, "items", show(items, 400), show(list(d.items), 400))
        )
    return problems


# ==============================================================================================
# generator/verifier/exports/eee_record.py: A certificate as an Every Eval Ever record (schema 0.3.0): the aggregate
#     record (the pass rate with its Wilson interval, the methodology's score and its grade as levels, the judge under
#     llm_scoring) and, where the gate is public, the instance-level rows of its scored items. Made from the published
#     certificate, its run spec, the methodology and the items' reveal documents alone, and written byte for byte the
#     same by the build and by the verifier, which compares (FORMAT.md, "Exports").
# ==============================================================================================

EEE_SCHEMA_VERSION = "0.3.0"


EEE_FOLDER = "eee"


_SLUG_RE = re.compile(r"[^a-z0-9._-]+")


def slug(text: str) -> str:
    """A datastore path component: lower case, runs of anything but letters, digits, '.', '_'
    and '-' as one '-'."""
    return _SLUG_RE.sub("-", text.lower()).strip("-.") or "unnamed"


class Unremade(Exception):
    """An export cannot be remade from what the site holds; the reason is failed where that is checked."""


def record_uuid(cert_sha256: str) -> str:
    """A UUID of version 4's form made from the certificate's SHA-256, so that the same
    certificate is always the same record."""
    h = bytearray(bytes.fromhex(cert_sha256)[:16])
    h[6] = (h[6] & 0x0F) | 0x40
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def model_id(subject: Mapping[str, Any]) -> str:
    return f"{slug(str(subject['organization']))}/{slug(str(subject['id']))}-{slug(str(subject['version']))}"


def datastore_folder(origin: str, subject: Mapping[str, Any]) -> str:
    developer, model = model_id(subject).split("/")
    return f"data/{slug(origin.replace('/', '_'))}/{developer}/{model}"


def export_paths(serial: str, cert_sha256: str, instances: bool) -> tuple[str, str | None]:
    """The site paths of a certificate's record and, when it has instance rows, of their file."""
    base = f"certificates/{serial}/{EEE_FOLDER}/{record_uuid(cert_sha256)}"
    return f"{base}.json", (f"{base}_samples.jsonl" if instances else None)


def epoch_seconds(at: str) -> int:
    """A time of the project's form (UTC, whole seconds) as seconds since the epoch."""
    return calendar.timegm(time.strptime(at, "%Y-%m-%dT%H:%M:%SZ"))


def eee_paths(serial: str, cert_sha256: str, public: bool) -> list[str]:
    """The site paths of a certificate's Every Eval Ever files: the record, and on a public gate
    its instance rows."""
    record, samples = export_paths(serial, cert_sha256, public)
    return [record] if samples is None else [record, samples]


def _number(text: Any) -> float:
    return float(text)


def _results(
    cert: Mapping[str, Any], spec: Mapping[str, Any], levels: list[str], source: dict[str, Any], name: str
) -> list[dict[str, Any]]:
    common = {"evaluation_name": name, "source_data": source, "evaluation_timestamp": cert["finished_at"]}
    made = (_pass_rate(cert), _score(cert), _grade(cert, spec, levels))
    return [{"evaluation_result_id": f"{cert['serial']}/{r[0]}", **common, **r[1]} for r in made if r is not None]


def _pass_rate(cert: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    summary = cert["summary"]
    if summary.get("pass_rate") is None:
        return None
    counts = {k: str(summary[k]) for k in ("total", "scored", "passed", "not_run", "infra_error", "excluded")}
    score: dict[str, Any] = {"score": _number(summary["pass_rate"]), "details": counts}
    ci = summary.get("pass_rate_ci95")
    if isinstance(ci, list) and len(ci) == 2:
        score["uncertainty"] = {
            "confidence_interval": {
                "lower": _number(ci[0]),
                "upper": _number(ci[1]),
                "confidence_level": 0.95,
                "method": "wilson",
            },
            "num_samples": int(summary["scored"]),
        }
    metric = {
        "evaluation_description": "Share of the scored items whose score reached the item threshold",
        "metric_id": "pass_rate",
        "metric_name": "Pass rate",
        "metric_kind": "pass_rate",
        "metric_unit": "percent",
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0,
        "max_score": 100,
    }
    return "pass_rate", {"metric_config": metric, "score_details": score}


def _score(cert: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    if cert.get("score") is None:
        return None
    metric = {
        "evaluation_description": f"The certificate's score under rule {cert['score_rule']}",
        "metric_id": "certificate_score",
        "metric_name": "Certificate score",
        "metric_kind": "score",
        "metric_unit": "points",
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0,
        "max_score": 100,
    }
    details = {"score": cert["score"], "details": {"verdict": str(cert["verdict"])}}
    return "score", {"metric_config": metric, "score_details": details}


def _judges(judge: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "judges": [
            {
                "model_info": {
                    "name": str(judge["model"]),
                    "id": f"{slug(str(judge['provider']))}/{slug(str(judge['model']))}",
                    "developer": str(judge["provider"]),
                    "additional_details": {
                        "deployment_type": "unknown",
                        "model_availability": "unknown",
                        "version": str(judge["version"]),
                        "seed": str(judge["seed"]),
                    },
                }
            }
        ],
        "input_prompt": f"the rubric of SHA-256 {judge['rubric_sha256']}",
    }


def _grade(cert: Mapping[str, Any], spec: Mapping[str, Any], levels: list[str]) -> tuple[str, dict[str, Any]] | None:
    if cert.get("grade") not in levels:
        return None
    metric: dict[str, Any] = {
        "evaluation_description": "The certificate's grade, from the lowest band to the highest",
        "metric_id": "certificate_grade",
        "metric_name": "Grade",
        "metric_kind": "grade",
        "lower_is_better": False,
        "score_type": "levels",
        "level_names": levels,
        "has_unknown_level": False,
    }
    judge = spec.get("judge")
    if isinstance(judge, Mapping):
        metric["llm_scoring"] = _judges(judge)
    worst, best = cert.get("worst_case_grade"), cert.get("best_case_grade")
    details = {"grade": str(cert["grade"]), "worst_case": str(worst), "best_case": str(best)}
    return "grade", {
        "metric_config": metric,
        "score_details": {"score": levels.index(cert["grade"]), "details": details},
    }


def eee_record(
    cert: Mapping[str, Any],
    cert_sha256: str,
    leaf_index: int,
    spec: Mapping[str, Any],
    levels: list[str],
    program: Mapping[str, str],
    commitments: Mapping[str, str],
    samples: bytes | None,
) -> dict[str, Any]:
    """The aggregate record of `cert` (its bytes' SHA-256 `cert_sha256`, ledger leaf
    `leaf_index`), for the program at `program['origin']` (named by its origin, which never changes,
    where its name may: an export is written once); `levels` are
    the methodology's grades, lowest first. Sealed items are named by their `commitments`;
    `samples` is the instance file, when there is one."""
    serial, subject = cert["serial"], cert["subject"]
    proof = f"certificates/{serial}.json.tlog-proof"
    source: dict[str, Any]
    if commitments:
        source = {
            "dataset_name": f"{program['origin']}: gate {cert['gate']} (sealed)",
            "source_type": "other",
            "additional_details": {f"commitment.{i}": c for i, c in sorted(commitments.items())},
        }
    else:
        source = {
            "dataset_name": f"{program['origin']}: gate {cert['gate']}",
            "source_type": "url",
            "url": [f"https://{program['origin']}/items/"],
        }
    name = f"{program['origin']}, gate {cert['gate']}"
    record: dict[str, Any] = {
        "schema_version": EEE_SCHEMA_VERSION,
        "evaluation_id": f"{program['origin']}/certificates/{serial}",
        "evaluation_timestamp": cert["finished_at"],
        "retrieved_timestamp": str(epoch_seconds(cert["issued_at"])),
        "source_metadata": {
            "source_name": program["origin"],
            "source_type": "evaluation_run",
            "source_organization_name": program["origin"],
            "source_organization_url": f"https://{program['origin']}/",
            "evaluator_relationship": "third_party",
            "additional_details": {
                "certificate": f"certificates/{serial}.json",
                "certificate_sha256": cert_sha256,
                "ledger_leaf_index": str(leaf_index),
                "inclusion_proof": proof,
                "log_origin": program["origin"],
                "verdict": str(cert["verdict"]),
                "run": str(cert["run"]),
            },
        },
        "eval_library": {
            "name": "transparency",
            "version": str(cert["methodology"]["version"]),
            "additional_details": {"methodology_sha256": str(cert["methodology"]["sha256"])},
        },
        "model_info": {
            "name": f"{subject['name']} {subject['version']}",
            "id": model_id(subject),
            "developer": str(subject["organization"]),
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "evaluation_results": _results(cert, spec, levels, source, name),
    }
    if samples is not None:
        uuid = record_uuid(cert_sha256)
        record["detailed_evaluation_results"] = {
            "format": "jsonl",
            "file_path": f"{datastore_folder(program['origin'], subject)}/{uuid}_samples.jsonl",
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(samples).hexdigest(),
            "total_rows": samples.count(b"\n"),
        }
    return record


def _compact(value: Any) -> str:
    """An item's answer or a subject's outputs as one line of JSON, keys sorted, text as it is."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def sample_hash(raw: str, reference: list[str]) -> str:
    """The coalition's hash of a sample: SHA-256 of {"raw", "reference"} as compact JSON, keys sorted."""
    text = json.dumps({"raw": raw, "reference": reference}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def eee_samples(cert: Mapping[str, Any], program: Mapping[str, str], items: Mapping[str, Mapping[str, Any]]) -> bytes:
    """The instance rows of a certificate on a public gate: one per scored item, its prompt, the
    answer as the reference, the subject's outputs, its score and whether it passed. `items`
    holds each item's reveal document."""
    serial, subject = cert["serial"], cert["subject"]
    lines = []
    for r in cert["results"]:
        if r.get("status") != "scored" or r["item"] not in items:
            continue
        item = items[r["item"]]["item"]
        answer = {str(n): f["value"] for n, f in sorted(item["answer"].items())}
        reference = [_compact(answer)]
        output = {str(f["name"]): f["output"] for f in r["fields"]}
        row = {
            "schema_version": EEE_SCHEMA_VERSION,
            "evaluation_id": f"{program['origin']}/certificates/{serial}",
            "model_id": model_id(subject),
            "evaluation_name": f"{program['origin']}, gate {cert['gate']}",
            "evaluation_result_id": f"{serial}/pass_rate",
            "sample_id": r["item"],
            "sample_hash": sample_hash(item["prompt"], reference),
            "interaction_type": "single_turn",
            "input": {"raw": item["prompt"], "reference": reference},
            "output": {"raw": [_compact(output)]},
            "answer_attribution": [
                {
                    "turn_idx": 0,
                    "source": "output.raw",
                    "extracted_value": _compact(output),
                    "extraction_method": "custom",
                    "is_terminal": True,
                }
            ],
            "evaluation": {"score": _number(r["score"]), "is_correct": bool(r["passed"])},
            "metadata": {"item": r["item"], "score": str(r["score"])},
        }
        lines.append(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
    return "".join(lines).encode("utf-8")


def eee_bytes(record: Mapping[str, Any]) -> bytes:
    """An aggregate record as published: two spaces of indent, UTF-8, a newline at the end."""
    return (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def eee_export(
    cert: Mapping[str, Any],
    cert_sha256: str,
    leaf_index: int,
    spec: Mapping[str, Any],
    methodology: Methodology,
    program: Mapping[str, str],
    public: bool,
    reveal_of: Callable[[str], Mapping[str, Any] | None],
    ledger: Ledger,
) -> list[tuple[str, bytes]]:
    """A certificate's Every Eval Ever files (site path, bytes), as the build writes them and the
    verifier remakes them: on a public gate the record and its instance rows (each item's reveal
    document from `reveal_of`: the item as committed); on a secret gate the record alone, its
    items named by their ledger commitments, since their texts are sealed when the certificate is
    issued. The grades are the pinned `methodology`'s, lowest first."""
    levels = [g.name for g in reversed(methodology.grades)]
    items = [str(i) for i in spec.get("items", [])]
    if public:
        reveals = {i: doc for i in items if (doc := reveal_of(i)) is not None}
        scored = [r["item"] for r in cert["results"] if r.get("status") == "scored"]
        if any(i not in reveals for i in scored):
            raise Unremade("an item's reveal document cannot be read as its commitment")
        samples: bytes | None = eee_samples(cert, program, reveals)
        commitments: dict[str, str] = {}
    else:
        samples = None
        commitments = {i: c.commitment for i in items if (c := ledger.commit(i)) is not None}
    record = eee_record(cert, cert_sha256, leaf_index, spec, levels, program, commitments, samples)
    record_path, samples_path = export_paths(str(cert["serial"]), cert_sha256, samples is not None)
    out = [(record_path, eee_bytes(record))]
    if samples is not None and samples_path is not None:
        out.append((samples_path, samples))
    return out


# ==============================================================================================
# generator/verifier/exports/cbor.py: The part of CBOR (RFC 8949) that COSE messages of this site use, encoded
#     deterministically (its section 4.2.1: the shortest form of every head, definite lengths, map keys in the
#     bytewise order of their encodings) and decoded strictly: a decoder for files an attacker chose, which refuses
#     indefinite lengths, heads longer than needed, a map key given twice, nesting deeper than a bound and bytes after
#     the item, so that one message has one encoding and the bytes checked are the bytes read.
# ==============================================================================================

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


# ==============================================================================================
# generator/verifier/exports/scitt_statement.py: A certificate as a SCITT transparent statement (RFC 9943
#     architecture): the certificate as a COSE_Sign1 signed statement (RFC 9052) by the key that signed it, with an
#     RFC 9942 receipt of its inclusion in the program's log (verifiable data structure 1, RFC9162_SHA256: the RFC
#     6962 tree this ledger is) in its unprotected header (label 394). FORMAT.md, "Exports", holds the profile; in
#     short:
# ==============================================================================================

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


# ==============================================================================================
# generator/verifier/exports/credential.py: A certificate as a W3C Verifiable Credential 2.0 in the Open Badges 3.0
#     achievement-credential shape, secured by a Data Integrity proof of the `eddsa-jcs-2022` cryptosuite (RFC 8785
#     and Ed25519), its issuer the site's `did:web`, its revocation a Bitstring Status List credential the build keeps
#     in step with the ledger's revocations (FORMAT.md, "Exports").
# ==============================================================================================

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


# ==============================================================================================
# generator/verifier/memory/ledger_snapshot.py: A replayed ledger saved and loaded whole (FORMAT.md, "State
#     snapshots"): what lets a command, a build or a verifier start from the last event it saw instead of replaying a
#     million.
# ==============================================================================================

SNAPSHOT_MAGIC = b"transparency ledger snapshot v3\n"


# The arrays of a Ledger and its IdIndex, in file order, with their typecodes ("B": raw bytes):
# also the layout of the generator's commit arrays (state/ledger_cache.py).
SNAPSHOT_SECTIONS = (
    ("ids_blob", "B"),
    ("ids_ends", "Q"),
    ("ids_table", "i"),
    ("commit_index", "q"),
    ("commit_gate", "H"),
    ("commitments", "B"),
    ("commit_time", "I"),
)


_ = Commit  # the rows these arrays hold, one per committed item


def frontier_of(stream: MerkleStream) -> dict[str, Any]:
    """The compact range of a tree: its size and one hash per perfect subtree, largest first."""
    return {"size": stream.size, "hashes": [h.hex() for h in stream._stack]}


def stream_from(frontier: dict[str, Any]) -> MerkleStream:
    stream = MerkleStream()
    stream.size = frontier["size"]
    stream._stack = [bytes.fromhex(h) for h in frontier["hashes"]]
    if len(stream._stack) != bin(stream.size).count("1"):
        raise FormatError("the compact range does not fit its size")
    return stream


def snapshot_chunks(ledger: Ledger, extra: dict[str, Any], spans: int | None = None) -> list[bytes | memoryview]:
    """`ledger` (a replay's state) and the caller's `extra` JSON (what binds it to its ledger
    bytes), as the pieces of one file, to be written one after the other: the big arrays are
    views of the ledger's own, not copies, so that saving a million commits costs no second copy
    of them (nor a third, joined). `spans`: how many key spans the replay itself made, when a
    check after it has since given the ring its first key from keys.json (rotation.py, gather): a
    snapshot holds what a replay makes, nothing else. Write them before the ledger changes."""
    _salt, blob, ends, table = ledger._commit_ids.parts()
    arrays: dict[str, Any] = {
        "ids_blob": blob,
        "ids_ends": ends,
        "ids_table": table,
        "commit_index": ledger._commit_index,
        "commit_gate": ledger._commit_gate,
        "commitments": ledger._commitments,
        "commit_time": ledger._commit_time,
    }
    raw = [memoryview(arrays[name]).cast("B") for name, _ in SNAPSHOT_SECTIONS]
    header = _header(ledger, extra, spans)
    header["sections"] = [[name, code, len(data)] for (name, code), data in zip(SNAPSHOT_SECTIONS, raw, strict=True)]
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    return checksummed([SNAPSHOT_MAGIC, len(text).to_bytes(8, "big"), text, *raw])


def checksummed(pieces: list[Any]) -> list[Any]:
    """`pieces` (bytes-like) followed by the SHA-256 of them all, taken without joining them: the
    trailer a snapshot, and a cache written in pieces, ends with."""
    h = hashlib.sha256()
    for piece in pieces:
        h.update(piece)
    return [*pieces, h.digest()]


def snapshot_bytes(ledger: Ledger, extra: dict[str, Any], spans: int | None = None) -> bytes:
    """The pieces of snapshot_chunks as one file's bytes."""
    return b"".join(snapshot_chunks(ledger, extra, spans))


def _header(ledger: Ledger, extra: dict[str, Any], spans: int | None) -> dict[str, Any]:
    ring = ledger.keys
    return {
        "byteorder": sys.byteorder,
        "ids_salt": ledger._commit_ids.parts()[0].hex(),
        "size": ledger.size,
        "last_at": ledger.last_at,
        "gates": [[g.id, g.name, g.public, g.index, g.at] for g in ledger.gates.values()],
        "gate_ids": ledger._gate_ids,
        "methodologies": [[m.version, m.sha256, m.index, m.at] for m in ledger.methodologies.values()],
        "reveals": [[r.id, r.reason, r.note, r.index, r.at] for r in ledger.reveals.values()],
        "runs": [[r.id, r.sha256, r.subject, r.gate, r.index, r.at] for r in ledger.runs.values()],
        "certificates": [[c.serial, c.run, c.sha256, c.index, c.at] for c in ledger.certificates.values()],
        "revocations": [[r.serial, r.reason, r.index, r.at] for r in ledger.revocations.values()],
        "label_sets": [[e.id, e.run, e.sha256, e.index, e.at] for e in ledger.label_sets.values()],
        "withdrawals": [[w.run, w.reason, w.index, w.at] for w in ledger.withdrawals.values()],
        "draws": [[d.run, d.round, d.signature, list(d.items), d.index, d.at] for d in ledger.draws.values()],
        "retirement_draws": [
            [d.round, d.signature, list(d.items), d.index, d.at, d.previous_at] for d in ledger.retirement_draws
        ],
        "pending_reveals": ledger._pending_reveals,
        "previous_at": ledger._previous_at,
        "subject_names": list(ledger.subject_names.items()),
        "subject_folds": list(ledger._subject_folds.items()),
        "times": ledger._times,
        "key_spans": [
            [s.key.vkey, s.valid_from, s.first_size, s.valid_until, s.last_size, s.reason, s.compromised_at]
            for s in ring.spans[:spans]
        ],
        "ml_dsa_spans": [
            [s.key.vkey, s.valid_from, s.first_size, s.valid_until, s.last_size, s.reason, s.compromised_at]
            for s in ring.ml_dsa
        ],
        "key_time_starts": ring._time_starts,
        "key_time_index": ring._time_index,
        "extra": extra,
    }


def load_snapshot(data: bytes) -> tuple[Ledger, dict[str, Any]]:
    """The Ledger and `extra` saved by snapshot_bytes; FormatError for anything else (a torn
    file, an edited one, one from a machine of another byte order)."""
    return read_snapshot(io.BytesIO(data), len(data))


def read_snapshot(f: BinaryIO, size: int) -> tuple[Ledger, dict[str, Any]]:
    """load_snapshot from the `size` bytes of open file `f` (seekable), read a section at a time
    into the ledger's arrays: never the whole file in memory beside them. Nothing is parsed before
    the checksum at the file's end holds (a first pass hashes the file a megabyte at a time): a
    torn or edited file is refused as such, whatever it was torn into."""
    if size < len(SNAPSHOT_MAGIC) + 40 or f.read(len(SNAPSHOT_MAGIC)) != SNAPSHOT_MAGIC:
        raise FormatError("not a ledger snapshot of this version")
    body = size - 32
    h = hashlib.sha256(SNAPSHOT_MAGIC)
    left = body - len(SNAPSHOT_MAGIC)
    while left > 0:
        data = f.read(min(left, 1 << 20))
        if not data:
            break
        h.update(data)
        left -= len(data)
    if left or h.digest() != f.read(33):
        raise FormatError("the snapshot's checksum does not match its bytes (torn or edited)")
    f.seek(len(SNAPSHOT_MAGIC))
    reader = _BoundedReader(f, body - len(SNAPSHOT_MAGIC))
    try:
        parsed = _read_sections(reader)
        if reader.left:
            raise FormatError("the snapshot has bytes after its last section")
        return _load(*parsed)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError, RecursionError) as e:
        # Only a file written by hand gets here: its checksum held, its fields did not.
        raise FormatError(f"the snapshot's fields are malformed ({type(e).__name__}: {e})") from None


class _BoundedReader:
    """Reads at most `left` bytes of `f`: a section's length is the file's word, not a bound."""

    def __init__(self, f: BinaryIO, left: int) -> None:
        self.f, self.left = f, left

    def read(self, n: int) -> bytes:
        if n > self.left:
            raise FormatError("the snapshot is cut short")
        data = self.f.read(n)
        if len(data) != n:
            raise FormatError("the snapshot is cut short")
        self.left -= n
        return data


def _read_sections(reader: _BoundedReader) -> tuple[dict[str, Any], dict[str, Any]]:
    length = int.from_bytes(reader.read(8), "big")
    header = json.loads(reader.read(length))
    if header["byteorder"] != sys.byteorder:
        raise FormatError(f"the snapshot was made on a {header['byteorder']}-endian machine")
    if [s[:2] for s in header["sections"]] != [list(s) for s in SNAPSHOT_SECTIONS]:
        raise FormatError("the snapshot's sections are not this version's")
    sections: dict[str, Any] = {}
    for name, code, size in header["sections"]:
        if not isinstance(size, int) or size < 0:
            raise FormatError(f"the snapshot's section {name} has no length")
        chunk = reader.read(size)
        if code == "B":
            sections[name] = bytearray(chunk)
        else:
            a = array(code)
            if size % a.itemsize:
                raise FormatError(f"the snapshot's section {name} is not whole {code} words")
            a.frombytes(chunk)
            sections[name] = a
        del chunk
    return header, sections


def _load(header: dict[str, Any], sections: dict[str, Any]) -> tuple[Ledger, dict[str, Any]]:
    ends, table, blob = sections["ids_ends"], sections["ids_table"], sections["ids_blob"]
    commits = len(ends)
    if (
        len(table) < 2 * commits
        or len(table) & (len(table) - 1)
        or (commits and ends[-1] != len(blob))
        or any(len(sections[n]) != commits for n in ("commit_index", "commit_gate", "commit_time"))
        or len(sections["commitments"]) != 32 * commits
    ):
        raise FormatError("the snapshot's commit arrays disagree in length")
    ledger = Ledger()
    ledger.size, ledger.last_at = header["size"], header["last_at"]
    ledger._commit_ids = IdIndex.from_parts(bytes.fromhex(header["ids_salt"]), blob, ends, table)
    ledger._commit_index = sections["commit_index"]
    ledger._commit_gate = sections["commit_gate"]
    ledger._commitments = sections["commitments"]
    ledger._commit_time = sections["commit_time"]
    ledger._times = header["times"]
    ledger._gate_ids = header["gate_ids"]
    ledger._gate_ordinals = {g: n for n, g in enumerate(ledger._gate_ids)}
    ledger.gates = {g[0]: Gate(*g) for g in header["gates"]}
    ledger.methodologies = {m[0]: MethodologyEvent(*m) for m in header["methodologies"]}
    ledger.reveals = {r[0]: Reveal(*r) for r in header["reveals"]}
    for row in header["runs"]:
        run = RunEvent(*row)
        ledger.runs[run.id] = run
        ledger.runs_by_subject.setdefault((run.subject["name"], run.gate), []).append(run)
    for row in header["certificates"]:
        cert = CertificateEvent(*row)
        ledger.certificates[cert.serial] = cert
        ledger.certificate_of_run[cert.run] = cert.serial
    ledger.revocations = {r[0]: Revocation(*r) for r in header["revocations"]}
    ledger.label_sets = {e[0]: LabelSetEvent(*e) for e in header["label_sets"]}
    ledger.withdrawals = {w[0]: Withdrawal(*w) for w in header["withdrawals"]}
    ledger.draws = {d[0]: Draw(d[0], d[1], d[2], tuple(d[3]), d[4], d[5]) for d in header["draws"]}
    ledger.retirement_draws = [RetirementDraw(d[0], d[1], tuple(d[2]), *d[3:]) for d in header["retirement_draws"]]
    ledger.drawn_retirement = {i: n for n, d in enumerate(ledger.retirement_draws) for i in d.items}
    ledger._pending_reveals, ledger._previous_at = list(header["pending_reveals"]), header["previous_at"]
    ledger.subject_names = dict(header["subject_names"])
    ledger._subject_folds = dict(header["subject_folds"])
    ring = ledger.keys
    ring.spans = [KeySpan(parse_vkey(s[0]), *s[1:]) for s in header["key_spans"]]
    ring.ml_dsa = [KeySpan(parse_cosigner_vkey(s[0]), *s[1:]) for s in header["ml_dsa_spans"]]
    ring._time_starts, ring._time_index = header["key_time_starts"], header["key_time_index"]
    if max(ledger._commit_gate, default=0) >= max(len(ledger._gate_ids), 1) or max(
        ledger._commit_time, default=0
    ) >= max(len(ledger._times), 1):
        raise FormatError("the snapshot's commits point past its gates or times")
    return ledger, header["extra"]


# ==============================================================================================
# generator/verifier/memory/checkpoint_memory.py: The verifier's memory (FORMAT.md v2): the last checkpoint it
#     verified, per log origin.
# ==============================================================================================

STATE_MAX_BYTES = 1 << 24


def user_cache_dir(name: str) -> Path | None:
    """$XDG_CACHE_HOME/NAME, or ~/.cache/NAME (the XDG base directory rule); None without a home."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / name


def default_state_path() -> Path | None:
    """$XDG_CACHE_HOME/transparency-verify/state.json, or under ~/.cache; None without a home."""
    folder = user_cache_dir("transparency-verify")
    return folder / "state.json" if folder else None


def read_state(path: Path) -> dict[str, dict[str, Any]]:
    """origin -> {"tree_size", "root", "checkpoint", "keys"}; {} if the file does not exist yet.
    A row written before rows remembered keys has none: its log is known by its origin alone
    until the next passing run of that log adds them."""
    try:
        with path.open("rb") as f:
            data = f.read(STATE_MAX_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise FormatError(f"{path}: cannot read the verifier's state ({e.strerror or e})") from None
    if len(data) > STATE_MAX_BYTES:
        raise FormatError(f"{path}: larger than {STATE_MAX_BYTES} bytes: not a state file of this verifier")
    try:
        doc = parse_canonical(data)
        if check_keys(doc, ("logs", "type", "v")) or doc["type"] != "verifier-state" or type(doc["v"]) is not int:
            raise FormatError('not {"type":"verifier-state","v":1,"logs":{…}}')
        if doc["v"] != 1:
            raise FormatError('not {"type":"verifier-state","v":1,"logs":{…}}')
        logs = doc["logs"]
        if not isinstance(logs, dict):
            raise FormatError("logs is not an object")
        for origin, row in logs.items():
            if not is_origin(origin) or check_keys(row, ("checkpoint", "root", "tree_size"), ("keys",)):
                raise FormatError(f"the row of {origin!r} is malformed")
            keys = row.get("keys", [])
            if not isinstance(keys, list) or not all(
                isinstance(k, str) and len(b64decode_strict(k)) == 32 for k in keys
            ):
                raise FormatError(f"the row of {origin!r} holds keys that are not Ed25519 public keys")
            if not (isinstance(row["root"], str) and isinstance(row["checkpoint"], str)):
                raise FormatError(f"the row of {origin!r} holds a root or checkpoint that is not text")
            if not is_int(row["tree_size"]) or len(b64decode_strict(row["root"])) != 32:
                raise FormatError(f"the row of {origin!r} has a malformed size or root")
            b64decode_strict(row["checkpoint"])
    except FormatError as e:
        raise FormatError(
            f"{path}: the verifier's state is damaged ({e}); it was left as it is. Move it away to start "
            "remembering afresh (and lose what it remembered)"
        ) from None
    return logs


def saved_from_state(logs: dict[str, dict[str, Any]], origin: str) -> bytes | None:
    row = logs.get(origin)
    return base64.b64decode(row["checkpoint"]) if row else None


def remembered_keys(logs: Mapping[str, Mapping[str, Any]]) -> dict[str, frozenset[bytes]]:
    """origin -> the raw public keys remembered for it (empty for a row that predates keys)."""
    return {origin: frozenset(base64.b64decode(k) for k in row.get("keys", [])) for origin, row in logs.items()}


def _named(origin: str) -> str:
    # A look-alike printed as it is looks exactly like what it imitates: its other characters are named.
    odd = sorted({ch for ch in origin if not ch.isascii()})
    named = ", ".join(f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')}" for ch in odd[:5])
    return json.dumps(origin, ensure_ascii=False) + (f" (with {named}{', …' if len(odd) > 5 else ''})" if odd else "")


def other_log_problems(origin: str, keys: Iterable[bytes], known: Mapping[str, Iterable[bytes]]) -> list[str]:
    """Why a log of `origin` signed by `keys` is not a log of its own beside the `known` ones
    (origin -> the keys remembered for it): a key remembered for another origin is that log
    under another name, whatever the names look like; an origin that looks like another's
    (origin_fold: case, compatibility forms and every UTS #39 confusable) would be read as it."""
    problems = []
    keys = frozenset(keys)
    fold = origin_fold(origin)
    for other in sorted(known):
        if other == origin:
            continue
        shared = sorted(keys & frozenset(known[other]))
        if shared:
            problems.append(
                f"the site's key {fingerprint(shared[0])} is remembered as the key of the log {_named(other)}, "
                f"but the site names its log {_named(origin)}: a key is one log's, and a log re-published under "
                "another origin with the same key would escape the history remembered for it"
            )
        elif origin_fold(other) == fold:
            problems.append(
                f"the site's origin {_named(origin)} looks like the origin of a log this verifier remembers, "
                f"{_named(other)}, but is not it: a look-alike of a known log"
            )
    return problems


def write_state(
    path: Path,
    logs: dict[str, dict[str, Any]],
    tree: dict[str, Any],
    checkpoint: bytes,
    keys: Iterable[bytes] = (),
) -> None:
    """Remember `tree` (a verified checkpoint) for its origin, and `keys` (those the log has
    signed with) beside the ones already remembered for it, replacing the file atomically."""
    logs = dict(logs)
    known = set(remembered_keys(logs).get(tree["origin"], frozenset())) | set(keys)
    logs[tree["origin"]] = {
        "checkpoint": base64.b64encode(checkpoint).decode(),
        "keys": sorted(base64.b64encode(k).decode() for k in known),
        "root": tree["root"],
        "tree_size": tree["tree_size"],
    }
    data = canonical_bytes({"logs": logs, "type": "verifier-state", "v": 1})
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_atomically(path, data)


def replace_atomically(path: Path, data: bytes | Iterable[bytes | memoryview], mode: int = 0o600) -> None:
    """Write `data` (bytes, or pieces written one after the other, so that a big file is never
    joined in memory) to `path` so that a kill at any moment leaves the old file or the new one,
    whole: a temporary file beside it, flushed to disk, renamed over it, the folder flushed."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            for piece in [data] if isinstance(data, bytes | bytearray | memoryview) else data:
                f.write(piece)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def write_hashed(path: Path, header: str, second: str, count: int, body: bytes) -> None:
    """Write a file of the mirror's memory: a `header` line, a `second` line, a line
    `<count> <SHA-256 of body>`, then `body`; atomically, in a folder only the user may read."""
    head = f"{header}\n{second}\n{count} {hashlib.sha256(body).hexdigest()}\n"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_atomically(path, (head.encode("utf-8", "surrogateescape"), body))


def read_hashed(data: bytes, header: str) -> tuple[bytes, int, bytes]:
    """The second line, the count and the body of a file write_hashed wrote; ValueError if it
    does not begin with `header` or the body is not the one its third line names."""
    fields = data.split(b"\n", 3)
    if len(fields) != 4 or fields[0] != header.encode():
        raise ValueError(f"not a record beginning with {header!r}")
    count, _, digest = fields[2].partition(b" ")
    body = fields[3]
    if not count.isdigit() or hashlib.sha256(body).hexdigest().encode() != digest:
        raise ValueError("its third line does not name the count and SHA-256 of what follows it: damaged")
    return fields[1], int(count), body


# ==============================================================================================
# generator/verifier/memory/list_memory.py: What the verifier remembers of the checksum lists it verified last (a v3
#     or v4 site's tree of lists, docs/formats/v3.md, 5; v4.md, 3), so that a list met again with a SHA-256 it had
#     then is not read again, nor any list below it.
# ==============================================================================================

LISTS_VERSION = 1


_MAX_HEADER = 1 << 12


# A remembered list passed as a plain list: each of its lines is of this form.
_REMEMBERED_ROW = re.compile(r"([0-9a-f]{64})  ([^\n]+)\n")


@dataclass(frozen=True)
class Remembered:
    """One list as remembered: its node's prefix, whether it is an inner node's, its bytes."""

    prefix: str
    inner: bool
    body: memoryview

    def rows(self) -> list[tuple[str, str]]:
        """Its lines as (SHA-256, path)."""
        return _REMEMBERED_ROW.findall(str(self.body, "utf-8"))


class ListMemory:
    """The lists of the release verified last, by prefix."""

    def __init__(self, rows: list[tuple[str, bool, str, int, int, int]], blob: memoryview) -> None:
        self.rows = rows  # (prefix, inner, SHA-256, start, end, lists in its subtree)
        self.blob = blob
        self.at = {row[0]: n for n, row in enumerate(rows)}

    def subtree(self, prefix: str, sha256: str) -> range | None:
        """The lists of node `prefix`'s subtree (its own first), if its list was remembered
        with SHA-256 `sha256`; else None, and the list must be read."""
        n = self.at.get(prefix)
        if n is None or self.rows[n][2] != sha256:
            return None
        return range(n, n + self.rows[n][5])

    def length(self, n: int) -> int:
        """The length of the bytes of list `n` (a subtree's first: `span.start`)."""
        return self.rows[n][4] - self.rows[n][3]

    def lists(self, span: range) -> Iterator[Remembered]:
        for n in span:
            prefix, inner, _, start, end, _ = self.rows[n]
            yield Remembered(prefix, inner, self.blob[start:end])


def lists_file(release_file: Path) -> Path:
    """The lists of the release remembered in `release_file` (release_memory.memory_file)."""
    return release_file.with_suffix(".lists")


def load_lists(path: Path, origin: str, rules: str, rule: str | None) -> tuple[ListMemory | None, str | None]:
    """The lists remembered in `path` for log `origin` by code of `rules` in a tree of `rule`
    (None: any rule, for a reader that takes rows only), or None and why not (None when there
    is no such file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, f"{path} cannot be read ({e.strerror or e})"
    try:
        return _parse_lists(data, origin, rules, rule), None
    # A header nested past the parser's depth is as unusable as a torn one.
    except (FormatError, ValueError, KeyError, TypeError, IndexError, RecursionError) as e:
        return None, f"{path}: not used ({e.__class__.__name__}: {e})"


def _parse_lists(data: bytes, origin: str, rules: str, rule: str | None) -> ListMemory:
    end = data.find(b"\n", 0, _MAX_HEADER)
    if end < 0:
        raise FormatError("no header")
    header = json.loads(data[:end])
    if not isinstance(header, dict):
        raise FormatError("the header is not an object")
    if (header["v"], header["origin"], header["rules"]) != (LISTS_VERSION, origin, rules):
        raise FormatError("not the lists of this log by this version of the verifier")
    if rule is not None and header["rule"] != rule:
        raise FormatError(f"lists of a tree split otherwise ({header['rule']}, not {rule})")
    count, size = header["lists"], header["bytes"]
    rows: list[tuple[str, bool, str, int, int, int]] = []
    at = end + 1
    start = 0
    for _ in range(count):
        stop_line = data.index(b"\n", at)
        kind, prefix, sha, length, below = data[at:stop_line].decode("ascii").split(" ")
        if kind not in ("i", "l"):
            raise FormatError(f"a list of kind {kind!r}")
        stop = start + int(length)
        rows.append((prefix, kind == "i", sha, start, stop, int(below)))
        start = stop
        at = stop_line + 1
    blob = memoryview(data)[at:]
    if (
        hashlib.sha256(memoryview(data)[end + 1 : at]).hexdigest() != header["lines"]
        or hashlib.sha256(blob).hexdigest() != header["sha256"]
    ):
        raise FormatError("the lines and lists are not those written")
    if start != size or len(blob) != size or any(n + r[5] > count or r[5] < 1 for n, r in enumerate(rows)):
        raise FormatError("lists that do not add up")
    return ListMemory(rows, blob)


class ListRecord:
    """The lists of this run in the order met, each read (its bytes, hashed here) or taken
    with its subtree from the memory, for the next run. Their bytes go to a temporary file as
    they are met: a million items' lists are tens of MiB, which the run would hold to its end."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, bool, str, int]] = []  # prefix, inner, SHA-256, length
        self.hashed = hashlib.sha256()
        self.why_not: str | None = None  # why nothing is recorded (the temporary file failed)
        # Read back and closed by chunks(), or closed by close(): a file without a name.
        self.spool: IO[bytes] | None = None
        try:
            self.spool = tempfile.TemporaryFile()  # noqa: SIM115
        except OSError as e:
            self._fail(e)

    def _fail(self, e: OSError) -> None:
        # The record is only the next run's shortcut: a temporary folder full or unwritable
        # costs that, never this run's verdict.
        self.why_not = f"no temporary file for the checksum lists ({e.strerror or e})"
        self.close()

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()
            self.spool = None

    # A run that fails, or stops early, never writes its record: its file goes with it.
    __del__ = close

    def _add(self, prefix: str, inner: bool, sha256: str, body: bytes | memoryview) -> None:
        if self.spool is None:
            return
        try:
            self.spool.write(body)
        except OSError as e:
            self._fail(e)
            return
        self.rows.append((prefix, inner, sha256, len(body)))
        self.hashed.update(body)

    def read(self, prefix: str, inner: bool, body: bytes) -> None:
        self._add(prefix, inner, hashlib.sha256(body).hexdigest(), body)

    def taken(self, memory: ListMemory, span: range) -> None:
        for n in span:
            prefix, inner, sha, start, end, _ = memory.rows[n]
            self._add(prefix, inner, sha, memory.blob[start:end])

    def chunks(self, origin: str, rules: str, rule: str) -> Iterator[bytes]:
        """The file's bytes, in pieces (the lists' bytes are read back a MiB at a time)."""
        below = _subtree_sizes([r[0] for r in self.rows])
        lines = "".join(
            f"{'i' if inner else 'l'} {prefix} {sha} {length} {n}\n"
            for (prefix, inner, sha, length), n in zip(self.rows, below, strict=True)
        ).encode("ascii")
        header = {
            "bytes": sum(r[3] for r in self.rows),
            "lines": hashlib.sha256(lines).hexdigest(),
            "lists": len(self.rows),
            "origin": origin,
            "rule": rule,
            "rules": rules,
            "sha256": self.hashed.hexdigest(),
            "v": LISTS_VERSION,
        }
        spool = self.spool
        if spool is None:
            raise OSError(self.why_not or "the checksum lists were written already")
        self.spool = None
        with spool:
            yield json.dumps(header, sort_keys=True).encode() + b"\n"
            yield lines
            spool.seek(0)
            while chunk := spool.read(1 << 20):
                yield chunk


def _subtree_sizes(prefixes: list[str]) -> list[int]:
    """How many lists each one's subtree holds, itself included, when each list is followed by
    every list below it (a node's prefix begins each of its descendants')."""
    sizes = [1] * len(prefixes)
    open_: list[int] = []  # the lists whose subtree may go on, outermost first
    for n, prefix in enumerate(prefixes):
        while open_ and not prefix.startswith(prefixes[open_[-1]]):
            m = open_.pop()
            sizes[m] = n - m
        open_.append(n)
    for m in open_:
        sizes[m] = len(prefixes) - m
    return sizes


# ==============================================================================================
# generator/verifier/memory/release_memory.py: What the verifier remembers of the last release it verified (FORMAT.md,
#     "The verifier's memory"), so that it verifies the next release from there instead of from nothing.
# ==============================================================================================

MEMORY_VERSION = 1


# What a key of a passed check is of: an archive member read back ("members"), a v3 download part
# checked with its leaf's list ("parts").
CHECK_KINDS = ("members", "parts")


# What a whole check remembered is of: a certificate's, a run's, an inclusion proof's (by serial,
# by run id, by the proof's path).
MEMO_KINDS = ("certificates", "runs", "proofs")


def rules_version() -> str:
    """The SHA-256 of the code verifying: the one-file bundle, or every module of the package."""
    here = Path(os.path.abspath(__file__))
    package = here.parent.parent  # generator/verifier/, when this is release_memory.py of the package
    files = (
        [(here.name, here)]
        if here.name != "release_memory.py"
        else sorted((p.relative_to(package).as_posix(), p) for p in package.rglob("*.py"))
    )
    h = hashlib.sha256()
    for name, f in files:
        h.update(name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def memory_file(folder: Path, origin: str) -> Path:
    return folder / f"{hashlib.sha256(origin.encode()).hexdigest()[:32]}.release"


def private_to_user(path: Path) -> bool:
    """Whether `path` is this user's and nobody else may write it: a memory another user could
    write could tell this verifier that a certificate passed before. (Where the system has no
    owners, as on Windows, its folder's permissions are the user's own business.)"""
    if not hasattr(os, "getuid"):
        return True
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def remembered_lists(folder: Path, origin: str) -> ListMemory | None:
    """The lists of log `origin`'s release verified last, as remembered in `folder` (for the
    mirror, which reads only their rows), if the memory is this user's alone and of this code."""
    if not private_to_user(folder):
        return None
    return _private_lists(lists_file(memory_file(folder, origin)), origin, rules_version(), None)[0]


def _private_lists(path: Path, origin: str, rules: str, rule: str | None) -> tuple[ListMemory | None, str | None]:
    """load_lists of `path` if it is this user's alone; else None, and why if it is there."""
    if not private_to_user(path):
        return None, f"{path} is not this user's alone (another could have written it)" if path.exists() else None
    return load_lists(path, origin, rules, rule)


class Memory:
    """The memory read for this run (if any: `ledger` is None otherwise), and what this run
    learns for the next."""

    def __init__(self, folder: Path, origin: str, full: bool = False) -> None:
        self.folder = folder
        self.origin = origin
        self.path = memory_file(folder, origin)
        self.ledger: Ledger | None = None
        self.extra: dict[str, Any] = {}
        self.why_not: str | None = None
        self.tiles_why_not: str | None = None  # why the whole tiles are read again, though the replay resumed
        self.rules = rules_version()
        self.bound = False  # the memory is of the release the state file remembers
        self.used = False  # the replay resumed from it
        # What this run learns, saved only when it passes.
        self.new_rechecks: dict[str, list[Any]] = {}
        self.new_memos: dict[str, dict[str, list[Any]]] = {kind: {} for kind in MEMO_KINDS}
        self.learned: dict[str, set[str]] = {kind: set() for kind in CHECK_KINDS}
        self.new_commitment_parts: dict[str, Any] | None = None
        self.new_lists: tuple[ListRecord, str] | None = None  # a v3 or v4 site's lists, and its tree's rule
        self.lists_why_not: str | None = None  # why the lists remembered were not used
        # The replay's state, its binding, and the key spans its events made.
        self.new_snapshot: tuple[Ledger, dict[str, Any], int] | None = None
        if not full:
            self._load()

    def _load(self) -> None:
        if not private_to_user(self.folder) or not private_to_user(self.path):
            if self.path.exists():
                self.why_not = f"{self.path} or its folder is not this user's alone (another could have written it)"
            return
        try:
            f = self.path.open("rb")
        except FileNotFoundError:
            return
        except OSError as e:
            self.why_not = f"{self.path} cannot be read ({e.strerror or e})"
            return
        try:
            with f:
                ledger, extra = read_snapshot(f, os.fstat(f.fileno()).st_size)
            if extra.get("v") != MEMORY_VERSION or extra.get("origin") != self.origin:
                raise FormatError("not a memory of this log by this version")
            if extra.get("rules") != self.rules:
                raise FormatError("made by another version of the verifier")
            stream_from(extra["frontier"])
        except OSError as e:
            self.why_not = f"{self.path} cannot be read ({e.strerror or e})"
            return
        except (FormatError, KeyError, TypeError, ValueError) as e:
            self.why_not = f"{self.path}: not used ({e})"
            return
        self.ledger, self.extra = ledger, extra

    def bind(self, remembered: list[tuple[int, bytes]]) -> None:
        """Use this memory only if it is of a release whose checkpoint (size, root) the state
        file remembers: the memory and the state are written by the same passing run."""
        if self.ledger is None:
            return
        self.bound = (self.extra["tree_size"], self.extra["root"]) in [(n, r.hex()) for n, r in remembered]
        if not self.bound:
            self.why_not = f"{self.path} is not of the release the state file remembers"
            self.ledger = None

    # -- the ledger

    def resume(self, rel: str, data: bytes, roots_at: dict[int, bytes]) -> tuple[Ledger, MerkleStream, int] | None:
        """Where to resume the replay of entries document `data`: the remembered state and the
        offset just after its last leaf, if `data` begins with exactly the bytes remembered and
        every root the checks ask for up to that size is remembered; else None."""
        if self.ledger is None or not self.bound:
            return None
        entries = self.extra.get("entries")
        if not isinstance(entries, dict):
            self.why_not = "the release verified last was read from its tiles, not from an entries document"
            return None
        offset = entries["bytes"]
        if entries["path"] != rel or not 0 < offset < len(data) or data[offset : offset + 1] not in (b",", b"]"):
            self.why_not = "the entries document does not continue the remembered one"
            return None
        if hashlib.sha256(memoryview(data)[:offset]).hexdigest() != entries["sha256"]:
            self.why_not = "the entries document's first bytes differ from the release verified last"
            return None
        return self._resumed(offset, roots_at)

    def resume_tiles(self, size: int, roots_at: dict[int, bytes]) -> tuple[Ledger, MerkleStream, int] | None:
        """Where to resume the replay of a ledger read from its tiles (a v3 site's, which has no
        entries document): the remembered state and size, if the site's log is at least that
        long and every root the checks ask for up to that size is remembered; else None. The
        caller then reads the tiles from there (tile_builder) or all of them; either way the
        remembered tree grown by the new leaves must have the root the checkpoint signs."""
        if self.ledger is None or not self.bound:
            return None
        if self.ledger.size > size:
            self.why_not = "the site's ledger is shorter than the release verified last"
            return None
        return self._resumed(self.ledger.size, roots_at)

    def _resumed(self, offset: int, roots_at: dict[int, bytes]) -> tuple[Ledger, MerkleStream, int] | None:
        assert self.ledger is not None
        size = self.ledger.size
        roots = {int(k): bytes.fromhex(v) for k, v in self.extra["roots"].items()}
        asked = [n for n in roots_at if 0 < n <= size]
        if any(n not in roots for n in asked):
            self.why_not = "the history names a tree size the release verified last did not"
            return None
        for n in asked:
            roots_at[n] = roots[n]
        ledger, self.ledger = self.ledger, None  # the replay goes on in it: it is no longer the memory's
        self.used = True
        return ledger, stream_from(self.extra["frontier"]), offset

    def took(
        self, rel: str, data: bytes, end: int, ledger: Ledger, stream: MerkleStream, roots_at: dict[int, bytes]
    ) -> None:
        """The replay ended: remember its state, made now, before any later check touches it."""
        extra: dict[str, Any] = {
            "entries": {"path": rel, "bytes": end, "sha256": hashlib.sha256(memoryview(data)[:end]).hexdigest()},
            "frontier": frontier_of(stream),
            "roots": {str(n): r.hex() for n, r in sorted(roots_at.items()) if r and n <= ledger.size},
        }
        self.new_snapshot = (ledger, extra, len(ledger.keys.spans))

    def tile_builder(self, folder: str, listed: Mapping[str, str], matched: Container[str]) -> TileBuilder | None:
        """The tiles of the remembered tree as built then, to go on from, if this release's lists
        give every whole tile of that tree the SHA-256 it had when it was checked, and its bytes
        have it: a whole tile never changes, so these were checked then, and need not be read."""
        tiles = self.extra.get("tiles") if self.bound else None
        if not isinstance(tiles, dict) or "builder" not in tiles:
            return None
        try:
            builder = TileBuilder.resumed(tiles["builder"])
        except FormatError:
            return None
        if _whole_tiles_digest(folder, builder.size, listed, matched) != tiles.get("whole"):
            self.tiles_why_not = "a whole tile is not listed with the SHA-256 it had in the release verified last"
            return None
        return builder

    def took_tiles(
        self,
        ledger: Ledger,
        stream: MerkleStream,
        roots_at: dict[int, bytes],
        builder: TileBuilder | None = None,
        folder: str = "",
        listed: Mapping[str, str] | None = None,
    ) -> None:
        """The replay of a ledger read from its tiles ended: remember its state by its tree size
        (`tiles`), the next run resuming after its last leaf; with the site's lists, the tiles'
        `builder` too, and the digest of the whole tiles' SHA-256es that vouches for them (a tile's
        path tile/… is the site's `folder`/tile/…)."""
        tiles: dict[str, Any] = {"tree_size": ledger.size}
        whole = _whole_tiles_digest(folder, ledger.size, listed, listed.keys()) if listed is not None else None
        if builder is not None and builder.size == ledger.size and whole is not None:
            tiles.update({"builder": builder.state(), "whole": whole})
        extra: dict[str, Any] = {
            "tiles": tiles,
            "frontier": frontier_of(stream),
            "roots": {str(n): r.hex() for n, r in sorted(roots_at.items()) if r and n <= ledger.size},
        }
        self.new_snapshot = (ledger, extra, len(ledger.keys.spans))

    # -- the parts of a v3 commitment list

    def commitment_parts(self) -> tuple[int, int, list[str]] | None:
        """The release verified last's tree size, commitment count and parts' SHA-256, if the
        replay went on from it (only then are the events since it known)."""
        known = self.extra.get("commitment_parts") if self.used else None
        if not isinstance(known, dict):
            return None
        size, commits, shas = self.extra.get("tree_size"), known.get("commits"), known.get("sha256")
        if not (isinstance(size, int) and isinstance(commits, int) and isinstance(shas, list)):
            return None
        return size, commits, [h for h in shas if isinstance(h, str)]

    def took_commitment_parts(self, commits: int, shas: list[str]) -> None:
        self.new_commitment_parts = {"commits": commits, "sha256": shas}

    # -- a v3 or v4 site's checksum lists (memory/list_memory.py)

    def remembered_lists(self, rule: str) -> ListMemory | None:
        """The lists of the release verified last, in a tree split by `rule` (lists_why_not says
        why a file of them is not used)."""
        if not self.bound:
            return None
        lists, self.lists_why_not = _private_lists(lists_file(self.path), self.origin, self.rules, rule)
        return lists

    def took_lists(self, record: ListRecord, rule: str) -> None:
        self.new_lists = (record, rule)

    # -- certificate recomputations

    def recheck_key(self, *inputs: Any) -> str:
        # A key, not a document: any injective text of the values serves, and compact JSON in the
        # values' own order is one (a dict keeps the order it was parsed or built in; the same
        # values in another order are a key missed, never one shared), made without sorting
        # every object's keys, which was nearly half the cost of 40,000 keys a run.
        text = json.dumps([self.rules, *inputs], separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def recheck(self, key: str) -> tuple[int, list[str]] | None:
        """The checks counted and the assertions of a recomputation under `key` that passed."""
        found = self.extra.get("rechecks", {}).get(key) if self.bound else None
        if found is None:
            return None
        self.new_rechecks[key] = found
        return found[0], list(found[1])

    def passed(self, key: str, checks: int, asserted: list[str]) -> None:
        self.new_rechecks[key] = [checks, asserted]

    # -- whole checks of a certificate, a run or a v3 inclusion proof (site/certificate_memo.py,
    # site/run_memo.py, site/history_v3.py)

    def memo(self, kind: str, name: str) -> list[Any] | None:
        """What the last release's check of the certificate, run or proof `name` (`kind`: MEMO_KINDS)
        read and found, if it passed and the replay went on from that release (only then are the
        leaves it read the same)."""
        found = self.extra.get(kind, {}).get(name) if self.used else None
        return found if isinstance(found, list) else None

    def took_memo(self, kind: str, name: str, remembered: list[Any]) -> None:
        self.new_memos[kind][name] = remembered

    # -- archive members

    def member_key(self, method: int, crc: int, size: int, compressed_sha256: str, content_sha256: str) -> str:
        # The declared CRC-32 and size too: reading a member back checks both, so bytes read
        # before under another header must be read again, and fail as they fail from nothing.
        fields = f"{self.rules}\0{method}\0{crc}\0{size}\0{compressed_sha256}\0{content_sha256}"
        return hashlib.sha256(fields.encode()).hexdigest()

    # -- keys of checks that passed: archive members, download parts

    def check_known(self, kind: str, key: str) -> bool:
        """Whether a check of `kind` (CHECK_KINDS) passed before under `key`, which names everything
        the check is a function of (member_key, part_key); kept for the next run if so."""
        if not self.bound or key not in self._known_set(kind):
            return False
        self.learned[kind].add(key)
        return True

    def check_passed(self, kind: str, key: str) -> None:
        self.learned[kind].add(key)

    def _known_set(self, name: str) -> frozenset[str]:
        known = self.extra.get(name)
        if not isinstance(known, frozenset):
            known = frozenset(k for k in known if isinstance(k, str)) if isinstance(known, list) else frozenset()
            self.extra[name] = known
        return known

    # -- download parts (docs/formats/v3.md, 6)

    def part_key(self, rel: str, sha256: str, list_rel: str, list_sha256: str) -> str:
        """A part's check is a function of its bytes and of its leaf's list, which names the files
        it must hold and their SHA-256: the same two, checked before, pass again."""
        return hashlib.sha256(f"{self.rules}\0{rel}\0{sha256}\0{list_rel}\0{list_sha256}".encode()).hexdigest()

    # -- saving

    def save(self, tree: dict[str, Any], root: bytes) -> None:
        """Remember this run (which passed) for the next; the caller writes the state file after."""
        if self.new_snapshot is None:
            return
        ledger, extra, spans = self.new_snapshot
        extra.update(
            {
                "v": MEMORY_VERSION,
                "origin": self.origin,
                "tree_size": tree["tree_size"],
                "root": root.hex(),
                "rules": self.rules,
                "rechecks": dict(sorted(self.new_rechecks.items())),
                **{kind: dict(sorted(memos.items())) for kind, memos in self.new_memos.items()},
                **{kind: sorted(keys) for kind, keys in self.learned.items()},
            }
        )
        if self.new_commitment_parts is not None:
            extra["commitment_parts"] = self.new_commitment_parts
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.new_lists is not None:
            # First: lists that outlive the release file beside them are used by content only.
            record, rule = self.new_lists
            replace_atomically(lists_file(self.path), record.chunks(self.origin, self.rules, rule))
        replace_atomically(self.path, snapshot_chunks(ledger, extra, spans))


def _whole_tiles_digest(folder: str, size: int, listed: Mapping[str, str], matched: Container[str]) -> str | None:
    """One SHA-256 over the listed SHA-256 of every whole tile (hash tiles and entry bundles) of a
    tree of `size` leaves; None if one is not listed, or its bytes do not have what is listed."""
    h = hashlib.sha256()
    for path, width in tile_paths(size):
        rel = f"{folder}/{path}"
        if width != TILE_WIDTH:
            continue
        sha = listed.get(rel)
        if sha is None or rel not in matched:
            return None
        h.update(f"{sha}  {rel}\n".encode())
    return h.hexdigest()


# ==============================================================================================
# generator/verifier/rules/answers.py: The answers certificates are scored and rechecked against, read from reveal
#     documents.
# ==============================================================================================

# Answers kept at once: far more than the items of one run, far fewer than a million.
ANSWER_CACHE = 20_000


class RevealedAnswers:
    """Answers by item id. `fetch(item_id)` returns the bytes of the item's reveal document,
    or None if there are none to read; with `sealed=True` the items need not be revealed yet
    (the private store of `certify`)."""

    def __init__(self, ledger: Ledger, fetch: Callable[[str], bytes | None], sealed: bool = False) -> None:
        self.ledger = ledger
        self.fetch = fetch
        self.sealed = sealed
        self._cache: dict[str, tuple[dict[str, Any] | None, str | None]] = {}

    def load(self, item_id: str) -> tuple[dict[str, Any] | None, str | None]:
        """(the answer, None), or (None, why there is none)."""
        hit = self._cache.get(item_id)
        if hit is not None:
            return hit
        found = self._load(item_id)
        if len(self._cache) >= ANSWER_CACHE:
            self._cache.clear()
        self._cache[item_id] = found
        return found

    def _load(self, item_id: str) -> tuple[dict[str, Any] | None, str | None]:
        commit = self.ledger.commit(item_id)
        if commit is None:
            return None, f"item {item_id} was never committed"
        if not self.sealed and item_id not in self.ledger.reveals:
            return None, f"item {item_id} is not revealed"
        data = self.fetch(item_id)
        if data is None:
            return None, f"the reveal document of {item_id} is missing"
        digest = sha256_hex(data)
        if digest != commit.commitment:
            return (
                None,
                f"the reveal document of {item_id} does not hash to its commitment (expected {commit.commitment}, "
                f"found {digest})",
            )
        try:
            doc = parse_canonical(data)
        except FormatError as e:
            return None, f"the reveal document of {item_id}: {e}"
        if check_reveal_document(doc):
            return None, f"the reveal document of {item_id} is not an item-reveal document of format v1 §3"
        return doc["item"]["answer"], None

    def answer(self, item_id: str) -> dict[str, Any] | None:
        return self.load(item_id)[0]

    def answers(self, items: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The answers of those of `items` that have one."""
        out = {}
        for i in items:
            a = self.answer(i)
            if a is not None:
                out[i] = a
        return out


# ==============================================================================================
# generator/verifier/rules/runs.py: Runs (format v1 §4, §6): the run spec's shape and the rules a registered run
#     obeys.
# ==============================================================================================

RUN_SPEC_KEYS = (
    "type",
    "v",
    "id",
    "previous_run",
    "subject",
    "gate",
    "question",
    "items",
    "budget",
    "repetitions",
    "metrics",
    "exclusion_rules",
    "methodology",
    "judge",
)


# FORMAT.md reading 4: the budget members this project gives a meaning, each a count (seconds,
# tokens); other members are the program's own, any JSON value.
BUDGET_LIMITS = ("max_wall_clock_seconds", "max_output_tokens_per_item")


def check_run_spec(spec: Any) -> list[Problem]:
    """Problems with a run spec's shape (format v1 §6; a drawn run's, FORMAT.md "Draws and timestamps")."""
    # A spec that draws its items is v 2 and names a draw where v1 lists items: a v1 reader
    # refuses it rather than read a run without items.
    drawn = isinstance(spec, dict) and "draw" in spec
    keys = tuple("draw" if k == "items" else k for k in RUN_SPEC_KEYS) if drawn else RUN_SPEC_KEYS
    problems = check_keys(spec, keys)
    if not isinstance(spec, dict):
        return problems
    # Every problem of a spec names its field, as the checks below do: a member that is missing or
    # not allowed is named by itself.
    unknown = ", ".join(sorted(str(k) for k in spec if k not in keys))
    missing = {f"missing {k!r}": k for k in keys}
    problems = [p.at("", missing.get(p.message, unknown)) if not p.where else p for p in problems]
    version = 2 if drawn else 1
    if spec.get("type") != "run-spec" or not (is_int(spec.get("v")) and spec["v"] == version):
        problems.append(
            Problem(
                "wrong type or version",
                where="type" if spec.get("type") != "run-spec" else "v",
                expected=f'"run-spec", v {version}',
                found=f"{show(spec.get('type'))}, v {show(spec.get('v'))}",
            )
        )
    if not is_id(spec.get("id")):
        problems.append(Problem("malformed run id", where="id", found=show(spec.get("id"))))
    prev = spec.get("previous_run")
    if prev is not None and not is_id(prev):
        problems.append(Problem("must be a run id or null", where="previous_run", found=show(prev)))
    problems += check_subject(spec.get("subject"), "subject")
    items = spec.get("items")
    if drawn:
        problems += drawn_spec_problems(spec)
    elif not (isinstance(items, list) and items and all(is_id(i) for i in items)):
        problems.append(Problem("must be a non-empty list of item ids", where="items", found=show(items)))
    elif len(set(items)) != len(items):
        dup = sorted({i for i in items if items.count(i) > 1})
        problems.append(Problem("items must be distinct", where="items", found=", ".join(dup)))
    if spec.get("repetitions") != 1 or not is_int(spec.get("repetitions")):
        problems.append(
            Problem("repetitions is 1 in v1", where="repetitions", expected="1", found=show(spec.get("repetitions")))
        )
    question = spec.get("question")
    if not (isinstance(question, str) and question.strip()):
        problems.append(Problem("must be a non-empty string", where="question", found=show(question)))
    if not is_gate_id(spec.get("gate")):
        problems.append(
            Problem("malformed gate id", where="gate", expected=GATE_RE.pattern, found=show(spec.get("gate")))
        )
    budget = spec.get("budget")
    if "budget" in spec and not isinstance(budget, dict):
        problems.append(Problem("must be an object", where="budget", found=show(budget)))
    elif isinstance(budget, dict):
        for k in BUDGET_LIMITS:
            if k in budget and not (is_int(budget[k]) and budget[k] >= 1):
                problems.append(
                    Problem("must be a whole number, at least 1", where=f"budget.{k}", found=show(budget[k]))
                )
    metrics = spec.get("metrics")
    if "metrics" in spec and not (isinstance(metrics, list) and all(isinstance(x, str) for x in metrics)):
        problems.append(Problem("must be a list of strings", where="metrics", found=show(metrics)))
    rules = spec.get("exclusion_rules")
    if not (isinstance(rules, list) and all(isinstance(r, str) for r in rules)):
        problems.append(Problem("must be a list of strings", where="exclusion_rules", found=show(rules)))
    problems += _methodology_pin_shape(spec.get("methodology"))
    problems += _judge_shape(spec.get("judge"))
    return problems


def _methodology_pin_shape(m: Any) -> list[Problem]:
    problems = check_keys(m, ("version", "sha256"), where="methodology")
    if not isinstance(m, dict):
        return problems
    if "version" in m and not (isinstance(m["version"], str) and VERSION_RE.fullmatch(m["version"])):
        problems.append(
            Problem(
                "malformed methodology version",
                where="methodology.version",
                expected=VERSION_RE.pattern,
                found=show(m["version"]),
            )
        )
    if "sha256" in m and not is_hex64(m["sha256"]):
        problems.append(Problem("malformed hash", where="methodology.sha256", found=show(m["sha256"])))
    return problems


def _judge_shape(judge: Any) -> list[Problem]:
    problems = check_keys(
        judge, ("provider", "model", "version", "rubric_sha256", "seed"), optional=JUDGE_PINS, where="judge"
    )
    if not isinstance(judge, dict):
        return problems
    problems += judge_pin_problems(judge)
    if "provider" in judge:
        # The independence rule compares it with the subject's organization: it must read
        # as what it is, like the organization itself.
        problems += name_problems(judge["provider"], "judge.provider")
    for k in ("model", "version"):
        if k in judge and not isinstance(judge[k], str):
            problems.append(Problem("must be a string", where=f"judge.{k}", found=show(judge[k])))
    if "rubric_sha256" in judge and not is_hex64(judge["rubric_sha256"]):
        problems.append(Problem("malformed hash", where="judge.rubric_sha256", found=show(judge["rubric_sha256"])))
    if "seed" in judge and not (judge["seed"] is None or is_int(judge["seed"])):
        problems.append(Problem("must be an integer or null", where="judge.seed", found=show(judge["seed"])))
    return problems


# Format v2 (FORMAT.md, "Judge pinning"): what else must be fixed before a judge is trusted.
JUDGE_PINS = ("rubric", "score_direction", "route", "transcript_scope")


SCORE_DIRECTIONS = ("higher_is_better", "lower_is_better")


def judge_pin_problems(judge: dict[str, Any]) -> list[Problem]:
    """A pinned judge gives all four pins or none: a rubric hash without its text cannot be
    read, and a text without a direction or a scope cannot be applied the same way twice."""
    given = [k for k in JUDGE_PINS if k in judge]
    if not given:
        return []
    problems = []
    missing = [k for k in JUDGE_PINS if k not in judge]
    if missing:
        problems.append(
            Problem(
                f"a pinned judge gives {', '.join(JUDGE_PINS)} together; missing {', '.join(missing)}",
                where="judge",
            )
        )
    rubric = judge.get("rubric")
    if "rubric" in judge:
        if not (isinstance(rubric, str) and rubric.strip()):
            problems.append(Problem("the rubric's own text, non-empty", where="judge.rubric", found=show(rubric, 80)))
        elif is_hex64(judge.get("rubric_sha256")) and sha256_hex(rubric.encode("utf-8")) != judge["rubric_sha256"]:
            problems.append(
                Problem(
                    "rubric_sha256 is not the SHA-256 of the rubric's text (UTF-8)",
                    where="judge.rubric_sha256",
                    expected=sha256_hex(rubric.encode("utf-8")),
                    found=judge["rubric_sha256"],
                )
            )
    if "score_direction" in judge and judge["score_direction"] not in SCORE_DIRECTIONS:
        problems.append(
            Problem(
                "unknown score direction",
                where="judge.score_direction",
                expected=" | ".join(SCORE_DIRECTIONS),
                found=show(judge["score_direction"]),
            )
        )
    for k in ("route", "transcript_scope"):
        if k in judge and not (isinstance(judge[k], str) and judge[k].strip()):
            problems.append(Problem("must be a non-empty string", where=f"judge.{k}", found=show(judge[k])))
    return problems


def check_run_rules(
    ledger: Ledger,
    run: RunEvent,
    spec: dict[str, Any],
    m: Methodology | None,
    earlier_specs: dict[str, dict[str, Any]],
) -> list[Problem]:
    """The rules a registered run must obey given the ledger around it (format v1 §4, §6).

    `earlier_specs` holds the specs of runs registered before this one, for the
    one-observation rule. Used by the verifier and by `register`. A drawn run's spec is read as
    drawn_items.effective_spec gives it (its items those its draw recorded), and so are the
    earlier ones.
    """
    problems = _run_leaf_problems(run, spec)
    problems += _methodology_pin_problems(ledger, run, as_dict(spec.get("methodology")))
    gate = ledger.gates.get(run.gate)
    secret = gate is not None and not gate.public
    items = as_list(spec.get("items"))
    problems += _run_items_problems(ledger, run, items, secret)
    # previous_run: the last run of the same subject name and gate, decided before this one.
    same_subject = ledger.runs_before(run)
    prev = same_subject[-1].id if same_subject else None
    if spec.get("previous_run") != prev:
        problems.append(
            Problem(
                "previous_run is not the last run of this subject on this gate",
                where="previous_run",
                expected=show(prev),
                found=show(spec.get("previous_run")),
            )
        )
    if prev is not None:
        decided = ledger.decided_at(prev)
        if decided is None or decided > run.index:
            problems.append(Problem(f"registered while the previous run {prev} was still open", where="previous_run"))
    draw = as_dict(spec.get("draw"))
    if draw:
        seen = {i for r in same_subject for i in as_list(earlier_specs.get(r.id, {}).get("items"))}
        problems += run_draw_problems(ledger, run, spec, m, seen)
    elif secret and m is not None and m.draws_required:
        problems.append(Problem("the methodology requires a secret-gate run to draw its items", where="items"))
    if m is not None:
        problems += _methodology_requirements(m, spec, draw.get("count", 0) if draw else len(items), secret)
    if secret:
        problems += _reused_items(set(items), same_subject, earlier_specs)
    return problems


def _run_leaf_problems(run: RunEvent, spec: dict[str, Any]) -> list[Problem]:
    """The spec's id, subject and gate against the run's ledger leaf."""
    problems = []
    if spec.get("id") != run.id:
        problems.append(
            Problem("run spec id differs from the ledger", where="id", expected=run.id, found=show(spec.get("id")))
        )
    if not same(spec.get("subject"), run.subject):
        problems.append(
            Problem(
                "subject differs from the run's ledger leaf",
                where="subject",
                expected=show(run.subject),
                found=show(spec.get("subject")),
            )
        )
    if spec.get("gate") != run.gate:
        problems.append(
            Problem(
                "gate differs from the run's ledger leaf", where="gate", expected=run.gate, found=show(spec.get("gate"))
            )
        )
    return problems


def _methodology_pin_problems(ledger: Ledger, run: RunEvent, pin: dict[str, Any]) -> list[Problem]:
    """The pinned methodology: a version published before the run, with the hash it was published with."""
    version = pin.get("version")
    published = ledger.methodologies.get(version) if isinstance(version, str) else None
    if published is None or published.index > run.index:
        return [
            Problem(
                "pins a methodology version not published before the run",
                where="methodology.version",
                found=show(pin.get("version")),
            )
        ]
    if published.sha256 != pin.get("sha256"):
        return [
            Problem(
                "pinned methodology hash differs from the published one",
                where="methodology.sha256",
                expected=published.sha256,
                found=show(pin.get("sha256")),
            )
        ]
    return []


def _run_items_problems(ledger: Ledger, run: RunEvent, items: list[Any], secret: bool) -> list[Problem]:
    """Each item committed to the run's gate before the run; a public gate's revealed before it, a
    secret gate's still sealed when the run was registered and until it was decided."""
    problems = []
    cert_index = ledger.decided_at(run.id)  # a withdrawal decides a run as a certificate does
    for item_id in items:
        c = ledger.commit_place(item_id) if isinstance(item_id, str) else None
        if c is None or c[0] > run.index:
            problems.append(Problem(f"item {item_id} was not committed before the run", where="items"))
            continue
        if c[1] != run.gate:
            problems.append(
                Problem(f"item {item_id} is not of the run's gate", where="items", expected=run.gate, found=c[1])
            )
        r = ledger.reveals.get(item_id)
        if not secret:
            if r is None or r.index > run.index:
                problems.append(Problem(f"public-gate item {item_id} was not revealed before the run", where="items"))
        elif r is not None and r.index < run.index:
            problems.append(
                Problem(
                    f"item {item_id} of a secret gate was already revealed when the run was registered: its result "
                    "would be contaminated",
                    where="items",
                    expected="a sealed item",
                    found=f"revealed at entries[{r.index}]",
                )
            )
        elif r is not None and (cert_index is None or r.index < cert_index):
            problems.append(
                Problem(
                    f"sealed item {item_id} was revealed while the run was open",
                    where="items",
                    expected="revealed after the certificate",
                    found=f"revealed at entries[{r.index}]",
                )
            )
    return problems


def _methodology_requirements(m: Methodology, spec: dict[str, Any], item_count: int, secret: bool) -> list[Problem]:
    """What the pinned methodology asks of a run: a judge independent of the subject's
    organization, if it says so, and enough items on a secret gate."""
    problems = []
    if m.independent_judge:
        judge, subject = as_dict(spec.get("judge")), as_dict(spec.get("subject"))
        provider, organization = judge.get("provider"), subject.get("organization")
        if not (isinstance(provider, str) and isinstance(organization, str)) or subject_fold(provider) in (
            "",
            subject_fold(organization),
        ):
            problems.append(
                Problem(
                    "the judge must be independent of the subject's organization",
                    where="judge.provider",
                    expected=f"not {subject.get('organization')!r}",
                    found=show(judge.get("provider")),
                )
            )
    if secret and item_count < m.min_items_secret_gate:
        problems.append(
            Problem(
                "too few items for a secret gate",
                where="items",
                expected=f"at least {m.min_items_secret_gate}",
                found=str(item_count),
            )
        )
    return problems


def _reused_items(
    mine: set[Any], same_subject: list[RunEvent], earlier_specs: dict[str, dict[str, Any]]
) -> list[Problem]:
    """The one-observation rule: a subject meets a sealed item in one run only."""
    problems = []
    for earlier in same_subject:
        reused = sorted(mine & set(as_list(earlier_specs.get(earlier.id, {}).get("items"))))
        if reused:
            problems.append(
                Problem(
                    f"reuses sealed items already run by this subject on this gate in run {earlier.id}",
                    where="items",
                    found=", ".join(reused[:5]),
                )
            )
    return problems


# ==============================================================================================
# generator/verifier/rules/lineage.py: A result's attempts (FORMAT.md, "Attempts and lineage"): every earlier try of
#     an item kept with its result, each retry tied to the attempt it repeats, an exclusion to the attempt it set
#     aside. One set of rules for the results file `certify` reads and the certificate the verifier reads, so that
#     what certify accepts is exactly what the verifier passes.
# ==============================================================================================

# The statuses after which trying again is fair: nothing about the subject's answer was learned.
RETRIABLE = ("infra_error", "not_run")


# What an earlier attempt may have come to (an exclusion ends a chain, it is not an attempt).
ATTEMPT_STATUSES = ("scored", "infra_error", "not_run", "missing_label")


ATTEMPT_KEYS = ("attempt", "retry_of", "status", "at")


# Notes and the harness's own result are the operator's and the tool's words: on a secret gate they
# may speak of the item, so a sealed result keeps only the skeleton and its details document the rest.
ATTEMPT_OPEN_KEYS = ("note", "native")


# The evidence files an attempt produced, by name: which bytes to read for it. Names of files the
# certificate lists in any case, so a sealed attempt keeps them.
ATTEMPT_EVIDENCE = "evidence"


def lineage_keys(r: dict[str, Any]) -> tuple[str, ...]:
    """The members a result may carry besides its v1 ones: none without earlier attempts."""
    if "attempts" not in r:
        return ()
    if r.get("status") == "excluded":
        return ("attempts", "excludes", "at")
    return ("attempts", "attempt", "retry_of", "at")


def lineage_skeleton(r: dict[str, Any]) -> dict[str, Any]:
    """The lineage members of a result as a sealed result carries them: every number, status and
    time, no note and no native result."""
    out = {k: r[k] for k in lineage_keys(r) if k in r and k != "attempts"}
    if isinstance(r.get("attempts"), list):
        out["attempts"] = [
            {k: a[k] for k in (*ATTEMPT_KEYS, ATTEMPT_EVIDENCE) if k in a} if isinstance(a, dict) else a
            for a in r["attempts"]
        ]
    elif "attempts" in r:
        out["attempts"] = r["attempts"]
    return out


def attempts_made(r: dict[str, Any]) -> int:
    """How many times the item was tried: the earlier attempts, and the final result unless it is
    an exclusion."""
    earlier = r.get("attempts")
    n = len(earlier) if isinstance(earlier, list) else 0
    return n + (0 if r.get("status") == "excluded" else 1)


def lineage_problems(
    r: dict[str, Any],
    where: str,
    *,
    sealed: bool,
    max_attempts: int | None = None,
    not_before: str | None = None,
    not_after: str | None = None,
    render: Callable[[Any], str] = show,
    evidence_names: Container[str] = (),
) -> list[Problem]:
    """Every way a result's attempts break the chain rules. The result's own v1 members (and that
    no other member is present) are checked by its caller; `not_before` is the run's
    registration, `not_after` the results' `finished_at`, when they are known times;
    `evidence_names` the names of the evidence files an attempt may name."""
    if "attempts" not in r:
        stray = sorted(k for k in ("attempt", "retry_of", "excludes", "at") if k in r)
        if stray:
            return [
                Problem(
                    f"{', '.join(stray)} belong(s) to a result with earlier attempts, and this one lists none",
                    where=where,
                    expected="an 'attempts' list, or none of these members",
                )
            ]
        return []
    earlier = r["attempts"]
    if not isinstance(earlier, list) or not earlier:
        return [
            Problem(
                "attempts is a non-empty list of the earlier attempts, oldest first",
                where=f"{where}.attempts",
                found=render(earlier),
            )
        ]
    problems: list[Problem] = []
    excluded = r.get("status") == "excluded"
    for i, a in enumerate(earlier):
        # The last earlier attempt of an exclusion may have come to anything: it is what was set aside.
        ends_chain = excluded and i == len(earlier) - 1
        problems += _attempt_problems(a, i, f"{where}.attempts[{i}]", ends_chain, sealed, evidence_names, render)
    problems += _final_attempt_problems(r, where, len(earlier), excluded, render)
    times = [
        (f"{where}.attempts[{i}].at", a["at"]) for i, a in enumerate(earlier) if isinstance(a, dict) and _has_time(a)
    ]
    if _has_time(r):
        times.append((f"{where}.at", r["at"]))
    problems += _time_order(times, not_before, not_after)
    made = attempts_made(r)
    if max_attempts is not None and made > max_attempts:
        problems.append(
            Problem(
                f"{made} attempts, more than the methodology's retry limit allows",
                where=f"{where}.attempts",
                expected=f"at most {max_attempts} attempts",
                found=str(made),
            )
        )
    return problems


def _attempt_problems(
    a: Any,
    i: int,
    aw: str,
    ends_chain: bool,
    sealed: bool,
    evidence_names: Container[str],
    render: Callable[[Any], str],
) -> list[Problem]:
    """One earlier attempt, the `i`th from 0: its members, its number, the attempt it repeats,
    a status after which it may be tried again, and its note, time and evidence names."""
    problems = check_keys(
        a,
        ATTEMPT_KEYS,
        optional=(ATTEMPT_EVIDENCE,) if sealed else (ATTEMPT_EVIDENCE, *ATTEMPT_OPEN_KEYS),
        where=aw,
    )
    if not isinstance(a, dict):
        return problems
    if ATTEMPT_EVIDENCE in a:
        problems += _attempt_evidence_problems(a[ATTEMPT_EVIDENCE], f"{aw}.{ATTEMPT_EVIDENCE}", evidence_names, render)
    if "attempt" in a and not (is_int(a["attempt"]) and a["attempt"] == i + 1):
        problems.append(
            Problem(
                "attempts are numbered 1, 2, … in order, with no gap",
                where=f"{aw}.attempt",
                expected=str(i + 1),
                found=render(a["attempt"]),
            )
        )
    want_of = None if i == 0 else i
    if "retry_of" in a and not (a["retry_of"] is None if want_of is None else _is_int_of(a["retry_of"], want_of)):
        problems.append(
            Problem(
                "the first attempt repeats nothing; every later one repeats the attempt just before it",
                where=f"{aw}.retry_of",
                expected=show(want_of),
                found=render(a["retry_of"]),
            )
        )
    status = a.get("status")
    if "status" in a and status not in ATTEMPT_STATUSES:
        problems.append(
            Problem(
                "an earlier attempt's status is what that attempt came to",
                where=f"{aw}.status",
                expected=" | ".join(ATTEMPT_STATUSES),
                found=render(status),
            )
        )
    elif "status" in a and status not in RETRIABLE and not ends_chain:
        problems.append(
            Problem(
                f"an attempt that came to {status} was tried again: only an infrastructure error or an item "
                "that did not run may be retried",
                where=f"{aw}.status",
                expected=" | ".join(RETRIABLE),
                found=render(status),
            )
        )
    if "note" in a and not isinstance(a["note"], str):
        problems.append(Problem("a note is text", where=f"{aw}.note", found=render(a["note"])))
    if "at" in a and not is_time(a["at"]):
        problems.append(
            Problem("malformed time", where=f"{aw}.at", expected="YYYY-MM-DDTHH:MM:SSZ", found=render(a["at"]))
        )
    return problems


def _final_attempt_problems(
    r: dict[str, Any], where: str, n: int, excluded: bool, render: Callable[[Any], str]
) -> list[Problem]:
    """The result after `n` earlier attempts: an exclusion excludes the last of them, any other
    result is attempt n + 1 and repeats attempt n; either has its time."""
    problems = []
    if excluded:
        if "excludes" not in r:
            problems.append(Problem("missing 'excludes'", where=where))
        elif not _is_int_of(r["excludes"], n):
            problems.append(
                Problem(
                    "an exclusion after attempts excludes the last of them, which ended the chain",
                    where=f"{where}.excludes",
                    expected=str(n),
                    found=render(r["excludes"]),
                )
            )
    else:
        for k, want in (("attempt", n + 1), ("retry_of", n)):
            if k not in r:
                problems.append(Problem(f"missing {k!r}", where=where))
            elif not _is_int_of(r[k], want):
                problems.append(
                    Problem(
                        "the final result is the attempt after the last earlier one, and repeats it",
                        where=f"{where}.{k}",
                        expected=str(want),
                        found=render(r[k]),
                    )
                )
    if "at" not in r:
        problems.append(Problem("missing 'at'", where=where))
    elif not is_time(r["at"]):
        problems.append(
            Problem("malformed time", where=f"{where}.at", expected="YYYY-MM-DDTHH:MM:SSZ", found=render(r["at"]))
        )
    return problems


def _has_time(d: dict[str, Any]) -> bool:
    return "at" in d and is_time(d["at"])


def _time_order(times: list[tuple[str, str]], not_before: str | None, not_after: str | None) -> list[Problem]:
    """Attempts in the order they were made, none before the run was registered and none after
    the final one or after the run finished (times of one form compare as text)."""
    problems = []
    previous: tuple[str, str] | None = None
    for w, t in times:
        if not_before is not None and t < not_before:
            problems.append(
                Problem("an attempt before the run was registered", where=w, expected=f"≥ {not_before}", found=t)
            )
        if not_after is not None and t > not_after:
            problems.append(Problem("an attempt after the run finished", where=w, expected=f"≤ {not_after}", found=t))
        if previous is not None and t < previous[1]:
            problems.append(
                Problem(
                    f"an attempt made before the one it follows ({previous[0]})",
                    where=w,
                    expected=f"≥ {previous[1]}",
                    found=t,
                )
            )
        previous = (w, t)
    return problems


def _attempt_evidence_problems(
    names: Any, where: str, listed: Container[str], render: Callable[[Any], str]
) -> list[Problem]:
    if not (isinstance(names, list) and names and all(isinstance(n, str) for n in names)):
        return [
            Problem(
                "an attempt's evidence is a non-empty list of evidence file names", where=where, found=render(names)
            )
        ]
    if names != sorted(set(names)):
        return [Problem("evidence names are sorted and distinct", where=where, found=render(names))]
    unknown = [n for n in names if n not in listed]
    if unknown:
        return [
            Problem(
                "names an evidence file the certificate does not list",
                where=where,
                expected="names of the evidence list",
                found=render(unknown),
            )
        ]
    return []


def _is_int_of(value: Any, want: int) -> bool:
    return is_int(value) and value == want


# ==============================================================================================
# generator/verifier/rules/score_edits.py: A result's score edits (FORMAT.md, "Score edits"): the hand edits of a
#     harness's scores that the result rests on, each with who made it, when and why. One rule for the results file
#     `certify` reads and the certificate (or details document) the verifier reads.
# ==============================================================================================

SCORE_EDITS = "score_edits"


SCORE_EDIT_KEYS = ("scorer", "from", "to", "by", "at", "reason")


# Bounds of what a page shows and a reader reads: a few edits of a result, names and a sentence or two.
MAX_SCORE_EDITS = 100


MAX_NAME = 200


MAX_REASON = 2000


def _text_problem(value: Any, limit: int) -> bool:
    return not (isinstance(value, str) and value.strip() and len(value) <= limit)


def score_edits_problems(value: Any, where: str, render: Callable[[Any], str] = show) -> list[Problem]:
    """Every way a result's `score_edits` breaks its rules: a non-empty list of {scorer, from, to,
    by, at, reason}, sorted by scorer, each scorer's edits in the order they were made. `from` is
    the score's value before the edit (null when the edit made the score), `to` its value after."""
    w = f"{where}.{SCORE_EDITS}"
    if not isinstance(value, list) or not value:
        return [
            Problem(
                "score edits are a non-empty list of {scorer, from, to, by, at, reason}",
                where=w,
                found=render(value),
            )
        ]
    if len(value) > MAX_SCORE_EDITS:
        return [Problem("too many score edits", where=w, expected=f"at most {MAX_SCORE_EDITS}", found=str(len(value)))]
    problems: list[Problem] = []
    keys: list[tuple[str, str]] = []
    for i, e in enumerate(value):
        ew = f"{w}[{i}]"
        problems += check_keys(e, SCORE_EDIT_KEYS, where=ew)
        if not isinstance(e, dict):
            continue
        for k, limit, what in (
            ("scorer", MAX_NAME, "the name of the scorer whose score was edited"),
            ("by", MAX_NAME, "who edited the score"),
            ("reason", MAX_REASON, "why the score was edited, in the editor's words"),
        ):
            if k in e and _text_problem(e[k], limit):
                problems.append(
                    Problem(
                        f"{k} is {what}",
                        where=f"{ew}.{k}",
                        expected=f"text other than white space, at most {limit} characters",
                        found=render(e[k]),
                    )
                )
        if "at" in e and not is_time(e["at"]):
            problems.append(
                Problem(
                    "malformed time: when the score was edited, in UTC",
                    where=f"{ew}.at",
                    expected="YYYY-MM-DDTHH:MM:SSZ",
                    found=render(e["at"]),
                )
            )
        if "to" in e and e["to"] is None:
            problems.append(Problem("an edit gives the score a value", where=f"{ew}.to", found="null"))
        if isinstance(e.get("scorer"), str) and is_time(e.get("at")):
            keys.append((e["scorer"], e["at"]))
    if len(keys) == len(value) and keys != sorted(keys):
        problems.append(
            Problem(
                "score edits are sorted by scorer, and each scorer's in the order they were made",
                where=w,
                found=render([f"{s} {t}" for s, t in keys]),
            )
        )
    return problems


# ==============================================================================================
# generator/verifier/rules/evidence.py: Raw evidence bound by hash (FORMAT.md, "Evidence files"): the files an
#     evaluation produced (an Inspect `.eval` log, trajectories, a judge's raw outputs), listed in the certificate by
#     name, SHA-256, size and the items they concern, kept privately and published by the rule of details documents,
#     so that a certificate can be traced to the exact bytes its evaluator produced.
# ==============================================================================================

# A name is one path segment the verifier joins to a folder it chose: nothing in it can climb out,
# hide (a leading dot), pass for a signature or proof of another file, or be Python code.
EVIDENCE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$(?!\n)")


EVIDENCE_NAME_MAX = 128


EVIDENCE_KEYS = ("name", "sha256", "size", "items")


MAX_EVIDENCE_SIZE = 2**53 - 1


def evidence_path(serial: str, name: str) -> str:
    return f"certificates/{serial}/evidence/{name}"


def is_evidence_name(name: Any) -> bool:
    return (
        isinstance(name, str)
        and len(name) <= EVIDENCE_NAME_MAX
        and EVIDENCE_NAME_RE.fullmatch(name) is not None
        and not name.lower().endswith((".sig", ".tlog-proof", *PYTHON_CODE_SUFFIXES))
    )


def evidence_due(entry: dict[str, Any], public: bool, revealed: Container[str]) -> bool:
    return public or all(i in revealed for i in entry["items"])


def evidence_problems(evidence: Any, items: list[str], where: str = "evidence") -> list[Problem]:
    """The shape of a certificate's evidence list: named files, sorted and distinct, each with a
    SHA-256, a size and the run's items it concerns."""
    if not isinstance(evidence, list) or not evidence:
        return [Problem("evidence is a non-empty list of files", where=where, found=show(evidence, 80))]
    problems: list[Problem] = []
    spec_items = set(items)
    names: list[Any] = []
    for i, e in enumerate(evidence):
        w = f"{where}[{i}]"
        problems += check_keys(e, EVIDENCE_KEYS, where=w)
        if not isinstance(e, dict):
            continue
        names.append(e.get("name"))
        problems += evidence_entry_problems(e, w, spec_items)
    texts = [n for n in names if isinstance(n, str)]
    if len(texts) == len(names) and texts != sorted(set(texts)):
        problems.append(
            Problem("evidence files are sorted by name, each name once", where=where, found=show(names, 200))
        )
    return problems


def evidence_entry_problems(e: dict[str, Any], w: str, spec_items: Container[str]) -> list[Problem]:
    """One evidence file's members other than the list's order."""
    problems = []
    if "name" in e and not is_evidence_name(e["name"]):
        problems.append(
            Problem(
                "an evidence file's name is one safe path segment",
                where=f"{w}.name",
                expected=f"letters, digits, '_', '-' and inner dots, at most {EVIDENCE_NAME_MAX} characters",
                found=show(e["name"]),
            )
        )
    if "sha256" in e and not is_hex64(e["sha256"]):
        problems.append(Problem("a SHA-256 is 64 lowercase hex digits", where=f"{w}.sha256", found=show(e["sha256"])))
    if "size" in e and not (is_int(e["size"]) and 0 <= e["size"] <= MAX_EVIDENCE_SIZE):
        problems.append(Problem("a size is a count of bytes", where=f"{w}.size", found=show(e["size"])))
    concerned = e.get("items")
    if "items" in e and not (
        isinstance(concerned, list)
        and concerned
        and all(isinstance(i, str) and i in spec_items for i in concerned)
        and len(set(concerned)) == len(concerned)
    ):
        problems.append(
            Problem(
                "an evidence file names the run's items it concerns, each once",
                where=f"{w}.items",
                expected="a non-empty list of the run spec's item ids",
                found=show(concerned, 120),
            )
        )
    return problems


# ==============================================================================================
# generator/verifier/rules/certificates.py: Certificates (format v1 §6): their shape and their binding to the ledger
#     and the run spec. Pure: no I/O; recomputing their derived fields is recheck.py's work.
# ==============================================================================================

CERTIFICATE_VERDICTS = ("certified", "not-certified", "incomplete")


SCORE_RULES = ("as-proposed", "clamped", "midpoint-fallback")


CERTIFICATE_KEYS = (
    "type",
    "v",
    "serial",
    "run",
    "issued_at",
    "expires_at",
    "subject",
    "gate",
    "methodology",
    "run_spec",
    "finished_at",
    "results",
    "summary",
    "grade",
    "band",
    "worst_case_grade",
    "best_case_grade",
    "grader",
    "score",
    "score_rule",
    "verdict",
)


SUMMARY_KEYS = (
    "total",
    "scored",
    "passed",
    "infra_error",
    "not_run",
    "missing_label",
    "excluded",
    "pass_rate",
    "pass_rate_ci95",
    "worst_case_pass_rate",
    "best_case_pass_rate",
)


RATE_RE = re.compile(r"^(0|[1-9][0-9]{0,2})\.[0-9]{4}$")


ITEM_SCORE_RE = re.compile(r"^[01]\.[0-9]{6}$")


def check_result(
    r: Any,
    where: str,
    public: bool,
    exclusion_rules: int,
    max_attempts: int | None = None,
    not_before: str | None = None,
    not_after: str | None = None,
    evidence_names: Container[str] = (),
) -> tuple[list[Problem], str | None, bool | None]:
    """The shape of one result (format v1 §6): open on a public gate, sealed on a secret one, with its
    attempts (lineage.py) checked against the retry limit and the run's times when given, and
    the names of the certificate's evidence files its attempts may name.
    Returns the problems, the status and, for an open scored result, whether it passed."""
    found, status, passed = _check_result(r, where, public, exclusion_rules)
    if status is not None:
        found += lineage_problems(
            r,
            where,
            sealed=not public,
            max_attempts=max_attempts,
            not_before=not_before,
            not_after=not_after,
            evidence_names=evidence_names,
        )
    return found, status, passed


def _check_result(
    r: Any, where: str, public: bool, exclusion_rules: int
) -> tuple[list[Problem], str | None, bool | None]:
    if not isinstance(r, dict):
        return [Problem("a result must be an object", where=where, found=type_name(r))], None, None
    status = r.get("status")
    if status not in STATUSES:
        return (
            [Problem("unknown status", where=f"{where}.status", expected=" | ".join(STATUSES), found=show(status))],
            None,
            None,
        )
    if not public:
        problems = check_keys(r, ("item", "status", "details"), optional=lineage_keys(r), where=where)
        if "details" in r and not is_hex64(r["details"]):
            problems.append(
                Problem("a sealed result's details is a SHA-256", where=f"{where}.details", found=show(r["details"]))
            )
        return problems, status, None
    if status == "scored":
        problems = check_keys(
            r,
            ("item", "status", "score", "passed", "fields"),
            optional=(*lineage_keys(r), JUDGE_LABELS, SCORE_EDITS),
            where=where,
        )
        if JUDGE_LABELS in r:
            problems += judge_labels_problems(r[JUDGE_LABELS], where)
        if SCORE_EDITS in r:
            problems += score_edits_problems(r[SCORE_EDITS], where)
        if "score" in r and not (
            isinstance(r["score"], str) and ITEM_SCORE_RE.fullmatch(r["score"]) and Fraction(r["score"]) <= 1
        ):
            problems.append(
                Problem(
                    "an item score has exactly 6 decimals, in [0, 1]", where=f"{where}.score", found=show(r["score"])
                )
            )
        if "passed" in r and not isinstance(r["passed"], bool):
            problems.append(Problem("must be true or false", where=f"{where}.passed", found=show(r["passed"])))
        fields = r.get("fields")
        if not isinstance(fields, list) or not fields:
            problems.append(Problem("a scored result lists its fields", where=f"{where}.fields", found=show(fields)))
            fields = []
        names = []
        for j, f in enumerate(fields):
            fw = f"{where}.fields[{j}]"
            problems += check_keys(f, ("name", "kind", "tier", "similarity", "output"), where=fw)
            if not isinstance(f, dict):
                continue
            names.append(f.get("name"))
            if not (isinstance(f.get("name"), str) and f["name"]):
                problems.append(
                    Problem("a field name is a non-empty string", where=f"{fw}.name", found=show(f.get("name")))
                )
            if f.get("kind") not in KINDS or f.get("tier") not in TIERS:
                problems.append(
                    Problem("unknown kind or tier", where=fw, found=f"{show(f.get('kind'))}, {show(f.get('tier'))}")
                )
            sim = f.get("similarity")
            if not (isinstance(sim, str) and (REPORTED_SIMILARITY_RE.fullmatch(sim) or RATIO_RE.fullmatch(sim))):
                problems.append(
                    Problem(
                        "a similarity is a decimal string in [0, 1] or a fraction p/q",
                        where=f"{fw}.similarity",
                        found=show(sim),
                    )
                )
        texts = [n for n in names if isinstance(n, str)]
        if len(texts) == len(names) and texts != sorted(texts):
            problems.append(Problem("fields are sorted by name", where=f"{where}.fields", found=show(names)))
        return problems, status, r.get("passed") if isinstance(r.get("passed"), bool) else None
    return non_scored_problems(r, where, exclusion_rules), status, None


def non_scored_problems(
    r: dict[str, Any], where: str, exclusion_rules: int, render: Callable[[Any], str] = show
) -> list[Problem]:
    """A non-scored result (format v1 §6): its members, its note, and for an excluded one the index
    of the run spec's exclusion rule. One rule for the results file `certify` reads and for the
    certificate the verifier reads; `render` shows a found value."""
    status = r.get("status")
    problems = check_keys(
        r,
        ("item", "status", "note"),
        optional=(("rule",) if status == "excluded" else ()) + lineage_keys(r) + (SCORE_EDITS,),
        where=where,
    )
    if SCORE_EDITS in r:
        problems += score_edits_problems(r[SCORE_EDITS], where, render)
    if "note" in r and not isinstance(r["note"], str):
        problems.append(Problem("a note is text", where=f"{where}.note", found=render(r["note"])))
    if status == "excluded":
        rule = r.get("rule")
        if not (is_int(rule) and 0 <= rule < exclusion_rules):
            problems.append(
                Problem(
                    "an excluded result names the index of one of the run spec's exclusion rules",
                    where=f"{where}.rule",
                    expected=f"an integer from 0 to {exclusion_rules - 1}"
                    if exclusion_rules
                    else "an exclusion rule (the run spec has none)",
                    found=render(rule),
                )
            )
    return problems


def check_certificate(
    cert: Any,
    spec: dict[str, Any],
    m: Methodology | None,
    public: bool,
    spec_path: str,
    spec_sha256: str,
    run_at: str | None = None,
) -> list[Problem]:
    """Every rule of format v1 §6 a certificate must obey that needs no scoring engine: its members,
    its binding to the run spec, the shape of each result, counts that add up, and grades,
    band, score, rule and verdict that exist under the pinned methodology."""
    problems = check_keys(cert, CERTIFICATE_KEYS, optional=("evidence",))
    if not isinstance(cert, dict):
        return problems
    if "evidence" in cert:
        problems += evidence_problems(cert["evidence"], as_list(spec.get("items")))
    problems += _header_problems(cert, {"path": spec_path, "sha256": spec_sha256})
    found, counts, open_passed = _results_problems(cert, spec, m, public, run_at)
    problems += found
    problems += _summary_problems(cert.get("summary"), counts, open_passed if public else [])
    problems += _grader_problems(cert.get("grader"))
    problems += _outcome_problems(cert, m)
    return problems


def _header_problems(cert: dict[str, Any], want_spec: dict[str, str]) -> list[Problem]:
    """The type and version, the times, and the run spec the certificate names."""
    problems = []
    if cert.get("type") != "certificate" or not is_v1(cert):
        problems.append(
            Problem(
                "wrong type or version",
                expected='"certificate", v 1',
                found=f"{show(cert.get('type'))}, v {show(cert.get('v'))}",
            )
        )
    for k in ("issued_at", "finished_at"):
        if k in cert and not is_time(cert[k]):
            problems.append(Problem("malformed time", where=k, expected="YYYY-MM-DDTHH:MM:SSZ", found=show(cert[k])))
    if "expires_at" in cert and not (cert["expires_at"] is None or is_time(cert["expires_at"])):
        problems.append(Problem("must be a time or null", where="expires_at", found=show(cert["expires_at"])))
    if "run_spec" in cert and not same(cert["run_spec"], want_spec):
        problems.append(
            Problem(
                "run_spec must name the published run spec and its hash",
                where="run_spec",
                expected=canonical_text(want_spec),
                found=show(cert["run_spec"], 200),
            )
        )
    return problems


def _results_problems(
    cert: dict[str, Any], spec: dict[str, Any], m: Methodology | None, public: bool, run_at: str | None
) -> tuple[list[Problem], dict[str, int], list[bool | None]]:
    """Each result's shape, and what the summary must count: the results by status (after
    `total`), and whether each open scored result passed."""
    results = cert.get("results")
    counts = dict.fromkeys(STATUSES, 0)
    open_passed: list[bool | None] = []
    problems = []
    if not isinstance(results, list):
        problems.append(Problem("must be a list", where="results", found=type_name(results)))
        results = []
    rules = len(as_list(spec.get("exclusion_rules")))
    max_attempts = m.max_attempts if m is not None else None
    finished_at = cert["finished_at"] if is_time(cert.get("finished_at")) else None
    evidence = {
        e["name"] for e in as_list(cert.get("evidence")) if isinstance(e, dict) and isinstance(e.get("name"), str)
    }
    for i, r in enumerate(results):
        found, status, passed = check_result(
            r, f"results[{i}]", public, rules, max_attempts, run_at, finished_at, evidence
        )
        problems += found
        if status is not None:
            counts[status] += 1
            if status == "scored":
                open_passed.append(passed)
    return problems, {"total": len(results), **counts}, open_passed


def _summary_problems(summary: Any, counts: dict[str, int], open_passed: list[bool | None]) -> list[Problem]:
    """The summary: its counts (`counts`, total first), its passed count against the scored
    count and, on a public gate, against the open results marked passed, and its rates."""
    problems = check_keys(summary, SUMMARY_KEYS, where="summary")
    if not isinstance(summary, dict):
        return problems
    for k, v in counts.items():
        if k in summary and not (is_int(summary[k]) and summary[k] == v):
            problems.append(
                Problem(
                    f"{k} does not count the results", where=f"summary.{k}", expected=str(v), found=show(summary[k])
                )
            )
    passed = summary.get("passed")
    if "passed" in summary and not (is_int(passed) and 0 <= passed <= counts["scored"]):
        problems.append(
            Problem(
                "passed must be an integer between 0 and the scored count",
                where="summary.passed",
                expected=f"0..{counts['scored']}",
                found=show(passed),
            )
        )
    elif open_passed and all(p is not None for p in open_passed) and passed != sum(bool(p) for p in open_passed):
        problems.append(
            Problem(
                "passed does not count the results marked passed",
                where="summary.passed",
                expected=str(sum(bool(p) for p in open_passed)),
                found=show(passed),
            )
        )
    for k in ("pass_rate", "worst_case_pass_rate", "best_case_pass_rate"):
        if k in summary and not (
            isinstance(summary[k], str) and RATE_RE.fullmatch(summary[k]) and Fraction(summary[k]) <= 100
        ):
            problems.append(
                Problem("a rate is a percentage with exactly 4 decimals", where=f"summary.{k}", found=show(summary[k]))
            )
    ci = summary.get("pass_rate_ci95")
    if "pass_rate_ci95" in summary and not (
        isinstance(ci, list)
        and len(ci) == 2
        and all(isinstance(x, str) and RATE_RE.fullmatch(x) for x in ci)
        and Fraction(ci[0]) <= Fraction(ci[1]) <= 100
    ):
        problems.append(
            Problem(
                "the interval is two ordered percentages with 4 decimals",
                where="summary.pass_rate_ci95",
                found=show(ci),
            )
        )
    return problems


def _grader_problems(grader: Any) -> list[Problem]:
    problems = check_keys(grader, ("record", "kept", "dropped"), where="grader")
    if isinstance(grader, dict):
        if "record" in grader and not is_hex64(grader["record"]):
            problems.append(
                Problem("the grader record is a SHA-256", where="grader.record", found=show(grader["record"]))
            )
        for k in ("kept", "dropped"):
            if k in grader and not (is_int(grader[k]) and grader[k] >= 0):
                problems.append(Problem("must be a count", where=f"grader.{k}", found=show(grader[k])))
    return problems


def _outcome_problems(cert: dict[str, Any], m: Methodology | None) -> list[Problem]:
    """The score rule and verdict, and under the pinned methodology the grades, the band and the
    score the rule allows in it."""
    problems = []
    for k, known in (("score_rule", SCORE_RULES), ("verdict", CERTIFICATE_VERDICTS)):
        if cert.get(k) not in known:
            problems.append(
                Problem(f"unknown {k.replace('_', ' ')}", where=k, expected=" | ".join(known), found=show(cert.get(k)))
            )
    if m is None:
        return problems
    for k in ("grade", "worst_case_grade", "best_case_grade"):
        if k in cert and cert[k] not in m.grade_order:
            problems.append(
                Problem(
                    "not a grade of the pinned methodology",
                    where=k,
                    expected=", ".join(m.grade_order),
                    found=show(cert[k]),
                )
            )
    grade = cert.get("grade")
    if isinstance(grade, str) and m.is_grade(grade):
        problems += _band_problems(cert, list(m.band(grade)))
    return problems


def _band_problems(cert: dict[str, Any], band: list[int]) -> list[Problem]:
    """The band of the certificate's grade, and the score in it its score rule gives."""
    problems = []
    if "band" in cert and not same(cert["band"], band):
        problems.append(
            Problem("band is not the grade's band", where="band", expected=show(band), found=show(cert["band"]))
        )
    score = cert.get("score")
    if "score" in cert and not (is_int(score) and band[0] <= score <= band[1]):
        problems.append(
            Problem(
                "score lies outside the grade's band",
                where="score",
                expected=f"an integer in {band[0]}..{band[1]}",
                found=show(score),
            )
        )
    elif cert.get("score_rule") == "midpoint-fallback" and score != (band[0] + band[1]) // 2:
        problems.append(
            Problem(
                "a midpoint fallback scores the band's midpoint",
                where="score",
                expected=str((band[0] + band[1]) // 2),
                found=show(score),
            )
        )
    elif cert.get("score_rule") == "clamped" and score not in band:
        problems.append(
            Problem(
                "a clamped score is a band edge", where="score", expected=f"{band[0]} or {band[1]}", found=show(score)
            )
        )
    return problems


def certificate_binding_problems(
    cert: dict[str, Any], ev: CertificateEvent, run: RunEvent, spec: dict[str, Any] | None
) -> list[Problem]:
    """A certificate against its ledger leaf and its run spec (format v1 §4, §6): type, serial, run,
    times, and the subject, gate, methodology and items of the registered run."""
    p: list[Problem] = []
    if cert.get("type") != "certificate" or not is_v1(cert):
        p.append(
            Problem(
                "wrong type or version",
                where="type",
                expected='"certificate", v 1',
                found=f"{show(cert.get('type'))}, v {show(cert.get('v'))}",
            )
        )
    for k, want in (("serial", ev.serial), ("run", ev.run)):
        if cert.get(k) != want:
            p.append(Problem(f"{k} differs from the ledger", where=k, expected=want, found=show(cert.get(k))))
    if cert.get("issued_at") != ev.at:
        p.append(
            Problem(
                "issued_at differs from the certificate leaf's time",
                where="issued_at",
                expected=ev.at,
                found=show(cert.get("issued_at")),
            )
        )
    fin = cert.get("finished_at")
    if not (is_time(fin) and run.at <= fin <= ev.at):
        p.append(
            Problem(
                "finished_at must lie between the run's registration and the issue time",
                where="finished_at",
                expected=f"{run.at} ≤ finished_at ≤ {ev.at}",
                found=show(fin),
            )
        )
    if spec is None:
        return p
    for k in ("subject", "gate", "methodology"):
        if not same(cert.get(k), spec.get(k)):
            p.append(
                Problem(
                    f"{k} differs from the run spec's", where=k, expected=show(spec.get(k)), found=show(cert.get(k))
                )
            )
    results = cert.get("results")
    got = [x.get("item") if isinstance(x, dict) else None for x in results] if isinstance(results, list) else None
    if got != spec["items"]:
        p.append(
            Problem(
                "results do not name the run spec's items in its order",
                where="results",
                expected=show(spec["items"]),
                found=show(got),
            )
        )
    return p


# ==============================================================================================
# generator/verifier/rules/certificate_documents.py: The private documents of a certificate (format v1 §6): result
#     details and the grader record, their shapes, and when they fall due. Pure: no I/O.
# ==============================================================================================

def due_records(
    results: list[dict[str, Any]], items: Iterable[str], public: bool, revealed: Container[str]
) -> tuple[list[dict[str, Any]], bool]:
    """When a certificate's private documents fall due (format v1 §6): the sealed results whose
    details document is due (their item is revealed), in result order, and whether the grader
    record is due (at once on a public gate, else once every item of the run is revealed).
    The verifier, the build and `retire` all ask here."""
    sealed = [
        r
        for r in results
        if isinstance(r.get("details"), str) and isinstance(r.get("item"), str) and r["item"] in revealed
    ]
    return sealed, public or all(i in revealed for i in items)


DETAILS_KEYS = ("type", "v", "serial", "salt", "result")


GRADER_RECORD_KEYS = ("type", "v", "serial", "salt", "proposed_json", "rationale")


def check_details_document(doc: Any, serial: str, sealed: dict[str, Any]) -> list[Problem]:
    """A published details document against the sealed result whose hash it matched."""
    problems = _salted_document_problems(doc, "result-details", DETAILS_KEYS, serial)
    if not isinstance(doc, dict):
        return problems
    r = doc.get("result")
    if isinstance(r, dict):
        for k in ("item", "status"):
            if r.get(k) != sealed.get(k):
                problems.append(
                    Problem(
                        f"{k} differs from the sealed result's",
                        where=f"result.{k}",
                        expected=show(sealed.get(k)),
                        found=show(r.get(k)),
                    )
                )
        # The sealed result shows every attempt's number, status and time; the opened one must
        # tell the same chain, or the published lineage would not be the one that was signed.
        if not same(lineage_skeleton(r), lineage_skeleton(sealed)):
            problems.append(
                Problem(
                    "the attempts differ from the sealed result's",
                    where="result",
                    expected=show(lineage_skeleton(sealed), 200),
                    found=show(lineage_skeleton(r), 200),
                )
            )
    return problems


def _salted_document_problems(doc: Any, kind: str, keys: tuple[str, ...], serial: str) -> list[Problem]:
    """The members, type, serial and salt of a certificate's details document or grader record."""
    problems = check_keys(doc, keys)
    if not isinstance(doc, dict):
        return problems
    if doc.get("type") != kind or not is_v1(doc):
        problems.append(
            Problem(
                "wrong type or version",
                expected=f'"{kind}", v 1',
                found=f"{show(doc.get('type'))}, v {show(doc.get('v'))}",
            )
        )
    if doc.get("serial") != serial:
        problems.append(
            Problem(
                "serial differs from the certificate's", where="serial", expected=serial, found=show(doc.get("serial"))
            )
        )
    if not is_hex64(doc.get("salt")):
        problems.append(Problem("a salt is 64 lowercase hex digits", where="salt", found=show(doc.get("salt"))))
    return problems


def check_grader_record(doc: Any, serial: str) -> list[Problem]:
    problems = _salted_document_problems(doc, "grader-record", GRADER_RECORD_KEYS, serial)
    if not isinstance(doc, dict):
        return problems
    if not (doc.get("proposed_json") is None or isinstance(doc.get("proposed_json"), str)):
        problems.append(
            Problem(
                "the proposal is kept as its JSON text, or null",
                where="proposed_json",
                found=show(doc.get("proposed_json")),
            )
        )
    return problems


# ==============================================================================================
# generator/verifier/rules/recheck.py: Recomputing a certificate (format v1 §5, §6): every derived field from its
#     results, the revealed answers and the methodology, and the one pipeline that applies every rule of format v1 §6
#     to a certificate. Pure: no I/O.
# ==============================================================================================

def recheck_open_result(
    r: dict[str, Any], answer: dict[str, Any] | None, m: Methodology, where: str
) -> tuple[list[Problem], bool | None]:
    """Recompute an open scored result (format v1 §6): with the revealed answer, each field's kind,
    tier and computed similarity; always the item score and pass. Returns the problems and the
    recomputed pass (None if the result is too malformed to score)."""
    problems: list[Problem] = []
    fields = as_list(r.get("fields"))
    found_names = [f.get("name") if isinstance(f, dict) else None for f in fields]
    names = [n for n in found_names if isinstance(n, str)]
    if len(names) != len(found_names):
        return [
            *problems,
            Problem("a field name is a non-empty string", where=f"{where}.fields", found=show(found_names)),
        ], None
    if answer is not None and sorted(names) != sorted(answer):
        problems.append(
            Problem(
                "fields differ from the revealed answer's",
                where=f"{where}.fields",
                expected=", ".join(sorted(answer)),
                found=", ".join(map(show, names)),
            )
        )
        return problems, None
    scored: list[tuple[str, str, Fraction]] = []
    for j, f in enumerate(fields):
        found, field_score = _recheck_field(f, f"{where}.fields[{j}]", answer)
        problems += found
        if field_score is None:
            return problems, None
        scored.append(field_score)
    if not scored:
        return problems, None
    s = score_item(scored, m)
    if r.get("score") != s.text:
        problems.append(
            Problem(
                "item score does not follow from the similarities",
                where=f"{where}.score",
                expected=s.text,
                found=show(r.get("score")),
            )
        )
    if r.get("passed") is not s.passed:
        why = (
            f"below the floor: {', '.join(s.below_floor)}"
            if s.below_floor
            else f"score {s.text} against threshold {m.item_threshold_text}"
        )
        problems.append(
            Problem(
                f"passed does not follow from the score and the floors ({why})",
                where=f"{where}.passed",
                expected=str(s.passed).lower(),
                found=show(r.get("passed")),
            )
        )
    return problems, s.passed


def _recheck_field(
    f: Any, fw: str, answer: dict[str, Any] | None
) -> tuple[list[Problem], tuple[str, str, Fraction] | None]:
    """One field of an open result: with the revealed answer, its kind and tier and the
    similarity its output gives (the answer's taken where they differ); its output's form and
    its similarity's. Returns the problems and what the item score reads of the field (name,
    tier, similarity), None if it cannot be scored."""
    if not isinstance(f, dict) or f.get("kind") not in KINDS or f.get("tier") not in TIERS:
        return [], None  # the shape check has reported it
    problems = []
    name, kind, tier, sim = str(f.get("name")), f["kind"], f["tier"], f.get("similarity")
    a = answer.get(name) if answer is not None else None
    if a is not None and (a["kind"], a["tier"]) != (kind, tier):
        problems.append(
            Problem(
                "kind or tier differs from the revealed answer",
                where=fw,
                expected=f"{a['kind']}, {a['tier']}",
                found=f"{kind}, {tier}",
            )
        )
        kind, tier = a["kind"], a["tier"]
    bad_output = value_kind_problem(kind, f.get("output"))
    if bad_output:
        problems.append(
            Problem(
                f"the output of a {kind} field",
                where=f"{fw}.output",
                expected=bad_output,
                found=show(f.get("output")),
            )
        )
    form = similarity_form_problem(kind, tier, sim)
    if form or not isinstance(sim, str):
        problems.append(
            Problem(
                f"malformed similarity for a {tier} {kind} field",
                where=f"{fw}.similarity",
                expected=str(form),
                found=show(sim),
            )
        )
        return problems, None
    if a is not None and not bad_output:
        want = computed_similarity(kind, tier, f.get("output"), a["value"])
        if want is not None and want != sim:
            problems.append(
                Problem(
                    "similarity does not follow from the output and the revealed answer",
                    where=f"{fw}.similarity",
                    expected=want,
                    found=show(sim),
                )
            )
            sim = want
    return problems, (name, tier, similarity_value(sim))


@dataclass
class Recheck:
    """What recomputing a certificate found, what it could only take as asserted, and how
    many comparisons it made (each one counted where it is made)."""

    problems: list[Problem] = field(default_factory=list)
    asserted: list[str] = field(default_factory=list)
    checks: int = 0


def recheck_certificate(
    cert: dict[str, Any],
    m: Methodology,
    public: bool,
    answers: dict[str, dict[str, Any]],
    details: dict[str, dict[str, Any]],
    record: dict[str, Any] | None,
    exclusion_rules: int,
) -> Recheck:
    """Recompute every derived field of a certificate whose shape check_certificate accepted.

    `answers` holds the answers of the certificate's revealed items, `details` the published
    details documents by item, `record` the published grader record. What cannot be recomputed
    yet is reported as asserted, never as verified.
    """
    out = Recheck()
    tally = _recheck_results(out, cert, m, public, answers, details, exclusion_rules)
    passed = _recheck_passed(out, cert, tally)
    g = grade_counts(tally.counts, passed, m)
    summary = cert["summary"]
    for k in ("pass_rate", "pass_rate_ci95", "worst_case_pass_rate", "best_case_pass_rate"):
        out.checks += 1
        if not same(summary.get(k), g.summary[k]):
            out.problems.append(
                Problem(
                    f"{k} does not follow from the counts",
                    where=f"summary.{k}",
                    expected=show(g.summary[k]),
                    found=show(summary.get(k)),
                )
            )
    for k in ("grade", "band", "worst_case_grade", "best_case_grade", "verdict"):
        out.checks += 1
        if not same(cert.get(k), getattr(g, k)):
            out.problems.append(
                Problem(
                    f"{k} does not follow from the pass rates",
                    where=k,
                    expected=show(getattr(g, k)),
                    found=show(cert.get(k)),
                )
            )
    _recheck_grader(out, cert, record, g.band, tally.scored_ids)
    return out


@dataclass
class _Tally:
    """What recomputing the results found: the results by status, how many of the scored ones
    pass, how many are sealed and cannot be opened yet, and the scored items."""

    counts: dict[str, int]
    passed: int = 0
    unknown: int = 0
    scored_ids: set[str] = field(default_factory=set)


def _recheck_results(
    out: Recheck,
    cert: dict[str, Any],
    m: Methodology,
    public: bool,
    answers: dict[str, dict[str, Any]],
    details: dict[str, dict[str, Any]],
    exclusion_rules: int,
) -> _Tally:
    """Each result recomputed where it can be read: an open one as published, a sealed one from
    its details document once that is published."""
    serial = cert["serial"]
    tally = _Tally(dict.fromkeys(STATUSES, 0))
    # The names a revealed attempt may give: the certificate's own list (check_certificate checked it).
    evidence_names = {
        e["name"] for e in cert.get("evidence", []) if isinstance(e, dict) and isinstance(e.get("name"), str)
    }
    for i, r in enumerate(cert["results"]):
        item, status = r["item"], r["status"]
        tally.counts[status] += 1
        where = f"results[{i}] ({item})"
        opened: dict[str, Any] | None = r if public else None
        if not public and item in details:
            d = details[item]
            out.problems += [p.at("", f"{where} details") for p in check_details_document(d, serial, r)]
            out.checks += 1
            res = d.get("result") if isinstance(d, dict) else None
            shape, _, _ = check_result(
                res, f"{where} details.result", True, exclusion_rules, evidence_names=evidence_names
            )
            out.problems += shape
            opened = res if not shape else None
        if status == SCORED:
            tally.scored_ids.add(item)
            if opened is None:
                tally.unknown += 1
                continue
            problems, ok = recheck_open_result(opened, answers.get(item), m, where)
            out.checks += 1
            out.problems += problems
            tally.passed += bool(ok)
    return tally


def _recheck_passed(out: Recheck, cert: dict[str, Any], tally: _Tally) -> int:
    """The summary's passed count against the results that pass, or within what the sealed ones
    leave open; returns the count the grades follow from (the certificate's, while some are sealed)."""
    serial, summary, passed, unknown = cert["serial"], cert["summary"], tally.passed, tally.unknown
    out.checks += 1  # passed: bounded by the open results, or equal to their count
    if unknown and not passed <= summary["passed"] <= passed + unknown:
        out.problems.append(
            Problem(
                "passed cannot be: the published results already show how many pass, and only the sealed ones "
                "are unknown",
                where="summary.passed",
                expected=f"{passed} to {passed + unknown}",
                found=show(summary["passed"]),
            )
        )
    if unknown:
        out.asserted.append(
            f"certificate {serial}: {summary['passed']} of {tally.counts[SCORED]} scored results passed, as the "
            "certificate states; "
            f"{unknown} sealed result(s) can be rechecked once their items are retired"
        )
        passed = summary["passed"]
    elif summary["passed"] != passed:
        out.problems.append(
            Problem(
                "passed does not count the results that pass",
                where="summary.passed",
                expected=str(passed),
                found=show(summary["passed"]),
            )
        )
    return passed


def _recheck_grader(
    out: Recheck, cert: dict[str, Any], record: dict[str, Any] | None, band: list[int], scored_ids: set[str]
) -> None:
    """With the grader record, the score and its rule from the grader's proposal and the grade's
    band, and the rationale's bullets kept and dropped; without it, all three as asserted."""
    serial, grader = cert["serial"], cert["grader"]
    if record is None:
        out.asserted.append(
            f"certificate {serial}: the grader's proposal behind score {cert.get('score')} "
            f"({cert.get('score_rule')}) and the "
            f"{grader.get('kept')} kept / {grader.get('dropped')} dropped bullets; the grader record is published "
            "once every item is revealed"
        )
        return
    out.problems += [p.at("", "grader record") for p in check_grader_record(record, serial)]
    pj = record.get("proposed_json") if isinstance(record.get("proposed_json"), str) else None
    score, rule = band_score(pj, band)
    out.checks += 5  # the record's shape, the score, its rule, the kept and the dropped bullets
    if cert.get("score") != score:
        out.problems.append(
            Problem(
                f"score does not follow from the proposal {show(pj)} and the band {band}",
                where="score",
                expected=str(score),
                found=show(cert.get("score")),
            )
        )
    if cert.get("score_rule") != rule:
        out.problems.append(
            Problem(
                "score_rule does not follow from the proposal",
                where="score_rule",
                expected=rule,
                found=show(cert.get("score_rule")),
            )
        )
    kept, dropped = keep_bullets(record.get("rationale"), scored_ids)
    for k, v in (("kept", len(kept)), ("dropped", dropped)):
        if grader.get(k) != v:
            out.problems.append(
                Problem(
                    f"{k} does not count the rationale's bullets",
                    where=f"grader.{k}",
                    expected=str(v),
                    found=show(grader.get(k)),
                )
            )


def recheckable(cert: Any) -> bool:
    """Whether a certificate has the structure recheck_certificate reads (its other problems are
    reported by check_certificate, and recomputing still names the fields that do not follow)."""
    if not isinstance(cert, dict) or not isinstance(cert.get("serial"), str):
        return False
    results, summary, grader = cert.get("results"), cert.get("summary"), cert.get("grader")
    if not (isinstance(results, list) and isinstance(summary, dict) and isinstance(grader, dict)):
        return False
    if not all(isinstance(r, dict) and isinstance(r.get("item"), str) and r.get("status") in STATUSES for r in results):
        return False
    scored = sum(r["status"] == SCORED for r in results)
    passed = summary.get("passed")
    return is_int(passed) and 0 <= passed <= scored


def examine_certificate(
    cert: Any,
    ev: CertificateEvent,
    run: RunEvent,
    spec: dict[str, Any] | None,
    m: Methodology | None,
    public: bool,
    spec_path: str,
    answers: dict[str, dict[str, Any]],
    details: dict[str, dict[str, Any]],
    record: dict[str, Any] | None,
) -> Recheck:
    """Every rule of format v1 §6 for one certificate, given what is published of it: its binding to
    the ledger and the run spec, its shape, and (when the binding holds) every derived field
    recomputed. The verifier and the build both ask here, each after reading the documents its
    own way, so that the two apply one pipeline."""
    if not isinstance(cert, dict):
        return Recheck([Problem("a certificate must be an object", found=type_name(cert))], checks=1)
    binding = certificate_binding_problems(cert, ev, run, spec)
    out = Recheck(list(binding), checks=1)
    if spec is None:
        return out
    out.problems += check_certificate(cert, spec, m, public, spec_path, run.sha256, run.at)
    out.checks += 1
    if binding or m is None or not recheckable(cert):
        return out
    redo = recheck_certificate(cert, m, public, answers, details, record, len(spec["exclusion_rules"]))
    out.problems += redo.problems
    out.asserted += redo.asserted
    out.checks += redo.checks
    return out


# ==============================================================================================
# generator/verifier/core/report.py: The report: what passed, what failed, and what could only be taken as asserted.
# ==============================================================================================

PASS_MEANING = (
    "A pass means the artifacts are authentic (signed by the key above) and consistent with "
    "each other, with the ledger and with the methodology. It does not mean the evaluation "
    "itself was right, nor that the times the operator wrote are true: a ledger's order proves "
    "sequence only from a checkpoint someone else saved."
)


@dataclass
class Report:
    """What passed, what failed and what could only be taken as asserted.

    `checks` counts real comparisons: each hash compared, signature verified, document parsed
    in canonical form, rule set applied to one document or leaf, and derived field recomputed.
    """

    site: str
    checks: int = 0
    failures: list[Problem] = field(default_factory=list)
    asserted: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    key: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    demo_key: bool = False
    debug: list[str] = field(default_factory=list)  # tracebacks of internal errors, with --debug
    # The checkpoint this run verified (origin, tree_size, root in base64), for the state file
    # and for readers of --json; its note's bytes too, so a state can be rechecked later.
    tree: dict[str, Any] = field(default_factory=dict)
    checkpoint: bytes = b""
    # The raw public keys the log has signed with: the state file remembers them for its origin.
    log_keys: list[bytes] = field(default_factory=list)
    # States of certificates, not failures: a pass never makes a revoked or expired one valid.
    revoked: list[dict[str, Any]] = field(default_factory=list)  # serial, run, at, reason, index
    expired: list[dict[str, Any]] = field(default_factory=list)  # serial, expires_at
    withdrawn: list[dict[str, Any]] = field(default_factory=list)  # run, at, reason, index: never to be certified
    # What the reader may have done to cause the failures (not a verdict on the site): said after them.
    hints: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def check(
        self, ok: bool, file: str, message: str, expected: Any = None, found: Any = None, where: str = ""
    ) -> bool:
        self.checks += 1
        if not ok:
            self.failures.append(
                Problem(
                    message,
                    file,
                    where,
                    None if expected is None else str(expected),
                    None if found is None else str(found),
                )
            )
        return ok

    def internal_error(self, file: str, error: Exception, trace: str | None) -> None:
        """A bug in the verifier met while checking `file`: a failure (fail closed), said as
        what it is, never as a verdict on the site."""
        self.failures.append(
            Problem(
                f"internal error of the verifier while checking this file ({type(error).__name__}: "
                f"{str(error)[:300]}); "
                "the rest of the site was not checked. This is a bug in the verifier: run it with --debug and report "
                "the traceback",
                file,
            )
        )
        if trace is not None:
            self.debug.append(trace)

    def add(self, problems: Iterable[Problem], file: str, checks: int = 1) -> bool:
        """Count `checks` checks and record each problem as located in `file`."""
        self.checks += checks
        before = len(self.failures)
        self.failures.extend(p.at(file) if not p.file else p for p in problems)
        return len(self.failures) == before

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "site": self.site,
            "checks": self.checks,
            "failed": len(self.failures),
            "failures": [dataclasses.asdict(p) for p in self.failures],
            "asserted": self.asserted,
            "notes": self.notes,
            "warnings": self.warnings,
            "key": self.key,
            "demo_key": self.demo_key,
            "counts": self.counts,
            "tree": self.tree,
            "revoked": self.revoked,
            "expired": self.expired,
            "withdrawn": self.withdrawn,
            "hints": self.hints,
            "meaning": PASS_MEANING,
        }

    def render(self) -> str:
        """The report for a person. Every text that came from the site goes through printable()."""
        lines = [f"Verifying {printable(self.site)}"]
        if self.key:
            lines.append(f"Key: {printable(self.key.get('source', ''))}")
            if self.key.get("fingerprint"):
                lines.append(f"  fingerprint {printable(self.key['fingerprint'])}")
        for w in self.warnings:
            lines.append(f"WARNING: {printable(w)}")
        if self.counts:
            lines.append("Read: " + ", ".join(f"{v} {printable(k)}" for k, v in self.counts.items()))
        for n in self.notes:
            lines.append(f"Note: {printable(n)}")
        for a in self.asserted:
            lines.append(f"Asserted, not verified: {printable(a)}")
        for p in self.failures[:200]:
            lines.append("FAIL " + p.describe())
        if len(self.failures) > 200:
            lines.append(f"... and {len(self.failures) - 200} more failures (use --json for all)")
        if self.ok:
            lines.append(f"PASS: all {self.checks} checks passed.")
            lines.append(PASS_MEANING)
            if self.revoked or self.expired:
                lines.append(
                    f"{len(self.revoked)} certificate(s) revoked and {len(self.expired)} expired (named in the notes "
                    "above): the pass says their files are authentic, not that they are still valid."
                )
        else:
            lines.append(f"FAILED: {len(self.failures)} of {self.checks} checks failed.")
        lines += [f"Hint: {printable(h)}" for h in self.hints]
        return "\n".join(lines)


def environment_hints(root: Path, failures: Iterable[Problem]) -> list[str]:
    """A Python environment the auditor made inside the site (`python3 -m venv verify-env` in the
    site's folder) fails as hundreds of extra files; one line names the folder and what to run.
    Only folders that hold a failing file are looked at, each once."""
    folders: dict[str, bool] = {}
    hints: list[str] = []
    for p in failures:
        name = PurePosixPath(p.file)
        if not p.file or name.is_absolute() or ".." in name.parts:  # a name the site wrote: look inside it only
            continue
        for parent in reversed(name.parents[:-1]):
            folder = str(parent)
            if folder not in folders:
                folders[folder] = (root / folder / "pyvenv.cfg").is_file()
                if folders[folder]:
                    hints.append(
                        f"{folder} looks like a Python environment: if you made it, run the verifier with "
                        f"{folder}/bin/python (a site must not ship one)"
                    )
            if folders[folder]:
                break
    return hints


# ==============================================================================================
# generator/verifier/core/windowed.py: Work on a few threads, the results in the order of the items, never more than a
#     window of them in flight: a million objects to send, or the 300,000 files of a site to hash, never become as
#     many futures at once, and a replay reading tiles ahead never holds more than the window in memory.
# ==============================================================================================

_In = TypeVar("_In")


_Out = TypeVar("_Out")


def windowed(work: Callable[[_In], _Out], items: Iterable[_In], jobs: int, window: int | None = None) -> Iterator[_Out]:
    """work(item) for each item on `jobs` threads, yielded in the items' order, with at most
    `window` (default four times `jobs`) submitted and not yet yielded. An exception of work(item)
    is raised when that item's turn comes. Closing the iterator early cancels what has not started."""
    jobs = max(1, jobs)
    window = max(1, window if window is not None else jobs * 4)
    queued: deque[Future[_Out]] = deque()
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        for item in items:
            queued.append(pool.submit(work, item))
            if len(queued) >= window:
                yield queued.popleft().result()
        while queued:
            yield queued.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# ==============================================================================================
# generator/verifier/core/folder.py: A site's folder: the only code of the verifier that reads files.
# ==============================================================================================

MANIFEST_PATH = "transparency.json"


SUMS_PATH = "SHA256SUMS"


SUMS_SIG_PATH = "SHA256SUMS.sig"


# A site's deepest path (certificates/<serial>/details/<item>.json) is four levels down; a
# folder far deeper is refused where it is, instead of being walked until Python gives up.
MAX_SITE_DEPTH = 32


Identity = tuple[int, int, int, int]  # a file's size, mtime_ns, ctime_ns and inode


IDENTITY = struct.Struct("<qqqQ")


# Files whose SHA-256 the caller knows: path -> known_value(SHA-256, the identity the file had
# when hashed), 64 bytes: a mirror's record of 300,000 files is held while it verifies, and a
# tuple of a hex string and four integers costs five times as much.
KnownHashes = Mapping[str, bytes]


# A folder as a walk found it (memory/folder_memory.py): its identity (IDENTITY packed), the names
# of its regular files and of its folders, each joined by "/" (which no name holds).
FolderSeen = tuple[bytes, str, str]


def known_value(sha256_hex: str, identity: Identity) -> bytes | None:
    """A file's SHA-256 (64 hex digits) and identity as one value of KnownHashes; None when the
    identity does not fit (a time past 2262, an inode over 64 bits): such a file is hashed."""
    try:
        return bytes.fromhex(sha256_hex) + IDENTITY.pack(*identity)
    except struct.error:
        return None


def known_sha256(value: bytes) -> str:
    return value[:32].hex()


def known_identity(value: bytes) -> Identity:
    size, mtime, ctime, inode = IDENTITY.unpack_from(value, 32)
    return size, mtime, ctime, inode


def known_still(value: bytes, st: os.stat_result) -> bool:
    """Whether the file `st` describes has the identity `value` records."""
    try:
        return value[32:] == IDENTITY.pack(*identity_of(st))
    except struct.error:
        return False


def identity_of(st: os.stat_result) -> Identity:
    """What changes when a file is written or replaced: its ctime cannot be set back (utime sets
    only mtime), and a replaced file has another inode."""
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def _folder_identity(path: str) -> tuple[bytes, int] | None:
    """A folder's identity as folder_memory records it, and the later of its modification and
    change times; None if it is no folder now."""
    try:
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            return None
        return IDENTITY.pack(*identity_of(st)), max(st.st_mtime_ns, st.st_ctime_ns)
    except (OSError, struct.error):
        return None


# Timestamps come from a coarse clock (a kernel tick, 1 to 10 ms): a folder changed twice within
# one tick keeps its first change time. A folder is recorded only if it last changed more than
# this before the walk began, so that any change after its reading gives it another identity.
FOLDER_TICK_NS = 20_000_000


_NAME = operator.attrgetter("name")  # a folder's entries in name order, so the report's order is fixed


class Site:
    """A site folder, read only through the paths its documents name."""

    def __init__(self, root: Path, report: Report, known: KnownHashes | None = None, known_now: bool = False) -> None:
        self.root = root
        # SHA-256es `verify.py mirror` computed of the files it wrote (memory/mirror_record.py
        # says why they may be trusted), each used only while the file keeps its identity; the
        # paths whose hash was taken from there, for the report.
        self.known: KnownHashes = known or {}
        self.known_used: set[str] = set()
        # Whether the caller looked at every file of `known` in this very run (the mirror, which
        # has just checked each one's identity or written it): its values are then taken as they
        # are, without a second lstat of each of 300,000 files a moment later.
        self.known_now = known_now
        self.resolved = root.resolve()
        self.report = report
        self.current = MANIFEST_PATH  # the file being checked, for an internal error's report
        self._folders: dict[str, bool] = {}  # folder -> no link on its way down from the root
        # A virtual environment the auditor made inside the site's folder and runs this verifier
        # from: not the site's, so the walk skips it (and says so); SHA256SUMS listing a file in it
        # is a failure of its own (release.check_sums).
        self.environment = interpreter_folder_in(str(root))
        # Every regular file the walk of the whole site found (release.check_sums walks it once):
        # what accounting.py holds against the files the site's documents account for.
        self.files_found: set[str] = set()
        # Files hashed once already in this run, by path (the checksum lists taken from the
        # verifier's memory, hashed before the tree is trusted): release.check_files takes these.
        self.hashed_now: dict[str, str] = {}
        # What the last walk of this folder found in each plain folder (memory/folder_memory.py),
        # if the caller keeps that; and what this walk finds, for the caller to keep.
        self.folders: Mapping[str, FolderSeen] | None = None
        self.folders_seen: dict[str, FolderSeen] = {}
        self.folders_taken = 0  # folders the walk took from `folders` instead of reading them
        self.folders_settled_before: int | None = None  # tests only: else the walk's start, less a tick

    def path(self, rel: Any, what: str) -> Path | None:
        """The file a document's path names, or None (and a failure) if unsafe or missing."""
        if not is_safe_path(rel):
            self.report.check(
                False,
                MANIFEST_PATH,
                f"{what}: unsafe or malformed path",
                "a relative path with '/', no '..'",
                show(rel),
            )
            return None
        self.current = rel
        p = self.root / rel
        # No component inside the site may be a link (each folder looked at once, however many
        # files it holds), and the path has no '..': then it cannot leave the site.
        real = p
        try:
            if os.name == "nt":  # junctions are not links to lstat there: resolve each path
                real = p.resolve()
                inside = real.is_relative_to(self.resolved) and not any(
                    q.is_symlink() for q in (p, *p.parents) if q.is_relative_to(self.root) and q != self.root
                )
                is_file = p.is_file()
            else:
                st = os.lstat(p)
                inside = self._link_free(rel.rpartition("/")[0]) and not stat.S_ISLNK(st.st_mode)
                is_file = stat.S_ISREG(st.st_mode)
        except FileNotFoundError:
            inside, is_file = self._link_free(rel.rpartition("/")[0]), False
        except (OSError, RuntimeError):  # a link loop, a name too long, a permission
            inside = is_file = False
        if not inside:
            with contextlib.suppress(OSError, RuntimeError):  # only to say where it leads
                real = p.resolve()
            self.report.check(
                False,
                rel,
                f"{what}: the path leaves the site or passes through a link",
                "a regular file inside the site",
                str(real),
            )
            return None
        if not is_file:
            self.report.check(False, rel, f"{what}: the file is missing", "a regular file", "nothing")
            return None
        return p

    def _link_free(self, rel_dir: str) -> bool:
        """Whether no component of folder `rel_dir` (inside the site) is a link; one that does
        not exist is none (the file under it is then missing)."""
        ok = True
        folder = ""
        for part in rel_dir.split("/") if rel_dir else ():
            folder = f"{folder}/{part}" if folder else part
            known = self._folders.get(folder)
            if known is None:
                try:
                    known = not stat.S_ISLNK(os.lstat(self.root / folder).st_mode)
                except FileNotFoundError:
                    known = True
                except OSError:
                    known = False
                known = known and ok
                self._folders[folder] = known
            ok = known
        return ok

    def read(self, rel: Any, what: str) -> bytes | None:
        p = self.path(rel, what)
        if p is None:
            return None
        try:
            return p.read_bytes()
        except OSError as e:
            self.report.check(False, str(rel), f"{what}: cannot be read", "a readable file", e.strerror or str(e))
            return None

    def document(self, rel: Any, what: str) -> tuple[bytes, Any] | None:
        """Read and parse a canonical JSON document; None (and a failure) if it is not one."""
        data = self.read(rel, what)
        if data is None:
            return None
        try:
            value = parse_canonical(data)
        except FormatError as e:
            self.report.check(False, str(rel), f"{what}: {e}")
            return None
        self.report.checks += 1
        return data, value

    def signed(self, rel: str, data: bytes, key: bytes, what: str) -> bool:
        """Whether `rel`.sig is a valid detached signature of `data` by `key` (a failure if not)."""
        sig = self.read(rel + ".sig", f"signature of {what}")
        if sig is None:
            return False
        return self.report.check(
            ed25519_verify(key, sig, data),
            rel + ".sig",
            f"detached signature of {rel} does not verify with the site key",
            f"a valid Ed25519 signature by {fingerprint(key)} of the file's {len(data)} bytes",
            f"{len(sig)} bytes that are not",
        )

    def open(self, rel: str, what: str) -> BinaryIO | None:
        """A file to read in place (an archive), by the same rules as read()."""
        p = self.path(rel, what)
        if p is None:
            return None
        try:
            return p.open("rb")
        except OSError as e:
            self.report.check(False, rel, f"{what}: cannot be read", "a readable file", e.strerror or str(e))
            return None

    def file_size(self, rel: str) -> int | None:
        """The size of a file SHA256SUMS lists; None if it is not there (which that check reports)."""
        try:
            st = (self.root / rel).lstat()
        except OSError:
            return None
        return st.st_size if stat.S_ISREG(st.st_mode) else None

    def known_sha256(self, rel: str) -> str | None:
        """The SHA-256 the caller knows for `rel` (Site.known), if the file still has the
        identity it had when hashed; else None, and it must be read."""
        known = self.known.get(rel)
        if known is None:
            return None
        if not self.known_now:
            try:
                st = os.lstat(os.path.join(self.root, rel))
            except OSError:
                return None
            if not stat.S_ISREG(st.st_mode) or not known_still(known, st):
                return None
        self.known_used.add(rel)
        return known_sha256(known)

    def known_sha256s(self, rels: Iterable[str]) -> dict[str, str]:
        """known_sha256 of each of `rels` it answers for, in one loop: when the caller looked at
        every file in this run (known_now), 300,000 of them cost no call a file."""
        if not self.known_now:
            return {rel: sha for rel in rels if (sha := self.known_sha256(rel)) is not None}
        known = self.known
        found = {rel: value[:32].hex() for rel in rels if (value := known.get(rel)) is not None}
        self.known_used.update(found)
        return found

    def file_sha256(self, rel: str) -> str:
        known = self.known_sha256(rel)
        return known if known is not None else self.hash_file(rel)

    def hash_file(self, rel: str) -> str:
        """The SHA-256 of the file's bytes, read now (never taken from Site.known)."""
        h = hashlib.sha256()
        with (self.root / rel).open("rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        return h.hexdigest()

    def files(self, verifier: str) -> Iterator[str]:
        """Every regular file of the site, as a '/' path; failures for anything else found:
        links, devices, empty folders, Python code other than the verifier, folders nested
        deeper than MAX_SITE_DEPTH. An explicit stack rather than recursion (a folder 1,200
        levels deep is data, not a crash), and never a link followed.

        With `folders` (what the last walk of this folder found, memory/folder_memory.py), a
        folder whose identity is the one recorded is not read: its entries are the ones it held
        then. Every plain folder the walk meets, read or taken, is in `folders_seen` after it."""
        remembered, seen, root = self.folders, self.folders_seen, os.fspath(self.root)
        settled = self.folders_settled_before
        if settled is None and remembered is not None:  # the clock is read for the mirror's record only
            settled = time.time_ns() - FOLDER_TICK_NS
        env = self.environment
        stack: list[tuple[str, int]] = [("", 0)]
        while stack:
            rel_dir, depth = stack.pop()
            prefix = f"{rel_dir}/" if rel_dir else ""
            # Taken before the folder is read; no trailing slash, with which lstat follows a link.
            looked = _folder_identity(f"{root}/{rel_dir}" if rel_dir else root) if remembered is not None else None
            identity = looked[0] if looked is not None else None
            kept = remembered.get(rel_dir) if remembered is not None and identity is not None else None
            # A folder holding the environment running the verifier is read: that entry is skipped, with a note.
            holds_env = env is not None and env.rpartition("/")[0] == rel_dir
            if kept is not None and kept[0] == identity and rel_dir and not holds_env:
                seen[rel_dir] = kept
                self.folders_taken += 1
                if kept[1]:
                    yield from (prefix + name for name in kept[1].split("/"))
                if kept[2]:
                    stack.extend((prefix + name, depth + 1) for name in kept[2].split("/"))
                continue
            files: list[str] = []
            folders: list[str] = []
            plain = yield from self._read_entries(rel_dir, prefix, depth, verifier, files, folders)
            stack.extend((prefix + name, depth + 1) for name in folders)
            # Never the site's own folder (it holds the verifier, whose path the manifest names);
            # never one whose times are whole milliseconds (a coarse filesystem's), nor one
            # changed too lately to tell from a change to come.
            recordable = looked is not None and settled is not None and looked[1] % 1_000_000 and looked[1] < settled
            if plain and rel_dir and looked is not None and recordable and is_safe_path(rel_dir):
                seen[rel_dir] = (looked[0], "/".join(files), "/".join(folders))

    def _read_entries(
        self, rel_dir: str, prefix: str, depth: int, verifier: str, files: list[str], folders: list[str]
    ) -> Generator[str, None, bool]:
        """Yield the regular files of one folder, reading it; add the names of its files and
        of the folders to walk to `files` and `folders`. Whether it is plain: nothing in it
        reported, no Python code in it (the verifier's path may change), every name safe."""
        report = self.report
        try:
            with os.scandir(self.root / rel_dir if rel_dir else self.root) as it:
                entries = sorted(it, key=_NAME)
        except OSError as e:
            report.check(False, rel_dir or ".", "folder cannot be read", "a readable folder", e.strerror or str(e))
            return False
        if rel_dir and not entries:
            report.check(
                False,
                rel_dir,
                "the site holds an empty folder, which no SHA256SUMS line can list",
                "no empty folders",
                "an empty folder",
            )
            return False
        plain = True
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_symlink():
                    plain = False
                    report.check(
                        False,
                        rel,
                        "the site holds a symbolic link",
                        "regular files and folders only",
                        f"a link to {os.readlink(entry.path)}",
                    )
                elif entry.is_dir(follow_symlinks=False):
                    if self._read_folder(rel, entry.name, depth + 1):
                        folders.append(entry.name)
                        plain = plain and entry.name.lower() != "__pycache__" and is_safe_path(rel)
                    else:
                        plain = False
                elif entry.is_file(follow_symlinks=False):
                    if entry.name.lower().endswith(PYTHON_CODE_SUFFIXES):
                        plain = False
                        if rel != verifier:
                            report.check(
                                False,
                                rel,
                                "the site holds Python code a verifier could be made to import",
                                "no Python code but the verifier",
                                "a Python file",
                            )
                    files.append(entry.name)
                    plain = plain and is_safe_path(rel)
                    yield rel
                else:
                    plain = False
                    report.check(
                        False,
                        rel,
                        "the site holds something that is neither a file nor a folder",
                        "regular files and folders only",
                        "a device, socket or pipe",
                    )
            except OSError as e:
                plain = False
                report.check(False, rel, "cannot be read", "a readable file or folder", e.strerror or str(e))
        return plain

    def _read_folder(self, rel: str, name: str, depth: int) -> bool:
        """Whether to read a folder of the site found `depth` levels down: not the environment
        running the verifier, nor one nested too deeply; a bytecode cache is read, and fails."""
        report = self.report
        if rel == self.environment:
            report.notes.append(
                f"{rel}/ was not read: it is the Python environment running this verifier "
                "(its sys.prefix), not a file of the site"
            )
            return False
        if name.lower() == "__pycache__":
            report.check(
                False,
                rel,
                "the site holds a Python bytecode cache",
                "no Python code but the verifier",
                "a __pycache__ folder",
            )
        if depth >= MAX_SITE_DEPTH:
            report.check(
                False,
                rel,
                "folder nested too deeply to be part of a site",
                f"at most {MAX_SITE_DEPTH} levels",
                "deeper (not read further)",
            )
            return False
        return True

    def own_verifier(self) -> bytes:
        """The bytes of the verify.py this code is (OSError if it cannot read itself)."""
        return Path(own_file()).read_bytes()


# ==============================================================================================
# generator/verifier/core/checksum_tree.py: The checksum list as a tree (docs/formats/v3.md, 5; docs/formats/v4.md,
#     3): which list holds each file of a v3 or v4 site, the bytes of every list, and reading a tree's lists back.
# ==============================================================================================

# A leaf holds at most this many files; a node with more is split by the next hex digit of the keys.
LEAF_FILES = 64


LISTS_DIR = "sums"


PARTS_DIR = "download"


LIST_SUFFIX = ".sha256"


PART_SUFFIX = ".zip"


# A prefix is at most a whole key: 64 hex digits, or 256 bits.
LIST_RE = re.compile(rf"{LISTS_DIR}/([0-9a-f]{{1,256}})\{LIST_SUFFIX}")


PART_RE = re.compile(rf"{PARTS_DIR}/([0-9a-f]{{1,256}})\{PART_SUFFIX}")


_LINE_RE = re.compile(r"^([0-9a-f]{64})  (.+)$")


def path_key(path: str) -> str:
    """A file's key: the SHA-256, lowercase hex, of its path's UTF-8 bytes."""
    return hashlib.sha256(path.encode("utf-8")).hexdigest()


def _hex_digit(key: str, depth: int) -> str:
    return key[depth]


def _bit(key: str, depth: int) -> str:
    """Bit `depth` (from the most significant) of a hex key."""
    return "1" if int(key[depth >> 2], 16) & (8 >> (depth & 3)) else "0"


def _hex_prefix(key: str, n: int) -> str:
    return key[:n]


def _bit_prefix(key: str, n: int) -> str:
    """The first `n` bits of a hex key, as '0' and '1' (at most its 256)."""
    n = min(n, len(key) * 4)
    if n <= 0:
        return ""
    digits = -(-n // 4)
    return format(int(key[:digits], 16), f"0{digits * 4}b")[:n]


@dataclass(frozen=True)
class TreeRule:
    """How a format's tree splits: a node holding more than `leaf_files` files has a child for
    each next digit of its files' keys, written in `digits` (`digit_at` reads a hex key's digit
    at a depth, `prefix_of` its first n digits).

    Format v3 splits by hex digits (a node's files spread over up to 16 children), so how full a
    leaf is cycles between a sixteenth of the bound and the bound as a site grows, and with it
    what a release rewrites of the download parts. Format v4 splits by bits: a node splits into
    two halves, so a leaf holds between about half the bound and the bound at any size, and the
    bound is smaller (docs/formats/v4.md, 3)."""

    leaf_files: int
    digits: str
    digit_word: str
    digit_at: Callable[[str, int], str]
    prefix_of: Callable[[str, int], str]
    doc: str  # where the format says so, for failures

    def build(self, paths: Iterable[str]) -> "Tree":
        return build_tree(paths, self.leaf_files, self.digit_at)

    @property
    def name(self) -> str:
        """The rule in words, as the verifier's memory of a tree's lists records what they were
        checked under (memory/list_memory.py)."""
        return f"{self.digit_word}s, {self.leaf_files} files a leaf"

    def key(self, path: str) -> str:
        """A path's whole key in this rule's digits (64 hex digits, or 256 bits)."""
        return self.prefix_of(path_key(path), 256)


HEX_TREE = TreeRule(64, "0123456789abcdef", "hex digit", _hex_digit, _hex_prefix, "docs/formats/v3.md, 5")


BIT_TREE = TreeRule(16, "01", "bit", _bit, _bit_prefix, "docs/formats/v4.md, 3")


def tree_rule(site_format: int) -> TreeRule:
    """The tree a v3 site (or any other format's tool asking) splits by, or a v4 site's."""
    return BIT_TREE if site_format >= 4 else HEX_TREE


def list_path(prefix: str) -> str:
    """The list of node `prefix`: SHA256SUMS for the root, else sums/<prefix>.sha256."""
    return SUMS_PATH if not prefix else f"{LISTS_DIR}/{prefix}{LIST_SUFFIX}"


def part_path(prefix: str) -> str:
    """The download part of leaf `prefix`."""
    return f"{PARTS_DIR}/{prefix}{PART_SUFFIX}"


def is_tree_file(path: str) -> bool:
    """A file the tree itself places (a list, a part, the root and its signature), which no
    leaf lists: every other file of a v3 site is in exactly one leaf."""
    return path in (SUMS_PATH, SUMS_SIG_PATH) or path.startswith((f"{LISTS_DIR}/", f"{PARTS_DIR}/"))


@dataclass(frozen=True)
class Tree:
    """A tree's shape: each leaf's files in path-byte order, each inner node's children (the
    root's prefix is empty) in digit order."""

    leaves: dict[str, list[str]]
    inner: dict[str, list[str]]

    def lists_bottom_up(self) -> list[str]:
        """The inner nodes, deepest first: the order in which each list's children exist before it."""
        return sorted(self.inner, key=lambda p: (-len(p), p))


def build_tree(
    paths: Iterable[str], leaf_files: int = LEAF_FILES, digit_at: Callable[[str, int], str] = _hex_digit
) -> Tree:
    """The tree of a set of paths (docs/formats/v3.md, 5): the root always has children; another
    node is a leaf when it holds at most `leaf_files` files (a TreeRule's bound in a checksum
    tree; the generator's sitemap parts are cut by the same rule), else it has a child for each
    digit some of its keys continue with (`digit_at`: a hex digit, or a v4 tree's bit). Sorted
    by their hex keys, the files are in the order of their bits too."""
    keyed = sorted((path_key(p), p) for p in paths)
    leaves: dict[str, list[str]] = {}
    inner: dict[str, list[str]] = {}
    # Sorted by key, the files of a node are a run of `keyed`: (prefix, start, end) to visit.
    todo = [("", 0, len(keyed))]
    while todo:
        prefix, lo, hi = todo.pop()
        if prefix and hi - lo <= leaf_files:
            leaves[prefix] = sorted((p for _, p in keyed[lo:hi]), key=lambda p: p.encode())
            continue
        depth, children, i = len(prefix), [], lo
        while i < hi:
            # The node's keys are sorted, so its files with this digit are a run: found by
            # bisection, a node costs a few probes and not a look at each of its files.
            digit = digit_at(keyed[i][0], depth)
            j = bisect.bisect_right(keyed, digit, i, hi, key=lambda r: digit_at(r[0], depth))
            children.append(prefix + digit)
            todo.append((prefix + digit, i, j))
            i = j
        inner[prefix] = children
    return Tree(leaves, inner)


def sums_text(rows: Iterable[tuple[str, str]]) -> bytes:
    """A checksum list: `<sha256>  <path>` lines for (path, sha256) rows, sorted by path bytes."""
    return "".join(f"{sha}  {p}\n" for p, sha in sorted(rows, key=lambda r: r[0].encode())).encode()


def leaf_list(tree: Tree, prefix: str, digests: Mapping[str, str]) -> bytes:
    """The list of leaf `prefix`: a line for each of its files."""
    return sums_text((p, digests[p]) for p in tree.leaves[prefix])


def inner_list(tree: Tree, prefix: str, digests: Mapping[str, str], parts: bool) -> bytes:
    """The list of inner node `prefix` (the root's is SHA256SUMS): each child's list and, with
    `parts`, each leaf child's download part."""
    rows = []
    for child in tree.inner[prefix]:
        rows.append((list_path(child), digests[list_path(child)]))
        if parts and child in tree.leaves:
            rows.append((part_path(child), digests[part_path(child)]))
    return sums_text(rows)


def read_lists(root: bytes, read: Callable[[str], bytes | None]) -> tuple[dict[str, str], list[str]]:
    """Every (path, sha256) row of a site's checksum lists: SHA256SUMS's (`root`), and, for each
    list of sums/ a list names, that list's, read with `read` (None: unreadable) and taken only
    when it has the SHA-256 its parent gives. A v1 or v2 SHA256SUMS names no list: its own rows.
    Returns the rows and the problems met, each naming the list and its line; the shape of the
    tree is not checked here (the verifier does)."""
    rows: dict[str, str] = {}
    problems: list[str] = []
    todo = [(SUMS_PATH, root)]
    while todo:
        name, data = todo.pop()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{name}: not valid UTF-8")
            continue
        last = b""
        for n, line in enumerate(text.splitlines(), 1):
            m = _LINE_RE.fullmatch(line)
            if m is None:
                problems.append(f"{name}:{n}: expected `<sha256>  <path>`, found {line[:80]!r}")
                continue
            sha, path = m.group(1), m.group(2)
            if path.encode() <= last:
                problems.append(f"{name}:{n}: lines not sorted by path bytes (or a path listed twice)")
            last = path.encode()
            if path in rows or path in (SUMS_PATH, SUMS_SIG_PATH):
                problems.append(f"{name}:{n}: {path!r} listed twice")
                continue
            rows[path] = sha
            if LIST_RE.fullmatch(path):
                child = read(path)
                if child is None:
                    problems.append(f"{path}: listed in {name} (line {n}) but cannot be read")
                elif hashlib.sha256(child).hexdigest() != sha:
                    problems.append(f"{path}: not the SHA-256 {name} gives it (line {n})")
                else:
                    todo.append((path, child))
        if text and not text.endswith("\n"):
            problems.append(f"{name}: last line does not end with a newline")
    return rows, problems


# ==============================================================================================
# generator/verifier/tlog/rotation.py: Key rotation and revocation on a site (format v2): keys.json as the ledger's
#     key events imply it, every checkpoint signed only by keys valid for its size, each rotation handed over by a
#     checkpoint both keys signed, and a pinned key followed through those hand-overs.
# ==============================================================================================

LogKey: TypeAlias = VerifierKey | CosignerKey


ML_DSA_KEYS_MEMBER = "ml_dsa_44_keys"


def check_keys_follow_the_ledger(
    s: Site, rel: str, rows: list[dict[str, Any]], ring: KeyRing, ml_dsa_rows: list[Any] | None = None
) -> None:
    """keys.json's rows (status, times, reason) equal the ledger's key events', for both lines of
    keys: `keys` (Ed25519) and `ml_dsa_44_keys` (absent while the log has no ML-DSA-44 key)."""
    members = ("reason", "status", "valid_from", "valid_until", "vkey")
    want_ml = ring.ml_dsa_rows()
    got_ml = [{k: r[k] for k in members if k in r} if isinstance(r, dict) else r for r in ml_dsa_rows or []]
    s.report.check(
        got_ml == want_ml,
        rel,
        f"{ML_DSA_KEYS_MEMBER} differs from what the ledger's key events make it (status, validity, reason)",
        show(want_ml, 400),
        show(got_ml, 400),
    )
    if not rows:
        return
    first = rows[0].get("vkey") if isinstance(rows[0], dict) else None
    try:
        ring.start(parse_vkey(first if isinstance(first, str) else ""))
    except FormatError:
        return  # reported with keys.json
    want = ring.rows(str(rows[0].get("valid_from")))
    got = [{k: r[k] for k in members if k in r} if isinstance(r, dict) else r for r in rows]
    s.report.check(
        got == want,
        rel,
        "the keys differ from what the ledger's key events make them (status, validity, reason)",
        show(want, 400),
        show(got, 400),
    )


def ml_dsa_key_row_problems(rows: Any, origin: str) -> list[Problem]:
    """The shape of keys.json's `ml_dsa_44_keys` rows: each an ML-DSA-44 vkey (type 0x06) named by
    the origin, with its base64 key and fingerprint; whether they follow the ledger is checked
    with the ledger (check_keys_follow_the_ledger)."""
    if not isinstance(rows, list):
        return [Problem("must be a list", where=ML_DSA_KEYS_MEMBER, found=show(rows))]
    problems: list[Problem] = []
    for n, row in enumerate(rows):
        w = f"{ML_DSA_KEYS_MEMBER}[{n}]"
        problems += check_keys(
            row, ("fingerprint", "public_key", "status", "valid_from", "valid_until", "vkey"), ("reason",), w
        )
        if problems:
            continue
        try:
            key = parse_cosigner_vkey(row["vkey"])
        except FormatError as e:
            problems.append(Problem(f"not a verifier key: {e}", where=f"{w}.vkey"))
            continue
        if key.kind != ML_DSA_44 or key.name != origin:
            problems.append(
                Problem("an ML-DSA-44 key (type 0x06) named by the origin", where=f"{w}.vkey", expected=origin)
            )
        if row["public_key"] != base64.b64encode(key.public_key).decode() or row["fingerprint"] != key.fingerprint:
            problems.append(Problem("public_key or fingerprint differs from the vkey's key", where=w))
    return problems


def checkpoint_signers(data: bytes, ring: KeyRing) -> tuple[tuple[str, int, bytes], list[LogKey]]:
    """A checkpoint's (origin, size, root) and the ring's keys that signed it, of both types;
    NoteError if one of them failed, or no Ed25519 key of the ring signed it."""
    note = open_note(data, [s.key for s in ring.spans])
    tree = parse_checkpoint(note.text)
    signers: list[LogKey] = [k for k in (s.key for s in ring.spans) if any(v.key_id == k.key_id for v in note.verified)]
    # Named by the origin, or it is no key of this log's (a key-addition of another name is refused
    # by keys.json's rows too, but a replay that never reads them must not count it).
    signers += cosigned_by(data, [span.key for span in ring.ml_dsa if span.key.name == tree[0]])
    return tree, signers


def _line_problems(spans: list[KeySpan[Any]], newest: LogKey | None, size: int, signers: list[LogKey]) -> list[str]:
    problems = []
    for k in signers:
        span = next((s for s in spans if s.key == k), None)
        if span is not None and not span.covers(size):
            until = f"up to size {span.last_size}" if span.last_size is not None else f"from size {span.first_size}"
            why = f"revoked ({span.reason})" if span.reason else "not valid for it"
            problems.append(f"signed by {k.fingerprint}, {why}: that key signs trees {until} only, this one has {size}")
    if newest is not None and newest not in signers:
        kind = "ML-DSA-44 key" if isinstance(newest, CosignerKey) else "key"
        problems.append(f"not signed by {newest.fingerprint}, the {kind} valid for a tree of {size} entries")
    return problems


def signer_problems(ring: KeyRing, size: int, signers: list[LogKey]) -> list[str]:
    """Why these signers may not sign a tree of `size`, if they may not; or which key that must
    sign it, of either line of keys, did not."""
    return _line_problems(ring.spans, ring.newest_at(size), size, signers) + _line_problems(
        ring.ml_dsa, ring.newest_ml_dsa_at(size), size, signers
    )


def check_checkpoint_keys(s: Site, rel: str, data: bytes, ring: KeyRing) -> None:
    try:
        (_, size, _), signers = checkpoint_signers(data, ring)
    except (NoteError, FormatError) as e:
        s.report.check(False, rel, f"checkpoint does not verify with the ledger's keys: {e}")
        return
    problems = signer_problems(ring, size, signers)
    for problem in problems:
        s.report.check(False, rel, problem)
    s.report.checks += 1
    if ring.ml_dsa and not problems:
        named = ", ".join(
            f"{'ML-DSA-44' if isinstance(k, CosignerKey) else 'Ed25519'} {k.fingerprint}" for k in signers
        )
        s.report.notes.append(f"the checkpoint's signatures by the log, each verified: {named}")


def check_hand_overs(
    s: Site, ring: KeyRing, archived: dict[int, tuple[str, bytes]], unjudged: int | None = None
) -> None:
    """Every rotation is handed over: the archived checkpoint of the tree that first holds it is
    signed by the key it retires and the key it introduces; the tree that first holds a
    `key-addition`, by the ML-DSA-44 key it adds. A hand-over of size `unjudged` is today's
    checkpoint, which failed and was reported there: what restates it is not judged again."""
    pairs: list[tuple[KeySpan[Any] | None, KeySpan[Any]]] = list(zip(ring.spans, ring.spans[1:], strict=False))
    if ring.ml_dsa:
        pairs += [(None, ring.ml_dsa[0]), *zip(ring.ml_dsa, ring.ml_dsa[1:], strict=False)]
    for old, new in pairs:
        size = new.first_size
        if size == unjudged:
            continue
        rel, data = archived.get(size, ("", b""))
        if not data:
            s.report.check(
                False,
                "ledger/history.json",
                f"no archived hand-over checkpoint of size {size} for the rotation to {new.key.fingerprint}",
            )
            continue
        try:
            _, signers = checkpoint_signers(data, ring)
        except (NoteError, FormatError) as e:
            s.report.check(False, rel, f"hand-over checkpoint does not verify: {e}")
            continue
        # A key revoked as compromised before the tree that brought it covers no size at all:
        # it may sign nothing, so the hand-over is not asked for its signature.
        want = [span.key for span in (old, new) if span is not None and span.covers(size)]
        s.report.check(
            all(k in signers for k in want),
            rel,
            "the hand-over checkpoint is not signed by both the retired and the new key"
            if old is not None
            else "the checkpoint that first holds the ML-DSA-44 key's addition is not signed by that key",
            " and ".join(k.fingerprint for k in want),
            ", ".join(k.fingerprint for k in signers),
        )


def check_pin_followed(s: Site, rel: str, ring: KeyRing, pinned: VerifierKey | None) -> None:
    """A key pinned with --key that is no longer the active one is followed to it, through the
    hand-overs (checked above), unless it was revoked."""
    if pinned is None or (ring.active is not None and ring.active.key == pinned):
        return
    span = ring.span(pinned.vkey)
    if span is None:
        s.report.check(False, rel, "the key given with --key is not one of the ledger's keys", pinned.vkey)
    elif span.reason is not None:
        s.report.check(
            False, rel, f"the key given with --key was revoked: {span.reason} (compromised at {span.compromised_at})"
        )
    else:
        s.report.notes.append(
            f"the key given with --key ({pinned.fingerprint}) was rotated; followed through the ledger's hand-over "
            f"checkpoint(s) to {ring.active.key.fingerprint if ring.active else 'no active key'}"
        )
        s.report.checks += 1


# ==============================================================================================
# generator/verifier/memory/folder_memory.py: What the walk of a mirror's folder found in each of its folders, kept
#     beside the mirror's record (`mirrors/<key>.folders`), so that the next walk reads again only the folders that
#     changed. (A build keeps the same record of each folder it stages a release into, for its own check.)
# ==============================================================================================

FOLDERS_HEADER = "transparency-verify mirror folders v1"


FOLDERS_MAX_BYTES = 1 << 31


@dataclass
class FolderRecord:
    """The folders of one mirror as its last walk found them, and where to keep what this walk finds."""

    path: Path | None  # None: nothing is kept (the record could not be trusted)
    remembered: Mapping[str, FolderSeen] = field(default_factory=dict)

    def save(self, seen: Mapping[str, FolderSeen]) -> str | None:
        """Keep `seen` for the next walk; why it could not be kept, or None."""
        if self.path is None:
            return None
        try:
            save_folders(self.path, seen)
        except OSError as e:
            return f"could not write {self.path}: {e.strerror or e}"
        return None


def folders_path(record: Path) -> Path:
    """The folders' file beside the mirror's record `mirrors/<key>.txt`."""
    return record.with_suffix(".folders")


def load_folders(path: Path, site_folder: Path) -> tuple[FolderRecord, str | None]:
    """The folders kept for the mirror in `site_folder`, and why they are not used (None when
    they are, or there are none yet); a record another user could have written is neither used
    nor written."""
    for p in (site_folder, path.parent, path):
        if p.exists() and not private_to_user(p):
            return FolderRecord(None), f"{p} is not this user's alone: every folder of the mirror is read"
    if not path.exists():
        return FolderRecord(path), None
    try:
        with path.open("rb") as f:
            data = f.read(FOLDERS_MAX_BYTES + 1)
        if len(data) > FOLDERS_MAX_BYTES:
            raise ValueError(f"larger than {FOLDERS_MAX_BYTES} bytes")
        return FolderRecord(path, _parse_folders(data)), None
    except (OSError, ValueError) as e:
        why = f"{path}: not used, every folder of the mirror is read ({getattr(e, 'strerror', None) or e})"
        return FolderRecord(path), why


def _parse_folders(data: bytes) -> dict[str, FolderSeen]:
    version, count, body = read_hashed(data, FOLDERS_HEADER)
    # What makes a folder plain is this code's to say: a record another version of the verifier
    # wrote might hold a folder that this one would report (a rule made stricter since).
    if version != rules_version().encode():
        raise ValueError("written by another version of the verifier")
    lines = body.decode("utf-8", "surrogateescape").split("\n")
    if lines.pop() != "" or len(lines) != count:
        raise ValueError(f"does not hold the {count} folders its third line names")
    folders: dict[str, FolderSeen] = {}
    for n, line in enumerate(lines, start=4):
        head, nul, rest = line.partition("\0")
        files, nul2, subs = rest.partition("\0")
        rel = head[65:]
        if not (nul and nul2 and len(head) > 65 and head[64] == " ") or rel in folders:
            raise ValueError(f"line {n} is malformed")
        folders["" if rel == "." else rel] = (bytes.fromhex(head[:64]), files, subs)
    return folders


def save_folders(path: Path, seen: Mapping[str, FolderSeen]) -> None:
    """Write the folders whole, replacing the last ones atomically, in a folder only the user may read."""
    rows = [f"{seen[rel][0].hex()} {rel or '.'}\0{seen[rel][1]}\0{seen[rel][2]}\n" for rel in sorted(seen)]
    write_hashed(path, FOLDERS_HEADER, rules_version(), len(rows), "".join(rows).encode("utf-8", "surrogateescape"))


# ==============================================================================================
# generator/verifier/memory/mirror_record.py: The record `verify.py mirror` keeps of the files it wrote into a
#     mirror's folder: each file's path, SHA-256 and stat identity (size, mtime_ns, ctime_ns, inode), beside the
#     verifier's state file (`mirrors/<key>.txt`, the key the SHA-256 of the folder's real path).
# ==============================================================================================

RECORD_HEADER = "transparency-verify mirror record v2"


RECORD_HEADER_V1 = "transparency-verify mirror record v1"


_VALUE_BYTES = 64


_HEX64 = re.compile(r"[0-9a-f]{64}")


# A line is under 250 bytes; ten million files is far beyond any site this format makes.
RECORD_MAX_BYTES = 1 << 32


# A file the mirror wrote: its SHA-256 and its stat identity when it was last hashed, as one
# 64-byte value (folder.known_value), the form folder.Site's `known` takes: the record of 300,000
# files is handed to the verification as it is, not copied, and held small while it runs.
Written = bytes


def record_path(state_folder: Path, site_folder: Path) -> Path:
    """Where the record of the mirror in `site_folder` lies, in the verifier's state folder."""
    key = hashlib.sha256(os.path.realpath(site_folder).encode("utf-8", "surrogateescape")).hexdigest()
    return state_folder / "mirrors" / f"{key[:32]}.txt"


def load_record(path: Path, site_folder: Path) -> tuple[dict[str, Written], str | None]:
    """The files the record says the mirror wrote, and why it was not used (None when it was):
    an absent record is an empty one; one another user could have written, or a damaged one, is
    not used at all (the mirror then hashes what it finds, and removes nothing it did not write)."""
    if not path.exists():
        return {}, None
    for p in (site_folder, path.parent, path):
        if not private_to_user(p):
            return {}, f"{p} is not this user's alone (another could have written it): the mirror's record is not used"
    try:
        with path.open("rb") as f:
            data = f.read(RECORD_MAX_BYTES + 1)
        if len(data) > RECORD_MAX_BYTES:
            raise ValueError(f"larger than {RECORD_MAX_BYTES} bytes")
        if data.startswith(RECORD_HEADER_V1.encode() + b"\n"):
            return _parse(data.decode("utf-8")), None
        return _parse_v2(data), None
    except (OSError, ValueError) as e:
        return {}, f"{path}: the mirror's record is not used ({getattr(e, 'strerror', None) or e})"


def load_mirror_memory(
    record: Path | None, site_folder: Path
) -> tuple[dict[str, Written], FolderRecord | None, list[str]]:
    """The mirror's record `record` (None: none is kept) of the files it wrote into
    `site_folder`, what the last walk of that folder found (folder_memory.py), and why either
    is not used."""
    if record is None:
        return {}, None, []
    files, why = load_record(record, site_folder)
    folders, why_folders = load_folders(folders_path(record), site_folder)
    return files, folders, [w for w in (why, why_folders) if w]


def _parse_v2(data: bytes) -> dict[str, Written]:
    _url, n, body = read_hashed(data, RECORD_HEADER)
    cut = len(body) - _VALUE_BYTES * n
    names = body[:cut].decode("utf-8").split("\n") if cut > 0 else [""]
    # Each path ends with a newline: n of them leave n + 1 pieces, the last empty.
    if cut < 0 or len(names) != n + 1 or names.pop() != "":
        raise ValueError(f"does not hold the {n} paths and values its third line names")
    values = body[cut:]
    files = dict(zip(names, (values[i : i + _VALUE_BYTES] for i in range(0, len(values), _VALUE_BYTES)), strict=True))
    if len(files) != n:
        raise ValueError("names a path twice")
    return files


def _parse(text: str) -> dict[str, Written]:
    """A record of version 1."""
    header, _, rest = text.partition("\n")
    _url, second, body = rest.partition("\n")
    if header != RECORD_HEADER_V1 or not second or not text.endswith("\n"):
        raise ValueError(f"not a record beginning with {RECORD_HEADER_V1!r}")
    # The body split into lines (300,000 strings) only when it is not plain.
    plain = _parse_plain(body)
    return plain if plain is not None else _parse_by_line(body)


def _parse_by_line(body: str) -> dict[str, Written]:
    """The record's lines one by one (after its two first), naming the first one malformed."""
    files: dict[str, Written] = {}
    for n, line in enumerate(body.split("\n")[:-1], start=3):
        fields = line.split(" ", 5)
        if len(fields) != 6 or not _HEX64.fullmatch(fields[0]) or not is_safe_path(fields[5]) or fields[5] in files:
            raise ValueError(f"line {n} is malformed")
        value = known_value(fields[0], (int(fields[1]), int(fields[2]), int(fields[3]), int(fields[4])))
        if value is None:  # times or an inode past 64 bits: never recorded so
            raise ValueError(f"line {n} is malformed")
        files[fields[5]] = value
    return files


_ROW = re.compile(r"([0-9a-f]{64}) (-?[0-9]{1,20}) (-?[0-9]{1,20}) (-?[0-9]{1,20}) (-?[0-9]{1,20}) ([^\n]+)\n")


def _parse_plain(body: str) -> dict[str, Written] | None:
    """The record's lines read by one search in C when every one is plain (what save_record
    writes); None otherwise, and the line-by-line reading names the line that is not."""
    rows: list[tuple[str, str, str, str, str, str]] = _ROW.findall(body)
    # The rows cover the text exactly: their fields and six separators each.
    if sum(map(len, itertools.chain.from_iterable(rows))) + 6 * len(rows) != len(body):
        return None
    if not all_safe_paths([row[5] for row in rows]):
        return None
    files: dict[str, Written] = {}
    for sha, size, mtime, ctime, inode, path in rows:
        value = known_value(sha, (int(size), int(mtime), int(ctime), int(inode)))
        if value is None:
            return None
        files[path] = value
    return files if len(files) == len(rows) else None


def save_record(path: Path, url: str, files: dict[str, Written]) -> None:
    """Write the record whole (version 2), replacing the last one atomically, in a folder only
    the user may read."""
    # Sorted as strings: a path is valid UTF-8, whose byte order is its code points' order.
    names = sorted(files)
    body = b"".join((("".join(rel + "\n" for rel in names)).encode("utf-8"), b"".join(map(files.__getitem__, names))))
    write_hashed(path, RECORD_HEADER, url.replace("\n", " "), len(names), body)


# ==============================================================================================
# generator/verifier/site/manifest_parts.py: The manifest's lists in parts (docs/formats/v4.md): a v4
#     `transparency.json` names, for each of its lists of reveals, runs and certificates, parts of 256 rows,
#     `manifest/<list>/<k>.json`, with their row counts and SHA-256. A part holds no time and no tree size, so a part
#     whose rows did not change keeps its bytes, and an event rewrites the index and the parts its rows are in instead
#     of a row for every reveal, run and certificate of the history.
# ==============================================================================================

# A part's rows: a certificate's row is about 300 bytes, so a part of certificates about 75 KiB,
# what one event rewrites at most in each list.
MANIFEST_PART_ROWS = 256


MANIFEST_PARTS_DIR = "manifest"


# The lists that grow with the history; `gates` and `methodology` stay whole in the index.
PARTED_LISTS = ("reveals", "runs", "certificates")


PART_TYPE = "manifest-part"


# The checks of the rows read them as one list, and name the manifest and the row's id.
PARTED_ROWS_NOTE = (
    f"in this format v4 site the rows of {MANIFEST_PATH}'s reveals, runs and certificates are in the parts "
    f"{MANIFEST_PARTS_DIR}/<list>/<k>.json it names: a failure at a row names {MANIFEST_PATH} and the row's id"
)


_SHA256_CHARS = frozenset("0123456789abcdef")


def manifest_part_path(name: str, k: int) -> str:
    """Where part `k` (from 0) of the manifest's list `name` is: its rows 256k to 256k + 255."""
    return f"{MANIFEST_PARTS_DIR}/{name}/{k}.json"


def manifest_part_count(rows: int) -> int:
    return -(-rows // MANIFEST_PART_ROWS)


def manifest_part_bytes(origin: str, name: str, k: int, rows: list[Any]) -> bytes:
    """Part `k` of list `name`, JCS `{"list":L,"origin":O,"part":k,"rows":[…],"type":"manifest-part","v":1}`."""
    return canonical_bytes({"list": name, "origin": origin, "part": k, "rows": rows, "type": PART_TYPE, "v": 1})


def cut_manifest(manifest: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
    """A v4 manifest from one whose lists are whole: the index (each parted list replaced by
    `{"count":C,"parts":[{"count":K,"path":P,"sha256":H}]}`) and every part's path and bytes."""
    index = {**manifest, "v": MANIFEST_V4}
    files: list[tuple[str, bytes]] = []
    for name in PARTED_LISTS:
        rows = manifest[name]
        parts = []
        for k in range(manifest_part_count(len(rows))):
            chunk = rows[k * MANIFEST_PART_ROWS : (k + 1) * MANIFEST_PART_ROWS]
            path, data = manifest_part_path(name, k), manifest_part_bytes(manifest["origin"], name, k, chunk)
            files.append((path, data))
            parts.append({"count": len(chunk), "path": path, "sha256": sha256_hex(data)})
        index[name] = {"count": len(rows), "parts": parts}
    return index, files


def read_manifest_parts(s: Site, manifest: dict[str, Any]) -> dict[str, Any] | None:
    """A v4 manifest with its parted lists read back whole from their parts, each part held to the
    SHA-256 and row count its index gives and to the one form the format allows; None when any
    index or part is not what the format says (every problem reported, named by its file): the
    checks that read the lists would otherwise judge rows no honest build wrote."""
    whole = dict(manifest)
    ok = True
    for name in PARTED_LISTS:
        rows = _read_list(s, manifest["origin"], name, manifest.get(name))
        ok = ok and rows is not None
        whole[name] = rows
    return whole if ok else None


def _read_list(s: Site, origin: str, name: str, index: Any) -> list[Any] | None:
    report = s.report
    problems = check_keys(index, ("count", "parts"), where=name)
    if problems:
        report.add(problems, MANIFEST_PATH)
        return None
    count, parts = index["count"], index["parts"]
    if not (is_int(count) and count >= 0):
        report.check(
            False, MANIFEST_PATH, "malformed row count", "a non-negative integer", show(count), f"{name}.count"
        )
        return None
    want = manifest_part_count(count)
    if not isinstance(parts, list) or len(parts) != want:
        report.check(
            False,
            MANIFEST_PATH,
            f"the list {name} must name a part for each {MANIFEST_PART_ROWS} rows of its count (the last fewer)",
            f"{want} parts for {count} rows",
            f"{len(parts)} parts" if isinstance(parts, list) else show(parts),
            where=f"{name}.parts",
        )
        return None
    rows: list[Any] = []
    ok = True
    for k, part in enumerate(parts):
        expected = min(MANIFEST_PART_ROWS, count - k * MANIFEST_PART_ROWS)
        found = _read_part(s, origin, name, k, part, expected)
        ok = ok and found is not None
        rows.extend(found or ())
    return rows if ok else None


def _read_part(s: Site, origin: str, name: str, k: int, part: Any, count: int) -> list[Any] | None:
    report, where, path = s.report, f"{name}.parts[{k}]", manifest_part_path(name, k)
    problems = check_keys(part, ("count", "path", "sha256"), where=where)
    if not problems:
        if part["path"] != path:
            problems.append(
                Problem("a part out of place", where=f"{where}.path", expected=path, found=show(part["path"]))
            )
        if not (is_int(part["count"]) and part["count"] == count):
            problems.append(
                Problem("wrong row count", where=f"{where}.count", expected=str(count), found=show(part["count"]))
            )
        sha = part["sha256"]
        if not (isinstance(sha, str) and len(sha) == 64 and set(sha) <= _SHA256_CHARS):
            problems.append(
                Problem(
                    "malformed SHA-256", where=f"{where}.sha256", expected="64 lowercase hex digits", found=show(sha)
                )
            )
    if not report.add(problems, MANIFEST_PATH):
        return None
    # Held to its SHA-256 before it is parsed: what is parsed is the part the index names.
    data = s.read(path, f"part {k} of the manifest's {name}")
    if data is None or not report.check(
        sha256_hex(data) == part["sha256"],
        path,
        f"the part's bytes do not have the SHA-256 {MANIFEST_PATH} gives it",
        part["sha256"],
        sha256_hex(data),
    ):
        return None
    try:
        doc = parse_canonical(data)
    except FormatError as e:
        report.check(False, path, f"part {k} of the manifest's {name}: {e}")
        return None
    problems = check_keys(doc, ("list", "origin", "part", "rows", "type", "v"))
    if not problems:
        header = {"list": name, "origin": origin, "part": k, "type": PART_TYPE, "v": 1}
        for key, value in header.items():
            if doc[key] != value or type(doc[key]) is not type(value):
                problems.append(Problem("not this part's", where=key, expected=show(value), found=show(doc[key])))
        if not (isinstance(doc["rows"], list) and len(doc["rows"]) == count):
            found = f"{len(doc['rows'])} rows" if isinstance(doc["rows"], list) else show(doc["rows"])
            problems.append(Problem("wrong rows", where="rows", expected=f"a list of {count} rows", found=found))
    return doc["rows"] if report.add(problems, path) else None


# ==============================================================================================
# generator/verifier/site/release.py: A release as a whole (format v1 §2, §7, §8): the manifest, the keys, SHA256SUMS
#     over every file, and the verifier copy the site ships.
# ==============================================================================================

SUMS_LINE_RE = re.compile(r"^([0-9a-f]{64})  (.+)$")


MANIFEST_KEYS = (
    "type",
    "v",
    "origin",
    "name",
    "generated_at",
    "keys",
    "verifier",
    "gates",
    "methodology",
    "ledger",
    "reveals",
    "runs",
    "certificates",
)


MANIFEST_LISTS = ("gates", "methodology", "reveals", "runs", "certificates")


def check_manifest_shape(m: Any, report: Report) -> bool:
    """transparency.json's members and their types (format v1 §7): what every later check reads."""
    problems = check_keys(m, MANIFEST_KEYS)
    if isinstance(m, dict):
        if m.get("type") != "transparency-manifest" or not (is_v1(m) or site_format(m) >= 3):
            problems.append(
                Problem(
                    "wrong type or version",
                    expected='"transparency-manifest", v 1 (format v1 or v2), 3 (format v3) or 4 (format v4)',
                    found=f"{show(m.get('type'))}, v {show(m.get('v'))}",
                )
            )
        if not is_origin(m.get("origin")):
            invisible = invisible_characters(m["origin"]) if isinstance(m.get("origin"), str) else ""
            problems.append(
                Problem(
                    "malformed origin",
                    where="origin",
                    expected="a URL without scheme, spaces, '+' or characters that draw nothing",
                    found=show(m.get("origin")) + (f" (with {invisible})" if invisible else ""),
                )
            )
        if not is_time(m.get("generated_at")):
            problems.append(Problem("malformed time", where="generated_at", found=show(m.get("generated_at"))))
        # A v4 manifest's growing lists are indexes of parts, read by manifest_parts.py.
        parted = PARTED_LISTS if site_format(m) >= MANIFEST_V4 else ()
        for k in MANIFEST_LISTS:
            if k in m and k not in parted and not isinstance(m[k], list):
                problems.append(Problem("must be a list", where=k, found=type_name(m[k])))
        # A v3 site's ledger is its tiles: no entries document (docs/formats/v3.md, 3).
        ledger_keys = ("checkpoint", "tree_size", "commitment_list")
        problems += check_keys(
            m.get("ledger"), ledger_keys if site_format(m) >= 3 else ("entries", *ledger_keys), where="ledger"
        )
        for k in ("keys", "verifier"):
            if k in m and not is_safe_path(m[k]):
                problems.append(Problem("unsafe or malformed path", where=k, found=show(m[k])))
        if "name" in m and not (isinstance(m["name"], str) and m["name"].strip()):
            problems.append(
                Problem("the program's name must be a non-empty string", where="name", found=show(m["name"]))
            )
        led = m.get("ledger")
        if isinstance(led, dict):
            for k in ("entries", "checkpoint", "commitment_list"):
                if k in led and not is_safe_path(led[k]):
                    problems.append(Problem("unsafe or malformed path", where=f"ledger.{k}", found=show(led[k])))
    return report.add(problems, MANIFEST_PATH)


def check_keys_document(
    s: Site,
    manifest: dict[str, Any],
    origin: str,
    pin: str | None,
    earlier: list[VerifierKey] | None = None,
    named: list[KeyRow] | None = None,
) -> bytes | None:
    """keys.json and its PEM files (format v1 §2); the active key, if it is the one pinned. A pin
    of an earlier key of keys.json is appended to `earlier` (the caller follows it through the
    ledger's rotations) instead of failing here; every row of keys.json, to `named`."""
    report = s.report
    rel = manifest["keys"]
    loaded = s.document(rel, "keys")
    if loaded is None:
        return None
    doc = loaded[1]
    problems = check_keys(doc, ("type", "v", "origin", "keys"), (ML_DSA_KEYS_MEMBER,))
    if problems or doc.get("type") != "keys" or not is_v1(doc):
        report.add(problems or [Problem("not a v1 keys document")], rel)
        return None
    report.check(doc["origin"] == origin, rel, "origin differs from the manifest's", origin, show(doc["origin"]))
    rows, problems = key_rows(doc["keys"], origin, published=True)
    report.add(problems, rel)
    if ML_DSA_KEYS_MEMBER in doc:
        report.add(ml_dsa_key_row_problems(doc[ML_DSA_KEYS_MEMBER], origin), rel)
    if named is not None:
        named.extend(rows)
    for row in rows:
        if row.pem is None:
            continue  # an unsafe path, reported
        pem = s.read(row.pem, f"PEM of {row.key.vkey}")
        if pem is not None:
            try:
                pem_key = public_key_from_pem(pem)
                report.check(
                    pem_key == row.key.public_key,
                    row.pem,
                    "PEM holds a different key than keys.json",
                    row.key.fingerprint,
                    fingerprint(pem_key),
                )
            except ValueError as e:
                report.check(False, row.pem, str(e))
    active = [r.key for r in rows if r.status == "active"]
    if len(active) != 1:
        return None
    vk = active[0]
    report.key = {"vkey": vk.vkey, "fingerprint": vk.fingerprint}
    if vk.fingerprint in PUBLISHED_PRIVATE_KEYS:
        report.demo_key = True
        report.warnings.append(DEMO_KEY_WARNING)
    if pin is None:
        report.key["source"] = (
            "trusting the key shipped inside the site (keys.json); compare its fingerprint out of band, or pin it "
            "with --key"
        )
        return vk.public_key
    pinned = pin.strip()

    def is_pinned(k: VerifierKey) -> bool:
        if pinned.startswith("SHA256:"):
            return pinned == k.fingerprint
        pk = parse_vkey(pinned)
        return pk.public_key == k.public_key and pk.name == k.name

    match = is_pinned(vk)
    older = next((r.key for r in rows if r.key != vk and is_pinned(r.key)), None)
    if not match and older is not None and earlier is not None:
        earlier.append(older)
        report.key["source"] = "pinned with --key to an earlier key: trusted only through the ledger's hand-overs"
        return vk.public_key
    report.key["source"] = "pinned with --key" + ("" if match else " (does NOT match the site's key)")
    if not report.check(
        match, rel, "the site's active key is not the key given with --key", pinned, f"{vk.vkey} ({vk.fingerprint})"
    ):
        return None
    return vk.public_key


@dataclass(frozen=True)
class Listing:
    """SHA256SUMS as read (a v3 site's tree of lists: every row of every list), for the checks
    of what restates it (the site's archive, a v3 site's download parts)."""

    files: dict[str, str]  # path to SHA-256, as listed
    signed: bool  # its signature verified with the site key
    matched: frozenset[str]  # the listed files whose bytes have the listed SHA-256
    # A v3 site's leaves (docs/formats/v3.md, 5): prefix -> its files, in its list's order.
    leaves: dict[str, list[str]] | None = None
    # The leaves whose list names a path another list named first (that path left out of the
    # leaf's files in `leaves`).
    doubled: frozenset[str] = frozenset()


def parse_sums(report: Report, rel: str, data: bytes) -> list[tuple[int, str, str]] | None:
    """A checksum list's lines (format v1 §7) as (line number, SHA-256, path), each well formed
    and in path-byte order, the last ending with a newline; None if it is not UTF-8. A line
    that is not well formed is reported (naming `rel` and the line) and left out."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        report.check(False, rel, "not valid UTF-8")
        return None
    plain = plain_sums_rows(text)
    if plain is not None:
        return [(n, sha, path) for n, (sha, path) in enumerate(plain, start=1)]
    rows = []
    previous = b""
    for n, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), start=1):
        m = SUMS_LINE_RE.fullmatch(line)
        if not m or not is_safe_path(m.group(2)):
            report.check(False, rel, "malformed line", "<64 hex>  <path>", show(line), where=f"line {n}")
            continue
        path = m.group(2)
        key_bytes = path.encode()
        if key_bytes <= previous:
            report.check(
                False,
                rel,
                "lines not sorted by path bytes (or a path listed twice)",
                where=f"line {n}",
                found=path,
            )
        previous = key_bytes
        rows.append((n, m.group(1), path))
    if not text.endswith("\n"):
        report.check(False, rel, "last line does not end with a newline")
    return rows


def check_sums(s: Site, key: bytes, verifier: str) -> Listing | None:
    """SHA256SUMS (format v1 §7): signed, well formed, sorted, and exactly the site's files. Returns
    what it lists, or None if it cannot be read. Every file is hashed, every run: a file's
    times and inode on disk are no proof that it is unchanged (some file systems let them be
    set back), and hashing is what the floor of a verification is. The one exception is a file
    `verify.py mirror` wrote and hashed itself, in a folder only this user may write, still
    with the identity it had then (Site.known, memory/mirror_record.py)."""
    data = s.read(SUMS_PATH, "checksum list")
    if data is None:
        return None
    signed = s.signed(SUMS_PATH, data, key, "checksum list")
    rows = parse_sums(s.report, SUMS_PATH, data)
    if rows is None:
        return None
    listed = {path: sha for _, sha, path in rows}
    return Listing(listed, signed, check_files(s, verifier, listed, lambda rel: SUMS_PATH))


def check_files(
    s: Site,
    verifier: str,
    listed: dict[str, str],
    named_in: Callable[[str], str],
    unlisted: Callable[[str], tuple[str, str]] = lambda rel: (
        f"file is not listed in {SUMS_PATH}",
        f"only the files {SUMS_PATH} lists",
    ),
) -> frozenset[str]:
    """Every file of the site against the lists: none that no list names (SHA256SUMS and its
    signature aside; `unlisted(path)` says what such a file is, and what was expected), none listed and missing, each
    with the SHA-256 listed (`named_in(path)` says where, for the messages). Returns the files
    that have it."""
    report = s.report
    actual = set(s.files(verifier))
    s.files_found = set(actual)
    actual -= {SUMS_PATH, SUMS_SIG_PATH}
    for rel in sorted(actual - listed.keys()):
        report.check(False, rel, *unlisted(rel), "an extra file")
    env = s.environment
    for rel in sorted(listed.keys() - actual):
        if env is not None and rel.startswith(env + "/"):
            report.check(
                False,
                rel,
                f"listed in {named_in(rel)}, inside the Python environment running this verifier: the site ships "
                "that environment, so its code ran inside this verifier and no verdict of this run can be trusted",
                "an environment you made yourself, outside the site's files",
                "a file of the site",
            )
            continue
        report.check(
            False, rel, f"listed in {named_in(rel)} but missing", f"a file with SHA-256 {listed[rel]}", "nothing"
        )
    present = actual & listed.keys()
    # A file whose SHA-256 the caller knows costs one lstat, here (none, when the caller looked
    # at each in this run): handing tens of thousands of those to threads costs more in their
    # locks than the lstat itself.
    digests = s.known_sha256s(present)
    digests.update((rel, sha) for rel, sha in s.hashed_now.items() if rel in present and rel not in digests)
    unread = sorted(rel for rel in present if rel not in digests)
    # SHA-256 and reading a file both let go of Python's lock: threads hash on every core, a
    # window of files at a time (a future for each of 300,000 files held hundreds of MiB).
    digests.update(zip(unread, windowed(s.hash_file, unread, min(4, os.cpu_count() or 1)), strict=True))
    # One check a file; only those that differ are reported, in path order, so the report is
    # the same whatever order the files were met or hashed in.
    differ = [rel for rel in present if digests[rel] != listed[rel]]
    report.checks += len(present) - len(differ)
    for rel in sorted(differ):
        s.current = rel
        report.check(False, rel, f"SHA-256 differs from {named_in(rel)}", listed[rel], digests[rel])
    return frozenset(present.difference(differ))


def check_verifier_copy(s: Site, manifest: dict[str, Any]) -> None:
    """Format v1 §8: the site's verify.py is byte for byte this verifier. A copy that differs is a
    failure, whatever it does: readers who run the site's own copy would run other code."""
    rel = manifest["verifier"]
    theirs = s.read(rel, "verifier")
    if theirs is None:
        return
    try:
        mine = s.own_verifier()
    except OSError as e:
        s.report.check(
            False,
            rel,
            "this verifier cannot read its own file to compare",
            "a readable verify.py",
            e.strerror or str(e),
        )
        return
    s.report.check(
        theirs == mine,
        rel,
        "the site's verifier differs from this verifier (format v1 §8: byte for byte the project's verify.py)",
        f"SHA-256 {sha256_hex(mine)} (this verifier)",
        f"SHA-256 {sha256_hex(theirs)}",
    )


# ==============================================================================================
# generator/verifier/site/checksum_lists.py: A v3 or v4 site's checksum lists (docs/formats/v3.md, 5; v4.md, 3):
#     SHA256SUMS signed, every list the tree implies read and checked (its lines, their order, each file in the leaf
#     its key names, once), no other file under sums/, and every file of the site against its line.
# ==============================================================================================

# The download parts' rules are format v3's in both formats (a v4 tree only splits otherwise).
_PARTS_DOC = "docs/formats/v3.md, 6"


@dataclass
class _Tree:
    """The lists as read: every row of every list, where each was read, the leaves and parts."""

    rule: TreeRule
    listed: dict[str, str] = field(default_factory=dict)  # every path any list names -> its SHA-256
    where: dict[str, str] = field(default_factory=dict)  # path -> "<list> line <n>", for lists read
    leaves: dict[str, list[str]] = field(default_factory=dict)
    inner: dict[str, list[str]] = field(default_factory=dict)
    parts: set[str] = field(default_factory=set)  # prefixes whose part a list names
    memory: ListMemory | None = None  # the lists of the release verified last
    record: ListRecord | None = None  # the lists of this run, for the next (when it is remembered)
    sizes: dict[str, int] = field(default_factory=dict)  # node -> files below it (_shape)
    # The lists taken from the memory: each must be found in the site as remembered. An inner
    # list's bytes are kept to say on which line it names a file that fails.
    taken: set[str] = field(default_factory=set)
    kept_inner: dict[str, memoryview] = field(default_factory=dict)
    doubled: set[str] = field(default_factory=set)  # leaves naming a path another list named first


def check_sums_tree(
    s: Site, key: bytes, verifier: str, rule: TreeRule, memory: ListMemory | None = None, remember: bool = False
) -> tuple[Listing, ListRecord | None] | None:
    """A v3 or v4 site's SHA256SUMS and its tree of lists (split by `rule`, its format's), a list
    `memory` remembers taken from there; what they list and, if `remember`, the lists as met
    (for the memory, if the run passes); None if SHA256SUMS cannot be read."""
    data = s.read(SUMS_PATH, "checksum list")
    if data is None:
        return None
    signed = s.signed(SUMS_PATH, data, key, "checksum list")
    report = s.report
    mark = (len(report.failures), report.checks, len(report.notes))
    t = _walk(s, data, rule, memory, remember)
    if t.taken and not _as_remembered(s, t):
        # A list taken from the memory is not in the site as remembered (its parent names bytes
        # it does not have): the tree is read again from the site, and fails as from nothing.
        del report.failures[mark[0] :], report.notes[mark[2] :]
        report.checks = mark[1]
        if t.record is not None:
            t.record.close()
        t = _walk(s, data, rule, None, remember)
    matched = check_files(s, verifier, t.listed, lambda rel: _named_in(t, rel), _unlisted(rule.doc))
    return Listing(t.listed, signed, matched, t.leaves, frozenset(t.doubled)), t.record


def _as_remembered(s: Site, t: _Tree) -> bool:
    """Whether every list taken from the memory is in the site with the SHA-256 its parent names:
    known (a file the mirror or the build hashed), or hashed now, once (check_files takes it)."""
    for rel in sorted(t.taken):
        sha = s.known_sha256(rel)
        if sha is None:
            try:
                sha = s.hashed_now[rel] = s.hash_file(rel)
            except OSError:
                return False
        if sha != t.listed.get(rel):
            return False
    return True


def _walk(s: Site, data: bytes, rule: TreeRule, memory: ListMemory | None, remember: bool) -> _Tree:
    """Every list from SHA256SUMS (`data`) down, read or taken from `memory`, and the tree's shape."""
    t = _Tree(rule, memory=memory, record=ListRecord() if remember else None)
    # A list to read, or a subtree to take from the memory, met in the same order either way:
    # what this run remembers does not depend on what the last one remembered.
    todo: list[tuple[str, bytes | range]] = [("", data)]
    while todo:
        prefix, body = todo.pop()
        if isinstance(body, range):
            _take(s, t, body)
            continue
        rows = parse_sums(s.report, list_path(prefix), body)
        if rows is None:
            continue
        inner = not prefix or any(path.startswith(f"{LISTS_DIR}/") for _, _, path in rows)
        if t.record is not None:
            t.record.read(prefix, inner, body)
        if inner:
            _inner(s, t, prefix, rows, todo)
        else:
            _leaf(s, t, prefix, rows)
    _shape(s, t)
    return t


def _named_in(t: _Tree, rel: str) -> str:
    """Which list names `rel`, and on which line, for a failure: where it was read, or for a row
    taken from the memory, its leaf's list (a file) or its parent's (a list or a part)."""
    where = t.where.get(rel)
    if where is not None:
        return where
    m = LIST_RE.fullmatch(rel) or PART_RE.fullmatch(rel)
    if m is not None:
        parent = m.group(1)[:-1]
        lines = str(t.kept_inner.get(parent, memoryview(b"")), "utf-8").split("\n")
        n = next((n for n, line in enumerate(lines, start=1) if line.endswith(f"  {rel}")), None)
        return f"{list_path(parent)} line {n}" if n is not None else list_path(parent)
    key = path_key(rel)
    for n in range(len(key) * 4 + 1):
        files = t.leaves.get(p := t.rule.prefix_of(key, n))
        if files is not None and rel in files:
            return f"{list_path(p)} line {files.index(rel) + 1}"
    return SUMS_PATH


def _take(s: Site, t: _Tree, span: range) -> None:
    """A subtree of lists as the memory holds it: their rows, each leaf's files and each inner
    node's children and parts, and the checks their reading counted, without reading them. A
    leaf naming a path a list read in this run names too is checked as read (the duplicate is
    then reported as from nothing)."""
    assert t.memory is not None
    if t.record is not None:
        t.record.taken(t.memory, span)
    listed = t.listed
    for kept in t.memory.lists(span):
        t.taken.add(list_path(kept.prefix))
        rows = kept.rows()
        if not kept.inner:
            paths = [path for _, path in rows]
            if listed.keys().isdisjoint(paths):
                listed.update(zip(paths, (sha for sha, _ in rows), strict=True))
                t.leaves[kept.prefix] = paths
                s.report.checks += len(rows) + 1  # a check a file, and the leaf's bound (_leaf)
            else:
                _leaf(s, t, kept.prefix, parse_sums(s.report, list_path(kept.prefix), bytes(kept.body)) or [])
            continue
        t.kept_inner[kept.prefix] = kept.body
        children = []
        for sha, path in rows:
            listed[path] = sha
            if m := LIST_RE.fullmatch(path):
                children.append(m.group(1))
            elif m := PART_RE.fullmatch(path):
                t.parts.add(m.group(1))
        t.inner[kept.prefix] = children


def _unlisted(doc: str) -> Callable[[str], tuple[str, str]]:
    def why(rel: str) -> tuple[str, str]:
        if rel.startswith(f"{LISTS_DIR}/"):
            return f"a list the tree does not imply ({doc})", f"only the lists {SUMS_PATH} leads to"
        if rel.startswith(f"{PARTS_DIR}/"):
            return (
                f"a download part the tree does not imply ({doc}; {_PARTS_DOC})",
                "only the parts of the tree's leaves",
            )
        return "file is not listed in any checksum list", f"every file in the leaf list its key names ({doc})"

    return why


def _add(s: Site, t: _Tree, rel: str, n: int, sha: str, path: str) -> bool:
    """Record a row of list `rel`; False (and a failure) if another list named the path already."""
    if path in t.listed:
        s.report.check(
            False, rel, f"a path listed twice (also in {_named_in(t, path)})", "each path once", path, f"line {n}"
        )
        return False
    t.listed[path], t.where[path] = sha, f"{rel} line {n}"
    return True


def _inner(
    s: Site, t: _Tree, prefix: str, rows: list[tuple[int, str, str]], todo: list[tuple[str, bytes | range]]
) -> None:
    """An inner node's list: a line for each child's list and each leaf child's part, nothing else."""
    rel, rule = list_path(prefix), t.rule
    children = []
    for n, sha, path in rows:
        m = LIST_RE.fullmatch(path) or PART_RE.fullmatch(path)
        if (
            m is None
            or len(m.group(1)) != len(prefix) + 1
            or not m.group(1).startswith(prefix)
            or m.group(1)[-1] not in rule.digits
        ):
            word = rule.digit_word
            s.report.check(
                False,
                rel,
                f"a line that names neither the list nor the part of a child of this node ({rule.doc})",
                f"{LISTS_DIR}/{prefix}<{word}>.sha256 or {PARTS_DIR}/{prefix}<{word}>.zip",
                path,
                f"line {n}",
            )
            continue
        if not _add(s, t, rel, n, sha, path):
            continue
        child = m.group(1)
        if path.startswith(f"{PARTS_DIR}/"):
            t.parts.add(child)
            continue
        children.append(child)
        span = t.memory.subtree(child, sha) if t.memory is not None else None
        size = s.file_size(path)  # a missing list is reported with every missing file
        if span is not None and t.memory is not None and size == t.memory.length(span.start):
            todo.append((child, span))  # the list that passed in the release verified last, and its subtree
        elif size is not None:
            body = s.read(path, "checksum list")
            if body is not None:
                todo.append((child, body))
    if not children:
        s.report.check(
            False, rel, f"an inner list without a child's list ({rule.doc})", "a line for each child", "none"
        )
    t.inner[prefix] = children


def _leaf(s: Site, t: _Tree, prefix: str, rows: list[tuple[int, str, str]]) -> None:
    """A leaf's list: files whose keys start with its prefix, at least one, at most the rule's bound."""
    rel, rule = list_path(prefix), t.rule
    files = []
    for n, sha, path in rows:
        if is_tree_file(path):
            s.report.check(
                False,
                rel,
                f"a leaf's list names a list or a part, which the inner lists place ({rule.doc})",
                "a file",
                path,
            )
            continue
        key = path_key(path)
        if rule.prefix_of(key, len(prefix)) == prefix:
            s.report.checks += 1  # the message is made only for a failure: this runs once a file
        else:
            s.report.check(
                False,
                rel,
                f"a file in the wrong leaf: its key {key} (SHA-256 of its path) begins "
                f"{rule.prefix_of(key, len(prefix))} in {rule.digit_word}s: the list of that prefix ({rule.doc})",
                f"a key starting with {prefix}",
                path,
                f"line {n}",
            )
        if _add(s, t, rel, n, sha, path):
            files.append(path)
        else:
            t.doubled.add(prefix)
    s.report.check(
        0 < len(files) <= rule.leaf_files,
        rel,
        f"a leaf holds from 1 to {rule.leaf_files} files ({rule.doc})",
        f"1 to {rule.leaf_files} files",
        f"{len(files)} files",
    )
    t.leaves[prefix] = files


def _shape(s: Site, t: _Tree) -> None:
    """Every inner node but the root holds more than the rule's bound of files (else it is a
    leaf), and every leaf has a download part or none does."""
    bound, doc = t.rule.leaf_files, t.rule.doc

    def count(p: str) -> int:
        # Each node's count once: counted afresh from every inner node, a tree of a million
        # items' files would be walked once for each level of it.
        n = t.sizes.get(p)
        if n is None:
            n = len(t.leaves[p]) if p in t.leaves else sum(count(c) for c in t.inner.get(p, ()))
            t.sizes[p] = n
        return n

    for p in sorted(t.inner):
        if p and (n := count(p)) <= bound:
            s.report.check(
                False,
                list_path(p),
                f"an inner list over {n} files: a node of at most {bound} is a leaf ({doc})",
                "a leaf's list",
                "an inner list",
            )
    for p in sorted(t.parts - set(t.leaves)):
        s.report.check(
            False,
            list_path(p[:-1]),
            f"a download part of a node that is not a leaf ({doc}; {_PARTS_DOC})",
            None,
            part_path(p),
        )
    if t.parts:
        for p in sorted(set(t.leaves) - t.parts):
            s.report.check(
                False,
                list_path(p[:-1]),
                f"no line for {part_path(p)}: every leaf has a download part, or none does ({doc}; {_PARTS_DOC})",
                part_path(p),
                "no line",
            )


# ==============================================================================================
# generator/verifier/site/zip_layout.py: A ZIP archive's layout held to the one the build writes (FORMAT.md, "The
#     downloadable copy"): the end records last and as zipfile writes them, the central directory right before them,
#     and the local entries back to back from offset 0, each agreeing with its central entry. Unpackers differ in what
#     they read: one that walks the local headers in order would unpack an entry the central directory hides, so no
#     byte may lie outside the members the central directory lists. Used for v2's `download/site.zip` and v3's
#     download parts alike (generator/verifier/site/download.py).
# ==============================================================================================

# The records of APPNOTE 4.3, as zipfile writes them; the signature first.
_END = struct.Struct("<4s4H2LH")  # disks, entries on this disk and in all, size, offset, comment


_END64 = struct.Struct("<4sQ2H2L4Q")  # its size, versions, disks, entries (twice), size, offset


_LOCATOR64 = struct.Struct("<4sLQL")  # the disk and offset of the zip64 end record, disks


_LOCAL = struct.Struct("<4s5H3L2H")  # version, flags, method, time, date, CRC, sizes, name and extra


_ZIP64_EXTRA = 0x0001


_DESCRIPTOR_FLAG = 0x8


# The largest central entry of a site file: zipfile adds at most a zip64 field of three values.
_CENTRAL_EXTRA_MAX = 4 + 3 * 8


@dataclass(frozen=True)
class Directory:
    """Where the end records place the central directory, checked against the file's size."""

    count: int
    offset: int
    size: int


def check_end(s: Site, rel: str, f: BinaryIO, expected: set[str], members_are: str, too_many: str) -> Directory | None:
    """The end records, as the build writes them: the end-of-central-directory record is the
    archive's last 22 bytes (no comment, nothing after it), for one disk; preceded by the zip64
    end record and its locator exactly when zipfile needs them (too many entries, or a central
    directory too large or too far); the central directory ending where they begin, and no
    larger than the site's files can make it. None, and a failure, if not."""

    def fail(message: str, expected: object, found: object) -> None:
        s.report.check(False, rel, message, expected, found)

    size = f.seek(0, 2)
    f.seek(max(0, size - _END.size - 0xFFFF))
    tail = f.read(_END.size + 0xFFFF)  # an end record and the longest comment it could have
    last = tail[-_END.size :]
    if len(last) < _END.size or last[:4] != b"PK\x05\x06" or last[-2:] != b"\0\0":
        at = tail.rfind(b"PK\x05\x06", 0, len(tail) - _END.size + 1)  # for the message only
        if at < 0:
            fail("not a readable ZIP archive", "a ZIP archive", "no end-of-central-directory record")
            return None
        after = len(tail) - at - _END.size
        what = f"{after} bytes after the end record"
        if int.from_bytes(tail[at + 20 : at + 22], "little") == after:
            what = f"a ZIP comment of {after} bytes"
        fail("the archive does not end with its end-of-central-directory record", "nothing after it", what)
        return None
    _, disk, cd_disk, on_disk, count, cd_size, cd_offset, _ = _END.unpack(last)
    end_at = size - _END.size
    if (disk, cd_disk, on_disk) != (0, 0, count):
        fail("an archive split over disks", "one disk", f"disks {disk} and {cd_disk}, {on_disk} of {count} entries")
        return None
    cd_end = end_at
    f.seek(max(0, end_at - _LOCATOR64.size))
    locator = f.read(_LOCATOR64.size) if end_at >= _LOCATOR64.size + _END64.size else b""
    zip64 = locator[:4] == b"PK\x06\x07"
    if zip64:
        _, disk64, end64_at, disks = _LOCATOR64.unpack(locator)
        cd_end = end_at - _LOCATOR64.size - _END64.size
        f.seek(cd_end)
        rec = _END64.unpack(f.read(_END64.size))
        if (disk64, end64_at, disks) != (0, cd_end, 1) or rec[0] != b"PK\x06\x06" or rec[1] != _END64.size - 12:
            fail("a zip64 end record not as zipfile writes it", f"a zip64 end record at {cd_end}", "another")
            return None
        if (rec[4], rec[5], rec[6]) != (0, 0, rec[7]):
            fail("an archive split over disks", "one disk", f"disks {rec[4]} and {rec[5]}")
            return None
        small = (min(rec[7], 0xFFFF), min(rec[8], 0xFFFFFFFF), min(rec[9], 0xFFFFFFFF))
        if (count, cd_size, cd_offset) != small:
            fail("the end record disagrees with the zip64 end record", small, (count, cd_size, cd_offset))
            return None
        count, cd_size, cd_offset = rec[7], rec[8], rec[9]
    needed = count > zipfile.ZIP_FILECOUNT_LIMIT or max(cd_size, cd_offset) > zipfile.ZIP64_LIMIT
    if zip64 != needed:
        fail("zip64 end records where the build writes none, or none where it does", needed, zip64)
        return None
    if count > len(expected):
        # More members than files cannot be right; naming each of a million would be no help.
        fail(
            too_many,
            f"{len(expected)} members: {members_are}",
            f"{count} members",
        )
        return None
    if cd_offset + cd_size != cd_end:
        fail(
            "the central directory is not where the end record places it (bytes added before it or inside it)",
            f"{cd_size} bytes ending at offset {cd_end}",
            f"{cd_size} bytes from offset {cd_offset}, ending at {cd_offset + cd_size}",
        )
        return None
    largest = sum(46 + len(p.encode()) + _CENTRAL_EXTRA_MAX for p in expected)
    if cd_size > largest:
        fail("a central directory larger than the site's files make it", f"at most {largest} bytes", cd_size)
        return None
    return Directory(count, cd_offset, cd_size)


def check_layout(
    s: Site, rel: str, f: BinaryIO, infos: list[zipfile.ZipInfo], where: Directory
) -> dict[int, tuple[int, int]] | None:
    """The members as the build lays them out: local entries back to back from offset 0 in the
    order of the central directory, each header agreeing with its central entry, no data
    descriptor, no extra field but zip64's, and the central directory right after the last.
    Only headers are read; a data size is trusted only to find the next header, which must lie
    before the central directory. The first discrepancy is reported, where the walk stops.
    Returns where each member's data lies (offset, size) by the offset of its header, which
    the walk saw to be each member's own, if the layout is the build's."""
    pos = 0
    data_at: dict[int, tuple[int, int]] = {}
    for info in infos:
        name = info.orig_filename
        at = f"member {name}" if is_safe_path(name) else f"member {show(name)}"
        problem = _local_problem(f, info, pos)
        if isinstance(problem, str):
            s.report.check(False, rel, problem, "the archive as the build writes it", where=at)
            return None
        data_at[info.header_offset] = (problem - info.compress_size, info.compress_size)
        pos = problem
        if pos > where.offset:
            s.report.check(False, rel, "member data running into the central directory", where.offset, pos, where=at)
            return None
    if not s.report.check(
        pos == where.offset,
        rel,
        "bytes between the last member and the central directory, which lists none there (a hidden entry?)",
        f"the central directory at offset {pos}",
        f"{where.offset - pos} bytes more",
    ):
        return None
    return data_at


def _local_problem(f: BinaryIO, info: zipfile.ZipInfo, pos: int) -> str | int:
    """What is wrong with the local entry of `info`, expected at `pos`; or where the next begins."""
    if info.header_offset != pos:
        if info.header_offset > pos:
            return f"{info.header_offset - pos} bytes at offset {pos} that no central entry lists (a hidden entry?)"
        return f"a local header at offset {info.header_offset}, inside the entry before it; expected at {pos}"
    if info.comment or info.volume or not _only_zip64(info.extra):
        return "a central entry with a comment, another disk or an extra field the build does not write"
    f.seek(pos)
    head = f.read(_LOCAL.size)
    if len(head) < _LOCAL.size or head[:4] != b"PK\x03\x04":
        return f"no local header at offset {pos}, where the central directory places it"
    _, _, flags, method, time, date, crc, csize, usize, name_len, extra_len = _LOCAL.unpack(head)
    name, extra = f.read(name_len), f.read(extra_len)
    when = ((date >> 9) + 1980, (date >> 5) & 0xF, date & 0x1F, time >> 11, (time >> 5) & 0x3F, (time & 0x1F) * 2)
    raw_name = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
    if len(extra) != extra_len or not _only_zip64(extra):
        return "a local header with an extra field the build does not write"
    sizes = _local_sizes(usize, csize, extra)
    ours = (name, flags, method, when, crc, sizes)
    theirs = (
        raw_name,
        info.flag_bits,
        info.compress_type,
        info.date_time,
        info.CRC,
        (info.file_size, info.compress_size),
    )
    for what, a, b in zip(("name", "flags", "method", "time", "CRC-32", "sizes"), ours, theirs, strict=True):
        if a != b:
            return f"the local header's {what} ({a!r}) differs from the central directory's ({b!r})"
    if flags & _DESCRIPTOR_FLAG:
        return "a data descriptor after the member, which the build does not write"
    return int(pos + _LOCAL.size + name_len + extra_len + info.compress_size)


def _only_zip64(extra: bytes) -> bool:
    """Whether an extra field holds nothing but one zip64 record, all zipfile writes there."""
    return not extra or (extra[:2] == _ZIP64_EXTRA.to_bytes(2, "little") and len(extra) == 4 + extra[2])


def _local_sizes(usize: int, csize: int, extra: bytes) -> tuple[int, int]:
    """A local header's sizes, from its zip64 record (both, in that order) where they say 0xFFFFFFFF."""
    if usize == csize == 0xFFFFFFFF and len(extra) == 20:
        usize, csize = struct.unpack_from("<QQ", extra, 4)
    return usize, csize


# ==============================================================================================
# generator/verifier/site/download.py: The site's downloadable copy (format v2): `download/site.zip`, every file of
#     the site outside `download/`, with a checksum list of its own, so that the unpacked copy is a site that verifies
#     alone.
# ==============================================================================================

DOWNLOAD_DIR = "download"


ARCHIVE_PATH = f"{DOWNLOAD_DIR}/site.zip"


# The archive's `sha256sum -c` line, for a reader who downloaded the archive alone.
ARCHIVE_SUMS_PATH = f"{ARCHIVE_PATH}.sha256"


ARCHIVE_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


# A member's external attributes: the Unix mode the build writes in the high 16 bits and no
# MS-DOS bits, or nothing at all (the unpacker's default for a new file). Any other permission
# (setuid, setgid, sticky, executable, writable by others) would be restored by the unpacker.
MEMBER_MODE = stat.S_IFREG | 0o644


MEMBER_ATTRIBUTES = (MEMBER_MODE << 16, 0)


SIGNATURE_BYTES = 64


_CHUNK = 1 << 20


# What zipfile raises on a damaged or hostile archive; anything else is a bug of this verifier.
# (UnicodeDecodeError, a ValueError, is a name flagged UTF-8 that is not.)
_UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError)


def in_download(rel: str) -> bool:
    """Whether a site path lies in the download folder, which the archive does not hold."""
    return rel.startswith(f"{DOWNLOAD_DIR}/")


def archive_sums(listed: dict[str, str]) -> bytes:
    """The checksum list the archive holds: the site's lines (path to SHA-256) outside
    `download/`, in SHA256SUMS form and order."""
    paths = sorted((p for p in listed if not in_download(p)), key=lambda p: p.encode())
    return "".join(f"{listed[p]}  {p}\n" for p in paths).encode()


def archive_sums_line(sha256: str) -> bytes:
    """download/site.zip.sha256: `sha256sum -c` checks the archive with it in its own folder."""
    return f"{sha256}  {ARCHIVE_PATH.rsplit('/', 1)[1]}\n".encode()


def check_download(s: Site, key: bytes, sums: Listing, memory: Memory | None = None) -> None:
    """The archive, if the site has one (it is optional): its checksum line, and its members
    exactly the files SHA256SUMS lists outside `download/`, each with the listed SHA-256, and
    the archive's own checksum list signed by `key`. `sums` is SHA256SUMS as read and compared
    with the files, the archive's bytes included.

    Each discrepancy is reported once, where it is: nothing is compared with a SHA256SUMS whose
    signature failed, nor a member with a site file that differs from its line. With a `memory`
    (generator/verifier/memory/release_memory.py), a member whose compressed bytes were read back before to
    the SHA-256 now listed is not inflated again: its compressed bytes are hashed instead."""
    report = s.report
    listed = sums.files
    if sums.leaves is not None:
        _check_parts(s, sums, memory)
        return
    if ARCHIVE_PATH not in listed:
        if ARCHIVE_SUMS_PATH in listed:
            report.check(False, ARCHIVE_SUMS_PATH, "the archive's checksum is published without the archive")
        return
    line = s.read(ARCHIVE_SUMS_PATH, "checksum line of the archive")
    if line is not None:
        want = archive_sums_line(listed[ARCHIVE_PATH])
        report.check(
            line == want,
            ARCHIVE_SUMS_PATH,
            f"does not give the archive's SHA-256 that {SUMS_PATH} lists",
            show(want.decode()),
            show(line.decode("utf-8", "replace")),
        )
    if not sums.signed:
        report.notes.append(f"{ARCHIVE_PATH} not checked: {SUMS_PATH}, which it restates, does not verify")
        return
    expected = _expected(listed)
    _check_archive(
        s,
        ARCHIVE_PATH,
        expected,
        f"the files {SUMS_PATH} lists outside {DOWNLOAD_DIR}/, with its own {SUMS_PATH} and {SUMS_SIG_PATH}",
        "the archive holds more members than the site has files",
        lambda zf, known: _check_members(s, ARCHIVE_PATH, zf, sums, expected, known, (key, archive_sums(listed))),
        memory,
    )


def _check_parts(s: Site, sums: Listing, memory: Memory | None) -> None:
    """A v3 site's download parts (docs/formats/v3.md, 6): each leaf's part, if the tree lists
    one, holds exactly the leaf's files and its list, as v2's archive holds the site's."""
    if sums.leaves is None:
        return
    known = 0
    for prefix, files in sorted(sums.leaves.items()):
        rel = part_path(prefix)
        if rel not in sums.files:
            continue  # the tree checks that every leaf has its part or none does
        if not sums.signed:
            s.report.notes.append(f"{rel} not checked: {SUMS_PATH}, which lists it, does not verify")
            continue
        # A leaf that lost a path to another list naming it too holds fewer files than its list
        # names: its part is checked again, whatever was remembered of it and its list.
        key = _part_key(sums, rel, list_path(prefix), memory) if prefix not in sums.doubled else None
        if key is not None and memory is not None and memory.check_known("parts", key):
            s.report.checks += 1
            known += 1
            continue
        failures = len(s.report.failures)
        expected = {*files, list_path(prefix)}
        _check_archive(
            s,
            rel,
            expected,
            f"the files of leaf {prefix} and its list {list_path(prefix)}",
            "the part holds more members than its leaf has files, with its list",
            # Called before the loop moves on: `rel` and `expected` are this leaf's.
            lambda zf, known: _check_members(s, rel, zf, sums, expected, known),  # noqa: B023
            memory,
            sums.files[rel],
        )
        if key is not None and memory is not None and len(s.report.failures) == failures:
            memory.check_passed("parts", key)
    if known:
        s.report.notes.append(
            f"{known} download part(s) not read again: each, and its leaf's list, has the SHA-256 of a part and "
            "list checked together before"
        )


def _part_key(sums: Listing, rel: str, list_rel: str, memory: Memory | None) -> str | None:
    """The memory's key of a part and its leaf's list, when both have the SHA-256 listed (hashed
    in this run, or known to be unchanged since they were)."""
    if memory is None or rel not in sums.matched or list_rel not in sums.matched:
        return None
    return memory.part_key(rel, sums.files[rel], list_rel, sums.files[list_rel])


def _check_archive(
    s: Site,
    rel: str,
    expected: set[str],
    members_are: str,
    too_many: str,
    check_members: Callable[[zipfile.ZipFile, "_Known | None"], None],
    memory: Memory | None,
    listed_sha256: str = "",
) -> None:
    """An archive read in place: its end records, its central directory, its layout, then its
    members; with a memory and the SHA-256 its list gives (a v3 part), read whole and held to it."""
    report = s.report
    f: BinaryIO | None
    if memory is not None and listed_sha256:
        # What this run remembers of a v3 part (by its listed SHA-256) must be of the bytes it
        # checked: read once, hashed, and checked from memory (a leaf's files, a few MiB at
        # most). v2's archive, gigabytes, is streamed: its memory is of the bytes read.
        data = s.read(rel, "archive")
        if data is None:
            return
        digest = hashlib.sha256(data).hexdigest()
        if digest != listed_sha256:  # counted where the file was hashed: only a change fails here
            report.check(False, rel, "the archive changed while it was being checked", listed_sha256, digest)
            return
        f = io.BytesIO(data)
    else:
        f = s.open(rel, "archive")
    if f is None:
        return
    with f:
        # Before zipfile reads the central directory: the end records say how large it is.
        where = check_end(s, rel, f, expected, members_are, too_many)
        if where is None:
            return
        try:
            zf = zipfile.ZipFile(f)
        except _UNREADABLE as e:
            report.check(False, rel, "not a readable ZIP archive", "a ZIP archive", f"{type(e).__name__}: {e}")
            return
        with zf:
            infos = zf.infolist()
            if not report.check(
                len(infos) == where.count,
                rel,
                "the end-of-central-directory record counts other entries than the central directory holds",
                f"{len(infos)} entries",
                f"{where.count} entries",
            ):
                return
            data_at = check_layout(s, rel, f, infos, where)
            check_members(zf, _Known(f, data_at, memory) if memory and data_at else None)


def _expected(listed: dict[str, str]) -> set[str]:
    return {p for p in listed if not in_download(p)} | {SUMS_PATH, SUMS_SIG_PATH}


class _Known:
    """What the verifier's memory knows of members: compressed bytes already read back to the
    SHA-256 their file is listed with."""

    def __init__(self, f: BinaryIO, data_at: dict[int, tuple[int, int]], memory: Memory) -> None:
        self.f, self.data_at, self.memory = f, data_at, memory

    def key(self, info: zipfile.ZipInfo, listed: str) -> str | None:
        """The memory's key of the member's compressed bytes read back to `listed`."""
        at = self.data_at.get(info.header_offset)
        if at is None:
            return None
        h = hashlib.sha256()
        self.f.seek(at[0])
        left = at[1]
        while left > 0 and (chunk := self.f.read(min(_CHUNK, left))):
            h.update(chunk)
            left -= len(chunk)
        if left:
            return None
        return self.memory.member_key(info.compress_type, info.CRC, info.file_size, h.hexdigest(), listed)


def _check_members(
    s: Site,
    rel: str,
    zf: zipfile.ZipFile,
    listing: Listing,
    expected: set[str],
    known: _Known | None = None,
    own_sums: tuple[bytes, bytes] | None = None,
) -> None:
    """Each member of archive `rel` against the site's file of its name (`expected`, each listed
    in `listing`). `own_sums` (the key, and the list it must hold): v2's archive, which holds its
    own SHA256SUMS and signature instead of the site's."""
    report = s.report
    listed = listing.files
    sums = own_sums[1] if own_sums is not None else b""
    infos = zf.infolist()  # no more than the site has files: _check_end saw to it
    seen: set[str] = set()
    sums_member: bytes | None = None
    sig_member: bytes | None = None
    for info in infos:
        name = info.orig_filename  # before zipfile cuts it at a NUL or turns separators round
        where = f"member {name}" if is_safe_path(name) else f"member {show(name)}"
        s.current = rel
        if not _member_named_well(report, rel, info, seen, expected, where):
            continue
        own = own_sums is not None and name in (SUMS_PATH, SUMS_SIG_PATH)
        if not own and name not in listing.matched:
            continue  # the site's file is missing or differs from its line: reported there
        size = (len(sums) if name == SUMS_PATH else SIGNATURE_BYTES) if own else s.file_size(name)
        if size is None:
            report.check(False, rel, f"{where}: the site's file is gone since it was hashed", "the file", "nothing")
            continue
        if not _plain(s, rel, info, size, where):
            continue
        if own:
            data = _read_member(s, rel, zf, info, where, keep=True)
            if name == SUMS_PATH:
                sums_member = data
            else:
                sig_member = data
            continue
        remembered = known.key(info, listed[name]) if known is not None else None
        if remembered is not None and known is not None and known.memory.check_known("members", remembered):
            report.checks += 1
            continue
        digest = _read_member(s, rel, zf, info, where)
        if digest is None:
            continue
        same_bytes = report.check(
            digest.decode() == listed[name],
            rel,
            f"member differs from the site's file (SHA-256 from {SUMS_PATH if own_sums else 'its leaf list'})",
            listed[name],
            digest.decode(),
            where=where,
        )
        if same_bytes and remembered is not None and known is not None:
            known.memory.check_passed("members", remembered)
    for name in sorted(expected - seen, key=lambda p: p.encode()):
        report.check(False, rel, "a file of the site is missing from the archive", name, "nothing")
    if sums_member is not None and own_sums is not None:
        _check_archive_sums(report, own_sums[0], sums, sums_member, sig_member)


def _member_named_well(
    report: Report, rel: str, info: zipfile.ZipInfo, seen: set[str], expected: set[str], where: str
) -> bool:
    """Whether a member's name is one to read: its first time in the archive, safe to unpack,
    and a file of the site the archive holds. `seen` gathers the names met."""
    name = info.orig_filename
    if name in seen:
        report.check(False, rel, "the archive holds a member twice", "each file once", where=where)
        return False
    seen.add(name)
    if not is_safe_path(name) or name != info.filename:
        report.check(
            False,
            rel,
            "member with an unsafe name, which unpacking could write outside its folder",
            "a relative path with '/', no '..', no empty segment, backslash or control character",
            show(name),
            where=where,
        )
        return False
    if name not in expected:
        report.check(
            False,
            rel,
            f"member that is not a file of the site (not in {SUMS_PATH}, or in {DOWNLOAD_DIR}/)"
            if rel == ARCHIVE_PATH
            else "member that is not a file of the part's leaf, nor its list (docs/formats/v3.md, 6)",
            "only the site's files" if rel == ARCHIVE_PATH else "only the leaf's files and its list",
            "an extra member",
            where=where,
        )
        return False
    return True


def _check_archive_sums(report: Report, key: bytes, sums: bytes, sums_member: bytes, sig_member: bytes | None) -> None:
    """The archive's own SHA256SUMS (the site's without its download lines) and its signature."""
    report.check(
        sums_member == sums,
        ARCHIVE_PATH,
        f"the archive's {SUMS_PATH} is not the site's without its {DOWNLOAD_DIR}/ lines",
        f"{len(sums)} bytes, SHA-256 {hashlib.sha256(sums).hexdigest()}",
        f"{len(sums_member)} bytes, SHA-256 {hashlib.sha256(sums_member).hexdigest()}",
        where=f"member {SUMS_PATH}",
    )
    if sig_member is not None:
        report.check(
            ed25519_verify(key, sig_member, sums_member),
            ARCHIVE_PATH,
            f"the archive's {SUMS_SIG_PATH} is not a valid signature of its {SUMS_PATH} by the site key",
            f"an Ed25519 signature by {fingerprint(key)}",
            f"{len(sig_member)} bytes that are not",
            where=f"member {SUMS_SIG_PATH}",
        )


def _plain(s: Site, rel: str, info: zipfile.ZipInfo, size: int, where: str) -> bool:
    """A member this verifier reads: a regular file, unencrypted, stored or deflated, declaring
    the size of the file it copies (so reading it can never inflate beyond that)."""
    mode = info.external_attr >> 16
    problem = None
    if info.flag_bits & 0x1:
        problem = ("an encrypted member", "no encryption")
    elif info.compress_type not in ARCHIVE_METHODS:
        problem = (f"compression method {info.compress_type}", "stored (0) or deflated (8)")
    elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):
        problem = (f"file type {stat.S_IFMT(mode):o} (a link or a device when unpacked)", "a regular file")
    elif info.external_attr not in MEMBER_ATTRIBUTES:
        # Unpackers restore these bits: Info-ZIP makes 0106777 a world-writable setuid file.
        problem = (
            f"mode {mode:o}, attributes {info.external_attr & 0xFFFF:#x}",
            f"mode {MEMBER_MODE:o} (a regular file, rw-r--r--, as the build writes it) or no attributes at all",
        )
    elif info.file_size != size:
        problem = (f"{info.file_size} bytes declared", f"{size} bytes, the size of the site's file")
    if problem is not None:
        s.report.check(False, rel, "member the site's file cannot be", problem[1], problem[0], where=where)
    return problem is None


def _read_member(
    s: Site, rel: str, zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, keep: bool = False
) -> bytes | None:
    """A member's SHA-256 (hex, as bytes) or, with `keep`, its bytes; read in chunks, never more
    than it declares (zipfile stops there and checks the CRC-32). None, and a failure, if it
    cannot be read."""
    h = hashlib.sha256()
    kept: list[bytes] = []
    try:
        with zf.open(info) as m:
            while chunk := m.read(_CHUNK):
                h.update(chunk)
                if keep:
                    kept.append(chunk)
    except _UNREADABLE as e:
        s.report.check(False, rel, "member cannot be read", "a readable member", f"{type(e).__name__}: {e}", where)
        return None
    return b"".join(kept) if keep else h.hexdigest().encode()


# ==============================================================================================
# generator/verifier/site/history.py: History (FORMAT.md v2, format v1 §9): archived checkpoints, consistency proofs,
#     each artifact's inclusion proof, and the checkpoints an auditor saved.
# ==============================================================================================

HISTORY_PATH = "ledger/history.json"


# The C2SP tlog-tiles of the log sit beside its checkpoint, under the same prefix: a tile's
# path (tile/…) is read under TILE_PREFIX.
TILE_PREFIX = "ledger"


TILE_FOLDER = f"{TILE_PREFIX}/tile"


@dataclass(frozen=True)
class SavedCheckpoint:
    """A checkpoint from outside the site: an auditor's file, or the state of an earlier run."""

    label: str
    origin: str
    size: int
    root: bytes
    data: bytes = b""


def open_checkpoint(data: bytes, origin: str, key: bytes) -> tuple[str, int, bytes]:
    """The (origin, size, root) of a checkpoint note signed by `key` under `origin`."""
    note = open_note(data, [VerifierKey(origin, key_id(origin, key), key)])
    return parse_checkpoint(note.text)


def saved_checkpoint(label: str, data: bytes, origin: str) -> SavedCheckpoint:
    """An auditor's saved checkpoint, read but not yet verified: its signature is checked once
    the ledger's keys are known (verify_saved)."""
    text = data.decode("utf-8", "replace")
    cp_origin, size, root = parse_checkpoint(text[: text.find("\n\n") + 1])
    if cp_origin != origin:
        raise FormatError(f"its origin {cp_origin!r} is not the site's {origin!r}")
    return SavedCheckpoint(label, cp_origin, size, root, data)


def verify_saved(s: Site, cp: SavedCheckpoint, ring: KeyRing) -> bool:
    """A saved checkpoint must be signed by a key of this site valid for its size: a site
    re-keyed behind the auditor's back fails here."""
    try:
        _, signers = checkpoint_signers(cp.data, ring)
        problems = [p for p in signer_problems(ring, cp.size, signers) if not p.startswith("not signed by")]
        if not signers:
            problems.append("no key of the site signed it")
    except (NoteError, FormatError) as e:
        problems = [str(e)]
    return s.report.check(
        not problems,
        cp.label,
        f"this saved checkpoint is not one of the site's: {'; '.join(problems)}",
        f"a checkpoint of {cp.origin} signed by a key of the site valid for {cp.size} entries",
        "a checkpoint that is not: the site was re-keyed, or the file is not a checkpoint of this log",
    )


def signed_tree(checkpoint: bytes, origin: str, key: bytes) -> tuple[int, bytes] | None:
    """The (size, root) a checkpoint signs, or None if it does not verify (reported elsewhere)."""
    try:
        cp_origin, size, root = open_checkpoint(checkpoint, origin, key)
    except (NoteError, FormatError):
        return None
    return (size, root) if cp_origin == origin else None


def b64(h: bytes) -> str:
    return base64.b64encode(h).decode()


def check_extends(s: Site, saved: Iterable[SavedCheckpoint], size: int, roots_at: dict[int, bytes]) -> None:
    """Today's ledger must begin with the tree each saved checkpoint names."""
    for cp in saved:
        if cp.size > size:
            s.report.check(
                False,
                cp.label,
                f"the site's ledger has {size} entries, fewer than the {cp.size} of this checkpoint: history was "
                "rolled back or forked",
                f"a ledger of at least {cp.size} entries, root at {cp.size} {b64(cp.root)}",
                f"{size} entries",
            )
            continue
        today = roots_at.get(cp.size)
        s.report.check(
            today == cp.root,
            cp.label,
            f"today's ledger does not extend this checkpoint: its first {cp.size} entries have another root "
            "(history was rewritten)",
            f"root {b64(cp.root)} at size {cp.size}",
            f"root {b64(today) if today else '(none)'} at size {cp.size}, today's size {size}",
        )


def tile_reader(s: Site) -> Callable[[str], bytes | None]:
    """What TiledLog reads through: `tile/…` under the ledger prefix, every path checked by the
    site's own rules (inside the site, no links); None for a tile that is not there."""

    def read(rel: str) -> bytes | None:
        path = f"{TILE_PREFIX}/{rel}"
        if not (s.root / path).is_file():
            return None
        return s.read(path, "tile")

    return read


def check_tiles(s: Site, size: int, root: bytes) -> None:
    """The tiles hold the same log as the entries: every tile checked, the same root."""
    try:
        tiled = read_tiled_log(tile_reader(s), size)
        for _ in tiled:
            pass
        s.report.check(
            tiled.root() == root,
            TILE_FOLDER,
            "the tiles' root differs from the entries'",
            base64.b64encode(root).decode(),
            base64.b64encode(tiled.root()).decode(),
        )
    except (FormatError, ProofError) as e:
        s.report.check(False, TILE_FOLDER, f"the tiles do not hold the ledger: {e}")


def read_history(s: Site, version: int = 1) -> dict[str, Any] | None:
    """ledger/history.json if the site has one (a v1 site does not), shape-checked: its `v` is
    `version` (1 on a v2 site, 2 on a v3 site, docs/formats/v3.md, 1)."""
    if not (s.root / HISTORY_PATH).is_file():
        return None
    loaded = s.document(HISTORY_PATH, "checkpoint history")
    if loaded is None:
        return None
    doc = loaded[1]
    report = s.report
    problems = check_keys(doc, ("checkpoints", "origin", "tree_size", "type", "v"))
    report.add(problems, HISTORY_PATH)
    rows = doc.get("checkpoints") if isinstance(doc, dict) else None
    ok = (
        not problems
        and doc.get("type") == "checkpoint-history"
        and is_int(doc.get("v"))
        and doc.get("v") == version
        and is_int(doc.get("tree_size"))
        and isinstance(rows, list)
        and bool(rows)
    )
    if not report.check(
        ok, HISTORY_PATH, "not a checkpoint history", f'"checkpoint-history", v {version}, rows', show(doc, 200)
    ):
        return None
    assert isinstance(rows, list)
    last = -1
    for i, row in enumerate(rows):
        where = f"checkpoints[{i}]"
        bad = check_keys(row, ("checkpoint", "consistency", "root", "tree_size"), where=where)
        if bad or not is_int(row["tree_size"]) or not is_hex64(row["root"]) or row["tree_size"] <= last:
            report.check(False, HISTORY_PATH, "malformed or out-of-order row", "sizes increasing", show(row), where)
            return None
        last = row["tree_size"]
    return {**doc, "data": loaded[0]}


def history_sizes(history: dict[str, Any] | None) -> set[int]:
    return {r["tree_size"] for r in history["checkpoints"]} if history else set()


def check_history(
    s: Site,
    history: dict[str, Any],
    origin: str,
    key: bytes,
    size: int,
    roots_at: dict[int, bytes],
    checkpoint: bytes | None,
    ring: KeyRing | None = None,
) -> dict[int, tuple[str, bytes]]:
    """Every archived checkpoint: signed, its root recomputed, and proved consistent with today's.
    Today's row is the published checkpoint byte for byte (which is checked on its own; None
    when it failed, and today's row is then not compared with it). An archived checkpoint is
    signed by the keys the ledger made valid for its size (`ring`). Returns the archived
    checkpoints read, by size (path, bytes), for the hand-over checks."""
    archived: dict[int, tuple[str, bytes]] = {}
    report = s.report
    s.signed(HISTORY_PATH, history["data"], key, "checkpoint history")
    report.check(history["origin"] == origin, HISTORY_PATH, "origin differs from the manifest's", origin)
    report.check(same(history["tree_size"], size), HISTORY_PATH, "tree_size differs from the ledger's", size)
    rows = history["checkpoints"]
    today = roots_at.get(size)
    report.check(rows[-1]["tree_size"] == size, HISTORY_PATH, "the last row is not today's checkpoint", size)
    for row in rows:
        m, rel = row["tree_size"], row["checkpoint"]
        want = roots_at.get(m)
        if m > size or want is None:
            report.check(False, HISTORY_PATH, f"archives a checkpoint of size {m} beyond the ledger's {size}")
            continue
        if m == size:
            if checkpoint is not None:
                report.check(
                    row["root"] == want.hex(), HISTORY_PATH, "today's root is not the checkpoint's", want.hex()
                )
                data = s.read(rel, "today's archived checkpoint")
                report.check(data == checkpoint, rel, "today's archived checkpoint is not the published checkpoint")
                if data is not None:
                    archived[m] = (rel, data)
            report.check(row["consistency"] is None, HISTORY_PATH, "today's row needs no consistency proof")
            continue
        data = s.read(rel, f"archived checkpoint of size {m}")
        if data is None:
            continue
        archived[m] = (rel, data)
        try:
            if ring is not None and ring.spans:
                (_, cp_size, cp_root), signers = checkpoint_signers(data, ring)
                for problem in signer_problems(ring, m, signers):
                    report.check(False, rel, problem)
            else:
                _, cp_size, cp_root = open_checkpoint(data, origin, key)
        except (NoteError, FormatError) as e:
            report.check(False, rel, f"archived checkpoint does not verify: {e}")
            continue
        # The one finding that matters is reported once, here: what restates this checkpoint (its
        # row, its consistency proof) cannot agree with a ledger that no longer holds its tree.
        if not report.check(
            (cp_size, cp_root) == (m, want),
            rel,
            f"history rewritten: the ledger's first {m} entries no longer have the root this archived checkpoint signs",
            f"size {m}, root {b64(want)} (recomputed from today's entries)",
            f"size {cp_size}, root {b64(cp_root)}",
        ):
            continue
        report.check(row["root"] == want.hex(), HISTORY_PATH, f"root of size {m} is not the ledger's", want.hex())
        if not is_safe_path(row["consistency"]):
            report.check(False, HISTORY_PATH, f"the consistency proof of size {m} has no safe path")
        elif today is not None:
            check_consistency_document(s, row["consistency"], m, size, want, today)
    return archived


def check_consistency_document(s: Site, rel: Any, old: int, new: int, old_root: bytes, new_root: bytes) -> None:
    loaded = s.document(rel, f"consistency proof from {old}")
    if loaded is None:
        return
    doc = loaded[1]
    want = {"type": "consistency-proof", "v": 1, "old_size": old, "new_size": new}
    bad = check_keys(doc, ("hashes", "new_root", "new_size", "old_root", "old_size", "type", "v"))
    if bad or any(not same(doc.get(k), v) for k, v in want.items()):
        s.report.check(False, str(rel), "not the consistency proof it should be", show(want), show(doc, 200))
        return
    s.report.check(
        (doc["old_root"], doc["new_root"]) == (old_root.hex(), new_root.hex()),
        str(rel),
        "roots differ from the ledger's",
        f"{old_root.hex()} → {new_root.hex()}",
        f"{show(doc['old_root'])} → {show(doc['new_root'])}",
    )
    hashes = doc["hashes"]
    try:
        if not isinstance(hashes, list) or not all(is_hex64(h) for h in hashes):
            raise ProofError("hashes must be a list of 64 lowercase hex digits each")
        verify_consistency(old, new, [bytes.fromhex(h) for h in hashes], old_root, new_root)
        s.report.checks += 1
    except ProofError as e:
        s.report.check(False, str(rel), f"consistency proof {old} → {new} fails: {e}")


def leaf_binds(leaf: Any, data: bytes) -> bool:
    """Whether a ledger leaf commits to these file bytes: a commit by its commitment, a run,
    methodology or certificate by its sha256."""
    if not isinstance(leaf, dict):
        return False
    field = "commitment" if leaf.get("type") == "commit" else "sha256"
    return leaf.get(field) == sha256_hex(data) and leaf.get("type") in ("commit", "run", "methodology", "certificate")


def check_artifact_proofs(
    s: Site, manifest: dict[str, Any], ledger: Ledger, checkpoint: bytes, size: int, root: bytes
) -> None:
    """Each reveal's and certificate's .tlog-proof proves its leaf against today's checkpoint."""
    wanted = proven_artifacts(manifest, ledger)
    for rel, index in wanted:
        # The artifact itself is checked against its leaf elsewhere; here, the proof's leaf is
        # proved to be the ledger's at the artifact's index.
        proof_data = s.read(rel + ".tlog-proof", "inclusion proof")
        if proof_data is None:
            continue
        problem = artifact_proof_problem(None, proof_data, index, size, root)
        s.report.check(problem is None, rel + ".tlog-proof", problem or "")
        s.report.check(
            proof_data.endswith(checkpoint) and proof_data.partition(b"\n\n")[2] == checkpoint,
            rel + ".tlog-proof",
            "the proof is not made against today's checkpoint",
        )


def proven_artifacts(manifest: dict[str, Any], ledger: Ledger) -> list[tuple[str, int]]:
    """Each reveal and certificate the manifest lists with its leaf's index: a reveal's commit
    leaf, a certificate's own."""
    wanted: list[tuple[str, int]] = []
    for row in manifest["reveals"]:
        item = row.get("id") if isinstance(row, dict) else None
        c = ledger.commit(item) if isinstance(item, str) else None
        if c is not None and isinstance(row.get("path"), str):
            wanted.append((row["path"], c.index))
    for row in manifest["certificates"]:
        serial = row.get("serial") if isinstance(row, dict) else None
        cert = ledger.certificates.get(serial) if isinstance(serial, str) else None
        if cert is not None and isinstance(row.get("path"), str):
            wanted.append((row["path"], cert.index))
    return wanted


def artifact_proof_problem(
    data: bytes | None, proof_data: bytes, index: int | None, size: int, root: bytes
) -> str | None:
    """What is wrong with a tlog-proof of `data` (None: of whatever leaf sits at `index`)
    against a tree of `size` and `root`, or None."""
    try:
        proof = parse_tlog_proof(proof_data)
        if proof.extra is None:
            return "no extra line: the proven leaf is missing"
        leaf = parse_canonical(proof.extra)
        if data is not None and not leaf_binds(leaf, data):
            return "the leaf in its extra line does not commit to this file's SHA-256"
        if index is not None and proof.index != index:
            return f"proves leaf {proof.index}, but the ledger puts this file's leaf at {index}"
        verify_inclusion(proof.index, size, leaf_hash(proof.extra), list(proof.hashes), root)
    except (FormatError, ProofError) as e:
        return f"inclusion proof fails: {e}"
    return None


@dataclass(frozen=True)
class ArtifactCheck:
    """What `verify.py proof` found for one file."""

    problems: list[str]
    origin: str = ""
    size: int = 0
    index: int = 0
    leaf: Any = None
    signer: VerifierKey | None = None  # the log key whose signature opened the checkpoint
    ml_dsa_signers: list[CosignerKey] = field(default_factory=list)  # the policy's, that verified


def verify_artifact(data: bytes, proof_data: bytes, logs: Sequence[VerifierKey]) -> ArtifactCheck:
    """One artifact alone, offline: its proof's checkpoint signed by one of `logs` (a policy names
    the retired and the active key during a rotation: any of them will do, as in the site's
    check), its leaf committing to the file, and the leaf included in the checkpoint's tree."""
    names = " or ".join(sorted({k.name for k in logs}))
    try:
        proof = parse_tlog_proof(proof_data)
        note = open_note(proof.checkpoint, logs)
        origin, size, root = parse_checkpoint(note.text)
    except (FormatError, NoteError) as e:
        return ArtifactCheck([f"the proof's checkpoint does not verify with {names}'s key: {e}"])
    by_id = {(k.name, k.key_id): k for k in logs}
    signers = [by_id[(sig.name, sig.key_id)] for sig in note.verified]
    signer = next((k for k in signers if k.name == origin), signers[0])
    if origin != signer.name:
        return ArtifactCheck([f"the checkpoint's origin {origin!r} is not the key's name {signer.name!r}"])
    problem = artifact_proof_problem(data, proof_data, None, size, root)
    leaf = parse_canonical(proof.extra) if problem is None and proof.extra is not None else None
    return ArtifactCheck([problem] if problem else [], origin, size, proof.index, leaf, signer)


# ==============================================================================================
# generator/verifier/site/history_v3.py: The checkpoint history and the inclusion proofs of a format v3 site
#     (docs/formats/v3.md, 1 and 2): one consistency proof per release, from the row before, and each proof written
#     once, against the archived checkpoint of the release that first published its artifact.
# ==============================================================================================

# A v3 history's document version (its rows chain: each consistency proof is from the row before).
HISTORY_V3 = 2


# v2's proof from an archived size to today's: never in a v3 site, where every proof is a row's.
V2_CONSISTENCY_RE = re.compile(r"ledger/consistency/(0|[1-9][0-9]*)\.json")


def archived_checkpoint_path(size: int) -> str:
    return f"ledger/checkpoints/{size}"


def consistency_between(old: int, new: int) -> str:
    """Where a v3 site keeps the consistency proof from size `old` (the row before) to `new`."""
    return f"ledger/consistency/{old}-{new}.json"


def check_history_v3(
    s: Site,
    history: dict[str, Any],
    origin: str,
    key: bytes,
    size: int,
    roots_at: dict[int, bytes],
    checkpoint: bytes | None,
    ring: KeyRing | None = None,
) -> dict[int, tuple[str, bytes]]:
    """Every row of a v3 history: its archived checkpoint at `ledger/checkpoints/<M>`, signed by
    the keys valid for its size, over the recomputed root; its consistency proof from the row
    before (none for the first row). Today's row archives a checkpoint of today's tree, which
    may carry fewer cosignatures than today's checkpoint (`checkpoint`, None when it failed its
    own check: today's row is then not judged). Returns the archived checkpoints read, by size
    (path, bytes), for the hand-over and proof checks."""
    archived: dict[int, tuple[str, bytes]] = {}
    report = s.report
    s.signed(HISTORY_PATH, history["data"], key, "checkpoint history")
    report.check(history["origin"] == origin, HISTORY_PATH, "origin differs from the manifest's", origin)
    report.check(same(history["tree_size"], size), HISTORY_PATH, "tree_size differs from the ledger's", size)
    rows = history["checkpoints"]
    report.check(rows[-1]["tree_size"] == size, HISTORY_PATH, "the last row is not today's checkpoint", size)
    before: int | None = None
    for i, row in enumerate(rows):
        m, rel = row["tree_size"], row["checkpoint"]
        where = f"checkpoints[{i}]"
        want = roots_at.get(m)
        if m > size or want is None:
            report.check(False, HISTORY_PATH, f"archives a checkpoint of size {m} beyond the ledger's {size}")
            continue
        consistency = None if before is None else consistency_between(before, m)
        old = before
        before = m
        report.check(
            rel == archived_checkpoint_path(m) and row["consistency"] == consistency,
            HISTORY_PATH,
            "a row's files are not where format v3 puts them",
            f"checkpoint {archived_checkpoint_path(m)}, consistency {show(consistency)}",
            f"checkpoint {show(rel)}, consistency {show(row['consistency'])}",
            where,
        )
        if m == size and checkpoint is None:
            continue  # today's checkpoint failed its own check: what restates it is not judged
        path = archived_checkpoint_path(m)
        data = s.read(path, f"archived checkpoint of size {m}")
        if data is None or not _archived_checkpoint_holds(s, path, data, m, want, origin, key, ring):
            continue
        archived[m] = (path, data)
        report.check(
            row["root"] == want.hex(), HISTORY_PATH, f"root of size {m} is not the ledger's", want.hex(), where=where
        )
        if old is not None and old in roots_at:
            check_consistency_document(s, consistency, old, m, roots_at[old], want)
    return archived


def _archived_checkpoint_holds(
    s: Site, rel: str, data: bytes, m: int, want: bytes, origin: str, key: bytes, ring: KeyRing | None
) -> bool:
    """An archived checkpoint signed by the keys valid for its size, over the recomputed root."""
    report = s.report
    try:
        if ring is not None and ring.spans:
            (_, cp_size, cp_root), signers = checkpoint_signers(data, ring)
            for problem in signer_problems(ring, m, signers):
                report.check(False, rel, problem)
        else:
            _, cp_size, cp_root = open_checkpoint(data, origin, key)
    except (NoteError, FormatError) as e:
        return report.check(False, rel, f"archived checkpoint does not verify: {e}")
    return report.check(
        (cp_size, cp_root) == (m, want),
        rel,
        f"history rewritten: the ledger's first {m} entries no longer have the root this archived checkpoint signs",
        f"size {m}, root {b64(want)} (recomputed from today's entries)",
        f"size {cp_size}, root {b64(cp_root)}",
    )


def check_artifact_proofs_v3(
    s: Site,
    wanted: list[tuple[str, int]],
    archived: dict[int, tuple[str, bytes]],
    roots_at: dict[int, bytes],
    memory: Memory | None = None,
    vouched: Callable[[str], str | None] | None = None,
) -> None:
    """Each reveal's and certificate's .tlog-proof (artifact path, its leaf's index) holds, byte
    for byte, a checkpoint the history archives, and proves the ledger's leaf at its index
    against the root recomputed at that checkpoint's size.

    A proof is written once and never changes, and its check is a function of its bytes, its
    leaf's index, the checkpoint it holds as the history archives it and the root at that size:
    with the verifier's `memory` and the SHA-256es this run `vouched` for, a proof whose check
    passed before with the same four is not read again."""
    by_bytes = {data: m for m, (_, data) in archived.items()}
    held_at = {m: sha256_hex(data) for m, (_, data) in archived.items()}  # what a proof's key names
    for rel, index in wanted:
        proof_rel = rel + ".tlog-proof"
        sha = vouched(proof_rel) if vouched is not None else None
        if memory is not None and sha is not None and _proof_known(memory, proof_rel, sha, index, held_at, roots_at):
            s.report.checks += 2  # as many as reading it counts
            continue
        proof_data = s.read(proof_rel, "inclusion proof")
        if proof_data is None:
            continue
        try:
            held = parse_tlog_proof(proof_data).checkpoint
        except FormatError as e:
            s.report.check(False, proof_rel, f"inclusion proof fails: {e}")
            continue
        m = by_bytes.get(held)
        if not s.report.check(
            m is not None,
            proof_rel,
            "the proof's checkpoint is not, byte for byte, a checkpoint the history archives",
            "the bytes of ledger/checkpoints/<M> of a row of ledger/history.json",
            f"a checkpoint of {len(held)} bytes that no row archives",
        ):
            continue
        assert m is not None
        problem = artifact_proof_problem(None, proof_data, index, m, roots_at[m])
        passed = s.report.check(problem is None, proof_rel, f"{problem} (against {archived[m][0]})" if problem else "")
        # Remembered under the SHA-256 of the bytes checked, which must be the ones vouched for.
        if passed and memory is not None and sha is not None and sha256_hex(proof_data) == sha:
            memory.took_memo("proofs", proof_rel, [m, _proof_key(memory, sha, index, m, held_at, roots_at)])


def _proof_key(
    memory: Memory, sha: str, index: int, m: int, held_at: dict[int, str], roots_at: dict[int, bytes]
) -> str:
    """`held_at`: the SHA-256 of each archived checkpoint, by size."""
    return memory.recheck_key("proof", sha, index, m, held_at[m], roots_at[m].hex())


def _proof_known(
    memory: Memory,
    proof_rel: str,
    sha: str,
    index: int,
    held_at: dict[int, str],
    roots_at: dict[int, bytes],
) -> bool:
    """Whether the check of the proof at `proof_rel`, whose bytes this run verified have `sha`,
    passed in the release verified last with everything it read as it is now (kept if so)."""
    found = memory.memo("proofs", proof_rel)
    if found is None or len(found) != 2 or not isinstance(found[0], int) or found[0] not in held_at:
        return False
    m = found[0]
    if m not in roots_at or found[1] != _proof_key(memory, sha, index, m, held_at, roots_at):
        return False
    memory.took_memo("proofs", proof_rel, found)
    return True


# ==============================================================================================
# generator/verifier/site/commitment_parts.py: The commitment list's rows as the ledger implies them, whole (format v1
#     §4) or in the parts of a format v3 site (docs/formats/v3.md, 4): what the build writes and what the verifier
#     compares the published bytes with.
# ==============================================================================================

# Rows made and compared in batches of this many: the bytes of a million rows at once would be
# hundreds of megabytes.
ROW_BATCH = 10_000


# Rows of one part of a v3 commitment list: a pool page's worth (layout.PAGE_SIZE).
COMMITMENT_PART_ROWS = 1000


COMMITMENT_PARTS_DIR = "ledger/commitments"


def commitment_part_path(k: int) -> str:
    """Where part `k` (from 0) of a v3 commitment list is: its rows 1000k to 1000k + 999."""
    return f"{COMMITMENT_PARTS_DIR}/{k}.json"


def commitment_part_count(commits: int) -> int:
    return -(-commits // COMMITMENT_PART_ROWS)


def _row_text(c: Commit, revealed: bool) -> str:
    enc = encode_basestring
    return (
        f'{{"at":{enc(c.at)},"commitment":{enc(c.commitment)},"gate":{enc(c.gate)},"id":{enc(c.id)},'
        f'"index":{c.index},"status":"{"revealed" if revealed else "sealed"}"}}'
    )


def commitment_rows_bytes(ledger: Ledger, start: int = 0, stop: int | None = None) -> Iterator[bytes]:
    """The commitment list's rows (the `start`-th to the `stop`-th) as the ledger implies them,
    in canonical form, comma-joined, a batch at a time: what the build writes and what the check
    compares a document with.

    RFC 8785 escapes in a string what json's encoder escapes (the quote, the backslash and the
    controls, those with a short form in it) and nothing else, and an integer is its digits.
    Raises UnicodeEncodeError on a lone surrogate, which the ledger's rules keep out."""
    reveals = ledger.reveals
    commits = ledger.commits(start, stop)
    first = True
    while batch := [_row_text(c, c.id in reveals) for c in itertools.islice(commits, ROW_BATCH)]:
        yield (("" if first else ",") + ",".join(batch)).encode("utf-8")
        first = False


def commitment_part_bytes(ledger: Ledger, origin: str, k: int) -> bytes:
    """Part `k` of a v3 commitment list, JCS
    `{"commitments":[…],"origin":O,"part":k,"type":"commitment-list-part","v":1}`."""
    start = k * COMMITMENT_PART_ROWS
    rows = b"".join(commitment_rows_bytes(ledger, start, start + COMMITMENT_PART_ROWS))
    tail = canonical_bytes({"origin": origin, "part": k, "type": "commitment-list-part", "v": 1})
    return b'{"commitments":[' + rows + b"]," + tail[1:]


def commitment_index_bytes(ledger: Ledger, origin: str, parts: list[tuple[str, int, str]]) -> bytes:
    """The v3 list's index over `parts` (path, row count, SHA-256), JCS
    `{"count":C,"origin":O,"parts":[{"count":K,"path":P,"sha256":H}],"tree_size":N,"type":"commitment-list","v":2}`."""
    return canonical_bytes(
        {
            "count": ledger.commit_count,
            "origin": origin,
            "parts": [{"count": n, "path": p, "sha256": h} for p, n, h in parts],
            "tree_size": ledger.size,
            "type": "commitment-list",
            "v": 2,
        }
    )


def parts_touched_since(ledger: Ledger, since_size: int, since_commits: int) -> tuple[set[int], int]:
    """The parts of the commitment list an event after a tree of `since_size` leaves, holding
    `since_commits` commits, can have changed: a part's rows are its items' commitments, fixed
    once committed, and their status, changed only by a reveal. So: the parts holding an item
    revealed since, and every part from the one the next commit falls in. Returns those parts,
    and the first of the second kind. Reads only the reveals since (they are the last, in
    ledger order)."""
    touched: set[int] = set()
    for r in reversed(ledger.reveals.values()):
        if r.index < since_size:
            break
        if (p := ledger.commit_position(r.id)) is not None:
            touched.add(p // COMMITMENT_PART_ROWS)
    return touched, since_commits // COMMITMENT_PART_ROWS


def part_rows(ledger: Ledger, k: int) -> int:
    return min(COMMITMENT_PART_ROWS, ledger.commit_count - k * COMMITMENT_PART_ROWS)


class UnchangedParts:
    """The parts of the commitment list that no event after the release verified last can have
    changed, with the SHA-256 each had then: a part's rows are its items' commitments, fixed once
    committed, and their status, changed only by a reveal. So a part is unchanged unless it
    holds a row committed since (the last part then, and those after it) or an item revealed
    since; and then its file is the one checked then if it is listed with the same SHA-256 (and
    its bytes have it)."""

    def __init__(
        self,
        ledger: Ledger,
        since_size: int,
        since_commits: int,
        shas: list[str],
        listed: Mapping[str, str],
        matched: Container[str],
    ) -> None:
        self.shas, self.listed, self.matched = shas, listed, matched
        self.touched, self.first_touched = parts_touched_since(ledger, since_size, since_commits)
        self.used = 0  # parts taken as they were checked then, for the report

    def sha256(self, k: int, path: str) -> str | None:
        if k >= self.first_touched or k >= len(self.shas) or k in self.touched:
            return None
        sha = self.shas[k]
        if self.listed.get(path) != sha or path not in self.matched:
            return None
        self.used += 1
        return sha


def check_commitment_parts(
    s: Site, rel: str, origin: str, key: bytes, ledger: Ledger, unchanged: UnchangedParts | None = None
) -> list[str]:
    """A v3 commitment list: its signed index and every part, each byte for byte the one the
    ledger implies (canonical JSON has one form per value: equal bytes are equal rows). With
    `unchanged`, a part no event since the release verified last touched, whose file is listed
    with the SHA-256 it had then, is not read nor made again. Returns every part's SHA-256 as
    the ledger implies it, for the verifier's memory."""
    report = s.report
    index = s.read(rel, "commitment list")
    if index is not None:
        s.signed(rel, index, key, "commitment list")
    parts: list[tuple[str, int, str]] = []
    for k in range(commitment_part_count(ledger.commit_count)):
        path = commitment_part_path(k)
        known = unchanged.sha256(k, path) if unchanged is not None else None
        if known is not None:
            parts.append((path, part_rows(ledger, k), known))
            continue
        want = commitment_part_bytes(ledger, origin, k)
        parts.append((path, part_rows(ledger, k), hashlib.sha256(want).hexdigest()))
        data = s.read(path, f"part {k} of the commitment list")
        if data is None or data == want:
            continue
        report.check(
            False,
            path,
            f"part {k} of the commitment list is not the rows the ledger implies{_first_row_differing(data, want)}",
            f"{len(want)} bytes, SHA-256 {parts[-1][2]}",
            f"{len(data)} bytes, SHA-256 {hashlib.sha256(data).hexdigest()}",
        )
    report.checks += ledger.commit_count
    if index is not None:
        want_index = commitment_index_bytes(ledger, origin, parts)
        report.check(
            index == want_index,
            rel,
            "the commitment list's index is not the one the ledger implies (its count, parts or tree size)",
            show(want_index.decode("utf-8", "replace"), 300),
            show(index.decode("utf-8", "replace"), 300),
        )
    return [sha for _, _, sha in parts]


def _first_row_differing(data: bytes, want: bytes) -> str:
    """Which row of a part differs first, when the part parses: a reader is told where to look."""
    try:
        found, expected = parse_canonical(data), parse_canonical(want)
    except FormatError as e:
        return f" ({e})"
    if not isinstance(found, dict):
        return ""
    rows, want_rows = found.get("commitments"), expected["commitments"]
    if not isinstance(rows, list):
        return ""
    for i, (row, want_row) in enumerate(zip(rows, want_rows, strict=False)):
        if row != want_row:
            return f" (row {i}: {show(row, 200)}, expected {show(want_row, 200)})"
    if len(rows) != len(want_rows):
        return f" ({len(rows)} rows, expected {len(want_rows)})"
    return " (its other members)"


# ==============================================================================================
# generator/verifier/site/ledger_files.py: The ledger as a site publishes it (format v1 §3, §4; docs/formats/v3.md, 3
#     and 4): its entries (or a v3 site's tiles) replayed under every rule to their Merkle root, the signed checkpoint
#     over that root, and the commitment list, whole or in parts, byte for byte the rows the ledger implies. With the
#     verifier's memory, from the release verified last (memory/release_memory.py).
# ==============================================================================================

def check_ledger(
    s: Site,
    manifest: dict[str, Any],
    origin: str,
    key: bytes,
    roots_at: dict[int, bytes] | None = None,
    from_tiles: bool = False,
    memory: Memory | None = None,
    listing: Listing | None = None,
) -> Ledger | None:
    """Replay the entries, recompute the root, and check the checkpoint and commitment list.

    One large document at a time: the entries are replayed and released before the
    commitment list is read, which is then checked against the replayed state. `roots_at`
    names earlier tree sizes whose roots the history checks need; each is filled in on the way.
    `from_tiles` replays the entry bundles of the tiles instead of the entries file, which is
    then never read. With a `memory` of the release verified last (memory/release_memory.py),
    only the entries after its last leaf are replayed, from its state, when the document begins
    with exactly the bytes it remembers; from the tiles (a v3 site's ledger, docs/formats/v3.md,
    3), only the leaves after the remembered size. When `listing` (the site's checksum lists as checked) gives
    every whole tile of the remembered tree the SHA-256 it had then, those tiles are not read
    again: only the bundles from the remembered size on (the first must begin with the
    remembered unfinished bundle), and the tiles they complete or leave partial; otherwise
    every tile is read and checked, and the remembered tree with the new leaves must make the
    tiles' root. Either way the signed checkpoint must sign the root of the remembered tree
    grown by the new leaves. A v3 site's commitment list is checked in its parts.
    """
    report = s.report
    led = manifest["ledger"]
    rest: dict[str, Any] | None = None
    tiled = None
    resumed = None
    data = b""
    if from_tiles:
        rel = TILE_FOLDER
        tiled, resumed = _open_tiles(s, led["tree_size"] if is_int(led["tree_size"]) else 0, roots_at, memory, listing)
        data = b""
    else:
        rel = led["entries"]
        loaded = s.read(rel, "ledger entries")
        if loaded is None:
            return None
        data = loaded
        s.signed(rel, data, key, "ledger entries")
    ledger = Ledger()
    merkle = MerkleStream()
    start = 0
    if memory is not None and roots_at is not None and tiled is None:
        resumed = memory.resume(rel, data, roots_at)
    if resumed is not None:
        ledger, merkle, start = resumed
        report.notes.append(
            f"{rel}: the first {ledger.size} entries are those of the release verified last (their bytes' SHA-256 "
            "is the one remembered); only the entries after them were replayed"
            if tiled is None
            else f"{rel}: the ledger's first {ledger.size} entries are those of the release verified last (the "
            "tiles' root extends the remembered tree); only the entries after them were replayed"
        )
    end: list[int] = []
    try:
        if tiled is not None:
            entries: Iterator[tuple[Any, bytes]] = _tiled_entries(tiled, start)
        else:
            entries, rest = iter_canonical_array(data, "entries", start=start, ends_at=end)
        _replay(report, rel, entries, ledger, merkle, roots_at)
        if tiled is not None and start and tiled.root() != merkle.root():
            # The remembered tree and the new leaves make another root than the tiles': the
            # tiles do not hold the ledger verified last, whatever their new leaves are.
            report.check(False, rel, "the tiles' ledger does not begin with the ledger of the release verified last")
            return None
        if roots_at is not None:
            roots_at[0] = EMPTY_ROOT
            roots_at[merkle.size] = merkle.root()
    except NotResumable as e:
        report.check(False, rel, f"the tiles' ledger does not begin with the ledger of the release verified last: {e}")
        return None
    except (FormatError, ProofError) as e:
        report.check(False, rel, str(e))
        return None
    if memory is not None and tiled is not None and roots_at is not None and ledger.size:
        memory.took_tiles(ledger, merkle, roots_at, tiled.builder, TILE_PREFIX, listing.files if listing else None)
    if memory is not None and end and roots_at is not None and ledger.size:
        memory.took(rel, data, end[0], ledger, merkle, roots_at)
    del data, entries  # the iterator holds the bytes too: free both before the next large document
    report.add(ledger.final_problems(), rel)
    if rest is not None:
        _check_entries_tail(report, rel, rest, origin, ledger.size)
    report.check(
        same(led["tree_size"], ledger.size),
        MANIFEST_PATH,
        "ledger.tree_size differs from the number of entries",
        ledger.size,
        show(led["tree_size"]),
    )
    check_checkpoint(s, led["checkpoint"], origin, key, ledger.size, merkle.root())
    if site_format(manifest) >= MANIFEST_V3:
        _check_commitment_parts(s, led["commitment_list"], origin, key, ledger, memory, listing)
    else:
        check_commitment_list(s, led["commitment_list"], origin, key, ledger)
    return ledger


def _replay(
    report: Report,
    rel: str,
    entries: Iterator[tuple[Any, bytes]],
    ledger: Ledger,
    merkle: MerkleStream,
    roots_at: dict[int, bytes] | None,
) -> None:
    """Every leaf applied under the ledger's rules and added to the tree, the roots the history
    asks for taken on the way."""
    for leaf, raw in entries:
        problems = ledger.apply(leaf, len(raw))
        merkle.append(leaf_hash(raw))
        if roots_at is not None and merkle.size in roots_at:
            roots_at[merkle.size] = merkle.root()
        if problems:
            report.add(problems, rel, checks=0)
    report.checks += ledger.size


def _open_tiles(
    s: Site, size: int, roots_at: dict[int, bytes] | None, memory: Memory | None, listing: Listing | None
) -> tuple[TiledLog, tuple[Ledger, MerkleStream, int] | None]:
    """The tiled log to read, and where the replay resumes from the memory (if it does): when
    `listing` gives every whole tile of the remembered tree the SHA-256 it had then, the tiles
    go on from the remembered tiles' state, and those tiles are not read again."""
    resumed = memory.resume_tiles(size, roots_at) if memory is not None and roots_at is not None else None
    builder = None
    if memory is not None and resumed is not None and listing is not None:
        builder = memory.tile_builder(TILE_PREFIX, listing.files, listing.matched)
        if builder is not None and builder.size != resumed[0].size:
            builder = None
    if builder is None and resumed is not None and memory is not None and memory.tiles_why_not:
        s.report.notes.append(f"{TILE_FOLDER}: every tile read and checked: {memory.tiles_why_not}")
    if builder is not None:
        s.report.notes.append(
            f"{TILE_FOLDER}: the whole tiles of the release verified last (its first {builder.size} leaves) were "
            "not read again: this release lists each with the SHA-256 it had when it was checked"
        )
    read = tile_reader(s)
    if memory is not None and listing is not None:
        read = _as_listed(read, listing)
    return read_tiled_log(read, size, builder), resumed


def _as_listed(read: Callable[[str], bytes | None], listing: Listing) -> Callable[[str], bytes | None]:
    """`read`, each listed tile held to the SHA-256 its list gives: the memory this run leaves
    vouches for tiles by those SHA-256es, so they must be of the bytes it checked, not only of
    the bytes hashed earlier in the run (an unlisted tile fails where the lists are checked)."""

    def checked(path: str) -> bytes | None:
        data = read(path)
        want = listing.files.get(f"{TILE_PREFIX}/{path}")
        if data is not None and want is not None and hashlib.sha256(data).hexdigest() != want:
            raise FormatError(f"{path}: its bytes are not those its checksum list gives (changed while being read?)")
        return data

    return checked


def _check_commitment_parts(
    s: Site, rel: str, origin: str, key: bytes, ledger: Ledger, memory: Memory | None, listing: Listing | None
) -> None:
    """A v3 commitment list in its parts; with the memory, the parts no event since touched
    taken as they were checked (commitment_parts.UnchangedParts)."""
    unchanged = None
    known = memory.commitment_parts() if memory is not None and listing is not None else None
    if known is not None and listing is not None:
        unchanged = UnchangedParts(ledger, *known, listing.files, listing.matched)
    shas = check_commitment_parts(s, rel, origin, key, ledger, unchanged)
    if memory is not None:
        memory.took_commitment_parts(ledger.commit_count, shas)
    if unchanged is not None and unchanged.used:
        s.report.notes.append(
            f"{rel}: {unchanged.used} of its {len(shas)} parts not read again: no row of theirs was committed or "
            "revealed since the release verified last, and each is listed with the SHA-256 it had when it was checked"
        )


def _tiled_entries(tiled: TiledLog, start: int) -> Iterator[tuple[Any, bytes]]:
    """The leaves of a tiled log from the `start`-th, parsed: those before it are read (every
    tile is checked all the same) but not replayed."""
    for i, raw in enumerate(tiled, tiled.first):
        if i >= start:
            yield parse_canonical(raw), raw


def _check_entries_tail(report: Report, rel: str, rest: dict[str, Any], origin: str, size: int) -> None:
    report.add(check_keys(rest, ("origin", "tree_size", "type", "v")), rel)
    report.check(
        rest.get("type") == "ledger-entries" and is_v1(rest),
        rel,
        "wrong type or version",
        '"ledger-entries", v 1',
        f"{show(rest.get('type'))}, v {show(rest.get('v'))}",
    )
    report.check(
        rest.get("origin") == origin, rel, "origin differs from the manifest's", origin, show(rest.get("origin"))
    )
    report.check(
        same(rest.get("tree_size"), size),
        rel,
        "tree_size differs from the number of entries",
        size,
        show(rest.get("tree_size")),
    )


def check_commitment_list(s: Site, rel: str, origin: str, key: bytes, ledger: Ledger) -> None:
    """The signed list must hold every commit leaf, in ledger order, with its current status."""
    report = s.report
    data = s.read(rel, "commitment list")
    if data is None:
        return
    s.signed(rel, data, key, "commitment list")
    rest = _rows_as_expected(data, ledger)
    if rest is None:
        rest = _check_rows(report, rel, data, ledger)
        if rest is None:
            return
    report.checks += ledger.commit_count
    report.add(check_keys(rest, ("origin", "tree_size", "type", "v")), rel)
    report.check(
        rest.get("type") == "commitment-list" and is_v1(rest),
        rel,
        "wrong type or version",
        '"commitment-list", v 1',
        show(rest.get("type")),
    )
    report.check(
        rest.get("origin") == origin, rel, "origin differs from the manifest's", origin, show(rest.get("origin"))
    )
    report.check(
        same(rest.get("tree_size"), ledger.size),
        rel,
        "tree_size differs from the ledger's",
        ledger.size,
        show(rest.get("tree_size")),
    )


def _rows_as_expected(data: bytes, ledger: Ledger) -> dict[str, Any] | None:
    """The members after the rows, if the document's rows are byte for byte the canonical rows
    the ledger implies; else None (the rows are then parsed one by one, which tells what differs).

    The comparison is the check: canonical JSON has one form per value, so a document holding
    every expected row in canonical form is exactly one whose parsed rows would compare equal,
    without parsing a million rows."""
    prefix = b'{"commitments":['
    if not data.startswith(prefix):
        return None
    pos = len(prefix)
    try:
        for want in commitment_rows_bytes(ledger):
            if data[pos : pos + len(want)] != want:
                return None
            pos += len(want)
    except UnicodeEncodeError:
        return None
    if data[pos : pos + 1] != b"]":
        return None
    try:
        return members_after(data, pos + 1, "commitments")
    except FormatError:
        return None


def _check_rows(report: Report, rel: str, data: bytes, ledger: Ledger) -> dict[str, Any] | None:
    """Each row parsed and compared with its commit leaf: every difference reported where it is.
    Returns the members after the rows, or None if the document is not canonical JSON."""
    commits = ledger.commits()
    try:
        rows, rest = iter_canonical_array(data, "commitments")
        for row, _ in rows:
            c = next(commits, None)
            if c is None:
                report.check(False, rel, "lists an item the ledger never committed", found=show(row))
                break
            want = {
                "at": c.at,
                "commitment": c.commitment,
                "gate": c.gate,
                "id": c.id,
                "index": c.index,
                "status": "revealed" if c.id in ledger.reveals else "sealed",
            }
            if row != want or type(row.get("index")) is not int:  # a dict compares true == 1
                report.failures.append(_row_problem(rel, c.id, want, row))
        for _ in rows:
            pass
    except FormatError as e:
        report.check(False, rel, str(e))
        return None
    missing = next(commits, None)
    if missing is not None:
        report.check(False, rel, f"ends before the ledger's commit of {missing.id}", where="commitments")
    return rest


def _row_problem(rel: str, item_id: str, want: dict[str, Any], row: Any) -> Problem:
    where = f"commitments[{item_id}]"
    if not isinstance(row, dict) or set(row) != set(want):
        return Problem("row differs from the ledger's commit leaf", rel, where, canonical_text(want), show(row, 300))
    diffs = [k for k in want if not same(row[k], want[k])]
    if diffs == ["status"]:
        told = "revealed it" if want["status"] == "revealed" else "never revealed it"
        return Problem(
            f"item {item_id} is marked {row['status']} but the ledger {told}",
            rel,
            where,
            want["status"],
            show(row["status"]),
        )
    return Problem(
        f"row differs from the ledger's commit leaf ({', '.join(diffs)})",
        rel,
        where,
        ", ".join(f"{k}={show(want[k])}" for k in diffs),
        ", ".join(f"{k}={show(row[k])}" for k in diffs),
    )


def check_checkpoint(s: Site, rel: str, origin: str, key: bytes, size: int, root: bytes) -> None:
    report = s.report
    data = s.read(rel, "checkpoint")
    if data is None:
        return
    try:
        note = open_note(data, [VerifierKey(origin, key_id(origin, key), key)])
        cp_origin, cp_size, cp_root = parse_checkpoint(note.text)
    except (NoteError, FormatError) as e:
        report.check(
            False,
            rel,
            f"checkpoint does not verify: {e}",
            f"a signed note by {origin} ({fingerprint(key)}) with a checkpoint body",
            "a note that is not",
        )
        return
    report.check(cp_origin == origin, rel, "checkpoint origin differs", origin, cp_origin)
    report.check(cp_size == size, rel, "checkpoint size differs from the number of entries", size, cp_size)
    report.check(
        cp_root == root,
        rel,
        "checkpoint root differs from the RFC 6962 root of the entries",
        base64.b64encode(root).decode(),
        base64.b64encode(cp_root).decode(),
    )


# ==============================================================================================
# generator/verifier/site/certificate_memo.py: What a certificate's check on a site (certificate_files.py) is a
#     function of, so that the verifier's memory (memory/release_memory.py) can vouch for a certificate that passed in
#     the release verified last without reading, parsing or recomputing it again.
# ==============================================================================================

# The SHA-256 this run verified a file has (it is listed, and its bytes have what is listed), or None.
Vouched = Callable[[str], str | None]


@dataclass(frozen=True)
class Looked:
    """What a passing certificate check looked at beyond its row and leaves, and what it found."""

    items: tuple[str, ...]  # the items whose reveal it read: its spec's, its results', its evidence's
    evidence: tuple[str, ...]  # the paths of the evidence files it looked for
    version: str | None  # the methodology version its spec pins
    checks: int
    asserted: tuple[str, ...]
    verdict: str
    expires_at: str | None

    def saved(self, key: str) -> list[Any]:
        return [
            key,
            "\n".join(self.items),
            "\n".join(self.evidence),
            self.version,
            self.checks,
            list(self.asserted),
            self.verdict,
            self.expires_at,
        ]

    @staticmethod
    def loaded(saved: list[Any]) -> tuple[str, "Looked"] | None:
        """A remembered check (saved), or None for anything this code did not write."""
        if len(saved) != 8:
            return None
        key, items, evidence, version, checks, asserted, verdict, expires = saved
        if not (
            isinstance(key, str)
            and isinstance(items, str)
            and isinstance(evidence, str)
            and (version is None or isinstance(version, str))
            and isinstance(checks, int)
            and isinstance(asserted, list)
            and all(isinstance(a, str) for a in asserted)
            and isinstance(verdict, str)
            and (expires is None or isinstance(expires, str))
        ):
            return None
        return key, Looked(_split(items), _split(evidence), version, checks, tuple(asserted), verdict, expires)


def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split("\n")) if text else ()


@dataclass(frozen=True)
class Context:
    """What every certificate's key is computed against in one run."""

    root: str  # the site's folder
    ledger: Ledger
    vouched: Vouched
    site_key: bytes  # the key a certificate is checked with when the ledger names none valid then
    run_paths: Mapping[str, Any]  # run id -> its spec's path, as the manifest lists it
    reveal_paths: Mapping[str, Any]  # item id -> its reveal document's path, as the manifest lists it
    methodologies: Mapping[str, str]  # version -> methodology_digest of the file this run parsed
    ordinals: Mapping[str, int]
    roots: Mapping[int, bytes]
    program: Mapping[str, str]
    # item -> what certificate_key hashes of its reveal, made once a run (filled as keys are made)
    reveal_entries: dict[str, list[Any]] = field(default_factory=dict)


def certificate_key(
    memory: Memory, x: Context, row: Mapping[str, Any], ev: CertificateEvent, looked: Looked
) -> str | None:
    """The key of everything the check of the certificate `row` names read, given what it looked
    at (`looked`); None when a file it names is not one this run verified (then it is checked in
    full, and says what is wrong)."""
    ledger = x.ledger
    run = ledger.runs.get(ev.run)
    if run is None:
        return None
    gate = ledger.gates.get(run.gate)
    named: list[Any] = [row.get("path"), f"{row.get('path')}.sig", x.run_paths.get(ev.run)]
    for member in ("details", "exports"):
        listed = row.get(member, [])
        if not isinstance(listed, list):
            return None
        named += listed
    if row.get("grader_record") is not None:
        named.append(row.get("grader_record"))
    files = _vouched(x.vouched, named)
    if files is None:
        return None
    evidence = []
    for rel in looked.evidence:
        # Absent until due (a secret gate's log would give answers away): whether it is there counts.
        present = os.path.lexists(os.path.join(x.root, rel))
        evidence.append([rel, present, x.vouched(rel) if present else None])
    items = ids_text(looked.items)
    if items is None:
        return None
    # The items, and for each revealed one where and with which bytes: an item of the public
    # gate is in thousands of runs, so what it contributes is made once a run of the verifier.
    cache, revealed = x.reveal_entries, ledger.reveals
    reveals: list[Any] = [items]
    for item in looked.items:
        if item in revealed:
            entry = cache.get(item)
            if entry is None:
                path = x.reveal_paths.get(item)
                sha = x.vouched(path) if is_safe_path(path) else None
                entry = cache[item] = [item, revealed[item].index, path, sha]
            reveals.append(entry)
    valid = ledger.keys.valid_at(ev.index + 1)
    key = valid[-1].public_key if valid else x.site_key
    published = ledger.methodologies.get(looked.version) if looked.version is not None else None
    draw = ledger.draws.get(run.id)
    size = min((n for n in x.roots if n > ev.index), default=None)
    return memory.recheck_key(
        "certificate",
        dict(row),
        files,
        [ev.serial, ev.run, ev.sha256, ev.index, ev.at],
        [run.id, run.sha256, run.subject, run.gate, run.index, run.at, ledger.decided_at(run.id)],
        [gate.public, gate.name, gate.index] if gate is not None else None,
        key.hex(),
        [looked.version, published.sha256, published.index] if published is not None else looked.version,
        x.methodologies.get(looked.version) if looked.version is not None else None,
        draw.index if draw is not None else None,
        reveals,
        evidence,
        x.ordinals.get(ev.serial),
        [size, x.roots[size].hex()] if size is not None else None,
        dict(x.program),
        ev.serial in ledger.revocations,
    )


def methodology_digests(methodologies: Mapping[str, Methodology]) -> dict[str, str]:
    """Each methodology this run parsed, by version, as the SHA-256 of its parameters as parsed:
    a file whose bytes differ from its leaf's hash is reported, and parsed all the same, so the
    leaf's hash does not say what the checks read."""
    return {v: sha256_hex(canonical_bytes(dict(m.document))) for v, m in sorted(methodologies.items())}


def _vouched(vouched: Vouched, named: list[Any]) -> list[list[str]] | None:
    out = []
    for rel in named:
        sha = vouched(rel) if is_safe_path(rel) else None
        if sha is None:
            return None
        out.append([rel, sha])
    return out


# ==============================================================================================
# generator/verifier/site/run_memo.py: What a run's check on a site (publication.check_runs) is a function of, so that
#     the verifier's memory (memory/release_memory.py) can vouch for a run that passed in the release verified last
#     without reading or parsing its spec again.
# ==============================================================================================

class SpecSummary(dict[str, Any]):
    """What the checks after the runs' read of a remembered run's spec: `id`, `items` (as its
    draw gives them), `methodology` (its `version`) and, for a drawn run, `draw`. Not a spec:
    whoever needs the whole reads the file (certificate_files)."""


@dataclass(frozen=True)
class RunLooked:
    """What a passing run check found in the spec, for the next run to go on from."""

    items: tuple[str, ...]
    draw: dict[str, Any] | None
    version: str
    checks: int

    def summary(self, run_id: str) -> SpecSummary:
        out = SpecSummary(id=run_id, items=list(self.items), methodology={"version": self.version})
        if self.draw is not None:
            out["draw"] = dict(self.draw)
        return out

    def saved(self, key: str) -> list[Any]:
        draw = canonical_bytes(self.draw).decode("utf-8") if self.draw is not None else ""
        return [key, "\n".join(self.items), draw, self.version, self.checks]

    @staticmethod
    def loaded(saved: list[Any]) -> tuple[str, "RunLooked"] | None:
        """A remembered check (saved), or None for anything this code did not write."""
        if len(saved) != 5:
            return None
        key, items, draw, version, checks = saved
        if not (
            isinstance(key, str)
            and isinstance(items, str)
            and isinstance(draw, str)
            and isinstance(version, str)
            and isinstance(checks, int)
        ):
            return None
        try:
            parsed = parse_canonical(draw.encode("utf-8")) if draw else None
        except FormatError:
            return None
        if parsed is not None and not isinstance(parsed, dict):
            return None
        return key, RunLooked(tuple(items.split("\n")) if items else (), parsed, version, checks)

    @staticmethod
    def of(spec: dict[str, Any], checks: int) -> "RunLooked | None":
        """What to remember of a spec that passed (as effective_spec gives it), or None."""
        items, draw = spec.get("items"), spec.get("draw")
        version = spec.get("methodology", {}).get("version") if isinstance(spec.get("methodology"), dict) else None
        if not (isinstance(items, list) and all(is_id(i) for i in items) and isinstance(version, str)):
            return None
        if draw is not None and not isinstance(draw, dict):
            return None
        return RunLooked(tuple(items), draw, version, checks)


@dataclass(frozen=True)
class RunContext:
    """What every run's key is computed against in one run of the verifier."""

    ledger: Ledger
    vouched: Vouched
    methodologies: Mapping[str, str]  # version -> methodology_digest of the file this run parsed
    # The runs a label set measures: the label sets' check reads their whole spec (its judge's
    # rubric), so they are always checked in full.
    measured: frozenset[str]


def run_key(
    memory: Memory, x: RunContext, row: Mapping[str, Any], run: RunEvent, looked: RunLooked, earlier: str
) -> str | None:
    """The key of everything the check of run `row` read, given what it found (`looked`) and
    `earlier`, the chain of the runs before it of its subject and gate (earlier_chain); None
    when its spec is not a file this run verified (it is then checked in full)."""
    ledger = x.ledger
    path = row.get("spec")
    sha = x.vouched(path) if is_safe_path(path) else None
    items = ids_text(looked.items)
    if sha is None or run.id in x.measured or items is None:
        return None
    before = ledger.runs_before(run)
    prev = before[-1] if before else None
    gate = ledger.gates.get(run.gate)
    published = ledger.methodologies.get(looked.version)
    draw = ledger.draws.get(run.id)
    revealed = ledger.reveals
    # The items, then when each revealed one was: most are not.
    reveals = [items, *([i, revealed[i].index] for i in looked.items if i in revealed)]
    return memory.recheck_key(
        "run",
        dict(row),
        [path, sha],
        [run.id, run.sha256, run.subject, run.gate, run.index, run.at, ledger.decided_at(run.id)],
        [prev.id, prev.index, ledger.decided_at(prev.id)] if prev is not None else None,
        [gate.public, gate.index] if gate is not None else None,
        [looked.version, published.sha256, published.index] if published is not None else looked.version,
        x.methodologies.get(looked.version),
        draw.index if draw is not None else None,
        reveals,
        earlier,
    )


def earlier_chain(chain: str, run_id: str, spec: Mapping[str, Any] | None) -> str:
    """The chain of a subject's runs on a gate after run `run_id` with `spec` (None: its spec did
    not pass) is added: what a later run of theirs compares its items with (the one-observation
    rule, a draw's pool), one SHA-256 in ledger order, so that no run hashes its predecessors'
    items one by one."""
    items = spec.get("items") if spec is not None else None
    shown = canonical_bytes(items).decode("utf-8") if isinstance(items, list) else "!"
    return sha256_hex(f"{chain}\n{run_id}\n{shown}".encode())


# ==============================================================================================
# generator/verifier/site/publication.py: What the ledger's leaves refer to (format v1 §3, §5, §6): gates, methodology
#     parameters, reveal documents and run specs, each against its leaf. The ledger itself is site/ledger_files.py.
# ==============================================================================================

def ordered_ids(report: Report, listed: Any, file: str, what: str, key: str, want: list[str]) -> list[dict[str, Any]]:
    """Check a manifest list names exactly `want`, in ledger order; return its well-formed rows."""
    rows = [r for r in listed if isinstance(r, dict)] if isinstance(listed, list) else []
    got = [r.get(key) for r in rows]
    if got != want:
        got_set = {x for x in got if isinstance(x, str)}
        want_set = set(want)
        missing = [x for x in want if x not in got_set]
        extra = [x for x in got if not isinstance(x, str) or x not in want_set]
        detail = (
            f"missing {show(missing[:5])}, extra {show(extra[:5])}"
            if missing or extra
            else "same entries in another order"
        )
        report.check(
            False, file, f"{what} differ from the ledger's, in ledger order ({detail})", show(want[:5]), show(got[:5])
        )
    else:
        report.checks += 1
    return rows


def check_gates(s: Site, manifest: dict[str, Any], ledger: Ledger) -> None:
    rows = ordered_ids(s.report, manifest["gates"], MANIFEST_PATH, "gates", "id", list(ledger.gates))
    for r in rows:
        g = ledger.gates.get(r["id"]) if isinstance(r.get("id"), str) else None
        if g is not None:
            want = {"id": g.id, "name": g.name, "public": g.public}
            s.report.check(
                same(r, want), MANIFEST_PATH, f"gate {g.id} differs from its ledger leaf", canonical_text(want), show(r)
            )


def check_methodology_files(s: Site, manifest: dict[str, Any], ledger: Ledger) -> dict[str, Methodology]:
    report = s.report
    rows = ordered_ids(
        report, manifest["methodology"], MANIFEST_PATH, "methodology versions", "version", list(ledger.methodologies)
    )
    methodologies: dict[str, Methodology] = {}
    for r in rows:
        version = r.get("version")
        event = ledger.methodologies.get(version) if isinstance(version, str) else None
        report.add(
            check_keys(r, ("version", "document", "parameters", "sha256"), where=f"methodology[{version}]"),
            MANIFEST_PATH,
        )
        if event is None:
            continue
        report.check(
            r.get("sha256") == event.sha256,
            MANIFEST_PATH,
            f"methodology {version}: hash differs from the ledger",
            event.sha256,
            show(r.get("sha256")),
        )
        s.path(r.get("document"), f"methodology {version} document")
        loaded = s.document(r.get("parameters"), f"methodology {version} parameters")
        if loaded is None:
            continue
        data, doc = loaded
        rel = str(r.get("parameters"))
        digest = sha256_hex(data)
        report.check(
            digest == event.sha256, rel, "SHA-256 differs from the ledger's methodology leaf", event.sha256, digest
        )
        rules = check_methodology(doc)
        report.add(rules, rel)
        report.check(
            isinstance(doc, dict) and doc.get("version") == version,
            rel,
            "version inside the file differs",
            version,
            show(doc.get("version") if isinstance(doc, dict) else None),
        )
        if not rules:
            methodologies[str(version)] = parse_methodology(doc)
    return methodologies


def check_reveals(s: Site, manifest: dict[str, Any], ledger: Ledger) -> None:
    report = s.report
    want = sorted(ledger.reveals, key=lambda i: ledger.reveals[i].index)
    rows = ordered_ids(report, manifest["reveals"], MANIFEST_PATH, "reveals", "id", want)
    salts: dict[str, str] = {}
    for r in rows:
        item_id = r.get("id")
        ev = ledger.reveals.get(item_id) if isinstance(item_id, str) else None
        commit = ledger.commit(item_id) if isinstance(item_id, str) else None
        w = f"reveals[{item_id}]"
        report.add(check_keys(r, ("id", "gate", "path", "reason", "revealed_at"), where=w), MANIFEST_PATH)
        if ev is None or commit is None:
            continue
        want_row = {"gate": commit.gate, "reason": ev.reason, "revealed_at": ev.at}
        got_row = {k: r.get(k) for k in want_row}
        report.check(
            same(got_row, want_row),
            MANIFEST_PATH,
            f"reveal of {item_id} differs from its ledger leaves",
            canonical_text(want_row),
            show(got_row),
            where=w,
        )
        data = s.read(r.get("path"), f"reveal of {item_id}")
        if data is None:
            continue
        rel = str(r.get("path"))
        digest = sha256_hex(data)
        report.check(
            digest == commit.commitment,
            rel,
            f"SHA-256 of the reveal file is not the commitment of {item_id}",
            f"{commit.commitment} (ledger entries[{commit.index}])",
            digest,
        )
        try:
            doc = parse_canonical(data)
        except FormatError as e:
            report.check(False, rel, str(e))
            continue
        if not report.add(check_reveal_document(doc), rel):
            continue
        report.check(doc["id"] == item_id, rel, "id differs from the ledger", item_id, doc["id"])
        report.check(doc["gate"] == commit.gate, rel, "gate differs from the commit leaf", commit.gate, doc["gate"])
        if doc["salt"] in salts:
            report.check(False, rel, f"salt reused (also in the reveal of {salts[doc['salt']]})")
        salts[doc["salt"]] = str(item_id)


def check_runs(
    s: Site,
    manifest: dict[str, Any],
    ledger: Ledger,
    methodologies: dict[str, Methodology],
    memory: Memory | None = None,
    vouched: Vouched | None = None,
) -> dict[str, dict[str, Any]]:
    """Every run's spec against its leaf, its shape and the rules a registered run obeys; returns
    the specs by run, as effective_spec gives them. With a `memory` and the SHA-256es this run
    `vouched` for, a run whose check passed in the release verified last and read nothing that
    differs now is not read again: its entry is a run_memo.SpecSummary."""
    report = s.report
    rows = ordered_ids(report, manifest["runs"], MANIFEST_PATH, "runs", "id", list(ledger.runs))
    specs: dict[str, dict[str, Any]] = {}
    by_id = {r["id"]: r for r in rows if isinstance(r.get("id"), str)}
    measured = frozenset(e.run for e in ledger.label_sets.values())
    memo = (
        RunContext(ledger, vouched, methodology_digests(methodologies), measured)
        if memory is not None and vouched is not None
        else None
    )
    chains: dict[tuple[str, str], str] = {}  # (subject name, gate) -> earlier_chain of its runs so far
    for run in ledger.runs.values():
        row = by_id.get(run.id)
        subject = (str(run.subject.get("name")), run.gate)  # as Ledger.runs_before groups them
        earlier = chains.get(subject, "")
        if row is not None and not (
            memory is not None and memo is not None and _remembered_run(memory, memo, report, row, run, earlier, specs)
        ):
            failures, checks = len(report.failures), report.checks
            spec = _check_run(s, row, run, ledger, methodologies, specs)
            if spec is not None:
                specs[run.id] = spec
                looked = RunLooked.of(spec, report.checks - checks) if len(report.failures) == failures else None
                key = run_key(memory, memo, row, run, looked, earlier) if memory and memo and looked else None
                if memory is not None and looked is not None and key is not None:
                    memory.took_memo("runs", run.id, looked.saved(key))
        chains[subject] = earlier_chain(earlier, run.id, specs.get(run.id))
    # Scheduled retirements draw among the items no open run holds: after every spec is read.
    report.add(retirement_problems(ledger, methodologies, specs), "ledger")
    report.add(required_draw_problems(ledger, methodologies, specs), "ledger")
    return specs


def _remembered_run(
    memory: Memory,
    memo: RunContext,
    report: Report,
    row: dict[str, Any],
    run: RunEvent,
    earlier: str,
    specs: dict[str, Any],
) -> bool:
    """Whether run `row` passed in the release verified last and everything its check read is
    as it was then: its remembered checks are counted and its summary taken for its spec."""
    saved = memory.memo("runs", run.id)
    found = RunLooked.loaded(saved) if saved is not None else None
    if saved is None or found is None or run_key(memory, memo, row, run, found[1], earlier) != found[0]:
        return False
    looked = found[1]
    report.checks += looked.checks
    specs[run.id] = looked.summary(run.id)
    memory.took_memo("runs", run.id, saved)  # kept as read: the same list, not a copy
    return True


def _check_run(
    s: Site,
    row: dict[str, Any],
    run: RunEvent,
    ledger: Ledger,
    methodologies: dict[str, Methodology],
    specs: dict[str, dict[str, Any]],
) -> dict[str, Any] | None:
    """One run's spec checked in full; the spec as effective_spec gives it, if it has the shape
    of one (whatever the rules found)."""
    report = s.report
    report.add(check_keys(row, ("id", "spec", "status"), where=f"runs[{run.id}]"), MANIFEST_PATH)
    loaded = s.document(row.get("spec"), f"run spec of {run.id}")
    if loaded is None:
        return None
    data, spec = loaded
    rel = str(row.get("spec"))
    digest = sha256_hex(data)
    report.check(digest == run.sha256, rel, f"SHA-256 differs from run {run.id}'s ledger leaf", run.sha256, digest)
    if not report.add(check_run_spec(spec), rel):
        return None
    spec = effective_spec(spec, ledger)
    version = spec["methodology"].get("version")
    report.add(
        check_run_rules(ledger, run, spec, methodologies.get(version) if isinstance(version, str) else None, specs),
        rel,
    )
    return spec


# ==============================================================================================
# generator/verifier/rules/revocations.py: Certificate revocations (format v2, FORMAT.md): the signed list at its
#     fixed path, which must restate the ledger's revocation events exactly, and what the report says of each revoked
#     certificate. A revocation is a state, like expiry: the site still verifies, and the certificate is reported as
#     revoked, never as valid.
# ==============================================================================================

# Beside the commitment list, the other signed list the ledger's replay gives. Not under
# certificates/: a serial may be any id, "revocations" too, and what is published there never
# changes, while this list grows.
REVOCATIONS_PATH = "ledger/revocations.json"


_KEYS = ("origin", "revocations", "tree_size", "type", "v")


def revocation_rows(ledger: Ledger) -> list[dict[str, Any]]:
    """The list's rows as the replay gives them: one per revocation event, in ledger order."""
    return [{"at": r.at, "index": r.index, "reason": r.reason, "serial": r.serial} for r in ledger.revocations.values()]


def revocation_list(origin: str, ledger: Ledger) -> dict[str, Any]:
    """The whole document, as the generator publishes it and the verifier expects it."""
    return {
        "type": "certificate-revocations",
        "v": 1,
        "origin": origin,
        "tree_size": ledger.size,
        "revocations": revocation_rows(ledger),
    }


def check_revocations(s: Site, origin: str, key: bytes, ledger: Ledger) -> None:
    """Report every revoked certificate, and check the signed list against the ledger."""
    report = s.report
    for r in ledger.revocations.values():
        run = ledger.certificates[r.serial].run
        report.revoked.append({"serial": r.serial, "run": run, "at": r.at, "reason": r.reason, "index": r.index})
        report.notes.append(
            f"certificate {r.serial} REVOKED at {r.at}: {r.reason} (it is not valid, whatever its verdict)"
        )
    rel = REVOCATIONS_PATH
    if not ledger.revocations and not (s.root / rel).is_file():
        return  # a site from before revocations has no list, and with nothing revoked needs none
    loaded = s.document(rel, "revocation list")
    if loaded is None:
        return
    data, doc = loaded
    s.signed(rel, data, key, "revocation list")
    bad = check_keys(doc, _KEYS)
    if not report.add(bad, rel):
        return
    report.check(
        doc["type"] == "certificate-revocations" and is_v1(doc),
        rel,
        "wrong type or version",
        '"certificate-revocations", v 1',
        f"{show(doc['type'])}, v {show(doc['v'])}",
    )
    report.check(doc["origin"] == origin, rel, "origin differs from the manifest's", origin, show(doc["origin"]))
    report.check(
        same(doc["tree_size"], ledger.size),
        rel,
        "tree_size differs from the ledger's",
        ledger.size,
        show(doc["tree_size"]),
    )
    rows = doc["revocations"]
    if report.check(isinstance(rows, list), rel, "revocations must be a list", "a list", type_name(rows)):
        report.add(_row_problems(rows, revocation_rows(ledger)), rel)


def _row_problems(rows: list[Any], want: list[dict[str, Any]]) -> list[Problem]:
    """What makes the rows differ from the ledger's, most telling first: a revocation left out,
    one the ledger does not hold or listed twice, the order, then a row's members."""
    if same(rows, want):
        return []
    wanted = {w["serial"]: w for w in want}
    listed = [r["serial"] if isinstance(r, dict) and isinstance(r.get("serial"), str) else None for r in rows]
    problems = [
        Problem(
            f"omits the revocation of certificate {w['serial']} (ledger entries[{w['index']}])",
            where="revocations",
            expected=canonical_text(w),
            found="no row",
        )
        for w in want
        if w["serial"] not in listed
    ]
    for n, serial in enumerate(listed):
        if serial not in wanted or listed.index(serial) != n:
            problems.append(
                Problem(
                    "lists a revocation the ledger does not hold" if serial not in wanted else f"lists {serial} twice",
                    where=f"revocations[{n}]",
                    expected="only the ledger's revocation events, each once",
                    found=show(rows[n], 300),
                )
            )
    if problems:
        return problems
    order = [w["serial"] for w in want]
    if listed != order:
        return [
            Problem(
                "revocations are not in ledger order", where="revocations", expected=show(order), found=show(listed)
            )
        ]
    return [
        Problem(
            f"the row of certificate {w['serial']} differs from the ledger's revocation event",
            where=f"revocations[{n}]",
            expected=canonical_text(w),
            found=show(row, 300),
        )
        for n, (row, w) in enumerate(zip(rows, want, strict=True))
        if not same(row, w)
    ]


# ==============================================================================================
# generator/verifier/site/export_files.py: A certificate's exports (FORMAT.md, "Exports"), each remade here from the
#     published certificate, its run spec, the pinned methodology and the items' reveal documents, and compared byte
#     for byte with the file the site publishes: an export that says anything its certificate does not (another
#     subject, gate, verdict, figure, or the SHA-256 of another certificate) differs from what is remade, and fails. A
#     manifest row without `exports` is a site built before exports existed.
# ==============================================================================================

MANIFEST_FILE = "transparency.json"


def history_roots(history: Mapping[str, Any] | None) -> dict[int, bytes]:
    """The roots of the log's archived checkpoints by size, as its history lists them (each
    checked against its signed checkpoint by the history's own check)."""
    rows = history.get("checkpoints") if history else None
    return {
        r["tree_size"]: bytes.fromhex(r["root"])
        for r in (rows if isinstance(rows, list) else [])
        if isinstance(r, dict) and isinstance(r.get("tree_size"), int) and is_hex64(r.get("root"))
    }


@dataclass(frozen=True)
class Signed:
    """What a certificate's signed exports are checked against: the certificate's bytes and
    document, its leaf, the keys that may sign them, the program, the archived roots, its gate's
    name and its place in the status list."""

    cert: dict[str, Any]
    data: bytes
    leaf_index: int
    public_key: bytes  # the key that signed the certificate, which signs its exports
    created: str  # the credential's proof time: when the certificate was issued
    program: dict[str, str]
    roots: dict[int, bytes]
    gate_name: str
    ordinal: int | None

    @property
    def origin(self) -> str:
        return self.program["origin"]


def check_exports(
    s: Site,
    row: Mapping[str, Any],
    serial: str,
    made: list[tuple[str, bytes]] | None,
    signed: Signed | None,
    elsewhere: bool = False,
) -> None:
    """The exports a manifest row lists, against those remade (`made`; None when they cannot be,
    the reason reported where the certificate is checked, or where its inputs are when
    `elsewhere`), and the transparent statement against the certificate, its key and the log
    (`signed`)."""
    if "exports" not in row:
        return
    listed = row["exports"]
    report = s.report
    want = [rel for rel, _ in made] + [statement_path(serial), credential_path(serial)] if made is not None else None
    if not (isinstance(listed, list) and all(isinstance(p, str) for p in listed)):
        report.check(False, MANIFEST_FILE, f"certificate {serial}: exports is a list of site paths", want, show(listed))
        return
    if made is None and not elsewhere:
        report.check(
            False,
            MANIFEST_FILE,
            f"certificate {serial}: its exports cannot be remade (its run spec or pinned methodology is missing)",
        )
        return
    if want is not None:
        report.check(
            listed == want,
            MANIFEST_FILE,
            f"certificate {serial}: the exports listed differ from those its certificate makes",
            show(want, 300),
            show(listed, 300),
        )
    if signed is not None:
        rel = statement_path(serial)
        found = s.read(rel, f"the transparent statement of certificate {serial}")
        if found is not None:
            for p in statement_problems(
                found,
                signed.cert,
                signed.data,
                signed.origin,
                signed.public_key,
                ed25519_verify,
                signed.leaf_index,
                signed.roots,
            ):
                report.check(False, rel, p)
            report.checks += 1
        _check_credential(s, serial, signed)
    for rel, data in made or []:  # none remade when a reveal they need is not its commitment
        found = s.read(rel, f"an export of certificate {serial}")
        if found is None:
            continue
        report.check(
            found == data,
            rel,
            f"differs from the export remade from certificate {serial} (its subject, gate, verdict, figures or "
            "the certificate's SHA-256 are not the certificate's)",
            f"{len(data)} bytes of SHA-256 {sha256_hex(data)}",
            f"{len(found)} bytes of SHA-256 {sha256_hex(found)}",
        )


def _check_credential(s: Site, serial: str, signed: Signed) -> None:
    """The certificate's verifiable credential: remade but for its proof, which must verify with
    the key that signed the certificate, dated when it was issued."""
    rel = credential_path(serial)
    loaded = s.document(rel, f"the credential of certificate {serial}")
    if loaded is None or signed.ordinal is None:
        return
    try:
        want = certificate_credential(
            signed.cert, sha256_hex(signed.data), signed.program, signed.gate_name, signed.ordinal
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return  # a certificate of another shape: its own checks say how
    method = verification_method(signed.origin, signed.public_key)
    for p in proof_problems(loaded[1], want, signed.created, method, signed.public_key, ed25519_verify):
        s.report.check(False, rel, p)
    s.report.checks += 1


def check_credential_files(s: Site, manifest: Mapping[str, Any], ledger: Ledger) -> None:
    """The site's DID document (at both its places) and its status list: remade from the ledger's
    keys and revocations, the list signed by today's key. A site whose certificates have exports
    has them; one built before exports has none (accounting fails them as strays then), and once
    one certificate lists exports, every one must."""
    rows = [r for r in manifest.get("certificates", []) if isinstance(r, dict)]
    with_exports = sum(1 for r in rows if "exports" in r)
    if 0 < with_exports < len(rows):
        s.report.check(
            False,
            MANIFEST_FILE,
            f"{len(rows) - with_exports} certificate(s) list no exports while {with_exports} do: a site has exports "
            "for every certificate or for none",
        )
    if not with_exports:
        return
    program = {"name": str(manifest.get("name")), "origin": str(manifest.get("origin"))}
    document = canonical_bytes(did_document(program["origin"], current_keys(ledger.keys)))
    for rel in DID_PATHS:
        found = s.read(rel, "the DID document")
        if found is not None:
            s.report.check(
                found == document,
                rel,
                "differs from the DID document made from the keys the log has signed with and not revoked",
                f"{len(document)} bytes of SHA-256 {sha256_hex(document)}",
                f"{len(found)} bytes of SHA-256 {sha256_hex(found)}",
            )
    # Signed by today's key: the key valid for today's tree, as the checkpoint is.
    today = ledger.keys.valid_at(ledger.size)
    loaded = s.document(STATUS_LIST_PATH, "the credentials' status list")
    if loaded is None or not today:
        return
    key = today[-1].public_key
    ordinals = certificate_ordinals((serial, e.index) for serial, e in ledger.certificates.items())
    bits = revocation_bits(ordinals, ledger.revocations)
    method = verification_method(program["origin"], key)
    when = str(manifest.get("generated_at"))
    for p in status_problems(loaded[1], program, bits, when, method, key, ed25519_verify):
        s.report.check(False, STATUS_LIST_PATH, p)
    s.report.checks += 1


def exports_memo_key(
    memory: Memory,
    s: Site,
    row: Mapping[str, Any],
    data: bytes,
    index: int,
    spec: Mapping[str, Any] | None,
    public: bool,
    key: bytes,
    gate_name: str,
    ordinals: Mapping[str, int],
    roots: Mapping[int, bytes],
    program: Mapping[str, str],
    ledger: Ledger,
    vouched: Callable[[str], str | None] | None = None,
) -> str | None:
    """Everything a certificate's exports are checked against, for the memory: the certificate,
    its spec and pinned methodology, its items' commitments and which are revealed, the key, the
    gate's name, its place in the status list, the archived root its receipt needs, the program,
    and each export file's SHA-256: the one this run verified it has (`vouched`, so that a file
    check_files hashed is not read again for its key), else known from a mirror, else read.
    None when there is nothing to key."""
    listed = row.get("exports")
    if spec is None or not (isinstance(listed, list) and all(isinstance(p, str) for p in listed)):
        return None
    try:
        files = [[rel, _vouched_sha256(s, vouched, rel)] for rel in listed]
    except (OSError, ValueError):
        return None
    size = min((n for n in roots if n > index), default=None)
    method = spec.get("methodology")
    version = method.get("version") if isinstance(method, dict) else None
    pinned = ledger.methodologies.get(version) if isinstance(version, str) else None
    items = spec.get("items")
    commits = [
        [i, x.commitment]
        for i in (items if isinstance(items, list) else [])
        if isinstance(i, str) and (x := ledger.commit(i))
    ]
    return memory.recheck_key(
        "exports",
        sha256_hex(data),
        sha256_hex(canonical_bytes(dict(spec))),
        pinned.sha256 if pinned is not None else None,
        public,
        [[i, i in ledger.reveals] for i, _ in commits],
        commits,
        key.hex(),
        gate_name,
        ordinals.get(str(row.get("serial"))),
        [size, roots[size].hex()] if size is not None else None,
        dict(program),
        index,
        files,
    )


def _vouched_sha256(s: Site, vouched: Callable[[str], str | None] | None, rel: str) -> str:
    sha = vouched(rel) if vouched is not None and is_safe_path(rel) else None
    return sha if sha is not None else s.file_sha256(rel)


# ==============================================================================================
# generator/verifier/site/certificate_records.py: The documents a certificate publishes besides itself (format v1 §6),
#     each against when it falls due: its evidence files, its details documents and its grader record. One published
#     early would give answers away; one missing when due hides evidence.
# ==============================================================================================

def check_evidence_files(s: Site, cert: dict[str, Any], public: bool, ledger: Ledger) -> None:
    """Each evidence file the certificate lists, against its hash and size once it is due, and
    absent before: a secret gate's log published early would give its answers away. An entry
    check_certificate refuses (a bad name, no items) is not looked for."""
    serial, listed = cert.get("serial"), cert.get("evidence")
    if not isinstance(serial, str) or not isinstance(listed, list):
        return
    report = s.report
    for e in listed:
        if not (
            isinstance(e, dict)
            and is_evidence_name(e.get("name"))
            and isinstance(e.get("items"), list)
            and all(isinstance(i, str) for i in e["items"])
        ):
            continue
        rel = evidence_path(serial, e["name"])
        if not evidence_due(e, public, ledger.reveals):
            report.check(
                not os.path.lexists(s.root / rel),
                rel,
                f"certificate {serial}: evidence file published before every item it concerns is revealed",
                "not yet published",
                "published",
            )
            continue
        if s.path(rel, f"evidence of certificate {serial}") is None:
            continue  # missing: reported by path(), naming the file
        size, digest = s.file_size(rel), s.file_sha256(rel)
        report.check(
            size == e.get("size"),
            rel,
            "evidence file's size differs from the certificate's",
            show(e.get("size")),
            show(size),
        )
        report.check(
            digest == e.get("sha256"),
            rel,
            "evidence file does not hash to the SHA-256 the certificate lists",
            str(e.get("sha256")),
            digest,
        )


def published_records(
    s: Site, row: dict[str, Any], cert: dict[str, Any], spec: dict[str, Any], public: bool, ledger: Ledger, rel: str
) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
    """The details documents and grader record the manifest lists for a certificate, checked
    against its hashes and against when each is due (format v1 §6): a details document once its
    item is revealed, the grader record once every item is (at once on a public gate). One
    published early would leak answers; one missing when due hides evidence."""
    results = (
        [r for r in cert.get("results", []) if isinstance(r, dict) and isinstance(r.get("item"), str)]
        if isinstance(cert.get("results"), list)
        else []
    )
    sealed_due, due = due_records(results, spec["items"], public, ledger.reveals)
    details = _details_documents(s, row, cert.get("serial"), results, sealed_due, ledger, rel)
    return details, _grader_record(s, row, cert, due)


def _details_documents(
    s: Site,
    row: dict[str, Any],
    serial: Any,
    results: list[dict[str, Any]],
    sealed_due: list[dict[str, Any]],
    ledger: Ledger,
    rel: str,
) -> dict[str, dict[str, Any]]:
    """The details documents listed, by item: each the one a sealed result's hash names, of an item
    revealed, every one due listed, in result order."""
    report = s.report
    listed = row.get("details")
    if not isinstance(listed, list):
        report.check(False, MANIFEST_PATH, f"certificate {serial}: details must be a list of paths", found=show(listed))
        listed = []
    by_hash = {r.get("details"): r for r in results if isinstance(r.get("details"), str)}
    details: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for path in listed:
        loaded = s.document(path, f"details of certificate {serial}")
        if loaded is None:
            continue
        digest = sha256_hex(loaded[0])
        sealed = by_hash.get(digest)
        if not report.check(
            sealed is not None,
            str(path),
            "details document whose hash no sealed result of the certificate holds",
            f"one of the results' details hashes in {rel}",
            digest,
        ):
            continue
        assert sealed is not None
        item = sealed.get("item")
        report.check(
            item in ledger.reveals,
            str(path),
            f"details of {item} published while the item is sealed: they would reveal its answer",
            "published after the item's reveal",
            "published",
        )
        details[str(item)] = loaded[1]
        order.append(str(item))
    for r in sealed_due:
        report.check(
            r["item"] in details,
            MANIFEST_PATH,
            f"certificate {serial}: item {r['item']} is revealed but its details document is not published",
            "listed in details",
            "missing",
        )
    want_order = [r.get("item") for r in results if r.get("item") in details]
    report.check(
        order == want_order,
        MANIFEST_PATH,
        f"certificate {serial}: details are listed in result order",
        show(want_order),
        show(order),
    )
    return details


def _grader_record(s: Site, row: dict[str, Any], cert: dict[str, Any], due: bool) -> dict[str, Any] | None:
    """The grader record listed, if it is due and hashes to the certificate's grader.record."""
    report, serial = s.report, cert.get("serial")
    path = row.get("grader_record")
    if path is None:
        report.check(
            not due,
            MANIFEST_PATH,
            f"certificate {serial}: the grader record is due but not published",
            "published (a public gate's at once, a secret gate's once every item is revealed)",
            "null",
        )
        return None
    report.check(
        due,
        str(path),
        f"certificate {serial}: grader record published before every item of the certificate is revealed",
        "not yet published",
        "published",
    )
    loaded = s.document(path, f"grader record of {serial}")
    if loaded is None:
        return None
    want = cert.get("grader", {}).get("record") if isinstance(cert.get("grader"), dict) else None
    if report.check(
        sha256_hex(loaded[0]) == want,
        str(path),
        "grader record does not hash to the certificate's grader.record",
        show(want),
        sha256_hex(loaded[0]),
    ):
        return loaded[1] if isinstance(loaded[1], dict) else None
    return None


# ==============================================================================================
# generator/verifier/site/certificate_files.py: A site's certificates (format v1 §6): each certificate file against
#     its ledger leaf and signature, its details documents and grader record against its hashes and against when each
#     falls due, and then every rule of recheck.examine_certificate.
# ==============================================================================================

def check_certificates(
    s: Site,
    manifest: dict[str, Any],
    ledger: Ledger,
    specs: dict[str, dict[str, Any]],
    methodologies: dict[str, Methodology],
    key: bytes,
    memory: Memory | None = None,
    history: dict[str, Any] | None = None,
    vouched: Vouched | None = None,
) -> dict[str, tuple[str, list[Any]]]:
    """Check every certificate; return, for each run a label set measures, the serial and the
    open results the judge's labels of its certificate are taken from (agreement_files). With a
    `memory` and the SHA-256es this run `vouched` for, a certificate whose check passed in the
    release verified last and read nothing that differs now is not read again
    (certificate_memo.py)."""
    report = s.report
    run_rows = manifest["runs"]
    rows = ordered_ids(
        report, manifest["certificates"], MANIFEST_PATH, "certificates", "serial", list(ledger.certificates)
    )
    reveal_paths = {
        r["id"]: r.get("path") for r in manifest["reveals"] if isinstance(r, dict) and isinstance(r.get("id"), str)
    }
    program = {"name": str(manifest.get("name")), "origin": str(manifest.get("origin"))}
    run_paths = {r["id"]: r.get("spec") for r in run_rows if isinstance(r, dict) and isinstance(r.get("id"), str)}
    roots = history_roots(history)
    ordinals = certificate_ordinals((serial, e.index) for serial, e in ledger.certificates.items())
    digests = methodology_digests(methodologies)
    c = _Certificates(
        s,
        ledger,
        specs,
        methodologies,
        run_paths,
        RevealedAnswers(ledger, lambda item: _read_quietly(s, reveal_paths.get(item))),
        key,
        {e.run for e in ledger.label_sets.values()},
        memory,
        program,
        _RevealDocuments(s, ledger, reveal_paths),
        roots,
        ordinals,
        digests,
        Context(
            str(s.root),
            ledger,
            vouched,
            key,
            run_paths,
            reveal_paths,
            digests,
            ordinals,
            roots,
            program,
        )
        if vouched is not None
        else None,
    )
    for r in rows:
        if not _remembered(c, r):
            _check_and_remember(c, r)
    for row in run_rows:
        if isinstance(row, dict) and isinstance(row.get("id"), str) and row["id"] in ledger.runs:
            withdrawn = "withdrawn" if row["id"] in ledger.withdrawals else "open"
            want = c.verdicts.get(row["id"], "open") if row["id"] in ledger.certificate_of_run else withdrawn
            report.check(
                row.get("status") == want,
                MANIFEST_PATH,
                f"run {row['id']}: status differs from its certificate",
                want,
                show(row.get("status")),
            )
    return c.judged


def _read_quietly(s: Site, rel: Any) -> bytes | None:
    """A reveal document for scoring: publication.check_reveals reports whatever is wrong with
    it, so a file that cannot be read here is simply no answer."""
    if not is_safe_path(rel) or s.path(rel, "reveal") is None:
        return None
    try:
        return (s.root / rel).read_bytes()
    except OSError:
        return None


class _Clock:
    """This machine's time, read once and only if a certificate has an expiry: expiry is a
    state reported against the verifier's clock (FORMAT.md, reading 20), and a build that
    verifies its own output must not otherwise read the clock."""

    def __init__(self) -> None:
        self._now: str | None = None

    def __call__(self) -> str:
        if self._now is None:
            self._now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return self._now


@dataclass
class _Certificates:
    """What each certificate of a site is checked with, and what their checks gather: each run's
    verdict, and the open results of the runs a label set measures."""

    s: Site
    ledger: Ledger
    specs: dict[str, dict[str, Any]]
    methodologies: dict[str, Methodology]
    run_paths: dict[str, Any]
    answers: RevealedAnswers
    key: bytes
    measured: set[str]
    memory: Memory | None
    program: dict[str, str]
    reveal_of: Callable[[str], dict[str, Any] | None]
    roots: dict[int, bytes]
    ordinals: dict[str, int]
    methodology_digests: dict[str, str]  # version -> certificate_memo.methodology_digests of what was parsed
    memo: Context | None  # what a remembered certificate's key is computed against, with a memory
    now: _Clock = field(default_factory=_Clock)
    verdicts: dict[str, str] = field(default_factory=dict)
    judged: dict[str, tuple[str, list[Any]]] = field(default_factory=dict)


def _remembered(c: _Certificates, r: dict[str, Any]) -> bool:
    """Whether the certificate of row `r` passed in the release verified last and everything its
    check read is as it was then: its remembered counts and verdict are taken, its expiry judged."""
    serial = r.get("serial")
    ev = c.ledger.certificates.get(serial) if isinstance(serial, str) else None
    if c.memory is None or c.memo is None or ev is None or ev.run in c.measured:
        return False
    saved = c.memory.memo("certificates", ev.serial)
    found = Looked.loaded(saved) if saved is not None else None
    if saved is None or found is None or certificate_key(c.memory, c.memo, r, ev, found[1]) != found[0]:
        return False
    looked, report = found[1], c.s.report
    report.checks += looked.checks
    report.asserted += list(looked.asserted)
    c.verdicts[ev.run] = looked.verdict
    _expiry(c, ev.serial, looked.expires_at)
    c.memory.took_memo("certificates", ev.serial, saved)  # kept as read: the same list, not a copy
    return True


def _check_and_remember(c: _Certificates, r: dict[str, Any]) -> None:
    """Check the certificate of row `r` in full; remember what it read if nothing failed."""
    report = c.s.report
    failures, checks, asserted = len(report.failures), report.checks, len(report.asserted)
    read = _check_one_certificate(c, r)
    if read is None or c.memory is None or c.memo is None or len(report.failures) != failures:
        return
    ev, items, evidence, version, cert = read
    if ev.run in c.measured:
        return
    looked = Looked(
        items,
        evidence,
        version,
        report.checks - checks,
        tuple(report.asserted[asserted:]),
        str(cert.get("verdict")),
        cert.get("expires_at") if is_time(cert.get("expires_at")) else None,
    )
    key = certificate_key(c.memory, c.memo, r, ev, looked)
    if key is not None:
        c.memory.took_memo("certificates", ev.serial, looked.saved(key))


def _expiry(c: _Certificates, serial: Any, expires: Any) -> None:
    if is_time(expires) and expires < c.now():
        c.s.report.notes.append(f"certificate {serial} expired at {expires} (a state, not a failure)")
        c.s.report.expired.append({"serial": serial, "expires_at": expires})


def _check_one_certificate(
    c: _Certificates, r: dict[str, Any]
) -> tuple[CertificateEvent, tuple[str, ...], tuple[str, ...], str | None, dict[str, Any]] | None:
    """Check one certificate in full. When it could be read as a certificate of a spec, return
    what its check looked at (certificate_memo.Looked): its leaf, the items whose reveal it read,
    the evidence files it looked for, its methodology version, and the certificate."""
    report, ledger = c.s.report, c.ledger
    read = _read_certificate(c, r)
    if read is None:
        return None
    ev, rel, data, cert = read
    serial = r.get("serial")
    run = ledger.runs[ev.run]
    spec = c.specs.get(ev.run)
    if isinstance(spec, SpecSummary):
        spec = _whole_spec(c, ev.run)
    if isinstance(cert, dict):
        c.verdicts[ev.run] = str(cert.get("verdict"))
        _expiry(c, serial, cert.get("expires_at"))
    gate = ledger.gates.get(run.gate)
    public = bool(gate and gate.public)
    version = spec["methodology"].get("version") if spec is not None else None
    pinned = c.methodologies.get(version) if isinstance(version, str) else None
    details: dict[str, dict[str, Any]] = {}
    record = None
    _exports(c, r, cert, data, ev.index, spec, pinned, public)
    if isinstance(cert, dict) and spec is not None:
        details, record = published_records(c.s, r, cert, spec, public, ledger, rel)
        check_evidence_files(c.s, cert, public, ledger)
        if ev.run in c.measured:  # kept only for a run some label set measures: a verifier's memory stays flat
            opened = (
                cert.get("results") if public else [d.get("result") for d in details.values() if isinstance(d, dict)]
            )
            c.judged[ev.run] = (str(serial), opened if isinstance(opened, list) else [])
    recheck = None
    if c.memory is not None and spec is not None:
        recheck = _recheck_key(c, c.memory, data, ev, spec, pinned is not None, public, details, record)
        known = c.memory.recheck(recheck)
        if known is not None:
            report.checks += known[0]
            report.asserted += known[1]
            return _looked_at(ev, cert, spec, version)
    found = examine_certificate(
        cert,
        ev,
        run,
        spec,
        pinned,
        public,
        c.run_paths.get(ev.run, ""),
        c.answers.answers(spec["items"]) if spec is not None else {},
        details,
        record,
    )
    report.add(found.problems, rel, checks=found.checks)
    report.asserted += found.asserted
    if recheck is not None and c.memory is not None and not found.problems:
        c.memory.passed(recheck, found.checks, found.asserted)
    return _looked_at(ev, cert, spec, version)


def _whole_spec(c: _Certificates, run: str) -> dict[str, Any] | None:
    """The spec of a run remembered whole (run_memo.py), read now for a certificate checked in
    full: the file whose SHA-256 the run's key holds, checked then (its check is not counted
    again, so that the counts are those of a check from nothing). Its bytes are hashed again: the
    file could have been replaced since the site's files were hashed."""
    rel = c.run_paths.get(run)
    data = c.s.read(rel, f"run spec of {run}")
    want, digest = c.ledger.runs[run].sha256, sha256_hex(data) if data is not None else None
    if digest is not None and digest != want:
        c.s.report.check(False, str(rel), f"SHA-256 differs from run {run}'s ledger leaf", want, digest)
        return None
    try:
        spec = parse_canonical(data) if data is not None else None
    except FormatError as e:
        c.s.report.check(False, str(rel), f"run spec of {run}: {e}")
        return None
    return effective_spec(spec, c.ledger) if isinstance(spec, dict) else None


def _looked_at(
    ev: CertificateEvent, cert: Any, spec: dict[str, Any] | None, version: Any
) -> tuple[CertificateEvent, tuple[str, ...], tuple[str, ...], str | None, dict[str, Any]] | None:
    """The items whose reveal a certificate's check read (its spec's, its results', its
    evidence's) and the evidence files it looked for, in a fixed order; None if it could not be
    read as a certificate of a spec."""
    if not isinstance(cert, dict) or spec is None or not (version is None or isinstance(version, str)):
        return None
    items = [i for i in spec.get("items", []) if isinstance(i, str)]
    results = cert.get("results")
    items += (
        [r["item"] for r in results if isinstance(r, dict) and isinstance(r.get("item"), str)]
        if isinstance(results, list)
        else []
    )
    evidence: list[str] = []
    listed = cert.get("evidence")
    for e in listed if isinstance(listed, list) else []:
        if isinstance(e, dict) and is_evidence_name(e.get("name")) and isinstance(e.get("items"), list):
            items += [i for i in e["items"] if isinstance(i, str)]
            evidence.append(evidence_path(ev.serial, e["name"]))
    return ev, tuple(dict.fromkeys(items)), tuple(evidence), version, cert


def _exports(
    c: _Certificates,
    r: dict[str, Any],
    cert: Any,
    data: bytes,
    index: int,
    spec: dict[str, Any] | None,
    pinned: Methodology | None,
    public: bool,
) -> None:
    serial = str(r.get("serial"))
    # Signed by the key that signed the certificate, as the certificate is (a rotation or
    # revocation since changes nothing: the DID document no longer names a revoked key).
    valid = c.ledger.keys.valid_at(index + 1)
    key = valid[-1].public_key if valid else c.key
    issued = str(cert.get("issued_at")) if isinstance(cert, dict) else ""
    gate = c.ledger.gates.get(c.ledger.runs[c.ledger.certificates[serial].run].gate)
    gate_name = gate.name if gate is not None else ""
    memo = (
        exports_memo_key(
            c.memory,
            c.s,
            r,
            data,
            index,
            spec,
            public,
            key,
            gate_name,
            c.ordinals,
            c.roots,
            c.program,
            c.ledger,
            c.memo.vouched if c.memo is not None else None,
        )
        if c.memory is not None
        else None
    )
    report = c.s.report
    if memo is not None and c.memory is not None:
        known = c.memory.recheck(memo)
        if known is not None:  # the same exports of the same certificate passed before
            report.checks += known[0]
            return
    before, checks = len(report.failures), report.checks
    made, elsewhere = None, False
    if isinstance(cert, dict) and spec is not None and pinned is not None:
        try:
            made = eee_export(cert, sha256_hex(data), index, spec, pinned, c.program, public, c.reveal_of, c.ledger)
        except Unremade:
            elsewhere = True  # a reveal document that is not its commitment: failed where reveals are
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            made = None  # a certificate of another shape: its own checks say how
    signed = (
        Signed(cert, data, index, key, issued, c.program, c.roots, gate_name, c.ordinals.get(serial))
        if isinstance(cert, dict)
        else None
    )
    check_exports(c.s, r, serial, made, signed, elsewhere)
    if memo is not None and c.memory is not None and len(report.failures) == before and not elsewhere:
        c.memory.passed(memo, report.checks - checks, [])


class _RevealDocuments:
    """Reveal documents as the exports read them, each read, hashed and parsed once a run: a
    public gate's certificates draw on one small pool of items (at a tenth of the bench scale,
    25,000 reads of 100 documents)."""

    def __init__(self, s: Site, ledger: Ledger, paths: dict[str, Any]) -> None:
        self.s, self.ledger, self.paths = s, ledger, paths
        self._known: dict[str, dict[str, Any] | None] = {}

    def __call__(self, item: str) -> dict[str, Any] | None:
        if item in self._known:
            return self._known[item]
        doc = _reveal_document(self.s, self.ledger, self.paths, item)
        if len(self._known) >= ANSWER_CACHE:
            self._known.clear()
        self._known[item] = doc
        return doc


def _reveal_document(s: Site, ledger: Ledger, paths: dict[str, Any], item: str) -> dict[str, Any] | None:
    """An item's reveal document, as the site publishes it, once it is revealed."""
    if item not in ledger.reveals or not isinstance(paths.get(item), str):
        return None
    data = _read_quietly(s, paths[item])
    commit = ledger.commit(item)
    if data is None or commit is None or sha256_hex(data) != commit.commitment:
        return None  # not the committed document: failed where reveals are checked
    try:
        doc = parse_canonical(data)
    except FormatError:
        return None
    return doc if isinstance(doc, dict) else None


def _read_certificate(c: _Certificates, r: dict[str, Any]) -> tuple[CertificateEvent, str, bytes, Any] | None:
    """The certificate a manifest row names, if its ledger leaf exists and its file can be read:
    the row against the leaf, the file against the leaf's hash and the signature of the key
    valid when it was issued. Returns the leaf, the file's path, bytes and document."""
    report = c.s.report
    serial = r.get("serial")
    ev = c.ledger.certificates.get(serial) if isinstance(serial, str) else None
    report.add(
        check_keys(
            r, ("serial", "run", "path", "details", "grader_record"), ("exports",), where=f"certificates[{serial}]"
        ),
        MANIFEST_PATH,
    )
    if ev is None:
        return None
    report.check(
        r.get("run") == ev.run,
        MANIFEST_PATH,
        f"certificate {serial}: run differs from the ledger",
        ev.run,
        show(r.get("run")),
    )
    loaded = c.s.document(r.get("path"), f"certificate {serial}")
    if loaded is None:
        return None
    data, cert = loaded
    rel = str(r.get("path"))
    # Signed when it was issued, by the key valid then: a rotation later does not re-sign it.
    valid = c.ledger.keys.valid_at(ev.index + 1)
    c.s.signed(rel, data, valid[-1].public_key if valid else c.key, f"certificate {serial}")
    digest = sha256_hex(data)
    report.check(digest == ev.sha256, rel, "SHA-256 differs from the certificate's ledger leaf", ev.sha256, digest)
    return ev, rel, data, cert


def _recheck_key(
    c: _Certificates,
    memory: Memory,
    data: bytes,
    ev: CertificateEvent,
    spec: dict[str, Any],
    pinned: bool,
    public: bool,
    details: dict[str, dict[str, Any]],
    record: dict[str, Any] | None,
) -> str:
    """The key a certificate's recomputation is remembered under: every input of it, exactly, so
    that a key that passed before passes again."""
    ledger = c.ledger
    run = ledger.runs[ev.run]
    version = spec["methodology"].get("version")
    revealed = [[i, x.commitment] for i in spec["items"] if i in ledger.reveals and (x := ledger.commit(i))]
    return memory.recheck_key(
        sha256_hex(data),
        [ev.serial, ev.run, ev.sha256, ev.index, ev.at],
        [run.id, run.sha256, run.subject, run.gate, run.index, run.at],
        sha256_hex(canonical_bytes(spec)),
        [
            version,
            ledger.methodologies[version].sha256
            if isinstance(version, str) and version in ledger.methodologies
            else None,
            # What was parsed: a file whose bytes differ from the leaf's hash is parsed all the same.
            c.methodology_digests.get(version) if isinstance(version, str) else None,
        ],
        pinned,
        public,
        str(c.run_paths.get(ev.run, "")),
        revealed,
        [[i, sha256_hex(canonical_bytes(d))] for i, d in sorted(details.items())],
        sha256_hex(canonical_bytes(record)) if record is not None else None,
    )


# ==============================================================================================
# generator/verifier/site/agreement_files.py: A site's judge-agreement files (FORMAT.md, "Judge agreement (v2)"): each
#     label set the ledger commits, absent until it is due and then published byte for byte as committed, and its
#     report, which must be exactly the one recomputed here from the published labels and the judge's labels of the
#     run's certificate. A key holder can sign any figure; only a recomputed one is evidence.
# ==============================================================================================

# What the certificate check hands over for each run it read: the certificate's serial and the
# open results the judge's labels are read from (a public certificate's own, or the results of
# its published details documents).
Judged = Mapping[str, tuple[str, list[Any]]]


def check_label_sets(s: Site, ledger: Ledger, specs: Mapping[str, dict[str, Any]], judged: Judged) -> None:
    report = s.report
    _check_no_stray_files(s, ledger)
    for event in ledger.label_sets.values():
        run = ledger.runs[event.run]
        spec = specs.get(event.run)
        if spec is None:
            continue  # the run spec's own failure is reported by the run check
        gate = ledger.gates.get(run.gate)
        public = bool(gate and gate.public)
        due = label_set_due(public, event.run in ledger.certificate_of_run, spec["items"], ledger.reveals)
        lrel, rrel = labels_path(event.id), report_path(event.id)
        if not due:
            for rel in (lrel, rrel):
                report.check(
                    not os.path.lexists(s.root / rel),
                    rel,
                    f"label set {event.id} published before the judge's labels of run {event.run} are: "
                    "human labels of sealed items say how good the subject's answers were",
                    "not yet published",
                    "published",
                )
            continue
        loaded = s.document(lrel, f"label set {event.id}")
        if loaded is None:
            continue
        data, doc = loaded
        digest = sha256_hex(data)
        if not report.check(
            digest == event.sha256,
            lrel,
            f"label set {event.id} is not the one committed in the ledger at entries[{event.index}]",
            event.sha256,
            digest,
        ):
            continue
        shape = label_set_problems(doc, event.id, event.run, spec)
        if not report.add(shape, lrel, checks=1):
            continue
        got = s.document(rrel, f"agreement report of label set {event.id}")
        if got is None:
            continue
        if event.run not in judged:
            report.check(
                False,
                rrel,
                f"agreement report of label set {event.id} cannot be recomputed: the certificate of run "
                f"{event.run} could not be read",
            )
            continue
        serial, results = judged[event.run]
        # Reported at the report: it is the measurement that a silent judge would flatter.
        if not report.add(judge_coverage_problems(doc, results), rrel, checks=1):
            continue
        try:
            want = report_document(doc, digest, serial, judge_labels_of(results))
        except AgreementError as e:
            report.check(False, rrel, f"the judge's labels of certificate {serial} cannot be measured: {e}")
            continue
        if canonical_bytes(want) == got[0]:
            report.checks += 1
            dims = len(want["dimensions"])
            report.notes.append(
                f"label set {event.id}: the judge's agreement with blind human labels on {dims} dimension(s) "
                "recomputed exactly"
            )
            continue
        report.check(False, rrel, *_first_difference(want, got[1]))


def _first_difference(want: dict[str, Any], found: Any) -> tuple[str, str, str, str]:
    """The message, expected and found values and the member of the first place a published
    report differs from the recomputed one."""
    if not isinstance(found, dict):
        return ("an agreement report is an object", "the recomputed report", show(found, 80), "")
    for k in sorted(want.keys() | found.keys()):
        if k not in want or k not in found or k == "dimensions":
            continue
        if canonical_bytes(want[k]) != canonical_bytes(found[k]):
            return ("differs from the recomputed report", show(want[k], 120), show(found[k], 120), k)
    extra = sorted(found.keys() - want.keys())
    missing = sorted(want.keys() - found.keys())
    if extra or missing:
        return ("the report's members are not a report's", show(sorted(want)), show(sorted(found)), "")
    rows, published = want["dimensions"], found["dimensions"]
    if not isinstance(published, list) or len(published) != len(rows):
        return (
            "the report's dimensions are not the label set's and the judge's",
            show([r["dimension"] for r in rows]),
            show(published, 120),
            "dimensions",
        )
    for i, (w, f) in enumerate(zip(rows, published, strict=True)):
        if not isinstance(f, dict):
            return ("a dimension's row is an object", show(w, 120), show(f, 120), f"dimensions[{i}]")
        for k in sorted(w.keys() | f.keys()):
            if k not in w or k not in f or canonical_bytes(w[k]) != canonical_bytes(f[k]):
                return (
                    f"the figure differs from the one recomputed from the published labels ({w['dimension']})",
                    show(w.get(k), 120),
                    show(f.get(k), 120),
                    f"dimensions[{i}].{k}",
                )
    return ("differs from the recomputed report", "", "", "")


def _check_no_stray_files(s: Site, ledger: Ledger) -> None:
    """Nothing under agreement/ but the files of committed label sets: a report of labels no
    ledger entry committed would read as evidence it is not. (A committed set's files published
    before they are due are the due check's to report.)"""
    folder = s.root / "agreement"
    if not folder.is_dir() or folder.is_symlink():
        return
    known = {p for e in ledger.label_sets.values() for p in (labels_path(e.id), report_path(e.id))}
    for here, dirs, names in os.walk(folder):
        rel_dir = os.path.relpath(here, s.root).replace(os.sep, "/")
        if rel_dir.count("/") >= 1:
            # Deeper than agreement/<id>/ nothing of a label set lives: report the folder, not its tree.
            for d in sorted(dirs):
                s.report.check(False, f"{rel_dir}/{d}", "a folder under agreement/ that no label set of the ledger has")
            dirs.clear()
        for name in sorted(names):
            rel = f"{rel_dir}/{name}"
            s.report.check(
                rel in known,
                rel,
                "a file under agreement/ that no label set of the ledger has",
                "agreement/<id>.json or agreement/<id>/labels.json of a committed label set",
                "a stray file",
            )


# ==============================================================================================
# generator/verifier/site/timestamp_files.py: A site's timestamp tokens (FORMAT.md, "Draws and timestamps"): each RFC
#     3161 token over an archived checkpoint, checked against the certificate of the authority the program lists, and
#     the times of the events it holds bounded by it.
# ==============================================================================================

AUTHORITIES_PATH = "ledger/timestamp-authorities.json"


TIMESTAMPS_FOLDER = "ledger/timestamps/"


TOKEN_RE = re.compile(r"ledger/timestamps/([1-9][0-9]{0,18})/([a-z0-9][a-z0-9_-]{0,63})\.tst")


@dataclass(frozen=True)
class OutsideBound:
    """An authority's word that the first `size` events existed by `time`."""

    size: int
    authority: str
    time: str


def timestamp_token_path(size: int, authority: str) -> str:
    return f"{TIMESTAMPS_FOLDER}{size}/{authority}.tst"


def checkpoint_body(note: bytes) -> bytes:
    """The signed body of a checkpoint (its lines up to the blank line): what a token stamps, so
    that cosignatures added to the archived file later do not change it."""
    end = note.find(b"\n\n")
    return note if end < 0 else note[: end + 1]


def authorities_problems(doc: Any) -> list[str]:
    """The shape of the authority list: `{"type":"timestamp-authorities","v":1,"authorities":[…]}`,
    each authority a distinct `name`, its `url`, and its `certificate` (PEM) allowed to stamp."""
    if not (isinstance(doc, dict) and doc.get("type") == "timestamp-authorities" and doc.get("v") == 1):
        return ['must be {"type":"timestamp-authorities","v":1,"authorities":[…]}']
    rows = doc.get("authorities")
    if not isinstance(rows, list):
        return ["authorities must be a list"]
    problems = [p.message for p in check_keys(doc, ("type", "v", "authorities"))]
    names = set()
    for n, row in enumerate(rows):
        where = f"authorities[{n}]"
        problems += [f"{where}: {p.message}" for p in check_keys(row, ("name", "url", "certificate"))]
        if not isinstance(row, dict):
            continue
        if not is_id(row.get("name")) or row["name"] in names:
            problems.append(f"{where}.name: must be a distinct id (lowercase letters, digits, - and _)")
        names.add(row.get("name"))
        if not (isinstance(row.get("url"), str) and row["url"].startswith(("https://", "http://"))):
            problems.append(f"{where}.url: must be an http(s) URL")
        try:
            cert = read_x509_certificate(str(row.get("certificate", "")).encode())
        except FormatError as e:
            problems.append(f"{where}.certificate: {e}")
            continue
        if why := x509_timestamping_problem(cert):
            problems.append(f"{where}.certificate: may not sign timestamp tokens: {why}")
    return problems


def check_timestamps(s: Site, ledger: Ledger, history: dict[str, Any] | None) -> list[OutsideBound]:
    """Every token under ledger/timestamps/ against its listed authority and archived checkpoint,
    and the events it holds against its time; the bounds that passed, oldest size first."""
    report = s.report
    tokens = sorted(f for f in s.files_found if f.startswith(TIMESTAMPS_FOLDER))
    if not tokens and AUTHORITIES_PATH not in s.files_found:
        return []
    authorities: dict[str, str] = {}
    loaded = s.document(AUTHORITIES_PATH, "the timestamp authorities")
    if loaded is not None:
        found = authorities_problems(loaded[1])
        for p in found:
            report.check(False, AUTHORITIES_PATH, p)
        if not found:
            authorities = {r["name"]: r["certificate"] for r in loaded[1]["authorities"]}
    # The history's own check reports a malformed row; a token is only matched against sound ones.
    rows = as_list(as_dict(history).get("checkpoints"))
    archived = {r["tree_size"]: r["checkpoint"] for r in rows if is_int(as_dict(r).get("tree_size"))}
    bounds = []
    for rel in tokens:
        bound = _check_token(s, ledger, rel, authorities, archived)
        if bound is not None:
            bounds.append(bound)
    for b in bounds:
        report.notes.append(
            f"checkpoint {b.size} timestamped by {b.authority} at {b.time}: events 0-{b.size - 1} existed by then"
        )
    return sorted(bounds, key=lambda b: (b.size, b.time, b.authority))


def _check_token(
    s: Site, ledger: Ledger, rel: str, authorities: dict[str, str], archived: dict[int, Any]
) -> OutsideBound | None:
    report = s.report
    m = TOKEN_RE.fullmatch(rel)
    if m is None:
        report.check(False, rel, "not a token's path", "ledger/timestamps/<size>/<authority>.tst", rel)
        return None
    size, name = int(m.group(1)), m.group(2)
    if name not in authorities:
        report.check(False, rel, f"a token of {name}, which the timestamp authorities do not list", AUTHORITIES_PATH)
        return None
    checkpoint = archived.get(size)
    if not isinstance(checkpoint, str) or size > ledger.size:
        report.check(False, rel, f"a token over size {size}, which the checkpoint history does not archive")
        return None
    note, token = s.read(checkpoint, f"checkpoint {size}"), s.read(rel, "a timestamp token")
    if note is None or token is None:
        return None
    try:
        stamped = verify_timestamp_token(token, authorities[name].encode(), checkpoint_body(note), f"checkpoint {size}")
    except (FormatError, ValueError, OverflowError) as e:
        # ValueError: a number too long to print, in a token nobody signed yet.
        report.check(False, rel, f"the timestamp token does not verify: {e}")
        return None
    last = ledger.keys.leaf_time(size - 1)
    first_late = ledger.keys.leaves_before(time_text(unix_time(stamped.gen_time) + 1), size)
    if not report.check(
        last <= stamped.gen_time,
        rel,
        f"an event is dated after the time {name} stamped a checkpoint that already holds it",
        f"entries[{first_late}] and every later event of checkpoint {size} dated {stamped.gen_time} or earlier",
        f"entries[{size - 1}] dated {last}",
    ):
        return None
    return OutsideBound(size, name, stamped.gen_time)


def check_draws_logged_in_time(
    s: Site,
    ledger: Ledger,
    bounds: list[OutsideBound],
    specs: dict[str, dict[str, Any]],
    methodologies: dict[str, Methodology],
) -> None:
    """What a draw rests on was logged before its round: no token over a checkpoint that does not
    yet hold it may be dated at or after the round's publication. For a drawn run that is its
    registration; for a scheduled retirement, every leaf before it (its pool). The log then still
    lacked them, so the operator wrote them once the round was public, whatever times they carry."""
    for run_id, spec in specs.items():
        draw, run = as_dict(spec.get("draw")), ledger.runs.get(run_id)
        m = methodologies.get(str(as_dict(spec.get("methodology")).get("version")))
        if draw and run is not None and m is not None and m.beacon is not None and is_int(draw.get("round")):
            _logged_before(s, bounds, run.index + 1, m.beacon.round_time(draw["round"]), f"run {run_id}'s registration")
    by_index = sorted(ledger.methodologies.values(), key=lambda e: e.index)
    for d in ledger.retirement_draws:
        before = [e for e in by_index if e.index < d.index]
        m = methodologies.get(before[-1].version) if before else None
        if m is not None and m.beacon is not None:
            _logged_before(
                s,
                bounds,
                d.index,
                m.beacon.round_time(d.round),
                f"the leaves before the retirement drawn at entries[{d.index}]",
            )


def _logged_before(s: Site, bounds: list[OutsideBound], size: int, published: int, what: str) -> None:
    """No token dated at or after `published` over a checkpoint of fewer than `size` leaves."""
    at = time_text(published)
    late = [b for b in bounds if b.size < size and b.time >= at]
    if late:
        b = late[0]
        s.report.check(
            False,
            timestamp_token_path(b.size, b.authority),
            f"{what} was logged after its round was public: {b.authority} stamped checkpoint {b.size}, which "
            f"does not hold it, at {b.time}",
            f"logged before the round's publication, {at}",
            f"logged after {b.time}",
        )


# ==============================================================================================
# generator/verifier/site/log_list_file.py: The site's own entry in the witness network's log list (`ledger/log-
#     list.txt`), checked against the log's keys when the site publishes one.
# ==============================================================================================

LOG_LIST_PATH = "ledger/log-list.txt"


def check_log_list_file(s: Site, origin: str, key_rows: Sequence[KeyRow], ring: KeyRing) -> None:
    """`ledger/log-list.txt`, if the site has one: a log list whose every log is this log, by one
    of its valid keys, and that lists its active Ed25519 key."""
    if LOG_LIST_PATH not in s.files_found:
        return
    data = s.read(LOG_LIST_PATH, "the program's log-list entry")
    if data is None:
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        s.report.check(False, LOG_LIST_PATH, "not UTF-8 text", "a log list (logs/v0)", f"byte {e.start}")
        return
    logs, problems = parse_log_list(text, LOG_LIST_PATH)
    statuses: dict[VerifierKey | CosignerKey, str] = {row.key: row.status for row in key_rows}
    statuses.update({span.key: span.status for span in ring.ml_dsa})
    for log in logs:
        problems += _listed_log_problems(log, origin, statuses)
    active = [row.key for row in key_rows if row.status == "active"]
    if active and not any(log.key == active[0] for log in logs):
        problems.append(
            Problem(
                "the log list does not list the log's active key, the one its checkpoints are signed with",
                LOG_LIST_PATH,
                expected=f"vkey {active[0].vkey}",
                found=", ".join(log.vkey for log in logs[:3]) + (f" and {len(logs) - 3} more" if len(logs) > 3 else "")
                or "no log",
            )
        )
    s.report.add(problems, LOG_LIST_PATH)


def _listed_log_problems(log: ListedLog, origin: str, statuses: dict[VerifierKey | CosignerKey, str]) -> list[Problem]:
    where = f"line {log.line}"
    problems = []
    if log.origin is not None and log.origin != origin:
        problems.append(
            Problem("the listed origin is not the site's", LOG_LIST_PATH, where, f"origin none or {origin}", log.origin)
        )
    status = statuses.get(log.key)
    if status is None:
        problems.append(
            Problem(
                "the listed key is not one of the log's keys (keys.json)",
                LOG_LIST_PATH,
                where,
                "the vkey of a key keys.json lists as active",
                log.vkey,
            )
        )
    elif status != "active":
        problems.append(
            Problem(
                f"the listed key is {status} (keys.json): a witness that took it would cosign what a key the log "
                "gave up signs",
                LOG_LIST_PATH,
                where,
                "the vkey of a key keys.json lists as active",
                log.vkey,
            )
        )
    return problems


# ==============================================================================================
# generator/verifier/site/accounting.py: Every file of the ledger's folder, of an artifact's proof and of a
#     certificate's evidence, accounted for (FORMAT.md v2, "History"; "Evidence files").
# ==============================================================================================

LEDGER_FOLDER = "ledger/"


MANIFEST_FOLDER = MANIFEST_PARTS_DIR + "/"


PROOF_SUFFIX = ".tlog-proof"


# The ledger's own documents (each checked where its rule is), the trust policy, the log's entry
# in the witness network's log list, and its pages.
_LEDGER_DOCUMENTS = (
    "ledger/checkpoint",
    HISTORY_PATH,
    REVOCATIONS_PATH,
    "ledger/policy.txt",
    LOG_LIST_PATH,
    "ledger/index.html",
)


_LEDGER_PAGE_RE = re.compile(r"ledger/page-[1-9][0-9]*\.html")


_EVIDENCE_RE = re.compile(r"certificates/([^/]+)/evidence/([^/]+)")


# The folders of the record's documents, each holding only what the manifest (and keys.json, and
# each certificate's evidence list) names, beside its list pages.
ARTIFACT_FOLDERS = ("certificates/", "reveals/", "runs/", "methodology/", "keys/")


_LIST_PAGE_RE = re.compile(
    r"(certificates|runs|methodology|keys)/index\.html|(certificates|runs)/page-[1-9][0-9]*\.html"
)


def check_accounted(
    s: Site,
    manifest: dict[str, Any],
    ledger: Ledger,
    history: dict[str, Any] | None,
    key_rows: Sequence[KeyRow] = (),
) -> None:
    """Fail every file under ledger/, named *.tlog-proof, or under certificates/, reveals/, runs/,
    methodology/ or keys/ that no document of the site accounts for; check the partial tiles of
    archived sizes."""
    # The site's files sorted into what each check below looks at, in one pass over them all.
    ledger_files, proof_files, evidence, credentials, artifacts, parts = [], [], [], [], [], []
    for f in s.files_found:
        if f.startswith(LEDGER_FOLDER):
            ledger_files.append(f)
            continue
        if f.startswith(MANIFEST_FOLDER):
            parts.append(f)
        proof = f.endswith(PROOF_SUFFIX)
        if proof:
            proof_files.append(f)
        is_evidence = "/evidence/" in f and _EVIDENCE_RE.fullmatch(f) is not None
        if is_evidence:
            evidence.append(f)
        if f in CREDENTIAL_FILES or f.startswith(CREDENTIAL_FOLDERS):
            credentials.append(f)
        # Proofs and evidence files have their checks of their own: each file is reported once.
        if not proof and not is_evidence and f.startswith(ARTIFACT_FOLDERS):
            artifacts.append(f)
    _check_ledger_folder(s, manifest, ledger.size, history, sorted(ledger_files), ledger.commit_count)
    proofs = {
        row["path"] + PROOF_SUFFIX
        for kind in ("reveals", "certificates")
        for row in manifest[kind]
        if isinstance(row, dict) and isinstance(row.get("path"), str)
    }
    for rel in sorted(proof_files):
        s.report.check(
            rel in proofs,
            rel,
            "an inclusion proof beside no artifact the manifest lists",
            "FILE.tlog-proof beside a reveal or certificate of the manifest",
            "a stray proof",
        )
    if site_format(manifest) >= MANIFEST_V4:
        _check_manifest_folder(s, manifest, sorted(parts))
    _check_evidence_folder(s, manifest, sorted(evidence))
    _check_credential_files(s, manifest, sorted(credentials))
    _check_artifact_folders(s, manifest, key_rows, sorted(artifacts))


def _check_manifest_folder(s: Site, manifest: dict[str, Any], present: list[str]) -> None:
    """A v4 site's manifest/ holds the parts its index names (docs/formats/v4.md), read whole by
    then into the manifest's lists: any other file there is one no reader is told of."""
    expected = {
        manifest_part_path(name, k) for name in PARTED_LISTS for k in range(manifest_part_count(len(manifest[name])))
    }
    for rel in present:
        s.report.check(
            rel in expected,
            rel,
            "a file under manifest/ that is no part the manifest names",
            "only manifest/<list>/<k>.json, the parts of the manifest's lists",
            "a stray file",
        )


def _strings(*values: Any) -> set[str]:
    return {v for v in values if isinstance(v, str)}


def _check_artifact_folders(s: Site, manifest: dict[str, Any], key_rows: Sequence[KeyRow], present: list[str]) -> None:
    """A file in a folder of the record that nothing names, a certificate of no ledger entry, a
    document nested under a certificate's folder, would read as part of the record unchecked."""
    rows = {kind: [r for r in manifest[kind] if isinstance(r, dict)] for kind in ("certificates", "reveals", "runs")}
    expected: set[str] = set()
    for r in rows["certificates"]:
        expected |= _strings(r.get("path"), r.get("grader_record"))
        expected |= _strings(r["path"] + ".sig") if isinstance(r.get("path"), str) else set()
        expected |= _strings(*r["details"]) if isinstance(r.get("details"), list) else set()
        expected |= _strings(*r["exports"]) if isinstance(r.get("exports"), list) else set()
        if isinstance(r.get("serial"), str):
            expected.add(f"certificates/{r['serial']}/index.html")
    expected |= {p for r in rows["reveals"] for p in _strings(r.get("path"))}
    expected |= {p for r in rows["runs"] for p in _strings(r.get("spec"))}
    for m in manifest["methodology"] if isinstance(manifest.get("methodology"), list) else []:
        if isinstance(m, dict):
            expected |= _strings(m.get("document"), m.get("parameters"))
            if isinstance(m.get("version"), str):
                expected.add(f"methodology/{m['version']}/index.html")
    expected |= {r.pem for r in key_rows if r.pem is not None}
    for rel in present:
        if rel in expected or _LIST_PAGE_RE.fullmatch(rel):
            continue
        folder = rel.split("/", 1)[0]
        s.report.check(
            False,
            rel,
            f"a file under {folder}/ that no document of the site accounts for",
            _WHAT_IS_EXPECTED[folder],
            "a stray file",
        )


_WHAT_IS_EXPECTED = {
    "certificates": "a certificate the manifest lists, its signature and proof, its page, the details documents, "
    "grader record and exports the manifest lists for it, and certificates/<serial>/evidence/<name> for each "
    "evidence file it lists",
    "reveals": "a reveal the manifest lists, and its proof",
    "runs": "a run spec the manifest lists, and the runs' list pages",
    "methodology": "a methodology document or parameters file the manifest lists, and their pages",
    "keys": "a PEM file keys.json names, and the keys' page",
}


def _check_ledger_folder(
    s: Site,
    manifest: dict[str, Any],
    size: int,
    history: dict[str, Any] | None,
    present: list[str],
    commits: int = 0,
) -> None:
    expected = set(_LEDGER_DOCUMENTS)
    for value in manifest["ledger"].values():
        if isinstance(value, str):
            expected |= {value, value + ".sig"}
    expected |= {HISTORY_PATH + ".sig", REVOCATIONS_PATH + ".sig"}
    rows = history["checkpoints"] if history else []
    expected |= {r["checkpoint"] for r in rows if isinstance(r["checkpoint"], str)}
    expected |= {r["consistency"] for r in rows if isinstance(r["consistency"], str)}
    v3 = site_format(manifest) >= MANIFEST_V3
    if v3:  # the commitment list's parts (docs/formats/v3.md, 4)
        expected |= {commitment_part_path(k) for k in range(commitment_part_count(commits))}
    today = {LEDGER_FOLDER + p for p, _ in tile_paths(size)} if history else set()
    expected |= today
    archived: dict[int, set[str]] = {}
    for m in sorted({r["tree_size"] for r in rows} - {size}):
        if 0 < m < size:
            # Every full tile of a smaller log is one of today's: only its partial ones can be
            # its own (naming each of its tiles cost a second at a million leaves and 46 sizes).
            archived[m] = {LEDGER_FOLDER + p for p in partial_tile_paths(m)} - today
            expected |= archived[m]
    for rel in present:
        # Timestamp files are checked, each named when it fails, by timestamp_files.py.
        if (
            rel in expected
            or _LEDGER_PAGE_RE.fullmatch(rel)
            or rel == AUTHORITIES_PATH
            or rel.startswith(TIMESTAMPS_FOLDER)
        ):
            continue
        if rel.startswith("ledger/checkpoints/"):
            why = "a checkpoint that no row of the checkpoint history archives (a fork, or a size the log never had)"
        elif v3 and V2_CONSISTENCY_RE.fullmatch(rel):
            why = (
                "a format v2 consistency proof (ledger/consistency/<size>.json) in a format v3 or v4 site, whose every "
                "proof is a history row's ledger/consistency/<M0>-<M>.json"
            )
        elif rel.startswith("ledger/consistency/"):
            why = "a consistency proof of no row of the checkpoint history"
        elif rel.startswith(COMMITMENT_PARTS_DIR + "/"):
            why = "a part of the commitment list that the ledger's commits do not make"
        elif rel.startswith("ledger/tile/"):
            why = f"a tile of no size the log published (today's {size} and the history's)"
        else:
            why = "a file under ledger/ that no document of the site accounts for"
        s.report.check(
            False, rel, why, "only the ledger's documents, the history's files and its tiles", "a stray file"
        )
    # A partial tile kept for an archived size restates that size's tree: it must hold that tree.
    # That tree is a prefix of today's, whose tiles check_tiles holds against today's root: each
    # such tile is the head of today's tile of the same level and index. Comparing the two costs
    # two small files a tile, where re-hashing the tiled log would cost the whole log per size.
    held = set(present)
    today_by_name = {_tile_name(p): (p, w) for p, w in tile_paths(size)} if history else {}
    read = tile_reader(s)
    for m, paths in archived.items():
        for rel in sorted(paths & held):
            width = int(rel.rsplit(".p/", 1)[1])  # a partial tile's path ends with its width
            problem = _archived_tile_problem(read, rel, width, today_by_name)
            s.report.check(
                problem is None,
                rel,
                f"a tile of archived size {m} that does not hold the ledger's first {m} entries: {problem}",
            )


def _tile_name(path: str) -> str:
    """A tile's level (or entries) and index, without its width: an archived size's partial tile
    and today's tile at the same place share it."""
    return path.split(".p/", 1)[0]


def _archived_tile_problem(
    read: Callable[[str], bytes | None], rel: str, width: int, today_by_name: dict[str, tuple[str, int]]
) -> str | None:
    path = rel[len(LEDGER_FOLDER) :]
    today, today_width = today_by_name[_tile_name(path)]
    mine, theirs = read(path), read(today)
    if mine is None:
        return "it cannot be read"
    if theirs is None:
        return f"today's tile {LEDGER_FOLDER}{today}, which it must begin, is missing"
    try:
        if path.startswith("tile/entries/"):
            head = parse_entry_bundle(theirs, today_width, LEDGER_FOLDER + today)[:width]
            same = parse_entry_bundle(mine, width, rel) == head
        else:
            same = len(mine) == width * TILE_HASH_BYTES and theirs[: len(mine)] == mine
    except FormatError as e:
        return str(e)
    return None if same else f"it is not the head of today's tile {LEDGER_FOLDER}{today}"


# The files of the certificates' credentials (FORMAT.md, "Exports"): present with exports, and only then.
CREDENTIAL_FILES = ("did.json", ".well-known/did.json", "credentials/status.json")


CREDENTIAL_FOLDERS = ("credentials/", ".well-known/")


def _check_credential_files(s: Site, manifest: dict[str, Any], present: list[str]) -> None:
    rows = [r for r in manifest["certificates"] if isinstance(r, dict)]
    exports = any("exports" in r for r in rows)
    for rel in present:
        s.report.check(
            exports and rel in CREDENTIAL_FILES,
            rel,
            "a credential file the site's exports do not account for",
            "did.json, .well-known/did.json and credentials/status.json, on a site whose certificates list exports",
            "a stray file",
        )


def _check_evidence_folder(s: Site, manifest: dict[str, Any], present: list[str]) -> None:
    if not present:
        return
    paths = {
        row["serial"]: row["path"]
        for row in manifest["certificates"]
        if isinstance(row, dict) and isinstance(row.get("serial"), str) and isinstance(row.get("path"), str)
    }
    listed: dict[str, set[str]] = {}
    for rel in present:
        m = _EVIDENCE_RE.fullmatch(rel)
        assert m is not None
        serial = m.group(1)
        if serial not in listed:
            listed[serial] = set()
            loaded = s.document(paths[serial], f"certificate {serial}") if serial in paths else None
            evidence = loaded[1].get("evidence") if loaded and isinstance(loaded[1], dict) else None
            for e in evidence if isinstance(evidence, list) else []:
                if isinstance(e, dict) and isinstance(e.get("name"), str):
                    listed[serial].add(evidence_path(serial, e["name"]))
        s.report.check(
            rel in listed[serial],
            rel,
            "an evidence file that no certificate of the manifest lists",
            f"a file certificate {serial}'s evidence list names",
            "a stray file",
        )


# ==============================================================================================
# generator/verifier/site/remote.py: Reading a site from elsewhere, for `verify.py mirror` (and the generator's
#     monitor): an http:// or https:// URL over kept-alive connections (several requests at once, each on a connection
#     of its own), or a local folder (a path or a file:// URL), each file streamed to a sink with bounded sizes and
#     silences.
# ==============================================================================================

REMOTE_TIMEOUT = 30.0  # seconds a connection may stay silent


REMOTE_REDIRECTS = 5


REMOTE_CHUNK = 1 << 16


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


USER_AGENT = "transparency-verify-mirror/1"


Sink = Callable[[bytes], None]


class RemoteUnreadable(Exception):
    """The site cannot be read from where it was named: not a URL, unreachable, an HTTP error."""


class RemoteTooLarge(RemoteUnreadable):
    """A file larger than anything the site's format lets it be."""


class Remote:
    """A site to read from: `label` names it in messages, `url_of` names one of its files."""

    label: str = ""
    plain_http: bool = False  # over the network without TLS: anyone on the way can answer

    def url_of(self, rel: str) -> str:
        raise NotImplementedError

    def stream(self, rel: str, limit: int, sink: Sink) -> int | None:
        raise NotImplementedError

    def get(self, rel: str, limit: int) -> bytes | None:
        """A whole (small) file, or None when the site does not have it."""
        parts: list[bytes] = []
        n = self.stream(rel, limit, parts.append)
        return None if n is None else b"".join(parts)

    def close(self) -> None:
        """Let go of kept-alive connections."""


def open_remote(where: str) -> Remote:
    """The site at `where`: an http(s):// URL, a file:// URL or a folder's path."""
    if where.lower().startswith("file://"):
        parts = urllib.parse.urlsplit(where)
        if parts.netloc not in ("", "localhost"):
            raise RemoteUnreadable(f"{where}: a file:// URL of another host")
        return FolderRemote(Path(urllib.request.url2pathname(parts.path)), where)
    if "://" in where:
        return HttpRemote(where)
    return FolderRemote(Path(where), where)


class FolderRemote(Remote):
    """A site in a folder of this machine, read only through regular files and never a link."""

    def __init__(self, root: Path, label: str) -> None:
        if not root.is_dir():
            raise RemoteUnreadable(f"{label}: not a folder, nor an http:// or https:// URL")
        self.root = root
        self.label = label

    def url_of(self, rel: str) -> str:
        return str(self.root / rel)

    def stream(self, rel: str, limit: int, sink: Sink) -> int | None:
        path = self.root
        try:
            for part in rel.split("/"):
                path = path / part
                if path.is_symlink():
                    return None  # a site is data from elsewhere: a link could lead to any file here
            # O_NONBLOCK: a FIFO named like a file of the site is refused, never waited on.
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            raise RemoteUnreadable(f"{path}: {e.strerror or e}") from None
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            n = 0
            while chunk := f.read(REMOTE_CHUNK):
                n += len(chunk)
                if n > limit:
                    raise RemoteTooLarge(f"{path}: more than the {limit} bytes such a file can have")
                sink(chunk)
            return n


class HttpRemote(Remote):
    """A site served over http:// or https://: redirects followed within the scheme given, a
    proxy from the environment tunnelled through (never for the loopback). `loopback_http_only`
    refuses plain http but on this machine (the monitor's rule: it pins a key on first contact);
    `file_deadline` bounds the seconds one file may take in all, against a server dripping bytes."""

    def __init__(
        self,
        url: str,
        *,
        loopback_http_only: bool = False,
        file_deadline: float | None = None,
        timeout: float = REMOTE_TIMEOUT,
        user_agent: str = USER_AGENT,
    ) -> None:
        self.loopback_http_only = loopback_http_only
        self.file_deadline = file_deadline
        try:
            given = urllib.parse.urlsplit(url)
            given.port  # noqa: B018 -- raises ValueError for a malformed port
        except ValueError as e:
            raise RemoteUnreadable(f"{url}: not a URL ({e})") from None
        self.scheme = given.scheme.lower()
        problem = self._refused(given) or (
            "a site URL has no query or fragment" if given.query or given.fragment else None
        )
        if problem:
            raise RemoteUnreadable(f"{url}: {problem}")
        self.base = urllib.parse.urlunsplit((self.scheme, given.netloc, given.path.rstrip("/") + "/", "", ""))
        self.label = self.base
        self.plain_http = self.scheme == "http" and given.hostname not in LOOPBACK_HOSTS
        context = ssl.create_default_context() if self.scheme == "https" else None
        self.pool = _Connections(self.scheme, context, timeout, user_agent)

    def _refused(self, parts: urllib.parse.SplitResult) -> str | None:
        """What is wrong with fetching from `parts` for a site given with this scheme."""
        if self.scheme not in ("http", "https"):
            return "not an http:// or https:// URL"
        if parts.scheme.lower() != self.scheme:
            return f"{parts.scheme or 'no'} scheme, not {self.scheme}"
        if not parts.hostname or parts.username is not None or parts.password is not None:
            return "a URL with a host name and no user name or password"
        if self.loopback_http_only and self.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
            return "plain http:// is accepted only for 127.0.0.1 or localhost (tests and previews); use https://"
        return None

    def url_of(self, rel: str) -> str:
        return self.base + urllib.parse.quote(rel)

    def stream(self, rel: str, limit: int, sink: Sink) -> int | None:
        where = self.url_of(rel)
        deadline = time.monotonic() + self.file_deadline if self.file_deadline is not None else None
        for _ in range(REMOTE_REDIRECTS + 1):
            parts = urllib.parse.urlsplit(where)
            try:
                status, location, n = self.pool.get(parts, limit, sink, deadline)
            except RemoteTooLarge as e:
                raise RemoteTooLarge(f"{where}: {e}") from None
            except (http.client.HTTPException, OSError, ValueError) as e:
                raise RemoteUnreadable(f"{where}: {getattr(e, 'reason', None) or e or type(e).__name__}") from None
            if status in (301, 302, 303, 307, 308) and location is not None:
                target = urllib.parse.urljoin(where, location)
                wrong = self._refused(urllib.parse.urlsplit(target))
                if wrong:
                    raise RemoteUnreadable(f"{where}: redirected to {target}, which is refused: {wrong}")
                where = target
                continue
            if status in (404, 410):
                return None
            if status != 200:
                raise RemoteUnreadable(f"{where}: HTTP {status}")
            return n
        raise RemoteUnreadable(f"{where}: more than {REMOTE_REDIRECTS} redirects")

    def close(self) -> None:
        self.pool.close()


class _Connections:
    """Kept-alive connections, each lent to one request at a time (several threads ask at once): a
    mirror reads thousands of files, and a new TLS connection for each would cost more than the
    files. A connection goes back to the pool only after its response was read to the end and the
    server did not ask to close it."""

    def __init__(self, scheme: str, context: Any, timeout: float, user_agent: str) -> None:
        self.scheme = scheme
        self.context = context
        self.timeout = timeout
        self.user_agent = user_agent
        self.idle: dict[tuple[str, int], list[Any]] = {}
        self.lock = threading.Lock()

    def _connect(self, host: str, port: int) -> Any:
        proxy = None if host in LOOPBACK_HOSTS else urllib.request.getproxies().get(self.scheme)
        if proxy and urllib.request.proxy_bypass(host):
            proxy = None
        target = (host, port)
        if proxy:
            p = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            target = (p.hostname or "", p.port or 80)
        if self.scheme == "https":
            conn: Any = http.client.HTTPSConnection(*target, timeout=self.timeout, context=self.context)
        else:
            conn = http.client.HTTPConnection(*target, timeout=self.timeout)
        if proxy:
            conn.set_tunnel(host, port)
        return conn

    def get(self, parts: Any, limit: int, sink: Sink, deadline: float | None) -> tuple[int, str | None, int]:
        host = parts.hostname or ""
        key = (host, parts.port or (443 if self.scheme == "https" else 80))
        with self.lock:
            conn = self.idle.get(key, []).pop() if self.idle.get(key) else None
        fresh = conn is None
        if conn is None:
            conn = self._connect(*key)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = {"User-Agent": self.user_agent, "Accept-Encoding": "identity"}
        try:
            try:
                conn.request("GET", path, headers=headers)
                response = conn.getresponse()
            except ConnectionError:  # http.client's RemoteDisconnected among them
                if fresh:
                    raise
                # A kept-alive connection the server closed meanwhile: once more on a new one.
                conn.close()
                conn = self._connect(*key)
                conn.request("GET", path, headers=headers)
                response = conn.getresponse()
            n = _read_into(response, limit, sink, deadline) if response.status == 200 else len(response.read(1 << 16))
        except BaseException:
            conn.close()
            raise
        if response.will_close or not response.isclosed():
            conn.close()
        else:
            with self.lock:
                self.idle.setdefault(key, []).append(conn)
        return response.status, response.getheader("Location"), n

    def close(self) -> None:
        with self.lock:
            for conns in self.idle.values():
                for conn in conns:
                    conn.close()
            self.idle.clear()


def _read_into(response: Any, limit: int, sink: Sink, deadline: float | None) -> int:
    """The body, to `sink`: no more than `limit` bytes, and exactly its Content-Length (http.client
    raises IncompleteRead on a body cut short). A server that stays silent for the connection's
    timeout fails the read; one that drips bytes, the deadline if there is one."""
    length = response.getheader("Content-Length", "")
    if length.strip().isdigit() and int(length) > limit:
        raise RemoteTooLarge(f"{int(length)} bytes, more than the {limit} such a file can have")
    n = 0
    while chunk := response.read(REMOTE_CHUNK):
        n += len(chunk)
        if n > limit:
            raise RemoteTooLarge(f"more than the {limit} bytes such a file can have")
        if deadline is not None and time.monotonic() > deadline:
            raise RemoteTooLarge("still arriving after its deadline")
        sink(chunk)
    return n


# ==============================================================================================
# generator/verifier/site/mirror_folder.py: The folder a mirror keeps (`verify.py mirror`, site/mirror.py): which
#     files it already holds with the bytes a list names, and how a run's new files replace the old ones, never
#     through a link.
# ==============================================================================================

INCOMING = ".mirror-incoming"  # the files of a run not yet swapped in, inside the mirror's folder


SUB_LIST_FOLDER = "sums/"


SUB_LIST_SUFFIX = ".sha256"


def is_sub_list(rel: str) -> bool:
    """Whether a listed path is itself a list of further files (v3's `sums/<p>.sha256`)."""
    return rel.startswith(SUB_LIST_FOLDER) and rel.endswith(SUB_LIST_SUFFIX)


class LocalCopy:
    """The mirror's folder as it is: what the record says the mirror wrote, checked by identity."""

    def __init__(self, root: Path, record: dict[str, Written]) -> None:
        self.root = root
        self.root_name = os.fspath(root)  # asked once a file: a Path's string is made on each use
        self.record = record
        self.written: dict[str, Written] = {}  # what the folder holds now, as far as this run knows
        # Files held as listed whose identity a record cannot hold (a time past 2262): by SHA-256,
        # for this run only; the next hashes them again.
        self.unrecorded: dict[str, str] = {}
        # folder -> neither it nor a folder above it is a link: asked once a folder, not once a
        # file for each folder above it.
        self.link_free: dict[str, bool] = {}
        self.refuted: set[str] = set()  # files the record vouched for whose bytes, read, were others

    def _answers(self, names: Iterable[str], files: Mapping[str, str]) -> dict[str, bool | None]:
        """Whether the folder holds each of `names` with its SHA-256 in `files`, as far as this
        run knows it or the file's lstat (and whether a folder above it is a link) tells: True
        when known so, or when the record names that SHA-256 and the file kept the identity it
        had then (and `written` says so from now on); False when it is known with other bytes,
        the record names other bytes, or there is no regular file there to read (missing, a
        link, under a link, unreadable); None when only hashing the file can tell.

        One loop for every file of a run: most files are answered by one lstat and the record,
        and at 300,000 files a call or two a file more cost a second."""
        written, unrecorded, record, refuted = self.written, self.unrecorded, self.record, self.refuted
        root, lstat, is_regular, pack = self.root_name, os.lstat, stat.S_ISREG, IDENTITY.pack
        answers: dict[str, bool | None] = {}
        folder, free = None, True  # names come folder by folder: asked once a folder
        for rel in names:
            digest = files[rel]
            known = written.get(rel)
            if known is not None:
                answers[rel] = known[:32].hex() == digest
                continue
            if rel in unrecorded:
                answers[rel] = unrecorded[rel] == digest
                continue
            parent = rel.rpartition("/")[0]
            if parent != folder:
                folder, free = parent, self._link_free(parent)
            try:
                st = lstat(f"{root}/{rel}") if free else None
            except OSError:
                st = None
            if st is None or not is_regular(st.st_mode):
                answers[rel] = False
                continue
            known = record.get(rel)
            try:
                # Unchanged since the mirror hashed it: the record says what it holds.
                still = known is not None and known[32:] == pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
            except struct.error:  # a time past 2262: never recorded so
                still = False
            if known is None or not still or rel in refuted:
                answers[rel] = None
                continue
            same = known[:32].hex() == digest
            if same:
                written[rel] = known
            answers[rel] = same
        return answers

    def _hashed(self, rel: str, digest: str) -> bool:
        """Whether the regular file `rel` (the record could not answer for it) has SHA-256
        `digest`, hashed now."""
        path = self.root / rel
        try:
            with path.open("rb") as f:
                found = hashlib.file_digest(f, "sha256").hexdigest()
            st = path.lstat()
        except OSError:
            return False
        if found != digest:
            return False
        value = known_value(found, identity_of(st))
        if value is None:
            self.unrecorded[rel] = found
        else:
            self.written[rel] = value
        return True

    def _link_free(self, folder: str) -> bool:
        """Whether no folder on the way to `folder` (itself included) is a link; "" is the root."""
        free = self.link_free.get(folder)
        if free is not None:  # asked before: the answer for nearly every file
            return free
        chain = []  # the folders not yet asked, deepest first, up to one asked or the root
        while folder and folder not in self.link_free:
            chain.append(folder)
            folder = folder.rpartition("/")[0]
        free = self.link_free.get(folder, True) if folder else True
        for f in reversed(chain):
            if free:
                try:  # a string path: 60,000 folders at the full scale
                    free = not stat.S_ISLNK(os.lstat(f"{self.root_name}/{f}").st_mode)
                except OSError:  # missing, or it cannot be asked: it holds nothing
                    free = False
            self.link_free[f] = free
        return free

    def _answered(self, rel: str, digest: str) -> bool | None:
        """As `holds`, without hashing: None when only hashing the file can tell."""
        return self._answers((rel,), {rel: digest})[rel]

    def forget(self, rel: str) -> None:
        """`rel` is no longer known to be held (removed, or its bytes found to be others)."""
        self.written.pop(rel, None)
        self.unrecorded.pop(rel, None)

    def holds(self, rel: str, digest: str) -> bool:
        """Whether the folder holds `rel` with SHA-256 `digest`: known so this run, recorded so
        and unchanged since, or hashed now. A link, or a path through one, holds nothing."""
        answer = self._answered(rel, digest)
        return answer if answer is not None else self._hashed(rel, digest)

    def read_if_recorded(self, rel: str, digest: str) -> bytes | None:
        """The bytes of a list the record says the folder holds with this SHA-256 (no file is
        hashed to decide whether to read it; the bytes read are checked), else None."""
        if self._answered(rel, digest) is not True:
            return None
        return self._read(rel, digest)

    def read_if_held(self, rel: str, digest: str) -> bytes | None:
        """The bytes of a list the folder already holds with this SHA-256, else None."""
        if not self.holds(rel, digest):
            return None
        return self._read(rel, digest)

    def _read(self, rel: str, digest: str) -> bytes | None:
        """The file's bytes if they have the SHA-256 `digest`, else None; and then the record no
        longer answers for it in this run (it vouched for bytes the file does not have): the file
        is hashed if asked about again, and so fetched and written in its place."""
        try:
            data = (self.root / rel).read_bytes()
        except OSError:
            data = None
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            self.forget(rel)
            self.refuted.add(rel)
            return None
        return data

    def plan(self, files: dict[str, str], jobs: int) -> list[str]:
        """The listed files to fetch (in path order): those the folder does not hold as listed."""
        names = sorted(files)  # paths read from UTF-8, whose byte order is their code points' order
        # Most files are answered by one lstat and the record, here: handing each of them to a
        # thread costs more in the pool's locks than the lstat. Only the files to hash go to the
        # threads.
        answers = self._answers(names, files)
        unsure = [rel for rel in names if answers[rel] is None]
        answers.update(zip(unsure, windowed(lambda rel: self._hashed(rel, files[rel]), unsure, jobs), strict=True))
        todo = [rel for rel in names if not answers[rel]]
        # A file held as an earlier try's list said, which this list changed, is no longer held:
        # the new bytes fetched replace it (swap_in keeps only what is still held).
        for rel in todo:
            self.forget(rel)
        return todo

    def previously_written(self) -> set[str]:
        """The files an earlier run wrote: the record's, or with no record, those the lists in the
        folder name (the lists the mirror itself wrote last)."""
        if self.record:
            return set(self.record)
        found: set[str] = set()
        todo = [SUMS_PATH]
        while todo and len(found) < 1 << 24:
            rel = todo.pop()
            try:
                text = (self.root / rel).read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for line in text.split("\n"):
                m = SUMS_LINE_RE.fullmatch(line)
                if m and is_safe_path(m.group(2)) and m.group(2) not in found:
                    found.add(m.group(2))
                    if is_sub_list(m.group(2)):
                        todo.append(m.group(2))
        return found


def parents_of(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


def swap_in(
    folder: Path,
    local: LocalCopy,
    files: dict[str, str],
    staged: dict[tuple[str, str], tuple[Path, int]],
    sums: bytes,
    signature: bytes,
) -> int:
    """Everything arrived as listed: remove what the mirror wrote and the site no longer lists,
    rename the new files into place, the signed list last. Returns how many files were removed."""
    removed = 0
    for rel in sorted(local.previously_written() - set(files)):
        # The record's paths are checked here, where one is used as a path, not at each reading.
        if is_safe_path(rel) and _remove(folder, rel):
            removed += 1
        local.forget(rel)
    for rel in sorted(files):
        if rel in local.written or rel in local.unrecorded:
            continue
        source, _ = staged[(rel, files[rel])]
        target = _prepare(folder, rel)
        os.replace(source, target)
        value = known_value(files[rel], identity_of(target.lstat()))
        if value is not None:
            local.written[rel] = value
    for rel, data in ((SUMS_SIG_PATH, signature), (SUMS_PATH, sums)):
        temp = folder / INCOMING / f"{rel}.part"
        with open(temp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, _prepare(folder, rel))
    _sync_folder(folder)
    return removed


def _prepare(folder: Path, rel: str) -> Path:
    """The path `rel` names in the folder, its parent folders made; a link on the way, or a file
    where a folder must be, is refused: the mirror writes inside its folder only."""
    for parent in parents_of(rel):
        p = folder / parent
        try:
            st = p.lstat()
        except FileNotFoundError:
            p.mkdir()
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise OSError(f"{p}: a link or a file where the mirror needs a folder for {rel}; move it away")
    target = folder / rel
    if target.is_symlink() or target.is_dir():
        raise OSError(f"{target}: a link or a folder where the mirror writes the file {rel}; move it away")
    return target


def _remove(folder: Path, rel: str) -> bool:
    """Remove a file the mirror wrote, and the folders it leaves empty; never a link's target."""
    if any((folder / p).is_symlink() for p in parents_of(rel)):
        return False
    path = folder / rel
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return False
        path.unlink()
    except OSError:
        return False
    for parent in reversed(parents_of(rel)):
        try:
            (folder / parent).rmdir()
        except OSError:
            break  # not empty
    return True


def _sync_folder(folder: Path) -> None:
    if os.name == "nt":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ==============================================================================================
# generator/verifier/site/mirror.py: Keeping a copy of a published site in a folder (`verify.py mirror URL DIR`): what
#     changed is fetched, checked against the signed SHA256SUMS before it replaces anything, and swapped in.
# ==============================================================================================

MAX_DOCUMENT_BYTES = 1 << 24  # transparency.json, keys.json


MAX_SIGNATURE_BYTES = 1 << 12


MAX_LIST_BYTES = 1 << 31  # a v2 SHA256SUMS of millions of files


MAX_FILE_BYTES = 1 << 40


class MirrorFailed(Exception):
    """The site failed a check the mirror makes before copying it (exit status 1)."""


class _Torn(Exception):
    """A file arrived with other bytes than the list read at the start of the run said."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


@dataclass
class Outcome:
    """What a run did, and the SHA-256 of every file of the mirror as the mirror knows it."""

    fetched: int = 0
    fetched_bytes: int = 0
    kept: int = 0
    removed: int = 0
    files: dict[str, Written] = field(default_factory=dict)

    def summary(self) -> str:
        return f"fetched {self.fetched} file(s), {self.fetched_bytes} bytes; kept {self.kept}; removed {self.removed}"


def mirror_site(
    remote: Remote,
    folder: Path,
    pin: str | None,
    record: dict[str, Written],
    jobs: int = 8,
    progress: TextIO | None = None,
    remembered: Callable[[str], ListMemory | None] = lambda origin: None,
) -> Outcome:
    """Bring `folder` to the release `remote` publishes now; `record` is what an earlier run
    wrote there ({} when there is none), `remembered(origin)` the lists of the release the
    verifier verified last, if it remembers them. Raise MirrorFailed (the site failed a check,
    the folder is unchanged) or RemoteUnreadable (it could not be read)."""
    say = _Progress(progress)
    key, in_hand, origin = site_key(remote, pin)
    lists = remembered(origin)
    source = "pinned with --key" if pin else "the site's keys.json: compare it out of band, or pin it with --key"
    say(f"{remote.label}: the list must be signed by {fingerprint(key)} ({source})")
    folder.mkdir(parents=True, exist_ok=True)
    local = LocalCopy(folder, record)
    incoming = folder / INCOMING
    shutil.rmtree(incoming, ignore_errors=True)  # what an interrupted run left
    incoming.mkdir(mode=0o700)
    staged: dict[tuple[str, str], tuple[Path, int]] = {}  # fetched and checked, reused by a second try
    try:
        for attempt in (1, 2):
            try:
                listing = _read_listing(remote, key, local, in_hand, jobs, lists)
                todo = local.plan(listing.files, jobs)
                outcome = Outcome(kept=len(listing.files) - len(todo))
                _fetch(remote, incoming / str(attempt), todo, listing, staged, jobs, say, outcome)
                break
            except _Torn as e:
                if attempt == 2:
                    raise MirrorFailed(
                        f"{e}; it changed again after a fresh {SUMS_PATH}: the mirror is unchanged"
                    ) from None
                say(f"{e}: reading a fresh {SUMS_PATH} and trying once more")
        outcome.removed = swap_in(folder, local, listing.files, staged, listing.sums, listing.signature)
    finally:
        shutil.rmtree(incoming, ignore_errors=True)
    outcome.files = local.written
    say(outcome.summary())
    return outcome


def site_key(remote: Remote, pin: str | None) -> tuple[bytes, dict[str, bytes], str]:
    """The key SHA256SUMS must be signed with: keys.json's active key, which must be the one
    `pin` names (or, pinned to one of its earlier keys, is checked against the ledger's
    hand-overs by the verification that follows); the bytes read to learn it, by path; and the
    manifest's origin."""
    in_hand: dict[str, bytes] = {}
    manifest = _document(remote, MANIFEST_PATH, "manifest", in_hand)
    origin, keys_rel = manifest.get("origin"), manifest.get("keys")
    if not isinstance(origin, str) or not is_safe_path(keys_rel):
        raise MirrorFailed(f"{remote.url_of(MANIFEST_PATH)}: no origin or no safe keys path")
    doc = _document(remote, keys_rel, "keys", in_hand)
    rows, problems = key_rows(doc.get("keys"), origin, published=True)
    if problems:
        raise MirrorFailed(f"{remote.url_of(keys_rel)}: {problems[0].describe()}")
    active = [r.key for r in rows if r.status == "active"]
    if len(active) != 1:
        raise MirrorFailed(f"{remote.url_of(keys_rel)}: {len(active)} active keys, expected exactly one")
    if pin is None:
        return active[0].public_key, in_hand, origin
    pinned = pin.strip()
    for row in rows:
        k = row.key
        if pinned.startswith("SHA256:"):
            match = pinned == k.fingerprint
        else:
            given = parse_vkey(pinned)  # the caller checked that it parses
            match = (given.public_key, given.name) == (k.public_key, k.name)
        if match:
            return active[0].public_key, in_hand, origin
    raise MirrorFailed(
        f"{remote.url_of(keys_rel)}: no key of the site is the key given with --key (expected {pinned}, found "
        f"{', '.join(r.key.fingerprint for r in rows) or 'none'})"
    )


def _document(remote: Remote, rel: str, what: str, in_hand: dict[str, bytes]) -> dict[str, Any]:
    data = remote.get(rel, MAX_DOCUMENT_BYTES)
    if data is None:
        raise RemoteUnreadable(f"{remote.url_of(rel)}: no such file: not a transparency site's {what}")
    in_hand[rel] = data
    try:
        doc = parse_canonical(data)
    except FormatError as e:
        raise MirrorFailed(f"{remote.url_of(rel)}: {what}: {e}") from None
    if not isinstance(doc, dict):
        raise MirrorFailed(f"{remote.url_of(rel)}: {what}: not a JSON object")
    return doc


@dataclass
class _Listing:
    sums: bytes
    signature: bytes
    files: dict[str, str]  # every listed path, the sub-lists included, to its SHA-256
    # Files already fetched with the listed bytes (the sub-lists read while descending, the
    # manifest and keys read for the key): written as they are, not asked for again.
    fetched_lists: dict[str, bytes]


def _read_listing(
    remote: Remote, key: bytes, local: "LocalCopy", in_hand: dict[str, bytes], jobs: int, lists: ListMemory | None
) -> _Listing:
    sums = remote.get(SUMS_PATH, MAX_LIST_BYTES)
    signature = remote.get(SUMS_SIG_PATH, MAX_SIGNATURE_BYTES)
    if sums is None or signature is None:
        missing = SUMS_PATH if sums is None else SUMS_SIG_PATH
        raise MirrorFailed(f"{remote.url_of(missing)}: no such file (every site publishes it)")
    if not ed25519_verify(key, signature, sums):
        raise MirrorFailed(
            f"{remote.url_of(SUMS_SIG_PATH)}: does not verify {SUMS_PATH}'s {len(sums)} bytes with {fingerprint(key)}"
        )
    listing = _Listing(sums, signature, {}, {})
    wave: list[tuple[str, bytes]] = [(SUMS_PATH, sums)]
    descended: set[str] = set()

    def read(item: tuple[str, str]) -> tuple[str, bytes, bool]:
        rel, digest = item
        held = local.read_if_held(rel, digest)
        if held is not None:
            return rel, held, False
        return rel, _check_arrived(remote, rel, digest, remote.get(rel, MAX_LIST_BYTES)), True

    children: list[tuple[str, str]] = []  # the lists of the next level to read

    def add(name: str, rows: Iterable[tuple[str, str]], descend: bool = True) -> None:
        for rel, digest in rows:
            if listing.files.setdefault(rel, digest) != digest:
                raise MirrorFailed(f"{remote.url_of(name)}: {rel} is listed again with another SHA-256")
            if not is_sub_list(rel) or rel in descended:
                continue
            descended.add(rel)
            if not descend:  # a list of a subtree taken whole below
                continue
            m = LIST_RE.fullmatch(rel)
            # A list the verifier checked in the release it verified last, with these very
            # bytes, heads the lists it then found below it: their rows are known.
            span = lists.subtree(m.group(1), digest) if lists is not None and m else None
            if span is None or lists is None:
                children.append((rel, digest))
                continue
            for kept in lists.lists(span):
                add(list_path(kept.prefix), ((path, sha) for sha, path in kept.rows()), descend=False)

    while wave:
        children.clear()
        for name, data in wave:
            add(name, _lines(remote.url_of(name), data))
        # The lists of one level are read together, a few requests at a time: a tree costs a
        # round trip per level, not one per list. A list the folder holds as the record says is
        # read here: a thread's locks cost more than reading a small file.
        got = {rel: kept for rel, digest in children if (kept := local.read_if_recorded(rel, digest)) is not None}
        for rel, data, fetched in windowed(read, [c for c in children if c[0] not in got], jobs):
            if fetched:
                listing.fetched_lists[rel] = data
            got[rel] = data
        wave = [(rel, got[rel]) for rel, _ in children]
    _check_shape(remote, listing.files)
    for rel, data in in_hand.items():
        if listing.files.get(rel) == hashlib.sha256(data).hexdigest():
            listing.fetched_lists.setdefault(rel, data)
    return listing


def _lines(url: str, data: bytes) -> Iterable[tuple[str, str]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MirrorFailed(f"{url}: not valid UTF-8") from None
    if text and not text.endswith("\n"):
        raise MirrorFailed(f"{url}: the last line does not end with a newline")
    plain = plain_sums_rows(text)
    if plain is not None:
        yield from ((path, sha) for sha, path in plain)
        return
    for n, line in enumerate(text.split("\n")[:-1], start=1):
        m = SUMS_LINE_RE.fullmatch(line)
        if not m or not is_safe_path(m.group(2)):
            raise MirrorFailed(
                f"{url}: line {n}: expected '<64 hex>  <safe relative path>' (no '..', no leading '/'), found "
                f"{printable(line)!r}: refused, nothing was written"
            )
        yield m.group(2), m.group(1)


def _check_shape(remote: Remote, files: dict[str, str]) -> None:
    """Paths a folder can hold side by side, none of them where the mirror keeps its own files."""
    folders: set[str] = set()  # every folder the paths run through: a look a path, not one a level
    for rel in files:
        parent = rel.rpartition("/")[0]
        while parent and parent not in folders:
            folders.add(parent)
            parent = parent.rpartition("/")[0]
    own = sorted({SUMS_PATH, SUMS_SIG_PATH, INCOMING} & (files.keys() | folders))
    if own:
        found = own[0] if own[0] in files else min(rel for rel in files if rel.startswith(own[0] + "/"))
        raise MirrorFailed(f"{remote.url_of(SUMS_PATH)}: lists {found}, a path the list itself or the mirror holds")
    clash = sorted(folders & files.keys())
    if clash:
        under = min(rel for rel in files if rel.startswith(clash[0] + "/"))
        raise MirrorFailed(f"{remote.url_of(SUMS_PATH)}: lists both {clash[0]} and {under} under it")


def _check_arrived(remote: Remote, rel: str, digest: str, data: bytes | None) -> bytes:
    if data is None:
        raise _Torn(f"{remote.url_of(rel)}: listed with SHA-256 {digest}, but the site has no such file")
    found = hashlib.sha256(data).hexdigest()
    if found != digest:
        raise _Torn(f"{remote.url_of(rel)}: expected SHA-256 {digest} (as listed), found {found}")
    return data


class _Progress:
    """Lines on stderr saying what the run does: how many files and bytes it fetched so far."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream

    def __call__(self, line: str) -> None:
        if self.stream is not None:
            print(f"mirror: {printable(line)}", file=self.stream, flush=True)


def _fetch(
    remote: Remote,
    incoming: Path,
    todo: list[str],
    listing: _Listing,
    staged: dict[tuple[str, str], tuple[Path, int]],
    jobs: int,
    say: Callable[[str], None],
    outcome: Outcome,
) -> None:
    """Every file of `todo` into `incoming`, checked against its line; a few requests at a
    time, each file's bytes hashed as they arrive and flushed to disk before it counts."""
    files = listing.files
    incoming.mkdir()
    need = [rel for rel in todo if (rel, files[rel]) not in staged]
    say(
        f"{len(todo)} file(s) to fetch, {len(files) - len(todo)} kept" + (f" ({len(need)} new)" if need != todo else "")
    )
    step = max(1, len(need) // 10)

    def one(n: int, rel: str) -> tuple[str, Path, int]:
        target = incoming / f"{n}.part"
        data = listing.fetched_lists.get(rel)
        h = hashlib.sha256()
        with open(target, "wb") as f:
            if data is not None:
                f.write(data)
                h.update(data)
                size: int | None = len(data)
            else:

                def sink(chunk: bytes) -> None:
                    h.update(chunk)
                    f.write(chunk)

                size = remote.stream(rel, MAX_FILE_BYTES, sink)
            f.flush()
            os.fsync(f.fileno())
        if size is None:
            raise _Torn(f"{remote.url_of(rel)}: listed with SHA-256 {files[rel]}, but the site has no such file")
        if h.hexdigest() != files[rel]:
            raise _Torn(f"{remote.url_of(rel)}: expected SHA-256 {files[rel]} (as listed), found {h.hexdigest()}")
        return rel, target, size

    for done, (rel, target, size) in enumerate(windowed(lambda job: one(*job), enumerate(need), jobs), start=1):
        staged[(rel, files[rel])] = (target, size)
        outcome.fetched_bytes += size
        if done % step == 0 or done == len(need):
            say(f"fetched {done}/{len(need)} file(s), {outcome.fetched_bytes} bytes")
    outcome.fetched = len(todo)
    outcome.fetched_bytes = sum(staged[(rel, files[rel])][1] for rel in todo)


# ==============================================================================================
# generator/verifier/site/verify_site.py: Verifying a site (format v1 §2-§8): the checks in their order, and the one
#     last-resort catch.
# ==============================================================================================

# The test suite sets this, so that a bug in a check fails the test that met it instead of
# being reported, like any other failure, as an internal error of the verifier.
RAISE_INTERNAL_ERRORS = False


def verify_site(
    site: Path | str,
    key: str | None = None,
    debug: bool = False,
    since: Sequence[tuple[str, bytes, str | None]] = (),
    from_tiles: bool = False,
    policy: Policy | None = None,
    memory: Path | None = None,
    full: bool = False,
    known_logs: Mapping[str, Iterable[bytes]] | None = None,
    known_files: KnownHashes | None = None,
    known_from: str = "verify.py mirror computed when it wrote them",
    max_age: int | None = None,
    known_now: bool = False,
    folders: FolderRecord | None = None,
) -> Report:
    """Verify a site directory; `since` holds checkpoints saved outside it that today's ledger
    must extend: a label for the report, the note's bytes, and the origin it was remembered for
    (None for one the caller named: it must be this site's; a remembered one of another log is
    skipped). `from_tiles` replays the ledger from its tiles, never reading the entries file. With a
    `policy`, the site's key must be one of its logs' and today's checkpoint needs its quorum of
    witness cosignatures, none dated in the future or (with `max_age`, seconds) older than that
    on this machine's clock. With `memory`, a folder where the verifier remembers the last release
    it verified (generator/verifier/memory/release_memory.py): the site is verified from the release remembered
    there, if it is the one `since` remembers, and what this run verified is remembered when
    every check passes; `full` verifies from nothing all the same. `known_logs` maps each
    origin the verifier remembers to the keys remembered for it: a site whose key is another
    origin's, or whose origin looks like another (the origins of `since` too), fails.
    `known_files` is what `verify.py mirror` hands over: the SHA-256 of files it wrote and
    hashed itself, each with the stat identity the file had then (memory/mirror_record.py says
    why they may be trusted), or the build hands over for the files it took from the last release
    (`known_from` says which, for the report); a file whose identity is unchanged is not read
    again, unless the site's folder is not this user's alone or `full` is set; `known_now` says
    the caller checked every such identity in this very run (the mirror, and the build on its
    look at the staged site), so none is looked at again. `folders` is what the last walk of
    this folder found (the mirror's, or the build's for the folder it stages into,
    memory/folder_memory.py): a folder unchanged since is not
    read again, on the same conditions, and what this walk finds is kept there.

    Raise SiteUnreadable if it is not a readable site at all, FormatError if `key` is neither
    a verifier key nor a fingerprint: both are the caller's errors, not the site's. An error in
    the verifier itself is reported as an internal error against the file it was checking (with
    its traceback under `debug`), never as a pass.
    """
    if key is not None:
        check_key_pin(key)
    root = Path(site)
    report = Report(str(site))
    if not root.is_dir():
        raise SiteUnreadable(f"{site}: not a directory")
    if not (root / MANIFEST_PATH).is_file():
        raise SiteUnreadable(f"{site}: no {MANIFEST_PATH}: not a transparency site")
    s = Site(root, report, _trusted(root, known_files, full, report), known_now)
    # Not on Windows, where a folder's times can be set to anything (and ctime is its creation).
    if folders is not None and folders.path is not None and os.name != "nt" and private_to_user(root):
        s.folders = {} if full else folders.remembered
    try:
        _check(s, key, since, from_tiles, (policy, max_age), memory, full, known_logs or {})
    except SiteUnreadable:
        raise
    except Exception as e:  # the last resort: a bug must never read as a pass
        if RAISE_INTERNAL_ERRORS:
            raise
        report.internal_error(str(s.current), e, traceback.format_exc() if debug else None)
    report.hints += environment_hints(root, report.failures)
    _keep_folders(s, folders)
    if s.known_used:
        looked = "as found in this run before the check" if known_now else "as this run found them"
        report.notes.append(
            f"{len(s.known_used)} file(s) not read again: their SHA-256 is the one {known_from}, and their "
            f"size, times and inode are unchanged since, {looked}"
        )
    return report


def _keep_folders(s: Site, folders: FolderRecord | None) -> None:
    """Keep what the walk found in each folder for the next (only once the walk ran: a run that
    stopped before it would leave nothing to take next time)."""
    if folders is None or s.folders is None or not s.files_found:
        return
    if s.folders_taken:
        s.report.notes.append(
            f"{s.folders_taken} folder(s) not read again: each has the size, times and inode it had when the "
            "last walk of this folder read it, so it holds the entries it held then"
        )
    why = folders.save(s.folders_seen)
    if why:
        s.report.warnings.append(f"every folder will be read again next time: {why}")


def _trusted(root: Path, known: KnownHashes | None, full: bool, report: Report) -> KnownHashes | None:
    """The hashes handed over (by the mirror, or the build), if they may be used: another user
    who could write the folder could replace a file and put back what the record checks."""
    if not known or full:
        return None
    if not private_to_user(root):
        report.notes.append(
            f"every file hashed: {root} is not this user's alone, so the hashes handed over are not used"
        )
        return None
    return known


def _check(
    s: Site,
    key: str | None,
    since: Sequence[tuple[str, bytes, str | None]],
    from_tiles: bool,
    trust: tuple[Policy | None, int | None],
    memory_folder: Path | None = None,
    full: bool = False,
    known_logs: Mapping[str, Iterable[bytes]] | None = None,
) -> None:
    report = s.report
    policy, max_age = trust
    loaded = s.document(MANIFEST_PATH, "manifest")
    if loaded is not None:
        _refuse_a_later_format(s, loaded[1])
    if loaded is None or not check_manifest_shape(loaded[1], report):
        return
    manifest = loaded[1]
    if site_format(manifest) >= MANIFEST_V4:  # its lists in parts (docs/formats/v4.md)
        whole = read_manifest_parts(s, manifest)
        if whole is None:
            return
        manifest = whole
    origin = manifest["origin"]
    earlier: list[VerifierKey] = []
    key_rows: list[KeyRow] = []
    public_key = check_keys_document(s, manifest, origin, key, earlier, key_rows)
    if public_key is None:
        return
    saved = _saved_checkpoints(s, since, origin)
    v3 = site_format(manifest) >= MANIFEST_V3
    memory = None
    # A v3 site's ledger is its tiles, and its memory is kept by tree size (release_memory.py).
    if memory_folder is not None and (v3 or not from_tiles):
        memory = Memory(memory_folder, origin, full)
        memory.bind([(cp.size, cp.root) for cp in saved])
        if memory.why_not:
            report.notes.append(f"verified in full: {memory.why_not}")
    sums = _check_lists(s, manifest, public_key, memory)
    if sums is not None:
        check_download(s, public_key, sums, memory)
    history = read_history(s, HISTORY_V3 if v3 else 1)
    roots_at: dict[int, bytes] = dict.fromkeys(history_sizes(history) | {cp.size for cp in saved}, b"")
    # A v3 manifest names no entries document: its ledger is its tiles (docs/formats/v3.md, 3).
    ledger = check_ledger(s, manifest, origin, public_key, roots_at, from_tiles or v3, memory, sums)
    # Another log's key, or a look-alike of another log's origin, would let this site start
    # afresh beside the history this verifier remembers for that log. Every key the log has
    # signed with counts, not only today's: a key it rotated away from is still the key of
    # whichever log the state remembers it for.
    known: dict[str, Iterable[bytes]] = {o: () for _, _, o in since if o is not None}
    known.update(known_logs or {})
    spans = ledger.keys.spans if ledger is not None else []
    log_keys = {public_key, *(r.key.public_key for r in key_rows), *(span.key.public_key for span in spans)}
    for problem in other_log_problems(origin, log_keys, known):
        report.check(False, MANIFEST_PATH, problem)
    report.checks += 1
    if ledger is None:
        return
    roots_at = {size: root for size, root in roots_at.items() if root}
    root = roots_at[ledger.size]
    keys_rel = manifest["keys"]
    keys_doc = s.document(keys_rel, "keys")
    rows = keys_doc[1].get("keys") if keys_doc and isinstance(keys_doc[1], dict) else None
    ml_rows = keys_doc[1].get(ML_DSA_KEYS_MEMBER) if keys_doc and isinstance(keys_doc[1], dict) else None
    check_keys_follow_the_ledger(
        s, keys_rel, rows if isinstance(rows, list) else [], ledger.keys, ml_rows if isinstance(ml_rows, list) else []
    )
    check_extends(s, [cp for cp in saved if verify_saved(s, cp, ledger.keys)], ledger.size, roots_at)
    checkpoint = s.read(manifest["ledger"]["checkpoint"], "checkpoint") or b""
    check_checkpoint_keys(s, manifest["ledger"]["checkpoint"], checkpoint, ledger.keys)
    if policy is not None:
        problems = policy_problems(policy, origin, public_key, checkpoint)
        if not problems:  # the cosignatures verify: their times can be read
            now = int(time.time())
            problems = cosignature_age_problems(witnessed_by(policy, checkpoint), now, max_age)
        for problem in problems:
            report.check(False, manifest["ledger"]["checkpoint"], problem)
        report.checks += 1
    pinned = earlier[0] if earlier else None
    # What a remembered check read is known by the SHA-256es this run verified. Not on Windows:
    # there the walk that lists the site's files sees a junction as a folder, and only Site.path,
    # which a remembered check's files no longer go through, refuses it.
    vouched = (
        (lambda rel: sums.files.get(rel) if rel in sums.matched else None)
        if memory is not None and sums is not None and sums.signed and os.name != "nt"
        else None
    )
    _check_restatements(
        s, manifest, public_key, ledger, history, checkpoint, roots_at, root, pinned, from_tiles, memory, vouched
    )
    _check_the_program(s, manifest, ledger, history, key_rows, public_key, memory, vouched)
    _conclude(report, manifest, public_key, ledger, checkpoint, root, memory)
    if site_format(manifest) >= MANIFEST_V4 and any(p.file == MANIFEST_PATH for p in report.failures):
        report.notes.append(PARTED_ROWS_NOTE)


def _check_lists(s: Site, manifest: dict[str, Any], public_key: bytes, memory: Memory | None) -> Listing | None:
    """SHA256SUMS, or a v3 site's tree of lists whose root it is (docs/formats/v3.md, 5; a v4
    site's splits by bits, v4.md, 3), from the lists the memory holds where it can."""
    if site_format(manifest) < MANIFEST_V3:
        return check_sums(s, public_key, manifest["verifier"])
    rule = tree_rule(site_format(manifest))
    remembered = memory.remembered_lists(rule.name) if memory is not None else None
    if memory is not None and memory.lists_why_not:
        s.report.notes.append(f"the checksum lists were read again: {memory.lists_why_not}")
    checked = check_sums_tree(s, public_key, manifest["verifier"], rule, remembered, memory is not None)
    if checked is None:
        return None
    record = checked[1]
    if memory is not None and record is not None:
        if record.why_not:
            s.report.warnings.append(f"the checksum lists will be read again next time: {record.why_not}")
        else:
            memory.took_lists(record, rule.name)
    return checked[0]


def _refuse_a_later_format(s: Site, manifest: Any) -> None:
    """A manifest of a format after this verifier's (an integer `v` past 4) is a site it cannot
    judge, not a failed one: exit 2, as for a site it cannot read."""
    if not isinstance(manifest, dict):
        return
    v = manifest.get("v")
    if manifest.get("type") == "transparency-manifest" and is_int(v) and v > MANIFEST_V4:
        raise SiteUnreadable(
            f"{s.root / MANIFEST_PATH}: says format v{v}, later than the formats this verifier reads (v1 to v4), "
            "an unsigned claim: nothing was verified. Get a later release of verify.py from the project (its "
            "releases are listed with their SHA-256), never the copy the site ships"
        )


def _saved_checkpoints(s: Site, since: Sequence[tuple[str, bytes, str | None]], origin: str) -> list[SavedCheckpoint]:
    """The checkpoints saved outside the site that are this log's, read but not yet verified; one
    remembered for another log is skipped, one that is no checkpoint of this log fails."""
    saved = []
    for label, data, remembered_for in since:
        if remembered_for is not None and remembered_for != origin:
            continue
        try:
            saved.append(saved_checkpoint(label, data, origin))
        except (NoteError, FormatError) as e:
            s.report.check(
                False,
                label,
                f"this saved checkpoint is not one of the site's: {e}",
                f"a checkpoint of {origin}",
                "a file that is not",
            )
    return saved


def _check_restatements(
    s: Site,
    manifest: dict[str, Any],
    public_key: bytes,
    ledger: Ledger,
    history: dict[str, Any] | None,
    checkpoint: bytes,
    roots_at: dict[int, bytes],
    root: bytes,
    pinned: VerifierKey | None,
    from_tiles: bool,
    memory: Memory | None = None,
    vouched: Vouched | None = None,
) -> None:
    """What restates the ledger's tree (the checkpoint history, tiles and inclusion proofs) and
    the key hand-overs the history shows; on a v1 site, which has none of them, that the ledger
    holds nothing that needs them."""
    report, origin, keys_rel = s.report, manifest["origin"], manifest["keys"]
    v3 = site_format(manifest) >= MANIFEST_V3
    if history is not None and v3:
        # The ledger was read from its tiles, each checked (check_ledger): no entries document.
        agreed = signed_tree(checkpoint, origin, public_key) == (ledger.size, root)
        archived = check_history_v3(
            s, history, origin, public_key, ledger.size, roots_at, checkpoint if agreed else None, ledger.keys
        )
        check_hand_overs(s, ledger.keys, archived, None if agreed else ledger.size)
        check_pin_followed(s, keys_rel, ledger.keys, pinned)
        if agreed:
            check_artifact_proofs_v3(s, proven_artifacts(manifest, ledger), archived, roots_at, memory, vouched)
        else:  # today's archived checkpoint is not judged, so a proof holding it cannot be
            report.notes.append("inclusion proofs not checked: the checkpoint does not sign the tiles' tree")
    elif history is not None:
        # Tiles, proofs and today's archived checkpoint all restate the checkpoint. When it does
        # not verify, or signs another tree than the entries', that is reported once, at the
        # checkpoint, and what restates it cannot be judged: it is not checked.
        agreed = signed_tree(checkpoint, origin, public_key) == (ledger.size, root)
        archived = check_history(
            s, history, origin, public_key, ledger.size, roots_at, checkpoint if agreed else None, ledger.keys
        )
        check_hand_overs(s, ledger.keys, archived, None if agreed else ledger.size)
        check_pin_followed(s, keys_rel, ledger.keys, pinned)
        if from_tiles:
            report.notes.append(f"{manifest['ledger']['entries']} was not read (--from-tiles): the tiles were")
        if agreed:
            if not from_tiles:
                check_tiles(s, ledger.size, root)
            check_artifact_proofs(s, manifest, ledger, checkpoint, ledger.size, root)
        else:
            report.notes.append("tiles and inclusion proofs not checked: the checkpoint does not sign the entries")
    elif v3:
        report.check(
            False,
            HISTORY_PATH,
            "a format v3 or v4 site (its manifest's v 3 or 4) publishes no checkpoint history",
            "ledger/history.json, v 2 (docs/formats/v3.md, 1)",
            "no ledger/history.json",
        )
    elif len(ledger.keys.spans) > 1 or ledger.revocations or any(k.reason for k in ledger.keys.spans):
        # Format-v2 events come with a v2 site: a rotation without its hand-over checkpoint is a key
        # nobody endorsed, which a v1 reading of the site would never notice.
        report.check(
            False,
            HISTORY_PATH,
            "the ledger holds format-v2 events (a key rotation, a revocation) but the site publishes no "
            "checkpoint history, so no hand-over checkpoint shows the old key endorsing the new",
            "ledger/history.json with a hand-over checkpoint for every rotation",
            "no ledger/history.json",
        )
    else:
        check_pin_followed(s, keys_rel, ledger.keys, pinned)
        report.notes.append(
            "no checkpoint history, tiles or inclusion proofs: a v1 site; only --since and the state file "
            "can show that its ledger extends an earlier one"
        )


def _check_the_program(
    s: Site,
    manifest: dict[str, Any],
    ledger: Ledger,
    history: dict[str, Any] | None,
    key_rows: list[KeyRow],
    public_key: bytes,
    memory: Memory | None,
    vouched: Vouched | None = None,
) -> None:
    """The program's own documents against the ledger, in the order each needs the one before:
    methodologies, gates, reveals, runs, certificates, label sets; then that every published file
    is accounted for, the log-list entry, the revocations, the withdrawn runs and the verifier's
    own copy."""
    methodologies = check_methodology_files(s, manifest, ledger)
    check_gates(s, manifest, ledger)
    check_reveals(s, manifest, ledger)
    specs = check_runs(s, manifest, ledger, methodologies, memory, vouched)
    s.report.notes += beacon_notes(methodologies)
    judged = check_certificates(s, manifest, ledger, specs, methodologies, public_key, memory, history, vouched)
    check_label_sets(s, ledger, specs, judged)
    check_credential_files(s, manifest, ledger)
    check_accounted(s, manifest, ledger, history, key_rows)
    check_log_list_file(s, manifest["origin"], key_rows, ledger.keys)
    bounds = check_timestamps(s, ledger, history)
    check_draws_logged_in_time(s, ledger, bounds, specs, methodologies)
    check_revocations(s, manifest["origin"], public_key, ledger)
    for w in ledger.withdrawals.values():
        s.report.withdrawn.append({"run": w.run, "at": w.at, "reason": w.reason, "index": w.index})
        s.report.notes.append(f"run {w.run} WITHDRAWN at {w.at}: {w.reason} (it will never be run nor certified)")
    check_verifier_copy(s, manifest)


def _conclude(
    report: Report,
    manifest: dict[str, Any],
    public_key: bytes,
    ledger: Ledger,
    checkpoint: bytes,
    root: bytes,
    memory: Memory | None,
) -> None:
    """What the report states of the release (its counts, tree and keys), the release remembered
    if every check passed, and the runs still open."""
    report.counts = {
        "ledger entries": ledger.size,
        "gates": len(ledger.gates),
        "commitments": ledger.commit_count,
        "revealed": len(ledger.reveals),
        "runs": len(ledger.runs),
        "certificates": len(ledger.certificates),
        "revocations": len(ledger.revocations),
        "label sets": len(ledger.label_sets),
        "methodology versions": len(ledger.methodologies),
    }
    report.tree = {"origin": manifest["origin"], "tree_size": ledger.size, "root": base64.b64encode(root).decode()}
    report.checkpoint = checkpoint
    report.log_keys = sorted({public_key, *(span.key.public_key for span in ledger.keys.spans)})
    if memory is not None and memory.bound and not memory.used and memory.why_not:
        report.notes.append(f"the ledger was replayed from its first entry: {memory.why_not}")
    if memory is not None and report.ok:
        try:
            memory.save(report.tree, root)
        except OSError as e:  # the site passed; only the next run's shortcut is lost
            report.warnings.append(f"could not remember this release in {memory.folder}: {e.strerror or e}")
    open_runs = [r for r in ledger.runs if ledger.decided_at(r) is None]
    if open_runs:
        report.notes.append(f"{len(open_runs)} run(s) still open (not yet decided): {', '.join(open_runs[:10])}")


# ==============================================================================================
# generator/verifier/site/command_line.py: The command line of verify.py (format v1 §8, FORMAT.md v2):
# ==============================================================================================

# A saved checkpoint is a few hundred bytes; a bound keeps a wrong argument from being read whole.
_MAX_CHECKPOINT_BYTES = 1 << 16


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["proof"]:
        return _proof_main(args_list[1:])
    if args_list[:1] == ["mirror"]:
        return _mirror_main(args_list[1:])
    try:
        args = _site_parser().parse_args(args_list)
    except SystemExit as e:
        return 2 if e.code else 0
    if args.state and args.no_state:
        print("verify.py: --state and --no-state exclude each other", file=sys.stderr)
        return 2
    site = args.site if args.site is not None else os.path.dirname(own_file())
    refused = _refused_to_run([site])
    if refused is not None:
        return refused
    policy = _load_policy(args.policy) if args.policy else None
    if args.policy and policy is None:
        return 2
    return _verify(site, args, policy)


def _verify(
    site: str,
    args: argparse.Namespace,
    policy: Policy | None,
    **handed: Any,
) -> int:
    """Verify `site` as the options in `args` say, and what the mirror `handed` over (verify_site's
    known_files, known_now, folders); print the report, remember a pass; the exit status."""
    try:
        max_age = parse_max_age(args.max_age) if args.max_age is not None else None
    except FormatError as e:
        print(f"verify.py: --max-age: {printable(str(e))}", file=sys.stderr)
        return 2
    if max_age is not None and policy is None:
        print("verify.py: --max-age applies to the cosignatures a --policy asks for: give --policy", file=sys.stderr)
        return 2
    since: list[tuple[str, bytes, str | None]] = []
    for name in args.since:
        data = _read_small(name, "--since")
        if data is None:
            return 2
        since.append((name, data, None))
    state_path = None if args.no_state else (Path(args.state) if args.state else default_state_path())
    try:
        logs = read_state(state_path) if state_path else {}
    except FormatError as e:
        print(f"verify.py: --state: {printable(str(e))}", file=sys.stderr)
        return 2
    for origin in sorted(logs):
        # Which origin is this site's is known only once its manifest is read: offer every
        # remembered log, and the checks keep those of the site's origin.
        remembered = saved_from_state(logs, origin)
        if remembered is not None:
            since.append((f"{state_path} (remembered checkpoint of {origin})", remembered, origin))
    try:
        report = verify_site(
            site,
            args.key,
            debug=args.debug,
            since=since,
            from_tiles=getattr(args, "from_tiles", False),
            policy=policy,
            memory=state_path.parent / "releases" if state_path else None,
            full=args.full,
            known_logs=remembered_keys(logs),
            max_age=max_age,
            **handed,
        )
    except (SiteUnreadable, OSError) as e:
        print(f"verify.py: {printable(str(e))}", file=sys.stderr)
        return 2
    except FormatError as e:
        print(f"verify.py: --key: {printable(str(e))}", file=sys.stderr)
        return 2
    _warn_of_what_the_site_chose(report, args.policy, site)
    if report.ok and state_path is not None and report.tree:
        try:
            write_state(state_path, logs, report.tree, report.checkpoint, report.log_keys)
            report.notes.append(f"remembered checkpoint {report.tree['tree_size']} of {report.tree['origin']}")
        except OSError as e:
            report.warnings.append(f"could not write the state file {state_path}: {e.strerror or e}")
    print(safe_json(report.to_json()) if args.json else report.render())
    for trace in report.debug:
        print(trace, file=sys.stderr)
    return 0 if report.ok else 1


def _site_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verify.py",
        description="Verify a transparency site offline: every hash, signature, Merkle root, "
        "ledger rule and reveal, and every certificate recomputed. Needs only Python 3.11+ and PyNaCl. "
        "Run a copy you obtained from the project and keep outside the site's folder, not the site's own, as: "
        "python3 -P /path/to/verify.py SITE (-P keeps Python from importing modules from the script's folder).",
        epilog="Exit status: 0 every check passed, 1 at least one check failed, 2 the site "
        "could not be read, the arguments are wrong, or the verifier cannot run (a module loaded from the site, "
        "PyNaCl missing, Python older than 3.11).",
    )
    parser.add_argument(
        "site", nargs="?", default=None, help="the site directory (default: the directory holding this file)"
    )
    _verification_options(parser)
    parser.add_argument(
        "--from-tiles",
        action="store_true",
        help="replay the ledger from its C2SP tiles (ledger/tile/) instead of ledger/entries.json, which is then "
        "never read: for a log too large to read as one file (a format v3 site, which has no entries document, is "
        "always read so)",
    )
    return parser


def _verification_options(parser: argparse.ArgumentParser) -> None:
    """The options of a site's verification, which `verify.py mirror` passes through."""
    parser.add_argument(
        "--key",
        metavar="VKEY_OR_FINGERPRINT",
        help="pin the signing key: a signed-note verifier key or 'SHA256:<hex>'; without it the key shipped in "
        "the site is trusted",
    )
    parser.add_argument(
        "--since",
        metavar="CHECKPOINT",
        action="append",
        default=[],
        help="a checkpoint saved earlier: fail unless today's "
        "ledger extends it; may be repeated. Keep it outside the site (a copy of ledger/checkpoint you saved "
        "after a passing run): a file of the site is the site's word",
    )
    parser.add_argument(
        "--state",
        metavar="FILE",
        help="where to remember the last verified checkpoint of each log, so that a later run catches a rollback "
        "or a rewritten history by itself (default: $XDG_CACHE_HOME/transparency-verify/state.json); written "
        "only when every check passed",
    )
    parser.add_argument(
        "--no-state", action="store_true", help="neither read nor write the state file (nor the memory beside it)"
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="verify everything from nothing, even when the state file's folder remembers the release verified "
        "last (releases/ beside it); without --full a site that extends that release is verified from it: only "
        "its new ledger entries are replayed, a run or certificate is read and checked again only if "
        "something its check read changed, such as a reveal of one of its items or a file it names, and an "
        "inclusion proof (format v3) only if it is new or its bytes changed (every file is still hashed, every "
        "other check still made)",
    )
    parser.add_argument(
        "--policy",
        metavar="FILE",
        help="a C2SP tlog-policy file you obtained out of band and keep yourself: the site's key must be one of "
        "its logs, and today's checkpoint must carry valid cosignatures from its quorum of witnesses (the missing "
        "ones are named); a policy read from inside the site is the site's word, and the report warns of it",
    )
    parser.add_argument(
        "--max-age",
        metavar="DURATION",
        help="with --policy: fail when a witness's cosignature on today's checkpoint is older than this (3600s, 36h, "
        "7d); one dated in the future (beyond a minute of clock skew) fails with or without it",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--debug", action="store_true", help="on an internal error of the verifier, print its traceback too"
    )


def _warn_of_what_the_site_chose(report: Report, policy: str | None, site: str) -> None:
    """A policy or a verifier read from inside the site is the site's word: a pass proves nothing more."""
    if policy and _inside(policy, site):
        report.warnings.append(
            f"the trust policy was read from inside the site it judges ({policy}): the site can rewrite it to "
            "need no witness, so this check proves nothing the site did not choose; use a policy obtained out of "
            "band and kept by you, outside the site, as you would a key"
        )
    if os.path.abspath(__file__) == own_file() and _inside(own_file(), site):
        # The site's own copy checks the site with the code the site chose: a pass proves nothing more.
        report.warnings.append(
            f"this verify.py came with the site ({own_file()}): a site can ship a verifier that passes anything; "
            "use one you obtained yourself, kept outside the site"
        )


def _refused_to_run(folders: list[str]) -> int | None:
    """2, after one message saying what to do, if the verifier cannot run: a module may have
    come from the site (its code could have run, so no verdict of this process is worth
    anything) or PyNaCl is missing; None when the checks may go on. Never 1: that is a site
    that failed its checks, and automation must not read "could not look" as "looked and failed"."""
    if os.path.abspath(__file__) == own_file():  # run as verify.py: the site's folder is near
        hijacked = foreign_modules([*folders, os.path.dirname(own_file())])
        if hijacked:
            names = ", ".join(printable(name) for name, _ in hijacked[:5]) + (", ..." if len(hijacked) > 5 else "")
            print(
                f"verify.py: cannot run: {len(hijacked)} module(s) ({names}) were loaded from inside the site or the "
                f"current folder (first: {printable(hijacked[0][1])}), not from this Python's own installation "
                f"({printable(sys.prefix)}), so a site's code could have run. Keep the verify.py you obtained outside "
                "the site's folder, and run it with a Python whose PyNaCl you installed yourself (the system's, or a "
                "virtual environment you made): python3 -P /path/to/verify.py SITE",
                file=sys.stderr,
            )
            return 2
    if not NACL:
        print(
            f"verify.py: cannot run: PyNaCl is not installed for {printable(sys.executable)}. On Debian or Ubuntu: "
            "sudo apt install python3-nacl, then python3 -P verify.py SITE; elsewhere, in a virtual environment "
            "of your own: python3 -m venv verify-env && verify-env/bin/python -m pip install pynacl, then "
            "verify-env/bin/python -P verify.py SITE",
            file=sys.stderr,
        )
        return 2
    return None


def _inside(name: str, folder: str) -> bool:
    """Whether file `name` is in `folder`, as written or once every link is followed: a link
    either way is something the site chose, or leads to what it holds."""
    folders = {os.path.abspath(folder), os.path.realpath(folder)}
    files = {os.path.abspath(name), os.path.realpath(name)}
    return any(f != d and path_within(f, d) for f in files for d in folders)


def _load_policy(name: str) -> Policy | None:
    data = _read_small(name, "--policy")
    if data is None:
        return None
    try:
        return parse_policy(data)
    except FormatError as e:
        print(f"verify.py: --policy {printable(name)}: {printable(str(e))}", file=sys.stderr)
        return None


def _read_small(name: str, what: str) -> bytes | None:
    try:
        with open(name, "rb") as f:
            data = f.read(_MAX_CHECKPOINT_BYTES + 1)
    except OSError as e:
        print(f"verify.py: {what} {printable(name)}: {printable(e.strerror or str(e))}", file=sys.stderr)
        return None
    if len(data) > _MAX_CHECKPOINT_BYTES:
        print(f"verify.py: {what} {printable(name)}: larger than {_MAX_CHECKPOINT_BYTES} bytes", file=sys.stderr)
        return None
    return data


def _mirror_main(argv: list[str]) -> int:
    """`verify.py mirror URL DIR`: bring DIR to the site URL publishes now, then verify DIR."""
    try:
        args = _mirror_parser().parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    problem = _mirror_argument_problem(args)
    if problem:
        print(f"verify.py mirror: {problem}", file=sys.stderr)
        return 2
    refused = _refused_to_run([args.dir])
    if refused is not None:
        return refused
    policy = _load_policy(args.policy) if args.policy else None
    if args.policy and policy is None:
        return 2
    state_path = None if args.no_state else (Path(args.state) if args.state else default_state_path())
    folder = Path(args.dir)
    record_file = record_path(state_path.parent, folder) if state_path else None
    record, folders, whys = load_mirror_memory(record_file, folder)
    for why in whys:
        print(f"verify.py mirror: {printable(why)}", file=sys.stderr)
    try:
        remote = open_remote(args.url)
    except RemoteUnreadable as e:
        print(f"verify.py mirror: {printable(str(e))}", file=sys.stderr)
        return 2
    if remote.plain_http and not (args.key or policy):
        print(
            f"verify.py mirror: warning: {printable(remote.label)} is plain http: anyone on the way can serve "
            "another site with another key; pin the program's key with --key",
            file=sys.stderr,
        )
    try:
        releases = state_path.parent / "releases" if state_path and not args.full else None
        lists = partial(remembered_lists, releases) if releases else lambda origin: None
        outcome = mirror_site(remote, folder, args.key, record, args.jobs, sys.stderr, lists)
    except MirrorFailed as e:
        print(f"verify.py mirror: FAIL {printable(str(e))}", file=sys.stderr)
        return 1
    except (RemoteUnreadable, OSError) as e:
        print(f"verify.py mirror: {printable(str(e))} (the mirror is unchanged)", file=sys.stderr)
        return 2
    finally:
        remote.close()
    if record_file is not None:
        try:
            save_record(record_file, remote.label, outcome.files)
        except OSError as e:
            print(f"verify.py mirror: warning: could not write {record_file}: {e.strerror or e}", file=sys.stderr)
            record_file = None
    # Every file of the record was looked at (or written) by this run: its identity is not taken again.
    handed = {"known_files": outcome.files if record_file else None, "known_now": True, "folders": folders}
    return _verify(str(folder), args, policy, **handed)


def _mirror_argument_problem(args: argparse.Namespace) -> str | None:
    if args.state and args.no_state:
        return "--state and --no-state exclude each other"
    if not 1 <= args.jobs <= 64:
        return f"--jobs {args.jobs}: expected 1 to 64 requests at once"
    if args.key is not None:
        try:
            check_key_pin(args.key)
        except FormatError as e:
            return f"--key: {printable(str(e))}"
    return None


def _mirror_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verify.py mirror",
        description="Keep a copy of a published site in DIR and verify it. The first run copies every file; a "
        "later run fetches only the files whose SHA-256 in the signed SHA256SUMS changed (and the lists under "
        "sums/ of a format v3 or v4 site whose bytes changed, reading none the verifier remembers from the "
        "release it verified last), removes the files it wrote that the site no longer lists, and verifies the "
        "copy from the release it verified last, without reading again the files it wrote and hashed itself "
        "nor the folders unchanged since it last walked them. Nothing replaces a file of DIR before every new "
        "file arrived with the bytes SHA256SUMS lists.",
        epilog="Exit status: 0 the copy is up to date and every check passed, 1 the site failed a check (its "
        "SHA256SUMS signature, a file that arrived with other bytes than listed twice over, or the "
        "verification), 2 the site could not be read, the arguments are wrong or the verifier cannot run.",
    )
    parser.add_argument("url", help="the site: an https:// or http:// URL, a file:// URL or a folder")
    parser.add_argument("dir", help="the folder holding the copy (made on the first run)")
    jobs = "requests in flight at once (default 8), on kept-alive connections"
    parser.add_argument("--jobs", type=int, default=8, metavar="N", help=jobs)
    _verification_options(parser)
    return parser


def _proof_main(argv: list[str]) -> int:
    try:
        args = _proof_parser().parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    refused = _refused_to_run([os.path.dirname(os.path.abspath(p)) for p in (args.file, args.proof)])
    if refused is not None:
        return refused
    policy = _load_policy(args.policy) if args.policy else None
    if args.policy and policy is None:
        return 2
    try:
        keys = list(policy.log_keys) if policy else [parse_vkey(args.key)]
    except FormatError as e:
        print(f"verify.py proof: --key: {printable(str(e))}", file=sys.stderr)
        return 2
    try:
        with open(args.file, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"verify.py proof: {printable(args.file)}: {printable(e.strerror or str(e))}", file=sys.stderr)
        return 2
    proof = _read_small(args.proof, "proof")
    if proof is None:
        return 2
    origin_line = proof.split(b"\n\n", 1)[-1].split(b"\n", 1)[0].decode("utf-8", "replace")
    # Every key named for the proof's origin, as the site's check accepts any of them.
    candidates = (policy_logs(policy, origin_line) if policy else keys) or keys[:1]
    if policy is not None and not candidates:
        print(
            "verify.py proof: --policy names no Ed25519 log key: a proof's checkpoint is opened with the log's "
            "Ed25519 key, which every checkpoint carries; add its `log` line (keys.json's active key)",
            file=sys.stderr,
        )
        return 2
    result = verify_artifact(data, proof, candidates)
    log = result.signer
    if policy is not None and log is not None and not result.problems:
        checkpoint = parse_tlog_proof(proof).checkpoint
        result.problems.extend(policy_problems(policy, log.name, log.public_key, checkpoint))
        result = dataclasses.replace(result, ml_dsa_signers=ml_dsa_log_signers(policy, log.name, checkpoint)[0])
    _print_proof_result(result, args.file, args.proof, args.json)
    return 1 if result.problems else 0


def _proof_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verify.py proof",
        description="Check one artifact alone, offline, with its C2SP tlog-proof: the proof's checkpoint is "
        "signed by the log's key, the leaf in its extra line commits to the file's SHA-256 (a reveal by its "
        "commit leaf, a certificate, run spec or methodology file by its own leaf), and the leaf is included in "
        "the checkpoint's tree.",
        epilog="Exit status: 0 the proof holds, 1 it does not, 2 a file could not be read, the arguments are "
        "wrong or the verifier cannot run. A pass says the file was logged; the whole site's check "
        "(verify.py SITE) is what recomputes its rules.",
    )
    parser.add_argument("file", help="the artifact, e.g. reveals/ITEM.json or certificates/SERIAL.json")
    parser.add_argument("proof", help="its proof, e.g. reveals/ITEM.json.tlog-proof")
    trust = parser.add_mutually_exclusive_group(required=True)
    trust.add_argument("--key", metavar="VKEY", help="the log's signed-note verifier key (keys.json's vkey)")
    trust.add_argument(
        "--policy",
        metavar="FILE",
        help="a C2SP tlog-policy file: its log keys sign the checkpoint (one of each signature type it names; it "
        "must name the log's Ed25519 key, with which the proof's checkpoint is opened), and its quorum of "
        "witnesses must have cosigned it (cosignature times are not judged here)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def _print_proof_result(result: ArtifactCheck, file: str, proof: str, as_json: bool) -> None:
    """The outcome of `verify.py proof`, as JSON or as lines for people."""
    log = result.signer
    if as_json:
        print(
            safe_json(
                {
                    "ok": not result.problems,
                    "file": file,
                    "problems": result.problems,
                    "origin": result.origin,
                    "tree_size": result.size,
                    "index": result.index,
                    "leaf": result.leaf,
                    "signers": [{"type": "Ed25519", "fingerprint": k.fingerprint} for k in [log] if k is not None]
                    + [{"type": "ML-DSA-44", "fingerprint": k.fingerprint} for k in result.ml_dsa_signers],
                }
            )
        )
    elif result.problems:
        for p in result.problems:
            print(f"FAIL {printable(proof)}: {printable(p)}")
    else:
        print(
            f"PASS: {printable(file)} is committed by leaf {result.index} of {printable(result.origin)}'s "
            f"log of {result.size} entries, in a checkpoint signed by {log.fingerprint if log else '?'} (Ed25519)"
            + "".join(f" and {k.fingerprint} (ML-DSA-44)" for k in result.ml_dsa_signers)
            + "."
        )
        print(f"  leaf: {printable(canonical_text(result.leaf))}")
        if isinstance(result.leaf, dict) and result.leaf.get("type") == "certificate":
            # A later leaf may revoke it, and one proof cannot show that no such leaf exists.
            print(
                "  not checked: whether the certificate was revoked since (a state only the whole ledger shows: "
                f"verify.py SITE reports it, and {REVOCATIONS_PATH} lists every revocation)"
            )


if __name__ == "__main__":
    # A terminal that cannot show a character gets an escape, never a traceback.
    for _stream in (sys.stdout, sys.stderr):
        if hasattr(_stream, "reconfigure"):
            _stream.reconfigure(errors="backslashreplace")
    sys.exit(main())
