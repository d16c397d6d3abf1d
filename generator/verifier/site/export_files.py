"""A certificate's exports (FORMAT.md, "Exports"), each remade here from the published certificate, its
run spec, the pinned methodology and the items' reveal documents, and compared byte for byte with
the file the site publishes: an export that says anything its certificate does not (another subject,
gate, verdict, figure, or the SHA-256 of another certificate) differs from what is remade, and
fails. A manifest row without `exports` is a site built before exports existed."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from generator.verifier.core.canonical import canonical_bytes
from generator.verifier.core.folder import Site
from generator.verifier.core.formats import is_hex64, is_safe_path, sha256_hex
from generator.verifier.core.public_keys import ed25519_verify
from generator.verifier.core.text import show
from generator.verifier.exports.credential import (
    DID_PATHS,
    STATUS_LIST_PATH,
    certificate_credential,
    certificate_ordinals,
    credential_path,
    current_keys,
    did_document,
    proof_problems,
    revocation_bits,
    status_problems,
    verification_method,
)
from generator.verifier.exports.scitt_statement import statement_path, statement_problems
from generator.verifier.memory.release_memory import Memory
from generator.verifier.rules.ledger import Ledger

MANIFEST_FILE = "transparency.json"


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
    """What a certificate's signed exports are checked against: the certificate's bytes and
    document, its leaf, the keys that may sign them, the program, the archived roots, its gate's
    name and its place in the status list."""

    cert: dict[str, Any]
    data: bytes
    leaf_index: int
    public_key: bytes  # the key that signed the certificate, which signs its exports
    created: str  # the credential's proof time: when the certificate was issued
    program: dict[str, str]
    roots: dict[int, bytes]
    gate_name: str
    ordinal: int | None

    @property
    def origin(self) -> str:
        return self.program["origin"]


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
    want = [rel for rel, _ in made] + [statement_path(serial), credential_path(serial)] if made is not None else None
    if not (isinstance(listed, list) and all(isinstance(p, str) for p in listed)):
        report.check(False, MANIFEST_FILE, f"certificate {serial}: exports is a list of site paths", want, show(listed))
        return
    if made is None and not elsewhere:
        report.check(
            False,
            MANIFEST_FILE,
            f"certificate {serial}: its exports cannot be remade (its run spec or pinned methodology is missing)",
        )
        return
    if want is not None:
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
        _check_credential(s, serial, signed)
    for rel, data in made or []:  # none remade when a reveal they need is not its commitment
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


def _check_credential(s: Site, serial: str, signed: Signed) -> None:
    """The certificate's verifiable credential: remade but for its proof, which must verify with
    the key that signed the certificate, dated when it was issued."""
    rel = credential_path(serial)
    loaded = s.document(rel, f"the credential of certificate {serial}")
    if loaded is None or signed.ordinal is None:
        return
    try:
        want = certificate_credential(
            signed.cert, sha256_hex(signed.data), signed.program, signed.gate_name, signed.ordinal
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return  # a certificate of another shape: its own checks say how
    method = verification_method(signed.origin, signed.public_key)
    for p in proof_problems(loaded[1], want, signed.created, method, signed.public_key, ed25519_verify):
        s.report.check(False, rel, p)
    s.report.checks += 1


def check_credential_files(s: Site, manifest: Mapping[str, Any], ledger: Ledger) -> None:
    """The site's DID document (at both its places) and its status list: remade from the ledger's
    keys and revocations, the list signed by today's key. A site whose certificates have exports
    has them; one built before exports has none (accounting fails them as strays then), and once
    one certificate lists exports, every one must."""
    rows = [r for r in manifest.get("certificates", []) if isinstance(r, dict)]
    with_exports = sum(1 for r in rows if "exports" in r)
    if 0 < with_exports < len(rows):
        s.report.check(
            False,
            MANIFEST_FILE,
            f"{len(rows) - with_exports} certificate(s) list no exports while {with_exports} do: a site has exports "
            "for every certificate or for none",
        )
    if not with_exports:
        return
    program = {"name": str(manifest.get("name")), "origin": str(manifest.get("origin"))}
    document = canonical_bytes(did_document(program["origin"], current_keys(ledger.keys)))
    for rel in DID_PATHS:
        found = s.read(rel, "the DID document")
        if found is not None:
            s.report.check(
                found == document,
                rel,
                "differs from the DID document made from the keys the log has signed with and not revoked",
                f"{len(document)} bytes of SHA-256 {sha256_hex(document)}",
                f"{len(found)} bytes of SHA-256 {sha256_hex(found)}",
            )
    # Signed by today's key: the key valid for today's tree, as the checkpoint is.
    today = ledger.keys.valid_at(ledger.size)
    loaded = s.document(STATUS_LIST_PATH, "the credentials' status list")
    if loaded is None or not today:
        return
    key = today[-1].public_key
    ordinals = certificate_ordinals((serial, e.index) for serial, e in ledger.certificates.items())
    bits = revocation_bits(ordinals, ledger.revocations)
    method = verification_method(program["origin"], key)
    when = str(manifest.get("generated_at"))
    for p in status_problems(loaded[1], program, bits, when, method, key, ed25519_verify):
        s.report.check(False, STATUS_LIST_PATH, p)
    s.report.checks += 1


def exports_memo_key(
    memory: Memory,
    s: Site,
    row: Mapping[str, Any],
    data: bytes,
    index: int,
    spec: Mapping[str, Any] | None,
    public: bool,
    key: bytes,
    gate_name: str,
    ordinals: Mapping[str, int],
    roots: Mapping[int, bytes],
    program: Mapping[str, str],
    ledger: Ledger,
    vouched: Callable[[str], str | None] | None = None,
) -> str | None:
    """Everything a certificate's exports are checked against, for the memory: the certificate,
    its spec and pinned methodology, its items' commitments and which are revealed, the key, the
    gate's name, its place in the status list, the archived root its receipt needs, the program,
    and each export file's SHA-256: the one this run verified it has (`vouched`, so that a file
    check_files hashed is not read again for its key), else known from a mirror, else read.
    None when there is nothing to key."""
    listed = row.get("exports")
    if spec is None or not (isinstance(listed, list) and all(isinstance(p, str) for p in listed)):
        return None
    try:
        files = [[rel, _vouched_sha256(s, vouched, rel)] for rel in listed]
    except (OSError, ValueError):
        return None
    size = min((n for n in roots if n > index), default=None)
    method = spec.get("methodology")
    version = method.get("version") if isinstance(method, dict) else None
    pinned = ledger.methodologies.get(version) if isinstance(version, str) else None
    items = spec.get("items")
    commits = [
        [i, x.commitment]
        for i in (items if isinstance(items, list) else [])
        if isinstance(i, str) and (x := ledger.commit(i))
    ]
    return memory.recheck_key(
        "exports",
        sha256_hex(data),
        sha256_hex(canonical_bytes(dict(spec))),
        pinned.sha256 if pinned is not None else None,
        public,
        [[i, i in ledger.reveals] for i, _ in commits],
        commits,
        key.hex(),
        gate_name,
        ordinals.get(str(row.get("serial"))),
        [size, roots[size].hex()] if size is not None else None,
        dict(program),
        index,
        files,
    )


def _vouched_sha256(s: Site, vouched: Callable[[str], str | None] | None, rel: str) -> str:
    sha = vouched(rel) if vouched is not None and is_safe_path(rel) else None
    return sha if sha is not None else s.file_sha256(rel)
