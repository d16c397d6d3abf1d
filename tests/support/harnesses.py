"""Other projects' tools in environments of their own: lm-evaluation-harness and Harbor for the
importers' tests, the Every Eval Ever validator for the export tests, each installed by `make
harnesses` in a virtual environment of its own (.venv-lm-eval; .venv-harbor and .venv-eee with
Python 3.12, which Harbor and every-eval-ever need), so that their dependencies never meet the
project's. A test that needs one and finds it missing skips, saying how to install it; in CI,
where everything must be installed, it fails."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import NoReturn

import pytest

from tests.support.demo import REPO

ENVIRONMENTS = {
    "lm-eval": REPO / ".venv-lm-eval",
    "harbor": REPO / ".venv-harbor",
    "every-eval-ever": REPO / ".venv-eee",
}
MODULES = {"lm-eval": "lm_eval", "harbor": "harbor", "every-eval-ever": "every_eval_ever"}


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the harness tests: {reason}", pytrace=False)
    pytest.skip(reason)


def harness_python(name: str) -> Path:
    """The Python of harness `name`'s environment, with the harness importable in it."""
    python = ENVIRONMENTS[name] / "bin" / "python"
    if not python.is_file():
        _unavailable(f"{name} is not installed: run make harnesses (no {python.relative_to(REPO)})")
    ran = subprocess.run([str(python), "-c", f"import {MODULES[name]}"], capture_output=True, text=True, check=False)
    if ran.returncode != 0:
        _unavailable(f"{name} cannot be imported in {python.relative_to(REPO)}: {ran.stderr.strip()[-300:]}")
    return python


def run_tool(python: Path, script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`script` run by a harness's Python, offline (no dataset or model is downloaded)."""
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    ran = subprocess.run(
        [str(python), str(script), *args], capture_output=True, text=True, env=env, cwd=REPO, check=False, timeout=900
    )
    assert ran.returncode == 0, f"{script.name} failed:\n{ran.stdout[-3000:]}\n{ran.stderr[-3000:]}"
    return ran
