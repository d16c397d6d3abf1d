"""Interoperability with Go's reference packages (Debian's golang-golang-x-mod-dev: sumdb/note and
sumdb/tlog), offline: the checkpoint, the tree, every .tlog-proof (the shared conformance program),
and the tiles, archived checkpoints and consistency proofs (tests/interop/go/src/historycheck), on a site
whose log spans more than one tile and was released three times, with a key rotation between, and on a
site whose checkpoints carry the log's ML-DSA-44 signature beside its Ed25519 one.

CI installs Go (.ci/run); elsewhere a missing Go skips these tests, loudly, unless CI is set.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.commands.build import build
from generator.commands.keys import rotate_key
from generator.commands.ml_dsa_keys import add_ml_dsa_key
from generator.core import layout
from generator.program.datadir import Paths
from tests.support.demo import REPO
from tests.support.history import grow

GOCODE = Path("/usr/share/gocode")
SHARED_GO = REPO.parent / "shared" / "conformance" / "go"
HAVE_GO = shutil.which("go") is not None and (GOCODE / "src" / "golang.org" / "x" / "mod").is_dir()

if not HAVE_GO and os.environ.get("CI"):
    raise RuntimeError("CI must install golang-go and golang-golang-x-mod-dev (see .ci/run): the Go checks cannot skip")
pytestmark = pytest.mark.skipif(not HAVE_GO, reason="Go and golang-golang-x-mod-dev are not installed")


def go_build(gopath: Path, package: str, out: Path) -> Path:
    env = {**os.environ, "GO111MODULE": "off", "GOPATH": f"{gopath}:{GOCODE}", "GOCACHE": str(out.parent / "gocache")}
    subprocess.run(["go", "build", "-o", str(out), package], check=True, env=env, capture_output=True)
    return out


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    bin_dir = tmp_path_factory.mktemp("go")
    history = go_build(REPO / "tests" / "interop" / "go", "historycheck", bin_dir / "historycheck")
    interop = go_build(SHARED_GO, "interop", bin_dir / "interop") if SHARED_GO.is_dir() else history
    return history, interop


@pytest.mark.slow
def test_go_reads_the_tiles_history_and_proofs(programs: tuple[Path, Path], make_program: Callable[..., Paths]) -> None:
    history, interop = programs
    paths = make_program(secret_items=300, retired=3)
    out = paths.data.parent / "public"
    build(paths, out)
    grow(paths, 1, "2026-03-01T00:00:00Z")
    build(paths, out)
    rotate_key(paths, "2026-03-02T00:00:00Z")
    grow(paths, 2, "2026-03-03T00:00:00Z")
    build(paths, out)
    keys = [k["vkey"] for k in json.loads((out / layout.KEYS).read_bytes())["keys"]]
    r = subprocess.run([str(history), str(out), *keys], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "archived checkpoints" in r.stdout and "authenticated the tiles" in r.stdout
    if interop == history:
        return
    _go_checks_every_proof(interop, out)


def _go_checks_every_proof(interop: Path, out: Path) -> None:
    """The shared conformance program: the checkpoint, the root of the entries and every .tlog-proof."""
    import rfc8785

    entries = json.loads((out / layout.ENTRIES).read_bytes())["entries"]
    leaves = out.parent / "leaves"
    leaves.write_text("".join(base64.b64encode(rfc8785.dumps(e)).decode() + "\n" for e in entries))
    active = next(k["vkey"] for k in json.loads((out / layout.KEYS).read_bytes())["keys"] if k["status"] == "active")
    proofs = sorted(str(p) for p in out.rglob("*.tlog-proof"))
    r = subprocess.run(
        [str(interop), active, str(out / layout.CHECKPOINT), str(leaves), *proofs],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"accepted {len(proofs)} inclusion proofs" in r.stdout


def test_go_reads_a_site_whose_checkpoints_also_carry_an_ml_dsa_44_signature(
    programs: tuple[Path, Path], make_program: Callable[..., Paths]
) -> None:
    """After `key-addition` every checkpoint carries the log's ML-DSA-44 line (type 0x06) after its Ed25519
    line. Go's sumdb/note, given the Ed25519 keys only (it has no ML-DSA-44), opens each checkpoint and
    ignores that line, as signed-note asks, and sumdb/tlog checks the tiles and proofs as on any site."""
    history, interop = programs
    paths = make_program()
    out = paths.data.parent / "public"
    build(paths, out)
    add_ml_dsa_key(paths, "2026-03-01T00:00:00Z")
    build(paths, out)
    grow(paths, 1, "2026-03-02T00:00:00Z")
    build(paths, out)
    doc = json.loads((out / layout.KEYS).read_bytes())
    ml_dsa = doc["ml_dsa_44_keys"][0]["vkey"]
    note = (out / layout.CHECKPOINT).read_text()
    lines = note.split("\n\n", 1)[1].splitlines()
    assert len(lines) == 2 and lines[1].startswith(f"\u2014 {ml_dsa.split('+')[0]} "), "Ed25519, then ML-DSA-44"
    assert base64.b64decode(lines[1].split(" ")[2])[:4].hex() == ml_dsa.split("+")[1]
    keys = [k["vkey"] for k in doc["keys"]]
    r = subprocess.run([str(history), str(out), *keys], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified the checkpoint (size" in r.stdout and "ignoring 1 signature lines by other keys" in r.stdout
    assert "(ignoring 2 signature lines by other keys)" in r.stdout, "the two archived checkpoints since the key"
    assert "authenticated the tiles" in r.stdout
    if interop != history:
        _go_checks_every_proof(interop, out)


def test_go_rejects_a_changed_tile(programs: tuple[Path, Path], make_program: Callable[..., Paths]) -> None:
    history, _ = programs
    paths = make_program(secret_items=300, retired=0)
    out = paths.data.parent / "public"
    build(paths, out)
    tile = out / "ledger" / "tile" / "0" / "000"
    data = bytearray(tile.read_bytes())
    data[40] ^= 1
    tile.write_bytes(bytes(data))
    keys = [k["vkey"] for k in json.loads((out / layout.KEYS).read_bytes())["keys"]]
    r = subprocess.run([str(history), str(out), *keys], capture_output=True, text=True, check=False)
    assert r.returncode == 1 and "FAIL" in r.stdout, r.stdout
