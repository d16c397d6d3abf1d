"""Secrets never reach the built site: sealed items' texts, answers and salts, and the signing key.

Every file of the built demo site is searched, as bytes, for every secret in every encoding a
page or a JSON document could carry it in. A self-check plants secrets into a copy of the site
and requires the same search to find them, so a pass means the search works.
"""

from __future__ import annotations

import base64
import gzip
import html
import io
import json
import shutil
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import markupsafe
import nacl.signing
import pytest
from conftest import BuiltSite

from generator.core import layout
from generator.core.signing_key import load_key
from generator.program.sealed import iter_sealed
from generator.verifier import loads_strict

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


# ---------------------------------------------------------------------------------------------
# Tests


def test_sealed_items_never_reach_the_site(demo_site: BuiltSite) -> None:
    needles, sealed = sealed_needles(demo_site)
    assert len(sealed) >= 10, f"the demo should keep many items sealed, found {sealed}"
    commitments = json.loads((demo_site.out / layout.COMMITMENTS).read_bytes())["commitments"]
    listed_sealed = sorted(c["id"] for c in commitments if c["status"] == "sealed")
    assert listed_sealed == sealed, (
        f"{layout.COMMITMENTS}: sealed items {listed_sealed} differ from the private sealed set {sealed}"
    )
    labels = {n.label.split()[0] for n in needles if n.label.endswith("salt")}
    assert labels == set(sealed), "every sealed item contributes its salt"
    hits = search(site_files(demo_site.out), needles)
    assert not hits, "sealed material found in the site:\n" + "\n".join(
        f"{label} in {file}" for label, file in hits[:40]
    )


def test_signing_key_never_reaches_the_site(demo_site: BuiltSite) -> None:
    hits = search(site_files(demo_site.out), key_needles(demo_site.paths.private))
    assert not hits, "signing key material found in the site:\n" + "\n".join(
        f"{label} in {file}" for label, file in hits
    )


def test_the_search_finds_planted_secrets(demo_site: BuiltSite, tmp_path: Path) -> None:
    """Self-check: every needle, planted into a copy of the site, is found where it was planted."""
    root = tmp_path / "site"
    shutil.copytree(demo_site.out, root)
    needles = all_needles(demo_site)
    assert not search(site_files(root), needles), "the unmodified copy already has hits"

    # Every needle, each in its own file amid other bytes.
    planted = root / "planted"
    planted.mkdir()
    for k, n in enumerate(needles):
        (planted / f"{k}.html").write_bytes(b"<p>before " + n.data + b" after</p>\n")
    hits = set(search(site_files(root), needles))
    missed = [n.label for k, n in enumerate(needles) if (n.label, f"planted/{k}.html") not in hits]
    assert not missed, f"the search missed planted needles: {missed[:10]}"
    shutil.rmtree(planted)

    # Realistic leaks: a sealed document published as a reveal, the seed in a page, a prompt in JSON.
    _, sealed = sealed_needles(demo_site)
    victim = sealed[0]
    sealed_bytes = dict(iter_sealed(demo_site.paths))
    (root / "reveals" / f"{victim}.json").write_bytes(sealed_bytes[victim])
    seed = load_key(demo_site.paths.private / "signing.key").seed
    page = root / layout.HOME
    page.write_bytes(page.read_bytes().replace(b"</main>", b"<!-- " + seed.hex().encode() + b" --></main>", 1))
    other = sealed[1]
    prompt = json.loads(sealed_bytes[other])["item"]["prompt"]
    manifest = root / layout.MANIFEST
    manifest.write_bytes(manifest.read_bytes()[:-1] + b',"x":' + json.dumps(prompt).encode() + b"}")
    hits = set(search(site_files(root), needles))
    for label, file in (
        (f"{victim} salt", f"reveals/{victim}.json"),
        (f"{victim} prompt", f"reveals/{victim}.json"),
        ("seed", layout.HOME),
        (f"{other} prompt", layout.MANIFEST),
        (f"{other} prompt piece 0", layout.MANIFEST),
    ):
        assert (label, file) in hits, f"the search did not find the planted {label} in {file}"


