"""The floor under a full verification of a built site: the work no verifier can skip, done in
the tightest loops Python offers, for bench/bench_scale.py to hold the verifier against.

    hash    SHA-256 of every byte of every file SHA256SUMS lists (and of SHA256SUMS itself; in
            format v3, every list of its tree and every file they list)
    root    the RFC 6962 Merkle root over every ledger leaf
    sigs    every distinct Ed25519 signature of the site verified once, with PyNaCl
    json    every .json file SHA256SUMS lists parsed with json.loads

Each part checks what it computed (the digests against SHA256SUMS, the root against the signed
checkpoint, every signature valid), so a floor that skipped work would fail rather than flatter.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import nacl.exceptions
import nacl.signing

from generator.verifier import MerkleStream, leaf_hash, read_lists
from generator.verifier.core.note import parse_checkpoint, split_note
from generator.verifier.core.public_keys import key_id
from generator.verifier.tlog.tiles import entry_bundle_path, parse_entry_bundle, tile_paths

SUMS = "SHA256SUMS"


def listed_rows(site: Path) -> list[tuple[str, str]]:
    """(SHA-256, path) of every file SHA256SUMS lists (in format v3, through its tree of lists),
    in path order."""
    rows, problems = read_lists((site / SUMS).read_bytes(), lambda rel: (site / rel).read_bytes())
    if problems:
        raise AssertionError(f"the checksum lists do not read: {problems[:3]}")
    return [(digest, rel) for rel, digest in sorted(rows.items())]


def listed_files(site: Path) -> list[str]:
    """The paths the checksum lists name, in path order."""
    return [rel for _, rel in listed_rows(site)]


def floor_hash(site: Path) -> dict[str, Any]:
    rows = listed_rows(site)
    total = 0
    wrong = 0
    for digest, rel in [*rows, ("", SUMS)]:
        with open(site / rel, "rb") as f:
            h = hashlib.file_digest(f, "sha256")
            total += f.tell()
        if digest and h.hexdigest() != digest:
            wrong += 1
    if wrong:
        raise AssertionError(f"{wrong} files differ from SHA256SUMS: the site is not a finished build")
    return {"files": len(rows) + 1, "bytes": total}


def _leaves(site: Path, size: int) -> list[bytes]:
    """The ledger's leaves, from its C2SP entry bundles.

    The entries file the manifest names is one canonical JSON array, not a file of lines: its
    leaves can only be cut out of it by a JSON scanner, which is parsing, not floor. The entry
    bundles hold the same leaves, each after its big-endian uint16 length: cutting them out is
    a slice per leaf. That they are the same leaves is checked by the root, which must be the
    signed checkpoint's."""
    leaves: list[bytes] = []
    bundles = [(p, w) for p, w in tile_paths(size) if p.startswith("tile/entries/")]
    for n, (rel, width) in enumerate(bundles):
        assert rel == entry_bundle_path(n, width)
        leaves += parse_entry_bundle((site / "ledger" / rel).read_bytes(), width, rel)
    return leaves


def floor_root(site: Path) -> dict[str, Any]:
    manifest = json.loads((site / "transparency.json").read_bytes())
    size = manifest["ledger"]["tree_size"]
    merkle = MerkleStream()
    for raw in _leaves(site, size):
        merkle.append(leaf_hash(raw))
    note = (site / manifest["ledger"]["checkpoint"]).read_bytes()
    _, signed_size, signed_root = parse_checkpoint(split_note(note)[0])
    if (merkle.size, merkle.root()) != (signed_size, signed_root):
        raise AssertionError("the entry bundles' root is not the signed checkpoint's")
    return {"leaves": merkle.size}


def _note_in_proof(data: bytes) -> bytes:
    """The checkpoint note of a C2SP tlog-proof: what follows its first empty line."""
    return data.split(b"\n\n", 1)[1]


def floor_signatures(site: Path) -> dict[str, Any]:
    """Every *.sig against its file, and every distinct signature of every checkpoint note
    (the ledger's, the remembered ones, the one in each tlog-proof), once each."""
    keys_doc = json.loads((site / "keys.json").read_bytes())
    origin = keys_doc["origin"]
    publics = [base64.b64decode(k["public_key"]) for k in keys_doc["keys"]]
    verifiers = [nacl.signing.VerifyKey(pk) for pk in publics]
    by_id = {key_id(origin, pk): v for pk, v in zip(publics, verifiers, strict=True)}
    files = listed_files(site)
    detached = [rel for rel in [*files, f"{SUMS}.sig"] if rel.endswith(".sig")]
    notes: set[tuple[bytes, bytes, bytes]] = set()  # (key id, signature, text): each verified once
    others = 0
    for rel in files:
        if rel.endswith(".tlog-proof"):
            note = _note_in_proof((site / rel).read_bytes())
        elif rel == "ledger/checkpoint" or rel.startswith("ledger/checkpoints/"):
            note = (site / rel).read_bytes()
        else:
            continue
        text, lines = split_note(note)
        for _, raw in lines:
            if raw[:4] in by_id:
                notes.add((raw[:4], raw[4:], text.encode()))
            else:
                others += 1  # a witness's cosignature: its key is not the site's to give
    for rel in detached:
        signature = (site / rel).read_bytes()
        message = (site / rel[: -len(".sig")]).read_bytes()
        for n, v in enumerate(verifiers):
            try:
                v.verify(message, signature)
                break
            except nacl.exceptions.BadSignatureError:
                if n == len(verifiers) - 1:
                    raise AssertionError(f"{rel} does not verify under any key of keys.json") from None
    for kid, signature, text in sorted(notes):
        by_id[kid].verify(text, signature)
    out: dict[str, Any] = {"detached": len(detached), "notes": len(notes)}
    if others:
        out["cosignatures not checked"] = others
    return out


def floor_json(site: Path) -> dict[str, Any]:
    files = [rel for rel in listed_files(site) if rel.endswith(".json")]
    for rel in files:
        json.loads((site / rel).read_bytes())
    return {"files": len(files)}


PARTS = {"hash": floor_hash, "root": floor_root, "sigs": floor_signatures, "json": floor_json}


def measure_floor(site: Path) -> dict[str, Any]:
    """Seconds of each part (in this order, one after the other, the page cache as the verify
    before left it) and what each covered."""
    out: dict[str, Any] = {}
    for name, part in PARTS.items():
        t = time.perf_counter()
        info = part(site)
        out[name] = {"s": time.perf_counter() - t, **info}
    return out
