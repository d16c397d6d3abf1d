"""The log's ML-DSA-44 key (c2sp.org/tlog-cosignature's type 0x06) beside its Ed25519 key,
through the real commands: every checkpoint from the key's addition on carries both signatures,
each checked here with another implementation than the verifier's (PyNaCl for Ed25519,
`cryptography` for ML-DSA-44, over a message built in this file from the spec); rotation and
revocation cover the ML-DSA-44 key; a policy naming it requires it; rebuilds keep the bytes."""

from __future__ import annotations

import base64
import hashlib
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PublicKey
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from generator.build.cosigning import POLICY_FILE
from generator.commands.build import build
from generator.commands.keys import revoke_key
from generator.commands.ml_dsa_keys import add_ml_dsa_key, rotate_ml_dsa_key
from generator.core import layout
from generator.core.generator_errors import InputError
from generator.verifier import parse_canonical, parse_policy, policy_problems, verify_site
from tests.support.demo import BUNDLE, BuiltSite
from tests.support.history import grow, size_of


def run_verifier(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", str(BUNDLE), *map(str, args), "--no-state"], capture_output=True, text=True, check=False
    )


def note_lines(note: bytes) -> tuple[bytes, list[tuple[str, bytes]]]:
    text, sigs = note.split(b"\n\n", 1)
    out = []
    for line in sigs.decode().splitlines():
        name, b64 = line[2:].split(" ")
        out.append((name, base64.b64decode(b64)))
    return text + b"\n", out


def ml_dsa_message(name: str, timestamp: int, origin: str, size: int, root: bytes) -> bytes:
    """tlog-cosignature's `cosigned_message`, written from the spec's struct."""
    return (
        b"subtree/v1\n\x00"
        + bytes([len(name)])
        + name.encode()
        + struct.pack(">Q", timestamp)
        + bytes([len(origin)])
        + origin.encode()
        + struct.pack(">QQ", 0, size)
        + root
    )


def independent_check(note: bytes, ed_keys: list[bytes], ml_keys: list[bytes]) -> set[str]:
    """Which signatures of `note` verify with PyNaCl and `cryptography`: 'ed25519:<kid>' and
    'ml-dsa-44:<kid>' for each; any line by a given key that fails raises."""
    text, lines = note_lines(note)
    origin, size, root_b64 = text.decode().split("\n")[:3]
    root = base64.b64decode(root_b64)
    seen = set()
    for name, raw in lines:
        for pk in ed_keys:
            kid = hashlib.sha256(name.encode() + b"\n\x01" + pk).digest()[:4]
            if raw[:4] == kid:
                VerifyKey(pk).verify(text, raw[4:])
                seen.add(f"ed25519:{kid.hex()}")
        for pk in ml_keys:
            kid = hashlib.sha256(name.encode() + b"\n\x06" + pk).digest()[:4]
            if raw[:4] == kid:
                timestamp = int.from_bytes(raw[4:12], "big")
                msg = ml_dsa_message(name, timestamp, origin, int(size), root)
                MLDSA44PublicKey.from_public_bytes(pk).verify(raw[12:], msg)
                seen.add(f"ml-dsa-44:{kid.hex()}")
    return seen


def keys_of(site: BuiltSite) -> tuple[list[bytes], list[dict]]:
    doc = parse_canonical((site.out / layout.KEYS).read_bytes())
    ed = [base64.b64decode(k["public_key"]) for k in doc["keys"]]
    return ed, doc.get("ml_dsa_44_keys", [])


@pytest.fixture
def with_ml_dsa(built_program: BuiltSite) -> BuiltSite:
    site = built_program
    add_ml_dsa_key(site.paths, "2026-03-01T00:00:00Z")
    build(site.paths, site.out)
    return site


def test_every_checkpoint_after_the_addition_carries_both_signatures(with_ml_dsa: BuiltSite) -> None:
    site = with_ml_dsa
    ed, ml_rows = keys_of(site)
    assert [r["status"] for r in ml_rows] == ["active"] and ml_rows[0]["valid_from"] == "2026-03-01T00:00:00Z"
    ml = [base64.b64decode(r["public_key"]) for r in ml_rows]
    note = (site.out / layout.CHECKPOINT).read_bytes()
    checked = independent_check(note, ed, ml)
    assert {c.split(":")[0] for c in checked} == {"ed25519", "ml-dsa-44"}, checked
    _, lines = note_lines(note)
    ml_line = next(raw for _, raw in lines if len(raw) == 4 + 8 + 2420)
    assert ml_line[4:12] == bytes(8), "the log's own ML-DSA-44 signature claims no time"
    report = verify_site(site.out)
    assert report.ok, report.render()
    # The verifier names both signatures it checked.
    assert "ML-DSA-44" in report.render()


