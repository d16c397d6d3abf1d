"""The bundled verify.py itself, a smoke set. The file every site ships is the verifier package's modules
joined, and tests/structure/test_structure.py proves it byte for byte (test_the_bundled_verify_py_is_current),
so every other verifier test runs on the package once. Here the bundle is run as what it is: imported as a
module of its own and run as a program, its command-line entry passes the demo site, a few tampers fail with
exit status 1 naming the file at fault, a folder that is no site exits 2, `mirror` copies the demo served over
HTTP and verifies it, and one published vector of each kind (Ed25519, RFC 6962, RFC 8785, signed notes) holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import generator.verifier
from tests.support.demo import BUNDLE, REPO, BuiltSite, load_bundle
from tests.support.http_site import serve
from tests.support.tamper import TAMPERS, run_verifier, tampered

VECTORS = REPO / "tests" / "vectors"
SMOKE_TAMPERS = {
    t.id: t
    for t in TAMPERS
    if t.id in ("reveal-byte-changed-resigned", "checkpoint-signature-corrupted", "extra-file-added")
}
assert len(SMOKE_TAMPERS) == 3, "a smoke tamper was renamed in tests/support/tamper.py"


@pytest.fixture(scope="module")
def bundle() -> ModuleType:
    return load_bundle()


@pytest.fixture(autouse=True)
def _bundle_bugs_fail_the_test(bundle: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """As conftest.py does for the package: an error inside the bundle raises, never hides as a failure."""
    monkeypatch.setattr(bundle, "RAISE_INTERNAL_ERRORS", True)


def vectors(name: str) -> Any:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def test_the_module_is_the_bundled_file_not_the_package(bundle: ModuleType) -> None:
    assert Path(bundle.__file__ or "") == BUNDLE
    assert bundle.verify_site is not generator.verifier.verify_site
    assert set(generator.verifier.__all__) <= set(vars(bundle)), "the bundle lacks a name the package exports"


def test_its_command_line_entry_passes_the_demo_site(demo_site: BuiltSite, tmp_path: Path) -> None:
    r = run_verifier(BUNDLE, str(demo_site.out), "--no-state", cwd=tmp_path)
    assert r.rc == 0, r.text
    assert "PASS" in r.out and not r.fail_lines(), r.out


@pytest.mark.parametrize("tamper_id", sorted(SMOKE_TAMPERS))
def test_a_tampered_site_fails_with_exit_1_naming_the_file(
    bundle: ModuleType, demo_copy: BuiltSite, tmp_path: Path, tamper_id: str
) -> None:
    tamper = SMOKE_TAMPERS[tamper_id]
    site = tampered(demo_copy, tamper.mutate)
    r = run_verifier(BUNDLE, str(site.root), "--no-state", cwd=tmp_path)
    assert r.rc == 1, r.text
    assert r.names_file(tamper.target), r.out
    assert {p.file for p in bundle.verify_site(site.root).failures} == tamper.files


def test_a_folder_that_is_no_site_exits_2(tmp_path: Path) -> None:
    r = run_verifier(BUNDLE, str(tmp_path / "no-such-site"), "--no-state", cwd=tmp_path)
    assert r.rc == 2, r.text
    assert "not a directory" in r.err, r.err


def test_mirror_copies_a_served_site_and_verifies_it(demo_site: BuiltSite, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    with serve(demo_site.out) as served:
        r = run_verifier(BUNDLE, "mirror", served.url, str(mirror), "--state", str(tmp_path / "state.json"))
        assert r.rc == 0, r.text
        again = run_verifier(BUNDLE, "mirror", served.url, str(mirror), "--state", str(tmp_path / "state.json"))
    assert "PASS" in r.out and "kept 0; removed 0" in r.err
    assert again.rc == 0 and "fetched 0 file(s), 0 bytes" in again.err and "not read again" in again.out
    assert (mirror / "SHA256SUMS").read_bytes() == (demo_site.out / "SHA256SUMS").read_bytes()


def test_one_published_vector_of_each_kind(bundle: ModuleType) -> None:
    ed = vectors("ed25519_rfc8032.json")
    good, bad = ed["vectors"][0], ed["negative"][0]
    for case, expected in ((good, True), (bad, False)):
        args = (bytes.fromhex(case["public_key"]), bytes.fromhex(case["signature"]), bytes.fromhex(case["message"]))
        assert bundle.ed25519_verify(*args) is expected, case["description"]

    merkle = vectors("rfc6962_merkle.json")
    leaves = [bytes.fromhex(x) for x in merkle["leaves"]]
    for row in merkle["roots"]:
        assert bundle.merkle_root([bundle.leaf_hash(d) for d in leaves[: row["size"]]]) == bytes.fromhex(row["root"])

    jcs = vectors("rfc8785_jcs.json")
    case = next(c for c in jcs["cases"] if c["project_eligible"])
    assert bundle.canonical_bytes(json.loads(case["input"])) == case["canonical"].encode("utf-8")

    note = vectors("signed_note.json")["checkpoint"]
    assert bundle.open_note(note["signed"].encode("utf-8"), [bundle.parse_vkey(note["vkey"])]).text == note["text"]
