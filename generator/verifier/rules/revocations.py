"""Certificate revocations (format v2, FORMAT.md): the signed list at its fixed path, which must
restate the ledger's revocation events exactly, and what the report says of each revoked
certificate. A revocation is a state, like expiry: the site still verifies, and the certificate is
reported as revoked, never as valid."""

from typing import Any

from generator.verifier.core.canonical import canonical_text
from generator.verifier.core.errors import Problem
from generator.verifier.core.folder import Site
from generator.verifier.core.formats import check_keys, is_v1, same
from generator.verifier.core.text import show, type_name
from generator.verifier.rules.ledger import Ledger

# Beside the commitment list, the other signed list the ledger's replay gives. Not under
# certificates/: a serial may be any id, "revocations" too, and what is published there never
# changes, while this list grows.
REVOCATIONS_PATH = "ledger/revocations.json"
_KEYS = ("origin", "revocations", "tree_size", "type", "v")


def revocation_rows(ledger: Ledger) -> list[dict[str, Any]]:
    """The list's rows as the replay gives them: one per revocation event, in ledger order."""
    return [{"at": r.at, "index": r.index, "reason": r.reason, "serial": r.serial} for r in ledger.revocations.values()]


def revocation_list(origin: str, ledger: Ledger) -> dict[str, Any]:
    """The whole document, as the generator publishes it and the verifier expects it."""
    return {
        "type": "certificate-revocations",
        "v": 1,
        "origin": origin,
        "tree_size": ledger.size,
        "revocations": revocation_rows(ledger),
    }


def check_revocations(s: Site, origin: str, key: bytes, ledger: Ledger) -> None:
    """Report every revoked certificate, and check the signed list against the ledger."""
    report = s.report
    for r in ledger.revocations.values():
        run = ledger.certificates[r.serial].run
        report.revoked.append({"serial": r.serial, "run": run, "at": r.at, "reason": r.reason, "index": r.index})
        report.notes.append(
            f"certificate {r.serial} REVOKED at {r.at}: {r.reason} (it is not valid, whatever its verdict)"
        )
    rel = REVOCATIONS_PATH
    if not ledger.revocations and not (s.root / rel).is_file():
        return  # a site from before revocations has no list, and with nothing revoked needs none
    loaded = s.document(rel, "revocation list")
    if loaded is None:
        return
    data, doc = loaded
    s.signed(rel, data, key, "revocation list")
    bad = check_keys(doc, _KEYS)
    if not report.add(bad, rel):
        return
    report.check(
        doc["type"] == "certificate-revocations" and is_v1(doc),
        rel,
        "wrong type or version",
        '"certificate-revocations", v 1',
        f"{show(doc['type'])}, v {show(doc['v'])}",
    )
    report.check(doc["origin"] == origin, rel, "origin differs from the manifest's", origin, show(doc["origin"]))
    report.check(
        same(doc["tree_size"], ledger.size),
        rel,
        "tree_size differs from the ledger's",
        ledger.size,
        show(doc["tree_size"]),
    )
    rows = doc["revocations"]
    if report.check(isinstance(rows, list), rel, "revocations must be a list", "a list", type_name(rows)):
        report.add(_row_problems(rows, revocation_rows(ledger)), rel)


def _row_problems(rows: list[Any], want: list[dict[str, Any]]) -> list[Problem]:
    """What makes the rows differ from the ledger's, most telling first: a revocation left out,
    one the ledger does not hold or listed twice, the order, then a row's members."""
    if same(rows, want):
        return []
    wanted = {w["serial"]: w for w in want}
    listed = [r["serial"] if isinstance(r, dict) and isinstance(r.get("serial"), str) else None for r in rows]
    problems = [
        Problem(
            f"omits the revocation of certificate {w['serial']} (ledger entries[{w['index']}])",
            where="revocations",
            expected=canonical_text(w),
            found="no row",
        )
        for w in want
        if w["serial"] not in listed
    ]
    for n, serial in enumerate(listed):
        if serial not in wanted or listed.index(serial) != n:
            problems.append(
                Problem(
                    "lists a revocation the ledger does not hold" if serial not in wanted else f"lists {serial} twice",
                    where=f"revocations[{n}]",
                    expected="only the ledger's revocation events, each once",
                    found=show(rows[n], 300),
                )
            )
    if problems:
        return problems
    order = [w["serial"] for w in want]
    if listed != order:
        return [
            Problem(
                "revocations are not in ledger order", where="revocations", expected=show(order), found=show(listed)
            )
        ]
    return [
        Problem(
            f"the row of certificate {w['serial']} differs from the ledger's revocation event",
            where=f"revocations[{n}]",
            expected=canonical_text(w),
            found=show(row, 300),
        )
        for n, (row, w) in enumerate(zip(rows, want, strict=True))
        if not same(row, w)
    ]
