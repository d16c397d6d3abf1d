"""The auditor's trust policy, through verify.py as an auditor runs it: during a key rotation a
policy names the retired log key and the active one, and the single-file check (`verify.py proof
--policy`) accepts a proof signed by either, as the whole-site check does; and a policy read from
inside the site being judged is said to be the site's word, not the auditor's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUNDLE, BuiltSite
from test_history import grow

from generator import layout
from generator.commands.build import build
from generator.commands.keys import rotate_key

WARNING = "the trust policy was read from inside the site it judges"


def run_verifier(*args: str | Path) -> subprocess.CompletedProcess[str]:
    state = [] if args and args[0] == "proof" else ["--no-state"]
    return subprocess.run(
        [sys.executable, "-P", str(BUNDLE), *map(str, args), *state], capture_output=True, text=True, check=False
    )


@pytest.fixture
def rotated(built_program: BuiltSite) -> tuple[BuiltSite, str, str]:
    """A program whose key was rotated after its first release, rebuilt (the hand-over checkpoint,
    signed by both keys) and grown: today's checkpoint, which every proof restates, is signed by
    the new key alone."""
    old, new = rotate_key(built_program.paths, "2026-03-01T00:00:00Z")
    build(built_program.paths, built_program.out)
    grow(built_program.paths, 1, "2026-03-02T00:00:00Z")
    build(built_program.paths, built_program.out)
    return built_program, old.vkey, new.vkey


@pytest.mark.parametrize("order", ["retired key first", "active key first"])
def test_a_policy_naming_both_keys_of_a_rotation_accepts_a_proof_as_the_site_check_does(
    rotated: tuple[BuiltSite, str, str], tmp_path: Path, order: str
) -> None:
    site, old, new = rotated
    keys = [old, new] if order == "retired key first" else [new, old]
    policy = tmp_path / "policy.txt"  # the auditor's own copy, outside the site
    policy.write_text("".join(f"log {k}\n" for k in keys) + "quorum none\n")
    assert run_verifier(site.out, "--policy", policy).returncode == 0
    manifest = json.loads((site.out / layout.MANIFEST).read_bytes())
    reveal = manifest["reveals"][0]["path"]
    r = run_verifier("proof", site.out / reveal, site.out / layout.tlog_proof(reveal), "--policy", policy)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("PASS: "), r.stdout
    # A policy that names only the retired key trusts a log this proof's checkpoint is not signed by.
    only_old = tmp_path / "old-only.txt"
    only_old.write_text(f"log {old}\nquorum none\n")
    r = run_verifier("proof", site.out / reveal, site.out / layout.tlog_proof(reveal), "--policy", only_old)
    assert r.returncode == 1 and "does not verify" in r.stdout, r.stdout + r.stderr
