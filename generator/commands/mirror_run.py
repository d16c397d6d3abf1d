"""`transparency mirror key|follow|serve`: the mirror program (generator/mirror/) as commands: a new
mirror key, one update of a mirror's copy of a log from a site (or one every so many seconds), the
log's keys pinned from --log or a trust policy, and the mirror's folder served read-only over HTTP."""

from __future__ import annotations

import functools
import http.server
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any, NoReturn

from generator.commands.serve import SiteRequestHandler
from generator.core.cosigning_keys import Cosigner, generate_cosigner, load_cosigner, write_cosigner
from generator.core.generator_errors import InputError, TransparencyError, problem
from generator.mirror.pull import Progress, Pulled, pull
from generator.verifier import FormatError, LogKey, parse_log_key, parse_policy

_MAX_POLICY_BYTES = 1 << 20


def new_mirror_key(key_path: Path, name: str, kind: str) -> str:
    """Create the mirror key `name` of type `kind` in a new file `key_path` (mode 0600); its vkey."""
    cosigner = generate_cosigner(name, kind)
    write_cosigner(key_path, cosigner)
    return cosigner.key.vkey


def pinned_log_keys(vkeys: Sequence[str], policy_path: Path | None) -> tuple[LogKey, ...]:
    """The log keys a mirror opens checkpoints with: the --log vkeys, or the `log` lines of a
    trust policy, exactly one of the two. InputError naming each that cannot be read."""
    if bool(vkeys) == (policy_path is not None):
        raise InputError(
            [problem("--log/--policy", "give the log's key with --log VKEY (repeat for several) or --policy FILE")],
            "no log key pinned" if not vkeys else "--log and --policy both given",
        )
    problems, keys = [], []
    for vkey in vkeys:
        try:
            keys.append(parse_log_key(vkey))
        except FormatError as e:
            problems.append(problem("--log", str(e), expected="a log's vkey, ORIGIN+KEYID+BASE64", found=vkey))
    if policy_path is not None:
        try:
            data = policy_path.read_bytes()[: _MAX_POLICY_BYTES + 1]
            if len(data) > _MAX_POLICY_BYTES:
                raise FormatError(f"larger than the {_MAX_POLICY_BYTES} bytes a policy may have")
            policy = parse_policy(data)
            keys = [*policy.log_keys, *policy.ml_dsa_log_keys]
            if not keys:
                problems.append(problem(str(policy_path), "the policy has no `log <vkey>` line"))
        except OSError as e:
            problems.append(problem(str(policy_path), f"cannot read it: {e.strerror or e}"))
        except FormatError as e:
            problems.append(problem(str(policy_path), str(e)))
    if problems:
        raise InputError(problems, "cannot pin the log's key")
    return tuple(keys)


@dataclass(frozen=True)
class Follower:
    """A mirror following one site into one folder, with its key and the log's pinned keys."""

    site: str
    out: Path
    cosigner: Cosigner
    log_keys: tuple[LogKey, ...]

    def run(self, progress: Progress) -> Pulled:
        return pull(self.site, self.out, self.cosigner, self.log_keys, progress=progress)


def follower(
    site: str, out: Path, key_path: Path, name: str | None, log_vkeys: Sequence[str], policy_path: Path | None
) -> Follower:
    """The mirror of these arguments; InputError or KeyFileError when they cannot make one."""
    keys = pinned_log_keys(log_vkeys, policy_path)
    return Follower(site, out, load_cosigner(key_path, name), keys)


def summary(p: Pulled) -> str:
    """One line saying what a run did."""
    if not p.cosigned:
        return f"{p.origin}: unchanged at size {p.size}; nothing fetched, nothing signed ({p.folder})"
    since = "first copy" if p.old_size is None else f"was {p.old_size}"
    return f"{p.origin}: stored and cosigned size {p.size} ({since}; {p.fetched} tiles fetched) in {p.folder}"


def follow_every(
    f: Follower,
    seconds: float,
    progress: Callable[[], Progress],
    report: Callable[[Pulled | TransparencyError], None],
    sleep: Callable[[float], None] = time.sleep,
) -> NoReturn:
    """Run `f` every `seconds` until interrupted (KeyboardInterrupt goes through to the caller):
    each run's result, or the error that stopped it, to `report`; an error does not stop the loop,
    since the next run may find the site readable again (and a refusal repeats, as it should)."""
    while True:
        try:
            report(f.run(progress()))
        except TransparencyError as e:
            report(e)
        sleep(seconds)


class MirrorRequestHandler(SiteRequestHandler):
    """`transparency serve`'s handler (regular files inside the folder reached without a link, no
    listing), answering GET only, never a dot name (the lock files, a write's temporary file),
    with the checkpoint as text that caches revalidate and the tiles as immutable bytes."""

    _status = 0

    def do_HEAD(self) -> None:
        self.send_error(HTTPStatus.METHOD_NOT_ALLOWED, "GET only")

    def send_head(self) -> Any:
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if any(part.startswith(".") for part in path.split("/")):
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        return super().send_head()

    def send_response(self, code: int, message: str | None = None) -> None:
        self._status = code
        super().send_response(code, message)

    def guess_type(self, path: Any) -> str:
        return "text/plain; charset=utf-8" if str(path).endswith("/checkpoint") else "application/octet-stream"

    def end_headers(self) -> None:
        if self._status == HTTPStatus.OK:
            checkpoint = self.path.split("?", 1)[0].endswith("/checkpoint")
            self.send_header("Cache-Control", "no-cache" if checkpoint else "public, max-age=604800, immutable")
            self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()


def mirror_server(folder: Path, listen: str) -> http.server.ThreadingHTTPServer:
    """A read-only server of the mirror's folder on `listen` (HOST:PORT; no host: 127.0.0.1; port 0:
    any free port); the caller serves it."""
    host, _, port = listen.rpartition(":")
    if not port.isdigit() or int(port) > 65535:
        raise InputError([problem("--listen", "not HOST:PORT", expected="e.g. 127.0.0.1:7381", found=listen)])
    handler = functools.partial(MirrorRequestHandler, directory=str(folder))
    try:
        return http.server.ThreadingHTTPServer((host or "127.0.0.1", int(port)), handler)
    except OSError as e:
        raise InputError(
            [problem("--listen", f"cannot listen on {listen}: {e.strerror or e}")], "cannot serve"
        ) from None
