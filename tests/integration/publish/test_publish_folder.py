"""`transparency publish DIR`: only what changed is sent, immutable objects are created once and
never overwritten, the checkpoint goes last, a quorum is required, and a kill at any moment
leaves the folder a reader can use, which running the command again completes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.commands.build import build
from generator.commands.publish import BadSite, PublishFailed, StoreOptions, publish_site
from generator.commands.retire import retire_item, retire_items
from generator.core import layout
from generator.core.generator_errors import InputError
from generator.core.object_kinds import IMMUTABLE_CACHE, PAGE_CACHE, Kind, headers_for, kind_of
from generator.core.signing_key import load_key
from generator.program.datadir import Paths
from generator.publish import publisher
from generator.publish.folder_store import FolderStore
from generator.publish.store import Store
from tests.support.crashes import run_cli
from tests.support.demo import BUNDLE, BuiltSite

OPTIONS = StoreOptions()


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def verify(site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", str(BUNDLE), str(site), "--no-state"], capture_output=True, text=True, timeout=300
    )


class Recording:
    """A store that notes the order of its writes, around a real folder store."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.description = inner.description
        self.writes: list[tuple[str, str]] = []

    def create(self, key, source, sha256, headers):  # type: ignore[no-untyped-def]
        made = self.inner.create(key, source, sha256, headers)
        self.writes.append(("create", key))
        return made

    def replace(self, key, source, sha256, headers):  # type: ignore[no-untyped-def]
        self.inner.replace(key, source, sha256, headers)
        self.writes.append(("replace", key))

    def delete(self, key):  # type: ignore[no-untyped-def]
        self.inner.delete(key)
        self.writes.append(("delete", key))

    def fetch(self, key, limit):  # type: ignore[no-untyped-def]
        return self.inner.fetch(key, limit)

    def identity(self) -> str:
        return self.inner.identity()

    def digest(self, key):  # type: ignore[no-untyped-def]
        return self.inner.digest(key)

    def keys(self):  # type: ignore[no-untyped-def]
        return self.inner.keys()

    def prepare(self) -> None:
        self.inner.prepare()


def test_kinds_and_headers() -> None:
    assert kind_of(layout.CHECKPOINT) is Kind.CHECKPOINT
    for path in (
        "reveals/b-0001.json",
        "ledger/tile/0/000",
        "ledger/tile/entries/000.p/7",
        "agreement/run-1-panel/labels.json",
        "certificates/c-1.json.sig",
        "certificates/c-1/details/b-1.json",
        "keys/0123abcd.pem",
    ):
        assert kind_of(path) is Kind.IMMUTABLE, path
        assert headers_for(path).cache_control == IMMUTABLE_CACHE
    # Remade against each checkpoint in format v2: never immutable.
    for path in (
        "reveals/b-0001.json.tlog-proof",
        "ledger/consistency/3.json",
        "ledger/checkpoints/9",  # today's gains the cosignatures that arrive after it
        "index.html",
        "SHA256SUMS",
        "ledger/entries.json",
        "keys/index.html",
        "download/site.zip",
        "sums/0a.sha256",  # format v3's lists and parts are rewritten when their files change
        "download/0a.zip",
    ):
        assert kind_of(path) is Kind.PAGE, path
        assert headers_for(path).cache_control == PAGE_CACHE
    assert headers_for("index.html").content_type == "text/html; charset=utf-8"
    assert headers_for(layout.CHECKPOINT).content_type == "text/plain; charset=utf-8"
    assert headers_for("ledger/tile/0/000").content_type == "application/octet-stream"
    assert headers_for("sums/0a.sha256").content_type == "text/plain; charset=utf-8"
    assert headers_for("download/0a.zip").content_type == "application/zip"


def test_a_first_publish_copies_the_site_in_order_and_it_verifies(built_program: BuiltSite, tmp_path: Path) -> None:
    store = Recording(FolderStore(tmp_path / "www"))
    listing = list(publisher.site_listing(built_program.out))
    summary = publisher.publish(built_program.out, store, iter(()), jobs=1)
    assert files(tmp_path / "www") == files(built_program.out)
    assert summary.created + summary.replaced == len(listing) and summary.unchanged == 0
    kinds = [kind_of(k) for _, k in store.writes]
    first_page = kinds.index(Kind.PAGE)
    assert all(k is Kind.IMMUTABLE for k in kinds[:first_page])
    assert Kind.IMMUTABLE not in kinds[first_page:]
    assert [k for _, k in store.writes][-3:] == [layout.SUMS, layout.SUMS_SIG, layout.CHECKPOINT]
    assert all(op == "create" for op, k in store.writes if kind_of(k) is Kind.IMMUTABLE)
    assert verify(tmp_path / "www").returncode == 0


