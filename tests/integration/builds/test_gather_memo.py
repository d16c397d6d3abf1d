"""A build after one event takes the runs and certificates the last build checked from its memo
(generator/state/gather_cache.py), reading none of their files; and whatever was changed behind
its back, it still reports every problem and gathers what a gathering from scratch gathers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import generator.state.build_cache as build_cache
from generator.build.gather import SiteContext, gather
from generator.commands.build import build
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.state.gather_cache import GATHER_NAME
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


def test_forged_facts_under_a_stale_key_are_not_taken(built: BuiltSite, tmp_path: Path) -> None:
    site = _again(built, tmp_path)
    memo = site.paths.private / "cache" / GATHER_NAME
    doc = json.loads(memo.read_bytes())
    serial, (key, text) = next(iter(doc["certificates"].items()))
    facts = json.loads(text)
    facts["extra"] = ["b-9999"]  # the key no longer covers the items the check looked at
    facts["grade"] = "forged"
    doc["certificates"][serial] = [key, json.dumps(facts)]
    memo.write_text(json.dumps(doc))
    ctx = _gathered(site)
    taken = next(c for c in ctx.certificates if c.serial == serial)
    assert taken.grade != "forged"


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


def test_a_one_event_build_keeps_the_memo_and_is_the_build_from_scratch(built: BuiltSite, tmp_path: Path) -> None:
    site = _again(built, tmp_path)
    full = tmp_path / "full"
    shutil.copytree(site.out, full)  # a v3 site keeps the proofs of the release before
    one_event(site)
    memo = json.loads((site.paths.private / "cache" / GATHER_NAME).read_bytes())
    ctx = _gathered(site)
    assert memo["size"] == ctx.ledger.size
    assert set(memo["runs"]) == {r.id for r in ctx.runs}
    build(site.paths, full, offline=True, full=True)
    assert BuiltSite(site.paths, full).files() == site.files()
