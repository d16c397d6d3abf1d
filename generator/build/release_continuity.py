"""What a new release owes the last one: the same key, a ledger that only grew, and every
published artifact byte for byte unchanged.

Readers may have saved the last release; a build that quietly rewrote history would make their
copies disagree with ours, so the generator refuses instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from generator.build.previous_release import PreviousRelease, listed_files
from generator.core import layout
from generator.core.generator_errors import InputError, KeyFileError, problem
from generator.core.object_kinds import written_once_in_v3
from generator.core.proofs import MerkleTree
from generator.core.signing_key import Signer
from generator.verifier import (
    MANIFEST_V3,
    FormatError,
    KeyRing,
    ProofError,
    iter_canonical_array,
    parse_canonical,
    parse_checkpoint,
    read_tiled_log,
    site_format,
)

# Artifacts under these folders are bound by hash to the ledger or to a reader's trust; pages
# (.html) beside them are presentation and may change with the templates.
IMMUTABLE_PREFIXES = ("reveals/", "methodology/", "runs/", "certificates/", "keys/")


def is_immutable(path: str, site_format: int = 2) -> bool:
    """In format v2 an inclusion proof is remade against each new checkpoint: derived, like a
    page. In format v3 it is written once, as the history's files are (docs/formats/v3.md, 7)."""
    if site_format >= MANIFEST_V3 and written_once_in_v3(path):
        return True
    return path.startswith(IMMUTABLE_PREFIXES) and not path.endswith((".html", ".tlog-proof"))


def _old_manifest(previous: PreviousRelease) -> dict[str, Any] | None:
    path = previous.file(layout.MANIFEST)
    if not path.is_file():
        return None
    try:
        m = parse_canonical(path.read_bytes())
    except FormatError as e:
        raise InputError(
            [
                problem(
                    str(path),
                    f"the last release's manifest is unreadable ({e}); refusing to build over it. Move "
                    f"{previous.folder} away to start a new history.",
                )
            ]
        ) from None
    return m if isinstance(m, dict) else None


def check_key_matches(previous: PreviousRelease, signer: Signer, ring: KeyRing | None = None) -> None:
    """The signer must be the key the last release published, or one that replaced it through
    the ledger's key rotations (format v2): a key never changes behind the ledger's back."""
    path = previous.file(layout.KEYS)
    if not path.is_file():
        return
    try:
        doc = parse_canonical(path.read_bytes())
        active = [k["vkey"] for k in doc["keys"] if k.get("status") == "active"]
    except (OSError, FormatError, KeyError, TypeError, AttributeError) as e:
        raise KeyFileError(
            f"cannot read the last release's keys in {path} ({e}); refusing to build over it. Move "
            f"{previous.folder} away to start a new history."
        ) from None
    if active and ring is not None and active[0] != signer.vkey and ring.span(active[0]) is not None:
        return  # rotated since: the ledger introduced the signer, and the hand-over shows it
    if active and active[0] != signer.vkey:
        raise KeyFileError(
            f"the signing key does not match the key the last release published in {path}\n"
            f"      expected: {active[0]}\n      found:    {signer.vkey}"
        )


def check_ledger_extends(
    previous: PreviousRelease,
    new_leaves: Callable[[], Iterator[bytes]],
    ledger_name: str = "ledger.jsonl",
    tree: MerkleTree | None = None,
) -> None:
    """Refuse a ledger that does not begin with every leaf of the last release, in order.

    With `tree` (the new ledger's Merkle tree), a last release whose manifest and checkpoint give
    the size and root that tree has at that size is extended: equal roots are equal leaves, and
    the tree answers in O(log n) what reading both ledgers answers in O(n). Anything else is
    read leaf by leaf, which also names the first leaf that differs."""
    m = _old_manifest(previous)
    if m is None:
        return
    if tree is not None and _same_root(previous, m, tree):
        return
    _compare_leaves(previous, m, new_leaves(), ledger_name)


