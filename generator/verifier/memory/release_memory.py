"""What the verifier remembers of the last release it verified (FORMAT.md, "The verifier's
memory"), so that it verifies the next release from there instead of from nothing.

After a run in which every check passed, it keeps, beside its state file: the ledger's replayed
state (a snapshot, generator/verifier/memory/ledger_snapshot.py), the length and SHA-256 of the
entries document's bytes up to its last leaf (for a format v3 site, which has none, the tree size,
the state of its tiles as built and one digest of its whole tiles' SHA-256es: docs/formats/v3.md,
3), the tree's compact range and the roots at every archived size, a v3 commitment list's parts'
SHA-256es, and the key of every certificate recomputation, archive member and download part that
passed.

The next run uses it only for the release its state file remembers (same origin, size and root),
only with the code that made it, and only if the memory is this user's alone. Then:

- the entries document must begin with exactly the bytes remembered (one SHA-256 over them), so
  its first leaves, their state and their roots are those already verified, and only the new
  leaves are replayed, under every rule;
- a v3 site's tiles: only the leaves after the remembered size are replayed, and the remembered
  tree grown by them must have the tiles' root. When this release's lists give every whole tile
  of the remembered tree the SHA-256 it had then (a whole tile never changes), those tiles are
  not read: the remembered tiles' state goes on from there, and only the bundles from the
  remembered size on, and the tiles they complete or leave partial, are read and checked;
  otherwise every tile is;
- a part of a v3 commitment list that no event since can have changed (no row committed or item
  revealed since lies in it), listed with the SHA-256 it had then, is not made nor read again;
- a certificate is recomputed unless every input of its recomputation (its bytes, its run spec,
  its methodology, its revealed items and their commitments, its published details and grader
  record) hashes to a key that passed before;
- a certificate whose whole check passed before is not read at all when everything that check
  read (site/certificate_memo.py: its manifest row, the SHA-256 every file it read is listed and
  verified with, its leaves, key and gate, which of the items it looked at are revealed, and
  where) hashes to the key it passed under; its counts, verdict and expiry are the remembered
  ones (an expiry is still judged against this run's clock);
- a run whose check passed before is not read when everything that check read (site/run_memo.py:
  its row, its spec's verified SHA-256, its leaf and the leaves that decided it and the run
  before it, its gate, draw and methodology, when each of its items was revealed) hashes to the
  key it passed under; what later checks read of its spec (its items, draw and methodology
  version) is remembered with it;
- a v3 inclusion proof is not read when its SHA-256 as this run verified it, its leaf's index,
  the archived checkpoint it held and the root at that size hash to the key it passed under
  (site/history_v3.py);
- a v3 or v4 site's checksum list that a list names with the SHA-256 of a list that passed in
  the release verified last is not read, nor any list below it: their rows are the remembered
  ones (memory/list_memory.py);
- a member of the download archive is inflated unless its compressed bytes, hashed, are bytes
  that were read back before to the SHA-256 its file is listed with; a v3 download part is not
  read at all when it and its leaf's list both have the SHA-256es of a part and list checked
  together before.

Everything else, every file's SHA-256 included, is checked in full, every time.
"""

import hashlib
import json
import os
from collections.abc import Container, Mapping
from pathlib import Path
from typing import Any

from generator.verifier.core.errors import FormatError
from generator.verifier.memory.checkpoint_memory import replace_atomically
from generator.verifier.memory.ledger_snapshot import frontier_of, read_snapshot, snapshot_chunks, stream_from
from generator.verifier.memory.list_memory import ListMemory, ListRecord, lists_file, load_lists
from generator.verifier.rules.ledger import Ledger
from generator.verifier.tlog.merkle import MerkleStream
from generator.verifier.tlog.tiles import TILE_WIDTH, TileBuilder, tile_paths

MEMORY_VERSION = 1
# What a key of a passed check is of: an archive member read back ("members"), a v3 download part
# checked with its leaf's list ("parts").
CHECK_KINDS = ("members", "parts")
# What a whole check remembered is of: a certificate's, a run's, an inclusion proof's (by serial,
# by run id, by the proof's path).
MEMO_KINDS = ("certificates", "runs", "proofs")


