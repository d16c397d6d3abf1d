"""Holes a hostile review of the history work found, each closed and kept closed: a rotation
nobody endorsed, a retired key that still signs, a hand-over of another tree, a look-alike
origin beside a remembered one, hostile witnesses, and malformed state files."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from generator.build.cosigning import _ask, _read_until
from generator.commands.build import build
from generator.commands.keys import rotate_key
from generator.core import layout
from generator.core.proofs import MerkleTree
from generator.core.signing_key import Signer
from generator.monitor.follow import run_monitor
from generator.verifier import checkpoint_text, leaf_hash
from generator.witness.server import Witness
from generator.witness.site_reader import folder_reader, rule_problems
from tests.support.demo import BUNDLE, BuiltSite
from tests.support.history import grow, size_of


def run_verifier(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", str(BUNDLE), *map(str, args)], capture_output=True, text=True)


def resign_sums(site: Path, signer: Signer) -> None:
    files = sorted(
        p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file() and not p.name.startswith("SHA256SUMS")
    )
    data = "".join(f"{hashlib.sha256((site / f).read_bytes()).hexdigest()}  {f}\n" for f in files).encode()
    (site / "SHA256SUMS").write_bytes(data)
    (site / "SHA256SUMS.sig").write_bytes(signer.sign(data))


@pytest.fixture
def rotated(built_program: BuiltSite) -> tuple[BuiltSite, Signer, Signer, int]:
    """Released once, then rotated and released again (the hand-over), then grown and released."""
    site = built_program
    old, new = rotate_key(site.paths, "2026-03-01T00:00:00Z")
    build(site.paths, site.out)
    hand_over = size_of(site.out)
    grow(site.paths, 1, "2026-03-02T00:00:00Z")
    build(site.paths, site.out)
    return site, old, new, hand_over


def test_a_rotation_without_history_fails_even_with_the_old_key_pinned(
    rotated: tuple[BuiltSite, Signer, Signer, int],
) -> None:
    """Finding 1: with ledger/history.json deleted, a rotation was followed unendorsed."""
    site, old, new, _ = rotated
    (site.out / layout.HISTORY).unlink()
    (site.out / f"{layout.HISTORY}.sig").unlink()
    resign_sums(site.out, new)
    r = run_verifier(site.out, "--key", old.vkey, "--no-state")
    assert r.returncode == 1 and "publishes no checkpoint history" in r.stdout, r.stdout
    assert "was rotated; followed" not in r.stdout


def _monitor(site: Path, state: Path) -> tuple[int, str]:
    err = io.StringIO()
    return run_monitor(str(site), state_dir=state, out=io.StringIO(), err=err), err.getvalue()


def test_the_monitor_refuses_a_retired_key_that_still_signs(built_program: BuiltSite, tmp_path: Path) -> None:
    """Finding 2: a checkpoint that opened with the pinned (retired) key was taken as it came."""
    site = built_program
    state = tmp_path / "m"
    assert _monitor(site.out, state)[0] == 0  # pinned to the first key
    old, _ = rotate_key(site.paths, "2026-03-01T00:00:00Z")
    grow(site.paths, 1, "2026-03-02T00:00:00Z")
    build(site.paths, site.out)  # the hand-over is archived; today's checkpoint is the new key's
    note = (site.out / layout.CHECKPOINT).read_bytes()
    text = note.decode().split("\n\n", 1)[0] + "\n"
    (site.out / layout.CHECKPOINT).write_bytes(note + old.sign_note(text).split(b"\n\n", 1)[1])
    code, err = _monitor(site.out, state)
    assert code == 1 and "signs trees up to size" in err, err


def test_the_monitor_refuses_a_hand_over_of_another_tree(built_program: BuiltSite, tmp_path: Path) -> None:
    """Finding 3: a hand-over checkpoint signed by both keys was accepted whatever tree it named."""
    site = built_program
    state = tmp_path / "m"
    assert _monitor(site.out, state)[0] == 0
    old, new = rotate_key(site.paths, "2026-03-01T00:00:00Z")
    grow(site.paths, 1, "2026-03-02T00:00:00Z")
    build(site.paths, site.out)
    archived = sorted((site.out / "ledger" / "checkpoints").iterdir(), key=lambda p: int(p.name))
    hand_over = archived[-2]
    size = int(hand_over.name)
    text = checkpoint_text("test.example.org/prog", size, leaf_hash(b"another history"))
    lines = [s.sign_note(text).split(b"\n\n", 1)[1] for s in (new, old)]
    hand_over.write_bytes(text.encode() + b"\n" + b"".join(lines))
    code, err = _monitor(site.out, state)
    assert code == 1 and "not of this log's tree" in err, err


def test_a_look_alike_origin_beside_a_remembered_one_fails(demo_site: BuiltSite, tmp_path: Path) -> None:
    """Finding 4: the state of `…extraction` was skipped for `…extracti\u043en` without a word."""
    origin = json.loads((demo_site.out / layout.MANIFEST).read_bytes())["origin"]
    look_alike = origin.replace("o", "\u043e", 1)
    row = {"checkpoint": base64.b64encode(b"x").decode(), "root": base64.b64encode(bytes(32)).decode(), "tree_size": 1}
    state = tmp_path / "state.json"
    doc = {"logs": {look_alike: row}, "type": "verifier-state", "v": 1}
    state.write_text(json.dumps(doc, separators=(",", ":"), sort_keys=True, ensure_ascii=False))
    r = run_verifier(demo_site.out, "--state", state)
    assert r.returncode == 1 and "looks like the origin of a log this verifier remembers" in r.stdout, r.stdout


def test_a_witness_with_rules_refuses_a_checkpoint_a_retired_key_signs(
    rotated: tuple[BuiltSite, Signer, Signer, int],
) -> None:
    """Finding 5: a witness listing both keys cosigned what the retired one alone signed."""
    site, old, new, _ = rotated
    text = (site.out / layout.CHECKPOINT).read_text().split("\n\n", 1)[0] + "\n"
    size = int(text.split("\n")[1])
    root = base64.b64decode(text.split("\n")[2])
    read = folder_reader(site.out)
    assert rule_problems(read, 0, size, root, new.sign_note(text)) == []
    problems = rule_problems(read, 0, size, root, old.sign_note(text))
    assert any("signs trees up to size" in p for p in problems), problems


def test_a_witness_answering_a_strange_size_or_slowly_is_a_warning() -> None:
    """Findings 6 and 7: '²' passed isdigit() and crashed the build; a drip held it for hours."""
    tree = MerkleTree([leaf_hash(b"a")])
    answer = _ask("http://127.0.0.1:9", b"note", tree, 0, 1.0, lambda url, body, timeout: (409, "\u00b2".encode()))
    assert answer.startswith("refused with HTTP 409")

    class Drip:
        def read1(self, n: int) -> bytes:
            return b"x"

    with pytest.raises(TimeoutError):
        _read_until(Drip(), 0.0)


def test_build_warnings_are_escaped(built_program: BuiltSite, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 8: a witness's reply reached the terminal raw, escapes and all."""
    from click.testing import CliRunner

    import generator.commands.build as build_module
    from generator.cli import main

    real = build_module.build

    def with_warning(*args: object, **kwargs: object) -> object:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        result.warnings.append("witness w1: refused with HTTP 500: \x1b[2K\rBuilt OK\x1b[8m")
        return result

    monkeypatch.setattr(build_module, "build", with_warning)
    out = CliRunner().invoke(main, ["--data", str(built_program.paths.data), "build", "--out", str(built_program.out)])
    assert "\x1b" not in out.output and "\\x1b[2K" in out.output, out.output


