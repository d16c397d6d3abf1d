"""Every path of the published site, in one place.

Templates and artifact writers both ask here, so a link and the file it points to can never
disagree. Pages are linked as explicit `index.html` files: the site must work from a
downloaded folder, where a browser does not resolve a directory to its index.
"""

from __future__ import annotations

import re

from generator.verifier import (
    ARCHIVE_PATH,
    ARCHIVE_SUMS_PATH,
    DOWNLOAD_DIR,
    HISTORY_PATH,
    LOG_LIST_PATH,
    MANIFEST_PATH,
    REVOCATIONS_PATH,
    SUMS_PATH,
    SUMS_SIG_PATH,
    archived_checkpoint_path,
    commitment_part_path,
    consistency_between,
    evidence_path,
    manifest_part_path,
    timestamp_token_path,
)
from generator.verifier import AUTHORITIES_PATH as TIMESTAMP_AUTHORITIES

# What a verifier reads without the manifest naming it: one definition, the verifier's.
MANIFEST = MANIFEST_PATH
SUMS = SUMS_PATH
SUMS_SIG = SUMS_SIG_PATH
KEYS = "keys.json"
VERIFIER = "verify.py"
STYLE = "style.css"
# The in-browser check of an artifact and of a file someone was sent (FORMAT.md, "In-browser verification").
BROWSER_CHECK = "check.js"
# ML-DSA-44 verification for check.js, imported only when it meets such a signature (docs/formats/in-browser.md).
BROWSER_ML_DSA = "mldsa44.js"

# The folders a build keeps beside its output, each `.<out>.<kind>-<suffix>` (generator.build.staging):
# the inputs' record leaves them out (generator.state.build_cache).
BESIDE_OUTPUT_KINDS = ("staging", "old", "spare")

LEDGER_PREFIX = "ledger"
ENTRIES = f"{LEDGER_PREFIX}/entries.json"
CHECKPOINT = f"{LEDGER_PREFIX}/checkpoint"
COMMITMENTS = f"{LEDGER_PREFIX}/commitments.json"
# Format v2: every revoked certificate, at a fixed path (the v1 manifest has no member for it).
REVOCATIONS = REVOCATIONS_PATH
# History (FORMAT.md v2): the checkpoints every build published, and proofs from each to today's.
HISTORY = HISTORY_PATH
# The program's trust policy (C2SP tlog-policy): its log key, its witnesses and their quorum.
POLICY = f"{LEDGER_PREFIX}/policy.txt"
# The log's entry in the witness network's log list (logs/v0), for witness operators: the verifier's.
LOG_LIST = LOG_LIST_PATH

HOME = "index.html"
METHODOLOGY_PAGE = "methodology/index.html"
POOL_PAGE = "pool/index.html"
RETIRED_PAGE = "retired/index.html"
RUNS_PAGE = "runs/index.html"
CERTIFICATES_PAGE = "certificates/index.html"
KEYS_PAGE = "keys/index.html"
VERIFY_PAGE = "verify/index.html"
HISTORY_PAGE = "history/index.html"
CHECK_PAGE = "check/index.html"
# Beside the ledger's documents: no entry, tile or checkpoint is named index.html or page-N.html.
LEDGER_PAGE = f"{LEDGER_PREFIX}/index.html"
SYSTEMS_PAGE = "systems/index.html"
SEARCH_PAGE = "search/index.html"
# The search index (Pagefind's bundles, one folder a shard, generator/site/search.py) and the search
# page's script beside them: presentation, like the pages.
SEARCH_INDEX_DIR = "pagefind"
SEARCH_PAGE_SCRIPT = f"{SEARCH_INDEX_DIR}/search.js"

# A page never lists more rows than this: a pool of a million items becomes a thousand pages.
PAGE_SIZE = 1000


def sig(path: str) -> str:
    return f"{path}.sig"


def archived_checkpoint(size: int) -> str:
    return archived_checkpoint_path(size)


def timestamp_token(size: int, authority: str) -> str:
    return timestamp_token_path(size, authority)


def consistency_proof(old_size: int) -> str:
    """Format v2's proof from an archived size to today's, rewritten by every release."""
    return f"{LEDGER_PREFIX}/consistency/{old_size}.json"


def consistency_step(old_size: int, new_size: int) -> str:
    """Format v3's proof from a history row's size to the next row's, written once
    (docs/formats/v3.md, 1): one definition, the verifier's."""
    return consistency_between(old_size, new_size)


