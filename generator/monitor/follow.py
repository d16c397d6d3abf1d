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
4. prints the new entries (index >= the remembered size), filtered for display only;
5. only then moves its state, atomically.

Nothing a check depends on is ever skipped: filters choose what is printed, never what is read.
Exit status: 0 consistent, 1 an inconsistency (the state is not moved), 2 the site or the state
cannot be read, or a bad argument. Standard library and the verifier only, so it runs without
click; the CLI is a thin layer over run_monitor().
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import itertools
import json
import os
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO

from generator import __version__
from generator.core import layout
from generator.core.generator_errors import TransparencyError
from generator.core.regularfile import TooLarge, read_regular
from generator.verifier import (
    EMPTY_ROOT,
    KEY_ROTATION,
    LEAF_KEYS,
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
    RunEvent,
    VerifierKey,
    b64decode_strict,
    canonical_bytes,
    check_keys,
    checkpoint_signers,
    invisible_characters,
    is_hex64,
    is_origin,
    key_rows,
    leaf_hash,
    open_checkpoint,
    other_log_problems,
    parse_canonical,
    parse_vkey,
    printable,
    read_tiled_log,
    replace_atomically,
    show,
    signer_problems,
    user_cache_dir,
)

# Every type the verifier's Ledger knows: one it does not know is a rule problem, never printed.
EVENT_TYPES = tuple(LEAF_KEYS)
STATE_FOLDER = "transparency-monitor"
STATE_TYPE = "monitor-state"
TILE_FOLDER = "ledger/tile"

_TIMEOUT = 10.0  # seconds a connection may stay silent
_DEADLINE = 60.0  # seconds one file may take in all: a server dripping bytes cannot hold a run forever
_MAX_CHECKPOINT_BYTES = 1 << 16  # a checkpoint with a hundred cosignatures is under 20 kB
_MAX_KEYS_BYTES = 1 << 20
_MAX_HASH_TILE_BYTES = TILE_WIDTH * 32
_MAX_BUNDLE_BYTES = TILE_WIDTH * (2 + MAX_LEAF_BYTES)
_MAX_STATE_BYTES = 1 << 18
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_PROGRESS_EVERY = 100_000
_SHOWN_PROBLEMS = 20
# The lines of new events wait here until every entry is checked; past this they go to disk.
_SPOOL_IN_MEMORY = 1 << 22

Fetch = Callable[[str, int], bytes | None]


class Inconsistent(TransparencyError):
    """Something a log must never do. The run stops and its state is not moved (exit status 1).
    `lines` are raw text from the site: escape them (printable) before showing them."""

    exit_code = 1

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        super().__init__("\n".join(lines))


class Unreadable(TransparencyError):
    """The site or the state could not be read, or an argument is wrong (exit status 2)."""


# What following a type also prints: a revocation is news about a certificate, a withdrawal news
# about a run, and whoever follows certificates or runs must never miss that one was withdrawn.
_ALSO_SHOWN = {"certificate": ("revocation",), "run": ("run-withdrawn",)}


@dataclass(frozen=True)
class Filters:
    """What to print. Given kinds combine with and; the values of one kind with or. `--type
    certificate` also prints revocations (of certificates), `--type run` withdrawals of runs: see
    _ALSO_SHOWN."""

    types: frozenset[str] = frozenset()
    gates: frozenset[str] = frozenset()
    subjects: frozenset[str] = frozenset()  # a subject's id or its exact name

    @classmethod
    def of(cls, types: Iterable[str] = (), gates: Iterable[str] = (), subjects: Iterable[str] = ()) -> Filters:
        unknown = sorted(set(types) - set(EVENT_TYPES))
        if unknown:
            raise Unreadable(f"--type {', '.join(unknown)}: not an event type (one of {', '.join(EVENT_TYPES)})")
        shown = set(types).union(*(_ALSO_SHOWN.get(t, ()) for t in types))
        return cls(frozenset(shown), frozenset(gates), frozenset(subjects))

    def match(self, leaf: dict[str, Any], ledger: Ledger) -> bool:
        """Whether an entry the ledger has just applied (so that what it refers to is known) is shown."""
        if self.types and leaf["type"] not in self.types:
            return False
        gate, run = _about(leaf, ledger)
        if self.gates and gate not in self.gates:
            return False
        return not self.subjects or (run is not None and bool({run.subject["id"], run.subject["name"]} & self.subjects))

    def absent(self, ledger: Ledger) -> list[str]:
        """What the filters name that the whole replayed log does not have: a typo shows nothing,
        which must not read as a quiet log."""
        subjects = {name for run in ledger.runs.values() for name in (run.subject["id"], run.subject["name"])}
        return [f"--gate {g}: the log has no gate {g}" for g in sorted(self.gates - set(ledger.gates))] + [
            f"--subject {s}: no run of the log has a subject with this id or name"
            for s in sorted(self.subjects - subjects)
        ]