def test_the_witness_refuses_a_huge_content_length(tmp_path: Path) -> None:
    """Finding 9: int() of 5,000 digits raised inside the handler, and no answer came."""
    w = Witness("w.example.org", bytes(32), tmp_path / "state", {})
    server = w.make_server("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=5) as s:
            s.sendall(b"POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n")
            answer = s.recv(100)
        assert answer.startswith(b"HTTP/1.0 413") or answer.startswith(b"HTTP/1.1 413"), answer
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    "row",
    [
        {"checkpoint": 5, "root": base64.b64encode(bytes(32)).decode(), "tree_size": 1},
        {"checkpoint": "eA==", "root": 5, "tree_size": 1},
    ],
)
def test_a_state_file_of_the_wrong_types_is_damaged_not_a_traceback(
    demo_site: BuiltSite, tmp_path: Path, row: dict[str, object]
) -> None:
    """Finding 10: a number where text belongs raised AttributeError."""
    origin = json.loads((demo_site.out / layout.MANIFEST).read_bytes())["origin"]
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"logs": {origin: row}, "type": "verifier-state", "v": 1}, separators=(",", ":")))
    r = run_verifier(demo_site.out, "--state", state)
    assert r.returncode == 2 and "state is damaged" in r.stderr and "Traceback" not in r.stderr, r.stderr
    state.write_text('{"logs":{},"type":"verifier-state","v":true}')
    r = run_verifier(demo_site.out, "--state", state)
    assert r.returncode == 2 and "state is damaged" in r.stderr
