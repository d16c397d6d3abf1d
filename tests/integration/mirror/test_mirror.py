"""`transparency mirror follow`: a mirror copying a published log from a folder and over HTTP, through
the real command and through the module (where a test reads the site through a fetch of its own):
every tile stored once and checked, a cosignature only for a tree whose every entry is on its disk,
read back, and every refusal (a tampered, missing or vanishing tile, a disk that fails, a fork, a
rollback, a key it does not pin) leaving the mirror's checkpoint as it was."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from generator.core.cosigning_keys import load_cosigner
from generator.mirror.mirror_errors import Refused
from generator.mirror.pull import Pulled, new_tiles, pull
from generator.monitor.site_source import Fetch, open_site
from generator.verifier import (
    ED25519,
    ML_DSA_44,
    TileBuilder,
    open_note,
    parse_checkpoint,
    parse_cosigner_vkey,
    parse_vkey,
    verify_cosignatures,
)
from tests.support.http_site import serve
from tests.support.mirrors import (
    ORIGIN,
    PublishedLog,
    cli,
    copy_folder,
    copy_tiles,
    demo_site,
    files_of,
    mirror_key,
    site_tiles,
)

KINDS = [ED25519, ML_DSA_44]
NAME = "mirror.example.org"


def follow(site: str | Path, out: Path, key: Path, *log_vkeys: str, code: int = 0) -> str:
    """`transparency mirror follow SITE --out OUT --key KEY --log …`, which must exit with `code`;
    its stdout and stderr."""
    logs = [a for v in log_vkeys for a in ("--log", v)]
    got, out_text, err = cli("mirror", "follow", site, "--out", out, "--key", key, *logs)
    assert got == code, f"exit {got}, wanted {code}\nstdout:\n{out_text}\nstderr:\n{err}"
    return out_text + err


def mirrored(out: Path, site: Path, log_vkey: str, mirror_vkey: str, size: int, origin: str = ORIGIN) -> bytes:
    """Check the mirror in `out` holds the log of `site` at `size` and cosigned it: its tiles are
    the site's, its checkpoint opens with the log's key, the mirror's cosignature verifies with a
    timestamp that is now's, not 0. The checkpoint's bytes."""
    folder = copy_folder(out, origin)
    note = (folder / "checkpoint").read_bytes()
    _, got_size, _ = parse_checkpoint(open_note(note, [parse_vkey(log_vkey)]).text)
    assert got_size == size
    stamps = verify_cosignatures(note, [parse_cosigner_vkey(mirror_vkey)])
    assert stamps[NAME] > 1_700_000_000
    tiles = copy_tiles(folder)
    assert {rel: tiles.get(rel) for rel in site_tiles(site, size)} == site_tiles(site, size)
    return note


def _stamped(folder: Path) -> dict[Path, tuple[bytes, int]]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


def _tree_of(site: Path) -> tuple[int, bytes]:
    text = (site / "ledger" / "checkpoint").read_text()
    _, size, root = parse_checkpoint(text[: text.index("\n\n") + 1])
    return size, root


def size_of(site: Path) -> int:
    return _tree_of(site)[0]


def root_of(site: Path) -> str:
    return base64.b64encode(_tree_of(site)[1]).decode()


@pytest.fixture
def log(tmp_path: Path) -> PublishedLog:
    return PublishedLog(tmp_path / "site")


@pytest.fixture
def key(tmp_path: Path) -> tuple[Path, str]:
    return mirror_key(tmp_path, ED25519)


# -- following a log


@pytest.mark.parametrize("kind", KINDS)
def test_a_mirror_copies_the_demo_site_from_its_folder_and_over_http(kind: str, tmp_path: Path) -> None:
    site, log_vkey = demo_site(tmp_path / "site")
    key_file, mirror_vkey = mirror_key(tmp_path, kind)
    origin = parse_vkey(log_vkey).name
    said = follow(site, tmp_path / "from-folder", key_file, log_vkey)
    size = size_of(site)  # the demo's, whatever it is today (under 256 entries: one bundle, one hash tile)
    assert f"{origin}: stored and cosigned size {size} (first copy; 2 tiles fetched)" in said
    note = mirrored(tmp_path / "from-folder", site, log_vkey, mirror_vkey, size, origin)
    # The log's signature is kept, the demo witness's cosignature is not the mirror's to vouch for.
    assert note.startswith((site / "ledger" / "checkpoint").read_bytes().split(b"\n\n")[0] + b"\n\n")
    assert b"witness.demo.example.org" not in note
    with serve(site) as served:
        follow(served.url, tmp_path / "over-http", key_file, log_vkey)
        mirrored(tmp_path / "over-http", site, log_vkey, mirror_vkey, size, origin)
        asked = len(served.requests)
        # Nothing new: nothing fetched but the checkpoint, nothing signed, not a byte changed.
        before = _stamped(copy_folder(tmp_path / "over-http", origin))
        said = follow(served.url, tmp_path / "over-http", key_file, log_vkey)
        assert served.requests[asked:] == ["ledger/checkpoint"]
    assert f"unchanged at size {size}; nothing fetched, nothing signed" in said
    assert _stamped(copy_folder(tmp_path / "over-http", origin)) == before
    assert copy_tiles(copy_folder(tmp_path / "over-http", origin)) == copy_tiles(
        copy_folder(tmp_path / "from-folder", origin)
    )


def test_a_growing_log_is_followed_and_each_tile_is_fetched_once(
    log: PublishedLog, key: tuple[Path, str], tmp_path: Path
) -> None:
    """Sizes around every tile boundary, up to a full level-1 tile: each run stores the new tiles
    and cosigns; over all runs no tile is asked of the site twice (full tiles once, and each size's
    partial tiles once, those the consistency proof read included)."""
    out = tmp_path / "mirror"
    with serve(log.site) as served:
        for size in (1, 255, 256, 257, 600, 65536 + 300):
            log.publish(size)
            said = follow(served.url, out, key[0], log.vkey)
            assert f"stored and cosigned size {size}" in said
            mirrored(out, log.site, log.vkey, key[1], size)
        tiles = [rel for rel in served.requests if rel != "ledger/checkpoint"]
    assert len(tiles) == len(set(tiles)), sorted(rel for rel in set(tiles) if tiles.count(rel) > 1)
    # The partial tiles of every size cosigned stay, for a reader holding an older checkpoint.
    held = copy_tiles(copy_folder(out))
    for size in (1, 255, 257, 600):
        assert set(site_tiles(log.site, size)) <= set(held)


def test_a_kill_between_tile_writes_leaves_the_old_checkpoint_and_the_next_run_finishes(
    log: PublishedLog, key: tuple[Path, str], tmp_path: Path
) -> None:
    """The site's fetch dies at each entry bundle in turn (as a kill would stop the run there): the
    mirror's checkpoint stays the old one, with all its tiles, and the next run reads back the tiles
    already written, fetches the rest, and only then cosigns."""
    base = tmp_path / "base"
    log.publish(300)
    cosigner = load_cosigner(key[0])
    pull(str(log.site), base, cosigner, [parse_vkey(log.vkey)])
    old = (copy_folder(base) / "checkpoint").read_bytes()
    log.publish(2000)
    bundles = [rel for rel in new_tiles(300, 2000) if rel.startswith("tile/entries/")]

    class Killed(Exception):
        pass

    for k, doomed in enumerate(bundles):
        out = tmp_path / f"killed-{k}"
        shutil.copytree(base, out)
        _, fetch = open_site(str(log.site))

        def dying(rel: str, limit: int, doomed: str = doomed, fetch: Fetch = fetch) -> bytes | None:
            if rel == f"ledger/{doomed}":
                raise Killed(rel)
            return fetch(rel, limit)

        with pytest.raises(Killed):
            pull(str(log.site), out, cosigner, [parse_vkey(log.vkey)], fetch=dying)
        assert (copy_folder(out) / "checkpoint").read_bytes() == old
        mirrored(out, log.site, log.vkey, key[1], 300)  # the old tree, whole
        written = set(copy_tiles(copy_folder(out))) - set(copy_tiles(copy_folder(base)))
        assert doomed not in written
        result = pull(str(log.site), out, cosigner, [parse_vkey(log.vkey)])
        assert result.cosigned and result.size == 2000
        total = len(new_tiles(300, 2000))
        # What was written is read back, not fetched (but the few hash tiles the consistency proof asks the site for).
        assert total - len(written) <= result.fetched < total if written else result.fetched == total
        mirrored(out, log.site, log.vkey, key[1], 2000)


# -- it cosigns only what it stored


def _tampered(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 1])


@pytest.mark.parametrize(
    ("tile", "named"),
    [
        ("tile/entries/001", "leaf 255 of tile/entries/001 hashes"),  # a leaf changed: its level-0 tile says so
        ("tile/0/002.p/88", "tile/0/002.p/88"),  # a hash tile of the new tree, read by the consistency proof
        ("tile/entries/002.p/88", "leaf 87 of tile/entries/002.p/88"),
    ],
)
def test_a_tampered_tile_gets_no_cosignature(
    tile: str, named: str, log: PublishedLog, key: tuple[Path, str], tmp_path: Path
) -> None:
    out = tmp_path / "mirror"
    log.publish(300)
    follow(log.site, out, key[0], log.vkey)
    before = files_of(out)
    log.publish(600)
    bad = {f"ledger/{tile}": _tampered((log.site / "ledger" / tile).read_bytes())}
    with serve(log.site, lambda rel, n: bad.get(rel)) as served:
        said = follow(served.url, out, key[0], log.vkey, code=1)
    assert named in said
    assert "this mirror's checkpoint was not changed" in said or "nothing was changed" in said
    assert (copy_folder(out) / "checkpoint").read_bytes() == before[f"{copy_folder(out).name}/checkpoint"]
    assert not (copy_folder(out) / tile).exists()
    follow(log.site, out, key[0], log.vkey)  # the real tile, from the folder
    mirrored(out, log.site, log.vkey, key[1], 600)


def test_a_first_copy_of_tampered_tiles_writes_no_checkpoint(
    log: PublishedLog, key: tuple[Path, str], tmp_path: Path
) -> None:
    log.publish(300)
    tile = "ledger/tile/0/001.p/44"
    with serve(log.site, lambda rel, n: _tampered((log.site / tile).read_bytes()) if rel == tile else None) as served:
        said = follow(served.url, tmp_path / "mirror", key[0], log.vkey, code=1)
    assert "tile/0/001.p/44: hash 43 is" in said
    assert not (copy_folder(tmp_path / "mirror") / "checkpoint").exists()


def test_tiles_a_refused_run_left_are_fetched_again(log: PublishedLog, key: tuple[Path, str], tmp_path: Path) -> None:
    """A site serving another first bundle with the level-0 tile that matches it: both pass their own
    check and are written, but the level above refuses them. Once the site serves the log again,
    the tiles left on disk do not give its root, and the mirror fetches them again."""
    out = tmp_path / "mirror"
    log.publish(300)
    other = TileBuilder()
    forged = dict(t for i in range(256) for t in other.append(b"forged %d" % i))
    swap = {f"ledger/{rel}": data for rel, data in forged.items()}
    with serve(log.site, lambda rel, n: swap.get(rel)) as served:
        said = follow(served.url, out, key[0], log.vkey, code=1)
    assert "tile/1/000.p/1: hash 0 is" in said
    assert (copy_folder(out) / "tile/entries/000").read_bytes() == forged["tile/entries/000"]  # left, never cosigned
    follow(log.site, out, key[0], log.vkey)
    mirrored(out, log.site, log.vkey, key[1], 300)


def test_a_missing_tile_gets_no_cosignature(log: PublishedLog, key: tuple[Path, str], tmp_path: Path) -> None:
    out = tmp_path / "mirror"
    log.publish(300)
    follow(log.site, out, key[0], log.vkey)
    before = files_of(copy_folder(out))
    log.publish(600)
    (log.site / "ledger/tile/entries/002.p/88").unlink()
    said = follow(log.site, out, key[0], log.vkey, code=1)
    assert "tile/entries/002.p/88: missing" in said
    assert (copy_folder(out) / "checkpoint").read_bytes() == before["checkpoint"]
    (log.site / "ledger/tile/0/002.p/88").unlink()  # a tile the consistency proof needs
    said = follow(log.site, out, key[0], log.vkey, code=1)
    assert "cannot prove" in said and "tile/0/002.p/88: missing" in said


def test_a_tile_that_disappears_mid_run_gets_no_cosignature(
    log: PublishedLog, key: tuple[Path, str], tmp_path: Path
) -> None:
    """The site's folder loses a tile after the run has read its checkpoint: the run stops there,
    naming it, and the old checkpoint stays."""
    out = tmp_path / "mirror"
    cosigner = load_cosigner(key[0])
    log.publish(300)
    pull(str(log.site), out, cosigner, [parse_vkey(log.vkey)])
    old = (copy_folder(out) / "checkpoint").read_bytes()
    log.publish(1000)
    _, fetch = open_site(str(log.site))
    gone = log.site / "ledger/tile/entries/003.p/232"

    def vanishing(rel: str, limit: int) -> bytes | None:
        if rel == "ledger/checkpoint":
            data = fetch(rel, limit)
            gone.unlink()
            return data
        return fetch(rel, limit)

    with pytest.raises(Refused, match=r"tile/entries/003.p/232: missing"):
        pull(str(log.site), out, cosigner, [parse_vkey(log.vkey)], fetch=vanishing)
    assert (copy_folder(out) / "checkpoint").read_bytes() == old


def test_a_store_that_cannot_write_gets_no_cosignature(
    log: PublishedLog, key: tuple[Path, str], tmp_path: Path
) -> None:
    """A folder where the new partial bundle must go (the tests run as root, so a read-only folder
    would not stop them): the write fails, exit 2, no cosignature; once it is gone, the next run
    completes."""
    out = tmp_path / "mirror"
    log.publish(300)
    follow(log.site, out, key[0], log.vkey)
    old = (copy_folder(out) / "checkpoint").read_bytes()
    log.publish(600)
    blocker = copy_folder(out) / "tile/entries/002.p/88"
    blocker.mkdir(parents=True)
    said = follow(log.site, out, key[0], log.vkey, code=2)
    assert "tile/entries/002.p/88: cannot write it" in said
    assert (copy_folder(out) / "checkpoint").read_bytes() == old
    blocker.rmdir()
    follow(log.site, out, key[0], log.vkey)
    mirrored(out, log.site, log.vkey, key[1], 600)


def test_a_fork_and_a_rollback_are_refused_naming_both_roots(
    log: PublishedLog, key: tuple[Path, str], tmp_path: Path
) -> None:
    out = tmp_path / "mirror"
    log.publish(300)
    follow(log.site, out, key[0], log.vkey)
    held = root_of(log.site)
    before = files_of(out)
    fork = PublishedLog(tmp_path / "fork", prefix=b"fork", shared=200)  # the same key, another history
    fork.publish(300)
    said = follow(fork.site, out, key[0], log.vkey, code=1)
    assert f"forked: at size 300 the log's checkpoint has root {root_of(fork.site)}" in said
    assert f"this mirror holds and cosigned root {held}" in said
    fork.publish(600)
    said = follow(fork.site, out, key[0], log.vkey, code=1)
    assert f"(size 600, root {root_of(fork.site)})" in said and f"(size 300, root {held})" in said
    assert "are not consistent" in said
    log.publish(299)
    said = follow(log.site, out, key[0], log.vkey, code=1)
    assert f"rolled back: the log's checkpoint has size 299 (root {root_of(log.site)})" in said
    assert f"smaller than the size 300 (root {held})" in said
    assert files_of(out) == before


def test_only_a_pinned_key_opens_the_log_s_checkpoint(log: PublishedLog, key: tuple[Path, str], tmp_path: Path) -> None:
    out = tmp_path / "mirror"
    log.publish(10)
    stranger = PublishedLog(tmp_path / "other", seed=bytes(32))  # the same origin, another key
    said = follow(log.site, out, key[0], stranger.vkey, code=1)
    assert "ledger/checkpoint does not verify with the pinned log key(s)" in said
    elsewhere = PublishedLog(tmp_path / "elsewhere", origin="other.example.org/log", seed=bytes(range(1, 33)))
    said = follow(log.site, out, key[0], elsewhere.vkey, code=1)
    assert f'a checkpoint of the log "{ORIGIN}", for which no key is pinned' in said
    assert not copy_folder(out).exists()
    policy = tmp_path / "policy.txt"
    policy.write_text(f"log {elsewhere.vkey}\nlog {log.vkey}\nquorum none\n")
    got, said, err = cli("mirror", "follow", log.site, "--out", out, "--key", key[0], "--policy", policy, "-q")
    assert got == 0, err
    assert "stored and cosigned size 10" in said and err == ""


def test_a_mirror_keeps_to_its_key(log: PublishedLog, key: tuple[Path, str], tmp_path: Path) -> None:
    """A copy whose checkpoint another mirror key cosigned is not taken over."""
    out = tmp_path / "mirror"
    log.publish(10)
    follow(log.site, out, key[0], log.vkey)
    other, _ = mirror_key(tmp_path, ML_DSA_44, "other.example.org")
    log.publish(20)
    said = follow(log.site, out, other, log.vkey, code=2)
    assert "not cosigned by this mirror's key other.example.org+" in said


def test_every_seconds_follows_until_interrupted(log: PublishedLog, key: tuple[Path, str], tmp_path: Path) -> None:
    from generator.commands.mirror_run import follow_every, follower

    log.publish(300)
    f = follower(str(log.site), tmp_path / "mirror", key[0], None, [log.vkey], None)
    reports: list[Pulled | Exception] = []
    naps: list[float] = []

    def sleep(seconds: float) -> None:
        naps.append(seconds)
        if len(naps) == 1:
            log.publish(600)
        elif len(naps) == 2:
            log.publish(700)
            (log.site / "ledger/tile/entries/002.p/188").unlink()
        else:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        follow_every(f, 60, lambda: lambda *_: None, reports.append, sleep)
    assert naps == [60, 60, 60]
    first, second, third = reports
    assert isinstance(first, Pulled) and first.size == 300 and first.cosigned
    assert isinstance(second, Pulled) and second.size == 600 and second.old_size == 300
    assert isinstance(third, Refused) and "tile/entries/002.p/188: missing" in str(third)
    mirrored(tmp_path / "mirror", log.site, log.vkey, key[1], 600)


def test_every_seconds_from_the_command_line_stops_cleanly_on_ctrl_c(
    log: PublishedLog, key: tuple[Path, str], tmp_path: Path
) -> None:
    """The real command as a daemon: its first run's line read, then SIGINT, which ends it with
    status 0 and the mirror's checkpoint the one just cosigned."""
    log.publish(300)
    argv = ["mirror", "follow", log.site, "--out", tmp_path / "mirror", "--key", key[0], "--log", log.vkey]
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator", *map(str, argv), "--every", "3600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "stored and cosigned size 300 (first copy;" in first
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0, err
    assert "stopped: the mirror's checkpoint is the last one cosigned" in err
    mirrored(tmp_path / "mirror", log.site, log.vkey, key[1], 300)


