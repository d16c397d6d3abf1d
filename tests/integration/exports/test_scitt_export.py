"""The SCITT transparent statement of every certificate, checked by PyPI `scitt-cose` (an independent COSE
and RFC 9942 implementation): the statement's signature by the key that signed the certificate, its
payload the certificate's bytes, and its receipt proving the leaf a relying party remakes from the
payload alone (the profile, FORMAT.md "Exports") in a tree whose root the site's archived checkpoint
signs. A changed byte fails scitt-cose and verify.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from scitt_cose import extract_receipts, parse_signed_statement, verify_receipt

from generator.core.signing_key import load_key
from generator.verifier import verify_site
from tests.support.demo import BuiltSite
from tests.support.tamper import resign_sums, verify_cli

STATEMENT = "transparent-statement.cose"


def certificates(site: Path) -> list[tuple[str, bytes, dict[str, Any]]]:
    manifest = json.loads((site / "transparency.json").read_text(encoding="utf-8"))
    out = []
    for row in manifest["certificates"]:
        data = (site / row["path"]).read_bytes()
        out.append((row["serial"], data, json.loads(data)))
    return out


def signing_pem(site: Path, serial: str, data: bytes) -> bytes:
    """The PEM of the key that signed the certificate, which signs its exports too: the key among
    those keys.json lists whose detached signature of the certificate verifies, with `cryptography`."""
    sig = (site / "certificates" / f"{serial}.json.sig").read_bytes()
    for row in json.loads((site / "keys.json").read_text(encoding="utf-8"))["keys"]:
        pem = (site / row["pem"]).read_bytes()
        try:
            load_pem_public_key(pem).verify(sig, data)  # type: ignore[union-attr,call-arg]
        except InvalidSignature:
            continue
        return pem
    raise AssertionError(f"no key of keys.json signed certificate {serial}")


def leaf_of(cert: dict[str, Any], payload: bytes) -> bytes:
    """The profile's leaf, remade from the statement's payload with an independent RFC 8785."""
    return rfc8785.dumps(
        {
            "at": cert["issued_at"],
            "run": cert["run"],
            "serial": cert["serial"],
            "sha256": hashlib.sha256(payload).hexdigest(),
            "type": "certificate",
            "v": 1,
        }
    )


def archived_root(site: Path, size: int) -> bytes:
    """The root the site's archived checkpoint of `size` states (its third line)."""
    return base64.b64decode((site / "ledger" / "checkpoints" / str(size)).read_text().splitlines()[2])


def test_scitt_cose_accepts_every_statement_and_receipt(demo_site: BuiltSite) -> None:
    site = demo_site.out
    found = certificates(site)
    assert len(found) >= 8
    for serial, data, cert in found:
        statement = (site / "certificates" / serial / STATEMENT).read_bytes()
        pem = signing_pem(site, serial, data)
        parsed = parse_signed_statement(statement, public_key_pem=pem)
        assert parsed["signature_verified"] is True, (serial, parsed)
        assert parsed["payload"] == data and parsed["alg"] == "EdDSA"
        assert parsed["content_type"] == "application/json" and parsed["subject"] == f"certificates/{serial}.json"
        [receipt] = extract_receipts(statement)
        result = verify_receipt(receipt, leaf_entry_hex=leaf_of(cert, data).hex(), log_public_key_pem=pem)
        assert result.ok, (serial, result.errors)
        # The root the receipt signs is one the site's history signs, at a size past the leaf.
        assert bytes.fromhex(result.root) == archived_root(site, result.tree_size)
        assert result.leaf_index < result.tree_size


def test_scitt_cose_refuses_a_changed_byte(demo_site: BuiltSite) -> None:
    site = demo_site.out
    serial, data, cert = certificates(site)[0]
    statement = (site / "certificates" / serial / STATEMENT).read_bytes()
    pem = signing_pem(site, serial, data)
    at = statement.index(data) + 10
    changed = statement[:at] + bytes([statement[at] ^ 1]) + statement[at + 1 :]
    assert parse_signed_statement(changed, public_key_pem=pem)["signature_verified"] is False
    [receipt] = extract_receipts(statement)
    bad = receipt[:-1] + bytes([receipt[-1] ^ 1])
    assert not verify_receipt(bad, leaf_entry_hex=leaf_of(cert, data).hex(), log_public_key_pem=pem).ok
    other = leaf_of({**cert, "issued_at": "2000-01-01T00:00:00Z"}, data)
    assert not verify_receipt(receipt, leaf_entry_hex=other.hex(), log_public_key_pem=pem).ok


def test_verify_fails_a_statement_changed_and_re_listed(demo_copy: BuiltSite) -> None:
    site = demo_copy.out
    serial, data, _ = certificates(site)[-1]
    rel = f"certificates/{serial}/{STATEMENT}"
    statement = (site / rel).read_bytes()
    at = statement.index(data) + 10
    (site / rel).write_bytes(statement[:at] + bytes([statement[at] ^ 1]) + statement[at + 1 :])
    resign_sums(site, load_key(demo_copy.paths.key_file))
    report = verify_site(site)
    assert any(p.file == rel and "payload" in p.message for p in report.failures), report.render()[-3000:]
    run = verify_cli(site)
    assert run.rc == 1 and run.names_file(rel), run.text[-2000:]
