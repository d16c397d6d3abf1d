"""Format v3's history, proofs, ledger and commitment list (docs/formats/v3.md, 1-4) end to end:
the demo built as a v3 program verifies, a one-event release after it keeps every file the
first wrote once and adds one consistency proof, the verifier remembers a v3 release by its
tree size, and a build never changes a site's format."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import generator.verifier as v
from generator.build import artifacts
from generator.cli import main
from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.retire import retire_item
from generator.core import layout
from generator.core.generator_errors import InputError
from generator.program.sealed import iter_sealed
from generator.verifier.memory.release_memory import memory_file
from generator.verifier.site import history_v3
from tests.support.demo import BuiltSite
from tests.support.programs import item, write_items
from tests.support.schemas import validator
from tests.support.tamper import VERIFY_SRC, resign_sums, run_verifier
from tests.support.v3 import choose_format, demo_signer, hide, one_event, v3_demo

WRITTEN_ONCE = re.compile(r"(.*\.tlog-proof|ledger/checkpoints/[0-9]+|ledger/consistency/.*)")


def files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> tuple[BuiltSite, Path, str]:
    """A v3 demo, a copy of its first release, and its second release after one retirement
    (the item retired)."""
    root = tmp_path_factory.mktemp("v3")
    site = v3_demo(root)
    first = root / "first"
    shutil.copytree(site.out, first)
    item = one_event(site)
    return site, first, item


def test_both_releases_of_a_v3_site_verify(releases: tuple[BuiltSite, Path, str]) -> None:
    site, first, _ = releases
    for folder in (first, site.out):
        r = run_verifier(VERIFY_SRC, str(folder), "--no-state")
        assert r.rc == 0, r.text[-3000:]
        assert "PASS" in r.out


def test_a_v3_site_has_its_own_documents_and_no_entries_document(releases: tuple[BuiltSite, Path, str]) -> None:
    site, first, _ = releases
    for folder in (first, site.out):
        manifest = json.loads((folder / layout.MANIFEST).read_bytes())
        assert manifest["v"] == 3 and "entries" not in manifest["ledger"]
        assert not (folder / layout.ENTRIES).exists() and not (folder / layout.sig(layout.ENTRIES)).exists()
        history = json.loads((folder / layout.HISTORY).read_bytes())
        assert history["v"] == 2
        rows = history["checkpoints"]
        assert rows[0]["consistency"] is None
        for before, row in itertools.pairwise(rows):
            assert row["consistency"] == f"ledger/consistency/{before['tree_size']}-{row['tree_size']}.json"
        for row in rows:
            assert row["checkpoint"] == f"ledger/checkpoints/{row['tree_size']}"
        assert not [p for p in (folder / "ledger/consistency").iterdir() if re.fullmatch(r"[0-9]+\.json", p.name)]


def test_the_next_release_keeps_what_the_first_wrote_once(releases: tuple[BuiltSite, Path, str]) -> None:
    site, first, item = releases
    before, after = files(first), files(site.out)
    once = sorted(rel for rel in before if WRITTEN_ONCE.fullmatch(rel))
    assert any(rel.endswith(".tlog-proof") for rel in once) and any("consistency/" in rel for rel in once)
    assert [rel for rel in once if after.get(rel) != before[rel]] == []
    new = sorted(set(after) - set(before))
    old_size, new_size = (
        json.loads(before[layout.HISTORY])["tree_size"],
        json.loads(after[layout.HISTORY])["tree_size"],
    )
    assert [rel for rel in new if rel.startswith("ledger/consistency/")] == [
        f"ledger/consistency/{old_size}-{new_size}.json"
    ]
    assert [rel for rel in new if rel.startswith("ledger/checkpoints/")] == [f"ledger/checkpoints/{new_size}"]
    # The one new proof, of the item this release revealed, holds this release's archived checkpoint.
    proof = v.parse_tlog_proof(after[f"reveals/{item}.json.tlog-proof"])
    assert proof.checkpoint == after[f"ledger/checkpoints/{new_size}"]
    assert [rel for rel in new if rel.endswith(".tlog-proof")] == [f"reveals/{item}.json.tlog-proof"]
    # And an old proof still holds the checkpoint of the release that first published it.
    old = v.parse_tlog_proof(after["reveals/a-001.json.tlog-proof"])
    assert old.checkpoint == after[f"ledger/checkpoints/{old_size}"]


def test_the_v3_documents_meet_their_schemas(releases: tuple[BuiltSite, Path, str]) -> None:
    site, _, _ = releases
    checked = []
    for rel, data in files(site.out).items():
        if not rel.startswith(("ledger/", layout.MANIFEST)) or not rel.endswith(".json"):
            continue
        schema = layout.schema_for(rel)
        assert schema is not None, rel
        validator(Path(schema).name.removesuffix(".schema.json")).validate(json.loads(data))
        checked.append(rel)
    assert {layout.MANIFEST, layout.HISTORY, layout.COMMITMENTS, layout.commitment_part(0)} <= set(checked)
    assert any(rel.startswith("ledger/consistency/") for rel in checked)


def test_the_commitment_list_comes_in_parts(releases: tuple[BuiltSite, Path, str]) -> None:
    site, _first, item = releases
    index = json.loads((site.out / layout.COMMITMENTS).read_bytes())
    assert index["type"] == "commitment-list" and index["v"] == 2 and index["parts"]
    rows: list[dict[str, Any]] = []
    for k, part in enumerate(index["parts"]):
        assert part["path"] == f"ledger/commitments/{k}.json"
        doc = json.loads((site.out / part["path"]).read_bytes())
        assert doc["part"] == k and "tree_size" not in doc and len(doc["commitments"]) == part["count"]
        rows += doc["commitments"]
    assert len(rows) == index["count"]
    assert next(r for r in rows if r["id"] == item)["status"] == "revealed"
    # The pool page's twin is the part that holds its rows.
    page = (site.out / layout.pool_page(1)).read_text(encoding="utf-8")
    assert 'rel="alternate" type="application/json" href="../ledger/commitments/0.json"' in page


def test_a_v3_release_is_verified_from_the_last_by_tree_size(tmp_path: Path) -> None:
    site = v3_demo(tmp_path)
    memory = tmp_path / "releases"
    origin = v.verify_site(site.out).tree["origin"]
    since = [("state", (site.out / layout.CHECKPOINT).read_bytes(), origin)]
    first = v.verify_site(site.out, since=since, memory=memory)
    assert first.ok, [p.describe() for p in first.failures]
    assert memory_file(memory, origin).is_file()
    one_event(site)
    after = v.verify_site(site.out, since=since, memory=memory)
    full = v.verify_site(site.out, since=since)
    assert after.ok and full.ok, [p.describe() for p in after.failures + full.failures]
    size = first.tree["tree_size"]
    assert any(f"first {size} entries are those of the release verified last" in n for n in after.notes), after.notes
    assert not any("only the entries after them" in n for n in full.notes)
    assert after.tree == full.tree and after.counts == full.counts and after.checks == full.checks
    # The command line's state does the same: a run remembers, the next run resumes.
    state = tmp_path / "state.json"
    assert run_verifier(VERIFY_SRC, str(site.out), "--state", str(state)).rc == 0
    one_event(site, "2027-01-05T09:00:00Z")
    r = run_verifier(VERIFY_SRC, str(site.out), "--state", str(state))
    assert r.rc == 0 and "only the entries after them were replayed" in r.out, r.text[-3000:]


def test_an_inclusion_proof_checked_before_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A v3 proof is written once: one whose check passed in the release verified last, with its
    bytes, its leaf's index, the checkpoint it holds and the root at that size as they were, is not
    parsed again; one the key holder replaced (another artifact's valid proof, the lists re-signed)
    is, and fails from the memory as it fails from nothing."""
    site = v3_demo(tmp_path)
    memory = tmp_path / "releases"
    origin = v.verify_site(site.out).tree["origin"]
    since = [("state", (site.out / layout.CHECKPOINT).read_bytes(), origin)]
    assert v.verify_site(site.out, since=since, memory=memory).ok
    retired = one_event(site)
    pristine = tmp_path / "pristine"
    shutil.copytree(memory, pristine)
    checked: list[int] = []
    check = history_v3.artifact_proof_problem

    def counted(data: Any, proof_data: bytes, index: Any, size: int, root: bytes) -> Any:
        checked.append(index)
        return check(data, proof_data, index, size, root)

    monkeypatch.setattr(history_v3, "artifact_proof_problem", counted)
    after = v.verify_site(site.out, since=since, memory=memory)
    from_memory = list(checked)
    checked.clear()
    full = v.verify_site(site.out, since=since)
    assert after.ok and full.ok, [p.describe() for p in after.failures + full.failures]
    assert after.checks == full.checks and len(checked) > 10
    # Only the new reveal's proof is read (it proves the item's commit leaf).
    new_proof = v.parse_tlog_proof((site.out / f"reveals/{retired}.json.tlog-proof").read_bytes())
    assert from_memory == [new_proof.index], (from_memory, retired)
    # The key holder swaps an old proof for another artifact's, and lists and signs the result.
    shutil.rmtree(memory)
    shutil.copytree(pristine, memory)  # the memory of the first release, which `since` names
    target = site.out / "reveals/a-001.json.tlog-proof"
    original, other = target.read_bytes(), (site.out / "reveals/a-002.json.tlog-proof").read_bytes()
    target.unlink()
    target.write_bytes(other)
    resign_sums(site.out, demo_signer(site))
    _fails_alike(site, memory, pristine, since, "reveals/a-001.json.tlog-proof")
    # Or leaves each proof as it was and swaps which artifact the manifest gives each path to: a
    # proof is remembered with the leaf it proves, not only its bytes.
    target.write_bytes(original)
    manifest = json.loads((site.out / v.MANIFEST_PATH).read_bytes())
    rows = {r["id"]: r for r in manifest["reveals"]}
    rows["a-001"]["path"], rows["a-002"]["path"] = rows["a-002"]["path"], rows["a-001"]["path"]
    (site.out / v.MANIFEST_PATH).write_bytes(v.canonical_bytes(manifest))
    hide(site, v.MANIFEST_PATH)
    _fails_alike(site, memory, pristine, since, "reveals/a-002.json.tlog-proof")


