"""The ledger as a site publishes it (format v1 §3, §4; docs/formats/v3.md, 3 and 4): its entries
(or a v3 site's tiles) replayed under every rule to their Merkle root, the signed checkpoint over
that root, and the commitment list, whole or in parts, byte for byte the rows the ledger implies.
With the verifier's memory, from the release verified last (memory/release_memory.py)."""

import base64
import hashlib
from collections.abc import Callable, Iterator
from typing import Any

from generator.verifier.core.canonical import canonical_text, iter_canonical_array, members_after, parse_canonical
from generator.verifier.core.errors import FormatError, NoteError, Problem, ProofError
from generator.verifier.core.folder import MANIFEST_PATH, Site
from generator.verifier.core.formats import MANIFEST_V3, check_keys, is_int, is_v1, same, site_format
from generator.verifier.core.note import open_note, parse_checkpoint
from generator.verifier.core.public_keys import VerifierKey, fingerprint, key_id
from generator.verifier.core.report import Report
from generator.verifier.core.text import show
from generator.verifier.memory.release_memory import Memory
from generator.verifier.rules.ledger import Ledger
from generator.verifier.site.commitment_parts import UnchangedParts, check_commitment_parts, commitment_rows_bytes
from generator.verifier.site.history import TILE_FOLDER, TILE_PREFIX, tile_reader
from generator.verifier.site.release import Listing
from generator.verifier.tlog.merkle import EMPTY_ROOT, MerkleStream, leaf_hash
from generator.verifier.tlog.tiles import NotResumable, TiledLog, read_tiled_log


def check_ledger(
    s: Site,
    manifest: dict[str, Any],
    origin: str,
    key: bytes,
    roots_at: dict[int, bytes] | None = None,
    from_tiles: bool = False,
    memory: Memory | None = None,
    listing: Listing | None = None,
) -> Ledger | None:
    """Replay the entries, recompute the root, and check the checkpoint and commitment list.

    One large document at a time: the entries are replayed and released before the
    commitment list is read, which is then checked against the replayed state. `roots_at`
    names earlier tree sizes whose roots the history checks need; each is filled in on the way.
    `from_tiles` replays the entry bundles of the tiles instead of the entries file, which is
    then never read. With a `memory` of the release verified last (memory/release_memory.py),
    only the entries after its last leaf are replayed, from its state, when the document begins
    with exactly the bytes it remembers; from the tiles (a v3 site's ledger, docs/formats/v3.md,
    3), only the leaves after the remembered size. When `listing` (the site's checksum lists as checked) gives
    every whole tile of the remembered tree the SHA-256 it had then, those tiles are not read
    again: only the bundles from the remembered size on (the first must begin with the
    remembered unfinished bundle), and the tiles they complete or leave partial; otherwise
    every tile is read and checked, and the remembered tree with the new leaves must make the
    tiles' root. Either way the signed checkpoint must sign the root of the remembered tree
    grown by the new leaves. A v3 site's commitment list is checked in its parts.
    """
    report = s.report
    led = manifest["ledger"]
    rest: dict[str, Any] | None = None
    tiled = None
    resumed = None
    data = b""
    if from_tiles:
        rel = TILE_FOLDER
        tiled, resumed = _open_tiles(s, led["tree_size"] if is_int(led["tree_size"]) else 0, roots_at, memory, listing)
        data = b""
    else:
        rel = led["entries"]
        loaded = s.read(rel, "ledger entries")
        if loaded is None:
            return None
        data = loaded
        s.signed(rel, data, key, "ledger entries")
    ledger = Ledger()
    merkle = MerkleStream()
    start = 0
    if memory is not None and roots_at is not None and tiled is None:
        resumed = memory.resume(rel, data, roots_at)
    if resumed is not None:
        ledger, merkle, start = resumed
        report.notes.append(
            f"{rel}: the first {ledger.size} entries are those of the release verified last (their bytes' SHA-256 "
            "is the one remembered); only the entries after them were replayed"
            if tiled is None
            else f"{rel}: the ledger's first {ledger.size} entries are those of the release verified last (the "
            "tiles' root extends the remembered tree); only the entries after them were replayed"
        )
    end: list[int] = []
    try:
        if tiled is not None:
            entries: Iterator[tuple[Any, bytes]] = _tiled_entries(tiled, start)
        else:
            entries, rest = iter_canonical_array(data, "entries", start=start, ends_at=end)
        _replay(report, rel, entries, ledger, merkle, roots_at)
        if tiled is not None and start and tiled.root() != merkle.root():
            # The remembered tree and the new leaves make another root than the tiles': the
            # tiles do not hold the ledger verified last, whatever their new leaves are.
            report.check(False, rel, "the tiles' ledger does not begin with the ledger of the release verified last")
            return None
        if roots_at is not None:
            roots_at[0] = EMPTY_ROOT
            roots_at[merkle.size] = merkle.root()
    except NotResumable as e:
        report.check(False, rel, f"the tiles' ledger does not begin with the ledger of the release verified last: {e}")
        return None
    except (FormatError, ProofError) as e:
        report.check(False, rel, str(e))
        return None
    if memory is not None and tiled is not None and roots_at is not None and ledger.size:
        memory.took_tiles(ledger, merkle, roots_at, tiled.builder, TILE_PREFIX, listing.files if listing else None)
    if memory is not None and end and roots_at is not None and ledger.size:
        memory.took(rel, data, end[0], ledger, merkle, roots_at)
    del data, entries  # the iterator holds the bytes too: free both before the next large document
    report.add(ledger.final_problems(), rel)
    if rest is not None:
        _check_entries_tail(report, rel, rest, origin, ledger.size)
    report.check(
        same(led["tree_size"], ledger.size),
        MANIFEST_PATH,
        "ledger.tree_size differs from the number of entries",
        ledger.size,
        show(led["tree_size"]),
    )
    check_checkpoint(s, led["checkpoint"], origin, key, ledger.size, merkle.root())
    if site_format(manifest) >= MANIFEST_V3:
        _check_commitment_parts(s, led["commitment_list"], origin, key, ledger, memory, listing)
    else:
        check_commitment_list(s, led["commitment_list"], origin, key, ledger)
    return ledger


