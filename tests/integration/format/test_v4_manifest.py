"""Format v4 (docs/formats/v4.md) end to end: the demo built as a v4 program verifies, its manifest
is an index of parts that other people's JSON tools read as the format says, a one-event release
rewrites the index and the parts its rows are in and keeps every other part's bytes, and a build
never turns a v3 site into a v4 one."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from click.testing import CliRunner

from generator.cli import main
from generator.core import layout
from tests.support.demo import BuiltSite
from tests.support.schemas import validator
from tests.support.tamper import VERIFY_SRC, run_verifier
from tests.support.v3 import one_event, v3_demo

LISTS = ("reveals", "runs", "certificates")


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> tuple[BuiltSite, Path, str]:
    """A v4 demo, a copy of its first release, and its second release after one retirement."""
    root = tmp_path_factory.mktemp("v4")
    site = v3_demo(root, fmt=4)
    first = root / "first"
    shutil.copytree(site.out, first)
    item = one_event(site)
    return site, first, item


def whole_lists(site: Path) -> dict[str, list[Any]]:
    """Each parted list read back as a reader outside this project would: the index, then each
    part it names, held to the SHA-256 the index gives it."""
    index = json.loads((site / layout.MANIFEST).read_bytes())
    found: dict[str, list[Any]] = {}
    for name in LISTS:
        rows: list[Any] = []
        for part in index[name]["parts"]:
            data = (site / part["path"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == part["sha256"]
            doc = json.loads(data)
            assert len(doc["rows"]) == part["count"]
            rows += doc["rows"]
        assert len(rows) == index[name]["count"]
        found[name] = rows
    return found


def test_both_releases_of_a_v4_site_verify(releases: tuple[BuiltSite, Path, str]) -> None:
    site, first, _ = releases
    for folder in (first, site.out):
        r = run_verifier(VERIFY_SRC, str(folder), "--no-state")
        assert r.rc == 0, r.text[-3000:]
        assert "PASS" in r.out


def test_the_manifest_is_an_index_of_its_parts(releases: tuple[BuiltSite, Path, str]) -> None:
    site, _first, item = releases
    index = json.loads((site.out / layout.MANIFEST).read_bytes())
    assert index["v"] == 4 and "entries" not in index["ledger"]
    for name in LISTS:
        assert set(index[name]) == {"count", "parts"}
        for k, part in enumerate(index[name]["parts"]):
            assert part["path"] == f"manifest/{name}/{k}.json" == layout.manifest_part(name, k)
    rows = whole_lists(site.out)
    assert rows["reveals"][-1]["id"] == item


def test_the_rows_are_those_a_v3_manifest_lists_whole(releases: tuple[BuiltSite, Path, str], tmp_path: Path) -> None:
    _, first, _ = releases
    v3 = v3_demo(tmp_path, fmt=3)
    manifest = json.loads((v3.out / layout.MANIFEST).read_bytes())
    assert whole_lists(first) == {name: manifest[name] for name in LISTS}


def test_the_parts_are_canonical_json_and_sha256sum_agrees(releases: tuple[BuiltSite, Path, str]) -> None:
    site, _, _ = releases
    index = json.loads((site.out / layout.MANIFEST).read_bytes())
    for name in LISTS:
        for part in index[name]["parts"]:
            data = (site.out / part["path"]).read_bytes()
            assert rfc8785.dumps(json.loads(data)) == data, part["path"]
            out = subprocess.run(
                ["sha256sum", part["path"]], cwd=site.out, capture_output=True, text=True, check=True
            ).stdout
            assert out.split()[0] == part["sha256"]
    assert rfc8785.dumps(index) == (site.out / layout.MANIFEST).read_bytes()


def test_the_v4_documents_meet_their_schemas(releases: tuple[BuiltSite, Path, str]) -> None:
    site, _, _ = releases
    checked = []
    for p in sorted(site.out.rglob("*.json")):
        rel = p.relative_to(site.out).as_posix()
        if rel != layout.MANIFEST and not rel.startswith("manifest/"):
            continue
        schema = layout.schema_for(rel)
        assert schema is not None, rel
        validator(Path(schema).name.removesuffix(".schema.json")).validate(json.loads(p.read_bytes()))
        checked.append(rel)
    assert {layout.MANIFEST, *(layout.manifest_part(n, 0) for n in LISTS)} <= set(checked)


def test_a_v4_manifest_fails_a_v3_schema_reading(releases: tuple[BuiltSite, Path, str]) -> None:
    """The schema's v 4 branch is what admits the index: the same index called v 3 does not pass."""
    site, _, _ = releases
    index = json.loads((site.out / layout.MANIFEST).read_bytes())
    errors = list(validator("transparency-manifest").iter_errors({**index, "v": 3}))
    assert errors


def test_a_one_event_release_rewrites_only_the_parts_its_rows_are_in(
    releases: tuple[BuiltSite, Path, str],
) -> None:
    site, first, _ = releases
    changed = {
        p.relative_to(site.out).as_posix()
        for p in (site.out / "manifest").rglob("*.json")
        if not (first / p.relative_to(site.out)).is_file()
        or p.read_bytes() != (first / p.relative_to(site.out)).read_bytes()
    }
    before, after = whole_lists(first), whole_lists(site.out)
    rows = 256
    moved = {
        layout.manifest_part(name, i // rows)
        for name in LISTS
        for i in range(len(after[name]))
        if i >= len(before[name]) or after[name][i] != before[name][i]
    }
    # A retirement adds a reveal (the reveals' last part) and publishes the details of the
    # certificates that used the item (their rows); no run changed status.
    assert "manifest/reveals/0.json" in moved and not any(p.startswith("manifest/runs/") for p in moved)
    assert changed == moved


def test_a_build_never_turns_a_v3_site_into_v4(tmp_path: Path) -> None:
    site = v3_demo(tmp_path)
    f = site.paths.data / "program.yaml"
    f.write_text(f.read_text(encoding="utf-8").replace("format: 3\n", "format: 4\n"), encoding="utf-8")
    argv = ["--data", str(site.paths.data), "build", "--offline", "--out", str(site.out)]
    result = CliRunner().invoke(main, argv, prog_name="transparency")
    assert result.exit_code != 0, result.output
    said = result.output + result.stderr
    assert "format v3" in said and "format 4" in said, said


def test_a_later_format_is_a_site_this_verifier_cannot_judge(
    releases: tuple[BuiltSite, Path, str], tmp_path: Path
) -> None:
    """Exit 2, never 1: a manifest of format v5 is not a failed v4 site."""
    site, _, _ = releases
    out = tmp_path / "public"
    shutil.copytree(site.out, out)
    index = json.loads((out / layout.MANIFEST).read_bytes())
    (out / layout.MANIFEST).write_bytes(rfc8785.dumps({**index, "v": 5}))
    r = run_verifier(VERIFY_SRC, str(out), "--no-state")
    assert r.rc == 2 and "format v5" in r.text and "never the copy the site ships" in r.text, r.text[-2000:]


def test_program_yaml_names_format_4_among_the_choices(tmp_path: Path) -> None:
    site = v3_demo(tmp_path)
    f = site.paths.data / "program.yaml"
    f.write_text(f.read_text(encoding="utf-8").replace("format: 3\n", "format: 5\n"), encoding="utf-8")
    argv = ["--data", str(site.paths.data), "build", "--offline", "--out", str(tmp_path / "other")]
    result = CliRunner().invoke(main, argv, prog_name="transparency")
    said = result.output + result.stderr
    assert result.exit_code != 0 and "format" in said and "2 or 3 or 4" in said, said
