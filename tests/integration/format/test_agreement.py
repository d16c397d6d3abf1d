"""Judge agreement, end to end: a blind human label set committed in the ledger before the run's
certificate, refused after it; the label set and its report published once due, byte for byte;
the report's figures exactly those the verifier recomputes from the published labels and the
certificate's judge labels; a figure or a label changed by the operator, with SHA256SUMS
re-signed, fails verification naming it; a secret gate keeps the labels out of the site until
every item of the run is revealed."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner

from generator.cli import main
from generator.commands.agreement import label_set_report, register_label_set
from generator.commands.build import build
from generator.commands.retire import retire_items
from generator.core.generator_errors import InputError
from generator.core.signing_key import load_key
from generator.program.datadir import Paths
from generator.verifier import (
    cohen_kappa,
    krippendorff_alpha_ordinal,
    loads_strict,
    sha256_hex,
    verify_site,
)
from tests.support.agreement import ITEMS, LABEL_AT, SCALE, SECRET10, judged, labels_file
from tests.support.files import refused
from tests.support.runs import certify, named, register, results, run_spec, scored
from tests.support.tamper import resign_sums


@pytest.fixture
def prog(make_program: Callable[..., Paths]) -> Paths:
    paths = make_program(public_items=3, secret_items=0, retired=0)
    register(paths, run_spec(paths, "run-001", "a", ITEMS))
    return paths


def test_labels_committed_blind_are_published_with_a_report_the_verifier_recomputes(
    prog: Paths, tmp_path: Path
) -> None:
    done = register_label_set(prog, labels_file(prog.data.parent), "run-001", "humans-1", LABEL_AT)
    assert (done.labels, done.labellers, done.dimensions) == (7, 2, ("completeness", "correctness"))
    private = prog.label_set_file("humans-1")
    assert oct(private.stat().st_mode & 0o777) == "0o600"
    leaf = loads_strict(prog.ledger_file.read_bytes().splitlines()[-1])
    assert leaf == {
        "type": "label-set",
        "v": 2,
        "id": "humans-1",
        "run": "run-001",
        "sha256": sha256_hex(private.read_bytes()),
        "at": LABEL_AT,
    }
    certify(prog, results("run-001", [judged(i) for i in ITEMS]))
    out = tmp_path / "site"
    build(prog, out)
    report = verify_site(out)
    assert report.ok, report.render()
    assert any("label set humans-1" in n and "recomputed exactly" in n for n in report.notes), report.notes
    # Byte for byte the committed label set, and a report of the figures worked out here.
    assert (out / "agreement" / "humans-1" / "labels.json").read_bytes() == private.read_bytes()
    doc = loads_strict((out / "agreement" / "humans-1.json").read_bytes())
    assert doc["labels"] == {"path": "agreement/humans-1/labels.json", "sha256": leaf["sha256"]}
    rows = {r["dimension"]: r for r in doc["dimensions"]}
    cor = rows["correctness"]
    assert (cor["sample_size"], cor["pairs"], cor["human_labels_without_judge"]) == (3, 5, 0)
    assert cor["raw_agreement"] == {"exact": "4/5", "value": "0.800000"}
    judge_side, human_side = [4, 4, 2, 2, 1], [4, 4, 2, 3, 1]
    for weights, key in (("linear", "kappa_linear"), ("quadratic", "kappa_quadratic")):
        k = cohen_kappa(judge_side, human_side, SCALE, weights)  # type: ignore[arg-type]
        assert k is not None and Fraction(cor[key]["exact"]) == k
    alpha = krippendorff_alpha_ordinal([[4, 4, 4], [2, 2, 3], [1, 1, None]], SCALE)
    assert alpha is not None and Fraction(cor["alpha_ordinal"]["exact"]) == alpha
    assert cor["disagreements"] == [{"item": "a-002", "labeller": "h2", "human": 3, "judge": 2}]
    com = rows["completeness"]
    assert (com["sample_size"], com["raw_agreement"]) == (2, {"exact": "1/2", "value": "0.500000"})
    # The report command shows the same document the build published.
    assert label_set_report(prog, "humans-1").report == doc
    text = CliRunner().invoke(main, ["--data", str(prog.data), "agreement", "report", "humans-1"])
    assert text.exit_code == 0, text.output
    assert "raw agreement: 0.800000 (4/5)" in text.output
    assert "published by the next build" in text.output
    # The certificate page shows the report, parsed as a browser would; the methodology page explains it.
    page = BeautifulSoup((out / "certificates" / "run-001" / "index.html").read_bytes(), "html.parser")
    section = page.select_one("section#agreement")
    assert section is not None
    cells = {
        tr.th.get_text(strip=True): [td.get_text(" ", strip=True) for td in tr.select("td")]
        for tr in section.select("tbody tr")
    }
    assert cells["correctness"][0] == "3 items, 5 judge–human pairs"
    assert cells["correctness"][1] == "0.800000 (= 4/5)"
    assert cells["correctness"][-1] == "a-002: h2 said 3, the judge 2"
    assert section.select_one('a[href$="agreement/humans-1.json"]') is not None
    methodology = BeautifulSoup((out / "methodology" / "index.html").read_bytes(), "html.parser")
    assert methodology.select_one("section#agreement #term-kappa") is not None


def test_labels_after_the_certificate_are_refused_and_fail_the_verifier(prog: Paths, tmp_path: Path) -> None:
    certify(prog, results("run-001", [judged(i) for i in ITEMS]))
    err = refused(
        lambda: register_label_set(prog, labels_file(prog.data.parent), "run-001", "late", "2026-03-03T00:00:00Z"),
        prog.data,
    )
    named(err, "has already disclosed the judge's scores: labels committed now would not be blind", "")
    # An operator who writes the leaf anyway: the shared replay refuses the ledger.
    leaf = {
        "type": "label-set",
        "v": 2,
        "id": "late",
        "run": "run-001",
        "sha256": "00" * 32,
        "at": "2026-03-03T00:00:00Z",
    }
    with prog.ledger_file.open("ab") as f:
        f.write(json.dumps(leaf, separators=(",", ":"), sort_keys=True).encode() + b"\n")
    with pytest.raises(InputError) as info:
        build(prog, tmp_path / "site")
    assert "human labels must be committed blind" in info.value.describe()


def test_a_changed_figure_or_label_fails_verification_naming_it(prog: Paths, tmp_path: Path) -> None:
    register_label_set(prog, labels_file(prog.data.parent), "run-001", "humans-1", LABEL_AT)
    certify(prog, results("run-001", [judged(i) for i in ITEMS]))
    out = tmp_path / "site"
    build(prog, out)
    signer = load_key(prog.key_file)
    path = out / "agreement" / "humans-1.json"
    good = path.read_bytes()
    doc = loads_strict(good)
    doc["dimensions"][1]["kappa_quadratic"] = {"exact": "1", "value": "1.000000"}
    path.write_bytes(json.dumps(doc, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode())
    resign_sums(out, signer)
    report = verify_site(out)
    hits = [f for f in report.failures if f.file == "agreement/humans-1.json"]
    assert [f.where for f in hits] == ["dimensions[1].kappa_quadratic"], report.render()
    assert "recomputed from the published labels (correctness)" in hits[0].message
    path.write_bytes(good)
    labels = out / "agreement" / "humans-1" / "labels.json"
    ldoc = loads_strict(labels.read_bytes())
    ldoc["labels"][0]["label"] = 1
    labels.write_bytes(json.dumps(ldoc, separators=(",", ":"), sort_keys=True).encode())
    resign_sums(out, signer)
    report = verify_site(out)
    assert [f.message for f in report.failures if f.file == "agreement/humans-1/labels.json"] == [
        "label set humans-1 is not the one committed in the ledger at entries[" + str(_label_index(prog)) + "]"
    ], report.render()
    labels.unlink()
    path.unlink()
    resign_sums(out, signer)
    report = verify_site(out)
    assert any(f.file == "agreement/humans-1/labels.json" and "missing" in f.message for f in report.failures)


def _label_index(paths: Paths) -> int:
    lines = paths.ledger_file.read_bytes().splitlines()
    return next(i for i, raw in enumerate(lines) if b'"type":"label-set"' in raw)


def test_a_secret_gate_publishes_labels_only_when_every_item_is_revealed(
    make_program: Callable[..., Paths], tmp_path: Path
) -> None:
    paths = make_program(public_items=1, secret_items=10, retired=0)
    register(paths, run_spec(paths, "run-s", "b", SECRET10))
    rows = [("h1", i, "correctness", 3) for i in SECRET10]
    register_label_set(paths, labels_file(paths.data.parent, rows), "run-s", "blind-s", LABEL_AT)
    certify(paths, results("run-s", [{**scored(i), "judge_labels": {"correctness": 3}} for i in SECRET10]))
    salt = loads_strict(paths.label_set_file("blind-s").read_bytes())["salt"].encode()
    out = tmp_path / "site"
    build(paths, out)
    assert verify_site(out).ok
    assert not (out / "agreement").exists()
    assert not [p for p in out.rglob("*") if p.is_file() and salt in p.read_bytes()]
    assert not label_set_report(paths, "blind-s").due
    # Published early by the operator: the verifier fails it.
    early = out / "agreement" / "blind-s.json"
    early.parent.mkdir()
    early.write_bytes(b"{}")
    resign_sums(out, load_key(paths.key_file))
    assert [f.file for f in verify_site(out).failures] == ["agreement/blind-s.json"]
    retire_items(paths, SECRET10[:9], "Retired after use.", "2026-03-10T00:00:00Z")
    build(paths, out)
    assert verify_site(out).ok and not (out / "agreement").exists()
    retire_items(paths, SECRET10[9:], "Retired after use.", "2026-03-11T00:00:00Z")
    build(paths, out)
    report = verify_site(out)
    assert report.ok, report.render()
    doc = loads_strict((out / "agreement" / "blind-s.json").read_bytes())
    row = doc["dimensions"][0]
    # Everyone said 3: agreement is total, and kappa and alpha are undefined (no disagreement was possible).
    assert (row["sample_size"], row["raw_agreement"]["exact"], row["kappa_linear"], row["alpha_ordinal"]) == (
        10,
        "1",
        None,
        None,
    )


@pytest.mark.parametrize(
    ("rows", "scale", "where", "text"),
    [
        ([("h1", "a-001", "correctness", 5)], SCALE, "labels[0].label", "a label is one of the scale's categories"),
        ([("h1", "a-009", "correctness", 1)], SCALE, "labels[0].item", "labels an item that is not the run's"),
        ([("h1", "a-001", "c", True)], SCALE, "labels[0].label", "a label is one of the scale's categories"),
        ([("H 1", "a-001", "c", 1)], SCALE, "labels[0].labeller", "a labeller is an id"),
        ([("h1", "a-001", "c", 1), ("h1", "a-001", "c", 2)], SCALE, "labels[1]", "labels item a-001 on c twice"),
        ([("h1", "a-001", "c", 1)], [3, 2, 1], "scale", "is not strictly increasing"),
        ([("h1", "a-001", "c", 1)], [1], "scale", "2 to 101 integers"),
    ],
)
def test_bad_labels_are_refused_naming_the_row(
    prog: Paths, rows: list[tuple[str, str, str, Any]], scale: Any, where: str, text: str
) -> None:
    src = labels_file(prog.data.parent, rows, scale)
    err = refused(lambda: register_label_set(prog, src, "run-001", "humans-1", LABEL_AT), prog.data)
    named(err, text, where)


def test_judge_labels_must_be_integers_and_on_the_scale(prog: Paths) -> None:
    for bad in ({"correctness": True}, {"correctness": 2.5}, {}, {"Correctness": 2}):
        row = {**scored("a-001"), "judge_labels": bad}
        err = refused(
            lambda row=row: certify(prog, results("run-001", [row, judged("a-002"), judged("a-003")])), prog.data
        )
        assert any("judge_labels" in p.where for p in err.problems), err.describe()
    register_label_set(prog, labels_file(prog.data.parent), "run-001", "humans-1", LABEL_AT)
    off = {**scored("a-001"), "judge_labels": {"correctness": 9}}
    err = refused(lambda: certify(prog, results("run-001", [off, judged("a-002"), judged("a-003")])), prog.data)
    named(err, "not on the scale of label set humans-1")


def test_a_judge_left_silent_where_it_would_disagree_is_refused_and_fails(
    prog: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leaving out the judge's label of an item the humans labelled would raise every figure:
    certify refuses it, and a certificate forged to drop it, re-signed, fails the verifier."""
    import generator.build.gather
    import generator.program.agreement_reports
    from generator.build.writer import SiteWriter
    from generator.commands.build import write_site
    from generator.verifier.rules.recheck import Recheck
    from tests.support.forgery import forge

    register_label_set(prog, labels_file(prog.data.parent), "run-001", "humans-1", LABEL_AT)
    silent = {**judged("a-002"), "judge_labels": {"completeness": 3}}  # no correctness label
    err = refused(lambda: certify(prog, results("run-001", [judged("a-001"), silent, judged("a-003")])), prog.data)
    named(err, "the judge did not label scored item a-002 on correctness, which label set humans-1 measures it on")
    certify(prog, results("run-001", [judged(i) for i in ITEMS]))
    forge(prog, "run-001", lambda c: c["results"][1]["judge_labels"].pop("correctness"))
    with monkeypatch.context() as m:
        m.setattr(generator.build.gather, "examine_certificate", lambda *a, **k: Recheck())
        m.setattr(generator.program.agreement_reports, "judge_coverage_problems", lambda *a: [])
        write_site(generator.build.gather.gather(prog), SiteWriter(tmp_path / "site"))
    report = verify_site(tmp_path / "site")
    assert any(
        f.file == "agreement/humans-1.json" and "the judge did not label scored item a-002 on correctness" in f.message
        for f in report.failures
    ), report.render()


