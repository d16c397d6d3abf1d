"""Search over the site's records, on any static host: a Pagefind index of the record pages,
searched in the reader's browser by the search page; the sorted lists stay the way to browse
without JavaScript.

What is indexed is each record page's *search record* (`SearchRecord`): a few lines of facts
(title, summary, names, serial, ids, hashes) that base.html renders hidden, marked
`data-pagefind-body`, never the whole page. Indexing whole pages costs Pagefind about 400 kB
of memory a page (9 GiB for 25,000 certificate pages); the records cost about 35 to 50 kB,
held all at once, hence the shards (SHARD_PAGES). List
pages are never indexed: a page of the commitments holds a thousand rows.

The build runs the pinned `pagefind` binary (PyPI pagefind-bin) on each shard of the record
pages in turn (SHARD_PAGES), given each page's record alone, in a scratch folder of the staging
directory, and publishes the part of each bundle the search page uses through the SiteWriter,
so that every file of it is listed in SHA256SUMS. A shard whose pages are unchanged since the
last release is taken from it. Pagefind's output depends only on the pages given to it (not on
their folder, the clock or the number of threads): the same data builds the same bytes.
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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from generator.build.gather import CertificateRecord, MethodologyVersion, RevealedItem
from generator.build.previous_release import PreviousRelease
from generator.build.writer import SiteWriter
from generator.core import layout
from generator.core.generator_errors import TransparencyError
from generator.core.progress import Progress
from generator.site.views import view_models
from generator.verifier import Revocation


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
assert all(pattern.endswith(".html") for _, pattern in RECORD_PAGES), "_kind turns away every other file first"

# The part of Pagefind's bundle a search through its JavaScript API loads: of every shard, the
# entry and metadata files and the index and fragment chunks; of the primary shard (the one
# whose script the search page loads, which merges the others), the API, its worker and the
# wasm of each indexed language too. Its ready-made interfaces (pagefind-ui, modular and
# component UI, highlight) are not published: the search page has its own.
_ENTRY = "pagefind-entry.json"
_RUNTIME_FILES = ("pagefind.js", "pagefind-worker.js")
_BUNDLE_META = re.compile(r"pagefind\.[A-Za-z0-9_-]+\.pf_meta")
_BUNDLE_CHUNKS = re.compile(r"(index/[A-Za-z0-9_-]+\.pf_index|fragment/[A-Za-z0-9_-]+\.pf_fragment)")
# Filter chunks: written in no fixed order (SearchRecord), so refused.
_FILTERS = "filter/"

# Every page is in English (base.html): one index, whatever a page's text.
LANGUAGE = "en"


@dataclass(frozen=True)
class Indexed:
    """What the index holds: the number of record pages of each kind (RECORD_PAGES' order), and
    the folders of its shards, the primary first (none when nothing is indexed)."""

    counts: tuple[tuple[str, int], ...]
    shards: tuple[str, ...] = ()

    @property
    def script(self) -> str | None:
        """Pagefind's script, in the primary shard's folder."""
        return f"{self.shards[0]}/pagefind.js" if self.shards else None

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
    verdict_words = view_models.VERDICT_WORDS.get(verdict, verdict)
    # A run that was not certified is a result: calling it a certificate would mislead.
    noun = "certificate" if verdict == "certified" else "result"
    standing = verdict_words
    if revocation is not None:
        standing += f", revoked on {revocation.at}"
    elif view_models.is_expired(cert.info.expires_at, generated_at):
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

# A shard of the index holds about this many record pages, at most, on average. Pagefind needs
# about 35 to 50 kB of memory for each page it indexes, all at once: 1.4 GiB for the 42,000
# record pages of a full-scale program. Indexed a shard at a time, it needs about 100 MB; and a
# changed record re-indexes its shard, not the whole site.
SHARD_PAGES = 2048


def shard_bits(candidates: int) -> int:
    """How many bits of a page's hash choose its shard: the fewest that give `candidates` record
    pages no more than SHARD_PAGES a shard on average. The count doubles the shards each time it
    doubles: every page is then re-indexed once, as a hash table grows."""
    bits = 0
    while candidates > SHARD_PAGES << bits:
        bits += 1
    return bits


def shard_of(rel: str, bits: int) -> int:
    """The shard of the page at `rel`: the first `bits` bits of the SHA-256 of its path, which
    neither an insertion nor the order of the pages moves."""
    if bits == 0:
        return 0
    return int.from_bytes(hashlib.sha256(rel.encode("utf-8")).digest()[:4], "big") >> (32 - bits)


def shard_name(shard: int, bits: int) -> str:
    """The shard's folder under layout.SEARCH_INDEX_DIR: its number in hex, of a width the bit
    count fixes (0 for a site of one shard; 00 to ff for 256)."""
    return f"{shard:0{max(1, -(-bits // 4))}x}"


def executable() -> Path:
    """The pagefind binary of the installed pagefind-bin package."""
    try:
        import pagefind_bin

        return Path(pagefind_bin.get_executable())
    except (ImportError, FileNotFoundError) as e:
        raise SearchIndexError(
            f"cannot build the search index: the pagefind binary is missing ({e}); install the package pagefind-bin"
        ) from None


def _kind(rel: str) -> str | None:
    # Every pattern is of a page: the test that turns away the 300,000 other files of a
    # million-item site, in one call each.
    if not rel.endswith(".html"):
        return None
    return next((k for k, pattern in _RECORD_PATTERNS if pattern.fullmatch(rel)), None)


def record_pages(w: SiteWriter, memory: dict[str, bool] | None = None) -> list[tuple[str, str]]:
    """Every page written so far that carries a search record, with its kind, sorted by path.
    `memory` (generator.state.search_record_cache: a page's SHA-256 -> whether it carries one)
    answers for the pages whose bytes it knows, which are then not read; it is left holding the
    answer for each page of RECORD_PAGES' patterns written so far, and no other."""
    known = memory if memory is not None else {}
    facts: dict[str, bool] = {}
    found = []
    for rel in sorted(w.hashes, key=lambda p: p.encode()):
        kind = _kind(rel)
        if kind is None:
            continue
        sha = w.hashes[rel]
        marked = known.get(sha)
        if marked is None:
            marked = _record_of(w.root / rel, rel) is not None
        facts[sha] = marked
        if marked:
            found.append((rel, kind))
    if memory is not None:
        memory.clear()
        memory.update(facts)
    return found


def _record_of(path: Path, rel: str) -> bytes | None:
    """The page's search record, from MARKER to its end tag (search_macros.html puts no element
    inside it that ends with one), or None for a page without one. The page is read a piece at a
    time, and only as far as the record, which comes before the page's content."""
    with open(path, "rb") as f:
        seen = b""
        while chunk := f.read(1 << 16):
            seen += chunk
            start = seen.find(MARKER)
            if start < 0:
                seen = seen[-(len(MARKER) - 1) :]
                continue
            end = seen.find(_RECORD_END, start)
            while end < 0 and (more := f.read(1 << 16)):
                seen += more
                end = seen.find(_RECORD_END, start)
            if end < 0:
                raise SearchIndexError(f"{rel}: its search record does not end (no {_RECORD_END.decode()})")
            return seen[start : end + len(_RECORD_END)]
    return None


_RECORD_END = b"</div>"
# What Pagefind is given for a record page: its record alone, in a page of its own at the same
# path. The bundle is the same as the whole page's (the record is all Pagefind reads of it),
# made in a sixth of the time.
_STUB_HEAD = b'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"></head><body>'
_STUB_TAIL = b"</body></html>"


@contextmanager
def _scratch(w: SiteWriter) -> Iterator[Path]:
    """A folder inside the staging directory (so that a killed build leaves nothing behind the
    staging's own clean-up). Once the bundles are read it is moved out beside the staging
    folder, under a leftover's name, and removed in the background (generator.core.cleanup); where it
    cannot be moved, it is removed here."""
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


def _wasm(entry: Any) -> set[str]:
    return {f"wasm.{lang.get('wasm') or 'unknown'}.pagefind" for lang in entry["languages"].values()}


def _used(present: Iterable[str], entry: Any, primary: bool) -> list[str]:
    """Of a bundle's files (sorted), those the search page uses, its entry file `entry` naming the
    language indexes: a shard's index files, and in the primary shard's folder, where
    Pagefind's script looks for them, its script, worker and wasm too."""
    runtime = {*_RUNTIME_FILES, *_wasm(entry)} if primary else set()
    return [
        rel
        for rel in present
        if rel == _ENTRY or rel in runtime or _BUNDLE_META.fullmatch(rel) or _BUNDLE_CHUNKS.fullmatch(rel)
    ]


def bundle_files(bundle: Path, primary: bool) -> list[str]:
    """The files of a shard's bundle that the search page uses, sorted; refuses a bundle
    without its script or entry file, and one with filters."""
    entry = json.loads((bundle / _ENTRY).read_bytes())
    present = sorted((p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()), key=str.encode)
    kept = _used(present, entry, primary)
    if any(rel.startswith(_FILTERS) for rel in present):
        raise SearchIndexError(
            "a record page sets a Pagefind filter (data-pagefind-filter): Pagefind writes filters in an order that "
            "changes from run to run, so the site would not build the same bytes twice"
        )
    missing = sorted({*_RUNTIME_FILES, _ENTRY} - set(kept)) if primary else ([] if _ENTRY in kept else [_ENTRY])
    if missing:
        raise SearchIndexError(f"pagefind's bundle lacks {', '.join(missing)}: not the pinned version?")
    return kept


@dataclass(frozen=True)
class _Shard:
    number: int
    name: str
    candidates: tuple[str, ...]  # the pages of RECORD_PAGES' patterns that fall in it, sorted
    pages: tuple[str, ...]  # those of them that carry a record

    @property
    def folder(self) -> str:
        return f"{layout.SEARCH_INDEX_DIR}/{self.name}"


def _shards(paths: Iterable[str], marked: Callable[[str], bool] | None) -> tuple[int, dict[int, _Shard]]:
    """The shards of a site whose files are `paths`; `marked` says which candidates carry a
    record (None: not asked, for the last release, whose shards are compared by bytes)."""
    candidates = sorted((rel for rel in paths if _kind(rel) is not None), key=str.encode)
    bits = shard_bits(len(candidates))
    groups: dict[int, list[str]] = {}
    for rel in candidates:
        groups.setdefault(shard_of(rel, bits), []).append(rel)
    return bits, {
        n: _Shard(n, shard_name(n, bits), tuple(group), tuple(r for r in group if marked is None or marked(r)))
        for n, group in sorted(groups.items())
    }


def write_index(
    w: SiteWriter, progress: Progress | None = None, reuse: bool = False, memory: dict[str, bool] | None = None
) -> Indexed:
    """Index every record page written so far and publish the index under
    layout.SEARCH_INDEX_DIR, in shards (SHARD_PAGES): each a Pagefind bundle of its own, which
    the search page merges. Called after the last record page. With no record page, nothing is
    published (Pagefind refuses an empty site) and the search page says so. With `reuse` (the
    last release was made by this very code: the build's page memo says so), a shard whose
    pages all have the bytes they had in the last release is taken from it as it is. `memory`:
    which pages carry a record, by SHA-256, read and refreshed (`record_pages`)."""
    kinds = dict(record_pages(w, memory))
    counts = tuple((kind, sum(1 for k in kinds.values() if k == kind)) for kind, _ in RECORD_PAGES)
    bits, every = _shards(w.hashes, kinds.__contains__)
    shards = [s for s in every.values() if s.pages]
    if not shards:
        return Indexed(counts, ())
    primary = shards[0]
    last = w.previous if reuse else None
    reusable = _reusable(w, last, bits, shards) if last is not None else {}
    runtime = None
    if last is not None and primary.number in reusable:
        runtime = _previous_runtime(last, primary, reusable[primary.number][1])
    if runtime is None:  # its script, worker and wasm are not in the last release: Pagefind makes them
        reusable.pop(primary.number, None)
    stale = []
    for s in shards:
        rels = reusable[s.number][0] if last is not None and s.number in reusable else None
        # Its files unread where the hash index vouches for each (thousands of small files a
        # shard), else read and checked against the last release's list.
        if rels is not None and w.take_unchanged(rels, {}):
            continue
        files = _previous_bytes(last, rels) if last is not None and rels is not None else None
        if files is None:
            stale.append(s)
        else:
            _take(w, files)
    if primary not in stale and runtime is not None:
        _take(w, runtime)
    if progress:
        progress(f"indexing {len(kinds)} record pages for search, in {len(shards)} shards ({len(stale)} changed)", 0, 1)
    if stale:
        with _scratch(w) as work:
            for i, s in enumerate(stale, 1):
                _index_shard(w, s, work / s.name, primary=s is primary)
                if progress:
                    progress(f"indexing {len(kinds)} record pages for search, in {len(shards)} shards", i, len(stale))
    return Indexed(counts, tuple(s.folder for s in shards))


def _index_shard(w: SiteWriter, shard: _Shard, work: Path, primary: bool) -> None:
    """Run Pagefind on the shard's records alone, and publish its bundle."""
    site, bundle = work / "site", work / "bundle"
    for rel in shard.pages:
        record = _record_of(w.root / rel, rel)
        assert record is not None
        target = site / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_STUB_HEAD + record + _STUB_TAIL)
    run_pagefind(site, bundle)
    entry = json.loads((bundle / _ENTRY).read_bytes())
    indexed = sum(int(lang.get("page_count", 0)) for lang in entry.get("languages", {}).values())
    if indexed != len(shard.pages):
        raise SearchIndexError(
            f"pagefind indexed {indexed} pages of the {len(shard.pages)} search records given to it: a record page "
            f"whose record it did not read"
        )
    for rel in bundle_files(bundle, primary):
        w.write(f"{shard.folder}/{rel}", (bundle / rel).read_bytes())


def _take(w: SiteWriter, files: list[tuple[str, bytes]]) -> None:
    for rel, data in files:
        w.write(rel, data)


def _previous_bytes(last: PreviousRelease, rels: Iterable[str]) -> list[tuple[str, bytes]] | None:
    """The last release's files `rels`, each only if it still has the SHA-256 its SHA256SUMS
    lists (a file edited in the published folder is never carried over): all, or None."""
    taken = []
    for rel in rels:
        try:
            data = last.file(rel).read_bytes()
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() != last.digest(rel):
            return None
        taken.append((rel, data))
    return taken


# What reading a last release's entry file may raise: then its shard is indexed again.
_UNREADABLE_ENTRY = (OSError, ValueError, KeyError, TypeError, AttributeError, importlib.metadata.PackageNotFoundError)


def _previous_entry(last: PreviousRelease, folder: str, version: str) -> Any:
    """A shard's entry file in the last release, if it was made by Pagefind `version` (the
    installed one)."""
    entry = json.loads(last.file(f"{folder}/{_ENTRY}").read_bytes())
    if entry.get("version") != version:
        raise ValueError("another version of Pagefind")
    return entry


def _reusable(
    w: SiteWriter, last: PreviousRelease, bits: int, shards: list[_Shard]
) -> dict[int, tuple[list[str], Any]]:
    """The shards whose bundle the last release may already hold, with the paths of its files
    and its entry file:
    the same candidate pages as then, each with the same bytes, indexed by the same version of
    Pagefind (whose bundle is a function of the pages alone). Whether those files still have
    their listed bytes is checked as they are taken."""
    previous = last.paths()
    if not previous:
        return {}
    was_bits, was = _shards(previous, None)
    if was_bits != bits:
        return {}
    prefix = f"{layout.SEARCH_INDEX_DIR}/"
    listed: dict[str, list[str]] = {}
    for rel in previous:
        folder, _, name = rel.removeprefix(prefix).partition("/")
        if rel.startswith(prefix) and name:
            listed.setdefault(folder, []).append(name)
    try:
        version = importlib.metadata.version("pagefind_bin")
    except importlib.metadata.PackageNotFoundError:
        return {}
    found = {}
    for s in shards:
        old = was.get(s.number)
        if old is None or old.candidates != s.candidates:
            continue
        if any(last.digest(rel) != w.hashes[rel] for rel in s.candidates):
            continue
        try:
            entry = _previous_entry(last, s.folder, version)
            names = _used(sorted(listed.get(s.name, []), key=str.encode), entry, primary=False)
        except _UNREADABLE_ENTRY:
            continue
        if _ENTRY in names:
            found[s.number] = ([f"{s.folder}/{n}" for n in names], entry)
    return found


def _previous_runtime(last: PreviousRelease, primary: _Shard, entry: Any) -> list[tuple[str, bytes]] | None:
    """Pagefind's script, worker and wasm from the last release's folder of the primary shard
    (whose entry file is `entry`), when they are there as its SHA256SUMS lists them: so when
    that shard was the primary then too."""
    try:
        names = [*_RUNTIME_FILES, *sorted(_wasm(entry))]
    except _UNREADABLE_ENTRY:
        return None
    return _previous_bytes(last, (f"{primary.folder}/{n}" for n in names))


def write_script(w: SiteWriter) -> None:
    """The search page's script (site_templates/search.js), beside the index it reads."""
    w.write(layout.SEARCH_PAGE_SCRIPT, (files("site_templates") / "search.js").read_bytes())