def test_a_checkpoint_without_the_ml_dsa_signature_fails(with_ml_dsa: BuiltSite) -> None:
    site = with_ml_dsa
    path = site.out / layout.CHECKPOINT
    note = path.read_bytes()
    text, rest = note.split(b"\n\n", 1)
    kept = b"".join(line + b"\n" for line in rest.splitlines() if len(base64.b64decode(line.split(b" ")[2])) < 2000)
    path.write_bytes(text + b"\n\n" + kept)
    report = verify_site(site.out)
    assert not report.ok
    assert "ML-DSA-44 key" in report.render()


def test_a_tampered_ml_dsa_signature_fails_and_cryptography_agrees(with_ml_dsa: BuiltSite) -> None:
    site = with_ml_dsa
    path = site.out / layout.CHECKPOINT
    note = path.read_bytes()
    text, rest = note.split(b"\n\n", 1)
    lines = rest.splitlines()
    n = next(i for i, line in enumerate(lines) if len(base64.b64decode(line.split(b" ")[2])) > 2000)
    name, b64 = lines[n].split(b" ")[1:]
    raw = bytearray(base64.b64decode(b64))
    raw[100] ^= 1
    lines[n] = b"\xe2\x80\x94 " + name + b" " + base64.b64encode(bytes(raw))
    bad = text + b"\n\n" + b"".join(line + b"\n" for line in lines)
    path.write_bytes(bad)
    ed, ml_rows = keys_of(site)
    with pytest.raises(InvalidSignature):
        independent_check(bad, ed, [base64.b64decode(r["public_key"]) for r in ml_rows])
    report = verify_site(site.out)
    assert not report.ok and "does not verify" in report.render()


def test_rebuilds_keep_the_randomized_signature(with_ml_dsa: BuiltSite, tmp_path: Path) -> None:
    site = with_ml_dsa
    first = (site.out / layout.CHECKPOINT).read_bytes()
    build(site.paths, site.out)
    assert (site.out / layout.CHECKPOINT).read_bytes() == first
    elsewhere = tmp_path / "again"
    build(site.paths, elsewhere)
    assert (elsewhere / layout.CHECKPOINT).read_bytes() == first, "the kept checkpoint's lines are reused"
    # A copy kept in data/checkpoints/ lost (a kill between publishing and keeping it): the last
    # release's checkpoint lends its line.
    (site.paths.checkpoints_dir / str(size_of(site.out))).unlink()
    build(site.paths, site.out)
    assert (site.out / layout.CHECKPOINT).read_bytes() == first


def test_the_addition_is_handed_over_and_a_rotation_too(with_ml_dsa: BuiltSite) -> None:
    site = with_ml_dsa
    ed, rows = keys_of(site)
    first_ml = base64.b64decode(rows[0]["public_key"])
    size = size_of(site.out)
    first = (site.out / layout.archived_checkpoint(size)).read_bytes()
    assert "ml-dsa-44" in {c.split(":")[0] for c in independent_check(first, ed, [first_ml])}
    (site.paths.data / "witness-logs.txt").write_text(rows[0]["vkey"] + "\n")  # a witness's logs file kept here
    change = rotate_ml_dsa_key(site.paths, "2026-03-02T00:00:00Z")
    assert change.old is not None and change.old.key.public_key == first_ml
    assert [f.split(" ")[0] for f in change.flagged] == [str(site.paths.data / "witness-logs.txt")]
    build(site.paths, site.out)
    ed, rows = keys_of(site)
    assert [r["status"] for r in rows] == ["retired", "active"]
    new_ml = base64.b64decode(rows[1]["public_key"])
    hand_over = (site.out / layout.archived_checkpoint(size_of(site.out))).read_bytes()
    kinds = independent_check(hand_over, ed, [first_ml, new_ml])
    assert len([k for k in kinds if k.startswith("ml-dsa-44")]) == 2, kinds
    grow(site.paths, 1, "2026-03-03T00:00:00Z")
    build(site.paths, site.out)
    later = independent_check((site.out / layout.CHECKPOINT).read_bytes(), ed, [first_ml, new_ml])
    assert [k for k in later if k.startswith("ml-dsa-44")] == [f"ml-dsa-44:{change.new.key.key_id.hex()}"]
    revoke_key(site.paths, rows[0]["vkey"], "The key leaked.", "2026-03-02T12:00:00Z", "2026-03-04T00:00:00Z")
    build(site.paths, site.out)
    _, rows = keys_of(site)
    assert [r["status"] for r in rows] == ["revoked", "active"]
    report = verify_site(site.out)
    assert report.ok, report.render()


