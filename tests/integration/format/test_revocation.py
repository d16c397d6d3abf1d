"""Certificate revocation (format v2): `transparency revoke`, the ledger event, the signed list
ledger/revocations.json, the pages that mark a revoked (or expired) certificate, the verifier's
report, and what the verifier catches when a key holder publishes a list or a ledger that lies.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from bs4 import BeautifulSoup, Tag
from click.testing import CliRunner

import generator.verifier as v
from generator.cli import main
from generator.commands.build import build
from generator.commands.revoke import revoke_certificate
from generator.core import layout
from generator.core.generator_errors import InputError
from generator.core.signing_key import load_key
from generator.program.datadir import Paths
from tests.support.demo import BuiltSite
from tests.support.files import refused
from tests.support.html import resolve, site_problems, soup_of
from tests.support.runs import certify, register, results, run_spec, scored
from tests.support.tamper import ENTRIES, entries_doc, read_json, resign, resign_sums, rewrite_ledger, write_canonical

LIST = "ledger/revocations.json"
REASON = "A grading bug was found; see notice 12."
REVOKED_AT = "2026-03-20T00:00:00Z"
OTHER = {"id": "other", "name": "Other Reader", "version": "2", "organization": "Other Org"}


def _certified(paths: Paths) -> None:
    """Two certificates on the public gate: run-001, and run-002 of another subject, which
    expires on 2026-03-06, before the revocation that ends the ledger (so, before the release)."""
    register(paths, run_spec(paths, "run-001", "a", ["a-001", "a-002"]))
    certify(paths, results("run-001", [scored("a-001"), scored("a-002")]))
    register(paths, run_spec(paths, "run-002", "a", ["a-001", "a-002"], subject=OTHER), at="2026-03-03T00:00:00Z")
    certify(
        paths,
        results("run-002", [scored("a-001"), scored("a-002")], finished_at="2026-03-04T00:00:00Z"),
        at="2026-03-05T00:00:00Z",
        expires_at="2026-03-06T00:00:00Z",
    )


def _revoke_cli(paths: Paths, serial: str, reason: str, at: str = REVOKED_AT) -> Any:
    args = ["--data", str(paths.data), "--private", str(paths.private), "revoke", serial, "--reason", reason]
    return CliRunner().invoke(main, [*args, "--at", at])


@pytest.fixture
def program(make_program: Callable[..., Paths]) -> Paths:
    paths = make_program()
    _certified(paths)
    return paths


@pytest.fixture
def revoked_site(program: Paths) -> BuiltSite:
    """run-001 revoked through the command line, and the site built."""
    r = _revoke_cli(program, "run-001", REASON)
    assert r.exit_code == 0, r.output
    assert "Revoked certificate run-001 at 2026-03-20T00:00:00Z" in r.output
    out = program.data.parent / "public"
    build(program, out)
    return BuiltSite(program, out)


def _row(serial: str, reason: str, at: str, index: int) -> dict[str, Any]:
    return {"at": at, "index": index, "reason": reason, "serial": serial}


def _leaf_index(site: Path, kind: str, serial: str) -> int:
    return next(i for i, e in enumerate(entries_doc(site)["entries"]) if e["type"] == kind and e["serial"] == serial)


# ---------------------------------------------------------------------------------------------
# The command, the event, the list, the report


def test_revoke_then_build_then_verify(revoked_site: BuiltSite) -> None:
    site = revoked_site.out
    leaves = entries_doc(site)["entries"]
    assert leaves[-1] == {"type": "revocation", "v": 2, "serial": "run-001", "reason": REASON, "at": REVOKED_AT}
    assert revoked_site.paths.ledger_file.read_bytes().endswith(rfc8785.dumps(leaves[-1]) + b"\n")
    report = v.verify_site(site)
    assert report.ok, report.render()
    index = len(leaves) - 1
    revoked = {"serial": "run-001", "run": "run-001", "at": REVOKED_AT, "reason": REASON, "index": index}
    assert report.revoked == [revoked]
    assert f"certificate run-001 REVOKED at {REVOKED_AT}: {REASON} (it is not valid, whatever its verdict)" in (
        report.notes
    )
    assert report.expired == [{"serial": "run-002", "expires_at": "2026-03-06T00:00:00Z"}]
    assert report.counts["revocations"] == 1
    text = report.render()
    assert f"Note: certificate run-001 REVOKED at {REVOKED_AT}" in text
    assert "1 certificate(s) revoked and 1 expired" in text and "not that they are still valid" in text
    as_json = report.to_json()
    assert as_json["revoked"] == report.revoked and as_json["expired"] == report.expired
    # The certificate's own file is untouched: revoking removes nothing.
    cert = read_json(site, layout.certificate("run-001"))
    assert cert["verdict"] == "certified" and (site / layout.certificate("run-001")).is_file()


def test_the_list_restates_the_ledger_and_is_signed(revoked_site: BuiltSite) -> None:
    site = revoked_site.out
    data = (site / LIST).read_bytes()
    doc = json.loads(data)
    index = _leaf_index(site, "revocation", "run-001")
    assert doc == {
        "type": "certificate-revocations",
        "v": 1,
        "origin": "test.example.org/prog",
        "tree_size": len(entries_doc(site)["entries"]),
        "revocations": [_row("run-001", REASON, REVOKED_AT, index)],
    }
    assert data == rfc8785.dumps(doc)
    key = load_key(revoked_site.paths.key_file)
    assert v.ed25519_verify(key.public_key, (site / f"{LIST}.sig").read_bytes(), data)
    assert f"  {LIST}\n" in (site / "SHA256SUMS").read_text()
    assert v.REVOCATIONS_PATH == layout.REVOCATIONS == LIST


def test_the_list_is_written_when_nothing_is_revoked(built_program: BuiltSite) -> None:
    doc = read_json(built_program.out, LIST)
    assert doc["revocations"] == [] and doc["type"] == "certificate-revocations"
    report = v.verify_site(built_program.out)
    assert report.ok and report.revoked == [] and report.to_json()["revoked"] == []


def test_verify_command_json_lists_the_revocation(revoked_site: BuiltSite) -> None:
    r = CliRunner().invoke(main, ["verify", str(revoked_site.out), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert [x["serial"] for x in out["revoked"]] == ["run-001"] and out["revoked"][0]["reason"] == REASON
    assert [x["serial"] for x in out["expired"]] == ["run-002"]


def test_a_later_build_keeps_the_list_growing(revoked_site: BuiltSite) -> None:
    """The list is outside the never-rewritten folders: a second revocation rebuilds over the first."""
    revoke_certificate(revoked_site.paths, "run-002", "Expired and withdrawn.", "2026-03-21T00:00:00Z")
    build(revoked_site.paths, revoked_site.out)
    rows = read_json(revoked_site.out, LIST)["revocations"]
    assert [r["serial"] for r in rows] == ["run-001", "run-002"]
    assert v.verify_site(revoked_site.out).ok


# ---------------------------------------------------------------------------------------------
# Pages


def _cert_rows(site: Path) -> dict[str, Tag]:
    s = soup_of(site, layout.CERTIFICATES_PAGE)
    return {tr.th.get_text(strip=True): tr for tr in s.select("table.certificates tbody tr") if tr.th}


def test_the_certificate_page_shows_the_revocation(revoked_site: BuiltSite) -> None:
    site = revoked_site.out
    page = layout.certificate_page("run-001")
    s = soup_of(site, page)
    banner = s.select_one(".revoked-banner")
    assert banner is not None
    assert banner.p is not None and banner.p.get_text(" ", strip=True) == f"Revoked on {REVOKED_AT}: {REASON}"
    bdi = banner.select_one(".revocation-reason bdi")
    assert bdi is not None and bdi.get_text() == REASON
    links = [a["href"] for a in banner.find_all("a")]
    entry = layout.ledger_entry(json.loads((site / LIST).read_bytes())["revocations"][0]["index"])
    assert [resolve(site, page, str(h))[0] for h in links] == [entry.split("#")[0], LIST]
    assert str(links[0]).endswith("#" + entry.split("#")[1])
    summary = s.select_one("p.verdict-summary")
    assert summary is not None and "Verdict as issued, now revoked: Certified." in summary.get_text()
    # The page's JSON twin is still the certificate itself.
    twin = s.select_one('link[rel~="alternate"]')
    assert twin is not None and resolve(site, page, str(twin["href"]))[0] == layout.certificate("run-001")
    other = soup_of(site, layout.certificate_page("run-002"))
    assert other.select_one(".revoked-banner") is None
    expired = other.select_one(".expired-banner")
    assert expired is not None and "Expired on 2026-03-06T00:00:00Z" in expired.get_text()


def test_the_lists_mark_revoked_and_expired_certificates(revoked_site: BuiltSite) -> None:
    site = revoked_site.out
    rows = _cert_rows(site)
    assert set(rows) == {"run-001", "run-002"}
    assert rows["run-001"].get("class") == ["revoked"]
    mark = rows["run-001"].select_one(".revoked-mark")
    assert mark is not None and f"revoked on {REVOKED_AT}: {REASON}" in mark.parent.get_text(" ", strip=True)
    assert rows["run-002"].get("class") == ["expired"] and rows["run-002"].select_one(".expired-mark") is not None
    s = soup_of(site, layout.CERTIFICATES_PAGE)
    assert any(resolve(site, layout.CERTIFICATES_PAGE, str(a["href"]))[0] == LIST for a in s.find_all("a"))
    runs = soup_of(site, layout.RUNS_PAGE).get_text(" ", strip=True)
    assert f"certificate revoked on {REVOKED_AT}" in runs
    assert site_problems(site) == []


def test_expiry_is_judged_at_the_release_time_not_the_clock(program: Paths) -> None:
    """Before anything later than the expiry enters the ledger, the release is not past it:
    nothing is marked expired, whatever today's date."""
    out = program.data.parent / "public"
    build(program, out)
    rows = _cert_rows(out)
    assert rows["run-002"].get("class") is None and rows["run-002"].select_one(".expired-mark") is None


