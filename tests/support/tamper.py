"""A site altered as an attacker holding the signing key could alter it, and the verifier run on it: the tamper
matrix of tests/adversarial/test_verify_tamper.py, which tests/integration/verifier/test_incremental_verify.py
replays too, and the re-signing helpers other tests use to hide a change.

Every mutation is applied to a fresh copy of the demo site and then made as consistent as an
attacker holding the signing key could make it (SHA256SUMS recomputed and re-signed, detached
signatures and the checkpoint remade), so that each one is caught by exactly the check it
targets.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rfc8785

import generator.verifier as v
from generator.core.cosigning_keys import parse_cosigner
from generator.core.proofs import MerkleTree
from generator.core.signing_key import Signer, load_key
from tests.support.demo import REPO

VERIFY_SRC = REPO / "generator" / "verify.py"

SUMS = "SHA256SUMS"
SUMS_SIG = "SHA256SUMS.sig"
ENTRIES = "ledger/entries.json"
CHECKPOINT = "ledger/checkpoint"
CLIST = "ledger/commitments.json"
REVOCATIONS = "ledger/revocations.json"  # format v2's list of revoked certificates
MANIFEST = "transparency.json"
KEYS = "keys.json"
METHODOLOGY_PARAMS = "methodology/2026.1.json"
REVEAL = "reveals/a-001.json"  # a public-gate item of the demo
DEMO_CERTIFICATE_SIGS = tuple(
    f"certificates/{s}.json.sig"
    for s in (
        "ledgerlens-a-1",
        "quill-a-1",
        "ledgerlens-b-1",
        "orca-b-1",
        "quill-a-2",
        "quill-a-3",
        "orca-a-1",
        "heron-a-1",
        "kestrel-b-1",
    )
)
SEALED_ITEM = "b-0028"  # a secret-gate item of the demo that was never retired nor used by a run


# ---------------------------------------------------------------------------------------------
# Running the verifier


@dataclass
class Run:
    rc: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err

    def fail_lines(self) -> list[str]:
        return [line for line in self.out.splitlines() if line.startswith("FAIL ")]

    def names_file(self, rel: str) -> bool:
        """A FAIL line is about `rel` (its head is the path, as Problem.describe prints it)."""
        return any(line.startswith((f"FAIL {rel}: ", f"FAIL {rel} [")) for line in self.fail_lines())


INTERNAL = "internal error of the verifier"


def run_verifier(script: Path, *args: str, cwd: Path | None = None, isolated: bool = False) -> Run:
    cmd = [sys.executable, *(["-I"] if isolated else []), str(script), *args]
    env = {k: val for k, val in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60, env=env, check=False)
    assert INTERNAL not in p.stdout + p.stderr, f"a bug in the verifier, not a verdict:\n{p.stdout[-3000:]}"
    return Run(p.returncode, p.stdout, p.stderr)


def verify_cli(site: Path, *args: str) -> Run:
    """`python SITE/verify.py SITE ARGS`: the site's own copy of the verifier."""
    return run_verifier(site / "verify.py", str(site), *args, cwd=site.parent)


# ---------------------------------------------------------------------------------------------
# Re-signing helpers (what an attacker with the key would do to hide a change)


def read_json(site: Path, rel: str) -> Any:
    return json.loads((site / rel).read_bytes())


def write_canonical(site: Path, rel: str, doc: Any) -> bytes:
    data = rfc8785.dumps(doc)
    (site / rel).write_bytes(data)
    return data


def sums_bytes(site: Path) -> bytes:
    """SHA256SUMS as the generator writes it: every file but the list and its signature,
    sorted by the UTF-8 bytes of the path, `<sha256hex>  <path>\\n` each."""
    rels = sorted(
        (p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()),
        key=lambda r: r.encode("utf-8"),
    )
    lines = [f"{hashlib.sha256((site / r).read_bytes()).hexdigest()}  {r}\n" for r in rels if r not in (SUMS, SUMS_SIG)]
    return "".join(lines).encode("utf-8")


def other_signer(name: str) -> Signer:
    """Another Ed25519 key under the same name, fixed so that runs are reproducible."""
    return Signer(name, hashlib.sha256(b"tests: another signing key").digest())


