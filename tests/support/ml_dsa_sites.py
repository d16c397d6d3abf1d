"""Sites whose checkpoints carry both of the log's signatures, Ed25519 and ML-DSA-44, for the in-browser check's
tests, and the edits of a published checkpoint's signature lines those tests make.

The site is a small program (tests/support/programs.py) given its ML-DSA-44 key by the real command
(`add_ml_dsa_key`, which also adds the key's `log` line to the program's policy), with a trust policy that names
both log keys and whose quorum needs two witnesses, one of each cosignature type. Their cosignatures are handed to
the build as a witness hands them over offline (`data/cosignatures/<size>.txt`); the witnesses' keys are derived
from fixed labels, so every run has the same keys (ML-DSA-44 signatures still differ: signing is hedged).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from generator.build.cosigning import COSIGNATURES_DIR, POLICY_FILE
from generator.build.gather import gather
from generator.commands.build import build
from generator.commands.ml_dsa_keys import add_ml_dsa_key
from generator.core import layout
from generator.core.cosigning_keys import Cosigner
from generator.program.datadir import Paths
from generator.verifier import ED25519, ML_DSA_44, checkpoint_text
from tests.support.programs import new_program

ED_WITNESS, ML_WITNESS = "w-ed", "w-ml"
ADDED_AT = "2026-03-01T00:00:00Z"
COSIGNED_AT = 1_772_400_000  # 2026-03-01T21:20:00Z, after the key's addition and before any test's clock
ML_DSA_SIGNATURE_LINE = 4 + 8 + 2420  # key ID, timestamp, ML-DSA-44 signature


def witness(kind: str, label: str) -> Cosigner:
    """A witness of `kind`, its key derived from `label`: the same key in every run."""
    return Cosigner(f"{label}.witness.example", kind, hashlib.sha256(f"ml-dsa sites {label}".encode()).digest())


WITNESSES = {ED_WITNESS: witness(ED25519, "ed"), ML_WITNESS: witness(ML_DSA_44, "ml")}


@dataclass(frozen=True)
class MlDsaSite:
    paths: Paths
    out: Path


def ml_dsa_site(root: Path, quorum: str = "both") -> MlDsaSite:
    """The program in `root`/data built into `root`/public: both log signatures on every checkpoint from the key's
    addition on, both witnesses' cosignatures on today's. `quorum`: "both" (the ML-DSA-44 witness is needed),
    "ed" (the Ed25519 witness alone suffices) or "none" (no witness line in the policy)."""
    paths = new_program(root / "data")
    out = root / "public"
    build(paths, out)
    ed_vkey = json.loads((out / layout.KEYS).read_bytes())["keys"][-1]["vkey"]
    lines = [f"log {ed_vkey}"]
    if quorum != "none":
        lines += [f"witness {name} {w.key.vkey}" for name, w in WITNESSES.items()]
        lines += [
            f"group both all {ED_WITNESS} {ML_WITNESS}",
            "quorum both" if quorum == "both" else f"quorum {ED_WITNESS}",
        ]
    else:
        lines.append("quorum none")
    (paths.data / POLICY_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    add_ml_dsa_key(paths, ADDED_AT)
    if quorum != "none":
        ctx = gather(paths)
        text = checkpoint_text(ctx.origin, ctx.ledger.size, ctx.root)
        folder = paths.data / COSIGNATURES_DIR
        folder.mkdir(parents=True, exist_ok=True)
        cosigned = "".join(w.cosign(text, COSIGNED_AT) for w in WITNESSES.values())
        (folder / f"{ctx.ledger.size}.txt").write_text(cosigned, encoding="utf-8")
    build(paths, out)
    return MlDsaSite(paths, out)


def note_files(site: Path) -> list[Path]:
    """Today's checkpoint and every file that carries it verbatim (each inclusion proof)."""
    return [site / layout.CHECKPOINT, *sorted(site.rglob("*.tlog-proof"))]


def edit_signature_lines(site: Path, edit: Callable[[list[str]], list[str]]) -> None:
    """Change today's checkpoint's signature lines, everywhere it is published, consistently."""
    old = (site / layout.CHECKPOINT).read_bytes()
    text, _, sigs = old.decode().rpartition("\n\n")
    new = (text + "\n\n" + "".join(line + "\n" for line in edit(sigs.splitlines()))).encode()
    for f in note_files(site):
        data = f.read_bytes()
        assert data.endswith(old), f
        f.write_bytes(data[: len(data) - len(old)] + new)


def line_raw(line: str) -> tuple[str, bytes]:
    name, b64 = line[2:].split(" ")
    return name, base64.b64decode(b64)


def is_ml_dsa_line_of(name: str) -> Callable[[str], bool]:
    """Whether a signature line is `name`'s and as long as an ML-DSA-44 one."""
    return lambda line: line_raw(line)[0] == name and len(line_raw(line)[1]) == ML_DSA_SIGNATURE_LINE


def changed(lines: list[str], which: Callable[[str], bool], change: Callable[[bytes], bytes]) -> list[str]:
    """The lines with the one `which` picks given new bytes (key ID, timestamp and signature)."""
    picked = [i for i, line in enumerate(lines) if which(line)]
    assert len(picked) == 1, lines
    name, raw = line_raw(lines[picked[0]])
    out = list(lines)
    out[picked[0]] = f"\u2014 {name} {base64.b64encode(change(raw)).decode()}"
    return out


def flip(at: int) -> Callable[[bytes], bytes]:
    """A change of one bit at byte `at`."""

    def change(raw: bytes) -> bytes:
        out = bytearray(raw)
        out[at] ^= 1
        return bytes(out)

    return change
