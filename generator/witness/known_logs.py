"""The logs a witness knows: each origin's keys (Ed25519 note keys, ML-DSA-44 keys) and daily
quota, read from a logs file (one vkey a line) and/or a log list (`logs/v0`: the verifier's
format, generator/verifier/tlog/log_list.py, its problems raised here as the generator's
InputError, every one named by its line).

A checkpoint's signatures by those keys are read by the verifier's log_signature_lines
(generator/verifier/tlog/cosignature.py): as c2sp.org/tlog-witness asks, lines by keys the
witness does not know for the origin are ignored, a line by a known key that fails rejects the
note, and at least one known key must have signed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from generator.core.generator_errors import InputError, problem
from generator.verifier import (
    LOG_LIST_HEADER,
    FormatError,
    ListedLog,
    LogKey,
    log_origin_problem,
    parse_log_key,
    parse_log_list,
)


@dataclass(frozen=True)
class KnownLogs:
    """origin -> the log's keys; origin -> its quota of add-checkpoint requests a day (the logs of
    a log list; a log of the logs file alone has none)."""

    keys: Mapping[str, tuple[LogKey, ...]]
    quotas: Mapping[str, int] = field(default_factory=dict)


def load_logs(path: Path) -> dict[str, tuple[LogKey, ...]]:
    """The known logs of a logs file: one log vkey a line (blank lines and `#` comments ignored),
    an Ed25519 note key or an ML-DSA-44 key; a key's name is its log's origin, and a log may have
    several keys. FormatError naming the line of the first problem."""
    logs: dict[str, list[LogKey]] = {}
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").split("\n"), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            key = parse_log_key(line)
        except FormatError as e:
            raise FormatError(f"{path}:{lineno}: {e}") from None
        why = log_origin_problem(key.name)
        if why is not None:
            raise FormatError(f"{path}:{lineno}: the key's name is the log's origin: {why}")
        if key in logs.get(key.name, []):
            raise FormatError(f"{path}:{lineno}: the key is listed twice")
        logs.setdefault(key.name, []).append(key)
    return {origin: tuple(keys) for origin, keys in logs.items()}


def read_log_list(text: str, source: str = "log list") -> list[ListedLog]:
    """The logs of a log list, in its order; InputError naming every problem by its line (in
    `source`), all at once."""
    logs, problems = parse_log_list(text, source)
    if problems:
        raise InputError(problems, f"{source}: not a valid log list ({LOG_LIST_HEADER})")
    return logs


def load_log_list(path: Path) -> list[ListedLog]:
    """The logs of the log list file `path` (InputError naming its lines, or that it is unreadable)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError([problem(str(path), f"cannot read the log list: {e}")]) from None
    return read_log_list(text, str(path))


def known_logs(logs_path: Path | None, log_list_path: Path | None) -> KnownLogs:
    """The logs of a logs file and of a log list together (a log in both has the keys of both and
    the list's quota); InputError naming the file of every problem."""
    if logs_path is None and log_list_path is None:
        raise InputError([problem("--logs / --log-list", "a witness needs the logs it cosigns: give either or both")])
    keys: dict[str, list[LogKey]] = {}
    quotas: dict[str, int] = {}
    if logs_path is not None:
        try:
            for origin, found in load_logs(logs_path).items():
                keys[origin] = list(found)
        except (OSError, UnicodeDecodeError, FormatError) as e:
            raise InputError([problem(str(logs_path), str(e))], "cannot read the witness's logs") from None
    if log_list_path is not None:
        for log in load_log_list(log_list_path):
            origin = log.log_origin
            if log.key not in keys.setdefault(origin, []):
                keys[origin].append(log.key)
            quotas[origin] = log.qpd
    return KnownLogs({origin: tuple(found) for origin, found in keys.items()}, quotas)
