"""Where the monitor reads a site from: a folder, or an https:// URL (bounded in size and time,
plain http only on the loopback). Each is a Fetch: a site path and a size bound to its bytes, or
None when the site does not have that file."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from generator import __version__
from generator.core.regularfile import read_regular
from generator.monitor.monitor_errors import Unreadable

_TIMEOUT = 10.0  # seconds a connection may stay silent
_DEADLINE = 60.0  # seconds one file may take in all: a server dripping bytes cannot hold a run forever
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_REDIRECTS = 5

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
    # Imported here: `transparency` loads this module for every command, and urllib costs more
    # than the rest of it.
    import http.client
    import ssl
    import urllib.parse

    def allowed(parts: urllib.parse.SplitResult, scheme: str) -> str | None:
        """What is wrong with fetching from `parts` when the site was given with `scheme`."""
        if parts.scheme.lower() != scheme:
            return f"{parts.scheme or 'no'} scheme, not {scheme}"
        if scheme == "http" and parts.hostname not in _LOOPBACK:
            return "plain http:// is accepted only for 127.0.0.1 or localhost (tests and previews); use https://"
        if scheme not in ("http", "https"):
            return "only https:// URLs (and http:// on 127.0.0.1) are followed"
        if not parts.hostname or parts.username is not None or parts.password is not None:
            return "a URL with a host name and no user name or password"
        return None

    try:
        given = urllib.parse.urlsplit(url)
        given.port  # noqa: B018 -- raises ValueError for a malformed port
    except ValueError as e:
        raise Unreadable(f"{url}: not a URL ({e})") from None
    scheme = given.scheme.lower()
    problem = allowed(given, scheme) or (
        "a site URL has no query or fragment" if given.query or given.fragment else None
    )
    if problem:
        raise Unreadable(f"{url}: {problem}")
    base = urllib.parse.urlunsplit((scheme, given.netloc, given.path.rstrip("/") + "/", "", ""))

    headers = {"User-Agent": f"transparency-monitor/{__version__}", "Accept-Encoding": "identity"}
    pool = _Connections(scheme, ssl.create_default_context() if scheme == "https" else None)

    def get(rel: str, limit: int) -> bytes | None:
        where = base + urllib.parse.quote(rel)
        deadline = time.monotonic() + _DEADLINE
        for _ in range(_REDIRECTS + 1):
            parts = urllib.parse.urlsplit(where)
            try:
                status, location, data = pool.get(parts, headers, limit, deadline)
            except (http.client.HTTPException, OSError, ValueError) as e:
                raise Unreadable(f"{where}: {getattr(e, 'reason', None) or e}") from None
            except _TooBig as e:
                raise Unreadable(f"{where}: {e}") from None
            if status in (301, 302, 303, 307, 308) and location is not None:
                target = urllib.parse.urljoin(where, location)
                wrong = allowed(urllib.parse.urlsplit(target), scheme)
                if wrong:
                    raise Unreadable(f"{where}: redirected to {target}, which is refused: {wrong}")
                where = target
                continue
            if status in (404, 410):
                return None
            if status != 200:
                raise Unreadable(f"{where}: HTTP {status}")
            return data
        raise Unreadable(f"{where}: more than {_REDIRECTS} redirects")

    return get


class _TooBig(Exception):
    """A response over its bound, or still arriving past its deadline."""


class _Connections:
    """Kept-alive connections to the hosts a site is read from, each lent to one request at a time
    (the read-ahead asks from several threads): a run reads thousands of tiles, and a new TLS
    connection for each would cost more than the tiles. A connection goes back to the pool only
    after its response was read to the end and the server did not ask to close it. A proxy from
    the environment is tunnelled through (CONNECT), except for a local server, reached directly."""

    def __init__(self, scheme: str, context: Any) -> None:
        self.scheme = scheme
        self.context = context
        self.idle: dict[tuple[str, int], list[Any]] = {}
        self.lock = threading.Lock()

    def _connect(self, host: str, port: int) -> Any:
        import http.client
        import urllib.parse
        import urllib.request

        proxy = None if host in _LOOPBACK else urllib.request.getproxies().get(self.scheme)
        if proxy and urllib.request.proxy_bypass(host):
            proxy = None
        target = (host, port)
        if proxy:
            p = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            target = (p.hostname or "", p.port or 80)
        if self.scheme == "https":
            conn: Any = http.client.HTTPSConnection(*target, timeout=_TIMEOUT, context=self.context)
        else:
            conn = http.client.HTTPConnection(*target, timeout=_TIMEOUT)
        if proxy:
            conn.set_tunnel(host, port)
        return conn

    def get(self, parts: Any, headers: dict[str, str], limit: int, deadline: float) -> tuple[int, str | None, bytes]:
        host = parts.hostname or ""
        key = (host, parts.port or (443 if self.scheme == "https" else 80))
        with self.lock:
            conn = self.idle.get(key, []).pop() if self.idle.get(key) else None
        fresh = conn is None
        if conn is None:
            conn = self._connect(*key)
        path = parts.path or "/"
        try:
            try:
                response = _send(conn, path, headers)
            except ConnectionError:  # http.client's RemoteDisconnected among them
                if fresh:
                    raise
                # A kept-alive connection the server closed meanwhile: once more on a new one.
                conn.close()
                conn = self._connect(*key)
                response = _send(conn, path, headers)
            data = _read_bounded(response, limit, deadline) if response.status == 200 else response.read(1 << 16)
        except BaseException:
            conn.close()
            raise
        if response.will_close or not response.isclosed():
            conn.close()
        else:
            with self.lock:
                self.idle.setdefault(key, []).append(conn)
        return response.status, response.getheader("Location"), data


def _send(conn: Any, path: str, headers: dict[str, str]) -> Any:
    conn.request("GET", path, headers=headers)
    return conn.getresponse()


def _read_bounded(response: Any, limit: int, deadline: float) -> bytes:
    length = response.getheader("Content-Length", "")
    if length.strip().isdigit() and int(length) > limit:
        raise _TooBig(f"{int(length)} bytes, more than the {limit} such a file can have")
    data = bytearray()
    while len(data) <= limit:
        chunk = response.read(min(1 << 16, limit + 1 - len(data)))
        if not chunk:
            break
        data += chunk
        if time.monotonic() > deadline:
            raise _TooBig(f"still arriving after {_DEADLINE:.0f} s")
    if len(data) > limit:
        raise _TooBig(f"more than the {limit} bytes such a file can have")
    return bytes(data)