def _replay(
    report: Report,
    rel: str,
    entries: Iterator[tuple[Any, bytes]],
    ledger: Ledger,
    merkle: MerkleStream,
    roots_at: dict[int, bytes] | None,
) -> None:
    """Every leaf applied under the ledger's rules and added to the tree, the roots the history
    asks for taken on the way."""
    for leaf, raw in entries:
        problems = ledger.apply(leaf, len(raw))
        merkle.append(leaf_hash(raw))
        if roots_at is not None and merkle.size in roots_at:
            roots_at[merkle.size] = merkle.root()
        if problems:
            report.add(problems, rel, checks=0)
    report.checks += ledger.size


def _open_tiles(
    s: Site, size: int, roots_at: dict[int, bytes] | None, memory: Memory | None, listing: Listing | None
) -> tuple[TiledLog, tuple[Ledger, MerkleStream, int] | None]:
    """The tiled log to read, and where the replay resumes from the memory (if it does): when
    `listing` gives every whole tile of the remembered tree the SHA-256 it had then, the tiles
    go on from the remembered tiles' state, and those tiles are not read again."""
    resumed = memory.resume_tiles(size, roots_at) if memory is not None and roots_at is not None else None
    builder = None
    if memory is not None and resumed is not None and listing is not None:
        builder = memory.tile_builder(TILE_PREFIX, listing.files, listing.matched)
        if builder is not None and builder.size != resumed[0].size:
            builder = None
    if builder is None and resumed is not None and memory is not None and memory.tiles_why_not:
        s.report.notes.append(f"{TILE_FOLDER}: every tile read and checked: {memory.tiles_why_not}")
    if builder is not None:
        s.report.notes.append(
            f"{TILE_FOLDER}: the whole tiles of the release verified last (its first {builder.size} leaves) were "
            "not read again: this release lists each with the SHA-256 it had when it was checked"
        )
    read = tile_reader(s)
    if memory is not None and listing is not None:
        read = _as_listed(read, listing)
    return read_tiled_log(read, size, builder), resumed