def test_too_many_dimensions_are_refused(prog: Paths) -> None:
    """A rubric has a few dimensions: a label set or a judge with more cannot make a verifier
    compute for hours."""
    rows = [("h1", "a-001", f"d{n:03d}", 1) for n in range(65)]
    err = refused(
        lambda: register_label_set(prog, labels_file(prog.data.parent, rows), "run-001", "wide", LABEL_AT), prog.data
    )
    named(err, "too many rubric dimensions", "labels")
    wide = {**scored("a-001"), "judge_labels": {f"d{n:03d}": 1 for n in range(65)}}
    err = refused(lambda: certify(prog, results("run-001", [wide, judged("a-002"), judged("a-003")])), prog.data)
    named(err, "too many rubric dimensions")


def test_register_reports_every_problem_at_its_row_in_the_file(prog: Paths) -> None:
    rows = [("h1", "a-002", "correctness", 3), ("h1", "a-001", "correctness", 5), ("h2", "a-009", "correctness", 1)]
    src = labels_file(prog.data.parent, rows)
    err = refused(lambda: register_label_set(prog, src, "run-001", "Bad Id", LABEL_AT), prog.data)
    assert {(p.file, p.where) for p in err.problems} >= {
        ("--id", ""),
        (prog.show(src), "labels[1].label"),
        (prog.show(src), "labels[2].item"),
    }, err.describe()
    err = refused(
        lambda: register_label_set(prog, labels_file(prog.data.parent, rows, [1, 1]), "run-001", "x", LABEL_AT),
        prog.data,
    )
    assert {p.where for p in err.problems} >= {"scale", "labels[2].item"}, err.describe()


