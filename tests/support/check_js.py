"""check.js (generator/verifier/browser/check.js) driven from the tests: under Node, one request at a time
through tests/browser/check_js_driver.js; in Chromium, a page's "Verify in this browser" control pressed by
keyboard; and the demo forged and re-signed with the demo's keys, as a dishonest holder of them would, for both
to catch. Node missing skips the tests that need it, saying why; with CI set they fail instead."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import nacl.signing
import pytest

import generator.build.gather
import generator.program.agreement_reports
from generator.build.writer import SiteWriter
from generator.commands.build import write_site
from generator.core import layout
from generator.site.render import make_environment
from generator.verifier import checkpoint_text, cosignature_line, cosignature_message
from generator.verifier.rules.recheck import Recheck
from generator.verifier.tlog.cosignature import parse_cosigner_vkey
from tests.support.browser import Browsing, unavailable
from tests.support.demo import REPO, copy_demo_data
from tests.support.forgery import forge, setter

DRIVER = REPO / "tests" / "browser" / "check_js_driver.js"


def node() -> str:
    """Node 20 or newer (WebCrypto with Ed25519); skip without it, fail in CI."""
    found = shutil.which("node")
    if found is None:
        unavailable("Node.js is not installed (Debian: apt install nodejs)")
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < 20:
        unavailable(f"Node.js {version} is too old: the check needs Node 20's WebCrypto Ed25519")
    return found


def js(op: str, **request: Any) -> Any:
    """One request to check.js under Node (tests/browser/check_js_driver.js)."""
    p = subprocess.run(
        [node(), str(DRIVER)],
        input=json.dumps({"op": op, **request}),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def steps_of(outcome: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in outcome["steps"]}


def failed_step(outcome: dict[str, Any]) -> dict[str, Any]:
    """The one step that failed: a tamper must fail where it is, and stop the check there."""
    assert outcome["status"] == "failed", outcome
    failed = [s for s in outcome["steps"] if s["status"] == "failed"]
    assert len(failed) == 1 and failed[0] is outcome["steps"][-1], outcome["steps"]
    assert outcome["text"].startswith("Not valid: this ") and f'failed "{failed[0]["name"]}": ' in outcome["text"]
    return failed[0]


def forged_demo(tmp: Path, serial: str, where: str, value: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo program with a certificate changed and everything re-signed with the demo keys, as a
    dishonest holder of them would: its ledger leaf fixed, the checkpoint signed by the program's key
    and cosigned by the demo witness's (whose private half is published too), built by a generator
    whose own certificate check is switched off (tests/support/forgery.py)."""
    paths = copy_demo_data(tmp / "data")
    forge(paths, serial, setter(where, value))
    for stale in (paths.data / "cosignatures").glob("*.txt"):
        stale.unlink()  # they cosign the ledger as it was
    with monkeypatch.context() as m:
        m.setattr(generator.build.gather, "examine_certificate", lambda *a, **k: Recheck())
        # A forged judge label may leave the judge silent on a dimension the humans labelled.
        m.setattr(generator.program.agreement_reports, "judge_coverage_problems", lambda *a: [])
        ctx = generator.build.gather.gather(paths)
        witness = paths.private / "demo-witness"
        key = parse_cosigner_vkey((witness / "witness.vkey").read_text().strip())
        text = checkpoint_text(ctx.origin, ctx.ledger.size, ctx.root)
        timestamp = 1_800_000_000
        signature = nacl.signing.SigningKey((witness / "witness.key").read_bytes()).sign(
            cosignature_message(text, timestamp)
        )
        line = cosignature_line(key.name, key.key_id, timestamp, signature.signature)
        (paths.data / "cosignatures" / f"{ctx.ledger.size}.txt").write_text(line, encoding="utf-8")
        out = tmp / "public"
        write_site(ctx, SiteWriter(out), offline=True)
    return out


OUTCOMES = (
    "s => ['valid', 'revoked', 'expired', 'not-certified', 'failed', 'could-not-check'].includes(s.dataset.outcome)"
)


def harness_page(site: Path, kind: str, artifact: str) -> str:
    """The page of `artifact` with its "Verify in this browser" section: the site's own page once
    its template calls the macro, else a page of the macro alone at the same depth."""
    name = artifact.rsplit("/", 1)[1].removesuffix(".json")
    page = layout.certificate_page(name) if kind == "certificate" else layout.item_page(name)
    if "data-browser-check" in (site / page).read_text(encoding="utf-8"):
        return page
    test_page = page.rsplit("/", 1)[0] + "/browser-check-test.html"
    template = make_environment().from_string(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>check</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="{{ url(layout.STYLE) }}"></head><body><main>'
        '<h1>check</h1>{% import "check_macros.html" as check with context %}'
        "{{ check.browser_check(kind, artifact, title) }}</main></body></html>"
    )
    html = template.render(page_path=test_page, kind=kind, artifact=artifact, title=f"this {kind}")
    (site / test_page).write_text(html, encoding="utf-8")
    return test_page


def press_verify(b: Browsing, path: str) -> tuple[str, list[dict[str, str]]]:
    """Open the page, press its button by keyboard, wait for the outcome: the live region's words
    and each step's status and text."""
    tab = b.open(path, 1280)
    page = tab.page
    button = page.get_by_role("button", name=re.compile("^Verify this .* in this browser$"))
    assert button.is_visible()
    button.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"({OUTCOMES})(document.querySelector('[data-browser-check]'))", timeout=60_000)
    text = page.locator("[data-browser-check] [aria-live=polite]").inner_text()
    steps = page.locator("[data-browser-check] [data-check-steps] li").evaluate_all(
        "lis => lis.map(li => ({status: li.dataset.status, text: li.textContent}))"
    )
    tab.close()
    return text, steps
