"""Every kind of page of the demo site in Chromium, as the public sees it: at a phone's width
(390 px) and a desktop's (1280 px) each kind loads without a console error, an uncaught
exception, a failed request or a request leaving the site, is no wider than the viewport, and
axe-core finds no serious or critical violation of WCAG 2.x A/AA or its best practices; at
320 px it still reflows (WCAG 1.4.10).

The kinds are read from the committed site's files (public/) when the tests are collected, so a
new kind of page is tested as soon as public/ has it, and one test fails when the fresh build
and public/ disagree on the kinds. Each kind is looked at on its largest page of the fresh build.
The harness itself is tested on small pages of its own, good and bad.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from generator.core import layout
from tests.support.browser import (
    Browsing,
    axe,
    blocking,
    browser,
    describe,
    missing,
    overflowing,
    page_kinds,
    page_width,
    representatives,
    require,
    serve,
)
from tests.support.demo import REPO, BuiltSite

PUBLIC = REPO / "public"
KINDS = sorted(page_kinds(PUBLIC)) if (PUBLIC / layout.MANIFEST).is_file() else []
# The kinds the demo program exists to show; losing one from the demo fails, it is not skipped.
DEMO_KINDS = {
    "home",
    "methodology",
    "methodology-version",
    "pool",
    "gate",
    "retired",
    "item-retired",
    "item-public-gate",
    "runs",
    "certificates",
    "certificate-certified",
    "certificate-not-certified",
    "certificate-incomplete",
    "certificate-revoked",
    "keys",
    "verify",
    "history",
}
WIDTHS = [390, 1280]
REFLOW_WIDTHS = [320, *WIDTHS]


def cases(widths: list[int]) -> list[Any]:
    return [pytest.param(kind, width, id=f"{kind}-{width}") for kind in KINDS for width in widths]


@dataclass
class Visit:
    path: str
    errors: list[str]
    width: int
    overflowing: list[str]
    violations: list[dict[str, Any]] | None  # None: not looked for (320 px), or no axe-core


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as launched:
        yield launched


@pytest.fixture(scope="module")
def visit(chromium: Any, demo_site: BuiltSite) -> Iterator[Callable[[str, int], Visit]]:
    """Look at a kind's page at a width, once: its three tests read the one visit."""
    pages = representatives(demo_site.out)
    seen: dict[tuple[str, int], Visit] = {}
    with serve(demo_site.out) as base_url:
        site = Browsing(base_url, chromium)

        def look(kind: str, width: int) -> Visit:
            if kind not in pages:
                pytest.fail(f"the fresh demo build has no page of kind {kind!r} (public/ has one)")
            if (kind, width) not in seen:
                tab = site.open(pages[kind], width)
                try:
                    errors = list(tab.errors)
                    scroll_width = page_width(tab.page)
                    sticking_out = overflowing(tab.page) if scroll_width > width else []
                    violations = axe(tab.page) if width in WIDTHS and not missing(axe=True) else None
                finally:
                    tab.close()
                seen[kind, width] = Visit(pages[kind], errors, scroll_width, sticking_out, violations)
            return seen[kind, width]

        yield look


def test_the_demo_has_every_kind_of_page(demo_site: BuiltSite) -> None:
    absent = DEMO_KINDS - set(page_kinds(demo_site.out))
    assert not absent, f"the demo build has no page of these kinds: {sorted(absent)}"


def test_every_kind_of_page_of_the_build_is_tested(demo_site: BuiltSite) -> None:
    built = set(page_kinds(demo_site.out))
    assert built == set(KINDS), (
        f"public/ is stale (run make site): kinds only in the fresh build {sorted(built - set(KINDS))}, "
        f"only in public/ {sorted(set(KINDS) - built)}"
    )


@pytest.mark.parametrize("kind,width", cases(WIDTHS))
def test_loads_without_errors(visit: Callable[[str, int], Visit], kind: str, width: int) -> None:
    seen = visit(kind, width)
    if seen.errors:
        pytest.fail(f"{seen.path} at {width} px:\n" + "\n".join(seen.errors), pytrace=False)


