"""`transparency monitor SITE`: follow a published log over time, entry by entry.

A verifier run judges a site at one moment; it cannot see that yesterday's site said something
else. A monitor can: it remembers, per log origin, the key it trusted and the last checkpoint it
verified, and on every run it

1. opens today's checkpoint with the pinned key (on first contact: the key given with --key, or
   the one in the site's keys.json, said aloud with its fingerprint);
2. refuses a smaller tree (a rollback) and another root at the remembered size (a rewritten
   history), printing both sides;
3. reads every leaf from the C2SP tiles (each hash tile checked by the verifier's TiledLog) and
   replays them all with the verifier's Ledger: tiles whose root is not the checkpoint's, or an
   entry that breaks a ledger rule, is an inconsistency;
4. with --witnesses POLICY, asks each witness of the policy for its latest checkpoint of the log
   (witness_views.py) and compares them with each other and with the log it read
   (split_views.py): a split view, a fork or a cosignature out of time is an inconsistency;
5. prints the new entries (index >= the remembered size), filtered for display only;
6. only then moves its state, atomically.

Nothing a check depends on is ever skipped: filters choose what is printed, never what is read.
Exit status: 0 consistent, 1 an inconsistency (the state is not moved), 2 the site or the state
cannot be read, or a bad argument. Standard library and the verifier only, so it runs without
click; the CLI is a thin layer over run_monitor().
"""

from __future__ import annotations

import base64
import itertools
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TextIO

from generator.core import layout
from generator.monitor.event_lines import Filters, event_json, event_line
from generator.monitor.key_pin import parse_pin, refuse_another_log, site_key, trusted_key
from generator.monitor.monitor_errors import Inconsistent, Unreadable, problem_text
from generator.monitor.read_ahead import ReadAhead
from generator.monitor.site_source import Fetch, open_site
from generator.monitor.split_views import INCONSISTENT, NOTE, Judged, judge, summary, view_lines
from generator.monitor.witness_views import (
    Unseen,
    View,
    WitnessOptions,
    fetch_views,
    policy_trusts,
    read_witness_options,
)
from generator.state.monitor_state import (
    MonitorStateError,
    Remembered,
    default_state_dir,
    locked,
    other_logs,
    read_state,
    replay_path,
    state_path,
    write_state,
)
from generator.state.replay_cache import Replayed, new_entries, read_replay, write_replay
from generator.verifier import (
    EMPTY_ROOT,
    KEY_ROTATION,
    MAX_LEAF_BYTES,
    PUBLISHED_PRIVATE_KEYS,
    TILE_WIDTH,
    FormatError,
    KeyRing,
    Ledger,
    MerkleStream,
    NoteError,
    Problem,
    ProofError,
    TiledLog,
    VerifierKey,
    bundles_from,
    checkpoint_signers,
    invisible_characters,
    is_origin,
    leaf_hash,
    open_checkpoint,
    parse_canonical,
    printable,
    read_tiled_log,
    show,
    signer_problems,
    tile_read_order,
)

TILE_FOLDER = "ledger/tile"
_MAX_CHECKPOINT_BYTES = 1 << 16  # a checkpoint with a hundred cosignatures is under 20 kB
_MAX_HASH_TILE_BYTES = TILE_WIDTH * 32
_MAX_BUNDLE_BYTES = TILE_WIDTH * (2 + MAX_LEAF_BYTES)
_PROGRESS_EVERY = 100_000
_SHOWN_PROBLEMS = 20
# The lines of new events wait here until every entry is checked; past this they go to disk.
_SPOOL_IN_MEMORY = 1 << 22


@dataclass(frozen=True)
class Outcome:
    origin: str
    new: int  # entries read past the remembered size
    shown: int
    size: int
    state: Path
    first_contact: bool


# -- reading the log


def _claimed_origin(note: bytes) -> str:
    """The origin a checkpoint names, before it is verified: it only selects the state to read,
    and the note must then verify with the key that state pins."""
    first = note.split(b"\n", 1)[0]
    origin = first.decode("utf-8", "replace")
    if not is_origin(origin):
        invisible = invisible_characters(origin)
        named = f" (with {invisible})" if invisible else ""
        raise Inconsistent([f"{layout.CHECKPOINT}: its first line {show(origin)}{named} is not a log origin"])
    return origin


