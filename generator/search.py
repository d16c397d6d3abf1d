"""Search over the site's records, on any static host: a Pagefind index of the record pages,
searched in the reader's browser by the search page; the sorted lists stay the way to browse
without JavaScript.

What is indexed is each record page's *search record* (`SearchRecord`): a few lines of facts
(title, summary, names, serial, ids, hashes) that base.html renders hidden, marked
`data-pagefind-body`, never the whole page. Indexing whole pages costs Pagefind about 400 kB
of memory a page (9 GiB for 25,000 certificate pages); the records cost about 8 kB. List
pages are never indexed: a page of the commitments holds a thousand rows.

The build runs the pinned `pagefind` binary (PyPI pagefind-bin) on hard links to the record
pages, in a scratch folder of the staging directory, and publishes the part of its bundle the
search page uses through the SiteWriter, so that every file of it is listed in SHA256SUMS.
Pagefind's output depends only on the pages given to it (not on their folder, the clock or
the number of threads): the same data builds the same bytes.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from generator import layout, views
from generator.errors import TransparencyError
from generator.gather import CertificateRecord, MethodologyVersion, RevealedItem
from generator.progress import Progress
from generator.verifier import Revocation
from generator.writer import SiteWriter


class SearchIndexError(TransparencyError):
    """Pagefind is missing, failed, or indexed other pages than the records it was given."""


@dataclass(frozen=True)
class Fact:
    """One line of a search record: `label: value` in the indexed text, and `value` returned
    with each result under the metadata key `key`."""

    key: str
    label: str
    value: str


@dataclass(frozen=True)
class SearchRecord:
    """What a record page tells the search index: its result's title and one-line summary, and
    its facts, every word of which can be searched for (the title and summary repeat facts).

    No Pagefind filter is set: Pagefind writes a filter's values in an order that changes from
    run to run (a hash map's), so a site with filters would not build the same bytes twice. The
    facts are metadata, which it writes in order, and a filter can be made of them in the page's
    script should one be wanted."""

    kind: str  # "certificate", "item", "system" or "methodology"
    title: str
    summary: str
    facts: tuple[Fact, ...]


# The start tag search_macros.html gives a record; text from data can never contain it (its `<`
# would be escaped), so a page holding it is a page rendered with a record.
MARKER = b'<div class="search-record" hidden data-pagefind-body>'

# Pages that may carry a record, as layout patterns whose `*` stands for one path segment. A
# page among them without a record is not indexed; a page outside them never is.
RECORD_PAGES: tuple[tuple[str, str], ...] = (
    ("certificate", layout.certificate_page("*")),
    ("item", layout.item_page("*")),
    ("system", layout.system_page("*")),
    ("methodology", layout.methodology_page("*")),
)
_RECORD_PATTERNS = tuple(
    (kind, re.compile(re.escape(pattern).replace(r"\*", "[^/]+"))) for kind, pattern in RECORD_PAGES
)

# The part of Pagefind's bundle a search through its JavaScript API loads: the API and its
# worker, the entry and metadata files, the index and fragment chunks, and the wasm of each
# indexed language. Its ready-made interfaces (pagefind-ui, modular and component UI,
# highlight) are not published: the search page has its own.
_BUNDLE_FILES = ("pagefind.js", "pagefind-worker.js", "pagefind-entry.json")
_BUNDLE_META = re.compile(r"pagefind\.[A-Za-z0-9_-]+\.pf_meta")
_BUNDLE_CHUNKS = re.compile(r"(index/[A-Za-z0-9_-]+\.pf_index|fragment/[A-Za-z0-9_-]+\.pf_fragment)")
# Filter chunks: written in no fixed order (SearchRecord), so refused.
_FILTERS = "filter/"

# Every page is in English (base.html): one index, whatever a page's text.
LANGUAGE = "en"


@dataclass(frozen=True)
class Indexed:
    """What the index holds: the number of record pages of each kind (RECORD_PAGES' order)."""

    counts: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        return sum(n for _, n in self.counts)

    def count(self, kind: str) -> int:
        return dict(self.counts).get(kind, 0)


# ---- records --------------------------------------------------------------------------------


def _subject(doc: Mapping[str, Any]) -> tuple[str, str, str]:
    s = doc.get("subject")
    s = s if isinstance(s, dict) else {}
    return str(s.get("name", "")), str(s.get("version", "")), str(s.get("organization", ""))


def certificate_record(
    cert: CertificateRecord, gate_name: str, revocation: Revocation | None, generated_at: str
) -> SearchRecord:
    """A certificate's record: found by its system's name, version and organization, its
    serial, its run, its verdict and the SHA-256 of its file."""
    doc = cert.doc
    name, version, org = _subject(doc)
    verdict = str(doc.get("verdict", ""))
    verdict_words = views.VERDICT_WORDS.get(verdict, verdict)
    # A run that was not certified is a result: calling it a certificate would mislead.
    noun = "certificate" if verdict == "certified" else "result"
    standing = verdict_words
    if revocation is not None:
        standing += f", revoked on {revocation.at}"
    elif views.is_expired(cert.info.expires_at, generated_at):
        standing += f", expired on {cert.info.expires_at}"
    return SearchRecord(
        kind="certificate",
        title=f"{name} {version}: {noun} {cert.serial}",
        summary=f"{standing}. {name} {version} by {org}, on {gate_name}, issued {cert.info.at}.",
        facts=(
            Fact("serial", "Serial", cert.serial),
            Fact("system", "System", name),
            Fact("version", "Version", version),
            Fact("organization", "Organization", org),
            Fact("verdict", "Verdict", standing),
            Fact("gate", "Gate", gate_name),
            Fact("run", "Run", cert.run),
            Fact("issued", "Issued", cert.info.at),
            Fact("sha256", "SHA-256 of the certificate", cert.info.sha256),
        ),
    )


def item_record(item: RevealedItem, gate_name: str) -> SearchRecord:
    """A revealed item's record: found by its id and its commitment, the SHA-256 of its reveal
    document."""
    status = "Public item" if item.reason == "public-gate" else "Retired item"
    return SearchRecord(
        kind="item",
        title=f"Item {item.id}",
        summary=f"{status} of {gate_name}, committed {item.committed_at}, revealed {item.revealed_at}.",
        facts=(
            Fact("item", "Item", item.id),
            Fact("gate", "Gate", gate_name),
            Fact("status", "Status", status),
            Fact("committed", "Committed", item.committed_at),
            Fact("revealed", "Revealed", item.revealed_at),
            Fact("commitment", "Commitment (SHA-256 of the reveal document)", item.commitment),
        ),
    )


def system_record(name: str, versions: Sequence[str], organizations: Sequence[str], summary: str) -> SearchRecord:
    """A system's record (its page lists its runs and certificates): found by its name, its
    versions and its organizations. `summary` says where it stands, in words."""
    return SearchRecord(
        kind="system",
        title=f"{name}: its runs and certificates",
        summary=summary,
        facts=(
            Fact("system", "System", name),
            Fact("versions", "Versions", ", ".join(versions)),
            Fact("organization", "Organization", ", ".join(organizations)),
        ),
    )


def methodology_record(m: MethodologyVersion) -> SearchRecord:
    """A methodology version's record (its version page, not the copy at methodology/)."""
    return SearchRecord(
        kind="methodology",
        title=f"Methodology {m.version}",
        summary=f"The scoring rules, version {m.version}, published {m.at} (ledger entry {m.index}).",
        facts=(
            Fact("version", "Version", m.version),
            Fact("published", "Published", m.at),
            Fact("sha256", "SHA-256 of the parameter file", m.sha256),
        ),
    )


# ---- the index ------------------------------------------------------------------------------


def executable() -> Path:
    """The pagefind binary of the installed pagefind-bin package."""
    try:
        import pagefind_bin

        return Path(pagefind_bin.get_executable())
    except (ImportError, FileNotFoundError) as e:
        raise SearchIndexError(
            f"cannot build the search index: the pagefind binary is missing ({e}); install the package pagefind-bin"
        ) from None


def record_pages(w: SiteWriter) -> list[tuple[str, str]]:
    """Every page written so far that carries a search record, with its kind, sorted by path."""
    found = []
    for rel in sorted(w.hashes, key=lambda p: p.encode()):
        kind = next((k for k, pattern in _RECORD_PATTERNS if pattern.fullmatch(rel)), None)
        if kind is not None and _has_marker(w.root / rel):
            found.append((rel, kind))
    return found


def _has_marker(path: Path) -> bool:
    """Whether the page holds MARKER: read a piece at a time, and only as far as the record,
    which comes before the page's content."""
    with open(path, "rb") as f:
        tail = b""
        while chunk := f.read(1 << 16):
            if MARKER in tail + chunk:
                return True
            tail = chunk[-(len(MARKER) - 1) :]
    return False


@contextmanager
def _scratch(w: SiteWriter) -> Iterator[Path]:
    """A folder inside the staging directory (so that its hard links work, and a killed build
    leaves nothing behind the staging's own clean-up). Once the bundle is read it is moved out
    beside the staging folder, under a leftover's name, and removed in the background
    (generator.cleanup); where it cannot be moved, it is removed here."""
    root = w.root
    path = Path(tempfile.mkdtemp(prefix=".search-", dir=root))
    try:
        yield path
    finally:
        aside = Path(tempfile.mkdtemp(prefix=f"{root.name}-search-", dir=root.parent))
        try:
            os.rename(path, aside / "site")
        except OSError:  # taken by another build's clean-up of leftovers meanwhile, or not movable
            shutil.rmtree(path, ignore_errors=True)
        w.cleanup.remove(aside)


def _place(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:  # links not allowed here: a copy will do
        shutil.copyfile(source, target)


def run_pagefind(site: Path, bundle: Path) -> None:
    """Index `site` into `bundle`. Pagefind reads options from PAGEFIND_* variables and from a
    pagefind.yml in its working folder: it runs with neither, so that nothing but the pages
    decides the bytes. The paths are made absolute: it runs in another folder, and a build into
    a relative --out (the default, public) gives relative ones."""
    site, bundle = site.absolute(), bundle.absolute()
    command = [
        str(executable()),
        "--site",
        str(site),
        "--output-path",
        str(bundle),
        "--keep-index-url",  # the site links index.html explicitly: it must work from a folder
        "--force-language",
        LANGUAGE,
        "--silent",
    ]
    env = {k: os.environ[k] for k in ("SYSTEMROOT",) if k in os.environ}  # Windows cannot start a process without it
    try:
        done = subprocess.run(command, cwd=site.parent, env=env, capture_output=True, check=False)
    except OSError as e:
        raise SearchIndexError(f"cannot run pagefind ({command[0]}): {e}") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).decode("utf-8", "replace").strip()[-2000:]
        raise SearchIndexError(f"pagefind failed (exit status {done.returncode}): {said}")


def _used(present: Iterable[str], entry: Any) -> list[str]:
    """Of a bundle's files (sorted), those the search page uses, its entry file `entry` naming the
    language indexes."""
    wasm = {f"wasm.{lang.get('wasm') or 'unknown'}.pagefind" for lang in entry["languages"].values()}
    return [
        rel
        for rel in present
        if rel in _BUNDLE_FILES or rel in wasm or _BUNDLE_META.fullmatch(rel) or _BUNDLE_CHUNKS.fullmatch(rel)
    ]


def bundle_files(bundle: Path) -> list[str]:
    """The files of Pagefind's bundle that the search page uses, sorted; refuses a bundle
    without its API or entry file, and one with filters."""
    entry = json.loads((bundle / "pagefind-entry.json").read_bytes())
    present = sorted((p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()), key=str.encode)
    kept = _used(present, entry)
    if any(rel.startswith(_FILTERS) for rel in present):
        raise SearchIndexError(
            "a record page sets a Pagefind filter (data-pagefind-filter): Pagefind writes filters in an order that "
            "changes from run to run, so the site would not build the same bytes twice"
        )
    missing = sorted(set(_BUNDLE_FILES) - set(kept))
    if missing:
        raise SearchIndexError(f"pagefind's bundle lacks {', '.join(missing)}: not the pinned version?")
    return kept


def write_index(w: SiteWriter, progress: Progress | None = None, reuse: bool = False) -> Indexed:
    """Index every record page written so far and publish the bundle under
    layout.SEARCH_INDEX_DIR. Called after the last record page. With no record page, nothing
    is published (Pagefind refuses an empty site) and the search page says so. With `reuse`
    (the last release was made by this very code: the build's page memo says so), the last
    release's bundle is taken as it is when every record page is the same."""
    pages = record_pages(w)
    if progress:
        progress(f"indexing {len(pages)} record pages for search", 0, 1)
    counts = tuple((kind, sum(1 for _, k in pages if k == kind)) for kind, _ in RECORD_PAGES)
    if not pages:
        return Indexed(counts)
    kept = _unchanged_bundle(w, pages) if reuse else None
    if kept is not None and _take_bundle(w, kept):
        return Indexed(counts)
    with _scratch(w) as work:
        site, bundle = work / "site", work / "bundle"
        for rel, _ in pages:
            _place(w.root / rel, site / rel)
        run_pagefind(site, bundle)
        entry = json.loads((bundle / "pagefind-entry.json").read_bytes())
        indexed = sum(int(lang.get("page_count", 0)) for lang in entry.get("languages", {}).values())
        if indexed != len(pages):
            raise SearchIndexError(
                f"pagefind indexed {indexed} pages of the {len(pages)} search records given to it: a record page "
                f"whose record it did not read"
            )
        for rel in bundle_files(bundle):
            w.write(f"{layout.SEARCH_INDEX_DIR}/{rel}", (bundle / rel).read_bytes())
    return Indexed(counts)


def _take_bundle(w: SiteWriter, kept: list[str]) -> bool:
    """Take the last release's bundle, each file only if it still has the SHA-256 its
    SHA256SUMS lists (a file edited in the published folder is never carried over): all of it,
    or, if any file is missing or differs, none (False, and Pagefind runs)."""
    prefix = f"{layout.SEARCH_INDEX_DIR}/"
    taken = []
    for rel in kept:
        try:
            data = w.previous_file(prefix + rel).read_bytes()
        except OSError:
            return False
        if hashlib.sha256(data).hexdigest() != w.previous_digest(prefix + rel):
            return False
        taken.append((prefix + rel, data))
    for rel, data in taken:
        w.write(rel, data)
    return True


def _unchanged_bundle(w: SiteWriter, pages: list[tuple[str, str]]) -> list[str] | None:
    """The last release's bundle files, when the index would be its own: the same record pages,
    each with the same bytes, indexed by the same version of Pagefind (whose bundle is a
    function of the pages alone). None otherwise, and Pagefind runs."""
    previous = w.previous_paths()
    if not previous:
        return None
    was = {rel for rel in previous if any(p.fullmatch(rel) for _, p in _RECORD_PATTERNS)}
    if was != {rel for rel, _ in pages} or any(w.previous_digest(rel) != w.hashes[rel] for rel, _ in pages):
        return None
    prefix = f"{layout.SEARCH_INDEX_DIR}/"
    try:
        entry = json.loads(w.previous_file(f"{prefix}pagefind-entry.json").read_bytes())
        if entry.get("version") != importlib.metadata.version("pagefind_bin"):
            return None
        # The bundle's files, kept by bundle_files' rules (the folder holds the search script
        # too, which is not Pagefind's).
        in_folder = sorted((p.removeprefix(prefix) for p in previous if p.startswith(prefix)), key=str.encode)
        return _used(in_folder, entry)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, importlib.metadata.PackageNotFoundError):
        return None


def write_script(w: SiteWriter) -> None:
    """The search page's script (site_templates/search.js), beside the bundle it reads."""
    w.write(layout.SEARCH_PAGE_SCRIPT, (files("site_templates") / "search.js").read_bytes())
