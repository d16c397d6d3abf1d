"""`transparency publish s3://…` against a real object store: SeaweedFS on loopback, as one
server and as a cluster. What a reader fetches over plain HTTP is checked, as a reader would:
headers, CORS, the tiles against the checkpoint, and a copy of the bucket verified by verify.py."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.commands.build import build
from generator.commands.retire import retire_item
from generator.core import layout
from generator.core.object_kinds import IMMUTABLE_CACHE, PAGE_CACHE, Kind, kind_of
from generator.verifier import read_tiled_log
from tests.support.crashes import cli_command
from tests.support.demo import BUNDLE, BuiltSite
from tests.support.seaweed import S3Server, cluster, single_server


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with single_server(tmp_path_factory.mktemp("seaweedfs")) as server:
        yield server


def cli(server: S3Server, *args: str, crash_at: int = 0) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process, with only the standard AWS variables pointing it at the store."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "SOURCE_DATE_EPOCH"}
    env.update(server.env(), CRASH_AT=str(crash_at))
    return subprocess.run(cli_command(list(args)), capture_output=True, text=True, env=env, timeout=300)


def get(url: str, headers: dict[str, str] | None = None) -> tuple[bytes, dict[str, str]] | None:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as r:
            return r.read(), {k.lower(): v for k, v in r.headers.items()}
    except urllib.error.HTTPError as e:
        if e.code in (403, 404):  # SeaweedFS answers a missing key to an anonymous reader with 403
            return None
        raise


def make_bucket(server: S3Server, name: str) -> None:
    server.client().create_bucket(Bucket=name)


def download(server: S3Server, bucket: str, prefix: str, into: Path) -> None:
    """What a mirror does: SHA256SUMS and its signature, then every file they list, over HTTP."""
    base = f"{server.endpoint}/{bucket}/{prefix}"
    sums = get(f"{base}/{layout.SUMS}")
    assert sums is not None
    paths = [layout.SUMS, layout.SUMS_SIG, *(line.split("  ", 1)[1] for line in sums[0].decode().splitlines())]
    for path in paths:
        got = get(f"{base}/{path}")
        assert got is not None, path
        (into / path).parent.mkdir(parents=True, exist_ok=True)
        (into / path).write_bytes(got[0])


def verify(site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", str(BUNDLE), str(site), "--no-state"], capture_output=True, text=True, timeout=300
    )


def program_args(site: BuiltSite) -> list[str]:
    return ["--data", str(site.paths.data)]


def test_publish_and_read_back_over_http(s3: S3Server, built_program: BuiltSite, tmp_path: Path) -> None:
    make_bucket(s3, "first")
    target = "s3://first/transparency"
    r = cli(s3, *program_args(built_program), "publish", target, "--site", str(built_program.out))
    assert r.returncode == 0, r.stderr
    assert "immutable objects created" in r.stdout and " 0 unchanged since the last publish" in r.stdout
    base = f"{s3.endpoint}/first/transparency"

    body, headers = get(f"{base}/{layout.CHECKPOINT}", {"Origin": "https://auditor.example"}) or (b"", {})
    assert body == (built_program.out / layout.CHECKPOINT).read_bytes()
    assert headers["cache-control"] == PAGE_CACHE
    assert headers["content-type"].startswith("text/plain")
    assert headers.get("access-control-allow-origin") in ("*", "https://auditor.example")
    tile = next(p for p in (built_program.out / "ledger" / "tile" / "0").rglob("*") if p.is_file())
    _, headers = get(f"{base}/{tile.relative_to(built_program.out).as_posix()}") or (b"", {})
    assert headers["cache-control"] == IMMUTABLE_CACHE
    _, headers = get(f"{base}/index.html") or (b"", {})
    assert headers["content-type"] == "text/html; charset=utf-8" and headers["cache-control"] == PAGE_CACHE

    copy = tmp_path / "copy"
    download(s3, "first", "transparency", copy)
    result = verify(copy)
    assert result.returncode == 0, result.stdout + result.stderr

    r = cli(s3, *program_args(built_program), "publish", target, "--site", str(built_program.out), "--check")
    assert r.returncode == 0 and "all present with the site's bytes" in r.stdout, r.stdout + r.stderr
    client = s3.client()
    client.delete_object(Bucket="first", Key="transparency/style.css")
    client.put_object(Bucket="first", Key="transparency/index.html", Body=b"defaced")
    r = cli(s3, *program_args(built_program), "publish", target, "--site", str(built_program.out), "--check")
    assert r.returncode == 1
    assert "missing: style.css" in r.stdout and "altered: index.html" in r.stdout


def test_one_event_sends_only_what_changed(s3: S3Server, built_program: BuiltSite) -> None:
    make_bucket(s3, "second")
    args = [*program_args(built_program), "publish", "s3://second", "--site", str(built_program.out)]
    assert cli(s3, *args).returncode == 0
    before = {
        p.relative_to(built_program.out).as_posix(): p.read_bytes() for p in built_program.out.rglob("*") if p.is_file()
    }
    retire_item(built_program.paths, "b-0002", "Rotated out.", "2026-03-02T00:00:00Z")
    build(built_program.paths, built_program.out)
    after = {
        p.relative_to(built_program.out).as_posix(): p.read_bytes() for p in built_program.out.rglob("*") if p.is_file()
    }
    changed = [p for p in after if before.get(p) != after[p]]
    r = cli(s3, *args)
    assert r.returncode == 0, r.stderr
    immutable = sum(1 for p in changed if kind_of(p) is Kind.IMMUTABLE)
    assert (
        f"{immutable} immutable objects created, {len(changed) - immutable} pages and indexes written, "
        f"{len(after) - len(changed)} unchanged since the last publish"
    ) in r.stdout
    keys = {o["Key"] for o in s3.client().list_objects_v2(Bucket="second")["Contents"]}
    assert set(after) <= keys
    assert keys - set(after) <= {p for p in before if p.startswith("ledger/tile/")}  # an archived size's partial tiles


def test_an_object_planted_at_an_immutable_key_is_refused_never_overwritten(
    s3: S3Server, built_program: BuiltSite
) -> None:
    make_bucket(s3, "third")
    s3.client().put_object(Bucket="third", Key="reveals/b-0001.json", Body=b'{"planted": true}')
    r = cli(s3, *program_args(built_program), "publish", "s3://third", "--site", str(built_program.out))
    assert r.returncode == 1
    assert "reveals/b-0001.json: already published with other bytes" in r.stderr
    assert s3.client().get_object(Bucket="third", Key="reveals/b-0001.json")["Body"].read() == b'{"planted": true}'
    assert get(f"{s3.endpoint}/third/{layout.CHECKPOINT}") is None


class Reader(threading.Thread):
    """A reader following the log while publishes run: each checkpoint it sees must come with its
    tiles (the leaves read back to its root). Any failure to read them, whatever it is, is a torn
    release."""

    def __init__(self, base: str) -> None:
        super().__init__(daemon=True)
        self.base = base
        self.stop = threading.Event()
        self.seen: set[int] = set()
        self.torn: list[str] = []

    def read(self, path: str) -> bytes | None:
        got = get(f"{self.base}/{path}")
        return None if got is None else got[0]

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                note = self.read(layout.CHECKPOINT)
                if note is None:
                    continue
                lines = note.decode().split("\n")
                size, root = int(lines[1]), base64.b64decode(lines[2])
            except Exception as e:
                self.torn.append(f"the checkpoint: {e}")
                continue
            try:
                log = read_tiled_log(lambda p: self.read(f"ledger/{p}"), size)
                for _ in log:
                    pass
                if log.root() != root:
                    self.torn.append(f"size {size}: the tiles give another root")
            except Exception as e:
                self.torn.append(f"size {size}: {e}")
            self.seen.add(size)


def follow_kills(server: S3Server, site: BuiltSite, bucket: str) -> None:
    """Publish, make one event, then publish it killed after each of several objects while a
    reader polls; the last run finishes, and a copy of the bucket verifies."""
    make_bucket(server, bucket)
    args = [*program_args(site), "publish", f"s3://{bucket}/p", "--site", str(site.out), "--jobs", "2"]
    assert cli(server, *args).returncode == 0
    first = int((site.out / layout.CHECKPOINT).read_text().split("\n")[1])
    before = {p.relative_to(site.out).as_posix(): p.read_bytes() for p in site.out.rglob("*") if p.is_file()}
    retire_item(site.paths, "b-0002", "Rotated out.", "2026-03-02T00:00:00Z")
    build(site.paths, site.out)
    after = {p.relative_to(site.out).as_posix(): p.read_bytes() for p in site.out.rglob("*") if p.is_file()}
    sent = sum(1 for p in after if before.get(p) != after[p])
    reader = Reader(f"{server.endpoint}/{bucket}/p")
    reader.start()
    try:
        # After the first object, in each phase, and after the checkpoint (before the clean-up).
        for kill_at in sorted({1, sent // 4, sent // 2, 3 * sent // 4, sent - 1, sent}):
            assert cli(server, *args, crash_at=kill_at).returncode == 137
        r = cli(server, *args)
        assert r.returncode == 0, r.stderr
        final = int((site.out / layout.CHECKPOINT).read_text().split("\n")[1])
        guard = time.monotonic() + 120  # a bound on a hang, not a timing the test relies on
        while final not in reader.seen and reader.is_alive() and time.monotonic() < guard:
            time.sleep(0.05)
    finally:
        reader.stop.set()
        reader.join(timeout=60)
    assert reader.torn == []
    assert first in reader.seen and final in reader.seen
    copy = site.paths.data.parent / "copy"
    download(server, bucket, "p", copy)
    assert verify(copy).returncode == 0


@pytest.mark.slow
def test_a_reader_never_sees_a_torn_release_while_publishes_are_killed(s3: S3Server, built_program: BuiltSite) -> None:
    follow_kills(s3, built_program, "fourth")


@pytest.mark.slow
def test_the_cluster_publishes_and_survives_kills(
    built_program: BuiltSite, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with cluster(tmp_path_factory.mktemp("cluster")) as server:
        follow_kills(server, built_program, "clustered")
