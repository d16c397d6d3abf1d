"""The verifiable credential of every certificate (VC 2.0, Open Badges 3.0, eddsa-jcs-2022, a Bitstring
Status List), verified offline in Node by Digital Bazaar's @digitalbazaar/vc with the eddsa-jcs-2022
cryptosuite and @digitalbazaar/vc-bitstring-status-list, every context pinned from its npm package
(tests/browser/vc_verify.mjs): a revoked certificate's credential is reported revoked, a changed
byte fails; and verify.py remakes every credential, the DID document and the status list.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from generator.core.signing_key import load_key
from generator.verifier import verify_site
from tests.support.demo import REPO, BuiltSite
from tests.support.tamper import resign_sums, verify_cli

VERIFY_MJS = REPO / "tests" / "browser" / "vc_verify.mjs"
NODE_MODULES = REPO / "tests" / "browser" / "node_modules"


def node() -> str:
    """Node.js, with the verifier's packages installed (make test installs them)."""
    found = shutil.which("node")
    reason = None
    if found is None:
        reason = "Node.js is not installed (Debian: apt install nodejs npm)"
    elif not (NODE_MODULES / "@digitalbazaar" / "vc").is_dir():
        reason = "the credential verifier's packages are not installed: npm ci --prefix tests/browser"
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the credential tests: {reason}", pytrace=False)
        pytest.skip(reason)
    assert found is not None
    return found


def verify_credential(site: Path, credential: Path, status: Path | None = None) -> tuple[int, dict[str, Any]]:
    """Digital Bazaar's verifier on one credential, as of the site's own time."""
    now = json.loads((site / "transparency.json").read_text(encoding="utf-8"))["generated_at"]
    args = [node(), str(VERIFY_MJS), str(credential), "--did", str(site / "did.json")]
    args += ["--status", str(status or site / "credentials" / "status.json"), "--now", now]
    ran = subprocess.run(args, capture_output=True, text=True, check=False, timeout=120)
    assert ran.stdout.strip(), ran.stderr[-2000:]
    return ran.returncode, json.loads(ran.stdout)


def revoked_serials(site: Path) -> set[str]:
    doc = json.loads((site / "ledger" / "revocations.json").read_text(encoding="utf-8"))
    return {r["serial"] for r in doc["revocations"]}


def serials(site: Path) -> list[str]:
    return [r["serial"] for r in json.loads((site / "transparency.json").read_text(encoding="utf-8"))["certificates"]]


def signed_by_a_revoked_key(site: Path, serial: str) -> bool:
    """Whether the key that signed the certificate (its detached signature verifies with it) is one
    keys.json marks revoked."""
    data = (site / "certificates" / f"{serial}.json").read_bytes()
    sig = (site / "certificates" / f"{serial}.json.sig").read_bytes()
    for row in json.loads((site / "keys.json").read_text(encoding="utf-8"))["keys"]:
        try:
            load_pem_public_key((site / row["pem"]).read_bytes()).verify(sig, data)  # type: ignore[union-attr,call-arg]
        except InvalidSignature:
            continue
        return bool(row["status"] == "revoked")
    raise AssertionError(f"no key of keys.json signed certificate {serial}")


def test_every_credential_verifies_and_only_the_revoked_one_is_revoked(demo_site: BuiltSite) -> None:
    """A credential of a key that is not revoked verifies, reported revoked exactly when its
    certificate is; one signed by a key revoked since is refused, its key named by no DID document
    (as a forgery by whoever holds that key must be)."""
    site = demo_site.out
    revoked = revoked_serials(site)
    good = [s for s in serials(site) if not signed_by_a_revoked_key(site, s)]
    assert revoked & set(good), "the demo has a revoked certificate signed by a key in force"
    assert set(serials(site)) - set(good), "the demo has certificates signed by a key revoked since"
    for serial in serials(site):
        code, out = verify_credential(site, site / "certificates" / serial / "credential.json")
        if serial not in good:
            assert code == 1 and not out["verified"], (serial, out)
            continue
        assert out["verified"] and out["jsonld"] == "ok", (serial, out)
        assert out["revoked"] == (serial in revoked) and code == (2 if serial in revoked else 0), (serial, out)


def test_the_did_document_is_at_both_places_did_web_resolves(demo_site: BuiltSite) -> None:
    site = demo_site.out
    assert (site / "did.json").read_bytes() == (site / ".well-known" / "did.json").read_bytes()
    doc = json.loads((site / "did.json").read_text(encoding="utf-8"))
    assert doc["id"] == "did:web:transparency.example.org:extraction"
    keys = json.loads((site / "keys.json").read_text(encoding="utf-8"))["keys"]
    # Every key the log signed with but a revoked one, whose signatures a wallet must not trust.
    assert len(doc["verificationMethod"]) == len([k for k in keys if k["status"] != "revoked"]) >= 1
    assert any(k["status"] == "revoked" for k in keys), "the demo has a revoked key"


def test_a_changed_credential_fails(demo_site: BuiltSite, tmp_path: Path) -> None:
    site = demo_site.out
    serial = next(s for s in serials(site) if s not in revoked_serials(site) and not signed_by_a_revoked_key(site, s))
    data = (site / "certificates" / serial / "credential.json").read_bytes()
    changed = tmp_path / "credential.json"
    changed.write_bytes(data.replace(b'"Grade"', b'"Grady"', 1))
    code, out = verify_credential(site, changed)
    assert code == 1 and not out["verified"], out


def test_a_status_list_with_a_bit_cleared_fails(demo_site: BuiltSite, tmp_path: Path) -> None:
    """A revoked certificate shown valid by an edited list, not signed again: refused."""
    site = demo_site.out
    status = json.loads((site / "credentials" / "status.json").read_text(encoding="utf-8"))
    status["credentialSubject"]["encodedList"] = (
        "u" + base64.urlsafe_b64encode(gzip.compress(bytes(131072 // 8), mtime=0)).rstrip(b"=").decode()
    )
    edited = tmp_path / "status.json"
    edited.write_text(json.dumps(status), encoding="utf-8")
    serial = next(s for s in revoked_serials(site) if not signed_by_a_revoked_key(site, s))
    code, out = verify_credential(site, site / "certificates" / serial / "credential.json", edited)
    assert code == 1 and not out["verified"], out


def test_verify_fails_a_credential_or_status_list_changed_and_re_listed(demo_copy: BuiltSite) -> None:
    site = demo_copy.out
    serial = serials(site)[-1]
    rel = f"certificates/{serial}/credential.json"
    (site / rel).write_bytes((site / rel).read_bytes().replace(b'"Grade"', b'"Grady"', 1))
    status = json.loads((site / "credentials" / "status.json").read_text(encoding="utf-8"))
    status["credentialSubject"]["encodedList"] = (
        "u" + base64.urlsafe_b64encode(gzip.compress(bytes(131072 // 8), mtime=0)).rstrip(b"=").decode()
    )
    (site / "credentials" / "status.json").write_bytes(
        json.dumps(status, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()
    )
    resign_sums(site, load_key(demo_copy.paths.key_file))
    report = verify_site(site)
    by_file = {p.file: p.message for p in report.failures}
    assert "differs from the document remade" in by_file.get(rel, ""), report.render()[-3000:]
    assert "not the ledger's revocations" in by_file.get("credentials/status.json", ""), report.render()[-3000:]
    run = verify_cli(site)
    assert run.rc == 1 and run.names_file(rel), run.text[-2000:]
