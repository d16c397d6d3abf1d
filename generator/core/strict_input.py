"""Strict reading of the operator's YAML and JSON files.

YAML 1.1 as PyYAML reads it by default turns `no` into false, `12:30` into 750 and
`2026-03-04` into a date, and silently keeps the last of two equal keys. Item texts and answers
are evidence, so the loader here accepts only the JSON-compatible core of YAML: true/false,
decimal integers, null, strings, lists and mappings with unique string keys. Anything else is
an error that names the file and the line.
"""

from __future__ import annotations

import os
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from generator.core.generator_errors import InputError, problem
from generator.verifier import FormatError, Problem, check_no_surrogates, loads_strict, strict_decoder

# Limits on the operator's files, checked before they are parsed. The largest real source
# (50,000 items of the scale benchmark) is a sixth of this; a bigger one is split in several.
MAX_SOURCE_BYTES = 64 * 1024 * 1024
# Items nest four levels (items, item, answer, field, value); nothing real comes near this.
MAX_DEPTH = 64
# PyYAML holds a few hundred bytes per node while it reads: a YAML file of tiny values that fits
# the size limit could need gigabytes. About 20 nodes an item, so 50,000 items a file.
MAX_YAML_NODES = 1_000_000


class _StrictComposing(yaml.composer.Composer):
    """The composer's limits, shared by both loaders below.

    An alias repeats a node without repeating its text: ten lines of them ("billion laughs")
    expand to billions of values. Item sources have no use for them, so they are refused.
    """

    peek_event: Any
    check_event: Any

    def _here(self) -> yaml.Mark:
        mark: yaml.Mark = self.peek_event().start_mark
        return mark

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._nodes = getattr(self, "_nodes", 0) + 1
        if self._nodes > MAX_YAML_NODES:
            raise yaml.composer.ComposerError(
                None,
                None,
                f"more than {MAX_YAML_NODES:,} values in one YAML file; split it, or write it as JSON",
                self._here(),
            )
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed; write the value out", self._here()
            )
        if self.check_event(yaml.MappingStartEvent, yaml.SequenceStartEvent):
            self._depth = getattr(self, "_depth", 0) + 1
            try:
                if self._depth > MAX_DEPTH:
                    raise yaml.composer.ComposerError(
                        None, None, f"nested more than {MAX_DEPTH} levels deep", self._here()
                    )
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1
        return super().compose_node(parent, index)


class _StrictLoader(_StrictComposing, yaml.SafeLoader):
    """SafeLoader restricted to the YAML 1.2 core schema, without timestamps, merges or aliases."""


_LEADING_ZERO_TAG = "tag:transparency,2026:leading-zero"

_StrictLoader.yaml_implicit_resolvers = {}
for _tag, _regexp, _first in (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^[-+]?(?:0|[1-9][0-9]*)$", "-+0123456789"),
    # YAML 1.1 reads 0123 as octal 83, YAML 1.2 as 123: an account number either way. Refused.
    (_LEADING_ZERO_TAG, r"^[-+]?0[0-9]+$", "-+0"),
    (
        "tag:yaml.org,2002:float",
        r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$",
        "-+0123456789.",
    ),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
):
    _StrictLoader.add_implicit_resolver(_tag, re.compile(_regexp), list(_first))


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    result: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise yaml.constructor.ConstructorError(
                None, None, f"mapping keys must be strings, found {key!r}", key_node.start_mark
            )
        if key in result:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        result[key] = loader.construct_object(value_node, deep=True)
    return result


def _construct_int(loader: _StrictLoader, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node)  # decimal only: the resolver admits nothing else
    if len(text.lstrip("+-")) > 19:  # beyond 2^63 and far beyond the 2^53 - 1 of format v1 §1
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"the integer {text[:30]}… is too large (at most ±(2^53−1)); quote it if it is text",
            node.start_mark,
        )
    return int(text)


def _leading_zero(loader: _StrictLoader, node: yaml.ScalarNode) -> Any:
    raise yaml.constructor.ConstructorError(
        None,
        None,
        f'the number {node.value} has a leading zero; quote it if it is text ("{node.value}"), or drop the zero',
        node.start_mark,
    )


def _refuse(loader: _StrictLoader, node: yaml.Node) -> Any:
    raise yaml.constructor.ConstructorError(None, None, f"unsupported YAML type {node.tag}", node.start_mark)


_StrictLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_StrictLoader.add_constructor(_LEADING_ZERO_TAG, _leading_zero)
for _tag in (
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:binary",
    "tag:yaml.org,2002:set",
    "tag:yaml.org,2002:omap",
    "tag:yaml.org,2002:pairs",
):
    _StrictLoader.add_constructor(_tag, _refuse)


# libyaml's parser, when PyYAML was built with it (its wheels are).
_CParser: Any = getattr(getattr(yaml, "cyaml", None), "CParser", None)


def _c_loader() -> type | None:
    if _CParser is None:  # pragma: no cover
        return None

    class _CStrictLoader(_CParser, _StrictLoader):  # type: ignore[misc]
        """The same loader with libyaml's scanner and parser, several times as fast on a large file.

        Only the scanning and parsing are libyaml's: the events it gives are composed by the same
        Python composer (its limits above), resolved by the same resolvers and constructed by the
        same constructors (the class's tables are _StrictLoader's), so both read and refuse alike
        (tests/unit/core/test_yaml_loaders.py compares them on a corpus of tricky inputs).
        """

        # CParser composes in C, past compose_node's limits: use the Python composer's methods.
        check_node = yaml.composer.Composer.check_node
        get_node = yaml.composer.Composer.get_node
        get_single_node = yaml.composer.Composer.get_single_node

        def __init__(self, stream: str) -> None:
            _CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

    return _CStrictLoader


_C_LOADER = _c_loader()


LOADERS: tuple[type, ...] = (_StrictLoader,) if _C_LOADER is None else (_C_LOADER, _StrictLoader)


def parse_yaml(text: str, file: str, loader: type | None = None) -> Any:
    """Parse YAML text strictly; raise InputError naming the file and line. `loader` is one of
    LOADERS (default the first, libyaml's when present)."""
    try:
        return yaml.load(text, Loader=loader or LOADERS[0])
    except RecursionError:
        raise InputError([problem(file, "malformed YAML: nested too deeply")]) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        # Where the error shows is often far from its cause (a quote never closed is found at the
        # end of the file): the context says what was open, and where it began.
        message = e.problem or e.context
        if e.problem and e.context:
            opened = e.context_mark
            began = f" begun at line {opened.line + 1}, column {opened.column + 1}" if opened else ""
            message = f"{e.problem}, {e.context}{began}"
        raise InputError([problem(file, f"malformed YAML: {message}", where)]) from None
    except yaml.YAMLError as e:
        raise InputError([problem(file, f"malformed YAML: {e}")]) from None


def read_bytes(path: Path, display: str | None = None) -> bytes:
    """A file's bytes, refusing at once one larger than MAX_SOURCE_BYTES (before reading it)."""
    name = display or str(path)
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_SOURCE_BYTES:
                raise InputError(
                    [
                        problem(
                            name,
                            "file is too large to read",
                            expected=f"at most {MAX_SOURCE_BYTES:,} bytes (split it into several files)",
                            found=f"{size:,} bytes",
                        )
                    ]
                )
            return f.read(MAX_SOURCE_BYTES + 1)
    except FileNotFoundError:
        raise InputError([problem(name, "file is missing")]) from None
    except OSError as e:
        raise InputError([problem(name, f"cannot read: {e.strerror}")]) from None


def read_text(path: Path, display: str | None = None) -> str:
    """A file's text, exactly: UTF-8, no newline translation (a grader's proposal is kept as
    written, byte for byte)."""
    name = display or str(path)
    return decode_utf8(read_bytes(path, name), name)