def _fails_alike(site: BuiltSite, memory: Path, pristine: Path, since: Any, named: str) -> None:
    """The site fails from the memory of its first release (with the replay going on from it) as
    it fails from nothing: the same failures, one of them at `named`."""
    shutil.rmtree(memory)
    shutil.copytree(pristine, memory)
    tampered = v.verify_site(site.out, since=since, memory=memory)
    from_nothing = v.verify_site(site.out, since=since)
    assert not tampered.ok
    said = sorted(p.describe() for p in tampered.failures)
    assert said == sorted(p.describe() for p in from_nothing.failures)
    assert any(named in line for line in said), said
    assert any("only the entries after them were replayed" in n for n in tampered.notes), tampered.notes


def test_a_memory_of_another_history_does_not_hide_a_fork(tmp_path: Path) -> None:
    """A v3 memory promises the tree at its size, not bytes: a site whose tiles hold another
    leaf at that size fails, although the remembered roots would let it pass the --since check."""
    a, b = v3_demo(tmp_path / "a"), v3_demo(tmp_path / "b")
    one_event(a)  # retires the first sealed item
    memory = tmp_path / "releases"
    origin = v.verify_site(a.out).tree["origin"]
    since = [("state", (a.out / layout.CHECKPOINT).read_bytes(), origin)]
    assert v.verify_site(a.out, since=since, memory=memory).ok
    # b forks at that leaf: it retires another item first, then one more, so it is longer.
    sealed = sorted(i for i, _ in iter_sealed(b.paths) if not b.paths.reveal_file(i).exists())
    retire_item(b.paths, sealed[1], "Another history.", "2027-01-04T09:00:00Z")
    one_event(b, "2027-01-05T09:00:00Z")
    report = v.verify_site(b.out, since=since, memory=memory)
    assert not report.ok
    said = [p.describe() for p in report.failures]
    assert any("does not begin with the ledger of the release verified last" in s for s in said), said