def resign(site: Path, rel: str, signer: Signer) -> None:
    """Remake the detached signature `rel.sig` over the file's current bytes."""
    (site / f"{rel}.sig").write_bytes(signer.sign((site / rel).read_bytes()))


def resign_sums(site: Path, signer: Signer, keep_parts: bool = False, rule: v.TreeRule | None = None) -> None:
    # The archive restates every file, so each tamper would fail it too: a key holder rewriting
    # the site drops it (it is optional); tests/integration/builds/test_download.py tampers with it.
    # `keep_parts` keeps a v3 site's download parts and lists them as they are: for a tamper of
    # a part itself, whose leaf's files are unchanged.
    if not keep_parts:
        shutil.rmtree(site / "download", ignore_errors=True)
    manifest = site / v.MANIFEST_PATH
    if manifest.is_file() and json.loads(manifest.read_bytes()).get("v") in (v.MANIFEST_V3, v.MANIFEST_V4):
        _relist_v3(site, keep_parts, rule)
    else:
        (site / SUMS).write_bytes(sums_bytes(site))
    resign(site, SUMS, signer)


def _relist_v3(site: Path, parts: bool = False, rule: v.TreeRule | None = None) -> None:
    """A v3 site's tree of lists made again from its files, as a key holder would after editing
    them (without the download parts, dropped above, unless `parts`): every leaf's list, then the
    inner lists deepest first, SHA256SUMS last; split by the site's format's rule, or `rule`."""
    shutil.rmtree(site / "sums", ignore_errors=True)
    everything = [p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()]
    files = [r for r in everything if r not in (SUMS, SUMS_SIG) and not (parts and r.startswith("download/"))]
    digests = {r: hashlib.sha256((site / r).read_bytes()).hexdigest() for r in everything if r not in (SUMS, SUMS_SIG)}
    version = json.loads((site / v.MANIFEST_PATH).read_bytes()).get("v")
    tree = (rule or v.tree_rule(version if isinstance(version, int) else 3)).build(files)
    (site / "sums").mkdir()
    for prefix in tree.leaves:
        data = v.leaf_list(tree, prefix, digests)
        (site / v.list_path(prefix)).write_bytes(data)
        digests[v.list_path(prefix)] = hashlib.sha256(data).hexdigest()
    for prefix in tree.lists_bottom_up():
        data = v.inner_list(tree, prefix, digests, parts=parts)
        target = site / (v.list_path(prefix) if prefix else SUMS)
        target.write_bytes(data)
        if prefix:
            digests[v.list_path(prefix)] = hashlib.sha256(data).hexdigest()


def entries_doc(site: Path) -> dict[str, Any]:
    return read_json(site, ENTRIES)


def _ml_dsa_line(leaves: Sequence[Any], text: str) -> bytes:
    """The log's ML-DSA-44 line on `text`, as the demo's key holder (who holds both keys, both
    published) makes it, when the leaves add that key; else nothing."""
    key_file = REPO / "data" / "private" / "ml-dsa-44.key"
    if not key_file.is_file():
        return b""
    key = parse_cosigner(key_file.read_text().strip())  # a clone's file modes aside: it is published
    added = any(isinstance(leaf, dict) and leaf.get("vkey") == key.key.vkey for leaf in leaves)
    return key.cosign(text, 0).encode() if added else b""


