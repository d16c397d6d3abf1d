"""Format v3's checksum list as a tree and its download in parts (docs/formats/v3.md, 5 and 6),
and format v4's, split by bits (docs/formats/v4.md, 3): a build verifies, checks with sha256sum,
openssl and unzip, its tree has the shape of its paths, a second release gives new bytes only to
the lists and parts on the changed files' paths, and the verifier fails a tampered tree or part,
naming the file. Every test runs on a v3 and a v4 site."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.commands.build import build
from generator.commands.retire import retire_items
from generator.core import layout
from generator.core.signing_key import load_key
from generator.program.datadir import Paths
from generator.verifier import Report, TreeRule, is_tree_file, list_path, part_path, tree_rule, verify_site
from tests.support.demo import BUNDLE, BuiltSite, copy_demo_data
from tests.support.programs import new_program
from tests.support.tamper import resign_sums

RETIRED = 300  # with the pages they bring, more than 64*16 files: leaves two digits deep
FORMATS = [3, 4]


def as_v3(paths: Paths, fmt: int = 3) -> Paths:
    yaml = paths.data / "program.yaml"
    yaml.write_text(yaml.read_text(encoding="utf-8") + f"format: {fmt}\n", encoding="utf-8")
    return paths


def rule_of(site: BuiltSite) -> TreeRule:
    return tree_rule(4 if "format: 4" in (site.paths.data / "program.yaml").read_text(encoding="utf-8") else 3)


@pytest.fixture(scope="module", params=FORMATS)
def large_v3(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> BuiltSite:
    root = tmp_path_factory.mktemp(f"v{request.param}")
    paths = as_v3(new_program(root / "data", secret_items=RETIRED + 20, retired=0), request.param)
    retire_items(paths, [f"b-{i:04d}" for i in range(1, RETIRED + 1)], "Retired.", "2026-02-01T00:00:00Z")
    build(paths, root / "public", offline=True)
    return BuiltSite(paths, root / "public")


@pytest.fixture(scope="module", params=FORMATS)
def demo_v3(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> BuiltSite:
    root = tmp_path_factory.mktemp(f"demo-v{request.param}")
    paths = as_v3(copy_demo_data(root / "data"), request.param)
    build(paths, root / "public", offline=True)
    return BuiltSite(paths, root / "public")


@pytest.fixture
def tampered(demo_v3: BuiltSite, tmp_path: Path) -> Iterator[BuiltSite]:
    out = tmp_path / "public"
    shutil.copytree(demo_v3.out, out)
    yield BuiltSite(demo_v3.paths, out)


def files_of(site: Path) -> dict[str, str]:
    return {
        p.relative_to(site).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in site.rglob("*")
        if p.is_file()
    }


def failures(site: Path) -> list[str]:
    report: Report = verify_site(site)
    return [p.describe() for p in report.failures]


def reseal(site: BuiltSite) -> None:
    """As an operator holding the key would after editing a leaf's list or a part: every inner
    list's lines made again from the files they name, deepest first, and SHA256SUMS signed."""
    out = site.out
    inner = []
    for lst in [*out.glob("sums/*.sha256"), out / layout.SUMS]:
        names = [line.split("  ", 1)[1] for line in lst.read_text().splitlines()]
        if lst.name == layout.SUMS or any(n.startswith("sums/") for n in names):
            inner.append((lst, names))
    for lst, names in sorted(inner, key=lambda r: -len(r[0].stem) if r[0].name != layout.SUMS else 1):
        lst.write_text("".join(f"{hashlib.sha256((out / n).read_bytes()).hexdigest()}  {n}\n" for n in names))
    data = (out / layout.SUMS).read_bytes()
    (out / layout.SUMS_SIG).write_bytes(load_key(site.paths.key_file).sign(data))


