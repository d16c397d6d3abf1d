"""Which record pages carry a search record, by the SHA-256 of their bytes, so that a build
after one event reads the pages that changed for their record and not the 42,000 a million-item
program has (generator.site.search).

Whether a page carries a record is a function of its bytes and of the code that looks for it,
so the memory (`<private>/cache/search-records.json`) is bound to the code (`rules_version`)
and to nothing else: a page whose SHA-256 it does not hold is read. It holds the pages of the
last build only, so it never grows past the site, and is put in place with the other caches once
the release passed its check. `build --full` reads none. A file that cannot be read, or another
version's, is an empty memory; one that cannot be written costs the next build its reads.
"""

from __future__ import annotations

import re
from pathlib import Path

from generator.state.cache_file import Staged, code_bound_bytes, read_code_bound, stage_cache

MEMORY_NAME = "search-records.json"
_SHA256 = re.compile(r"[0-9a-f]{64}")


def memory_path(private: Path) -> Path:
    return private / "cache" / MEMORY_NAME


def load(path: Path) -> dict[str, bool]:
    """SHA-256 of a page -> whether it carries a record; empty when the file is missing, torn,
    or made by other code."""
    pages = read_code_bound(path, "pages")
    return {sha: marked for sha, marked in pages.items() if _SHA256.fullmatch(sha) and type(marked) is bool}


def stage(path: Path, facts: dict[str, bool]) -> Staged | None:
    """The memory of `facts` written beside its place, put there by the build once its release
    passed its check (Staged.commit): a page edited while the build ran fails that check, so what
    was read of it is never remembered. None if it could not be written."""
    return stage_cache(path, code_bound_bytes("pages", facts))
