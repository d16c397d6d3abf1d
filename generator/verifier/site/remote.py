"""Reading a site from elsewhere, for `verify.py mirror` (and the generator's monitor): an
http:// or https:// URL over kept-alive connections (several requests at once, each on a
connection of its own), or a local folder (a path or a file:// URL), each file streamed to a sink
with bounded sizes and silences.

A Remote's `stream(rel, limit, sink)` hands the file's bytes to `sink` as they arrive and returns
their count, or None when the site has no such file (HTTP 404 or 410, or no file in the folder);
RemoteUnreadable is anything else that keeps it from reading the site (exit status 2).
"""

import http.client
import os
import ssl
import stat
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

REMOTE_TIMEOUT = 30.0  # seconds a connection may stay silent
REMOTE_REDIRECTS = 5
REMOTE_CHUNK = 1 << 16
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
USER_AGENT = "transparency-verify-mirror/1"

Sink = Callable[[bytes], None]


class RemoteUnreadable(Exception):
    """The site cannot be read from where it was named: not a URL, unreachable, an HTTP error."""


class RemoteTooLarge(RemoteUnreadable):
    """A file larger than anything the site's format lets it be."""


class Remote:
    """A site to read from: `label` names it in messages, `url_of` names one of its files."""

    label: str = ""
    plain_http: bool = False  # over the network without TLS: anyone on the way can answer

    def url_of(self, rel: str) -> str:
        raise NotImplementedError

    def stream(self, rel: str, limit: int, sink: Sink) -> int | None:
        raise NotImplementedError

    def get(self, rel: str, limit: int) -> bytes | None:
        """A whole (small) file, or None when the site does not have it."""
        parts: list[bytes] = []
        n = self.stream(rel, limit, parts.append)
        return None if n is None else b"".join(parts)

    def close(self) -> None:
        """Let go of kept-alive connections."""


def open_remote(where: str) -> Remote:
    """The site at `where`: an http(s):// URL, a file:// URL or a folder's path."""
    if where.lower().startswith("file://"):
        parts = urllib.parse.urlsplit(where)
        if parts.netloc not in ("", "localhost"):
            raise RemoteUnreadable(f"{where}: a file:// URL of another host")
        return FolderRemote(Path(urllib.request.url2pathname(parts.path)), where)
    if "://" in where:
        return HttpRemote(where)
    return FolderRemote(Path(where), where)


class FolderRemote(Remote):
    """A site in a folder of this machine, read only through regular files and never a link."""

    def __init__(self, root: Path, label: str) -> None:
        if not root.is_dir():
            raise RemoteUnreadable(f"{label}: not a folder, nor an http:// or https:// URL")
        self.root = root
        self.label = label

    def url_of(self, rel: str) -> str:
        return str(self.root / rel)

    def stream(self, rel: str, limit: int, sink: Sink) -> int | None:
        path = self.root
        try:
            for part in rel.split("/"):
                path = path / part
                if path.is_symlink():
                    return None  # a site is data from elsewhere: a link could lead to any file here
            # O_NONBLOCK: a FIFO named like a file of the site is refused, never waited on.
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:
            raise RemoteUnreadable(f"{path}: {e.strerror or e}") from None
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            n = 0
            while chunk := f.read(REMOTE_CHUNK):
                n += len(chunk)
                if n > limit:
                    raise RemoteTooLarge(f"{path}: more than the {limit} bytes such a file can have")
                sink(chunk)
            return n