def _b64(h: bytes) -> str:
    return base64.b64encode(h).decode()


class _NotExtended(Exception):
    """The entries after the remembered tree, added to its compact range, do not give today's
    root: read the whole log to say exactly what is wrong."""


def _new_entries(fetch: Fetch, since: int, size: int) -> Iterator[bytes]:
    """The leaves from index `since` to `size`, from the entry bundles alone, a few on their way
    at once: the caller adds their hashes to the remembered tree's compact range and compares the
    root it gets with the checkpoint's, which checks them all (and that the log extends the
    remembered tree) at once."""
    order = [(layout.tile(rel), _MAX_BUNDLE_BYTES) for rel, _, _ in bundles_from(since, size)]
    with ReadAhead(fetch, order) as ahead:
        yield from new_entries(lambda rel: ahead.get(layout.tile(rel), _MAX_BUNDLE_BYTES), since, size)


@dataclass
class _Followed:
    shown: int
    replayed: Replayed
    absent: list[str]
    spans: int  # the key spans the replay made, before the pinned key starts a ring without rotations


def _follow(
    fetch: Fetch,
    size: int,
    root: bytes,
    seen: Remembered | None,
    replayed: Replayed | None,
    filters: Filters,
    as_json: bool,
    spool: IO[str],
    progress: Callable[[int], None],
) -> _Followed:
    """Read and check the entries of the log of `size` and `root` (only those after the remembered
    tree when its replay is given); write the new entries that `filters` selects to `spool`;
    return how many were written, the replay, and what the filters name that the log lacks.
    Raise Inconsistent, or _NotExtended from a replay the new entries do not extend to `root`."""

    def limit(rel: str) -> int:
        return _MAX_BUNDLE_BYTES if rel.startswith("tile/entries/") else _MAX_HASH_TILE_BYTES

    since, since_root = (seen.size, seen.root) if seen else (0, EMPTY_ROOT)
    if replayed is not None:
        ledger, full, hand_over_roots = replayed.ledger, replayed.tree, dict(replayed.hand_over_roots)
        leaves: Iterator[bytes] = _new_entries(fetch, since, size)
        tiled: TiledLog | None = None
        ahead: ReadAhead | None = None
    else:
        # The tiles are read in a known order: a few of the next ones are always on their way.
        ahead = ReadAhead(fetch, ((layout.tile(rel), limit(rel)) for rel in tile_read_order(size)))
        reader = ahead
        ledger, full, hand_over_roots = Ledger(), MerkleStream(), {}
        tiled = read_tiled_log(lambda rel: reader.get(layout.tile(rel), limit(rel)), size)
        leaves = tiled
    problems: list[str] = []
    broken = 0
    shown = 0
    try:
        for index, raw in enumerate(leaves, full.size):
            full.append(leaf_hash(raw))
            if full.size == since and full.root() != since_root:  # the tree this monitor saw last
                raise Inconsistent(
                    [
                        f"history rewritten: the site's first {since} entries have root {_b64(full.root())}, but "
                        f"this monitor saw root {_b64(since_root)} at size {since} (today's checkpoint: size "
                        f"{size}, root {_b64(root)})"
                    ]
                )
            try:
                leaf = parse_canonical(raw)
            except FormatError as e:
                ledger.apply(None)  # counted all the same, or every later entry would be misplaced by one
                found = [Problem(f"not canonical JSON: {e}", where=f"entries[{index}]")]
            else:
                found = ledger.apply(leaf, len(raw))
                if isinstance(leaf, dict) and leaf.get("type") == KEY_ROTATION:
                    hand_over_roots[index + 1] = full.root()
            if found:
                broken += len(found)
                problems += [problem_text(p) for p in found][: max(0, _SHOWN_PROBLEMS - len(problems))]
            elif index >= since and not broken and filters.match(leaf, ledger):
                spool.write((event_json(index, leaf) if as_json else event_line(index, leaf, ledger)) + "\n")
                shown += 1
            if (index + 1) % _PROGRESS_EVERY == 0:
                progress(index + 1)
    except (FormatError, ProofError) as e:
        if tiled is None:
            raise _NotExtended(str(e)) from None
        raise Inconsistent([f"{TILE_FOLDER}: the tiles do not hold the log its checkpoint signs: {e}"]) from None
    finally:
        if ahead is not None:
            ahead.close()
    got = tiled.root() if tiled is not None else full.root()
    if full.size != size or got != root:
        if tiled is None:
            raise _NotExtended(f"root {_b64(got)} at size {full.size}")
        raise Inconsistent(
            [f"{TILE_FOLDER}: the tiles' root {_b64(got)} is not the checkpoint's {_b64(root)} (size {size})"]
        )
    final = ledger.final_problems()
    broken += len(final)
    problems += [problem_text(p) for p in final][: max(0, _SHOWN_PROBLEMS - len(problems))]
    if broken:
        more = [f"… and {broken - len(problems)} more"] if broken > len(problems) else []
        raise Inconsistent([f"the ledger breaks its rules ({broken} problem(s)):", *problems, *more])
    spans = len(ledger.keys.spans)
    return _Followed(shown, Replayed(ledger, full, hand_over_roots), filters.absent(ledger), spans)