def test_key_commands_refuse_what_they_cannot_do(built_program: BuiltSite, with_ml_dsa: BuiltSite) -> None:
    site = with_ml_dsa
    with pytest.raises(InputError, match="has an ML-DSA-44 key already"):
        add_ml_dsa_key(site.paths, "2026-03-05T00:00:00Z")
    _, rows = keys_of(site)
    with pytest.raises(InputError, match="active key cannot be revoked"):
        revoke_key(site.paths, rows[0]["vkey"], "no", "2026-03-01T00:00:00Z", "2026-03-05T00:00:00Z")


def test_a_policy_naming_the_ml_dsa_key_requires_its_signature(with_ml_dsa: BuiltSite) -> None:
    site = with_ml_dsa
    _, rows = keys_of(site)
    ed_vkey = parse_canonical((site.out / layout.KEYS).read_bytes())["keys"][-1]["vkey"]
    note = (site.out / layout.CHECKPOINT).read_bytes()
    origin = note.split(b"\n", 1)[0].decode()
    ed_pk = base64.b64decode(parse_canonical((site.out / layout.KEYS).read_bytes())["keys"][-1]["public_key"])
    both = parse_policy(f"log {ed_vkey}\nlog {rows[0]['vkey']}\nquorum none\n")
    ml_only = parse_policy(f"log {rows[0]['vkey']}\nquorum none\n")
    assert policy_problems(both, origin, ed_pk, note) == []
    assert policy_problems(ml_only, origin, ed_pk, note) == []
    text, rest = note.split(b"\n\n", 1)
    ed_only_note = text + b"\n\n" + rest.splitlines()[0] + b"\n"
    assert policy_problems(parse_policy(f"log {ed_vkey}\nquorum none\n"), origin, ed_pk, ed_only_note) == []
    problems = policy_problems(both, origin, ed_pk, ed_only_note)
    assert problems and "requires the log's ML-DSA-44 signature" in problems[0]


def test_the_program_policy_gets_the_new_log_line_and_the_build_applies_it(built_program: BuiltSite) -> None:
    site = built_program
    ed_vkey = parse_canonical((site.out / layout.KEYS).read_bytes())["keys"][-1]["vkey"]
    policy = site.paths.data / POLICY_FILE
    policy.write_text(f"# ours\nlog {ed_vkey}\n\nquorum none\n")
    add_ml_dsa_key(site.paths, "2026-03-01T00:00:00Z")
    build(site.paths, site.out)
    _, rows = keys_of(site)
    assert policy.read_text() == f"# ours\nlog {ed_vkey}\nlog {rows[0]['vkey']}\n\nquorum none\n"
    published = (site.out / layout.POLICY).read_text()
    assert f"log {rows[0]['vkey']}" in published
    r = run_verifier(site.out, "--policy", policy)
    assert r.returncode == 0, r.stdout + r.stderr


def test_pynacl_refuses_a_flipped_ed25519_line(with_ml_dsa: BuiltSite) -> None:
    """The independent check above can fail: a flipped Ed25519 signature is refused by PyNaCl."""
    site = with_ml_dsa
    note = (site.out / layout.CHECKPOINT).read_bytes()
    text, rest = note.split(b"\n\n", 1)
    first = rest.splitlines()[0]
    raw = bytearray(base64.b64decode(first.split(b" ")[2]))
    raw[10] ^= 1
    bad = text + b"\n\n" + first.rsplit(b" ", 1)[0] + b" " + base64.b64encode(bytes(raw)) + b"\n"
    ed, _ = keys_of(site)
    with pytest.raises(BadSignatureError):
        independent_check(bad, ed, [])