def test_a_hostile_reason_is_shown_as_text(program: Paths) -> None:
    reason = '<script>alert(1)</script> & "quoted" <b>bold</b> مرحبا'
    revoke_certificate(program, "run-001", reason, REVOKED_AT)
    out = program.data.parent / "public"
    build(program, out)
    for page in (layout.certificate_page("run-001"), layout.CERTIFICATES_PAGE):
        s = BeautifulSoup((out / page).read_text(encoding="utf-8"), "html.parser")
        # The only script is the site's own file, never one made of the reason.
        assert all(el.get("src") and not el.get_text() for el in s.find_all("script")) and s.find("b") is None
        assert [b.get_text() for b in s.select(".revocation-reason bdi")] == [reason]
    assert v.verify_site(out).ok


# ---------------------------------------------------------------------------------------------
# Refusals: each leaves data/ and the private directory as they were


def _refused_revoke(paths: Paths, serial: str, reason: str) -> InputError:
    return refused(lambda: revoke_certificate(paths, serial, reason, REVOKED_AT), paths.data, paths.private)


def test_an_unknown_serial_is_refused(program: Paths) -> None:
    err = _refused_revoke(program, "run-999", REASON)
    [p] = err.problems
    assert p.file == program.show(program.ledger_file) and p.where == "serial"
    assert "no certificate run-999 was issued" in p.message
    assert p.expected == "the serial of a certificate in the ledger" and p.found == "run-999"
    [p] = _refused_revoke(program, "Run 1", REASON).problems
    assert p.file == "SERIAL" and p.message == "malformed serial"