def write_checkpoint(site: Path, signer: Signer, origin: str, leaves: Sequence[Any]) -> None:
    """A new checkpoint over `leaves`, and, as a key holder rewriting history would, the format-v2
    files that restate it remade from scratch: tiles, a one-row history, every inclusion proof."""
    raw = [rfc8785.dumps(leaf) for leaf in leaves]
    tree = MerkleTree(v.leaf_hash(r) for r in raw)
    text = v.checkpoint_text(origin, len(leaves), tree.root())
    note = signer.sign_note(text) + _ml_dsa_line(leaves, text)
    (site / CHECKPOINT).write_bytes(note)
    if not (site / v.HISTORY_PATH).exists():
        return
    # Archived checkpoints the new leaves still extend are kept as they are (a key holder
    # rewriting only the end keeps the rest of the history); the others are dropped.
    n = len(leaves)
    try:
        old_rows = read_json(site, v.HISTORY_PATH)["checkpoints"]
        kept = [r for r in old_rows if r["tree_size"] < n and tree.root(r["tree_size"]).hex() == r["root"]]
    except (ValueError, LookupError, TypeError, AttributeError):
        kept = []  # a history the fuzzer garbled: the key holder writes a fresh one
    saved = {r["checkpoint"]: (site / r["checkpoint"]).read_bytes() for r in kept}
    for folder in ("ledger/tile", "ledger/checkpoints", "ledger/consistency"):
        shutil.rmtree(site / folder, ignore_errors=True)
    tiles = v.TileBuilder()
    made = [tile for r in raw for tile in tiles.append(r)] + tiles.finish()
    for rel, data in made:
        (site / "ledger" / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / "ledger" / rel).write_bytes(data)
    (site / "ledger" / "checkpoints").mkdir(parents=True)
    rows = []
    for r in kept:
        (site / r["checkpoint"]).write_bytes(saved[r["checkpoint"]])
        m = r["tree_size"]
        proof = {
            "hashes": [h.hex() for h in tree.consistency_proof(m)],
            "new_root": tree.root().hex(),
            "new_size": n,
            "old_root": tree.root(m).hex(),
            "old_size": m,
            "type": "consistency-proof",
            "v": 1,
        }
        rel = f"ledger/consistency/{m}.json"
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        write_canonical(site, rel, proof)
        rows.append({**r, "consistency": rel})
    archived = f"ledger/checkpoints/{n}"
    (site / archived).write_bytes(note)
    rows.append({"checkpoint": archived, "consistency": None, "root": tree.root().hex(), "tree_size": n})
    history = {"checkpoints": rows, "origin": origin, "tree_size": n, "type": "checkpoint-history", "v": 1}
    write_canonical(site, v.HISTORY_PATH, history)
    resign(site, v.HISTORY_PATH, signer)
    for proof_file in sorted(site.rglob("*.tlog-proof")):
        index = v.parse_tlog_proof(proof_file.read_bytes()).index
        if index < len(raw):
            proof_file.write_bytes(v.format_tlog_proof(raw[index], index, tree.inclusion_proof(index), note))


def rewrite_ledger(
    site: Path, signer: Signer, leaves: list[Any], *, sign_entries: bool = True, checkpoint: bool = True
) -> None:
    """Write `leaves` as the entries document; by default also its signature, a checkpoint
    over them and every `tree_size` of the release (manifest, commitment and revocation lists), all signed.
    SHA256SUMS is not touched: call resign_sums afterwards."""
    doc = entries_doc(site)
    origin = doc["origin"]
    doc["entries"] = leaves
    doc["tree_size"] = len(leaves)
    write_canonical(site, ENTRIES, doc)
    if sign_entries:
        resign(site, ENTRIES, signer)
    if checkpoint:
        write_checkpoint(site, signer, origin, leaves)
    manifest = read_json(site, MANIFEST)
    if manifest["ledger"]["tree_size"] != len(leaves):
        manifest["ledger"]["tree_size"] = len(leaves)
        write_canonical(site, MANIFEST, manifest)
        for rel in (CLIST, REVOCATIONS) if (site / REVOCATIONS).is_file() else (CLIST,):
            listed = read_json(site, rel)
            listed["tree_size"] = len(leaves)
            write_canonical(site, rel, listed)
            resign(site, rel, signer)


def commitment_of(site: Path, item_id: str) -> tuple[str, int]:
    for i, leaf in enumerate(entries_doc(site)["entries"]):
        if leaf["type"] == "commit" and leaf["id"] == item_id:
            return leaf["commitment"], i
    raise AssertionError(f"demo ledger has no commit of {item_id}")


# ---------------------------------------------------------------------------------------------
# The tamper matrix


@dataclass(frozen=True)
class Site:
    root: Path
    signer: Signer