def test_after_one_event_only_what_changed_is_sent(built_program: BuiltSite, tmp_path: Path) -> None:
    paths, site = built_program.paths, built_program.out
    target = str(tmp_path / "www")
    publish_site(paths, site, target, OPTIONS)
    again = publish_site(paths, site, target, OPTIONS)
    assert (again.created, again.replaced, again.bytes_sent, again.checkpoint_sent) == (0, 0, 0, False)

    before = files(site)
    retire_item(paths, "b-0002", "Rotated out.", "2026-03-02T00:00:00Z")
    build(paths, site)
    after = files(site)
    changed = {p for p in after if before.get(p) != after[p]}
    store = Recording(FolderStore(tmp_path / "www"))
    from generator.state.publish_cache import read_record, record_path

    summary = publisher.publish(site, store, read_record(record_path(paths.private / "cache", target)), jobs=1)
    sent = [k for op, k in store.writes if op != "delete"]
    assert set(sent) == changed
    assert summary.unchanged == len(after) - len(changed)
    assert sent[-1] == layout.CHECKPOINT
    # Then the pages this release no longer has (a renamed search shard); a partial tile of the
    # last release's size stays: it belongs to an archived checkpoint.
    assert {k for op, k in store.writes if op == "delete"} == set(before) - set(after)
    assert all(not k.startswith("ledger/") for k in set(before) - set(after))
    assert "reveals/b-0002.json" in {k for op, k in store.writes if op == "create"}
    assert files(tmp_path / "www") == after
    assert verify(tmp_path / "www").returncode == 0


def test_an_immutable_object_with_other_bytes_is_refused_and_nothing_after_it_is_sent(
    built_program: BuiltSite, tmp_path: Path
) -> None:
    paths, site = built_program.paths, built_program.out
    www = tmp_path / "www"
    (www / "reveals").mkdir(parents=True)
    (www / "reveals" / "b-0001.json").write_bytes(b'{"planted": true}')
    with pytest.raises(PublishFailed) as info:
        publish_site(paths, site, str(www), OPTIONS)
    text = str(info.value)
    assert "reveals/b-0001.json: already published with other bytes" in text
    assert "readers keep the last checkpoint" in text
    assert (www / "reveals" / "b-0001.json").read_bytes() == b'{"planted": true}'  # never overwritten
    assert not (www / layout.CHECKPOINT).exists() and not (www / "index.html").exists()


def test_a_release_that_rewrites_a_published_immutable_object_is_refused(
    built_program: BuiltSite, tmp_path: Path
) -> None:
    listing = list(publisher.site_listing(built_program.out))
    record = [(p, "1" * 64 if p == "reveals/b-0001.json" else sha) for p, sha in listing]
    with pytest.raises(publisher.PublishError) as info:
        publisher.plan(listing, iter(record))
    assert info.value.problems == [
        f"reveals/b-0001.json: published before with SHA-256 {'1' * 64}, now "
        f"{dict(listing)['reveals/b-0001.json']}: an immutable object is never rewritten"
    ]


def test_a_checkpoint_without_its_quorum_is_not_published_unless_told(demo_copy: BuiltSite, tmp_path: Path) -> None:
    site = demo_copy.out
    note = (site / layout.CHECKPOINT).read_bytes()
    body, _, signatures = note.partition(b"\n\n")
    kept = [line for line in signatures.split(b"\n") if line and not line.startswith("— witness.".encode())]
    stripped = body + b"\n\n" + b"\n".join(kept) + b"\n"
    (site / layout.CHECKPOINT).unlink()  # a hard link of ledger/checkpoints/N, which stays as it is
    (site / layout.CHECKPOINT).write_bytes(stripped)
    # Listed with its new bytes, and the list signed again with the program's key, as a build that
    # gathered no cosignature would have done.
    lines = (site / layout.SUMS).read_text().splitlines()
    new_line = f"{hashlib.sha256(stripped).hexdigest()}  {layout.CHECKPOINT}"
    lines = [new_line if line.endswith(f"  {layout.CHECKPOINT}") else line for line in lines]
    (site / layout.SUMS).write_text("".join(f"{line}\n" for line in lines))
    with pytest.raises(BadSite) as info:
        publish_site(demo_copy.paths, site, str(tmp_path / "www"), OPTIONS)
    assert "is not by the program's signing key" in str(info.value)  # a list nobody signed
    signer = load_key(demo_copy.paths.key_file, program_has_keys=True)
    (site / layout.SUMS_SIG).write_bytes(signer.sign((site / layout.SUMS).read_bytes()))
    with pytest.raises(BadSite) as info:  # the site's fault: exit 2
        publish_site(demo_copy.paths, site, str(tmp_path / "www"), OPTIONS)
    assert "does not meet the trust policy's quorum" in str(info.value)
    assert "missing: demo-witness" in str(info.value)
    assert not (tmp_path / "www" / layout.CHECKPOINT).exists()
    summary = publish_site(demo_copy.paths, site, str(tmp_path / "www"), OPTIONS, require_quorum=False)
    assert summary.checkpoint_sent


