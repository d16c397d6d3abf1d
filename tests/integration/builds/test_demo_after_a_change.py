"""The demo keeps working after a change, as `make site` builds and checks it (offline, then
the repository's `verify.py --policy` with the program's own policy), and a key rotation keeps the trust policy
naming the key that signs."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.commands.build import build
from generator.commands.keys import rotate, rotated_policy
from generator.commands.retire import retire_item
from generator.core import layout
from generator.core.signing_key import generate_signer
from generator.program.datadir import Paths
from generator.program.sealed import iter_sealed
from tests.support.demo import REPO, BuiltSite

# The demo's last event's time: a new event may share it, and it is in the past, so that the
# demo witness's cosignature (made at the release time) is not dated in the future, which
# verify.py --policy fails.
LATER = json.loads((REPO / "data" / "ledger.jsonl").read_bytes().splitlines()[-1])["at"]


def make_site_verify(out: Path, data: Path) -> subprocess.CompletedProcess[str]:
    """The check `make site` runs after its build: the repository's verify.py, not the site's copy,
    with the program's own policy, not the one the site publishes (a site can rewrite its own)."""
    verifier = REPO / "generator" / "verify.py"
    return subprocess.run(
        [sys.executable, "-P", str(verifier), str(out), "--no-state", "--policy", str(data / "policy.txt")],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def first_sealed(paths: Paths) -> str:
    return sorted(item_id for item_id, _ in iter_sealed(paths) if not paths.reveal_file(item_id).exists())[0]


def test_the_demo_still_meets_its_policy_after_an_item_is_retired(
    demo_copy: BuiltSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    paths, out = demo_copy.paths, demo_copy.out
    retire_item(paths, first_sealed(paths), "Retired to try the demo.", LATER)
    with caplog.at_level(logging.WARNING, logger="transparency"):
        result = build(paths, out, offline=True)
    assert result.demo
    assert not [w for w in result.warnings if "quorum" in w], result.warnings
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("demo:")]
    assert said and "demo-witness" in said[0] and "proves nothing" in said[0], caplog.text
    r = make_site_verify(out, paths.data)
    assert r.returncode == 0, r.stdout + r.stderr
    # The same bytes from scratch: the cosignature's time is the release's, never the clock's.
    again = tmp_path / "from-scratch"
    build(paths, again, offline=True, full=True)
    assert (again / layout.CHECKPOINT).read_bytes() == (out / layout.CHECKPOINT).read_bytes()
    # The demo witness's committed state is the witness's, not the build's: left as it was.
    state = paths.private / "demo-witness" / "state"
    assert {p.name: p.read_bytes() for p in state.iterdir()} == {
        p.name: p.read_bytes() for p in (REPO / "data" / "private" / "demo-witness" / "state").iterdir()
    }


def test_make_site_s_command_says_the_demo_cosigned_itself(demo_copy: BuiltSite) -> None:
    paths = demo_copy.paths
    retire_item(paths, first_sealed(paths), "Retired to try the demo.", LATER)
    argv = ["--data", str(paths.data), "build", "--offline", "--out", str(demo_copy.out)]
    result = CliRunner().invoke(main, argv, prog_name="transparency")
    assert result.exit_code == 0, result.output
    assert re.search(r"note: demo: the checkpoint of size \d+ is cosigned by the demo's witness", result.stderr)


def test_only_the_demo_cosigns_as_its_witness(demo_copy: BuiltSite, tmp_path: Path) -> None:
    """A program signed with a key of its own does not cosign for a witness, even one whose key
    lies in its private directory: its unmet quorum is said, as for any program."""
    paths = demo_copy.paths
    rotate(paths, LATER)  # the new key is nobody's published key: no demo any more
    result = build(paths, demo_copy.out, offline=True)
    assert not result.demo
    assert [w for w in result.warnings if "does not meet the quorum" in w], result.warnings
    assert make_site_verify(demo_copy.out, paths.data).returncode == 1


def test_a_rotation_updates_the_policy_and_the_site_verifies_with_it(built_program: BuiltSite) -> None:
    paths, out = built_program.paths, built_program.out
    policy = paths.data / "policy.txt"
    old_vkey = (out / "keys.json").read_text().split('"vkey":"')[1].split('"')[0]
    policy.write_text(f"# Our policy\nlog {old_vkey}\nquorum none\n")
    build(paths, out)
    assert make_site_verify(out, paths.data).returncode == 0
    done = rotate(paths, "2026-03-01T00:00:00Z")
    assert policy.read_text() == f"# Our policy\nlog {done.new.vkey}\nquorum none\n"
    assert done.updated and "policy.txt" in done.updated[0]
    build(paths, out)
    r = make_site_verify(out, paths.data)
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_rotation_flags_the_files_it_leaves_naming_the_old_key(built_program: BuiltSite) -> None:
    paths = built_program.paths
    old_vkey = (built_program.out / "keys.json").read_text().split('"vkey":"')[1].split('"')[0]
    logs = paths.private / "witness" / "logs.txt"
    logs.parent.mkdir()
    logs.write_text(old_vkey + "\n")
    (paths.data / "policy.txt").write_text(f"log {generate_signer('someone.example.org').vkey}\nquorum none\n")
    result = CliRunner().invoke(
        main,
        ["--data", str(paths.data), "--private", str(paths.private), "key", "rotate", "--at", "2026-03-01T00:00:00Z"],
    )
    assert result.exit_code == 0, result.output
    assert "witness/logs.txt still names the old key" in result.stderr
    assert "policy.txt has no log line with the old key" in result.stderr
    assert logs.read_text() == old_vkey + "\n"


def test_a_rotation_of_the_demo_updates_its_policy_and_flags_its_witness_s_logs(demo_copy: BuiltSite) -> None:
    paths = demo_copy.paths
    before = (paths.data / "policy.txt").read_bytes()
    done = rotate(paths, LATER)
    after = (paths.data / "policy.txt").read_bytes()
    assert after == before.replace(done.old.vkey.encode(), done.new.vkey.encode()) and after != before
    assert any("demo-witness/logs.txt still names the old key" in f for f in done.flagged), done.flagged


def test_policy_rewriting_keeps_every_other_byte() -> None:
    old, new = "o.example+00000001+AAAA", "o.example+00000002+BBBB"
    text = f"# log {old}\nlog\t{old}  https://log.example/\r\nwitness w {old}\nlog other+1+C\nquorum none".encode()
    got, n = rotated_policy(text, old, new)
    assert n == 1
    assert got == text.replace(f"log\t{old}".encode(), f"log\t{new}".encode())
