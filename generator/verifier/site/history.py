"""History (FORMAT.md v2, format v1 §9): archived checkpoints, consistency proofs, each artifact's
inclusion proof, and the checkpoints an auditor saved.

A key holder can re-sign a whole new history, so nothing here is taken from the site's word:
every archived root and every saved checkpoint's root is compared with the root this verifier
recomputed from the entries at that size, and every published proof is checked as a light
client would check it. What catches a rewrite is a checkpoint the operator no longer controls:
one an auditor saved (`--since`), or the state file of an earlier run.
"""

import base64
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from generator.verifier.core.canonical import parse_canonical
from generator.verifier.core.errors import FormatError, NoteError, ProofError
from generator.verifier.core.folder import Site
from generator.verifier.core.formats import check_keys, is_hex64, is_int, is_safe_path, same, sha256_hex
from generator.verifier.core.note import open_note, parse_checkpoint
from generator.verifier.core.public_keys import VerifierKey, key_id
from generator.verifier.core.text import show
from generator.verifier.rules.ledger import Ledger
from generator.verifier.tlog.cosignature import CosignerKey
from generator.verifier.tlog.keyring import KeyRing
from generator.verifier.tlog.merkle import leaf_hash, verify_consistency, verify_inclusion
from generator.verifier.tlog.rotation import checkpoint_signers, signer_problems
from generator.verifier.tlog.tiles import read_tiled_log
from generator.verifier.tlog.tlogproof import parse_tlog_proof

HISTORY_PATH = "ledger/history.json"
# The C2SP tlog-tiles of the log sit beside its checkpoint, under the same prefix: a tile's
# path (tile/…) is read under TILE_PREFIX.
TILE_PREFIX = "ledger"
TILE_FOLDER = f"{TILE_PREFIX}/tile"


@dataclass(frozen=True)
class SavedCheckpoint:
    """A checkpoint from outside the site: an auditor's file, or the state of an earlier run."""

    label: str
    origin: str
    size: int
    root: bytes
    data: bytes = b""


def open_checkpoint(data: bytes, origin: str, key: bytes) -> tuple[str, int, bytes]:
    """The (origin, size, root) of a checkpoint note signed by `key` under `origin`."""
    note = open_note(data, [VerifierKey(origin, key_id(origin, key), key)])
    return parse_checkpoint(note.text)


def saved_checkpoint(label: str, data: bytes, origin: str) -> SavedCheckpoint:
    """An auditor's saved checkpoint, read but not yet verified: its signature is checked once
    the ledger's keys are known (verify_saved)."""
    text = data.decode("utf-8", "replace")
    cp_origin, size, root = parse_checkpoint(text[: text.find("\n\n") + 1])
    if cp_origin != origin:
        raise FormatError(f"its origin {cp_origin!r} is not the site's {origin!r}")
    return SavedCheckpoint(label, cp_origin, size, root, data)


def verify_saved(s: Site, cp: SavedCheckpoint, ring: KeyRing) -> bool:
    """A saved checkpoint must be signed by a key of this site valid for its size: a site
    re-keyed behind the auditor's back fails here."""
    try:
        _, signers = checkpoint_signers(cp.data, ring)
        problems = [p for p in signer_problems(ring, cp.size, signers) if not p.startswith("not signed by")]
        if not signers:
            problems.append("no key of the site signed it")
    except (NoteError, FormatError) as e:
        problems = [str(e)]
    return s.report.check(
        not problems,
        cp.label,
        f"this saved checkpoint is not one of the site's: {'; '.join(problems)}",
        f"a checkpoint of {cp.origin} signed by a key of the site valid for {cp.size} entries",
        "a checkpoint that is not: the site was re-keyed, or the file is not a checkpoint of this log",
    )


def signed_tree(checkpoint: bytes, origin: str, key: bytes) -> tuple[int, bytes] | None:
    """The (size, root) a checkpoint signs, or None if it does not verify (reported elsewhere)."""
    try:
        cp_origin, size, root = open_checkpoint(checkpoint, origin, key)
    except (NoteError, FormatError):
        return None
    return (size, root) if cp_origin == origin else None


def b64(h: bytes) -> str:
    return base64.b64encode(h).decode()