def test_the_search_sees_inside_compressed_files(demo_site: BuiltSite, tmp_path: Path) -> None:
    """Self-check: a needle in a gzipped Pagefind file, and in a member of the download archive
    (deflated, and gzipped inside it), is found, though no raw file holds its bytes."""
    root = tmp_path / "site"
    shutil.copytree(demo_site.out, root)
    needle = Needle("needle", b"planted-needle-" + bytes(range(97, 123)))
    fragments = sorted((root / "pagefind").rglob("*.pf_fragment"))
    assert fragments and gzip.decompress(fragments[0].read_bytes()), "the demo's Pagefind fragments are gzip"
    plain = gzip.decompress(fragments[0].read_bytes())
    fragments[0].write_bytes(gzip.compress(plain.replace(b"{", b'{"x":"' + needle.data + b'",', 1)))
    archive = root / layout.ARCHIVE
    with zipfile.ZipFile(archive) as zf:
        items = [(info, zf.read(info)) for info in zf.infolist()]
    fragment_member = fragments[0].relative_to(root).as_posix()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in items:
            if info.filename == layout.HOME:
                data = data.replace(b"</main>", b"<!-- " + needle.data + b" --></main>", 1)
            if info.filename == fragment_member:
                data = fragments[0].read_bytes()
            zf.writestr(info, data)
    files = site_files(root)
    assert not [n for n, d in files.items() if needle.data in d and "!" not in n and "(gunzipped)" not in n], (
        "the needle lies in a raw file: the check would prove nothing"
    )
    assert set(search(files, [needle])) == {
        ("needle", f"{fragment_member} (gunzipped)"),
        ("needle", f"{layout.ARCHIVE}!{layout.HOME}"),
        ("needle", f"{layout.ARCHIVE}!{fragment_member} (gunzipped)"),
    }


def test_revealed_salts_are_found(demo_site: BuiltSite) -> None:
    """Sanity: the same search finds what is meant to be public, the salts of revealed items."""
    revealed = revealed_ids(demo_site.out)
    docs = sealed_documents(demo_site.paths.private)
    retired = sorted(set(docs) & revealed)
    assert retired, "the demo should have retired items whose sealed documents are in the private directory"
    public = sorted(revealed - set(docs))
    salts = [Needle(f"{i} salt", docs[i]["salt"].encode()) for i in retired]
    salts += [
        Needle(f"{i} salt", json.loads((demo_site.paths.reveals_dir / f"{i}.json").read_bytes())["salt"].encode())
        for i in public
    ]
    hits = search(site_files(demo_site.out), salts)
    found = {label for label, _ in hits}
    assert found, "no revealed item's salt was found: the search is broken"
    missing = sorted({n.label for n in salts} - found)
    assert not missing, f"salts of revealed items not shown anywhere in the site: {missing}"
    for i in retired:
        assert (f"{i} salt", layout.reveal(i)) in hits and (f"{i} salt", layout.item_page(i)) in hits, (
            f"the salt of retired item {i} is not in its reveal file and its page"
        )


@pytest.mark.parametrize("word", ["private", "sealed", "signing"])
def test_no_site_path_names_private_material(demo_site: BuiltSite, word: str) -> None:
    bad = [p for p in site_files(demo_site.out) if word in p.lower()]
    assert not bad, f"site files whose path contains {word!r}: {bad}"


def test_no_private_file_is_published(demo_site: BuiltSite) -> None:
    """No site file is a private file, except the committed documents of revealed items and
    the certificate documents that fell due (copied to the same path in the data directory)."""
    private = demo_site.paths.private
    revealed = revealed_ids(demo_site.out)
    due = {
        p.relative_to(demo_site.paths.data).as_posix()
        for p in (demo_site.paths.data / "certificates").rglob("*")
        if p.is_file()
    }
    # A label set is published byte for byte once due (FORMAT.md, "Judge agreement"): the demo's is
    # of a public-gate run whose certificate is issued, which verify_site checks is due.
    entries = loads_strict((demo_site.out / "ledger" / "entries.json").read_bytes())["entries"]
    certified = {e["run"] for e in entries if e["type"] == "certificate"}
    public_runs = {e["id"] for e in entries if e["type"] == "run" and e["gate"] == "a"}
    for e in entries:
        if e["type"] == "label-set" and e["run"] in certified and e["run"] in public_runs:
            assert (demo_site.out / "agreement" / e["id"] / "labels.json").is_file()
            due.add(f"agreement/{e['id']}.json")
    secret_files = {
        p.relative_to(private).as_posix(): p.read_bytes()
        for p in sorted(private.rglob("*"))
        if p.is_file()
        and not (p.parent.name == "sealed" and p.stem in revealed)
        and p.relative_to(private).as_posix() not in due
    }
    assert any(k.startswith("certificates/") for k in secret_files), (
        "the demo keeps sealed details: this test must see them"
    )
    assert "signing.key" in secret_files and any(k.startswith("items/") for k in secret_files)
    published = {data: name for name, data in site_files(demo_site.out).items()}
    same = [(name, published[data]) for name, data in secret_files.items() if data in published]
    assert not same, f"private files published verbatim (private → site): {same}"
