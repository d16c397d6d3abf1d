"""`transparency revoke`: a certificate withdrawn, in the ledger, for good (format v2).

The certificate itself is not touched: it stays published as issued, bound to its leaf, so that
anyone can still check what was claimed. The revocation is one more leaf, which every page, the
signed list of revocations and the verifier read.
"""

from __future__ import annotations

from typing import Any

from generator.core.generator_errors import InputError, problem
from generator.program.datadir import Paths
from generator.program.ledgerfile import appending, event_time, reason_problems
from generator.verifier import ID_RE, Problem, is_id, show


def revocation_leaf(serial: str, reason: str, at: str) -> dict[str, Any]:
    return {"type": "revocation", "v": 2, "serial": serial, "reason": reason, "at": at}


def revoke_certificate(paths: Paths, serial: str, reason: str, at: str | None = None) -> dict[str, Any]:
    """Append the revocation of certificate `serial`; refuse (writing nothing) an unknown
    serial, one already revoked, and a reason that is empty or holds control or format
    characters."""
    with appending(paths, "revoke") as app:
        ledger = app.ledger
        ledger_file = paths.show(paths.ledger_file)
        problems: list[Problem] = []
        when = event_time(at, ledger, problems)
        if not is_id(serial):
            problems.append(problem("SERIAL", "malformed serial", expected=ID_RE.pattern, found=show(serial)))
        elif serial not in ledger.certificates:
            problems.append(
                problem(
                    ledger_file,
                    f"no certificate {serial} was issued: only an issued certificate can be revoked",
                    "serial",
                    expected="the serial of a certificate in the ledger",
                    found=serial,
                )
            )
        elif serial in ledger.revocations:
            r = ledger.revocations[serial]
            problems.append(
                problem(
                    ledger_file,
                    f"certificate {serial} is already revoked (on {r.at}: {r.reason}); a certificate is revoked once, "
                    "for good",
                    "serial",
                    expected="a certificate not yet revoked",
                    found=f"revoked at entries[{r.index}]",
                )
            )
        leaf = revocation_leaf(serial, reason, when)
        problems += reason_problems(reason, leaf)
        if problems:
            what = f"certificate {serial}" if is_id(serial) else "the certificate"
            raise InputError(problems, f"cannot revoke {what}; nothing was written")
        app.append([leaf])
    return leaf