def check_extends(s: Site, saved: Iterable[SavedCheckpoint], size: int, roots_at: dict[int, bytes]) -> None:
    """Today's ledger must begin with the tree each saved checkpoint names."""
    for cp in saved:
        if cp.size > size:
            s.report.check(
                False,
                cp.label,
                f"the site's ledger has {size} entries, fewer than the {cp.size} of this checkpoint: history was "
                "rolled back or forked",
                f"a ledger of at least {cp.size} entries, root at {cp.size} {b64(cp.root)}",
                f"{size} entries",
            )
            continue
        today = roots_at.get(cp.size)
        s.report.check(
            today == cp.root,
            cp.label,
            f"today's ledger does not extend this checkpoint: its first {cp.size} entries have another root "
            "(history was rewritten)",
            f"root {b64(cp.root)} at size {cp.size}",
            f"root {b64(today) if today else '(none)'} at size {cp.size}, today's size {size}",
        )


def tile_reader(s: Site) -> Callable[[str], bytes | None]:
    """What TiledLog reads through: `tile/…` under the ledger prefix, every path checked by the
    site's own rules (inside the site, no links); None for a tile that is not there."""

    def read(rel: str) -> bytes | None:
        path = f"{TILE_PREFIX}/{rel}"
        if not (s.root / path).is_file():
            return None
        return s.read(path, "tile")

    return read


def check_tiles(s: Site, size: int, root: bytes) -> None:
    """The tiles hold the same log as the entries: every tile checked, the same root."""
    try:
        tiled = read_tiled_log(tile_reader(s), size)
        for _ in tiled:
            pass
        s.report.check(
            tiled.root() == root,
            TILE_FOLDER,
            "the tiles' root differs from the entries'",
            base64.b64encode(root).decode(),
            base64.b64encode(tiled.root()).decode(),
        )
    except (FormatError, ProofError) as e:
        s.report.check(False, TILE_FOLDER, f"the tiles do not hold the ledger: {e}")


def read_history(s: Site, version: int = 1) -> dict[str, Any] | None:
    """ledger/history.json if the site has one (a v1 site does not), shape-checked: its `v` is
    `version` (1 on a v2 site, 2 on a v3 site, docs/formats/v3.md, 1)."""
    if not (s.root / HISTORY_PATH).is_file():
        return None
    loaded = s.document(HISTORY_PATH, "checkpoint history")
    if loaded is None:
        return None
    doc = loaded[1]
    report = s.report
    problems = check_keys(doc, ("checkpoints", "origin", "tree_size", "type", "v"))
    report.add(problems, HISTORY_PATH)
    rows = doc.get("checkpoints") if isinstance(doc, dict) else None
    ok = (
        not problems
        and doc.get("type") == "checkpoint-history"
        and is_int(doc.get("v"))
        and doc.get("v") == version
        and is_int(doc.get("tree_size"))
        and isinstance(rows, list)
        and bool(rows)
    )
    if not report.check(
        ok, HISTORY_PATH, "not a checkpoint history", f'"checkpoint-history", v {version}, rows', show(doc, 200)
    ):
        return None
    assert isinstance(rows, list)
    last = -1
    for i, row in enumerate(rows):
        where = f"checkpoints[{i}]"
        bad = check_keys(row, ("checkpoint", "consistency", "root", "tree_size"), where=where)
        if bad or not is_int(row["tree_size"]) or not is_hex64(row["root"]) or row["tree_size"] <= last:
            report.check(False, HISTORY_PATH, "malformed or out-of-order row", "sizes increasing", show(row), where)
            return None
        last = row["tree_size"]
    return {**doc, "data": loaded[0]}


def history_sizes(history: dict[str, Any] | None) -> set[int]:
    return {r["tree_size"] for r in history["checkpoints"]} if history else set()