def test_a_v3_site_verifies_and_its_tree_is_the_shape_of_its_paths(large_v3: BuiltSite) -> None:
    out = large_v3.out
    run = subprocess.run([sys.executable, "-P", str(BUNDLE), str(out)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    files = files_of(out)
    listed = [p for p in files if not is_tree_file(p)]
    assert len(listed) > 64 * 16
    rule = rule_of(large_v3)
    tree = rule.build(listed)
    assert max(map(len, tree.leaves)) >= 2, "a node of more than the bound is split"
    assert all(set(p) <= set(rule.digits) for p in [*tree.leaves, *tree.inner])
    assert all(len(files) <= rule.leaf_files for files in tree.leaves.values())
    want = {list_path(p) for p in [*tree.leaves, *tree.inner]} | {part_path(p) for p in tree.leaves}
    assert {p for p in files if is_tree_file(p)} == want | {layout.SUMS_SIG}
    assert layout.ARCHIVE not in files and layout.ARCHIVE_SUMS not in files, "no site.zip in v3"
    for prefix, leaf in tree.leaves.items():
        text = (out / list_path(prefix)).read_text()
        assert text == "".join(f"{files[p]}  {p}\n" for p in leaf), prefix
        with zipfile.ZipFile(out / part_path(prefix)) as zf:
            names = [i.filename for i in zf.infolist()]
            assert names == sorted([*leaf, list_path(prefix)], key=str.encode), prefix
            for info in zf.infolist():
                assert zf.read(info) == (out / info.filename).read_bytes(), info.filename
                assert info.date_time == (1980, 1, 1, 0, 0, 0)


def test_standard_tools_check_a_v3_site(demo_v3: BuiltSite, tmp_path: Path) -> None:
    out = demo_v3.out
    for tool in ("sha256sum", "openssl", "unzip"):
        assert shutil.which(tool), f"{tool} is not installed: the standard-tools check cannot run"
    for cmd in ("sha256sum --quiet -c SHA256SUMS", "sha256sum --quiet -c sums/*.sha256"):
        r = subprocess.run(cmd, shell=True, cwd=out, capture_output=True, text=True, check=False)
        assert r.returncode == 0 and r.stdout == "", cmd + r.stdout + r.stderr
    pem = next(p.relative_to(out).as_posix() for p in (out / "keys").glob("*.pem"))
    r = subprocess.run(
        [
            "openssl",
            "pkeyutl",
            "-verify",
            "-pubin",
            "-inkey",
            pem,
            "-rawin",
            "-in",
            "SHA256SUMS",
            "-sigfile",
            "SHA256SUMS.sig",
        ],
        cwd=out,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0 and "Signature Verified Successfully" in r.stdout, r.stdout + r.stderr
    # A full copy: every part unpacked into one folder, beside SHA256SUMS, its signature and the
    # inner lists (a v4 tree has inner lists below the root).
    for how in ("unzip", "zipfile"):
        copy = tmp_path / how
        copy.mkdir()
        for part in sorted((out / "download").glob("*.zip")):
            if how == "unzip":
                r = subprocess.run(
                    ["unzip", "-q", str(part), "-d", str(copy)], capture_output=True, text=True, check=False
                )
                assert r.returncode == 0, r.stdout + r.stderr
            else:
                with zipfile.ZipFile(part) as zf:
                    zf.extractall(copy)
        inner = [p.relative_to(out).as_posix() for p in out.glob("sums/*.sha256") if p not in _leaves(out)]
        for rel in (layout.SUMS, layout.SUMS_SIG, *inner, *(p for p in files_of(out) if p.startswith("download/"))):
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(out / rel, copy / rel)
        assert files_of(copy) == files_of(out), f"{how}: the parts and the root make the whole site"


def test_a_second_release_rewrites_only_the_lists_and_parts_of_what_changed(
    large_v3: BuiltSite, tmp_path: Path
) -> None:
    paths = Paths(tmp_path / "data", tmp_path / "data" / "private")
    shutil.copytree(large_v3.paths.data, paths.data)
    out = tmp_path / "public"
    shutil.copytree(large_v3.out, out)
    before = files_of(out)
    inodes = {p: (out / p).stat().st_ino for p in before}
    retire_items(paths, [f"b-{RETIRED + 1:04d}"], "One more.", "2026-03-01T00:00:00Z")
    build(paths, out, offline=True)
    after = files_of(out)
    assert not failures(out)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p) and not is_tree_file(p)}
    assert changed, "a release that changed nothing"
    rule = rule_of(large_v3)
    old, new = rule.build(p for p in before if not is_tree_file(p)), rule.build(p for p in after if not is_tree_file(p))
    touched = set()
    for tree in (old, new):
        for p in changed:
            key = rule.key(p)
            leaf = (
                next(q for q in tree.leaves if key.startswith(q))
                if any(key.startswith(q) for q in tree.leaves)
                else None
            )
            if leaf is None:
                continue
            touched |= {leaf[:n] for n in range(len(leaf) + 1)}
    # The program's key is new each run, so its files' places in the tree are too: one more file
    # can carry a leaf over the split threshold (or a removal under it). The nodes made, gone or
    # turned from leaf to inner node are then new lists and parts, and their ancestors' lists change.
    shape_old = {q: q in old.leaves for q in [*old.leaves, *old.inner]}
    shape_new = {q: q in new.leaves for q in [*new.leaves, *new.inner]}
    for q in shape_old.keys() | shape_new.keys():
        if shape_old.get(q) != shape_new.get(q):
            touched |= {q[:n] for n in range(len(q) + 1)}
    expected = {list_path(q) for q in touched} | {part_path(q) for q in touched if q in new.leaves or q in old.leaves}
    rewritten = {p for p in before.keys() | after.keys() if is_tree_file(p) and before.get(p) != after.get(p)}
    assert rewritten - {layout.SUMS_SIG} == expected
    untouched = [q for q in new.leaves if q not in touched]
    assert untouched, "every leaf changed: the test shows nothing"
    for q in untouched:
        assert before[part_path(q)] == after[part_path(q)] and before[list_path(q)] == after[list_path(q)]
        # Kept, not written again: the last release's very files (hard links).
        for rel in (part_path(q), list_path(q)):
            assert (out / rel).stat().st_ino == inodes[rel], rel


def _leaf_line(site: Path) -> tuple[str, list[str]]:
    """A leaf of the demo's tree and its list's lines."""
    lst = _leaves(site)[0]
    return lst.relative_to(site).as_posix(), lst.read_text().splitlines(keepends=True)


def _leaves(site: Path) -> list[Path]:
    """The leaves' lists, in name order: those that name no list."""
    return [p for p in sorted(site.glob("sums/*.sha256")) if "  sums/" not in p.read_text()]


def test_a_file_moved_to_another_leaf_fails(tampered: BuiltSite) -> None:
    out = tampered.out
    (a, a_lines), b = _leaf_line(out), _leaves(out)[1]
    moved = a_lines.pop(0)
    (out / a).write_text("".join(a_lines))
    b.write_text(
        "".join(
            sorted([*b.read_text().splitlines(keepends=True), moved], key=lambda line: line.split("  ", 1)[1].encode())
        )
    )
    reseal(tampered)
    found = failures(out)
    assert any(f.startswith(f"{b.relative_to(out).as_posix()}") and "wrong leaf" in f for f in found), found


def test_an_extra_list_under_sums_fails(tampered: BuiltSite) -> None:
    (tampered.out / "sums" / "ff.sha256").write_text("")
    found = failures(tampered.out)
    assert any(f.startswith("sums/ff.sha256") and "does not imply" in f for f in found), found


def test_an_altered_leaf_line_fails_naming_the_list_and_line(tampered: BuiltSite) -> None:
    out = tampered.out
    rel, lines = _leaf_line(out)
    path = lines[2].rstrip("\n").split("  ", 1)[1]
    lines[2] = ("0" if lines[2][0] != "0" else "1") + lines[2][1:]
    (out / rel).write_text("".join(lines))
    found = failures(out)
    assert any(f.startswith(path) and f"{rel} line 3" in f for f in found), found
    run = subprocess.run([sys.executable, "-P", str(BUNDLE), str(out)], capture_output=True, text=True, check=False)
    assert run.returncode == 1 and f"{rel} line 3" in run.stdout, run.stdout[-2000:]


def test_a_missing_list_fails(tampered: BuiltSite) -> None:
    rel, lines = _leaf_line(tampered.out)
    (tampered.out / rel).unlink()
    found = failures(tampered.out)
    assert any(f.startswith(rel) and "missing" in f for f in found), found
    first = lines[0].rstrip("\n").split("  ", 1)[1]
    assert any(f.startswith(first) and "not listed" in f for f in found), found


@pytest.mark.parametrize("edit", ["extra", "foreign", "missing"])
def test_a_part_with_another_set_of_members_fails(tampered: BuiltSite, edit: str) -> None:
    out = tampered.out
    rel, _ = _leaf_line(out)
    part = out / ("download/" + rel.removeprefix("sums/").removesuffix(".sha256") + ".zip")
    with zipfile.ZipFile(part) as zf:
        members = [(i, zf.read(i)) for i in zf.infolist()]
    if edit in ("extra", "foreign"):
        # A file of the site from another leaf: not this part's to hold.
        other = _leaves(out)[1].read_text().splitlines()[0].split("  ", 1)[1]
        info = zipfile.ZipInfo(other, members[0][0].date_time)
        info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, members[0][0].external_attr
        info.create_system = 3
        if edit == "foreign":
            members.pop(0)
        members.append((info, (out / other).read_bytes()))
    else:
        members.pop(0)
    with zipfile.ZipFile(part, "w") as zf:
        for info, data in members:
            zf.writestr(info, data)
    reseal(tampered)
    found = failures(out)
    part_rel = part.relative_to(out).as_posix()
    want = {
        "extra": "holds more members than its leaf has files",
        "foreign": "member that is not a file of the part's leaf",
        "missing": "missing from the archive",
    }[edit]
    assert any(f.startswith(part_rel) and want in f for f in found), found


def test_without_the_download_a_v3_site_has_its_lists_and_no_parts(tmp_path: Path) -> None:
    paths = as_v3(copy_demo_data(tmp_path / "data"))
    yaml = paths.data / "program.yaml"
    yaml.write_text(yaml.read_text(encoding="utf-8") + "download_archive: false\n", encoding="utf-8")
    build(paths, tmp_path / "public", offline=True)
    files = files_of(tmp_path / "public")
    assert not [p for p in files if p.startswith("download/")]
    assert any(p.startswith("sums/") for p in files)
    assert "download/" not in (tmp_path / "public" / layout.SUMS).read_text()
    assert not failures(tmp_path / "public")
    # A part published anyway is one the tree does not imply.
    (tmp_path / "public" / "download").mkdir()
    (tmp_path / "public" / "download" / "0.zip").write_bytes(b"PK")
    found = failures(tmp_path / "public")
    assert any(f.startswith("download/0.zip") and "does not imply" in f for f in found), found


def test_a_v4_site_listed_as_a_v3_tree_fails(tmp_path: Path) -> None:
    """The tree's shape is the format's (docs/formats/v4.md, 3): a key holder who lists a v4 site
    by hex digits, every list valid and signed, is refused, named at the lists."""
    paths = as_v3(copy_demo_data(tmp_path / "data"), 4)
    out = tmp_path / "public"
    build(paths, out, offline=True)
    resign_sums(out, load_key(paths.key_file), rule=tree_rule(3))
    found = failures(out)
    assert found and all("docs/formats/v4.md, 3" in f for f in found if f.startswith(("sums/", "SHA256SUMS"))), found
    assert any(f.startswith("SHA256SUMS") and "<bit>" in f for f in found), found
