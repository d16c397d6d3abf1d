"""What each path of a site is to a store: immutable, a page, or the checkpoint; and the headers
a reader gets with it.

The kinds decide the publish order and the caching. An immutable object is one the build never
writes twice with other bytes (format v1's artifacts, their signatures, tiles of the ledger,
archived checkpoints): it is created only if absent and cached for good. Everything else is a page
or an index a later release may rewrite: it is sent after the immutable objects and served with
`no-cache`, so a reader revalidates it. The checkpoint names the release: it goes last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from generator.core import layout


class Kind(Enum):
    IMMUTABLE = "immutable"
    PAGE = "page"
    CHECKPOINT = "checkpoint"


# Sunlight's and Tessera's headers for what never changes: a week, and "immutable" so a browser
# does not even revalidate it. Everything else is revalidated on every read.
IMMUTABLE_CACHE = "public, max-age=604800, immutable"
PAGE_CACHE = "no-cache"

# Paths that the build writes once and never again (FORMAT.md "History", reading 1; the v1
# artifacts are named by their content's identity; a label set is published byte for byte as the
# ledger committed it). `.tlog-proof` files and consistency proofs are remade against each new
# checkpoint in format v2, and the archived checkpoint of today's size gains the cosignatures that
# arrive after it was first published: pages, not immutable (in format v2; v3's are below).
_IMMUTABLE = re.compile(
    r"""^(?:
        reveals/[^/]+\.json
      | runs/[^/]+\.json
      | certificates/[^/]+\.json(?:\.sig)?
      | certificates/[^/]+/details/[^/]+\.json
      | certificates/[^/]+/grader-record\.json
      | certificates/[^/]+/evidence/[^/]+
      | certificates/[^/]+/eee/[^/]+
      | certificates/[^/]+/credential\.json
      | certificates/[^/]+/transparent-statement\.cose
      | methodology/[^/]+\.(?:json|md)
      | keys/[^/]+\.pem
      | agreement/[^/]+/labels\.json
      | ledger/tile/.+
    )$""",
    re.VERBOSE,
)

# What format v3 writes once besides (docs/formats/v3.md, 7): each inclusion proof, against the
# checkpoint of the release that first published its artifact; each archived checkpoint, as that
# release published it; each consistency proof, from a history row to the next.
_IMMUTABLE_V3 = re.compile(
    r"""^(?:
        (?:reveals|certificates)/[^/]+\.json\.tlog-proof
      | ledger/checkpoints/(?:0|[1-9][0-9]*)
      | ledger/consistency/(?:0|[1-9][0-9]*)-[1-9][0-9]*\.json
    )$""",
    re.VERBOSE,
)
SITE_FORMAT_V3 = 3

# Folders whose every file is immutable: what a `_headers` rule can name by a prefix alone.
IMMUTABLE_FOLDERS = ("ledger/tile/",)

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".cose": "application/cose",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".py": "text/x-python; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".xml": "application/xml",
    ".txt": "text/plain; charset=utf-8",
    ".pem": "application/x-pem-file",
    ".sig": "application/octet-stream",
    ".zip": "application/zip",
    ".sha256": "text/plain; charset=utf-8",
    ".tlog-proof": "text/plain; charset=utf-8",
}
# Signed notes and checksum lists are text without an extension.
_TEXT_NAMES = {layout.SUMS, layout.CHECKPOINT}
_TEXT_FOLDERS = ("ledger/checkpoints/",)  # signed notes too


@dataclass(frozen=True)
class Headers:
    content_type: str
    cache_control: str


def written_once_in_v3(path: str) -> bool:
    """One of the files format v3 adds to the immutable ones: an inclusion proof, an archived
    checkpoint, a consistency proof (docs/formats/v3.md, 7)."""
    return bool(_IMMUTABLE_V3.match(path))


def kind_of(path: str, site_format: int = 2) -> Kind:
    """The kind of a site path (relative, '/'-separated) in a site of `site_format` (2, which
    reads v1 too, 3 or 4: the manifest's word, generator.verifier's site_format)."""
    if path == layout.CHECKPOINT:
        return Kind.CHECKPOINT
    if _IMMUTABLE.match(path) or (site_format >= SITE_FORMAT_V3 and written_once_in_v3(path)):
        return Kind.IMMUTABLE
    return Kind.PAGE


def content_type(path: str) -> str:
    if path in _TEXT_NAMES or path.startswith(_TEXT_FOLDERS):
        return "text/plain; charset=utf-8"
    if path.startswith("ledger/tile/"):
        return "application/octet-stream"
    if path.endswith(".atom.xml") or path.startswith("feeds/"):
        return "application/atom+xml"
    name = path.rsplit("/", 1)[-1]
    for suffix in sorted(_TYPES, key=len, reverse=True):
        if name.endswith(suffix):
            return _TYPES[suffix]
    return "application/octet-stream"


def headers_for(path: str, site_format: int = 2) -> Headers:
    cache = IMMUTABLE_CACHE if kind_of(path, site_format) is Kind.IMMUTABLE else PAGE_CACHE
    return Headers(content_type(path), cache)


def static_host_headers() -> str:
    """A `_headers` file in the convention of static hosts (a path pattern, then its indented
    headers), for a folder such a host serves: CORS on every path, and the week-long immutable
    caching on the folders that hold nothing else. Hosts join the values of a header two rules
    set, so no rule repeats one: every other path keeps the host's default, which revalidates."""
    lines = ["/*", "  Access-Control-Allow-Origin: *", ""]
    for pattern in IMMUTABLE_FOLDERS:
        lines += [f"/{pattern}*", f"  Cache-Control: {IMMUTABLE_CACHE}", ""]
    lines += [f"/{layout.CHECKPOINT}", "  Content-Type: text/plain; charset=utf-8", f"  Cache-Control: {PAGE_CACHE}"]
    return "\n".join(lines) + "\n"