def check_history(
    s: Site,
    history: dict[str, Any],
    origin: str,
    key: bytes,
    size: int,
    roots_at: dict[int, bytes],
    checkpoint: bytes | None,
    ring: KeyRing | None = None,
) -> dict[int, tuple[str, bytes]]:
    """Every archived checkpoint: signed, its root recomputed, and proved consistent with today's.
    Today's row is the published checkpoint byte for byte (which is checked on its own; None
    when it failed, and today's row is then not compared with it). An archived checkpoint is
    signed by the keys the ledger made valid for its size (`ring`). Returns the archived
    checkpoints read, by size (path, bytes), for the hand-over checks."""
    archived: dict[int, tuple[str, bytes]] = {}
    report = s.report
    s.signed(HISTORY_PATH, history["data"], key, "checkpoint history")
    report.check(history["origin"] == origin, HISTORY_PATH, "origin differs from the manifest's", origin)
    report.check(same(history["tree_size"], size), HISTORY_PATH, "tree_size differs from the ledger's", size)
    rows = history["checkpoints"]
    today = roots_at.get(size)
    report.check(rows[-1]["tree_size"] == size, HISTORY_PATH, "the last row is not today's checkpoint", size)
    for row in rows:
        m, rel = row["tree_size"], row["checkpoint"]
        want = roots_at.get(m)
        if m > size or want is None:
            report.check(False, HISTORY_PATH, f"archives a checkpoint of size {m} beyond the ledger's {size}")
            continue
        if m == size:
            if checkpoint is not None:
                report.check(
                    row["root"] == want.hex(), HISTORY_PATH, "today's root is not the checkpoint's", want.hex()
                )
                data = s.read(rel, "today's archived checkpoint")
                report.check(data == checkpoint, rel, "today's archived checkpoint is not the published checkpoint")
                if data is not None:
                    archived[m] = (rel, data)
            report.check(row["consistency"] is None, HISTORY_PATH, "today's row needs no consistency proof")
            continue
        data = s.read(rel, f"archived checkpoint of size {m}")
        if data is None:
            continue
        archived[m] = (rel, data)
        try:
            if ring is not None and ring.spans:
                (_, cp_size, cp_root), signers = checkpoint_signers(data, ring)
                for problem in signer_problems(ring, m, signers):
                    report.check(False, rel, problem)
            else:
                _, cp_size, cp_root = open_checkpoint(data, origin, key)
        except (NoteError, FormatError) as e:
            report.check(False, rel, f"archived checkpoint does not verify: {e}")
            continue
        # The one finding that matters is reported once, here: what restates this checkpoint (its
        # row, its consistency proof) cannot agree with a ledger that no longer holds its tree.
        if not report.check(
            (cp_size, cp_root) == (m, want),
            rel,
            f"history rewritten: the ledger's first {m} entries no longer have the root this archived checkpoint signs",
            f"size {m}, root {b64(want)} (recomputed from today's entries)",
            f"size {cp_size}, root {b64(cp_root)}",
        ):
            continue
        report.check(row["root"] == want.hex(), HISTORY_PATH, f"root of size {m} is not the ledger's", want.hex())
        if not is_safe_path(row["consistency"]):
            report.check(False, HISTORY_PATH, f"the consistency proof of size {m} has no safe path")
        elif today is not None:
            check_consistency_document(s, row["consistency"], m, size, want, today)
    return archived


def check_consistency_document(s: Site, rel: Any, old: int, new: int, old_root: bytes, new_root: bytes) -> None:
    loaded = s.document(rel, f"consistency proof from {old}")
    if loaded is None:
        return
    doc = loaded[1]
    want = {"type": "consistency-proof", "v": 1, "old_size": old, "new_size": new}
    bad = check_keys(doc, ("hashes", "new_root", "new_size", "old_root", "old_size", "type", "v"))
    if bad or any(not same(doc.get(k), v) for k, v in want.items()):
        s.report.check(False, str(rel), "not the consistency proof it should be", show(want), show(doc, 200))
        return
    s.report.check(
        (doc["old_root"], doc["new_root"]) == (old_root.hex(), new_root.hex()),
        str(rel),
        "roots differ from the ledger's",
        f"{old_root.hex()} → {new_root.hex()}",
        f"{show(doc['old_root'])} → {show(doc['new_root'])}",
    )
    hashes = doc["hashes"]
    try:
        if not isinstance(hashes, list) or not all(is_hex64(h) for h in hashes):
            raise ProofError("hashes must be a list of 64 lowercase hex digits each")
        verify_consistency(old, new, [bytes.fromhex(h) for h in hashes], old_root, new_root)
        s.report.checks += 1
    except ProofError as e:
        s.report.check(False, str(rel), f"consistency proof {old} → {new} fails: {e}")


def leaf_binds(leaf: Any, data: bytes) -> bool:
    """Whether a ledger leaf commits to these file bytes: a commit by its commitment, a run,
    methodology or certificate by its sha256."""
    if not isinstance(leaf, dict):
        return False
    field = "commitment" if leaf.get("type") == "commit" else "sha256"
    return leaf.get(field) == sha256_hex(data) and leaf.get("type") in ("commit", "run", "methodology", "certificate")