def rules_version() -> str:
    """The SHA-256 of the code verifying: the one-file bundle, or every module of the package."""
    here = Path(os.path.abspath(__file__))
    package = here.parent.parent  # generator/verifier/, when this is release_memory.py of the package
    files = (
        [(here.name, here)]
        if here.name != "release_memory.py"
        else sorted((p.relative_to(package).as_posix(), p) for p in package.rglob("*.py"))
    )
    h = hashlib.sha256()
    for name, f in files:
        h.update(name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def memory_file(folder: Path, origin: str) -> Path:
    return folder / f"{hashlib.sha256(origin.encode()).hexdigest()[:32]}.release"


def private_to_user(path: Path) -> bool:
    """Whether `path` is this user's and nobody else may write it: a memory another user could
    write could tell this verifier that a certificate passed before. (Where the system has no
    owners, as on Windows, its folder's permissions are the user's own business.)"""
    if not hasattr(os, "getuid"):
        return True
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def remembered_lists(folder: Path, origin: str) -> ListMemory | None:
    """The lists of log `origin`'s release verified last, as remembered in `folder` (for the
    mirror, which reads only their rows), if the memory is this user's alone and of this code."""
    if not private_to_user(folder):
        return None
    return _private_lists(lists_file(memory_file(folder, origin)), origin, rules_version(), None)[0]


def _private_lists(path: Path, origin: str, rules: str, rule: str | None) -> tuple[ListMemory | None, str | None]:
    """load_lists of `path` if it is this user's alone; else None, and why if it is there."""
    if not private_to_user(path):
        return None, f"{path} is not this user's alone (another could have written it)" if path.exists() else None
    return load_lists(path, origin, rules, rule)


class Memory:
    """The memory read for this run (if any: `ledger` is None otherwise), and what this run
    learns for the next."""

    def __init__(self, folder: Path, origin: str, full: bool = False) -> None:
        self.folder = folder
        self.origin = origin
        self.path = memory_file(folder, origin)
        self.ledger: Ledger | None = None
        self.extra: dict[str, Any] = {}
        self.why_not: str | None = None
        self.tiles_why_not: str | None = None  # why the whole tiles are read again, though the replay resumed
        self.rules = rules_version()
        self.bound = False  # the memory is of the release the state file remembers
        self.used = False  # the replay resumed from it
        # What this run learns, saved only when it passes.
        self.new_rechecks: dict[str, list[Any]] = {}
        self.new_memos: dict[str, dict[str, list[Any]]] = {kind: {} for kind in MEMO_KINDS}
        self.learned: dict[str, set[str]] = {kind: set() for kind in CHECK_KINDS}
        self.new_commitment_parts: dict[str, Any] | None = None
        self.new_lists: tuple[ListRecord, str] | None = None  # a v3 or v4 site's lists, and its tree's rule
        self.lists_why_not: str | None = None  # why the lists remembered were not used
        # The replay's state, its binding, and the key spans its events made.
        self.new_snapshot: tuple[Ledger, dict[str, Any], int] | None = None
        if not full:
            self._load()

    def _load(self) -> None:
        if not private_to_user(self.folder) or not private_to_user(self.path):
            if self.path.exists():
                self.why_not = f"{self.path} or its folder is not this user's alone (another could have written it)"
            return
        try:
            f = self.path.open("rb")
        except FileNotFoundError:
            return
        except OSError as e:
            self.why_not = f"{self.path} cannot be read ({e.strerror or e})"
            return
        try:
            with f:
                ledger, extra = read_snapshot(f, os.fstat(f.fileno()).st_size)
            if extra.get("v") != MEMORY_VERSION or extra.get("origin") != self.origin:
                raise FormatError("not a memory of this log by this version")
            if extra.get("rules") != self.rules:
                raise FormatError("made by another version of the verifier")
            stream_from(extra["frontier"])
        except OSError as e:
            self.why_not = f"{self.path} cannot be read ({e.strerror or e})"
            return
        except (FormatError, KeyError, TypeError, ValueError) as e:
            self.why_not = f"{self.path}: not used ({e})"
            return
        self.ledger, self.extra = ledger, extra

    def bind(self, remembered: list[tuple[int, bytes]]) -> None:
        """Use this memory only if it is of a release whose checkpoint (size, root) the state
        file remembers: the memory and the state are written by the same passing run."""
        if self.ledger is None:
            return
        self.bound = (self.extra["tree_size"], self.extra["root"]) in [(n, r.hex()) for n, r in remembered]
        if not self.bound:
            self.why_not = f"{self.path} is not of the release the state file remembers"
            self.ledger = None

    # -- the ledger

    def resume(self, rel: str, data: bytes, roots_at: dict[int, bytes]) -> tuple[Ledger, MerkleStream, int] | None:
        """Where to resume the replay of entries document `data`: the remembered state and the
        offset just after its last leaf, if `data` begins with exactly the bytes remembered and
        every root the checks ask for up to that size is remembered; else None."""
        if self.ledger is None or not self.bound:
            return None
        entries = self.extra.get("entries")
        if not isinstance(entries, dict):
            self.why_not = "the release verified last was read from its tiles, not from an entries document"
            return None
        offset = entries["bytes"]
        if entries["path"] != rel or not 0 < offset < len(data) or data[offset : offset + 1] not in (b",", b"]"):
            self.why_not = "the entries document does not continue the remembered one"
            return None
        if hashlib.sha256(memoryview(data)[:offset]).hexdigest() != entries["sha256"]:
            self.why_not = "the entries document's first bytes differ from the release verified last"
            return None
        return self._resumed(offset, roots_at)

    def resume_tiles(self, size: int, roots_at: dict[int, bytes]) -> tuple[Ledger, MerkleStream, int] | None:
        """Where to resume the replay of a ledger read from its tiles (a v3 site's, which has no
        entries document): the remembered state and size, if the site's log is at least that
        long and every root the checks ask for up to that size is remembered; else None. The
        caller then reads the tiles from there (tile_builder) or all of them; either way the
        remembered tree grown by the new leaves must have the root the checkpoint signs."""
        if self.ledger is None or not self.bound:
            return None
        if self.ledger.size > size:
            self.why_not = "the site's ledger is shorter than the release verified last"
            return None
        return self._resumed(self.ledger.size, roots_at)

    def _resumed(self, offset: int, roots_at: dict[int, bytes]) -> tuple[Ledger, MerkleStream, int] | None:
        assert self.ledger is not None
        size = self.ledger.size
        roots = {int(k): bytes.fromhex(v) for k, v in self.extra["roots"].items()}
        asked = [n for n in roots_at if 0 < n <= size]
        if any(n not in roots for n in asked):
            self.why_not = "the history names a tree size the release verified last did not"
            return None
        for n in asked:
            roots_at[n] = roots[n]
        ledger, self.ledger = self.ledger, None  # the replay goes on in it: it is no longer the memory's
        self.used = True
        return ledger, stream_from(self.extra["frontier"]), offset

    def took(
        self, rel: str, data: bytes, end: int, ledger: Ledger, stream: MerkleStream, roots_at: dict[int, bytes]
    ) -> None:
        """The replay ended: remember its state, made now, before any later check touches it."""
        extra: dict[str, Any] = {
            "entries": {"path": rel, "bytes": end, "sha256": hashlib.sha256(memoryview(data)[:end]).hexdigest()},
            "frontier": frontier_of(stream),
            "roots": {str(n): r.hex() for n, r in sorted(roots_at.items()) if r and n <= ledger.size},
        }
        self.new_snapshot = (ledger, extra, len(ledger.keys.spans))

    def tile_builder(self, folder: str, listed: Mapping[str, str], matched: Container[str]) -> TileBuilder | None:
        """The tiles of the remembered tree as built then, to go on from, if this release's lists
        give every whole tile of that tree the SHA-256 it had when it was checked, and its bytes
        have it: a whole tile never changes, so these were checked then, and need not be read."""
        tiles = self.extra.get("tiles") if self.bound else None
        if not isinstance(tiles, dict) or "builder" not in tiles:
            return None
        try:
            builder = TileBuilder.resumed(tiles["builder"])
        except FormatError:
            return None
        if _whole_tiles_digest(folder, builder.size, listed, matched) != tiles.get("whole"):
            self.tiles_why_not = "a whole tile is not listed with the SHA-256 it had in the release verified last"
            return None
        return builder

    def took_tiles(
        self,
        ledger: Ledger,
        stream: MerkleStream,
        roots_at: dict[int, bytes],
        builder: TileBuilder | None = None,
        folder: str = "",
        listed: Mapping[str, str] | None = None,
    ) -> None:
        """The replay of a ledger read from its tiles ended: remember its state by its tree size
        (`tiles`), the next run resuming after its last leaf; with the site's lists, the tiles'
        `builder` too, and the digest of the whole tiles' SHA-256es that vouches for them (a tile's
        path tile/… is the site's `folder`/tile/…)."""
        tiles: dict[str, Any] = {"tree_size": ledger.size}
        whole = _whole_tiles_digest(folder, ledger.size, listed, listed.keys()) if listed is not None else None
        if builder is not None and builder.size == ledger.size and whole is not None:
            tiles.update({"builder": builder.state(), "whole": whole})
        extra: dict[str, Any] = {
            "tiles": tiles,
            "frontier": frontier_of(stream),
            "roots": {str(n): r.hex() for n, r in sorted(roots_at.items()) if r and n <= ledger.size},
        }
        self.new_snapshot = (ledger, extra, len(ledger.keys.spans))

    # -- the parts of a v3 commitment list

    def commitment_parts(self) -> tuple[int, int, list[str]] | None:
        """The release verified last's tree size, commitment count and parts' SHA-256, if the
        replay went on from it (only then are the events since it known)."""
        known = self.extra.get("commitment_parts") if self.used else None
        if not isinstance(known, dict):
            return None
        size, commits, shas = self.extra.get("tree_size"), known.get("commits"), known.get("sha256")
        if not (isinstance(size, int) and isinstance(commits, int) and isinstance(shas, list)):
            return None
        return size, commits, [h for h in shas if isinstance(h, str)]

    def took_commitment_parts(self, commits: int, shas: list[str]) -> None:
        self.new_commitment_parts = {"commits": commits, "sha256": shas}

    # -- a v3 or v4 site's checksum lists (memory/list_memory.py)

    def remembered_lists(self, rule: str) -> ListMemory | None:
        """The lists of the release verified last, in a tree split by `rule` (lists_why_not says
        why a file of them is not used)."""
        if not self.bound:
            return None
        lists, self.lists_why_not = _private_lists(lists_file(self.path), self.origin, self.rules, rule)
        return lists

    def took_lists(self, record: ListRecord, rule: str) -> None:
        self.new_lists = (record, rule)

    # -- certificate recomputations

    def recheck_key(self, *inputs: Any) -> str:
        # A key, not a document: any injective text of the values serves, and compact JSON in the
        # values' own order is one (a dict keeps the order it was parsed or built in; the same
        # values in another order are a key missed, never one shared), made without sorting
        # every object's keys, which was nearly half the cost of 40,000 keys a run.
        text = json.dumps([self.rules, *inputs], separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def recheck(self, key: str) -> tuple[int, list[str]] | None:
        """The checks counted and the assertions of a recomputation under `key` that passed."""
        found = self.extra.get("rechecks", {}).get(key) if self.bound else None
        if found is None:
            return None
        self.new_rechecks[key] = found
        return found[0], list(found[1])

    def passed(self, key: str, checks: int, asserted: list[str]) -> None:
        self.new_rechecks[key] = [checks, asserted]

    # -- whole checks of a certificate, a run or a v3 inclusion proof (site/certificate_memo.py,
    # site/run_memo.py, site/history_v3.py)

    def memo(self, kind: str, name: str) -> list[Any] | None:
        """What the last release's check of the certificate, run or proof `name` (`kind`: MEMO_KINDS)
        read and found, if it passed and the replay went on from that release (only then are the
        leaves it read the same)."""
        found = self.extra.get(kind, {}).get(name) if self.used else None
        return found if isinstance(found, list) else None

    def took_memo(self, kind: str, name: str, remembered: list[Any]) -> None:
        self.new_memos[kind][name] = remembered

    # -- archive members

    def member_key(self, method: int, crc: int, size: int, compressed_sha256: str, content_sha256: str) -> str:
        # The declared CRC-32 and size too: reading a member back checks both, so bytes read
        # before under another header must be read again, and fail as they fail from nothing.
        fields = f"{self.rules}\0{method}\0{crc}\0{size}\0{compressed_sha256}\0{content_sha256}"
        return hashlib.sha256(fields.encode()).hexdigest()

    # -- keys of checks that passed: archive members, download parts

    def check_known(self, kind: str, key: str) -> bool:
        """Whether a check of `kind` (CHECK_KINDS) passed before under `key`, which names everything
        the check is a function of (member_key, part_key); kept for the next run if so."""
        if not self.bound or key not in self._known_set(kind):
            return False
        self.learned[kind].add(key)
        return True

    def check_passed(self, kind: str, key: str) -> None:
        self.learned[kind].add(key)

    def _known_set(self, name: str) -> frozenset[str]:
        known = self.extra.get(name)
        if not isinstance(known, frozenset):
            known = frozenset(k for k in known if isinstance(k, str)) if isinstance(known, list) else frozenset()
            self.extra[name] = known
        return known

    # -- download parts (docs/formats/v3.md, 6)

    def part_key(self, rel: str, sha256: str, list_rel: str, list_sha256: str) -> str:
        """A part's check is a function of its bytes and of its leaf's list, which names the files
        it must hold and their SHA-256: the same two, checked before, pass again."""
        return hashlib.sha256(f"{self.rules}\0{rel}\0{sha256}\0{list_rel}\0{list_sha256}".encode()).hexdigest()

    # -- saving

    def save(self, tree: dict[str, Any], root: bytes) -> None:
        """Remember this run (which passed) for the next; the caller writes the state file after."""
        if self.new_snapshot is None:
            return
        ledger, extra, spans = self.new_snapshot
        extra.update(
            {
                "v": MEMORY_VERSION,
                "origin": self.origin,
                "tree_size": tree["tree_size"],
                "root": root.hex(),
                "rules": self.rules,
                "rechecks": dict(sorted(self.new_rechecks.items())),
                **{kind: dict(sorted(memos.items())) for kind, memos in self.new_memos.items()},
                **{kind: sorted(keys) for kind, keys in self.learned.items()},
            }
        )
        if self.new_commitment_parts is not None:
            extra["commitment_parts"] = self.new_commitment_parts
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.new_lists is not None:
            # First: lists that outlive the release file beside them are used by content only.
            record, rule = self.new_lists
            replace_atomically(lists_file(self.path), record.chunks(self.origin, self.rules, rule))
        replace_atomically(self.path, snapshot_chunks(ledger, extra, spans))


def _whole_tiles_digest(folder: str, size: int, listed: Mapping[str, str], matched: Container[str]) -> str | None:
    """One SHA-256 over the listed SHA-256 of every whole tile (hash tiles and entry bundles) of a
    tree of `size` leaves; None if one is not listed, or its bytes do not have what is listed."""
    h = hashlib.sha256()
    for path, width in tile_paths(size):
        rel = f"{folder}/{path}"
        if width != TILE_WIDTH:
            continue
        sha = listed.get(rel)
        if sha is None or rel not in matched:
            return None
        h.update(f"{sha}  {rel}\n".encode())
    return h.hexdigest()