def test_the_demo_publishes_with_its_quorum_and_check_reads_every_object_back(
    demo_copy: BuiltSite, tmp_path: Path
) -> None:
    env = {"TRANSPARENCY_DATA": str(demo_copy.paths.data)}
    runner = CliRunner()
    www = tmp_path / "www"
    r = runner.invoke(main, ["publish", str(www), "--site", str(demo_copy.out)], env=env)
    assert r.exit_code == 0, r.output
    assert "immutable objects created" in r.output and "unchanged since the last publish" in r.output
    r = runner.invoke(main, ["publish", str(www), "--site", str(demo_copy.out), "--check"], env=env)
    assert r.exit_code == 0 and "all present with the site's bytes" in r.output, r.output
    (www / "index.html").write_text("defaced")
    (www / "style.css").unlink()
    r = runner.invoke(main, ["publish", str(www), "--site", str(demo_copy.out), "--check"], env=env)
    assert r.exit_code == 1
    assert "missing: style.css" in r.output and "altered: index.html" in r.output


def test_a_target_that_is_no_folder_or_bucket_is_refused(built_program: BuiltSite) -> None:
    runner = CliRunner()
    env = {"TRANSPARENCY_DATA": str(built_program.paths.data)}
    r = runner.invoke(main, ["publish", "https://example.org/x", "--site", str(built_program.out)], env=env)
    assert r.exit_code == 2 and "expected s3://BUCKET[/PREFIX] or a folder's path" in r.output
    r = runner.invoke(main, ["publish", "s3://", "--site", str(built_program.out)], env=env)
    assert r.exit_code == 2 and "expected s3://BUCKET" in r.output


@pytest.mark.slow
def test_a_publish_killed_after_any_object_leaves_a_usable_folder_and_finishes_when_run_again(
    built_program: BuiltSite, tmp_path: Path
) -> None:
    paths, site = built_program.paths, built_program.out
    www = tmp_path / "www"
    publish_site(paths, site, str(www), OPTIONS)
    old = files(www)
    retire_item(paths, "b-0002", "Rotated out.", "2026-03-02T00:00:00Z")
    build(paths, site)
    new = files(site)
    args = ["--data", str(paths.data), "publish", str(www), "--site", str(site), "--jobs", "1"]
    sent = sum(1 for p in new if old.get(p) != new[p])
    for kill_at in range(1, sent + 1):
        r = run_cli(args, crash_at=kill_at)
        assert r.returncode == 137, r.stderr
        now = files(www)
        # The old checkpoint until the last object, the checkpoint, is sent; with it, every
        # file of the new release is there, byte for byte. Nothing of the old release is missing.
        if kill_at < sent:
            assert now[layout.CHECKPOINT] == old[layout.CHECKPOINT]
        else:
            assert {p: now.get(p) for p in new} == new
        assert set(old) - {p for p in old if p.startswith("pagefind/")} <= set(now)
    r = run_cli(args)
    assert r.returncode == 0, r.stderr
    assert files(www) == new  # and no temporary file a kill left behind
    assert verify(www).returncode == 0


def test_an_older_site_never_replaces_a_newer_checkpoint(built_program: BuiltSite, tmp_path: Path) -> None:
    paths, site = built_program.paths, built_program.out
    old = tmp_path / "old-copy"
    shutil.copytree(site, old)
    retire_item(paths, "b-0002", "Rotated out.", "2026-03-02T00:00:00Z")
    build(paths, site)
    www = tmp_path / "www"
    publish_site(paths, site, str(www), OPTIONS)
    published = files(www)
    with pytest.raises(PublishFailed) as info:
        publish_site(paths, old, str(www), OPTIONS)
    assert "would roll the log back" in str(info.value)
    assert files(www) == published


