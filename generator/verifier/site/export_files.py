"""A certificate's exports (FORMAT.md, "Exports"), each remade here from the published certificate, its
run spec, the pinned methodology and the items' reveal documents, and compared byte for byte with
the file the site publishes: an export that says anything its certificate does not (another subject,
gate, verdict, figure, or the SHA-256 of another certificate) differs from what is remade, and
fails. A manifest row without `exports` is a site built before exports existed."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from generator.verifier.core.folder import Site
from generator.verifier.core.formats import is_hex64, sha256_hex
from generator.verifier.core.public_keys import ed25519_verify
from generator.verifier.core.text import show
from generator.verifier.exports.eee_record import eee_export
from generator.verifier.exports.scitt_statement import statement_path, statement_problems
from generator.verifier.rules.ledger import Ledger
from generator.verifier.rules.methodology_rules import Methodology

MANIFEST_FILE = "transparency.json"


def expected_exports(
    cert: Mapping[str, Any],
    data: bytes,
    leaf_index: int,
    spec: Mapping[str, Any],
    pinned: Methodology,
    program: Mapping[str, str],
    public: bool,
    reveal_of: Callable[[str], Mapping[str, Any] | None],
    ledger: Ledger,
) -> list[tuple[str, bytes]]:
    """Every export of a certificate, as the build must have written it."""

    def commitment_of(item: str) -> str | None:
        c = ledger.commit(item)
        return c.commitment if c is not None else None

    levels = [g.name for g in reversed(pinned.grades)]
    return eee_export(cert, sha256_hex(data), leaf_index, spec, levels, program, public, reveal_of, commitment_of)


def history_roots(history: Mapping[str, Any] | None) -> dict[int, bytes]:
    """The roots of the log's archived checkpoints by size, as its history lists them (each
    checked against its signed checkpoint by the history's own check)."""
    rows = history.get("checkpoints") if history else None
    return {
        r["tree_size"]: bytes.fromhex(r["root"])
        for r in (rows if isinstance(rows, list) else [])
        if isinstance(r, dict) and isinstance(r.get("tree_size"), int) and is_hex64(r.get("root"))
    }


@dataclass(frozen=True)
class Signed:
    """What a certificate's transparent statement is checked against: the certificate's bytes and
    document, its leaf, the key that signed it, the program's origin and the archived roots."""

    cert: dict[str, Any]
    data: bytes
    leaf_index: int
    public_key: bytes
    origin: str
    roots: dict[int, bytes]


def check_exports(
    s: Site,
    row: Mapping[str, Any],
    serial: str,
    made: list[tuple[str, bytes]] | None,
    signed: Signed | None,
    elsewhere: bool = False,
) -> None:
    """The exports a manifest row lists, against those remade (`made`; None when they cannot be,
    the reason reported where the certificate is checked, or where its inputs are when
    `elsewhere`), and the transparent statement against the certificate, its key and the log
    (`signed`)."""
    if "exports" not in row:
        return
    listed = row["exports"]
    report = s.report
    want = [rel for rel, _ in made] + [statement_path(serial)] if made is not None else None
    if not (isinstance(listed, list) and all(isinstance(p, str) for p in listed)):
        report.check(False, MANIFEST_FILE, f"certificate {serial}: exports is a list of site paths", want, show(listed))
        return
    if made is None and elsewhere:
        return
    if made is None:
        report.check(
            False,
            MANIFEST_FILE,
            f"certificate {serial}: its exports cannot be remade (its run spec or pinned methodology is missing)",
        )
        return
    report.check(
        listed == want,
        MANIFEST_FILE,
        f"certificate {serial}: the exports listed differ from those its certificate makes",
        show(want, 300),
        show(listed, 300),
    )
    if signed is not None:
        rel = statement_path(serial)
        found = s.read(rel, f"the transparent statement of certificate {serial}")
        if found is not None:
            for p in statement_problems(
                found,
                signed.cert,
                signed.data,
                signed.origin,
                signed.public_key,
                ed25519_verify,
                signed.leaf_index,
                signed.roots,
            ):
                report.check(False, rel, p)
            report.checks += 1
    for rel, data in made:
        found = s.read(rel, f"an export of certificate {serial}")
        if found is None:
            continue
        report.check(
            found == data,
            rel,
            f"differs from the export remade from certificate {serial} (its subject, gate, verdict, figures or "
            "the certificate's SHA-256 are not the certificate's)",
            f"{len(data)} bytes of SHA-256 {sha256_hex(data)}",
            f"{len(found)} bytes of SHA-256 {sha256_hex(found)}",
        )
