"""How the build behaves as a whole: deterministic, atomic, and faithful to the last release."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.build.previous_release import PreviousRelease
from generator.build.release_continuity import check_ledger_extends
from generator.commands import build as build_module
from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.retire import retire_item
from generator.core import child_process, layout
from generator.core.generator_errors import InputError, KeyFileError, VerificationFailed
from generator.core.proofs import MerkleTree
from generator.core.signing_key import Signer, generate_signer, write_key
from generator.program.ledgerfile import ledger_lines
from generator.verifier import Report, leaf_hash, verify_site
from tests.support.demo import REPO, BuiltSite, copy_demo_data
from tests.support.programs import item, write_items


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# -- determinism


def test_a_build_where_python_writes_bytecode_leaves_none_in_the_site(
    demo_site: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build's check loads the site's verify.py as a module; where Python writes bytecode
    caches (no PYTHONDONTWRITEBYTECODE, the default), none may be left in the staged site, whose
    check refuses a __pycache__ folder."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    out = tmp_path / "site"
    build(demo_site.paths, out)
    assert not list(out.rglob("__pycache__")) and not list(out.rglob("*.pyc"))
    assert sys.dont_write_bytecode is False  # given back as it was


def test_two_builds_are_byte_identical(demo_site: BuiltSite, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build(demo_site.paths, again)
    assert tree_digest(again) == tree_digest(demo_site.out)


def test_a_release_written_in_its_own_process_is_the_one_written_in_the_builds(
    demo_site: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build writes its release in a forked process, for its memory (generator.core.child_process);
    written in the build's own process, where forking is not possible, it is the same release."""
    assert child_process.FORK, "this system forks: the demo site was written in a process of its own"
    monkeypatch.setattr(child_process, "FORK", False)
    here = tmp_path / "here"
    build(demo_site.paths, here)
    assert tree_digest(here) == tree_digest(demo_site.out)


def test_committed_public_equals_a_fresh_build(tmp_path: Path) -> None:
    """CI fails when public/ is stale: run `make site` and commit the result. The archive
    (download/site.zip) is not committed, since every change to verify.py rewrites it whole: the
    fresh build's must have the hash the committed SHA256SUMS and site.zip.sha256 give it."""
    paths = copy_demo_data(tmp_path / "data")
    fresh = tmp_path / "public"
    build(paths, fresh)
    committed, built = tree_digest(REPO / "public"), tree_digest(fresh)
    committed.pop(layout.ARCHIVE, None)  # there after `make site`, and ignored by git
    archive = built.pop(layout.ARCHIVE)
    stale = sorted(p for p in committed.keys() | built.keys() if committed.get(p) != built.get(p))
    assert not stale, f"public/ is not what the code builds now (run `make site`): {stale[:10]}"
    sums = (REPO / "public" / layout.SUMS).read_text(encoding="utf-8")
    assert f"{archive}  {layout.ARCHIVE}\n" in sums, f"{layout.SUMS} lists another {layout.ARCHIVE} (run `make site`)"
    assert (REPO / "public" / layout.ARCHIVE_SUMS).read_text(encoding="utf-8") == f"{archive}  site.zip\n"