# -- serving the copy


def test_the_mirror_s_folder_is_served_read_only(log: PublishedLog, key: tuple[Path, str], tmp_path: Path) -> None:
    """What a monitor asks a mirror for, <prefix>/<origin hash>/checkpoint and the tiles, with GET;
    nothing else: no listing, no dot file, no link, no path out of the folder, no other method."""
    import http.client

    from generator.commands.mirror_run import mirror_server
    from generator.verifier import HttpRemote

    out = tmp_path / "mirror"
    log.publish(300)
    follow(log.site, out, key[0], log.vkey)
    (tmp_path / "secret").write_text("not the mirror's")
    os.symlink(tmp_path / "secret", copy_folder(out) / "link")
    server = mirror_server(out, "127.0.0.1:0")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        remote = HttpRemote(url)
        hashed = copy_folder(out).name
        assert remote.get(f"{hashed}/checkpoint", 1 << 16) == (copy_folder(out) / "checkpoint").read_bytes()
        assert (
            remote.get(f"{hashed}/tile/entries/001.p/44", 1 << 20)
            == (log.site / "ledger/tile/entries/001.p/44").read_bytes()
        )
        for path in (f"{hashed}/", f"{hashed}/tile/", f".{hashed}.lock", f"{hashed}/link", f"{hashed}/../../secret"):
            assert remote.get(path, 1 << 16) is None, path

        def status(method: str, path: str) -> tuple[int, str | None, str | None]:
            conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
            conn.request(method, path)
            r = conn.getresponse()
            r.read()
            conn.close()
            return r.status, r.getheader("Content-Type"), r.getheader("Cache-Control")

        assert status("GET", f"/{hashed}/checkpoint") == (200, "text/plain; charset=utf-8", "no-cache")
        assert status("GET", f"/{hashed}/tile/0/000")[::2] == (200, "public, max-age=604800, immutable")
        assert status("GET", "/%2e%2e/secret")[0] == 404
        assert status("GET", f"/%2e{hashed}.lock")[0] == 404
        assert status("HEAD", f"/{hashed}/checkpoint")[0] == 405
        assert status("POST", f"/{hashed}/checkpoint")[0] == 501
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