def test_a_malformed_committed_label_set_is_refused_not_a_crash(prog: Paths) -> None:
    """An operator who commits a document that is no label set: certify and the report refuse
    it by name."""
    bad = json.dumps({"type": "label-set", "labels": "none"}, separators=(",", ":"), sort_keys=True).encode()
    prog.label_set_file("odd").parent.mkdir(parents=True, exist_ok=True)
    prog.label_set_file("odd").write_bytes(bad)
    leaf = {"type": "label-set", "v": 2, "id": "odd", "run": "run-001", "sha256": sha256_hex(bad), "at": LABEL_AT}
    with prog.ledger_file.open("ab") as f:
        f.write(json.dumps(leaf, separators=(",", ":"), sort_keys=True).encode() + b"\n")
    err = refused(lambda: certify(prog, results("run-001", [judged(i) for i in ITEMS])), prog.data)
    assert any(p.file == prog.show(prog.label_set_file("odd")) for p in err.problems), err.describe()


def test_a_stray_file_under_agreement_fails(prog: Paths, tmp_path: Path) -> None:
    """A report of labels no ledger entry committed would read as evidence it is not."""
    register_label_set(prog, labels_file(prog.data.parent), "run-001", "humans-1", LABEL_AT)
    certify(prog, results("run-001", [judged(i) for i in ITEMS]))
    out = tmp_path / "site"
    build(prog, out)
    (out / "agreement" / "humans-2.json").write_bytes((out / "agreement" / "humans-1.json").read_bytes())
    (out / "agreement" / "humans-1" / "deeper").mkdir()
    (out / "agreement" / "humans-1" / "deeper" / "x.json").write_bytes(b"{}")
    resign_sums(out, load_key(prog.key_file))
    report = verify_site(out)
    assert sorted(f.file for f in report.failures if "no label set of the ledger has" in f.message) == [
        "agreement/humans-1/deeper",
        "agreement/humans-2.json",
    ], report.render()