def test_a_release_that_fills_a_tile_keeps_what_was_written_once(tmp_path: Path) -> None:
    """Past 256 leaves the partial tiles of the first release go (their full tile is there), as
    in v2; the proofs, archived checkpoints and consistency proofs stay, and it all verifies."""
    site = v3_demo(tmp_path)
    before = files(site.out)
    write_items(site.paths, [item(f"b-{9000 + n:04d}", "b") for n in range(200)], "many.yaml")
    commit_new_items(site.paths, "2027-01-04T09:00:00Z")
    build(site.paths, site.out, offline=True)
    after = files(site.out)
    assert json.loads(after[layout.HISTORY])["tree_size"] > 256
    once = [rel for rel in before if WRITTEN_ONCE.fullmatch(rel)]
    assert [rel for rel in once if after.get(rel) != before[rel]] == []
    assert [rel for rel in before if rel.startswith("ledger/tile/") and ".p/" in rel and rel not in after]
    index = json.loads(after[layout.COMMITMENTS])
    assert [p["count"] for p in index["parts"]] == [index["count"]]
    r = run_verifier(VERIFY_SRC, str(site.out), "--no-state")
    assert r.rc == 0, r.text[-3000:]


def test_a_one_event_release_makes_only_the_commitment_parts_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_in_process: None
) -> None:
    """Parts no event since the last release can have changed are taken from it unread; the part
    holding the item revealed and the last part are made again; the whole verifies from nothing."""
    site = v3_demo(tmp_path)
    write_items(site.paths, [item(f"b-9{n:04d}", "b") for n in range(2200)], "many.yaml")
    commit_new_items(site.paths, "2027-01-04T09:00:00Z")
    build(site.paths, site.out, offline=True)
    before = files(site.out)
    parts = [p["path"] for p in json.loads(before[layout.COMMITMENTS])["parts"]]
    assert len(parts) == 3
    made: list[int] = []
    make = artifacts.commitment_part_bytes

    def counted(ledger: Any, origin: str, k: int) -> bytes:
        made.append(k)
        return make(ledger, origin, k)

    monkeypatch.setattr(artifacts, "commitment_part_bytes", counted)
    retired = one_event(site, "2027-01-05T09:00:00Z")  # a sealed item of the demo: in part 0
    assert made == [0, 2]
    after = files(site.out)
    assert retired in {row["id"] for row in json.loads(after[parts[0]])["commitments"]}
    assert after[parts[1]] == before[parts[1]] and after[parts[0]] != before[parts[0]]
    r = run_verifier(VERIFY_SRC, str(site.out), "--no-state")
    assert r.rc == 0, r.text[-3000:]


