"""A format v4 site (docs/formats/v4.md) changed by a key holder, who re-signs the checksum list
after each change: each makes `verify.py` exit 1 and name the file at fault (a part, or the
manifest for a row whose part is self-consistent)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.core import layout
from tests.support.demo import BuiltSite
from tests.support.tamper import VERIFY_SRC, run_verifier, write_canonical
from tests.support.v3 import hide, one_event, v3_demo


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    site = v3_demo(tmp_path_factory.mktemp("v4"), fmt=4)
    one_event(site)
    return site


@pytest.fixture
def site(released: BuiltSite, tmp_path: Path) -> BuiltSite:
    out = tmp_path / "public"
    shutil.copytree(released.out, out)
    return BuiltSite(released.paths, out)


def index_of(site: BuiltSite) -> dict[str, Any]:
    return dict(json.loads((site.out / layout.MANIFEST).read_bytes()))


def part_of(site: BuiltSite, name: str) -> tuple[str, dict[str, Any]]:
    rel = layout.manifest_part(name, 0)
    return rel, dict(json.loads((site.out / rel).read_bytes()))


def reindex(site: BuiltSite, name: str, data: bytes, count: int | None = None) -> None:
    """The index made to name the part's new bytes (and row count), as a key holder would."""
    index = index_of(site)
    index[name]["parts"][0]["sha256"] = hashlib.sha256(data).hexdigest()
    if count is not None:
        index[name]["parts"][0]["count"] = count
        index[name]["count"] = count
    write_canonical(site.out, layout.MANIFEST, index)


def change_a_part_behind_its_index(site: BuiltSite) -> str:
    """A run's status changed in its part, the index left as it was."""
    rel, part = part_of(site, "runs")
    part["rows"][0]["status"] = "withdrawn"
    write_canonical(site.out, rel, part)
    return rel


def change_a_row_and_its_index(site: BuiltSite) -> str:
    """A run's status changed, the index's SHA-256 made again: the row's check against the ledger
    fails, named at the manifest (the note says where the row is)."""
    rel, part = part_of(site, "runs")
    part["rows"][0]["status"] = "withdrawn"
    reindex(site, "runs", write_canonical(site.out, rel, part))
    return layout.MANIFEST


def drop_a_row(site: BuiltSite) -> str:
    """The last reveal dropped from its part, the index's count and SHA-256 made to agree."""
    rel, part = part_of(site, "reveals")
    part["rows"].pop()
    reindex(site, "reveals", write_canonical(site.out, rel, part), len(part["rows"]))
    return layout.MANIFEST


def swap_two_parts_lists(site: BuiltSite) -> str:
    """The runs' part given the certificates' list name, its index entry made to match."""
    rel, part = part_of(site, "runs")
    part["list"] = "certificates"
    reindex(site, "runs", write_canonical(site.out, rel, part))
    return rel


def a_part_out_of_place(site: BuiltSite) -> str:
    """The index names the part at another path (a copy of it there)."""
    index = index_of(site)
    other = "manifest/runs/extra.json"
    shutil.copyfile(site.out / layout.manifest_part("runs", 0), site.out / other)
    index["runs"]["parts"][0]["path"] = other
    write_canonical(site.out, layout.MANIFEST, index)
    return layout.MANIFEST


def a_stray_part(site: BuiltSite) -> str:
    """A second part of the runs that the index does not name."""
    rel = layout.manifest_part("runs", 1)
    shutil.copyfile(site.out / layout.manifest_part("runs", 0), site.out / rel)
    return rel


def remove_a_part(site: BuiltSite) -> str:
    rel = layout.manifest_part("certificates", 0)
    (site.out / rel).unlink()
    return rel


def lists_whole_in_a_v4_manifest(site: BuiltSite) -> str:
    """The lists put back whole in the index: a v4 manifest's lists are indexes of parts."""
    index = index_of(site)
    for name in ("reveals", "runs", "certificates"):
        rows: list[Any] = []
        for part in index[name]["parts"]:
            rows += json.loads((site.out / part["path"]).read_bytes())["rows"]
            (site.out / part["path"]).unlink()
        index[name] = rows
    write_canonical(site.out, layout.MANIFEST, index)
    return layout.MANIFEST


TAMPERS: dict[str, Callable[[BuiltSite], str]] = {
    "a part changed behind its index": change_a_part_behind_its_index,
    "a row changed and its index with it": change_a_row_and_its_index,
    "a row dropped, the counts made to agree": drop_a_row,
    "a part given another list's name": swap_two_parts_lists,
    "a part out of place": a_part_out_of_place,
    "a stray part": a_stray_part,
    "a part removed": remove_a_part,
    "the lists whole in a v4 manifest": lists_whole_in_a_v4_manifest,
}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_a_changed_v4_site_fails_naming_the_file(site: BuiltSite, name: str) -> None:
    rel = TAMPERS[name](site)
    hide(site)
    r = run_verifier(VERIFY_SRC, str(site.out), "--no-state")
    assert r.rc == 1, r.text[-3000:]
    assert r.names_file(rel), r.fail_lines()


def test_a_row_failure_says_where_the_row_is(site: BuiltSite) -> None:
    change_a_row_and_its_index(site)
    hide(site)
    r = run_verifier(VERIFY_SRC, str(site.out), "--no-state")
    assert r.rc == 1 and "manifest/<list>/<k>.json" in r.out, r.text[-3000:]


def test_the_untouched_copy_passes(site: BuiltSite) -> None:
    hide(site)
    r = run_verifier(VERIFY_SRC, str(site.out), "--no-state")
    assert r.rc == 0, r.text[-3000:]
