"""Secrets never reach the built site: sealed items' texts, answers and salts, and the signing key.

Every file of the built demo site is searched, as bytes, for every secret in every encoding a
page or a JSON document could carry it in (tests/support/leaks.py). A self-check plants secrets
into a copy of the site and requires the same search to find them, so a pass means the search works.
"""

from __future__ import annotations

import gzip
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from generator.core import layout
from generator.core.signing_key import load_key
from generator.program.sealed import iter_sealed
from generator.verifier import loads_strict
from tests.support.demo import BuiltSite
from tests.support.leaks import (
    Needle,
    all_needles,
    key_needles,
    revealed_ids,
    sealed_documents,
    sealed_needles,
    search,
    site_files,
)

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
