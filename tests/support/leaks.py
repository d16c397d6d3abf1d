"""The leak search: every file of a built site (and what is compressed inside it) searched, as bytes, for every
secret in every encoding a page or a JSON document could carry it in: sealed items' texts, answers and salts,
and the signing key. tests/adversarial/test_leaks.py runs it on the demo (with a self-check that it finds
planted secrets); the search page's tests run it on the search index.
"""

from __future__ import annotations

import base64
import gzip
import html
import io
import json
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import markupsafe
import nacl.signing

from generator.core import layout
from generator.core.signing_key import load_key
from generator.program.sealed import iter_sealed
from tests.support.demo import BuiltSite

WINDOW = 40
MIN_NEEDLE = 12
PKCS8_ED25519_PREFIX = bytes.fromhex("302e020100300506032b657004220420")


@dataclass(frozen=True)
class Needle:
    label: str
    data: bytes


# ---------------------------------------------------------------------------------------------
# Reading the site and the private material


GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
# The Pagefind files that are gzip streams: fragments, index chunks, metadata, the wasm.
PAGEFIND_GZIPPED = (".pf_fragment", ".pf_index", ".pf_meta", ".pagefind")


def site_files(root: Path) -> dict[str, bytes]:
    """Every file of the site by its path, and, under derived names, what is compressed inside
    it: the gunzipped Pagefind files (`<path> (gunzipped)`) and each member of the download
    archive (`<archive>!<member>`, its Pagefind files gunzipped too), where a byte search of
    the raw files would see nothing."""
    files: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            files.update(unpacked(p.relative_to(root).as_posix(), p.read_bytes()))
    return files


def unpacked(name: str, data: bytes) -> dict[str, bytes]:
    """A file, and the decompressed contents it carries (see site_files)."""
    out = {name: data}
    if name.endswith(PAGEFIND_GZIPPED) and data.startswith(GZIP_MAGIC):
        out[f"{name} (gunzipped)"] = gzip.decompress(data)
    elif name.endswith(".zip") and data.startswith(ZIP_MAGIC):
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                out.update(unpacked(f"{name}!{info.filename}", zf.read(info)))
    return out


def search(files: dict[str, bytes], needles: Iterable[Needle]) -> list[tuple[str, str]]:
    """Every (needle label, file) where the needle's bytes occur."""
    names = list(files)
    blob = b"\x00\xff\x00".join(files[n] for n in names)  # no needle holds this separator
    hits = []
    for needle in needles:
        if needle.data in blob:
            hits += [(needle.label, n) for n in names if needle.data in files[n]]
    return hits


def sealed_documents(private: Path) -> dict[str, dict[str, Any]]:
    from generator.program.datadir import Paths

    return {item_id: json.loads(data) for item_id, data in iter_sealed(Paths(private.parent, private))}


def revealed_ids(root: Path) -> set[str]:
    return {p.stem for p in (root / "reveals").glob("*.json")}


def strings_of(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in strings_of(v)]
    return []


def item_texts(item: dict[str, Any]) -> list[str]:
    return [item["prompt"], *(s for f in item["answer"].values() for s in strings_of(f["value"]))]


def text_forms(text: str) -> set[bytes]:
    """The ways a text can appear in a file of the site: raw, JSON-escaped, HTML-escaped."""
    forms = {
        text,
        json.dumps(text)[1:-1],
        json.dumps(text, ensure_ascii=False)[1:-1],
        html.escape(text),
        html.escape(text, quote=False),
        str(markupsafe.escape(text)),
        str(markupsafe.escape(json.dumps(text, ensure_ascii=False)[1:-1])),
    }
    return {f.encode("utf-8") for f in forms}


def windows(text: str, others: str, want: int = 6) -> list[str]:
    """Up to `want` distinctive WINDOW-character pieces of `text`: none occurs in any other item."""
    starts = range(0, max(0, len(text) - WINDOW) + 1, 7)
    kept = [text[i : i + WINDOW] for i in starts if text[i : i + WINDOW] not in others and text[i : i + WINDOW].strip()]
    if len(kept) <= want:
        return kept
    step = len(kept) / want
    return [kept[int(k * step)] for k in range(want)]


