"""A built site in a real browser: the site served on 127.0.0.1, Debian's Chromium driven by
Playwright (Playwright's own browser download is not used), axe-core injected into pages, and
the site's page kinds found from its files.

A missing Chromium, Playwright or axe-core skips the tests that need them, with the reason;
with CI set they fail instead (.ci/run installs Chromium and `make test` installs axe-core).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NoReturn

import pytest

from generator.core import layout
from tests.support.demo import REPO
from tests.support.manifest import whole_manifest

AXE = REPO / "tests" / "browser" / "node_modules" / "axe-core" / "axe.min.js"
# The height matters little: widths are what the tests vary. 844 is a phone's, 900 a laptop's.
HEIGHTS = {320: 640, 390: 844, 1280: 900}
# WCAG 2.0, 2.1 and 2.2 at levels A and AA, and axe's best practices (landmarks, one h1, …).
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa", "best-practice"]
BLOCKING = ("serious", "critical")
# Chromium talks to nobody but the test server: no update checks, no sync, no QUIC probing.
CHROMIUM_ARGS = [
    "--no-sandbox",  # containers and CI runners as root have no user namespaces for the sandbox
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
MIME_TYPES = {
    ".css": "text/css",
    ".html": "text/html",
    ".js": "text/javascript",
    ".json": "application/json",
    ".pagefind": "application/octet-stream",
    ".pf_fragment": "application/octet-stream",
    ".pf_index": "application/octet-stream",
    ".pf_meta": "application/octet-stream",
    ".wasm": "application/wasm",
    ".xml": "application/xml",
    ".atom": "application/atom+xml",
    ".sig": "text/plain",
    ".tlog-proof": "text/plain",
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".pem": "text/plain",
    ".py": "text/plain",
}


def chromium_executable() -> Path | None:
    """$CHROMIUM, else Debian's /usr/bin/chromium, if it is there."""
    named = os.environ.get("CHROMIUM") or "/usr/bin/chromium"
    found = shutil.which(named)
    return Path(found) if found else None


def missing(axe: bool = False) -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if chromium_executable() is None:
        return "Chromium is not installed (Debian: apt install chromium; or set $CHROMIUM)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed (make test installs it)"
    if axe and not AXE.is_file():
        return f"axe-core is not installed: run npm ci --prefix tests/browser (no {AXE.relative_to(REPO)})"
    return None


def unavailable(reason: str) -> NoReturn:
    """Skip, saying why; but in CI, where everything must be installed, fail."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser tests: {reason}", pytrace=False)
    pytest.skip(reason)


def require(axe: bool = False) -> None:
    reason = missing(axe)
    if reason is not None:
        unavailable(reason)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve `folder` on 127.0.0.1 (a free port) while the block runs; yields its base URL,
    ending in a slash. Threaded: a page's stylesheet and scripts load in parallel."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name=f"serve {folder}", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, through Playwright (a playwright Browser). Skips (fails in
    CI) when Chromium or Playwright is missing. Each context it opens has a fresh profile."""
    require()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(chromium_executable()), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Tab:
    """A page in a context of its own, with what went wrong in it: console errors, uncaught
    exceptions, failed requests and any request that left the site."""

    page: Any
    errors: list[str] = field(default_factory=list)

    def close(self) -> None:
        self.page.context.close()


def new_page(chromium: Any, base_url: str, width: int, height: int | None = None) -> Tab:
    """A fresh context (no cookies, no storage, no cache) at `width` CSS pixels, 1 px per
    device pixel. Requests outside `base_url` are refused and recorded: the site must load
    nothing from elsewhere."""
    context = chromium.new_context(
        viewport={"width": width, "height": height or HEIGHTS.get(width, 900)},
        device_scale_factor=1,
        locale="en-US",
        timezone_id="UTC",
        reduced_motion="reduce",
    )
    page = context.new_page()
    tab = Tab(page)

    def on_console(message: Any) -> None:
        if message.type == "error":
            location = message.location
            where = f" ({location['url']}:{location['lineNumber']})" if location and location.get("url") else ""
            tab.errors.append(f"console error: {message.text}{where}")

    def on_request(route: Any) -> None:
        url = route.request.url
        if url.startswith(base_url):
            route.continue_()
        else:
            tab.errors.append(f"request outside the site: {url}")
            route.abort("blockedbyclient")

    def on_failed(request: Any) -> None:
        if request.url.startswith(base_url):  # the others are recorded by on_request
            tab.errors.append(f"request failed: {request.url} ({request.failure})")

    page.on("console", on_console)
    page.on("pageerror", lambda error: tab.errors.append(f"uncaught exception: {error.name}: {error.message}"))
    page.on("requestfailed", on_failed)
    context.route("**/*", on_request)
    return tab


def page_width(page: Any) -> int:
    """The document's width: wider than the viewport means the page scrolls sideways."""
    return int(page.evaluate("document.documentElement.scrollWidth"))


