"""Key rotation and revocation (format v2) through the real commands: what was signed before a
rotation still verifies, the hand-over checkpoint carries both keys, a pinned old key is
followed to the new one, and a signature by a key outside its validity fails."""

from __future__ import annotations

import base64
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.commands.build import build
from generator.commands.keys import revoke_key, rotate_key
from generator.core import layout
from generator.core.signing_key import load_key, retired_key_file
from generator.verifier import parse_canonical, parse_vkey, verify_site
from tests.support.demo import BUNDLE, BuiltSite
from tests.support.files import refused
from tests.support.history import grow, size_of


def run_verifier(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", str(BUNDLE), *map(str, args), "--no-state"], capture_output=True, text=True, check=False
    )


def signer_ids(note: bytes) -> set[bytes]:
    """The key IDs of a signed note's signature lines."""
    return {base64.b64decode(line.split(" ")[2])[:4] for line in note.decode().split("\n\n", 1)[1].splitlines()}


@pytest.fixture
def rotated(built_program: BuiltSite) -> tuple[BuiltSite, str, str, bytes]:
    """A program whose key was rotated after its first release, and rebuilt."""
    site = built_program
    before = {p.relative_to(site.out).as_posix(): p.read_bytes() for p in (site.out / "certificates").rglob("*.sig")}
    old, new = rotate_key(site.paths, "2026-03-01T00:00:00Z")
    build(site.paths, site.out)
    sigs = b"".join(before[k] for k in sorted(before))
    return site, old.vkey, new.vkey, sigs


def test_artifacts_signed_before_the_rotation_still_verify(rotated: tuple[BuiltSite, str, str, bytes]) -> None:
    site, old, new, sigs = rotated
    after = {p.relative_to(site.out).as_posix(): p.read_bytes() for p in (site.out / "certificates").rglob("*.sig")}
    assert b"".join(after[k] for k in sorted(after)) == sigs, "a certificate keeps the signature it was issued with"
    keys = parse_canonical((site.out / layout.KEYS).read_bytes())["keys"]
    assert [(k["vkey"], k["status"], k["valid_until"]) for k in keys] == [
        (old, "retired", "2026-03-01T00:00:00Z"),
        (new, "active", None),
    ]
    report = verify_site(site.out)
    assert report.ok, report.render()


def test_the_hand_over_checkpoint_is_signed_by_both_keys(rotated: tuple[BuiltSite, str, str, bytes]) -> None:
    site, old, new, _ = rotated
    n = size_of(site.out)
    hand_over = (site.out / layout.archived_checkpoint(n)).read_bytes()
    assert signer_ids(hand_over) == {parse_vkey(old).key_id, parse_vkey(new).key_id}
    grow(site.paths, 1, "2026-03-02T00:00:00Z")
    build(site.paths, site.out)
    later = (site.out / layout.CHECKPOINT).read_bytes()
    assert signer_ids(later) == {parse_vkey(new).key_id}, "after the hand-over only the new key signs"
    assert (site.out / layout.archived_checkpoint(n)).read_bytes() == hand_over, "the hand-over is archived as made"
    assert verify_site(site.out).ok


def test_a_pinned_old_key_is_followed_but_a_revoked_one_is_not(rotated: tuple[BuiltSite, str, str, bytes]) -> None:
    site, old, new, _ = rotated
    r = run_verifier(site.out, "--key", old)
    assert r.returncode == 0 and "followed through the ledger's hand-over" in r.stdout, r.stdout
    assert run_verifier(site.out, "--key", new).returncode == 0
    revoke_key(site.paths, old, "The key leaked.", "2026-03-04T00:00:00Z", "2026-03-05T00:00:00Z")
    build(site.paths, site.out)
    assert verify_site(site.out).ok
    r = run_verifier(site.out, "--key", old)
    assert r.returncode == 1 and "was revoked: The key leaked." in r.stdout
    keys = parse_canonical((site.out / layout.KEYS).read_bytes())["keys"]
    assert keys[0]["status"] == "revoked" and keys[0]["reason"] == "The key leaked."
    assert "The key leaked." in (site.out / layout.KEYS_PAGE).read_text()