def sealed_needles(demo: BuiltSite) -> tuple[list[Needle], list[str]]:
    """Needles for every sealed item, and the ids of those items."""
    docs = sealed_documents(demo.paths.private)
    revealed = revealed_ids(demo.out)
    sealed = sorted(set(docs) - revealed)
    public_docs = {i: json.loads((demo.out / layout.reveal(i)).read_bytes()) for i in revealed}
    every = {**{i: d["item"] for i, d in public_docs.items()}, **{i: d["item"] for i, d in docs.items()}}
    public_text = "\x00".join(t for d in public_docs.values() for t in item_texts(d["item"]))
    needles: list[Needle] = []
    for item_id in sealed:
        doc = docs[item_id]
        item = doc["item"]
        others = "\x00".join(t for i, it in every.items() if i != item_id for t in item_texts(it))
        prompt = item["prompt"]
        pieces = windows(prompt, others)
        assert len(pieces) >= 2, f"sealed item {item_id}: its prompt has too few distinctive pieces to search for"
        texts = [(f"{item_id} prompt", prompt)]
        texts += [(f"{item_id} prompt piece {k}", p) for k, p in enumerate(pieces)]
        for name, f in item["answer"].items():
            for s in strings_of(f["value"]):
                # A value some revealed item also has (a shared tag) is public through that item.
                if len(s) >= MIN_NEEDLE and s not in public_text:
                    texts.append((f"{item_id} answer {name}", s))
        for label, text in texts:
            needles += [Needle(label, form) for form in text_forms(text)]
        salt = doc["salt"]
        raw = bytes.fromhex(salt)
        needles += [
            Needle(f"{item_id} salt", form)
            for form in (
                salt.encode(),
                salt.upper().encode(),
                raw,
                base64.b64encode(raw),
                base64.b64encode(raw).rstrip(b"="),
            )
        ]
    return needles, sealed


def key_needles(private: Path) -> list[Needle]:
    signer = load_key(private / "signing.key")
    seed = signer.seed
    assert len(seed) == 32
    expanded = nacl.signing.SigningKey(seed)._signing_key
    assert len(expanded) == 64
    der = PKCS8_ED25519_PREFIX + seed
    der_b64 = base64.b64encode(der)
    pem = b"-----BEGIN PRIVATE KEY-----\n" + der_b64 + b"\n-----END PRIVATE KEY-----\n"
    key_text = (private / "signing.key").read_text(encoding="utf-8").strip()
    assert key_text.split("+", 4)[4].encode() == base64.b64encode(b"\x01" + seed), (
        "the key file holds base64(0x01 || seed)"
    )
    out = []
    for label, secret in (
        ("seed", seed),
        ("expanded secret key", expanded),
        ("PKCS#8 DER", der),
        ("0x01||seed", b"\x01" + seed),
    ):
        b64 = base64.b64encode(secret)
        for form in (
            secret,
            secret.hex().encode(),
            secret.hex().upper().encode(),
            b64,
            b64.rstrip(b"="),
            base64.urlsafe_b64encode(secret).rstrip(b"="),
        ):
            out.append(Needle(label, form))
    out += [
        Needle("PKCS#8 PEM", pem),
        Needle("PKCS#8 PEM body", der_b64),
        Needle("signing.key text", key_text.encode()),
        Needle("signing.key base64 part", key_text.split("+", 4)[4].encode()),  # the base64 may hold "+"
    ]
    return out


def all_needles(demo: BuiltSite) -> list[Needle]:
    needles = sealed_needles(demo)[0] + key_needles(demo.paths.private)
    short = [n for n in needles if len(n.data) < MIN_NEEDLE]
    assert not short, f"needles too short to search for without false hits: {short[:5]}"
    return needles
