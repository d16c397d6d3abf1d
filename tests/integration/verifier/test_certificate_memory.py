"""A certificate or a run that passed in the release verified last is not read again while
nothing its check read has changed (generator/verifier/site/certificate_memo.py, run_memo.py),
and is checked in full, with the verdict a check from nothing gives, as soon as something has:
an item of its run revealed, a file it names changed, a document it must publish hidden by the
key holder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import generator.verifier as v
import generator.verifier.site.certificate_files as certificate_files
import generator.verifier.site.publication as publication
from generator.commands.build import build
from generator.commands.retire import retire_items
from generator.core.signing_key import load_key
from tests.support.tamper import MANIFEST, SEALED_ITEM, read_json, resign, resign_sums, write_canonical

ORCA = "orca-b-1"  # a certificate of a secret-gate run of the demo
ORCA_ITEM = "b-0017"  # one of its items, still sealed


def remembered(site: Path) -> list[tuple[str, bytes, str | None]]:
    origin = v.verify_site(site).tree["origin"]
    return [("state", (site / "ledger" / "checkpoint").read_bytes(), origin)]


def verified_then_retired(demo_copy: Any, tmp_path: Path, item: str) -> tuple[Path, Any]:
    """The demo verified with a memory, then `item` retired and the site built again: the memory
    and the checkpoint the state remembers."""
    memory, since = tmp_path / "releases", remembered(demo_copy.out)
    assert v.verify_site(demo_copy.out, since=since, memory=memory).ok
    retire_items(demo_copy.paths, [item], "One more.", "2027-01-01T00:00:00Z")
    build(demo_copy.paths, demo_copy.out, offline=True)
    return memory, since


def checked_in_full(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The serials of the certificates read and checked in full from here on."""
    seen: list[str] = []
    check = certificate_files._check_one_certificate

    def spy(c: Any, r: dict[str, Any]) -> Any:
        seen.append(str(r.get("serial")))
        return check(c, r)

    monkeypatch.setattr(certificate_files, "_check_one_certificate", spy)
    return seen