@dataclass(frozen=True)
class Remembered:
    """What the monitor keeps of one log: the key it trusts, and the last checkpoint it verified."""

    origin: str
    key: VerifierKey
    size: int
    root: bytes
    checkpoint: bytes


@dataclass(frozen=True)
class Outcome:
    origin: str
    new: int  # entries read past the remembered size
    shown: int
    size: int
    state: Path
    first_contact: bool


# -- the site: a folder or a URL


def open_site(site: str) -> tuple[str, Fetch]:
    """A label of the site for messages, and a function from a site path and a size bound to its
    bytes (None when the site does not have that file)."""
    if "://" in site:
        return site, _http_source(site)
    return site, _folder_source(Path(site))


def _folder_source(root: Path) -> Fetch:
    if not root.is_dir():
        raise Unreadable(f"{root}: not a folder, nor an https:// URL")

    def get(rel: str, limit: int) -> bytes | None:
        # A site is data from elsewhere: a link inside it could point at any file of this machine.
        path = root
        for part in rel.split("/"):
            path = path / part
            if path.is_symlink():
                return None
        try:
            return read_regular(path, limit)  # a FIFO there would otherwise hold the run forever
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            raise Unreadable(f"{path}: {e.strerror or e}") from None

    return get


def _http_source(url: str) -> Fetch:
    # Imported here: `transparency` loads this module for every command, and urllib costs more
    # than the rest of it.
    import http.client
    import ssl
    import urllib.error
    import urllib.parse
    import urllib.request

    def allowed(parts: urllib.parse.SplitResult, scheme: str) -> str | None:
        """What is wrong with fetching from `parts` when the site was given with `scheme`."""
        if parts.scheme.lower() != scheme:
            return f"{parts.scheme or 'no'} scheme, not {scheme}"
        if scheme == "http" and parts.hostname not in _LOOPBACK:
            return "plain http:// is accepted only for 127.0.0.1 or localhost (tests and previews); use https://"
        if scheme not in ("http", "https"):
            return "only https:// URLs (and http:// on 127.0.0.1) are followed"
        if not parts.hostname or parts.username is not None or parts.password is not None:
            return "a URL with a host name and no user name or password"
        return None

    try:
        given = urllib.parse.urlsplit(url)
        given.port  # noqa: B018 -- raises ValueError for a malformed port
    except ValueError as e:
        raise Unreadable(f"{url}: not a URL ({e})") from None
    scheme = given.scheme.lower()
    problem = allowed(given, scheme) or (
        "a site URL has no query or fragment" if given.query or given.fragment else None
    )
    if problem:
        raise Unreadable(f"{url}: {problem}")
    base = urllib.parse.urlunsplit((scheme, given.netloc, given.path.rstrip("/") + "/", "", ""))

    class SameScheme(urllib.request.HTTPRedirectHandler):
        """Redirects within the site's scheme only: an https site is never read over http."""

        def redirect_request(
            self,
            req: urllib.request.Request,
            fp: IO[bytes],
            code: int,
            msg: str,
            headers: Any,
            newurl: str,
        ) -> urllib.request.Request | None:
            wrong = allowed(urllib.parse.urlsplit(newurl), scheme)
            if wrong:
                raise Unreadable(f"{req.full_url}: redirected to {newurl}, which is refused: {wrong}")
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    # A local server is reached directly: a proxy from the environment would answer for it.
    proxies = urllib.request.ProxyHandler({} if given.hostname in _LOOPBACK else None)
    https = urllib.request.HTTPSHandler(context=ssl.create_default_context())
    opener = urllib.request.build_opener(proxies, SameScheme, https)
    headers = {"User-Agent": f"transparency-monitor/{__version__}", "Accept-Encoding": "identity"}

    def get(rel: str, limit: int) -> bytes | None:
        where = base + urllib.parse.quote(rel)
        deadline = time.monotonic() + _DEADLINE
        data = bytearray()
        try:
            with opener.open(urllib.request.Request(where, headers=headers), timeout=_TIMEOUT) as response:
                length = response.headers.get("Content-Length", "")
                if length.strip().isdigit() and int(length) > limit:
                    raise Unreadable(f"{where}: {int(length)} bytes, more than the {limit} such a file can have")
                while len(data) <= limit:
                    chunk = response.read(min(1 << 16, limit + 1 - len(data)))
                    if not chunk:
                        break
                    data += chunk
                    if time.monotonic() > deadline:
                        raise Unreadable(f"{where}: still arriving after {_DEADLINE:.0f} s")
        except urllib.error.HTTPError as e:
            e.close()
            if e.code in (404, 410):
                return None
            raise Unreadable(f"{where}: HTTP {e.code} {e.reason}") from None
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as e:
            reason = getattr(e, "reason", None) or e
            raise Unreadable(f"{where}: {reason}") from None
        if len(data) > limit:
            raise Unreadable(f"{where}: more than the {limit} bytes such a file can have")
        return bytes(data)

    return get


