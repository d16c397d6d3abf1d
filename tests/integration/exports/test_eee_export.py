"""The Every Eval Ever record of every certificate, checked by the coalition's own validator (PyPI
`every-eval-ever`, in its own Python 3.12 environment), and by verify.py against the certificate it
renders: a changed byte fails both.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from generator.core.signing_key import load_key
from generator.verifier import verify_site
from tests.support.demo import BuiltSite
from tests.support.harnesses import harness_python
from tests.support.tamper import resign_sums, verify_cli

MANIFEST = "transparency.json"
COLLECTION = "transparency.example.org_extraction"


def manifest_rows(site: Path) -> dict[str, dict[str, Any]]:
    """The manifest's certificate rows, each with `eee`: its Every Eval Ever exports."""
    doc = json.loads((site / MANIFEST).read_text(encoding="utf-8"))
    return {r["serial"]: {**r, "eee": [p for p in r["exports"] if "/eee/" in p]} for r in doc["certificates"]}


def datastore(site: Path, into: Path) -> list[str]:
    """The exported records laid out as the coalition's datastore holds them,
    data/<collection>/<developer>/<model>/<uuid>.json (the developer and model from the record's
    model_info.id, as the datastore files them), each beside its samples; their paths."""
    laid: list[str] = []
    for row in manifest_rows(site).values():
        for rel in row["eee"]:
            src = site / rel
            if src.suffix == ".json":
                developer, model = json.loads(src.read_text(encoding="utf-8"))["model_info"]["id"].split("/")
            folder = into / "data" / COLLECTION / developer / model
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, folder / src.name)
            laid.append((folder / src.name).relative_to(into).as_posix())
    return laid


def validate(into: Path) -> tuple[int, list[dict[str, Any]]]:
    """The coalition's validator on every file of the datastore at `into`: its exit code and report."""
    python = harness_python("every-eval-ever")
    ran = subprocess.run(
        [str(python), "-m", "every_eval_ever", "validate", "data/**/*.json", "data/**/*.jsonl", "--format", "json"],
        cwd=into,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert ran.stdout.strip(), ran.stderr[-2000:]
    return ran.returncode, json.loads(ran.stdout)


def test_every_certificate_lists_its_record_and_public_ones_their_instances(demo_site: BuiltSite) -> None:
    rows = manifest_rows(demo_site.out)
    for serial, row in rows.items():
        cert = json.loads((demo_site.out / row["path"]).read_text(encoding="utf-8"))
        public = cert["gate"] == "a"
        assert len(row["eee"]) == (2 if public else 1), serial
        record = json.loads((demo_site.out / row["eee"][0]).read_text(encoding="utf-8"))
        details = record["source_metadata"]["additional_details"]
        assert details["certificate"] == row["path"] and details["verdict"] == cert["verdict"]
        assert record["evaluation_results"][0]["score_details"]["score"] == float(cert["summary"]["pass_rate"])
        source = record["evaluation_results"][0]["source_data"]
        if public:
            assert source["source_type"] == "url" and "detailed_evaluation_results" in record
        else:
            # Sealed items are named by their commitments, never their texts.
            assert source["source_type"] == "other"
            assert sorted(k.split(".", 1)[1] for k in source["additional_details"]) == sorted(
                r["item"] for r in cert["results"]
            )


def test_the_coalition_s_validator_accepts_every_record(demo_site: BuiltSite, tmp_path: Path) -> None:
    laid = datastore(demo_site.out, tmp_path)
    assert any(p.endswith("_samples.jsonl") for p in laid)
    code, report = validate(tmp_path)
    assert code == 0 and len(report) == len(laid), report
    assert all(r["valid"] and not r["errors"] and not r["warnings"] for r in report), report


def test_the_coalition_s_validator_refuses_a_changed_record(demo_site: BuiltSite, tmp_path: Path) -> None:
    laid = datastore(demo_site.out, tmp_path)
    samples = tmp_path / next(p for p in laid if p.endswith("_samples.jsonl"))
    first, rest = samples.read_bytes().split(b"\n", 1)
    samples.write_bytes(first.replace(b"/certificates/", b"/certificatez/", 1) + b"\n" + rest)
    record = tmp_path / next(p for p in laid if p.endswith(".json") and "_samples" not in p)
    record.write_bytes(record.read_bytes().replace(b'"third_party"', b'"third_partx"', 1))
    code, report = validate(tmp_path)
    assert code != 0
    refused = {Path(r["file"]).name for r in report if r["errors"]}
    assert {samples.name, record.name} <= refused, report


def test_verify_fails_an_export_changed_and_re_signed(demo_copy: BuiltSite) -> None:
    site = demo_copy.out
    row = next(r for r in manifest_rows(site).values() if len(r["eee"]) == 1)
    rel = row["eee"][0]
    path = site / rel
    data = path.read_bytes()
    at = data.index(b'"certificate_sha256": "') + len(b'"certificate_sha256": "')
    path.write_bytes(data[:at] + (b"0" if data[at : at + 1] != b"0" else b"1") + data[at + 1 :])
    resign_sums(site, load_key(demo_copy.paths.key_file))
    report = verify_site(site)
    assert not report.ok
    assert any(p.file == rel and "differs from the export remade" in p.message for p in report.failures), (
        report.render()
    )
    run = verify_cli(site)
    assert run.rc == 1 and run.names_file(rel), run.text[-2000:]


def test_verify_fails_an_export_missing_or_unlisted(demo_copy: BuiltSite) -> None:
    site = demo_copy.out
    rows = manifest_rows(site)
    serial, row = next(iter(rows.items()))
    (site / row["eee"][0]).unlink()
    stray = site / "certificates" / serial / "eee" / "extra.json"
    stray.write_text("{}\n", encoding="utf-8")
    resign_sums(site, load_key(demo_copy.paths.key_file))
    report = verify_site(site)
    assert not report.ok
    rendered = report.render()
    assert row["eee"][0] in rendered and "certificates/" + serial + "/eee/extra.json" in rendered, rendered
