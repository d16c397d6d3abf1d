"""A witness reading a site: cosigning its checkpoint offline, and, with `--rules`, checking
beyond consistency: the program's own rules (format v1 §4),
replayed over the log it is asked to cosign, so that it refuses a checkpoint whose new entries
break them (a reveal whose document does not hash to its commitment, a retired item of an open
run, an event out of order), not only one that rewrites history.

The witness reads the log from a copy of the site it trusts no more than the log itself: a
folder (e.g. a mirror) or the log's tiles. Every tile is checked against the leaves and the
whole against the checkpoint's root, so the entries replayed are the ones the checkpoint signs.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from generator.core.proofs import MerkleTree
from generator.core.regularfile import read_regular
from generator.state.replay_cache import Replayed, new_entries, read_replay, write_replay
from generator.state.witness_state import replay_path
from generator.verifier import (
    KEY_ROTATION,
    FormatError,
    Ledger,
    MerkleStream,
    NoteError,
    ProofError,
    checkpoint_signers,
    is_id,
    leaf_hash,
    parse_canonical,
    read_tiled_log,
    signer_problems,
)
from generator.witness.server import Rules, Witness

Reader = Callable[[str], bytes | None]
MAX_FILE_BYTES = 1 << 25  # a full entry bundle may hold 256 leaves of 64 KiB


def folder_reader(site: Path) -> Reader:
    """Files of a site folder by site-relative path: None for one that is missing, that a link
    would take outside the folder, that is no regular file (a FIFO would wait forever), or that
    is larger than any file of a site."""
    root = site.resolve()

    def read(rel: str) -> bytes | None:
        path = site / rel
        try:
            if not path.resolve().is_relative_to(root):
                return None
            return read_regular(path, MAX_FILE_BYTES)
        except (OSError, RuntimeError):  # RuntimeError: a loop of links
            return None

    return read


def with_files(files: Mapping[str, bytes], read: Reader) -> Reader:
    """`files` (sent with the request) before the copy `read` gives: both are checked alike."""
    return lambda rel: files[rel] if rel in files else read(rel)


def tile_reader(read: Reader) -> Reader:
    return lambda rel: read(f"ledger/{rel}")


def replayed_tree(read: Reader, size: int, root: bytes) -> tuple[MerkleTree, list[str]]:
    """The log of `size` leaves read from a site's tiles (every tile checked), its tree, and what
    the site's tiles got wrong about the checkpoint."""
    tree = MerkleTree()
    tiled = read_tiled_log(tile_reader(read), size)
    for raw in tiled:
        tree.append(leaf_hash(raw))
    if tiled.root() != root:
        return tree, ["the site's tiles do not hold the tree the checkpoint signs"]
    return tree, []


def rule_problems(
    read: Reader,
    old: int,
    size: int,
    root: bytes,
    note: bytes | None = None,
    replays: Path | None = None,
    origin: str | None = None,
) -> list[str]:
    """Format v1 §4's replay rules broken by entries old..size-1 of the log a site serves, each new
    reveal's document checked against its commitment, and (with the checkpoint's `note`) its
    signers valid for its size by the ledger's key events: a retired or revoked key that still
    signs gets no cosignature, whichever keys the witness's logs file lists.

    With `replays` (the witness's state folder) and the log's `origin`, the ledger as of the size
    last cosigned is read from there, and only the new entries are read and replayed: their leaf
    hashes, added to the remembered compact range, must give `root`, or the whole log is read
    after all. A replay whose entries pass is saved for the next request."""
    saved = replay_path(replays, origin) if replays is not None and origin is not None else None
    replayed = read_replay(saved, origin, old) if saved is not None and origin is not None else None
    problems = _replay(read, replayed, old, size, root, note) if replayed is not None else None
    if replayed is None or problems is None:  # no replay, or one the site's entries do not extend to `root`
        replayed = Replayed(Ledger(), MerkleStream(), {})
        problems = _replay(read, replayed, old, size, root, note, from_start=True) or []
    if not problems and saved is not None and origin is not None:
        _keep(saved, origin, replayed)
    return problems


def _keep(path: Path, origin: str, replayed: Replayed) -> None:
    with contextlib.suppress(OSError):  # a cache: without it the next request replays the whole log
        write_replay(path, origin, replayed)