# -- the state: one file per log origin


def default_state_dir() -> Path | None:
    """$XDG_CACHE_HOME/transparency-monitor, or under ~/.cache; None without a home."""
    return user_cache_dir(STATE_FOLDER)


def state_path(folder: Path, origin: str) -> Path:
    """Named by the origin's SHA-256: an origin is text from a site, never a file name."""
    return folder / f"{hashlib.sha256(origin.encode('utf-8')).hexdigest()}.json"


def read_state(path: Path, origin: str) -> Remembered | None:
    """The log's state, None before the first run; a file that is not a valid state of this
    origin, whose checkpoint does not open with its key or name its tree, is refused and kept:
    replacing it would silently forget the key and the tree it exists to remember."""
    data: bytes | None = None
    try:
        data = read_regular(path, _MAX_STATE_BYTES)
    except FileNotFoundError:
        return None
    except TooLarge:
        pass  # damaged, as below
    except OSError as e:
        raise Unreadable(f"{path}: cannot read the monitor's state ({e.strerror or e})") from None
    try:
        if data is None:
            raise FormatError(f"larger than {_MAX_STATE_BYTES} bytes")
        doc = parse_canonical(data)
        members = ("checkpoint", "origin", "root", "tree_size", "type", "v", "vkey")
        if check_keys(doc, members) or doc["type"] != STATE_TYPE or doc["v"] != 1:
            raise FormatError(f'not {{"type":"{STATE_TYPE}","v":1,…}} with members {", ".join(members)}')
        if doc["origin"] != origin:
            raise FormatError(f"it is the state of {show(doc['origin'])}, not of {show(origin)}")
        key = parse_vkey(doc["vkey"])
        size, root = doc["tree_size"], b64decode_strict(doc["root"]) if isinstance(doc["root"], str) else b""
        if type(size) is not int or size < 0 or len(root) != 32 or key.name != origin:
            raise FormatError("malformed tree_size, root or vkey")
        checkpoint = b64decode_strict(doc["checkpoint"]) if isinstance(doc["checkpoint"], str) else b""
        if open_checkpoint(checkpoint, origin, key.public_key) != (origin, size, root):
            raise FormatError("its checkpoint does not sign its tree_size and root")
    except (FormatError, NoteError) as e:
        raise Unreadable(
            f"{path}: the monitor's state is damaged ({e}); it was left as it is. Move it away to start "
            "afresh (and lose the key and the checkpoint it remembered)"
        ) from None
    return Remembered(origin, key, size, root, checkpoint)


