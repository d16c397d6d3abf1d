"""A build after one event takes the runs and certificates the last build checked from its memo
(generator/state/gather_cache.py), reading none of their files; and whatever was changed behind
its back, it still reports every problem and gathers what a gathering from scratch gathers."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import generator.commands.build as build_module
import generator.state.build_cache as build_cache
from generator.build.gather import SiteContext, gather
from generator.commands.build import build
from generator.core import child_process
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.state.gather_cache import GATHER_NAME, GatherMemo
from generator.state.hash_index_cache import load_index
from tests.support.demo import BuiltSite
from tests.support.v3 import one_event, v3_demo


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    site = v3_demo(tmp_path_factory.mktemp("memo"))
    one_event(site)
    return site


def _again(site: BuiltSite, tmp_path: Path) -> BuiltSite:
    """A copy of the built program (data, private caches and site) to change."""
    root = tmp_path / "copy"
    shutil.copytree(site.paths.data.parent, root, symlinks=True)
    data = root / site.paths.data.name
    return BuiltSite(Paths(data, data / site.paths.private.relative_to(site.paths.data)), root / site.out.name)


def _gathered(site: BuiltSite) -> SiteContext:
    """What a build's gathering finds, given its reading of the inputs."""
    inputs = build_cache.read_inputs(site.paths, site.out, True, load_index(site.paths))
    return gather(site.paths, files=inputs.files)


def _from_scratch(site: BuiltSite) -> SiteContext:
    return gather(site.paths, use_snapshot=False)


def test_the_memo_is_used_and_gathers_what_a_full_gathering_does(built: BuiltSite) -> None:
    remembered = _gathered(built)
    memo = remembered.caches.gathered if remembered.caches else None
    assert memo is not None
    runs, certificates = len(remembered.runs), len(remembered.certificates)
    assert runs and certificates
    # Every run is taken; every certificate whose run no label set measures.
    measured = {e.run for e in remembered.ledger.label_sets.values()}
    assert memo.used == runs + sum(1 for c in remembered.certificates if c.run not in measured)
    full = _from_scratch(built)
    assert remembered.runs == full.runs
    assert remembered.certificates == full.certificates


def test_a_memo_of_another_ledger_is_not_used(built: BuiltSite, tmp_path: Path) -> None:
    site = _again(built, tmp_path)
    memo = site.paths.private / "cache" / GATHER_NAME
    doc = json.loads(memo.read_bytes())
    doc["root"] = "00" * 32
    memo.write_text(json.dumps(doc))
    ctx = _gathered(site)
    assert ctx.caches is not None and ctx.caches.gathered.used == 0
    assert ctx.certificates == _from_scratch(site).certificates


@pytest.mark.parametrize("damage", ["not json", "[]", '{"v": 1}'])
def test_a_damaged_memo_is_ignored(built: BuiltSite, tmp_path: Path, damage: str) -> None:
    site = _again(built, tmp_path)
    (site.paths.private / "cache" / GATHER_NAME).write_text(damage)
    ctx = _gathered(site)
    assert ctx.caches is not None and ctx.caches.gathered.used == 0
    assert ctx.runs == _from_scratch(site).runs


def _forge(site: BuiltSite, change: Callable[[dict[str, Any]], None], checked: bool) -> str:
    """The first remembered certificate's facts changed by `change`, under its key (and, if
    `checked`, with the check of the new text, as a writer of the memo would make it)."""
    memo = site.paths.private / "cache" / GATHER_NAME
    doc = json.loads(memo.read_bytes())
    serial, (key, text, check) = next(iter(doc["certificates"].items()))
    facts = json.loads(text)
    change(facts)
    text = json.dumps(facts)
    if checked:
        check = hashlib.sha256(f"{key}\n{text}".encode()).hexdigest()
    doc["certificates"][serial] = [key, text, check]
    memo.write_text(json.dumps(doc))
    return str(serial)


def _stale_extra(facts: dict[str, Any]) -> None:
    facts["extra"] = ["b-9999"]  # the key no longer covers the items the check looked at
    facts["grade"] = "forged"


def _grade(facts: dict[str, Any]) -> None:
    facts["grade"] = "forged"


@pytest.mark.parametrize(("change", "checked"), [(_stale_extra, True), (_grade, False)])
def test_facts_under_a_stale_key_or_a_broken_check_are_not_taken(
    built: BuiltSite, tmp_path: Path, change: Callable[[dict[str, Any]], None], checked: bool
) -> None:
    site = _again(built, tmp_path)
    serial = _forge(site, change, checked)
    ctx = _gathered(site)
    taken = next(c for c in ctx.certificates if c.serial == serial)
    assert taken.grade != "forged"
    assert ctx.certificates == _from_scratch(site).certificates


def test_a_damaged_entry_costs_a_check_not_the_build(built: BuiltSite, tmp_path: Path) -> None:
    site = _again(built, tmp_path)
    memo = site.paths.private / "cache" / GATHER_NAME
    doc = json.loads(memo.read_bytes())
    first, second = list(doc["runs"])[:2]
    doc["runs"][first][1] = "\ud800"  # a lone surrogate, which JSON lets through and UTF-8 refuses
    doc["runs"][second] = doc["runs"][second][:1]  # a key without its spec
    memo.write_text(json.dumps(doc))
    _forge(site, lambda f: f.update(score=float("inf")), True)
    ctx = _gathered(site)
    full = _from_scratch(site)
    assert ctx.runs == full.runs and ctx.certificates == full.certificates


