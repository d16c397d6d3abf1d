"""A step of a command run in a forked process of its own, so that the memory it takes is given
back whole when it ends.

Python hands little of a freed heap back to the system: a million-item build that frees its
replayed ledger before it checks its release still holds most of it, and the check's own state
comes on top. A step run in a child process ends by the child's exit, which returns everything;
the parent keeps only what the step sends back. The step talks to the parent through a pipe:
its progress and its log records as they happen (the parent reports them as its own, so the
terminal, a test's captured output and the log see them as before), then its result or its
exception, raised again in the parent with the child's traceback as its cause. Where processes
cannot be forked, the step runs in the caller's process, with the same result.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection, Pipe
from typing import Any, TypeVar

from generator.core.progress import Progress

T = TypeVar("T")

# The names of the loggers whose records a child sends up (the project's own).
LOGGER = "transparency"

# Tests may set this to run every step in the caller's process.
FORK = hasattr(os, "fork")


class ChildTraceback(Exception):
    """The traceback of an exception raised in a child process, as text: the cause of the same
    exception raised again in the parent."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ChildDied(RuntimeError):
    """The child process ended without a result (killed, or out of memory)."""


class Channel:
    """What a step is handed: `progress` reports to the caller's (None if it has none);
    `forked` says whether the step runs in a process of its own (a copy of the caller's, whose
    descriptors, and the locks they hold, it shares)."""

    def __init__(self, progress: Progress | None, forked: bool) -> None:
        self.progress = progress
        self.forked = forked


class _Forward(logging.Handler):
    def __init__(self, send: Callable[[Any], None]) -> None:
        super().__init__()
        self._send = send

    def emit(self, record: logging.LogRecord) -> None:
        record.msg, record.args, record.exc_info, record.exc_text = record.getMessage(), None, None, None
        self._send(("log", record))


def run_step(step: Callable[[Channel], T], progress: Progress | None = None) -> T:
    """`step(channel)` in a forked child; its result (which must pickle), or its exception. A
    large result is better written by the step into a file the caller opened before (a file
    object the fork shares), and read back when it is needed."""
    if not FORK:
        return step(Channel(progress, False))
    receive, send_end = Pipe(duplex=False)
    parent = os.getpid()
    # What this process has buffered is not the child's to write: flushed now, or the child's
    # copy would be written too when something in it flushes (multiprocessing does).
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        receive.close()
        _child(step, send_end, progress is not None, parent)
    send_end.close()
    try:
        result: T = _parent(receive, pid, progress)
        return result
    finally:
        receive.close()


def _child(step: Callable[[Channel], T], conn: Connection, has_progress: bool, parent: int) -> None:
    code = 1
    try:
        die_with(parent)
        send = conn.send
        # The project's records go up, and only up: the parent's handlers (copied into this
        # process by the fork) must not write them a second time.
        log = logging.getLogger(LOGGER)
        log.handlers, log.propagate = [_Forward(send)], False
        report: Progress | None = None
        if has_progress:

            def report(label: str, done: int, total: int) -> None:
                send(("progress", label, done, total))

        try:
            result = step(Channel(report, True))
            conn.send_bytes(pickle.dumps(("result", result), protocol=pickle.HIGHEST_PROTOCOL))
            code = 0
        except BaseException as e:  # every failure goes up to the parent, which raises it
            conn.send_bytes(pickle.dumps(("error", *_portable(e))))
    except BaseException:  # the pipe is gone: the parent ended, and there is no one to tell
        pass
    finally:
        with contextlib.suppress(BaseException):
            conn.close()
        os._exit(code)  # nothing of the parent's (atexit, buffered output, a test runner) runs twice


def _portable(e: BaseException) -> tuple[BaseException, str]:
    """`e` as it will pickle, and its traceback: an exception that does not come back as itself
    goes up as a RuntimeError naming its type and message."""
    text = "".join(traceback.format_exception(e))
    try:
        back = pickle.loads(pickle.dumps(e))
        if type(back) is type(e) and str(back) == str(e):
            return e, text
    except Exception:  # any exception that cannot make the trip is described instead
        pass
    return RuntimeError(f"{type(e).__name__}: {e}"), text


def _parent(conn: Connection, pid: int, progress: Progress | None) -> Any:
    reaped = False
    try:
        while True:
            try:
                message = pickle.loads(conn.recv_bytes())
            except EOFError:
                reaped = True  # by _ended, which says how it ended
                raise ChildDied(_ended(pid)) from None
            kind = message[0]
            if kind == "progress" and progress is not None:
                progress(*message[1:])
            elif kind == "log":
                logging.getLogger(message[1].name).handle(message[1])
            elif kind in ("result", "error"):
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
                reaped = True
                if kind == "result":
                    return message[1]
                raise message[1] from ChildTraceback(message[2])
    except BaseException:
        # Interrupted: the child does not outlive the step. (Once reaped, its number may already
        # be another process's: it is not signalled again.)
        if not reaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        raise


def _ended(pid: int) -> str:
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return "the step's process ended without a result"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        hint = " (out of memory?)" if sig == signal.SIGKILL else ""
        return f"the step's process was ended by signal {signal.Signals(sig).name}{hint}, without a result"
    return f"the step's process exited with status {os.WEXITSTATUS(status)} without a result"


def die_with(parent: int) -> None:
    """On Linux (elsewhere, nothing), this process is killed with its parent, process `parent`: a
    build killed mid-step leaves no Python process of its own writing on behind it (its staging
    folder is then a leftover the next build removes; a Pagefind run already started finishes
    its shard there), and a step killed leaves none of its own workers (each calls this first)
    waiting forever for work."""
    try:
        prctl = ctypes.CDLL(None).prctl
    except (OSError, AttributeError):
        return
    pr_set_pdeathsig = 1
    prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
