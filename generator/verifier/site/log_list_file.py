"""The site's own entry in the witness network's log list (`ledger/log-list.txt`), checked
against the log's keys when the site publishes one.

A program publishes the entry its operator hands to witness operators, so that their witnesses
cosign its checkpoints (docs/formats/witnesses.md, "The program's log-list entry"). The file is
optional (older sites have none). When it is there it must read as a log list (`logs/v0`,
tlog/log_list.py), list the log's active Ed25519 key, and list only keys of the log that are
still valid: a key of keys.json (or of its `ml_dsa_44_keys`) neither retired nor revoked, for
the site's origin. A witness that took a retired key from the list would cosign checkpoints
signed with a key the log gave up, and one that took another key would cosign another log's.
"""

from collections.abc import Sequence

from generator.verifier.core.errors import Problem
from generator.verifier.core.folder import Site
from generator.verifier.core.public_keys import KeyRow, VerifierKey
from generator.verifier.tlog.cosignature import CosignerKey
from generator.verifier.tlog.keyring import KeyRing
from generator.verifier.tlog.log_list import ListedLog, parse_log_list

LOG_LIST_PATH = "ledger/log-list.txt"


def check_log_list_file(s: Site, origin: str, key_rows: Sequence[KeyRow], ring: KeyRing) -> None:
    """`ledger/log-list.txt`, if the site has one: a log list whose every log is this log, by one
    of its valid keys, and that lists its active Ed25519 key."""
    if LOG_LIST_PATH not in s.files_found:
        return
    data = s.read(LOG_LIST_PATH, "the program's log-list entry")
    if data is None:
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        s.report.check(False, LOG_LIST_PATH, "not UTF-8 text", "a log list (logs/v0)", f"byte {e.start}")
        return
    logs, problems = parse_log_list(text, LOG_LIST_PATH)
    statuses: dict[VerifierKey | CosignerKey, str] = {row.key: row.status for row in key_rows}
    statuses.update({span.key: span.status for span in ring.ml_dsa})
    for log in logs:
        problems += _listed_log_problems(log, origin, statuses)
    active = [row.key for row in key_rows if row.status == "active"]
    if active and not any(log.key == active[0] for log in logs):
        problems.append(
            Problem(
                "the log list does not list the log's active key, the one its checkpoints are signed with",
                LOG_LIST_PATH,
                expected=f"vkey {active[0].vkey}",
                found=", ".join(log.vkey for log in logs[:3]) + (f" and {len(logs) - 3} more" if len(logs) > 3 else "")
                or "no log",
            )
        )
    s.report.add(problems, LOG_LIST_PATH)


def _listed_log_problems(log: ListedLog, origin: str, statuses: dict[VerifierKey | CosignerKey, str]) -> list[Problem]:
    where = f"line {log.line}"
    problems = []
    if log.origin is not None and log.origin != origin:
        problems.append(
            Problem("the listed origin is not the site's", LOG_LIST_PATH, where, f"origin none or {origin}", log.origin)
        )
    status = statuses.get(log.key)
    if status is None:
        problems.append(
            Problem(
                "the listed key is not one of the log's keys (keys.json)",
                LOG_LIST_PATH,
                where,
                "the vkey of a key keys.json lists as active",
                log.vkey,
            )
        )
    elif status != "active":
        problems.append(
            Problem(
                f"the listed key is {status} (keys.json): a witness that took it would cosign what a key the log "
                "gave up signs",
                LOG_LIST_PATH,
                where,
                "the vkey of a key keys.json lists as active",
                log.vkey,
            )
        )
    return problems