def test_a_store_emptied_behind_the_record_gets_every_file_again(built_program: BuiltSite, tmp_path: Path) -> None:
    paths, site = built_program.paths, built_program.out
    www = tmp_path / "www"
    publish_site(paths, site, str(www), OPTIONS)
    shutil.rmtree(www)
    summary = publish_site(paths, site, str(www), OPTIONS)
    assert summary.record_dropped and summary.unchanged == 0
    assert files(www) == files(site)


def test_a_file_that_is_not_what_the_list_says_stops_the_publish_before_it_starts(
    built_program: BuiltSite, tmp_path: Path
) -> None:
    site = built_program.out
    (site / "style.css").write_text("body { color: red }")
    runner = CliRunner()
    env = {"TRANSPARENCY_DATA": str(built_program.paths.data)}
    r = runner.invoke(main, ["publish", str(tmp_path / "www"), "--site", str(site)], env=env)
    assert r.exit_code == 2, r.output
    assert "style.css: SHA-256" in r.output and "nothing was sent" in r.output
    assert not (tmp_path / "www").exists() or not any((tmp_path / "www").iterdir())


def test_one_publish_to_a_target_at_a_time(built_program: BuiltSite, tmp_path: Path) -> None:
    from generator.commands import publish as publish_command
    from generator.state.publish_cache import record_path

    www = tmp_path / "www"
    record = record_path(built_program.paths.private / "cache", str(www.resolve()))
    with publish_command._locked(record, str(www)), pytest.raises(InputError) as info:
        publish_site(built_program.paths, built_program.out, str(www), OPTIONS)
    assert "another publish to" in str(info.value.problems)


def test_a_target_inside_the_site_is_refused(built_program: BuiltSite) -> None:
    with pytest.raises(InputError):
        publish_site(built_program.paths, built_program.out, str(built_program.out / "mirror"), OPTIONS)