# Elements that stick out of a parent that fits the viewport: where a sideways scroll starts.
_OVERFLOWING = """() => {
  const limit = document.documentElement.clientWidth + 0.5;
  const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
    + [...e.classList].map(c => '.' + c).join('');
  const path = e => { const names = []; for (let n = e; n && n !== document.body; n = n.parentElement)
    names.unshift(name(n)); return names.slice(-4).join(' > '); };
  const clipped = e => { for (let n = e.parentElement; n && n !== document.body; n = n.parentElement)
    if (getComputedStyle(n).overflowX !== 'visible') return true; return false; };
  const out = [];
  for (const e of document.body.querySelectorAll('*')) {
    const r = e.getBoundingClientRect(), p = e.parentElement.getBoundingClientRect();
    if (r.width && r.right > limit && p.right <= limit && !clipped(e)) {
      const text = (e.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 60);
      out.push(`${path(e)}: ${Math.round(r.width)} px wide, right edge at ${Math.round(r.right)}`
        + (text ? ` ("${text}")` : ''));
    }
  }
  return out;
}"""


def overflowing(page: Any) -> list[str]:
    """Where the page is wider than its viewport: each element that sticks out of a parent
    that fits, with its path, width and text, for a failure message."""
    return list(page.evaluate(_OVERFLOWING))


def axe(page: Any) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is, for AXE_TAGS. The script is evaluated
    through the DevTools protocol, so a Content-Security-Policy of the site cannot stop it and
    need not be switched off (the tests see the policy the public gets)."""
    require(axe=True)
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    options = {"runOnly": {"type": "tag", "values": AXE_TAGS}, "resultTypes": ["violations"]}
    result = page.evaluate("options => axe.run(document, options)", options)
    return list(result["violations"])


def blocking(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The violations the site must not have: impact serious or critical."""
    return [v for v in violations if v.get("impact") in BLOCKING]


def describe(violations: list[dict[str, Any]]) -> str:
    """Each violation with its id, impact, help URL and every node's selector and summary."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']} <{v['helpUrl']}>")
        for node in v["nodes"]:
            target = " ".join(json.dumps(t) if not isinstance(t, str) else t for t in node["target"])
            summary = " ".join(node.get("failureSummary", "").split())
            lines.append(f"    {target}: {summary}" if summary else f"    {target}")
    return "\n".join(lines)


@dataclass
class Browsing:
    """One site served and one browser to look at it with."""

    base_url: str
    chromium: Any

    def open(self, path: str, width: int) -> Tab:
        """The page at site path `path`, loaded, and quiet on the network for half a second:
        errors of what it fetches once loaded are recorded too."""
        tab = new_page(self.chromium, self.base_url, width)
        tab.page.goto(self.base_url + path, wait_until="load")
        tab.page.wait_for_load_state("networkidle")
        return tab


@contextmanager
def browsing(folder: Path) -> Iterator[Browsing]:
    """`folder` served and Chromium launched, for a test module's fixture:

    @pytest.fixture(scope="module")
    def site(demo_site: BuiltSite) -> Iterator[Browsing]:
        with browsing(demo_site.out) as b:
            yield b
    """
    with browser() as chromium, serve(folder) as base_url:
        yield Browsing(base_url, chromium)


# ---- page kinds -------------------------------------------------------------------------------

_LISTING = re.compile(r"(index|page-[0-9]+)\.html")
# A record page's kind, by the folder of its family; other families get "<folder>-page".
_FAMILIES = {"methodology": "methodology-version", "gates": "gate", "systems": "system"}


def page_kind(path: str) -> str:
    """A page's kind from its path alone: a listing and its later pages (index.html,
    page-N.html) are one kind; the pages of one record each in a folder are one kind."""
    parts = path.split("/")
    if _LISTING.fullmatch(parts[-1]):
        parts.pop()
    else:
        parts[-1] = parts[-1].removesuffix(".html")
    if not parts:
        return "home"
    if len(parts) == 1:
        return parts[0]
    family = "/".join(parts[:-1])
    return _FAMILIES.get(family, family.replace("/", "-") + "-page")


def _json(site: Path, path: str) -> Any:
    return json.loads((site / path).read_bytes())


def page_kinds(site: Path) -> dict[str, list[str]]:
    """Every HTML page of a built site, by kind (each kind's pages sorted). Certificates are
    told apart by state (revoked, else their verdict) and item pages by why the item was
    revealed, read from the site's own manifest; every other page by its path."""
    by_page: dict[str, str] = {}
    manifest = whole_manifest(site)
    revoked = {r["serial"] for r in _json(site, layout.REVOCATIONS)["revocations"]}
    for entry in manifest["certificates"]:
        serial = entry["serial"]
        state = "revoked" if serial in revoked else _json(site, entry["path"])["verdict"]
        by_page[layout.certificate_page(serial)] = f"certificate-{state}"
    for reveal in manifest["reveals"]:
        by_page[layout.item_page(reveal["id"])] = f"item-{reveal['reason']}"
    kinds: dict[str, list[str]] = {}
    for file in sorted(site.rglob("*.html")):
        path = file.relative_to(site).as_posix()
        kinds.setdefault(by_page.get(path) or page_kind(path), []).append(path)
    return dict(sorted(kinds.items()))


def representatives(site: Path) -> dict[str, str]:
    """One page per kind: its largest (the most rows and the longest values, so the likeliest
    to overflow a narrow screen), the first by path among equals."""
    return {kind: min(pages, key=lambda p: (-(site / p).stat().st_size, p)) for kind, pages in page_kinds(site).items()}