def _replay(
    read: Reader, replayed: Replayed, old: int, size: int, root: bytes, note: bytes | None, from_start: bool = False
) -> list[str] | None:
    """Replay into `replayed` the entries its tree lacks up to `size`, checking those from `old`
    on; the problems, or None when a remembered tree (not `from_start`) is not extended to `root`
    by the site's entries (the caller then reads the whole log)."""
    ledger, tree = replayed.ledger, replayed.tree
    problems: list[str] = []
    try:
        if from_start:
            tiled = read_tiled_log(tile_reader(read), size)
            leaves: Iterator[bytes] = tiled
        else:
            leaves = new_entries(tile_reader(read), tree.size, size)
        for index, raw in enumerate(leaves, tree.size):
            tree.append(leaf_hash(raw))
            leaf = parse_canonical(raw)
            found = ledger.apply(leaf, len(raw))
            if isinstance(leaf, dict) and leaf.get("type") == KEY_ROTATION:
                replayed.hand_over_roots[index + 1] = tree.root()
            if index < old:
                continue
            problems += [f"entry {index}: {p.describe()}" for p in found]
            if isinstance(leaf, dict) and leaf.get("type") == "reveal" and is_id(leaf.get("id")):
                problems += _reveal_problems(read, ledger, leaf["id"], index)
        if (tiled.root() if from_start else tree.root()) != root or tree.size != size:
            if not from_start:
                return None
            problems.append("the site's tiles do not hold the tree the checkpoint signs")
        problems += [f"at the end of the log: {p.describe()}" for p in ledger.final_problems()]
        if note is not None and ledger.keys.spans:
            _, signers = checkpoint_signers(note, ledger.keys)
            problems += signer_problems(ledger.keys, size, signers)
    except (FormatError, ProofError, NoteError) as e:
        if not from_start:
            return None
        problems.append(f"the log cannot be read from the site: {e}")
    return problems


def _reveal_problems(read: Reader, ledger: Ledger, item_id: str, index: int) -> list[str]:
    commit = ledger.commit(item_id)
    if commit is None:
        return []  # the replay already reported a reveal of an item never committed
    data = read(f"reveals/{item_id}.json")
    if data is None:
        return [f"entry {index}: reveals {item_id}, but the site has no reveals/{item_id}.json"]
    if hashlib.sha256(data).hexdigest() != commit.commitment:
        return [f"entry {index}: reveals/{item_id}.json does not hash to the commitment of {item_id}"]
    return []


def site_rules(read: Reader, replays: Path | None = None) -> Rules:
    """The witness's rules hook over one site's copy of the log, with the files a request sent
    read first (the new entries, which the copy holds only once the release is published);
    with `replays`, the witness's state folder, replaying only what is new (rule_problems)."""
    return lambda origin, old, size, root, note, files: rule_problems(
        with_files(files, read), old, size, root, note, replays, origin
    )


def cosign_site(witness: Witness, read: Reader) -> tuple[int, str]:
    """Offer a site's checkpoint to `witness` as an add-checkpoint request would, with the
    consistency proof from the size it last cosigned computed from the site's own tiles:
    (HTTP-like status, the cosignature line or why not)."""
    note = read("ledger/checkpoint")
    if note is None:
        return 400, "the site has no ledger/checkpoint"
    head = note.decode("utf-8", "replace").split("\n", 3)
    try:
        origin, size = head[0], int(head[1])
        root = base64.b64decode(head[2], validate=True)
    except (IndexError, ValueError):
        return 400, "ledger/checkpoint is not a checkpoint"
    known = witness.latest(origin)
    old = known[0] if known else 0
    if not 0 <= old <= size:
        return 409, f"the witness last cosigned size {old}, more than this checkpoint's {size}: a rollback or a fork"
    try:
        tree, problems = replayed_tree(read, size, root)
    except (FormatError, ProofError) as e:
        return 422, f"the log cannot be read from the site's tiles: {e}"
    if problems:
        return 422, "; ".join(problems)
    proof = "".join(base64.b64encode(h).decode() + "\n" for h in tree.consistency_proof(old))
    status, _, body = witness.add_checkpoint(f"old {old}\n{proof}\n".encode() + note)
    return status, body.decode("utf-8", "replace").strip()