def test_a_folder_without_hard_links_still_creates_immutable_files_once(
    built_program: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FAT, some network and FUSE mounts have no hard links: an immutable file is then renamed into
    place when absent (one publish at a time holds the target), and one with other bytes is still
    refused, never overwritten."""
    import errno

    from generator.publish import folder_store

    def no_links(src: object, dst: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(folder_store.os, "link", no_links)
    www = tmp_path / "www"
    publish_site(built_program.paths, built_program.out, str(www), OPTIONS)
    assert files(www) == files(built_program.out)
    assert verify(www).returncode == 0
    other = tmp_path / "other"
    (other / "reveals").mkdir(parents=True)
    (other / "reveals" / "b-0001.json").write_bytes(b'{"planted": true}')
    with pytest.raises(PublishFailed, match="already published with other bytes"):
        publish_site(built_program.paths, built_program.out, str(other), OPTIONS)
    assert (other / "reveals" / "b-0001.json").read_bytes() == b'{"planted": true}'


def test_the_folders_are_flushed_before_the_checksums_and_the_checkpoint_name_them(
    built_program: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a power loss, a checkpoint on the disk must not name a file the disk lost: every
    folder a file was linked or renamed into is fsynced before SHA256SUMS and the checkpoint are
    replaced, and the checkpoint's own folder after it."""
    from generator.publish import folder_store

    www = tmp_path / "www"
    events: list[str] = []
    real_fsync, real_replace = folder_store.os.fsync, folder_store.os.replace

    def fsync(fd: int) -> None:  # os is one module: the cache's own writes pass here too
        path = Path(os.readlink(f"/proc/self/fd/{fd}"))
        if path.is_dir() and path.is_relative_to(www):
            events.append(f"sync {path.relative_to(www).as_posix()}")
        real_fsync(fd)

    def replace(src: str | Path, dst: str | Path) -> None:
        real_replace(src, dst)
        if Path(dst).is_relative_to(www):
            events.append(f"replace {Path(dst).relative_to(www).as_posix()}")

    monkeypatch.setattr(folder_store.os, "fsync", fsync)
    monkeypatch.setattr(folder_store.os, "replace", replace)
    publish_site(built_program.paths, built_program.out, str(www), OPTIONS)
    synced_before = set()
    for e in events:
        if e.startswith("sync "):
            synced_before.add(e[5:])
        elif e == f"replace {layout.SUMS}":
            break
    assert {"reveals", "certificates"} <= synced_before, sorted(synced_before)
    assert any(p.startswith("ledger/tile/") for p in synced_before), sorted(synced_before)
    assert events[-1] == "sync ledger" and events[-2] == f"replace {layout.CHECKPOINT}"


def test_a_v3_site_publishes_its_lists_after_every_other_page_the_deepest_first(
    make_program: Callable[..., Paths], tmp_path: Path
) -> None:
    paths = make_program(secret_items=280, retired=0)
    (paths.data / "program.yaml").write_text((paths.data / "program.yaml").read_text() + "format: 3\n")
    retire_items(paths, [f"b-{i:04d}" for i in range(1, 251)], "Retired.", "2026-02-01T00:00:00Z")
    site = tmp_path / "public"
    build(paths, site, offline=True)
    store = Recording(FolderStore(tmp_path / "www"))
    listing = dict(publisher.site_listing(site))
    assert set(listing) == set(files(site)), "every file, read through the tree of lists"
    publisher.publish(site, store, iter(()), jobs=1)
    written = [k for _, k in store.writes]
    assert written[-3:] == [layout.SUMS, layout.SUMS_SIG, layout.CHECKPOINT]
    lists = [k for k in written if k.startswith("sums/")]
    first_list = written.index(lists[0])
    assert written[first_list : first_list + len(lists)] == lists, "the lists after every other page"
    depths = [len(k) for k in lists]
    assert depths == sorted(depths, reverse=True) and len(set(depths)) > 1, "the deepest first"
    assert files(tmp_path / "www") == files(site)
    assert verify(tmp_path / "www").returncode == 0

    before = files(site)
    retire_item(paths, "b-0251", "One more.", "2026-03-02T00:00:00Z")
    build(paths, site, offline=True)
    after = files(site)
    record = [(p, hashlib.sha256(d).hexdigest()) for p, d in sorted(before.items(), key=lambda r: r[0].encode())]
    store = Recording(FolderStore(tmp_path / "www"))
    publisher.publish(site, store, iter(record), jobs=1)
    sent = {k for op, k in store.writes if op != "delete"}
    assert sent == {p for p in after if before.get(p) != after[p]}
    assert any(k.startswith("sums/") for k in sent) and any(k.startswith("download/") for k in sent)
    assert files(tmp_path / "www") == after
    assert verify(tmp_path / "www").returncode == 0


def test_a_v4_site_publishes_its_manifest_after_its_parts_and_one_event_sends_one_part(
    make_program: Callable[..., Paths], tmp_path: Path
) -> None:
    # 270 reveals: two parts of the manifest's reveals (docs/formats/v4.md).
    paths = make_program(secret_items=280, retired=0)
    (paths.data / "program.yaml").write_text((paths.data / "program.yaml").read_text() + "format: 4\n")
    retire_items(paths, [f"b-{i:04d}" for i in range(1, 271)], "Retired.", "2026-02-01T00:00:00Z")
    site = tmp_path / "public"
    build(paths, site, offline=True)
    index = json.loads((site / layout.MANIFEST).read_bytes())
    assert len(index["reveals"]["parts"]) == 2
    store = Recording(FolderStore(tmp_path / "www"))
    publisher.publish(site, store, iter(()), jobs=1)
    written = [k for _, k in store.writes]
    assert written[-4:] == [layout.MANIFEST, layout.SUMS, layout.SUMS_SIG, layout.CHECKPOINT]
    assert verify(tmp_path / "www").returncode == 0

    before = files(site)
    retire_item(paths, "b-0271", "One more.", "2026-03-02T00:00:00Z")
    build(paths, site, offline=True)
    after = files(site)
    record = [(p, hashlib.sha256(d).hexdigest()) for p, d in sorted(before.items(), key=lambda r: r[0].encode())]
    store = Recording(FolderStore(tmp_path / "www"))
    publisher.publish(site, store, iter(record), jobs=2)
    sent = [k for op, k in store.writes if op != "delete"]
    assert [k for k in sent if k.startswith("manifest/")] == [layout.manifest_part("reveals", 1)]
    assert sent.index(layout.MANIFEST) > sent.index(layout.manifest_part("reveals", 1))
    assert sent[-4:] == [layout.MANIFEST, layout.SUMS, layout.SUMS_SIG, layout.CHECKPOINT]
    assert files(tmp_path / "www") == after
    assert verify(tmp_path / "www").returncode == 0
