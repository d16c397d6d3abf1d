"""The witness network's log list (`logs/v0`): the logs a witness cosigns, each with its key,
origin, bastion, daily quota of add-checkpoint requests and contact; read with every problem
named by its line, and written.

The format, as the witness network gives it (transparency-dev/witness-network,
docs/log-list-format.md): line-terminated; blank lines and lines starting with `#` are ignored;
the first line is `logs/v0`; then zero or more logs, each of these lines, in this order:

    vkey VKEY          the log's verification key (vkey format)
    origin ORIGIN      `none` (the origin is the vkey's key name: recommended for new logs) or
                       the log's origin line
    bastion BASTION    `none` or the URL of a bastion the witness may connect to
    qpd QPD            how many add-checkpoint requests the log may make a day
    contact CONTACT    any text that helps a person reach the log's operator

Reading taken: the format says the order of a log's lines is significant, yet its own example
puts `qpd` before `bastion`. Both orders of those two lines are read; the documented order is
the one written. Surrounding spaces of a line are ignored, as in a witness's logs file.

A log key is an Ed25519 note key (type 0x01), as logs sign checkpoints with, or an ML-DSA-44
key (type 0x06), whose checkpoint signature is a cosignature line (c2sp.org/tlog-cosignature)
by the key's name. The format does not say whether a log may be listed twice; this reading lets
two logs of one origin be one log with two keys (a key rotation, or one key of each type) as
long as they agree on its quota, and never lists one key twice. An origin (or, with `origin
none`, the key's name) is at most 255 bytes, as the ML-DSA-44 signed message holds it.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from generator.verifier.core.errors import FormatError, Problem
from generator.verifier.core.public_keys import VerifierKey, parse_vkey
from generator.verifier.tlog.cosignature import ML_DSA_44, CosignerKey, parse_cosigner_vkey

LOG_LIST_HEADER = "logs/v0"
LOG_LIST_FIELDS = ("vkey", "origin", "bastion", "qpd", "contact")
# The documented order, then the one of the format's own example.
_LOG_LIST_ORDERS = (LOG_LIST_FIELDS, ("vkey", "origin", "qpd", "bastion", "contact"))
_QPD_RE = re.compile(r"0|[1-9][0-9]{0,17}")
MAX_LOG_ORIGIN_BYTES = 255


def parse_log_key(vkey: str) -> VerifierKey | CosignerKey:
    """A log's key from its vkey: an Ed25519 note key (0x01) or an ML-DSA-44 key (0x06);
    FormatError naming what it is otherwise."""
    try:
        return parse_vkey(vkey)
    except FormatError as note_error:
        try:
            key = parse_cosigner_vkey(vkey)
        except FormatError:
            raise note_error from None
        if key.kind != ML_DSA_44:
            raise FormatError(
                "this is an Ed25519 cosigner key (type 0x04), as witnesses sign with; a log's key is an Ed25519 "
                "note key (type 0x01) or an ML-DSA-44 key (type 0x06)"
            ) from None
        return key


def log_origin_problem(origin: str) -> str | None:
    """Why `origin` cannot be a log's origin line, or None."""
    if not origin or not origin.isprintable() or origin != origin.strip():
        return f"{origin!r} is not an origin line: printable text, without surrounding spaces"
    if len(origin.encode("utf-8")) > MAX_LOG_ORIGIN_BYTES:
        return f"the origin is {len(origin.encode('utf-8'))} bytes, more than {MAX_LOG_ORIGIN_BYTES}"
    return None


@dataclass(frozen=True)
class ListedLog:
    """One log of a log list. `origin` None is `origin none`: the key's name is the origin."""

    vkey: str
    origin: str | None
    bastion: str | None
    qpd: int
    contact: str
    line: int = field(default=0, compare=False)  # where the log starts in the list read (0: not read)

    @property
    def key(self) -> VerifierKey | CosignerKey:
        return parse_log_key(self.vkey)

    @property
    def log_origin(self) -> str:
        return self.key.name if self.origin is None else self.origin


def _log_value_problem(keyword: str, value: str) -> str | None:
    if keyword == "vkey":
        try:
            parse_log_key(value)
        except FormatError as e:
            return f"vkey: {e}"
    elif keyword == "origin" and value != "none":
        return log_origin_problem(value)
    elif keyword == "bastion" and value != "none":
        url = urlsplit(value)
        if url.scheme not in ("https", "http") or not url.hostname:
            return f"bastion: {value!r} is neither `none` nor an https:// or http:// URL"
    elif keyword == "qpd" and not _QPD_RE.fullmatch(value):
        return f"qpd: {value!r} is not a number of requests a day (decimal, no leading zeros)"
    elif not value:
        return f"{keyword}: the value is empty"
    return None


def _next_keywords(keywords: list[str]) -> list[str]:
    """The keywords a log's next line may have, after its lines of `keywords`."""
    n = len(keywords)
    return sorted({o[n] for o in _LOG_LIST_ORDERS if n < len(o) and list(o[:n]) == keywords})