def t_reveal_byte_changed(s: Site) -> None:
    """One byte inside the prompt of a reveal file; SHA256SUMS re-signed: only the commitment
    check can catch it (the bytes stay canonical JSON of a well-formed reveal)."""
    data = (s.root / REVEAL).read_bytes()
    i = data.index(b'"prompt":"') + len(b'"prompt":"')
    assert data[i : i + 1] != b"Z", "fixture assumption: prompt does not start with Z"
    (s.root / REVEAL).write_bytes(data[:i] + b"Z" + data[i + 1 :])
    resign_sums(s.root, s.signer)


def t_reveal_resalted(s: Site) -> None:
    """The reveal document re-canonicalized with a fresh salt: same item, other hash."""
    doc = read_json(s.root, REVEAL)
    doc["salt"] = hashlib.sha256(b"another salt").hexdigest()
    assert doc["salt"] != read_json(s.root, REVEAL)["salt"]
    write_canonical(s.root, REVEAL, doc)
    resign_sums(s.root, s.signer)


def _changed_note_leaves(s: Site) -> list[dict[str, Any]]:
    leaves = entries_doc(s.root)["entries"]
    # The first reveal: before every archived checkpoint, so that each of them is caught too.
    last = next(leaf for leaf in leaves if leaf["type"] == "reveal")
    last["note"] = last["note"] + " (edited)"
    return leaves


def t_leaf_changed_unsigned(s: Site) -> None:
    """A ledger leaf edited in place; nothing re-signed."""
    leaves = _changed_note_leaves(s)
    rewrite_ledger(s.root, s.signer, leaves, sign_entries=False, checkpoint=False)


def t_leaf_changed_resigned(s: Site) -> None:
    """A ledger leaf edited, entries.json.sig and SHA256SUMS re-signed: only the checkpoint's
    root (over the original leaves) can catch it."""
    leaves = _changed_note_leaves(s)
    rewrite_ledger(s.root, s.signer, leaves, sign_entries=True, checkpoint=False)
    resign_sums(s.root, s.signer)


def t_checkpoint_root_changed(s: Site) -> None:
    """The checkpoint's root line replaced by another valid root; the note is re-signed, so
    only the root comparison catches it."""
    text = (s.root / CHECKPOINT).read_text(encoding="utf-8")
    origin, size, _ = text.split("\n\n")[0].split("\n")
    other_root = hashlib.sha256(b"not the root").digest()
    (s.root / CHECKPOINT).write_bytes(s.signer.sign_note(v.checkpoint_text(origin, int(size), other_root)))
    resign_sums(s.root, s.signer)


def t_checkpoint_sig_corrupted(s: Site) -> None:
    """One base64 character of the checkpoint's signature line changed (still base64, same
    length); SHA256SUMS re-signed, so only the note signature check catches it."""
    data = (s.root / CHECKPOINT).read_text(encoding="utf-8")
    body, sig_lines = data.rsplit("\n\n", 1)
    first, *others = sig_lines.splitlines()  # the log's own line comes first; cosignatures follow
    prefix, b64 = first.rsplit(" ", 1)
    raw = bytearray(base64.b64decode(b64))
    raw[10] ^= 0x01  # inside the 64-byte signature (after the 4-byte key ID)
    lines = [f"{prefix} {base64.b64encode(bytes(raw)).decode()}", *others]
    new = f"{body}\n\n" + "".join(line + "\n" for line in lines)
    (s.root / CHECKPOINT).write_bytes(new.encode("utf-8"))
    resign_sums(s.root, s.signer)


def _edit_clist_row(s: Site, item_id: str, **changes: Any) -> None:
    doc = read_json(s.root, CLIST)
    rows = [r for r in doc["commitments"] if r["id"] == item_id]
    assert len(rows) == 1, f"fixture assumption: one commitment-list row for {item_id}"
    rows[0].update(changes)
    write_canonical(s.root, CLIST, doc)
    resign(s.root, CLIST, s.signer)
    resign_sums(s.root, s.signer)


def t_clist_status_flipped(s: Site) -> None:
    """A sealed item shown as revealed in the (re-signed) commitment list: only the
    cross-check with the ledger's reveals catches it."""
    row = next(r for r in read_json(s.root, CLIST)["commitments"] if r["id"] == SEALED_ITEM)
    assert row["status"] == "sealed", f"fixture assumption: {SEALED_ITEM} is sealed"
    _edit_clist_row(s, SEALED_ITEM, status="revealed")