def runs_checked_in_full(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The runs whose spec is read and checked in full from here on."""
    seen: list[str] = []
    check = publication._check_run

    def spy(s: Any, row: dict[str, Any], run: Any, *rest: Any) -> Any:
        seen.append(run.id)
        return check(s, row, run, *rest)

    monkeypatch.setattr(publication, "_check_run", spy)
    return seen


def measured(site: Path) -> set[str]:
    """The certificates of runs a label set measures: always checked in full."""
    entries = json.loads((site / "ledger" / "entries.json").read_bytes())["entries"]
    runs = {e["run"] for e in entries if e.get("type") == "label-set"}
    return {e["serial"] for e in entries if e.get("type") == "certificate" and e["run"] in runs}


def measured_runs(site: Path) -> set[str]:
    entries = json.loads((site / "ledger" / "entries.json").read_bytes())["entries"]
    return {e["run"] for e in entries if e.get("type") == "label-set"}


def holding(site: Path, item: str) -> set[str]:
    """The certificates with a result for `item`."""
    rows = read_json(site, MANIFEST)["certificates"]
    return {r["serial"] for r in rows if any(x.get("item") == item for x in read_json(site, r["path"])["results"])}


def failed(report: Any) -> list[str]:
    return sorted(p.describe() for p in report.failures)


def test_after_an_unrelated_event_no_certificate_is_read_again(
    demo_copy: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, since = verified_then_retired(demo_copy, tmp_path, SEALED_ITEM)
    seen, runs = checked_in_full(monkeypatch), runs_checked_in_full(monkeypatch)
    after = v.verify_site(demo_copy.out, since=since, memory=memory)
    assert after.ok, failed(after)
    assert sorted(seen) == sorted(measured(demo_copy.out))
    assert sorted(runs) == sorted(measured_runs(demo_copy.out))
    monkeypatch.undo()
    full = v.verify_site(demo_copy.out, since=since)
    assert after.counts == full.counts and after.asserted == full.asserted and after.notes[-3:] == full.notes[-3:]


def test_a_reveal_of_one_of_its_items_has_a_certificate_checked_again(
    demo_copy: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, since = verified_then_retired(demo_copy, tmp_path, ORCA_ITEM)
    seen, runs = checked_in_full(monkeypatch), runs_checked_in_full(monkeypatch)
    after = v.verify_site(demo_copy.out, since=since, memory=memory)
    assert after.ok, failed(after)
    assert ORCA in holding(demo_copy.out, ORCA_ITEM)
    assert sorted(seen) == sorted(holding(demo_copy.out, ORCA_ITEM) | measured(demo_copy.out))
    # The demo's certificates are of the runs of the same names.
    assert sorted(runs) == sorted(holding(demo_copy.out, ORCA_ITEM) | measured_runs(demo_copy.out))
    # Remembered again under its new key: the next run reads it no more.
    since = remembered(demo_copy.out)
    seen.clear()
    assert v.verify_site(demo_copy.out, since=since, memory=memory).ok
    assert sorted(seen) == sorted(measured(demo_copy.out))


def test_a_due_document_the_key_holder_hides_fails_from_the_memory_as_from_nothing(
    demo_copy: Any, tmp_path: Path
) -> None:
    """An item of the certificate is revealed, so its details document is due; the key holder
    publishes the release with the certificate's row and every file it names as they were when
    it passed (no details document for the item, the exports of before), every list and
    signature remade. Only the reveal tells the memory to look again."""
    memory, since = tmp_path / "releases", remembered(demo_copy.out)
    assert v.verify_site(demo_copy.out, since=since, memory=memory).ok
    old_row = next(r for r in read_json(demo_copy.out, MANIFEST)["certificates"] if r["serial"] == ORCA)
    named = [old_row["path"], old_row["path"] + ".sig", *old_row["details"], *old_row.get("exports", [])]
    old_files = {rel: (demo_copy.out / rel).read_bytes() for rel in named}
    retire_items(demo_copy.paths, [ORCA_ITEM], "One more.", "2027-01-01T00:00:00Z")
    build(demo_copy.paths, demo_copy.out, offline=True)
    manifest = read_json(demo_copy.out, MANIFEST)
    row = next(r for r in manifest["certificates"] if r["serial"] == ORCA)
    assert len(row["details"]) == len(old_row["details"]) + 1, "the build publishes the due document"
    for rel in set(row["details"]) - set(old_row["details"]):
        (demo_copy.out / rel).unlink()
    row.clear()
    row.update(old_row)
    for rel, data in old_files.items():
        (demo_copy.out / rel).write_bytes(data)
    write_canonical(demo_copy.out, MANIFEST, manifest)
    resign_sums(demo_copy.out, load_key(demo_copy.paths.key_file))
    from_memory = v.verify_site(demo_copy.out, since=since, memory=memory)
    from_nothing = v.verify_site(demo_copy.out, since=since)
    hidden = f"item {ORCA_ITEM} is revealed but its details document is not published"
    assert any(hidden in f for f in failed(from_nothing))
    assert failed(from_memory) == failed(from_nothing)


def test_a_certificate_file_re_signed_with_other_bytes_is_checked_again(
    demo_copy: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, since = tmp_path / "releases", remembered(demo_copy.out)
    assert v.verify_site(demo_copy.out, since=since, memory=memory).ok
    signer = load_key(demo_copy.paths.key_file)
    rows = read_json(demo_copy.out, MANIFEST)["certificates"]
    # One the key of today signed (Ed25519 signs the same bytes the same way): re-signed, it
    # verifies. Not one a label set measures: that one is checked in full every time.
    row = next(
        r
        for r in rows
        if signer.sign((demo_copy.out / r["path"]).read_bytes()) == (demo_copy.out / (r["path"] + ".sig")).read_bytes()
        and r["serial"] not in measured(demo_copy.out)
    )
    cert = read_json(demo_copy.out, row["path"])
    cert["grade"] = "S" if cert["grade"] != "S" else "A"
    write_canonical(demo_copy.out, row["path"], cert)
    resign(demo_copy.out, row["path"], signer)
    resign_sums(demo_copy.out, signer)
    seen = checked_in_full(monkeypatch)
    from_memory = v.verify_site(demo_copy.out, since=since, memory=memory)
    assert row["serial"] in seen
    monkeypatch.undo()
    from_nothing = v.verify_site(demo_copy.out, since=since)
    assert any(f"certificates/{row['serial']}.json.sig" not in f and row["serial"] in f for f in failed(from_nothing))
    assert not from_memory.ok and failed(from_memory) == failed(from_nothing)


def test_a_run_spec_re_signed_with_other_bytes_is_checked_again(
    demo_copy: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remembered run whose spec the key holder replaced (another question, the lists remade)
    is read again, and fails as it fails from nothing; its certificate, checked in full, reads
    the spec itself."""
    memory, since = tmp_path / "releases", remembered(demo_copy.out)
    assert v.verify_site(demo_copy.out, since=since, memory=memory).ok
    rel = next(r["spec"] for r in read_json(demo_copy.out, MANIFEST)["runs"] if r["id"] == ORCA)
    spec = read_json(demo_copy.out, rel)
    spec["question"] += " Again."
    write_canonical(demo_copy.out, rel, spec)
    resign_sums(demo_copy.out, load_key(demo_copy.paths.key_file))
    runs = runs_checked_in_full(monkeypatch)
    from_memory = v.verify_site(demo_copy.out, since=since, memory=memory)
    assert ORCA in runs
    monkeypatch.undo()
    from_nothing = v.verify_site(demo_copy.out, since=since)
    assert any(f"SHA-256 differs from run {ORCA}'s ledger leaf" in f for f in failed(from_nothing))
    assert not from_memory.ok and failed(from_memory) == failed(from_nothing)


def test_a_methodology_file_re_signed_with_other_rules_fails_from_the_memory_as_from_nothing(
    demo_copy: Any, tmp_path: Path
) -> None:
    """Each methodology's parameters asking for more items than any run has, the lists remade:
    the file no longer hashes to its leaf, and is parsed all the same; the runs and certificates
    checked against it must be checked against what was parsed, from the memory too."""
    memory, since = tmp_path / "releases", remembered(demo_copy.out)
    assert v.verify_site(demo_copy.out, since=since, memory=memory).ok
    for row in read_json(demo_copy.out, MANIFEST)["methodology"]:
        doc = read_json(demo_copy.out, row["parameters"])
        doc["certify"]["min_items_secret_gate"] = 1000
        write_canonical(demo_copy.out, row["parameters"], doc)
    resign_sums(demo_copy.out, load_key(demo_copy.paths.key_file))
    from_memory = v.verify_site(demo_copy.out, since=since, memory=memory)
    from_nothing = v.verify_site(demo_copy.out, since=since)
    assert any("too few items for a secret gate" in f for f in failed(from_nothing))
    assert failed(from_memory) == failed(from_nothing)
    assert from_memory.checks == from_nothing.checks
