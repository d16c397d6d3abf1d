"""A folder served over HTTP/1.1 on the loopback, in a thread, for the tests that read a site as a
remote client does: every request logged, and a hook to serve other bytes for a path."""

from __future__ import annotations

import functools
import http.server
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A path and how many times it was asked for so far, to the bytes to serve instead (None: the file's own).
Override = Callable[[str, int], bytes | None]


@dataclass
class Served:
    url: str
    requests: list[str] = field(default_factory=list)  # the paths asked for, as site paths, in order
    connections: list[object] = field(default_factory=list)

    def asked(self, rel: str) -> int:
        return self.requests.count(rel)


@contextmanager
def serve(root: Path, override: Override | None = None) -> Iterator[Served]:
    """Serve `root` at http://127.0.0.1:PORT/ (kept-alive connections) until the block ends."""
    lock = threading.Lock()
    served = Served("")

    class Handler(http.server.SimpleHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body leave in two writes: without this, each small file would wait for the
        # client's delayed acknowledgement (40 ms) before its body is sent.
        disable_nagle_algorithm = True

        def setup(self) -> None:
            super().setup()
            with lock:
                served.connections.append(self.client_address)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            rel = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
            with lock:
                n = served.asked(rel)
                served.requests.append(rel)
            data = override(rel, n) if override else None
            if data is None:
                super().do_GET()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    served.url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
