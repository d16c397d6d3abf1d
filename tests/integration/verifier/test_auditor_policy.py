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

from generator.commands.build import build
from generator.commands.keys import rotate_key
from generator.core import layout
from tests.support.demo import BUNDLE, BuiltSite
from tests.support.history import grow

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


@pytest.mark.slow
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


def test_a_policy_read_from_inside_the_site_is_flagged_as_the_site_s_word(demo_copy: BuiltSite, tmp_path: Path) -> None:
    """A fork rewrites its own ledger/policy.txt to need no witness: a policy taken from the site
    judged proves nothing, which the report says (a warning, not a failure: the check itself is
    the same), however the path reaches it."""
    site = demo_copy.out
    published = site / layout.POLICY
    own = tmp_path / "my-policy.txt"  # obtained out of band and kept by the auditor
    own.write_bytes(published.read_bytes())
    r = run_verifier(site, "--policy", own)
    assert r.returncode == 0 and WARNING not in r.stdout, r.stdout + r.stderr
    link_in = tmp_path / "looks-like-mine.txt"
    link_in.symlink_to(published)
    for given in (published, Path(f"{site}/ledger/../ledger/policy.txt"), link_in):
        r = run_verifier(site, "--policy", given)
        assert r.returncode == 0, r.stdout + r.stderr
        warnings = [line for line in r.stdout.splitlines() if line.startswith("WARNING: ") and WARNING in line]
        assert len(warnings) == 1, (given, r.stdout)
        assert "obtained out of band" in warnings[0]
    r = run_verifier(site, "--policy", link_in, "--json")
    assert any(WARNING in w for w in json.loads(r.stdout)["warnings"])
    # A link inside the site to the auditor's file is the site's too: it chose where it points.
    (site / "policy-link.txt").symlink_to(own)
    r = run_verifier(site, "--policy", site / "policy-link.txt")
    assert r.returncode == 1 and WARNING in r.stdout, r.stdout