def decode_utf8(data: bytes, name: str) -> str:
    """Bytes as UTF-8 text, or an InputError naming the line and column of the first bad byte
    and what the file probably is instead."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        line = data.count(b"\n", 0, e.start) + 1
        column = len(data[start : e.start].decode("utf-8", errors="replace")) + 1
        if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data[:64]:
            guess = "it looks like UTF-16"
        else:
            guess = "perhaps Latin-1 or Windows-1252"
        raise InputError(
            [
                problem(
                    name,
                    f"not valid UTF-8: byte 0x{data[e.start]:02x} ({guess}); save the file as UTF-8",
                    f"line {line}, column {column}",
                )
            ]
        ) from None


def load_yaml(path: Path, display: str | None = None) -> Any:
    return parse_yaml(read_text(path, display), display or str(path))


class NonInteger(str):
    """A non-integer number of an operator's JSON file, kept as its text so that the rest of the
    file is checked in the same run; never written, for its problem refuses the command."""


def load_json(path: Path, display: str | None = None, non_integers: list[Problem] | None = None) -> Any:
    """Read a JSON file strictly (UTF-8, no duplicate keys, no NaN, integers only).

    Every non-integer number is a problem naming its field, line and column. Given a
    `non_integers` list, they are added there and the value is returned with each one as a
    NonInteger (a string), for the caller to check the rest of the file and then refuse; without,
    they are raised together."""
    name = display or str(path)
    return parse_json(read_bytes(path, name), name, non_integers)


def parse_json(data: bytes, name: str, non_integers: list[Problem] | None = None) -> Any:
    """load_json of bytes already read (by a caller that also hashes them)."""
    text = decode_utf8(data, name)  # a bad byte named by its line, not by an offset
    try:
        value = loads_strict(data)
    except FormatError as e:
        located = _non_integers(text, name)
        if located is None:
            raise InputError([problem(name, f"malformed JSON: {e}")]) from None
        value, found = located
        if non_integers is None:
            raise InputError(found, f"{name}: numbers that are not integers (format v1 §1)") from None
        non_integers += found
    if _depth(data) > MAX_DEPTH:
        raise InputError([problem(name, f"malformed JSON: nested more than {MAX_DEPTH} levels deep")])
    return value


_JSON_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_JSON_NUMBER_RE = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")


def _non_integers(text: str, name: str) -> tuple[Any, list[Problem]] | None:
    """The value of a JSON text whose only fault is non-integer numbers (each a NonInteger), and a
    problem for each, in the file's order; None when something else is wrong with it."""
    try:
        value = strict_decoder(parse_float=NonInteger).decode(text)
        check_no_surrogates(value)
    except (ValueError, FormatError, RecursionError):  # JSONDecodeError is a ValueError
        return None
    # The decoder reads in the file's order, and so does this walk: the n-th marker is the n-th
    # number token with a fraction or an exponent (strings blanked first, keeping offsets).
    fields: list[tuple[str, str]] = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, NonInteger):
            fields.append((where, str(v)))
        elif isinstance(v, dict):
            stack.extend(reversed([(f"{where}.{k}" if where else k, x) for k, x in v.items()]))
        elif isinstance(v, list):
            stack.extend(reversed([(f"{where}[{i}]", x) for i, x in enumerate(v)]))
    if not fields:
        return None
    blank = _JSON_STRING_RE.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)
    offsets = [m.start() for m in _JSON_NUMBER_RE.finditer(blank) if any(c in m.group() for c in ".eE")]
    problems = []
    for n, (where, number) in enumerate(fields):
        at = ""
        if len(offsets) == len(fields):
            line = text.count("\n", 0, offsets[n]) + 1
            at = f" (line {line}, column {offsets[n] - text.rfind(chr(10), 0, offsets[n])})"
        problems.append(
            problem(
                name,
                f"a non-integer number {number}{at}: format v1 §1 allows integers only in JSON",
                where,
                expected=f'an integer, or the quantity as a decimal string such as "{_as_decimal_string(number)}"',
                found=number,
            )
        )
    return value, problems


def _as_decimal_string(number: str) -> str:
    # Written out in full only while that stays short: 1e999999 would be a million digits.
    d = Decimal(number)
    return format(d, "f") if abs(d.adjusted()) <= 40 else "0.8"


_ESCAPE_RE = re.compile(rb"\\.", re.S)
_DROPPED = bytes(c for c in range(256) if c not in b'"[]{}')
_STRING_RE = re.compile(rb'"[^"]*"')
_INNERMOST_RE = re.compile(rb"\[\]|\{\}")


def _depth(data: bytes) -> int:
    """How deeply lists and objects nest in a JSON text that parsed, up to MAX_DEPTH + 1 (all a
    caller needs to know), in passes of C code rather than one Python step for each of a
    million values: escapes out (so that every quote left opens or closes a string), then all
    but quotes and brackets, then the strings; what is left is the brackets, balanced, and each
    pass strips the innermost pairs, so the passes are the depth."""
    brackets = _ESCAPE_RE.sub(b"", data) if b"\\" in data else data
    brackets = _STRING_RE.sub(b"", brackets.translate(None, _DROPPED))
    depth = 0
    while brackets and depth <= MAX_DEPTH:
        brackets = _INNERMOST_RE.sub(b"", brackets)
        depth += 1
    return depth


def load_data_file(path: Path, display: str | None = None, non_integers: list[Problem] | None = None) -> Any:
    """A YAML (.yaml, .yml) or JSON (.json) file, chosen by its suffix (`non_integers`: load_json's)."""
    if path.suffix in (".yaml", ".yml"):
        return load_yaml(path, display)
    return load_json(path, display, non_integers)
