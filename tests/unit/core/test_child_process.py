"""A step run in a forked process (generator.core.child_process): its result, progress, log
records and failures reach the caller as if it had run there; it does not outlive the caller."""

from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path

import pytest

from generator.core import child_process
from generator.core.child_process import Channel, ChildDied, ChildTraceback, run_step
from generator.core.generator_errors import InputError, VerificationFailed, problem

pytestmark = pytest.mark.skipif(not child_process.FORK, reason="steps are forked where the system can fork")


def test_the_step_runs_in_another_process_and_its_result_comes_back() -> None:
    here = os.getpid()
    there, data = run_step(lambda ch: (os.getpid(), {"a": [1, 2], "b": b"\x00" * 100_000}))
    assert run_step(lambda ch: ch.forked) is True
    assert there != here
    assert data == {"a": [1, 2], "b": b"\x00" * 100_000}


def test_a_file_opened_before_the_fork_carries_what_the_step_writes(tmp_path: Path) -> None:
    """How a build hands over what is too large to send: written by the step into a file the
    caller opened, read back by the caller."""
    with open(tmp_path / "handed", "w+b") as f:

        def step(ch: Channel) -> int:
            f.write(b"first" * 100_000)
            f.flush()
            return os.getpid()

        assert run_step(step) != os.getpid()
        f.seek(0)
        assert f.read() == b"first" * 100_000


def test_without_fork_the_step_runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(child_process, "FORK", False)
    assert run_step(lambda ch: os.getpid()) == os.getpid()
    assert run_step(lambda ch: ch.forked) is False


def test_progress_reaches_the_caller_in_order() -> None:
    seen: list[tuple[str, int, int]] = []

    def step(ch: Channel) -> None:
        assert ch.progress is not None
        for i in range(50):
            ch.progress("counting", i, 50)

    run_step(step, lambda label, done, total: seen.append((label, done, total)))
    assert seen == [("counting", i, 50) for i in range(50)]


def test_a_step_without_progress_is_handed_none() -> None:
    assert run_step(lambda ch: ch.progress is None) is True


def test_log_records_reach_the_callers_handlers_once(tmp_path: Path) -> None:
    """Written by the caller's handler, once: not also by the child's copy of it."""
    log = logging.getLogger("transparency")
    handler = logging.FileHandler(tmp_path / "log.txt")
    log.addHandler(handler)
    try:

        def step(ch: Channel) -> None:
            log.warning("witness %s did not answer", "w1")

        run_step(step)
    finally:
        log.removeHandler(handler)
        handler.close()
    assert (tmp_path / "log.txt").read_text() == "witness w1 did not answer\n"


def test_an_input_error_comes_back_as_itself_with_the_childs_traceback() -> None:
    def step(ch: Channel) -> None:
        raise InputError([problem("data/program.yaml", "unsupported version", "v", "1", "9")], "nothing was built")

    with pytest.raises(InputError) as caught:
        run_step(step)
    assert caught.value.summary == "nothing was built"
    assert [p.file for p in caught.value.problems] == ["data/program.yaml"]
    assert "unsupported version" in str(caught.value)
    cause = caught.value.__cause__
    assert isinstance(cause, ChildTraceback) and "in step" in str(cause)


def test_a_verification_failure_keeps_its_message() -> None:
    def step(ch: Channel) -> None:
        raise VerificationFailed("FAIL x")

    with pytest.raises(VerificationFailed) as caught:
        run_step(step)
    assert str(caught.value) == str(VerificationFailed("FAIL x"))


def test_an_exception_that_cannot_make_the_trip_is_described() -> None:
    class Local(Exception):  # a local class cannot be pickled
        pass

    def step(ch: Channel) -> None:
        raise Local("the reason")

    with pytest.raises(RuntimeError, match="Local: the reason"):
        run_step(step)


def test_a_step_killed_says_so() -> None:
    def step(ch: Channel) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    with pytest.raises(ChildDied, match="SIGKILL"):
        run_step(step)


def test_an_interrupted_caller_leaves_no_step_running(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"

    def step(ch: Channel) -> None:
        pid_file.write_text(str(os.getpid()))
        assert ch.progress is not None
        ch.progress("started", 0, 1)
        time.sleep(60)

    def progress(label: str, done: int, total: int) -> None:
        raise KeyboardInterrupt

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_step(step, progress)
    assert time.monotonic() - started < 30, "the step was waited for, not stopped"
    with pytest.raises(ProcessLookupError):  # killed and reaped: no such process
        os.kill(int(pid_file.read_text()), 0)


def _alive(pid: int) -> bool:
    """Whether `pid` runs: a process killed whose new parent has not reaped it yet is a zombie,
    dead all the same."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="a step dies with its caller on Linux")
def test_a_step_dies_with_its_caller(tmp_path: Path) -> None:
    """A caller killed outright (SIGKILL, no chance to clean up) takes its step with it."""
    pid_file = tmp_path / "pid"
    caller = os.fork()
    if caller == 0:  # pragma: no cover - the caller's own process

        def step(ch: Channel) -> None:
            pid_file.write_text(str(os.getpid()))
            time.sleep(60)

        try:
            run_step(step)
        finally:
            os._exit(0)
    deadline = time.monotonic() + 30
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the step never started"
        time.sleep(0.01)
    os.kill(caller, signal.SIGKILL)
    os.waitpid(caller, 0)
    step_pid = int(pid_file.read_text())
    while _alive(step_pid):
        assert time.monotonic() < deadline, "the step outlived its caller"
        time.sleep(0.01)