def test_a_second_revocation_is_refused(program: Paths) -> None:
    revoke_certificate(program, "run-001", REASON, REVOKED_AT)
    err = _refused_revoke(program, "run-001", "Again.")
    [p] = err.problems
    assert p.where == "serial" and "certificate run-001 is already revoked" in p.message and REASON in p.message
    assert p.expected == "a certificate not yet revoked"


@pytest.mark.parametrize(
    ("reason", "fragment"),
    [
        ("", "must be a non-empty string"),
        ("   ", "must be a non-empty string"),
        ("Withdrawn.\nPASS: all checks passed.", "control or format characters"),
        ("tab\there", "control or format characters"),
        ("\x1b[8mhidden", "control or format characters"),
        ("right-to-left \u202eoverride", "control or format characters"),
        ("zero\u200bwidth", "control or format characters"),
        ("hangul\u3164filler", "control or format characters"),
        ("no-break\u00a0space", "control or format characters"),
    ],
    ids=["empty", "spaces", "newline", "tab", "escape", "bidi", "zero-width", "filler", "nbsp"],
)
def test_a_bad_reason_is_refused(program: Paths, reason: str, fragment: str) -> None:
    err = _refused_revoke(program, "run-001", reason)
    [p] = err.problems
    assert p.file == "--reason" and fragment in p.message, err.describe()