class HttpRemote(Remote):
    """A site served over http:// or https://: redirects followed within the scheme given, a
    proxy from the environment tunnelled through (never for the loopback). `loopback_http_only`
    refuses plain http but on this machine (the monitor's rule: it pins a key on first contact);
    `file_deadline` bounds the seconds one file may take in all, against a server dripping bytes."""

    def __init__(
        self,
        url: str,
        *,
        loopback_http_only: bool = False,
        file_deadline: float | None = None,
        timeout: float = REMOTE_TIMEOUT,
        user_agent: str = USER_AGENT,
    ) -> None:
        self.loopback_http_only = loopback_http_only
        self.file_deadline = file_deadline
        try:
            given = urllib.parse.urlsplit(url)
            given.port  # noqa: B018 -- raises ValueError for a malformed port
        except ValueError as e:
            raise RemoteUnreadable(f"{url}: not a URL ({e})") from None
        self.scheme = given.scheme.lower()
        problem = self._refused(given) or (
            "a site URL has no query or fragment" if given.query or given.fragment else None
        )
        if problem:
            raise RemoteUnreadable(f"{url}: {problem}")
        self.base = urllib.parse.urlunsplit((self.scheme, given.netloc, given.path.rstrip("/") + "/", "", ""))
        self.label = self.base
        self.plain_http = self.scheme == "http" and given.hostname not in LOOPBACK_HOSTS
        context = ssl.create_default_context() if self.scheme == "https" else None
        self.pool = _Connections(self.scheme, context, timeout, user_agent)

    def _refused(self, parts: urllib.parse.SplitResult) -> str | None:
        """What is wrong with fetching from `parts` for a site given with this scheme."""
        if self.scheme not in ("http", "https"):
            return "not an http:// or https:// URL"
        if parts.scheme.lower() != self.scheme:
            return f"{parts.scheme or 'no'} scheme, not {self.scheme}"
        if not parts.hostname or parts.username is not None or parts.password is not None:
            return "a URL with a host name and no user name or password"
        if self.loopback_http_only and self.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
            return "plain http:// is accepted only for 127.0.0.1 or localhost (tests and previews); use https://"
        return None

    def url_of(self, rel: str) -> str:
        return self.base + urllib.parse.quote(rel)

    def stream(self, rel: str, limit: int, sink: Sink) -> int | None:
        where = self.url_of(rel)
        deadline = time.monotonic() + self.file_deadline if self.file_deadline is not None else None
        for _ in range(REMOTE_REDIRECTS + 1):
            parts = urllib.parse.urlsplit(where)
            try:
                status, location, n = self.pool.get(parts, limit, sink, deadline)
            except RemoteTooLarge as e:
                raise RemoteTooLarge(f"{where}: {e}") from None
            except (http.client.HTTPException, OSError, ValueError) as e:
                raise RemoteUnreadable(f"{where}: {getattr(e, 'reason', None) or e or type(e).__name__}") from None
            if status in (301, 302, 303, 307, 308) and location is not None:
                target = urllib.parse.urljoin(where, location)
                wrong = self._refused(urllib.parse.urlsplit(target))
                if wrong:
                    raise RemoteUnreadable(f"{where}: redirected to {target}, which is refused: {wrong}")
                where = target
                continue
            if status in (404, 410):
                return None
            if status != 200:
                raise RemoteUnreadable(f"{where}: HTTP {status}")
            return n
        raise RemoteUnreadable(f"{where}: more than {REMOTE_REDIRECTS} redirects")

    def close(self) -> None:
        self.pool.close()


class _Connections:
    """Kept-alive connections, each lent to one request at a time (several threads ask at once): a
    mirror reads thousands of files, and a new TLS connection for each would cost more than the
    files. A connection goes back to the pool only after its response was read to the end and the
    server did not ask to close it."""

    def __init__(self, scheme: str, context: Any, timeout: float, user_agent: str) -> None:
        self.scheme = scheme
        self.context = context
        self.timeout = timeout
        self.user_agent = user_agent
        self.idle: dict[tuple[str, int], list[Any]] = {}
        self.lock = threading.Lock()

    def _connect(self, host: str, port: int) -> Any:
        proxy = None if host in LOOPBACK_HOSTS else urllib.request.getproxies().get(self.scheme)
        if proxy and urllib.request.proxy_bypass(host):
            proxy = None
        target = (host, port)
        if proxy:
            p = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            target = (p.hostname or "", p.port or 80)
        if self.scheme == "https":
            conn: Any = http.client.HTTPSConnection(*target, timeout=self.timeout, context=self.context)
        else:
            conn = http.client.HTTPConnection(*target, timeout=self.timeout)
        if proxy:
            conn.set_tunnel(host, port)
        return conn

    def get(self, parts: Any, limit: int, sink: Sink, deadline: float | None) -> tuple[int, str | None, int]:
        host = parts.hostname or ""
        key = (host, parts.port or (443 if self.scheme == "https" else 80))
        with self.lock:
            conn = self.idle.get(key, []).pop() if self.idle.get(key) else None
        fresh = conn is None
        if conn is None:
            conn = self._connect(*key)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = {"User-Agent": self.user_agent, "Accept-Encoding": "identity"}
        try:
            try:
                conn.request("GET", path, headers=headers)
                response = conn.getresponse()
            except ConnectionError:  # http.client's RemoteDisconnected among them
                if fresh:
                    raise
                # A kept-alive connection the server closed meanwhile: once more on a new one.
                conn.close()
                conn = self._connect(*key)
                conn.request("GET", path, headers=headers)
                response = conn.getresponse()
            n = _read_into(response, limit, sink, deadline) if response.status == 200 else len(response.read(1 << 16))
        except BaseException:
            conn.close()
            raise
        if response.will_close or not response.isclosed():
            conn.close()
        else:
            with self.lock:
                self.idle.setdefault(key, []).append(conn)
        return response.status, response.getheader("Location"), n

    def close(self) -> None:
        with self.lock:
            for conns in self.idle.values():
                for conn in conns:
                    conn.close()
            self.idle.clear()


def _read_into(response: Any, limit: int, sink: Sink, deadline: float | None) -> int:
    """The body, to `sink`: no more than `limit` bytes, and exactly its Content-Length (http.client
    raises IncompleteRead on a body cut short). A server that stays silent for the connection's
    timeout fails the read; one that drips bytes, the deadline if there is one."""
    length = response.getheader("Content-Length", "")
    if length.strip().isdigit() and int(length) > limit:
        raise RemoteTooLarge(f"{int(length)} bytes, more than the {limit} such a file can have")
    n = 0
    while chunk := response.read(REMOTE_CHUNK):
        n += len(chunk)
        if n > limit:
            raise RemoteTooLarge(f"more than the {limit} bytes such a file can have")
        if deadline is not None and time.monotonic() > deadline:
            raise RemoteTooLarge("still arriving after its deadline")
        sink(chunk)
    return n
