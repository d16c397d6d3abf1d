"""Witnesses made through the real commands (`transparency witness key`, `witness cosign`), each with its key,
state and list of logs in a folder, and trust-policy files naming them."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from generator.cli import main
from generator.program.datadir import Paths


def cli(*argv: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in argv], prog_name="transparency")
    return result.exit_code, result.output


class WitnessFiles:
    def __init__(self, root: Path, name: str, log_vkey: str) -> None:
        self.name = name
        self.key = root / f"{name}.key"
        self.state = root / f"{name}-state"
        self.logs = root / f"{name}-logs.txt"
        self.logs.write_text(f"# the program's log\n{log_vkey}\n")
        code, out = cli("witness", "key", name, "--key", self.key)
        assert code == 0, out
        self.vkey = out.strip()

    def args(self) -> list[str | Path]:
        return ["--key", self.key, "--name", self.name, "--state", self.state, "--logs", self.logs]

    def cosign(self, site: Path, *extra: str | Path) -> tuple[int, str]:
        return cli("witness", "cosign", site, *self.args(), *extra)


def write_policy(
    paths: Paths, log_vkey: str, witnesses: list[tuple[str, str, str | None]], quorum: str, name: str = "policy.txt"
) -> Path:
    """A policy file: the program's own (data/policy.txt) by default, or one beside it."""
    lines = [f"log {log_vkey}"]
    lines += [f"witness {name} {vkey}" + (f" {url}" if url else "") for name, vkey, url in witnesses]
    if quorum.startswith("group"):
        lines.append(quorum)
        quorum = quorum.split()[1]
    lines.append(f"quorum {quorum}")
    path = paths.data / name
    path.write_text("\n".join(lines) + "\n")
    return path