def commitment_part(k: int) -> str:
    """Part k (from 0) of a format v3 commitment list (docs/formats/v3.md, 4): the verifier's."""
    return commitment_part_path(k)


def manifest_part(name: str, k: int) -> str:
    """Part k (from 0) of the manifest's list `name` in format v4 (docs/formats/v4.md): the verifier's."""
    return manifest_part_path(name, k)


def tile(rel: str) -> str:
    """A C2SP tile (`tile/…`) under the log prefix, beside the checkpoint."""
    return f"{LEDGER_PREFIX}/{rel}"


def tlog_proof(artifact: str) -> str:
    """An artifact's inclusion proof sits beside it, as a detached signature does."""
    return f"{artifact}.tlog-proof"


def key_pem(key_id_hex: str) -> str:
    return f"keys/{key_id_hex}.pem"


def reveal(item_id: str) -> str:
    return f"reveals/{item_id}.json"


def item_page(item_id: str) -> str:
    return f"items/{item_id}.html"


def methodology_parameters(version: str) -> str:
    return f"methodology/{version}.json"


def methodology_document(version: str) -> str:
    return f"methodology/{version}.md"


# A page of one record lives in a folder of its own: `methodology/index.html` can never collide
# with a version, nor `certificates/index.html` with a serial, whatever their names.
def methodology_page(version: str) -> str:
    return f"methodology/{version}/index.html"


def gate_page(gate: str, page: int = 1) -> str:
    return f"gates/{gate}/index.html" if page == 1 else f"gates/{gate}/page-{page}.html"


def pool_page(page: int = 1) -> str:
    return POOL_PAGE if page == 1 else f"pool/page-{page}.html"


def retired_page(page: int = 1) -> str:
    return RETIRED_PAGE if page == 1 else f"retired/page-{page}.html"


def runs_page(page: int = 1) -> str:
    """The runs list, page by page (page 1 is RUNS_PAGE). Run specs are runs/<id>.json,
    so an .html name cannot collide with them."""
    return RUNS_PAGE if page == 1 else f"runs/page-{page}.html"


def certificates_page(page: int = 1) -> str:
    """The certificates list, page by page (page 1 is CERTIFICATES_PAGE). A certificate
    is certificates/<serial>.json and its page certificates/<serial>/index.html: no collision."""
    return CERTIFICATES_PAGE if page == 1 else f"certificates/page-{page}.html"


def page_of(position: int) -> int:
    """The page (from 1) of a paged list that shows the row at `position` (from 0)."""
    return position // PAGE_SIZE + 1


def ledger_page(page: int = 1) -> str:
    return LEDGER_PAGE if page == 1 else f"{LEDGER_PREFIX}/page-{page}.html"


def ledger_entry(index: int) -> str:
    """Ledger entry `index`: the ledger page that lists it, at its row."""
    return f"{ledger_page(page_of(index))}#entry-{index}"


def commitment_row(position: int, item_id: str) -> str:
    """The row of the `position`-th commitment (from 0), item `item_id`, on the pool pages."""
    return f"{pool_page(page_of(position))}#item-{item_id}"


def systems_page(page: int = 1) -> str:
    return SYSTEMS_PAGE if page == 1 else f"systems/page-{page}.html"


def system_page(subject_id: str, page: int = 1) -> str:
    """A system's page: a subject id is an id (format v1 §6), so never "index.html" nor "page-2.html"."""
    return f"systems/{subject_id}/index.html" if page == 1 else f"systems/{subject_id}/page-{page}.html"


def run_spec(run_id: str) -> str:
    return f"runs/{run_id}.json"


def certificate(serial: str) -> str:
    return f"certificates/{serial}.json"


def details(serial: str, item_id: str) -> str:
    """A sealed result's details document, published once its item is revealed (format v1 §6)."""
    return f"certificates/{serial}/details/{item_id}.json"


def evidence(serial: str, name: str) -> str:
    """A raw evidence file, published once every item it concerns is revealed (FORMAT.md)."""
    return evidence_path(serial, name)


def grader_record(serial: str) -> str:
    return f"certificates/{serial}/grader-record.json"


def certificate_page(serial: str) -> str:
    return f"certificates/{serial}/index.html"


def relative(from_page: str, target: str) -> str:
    """A link from one site path to another that works under any prefix and from disk."""
    depth = from_page.count("/")
    return "../" * depth + target