# -- the command line


@pytest.mark.parametrize(
    "argv",
    [["mirror"], ["mirror", "key"], ["mirror", "follow"], ["mirror", "serve"]],
)
def test_each_command_s_help_teaches_with_an_example(argv: list[str]) -> None:
    code, out, _ = cli(*argv, "--help")
    assert code == 0
    assert "Example" in out
    assert "transparency mirror " in out


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        ([], 2, "no log key pinned"),
        (["--log", "LOG", "--policy", "POLICY"], 2, "--log and --policy both given"),
        (["--log", "not-a-vkey"], 2, "--log"),
        (["--log", "LOG", "--once", "--every", "5"], 2, "--once and --every exclude each other"),
        (["--log", "LOG", "--every", "0"], 2, "0"),
        (["--log", "LOG", "--key", "MISSING"], 2, "cannot read the key"),
    ],
)
def test_follow_refuses_bad_arguments(
    args: list[str], code: int, said: str, log: PublishedLog, key: tuple[Path, str], tmp_path: Path
) -> None:
    log.publish(3)
    policy = tmp_path / "policy.txt"
    policy.write_text(f"log {log.vkey}\nquorum none\n")
    swap = {"LOG": log.vkey, "POLICY": str(policy), "MISSING": str(tmp_path / "missing.key")}
    argv: list[str | Path] = [
        "mirror",
        "follow",
        log.site,
        "--out",
        tmp_path / "mirror",
        "--key",
        key[0],
        *[swap.get(a, a) for a in args],
    ]
    got, out, err = cli(*argv)
    assert got == code, out + err
    assert said in err