def _as_listed(read: Callable[[str], bytes | None], listing: Listing) -> Callable[[str], bytes | None]:
    """`read`, each listed tile held to the SHA-256 its list gives: the memory this run leaves
    vouches for tiles by those SHA-256es, so they must be of the bytes it checked, not only of
    the bytes hashed earlier in the run (an unlisted tile fails where the lists are checked)."""

    def checked(path: str) -> bytes | None:
        data = read(path)
        want = listing.files.get(f"{TILE_PREFIX}/{path}")
        if data is not None and want is not None and hashlib.sha256(data).hexdigest() != want:
            raise FormatError(f"{path}: its bytes are not those its checksum list gives (changed while being read?)")
        return data

    return checked


def _check_commitment_parts(
    s: Site, rel: str, origin: str, key: bytes, ledger: Ledger, memory: Memory | None, listing: Listing | None
) -> None:
    """A v3 commitment list in its parts; with the memory, the parts no event since touched
    taken as they were checked (commitment_parts.UnchangedParts)."""
    unchanged = None
    known = memory.commitment_parts() if memory is not None and listing is not None else None
    if known is not None and listing is not None:
        unchanged = UnchangedParts(ledger, *known, listing.files, listing.matched)
    shas = check_commitment_parts(s, rel, origin, key, ledger, unchanged)
    if memory is not None:
        memory.took_commitment_parts(ledger.commit_count, shas)
    if unchanged is not None and unchanged.used:
        s.report.notes.append(
            f"{rel}: {unchanged.used} of its {len(shas)} parts not read again: no row of theirs was committed or "
            "revealed since the release verified last, and each is listed with the SHA-256 it had when it was checked"
        )


def _tiled_entries(tiled: TiledLog, start: int) -> Iterator[tuple[Any, bytes]]:
    """The leaves of a tiled log from the `start`-th, parsed: those before it are read (every
    tile is checked all the same) but not replayed."""
    for i, raw in enumerate(tiled, tiled.first):
        if i >= start:
            yield parse_canonical(raw), raw


def _check_entries_tail(report: Report, rel: str, rest: dict[str, Any], origin: str, size: int) -> None:
    report.add(check_keys(rest, ("origin", "tree_size", "type", "v")), rel)
    report.check(
        rest.get("type") == "ledger-entries" and is_v1(rest),
        rel,
        "wrong type or version",
        '"ledger-entries", v 1',
        f"{show(rest.get('type'))}, v {show(rest.get('v'))}",
    )
    report.check(
        rest.get("origin") == origin, rel, "origin differs from the manifest's", origin, show(rest.get("origin"))
    )
    report.check(
        same(rest.get("tree_size"), size),
        rel,
        "tree_size differs from the number of entries",
        size,
        show(rest.get("tree_size")),
    )


def check_commitment_list(s: Site, rel: str, origin: str, key: bytes, ledger: Ledger) -> None:
    """The signed list must hold every commit leaf, in ledger order, with its current status."""
    report = s.report
    data = s.read(rel, "commitment list")
    if data is None:
        return
    s.signed(rel, data, key, "commitment list")
    rest = _rows_as_expected(data, ledger)
    if rest is None:
        rest = _check_rows(report, rel, data, ledger)
        if rest is None:
            return
    report.checks += ledger.commit_count
    report.add(check_keys(rest, ("origin", "tree_size", "type", "v")), rel)
    report.check(
        rest.get("type") == "commitment-list" and is_v1(rest),
        rel,
        "wrong type or version",
        '"commitment-list", v 1',
        show(rest.get("type")),
    )
    report.check(
        rest.get("origin") == origin, rel, "origin differs from the manifest's", origin, show(rest.get("origin"))
    )
    report.check(
        same(rest.get("tree_size"), ledger.size),
        rel,
        "tree_size differs from the ledger's",
        ledger.size,
        show(rest.get("tree_size")),
    )