def t_clist_commitment_changed(s: Site) -> None:
    """A commitment-list row's commitment differs from the ledger's commit leaf."""
    _edit_clist_row(s, SEALED_ITEM, commitment=hashlib.sha256(b"another item").hexdigest())


def t_detached_sig_of_other_bytes(s: Site) -> None:
    """commitments.json.sig replaced by a valid signature (same key) of other bytes."""
    (s.root / f"{CLIST}.sig").write_bytes(s.signer.sign(b"some other bytes"))
    resign_sums(s.root, s.signer)


def t_sums_hash_edited(s: Site) -> None:
    """One hash in SHA256SUMS changed; SHA256SUMS.sig left as it was."""
    text = (s.root / SUMS).read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.endswith("  index.html"))
    digest = line[:64]
    other = ("0" if digest[0] != "0" else "1") + digest[1:]
    (s.root / SUMS).write_text(text.replace(line, other + line[64:]), encoding="utf-8")


def t_sums_sig_truncated(s: Site) -> None:
    data = (s.root / SUMS_SIG).read_bytes()
    (s.root / SUMS_SIG).write_bytes(data[:32])


def t_extra_file(s: Site) -> None:
    (s.root / "extra.txt").write_text("not part of the release\n", encoding="utf-8")


def t_listed_file_deleted(s: Site) -> None:
    (s.root / "items" / "a-001.html").unlink()


def t_keys_public_key_swapped(s: Site) -> None:
    """keys.json's public_key replaced by another key's, and everything re-signed with that
    other key: the vkey still names the original key, so the signatures and the keys
    document itself disagree."""
    doc = read_json(s.root, KEYS)
    origin = doc["origin"]
    other = other_signer(origin)
    doc["keys"][0]["public_key"] = base64.b64encode(other.public_key).decode()
    write_canonical(s.root, KEYS, doc)
    resign_everything(s.root, other, origin)


def resign_everything(site: Path, signer: Signer, origin: str) -> None:
    for sig in sorted(site.rglob("*.sig")):
        rel = sig.relative_to(site).as_posix()[: -len(".sig")]
        if rel != SUMS:
            resign(site, rel, signer)
    write_checkpoint(site, signer, origin, entries_doc(site)["entries"])
    resign_sums(site, signer)


def t_manifest_indented(s: Site) -> None:
    """transparency.json re-serialized with indentation (same value, not canonical bytes)."""
    doc = read_json(s.root, MANIFEST)
    (s.root / MANIFEST).write_text(json.dumps(doc, ensure_ascii=False, sort_keys=True, indent=2), encoding="utf-8")
    resign_sums(s.root, s.signer)


def t_methodology_params_changed(s: Site) -> None:
    """A methodology parameter changed (still a valid, canonical parameter file)."""
    doc = read_json(s.root, METHODOLOGY_PARAMS)
    assert doc["item_threshold"] == "0.85", "fixture assumption: default item threshold"
    doc["item_threshold"] = "0.86"
    write_canonical(s.root, METHODOLOGY_PARAMS, doc)
    resign_sums(s.root, s.signer)


def t_unknown_event_appended(s: Site) -> None:
    """An unknown event type appended; entries, checkpoint, every tree_size and SHA256SUMS
    consistent and signed: only the replay rule (never skip an unknown event) catches it."""
    leaves = entries_doc(s.root)["entries"]
    leaves.append({"type": "audit", "v": 1, "note": "an event v1 does not define", "at": "2026-12-01T00:00:00Z"})
    rewrite_ledger(s.root, s.signer, leaves)
    resign_sums(s.root, s.signer)


@dataclass(frozen=True)
class Tamper:
    id: str
    mutate: Callable[[Site], None]
    target: str  # the file the targeted check reports
    message: str  # a piece of the targeted check's message
    files: frozenset[str]  # every file the failures are about, no more
    pin_original_key: bool = False  # also run with --key <the demo's vkey>, which must fail


