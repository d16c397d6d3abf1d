"""Verifying a site (SPEC §2-§8): the checks in their order, and the one last-resort catch."""

import traceback
from pathlib import Path

from generator.verifier.certificate_files import check_certificates
from generator.verifier.errors import SiteUnreadable
from generator.verifier.folder import MANIFEST_PATH, Site
from generator.verifier.keys import check_key_pin
from generator.verifier.publication import check_gates, check_ledger, check_methodology_files, check_reveals, check_runs
from generator.verifier.release import check_keys_document, check_manifest_shape, check_sums, check_verifier_copy
from generator.verifier.report import Report

# The test suite sets this, so that a bug in a check fails the test that met it instead of
# being reported, like any other failure, as an internal error of the verifier.
RAISE_INTERNAL_ERRORS = False


def verify_site(site: Path | str, key: str | None = None, debug: bool = False) -> Report:
    """Verify a site directory.

    Raise SiteUnreadable if it is not a readable site at all, FormatError if `key` is neither
    a verifier key nor a fingerprint: both are the caller's errors, not the site's. An error in
    the verifier itself is reported as an internal error against the file it was checking (with
    its traceback under `debug`), never as a pass.
    """
    if key is not None:
        check_key_pin(key)
    root = Path(site)
    report = Report(str(site))
    if not root.is_dir():
        raise SiteUnreadable(f"{site}: not a directory")
    if not (root / MANIFEST_PATH).is_file():
        raise SiteUnreadable(f"{site}: no {MANIFEST_PATH}: not a transparency site")
    s = Site(root, report)
    try:
        _check(s, key)
    except Exception as e:  # the last resort: a bug must never read as a pass
        if RAISE_INTERNAL_ERRORS:
            raise
        report.internal_error(str(s.current), e, traceback.format_exc() if debug else None)
    return report


def _check(s: Site, key: str | None) -> None:
    report = s.report
    loaded = s.document(MANIFEST_PATH, "manifest")
    if loaded is None or not check_manifest_shape(loaded[1], report):
        return
    manifest = loaded[1]
    origin = manifest["origin"]
    public_key = check_keys_document(s, manifest, origin, key)
    if public_key is None:
        return
    check_sums(s, public_key, manifest["verifier"])
    ledger = check_ledger(s, manifest, origin, public_key)
    if ledger is None:
        return
    methodologies = check_methodology_files(s, manifest, ledger)
    check_gates(s, manifest, ledger)
    check_reveals(s, manifest, ledger)
    specs = check_runs(s, manifest, ledger, methodologies)
    check_certificates(s, manifest, ledger, specs, methodologies, public_key)
    check_verifier_copy(s, manifest)
    report.counts = {
        "ledger entries": ledger.size,
        "gates": len(ledger.gates),
        "commitments": ledger.commit_count,
        "revealed": len(ledger.reveals),
        "runs": len(ledger.runs),
        "certificates": len(ledger.certificates),
        "methodology versions": len(ledger.methodologies),
    }
    open_runs = [r for r in ledger.runs if r not in ledger.certificate_of_run]
    if open_runs:
        report.notes.append(f"{len(open_runs)} run(s) still open (not yet decided): {', '.join(open_runs[:10])}")
