"""`transparency serve`: a local preview of a built site, never serving anything outside it."""

from __future__ import annotations

import functools
import http.server
import sys
from http import HTTPStatus
from pathlib import Path
from typing import Any

from generator.core.generator_errors import InputError, problem
from generator.verifier import printable


class SiteRequestHandler(http.server.SimpleHTTPRequestHandler):
    """The standard handler, serving only regular files inside the site reached without a
    link: the file finally opened is checked (a folder's index.html included), and folders
    are never listed."""

    def send_head(self) -> Any:
        path = Path(self.translate_path(self.path))
        if path.is_dir() and not path.is_symlink():
            if not self.path.split("?", 1)[0].split("#", 1)[0].endswith("/"):
                return super().send_head()  # the standard redirect to the folder's URL; nothing served
            path = path / "index.html"  # what the standard handler would open: checked first
        if not self._servable(path):
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        return super().send_head()

    def _servable(self, target: Path) -> bool:
        root = Path(self.directory).resolve()
        try:
            return (
                target.resolve().is_relative_to(root)
                and target.is_file()
                and not any(q.is_symlink() for q in (target, *target.parents) if q.is_relative_to(root) and q != root)
            )
        except (OSError, RuntimeError, ValueError):
            return False

    def list_directory(self, path: Any) -> Any:
        self.send_error(HTTPStatus.NOT_FOUND, "File not found")
        return None

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(printable(format % args) + "\n")


def open_server(site: Path, port: int, bind: str) -> http.server.ThreadingHTTPServer:
    """A preview server for `site` on bind:port (port 0: any free port); the caller serves it."""
    handler = functools.partial(SiteRequestHandler, directory=str(site))
    try:
        return http.server.ThreadingHTTPServer((bind, port), handler)
    except OSError as e:
        raise InputError(
            [problem("--port", f"cannot listen on {bind}:{port}: {e.strerror or e}")], "cannot serve"
        ) from None
