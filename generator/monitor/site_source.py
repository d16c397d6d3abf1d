"""Where the monitor reads a site from: a folder, or an https:// URL (bounded in size and time,
plain http only on the loopback). Each is a Fetch: a site path and a size bound to its bytes, or
None when the site does not have that file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from generator import __version__
from generator.core.regularfile import read_regular
from generator.monitor.monitor_errors import Unreadable
from generator.verifier import HttpRemote, RemoteUnreadable

_TIMEOUT = 10.0  # seconds a connection may stay silent
_DEADLINE = 60.0  # seconds one file may take in all: a server dripping bytes cannot hold a run forever

Fetch = Callable[[str, int], bytes | None]


def open_site(site: str) -> tuple[str, Fetch]:
    """A label of the site for messages, and a function from a site path and a size bound to its
    bytes (None when the site does not have that file)."""
    if "://" in site:
        return site, _http_source(site)
    return site, _folder_source(Path(site))


def _folder_source(root: Path) -> Fetch:
    if not root.is_dir():
        raise Unreadable(f"{root}: not a folder, nor an https:// URL")

    def get(rel: str, limit: int) -> bytes | None:
        # A site is data from elsewhere: a link inside it could point at any file of this machine.
        path = root
        for part in rel.split("/"):
            path = path / part
            if path.is_symlink():
                return None
        try:
            return read_regular(path, limit)  # a FIFO there would otherwise hold the run forever
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            raise Unreadable(f"{path}: {e.strerror or e}") from None

    return get


def _http_source(url: str) -> Fetch:
    # The verifier's reader (kept-alive connections, bounded sizes and silences, redirects within
    # the scheme), with the monitor's own rules: plain http only on this machine, since the first
    # run pins the key it reads, and a deadline per file.
    try:
        remote = HttpRemote(
            url,
            loopback_http_only=True,
            file_deadline=_DEADLINE,
            timeout=_TIMEOUT,
            user_agent=f"transparency-monitor/{__version__}",
        )
    except RemoteUnreadable as e:
        raise Unreadable(str(e)) from None

    def get(rel: str, limit: int) -> bytes | None:
        try:
            return remote.get(rel, limit)
        except RemoteUnreadable as e:
            raise Unreadable(str(e)) from None

    return get