def test_time_comes_from_the_ledger_or_source_date_epoch(
    built_program: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = json.loads((built_program.out / "transparency.json").read_bytes())
    last = [json.loads(line)["at"] for line in built_program.paths.ledger_file.read_text().splitlines()][-1]
    assert manifest["generated_at"] == last
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
    out = tmp_path / "epoch"
    build(built_program.paths, out)
    assert json.loads((out / "transparency.json").read_bytes())["generated_at"] == "2026-09-21T14:13:20Z"


def test_build_never_reads_the_clock(built_program: BuiltSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import datetime as dt
    import time

    class NoClock(dt.datetime):
        @classmethod
        def now(cls, tz=None):  # type: ignore[override]
            raise AssertionError("the build read the clock")

    monkeypatch.setattr(dt, "datetime", NoClock)
    monkeypatch.setattr(time, "time", lambda: (_ for _ in ()).throw(AssertionError("the build read the clock")))
    build(built_program.paths, tmp_path / "out")


# -- atomic: a failed build leaves the last good site byte for byte


def _fail_midway(*args: object, **kwargs: object) -> None:
    raise RuntimeError("disk full (simulated)")


def test_failure_while_writing_leaves_public_untouched(
    built_program: BuiltSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree_digest(built_program.out)
    write_items(built_program.paths, [item("a-100", "a")], "more.yaml")
    commit_new_items(built_program.paths, "2026-03-01T00:00:00Z")
    monkeypatch.setattr("generator.site.pages.write_lists", _fail_midway)
    with pytest.raises(RuntimeError, match="disk full"):
        build(built_program.paths, built_program.out)
    assert tree_digest(built_program.out) == before
    assert not [p for p in built_program.out.parent.iterdir() if ".staging-" in p.name or ".old-" in p.name]


def test_failed_self_verification_leaves_public_untouched(
    built_program: BuiltSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree_digest(built_program.out)
    write_items(built_program.paths, [item("a-100", "a")], "more.yaml")
    commit_new_items(built_program.paths, "2026-03-01T00:00:00Z")

    def failing(site: Path, key: str | None = None, *_: object) -> Report:
        r = Report(str(site))
        r.check(False, "ledger/checkpoint", "simulated failure")
        return r

    monkeypatch.setattr(build_module, "self_check", failing)
    with pytest.raises(VerificationFailed, match="simulated failure"):
        build(built_program.paths, built_program.out)
    assert tree_digest(built_program.out) == before


def test_bad_data_leaves_public_untouched(built_program: BuiltSite) -> None:
    before = tree_digest(built_program.out)
    with built_program.paths.ledger_file.open("ab") as f:
        f.write(b'{"at":"2026-03-01T00:00:00Z","id":"zz","name":"Z","public":true,"type":"gate","v":2}\n')
    with pytest.raises(InputError, match="unsupported version"):
        build(built_program.paths, built_program.out)
    assert tree_digest(built_program.out) == before


def test_refuses_to_replace_a_directory_that_is_not_a_site(built_program: BuiltSite, tmp_path: Path) -> None:
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    with pytest.raises(InputError, match="not a site built by transparency"):
        build(built_program.paths, precious)
    assert (precious / "thesis.tex").read_text() == "years of work"


# -- the last release is never rewritten


def test_a_new_release_extends_the_last(built_program: BuiltSite) -> None:
    write_items(built_program.paths, [item("b-0100", "b")], "more.yaml")
    commit_new_items(built_program.paths, "2026-03-01T00:00:00Z")
    retire_item(built_program.paths, "b-0002", "Rotated out.", "2026-03-02T00:00:00Z")
    build(built_program.paths, built_program.out)
    assert verify_site(built_program.out).ok


def test_refuses_a_ledger_that_does_not_extend_the_last_release(built_program: BuiltSite) -> None:
    lines = built_program.paths.ledger_file.read_bytes().splitlines(keepends=True)
    # Drop the last leaf (a retirement) and append a different one: history rewritten.
    _drop_last_retirement(built_program, lines)
    retire_item(built_program.paths, "b-0002", "A different history.", "2026-03-02T00:00:00Z")
    before = tree_digest(built_program.out)
    with pytest.raises(InputError, match="does not extend the last release") as e:
        build(built_program.paths, built_program.out)
    assert any(f"leaf {len(lines) - 1} differs" in p.message for p in e.value.problems)
    assert tree_digest(built_program.out) == before


def test_a_ledger_that_extends_is_known_by_its_root(built_program: BuiltSite) -> None:
    lines = list(ledger_lines(built_program.paths))
    read: list[int] = []

    def leaves() -> Iterator[bytes]:
        read.append(1)
        return iter(lines)

    # The new tree has the last release's root at its size: nothing is read leaf by leaf.
    check_ledger_extends(
        PreviousRelease(built_program.out), leaves, "ledger", MerkleTree(leaf_hash(raw) for raw in lines)
    )
    assert not read
    # Another tree: read leaf by leaf, which names the leaf that differs.
    other = [*lines[:-1], lines[-1].replace(b"Retired", b"Rewritten")]
    with pytest.raises(InputError, match=f"leaf {len(lines) - 1} differs"):
        check_ledger_extends(
            PreviousRelease(built_program.out), lambda: iter(other), "ledger", MerkleTree(map(leaf_hash, other))
        )


def _drop_last_retirement(site: BuiltSite, lines: list[bytes]) -> None:
    last = json.loads(lines[-1])
    assert last["type"] == "reveal"
    site.paths.ledger_file.write_bytes(b"".join(lines[:-1]))
    site.paths.reveal_file(last["id"]).unlink()


def test_refuses_a_truncated_ledger(built_program: BuiltSite) -> None:
    lines = built_program.paths.ledger_file.read_bytes().splitlines(keepends=True)
    _drop_last_retirement(built_program, lines)
    with pytest.raises(InputError, match="does not extend the last release"):
        build(built_program.paths, built_program.out)


def test_refuses_to_change_a_published_artifact(built_program: BuiltSite) -> None:
    prose = built_program.paths.methodology_dir / "2026.1.md"
    prose.write_text(prose.read_text() + "\nA sentence added after publication.\n")
    with pytest.raises(InputError, match="rewrite what the last release published") as e:
        build(built_program.paths, built_program.out)
    assert [p.file for p in e.value.problems] == ["methodology/2026.1.md"]


def test_refuses_a_signing_key_other_than_the_published_one(built_program: BuiltSite) -> None:
    # Swap both the private key and data/keys.json: the data agree, but the last release does not.
    other = generate_signer("test.example.org/prog")
    os.remove(built_program.paths.key_file)
    write_key(built_program.paths.key_file, other)
    keys = json.loads(built_program.paths.keys_file.read_text())
    keys["keys"][0]["vkey"] = other.vkey
    built_program.paths.keys_file.write_text(json.dumps(keys))
    with pytest.raises(KeyFileError, match="does not match the key the last release published"):
        build(built_program.paths, built_program.out)


def test_the_build_verifies_with_its_own_key_pinned(built_program: BuiltSite) -> None:
    from generator.core.signing_key import load_key

    signer: Signer = load_key(built_program.paths.key_file)
    assert verify_site(built_program.out, signer.vkey).ok
    assert verify_site(built_program.out, signer.fingerprint).ok
    assert not verify_site(built_program.out, generate_signer("test.example.org/prog").vkey).ok


# -- a document read twice


def test_a_certificate_or_reveal_changed_between_its_two_readings_stops_the_build(demo_copy: BuiltSite) -> None:
    """The writing reads each certificate and reveal document again, after the gather checked
    it; the second reading skips the canonical form's check (the same bytes, the same answer),
    so it must still refuse other bytes, whatever they are."""
    from generator.build.gather import gather

    ctx = gather(demo_copy.paths)
    cert, reveal = ctx.certificates[0], ctx.revealed[0]
    assert cert.load(ctx.paths).data == demo_copy.paths.certificate_file(cert.serial).read_bytes()
    for path, again in (
        (demo_copy.paths.certificate_file(cert.serial), lambda: cert.load(ctx.paths)),
        (demo_copy.paths.reveal_file(reveal.id), lambda: reveal.load(ctx.paths)),
    ):
        original = path.read_bytes()
        path.write_bytes(json.dumps(json.loads(original), indent=1).encode())  # the same JSON, other bytes
        with pytest.raises(InputError) as e:
            again()
        assert "changed while the site was being built" in str(e.value)
        assert "does not hash to the value in the ledger" in str(e.value)
        path.write_bytes(original)
