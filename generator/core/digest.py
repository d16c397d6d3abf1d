"""Hashing the values a piece of output is made from, exactly, and the version of the code that
makes it: the keys of what a build remembers (generator.state.page_cache, generator.state.recheck_cache).

A key must change whenever the output could: every value is hashed with its type (so that "1"
and 1, a str and its Markup, a list and a tuple never collide), dicts in their order (a
template shows that order), and any value of a type not listed here is refused rather than
hashed by a repr that might leave part of it out.
"""

from __future__ import annotations

import dataclasses
import decimal
import enum
import fractions
import functools
import hashlib
import importlib.metadata
import io
import pickle
import types
from pathlib import Path
from typing import Any

import markupsafe

_ROOT = Path(__file__).resolve().parent.parent  # generator/


class Unhashable(TypeError):
    """A value the memo cannot hash exactly: the page is rendered every time."""


@functools.cache
def rules_version() -> str:
    """The code a page is made by: every module of the generator and the verifier, every
    template, and the versions of the libraries that render them."""
    libraries = " ".join(f"{name} {importlib.metadata.version(name)}" for name in ("jinja2", "markupsafe"))
    h = hashlib.sha256(f"{libraries}\0".encode())
    templates = _ROOT.parent / "site_templates"
    for base in (_ROOT, templates):
        for path in sorted(p for p in base.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            h.update(path.relative_to(base).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _feed(h: Any, value: Any) -> None:
    # Each value is tagged with its type, so that "1" and 1, a str and its Markup (escaped
    # differently), a list and a tuple never hash alike.
    t = type(value)
    if value is None or t is bool or t is int or t is float:
        h.update(f"{t.__name__}:{value!r};".encode())
    elif t is str or t is markupsafe.Markup:
        data = value.encode("utf-8", "surrogatepass")
        h.update(f"{t.__name__}:{len(data)}:".encode() + data)
    elif t is bytes:
        h.update(f"bytes:{len(value)}:".encode() + value)
    elif t is list or t is tuple:
        h.update(f"{t.__name__}:{len(value)}[".encode())
        for v in value:
            _feed(h, v)
        h.update(b"]")
    elif t is dict:
        h.update(f"dict:{len(value)}{{".encode())
        for k, v in value.items():  # in order: a template iterating a dict shows that order
            _feed(h, k)
            _feed(h, v)
        h.update(b"}")
    elif t is fractions.Fraction or t is decimal.Decimal:
        h.update(f"{t.__name__}:{value};".encode())  # exact: a ratio of integers, a decimal string
    elif t is types.MappingProxyType:
        _feed(h, ("mappingproxy", dict(value)))
    elif t is set or t is frozenset:
        h.update(f"{t.__name__}:{len(value)}{{".encode())
        for d in sorted(digest_of(v) for v in value):
            h.update(d.encode())
        h.update(b"}")
    elif isinstance(value, enum.Enum):
        h.update(f"enum:{t.__module__}.{t.__qualname__}.{value.name};".encode())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        h.update(f"dc:{t.__module__}.{t.__qualname__}(".encode())
        for f in dataclasses.fields(value):
            h.update(f.name.encode() + b"=")
            _feed(h, getattr(value, f.name))
        h.update(b")")
    else:
        raise Unhashable(f"cannot hash a {t.__module__}.{t.__qualname__} exactly")


def pickled(value: Any) -> bytes | None:
    """`value` pickled, or None if pickle cannot take it."""
    try:
        return pickle.dumps(value, protocol=5)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None


def digest_of(value: Any, data: bytes | None = None) -> str:
    """The key of `value` (`data`: its pickle, if the caller has it). Pickled first, which is
    exact for the plain data and dataclasses the views are made of and fast (C); a value pickle
    cannot take is hashed by `_feed`. Equal values may pickle differently (shared references,
    a set's order): that costs a render, never a stale page, since different values never
    pickle alike."""
    data = data if data is not None else pickled(value)
    if data is None:
        h = hashlib.sha256(b"feed\0")
        _feed(h, value)
        return h.hexdigest()
    return hashlib.sha256(b"pickle5\0" + data).hexdigest()


class RowDigests:
    """The SHA-256 of each row object of a build (a frozen dataclass of one of `types`, such as a
    run row that thousands of pages show), pickled once a build: a page's key then hashes the row
    by that digest, not by pickling it again for each page that shows it (`digest_with_rows`).

    Each row is kept beside its digest for the life of this object, so that its `id` is never
    that of another object; rows are frozen and made of values, so their digest stays true."""

    def __init__(self, types: tuple[type, ...]) -> None:
        self.types = frozenset(types)
        self._known: dict[int, tuple[object, bytes]] = {}

    def persistent_id(self, obj: object) -> bytes | None:
        if type(obj) not in self.types:
            return None
        known = self._known.get(id(obj))
        if known is None or known[0] is not obj:
            known = (obj, hashlib.sha256(pickle.dumps(obj, protocol=5)).digest())
            self._known[id(obj)] = known
        return known[1]


class _RowPickler(pickle.Pickler):
    def __init__(self, f: io.BytesIO, rows: RowDigests) -> None:
        super().__init__(f, protocol=5)
        self._rows = rows

    def persistent_id(self, obj: object) -> bytes | None:
        return self._rows.persistent_id(obj)


def digest_with_rows(value: Any, rows: RowDigests) -> str:
    """The key of `value` as `digest_of` makes it, each row of `rows` in it hashed by its digest
    (tagged apart: a key made so never equals one made by `digest_of`). Raises Unhashable where
    pickle cannot take the value."""
    f = io.BytesIO()
    try:
        _RowPickler(f, rows).dump(value)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as e:
        raise Unhashable(str(e)) from e
    return hashlib.sha256(b"pickle5-rows\0" + f.getvalue()).hexdigest()
