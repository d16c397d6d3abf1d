"""What the build's gathering found in each run spec and certificate, remembered in
`<private>/cache/gather.json`: so that a build after one event reads, parses and checks again only
the runs and certificates the event touched, not the whole history.

The gathering (generator.build.gather) checks each run spec against its leaf and the rules a
registered run obeys, and each certificate against its leaf, its spec, the documents it makes
due and its recomputation. Each check is a function of leaves and of files whose SHA-256 the
build already knows:

- a run's: its spec's bytes, its leaf and the leaf that decided it, the run before it of its
  subject and gate and the items of every earlier one (one chained SHA-256), its gate, its
  pinned methodology, its draw, and when each of its items was revealed;
- a certificate's: its bytes and leaf, its run's spec, leaf and draw, its gate and methodology,
  when each item it looks at (its spec's, its results', its evidence's) was revealed, and the
  files under its folder of the data directory it read (details documents, grader record,
  evidence), each by the SHA-256 the certificate holds for it.

The gathering hashes those facts into a key (generator.build.gather says which, with the code's
version) and keeps, under it, what the check derived: a run's spec as its bytes (which must
still hash to its leaf's SHA-256, so that a damaged memo costs a read, never a wrong spec), a
certificate's facts for the lists and pages, with the data files it read. An entry is used only
when each of those files is, by this build's reading of its inputs (build_cache.read_inputs:
hashed, or known by identity from the hash index), still the file with that SHA-256.

The memo is bound to the ledger it was made from by its tree size and root: the ledger read now
must have that root at that size (it is append-only; one rewritten empties the memo), so the
leaves before a remembered check are the ones it read. Only checks that passed are kept: a
problem is found, and reported, every build. Like every cache it is a shortcut: a missing,
damaged or foreign file is ignored, `build --full` reads none, and the build's own check and
the shipped verifier trust none of it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from generator.core.digest import digest_of, rules_version
from generator.core.proofs import MerkleTree
from generator.state.cache_file import Staged, stage_cache

GATHER_NAME = "gather.json"
_VERSION = 1


class GatherMemo:
    """The remembered checks of the last build (`old`, when bound to this ledger) and those of
    this one (`new`: found again or made now; those no longer asked for are forgotten)."""

    def __init__(self, private: Path | None, tree: MerkleTree, read: bool = True) -> None:
        self.path = private / "cache" / GATHER_NAME if private is not None else None
        self.size = tree.size
        self.root = tree.root().hex() if tree.size else ""
        self.old_runs: dict[str, list[Any]] = {}
        self.old_certificates: dict[str, list[Any]] = {}
        self.runs: dict[str, list[Any]] = {}
        self.certificates: dict[str, list[Any]] = {}
        self.used = 0  # entries taken, for tests and progress
        self._data: bytes | None = None  # what to stage, once the gathering is done
        if self.path is not None and read:
            self.old_runs, self.old_certificates = _load(self.path, tree)

    @staticmethod
    def key(*inputs: Any) -> str:
        return digest_of(inputs)

    def run(self, run_id: str, key: str, sha256: str) -> bytes | None:
        """The spec of run `run_id` whose rules passed under `key`, if remembered; its bytes hash
        to `sha256` (the leaf's), or it is not given."""
        found = self.old_runs.get(run_id)
        if found is None or found[0] != key:
            return None
        data = _utf8(found[1])
        if data is None or hashlib.sha256(data).hexdigest() != sha256:
            return None
        self.used += 1
        self.runs[run_id] = found
        return data

    def spec_text(self, run_id: str, sha256: str) -> bytes | None:
        """A remembered spec's bytes, whatever its key, if they hash to `sha256`: the bytes the
        ledger committed to, read from here rather than from the data directory (whose file
        the build's reading of its inputs vouched for)."""
        found = self.old_runs.get(run_id)
        data = _utf8(found[1]) if found is not None else None
        return data if data is not None and hashlib.sha256(data).hexdigest() == sha256 else None

    def put_run(self, run_id: str, key: str, data: bytes) -> None:
        self.runs[run_id] = [key, data.decode("utf-8")]

    def certificate(self, serial: str, key_of: Any) -> dict[str, Any] | None:
        """The facts remembered of certificate `serial`, if `key_of(extra)` (the key, given the
        items beyond its spec's the remembered check looked at) is the key they were kept under."""
        found = self.old_certificates.get(serial)
        # The facts are what the check found, not what the key is made of: the SHA-256 of the key
        # and the text, kept beside them, says they are the text written (a damaged byte costs a
        # check).
        if found is None or not isinstance(found[1], str) or found[2] != _check(found[0], found[1]):
            return None
        try:
            facts = json.loads(found[1])
        except (ValueError, RecursionError):
            return None
        extra = facts.get("extra") if isinstance(facts, dict) else None
        if not (isinstance(extra, list) and all(isinstance(i, str) for i in extra)):
            return None
        if key_of(extra) != found[0]:
            return None
        return facts  # type: ignore[no-any-return]

    def took_certificate(self, serial: str) -> None:
        """The certificate's remembered facts were taken (their files found unchanged): kept."""
        self.used += 1
        self.certificates[serial] = self.old_certificates[serial]

    def put_certificate(self, serial: str, key: str, facts: dict[str, Any]) -> None:
        # Kept as text, parsed when asked for: twenty thousand certificates' facts as objects
        # took a hundred megabytes, as text a fifth of that.
        text = json.dumps(facts, separators=(",", ":"), ensure_ascii=False)
        self.certificates[serial] = [key, text, _check(key, text)]

    def done(self) -> None:
        """The gathering is over: this build's checks are written out as the bytes to stage, if
        they differ from the last build's, and every entry is let go (a million-item program's
        are some hundred megabytes as objects, which the writing of its release need not hold)."""
        if self.runs != self.old_runs or self.certificates != self.old_certificates:
            doc = {
                "v": _VERSION,
                "rules": rules_version(),
                "size": self.size,
                "root": self.root,
                "runs": dict(sorted(self.runs.items())),
                "certificates": dict(sorted(self.certificates.items())),
            }
            # ASCII, every other character escaped: a text read back from a damaged memo may hold a
            # lone surrogate, which UTF-8 cannot encode.
            self._data = json.dumps(doc, separators=(",", ":")).encode("ascii")
        self.old_runs, self.old_certificates, self.runs, self.certificates = {}, {}, {}, {}

    def stage(self) -> Staged | None:
        """This build's checks, bound to its ledger, written beside the memo's place until the
        caller commits it; None when there is nothing new or it could not be written."""
        if self.path is None or self._data is None:
            return None
        return stage_cache(self.path, self._data)


def _load(path: Path, tree: MerkleTree) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}, {}
    if not isinstance(doc, dict) or doc.get("v") != _VERSION or doc.get("rules") != rules_version():
        return {}, {}
    size, root = doc.get("size"), doc.get("root")
    if not (isinstance(size, int) and 0 < size <= tree.size and isinstance(root, str)):
        return {}, {}
    if tree.root(size).hex() != root:
        return {}, {}  # another ledger, or this one rewritten: no remembered check holds
    return _rows(doc.get("runs"), 2), _rows(doc.get("certificates"), 3)


def _rows(found: Any, length: int) -> dict[str, list[Any]]:
    if not isinstance(found, dict):
        return {}
    return {
        k: v
        for k, v in found.items()
        if isinstance(k, str) and isinstance(v, list) and len(v) == length and isinstance(v[0], str)
    }


def _utf8(text: Any) -> bytes | None:
    """A remembered text's bytes; None for anything else (a lone surrogate JSON let through)."""
    if not isinstance(text, str):
        return None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None


def _check(key: str, text: str) -> str:
    return hashlib.sha256(f"{key}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()