def _check_signers(note: bytes, ring: KeyRing, size: int) -> str:
    """Today's checkpoint signed only by keys the replayed ledger makes valid for its size: a
    retired or revoked key that still signs is an inconsistency, even the key this monitor pinned.
    The signatures checked, named by type and fingerprint."""
    try:
        _, signers = checkpoint_signers(note, ring)
    except (NoteError, FormatError) as e:
        raise Inconsistent([f"{layout.CHECKPOINT} does not verify with the ledger's keys: {e}"]) from None
    problems = signer_problems(ring, size, signers)
    if problems:
        raise Inconsistent([f"{layout.CHECKPOINT}: {p}" for p in problems])
    return ", ".join(f"{'Ed25519' if isinstance(k, VerifierKey) else 'ML-DSA-44'} {k.fingerprint}" for k in signers)


def _check_handed_over(
    fetch: Fetch, ring: KeyRing, pinned: VerifierKey, successor: VerifierKey, roots: dict[int, bytes]
) -> None:
    """The pinned key handed over to `successor` through the ledger's rotations: each one's
    hand-over checkpoint (the tree that first holds it) signed by the key it retired and the one
    it introduced. Never learnt from keys.json alone."""
    span = ring.span(pinned.vkey)
    if span is None or span.reason is not None:
        why = f"was revoked ({span.reason})" if span is not None else "is not among the ledger's keys"
        raise Inconsistent([f"the checkpoint is not signed by the pinned key {pinned.fingerprint}, which {why}"])
    if ring.active is None or ring.active.key != successor:
        raise Inconsistent([f"the site's key {successor.fingerprint} is not the one the ledger's rotations lead to"])
    chain = ring.spans[ring.spans.index(span) :]
    for old, new in itertools.pairwise(chain):
        rel = layout.archived_checkpoint(new.first_size)
        data = fetch(rel, _MAX_CHECKPOINT_BYTES)
        try:
            (_, cp_size, cp_root), signers = checkpoint_signers(data or b"", ring)
        except (NoteError, FormatError):
            cp_size, cp_root, signers = -1, b"", []
        if (cp_size, cp_root) != (new.first_size, roots.get(new.first_size)):
            # Signed by both, but of another tree: the old key endorsed some other history.
            raise Inconsistent([f"{rel}: the hand-over checkpoint is not of this log's tree at its size"])
        if old.key not in signers or new.key not in signers:
            raise Inconsistent(
                [f"{rel}: the rotation to {new.key.fingerprint} has no hand-over checkpoint signed by both keys"]
            )


# -- a run


