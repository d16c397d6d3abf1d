"""Where the monitor reads a site from: a folder, or an https:// URL (bounded in size and time,
plain http only on the loopback). Each is a Fetch: a site path and a size bound to its bytes, or
None when the site does not have that file."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from generator import __version__
from generator.core.regularfile import read_regular
from generator.monitor.monitor_errors import Unreadable

_TIMEOUT = 10.0  # seconds a connection may stay silent
_DEADLINE = 60.0  # seconds one file may take in all: a server dripping bytes cannot hold a run forever
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})

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
    import urllib.error
    import urllib.parse
    import urllib.request

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

    class SameScheme(urllib.request.HTTPRedirectHandler):
        """Redirects within the site's scheme only: an https site is never read over http."""

        def redirect_request(
            self,
            req: urllib.request.Request,
            fp: IO[bytes],
            code: int,
            msg: str,
            headers: Any,
            newurl: str,
        ) -> urllib.request.Request | None:
            wrong = allowed(urllib.parse.urlsplit(newurl), scheme)
            if wrong:
                raise Unreadable(f"{req.full_url}: redirected to {newurl}, which is refused: {wrong}")
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    # A local server is reached directly: a proxy from the environment would answer for it.
    proxies = urllib.request.ProxyHandler({} if given.hostname in _LOOPBACK else None)
    https = urllib.request.HTTPSHandler(context=ssl.create_default_context())
    opener = urllib.request.build_opener(proxies, SameScheme, https)
    headers = {"User-Agent": f"transparency-monitor/{__version__}", "Accept-Encoding": "identity"}

    def get(rel: str, limit: int) -> bytes | None:
        where = base + urllib.parse.quote(rel)
        deadline = time.monotonic() + _DEADLINE
        data = bytearray()
        try:
            with opener.open(urllib.request.Request(where, headers=headers), timeout=_TIMEOUT) as response:
                length = response.headers.get("Content-Length", "")
                if length.strip().isdigit() and int(length) > limit:
                    raise Unreadable(f"{where}: {int(length)} bytes, more than the {limit} such a file can have")
                while len(data) <= limit:
                    chunk = response.read(min(1 << 16, limit + 1 - len(data)))
                    if not chunk:
                        break
                    data += chunk
                    if time.monotonic() > deadline:
                        raise Unreadable(f"{where}: still arriving after {_DEADLINE:.0f} s")
        except urllib.error.HTTPError as e:
            e.close()
            if e.code in (404, 410):
                return None
            raise Unreadable(f"{where}: HTTP {e.code} {e.reason}") from None
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as e:
            reason = getattr(e, "reason", None) or e
            raise Unreadable(f"{where}: {reason}") from None
        if len(data) > limit:
            raise Unreadable(f"{where}: more than the {limit} bytes such a file can have")
        return bytes(data)

    return get
