"""Timestamp tokens for the build's checkpoint (RFC 3161; FORMAT.md, "Draws and timestamps").

The program lists its timestamp authorities in `data/timestamp-authorities.json` (a name, a URL
and a certificate each; the file is published as `ledger/timestamp-authorities.json`). A build
that publishes a checkpoint of a size no token covers yet asks each authority for a token over
the checkpoint's signed body, in bounded time, checks it with the verifier's own code against the
listed certificate, and keeps it in `data/timestamps/<size>/<name>.tst`: tokens are kept with the
program, as archived checkpoints are, and every one whose size the history archives is published
as `ledger/timestamps/<size>/<name>.tst`. An authority that does not answer, or answers with a
token that does not verify, is named in a warning: the site is still published, with the tokens
it has.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from generator.core import canonical_json
from generator.core.generator_errors import InputError, problem
from generator.core.timestamp_client import TimestampClientError, request_token
from generator.program.datadir import Paths
from generator.verifier import (
    AUTHORITIES_PATH,
    FormatError,
    OutsideBound,
    authorities_problems,
    checkpoint_body,
    loads_strict,
    read_timestamp_token,
    timestamp_token_path,
    verify_timestamp_token,
)

AUTHORITIES_FILE = "timestamp-authorities.json"
TIMESTAMPS_DIR = "timestamps"
REQUEST_TIMEOUT = 10.0  # seconds for each authority


@dataclass(frozen=True)
class Authority:
    name: str
    url: str
    certificate: bytes


def load_authorities(paths: Paths) -> tuple[bytes | None, list[Authority]]:
    """The authority list's bytes (as published) and its authorities; none when the
    program lists none. InputError naming every problem of the file."""
    path = paths.data / AUTHORITIES_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, []
    file = paths.show(path)
    try:
        doc = loads_strict(data)
    except ValueError as e:
        raise InputError([problem(file, f"not JSON: {e}")]) from None
    found = authorities_problems(doc)
    if found:
        raise InputError([problem(file, p) for p in found])
    # Published in canonical form, as every JSON document of a site is.
    authorities = [Authority(r["name"], r["url"], r["certificate"].encode()) for r in doc["authorities"]]
    return canonical_json.dumps(doc), authorities


def token_file(paths: Paths, size: int, name: str) -> Path:
    return paths.data / TIMESTAMPS_DIR / str(size) / f"{name}.tst"


def stamp(
    paths: Paths, authorities: list[Authority], size: int, checkpoint: bytes, last_at: str, offline: bool
) -> list[str]:
    """Ask each authority that has no token for `size` yet for one over the checkpoint's body,
    keep each that verifies and is not older than the checkpoint's last event (`last_at`: such a
    token would fail the site for good); the warnings, one per authority that failed."""
    warnings = []
    body = checkpoint_body(checkpoint)
    for a in authorities:
        target = token_file(paths, size, a.name)
        if target.exists() or size == 0:
            continue
        if offline:
            warnings.append(
                f"timestamp authority {a.name}: not asked (offline build); checkpoint {size} has no token of it"
            )
            continue
        try:
            token = request_token(a.url, body, REQUEST_TIMEOUT)
            stamped = verify_timestamp_token(token, a.certificate, body, f"checkpoint {size}")
        except (TimestampClientError, FormatError, ValueError, OverflowError) as e:
            # A reply is the authority's, not ours: whatever it holds is a warning, never a stopped build.
            warnings.append(f"timestamp authority {a.name} ({a.url}): no token for checkpoint {size}: {e}")
            continue
        if stamped.gen_time < last_at:
            warnings.append(
                f"timestamp authority {a.name}: its token over checkpoint {size} is dated {stamped.gen_time}, before "
                f"the checkpoint's last event ({last_at}); not kept: no event may be dated later than a token that "
                "holds it (an event dated in the future, or the authority's clock is behind)"
            )
            continue
        _write_whole(target, token)
    return warnings


def published_tokens(paths: Paths, authorities: list[Authority], sizes: list[int]) -> list[tuple[str, bytes]]:
    """The site's token files: each kept token of a listed authority over an archived size."""
    out = []
    for size in sorted(set(sizes)):
        for a in sorted(authorities, key=lambda a: a.name):
            try:
                out.append((timestamp_token_path(size, a.name), token_file(paths, size, a.name).read_bytes()))
            except FileNotFoundError:
                continue
    return out


def outside_bounds(paths: Paths, authorities: list[Authority], sizes: list[int]) -> list[OutsideBound]:
    """What the published tokens say, oldest size first: the first `size` events existed by `time`
    (the build's self-check verifies each token before the site is published)."""
    return [
        OutsideBound(size, a.name, read_timestamp_token(token_file(paths, size, a.name).read_bytes()).gen_time)
        for size in sorted(set(sizes))
        for a in sorted(authorities, key=lambda a: a.name)
        if token_file(paths, size, a.name).exists()
    ]


def bound_of(bounds: list[OutsideBound], index: int) -> OutsideBound | None:
    """The earliest outside bound of entry `index`: of the smallest stamped size that holds it."""
    held = [b for b in bounds if b.size > index]
    return min(held, key=lambda b: (b.size, b.time, b.authority)) if held else None


def site_files(
    paths: Paths, listed: bytes | None, authorities: list[Authority], sizes: list[int]
) -> list[tuple[str, bytes]]:
    """Everything the site publishes of timestamps: the authority list and the tokens."""
    if listed is None:
        return []
    return [(AUTHORITIES_PATH, listed), *published_tokens(paths, authorities, sizes)]


def _write_whole(target: Path, data: bytes) -> None:
    """A token lands whole or not at all (a kill leaves at most a .part file the next build
    overwrites)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    with tmp.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, target)