def _same_root(previous: PreviousRelease, m: dict[str, Any], tree: MerkleTree) -> bool:
    ledger = m.get("ledger")
    if not isinstance(ledger, dict) or ledger.get("checkpoint") != layout.CHECKPOINT:
        return False
    try:
        note = previous.file(layout.CHECKPOINT).read_bytes()
        _, size, root = parse_checkpoint(note.decode("utf-8").split("\n\n")[0] + "\n")
    except (OSError, UnicodeDecodeError, FormatError):
        return False
    return bool(size == ledger.get("tree_size") and size <= tree.size and tree.root(size) == root)


def _old_leaves(previous: PreviousRelease, m: dict[str, Any]) -> tuple[Path, Iterator[bytes]]:
    """The last release's leaves, from its entries document, or from its tiles when it has none
    (a v3 site, docs/formats/v3.md, 3), each tile checked as the verifier checks it."""
    found = m.get("ledger")
    ledger: dict[str, Any] = found if isinstance(found, dict) else {}
    if site_format(m) >= MANIFEST_V3:
        size = ledger.get("tree_size")

        def read(rel: str) -> bytes | None:
            path = previous.file(f"{layout.LEDGER_PREFIX}/{rel}")
            return path.read_bytes() if path.is_file() else None

        return previous.file(f"{layout.LEDGER_PREFIX}/tile"), read_tiled_log(read, size if isinstance(size, int) else 0)
    path = previous.file(str(ledger.get("entries")))
    elements, _ = iter_canonical_array(path.read_bytes(), "entries")
    return path, (raw for _, raw in elements)


def _compare_leaves(
    previous: PreviousRelease, m: dict[str, Any], new_leaves: Iterator[bytes], ledger_name: str
) -> None:
    path = previous.folder
    try:
        path, old_leaves = _old_leaves(previous, m)
        for i, raw in enumerate(old_leaves):
            new = next(new_leaves, None)
            if new != raw:
                raise InputError(
                    [
                        problem(
                            ledger_name,
                            f"the ledger does not extend the last release: its leaf {i} differs from the published "
                            "one (or is missing)",
                            expected=raw.decode("utf-8", "replace")[:200],
                            found=new.decode("utf-8", "replace")[:200] if new is not None else "(no such leaf)",
                        )
                    ],
                    "refusing to publish a ledger that rewrites history",
                )
    except (OSError, FormatError, ProofError) as e:
        raise InputError(
            [
                problem(
                    str(path),
                    f"cannot read the last release's ledger ({e}); refusing to build over it. Move "
                    f"{previous.folder} away to start a new history.",
                )
            ]
        ) from None


def check_format_kept(previous: PreviousRelease, wanted: int) -> None:
    """A build never changes the format of a site that has a release (docs/formats/v3.md): a
    reader of the site, its mirrors and its verifier's memory all follow it in one format."""
    m = _old_manifest(previous)
    if m is None:
        return
    published = site_format(m)
    if published != wanted:
        raise InputError(
            [
                problem(
                    str(previous.file(layout.MANIFEST)),
                    f"the last release is a format v{published} site, and program.yaml asks for format {wanted}: a "
                    "build never changes the format of a site that has a release. Keep "
                    f"`format: {published}` in program.yaml, or move {previous.folder} away to start a new site",
                    expected=f"format {published}",
                    found=f"format {wanted}",
                )
            ],
            "refusing to change the site's format",
        )


def check_published_unchanged(previous: PreviousRelease, new_hashes: dict[str, str], site_format: int = 2) -> None:
    """Every artifact of the last release must be in the new one, byte for byte (in format v3,
    its inclusion proofs, archived checkpoints and consistency proofs too)."""
    problems = []
    # Every file the last release lists (in v3, in the leaves of its tree of lists): read once
    # per build, by the release's own reader unless --full had it read nothing.
    listed = previous.sums if previous.reuse else listed_files(previous.folder)
    for rel, digest in listed.items():
        if not is_immutable(rel, site_format):
            continue
        if rel not in new_hashes:
            problems.append(problem(rel, "published in the last release but missing from this build"))
        elif new_hashes[rel] != digest:
            problems.append(
                problem(rel, "would change a file the last release published", expected=digest, found=new_hashes[rel])
            )
    if problems:
        problems.sort(key=lambda p: p.file)
        raise InputError(problems, "this build would rewrite what the last release published; nothing was changed")
