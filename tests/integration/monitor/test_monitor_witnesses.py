"""`transparency monitor SITE --witnesses POLICY`: each witness's latest checkpoint of the log, read over
HTTP on the loopback as c2sp.org/tlog-witness serves it, compared with the others and with the log the
monitor read. The log signs two inconsistent trees with its own key and test witnesses cosign them (a real
witness never cosigns a fork): a split view, a fork at an older size, a cosignature out of time are caught
with both sides printed and the state left as it was; witnesses that agree, at any size of the log, pass."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from types import SimpleNamespace

import pytest

from generator.commands.build import build
from generator.core import layout
from generator.monitor import follow
from generator.program.datadir import Paths
from generator.verifier import (
    canonical_bytes,
    leaf_hash,
    make_vkey,
    merkle_root,
    parse_canonical,
    parse_checkpoint,
    parse_vkey,
)
from tests.support.demo import BuiltSite
from tests.support.history import grow, vkey_of
from tests.support.http_site import closed_port, serve
from tests.support.witness_views import (
    ViewServer,
    cosigned,
    cosigner,
    log_signer,
    origin_path,
    run_monitor,
    serve_views,
    signed_checkpoint,
    witness_process,
    write_policy,
)
from tests.support.witnesses import WitnessFiles
from tests.support.witnesses import write_policy as write_program_policy

ORIGIN = "test.example.org/prog"
W1, W2, W3 = cosigner("w1.example.org"), cosigner("w2.example.org"), cosigner("w3.example.org")


def tree_of(site: Path) -> tuple[int, bytes]:
    _, size, root = parse_checkpoint((site / layout.CHECKPOINT).read_text().split("\n\n")[0] + "\n")
    return size, root


def b64(h: bytes) -> str:
    return base64.b64encode(h).decode()


def state_file(state: Path) -> Path:
    return state / f"{hashlib.sha256(ORIGIN.encode()).hexdigest()}.json"


def now() -> int:
    return int(time.time())


@pytest.fixture
def releases(make_program: Callable[..., Paths], tmp_path: Path) -> tuple[Path, Path, Paths]:
    """A site, the same site one release later, and the program's paths."""
    paths = make_program()
    first = tmp_path / "first"
    build(paths, first)
    later = tmp_path / "later"
    shutil.copytree(first, later)
    grow(paths, 1, "2026-03-01T00:00:00Z")
    build(paths, later)
    assert tree_of(later)[0] > tree_of(first)[0]
    return first, later, paths


class Witnesses:
    """Each witness's test server, serving the note it was given for the log's origin (none: 404),
    and a policy naming them all."""

    def __init__(self, stack: ExitStack, tmp_path: Path, log_vkey: str) -> None:
        self.stack, self.tmp_path, self.log_vkey = stack, tmp_path, log_vkey
        self.entries: list[tuple[str, object, str | None]] = []
        self.servers: dict[str, ViewServer] = {}

    def add(self, name: str, note: bytes | None, key: object = None, url: str | None = "serve") -> None:
        if url == "serve":
            server = self.stack.enter_context(serve_views({ORIGIN: note} if note is not None else {}))
            self.servers[name] = server
            url = server.url
        self.entries.append((name, key or cosigner(name), url))

    def policy(self) -> Path:
        return write_policy(self.tmp_path / "policy.txt", self.log_vkey, self.entries)  # type: ignore[arg-type]


@pytest.fixture
def witnesses(releases: tuple[Path, Path, Paths], tmp_path: Path) -> Iterator[Witnesses]:
    with ExitStack() as stack:
        yield Witnesses(stack, tmp_path, vkey_of(releases[0]))


def site_note(site: Path) -> bytes:
    return (site / layout.CHECKPOINT).read_bytes()


def forged(paths: Paths, size: int, seed: str) -> bytes:
    """A checkpoint of a tree of `size` that is not the log's, signed by the log's own key."""
    return signed_checkpoint(paths.key_file, ORIGIN, size, hashlib.sha256(seed.encode()).digest())


# -- inconsistencies


