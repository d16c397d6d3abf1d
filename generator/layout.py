"""Every path of the published site, in one place.

Templates and artifact writers both ask here, so a link and the file it points to can never
disagree. Pages are linked as explicit `index.html` files: the site must work from a
downloaded folder, where a browser does not resolve a directory to its index.
"""

from __future__ import annotations

from generator.verifier import HISTORY_PATH, MANIFEST_PATH, REVOCATIONS_PATH, SUMS_PATH, SUMS_SIG_PATH

# What a verifier reads without the manifest naming it: one definition, the verifier's.
MANIFEST = MANIFEST_PATH
SUMS = SUMS_PATH
SUMS_SIG = SUMS_SIG_PATH
KEYS = "keys.json"
VERIFIER = "verify.py"
STYLE = "style.css"

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

HOME = "index.html"
METHODOLOGY_PAGE = "methodology/index.html"
POOL_PAGE = "pool/index.html"
RETIRED_PAGE = "retired/index.html"
RUNS_PAGE = "runs/index.html"
CERTIFICATES_PAGE = "certificates/index.html"
KEYS_PAGE = "keys/index.html"
VERIFY_PAGE = "verify/index.html"
HISTORY_PAGE = "history/index.html"

# A page never lists more rows than this: a pool of a million items becomes a thousand pages.
PAGE_SIZE = 1000


def sig(path: str) -> str:
    return f"{path}.sig"


def archived_checkpoint(size: int) -> str:
    return f"{LEDGER_PREFIX}/checkpoints/{size}"


def consistency_proof(old_size: int) -> str:
    return f"{LEDGER_PREFIX}/consistency/{old_size}.json"


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


def run_spec(run_id: str) -> str:
    return f"runs/{run_id}.json"


def certificate(serial: str) -> str:
    return f"certificates/{serial}.json"


def details(serial: str, item_id: str) -> str:
    """A sealed result's details document, published once its item is revealed (SPEC §6)."""
    return f"certificates/{serial}/details/{item_id}.json"


def grader_record(serial: str) -> str:
    return f"certificates/{serial}/grader-record.json"


def certificate_page(serial: str) -> str:
    return f"certificates/{serial}/index.html"


def relative(from_page: str, target: str) -> str:
    """A link from one site path to another that works under any prefix and from disk."""
    depth = from_page.count("/")
    return "../" * depth + target