# Feeds (Atom, RFC 4287), the sitemap and robots.txt: for feed readers and crawlers, which need
# absolute URLs (FORMAT.md, "Feeds, sitemap, robots.txt").
FEED_CERTIFICATES = "feeds/certificates.xml"
FEED_REVEALS = "feeds/reveals.xml"
FEED_CHECKPOINTS = "feeds/checkpoints.xml"
# A feed carries the newest entries only: tens of thousands of certificates would make a file
# every reader fetches again and again weigh megabytes.
FEED_ENTRIES = 100
SITEMAP = "sitemap.xml"
# Pages a sitemap file lists at most (sitemaps.org allows 50,000): more make SITEMAP an index of
# parts of at most this many, so that one new page rewrites a part of at most this size.
SITEMAP_URLS = 1_000
ROBOTS = "robots.txt"
# Caching and CORS for a static host that reads it (generator.core.object_kinds): presentation.
HOST_HEADERS = "_headers"


def sitemap_part(prefix: str) -> str:
    """The part of a sitemap split by an index that holds the pages whose key starts with
    `prefix` (generator.site.feeds.sitemap_files). At the site's root: a sitemap may list only
    the URLs under its own folder."""
    return f"sitemap-{prefix}.xml"


# The downloadable copy of the site (FORMAT.md, format v2): one definition, the verifier's.
DOWNLOAD = DOWNLOAD_DIR
ARCHIVE = ARCHIVE_PATH
ARCHIVE_SUMS = ARCHIVE_SUMS_PATH


# JSON Schemas (draft 2020-12) of every JSON document the site publishes, served from the
# package's generator/site/schemas/ (FORMAT.md, "JSON Schemas").
SCHEMAS = "schemas"
SCHEMA_INDEX = f"{SCHEMAS}/index.json"
# Every published JSON path, as a pattern whose `*` stands for one or more characters other
# than `/`, and the schema file that describes it; no path matches two patterns. The patterns
# come from the path functions above, so a document and its schema row cannot drift apart.
JSON_SCHEMAS: tuple[tuple[str, str], ...] = (
    (MANIFEST, "transparency-manifest.schema.json"),
    (KEYS, "keys.schema.json"),
    (ENTRIES, "ledger-entries.schema.json"),
    (COMMITMENTS, "commitment-list.schema.json"),
    (commitment_part(0).replace("/0.json", "/*.json"), "commitment-list-part.schema.json"),
    (manifest_part("*", 0).replace("/0.json", "/*.json"), "manifest-part.schema.json"),
    (HISTORY, "checkpoint-history.schema.json"),
    (REVOCATIONS, "certificate-revocations.schema.json"),
    (f"{LEDGER_PREFIX}/consistency/*.json", "consistency-proof.schema.json"),
    (TIMESTAMP_AUTHORITIES, "timestamp-authorities.schema.json"),
    (reveal("*"), "item-reveal.schema.json"),
    (methodology_parameters("*"), "methodology.schema.json"),
    (run_spec("*"), "run-spec.schema.json"),
    (certificate("*"), "certificate.schema.json"),
    (details("*", "*"), "result-details.schema.json"),
    (grader_record("*"), "grader-record.schema.json"),
    ("certificates/*/eee/*.json", "eee-record.schema.json"),
    ("certificates/*/credential.json", "verifiable-credential.schema.json"),
    ("credentials/status.json", "status-list-credential.schema.json"),
    ("did.json", "did-document.schema.json"),
    (".well-known/did.json", "did-document.schema.json"),
    ("agreement/*/labels.json", "label-set.schema.json"),
    ("agreement/*.json", "agreement-report.schema.json"),
    (SCHEMA_INDEX, "schema-index.schema.json"),
)
# The schemas themselves are described by the dialect's metaschema, which the site does not copy.
SCHEMA_FILES = f"{SCHEMAS}/*.schema.json"
METASCHEMA = "https://json-schema.org/draft/2020-12/schema"
_SCHEMA_PATTERNS = tuple(
    (re.compile(re.escape(pattern).replace(r"\*", "[^/]+")), name) for pattern, name in JSON_SCHEMAS
)


def schema(name: str) -> str:
    return f"{SCHEMAS}/{name}"


def schema_for(path: str) -> str | None:
    """The site path of the schema describing the JSON document at `path`, or None: what a
    page links as its twin's `describedby`."""
    return next((schema(name) for pattern, name in _SCHEMA_PATTERNS if pattern.fullmatch(path)), None)