def test_a_build_never_changes_a_sites_format(demo_copy: BuiltSite, tmp_path: Path) -> None:
    # A v2 site (the demo) asked for format 3.
    choose_format(demo_copy.paths, 3)
    with pytest.raises(InputError) as caught:
        build(demo_copy.paths, demo_copy.out, offline=True)
    text = str(caught.value)
    assert "format v2" in text and "format 3" in text, text
    argv = ["--data", str(demo_copy.paths.data), "build", "--offline", "--out", str(demo_copy.out)]
    result = CliRunner().invoke(main, argv, prog_name="transparency")
    assert result.exit_code != 0 and "format v2" in result.output + result.stderr
    # A v3 site asked for format 2 (the default, once the line is gone).
    site = v3_demo(tmp_path / "v3")
    f = site.paths.data / "program.yaml"
    f.write_text(f.read_text(encoding="utf-8").replace("format: 3\n", ""), encoding="utf-8")
    argv = ["--data", str(site.paths.data), "build", "--offline", "--out", str(site.out)]
    result = CliRunner().invoke(main, argv, prog_name="transparency")
    assert result.exit_code != 0, result.output
    said = result.output + result.stderr
    assert "format v3" in said and "format 2" in said, said


def test_a_kept_proof_that_proves_another_leaf_stops_the_build(tmp_path: Path) -> None:
    site = v3_demo(tmp_path)
    proof_rel = "reveals/a-001.json.tlog-proof"
    other = (site.out / "reveals/a-002.json.tlog-proof").read_bytes()
    target = site.out / proof_rel
    target.unlink()  # a hard link to the file the private cache may hold: never written through
    target.write_bytes(other)
    with pytest.raises(InputError) as caught:
        one_event(site)
    assert proof_rel in str(caught.value), caught.value


def test_a_v2_demo_is_still_a_v2_site(demo_site: BuiltSite) -> None:
    manifest = json.loads((demo_site.out / layout.MANIFEST).read_bytes())
    assert manifest["v"] == 1 and manifest["ledger"]["entries"] == layout.ENTRIES
    assert (demo_site.out / layout.ENTRIES).is_file()
    assert json.loads((demo_site.out / layout.HISTORY).read_bytes())["v"] == 1
    assert run_verifier(VERIFY_SRC, str(demo_site.out), "--no-state").rc == 0