@pytest.mark.parametrize("kind,width", cases(REFLOW_WIDTHS))
def test_no_sideways_scroll(visit: Callable[[str, int], Visit], kind: str, width: int) -> None:
    seen = visit(kind, width)
    if seen.width > width:
        sticking_out = "\n".join(seen.overflowing)
        pytest.fail(f"{seen.path} is {seen.width} px wide at {width} px; sticking out:\n{sticking_out}", pytrace=False)


@pytest.mark.parametrize("kind,width", cases(WIDTHS))
def test_no_serious_accessibility_violation(visit: Callable[[str, int], Visit], kind: str, width: int) -> None:
    require(axe=True)
    seen = visit(kind, width)
    assert seen.violations is not None
    bad = blocking(seen.violations)
    if bad:
        pytest.fail(f"{seen.path} at {width} px, axe-core:\n{describe(bad)}", pytrace=False)


# ---- the harness, on pages of its own ---------------------------------------------------------

HEAD = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
HEAD += '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
GOOD = HEAD + "<body><header><p>Site</p></header><main><h1>A good page</h1><p>{text}</p></main></body></html>"
PAGES = {
    "good.html": GOOD.format(title="Good", text="Short words only. " * 40),
    "wide.html": GOOD.format(title="Wide", text="<code>" + "f" * 120 + "</code>"),
    "contrast.html": GOOD.format(title="Contrast", text='<span style="color:#999;background:#aaa">faint</span>'),
    "noisy.html": GOOD.format(
        title="Noisy",
        text='<img src="missing.png" alt=""><img src="https://example.invalid/x.png" alt="">'
        '<script>console.error("boom"); window.setTimeout(() => { throw new Error("bang"); }, 0);</script>',
    ),
}


# What a browser refuses when mistyped: module scripts, WebAssembly, stylesheets.
TYPES = {
    "x.js": "text/javascript",
    "x.json": "application/json",
    "x.wasm": "application/wasm",
    "x.xml": "application/xml",
    "x.css": "text/css",
    "x.pagefind": "application/octet-stream",
}


@pytest.fixture(scope="module")
def harness(chromium: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsing]:
    folder = tmp_path_factory.mktemp("harness")
    for name, html in PAGES.items():
        (folder / name).write_text(html, encoding="utf-8")
    for name in TYPES:
        (folder / name).write_bytes(b"x")
    with serve(folder) as base_url:
        yield Browsing(base_url, chromium)


@pytest.mark.parametrize("width", REFLOW_WIDTHS)
def test_the_harness_passes_a_good_page(harness: Browsing, width: int) -> None:
    require(axe=True)
    tab = harness.open("good.html", width)
    try:
        assert tab.errors == []
        assert page_width(tab.page) == width
        assert blocking(axe(tab.page)) == []
    finally:
        tab.close()


def test_the_harness_sees_a_page_too_wide(harness: Browsing) -> None:
    tab = harness.open("wide.html", 390)
    try:
        assert page_width(tab.page) > 390
        assert any(line.startswith("main > p > code: ") for line in overflowing(tab.page)), overflowing(tab.page)
    finally:
        tab.close()


def test_the_harness_sees_poor_contrast(harness: Browsing) -> None:
    require(axe=True)
    tab = harness.open("contrast.html", 390)
    try:
        bad = blocking(axe(tab.page))
        assert [v["id"] for v in bad] == ["color-contrast"]
        assert "color-contrast (serious)" in describe(bad) and "span" in describe(bad)
    finally:
        tab.close()


def test_the_harness_sees_errors_and_requests_elsewhere(harness: Browsing) -> None:
    tab = harness.open("noisy.html", 390)
    try:
        found = "\n".join(tab.errors)
        assert "console error: boom" in found
        assert "uncaught exception: Error: bang" in found
        assert "404" in found and "missing.png" in found
        assert "request outside the site: https://example.invalid/x.png" in found
    finally:
        tab.close()


def test_the_harness_serves_the_types_a_site_needs(harness: Browsing) -> None:
    tab = harness.open("good.html", 390)
    try:
        fetch = "u => fetch(u).then(r => r.status + ' ' + r.headers.get('content-type'))"
        types = {name: tab.page.evaluate(fetch, name) for name in sorted(TYPES)}
    finally:
        tab.close()
    assert types == {name: f"200 {kind}" for name, kind in TYPES.items()}
