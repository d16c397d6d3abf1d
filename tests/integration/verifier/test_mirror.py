"""`verify.py mirror URL DIR` against the demo site served over real HTTP on the loopback: the first
run copies and verifies every file, a run after a one-event release fetches only what changed and
reads nothing else again, and a torn, tampered, unreachable or hostile site leaves the mirror as
it was, with exit status 1 or 2 naming what was wrong."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from generator.commands.build import build
from generator.commands.retire import retire_items
from generator.core.signing_key import load_key
from generator.verifier.memory.mirror_record import load_record, record_path, save_record
from generator.verifier.site.command_line import main
from tests.support.demo import BuiltSite
from tests.support.http_site import closed_port, serve
from tests.support.v3 import one_event, v3_demo

# What every run reads before the files it fetches: the key, and the signed list.
META = {"transparency.json", "keys.json", "SHA256SUMS", "SHA256SUMS.sig"}


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["mirror", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def listed(site: Path) -> dict[str, str]:
    lines = (site / "SHA256SUMS").read_text().splitlines()
    return {line[66:]: line[:64] for line in lines}


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def one_event_release(site: BuiltSite) -> None:
    retire_items(site.paths, ["b-0017"], "One more.", "2027-01-01T00:00:00Z")
    build(site.paths, site.out, offline=True)


@pytest.fixture
def mirrored(demo_copy: BuiltSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[BuiltSite, Path, Path]:
    """The demo copied once into a mirror, which verified: the site, the mirror, the state file."""
    mirror, state = tmp_path / "mirror", tmp_path / "state" / "state.json"
    with serve(demo_copy.out) as served:
        code, out, err = run(capsys, served.url, mirror, "--state", state)
    assert code == 0, out + err
    return demo_copy, mirror, state


def test_the_first_run_copies_every_file_and_verifies(
    demo_copy: BuiltSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror = tmp_path / "mirror"
    with serve(demo_copy.out) as served:
        code, out, err = run(capsys, served.url, mirror, "--state", tmp_path / "state.json", "--jobs", "4")
    assert code == 0, out + err
    assert "PASS" in out
    assert files(mirror) == files(demo_copy.out)
    n = len(listed(demo_copy.out))
    assert f"fetched {n} file(s)" in err and "kept 0; removed 0" in err
    assert set(served.requests) == META | set(listed(demo_copy.out))
    assert len(served.connections) <= 4 + 1, "kept-alive connections, not one per file"


def test_a_one_event_release_fetches_only_what_changed_and_reads_nothing_else_again(
    mirrored: tuple[BuiltSite, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    site, mirror, state = mirrored
    before = listed(site.out)
    one_event_release(site)
    after = listed(site.out)
    changed = {p for p, h in after.items() if before.get(p) != h}
    assert 0 < len(changed) < len(after) // 2
    with serve(site.out) as served:
        code, out, err = run(capsys, served.url, mirror, "--state", state)
    assert code == 0, out + err
    assert sorted(served.requests) == sorted(META | changed), "an unchanged file was asked for"
    assert f"fetched {len(changed)} file(s)" in err and f"kept {len(after) - len(changed)};" in err
    assert files(mirror) == files(site.out)
    # Verified from the release verified last, and no file the mirror wrote read again.
    assert "only the entries after them were replayed" in out
    assert f"{len(after)} file(s) not read again" in out


def test_a_tampered_file_fails_naming_it_and_leaves_the_mirror_as_it_was(
    mirrored: tuple[BuiltSite, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    site, mirror, state = mirrored
    kept = files(mirror)
    before = listed(site.out)
    one_event_release(site)
    target = min(p for p, h in listed(site.out).items() if before.get(p) != h and p.endswith(".json"))

    def tampered(rel: str, n: int) -> bytes | None:
        return (site.out / rel).read_bytes() + b" " if rel == target else None

    with serve(site.out, tampered) as served:
        code, out, err = run(capsys, served.url, mirror, "--state", state)
    assert code == 1, out + err
    assert f"FAIL {served.url}{target}: expected SHA-256" in err and "the mirror is unchanged" in err
    assert served.asked(target) == 2, "retried once from a fresh SHA256SUMS"
    assert files(mirror) == kept


def test_a_file_torn_once_is_fetched_again_from_a_fresh_list(
    demo_copy: BuiltSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = "methodology/index.html"

    def torn(rel: str, n: int) -> bytes | None:
        return b"{}" if rel == target and n == 0 else None

    with serve(demo_copy.out, torn) as served:
        code, out, err = run(capsys, served.url, tmp_path / "m", "--no-state")
    assert code == 0, out + err
    assert "trying once more" in err
    assert served.asked(target) == 2 and served.asked("SHA256SUMS") == 2


def test_an_unreachable_url_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, f"http://127.0.0.1:{closed_port()}/site/", tmp_path / "m", "--no-state")
    assert code == 2
    assert err.startswith("verify.py mirror: http://127.0.0.1:") and "transparency.json" in err
    code, _, err = run(capsys, "ftp://127.0.0.1/", tmp_path / "m", "--no-state")
    assert code == 2 and "not an http:// or https:// URL" in err


def test_a_path_out_of_the_folder_is_refused(
    demo_copy: BuiltSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sums = demo_copy.out / "SHA256SUMS"
    sums.write_bytes(sums.read_bytes() + b"0" * 64 + b"  ../escaped\n")
    (demo_copy.out / "SHA256SUMS.sig").write_bytes(load_key(demo_copy.paths.key_file).sign(sums.read_bytes()))
    (tmp_path / "site-escaped").write_bytes(b"not the site's")
    with serve(demo_copy.out) as served:
        code, _, err = run(capsys, served.url, tmp_path / "m", "--no-state")
    assert code == 1
    assert "../escaped" in err and "refused" in err
    assert not files(tmp_path / "m")


def test_a_mirror_file_changed_in_place_is_fetched_again(
    mirrored: tuple[BuiltSite, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    site, mirror, state = mirrored
    target = mirror / "methodology" / "index.html"
    st = target.stat()
    data = bytearray(target.read_bytes())
    data[-2] ^= 1
    target.write_bytes(bytes(data))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same size and mtime: only its ctime tells
    with serve(site.out) as served:
        code, out, err = run(capsys, served.url, mirror, "--state", state)
    assert code == 0, out + err
    assert sorted(served.requests) == sorted(META | {"methodology/index.html"})
    assert target.read_bytes() == (site.out / "methodology" / "index.html").read_bytes()


def test_a_path_of_the_record_out_of_the_folder_is_never_removed(
    mirrored: tuple[BuiltSite, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # The record's paths are checked where one is used as a path: a record that names a file
    # outside the folder (damaged, or written by the user's own hand) removes nothing there.
    site, mirror, state = mirrored
    victim = mirror.parent / "victim.txt"
    victim.write_text("not the mirror's")
    record = record_path(state.parent, mirror)
    files, why = load_record(record, mirror)
    assert why is None and files
    save_record(record, "url", {**files, "../victim.txt": next(iter(files.values()))})
    code, out, err = run(capsys, site.out, mirror, "--state", state)
    assert code == 0, out + err
    assert victim.read_text() == "not the mirror's"
    assert "removed 0" in err


def test_the_folders_unchanged_are_not_read_again_and_a_file_planted_in_one_is_found(
    mirrored: tuple[BuiltSite, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    site, mirror, state = mirrored
    for _ in range(2):  # the second: every folder changed more than a tick before the first's walk
        code, out, err = run(capsys, site.out, mirror, "--state", state)
    assert code == 0, out + err
    taken = re.search(r"(\d+) folder\(s\) not read again", out)
    assert taken is not None and int(taken.group(1)) > 10, out
    deep = max((p for p in mirror.rglob("*") if p.is_dir()), key=lambda p: (len(p.parts), str(p)))
    planted = deep / "planted.json"
    planted.write_text("{}")
    code, out, err = run(capsys, site.out, mirror, "--state", state)
    assert code == 1, out + err
    assert f"FAIL {planted.relative_to(mirror).as_posix()}: file is not listed" in out, out
    planted.unlink()
    code, out, err = run(capsys, site.out, mirror, "--state", state, "--full")
    assert code == 0, out + err
    assert "not read again" not in out


def test_a_folder_others_may_write_is_hashed_in_full(
    mirrored: tuple[BuiltSite, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    site, mirror, state = mirrored
    mirror.chmod(0o777)
    try:
        code, out, err = run(capsys, site.out, mirror, "--state", state)  # a folder, read as a site
    finally:
        mirror.chmod(0o755)
    assert code == 0, out + err
    assert "not this user's alone" in err
    assert "every file hashed" in out and "not read again" not in out


def test_a_folder_or_file_url_is_a_source_too(
    demo_site: BuiltSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, demo_site.out.as_uri(), tmp_path / "m", "--no-state")
    assert code == 0, out + err
    assert files(tmp_path / "m") == files(demo_site.out)


def test_a_key_pinned_that_is_not_the_sites_fails_before_anything_is_fetched(
    demo_copy: BuiltSite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = "SHA256:" + "0" * 64
    with serve(demo_copy.out) as served:
        code, _, err = run(capsys, served.url, tmp_path / "m", "--no-state", "--key", other)
    assert code == 1
    assert f"no key of the site is the key given with --key (expected {other}" in err
    assert set(served.requests) == {"transparency.json", "keys.json"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--jobs", "0"], "--jobs 0: expected 1 to 64"),
        (["--state", "s.json", "--no-state"], "exclude each other"),
        (["--key", "not a key"], "--key: "),
    ],
)
def test_wrong_arguments_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = run(capsys, "http://127.0.0.1:9/", tmp_path / "m", *args)
    assert code == 2 and message in err, err
    assert not (tmp_path / "m").exists()


def test_a_v4_site_is_copied_and_followed_fetching_the_parts_that_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Format v4 (docs/formats/v4.md): the manifest's parts are files like any other, fetched when
    their bytes change, and the mirror's verification reads the lists back whole from them."""
    site = v3_demo(tmp_path / "v4", fmt=4)
    mirror, state = tmp_path / "mirror", tmp_path / "state.json"
    with serve(site.out) as served:
        code, out, err = run(capsys, served.url, mirror, "--state", state)
    assert code == 0 and "PASS" in out, out + err
    before = files(site.out)
    one_event(site)
    after = files(site.out)
    changed = {p for p, data in after.items() if before.get(p) != data}
    assert "manifest/reveals/0.json" in changed and "manifest/runs/0.json" not in changed
    with serve(site.out) as served:
        code, out, err = run(capsys, served.url, mirror, "--state", state)
    assert code == 0 and "PASS" in out, out + err
    assert set(served.requests) - META == changed - META, "an unchanged file was asked for"
    assert files(mirror) == after
