"""The ledger's last leaves read from its end (generator/program/ledgerfile.py last_ledger_lines),
as a build that goes on from the last release's tree reads them: exactly the last lines, with or
without a final newline, whatever the blocks they straddle."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from generator.program.datadir import Paths
from generator.program.ledgerfile import last_ledger_lines


def _ledger(tmp_path: Path, data: bytes) -> Paths:
    paths = Paths(tmp_path, tmp_path / "private")
    paths.ledger_file.write_bytes(data)
    return paths


@pytest.mark.parametrize("seed", range(40))
def test_the_last_lines_whatever_their_lengths(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randrange(1, 40)
    # Lines from one byte to more than a 64 KiB block, so that reads straddle every boundary.
    lines = [bytes([97 + rng.randrange(26)]) * rng.choice([1, 7, 9_999, 65_535, 65_536, 70_001]) for _ in range(n)]
    trailing = rng.random() < 0.8
    paths = _ledger(tmp_path, b"\n".join(lines) + (b"\n" if trailing else b""))
    for count in sorted({1, n, rng.randrange(1, n + 1)}):
        assert last_ledger_lines(paths, count) == lines[-count:]
    assert last_ledger_lines(paths, 0) == []


def test_more_lines_than_the_ledger_holds_is_an_error(tmp_path: Path) -> None:
    paths = _ledger(tmp_path, b"a\nb\n")
    with pytest.raises(ValueError, match="fewer than 3 leaves"):
        last_ledger_lines(paths, 3)