def _rows_as_expected(data: bytes, ledger: Ledger) -> dict[str, Any] | None:
    """The members after the rows, if the document's rows are byte for byte the canonical rows
    the ledger implies; else None (the rows are then parsed one by one, which tells what differs).

    The comparison is the check: canonical JSON has one form per value, so a document holding
    every expected row in canonical form is exactly one whose parsed rows would compare equal,
    without parsing a million rows."""
    prefix = b'{"commitments":['
    if not data.startswith(prefix):
        return None
    pos = len(prefix)
    try:
        for want in commitment_rows_bytes(ledger):
            if data[pos : pos + len(want)] != want:
                return None
            pos += len(want)
    except UnicodeEncodeError:
        return None
    if data[pos : pos + 1] != b"]":
        return None
    try:
        return members_after(data, pos + 1, "commitments")
    except FormatError:
        return None


def _check_rows(report: Report, rel: str, data: bytes, ledger: Ledger) -> dict[str, Any] | None:
    """Each row parsed and compared with its commit leaf: every difference reported where it is.
    Returns the members after the rows, or None if the document is not canonical JSON."""
    commits = ledger.commits()
    try:
        rows, rest = iter_canonical_array(data, "commitments")
        for row, _ in rows:
            c = next(commits, None)
            if c is None:
                report.check(False, rel, "lists an item the ledger never committed", found=show(row))
                break
            want = {
                "at": c.at,
                "commitment": c.commitment,
                "gate": c.gate,
                "id": c.id,
                "index": c.index,
                "status": "revealed" if c.id in ledger.reveals else "sealed",
            }
            if row != want or type(row.get("index")) is not int:  # a dict compares true == 1
                report.failures.append(_row_problem(rel, c.id, want, row))
        for _ in rows:
            pass
    except FormatError as e:
        report.check(False, rel, str(e))
        return None
    missing = next(commits, None)
    if missing is not None:
        report.check(False, rel, f"ends before the ledger's commit of {missing.id}", where="commitments")
    return rest


def _row_problem(rel: str, item_id: str, want: dict[str, Any], row: Any) -> Problem:
    where = f"commitments[{item_id}]"
    if not isinstance(row, dict) or set(row) != set(want):
        return Problem("row differs from the ledger's commit leaf", rel, where, canonical_text(want), show(row, 300))
    diffs = [k for k in want if not same(row[k], want[k])]
    if diffs == ["status"]:
        told = "revealed it" if want["status"] == "revealed" else "never revealed it"
        return Problem(
            f"item {item_id} is marked {row['status']} but the ledger {told}",
            rel,
            where,
            want["status"],
            show(row["status"]),
        )
    return Problem(
        f"row differs from the ledger's commit leaf ({', '.join(diffs)})",
        rel,
        where,
        ", ".join(f"{k}={show(want[k])}" for k in diffs),
        ", ".join(f"{k}={show(row[k])}" for k in diffs),
    )


def check_checkpoint(s: Site, rel: str, origin: str, key: bytes, size: int, root: bytes) -> None:
    report = s.report
    data = s.read(rel, "checkpoint")
    if data is None:
        return
    try:
        note = open_note(data, [VerifierKey(origin, key_id(origin, key), key)])
        cp_origin, cp_size, cp_root = parse_checkpoint(note.text)
    except (NoteError, FormatError) as e:
        report.check(
            False,
            rel,
            f"checkpoint does not verify: {e}",
            f"a signed note by {origin} ({fingerprint(key)}) with a checkpoint body",
            "a note that is not",
        )
        return
    report.check(cp_origin == origin, rel, "checkpoint origin differs", origin, cp_origin)
    report.check(cp_size == size, rel, "checkpoint size differs from the number of entries", size, cp_size)
    report.check(
        cp_root == root,
        rel,
        "checkpoint root differs from the RFC 6962 root of the entries",
        base64.b64encode(root).decode(),
        base64.b64encode(cp_root).decode(),
    )