def test_two_witnesses_that_cosigned_two_trees_of_one_size_are_a_split_view(
    releases: tuple[Path, Path, Paths], witnesses: Witnesses, tmp_path: Path
) -> None:
    first, later, paths = releases
    size, root = tree_of(later)
    t1, t2 = now() - 100, now() - 50
    other = forged(paths, size, "the other branch")
    witnesses.add("w1", cosigned(site_note(later), W1, t1), W1)
    witnesses.add("w2", cosigned(other, W2, t2), W2)
    policy = witnesses.policy()
    state = tmp_path / "state"
    with serve(first) as site:
        run_monitor(site.url, "--state", state)
    before = state_file(state).read_bytes()
    with serve(later) as site:
        r = run_monitor(site.url, "--state", state, "--witnesses", policy, code=1)
    _, other_root = parse_checkpoint(other.decode().split("\n\n")[0] + "\n")[1:]
    w1 = f"witness w1 ({witnesses.servers['w1'].url}) cosigned size {size}, root {b64(root)}, at "
    w2 = f"witness w2 ({witnesses.servers['w2'].url}) cosigned size {size}, root {b64(other_root)}, at "
    split = next(line for line in r.stderr.splitlines() if "split view" in line)
    assert split.startswith(f"monitor: INCONSISTENT: split view: two trees of size {size} cosigned: {w1}")
    assert f"(timestamp {t1}); {w2}" in split and split.endswith(f"(timestamp {t2})")
    fork = next(line for line in r.stderr.splitlines() if "INCONSISTENT: fork" in line)
    assert fork.startswith(f"monitor: INCONSISTENT: fork: {w2}")
    log = f"but the log this monitor read has root {b64(root)} at size {size}"
    assert fork.endswith(f"{log} (its checkpoint: size {size}, root {b64(root)})")
    assert "w1" not in fork.split("; but")[0].split("cosigned")[0]
    assert r.stderr.splitlines()[-1] == "monitor: the state was not moved"
    assert r.stdout == "", "no event is printed by a run that failed"
    assert state_file(state).read_bytes() == before


def test_a_smaller_view_whose_root_is_not_the_log_s_is_a_fork_named_with_the_larger(
    releases: tuple[Path, Path, Paths], witnesses: Witnesses, tmp_path: Path
) -> None:
    first, later, paths = releases
    (small, small_root), (size, root) = tree_of(first), tree_of(later)
    witnesses.add("w1", cosigned(site_note(later), W1, now() - 10), W1)
    witnesses.add("w2", cosigned(forged(paths, small, "older fork"), W2, now() - 20), W2)
    fake = hashlib.sha256(b"older fork").digest()
    with serve(later) as site:
        r = run_monitor(site.url, "--state", tmp_path / "state", "--witnesses", witnesses.policy(), code=1)
    lines = [line.removeprefix("monitor: INCONSISTENT: ") for line in r.stderr.splitlines() if "INCONSISTENT" in line]
    assert len(lines) == 2, r.stderr
    assert lines[0].startswith(
        f"fork: witness w2 ({witnesses.servers['w2'].url}) cosigned size {small}, root {b64(fake)}"
    )
    assert f"but the log this monitor read has root {b64(small_root)} at size {small}" in lines[0]
    assert lines[1].startswith(
        f"w2 and w1 saw inconsistent trees: witness w2 ({witnesses.servers['w2'].url}) cosigned size {small}"
    )
    assert f"witness w1 ({witnesses.servers['w1'].url}) cosigned size {size}, root {b64(root)}" in lines[1]
    assert lines[1].endswith(
        f"a tree whose root at size {small} is {b64(small_root)} (the log's, as the site's tiles prove)"
    )
    assert not state_file(tmp_path / "state").exists(), "nothing is pinned after a failed first run"


def test_a_view_larger_than_the_site_s_is_a_warning_and_two_of_them_that_differ_a_split_view(
    releases: tuple[Path, Path, Paths], witnesses: Witnesses, tmp_path: Path
) -> None:
    first, later, paths = releases
    (small, small_root), (size, root) = tree_of(first), tree_of(later)
    witnesses.add("w1", cosigned(site_note(later), W1, now() - 10), W1)
    policy = witnesses.policy()
    with serve(first) as site:
        r = run_monitor(site.url, "--state", tmp_path / "state", "--witnesses", policy)
    ahead = f"monitor: warning: witness w1 ({witnesses.servers['w1'].url}) cosigned size {size}, root {b64(root)}, at "
    line = next(line for line in r.stderr.splitlines() if line.startswith(ahead))
    assert f"a larger tree than the site's checkpoint (size {small}, root {b64(small_root)})" in line
    assert "the site shows this monitor an older tree than w1 saw" in line
    assert parse_canonical(state_file(tmp_path / "state").read_bytes())["tree_size"] == small  # a warning
    witnesses.add("w2", cosigned(forged(paths, size, "ahead fork"), W2, now() - 5), W2)
    with serve(first) as site:
        r = run_monitor(site.url, "--state", tmp_path / "other", "--witnesses", witnesses.policy(), code=1)
    assert f"INCONSISTENT: split view: two trees of size {size} cosigned" in r.stderr
    assert r.stderr.count("a larger tree than the site's checkpoint") == 2


