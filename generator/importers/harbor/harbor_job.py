"""The folder Harbor writes for a job (`harbor run`, `jobs_dir/<job_name>/`): the job's config.json,
lock.json and result.json, and one folder per trial holding its result.json, the agent's trajectory
(agent/trajectory.json) and the artifacts Harbor copied out of the environment. Each file read once,
so that the bytes hashed are the bytes parsed, and parsed strictly (a key given twice is refused)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from generator.core.generator_errors import InputError, problem
from generator.importers.common.field_values import loads_unique
from generator.verifier import (
    Problem,
    show,
)

TRAJECTORY = "agent/trajectory.json"


@dataclass(frozen=True)
class Trial:
    folder: Path
    result: dict[str, Any]
    result_data: bytes
    answer_path: Path
    answer_data: bytes | None  # None: the agent left no answer file
    trajectory_data: bytes | None  # None: the agent wrote no trajectory

    @property
    def name(self) -> str:
        return self.folder.name


@dataclass(frozen=True)
class HarborJob:
    folder: Path
    config: dict[str, Any]
    result: dict[str, Any]
    result_data: bytes
    lock: dict[str, Any] | None
    trials: list[Trial]  # by folder name

    def planned(self) -> list[str] | None:
        """The names of the tasks the job was to run: the lock's, else the config's task folders;
        None when the job names its tasks otherwise (a dataset)."""
        if self.lock is not None and isinstance(self.lock.get("trials"), list):
            locked = [t.get("task") for t in self.lock["trials"] if isinstance(t, dict)]
            names = [t.get("name") if isinstance(t, dict) else None for t in locked]
            if names and all(isinstance(n, str) for n in names):
                return [str(n) for n in names]
        tasks: Any = self.config.get("tasks")
        if (
            isinstance(tasks, list)
            and tasks
            and all(isinstance(t, dict) and isinstance(t.get("path"), str) for t in tasks)
        ):
            return [PurePosixPath(t["path"]).name for t in tasks]
        return None


def _read(path: Path, shown: str, problems: list[Problem], optional: bool = False) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        if not optional:
            problems.append(problem(shown, "file is missing"))
    except OSError as e:
        problems.append(problem(shown, f"cannot read: {e.strerror}"))
    return None


def _object(data: bytes | None, shown: str, problems: list[Problem]) -> dict[str, Any] | None:
    if data is None:
        return None
    try:
        value = loads_unique(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        problems.append(problem(shown, f"not JSON: {str(e)[:200]}"))
        return None
    if not isinstance(value, dict):
        problems.append(problem(shown, "Harbor writes a JSON object here", found=show(value, 80)))
        return None
    return value


def read_job(folder: Path, answer_file: str, show_path: Any) -> HarborJob:
    """The job in `folder`; `show_path` shows a path in messages. InputError, with every file
    that cannot be read as Harbor writes it, when any cannot."""
    shown = show_path(folder)
    if not folder.is_dir():
        raise InputError(
            [problem(shown, "not a Harbor job folder", expected="the folder jobs_dir/<job_name> that harbor run wrote")]
        )
    problems: list[Problem] = []
    parsed = {}
    for name in ("config.json", "result.json", "lock.json"):
        data = _read(folder / name, show_path(folder / name), problems, optional=name == "lock.json")
        parsed[name] = (data, _object(data, show_path(folder / name), problems))
    trials = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and (p / "result.json").exists()):
        trial = _read_trial(sub, answer_file, show_path, problems)
        if trial is not None:
            trials.append(trial)
    config, result = parsed["config.json"][1], parsed["result.json"][1]
    if problems or config is None or result is None:
        raise InputError(problems, "cannot read the Harbor job")
    result_data = parsed["result.json"][0]
    assert result_data is not None
    return HarborJob(folder, config, result, result_data, parsed["lock.json"][1], trials)


def _links_inside(folder: Path, path: Path) -> bool:
    """Whether a folder between the trial's folder and `path`, or `path` itself, is a symbolic
    link: a link an agent left in what Harbor copied out could make a file of the host evidence."""
    rel = path.relative_to(folder)
    return any((folder / Path(*rel.parts[: n + 1])).is_symlink() for n in range(len(rel.parts)))


def _read_trial(folder: Path, answer_file: str, show_path: Any, problems: list[Problem]) -> Trial | None:
    before = len(problems)
    for inside in (folder / "result.json", folder / answer_file, folder / TRAJECTORY):
        if _links_inside(folder, inside):
            problems.append(
                problem(
                    show_path(inside),
                    "a symbolic link inside the trial's folder: what an agent left there is not read through links",
                )
            )
    if len(problems) > before:
        return None
    data = _read(folder / "result.json", show_path(folder / "result.json"), problems)
    result = _object(data, show_path(folder / "result.json"), problems)
    answer_path = folder / answer_file
    answer = _read(answer_path, show_path(answer_path), problems, optional=True)
    trajectory = _read(folder / TRAJECTORY, show_path(folder / TRAJECTORY), problems, optional=True)
    if len(problems) > before or result is None or data is None:
        return None
    return Trial(folder, result, data, answer_path, answer, trajectory)