def test_a_changed_spec_is_reported_though_remembered(built: BuiltSite, tmp_path: Path) -> None:
    site = _again(built, tmp_path)
    spec = site.paths.run_spec_file(_first_run(site))
    spec.write_bytes(spec.read_bytes().replace(b'"v":1', b'"v":1 '))
    with pytest.raises(InputError) as e:
        _gathered(site)
    assert any(p.file == site.paths.show(spec) and "does not hash" in p.message for p in e.value.problems)


def _first_run(site: BuiltSite) -> str:
    return sorted(p.stem for p in site.paths.runs_dir.glob("*.json"))[0]


def test_a_missing_or_changed_due_document_is_reported_though_remembered(built: BuiltSite, tmp_path: Path) -> None:
    site = _again(built, tmp_path)
    due = sorted(site.paths.certificates_dir.glob("*/details/*.json")) + sorted(
        site.paths.certificates_dir.glob("*/grader-record.json")
    )
    assert len(due) >= 2
    due[0].unlink()
    due[1].write_bytes(due[1].read_bytes() + b" ")
    with pytest.raises(InputError) as e:
        _gathered(site)
    named = {p.file for p in e.value.problems}
    assert site.paths.show(due[0]) in named and site.paths.show(due[1]) in named


def test_a_stray_file_beside_a_remembered_certificate_is_reported(
    built: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _again(built, tmp_path)
    serial = sorted(p.stem for p in site.paths.certificates_dir.glob("*.json"))[0]
    stray = site.paths.certificates_dir / serial / "details" / "planted.json"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_text("{}")
    inputs = build_cache.read_inputs(site.paths, site.out, True, load_index(site.paths))
    taken: list[str] = []
    real = GatherMemo.certificate

    def certificate(self: GatherMemo, serial: str, key_of: Any) -> Any:
        found = real(self, serial, key_of)
        if found is not None:
            taken.append(serial)
        return found

    monkeypatch.setattr(GatherMemo, "certificate", certificate)
    with pytest.raises(InputError) as e:
        gather(site.paths, files=inputs.files)
    assert serial in taken  # the certificate beside it was taken from the memo
    assert [p.file for p in e.value.problems] == [site.paths.show(stray)]


def test_a_stray_file_is_reported_when_the_inputs_were_not_listed(built: BuiltSite, tmp_path: Path) -> None:
    # A link among the inputs makes the record give up on them: the build then walks for itself.
    site = _again(built, tmp_path)
    os.symlink(site.paths.program_file, site.paths.data / "program-link.yaml")
    serial = sorted(p.stem for p in site.paths.certificates_dir.glob("*.json"))[0]
    stray = site.paths.certificates_dir / serial / "details" / "planted.json"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_text("{}")
    with pytest.raises(InputError) as e:
        build(site.paths, site.out, offline=True)
    assert site.paths.show(stray) in {p.file for p in e.value.problems}


def test_a_changed_certificate_and_a_stray_file_are_reported_though_remembered(
    built: BuiltSite, tmp_path: Path
) -> None:
    site = _again(built, tmp_path)
    cert = sorted(site.paths.certificates_dir.glob("*.json"))[0]
    cert.write_bytes(cert.read_bytes() + b"\n")
    stray = site.paths.certificates_dir / cert.stem / "details" / "planted.json"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_text("{}")
    with pytest.raises(InputError) as e:
        _gathered(site)
    named = {p.file for p in e.value.problems}
    assert site.paths.show(cert) in named and site.paths.show(stray) in named


def test_a_one_event_build_takes_the_memo_and_is_the_build_from_scratch(
    built: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _again(built, tmp_path)
    full = tmp_path / "full"
    shutil.copytree(site.out, full)  # a v3 site keeps the proofs of the release before
    used: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> SiteContext:
        ctx = gather(*args, **kwargs)
        used.append(ctx.caches.gathered.used if ctx.caches else 0)
        return ctx

    monkeypatch.setattr(child_process, "FORK", False)  # the writing in this process, to be seen
    monkeypatch.setattr(build_module, "gather", counted)
    retired = one_event(site)
    monkeypatch.undo()
    full_ctx = _from_scratch(site)
    measured = {e.run for e in full_ctx.ledger.label_sets.values()}
    # Every run and certificate the retirement did not touch (none of their items is the one
    # retired), but the certificates of runs a label set measures.
    untouched = [r.id for r in full_ctx.runs if retired not in r.spec["items"]]
    assert len(untouched) < len(full_ctx.runs)  # the event did touch some: they are checked again
    certificates = [c for c in full_ctx.certificates if c.run in untouched and c.run not in measured]
    assert certificates
    assert used == [len(untouched) + len(certificates)]
    memo = json.loads((site.paths.private / "cache" / GATHER_NAME).read_bytes())
    ctx = _gathered(site)
    assert memo["size"] == ctx.ledger.size
    assert set(memo["runs"]) == {r.id for r in ctx.runs}
    build(site.paths, full, offline=True, full=True)
    assert BuiltSite(site.paths, full).files() == site.files()
