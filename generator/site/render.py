"""Rendering HTML pages through the Jinja2 templates in `site_templates`.

Autoescape is on for every template and undefined values fail the build (StrictUndefined):
item texts and certificate fields are data, never markup, and a page that lost a value must
not be published looking complete.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, Protocol

import jinja2
import markupsafe

from generator.build.writer import SiteWriter
from generator.core import layout
from generator.core.digest import RowDigests, Unhashable, digest_of, digest_with_rows, pickled
from generator.state.page_cache import PageMemo


def template_dir() -> str:
    return str(files("site_templates"))


@jinja2.pass_context
def _url(ctx: jinja2.runtime.Context, target: str) -> str:
    return layout.relative(ctx["page_path"], target)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# Hangul syllables, jamo and compatibility jamo: text in them is Korean, whatever page holds it.
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff]")


def language_of(value: Any) -> str | None:
    """The language a text from data is in, when the page's own (English) would be wrong for it:
    a screen reader reads Korean with an English voice otherwise (WCAG 3.1.2)."""
    return "ko" if _HANGUL.search(str(value)) else None


def _lang(value: Any) -> markupsafe.Markup:
    """` lang="ko"` for an element whose text is Korean, nothing otherwise."""
    lang = language_of(value)
    return markupsafe.Markup(' lang="{}"').format(lang) if lang else markupsafe.Markup("")


def _bdi(value: Any) -> markupsafe.Markup:
    """Text from data, isolated: a right-to-left override in a name cannot reorder the page
    around it (escaped like any value; the markup is ours), and marked with its language."""
    return markupsafe.Markup("<bdi{}>{}</bdi>").format(_lang(value), value)


def _short(digest: str, n: int = 12) -> str:
    return digest[:n] + "…" if len(digest) > n else digest


def duration_text(seconds: int) -> str:
    """A schedule's interval in words: "7 days", "1 hour", "90 minutes"."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            n = seconds // size
            return f"{n} {unit}" + ("" if n == 1 else "s")
    return f"{seconds} seconds"