# The demo's archived checkpoints before today's: a leaf changed before them is caught there too
# (history rewritten), besides the checkpoint.
ARCHIVED = tuple(
    r["checkpoint"] for r in json.loads((REPO / "public" / "ledger" / "history.json").read_bytes())["checkpoints"][:-1]
)


def _f(*files: str) -> frozenset[str]:
    return frozenset(files)


TAMPERS = [
    Tamper("reveal-byte-changed-resigned", t_reveal_byte_changed, REVEAL, "is not the commitment of a-001", _f(REVEAL)),
    Tamper("reveal-recanonicalized-new-salt", t_reveal_resalted, REVEAL, "is not the commitment of a-001", _f(REVEAL)),
    Tamper(
        "ledger-leaf-changed-unsigned",
        t_leaf_changed_unsigned,
        ENTRIES,
        f"SHA-256 differs from {SUMS}",
        _f(ENTRIES, f"{ENTRIES}.sig", CHECKPOINT, *ARCHIVED),
    ),
    Tamper(
        "ledger-leaf-changed-resigned",
        t_leaf_changed_resigned,
        CHECKPOINT,
        "checkpoint root differs",
        _f(CHECKPOINT, *ARCHIVED),
    ),
    Tamper("checkpoint-root-changed", t_checkpoint_root_changed, CHECKPOINT, "checkpoint root differs", _f(CHECKPOINT)),
    Tamper("checkpoint-signature-corrupted", t_checkpoint_sig_corrupted, CHECKPOINT, "does not verify", _f(CHECKPOINT)),
    Tamper(
        "commitment-list-status-flipped",
        t_clist_status_flipped,
        CLIST,
        f"item {SEALED_ITEM} is marked revealed but the ledger never revealed it",
        _f(CLIST),
    ),
    Tamper(
        "commitment-list-commitment-changed",
        t_clist_commitment_changed,
        CLIST,
        "row differs from the ledger's commit leaf",
        _f(CLIST),
    ),
    Tamper(
        "detached-sig-of-other-bytes",
        t_detached_sig_of_other_bytes,
        f"{CLIST}.sig",
        "does not verify",
        _f(f"{CLIST}.sig"),
    ),
    Tamper(
        "sha256sums-hash-edited",
        t_sums_hash_edited,
        SUMS_SIG,
        f"detached signature of {SUMS} does not verify",
        _f(SUMS_SIG, "index.html"),
    ),
    Tamper("sha256sums-sig-truncated", t_sums_sig_truncated, SUMS_SIG, "does not verify", _f(SUMS_SIG)),
    Tamper("extra-file-added", t_extra_file, "extra.txt", f"not listed in {SUMS}", _f("extra.txt")),
    Tamper(
        "listed-file-deleted",
        t_listed_file_deleted,
        "items/a-001.html",
        f"listed in {SUMS} but missing",
        _f("items/a-001.html"),
    ),
    Tamper(
        "keys-public-key-swapped-resigned",
        t_keys_public_key_swapped,
        KEYS,
        "public_key differs from the vkey's key",
        _f(
            KEYS,
            SUMS_SIG,
            f"{ENTRIES}.sig",
            f"{CLIST}.sig",
            f"{REVOCATIONS}.sig",
            CHECKPOINT,
            f"{v.HISTORY_PATH}.sig",
            *DEMO_CERTIFICATE_SIGS,
        ),
        pin_original_key=True,
    ),
    Tamper(
        "manifest-indented-resigned", t_manifest_indented, MANIFEST, "not in canonical (RFC 8785) form", _f(MANIFEST)
    ),
    Tamper(
        "methodology-parameter-changed",
        t_methodology_params_changed,
        METHODOLOGY_PARAMS,
        "SHA-256 differs from the ledger's methodology leaf",
        _f(METHODOLOGY_PARAMS),
    ),
    Tamper("unknown-event-appended-resigned", t_unknown_event_appended, ENTRIES, "unknown event type", _f(ENTRIES)),
]


def tampered(demo_copy: Any, mutate: Callable[[Site], None]) -> Site:
    site = Site(demo_copy.out, load_key(demo_copy.paths.key_file))
    mutate(site)
    return site