def check_artifact_proofs(
    s: Site, manifest: dict[str, Any], ledger: Ledger, checkpoint: bytes, size: int, root: bytes
) -> None:
    """Each reveal's and certificate's .tlog-proof proves its leaf against today's checkpoint."""
    wanted = proven_artifacts(manifest, ledger)
    for rel, index in wanted:
        # The artifact itself is checked against its leaf elsewhere; here, the proof's leaf is
        # proved to be the ledger's at the artifact's index.
        proof_data = s.read(rel + ".tlog-proof", "inclusion proof")
        if proof_data is None:
            continue
        problem = artifact_proof_problem(None, proof_data, index, size, root)
        s.report.check(problem is None, rel + ".tlog-proof", problem or "")
        s.report.check(
            proof_data.endswith(checkpoint) and proof_data.partition(b"\n\n")[2] == checkpoint,
            rel + ".tlog-proof",
            "the proof is not made against today's checkpoint",
        )


def proven_artifacts(manifest: dict[str, Any], ledger: Ledger) -> list[tuple[str, int]]:
    """Each reveal and certificate the manifest lists with its leaf's index: a reveal's commit
    leaf, a certificate's own."""
    wanted: list[tuple[str, int]] = []
    for row in manifest["reveals"]:
        item = row.get("id") if isinstance(row, dict) else None
        c = ledger.commit(item) if isinstance(item, str) else None
        if c is not None and isinstance(row.get("path"), str):
            wanted.append((row["path"], c.index))
    for row in manifest["certificates"]:
        serial = row.get("serial") if isinstance(row, dict) else None
        cert = ledger.certificates.get(serial) if isinstance(serial, str) else None
        if cert is not None and isinstance(row.get("path"), str):
            wanted.append((row["path"], cert.index))
    return wanted


def artifact_proof_problem(
    data: bytes | None, proof_data: bytes, index: int | None, size: int, root: bytes
) -> str | None:
    """What is wrong with a tlog-proof of `data` (None: of whatever leaf sits at `index`)
    against a tree of `size` and `root`, or None."""
    try:
        proof = parse_tlog_proof(proof_data)
        if proof.extra is None:
            return "no extra line: the proven leaf is missing"
        leaf = parse_canonical(proof.extra)
        if data is not None and not leaf_binds(leaf, data):
            return "the leaf in its extra line does not commit to this file's SHA-256"
        if index is not None and proof.index != index:
            return f"proves leaf {proof.index}, but the ledger puts this file's leaf at {index}"
        verify_inclusion(proof.index, size, leaf_hash(proof.extra), list(proof.hashes), root)
    except (FormatError, ProofError) as e:
        return f"inclusion proof fails: {e}"
    return None


@dataclass(frozen=True)
class ArtifactCheck:
    """What `verify.py proof` found for one file."""

    problems: list[str]
    origin: str = ""
    size: int = 0
    index: int = 0
    leaf: Any = None
    signer: VerifierKey | None = None  # the log key whose signature opened the checkpoint
    ml_dsa_signers: list[CosignerKey] = field(default_factory=list)  # the policy's, that verified


def verify_artifact(data: bytes, proof_data: bytes, logs: Sequence[VerifierKey]) -> ArtifactCheck:
    """One artifact alone, offline: its proof's checkpoint signed by one of `logs` (a policy names
    the retired and the active key during a rotation: any of them will do, as in the site's
    check), its leaf committing to the file, and the leaf included in the checkpoint's tree."""
    names = " or ".join(sorted({k.name for k in logs}))
    try:
        proof = parse_tlog_proof(proof_data)
        note = open_note(proof.checkpoint, logs)
        origin, size, root = parse_checkpoint(note.text)
    except (FormatError, NoteError) as e:
        return ArtifactCheck([f"the proof's checkpoint does not verify with {names}'s key: {e}"])
    by_id = {(k.name, k.key_id): k for k in logs}
    signers = [by_id[(sig.name, sig.key_id)] for sig in note.verified]
    signer = next((k for k in signers if k.name == origin), signers[0])
    if origin != signer.name:
        return ArtifactCheck([f"the checkpoint's origin {origin!r} is not the key's name {signer.name!r}"])
    problem = artifact_proof_problem(data, proof_data, None, size, root)
    leaf = parse_canonical(proof.extra) if problem is None and proof.extra is not None else None
    return ArtifactCheck([problem] if problem else [], origin, size, proof.index, leaf, signer)