def test_key_and_serve_refuse_what_they_cannot_do(key: tuple[Path, str], tmp_path: Path) -> None:
    code, _, err = cli("mirror", "key", NAME, "--key", key[0])
    assert code == 2 and "a file is already there; refusing to overwrite it" in err
    code, _, err = cli("mirror", "key", "bad name", "--key", tmp_path / "bad.key")
    assert code == 2 and "cannot name a cosigner" in err
    code, _, err = cli("mirror", "serve", tmp_path, "--listen", "127.0.0.1:http")
    assert code == 2 and "--listen" in err
    code, _, err = cli(
        "mirror", "follow", "nowhere", "--out", tmp_path / "m", "--key", key[0], "--log", PublishedLog(tmp_path).vkey
    )
    assert code == 2 and "nowhere: not a folder" in err


def test_a_mirror_pinned_to_both_log_keys_keeps_both_lines_and_refuses_a_checkpoint_without_one(
    tmp_path: Path,
) -> None:
    """Pinned to both of the log's keys, Ed25519 and ML-DSA-44 (as the demo's policy names them), the mirror
    opens the checkpoint as a reader's policy does: both types must sign, and both verified lines
    are kept in the note it cosigns, so that a reader of the mirror holding that policy accepts it."""
    site, log_vkey = demo_site(tmp_path / "site")
    keys = json.loads((site / "keys.json").read_text())
    ml_vkey = keys["ml_dsa_44_keys"][-1]["vkey"]
    key_file, mirror_vkey = mirror_key(tmp_path, ED25519)
    origin = parse_vkey(log_vkey).name
    follow(site, tmp_path / "both", key_file, log_vkey, ml_vkey)
    note = mirrored(tmp_path / "both", site, log_vkey, mirror_vkey, size_of(site), origin)
    assert verify_cosignatures(note, [parse_cosigner_vkey(ml_vkey)]) == {origin: 0}, "the log's ML-DSA-44 line"
    text, lines = note.split(b"\n\n")
    without = tmp_path / "without"
    shutil.copytree(site, without)
    kept = [line for line in lines.splitlines() if len(base64.b64decode(line.split(b" ")[2])) < 2000]
    (without / "ledger" / "checkpoint").write_bytes(text + b"\n\n" + b"".join(line + b"\n" for line in kept))
    said = follow(without, tmp_path / "stripped", key_file, log_vkey, ml_vkey, code=1)
    assert "no signature by the pinned ML-DSA-44 key" in said
    assert not (tmp_path / "stripped").exists() or not list((tmp_path / "stripped").rglob("checkpoint"))