def test_cosignatures_from_the_future_or_older_than_max_age_are_inconsistencies(
    releases: tuple[Path, Path, Paths], witnesses: Witnesses, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, later, _ = releases
    t = now()
    # The command's clock held at t: on a loaded machine a second can pass before it reads it,
    # and the figures named below are exact.
    monkeypatch.setattr(follow, "time", SimpleNamespace(time=lambda: float(t)))
    witnesses.add("w1", cosigned(site_note(later), W1, t + 3600), W1)
    witnesses.add("w2", cosigned(site_note(later), W2, t - 10 * 86400), W2)
    witnesses.add("w3", cosigned(site_note(later), W3, t + 30), W3)  # within the clock skew
    policy = witnesses.policy()
    with serve(later) as site:
        r = run_monitor(site.url, "--state", tmp_path / "a", "--witnesses", policy, "--max-age", "7d", code=1)
        lines = [line for line in r.stderr.splitlines() if "INCONSISTENT" in line]
        assert len(lines) == 2, r.stderr
        assert "the cosignature by w1 is dated " in lines[0] and f"(timestamp {t + 3600}), 1h in the future" in lines[0]
        assert "expected at most 60s ahead" in lines[0]
        assert "the cosignature by w2 is dated " in lines[1] and "10d before this clock's" in lines[1]
        assert lines[1].endswith("expected at most 7d old")
        # Without --max-age any age will do; the future never does.
        r = run_monitor(site.url, "--state", tmp_path / "b", "--witnesses", policy, code=1)
        assert "w1 is dated" in r.stderr and "w2 is dated" not in r.stderr
        assert "w3" not in "".join(line for line in r.stderr.splitlines() if "INCONSISTENT" in line)


def test_the_clock_is_the_one_given_and_the_skew_and_the_age_are_exact_bounds(
    releases: tuple[Path, Path, Paths], witnesses: Witnesses, tmp_path: Path
) -> None:
    _, later, _ = releases
    t = 1_800_000_000
    witnesses.add("w1", cosigned(site_note(later), W1, t + 60), W1)
    witnesses.add("w2", cosigned(site_note(later), W2, t - 3600), W2)
    policy = witnesses.policy()

    def run(now: int) -> tuple[int, str]:
        err = io.StringIO()
        state = tmp_path / f"state-{now}"
        code = follow.run_monitor(
            site.url, state_dir=state, witnesses=policy, max_age="1h", clock=lambda: now, out=io.StringIO(), err=err
        )
        return code, err.getvalue()

    with serve(later) as site:
        assert run(t)[0] == 0
        code, said = run(t - 1)
        assert (
            code == 1 and "the cosignature by w1 is dated 2027-01-15T08:01:00Z (timestamp 1800000060), 1m 1s " in said
        )
        code, said = run(t + 1)
        assert (
            code == 1 and "the cosignature by w2 is dated 2027-01-15T07:00:00Z (timestamp 1799996400), 1h 1s " in said
        )


# -- what passes


def test_witnesses_that_agree_pass_at_any_size_of_the_log_and_their_views_are_in_the_json(
    releases: tuple[Path, Path, Paths], witnesses: Witnesses, tmp_path: Path
) -> None:
    first, later, paths = releases
    (small, _), (size, root) = tree_of(first), tree_of(later)
    entries = parse_canonical((later / layout.ENTRIES).read_bytes())["entries"]
    hashes = [leaf_hash(canonical_bytes(e)) for e in entries]
    four = signed_checkpoint(paths.key_file, ORIGIN, 4, merkle_root(hashes[:4]))  # a power of two: one node
    t = now() - 60
    witnesses.add("w1", cosigned(site_note(later), W1, t), W1)
    witnesses.add("w2", cosigned(site_note(first), W2, t - 86400), W2)
    witnesses.add("w3", cosigned(four, W3, t - 2 * 86400), W3)
    policy = witnesses.policy()
    state = tmp_path / "state"
    with serve(later) as site:
        r = run_monitor(site.url, "--state", state, "--witnesses", policy, "--max-age", "3d", "--json")
        views = [json.loads(line)["witness"] for line in r.stdout.splitlines() if line.startswith('{"witness"')]
        events = [line for line in r.stdout.splitlines() if line.startswith('{"index"')]
        assert len(events) == size and r.stdout.splitlines()[: len(events)] == events, "the events first"
        assert [(v["name"], v["checkpoint"]["size"], v["log"], v["findings"]) for v in views] == [
            ("w1", size, "consistent", []),
            ("w2", small, "consistent", []),
            ("w3", 4, "consistent", []),
        ]
        assert views[0]["checkpoint"] == {"size": size, "root": b64(root), "cosigned": t}
        assert views[0]["url"] == witnesses.servers["w1"].url
        assert (
            f"monitor: witnesses: w1 at size {size}, w2 at size {small}, w3 at size 4: 3 of 3 within the log and "
            f"consistent with it (size {size}), no split view"
        ) in r.stderr.splitlines()
        assert parse_canonical(state_file(state).read_bytes())["tree_size"] == size
        # A run with nothing new still asks the witnesses, and reads the tiles it needs to compare.
        for server in witnesses.servers.values():
            server.requests.clear()
        r = run_monitor(site.url, "--state", state, "--witnesses", policy)
        assert r.stdout == "" and "3 of 3 within the log" in r.stderr
        assert all(s.requests == ["/" + origin_path(ORIGIN)] for s in witnesses.servers.values())


def test_a_run_with_nothing_new_still_catches_a_fork(
    releases: tuple[Path, Path, Paths], witnesses: Witnesses, tmp_path: Path
) -> None:
    first, _, paths = releases
    small, _ = tree_of(first)
    state = tmp_path / "state"
    witnesses.add("w1", cosigned(forged(paths, small - 1, "no news fork"), W1, now()), W1)
    with serve(first) as site:
        run_monitor(site.url, "--state", state)
        before = state_file(state).read_bytes()
        r = run_monitor(site.url, "--state", state, "--witnesses", witnesses.policy(), code=1)
    assert f"INCONSISTENT: fork: witness w1 ({witnesses.servers['w1'].url}) cosigned size {small - 1}" in r.stderr
    assert state_file(state).read_bytes() == before


def test_witnesses_that_give_no_view_are_warnings(
    releases: tuple[Path, Path, Paths], witnesses: Witnesses, tmp_path: Path
) -> None:
    _, later, _ = releases
    size, _ = tree_of(later)
    witnesses.add("w1", cosigned(site_note(later), W1, now()), W1)
    witnesses.add("down", None, cosigner("down"), url=f"http://127.0.0.1:{closed_port()}")
    witnesses.add("new", None, cosigner("new"))  # serves nothing for this log: 404
    witnesses.add("nourl", None, cosigner("nourl"), url=None)
    witnesses.add("liar", cosigned(site_note(later), W2, now()), cosigner("liar"))  # another witness's cosignature
    witnesses.add("junk", b"not a checkpoint\n", cosigner("junk"))
    with serve(later) as site:
        r = run_monitor(site.url, "--state", tmp_path / "state", "--witnesses", witnesses.policy(), "--json")
    said = r.stderr.splitlines()
    url = witnesses.servers
    assert any(
        s.startswith("monitor: warning: witness down (http://127.0.0.1:") and ": no usable answer: " in s for s in said
    )
    assert f"monitor: warning: witness new ({url['new'].url}): no checkpoint of {ORIGIN}: it never cosigned one" in said
    assert "monitor: witness nourl: the policy gives no URL for it: not asked" in said
    liar = next(s for s in said if s.startswith(f"monitor: warning: witness liar ({url['liar'].url}): "))
    assert "it carries no cosignature by the witness's key liar+" in liar
    assert any(
        s.startswith(f"monitor: warning: witness junk ({url['junk'].url}): its answer is not a checkpoint")
        for s in said
    )
    assert (
        f"monitor: witnesses: w1 at size {size}: 1 of 1 within the log and consistent with it (size {size}), "
        "no split view" in said
    )
    rows = [json.loads(line)["witness"] for line in r.stdout.splitlines() if line.startswith('{"witness"')]
    assert [(w["name"], w["unseen"] if w["checkpoint"] is None else w["log"]) for w in rows] == [
        ("w1", "consistent"),
        ("down", "unreachable"),
        ("new", "absent"),
        ("nourl", "no-url"),
        ("liar", "invalid"),
        ("junk", "invalid"),
    ]


def test_two_real_witnesses_agree_with_the_log_and_a_stale_copy_of_the_site_is_named(
    built_program: BuiltSite, tmp_path: Path
) -> None:
    """Two `transparency witness serve` processes (ML-DSA-44 and Ed25519) cosign each build; the monitor reads
    their views at the path the witness serves them, with the program's own published policy."""
    site, paths = built_program.out, built_program.paths
    log_vkey = vkey_of(site)
    pq, classic = (
        WitnessFiles(tmp_path, "pq.example", log_vkey),
        WitnessFiles(tmp_path, "ed.example", log_vkey, "ed25519"),
    )
    with ExitStack() as stack:
        urls = [stack.enter_context(witness_process(w.args())) for w in (pq, classic)]
        write_program_policy(paths, log_vkey, [("pq", pq.vkey, urls[0]), ("ed", classic.vkey, urls[1])], "none")
        result = build(paths, site)
        assert not result.warnings, result.warnings
        stale = tmp_path / "stale"
        shutil.copytree(site, stale)
        grow(paths, 1, "2026-03-01T00:00:00Z")
        assert not build(paths, site).warnings
        (small, _), (size, _) = tree_of(stale), tree_of(site)
        policy = site / layout.POLICY
        with serve(site) as served:
            r = run_monitor(served.url, "--state", tmp_path / "state", "--witnesses", policy, "--max-age", "1h")
        assert (
            f"monitor: witnesses: pq at size {size}, ed at size {size}: 2 of 2 within the log and consistent with it "
            f"(size {size}), no split view"
        ) in r.stderr.splitlines(), r.stderr
        with serve(stale) as served:
            r = run_monitor(served.url, "--state", tmp_path / "stale-state", "--witnesses", policy)
    ahead = [line for line in r.stderr.splitlines() if "a larger tree than the site's checkpoint" in line]
    assert [line.split(" (")[0] for line in ahead] == ["monitor: warning: witness pq", "monitor: warning: witness ed"]
    assert all(f"cosigned size {size}, root " in line and f"checkpoint (size {small}, root " in line for line in ahead)


# -- bad arguments


def test_a_policy_that_does_not_parse_and_other_bad_arguments_are_refused(
    releases: tuple[Path, Path, Paths], tmp_path: Path
) -> None:
    first, _, _ = releases
    state = tmp_path / "state"
    bad = tmp_path / "bad-policy.txt"
    bad.write_text(f"log {vkey_of(first)}\nwitness w1 not-a-key\nquorum none\n")
    r = run_monitor(first, "--state", state, "--witnesses", bad, code=2)
    assert r.stderr.startswith(f"monitor: --witnesses {bad}: policy line 2: witness 'w1' key: ")
    r = run_monitor(first, "--state", state, "--witnesses", tmp_path / "none.txt", code=2)
    assert f"--witnesses {tmp_path / 'none.txt'}: No such file or directory" in r.stderr
    other = tmp_path / "other-log.txt"
    other.write_text(f"log {make_vkey('other.example.org/log', parse_vkey(vkey_of(first)).public_key)}\nquorum none\n")
    r = run_monitor(first, "--state", state, "--witnesses", other, code=2)
    assert r.stderr == (
        f"monitor: --witnesses {other}: the policy names no key of the log {ORIGIN}, so no witness's checkpoint of "
        'it can be verified; it names the logs "other.example.org/log"\n'
    )
    good = write_policy(tmp_path / "good.txt", vkey_of(first), [])
    for age in ("36", "1.5d", "0s", "7 d", "-1h", "1w", "07d"):
        r = run_monitor(first, "--state", state, "--witnesses", good, "--max-age", age, code=2)
        assert r.stderr == (
            f"monitor: --max-age: {age!r} is not a duration; expected a whole number then s, m, h or d, "
            "e.g. 3600s, 36h or 7d\n"
        )
    r = run_monitor(first, "--state", state, "--max-age", "7d", code=2)
    assert "--max-age bounds the age of the witnesses' cosignatures: give --witnesses POLICY too" in r.stderr
    assert not state.exists() or not state_file(state).exists()
    r = run_monitor(first, "--state", state, "--witnesses", good)
    assert "warning: witnesses: no witness gave a view of this log: nothing compared" in r.stderr
    # A policy that names another key for this origin is used as it is, and that is said.
    rekeyed = write_policy(tmp_path / "rekeyed.txt", log_signer(ORIGIN).vkey, [])
    r = run_monitor(first, "--state", state, "--witnesses", rekeyed)
    assert (
        f"monitor: warning: the policy {rekeyed} does not name the key this monitor trusts for {ORIGIN} (SHA256:"
        in (r.stderr)
    )


def test_the_help_says_what_witnesses_catch_with_an_example() -> None:
    r = run_monitor("--help")
    assert "--witnesses POLICY" in r.stdout and "--max-age DURATION" in r.stdout
    assert "transparency monitor SITE --witnesses policy.txt --max-age 7d" in r.stdout
    assert "split view" in r.stdout
