"""The verifier's memory and the exports: a release verified once, then again from its memory, checks
every export anew when one changed (its SHA-256 is in what the memory keys), and only then."""

from __future__ import annotations

import json
from pathlib import Path

from generator.core.signing_key import load_key
from generator.verifier import verify_site
from tests.support.demo import BuiltSite
from tests.support.tamper import resign_sums


def test_an_export_changed_after_a_remembered_run_fails_the_next(demo_copy: BuiltSite, tmp_path: Path) -> None:
    site, memory = demo_copy.out, tmp_path / "memory"
    first = verify_site(site, memory=memory)
    assert first.ok, first.render()[-2000:]
    again = verify_site(site, memory=memory)
    assert again.ok and again.checks == first.checks, (again.checks, first.checks)
    row = json.loads((site / "transparency.json").read_text(encoding="utf-8"))["certificates"][0]
    rel = next(p for p in row["exports"] if p.endswith("/credential.json"))
    (site / rel).write_bytes((site / rel).read_bytes().replace(b'"Grade"', b'"Grady"', 1))
    resign_sums(site, load_key(demo_copy.paths.key_file))
    after = verify_site(site, memory=memory)
    assert any(p.file == rel for p in after.failures), after.render()[-3000:]
