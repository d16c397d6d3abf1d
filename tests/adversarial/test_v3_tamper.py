"""A format v3 site (docs/formats/v3.md, 1-4) changed by a key holder, who re-signs what the change
touches and the checksum list: each change makes `verify.py` exit 1 and name the file at fault."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import rfc8785

import generator.verifier as v
from generator.core import layout
from tests.support.demo import BuiltSite
from tests.support.tamper import VERIFY_SRC, run_verifier, write_canonical
from tests.support.v3 import demo_signer, hide, leaves_of, one_event, tree_of, v3_demo


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """A v3 demo after one event: its history has a row the last release added."""
    site = v3_demo(tmp_path_factory.mktemp("v3"))
    one_event(site)
    return site


@pytest.fixture
def site(released: BuiltSite, tmp_path: Path) -> BuiltSite:
    out = tmp_path / "public"
    shutil.copytree(released.out, out)
    return BuiltSite(released.paths, out)


def rows(site: BuiltSite) -> list[dict[str, object]]:
    return list(json.loads((site.out / layout.HISTORY).read_bytes())["checkpoints"])


def consistency_doc(site: BuiltSite, old: int, new: int) -> dict[str, object]:
    tree = tree_of(site.out)
    return {
        "hashes": [h.hex() for h in tree.consistency_proof(old, new)],
        "new_root": tree.root(new).hex(),
        "new_size": new,
        "old_root": tree.root(old).hex(),
        "old_size": old,
        "type": "consistency-proof",
        "v": 1,
    }


def repin_to_an_unarchived_checkpoint(site: BuiltSite) -> tuple[str, tuple[str, ...]]:
    """A proof made again, validly, against a checkpoint the key signed at a size no row has."""
    sizes = {int(str(r["tree_size"])) for r in rows(site)}
    size = next(n for n in range(max(sizes), 0, -1) if n not in sizes)
    tree, raw = tree_of(site.out), leaves_of(site.out)
    rel = "reveals/a-001.json.tlog-proof"
    index = v.parse_tlog_proof((site.out / rel).read_bytes()).index
    origin = json.loads((site.out / layout.MANIFEST).read_bytes())["origin"]
    note = demo_signer(site).sign_note(v.checkpoint_text(origin, size, tree.root(size)))
    (site.out / rel).write_bytes(v.format_tlog_proof(raw[index], index, tree.inclusion_proof(index, size), note))
    return rel, ()


def add_a_proof_of_no_row(site: BuiltSite) -> tuple[str, tuple[str, ...]]:
    """A valid consistency proof between two archived sizes that are not consecutive rows."""
    sizes = [int(str(r["tree_size"])) for r in rows(site)]
    rel = f"ledger/consistency/{sizes[0]}-{sizes[-1]}.json"
    write_canonical(site.out, rel, consistency_doc(site, sizes[0], sizes[-1]))
    return rel, ()


def add_a_v2_style_proof(site: BuiltSite) -> tuple[str, tuple[str, ...]]:
    """Format v2's proof from an archived size to today's, valid, in a v3 site."""
    sizes = [int(str(r["tree_size"])) for r in rows(site)]
    rel = f"ledger/consistency/{sizes[0]}.json"
    write_canonical(site.out, rel, consistency_doc(site, sizes[0], sizes[-1]))
    return rel, ()


def alter_a_commitment_part(site: BuiltSite) -> tuple[str, tuple[str, ...]]:
    """A sealed row marked revealed, the index's SHA-256 of the part remade and re-signed."""
    rel = "ledger/commitments/0.json"
    part = json.loads((site.out / rel).read_bytes())
    row = next(r for r in part["commitments"] if r["status"] == "sealed")
    row["status"] = "revealed"
    data = write_canonical(site.out, rel, part)
    index = json.loads((site.out / layout.COMMITMENTS).read_bytes())
    index["parts"][0]["sha256"] = hashlib.sha256(data).hexdigest()
    write_canonical(site.out, layout.COMMITMENTS, index)
    return rel, (layout.COMMITMENTS,)


def alter_the_new_consistency_proof(site: BuiltSite) -> tuple[str, tuple[str, ...]]:
    """The proof the last release added, one hash changed."""
    rel = str(rows(site)[-1]["consistency"])
    doc = json.loads((site.out / rel).read_bytes())
    doc["hashes"][0] = hashlib.sha256(b"another node").hexdigest()
    (site.out / rel).write_bytes(rfc8785.dumps(doc))
    return rel, ()


def publish_an_entries_document(site: BuiltSite) -> tuple[str, tuple[str, ...]]:
    """v2's entries document beside the tiles: no document of a v3 site names it."""
    raw = leaves_of(site.out)
    origin = json.loads((site.out / layout.MANIFEST).read_bytes())["origin"]
    doc = {
        "entries": [json.loads(r) for r in raw],
        "origin": origin,
        "tree_size": len(raw),
        "type": "ledger-entries",
        "v": 1,
    }
    write_canonical(site.out, layout.ENTRIES, doc)
    return layout.ENTRIES, ()


TAMPERS: dict[str, Callable[[BuiltSite], tuple[str, tuple[str, ...]]]] = {
    "a proof re-pinned to a checkpoint no row archives": repin_to_an_unarchived_checkpoint,
    "a consistency proof of no row": add_a_proof_of_no_row,
    "a v2-style consistency proof": add_a_v2_style_proof,
    "an altered commitment part": alter_a_commitment_part,
    "the new consistency proof altered": alter_the_new_consistency_proof,
    "an entries document": publish_an_entries_document,
}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_a_changed_v3_site_fails_naming_the_file(site: BuiltSite, name: str) -> None:
    rel, signed = TAMPERS[name](site)
    hide(site, *signed)
    r = run_verifier(VERIFY_SRC, str(site.out), "--no-state")
    assert r.rc == 1, r.text[-3000:]
    assert r.names_file(rel), r.fail_lines()


def test_the_untouched_copy_passes(site: BuiltSite) -> None:
    """The matrix's baseline: the copy itself, re-signed as every tamper is, verifies."""
    hide(site)
    r = run_verifier(VERIFY_SRC, str(site.out), "--no-state")
    assert r.rc == 0, r.text[-3000:]


def test_a_v2_style_proof_is_named_as_such(site: BuiltSite) -> None:
    rel, _ = add_a_v2_style_proof(site)
    hide(site)
    r = run_verifier(VERIFY_SRC, str(site.out), "--no-state")
    assert any("format v2 consistency proof" in line for line in r.fail_lines() if rel in line), r.fail_lines()
