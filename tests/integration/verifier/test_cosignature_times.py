"""Cosignature times and both signature types through verify.py as an auditor runs it: a witness's
cosignature dated in the future fails, one older than `--max-age` fails, and `verify.py proof
--policy` names the ML-DSA-44 log signature it checked beside the Ed25519 one."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from generator.build.cosigning import COSIGNATURES_DIR, POLICY_FILE
from generator.commands.build import build
from generator.commands.ml_dsa_keys import add_ml_dsa_key
from generator.core import layout
from generator.core.cosigning_keys import Cosigner
from generator.verifier import ED25519, ML_DSA_44, parse_canonical
from tests.support.demo import BUNDLE, BuiltSite


def run_verifier(*args: str | Path) -> subprocess.CompletedProcess[str]:
    state = [] if args and args[0] == "proof" else ["--no-state"]
    return subprocess.run(
        [sys.executable, "-P", str(BUNDLE), *map(str, args), *state], capture_output=True, text=True, check=False
    )


def cosigned_site(site: BuiltSite, tmp_path: Path, when: int, kind: str) -> Path:
    """The site rebuilt with a witness's cosignature made at `when`; the auditor's policy for it."""
    witness = Cosigner("w.example", kind, bytes(range(32)))
    log_vkey = parse_canonical((site.out / layout.KEYS).read_bytes())["keys"][-1]["vkey"]
    policy = f"log {log_vkey}\nwitness W {witness.key.vkey}\nquorum W\n"
    (site.paths.data / POLICY_FILE).write_text(policy)
    note = (site.out / layout.CHECKPOINT).read_bytes()
    text = note[: note.index(b"\n\n") + 1].decode()
    size = int(text.split("\n")[1])
    stored = site.paths.data / COSIGNATURES_DIR / f"{size}.txt"
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_text(witness.cosign(text, when))
    build(site.paths, site.out, offline=True)
    mine = tmp_path / "my-policy.txt"
    mine.write_text(policy)
    return mine


def test_a_cosignature_dated_in_the_future_fails(built_program: BuiltSite, tmp_path: Path) -> None:
    policy = cosigned_site(built_program, tmp_path, int(time.time()) + 3600, ML_DSA_44)
    r = run_verifier(built_program.out, "--policy", policy)
    assert r.returncode == 1, r.stdout
    assert "the cosignature by W is dated" in r.stdout and "in the future" in r.stdout, r.stdout


def test_max_age_fails_an_old_cosignature_and_is_refused_without_a_policy(
    built_program: BuiltSite, tmp_path: Path
) -> None:
    policy = cosigned_site(built_program, tmp_path, int(time.time()) - 10 * 86400, ED25519)
    assert run_verifier(built_program.out, "--policy", policy).returncode == 0
    assert run_verifier(built_program.out, "--policy", policy, "--max-age", "30d").returncode == 0
    r = run_verifier(built_program.out, "--policy", policy, "--max-age", "7d")
    assert r.returncode == 1 and "expected at most 7d old" in r.stdout, r.stdout
    r = run_verifier(built_program.out, "--max-age", "7d")
    assert r.returncode == 2 and "give --policy" in r.stderr
    r = run_verifier(built_program.out, "--policy", policy, "--max-age", "7 days")
    assert r.returncode == 2 and "not a duration" in r.stderr


def test_proof_names_both_log_signatures(built_program: BuiltSite, tmp_path: Path) -> None:
    site = built_program
    add_ml_dsa_key(site.paths, "2026-03-01T00:00:00Z")
    build(site.paths, site.out)
    keys = parse_canonical((site.out / layout.KEYS).read_bytes())
    policy = tmp_path / "policy.txt"
    policy.write_text(f"log {keys['keys'][-1]['vkey']}\nlog {keys['ml_dsa_44_keys'][0]['vkey']}\nquorum none\n")
    reveal = json.loads((site.out / layout.MANIFEST).read_bytes())["reveals"][0]["path"]
    r = run_verifier("proof", site.out / reveal, site.out / layout.tlog_proof(reveal), "--policy", policy, "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    signers = json.loads(r.stdout)["signers"]
    assert [s["type"] for s in signers] == ["Ed25519", "ML-DSA-44"]
    assert signers[1]["fingerprint"] == keys["ml_dsa_44_keys"][0]["fingerprint"]
