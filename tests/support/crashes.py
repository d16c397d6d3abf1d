"""Killing commands on purpose: at the N-th step of a commit (generator.program.journal.crash_point),
or with SIGKILL at a moment chosen from outside. Each run is a real process of the CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from generator.program.datadir import Paths
from tests.support.files import tree

# Runs the CLI with crash_point replaced: the CRASH_AT-th call ends the process at once, as
# SIGKILL would, and the number of calls made is written to CRASH_COUNT when it exits.
_BOOT = """
import os, sys
import generator.program.journal as journal
crash_at, labels = int(os.environ.get("CRASH_AT", "0")), []
def point(label):
    labels.append(label)
    if len(labels) == crash_at:
        os._exit(137)
journal.crash_point = point
import atexit
if os.environ.get("CRASH_COUNT"):
    atexit.register(lambda: open(os.environ["CRASH_COUNT"], "w").write(chr(10).join(labels)))
from generator.cli import main
sys.argv = ["transparency", *sys.argv[1:]]
main()
"""


def cli_command(args: list[str]) -> list[str]:
    """The command line that runs the CLI with its crash points, for a process the caller starts."""
    return [sys.executable, "-c", _BOOT, *args]


def run_cli(
    args: list[str], crash_at: int = 0, count_file: Path | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CRASH_AT": str(crash_at)}
    env.pop("SOURCE_DATE_EPOCH", None)
    if count_file is not None:
        env["CRASH_COUNT"] = str(count_file)
    return subprocess.run(
        [sys.executable, "-c", _BOOT, *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd
    )


def crash_points(args: list[str], tmp: Path) -> int:
    """How many steps a command's commit has (run once, uncrashed, on a throwaway copy)."""
    return len(step_labels(args, tmp))


def step_labels(args: list[str], tmp: Path) -> list[str]:
    """The steps of a command's commit, in order (run once, uncrashed, on a throwaway copy)."""
    f = tmp / "crash-count"
    r = run_cli(args, count_file=f)
    assert r.returncode == 0, r.stdout + r.stderr
    return f.read_text().split("\n")


def steps_worth_testing(labels: list[str]) -> list[int]:
    """Every step (1-based), except that of a run of steps with the same label, staging files
    one after another before the commit point, only the first and last: a kill between two
    of them leaves the same state as a kill at either."""
    keep = []
    for i, label in enumerate(labels):
        same_before = i > 0 and labels[i - 1] == label
        same_after = i + 1 < len(labels) and labels[i + 1] == label
        if label != "staged a file" or not (same_before and same_after):
            keep.append(i + 1)
    return keep


def kill_after(args: list[str], seconds: float) -> int:
    """Start the command and SIGKILL it after `seconds` (if it is still running)."""
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    p = subprocess.Popen(
        [sys.executable, "-c", _BOOT, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    time.sleep(seconds)
    if p.poll() is None:
        p.send_signal(signal.SIGKILL)
    return p.wait()


def files(paths: Paths) -> dict[str, bytes | None]:
    """Every file under the data and private trees, by its path relative to the folder that
    holds both (folders left out: an empty folder made on the way is no change; and the
    checkpoints a build keeps in data/checkpoints/, which are the build's, not the command's, and
    the caches a command or build keeps in private/cache/, which hold nothing but a shortcut)."""
    return {
        k: v
        for k, v in tree(paths.data, paths.private, under=paths.data.parent).items()
        if v is not None and not k.startswith(("data/checkpoints/", "data/private/cache/", "private/cache/"))
    }