def test_the_command_line_refuses_with_status_2(program: Paths) -> None:
    before = program.ledger_file.read_bytes()
    r = _revoke_cli(program, "run-001", "")
    assert r.exit_code == 2 and "--reason: the reason must be a non-empty string" in r.output, r.output
    assert "nothing was written" in r.output and program.ledger_file.read_bytes() == before


# ---------------------------------------------------------------------------------------------
# The verifier against a key holder who lies: a crafted ledger or list, re-signed throughout


def _write_list(site: Path, rows: list[dict[str, Any]]) -> None:
    """The revocation list as given, with the ledger's tree_size, re-signed, and SHA256SUMS remade."""
    signer = load_key(site.parent / "data" / "private" / "signing.key")
    doc = read_json(site, LIST)
    doc["revocations"] = rows
    doc["tree_size"] = len(entries_doc(site)["entries"])
    write_canonical(site, LIST, doc)
    resign(site, LIST, signer)
    resign_sums(site, signer)


def _append_leaves(site: Path, *leaves: dict[str, Any]) -> None:
    signer = load_key(site.parent / "data" / "private" / "signing.key")
    rewrite_ledger(site, signer, [*entries_doc(site)["entries"], *leaves])


def _failures(site: Path) -> list[v.Problem]:
    report = v.verify_site(site)
    assert not report.ok
    return report.failures


def _revocation_leaf(serial: str, reason: str = REASON, at: str = "2026-04-01T00:00:00Z") -> dict[str, Any]:
    return {"type": "revocation", "v": 2, "serial": serial, "reason": reason, "at": at}


def test_a_revocation_of_an_unknown_serial_is_caught(revoked_site: BuiltSite) -> None:
    site = revoked_site.out
    _append_leaves(site, _revocation_leaf("run-999"))
    _write_list(site, read_json(site, LIST)["revocations"])
    failures = _failures(site)
    assert {p.file for p in failures} == {ENTRIES}, [p.describe() for p in failures]
    assert any("revocation of a certificate that was not issued before" in p.message for p in failures)


def test_a_second_revocation_in_the_ledger_is_caught(revoked_site: BuiltSite) -> None:
    site = revoked_site.out
    _append_leaves(site, _revocation_leaf("run-001", "Once more."))
    _write_list(site, read_json(site, LIST)["revocations"])
    failures = _failures(site)
    assert {p.file for p in failures} == {ENTRIES}, [p.describe() for p in failures]
    assert any("certificate run-001 is revoked twice" in p.message for p in failures)