def write_state(path: Path, r: Remembered) -> None:
    """Replace the state atomically: a kill at any point leaves the old file or the new one."""
    doc = {
        "checkpoint": base64.b64encode(r.checkpoint).decode(),
        "origin": r.origin,
        "root": base64.b64encode(r.root).decode(),
        "tree_size": r.size,
        "type": STATE_TYPE,
        "v": 1,
        "vkey": r.key.vkey,
    }
    replace_atomically(path, canonical_bytes(doc))


def other_logs(folder: Path, path: Path) -> tuple[dict[str, list[bytes]], list[str]]:
    """The other logs this state folder remembers (origin -> the key pinned for it), and the
    state files that could not be read as one: a log is its key as much as its origin, and the
    verifier's rule for a key or an origin seen before under another name applies to them."""
    known: dict[str, list[bytes]] = {}
    skipped: list[str] = []
    for other in sorted(folder.glob("*.json")):
        if other == path:
            continue
        try:
            # Not following a link, not waiting on a FIFO: only a regular file is a state.
            fd = os.open(other, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise OSError(f"{other.name} is not a regular file")
                data = f.read(_MAX_STATE_BYTES + 1)
            doc = parse_canonical(data)
            known[doc["origin"]] = [parse_vkey(doc["vkey"]).public_key]
        except (OSError, FormatError, KeyError, TypeError):
            skipped.append(other.name)
    return known, skipped


def _refuse_another_log(origin: str, keys: Iterable[VerifierKey], known: dict[str, list[bytes]]) -> None:
    """The same site re-served under another origin (a look-alike, or any name at all with a key
    this monitor pinned for another log) is not a first contact: it is that log."""
    problems = other_log_problems(origin, [k.public_key for k in keys], known)
    if problems:
        raise Inconsistent(problems)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One monitor at a time per log and state folder: two would race, and the slower could put
    back an older tree."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as e:
        raise Unreadable(f"{path.parent}: cannot use it for the monitor's state ({e.strerror or e})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Unreadable(f"{path}: another monitor is following this log with the same state") from None
        yield
    finally:
        os.close(fd)


# -- trust


def parse_pin(pin: str | None) -> VerifierKey | str | None:
    """--key: a verifier key, or a `SHA256:<hex>` fingerprint of the key that keys.json must list."""
    if pin is None:
        return None
    pin = pin.strip()
    if pin.startswith("SHA256:"):
        if not is_hex64(pin[7:]):
            raise Unreadable("--key: a fingerprint is SHA256: followed by 64 lowercase hex digits")
        return pin
    try:
        return parse_vkey(pin)
    except FormatError as e:
        raise Unreadable(f"--key: {e}") from None


def _trusted_key(
    fetch: Fetch, origin: str, pin: VerifierKey | str | None, remembered: Remembered | None
) -> tuple[VerifierKey, str | None]:
    """The key that must sign today's checkpoint, and on first contact where it came from."""
    if remembered is not None:
        # KEY ROTATION HOOK. Until the format's key events land here, any key other than the pinned
        # one is an inconsistency. With them the pinned key stays the root of trust: its successor
        # is learnt from the ledger's key-rotation leaf under the hand-over checkpoint the pinned
        # key signed, and is what write_state pins next; never from keys.json alone.
        if pin is not None and not _pin_matches(pin, remembered.key):
            raise Inconsistent(
                [
                    f"--key {_pin_text(pin)} is not the key this monitor pinned for {origin}: "
                    f"{remembered.key.vkey} ({remembered.key.fingerprint}). A key change is an inconsistency; "
                    "to trust another key on purpose, move the state file away"
                ]
            )
        return remembered.key, None
    if isinstance(pin, VerifierKey):
        if pin.name != origin:
            raise Inconsistent([f"{layout.CHECKPOINT} is a checkpoint of {origin}, but --key is a key of {pin.name}"])
        return pin, "the key given with --key"
    key = _site_key(fetch, origin)
    if pin is not None and not _pin_matches(pin, key):
        raise Inconsistent(
            [f"the site's active key {key.vkey} ({key.fingerprint}) is not the key given with --key {pin}"]
        )
    return key, "the key pinned with --key, as the site's keys.json lists it" if pin else "the site's keys.json"


def _pin_matches(pin: VerifierKey | str, key: VerifierKey) -> bool:
    return pin == key.fingerprint if isinstance(pin, str) else (pin.name, pin.public_key) == (key.name, key.public_key)


def _pin_text(pin: VerifierKey | str) -> str:
    return pin if isinstance(pin, str) else pin.vkey


def _site_key(fetch: Fetch, origin: str) -> VerifierKey:
    """The active key of the site's keys.json, its rules checked (format v1 §2)."""
    data = fetch(layout.KEYS, _MAX_KEYS_BYTES)
    if data is None:
        raise Unreadable(f"no {layout.KEYS}: the site names no key to trust; pin one with --key")
    try:
        doc = parse_canonical(data)
    except FormatError as e:
        raise Inconsistent([f"{layout.KEYS}: {e}"]) from None
    shape = check_keys(doc, ("keys", "origin", "type", "v"))
    if shape or doc["type"] != "keys" or doc["v"] != 1:
        raise Inconsistent([f"{layout.KEYS}: not a v1 keys document"])
    if doc["origin"] != origin:
        raise Inconsistent([f"{layout.KEYS}: origin {show(doc['origin'])} is not the checkpoint's {origin}"])
    rows, problems = key_rows(doc["keys"], origin, published=True)
    if problems:
        raise Inconsistent([f"{layout.KEYS}: {_problem_text(p)}" for p in problems])
    return next(r.key for r in rows if r.status == "active")  # key_rows requires exactly one


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


def _problem_text(p: Problem) -> str:
    text = f"{p.where + ': ' if p.where else ''}{p.message}"
    if p.expected is not None:
        text += f" (expected {p.expected})"
    if p.found is not None:
        text += f" (found {p.found})"
    return text


def _about(leaf: dict[str, Any], ledger: Ledger) -> tuple[str | None, RunEvent | None]:
    """The gate and the run an applied entry is about, when it is about one: a certificate's run,
    and the run of the certificate an event names by its serial (a revocation)."""
    kind = leaf["type"]
    if kind == "gate":
        return leaf["id"], None
    if kind == "commit":
        return leaf["gate"], None
    if kind == "reveal":
        commit = ledger.commit(leaf["id"])
        return (commit.gate if commit else None), None
    if kind == "run":
        run_id = leaf["id"]
    elif isinstance(leaf.get("run"), str):
        run_id = leaf["run"]
    else:
        cert = ledger.certificates.get(leaf["serial"]) if isinstance(leaf.get("serial"), str) else None
        run_id = cert.run if cert else None
    run = ledger.runs.get(run_id) if run_id is not None else None
    return (run.gate if run else None), run


# The member that names what an event is about, for event types this module does not describe.
_ID_MEMBERS = ("id", "serial", "version", "vkey", "run")


def event_line(index: int, leaf: dict[str, Any], ledger: Ledger) -> str:
    """`<index> <at> <type> <id> <detail>`, every part escaped: names come from the site."""
    kind = leaf["type"]
    gate, run = _about(leaf, ledger)
    id_member = next((k for k in _ID_MEMBERS if k in leaf), None)
    ident = str(leaf[id_member]) if id_member else "-"
    about = [f"gate={gate}"] if gate else []
    if run:
        about.append(f"subject={show(run.subject['name'])} ({run.subject['id']})")
    if kind == "gate":
        detail = [f"name={show(leaf['name'])}", "public" if leaf["public"] else "secret"]
    elif kind == "methodology":
        detail = [f"sha256={leaf['sha256']}"]
    elif kind in ("commit", "run"):
        detail = about
    elif kind == "reveal":
        detail = [*about, f"reason={leaf['reason']}"] + ([f"note={show(leaf['note'], 60)}"] if leaf["note"] else [])
    elif kind == "certificate":
        detail = [f"run={leaf['run']}", *about]
    else:  # an event this module has no words for (yet): what it is about, then its other members
        rest = sorted(k for k in leaf if k not in ("type", "v", "at", id_member))
        detail = [*about, *(f"{k}={show(leaf[k], 60)}" for k in rest)]
    return printable(" ".join([str(index), leaf["at"], kind, ident, *detail]))


def event_json(index: int, leaf: Any) -> str:
    # ASCII only: whatever the leaf holds reaches the terminal as \u escapes, which JSON decodes back.
    return json.dumps({"index": index, "leaf": leaf}, ensure_ascii=True, sort_keys=True, separators=(",", ":"))


def _follow(
    fetch: Fetch,
    size: int,
    root: bytes,
    seen: Remembered | None,
    filters: Filters,
    as_json: bool,
    spool: IO[str],
    progress: Callable[[int], None],
) -> tuple[int, KeyRing, dict[int, bytes], list[str]]:
    """Read and check every entry of the log of `size` and `root`; write the new entries that
    `filters` selects to `spool`; return how many were written, the log's keys as its key
    events make them, the hand-over roots, and what the filters name that the log lacks. Raise
    Inconsistent."""

    def tile(rel: str) -> bytes | None:
        return fetch(layout.tile(rel), _MAX_BUNDLE_BYTES if rel.startswith("tile/entries/") else _MAX_HASH_TILE_BYTES)

    since, since_root = (seen.size, seen.root) if seen else (0, EMPTY_ROOT)
    ledger = Ledger()
    full = MerkleStream()  # every leaf: the root at the size seen last, and at each hand-over
    hand_over_roots: dict[int, bytes] = {}
    problems: list[str] = []
    broken = 0
    shown = 0
    tiled = read_tiled_log(tile, size)
    try:
        for index, raw in enumerate(tiled):
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
                problems += [_problem_text(p) for p in found][: max(0, _SHOWN_PROBLEMS - len(problems))]
            elif index >= since and not broken and filters.match(leaf, ledger):
                spool.write((event_json(index, leaf) if as_json else event_line(index, leaf, ledger)) + "\n")
                shown += 1
            if (index + 1) % _PROGRESS_EVERY == 0:
                progress(index + 1)
    except (FormatError, ProofError) as e:
        raise Inconsistent([f"{TILE_FOLDER}: the tiles do not hold the log its checkpoint signs: {e}"]) from None
    if tiled.root() != root:
        raise Inconsistent(
            [f"{TILE_FOLDER}: the tiles' root {_b64(tiled.root())} is not the checkpoint's {_b64(root)} (size {size})"]
        )
    final = ledger.final_problems()
    broken += len(final)
    problems += [_problem_text(p) for p in final][: max(0, _SHOWN_PROBLEMS - len(problems))]
    if broken:
        more = [f"… and {broken - len(problems)} more"] if broken > len(problems) else []
        raise Inconsistent([f"the ledger breaks its rules ({broken} problem(s)):", *problems, *more])
    return shown, ledger.keys, hand_over_roots, filters.absent(ledger)


def _check_signers(note: bytes, ring: KeyRing, size: int) -> None:
    """Today's checkpoint signed only by keys the replayed ledger makes valid for its size: a
    retired or revoked key that still signs is an inconsistency, even the key this monitor pinned."""
    try:
        _, signers = checkpoint_signers(note, ring)
    except (NoteError, FormatError) as e:
        raise Inconsistent([f"{layout.CHECKPOINT} does not verify with the ledger's keys: {e}"]) from None
    problems = signer_problems(ring, size, signers)
    if problems:
        raise Inconsistent([f"{layout.CHECKPOINT}: {p}" for p in problems])


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
) -> Outcome:
    """One run over SITE (a folder or an https:// URL): the new entries go to `out` (default
    stdout) once every entry is checked, notes to `err`; then the state moves. Raise
    Inconsistent (exit 1) or Unreadable (exit 2), the state then unchanged."""
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
    path = state_path(folder, origin)
    with _locked(path):
        seen = read_state(path, origin)
        log_key, source = _trusted_key(fetch, origin, pin, seen)
        known, skipped = other_logs(folder, path)
        if skipped:
            _say(err, f"not a state this monitor can read, left out of the look-alike check: {', '.join(skipped)}")
        _refuse_another_log(origin, [log_key], known)
        if source is not None:
            # With --key the user already chose the key; without, they are told how to.
            advice = (
                "Make sure the key you gave was obtained out of band, not from the site."
                if pin is not None
                else "Compare its fingerprint with one you obtained out of band; to pin yours instead, move the state "
                f"file {path} away and run again with --key."
            )
            _say(
                err,
                f"first contact with log {origin}: trusting {source}, key {log_key.vkey}, fingerprint "
                f"{log_key.fingerprint}. {advice}",
            )
        if log_key.fingerprint in PUBLISHED_PRIVATE_KEYS:
            _say(err, "warning: this log is signed with the project's published DEMO key: anyone can sign with it")
        successor: VerifierKey | None = None
        try:
            try:
                cp_origin, size, root = open_checkpoint(note, origin, log_key.public_key)
            except (NoteError, FormatError):
                if seen is None:
                    raise
                # Perhaps rotated: the candidate is the site's active key, trusted only once the
                # ledger shows the pinned key handing over to it (checked after the replay).
                successor = _site_key(fetch, origin)
                _refuse_another_log(origin, [successor], known)
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
        if seen is not None and size < seen.size:
            raise Inconsistent(
                [
                    f"rolled back: the site's checkpoint has {size} entries (root {_b64(root)}), fewer than the "
                    f"{seen.size} (root {_b64(seen.root)}) this monitor saw before"
                ]
            )
        if seen is not None and size == seen.size:
            if root != seen.root:
                raise Inconsistent(
                    [
                        f"history rewritten: at size {size} the site's checkpoint has root {_b64(root)}, but this "
                        f"monitor saw root {_b64(seen.root)}"
                    ]
                )
            return Outcome(origin, 0, 0, size, path, False)  # nothing new: the state stays as it is

        def progress(n: int) -> None:
            _say(err, f"read {n:,} of {size:,} entries")

        with tempfile.SpooledTemporaryFile(_SPOOL_IN_MEMORY, mode="w+", encoding="utf-8", newline="\n") as spool:
            shown, ring, hand_over_roots, absent = _follow(fetch, size, root, seen, filters, as_json, spool, progress)
            ring.start(log_key)  # a ledger without rotations: the pinned key is its only one
            # Every key of the log, not only the one pinned: a key it rotated away from (or to) is
            # still the key of whichever log another state pins it for.
            _refuse_another_log(origin, [span.key for span in ring.spans], known)
            if successor is not None:
                _check_handed_over(fetch, ring, log_key, successor, hand_over_roots)
                _say(err, f"the log rotated its key: followed {log_key.fingerprint} to {successor.fingerprint}")
                log_key = successor
            _check_signers(note, ring, size)
            spool.seek(0)
            shutil.copyfileobj(spool, out)
        out.flush()
        for line in absent:
            _say(err, f"warning: {line}")
        # Printed first, remembered second: a kill in between prints these entries again next time,
        # never loses them.
        write_state(path, Remembered(origin, log_key, size, root, note))
    return Outcome(origin, size - (seen.size if seen else 0), shown, size, path, seen is None)


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
) -> int:
    """monitor() as a command: its messages and summary on `err`, and its exit status."""
    err = err or sys.stderr
    try:
        result = monitor(
            site,
            key=key,
            state_dir=state_dir,
            filters=Filters.of(types, gates, subjects),
            as_json=as_json,
            out=out,
            err=err,
        )
    except Inconsistent as e:
        for line in e.lines:
            _say(err, f"INCONSISTENT: {line}")
        _say(err, "the state was not moved")
        return e.exit_code
    except Unreadable as e:
        _say(err, str(e))
        return e.exit_code
    except BrokenPipeError:
        return 2  # the reader left before every entry was printed: the state was not moved
    if result.first_contact:
        _say(err, f"pinned the key of {result.origin} in {result.state}")
    err.write(f"checked {result.new} new entries ({result.shown} shown); now at size {result.size}\n")
    return 0
