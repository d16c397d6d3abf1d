"""A built site read as HTML, the way a browser would see the markup (BeautifulSoup's html.parser): its pages, a
link resolved to the file it names, and what is wrong with a page (a broken link, a foreign script, an external
resource, a JSON twin that is missing) or with a whole site; and a paginated list followed page by page."""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

from bs4 import BeautifulSoup, Tag

from generator.core import layout

# Elements whose src/href/data/srcset/poster the browser fetches by itself.
LOADED = (
    "link",
    "script",
    "img",
    "iframe",
    "frame",
    "source",
    "audio",
    "video",
    "track",
    "embed",
    "object",
    "input",
    "image",
    "use",
)
LOAD_ATTRS = ("src", "href", "data", "srcset", "poster", "xlink:href")
REMOTE_CSS = re.compile(r"""(@import|url\(\s*['"]?\s*(?:[a-z][a-z0-9+.-]*:|//))""", re.IGNORECASE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def html_pages(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html") if p.is_file())


def soup_of(root: Path, page: str) -> BeautifulSoup:
    return BeautifulSoup((root / page).read_text(encoding="utf-8"), "html.parser")


def resolve(root: Path, page: str, ref: str) -> tuple[str | None, str | None]:
    """Resolve a relative reference from `page`; return (site path, None) or (None, why it is wrong)."""
    if not ref:
        return None, "empty reference"
    if ref.startswith("/"):
        return None, "absolute (leading '/')"
    if SCHEME.match(ref):
        return None, "has a scheme"
    path = ref.split("#", 1)[0]
    if "?" in path:
        return None, "has a query string (a static site from disk has none)"
    if not path:  # a fragment of this very page
        return page, None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None, f"leaves the site ({joined})"
    target = root / joined
    if not target.resolve().is_relative_to(root.resolve()):
        return None, f"resolves outside the site ({target.resolve()})"
    if target.is_dir():
        return None, f"is a directory ({joined}), which a browser reading from disk does not open as index.html"
    if not target.is_file():
        return None, f"names no file of the site ({joined})"
    return joined, None


# The scripts a page may load: the in-browser check and the search index's own code, each a
# file of the site, none inline.
OWN_SCRIPTS = ("check.js", "search.js")
OWN_SCRIPT_FOLDERS = ("pagefind/",)


def foreign_scripts(root: Path, page: str, s: BeautifulSoup) -> list[Tag]:
    """Every <script> that is not an empty element loading one of the site's own scripts."""
    out = []
    for el in s.find_all("script"):
        src = el.get("src")
        target = resolve(root, page, str(src))[0] if src else None
        own = target is not None and (target in OWN_SCRIPTS or target.startswith(OWN_SCRIPT_FOLDERS))
        if not own or el.get_text().strip() or set(el.attrs) - {"src", "defer", "type"}:
            out.append(el)
    return out


def page_problems(root: Path, page: str) -> list[str]:
    """Every structural, link and no-external-resource problem of one page."""
    s = soup_of(root, page)
    out: list[str] = []

    def bad(msg: str) -> None:
        out.append(f"{page}: {msg}")

    html = s.find("html")
    if not isinstance(html, Tag) or not (html.get("lang") or "").strip():
        bad("<html> without a lang attribute")
    if not any(m.get("charset") for m in s.find_all("meta")):
        bad("no <meta charset>")
    title = s.find("title")
    if title is None or not title.get_text(strip=True):
        bad("no <title> or an empty one")
    navs = s.find_all("nav")
    if not navs or not any(n.find("a", href=True) for n in navs):
        bad("no <nav> with links")
    h1s = s.find_all("h1")
    if len(h1s) != 1:
        bad(f"expected exactly one <h1>, found {len(h1s)}")
    if s.find("base") is not None:
        bad("a <base> element changes how every link resolves")

    # No inline JavaScript, and no script but the site's own files: the site works without them.
    for el in foreign_scripts(root, page, s):
        bad(f"a <script> element: {str(el)[:80]!r}")
    for el in s.find_all(True):
        for attr in el.attrs:
            if attr.lower().startswith("on"):
                bad(f"an event handler attribute {attr!r} on <{el.name}>")

    # Every reference: internal ones resolve to a file of the site; only <a> may point elsewhere.
    for el in s.find_all(True):
        for attr in ("href", "src"):
            ref = el.get(attr)
            if ref is None:
                continue
            ref = ref.strip() if isinstance(ref, str) else " ".join(ref)
            if el.name == "a" and (ref.lower().startswith(("http://", "https://"))):
                continue  # an external link for reading, fetched only if the reader follows it
            _, why = resolve(root, page, ref)
            if why:
                bad(f"<{el.name} {attr}={ref!r}> {why}")

    # Nothing the browser loads comes from another host.
    for el in s.find_all(LOADED):
        for attr in LOAD_ATTRS:
            v = el.get(attr)
            if v is None:
                continue
            v = v if isinstance(v, str) else " ".join(v)
            for part in re.split(r"[\s,]+", v.strip()):
                if part.startswith("//") or re.match(r"^[a-z][a-z0-9+.-]*:", part, re.IGNORECASE):
                    bad(f"<{el.name} {attr}={v!r}> loads a resource from elsewhere")
    for el in s.find_all("style"):
        if REMOTE_CSS.search(el.get_text()):
            bad(f"a <style> element imports or loads a remote resource: {el.get_text()[:80]!r}")
    for el in s.find_all(style=True):
        if REMOTE_CSS.search(el["style"]):
            bad(f"an inline style on <{el.name}> loads a remote resource: {el['style']!r}")
    return out


def twin_problems(root: Path, page: str) -> list[str]:
    s = soup_of(root, page)
    out: list[str] = []
    footer = s.find("footer")
    anchors = footer.select("a.twin") if isinstance(footer, Tag) else []
    links = s.select('link[rel~="alternate"][type="application/json"]')
    if len(anchors) != 1:
        out.append(f"{page}: expected one a.twin in the footer, found {len(anchors)}")
    if len(links) != 1:
        out.append(f"{page}: expected one <link rel=alternate type=application/json>, found {len(links)}")
    targets = set()
    for el in anchors + links:
        target, why = resolve(root, page, el["href"])
        if why:
            out.append(f"{page}: JSON twin {el['href']!r} {why}")
            continue
        assert target is not None
        targets.add(target)
        try:
            json.loads((root / target).read_bytes())
        except ValueError as e:
            out.append(f"{page}: JSON twin {target} does not parse as JSON: {e}")
    if len(targets) > 1:
        out.append(f"{page}: the footer twin and the <link rel=alternate> disagree: {sorted(targets)}")
    return out


def site_problems(root: Path) -> list[str]:
    pages = html_pages(root)
    assert pages, f"{root}: no HTML pages at all"
    problems: list[str] = []
    for page in pages:
        problems += page_problems(root, page)
        problems += twin_problems(root, page)
    css = (root / layout.STYLE).read_text(encoding="utf-8")
    if REMOTE_CSS.search(css):
        problems.append(f"{layout.STYLE}: imports or loads a resource from elsewhere")
    return problems


def follow_pages(root: Path, first: str) -> list[str]:
    """The chain of pages from `first` along rel=next links, checking each rel=prev link back."""
    chain = [first]
    while True:
        page = chain[-1]
        s = soup_of(root, page)
        nexts = s.select('a[rel~="next"]')
        assert len(nexts) <= 1, f"{page}: more than one rel=next link"
        if not nexts:
            return chain
        target, why = resolve(root, page, nexts[0]["href"])
        assert why is None, f"{page}: rel=next link {nexts[0]['href']!r} {why}"
        assert target not in chain, f"{page}: rel=next goes back to {target}, a loop"
        prevs = soup_of(root, target).select('a[rel~="prev"]')
        assert len(prevs) == 1, f"{target}: expected one rel=prev link back to {page}, found {len(prevs)}"
        back, why = resolve(root, target, prevs[0]["href"])
        assert back == page, f"{target}: rel=prev leads to {back or why}, expected {page}"
        chain.append(target)