def monitor(
    site: str,
    *,
    key: str | None = None,
    state_dir: Path | None = None,
    filters: Filters | None = None,
    as_json: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
    witnesses: WitnessOptions | None = None,
    clock: Callable[[], int] | None = None,
) -> Outcome:
    """One run over SITE (a folder or an https:// URL): the new entries go to `out` (default
    stdout) once every entry is checked, and the witnesses' views (`witnesses`, compared at the
    time `clock` gives, in POSIX seconds) with them; notes go to `err`; then the state moves. Raise
    Inconsistent (exit 1), Unreadable or MonitorStateError (exit 2), the state then unchanged."""
    out = out or sys.stdout
    err = err or sys.stderr
    filters = filters or Filters()
    pin = parse_pin(key)
    folder = state_dir or default_state_dir()
    if folder is None:
        raise Unreadable("no home folder and no XDG_CACHE_HOME for the monitor's state: give --state DIR")
    label, fetch = open_site(site)
    note = fetch(layout.CHECKPOINT, _MAX_CHECKPOINT_BYTES)
    if note is None:
        raise Unreadable(f"{label}: no {layout.CHECKPOINT}: not a transparency site, or not built yet")
    origin = _claimed_origin(note)
    # The witnesses are asked as soon as the log is named, right after its checkpoint was read: a
    # log that grows meanwhile is then seldom seen by a witness beyond the tree this run checks.
    asked = None
    if witnesses is not None:
        asked = _Asked(witnesses, *fetch_views(witnesses, origin), clock or (lambda: int(time.time())))
    path = state_path(folder, origin)
    with locked(path):
        seen, log_key, known = _trusted(fetch, origin, pin, folder, path, err)
        size, root, successor = _open_today(fetch, note, origin, log_key, seen, known)
        if seen is not None:
            _refuse_going_back(size, root, seen)
            if size == seen.size:  # nothing new: the state stays as it is
                judged = _check_views(asked, fetch, origin, size, root, log_key, as_json, out, err)
                _report_views(judged, as_json, out, err)
                return Outcome(origin, 0, 0, size, path, False)
        with tempfile.SpooledTemporaryFile(_SPOOL_IN_MEMORY, mode="w+", encoding="utf-8", newline="\n") as spool:
            followed = _follow_log(fetch, origin, size, root, seen, path, filters, as_json, spool, err)
            shown, absent, hand_over_roots = followed.shown, followed.absent, followed.replayed.hand_over_roots
            ring = followed.replayed.ledger.keys
            ring.start(log_key)  # a ledger without rotations: the pinned key is its only one
            # Every key of the log, not only the one pinned: a key it rotated away from (or to) is
            # still the key of whichever log another state pins it for.
            refuse_another_log(origin, [span.key for span in ring.spans], known)
            if successor is not None:
                _check_handed_over(fetch, ring, log_key, successor, hand_over_roots)
                _say(err, f"the log rotated its key: followed {log_key.fingerprint} to {successor.fingerprint}")
                log_key = successor
            signed = _check_signers(note, ring, size)
            if ring.ml_dsa:  # two signatures: say which were checked
                _say(err, f"the checkpoint's signatures by the log, each verified: {signed}")
            judged = _check_views(asked, fetch, origin, size, root, log_key, as_json, out, err)
            spool.seek(0)
            shutil.copyfileobj(spool, out)
        _report_views(judged, as_json, out, err)
        out.flush()
        for line in absent:
            _say(err, f"warning: {line}")
        # Printed first, remembered second: a kill in between prints these entries again next time,
        # never loses them.
        try:
            write_replay(replay_path(path), origin, followed.replayed, followed.spans)
        except OSError as e:  # a cache: without it the next run reads the whole log again
            _say(err, f"warning: the replay was not saved ({e.strerror or e}); the next run reads the whole log")
        write_state(path, Remembered(origin, log_key, size, root, note))
    return Outcome(origin, size - (seen.size if seen else 0), shown, size, path, seen is None)


def _trusted(
    fetch: Fetch, origin: str, pin: VerifierKey | str | None, folder: Path, path: Path, err: TextIO
) -> tuple[Remembered | None, VerifierKey, dict[str, list[bytes]]]:
    """What this monitor remembers of the log, the key it trusts for it (said aloud on first
    contact), and the keys of the other logs it follows, refused for this one."""
    seen = read_state(path, origin)
    log_key, source = trusted_key(fetch, origin, pin, seen)
    known, skipped = other_logs(folder, path)
    if skipped:
        _say(err, f"not a state this monitor can read, left out of the look-alike check: {', '.join(skipped)}")
    refuse_another_log(origin, [log_key], known)
    if source is not None:
        _say(err, _first_contact(origin, log_key, source, pinned=pin is not None, path=path))
    if log_key.fingerprint in PUBLISHED_PRIVATE_KEYS:
        _say(err, "warning: this log is signed with the project's published DEMO key: anyone can sign with it")
    return seen, log_key, known