def test_a_signature_by_the_old_key_after_its_validity_fails(rotated: tuple[BuiltSite, str, str, bytes]) -> None:
    site, old, _, _ = rotated
    grow(site.paths, 1, "2026-03-02T00:00:00Z")
    build(site.paths, site.out)
    old_signer = load_key(retired_key_file(site.paths.private, old.split("+")[1]))
    note = (site.out / layout.CHECKPOINT).read_bytes()
    text = note.decode().split("\n\n", 1)[0] + "\n"
    extra = old_signer.sign_note(text).decode().split("\n\n", 1)[1]
    (site.out / layout.CHECKPOINT).write_bytes(note + extra.encode())
    report = verify_site(site.out)
    assert any("not valid for it" in p.message and p.file == layout.CHECKPOINT for p in report.failures), (
        report.render()
    )


def test_a_revoked_key_s_signature_after_its_compromise_fails(rotated: tuple[BuiltSite, str, str, bytes]) -> None:
    site, old, _, _ = rotated
    n = size_of(site.out)
    # Compromised before the hand-over it signed: that signature can no longer be trusted.
    leaked = site.out.parent / "leaked"
    shutil.copytree(site.out, leaked)
    revoke_key(site.paths, old, "Stolen in February.", "2026-02-15T00:00:00Z", "2026-03-05T00:00:00Z")
    with pytest.raises(Exception, match=r"revoked|does not verify"):
        build(site.paths, site.out)
    assert size_of(site.out) == n, "the refused build left the last site as it was"


def test_key_commands_refuse_what_they_cannot_do(rotated: tuple[BuiltSite, str, str, bytes]) -> None:
    site, old, new, _ = rotated
    data = site.paths.data
    refused(lambda: revoke_key(site.paths, new, "x", "2026-03-01T00:00:00Z"), data)
    refused(lambda: revoke_key(site.paths, "SHA256:" + "0" * 64, "x", "2026-03-01T00:00:00Z"), data)
    refused(lambda: revoke_key(site.paths, old, " ", "2026-03-01T00:00:00Z"), data)
    refused(lambda: revoke_key(site.paths, old, "x", "yesterday"), data)
    e = refused(lambda: revoke_key(site.paths, old, "x", "2026-04-01T00:00:00Z", "2026-03-05T00:00:00Z"), data)
    assert any("before it happens" in p.message for p in e.problems)


def test_keys_json_that_disagrees_with_the_ledger_is_refused(rotated: tuple[BuiltSite, str, str, bytes]) -> None:
    site = rotated[0]
    keys_file = site.paths.keys_file
    doc = json.loads(keys_file.read_text())
    doc["keys"][0]["valid_until"] = "2026-04-01T00:00:00Z"  # back-dating the end of the old key
    keys_file.write_text(json.dumps(doc))
    with pytest.raises(Exception, match="key events"):
        build(site.paths, site.out)
    # On the site: the same rule, recomputed by the verifier.
    published = site.out / layout.KEYS
    pdoc = json.loads(published.read_bytes())
    pdoc["keys"][0]["valid_until"] = "2026-04-01T00:00:00Z"
    published.write_bytes(json.dumps(pdoc, separators=(",", ":"), sort_keys=True).encode())
    report = verify_site(site.out)
    assert any("key events" in p.message for p in report.failures), report.render()


def test_the_monitor_follows_a_rotation_through_its_hand_over(built_program: BuiltSite, tmp_path: Path) -> None:
    from generator.monitor.follow import run_monitor

    def monitor(site: Path, state: Path) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = run_monitor(str(site), state_dir=state, out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    site = built_program
    state = tmp_path / "monitor"
    assert monitor(site.out, state)[0] == 0
    rotate_key(site.paths, "2026-03-01T00:00:00Z")
    build(site.paths, site.out)
    n = size_of(site.out)
    grow(site.paths, 1, "2026-03-02T00:00:00Z")
    build(site.paths, site.out)  # signed by the new key only, now
    # The same site with its hand-over checkpoint stripped of the old key's signature.
    stripped = tmp_path / "stripped"
    shutil.copytree(site.out, stripped)
    hand_over = stripped / layout.archived_checkpoint(n)
    text, sigs = hand_over.read_text().split("\n\n", 1)
    new_id = parse_vkey(load_key(site.paths.key_file).vkey).key_id
    kept = [s for s in sigs.splitlines() if base64.b64decode(s.split(" ")[2])[:4] == new_id]
    hand_over.write_text(text + "\n\n" + "".join(line + "\n" for line in kept))
    state_copy = tmp_path / "monitor-copy"
    shutil.copytree(state, state_copy)
    code, _, err = monitor(stripped, state_copy)
    assert code == 1 and "no hand-over checkpoint signed by both keys" in err, err
    code, out, err = monitor(site.out, state)
    assert code == 0 and "followed" in err and "key-rotation" in out, err
    assert monitor(site.out, state)[0] == 0, "the new key is pinned now"