def _read_listed_log(group: list[tuple[int, str, str]], source: str) -> tuple[ListedLog | None, list[Problem]]:
    """One log from its lines (line number, keyword, value), or the problems that keep it out."""
    problems: list[Problem] = []
    keywords = [keyword for _, keyword, _ in group]
    for j, (n, keyword, _) in enumerate(group):
        allowed = _next_keywords(keywords[:j])
        if keyword not in allowed:
            expected = "` or `".join(allowed)
            problems.append(Problem(f"expected the log's `{expected}` line", source, f"line {n}", found=keyword))
            break
    if not problems and len(group) < len(LOG_LIST_FIELDS):
        missing = "` or `".join(_next_keywords(keywords))
        problems.append(Problem(f"the log ends before its `{missing}` line", source, f"line {group[0][0]}"))
    for n, keyword, value in group:
        why = _log_value_problem(keyword, value)
        if why is not None:
            problems.append(Problem(why, source, f"line {n}"))
    if problems:
        return None, problems
    values = {keyword: value for _, keyword, value in group}
    log = ListedLog(
        values["vkey"],
        None if values["origin"] == "none" else values["origin"],
        None if values["bastion"] == "none" else values["bastion"],
        int(values["qpd"]),
        values["contact"],
        group[0][0],
    )
    why = log_origin_problem(log.log_origin) if log.origin is None else None
    if why is not None:
        return None, [Problem(f"origin none makes the key's name the origin: {why}", source, f"line {log.line}")]
    return log, []


def _log_list_lines(text: str) -> list[tuple[int, str, str]]:
    """(line number, keyword, value) of every line that is neither blank nor a comment."""
    out = []
    for n, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if line and not line.startswith("#"):
            keyword, _, value = line.partition(" ")
            out.append((n, keyword, value.strip()))
    return out


def _agreement_problems(logs: list[ListedLog], source: str) -> list[Problem]:
    """Two logs with one key, or two logs of one origin that differ on its quota."""
    problems = []
    first_of_key: dict[str, ListedLog] = {}
    first_of_origin: dict[str, ListedLog] = {}
    for log in logs:
        where = f"line {log.line}"
        same_key = first_of_key.setdefault(log.key.vkey, log)
        if same_key is not log:
            problems.append(Problem(f"the key is listed already, at line {same_key.line}", source, where))
        same_origin = first_of_origin.setdefault(log.log_origin, log)
        if same_origin is not log and same_origin.qpd != log.qpd:
            problems.append(
                Problem(
                    f"{log.log_origin!r} is listed already, at line {same_origin.line}: one log has one quota",
                    source,
                    where,
                    expected=f"qpd {same_origin.qpd}",
                    found=f"qpd {log.qpd}",
                )
            )
    return problems


def parse_log_list(text: str, source: str = "log list") -> tuple[list[ListedLog], list[Problem]]:
    """The logs of a log list, in its order, and every problem of the list at once, each located
    in `source` at its line. A log with a problem is left out; the list is valid only if there
    is none."""
    lines = _log_list_lines(text)
    problems: list[Problem] = []
    if lines and lines[0][1] == LOG_LIST_HEADER:
        if lines[0][2]:
            problems.append(Problem(f"the first line is `{LOG_LIST_HEADER}` alone", source, f"line {lines[0][0]}"))
        lines = lines[1:]
    else:
        where = f"line {lines[0][0]}" if lines else "line 1"
        found = " ".join(lines[0][1:]).strip() if lines else "nothing"
        problems.append(Problem(f"a log list starts with the line `{LOG_LIST_HEADER}`", source, where, found=found))
    logs: list[ListedLog] = []
    i = 0
    while i < len(lines):
        n, keyword, _ = lines[i]
        if keyword != "vkey":
            problems.append(Problem("expected a `vkey` line, which starts a log", source, f"line {n}", found=keyword))
            i += 1
            continue
        end = i + 1
        while end < len(lines) and end - i < len(LOG_LIST_FIELDS) and lines[end][1] != "vkey":
            end += 1
        log, found_problems = _read_listed_log(lines[i:end], source)
        problems += found_problems
        if log is not None:
            logs.append(log)
        i = end
    problems += _agreement_problems(logs, source)
    return logs, problems


def _listed_entry(log: ListedLog) -> str:
    values = {
        "vkey": log.vkey,
        "origin": log.origin or "none",
        "bastion": log.bastion or "none",
        "qpd": str(log.qpd),
        "contact": log.contact,
    }
    return "".join(f"{keyword} {values[keyword]}\n" for keyword in LOG_LIST_FIELDS)


def format_log_list(logs: Sequence[ListedLog]) -> str:
    """A log list of `logs`, each in the documented order, an empty line between two logs."""
    return f"{LOG_LIST_HEADER}\n" + "".join("\n" + _listed_entry(log) for log in logs)


def program_log_list_entry(vkey: str, origin: str | None, qpd: int, contact: str) -> str:
    """The lines of a log list that describe a program's log (no `logs/v0` line: an entry to
    add to a list): its vkey, `origin none` when the origin is the key's name (as recommended
    for new logs) or else the origin, no bastion, `qpd` requests a day and the `contact`.
    FormatError naming the value that cannot be written."""
    key = parse_log_key(vkey)
    if isinstance(qpd, bool) or not isinstance(qpd, int) or not _QPD_RE.fullmatch(str(qpd)):
        raise FormatError(f"qpd: {qpd!r} is not a number of requests a day")
    if not contact or contact != contact.strip() or not contact.isprintable():
        raise FormatError(f"contact: {contact!r} is not one line of printable text")
    log = ListedLog(key.vkey, None if origin in (None, key.name) else origin, None, qpd, contact)
    why = log_origin_problem(log.log_origin)
    if why is not None:
        raise FormatError(f"origin: {why}")
    return _listed_entry(log)