def _follow_log(
    fetch: Fetch,
    origin: str,
    size: int,
    root: bytes,
    seen: Remembered | None,
    path: Path,
    filters: Filters,
    as_json: bool,
    spool: IO[str],
    err: TextIO,
) -> _Followed:
    """_follow from the replay remembered, if any; from the whole log if the new entries do not
    extend it. Raise Inconsistent."""

    def progress(n: int) -> None:
        _say(err, f"read {n:,} of {size:,} entries")

    replayed = read_replay(replay_path(path), origin, seen.size, seen.root) if seen is not None else None
    try:
        return _follow(fetch, size, root, seen, replayed, filters, as_json, spool, progress)
    except _NotExtended as e:
        # Not the tree the replay remembers, or a bundle that does not read: the whole log, read
        # again, says which entry or tile is wrong.
        _say(
            err,
            f"the entries after size {seen.size if seen else 0} do not extend the tree remembered ({e}): "
            "reading the whole log",
        )
        spool.seek(0)
        spool.truncate()
        return _follow(fetch, size, root, seen, None, filters, as_json, spool, progress)


# -- the witnesses' views


@dataclass(frozen=True)
class _Asked:
    """What --witnesses asked: the policy, the views its witnesses gave, those that gave none,
    and the clock their cosignatures' times are judged by."""

    options: WitnessOptions
    views: list[View]
    unseen: list[Unseen]
    now: Callable[[], int]


def _check_views(
    asked: _Asked | None,
    fetch: Fetch,
    origin: str,
    size: int,
    root: bytes,
    log_key: VerifierKey,
    as_json: bool,
    out: TextIO,
    err: TextIO,
) -> Judged | None:
    """The views compared with each other and with the log of `size` and `root` (its hash tiles
    read from the site). Raise Inconsistent, after saying the rest of what was found."""
    if asked is None:
        return None
    if not policy_trusts(asked.options, origin, [log_key.public_key]):
        _say(
            err,
            f"warning: the policy {asked.options.label} does not name the key this monitor trusts for {origin} "
            f"({log_key.fingerprint}); its witnesses' checkpoints are opened with the keys it names",
        )
    judged = judge(
        asked.views,
        asked.unseen,
        size,
        root,
        lambda rel: fetch(layout.tile(rel), _MAX_HASH_TILE_BYTES),
        asked.now(),
        asked.options.max_age,
    )
    if judged.inconsistencies:
        _report_views(judged, as_json, out, err)
        raise Inconsistent(judged.inconsistencies)
    return judged


def _report_views(judged: Judged | None, as_json: bool, out: TextIO, err: TextIO) -> None:
    """Each witness's view as a JSON line on `out` (--json), and on `err` what was found that is
    not an inconsistency (those are the error's lines), then a summary."""
    if judged is None:
        return
    if as_json:
        out.writelines(line + "\n" for line in view_lines(judged))
        out.flush()
    for f in judged.findings:
        if f.level != INCONSISTENT:
            _say(err, f.text if f.level == NOTE else f"warning: {f.text}")
    if not judged.inconsistencies:
        _say(err, summary(judged) if judged.views else f"warning: {summary(judged)}")


def _first_contact(origin: str, log_key: VerifierKey, source: str, *, pinned: bool, path: Path) -> str:
    """What a first contact says: the key trusted and where it came from."""
    # With --key the user already chose the key; without, they are told how to.
    advice = (
        "Make sure the key you gave was obtained out of band, not from the site."
        if pinned
        else "Compare its fingerprint with one you obtained out of band; to pin yours instead, move the state "
        f"file {path} away and run again with --key."
    )
    return (
        f"first contact with log {origin}: trusting {source}, key {log_key.vkey}, fingerprint "
        f"{log_key.fingerprint}. {advice}"
    )