@functools.cache
def make_environment() -> jinja2.Environment:
    """One environment per process: its templates are compiled once, not once per build (it
    holds no build's values: those are passed to each render)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(template_dir()),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals["url"] = _url
    env.globals["layout"] = layout
    env.filters["json"] = _json
    env.filters["short"] = _short
    env.filters["bdi"] = _bdi
    env.filters["lang"] = _lang
    env.filters["duration"] = duration_text
    return env


@dataclass(frozen=True)
class NavItem:
    label: str
    path: str


def render_page(
    template: str,
    page_path: str,
    title: str,
    twin: str | None,
    context: dict[str, Any],
    common: dict[str, Any],
    nav: list[NavItem],
) -> str:
    """A page, from nothing but its arguments (so that any process renders it the same)."""
    section = page_path.split("/", 1)[0] if "/" in page_path else page_path
    return (
        make_environment()
        .get_template(template)
        .render(**common, **context, nav=nav, section=section, page_path=page_path, title=title, twin=twin)
    )


class PagePool(Protocol):
    def render(self, w: SiteWriter, rel: str, payload: bytes | None, local: Callable[[], str]) -> None: ...


class Renderer:
    """Renders pages with what every page shares: the program, the navigation, the demo banner."""

    def __init__(
        self,
        common: dict[str, Any],
        nav: list[NavItem],
        memo: PageMemo | None = None,
        pool: PagePool | None = None,
        rows: RowDigests | None = None,
    ) -> None:
        self.env = make_environment()
        self.common = common
        self.nav = nav
        self.memo = memo or PageMemo(None, None)
        self.pool = pool
        # The row objects hashed once a build, for the pages whose writer says they hold rows that
        # other pages hold too (`write`'s rows_apart).
        self.rows = rows

    def write(
        self,
        w: SiteWriter,
        template: str,
        page_path: str,
        title: str,
        twin: str | None,
        *,
        rows_apart: bool = False,
        **context: Any,
    ) -> None:
        """Render a page into `w` (on another core, with a `pool`), or take the last release's file
        when the memo has it made from the very same values (generator.state.page_cache).

        `rows_apart`: the values hold rows (Renderer.rows) that other pages hold too, such as a
        system's runs on each of its pages: the key hashes each by its digest, made once a build
        (digest_with_rows), not by pickling it again. A Python call for each object the values
        hold, so only where the rows shared outweigh it."""
        parts = (template, page_path, title, twin, context, self.common, self.nav)
        # With rows apart, pickled whole only when rendered: a page taken costs its key alone.
        apart = self.rows if rows_apart else None
        payload = pickled(parts) if apart is None else None
        try:
            key: str | None = digest_of(parts, payload) if apart is None else digest_with_rows(parts, apart)
        except Unhashable:
            key = None
        if key is not None and self._reuse(w, page_path, key):
            return
        if apart is not None:
            payload = pickled(parts)
        self._render(w, template, page_path, title, twin, context, payload)

    def write_keyed(
        self,
        w: SiteWriter,
        template: str,
        page_path: str,
        twin: str | None,
        inputs: Any,
        make: Callable[[], tuple[str, dict[str, Any]]],
    ) -> bool:
        """A page keyed by what it is made *from* rather than by its values: `inputs` must hold
        everything `make()` (which gives the title and the context) reads, so that a page the
        memo knows costs a hash of its inputs, not the building of its view. The key is tagged
        apart from `write`'s, so that the two kinds never answer for each other. Returns whether
        the page was made (`make` called), not taken from the last release."""
        key = self._inputs_key(template, page_path, twin, inputs)
        if key is not None and self._reuse(w, page_path, key):
            return False
        title, context = make()
        payload = pickled((template, page_path, title, twin, context, self.common, self.nav))
        self._render(w, template, page_path, title, twin, context, payload)
        return True

    def known_keyed(self, template: str, page_path: str, twin: str | None, inputs: Any) -> str | None:
        """The SHA-256 the last release's file for a page `write_keyed` would make from `inputs`
        must have to be taken as it is (the memo knows it made from those inputs); None when it
        would be made. Asks the memo as `write_keyed` would, so that the page stays keyed in the
        next memo; whoever takes it counts it with `count_reused`."""
        key = self._inputs_key(template, page_path, twin, inputs)
        return None if key is None else self.memo.known(page_path, key)

    def count_reused(self) -> None:
        self.memo.reused += 1

    def _inputs_key(self, template: str, page_path: str, twin: str | None, inputs: Any) -> str | None:
        # Tagged apart from `write`'s keys, so that the two kinds never answer for each other.
        try:
            return digest_of(("inputs", template, page_path, twin, inputs, self.common, self.nav))
        except Unhashable:
            return None

    def _reuse(self, w: SiteWriter, page_path: str, key: str) -> bool:
        """Take page `page_path` from the last release (and count it) when the memo knows it made
        from the values whose key is `key` and the file still holds the bytes it had."""
        digest = self.memo.known(page_path, key)
        if digest is not None and w.link_previous(page_path, digest):
            self.memo.reused += 1
            return True
        return False

    def _render(
        self,
        w: SiteWriter,
        template: str,
        page_path: str,
        title: str,
        twin: str | None,
        context: dict[str, Any],
        payload: bytes | None,
    ) -> None:
        """Render into `w`: here, or on another core from `payload` (the pickled arguments)."""
        self.memo.rendered += 1

        def local() -> str:
            return self.page(template, page_path, title, twin, **context)

        if self.pool is None:
            w.write_text(page_path, local())
        else:
            self.pool.render(w, page_path, payload, local)

    def page(self, template: str, page_path: str, title: str, twin: str | None, **context: Any) -> str:
        return render_page(template, page_path, title, twin, context, self.common, self.nav)