def _two_revocations(site: BuiltSite) -> list[dict[str, Any]]:
    revoke_certificate(site.paths, "run-002", "Withdrawn as well.", "2026-03-21T00:00:00Z")
    build(site.paths, site.out)
    rows = read_json(site.out, LIST)["revocations"]
    assert [r["serial"] for r in rows] == ["run-001", "run-002"]
    return rows


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda rows: rows[:1], "omits the revocation of certificate run-002"),
        (lambda rows: [], "omits the revocation of certificate run-001"),
        (lambda rows: [*rows, {**rows[0], "serial": "run-003"}], "lists a revocation the ledger does not hold"),
        (lambda rows: [*rows, rows[0]], "lists run-001 twice"),
        (lambda rows: rows[::-1], "revocations are not in ledger order"),
        (lambda rows: [{**rows[0], "reason": "Another reason."}, rows[1]], "differs from the ledger's revocation"),
        (lambda rows: [{**rows[0], "index": True}, rows[1]], "differs from the ledger's revocation"),
        (lambda rows: [rows[0], {**rows[1], "extra": 1}], "differs from the ledger's revocation"),
    ],
    ids=["omits-one", "omits-all", "adds-one", "lists-twice", "reordered", "reason-changed", "index-true", "extra"],
)
def test_a_list_that_differs_from_the_ledger_is_caught(
    revoked_site: BuiltSite, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]], fragment: str
) -> None:
    rows = _two_revocations(revoked_site)
    _write_list(revoked_site.out, change(rows))
    failures = _failures(revoked_site.out)
    assert {p.file for p in failures} == {LIST}, [p.describe() for p in failures]
    assert any(fragment in p.message for p in failures), [p.describe() for p in failures]


def test_a_list_with_the_wrong_head_is_caught(revoked_site: BuiltSite) -> None:
    site = revoked_site.out
    signer = load_key(revoked_site.paths.key_file)
    doc = read_json(site, LIST)
    write_canonical(site, LIST, {**doc, "tree_size": doc["tree_size"] - 1, "type": "revocations"})
    resign(site, LIST, signer)
    resign_sums(site, signer)
    messages = {p.message for p in _failures(site) if p.file == LIST}
    assert messages == {"wrong type or version", "tree_size differs from the ledger's"}


def test_a_missing_list_is_caught_when_something_is_revoked(revoked_site: BuiltSite) -> None:
    site = revoked_site.out
    (site / LIST).unlink()
    (site / f"{LIST}.sig").unlink()
    resign_sums(site, load_key(revoked_site.paths.key_file))
    failures = _failures(site)
    assert [(p.file, p.message) for p in failures] == [(LIST, "revocation list: the file is missing")]


def test_a_list_changed_without_its_signature_is_caught(revoked_site: BuiltSite) -> None:
    site = revoked_site.out
    doc = read_json(site, LIST)
    doc["revocations"] = []
    write_canonical(site, LIST, doc)
    resign_sums(site, load_key(revoked_site.paths.key_file))
    files = {p.file for p in _failures(site)}
    assert files == {LIST, f"{LIST}.sig"}


def test_a_site_without_a_list_and_without_revocations_passes(built_program: BuiltSite) -> None:
    """A site built before revocations existed (v1, or v2 without them) has no list, and needs none."""
    site = built_program.out
    (site / LIST).unlink()
    (site / f"{LIST}.sig").unlink()
    resign_sums(site, load_key(built_program.paths.key_file))
    report = v.verify_site(site)
    assert report.ok, report.render()


def test_the_single_file_proof_says_revocation_is_not_checked(revoked_site: BuiltSite) -> None:
    from generator.verifier.site.command_line import main as verify_main

    site = revoked_site.out
    cert = site / layout.certificate("run-001")
    vkey = load_key(revoked_site.paths.key_file).vkey
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = verify_main(["proof", str(cert), str(cert) + ".tlog-proof", "--key", vkey])
    assert rc == 0 and "not checked: whether the certificate was revoked since" in buf.getvalue()
