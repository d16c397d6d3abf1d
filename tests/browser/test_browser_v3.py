"""The in-browser check on a format v3 site (docs/formats/v3.md, 2): every reveal and certificate
proof is pinned to the release that first published it, and check.js reaches today's checkpoint
from it by a consistency proof it makes from the hash tiles, on the page of each artifact and for
each revealed item a certificate's verdict uses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from generator.core import layout
from tests.support.check_js import js, steps_of
from tests.support.demo import BuiltSite
from tests.support.v3 import one_event, v3_demo


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """A v3 demo one release later: its proofs are pinned to the first release's checkpoint."""
    site = v3_demo(tmp_path_factory.mktemp("v3-browser"))
    one_event(site)
    return site


def _today_size(site: Path) -> int:
    return int((site / layout.CHECKPOINT).read_text(encoding="utf-8").split("\n")[1])


def _pinned_size(proof: Path) -> int:
    return int(proof.read_text(encoding="utf-8").split("\n\n", 1)[1].split("\n")[1])


def test_every_artifact_of_a_grown_v3_site_is_checked_from_its_older_proof(grown: BuiltSite) -> None:
    out = grown.out
    manifest = json.loads((out / layout.MANIFEST).read_bytes())
    today = _today_size(out)
    older = [r["path"] for r in manifest["reveals"] if _pinned_size(out / (r["path"] + ".tlog-proof")) < today]
    assert older, "the event left every proof pinned to today's checkpoint: this test would check nothing"
    for row in manifest["reveals"]:
        outcome = js("page", site=str(out), kind="reveal", path=row["path"])
        assert outcome["status"] == "valid", outcome
        detail = steps_of(outcome)["Checking the inclusion proof"]["detail"]
        if row["path"] in older:
            assert f"begins today's tree of {today}" in detail and "made from the site's hash tile" in detail, detail
    revoked = {r["serial"] for r in json.loads((out / layout.REVOCATIONS).read_bytes())["revocations"]}
    for row in manifest["certificates"]:
        outcome = js("page", site=str(out), kind="certificate", path=row["path"])
        verdict = json.loads((out / row["path"]).read_bytes())["verdict"]
        want = "revoked" if row["serial"] in revoked else "valid" if verdict == "certified" else "not-certified"
        assert outcome["status"] == want, outcome


def test_a_tile_changed_under_an_older_proof_fails_its_page(grown: BuiltSite, tmp_path: Path) -> None:
    import shutil

    site = tmp_path / "site"
    shutil.copytree(grown.out, site)
    manifest = json.loads((site / layout.MANIFEST).read_bytes())
    today = _today_size(site)
    path = next(r["path"] for r in manifest["reveals"] if _pinned_size(site / (r["path"] + ".tlog-proof")) < today)
    detail = steps_of(js("page", site=str(site), kind="reveal", path=path))["Checking the inclusion proof"]["detail"]
    used = re.findall(r"ledger/tile/[0-9x/.p]+[0-9]", detail)
    assert used, detail
    tile = site / used[0]
    data = bytearray(tile.read_bytes())
    data[0] ^= 1  # the first hash of the tile the proof is made from
    tile.write_bytes(bytes(data))
    outcome = js("page", site=str(site), kind="reveal", path=path)
    assert outcome["status"] == "failed", outcome
    step = steps_of(outcome)["Checking the inclusion proof"]
    assert step["status"] == "failed" and "consistency proof" in step["detail"], step