def _open_today(
    fetch: Fetch,
    note: bytes,
    origin: str,
    log_key: VerifierKey,
    seen: Remembered | None,
    known: dict[str, list[bytes]],
) -> tuple[int, bytes, VerifierKey | None]:
    """Today's checkpoint, opened with the trusted key: its size and root, and the site's key if
    the checkpoint is signed by that one instead (a successor, trusted only once the ledger
    shows the pinned key handing over to it). Raise Inconsistent."""
    successor: VerifierKey | None = None
    try:
        try:
            cp_origin, size, root = open_checkpoint(note, origin, log_key.public_key)
        except (NoteError, FormatError):
            if seen is None:
                raise
            # Perhaps rotated: the candidate is the site's active key, trusted only once the
            # ledger shows the pinned key handing over to it (checked after the replay).
            successor = site_key(fetch, origin)
            refuse_another_log(origin, [successor], known)
            cp_origin, size, root = open_checkpoint(note, origin, successor.public_key)
            if size <= seen.size:  # a rotation is a leaf: a log that rotated has grown
                raise NoteError(f"signed by {successor.fingerprint} instead, on a log that did not grow") from None
    except (NoteError, FormatError) as e:
        raise Inconsistent(
            [
                f"{layout.CHECKPOINT} does not verify with the {'pinned ' if seen else ''}key {log_key.vkey} "
                f"({log_key.fingerprint}): {e}. The site was re-keyed, or its checkpoint forged"
            ]
        ) from None
    if cp_origin != log_key.name:
        raise Inconsistent([f"{layout.CHECKPOINT} is a checkpoint of {cp_origin}, not of {log_key.name}"])
    return size, root, successor


def _refuse_going_back(size: int, root: bytes, seen: Remembered) -> None:
    """Today's tree, of `size` and `root`, no smaller than the one this monitor saw, nor another
    at the same size. Raise Inconsistent."""
    if size < seen.size:
        raise Inconsistent(
            [
                f"rolled back: the site's checkpoint has {size} entries (root {_b64(root)}), fewer than the "
                f"{seen.size} (root {_b64(seen.root)}) this monitor saw before"
            ]
        )
    if size == seen.size and root != seen.root:
        raise Inconsistent(
            [
                f"history rewritten: at size {size} the site's checkpoint has root {_b64(root)}, but this "
                f"monitor saw root {_b64(seen.root)}"
            ]
        )


def _say(err: TextIO, text: str) -> None:
    err.write(f"monitor: {printable(text)}\n")
    err.flush()


def run_monitor(
    site: str,
    *,
    key: str | None = None,
    state_dir: Path | None = None,
    types: Iterable[str] = (),
    gates: Iterable[str] = (),
    subjects: Iterable[str] = (),
    as_json: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
    witnesses: Path | None = None,
    max_age: str | None = None,
    clock: Callable[[], int] | None = None,
) -> int:
    """monitor() as a command: its messages and summary on `err`, and its exit status. `witnesses`
    is a policy file (--witnesses), `max_age` the oldest a witness's cosignature may be (--max-age,
    `36h`, `7d`): both read before the site is."""
    err = err or sys.stderr
    try:
        if max_age is not None and witnesses is None:
            raise Unreadable("--max-age bounds the age of the witnesses' cosignatures: give --witnesses POLICY too")
        options = read_witness_options(witnesses, max_age) if witnesses is not None else None
        result = monitor(
            site,
            key=key,
            state_dir=state_dir,
            filters=Filters.of(types, gates, subjects),
            as_json=as_json,
            out=out,
            err=err,
            witnesses=options,
            clock=clock,
        )
    except Inconsistent as e:
        for line in e.lines:
            _say(err, f"INCONSISTENT: {line}")
        _say(err, "the state was not moved")
        return e.exit_code
    except (Unreadable, MonitorStateError) as e:
        _say(err, str(e))
        return e.exit_code
    except BrokenPipeError:
        return 2  # the reader left before every entry was printed: the state was not moved
    if result.first_contact:
        _say(err, f"pinned the key of {result.origin} in {result.state}")
    err.write(f"checked {result.new} new entries ({result.shown} shown); now at size {result.size}\n")
    return 0
