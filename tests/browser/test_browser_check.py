"""The in-browser checks (generator/verifier/browser/check.js, FORMAT.md "In-browser verification").

Under Node 20, whose WebCrypto is the browser's: the JavaScript recomputes every demo certificate
as the Python verifier does, field by field, and agrees with generator/verifier/rules/scoring.py on
edge cases built with it (the pass threshold, the grade cut-offs and band edges, the minimum
scored fraction, the Wilson interval's clamps and rounding); its Merkle and canonical-JSON code
passes the project's vectors; on the demo site a genuine artifact passes and each tamper fails at
its own step, with the words the Python verifier uses. In Chromium (tests/support/browser.py): the
"Verify in this browser" control and the check-a-file page, pristine and tampered, by mouse and
by keyboard, from a server and from file://.

Node or Chromium missing skips these tests, saying why; with CI set they fail instead.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import itertools
import json
import math
import random
import re
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from generator.core import layout
from generator.core.proofs import inclusion_proof
from generator.core.signing_key import parse_signer_key
from generator.verifier import (
    band_score,
    grade_counts,
    keep_bullets,
    leaf_hash,
    loads_strict,
    parse_methodology,
    verify_site,
)
from generator.verifier.core.errors import NoteError
from generator.verifier.core.note import note_signature_line, open_note
from generator.verifier.core.public_keys import PUBLISHED_PRIVATE_KEYS, parse_vkey
from generator.verifier.rules.scoring import (
    computed_similarity,
    round_half_up,
    score_item,
    similarity_value,
    wilson_interval,
)
from generator.verifier.tlog.policy import parse_policy
from generator.verifier.tlog.tlogproof import format_tlog_proof, parse_tlog_proof
from generator.verifier.tlog.witnessing import policy_problems
from tests.support.browser import Browsing, browser, serve
from tests.support.check_js import OUTCOMES, failed_step, forged_demo, harness_page, js, press_verify, steps_of
from tests.support.demo import REPO, BuiltSite

VECTORS = REPO / "tests" / "vectors"
DEMO_WITNESS = "witness.demo.example.org"  # the key name of the demo witness's lines
METHODOLOGY = REPO / "data" / "methodology" / "2026.1.json"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def jcs(value: Any) -> bytes:
    """Canonical JSON under format v1 §1's number rules (FORMAT.md, reading 15)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def fraction_text(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def methodology_doc() -> dict[str, Any]:
    return json.loads(METHODOLOGY.read_bytes())


# ---------------------------------------------------------------------------------------------
# 1. The verdict: JavaScript equals Python


def test_every_demo_certificate_is_recomputed_as_python_recomputes_it(demo_site: BuiltSite) -> None:
    out = demo_site.out
    manifest = json.loads((out / layout.MANIFEST).read_bytes())
    report = verify_site(out)
    assert report.ok, report.render()
    m = parse_methodology(loads_strict(METHODOLOGY.read_bytes()))
    certificates = [json.loads((out / row["path"]).read_bytes()) for row in manifest["certificates"]]
    assert {c["verdict"] for c in certificates} == {"certified", "not-certified", "incomplete"}
    assert {c["score_rule"] for c in certificates} == {"as-proposed", "clamped", "midpoint-fallback"}
    seen_asserted: list[str] = []
    for row, cert in zip(manifest["certificates"], certificates, strict=True):
        serial = row["serial"]
        outcome = js("page", site=str(out), kind="certificate", path=row["path"])
        steps = steps_of(outcome)
        assert outcome["status"] in ("valid", "revoked", "not-certified"), outcome
        assert steps["Recomputing the verdict"]["status"] == "passed", outcome
        # What JavaScript cannot recompute is what Python reports as asserted, word for word.
        asserted = [a for a in report.asserted if a.startswith(f"certificate {serial}:")]
        assert [s["detail"] for s in outcome["steps"] if s["name"] == "Taken as the certificate states it"] == asserted
        seen_asserted += asserted
        # Field by field, from the certificate's counts: JavaScript, Python and the certificate agree.
        counts = dict(Counter(r["status"] for r in cert["results"]))
        passed = cert["summary"]["passed"]
        g = grade_counts(counts, passed, m)
        record = out / layout.grader_record(serial)
        proposal = json.loads(record.read_bytes())["proposed_json"] if record.is_file() else None
        [jg, jband] = js(
            "scoring",
            methodology=methodology_doc(),
            cases=[["grade_counts", [counts, passed]], ["band_score", [proposal, g.band]]],
        )
        python = {
            "summary": g.summary,
            "grade": g.grade,
            "band": g.band,
            "worst_case_grade": g.worst_case_grade,
            "best_case_grade": g.best_case_grade,
            "verdict": g.verdict,
        }
        assert jg == python
        assert {k: cert[k] for k in python if k != "summary"} == {k: v for k, v in python.items() if k != "summary"}
        assert cert["summary"] == g.summary
        assert jband == list(band_score(proposal, g.band))
        if proposal is not None:
            assert jband == [cert["score"], cert["score_rule"]]
    assert len(seen_asserted) >= 2, (
        "the demo has a sealed certificate with a pass count and a proposal to take as stated"
    )


def _cases_against_python(cases: list[tuple[str, list[Any], Any]]) -> None:
    """Each case run by JavaScript must give what Python gave."""
    got = js("scoring", methodology=methodology_doc(), cases=[[fn, args] for fn, args, _ in cases])
    wrong = [(fn, args, want, have) for (fn, args, want), have in zip(cases, got, strict=True) if have != want]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, first: {wrong[:3]}"


def test_wilson_interval_at_every_count_and_at_its_clamps() -> None:
    """Every x of every n up to 60, and large n at and next to the clamps at 0 % and 100 %, where a
    bound lands on or beyond the edge; the half-up rounding at the fifth decimal in between."""
    pairs = [(x, n) for n in range(61) for x in range(n + 1)]
    for n in (97, 100, 999, 1000, 10**6, 10**9, 2**53 - 1):
        pairs += [(x, n) for x in sorted({0, 1, 2, n // 3, n // 2, n - 2, n - 1, n})]
    cases = [("wilson", [x, n], wilson_interval(x, n)) for x, n in pairs]
    assert cases[0][2] == ["0.0000", "100.0000"]
    assert {c[2][0] for c in cases if c[1][0] == 0} == {"0.0000"} and {
        c[2][1] for c in cases if c[1][0] == c[1][1]
    } == {"100.0000"}
    _cases_against_python(cases)


def test_isqrt_and_half_up_rounding() -> None:
    rng = random.Random(20261201)
    big = [rng.getrandbits(bits) for bits in (1, 2, 8, 64, 130, 270, 600) for _ in range(5)]
    big += [k * k + d for k in (10**40, 2**200 + 1, 196 * 10**38) for d in (-1, 0, 1)]
    cases: list[tuple[str, list[Any], Any]] = [("isqrt", [str(n)], str(math.isqrt(n))) for n in big if n >= 0]
    fractions = [Fraction(rng.randrange(0, 10**9), rng.randrange(1, 10**6)) for _ in range(300)]
    # Exactly half a unit of the last place, and a hair either side of it.
    fractions += [
        Fraction(2 * k + 1, 2 * 10**p) + e for k in (0, 7, 12345) for p in (4, 6) for e in (0, Fraction(1, 10**12))
    ]
    fractions += [Fraction(2 * k + 1, 2 * 10**p) - Fraction(1, 10**12) for k in (7, 12345) for p in (4, 6)]
    for x in fractions:
        for places in (0, 4, 6):
            cases.append(("round", [str(x.numerator), str(x.denominator), places], round_half_up(x, places)))
    _cases_against_python(cases)


def test_grades_and_verdicts_at_every_cut_off_band_and_scored_fraction() -> None:
    """Every split of up to 24 results into scored, passed and each non-scored status: the pass rate
    meets each cut-off exactly and misses it by one result, the scored fraction meets 0.9 exactly
    (9 of 10, 18 of 20) and misses it; plus 100 results at each cut-off and one below."""
    m = parse_methodology(loads_strict(METHODOLOGY.read_bytes()))
    non_scored = ["infra_error", "not_run", "missing_label", "excluded"]
    splits = []
    for total in range(1, 25):
        for scored in range(total + 1):
            rest = total - scored
            counts = {"scored": scored} if scored else {}
            for i in range(rest):  # the non-scored spread over the statuses, so each is counted
                counts[non_scored[i % 4]] = counts.get(non_scored[i % 4], 0) + 1
            splits += [(dict(counts), passed) for passed in range(scored + 1)]
    for cut in (90, 75, 55, 35):
        splits += [({"scored": 100}, cut), ({"scored": 100}, cut - 1), ({"scored": 99, "excluded": 1}, cut)]
    cases = []
    for counts, passed in splits:
        g = grade_counts(counts, passed, m)
        want = {
            "summary": g.summary,
            "grade": g.grade,
            "band": g.band,
            "worst_case_grade": g.worst_case_grade,
            "best_case_grade": g.best_case_grade,
            "verdict": g.verdict,
        }
        cases.append(("grade_counts", [counts, passed], want))
    verdicts = Counter(c[2]["verdict"] for c in cases)
    assert all(verdicts[v] > 100 for v in ("certified", "not-certified", "incomplete")), verdicts
    assert {c[2]["grade"] for c in cases} == {"S", "A", "B", "C", "D"}
    _cases_against_python(cases)


def test_band_scores_at_and_beyond_every_band_edge() -> None:
    bands = [[96, 100], [85, 95], [70, 84], [55, 69], [0, 54], [7, 7]]
    proposals: list[str | None] = [None, "", "90.0", "9e1", "true", '"90"', "-0", "090", " 90", "1" * 21, "-1"]
    proposals += ["9007199254740991", "9007199254740992", "-9007199254740991", "-9007199254740992", "0"]
    cases = []
    for band in bands:
        lo, hi = band
        for p in [*proposals, *(str(v) for v in (lo - 1, lo, lo + 1, (lo + hi) // 2, hi - 1, hi, hi + 1))]:
            cases.append(("band_score", [p, band], list(band_score(p, band))))
    assert {c[2][1] for c in cases} == {"as-proposed", "clamped", "midpoint-fallback"}
    _cases_against_python(cases)


def test_item_scores_at_the_threshold_and_the_floors() -> None:
    """Every pair and some triples of fields over the tiers and a set of similarities holding the
    threshold (0.85) exactly and a millionth either side, the high floor (0.8), ratios and 1.000."""
    m = parse_methodology(loads_strict(METHODOLOGY.read_bytes()))
    sims = ["0", "1", "1.000", "0.85", "0.849999", "0.850001", "0.8", "0.799999", "1/2", "2/3", "5/7", "0.5", "0.93"]
    tiers = ["critical", "high", "low"]
    fields = [(t, s) for t in tiers for s in sims]
    groups = [[f] for f in fields] + [list(p) for p in itertools.combinations(fields, 2)]
    rng = random.Random(7)
    groups += [rng.sample(fields, 3) for _ in range(300)]
    cases = []
    for group in groups:
        named = [(f"f{i}", tier, s) for i, (tier, s) in enumerate(group)]
        s = score_item([(n, t, similarity_value(v)) for n, t, v in named], m)
        want = {"score": fraction_text(s.score), "text": s.text, "passed": s.passed, "below": list(s.below_floor)}
        cases.append(("score_item", [list(f) for f in named], want))
    exact = [c for c in cases if c[2]["score"] == "17/20"]
    assert any(c[2]["passed"] for c in exact) and any(not c[2]["passed"] for c in exact), "the threshold itself is met"
    _cases_against_python(cases)


def test_similarities_and_bullets() -> None:
    values: list[Any] = [1, True, "1", None, 0, False, "", [1], [True], {"a": 1}, {"a": True}, "ü", "u\u0308"]
    cases: list[tuple[str, list[Any], Any]] = []
    for a, b in itertools.product(values, repeat=2):
        for kind, tier in (("scalar", "low"), ("text", "critical"), ("array", "critical")):
            cases.append(("similarity", [kind, tier, a, b], computed_similarity(kind, tier, a, b)))
    lists = [[], [1], [1, 2], [2, 1, 1], ["1"], [True, 1], [None], ["a", "b", "c"], ["c", "d"], 5]
    for a, b in itertools.product(lists, repeat=2):
        cases.append(("similarity", ["array", "high", a, b], computed_similarity("array", "high", a, b)))
    bullets: list[Any] = [
        None,
        "x",
        [],
        [{"text": "t", "evidence_refs": ["a-001"]}],
        [{"text": "t", "evidence_refs": []}, {"text": 1, "evidence_refs": ["a-001"]}],
        [{"text": "t", "evidence_refs": ["a-001"], "x": 1}, {"evidence_refs": ["a-001"]}, "bullet"],
        [{"text": "t", "evidence_refs": ["a-001", "a-009"]}, {"text": "t", "evidence_refs": ["a-002"]}],
    ]
    for b in bullets:
        kept, dropped = keep_bullets(b, {"a-001", "a-002"})
        cases.append(("keep_bullets", [b, ["a-001", "a-002"]], [len(kept), dropped]))
    _cases_against_python(cases)


# ---------------------------------------------------------------------------------------------
# The standards' vectors


def test_merkle_proofs_pass_the_rfc6962_vectors() -> None:
    v = json.loads((VECTORS / "rfc6962_merkle.json").read_bytes())
    leaves = [leaf_hash(bytes.fromhex(d)).hex() for d in v["leaves"]]
    roots = {r["size"]: r["root"] for r in v["roots"]}
    cases, want = [], []
    for c in v["inclusion"] + v["derived_inclusion_all"]:
        cases.append(
            {
                "op": "inclusion",
                "index": c["index"],
                "size": c["size"],
                "leaf_hash": leaves[c["index"]],
                "proof": c["proof"],
            }
        )
        want.append(roots[c["size"]])
    for c in v["consistency"] + v["derived_consistency_all"]:
        old = c["size1"]
        cases.append({"op": "consistency", "old_size": old, "new_size": c["size2"], "proof": c["proof"],
                      "old_root": roots.get(old, v["empty_root"]), "new_root": roots[c["size2"]]})  # fmt: skip
        want.append("ok")
    for c in v["negative"]:
        if c["type"] == "inclusion":
            cases.append({**c, "op": "inclusion"})
        else:
            cases.append({"op": "consistency", "old_size": c["size1"], "new_size": c["size2"], "proof": c["proof"],
                          "old_root": c["root1"], "new_root": c["root2"]})  # fmt: skip
    got = js("merkle", cases=cases)
    positive = len(cases) - len(v["negative"])
    assert got[:positive] == want[:positive]
    # A negative inclusion case must not lead to its root; a negative consistency case must be refused.
    accepted = [
        (c["description"], g)
        for c, g in zip(v["negative"], got[positive:], strict=True)
        if g == c.get("root", "ok") or (c["type"] == "consistency" and not g.startswith("error: "))
    ]
    assert not accepted, accepted
    assert any(g.startswith("error: ") for g in got[positive:])


def test_canonical_json_as_the_rfc8785_vectors_and_the_number_rules() -> None:
    v = json.loads((VECTORS / "rfc8785_jcs.json").read_bytes())
    eligible = [c["canonical"] for c in v["cases"] if c["project_eligible"]]
    refused: list[Any] = [c["input"] for c in v["non_canonical"]]
    refused += [c["input"] if "input" in c else {"hex": c["input_hex"]} for c in v["malformed"]]
    refused += [
        '{"a":1,"a":1}',
        "1.0",
        "1e2",
        '{"b":1,"a":2}',
        " {}",
        '"\\u00e9"',
        '"\\ud800"',
        "9007199254740992",
        "-0",
    ]
    got = js("canonical", texts=eligible + refused)
    assert got[: len(eligible)] == eligible
    assert got[len(eligible) :] == [None] * len(refused)


# ---------------------------------------------------------------------------------------------
# 2. Proofs and signatures under Node, on the demo site and tampered copies


@pytest.fixture
def site_copy(demo_site: BuiltSite, tmp_path: Path) -> Path:
    out = tmp_path / "site"
    shutil.copytree(demo_site.out, out)
    return out


def _notes(site: Path) -> list[Path]:
    """Today's checkpoint and every file that carries it verbatim (each inclusion proof)."""
    return [site / layout.CHECKPOINT, *sorted(site.rglob("*.tlog-proof"))]


def edit_checkpoints(site: Path, edit: Callable[[str, list[str]], list[str]]) -> None:
    """Change today's checkpoint's signature lines (given its text and them), everywhere it is
    published, consistently."""
    old = (site / layout.CHECKPOINT).read_bytes()
    text, _, sigs = old.decode().rpartition("\n\n")
    new = (text + "\n\n" + "".join(line + "\n" for line in edit(text + "\n", sigs.splitlines()))).encode()
    for f in _notes(site):
        data = f.read_bytes()
        assert data.endswith(old), f
        f.write_bytes(data[: len(data) - len(old)] + new)


def log_lines_only(text: str, lines: list[str]) -> list[str]:
    """The log's own signature lines (Ed25519, and ML-DSA-44 once it has that key): no witness's."""
    origin = text.split("\n", 1)[0]
    return [line for line in lines if line.split(" ")[1] == origin]


def ed25519_witness_line(lines: list[str]) -> int:
    """Where the demo witness's Ed25519 cosignature is (4 + 8 + 64 bytes), among the signature lines."""
    (found,) = [
        i
        for i, line in enumerate(lines)
        if line.split(" ")[1] == DEMO_WITNESS and len(base64.b64decode(line.split(" ")[2])) == 76
    ]
    return found


def flip_log_signature(text: str, lines: list[str]) -> list[str]:
    name, b64 = lines[0][2:].split(" ")
    raw = bytearray(base64.b64decode(b64))
    raw[20] ^= 1  # inside the signature, after the 4-byte key ID
    return [f"\u2014 {name} {base64.b64encode(bytes(raw)).decode()}", *lines[1:]]


@pytest.mark.slow
def test_genuine_artifacts_pass(demo_site: BuiltSite) -> None:
    out = demo_site.out
    manifest = json.loads((out / layout.MANIFEST).read_bytes())
    for row in manifest["reveals"]:
        outcome = js("page", site=str(out), kind="reveal", path=row["path"])
        assert outcome["status"] == "valid", outcome
        assert {s["status"] for s in outcome["steps"]} == {"passed"}, outcome["steps"]
        assert outcome["text"].startswith(f"Valid: reveal document {row['id']} is entry ")
    revoked = {r["serial"] for r in json.loads((out / layout.REVOCATIONS).read_bytes())["revocations"]}
    lines = (out / layout.CHECKPOINT).read_text(encoding="utf-8").split("\n\n", 1)[1].splitlines()
    witness_line = lines[ed25519_witness_line(lines)]
    timestamp = int.from_bytes(base64.b64decode(witness_line.split(" ")[-1])[4:12], "big")
    cosigned_at = datetime.datetime.fromtimestamp(timestamp, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for row in manifest["certificates"]:
        outcome = js("page", site=str(out), kind="certificate", path=row["path"])
        verdict = json.loads((out / row["path"]).read_bytes())["verdict"]
        want = "revoked" if row["serial"] in revoked else "valid" if verdict == "certified" else "not-certified"
        assert outcome["status"] == want, outcome
        detail = steps_of(outcome)["Checking witness cosignatures"]["detail"]
        assert f"cosigned by demo-witness (at {cosigned_at})" in detail, detail
        assert "; the quorum of ledger/policy.txt holds" in detail, detail


def test_a_changed_reveal_byte_fails_its_hash_step_and_the_certificates_that_use_it(site_copy: Path) -> None:
    path = site_copy / layout.reveal("a-001")
    commitment = sha(path.read_bytes())
    path.write_bytes(path.read_bytes().replace(b"Park Ji-hoon", b"Park Ji-hoom", 1))
    step = failed_step(js("page", site=str(site_copy), kind="reveal", path=layout.reveal("a-001")))
    assert step["name"] == "Recomputing its SHA-256"
    assert step["detail"] == f"SHA-256 of the file is {sha(path.read_bytes())} but the ledger leaf binds {commitment}"
    step = failed_step(js("page", site=str(site_copy), kind="certificate", path=layout.certificate("quill-a-1")))
    assert step["name"] == "Fetching the run spec, methodology and revealed answers"
    assert (
        step["detail"]
        == f"SHA-256 of reveals/a-001.json is {sha(path.read_bytes())} but its ledger leaf binds {commitment}"
    )


def describe_problem(p: Any) -> str:
    """A Python Problem in the words check.js gives a problem in."""
    text = f"{p.where}: {p.message}" if p.where else p.message
    return text + (f" (expected {p.expected}, found {p.found})" if p.expected is not None else "")


def test_a_changed_score_re_signed_with_the_demo_keys_fails_the_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = forged_demo(tmp_path, "ledgerlens-a-1", "score", 90, monkeypatch)
    rel = layout.certificate("ledgerlens-a-1")
    python = [f for f in verify_site(out).failures if f.file == rel]
    assert [(f.where, f.expected, f.found) for f in python] == [("score", "91", "90")]
    outcome = js("page", site=str(out), kind="certificate", path=rel)
    # hash, proof, signatures, witnesses, inputs: all valid
    assert len(outcome["steps"]) >= 7 and {s["status"] for s in outcome["steps"][:-1]} == {"passed"}
    step = failed_step(outcome)
    assert step["name"] == "Recomputing the verdict"
    assert step["detail"] == "; ".join(describe_problem(p) for p in python)
    assert (
        step["detail"]
        == 'score: score does not follow from the proposal "91" and the band [85, 95] (expected 91, found 90)'
    )


def test_a_re_signed_pass_count_on_a_sealed_certificate_fails_as_python_fails_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = forged_demo(tmp_path, "orca-b-1", "summary.pass_rate", "60.0000", monkeypatch)
    rel = layout.certificate("orca-b-1")
    python = [f for f in verify_site(out).failures if f.file == rel]
    assert python
    step = failed_step(js("page", site=str(out), kind="certificate", path=rel))
    assert step["name"] == "Recomputing the verdict"
    assert step["detail"] == "; ".join(describe_problem(p) for p in python[:3])


def test_a_wrong_checkpoint_signature_fails_the_signature_step(site_copy: Path) -> None:
    edit_checkpoints(site_copy, flip_log_signature)
    active = next(k for k in json.loads((site_copy / layout.KEYS).read_bytes())["keys"] if k["status"] == "active")
    with pytest.raises(NoteError) as python:
        open_note((site_copy / layout.CHECKPOINT).read_bytes(), [parse_vkey(active["vkey"])])
    for kind, path in (("certificate", layout.certificate("orca-b-1")), ("reveal", layout.reveal("b-0003"))):
        step = failed_step(js("page", site=str(site_copy), kind=kind, path=path))
        assert step["name"] == "Checking the checkpoint signature"
        assert (
            step["detail"]
            == str(python.value)
            == ("signature by transparency.example.org/extraction (key ID f4adf3c0) does not verify")
        )


def test_a_missing_witness_cosignature_fails_the_witness_step(site_copy: Path) -> None:
    edit_checkpoints(site_copy, log_lines_only)
    active = next(k for k in json.loads((site_copy / layout.KEYS).read_bytes())["keys"] if k["status"] == "active")
    key = parse_vkey(active["vkey"])
    python = policy_problems(
        parse_policy((site_copy / layout.POLICY).read_bytes()),
        key.name,
        key.public_key,
        (site_copy / layout.CHECKPOINT).read_bytes(),
    )
    step = failed_step(js("page", site=str(site_copy), kind="certificate", path=layout.certificate("ledgerlens-b-1")))
    assert step["name"] == "Checking witness cosignatures"
    names = sorted(w.name for w in parse_policy((site_copy / layout.POLICY).read_bytes()).witnesses)
    # What is missing first, and that the files may still be authentic; then verify.py's words.
    assert step["detail"] == (
        f"not yet cosigned by witness{'es' if len(names) > 1 else ''} {', '.join(names)}: the checkpoint does not meet "
        "the site's trust policy (ledger/policy.txt); the file itself may still be authentic. In verify.py's words: "
        f"{python[0]}"
    )
    assert python[0].endswith(f"cosigned by no witness of the policy; missing: {', '.join(names)}")


def test_a_bad_cosignature_fails_the_witness_step(site_copy: Path) -> None:
    def spoil(text: str, lines: list[str]) -> list[str]:
        at = ed25519_witness_line(lines)
        name, b64 = lines[at][2:].split(" ")
        raw = bytearray(base64.b64decode(b64))
        raw[40] ^= 1
        return [*lines[:at], f"\u2014 {name} {base64.b64encode(bytes(raw)).decode()}", *lines[at + 1 :]]

    edit_checkpoints(site_copy, spoil)
    step = failed_step(js("page", site=str(site_copy), kind="reveal", path=layout.reveal("a-002")))
    assert step["name"] == "Checking witness cosignatures"
    assert step["detail"] == (
        "a cosignature by a witness of the policy does not verify: Ed25519 cosignature by witness.demo.example.org "
        "(key ID ad2a3522) does not verify"
    )


def tree_size(site: Path) -> int:
    """Today's tree size, from the checkpoint's second line: the demo grows as format v2 does."""
    return int((site / layout.CHECKPOINT).read_text(encoding="utf-8").split("\n")[1])


def old_key_line(text: str) -> str:
    """A signature of the checkpoint text by the demo's first key, rotated out and since revoked,
    whose private half is published like every demo key's."""
    old = parse_signer_key((REPO / "data" / "private" / "retired-keys" / "a5b0512e.key").read_text().strip())
    return note_signature_line(old.name, old.key_id, old.sign(text.encode())).rstrip("\n")


def test_a_checkpoint_signed_by_a_revoked_key_fails(site_copy: Path) -> None:
    """With the leaked old key, today's checkpoint can be signed again: that key was revoked by an
    entry of this very tree, so its signature fails the checkpoint even beside the active key's."""
    edit_checkpoints(site_copy, lambda text, lines: [lines[0], old_key_line(text), *lines[1:]])
    step = failed_step(js("page", site=str(site_copy), kind="reveal", path=layout.reveal("a-001")))
    assert step["name"] == "Checking the checkpoint signature"
    assert step["detail"] == (
        "signed by SHA256:1f4dd2f8d7bced8f341897bd961d73084b9ae5ec03a172e574d197012b534c13, revoked (Demo: this "
        "key's private half is published in the repository, as every demo key is.): that key cannot sign a tree that "
        f"records its revocation, this one has {tree_size(site_copy)} entries"
    )


def test_a_checkpoint_the_active_key_did_not_sign_fails(site_copy: Path) -> None:
    """Signed by a retired key alone (keys.json edited to call the old key retired, not revoked):
    the key valid for today's tree, the newest, must sign it, as rotation.py's signer_problems says."""
    keys = json.loads((site_copy / layout.KEYS).read_bytes())
    del keys["keys"][0]["reason"]
    keys["keys"][0]["status"] = "retired"
    (site_copy / layout.KEYS).write_bytes(jcs(keys))
    edit_checkpoints(site_copy, lambda text, lines: [old_key_line(text), *lines[1:]])
    step = failed_step(js("page", site=str(site_copy), kind="reveal", path=layout.reveal("a-001")))
    assert step["name"] == "Checking the checkpoint signature"
    assert step["detail"] == (
        "not signed by SHA256:13fa4089af669bb603a137d0ff19e2ff39fa83fc2fd6947f0454bd6b240a7183, the key valid for a "
        f"tree of {tree_size(site_copy)} entries"
    )


def test_what_cannot_be_checked_is_never_valid(site_copy: Path) -> None:
    (site_copy / layout.KEYS).unlink()
    outcome = js("page", site=str(site_copy), kind="certificate", path=layout.certificate("orca-b-1"))
    assert outcome["status"] == "could-not-check"
    assert outcome["steps"][-1] == {
        "index": 0,
        "name": "Fetching the certificate",
        "status": "unavailable",
        "detail": "the site has no keys.json",
    }
    assert outcome["text"].startswith("Could not check this certificate: the site has no keys.json.")


def test_a_browser_without_ed25519_could_not_check(demo_site: BuiltSite) -> None:
    outcome = js("page", site=str(demo_site.out), kind="reveal", path=layout.reveal("a-001"), no_ed25519=True)
    assert outcome["status"] == "could-not-check", outcome
    step = outcome["steps"][-1]
    assert (step["name"], step["status"]) == ("Checking the checkpoint signature", "unavailable")
    assert "has no Ed25519" in step["detail"] and "Valid" not in outcome["text"]


# ---------------------------------------------------------------------------------------------
# The check-a-file page's logic under Node


def test_a_sent_file_is_found_in_the_ledger_or_rejected(demo_site: BuiltSite, tmp_path: Path) -> None:
    out = demo_site.out
    for rel, status in (
        (layout.certificate("quill-a-2"), "not-certified"),
        (layout.reveal("b-0011"), "valid"),
        (layout.tlog_proof(layout.reveal("a-003")), "valid"),
    ):
        outcome = js("file", site=str(out), file=str(out / rel))
        assert outcome["status"] == status, outcome
        assert "It says: " in outcome["text"]
    proof = js("file", site=str(out), file=str(out / layout.tlog_proof(layout.certificate("orca-b-1"))))
    assert proof["status"] == "not-certified", proof
    assert proof["text"].startswith("Authentic: this result was not certified: its certificate entry ")
    assert steps_of(proof)["Recomputing the verdict"]["status"] == "passed"
    assert "It says: Orca Parser 3.1 by Orca Systems: not certified, grade B" in proof["text"]

    cert = json.loads((out / layout.certificate("quill-a-2")).read_bytes())
    cert["verdict"] = "certified"
    sent = tmp_path / "forged.json"
    sent.write_bytes(jcs(cert))
    step = failed_step(js("file", site=str(out), file=str(sent)))
    assert step["name"] == "Recomputing its SHA-256"
    assert step["detail"].startswith(f"SHA-256 of the file is {sha(sent.read_bytes())} but the ledger leaf binds ")

    sent.write_text(json.dumps(json.loads((out / layout.certificate("quill-a-2")).read_bytes()), indent=2))
    step = failed_step(js("file", site=str(out), file=str(sent)))
    assert step["name"] == "Reading the file" and step["detail"].startswith(
        "this JSON is not in canonical form (RFC 8785)"
    )

    cert["serial"] = "quill-a-9"
    sent.write_bytes(jcs(cert))
    step = failed_step(js("file", site=str(out), file=str(sent)))
    assert step["name"] == "Finding it in this program's ledger"
    assert (
        step["detail"]
        == "this program's ledger has no certificate quill-a-9: the site has no certificates/quill-a-9.json.tlog-proof"
    )

    proof_bytes = (out / layout.tlog_proof(layout.reveal("a-003"))).read_bytes()
    p = parse_tlog_proof(proof_bytes)
    sent.write_bytes(format_tlog_proof(p.extra, p.index, [bytes(32), *p.hashes[1:]], p.checkpoint))
    step = failed_step(js("file", site=str(out), file=str(sent)))
    assert step["name"] == "Checking the inclusion proof" and step["detail"].startswith("the proof leads to root ")


# ---------------------------------------------------------------------------------------------
# What an outcome may call valid


def test_outcome_statuses_are_the_ones_the_page_waits_for() -> None:
    assert js("constants", fingerprints=[])["outcomes"] == [
        "valid",
        "revoked",
        "expired",
        "not-certified",
        "failed",
        "could-not-check",
    ]
    assert all(f"'{s}'" in OUTCOMES for s in js("constants", fingerprints=[])["outcomes"])


def test_the_demo_key_fingerprints_are_the_python_verifiers() -> None:
    other = "SHA256:" + "ab" * 32
    got = js("constants", fingerprints=[*sorted(PUBLISHED_PRIVATE_KEYS), other])
    assert sorted(got["demo_keys"]) == sorted(PUBLISHED_PRIVATE_KEYS)
    *demo, plain = got["key_words"]
    for fingerprint, words in zip(sorted(PUBLISHED_PRIVATE_KEYS), demo, strict=True):
        assert words == (
            f"Signed by the key this site publishes, {fingerprint}; compare this fingerprint with one you obtained "
            "elsewhere. This is the published demo key: its signatures prove nothing."
        )
    assert plain == (
        f"Signed by the key this site publishes, {other}; compare this fingerprint with one you obtained elsewhere."
    )


def test_every_authentic_outcome_names_the_key_it_was_checked_against(demo_site: BuiltSite) -> None:
    out = demo_site.out
    active = next(k for k in json.loads((out / layout.KEYS).read_bytes())["keys"] if k["status"] == "active")
    fingerprint = parse_vkey(active["vkey"]).fingerprint
    assert fingerprint in PUBLISHED_PRIVATE_KEYS
    words = (
        f" Signed by the key this site publishes, {fingerprint}; compare this fingerprint with one you obtained "
        "elsewhere. This is the published demo key: its signatures prove nothing. "
    )
    outcomes = [
        js("page", site=str(out), kind="certificate", path=layout.certificate(s))
        for s in ("ledgerlens-a-1", "ledgerlens-b-1", "orca-b-1", "quill-a-1")
    ]
    outcomes += [
        js("page", site=str(out), kind="reveal", path=layout.reveal("a-001")),
        js("file", site=str(out), file=str(out / layout.tlog_proof(layout.reveal("a-003")))),
    ]
    for outcome in outcomes:
        assert outcome["status"] in ("valid", "revoked", "not-certified"), outcome
        assert words in outcome["text"], outcome["text"]


def test_a_result_that_was_not_certified_is_authentic_not_valid(demo_site: BuiltSite) -> None:
    out = demo_site.out
    for serial, head in (
        ("orca-b-1", "Authentic: this result was not certified: result orca-b-1 is entry "),
        ("quill-a-1", "Authentic: this result was not decided (incomplete): result quill-a-1 is entry "),
    ):
        outcome = js("page", site=str(out), kind="certificate", path=layout.certificate(serial))
        assert outcome["status"] == "not-certified", outcome
        assert outcome["text"].startswith(head), outcome["text"]
        assert "Valid" not in outcome["text"]


def test_an_expired_certificate_is_authentic_but_expired(demo_site: BuiltSite) -> None:
    rel = layout.certificate("ledgerlens-b-1")
    expires = json.loads((demo_site.out / rel).read_bytes())["expires_at"]
    assert expires == "2027-11-20T09:00:00Z"
    before = js("page", site=str(demo_site.out), kind="certificate", path=rel, now="2027-11-20T08:59:59Z")
    assert before["status"] == "valid", before
    outcome = js("page", site=str(demo_site.out), kind="certificate", path=rel, now="2027-11-20T09:00:01Z")
    assert outcome["status"] == "expired", outcome
    assert outcome["text"].startswith(
        f"Authentic, but expired on {expires} (by this computer's clock): certificate ledgerlens-b-1 is entry "
    )
    assert "Valid" not in outcome["text"]
    assert {s["status"] for s in outcome["steps"]} <= {"passed", "skipped"}


@pytest.mark.parametrize("missing", [layout.REVOCATIONS, layout.REVOCATIONS + ".sig"])
def test_without_the_revocation_list_no_certificate_is_valid(site_copy: Path, tmp_path: Path, missing: str) -> None:
    """FORMAT.md: every site publishes the list and its signature. Without them a revoked
    certificate would read as valid: its absence is a could-not-check, for a revoked certificate,
    a certified one, and one reached through a proof sent alone."""
    (site_copy / missing).unlink()
    runs = [
        js("page", site=str(site_copy), kind="certificate", path=layout.certificate("ledgerlens-a-1")),
        js("page", site=str(site_copy), kind="certificate", path=layout.certificate("ledgerlens-b-1")),
        js("file", site=str(site_copy), file=str(site_copy / layout.certificate("ledgerlens-a-1"))),
        js("file", site=str(site_copy), file=str(site_copy / layout.tlog_proof(layout.certificate("ledgerlens-a-1")))),
    ]
    for outcome in runs:
        assert outcome["status"] == "could-not-check", outcome
        step = outcome["steps"][-1]
        assert (step["name"], step["status"]) == ("Checking revocations", "unavailable"), step
        assert step["detail"].startswith(f"the site has no {missing}, ")
        assert "Valid" not in outcome["text"] and "Authentic" not in outcome["text"]


def test_a_genuine_file_of_another_kind_could_not_be_checked_here(demo_site: BuiltSite) -> None:
    out = demo_site.out
    cert = json.loads((out / layout.certificate("ledgerlens-b-1")).read_bytes())
    for rel, kind in (
        (layout.details(cert["serial"], "b-0002"), "details document"),
        (cert["run_spec"]["path"], "run spec"),
        (f"methodology/{cert['methodology']['version']}.json", "methodology parameter file"),
        (layout.grader_record(cert["serial"]), "grader record"),
        (layout.CHECKPOINT, "checkpoint"),
    ):
        assert (out / rel).is_file(), rel
        outcome = js("file", site=str(out), file=str(out / rel))
        assert outcome["status"] == "could-not-check", outcome
        step = outcome["steps"][-1]
        assert (step["name"], step["status"]) == ("Reading the file", "unavailable"), step
        assert step["detail"] == (
            "this page checks certificates, reveals and .tlog-proof files; this looks like a "
            f"{kind}: verify it with verify.py"
        )


def test_a_huge_proof_is_refused_before_its_lines_are_read(demo_site: BuiltSite, tmp_path: Path) -> None:
    out = demo_site.out
    p = parse_tlog_proof((out / layout.tlog_proof(layout.reveal("a-003"))).read_bytes())
    sent = tmp_path / "huge.tlog-proof"
    too_many = r"no tree below 2\^63 leaves needs more than 63$"
    for extra, count, detail in (
        (p.extra, 420_000, r"^\d+ bytes: a proof of at most 63 hashes and one checkpoint is far smaller than 1 MiB$"),
        (p.extra, 100, r"^more than 63 hashes: " + too_many),
        (p.extra, 64, r"^more than 63 hashes: " + too_many),
        # Within the cap on lines (no extra line), refused by its count of hashes.
        (None, 64, r"^64 hashes: " + too_many),
    ):
        sent.write_bytes(format_tlog_proof(extra, p.index, [bytes(32)] * count, p.checkpoint))
        step = failed_step(js("file", site=str(out), file=str(sent)))
        assert step["name"] == "Reading the file" and re.match(detail, step["detail"]), step


def _old_proof(site: Path, index: int, size: int) -> bytes:
    """A proof of leaf `index` against the archived checkpoint of `size` entries, as a release
    of that size published it."""
    entries = json.loads((site / layout.ENTRIES).read_bytes())["entries"]
    raw = [jcs(e) for e in entries[:size]]
    path = inclusion_proof([leaf_hash(r) for r in raw], index)
    return format_tlog_proof(raw[index], index, path, (site / layout.archived_checkpoint(size)).read_bytes())


def test_a_proof_against_an_older_checkpoint_is_followed_to_today(site_copy: Path, tmp_path: Path) -> None:
    """The archived checkpoint of 87 entries was signed by the key since revoked (valid then): the
    proof holds in that tree, and a consistency proof made from the site's hash tiles takes it to
    today's; the site's own consistency files are not read."""
    sent = tmp_path / "old.tlog-proof"
    sent.write_bytes(_old_proof(site_copy, 21, 87))
    shutil.rmtree(site_copy / "ledger" / "consistency")
    outcome = js("file", site=str(site_copy), file=str(sent))
    assert outcome["status"] == "valid", outcome
    steps = steps_of(outcome)
    size = tree_size(site_copy)
    assert steps["Checking it is part of today's ledger"]["detail"] == (
        f"the consistency proof from 87 to {size} entries made from the site's hash tile ledger/tile/0/000.p/{size} "
        f"proves that the tree of 87 entries begins today's tree of {size}"
    )
    assert steps["Checking the checkpoint signature"]["detail"].startswith("signed by SHA256:1f4dd2f8")
    assert steps["Checking which key may sign an older tree"]["status"] == "skipped"

    tile = site_copy / layout.tile(f"tile/0/000.p/{size}")
    tile.write_bytes(bytes(32) + tile.read_bytes()[32:])
    step = failed_step(js("file", site=str(site_copy), file=str(sent)))
    assert step["name"] == "Checking it is part of today's ledger"
    assert re.fullmatch(
        f"the consistency proof from 87 to {size} entries made from the site's hash tile ledger/tile/0/000.p/{size}: "
        "the proof leads to root [A-Za-z0-9+/]{43}=, not [A-Za-z0-9+/]{43}=",
        step["detail"],
    ), step


# ---------------------------------------------------------------------------------------------
# 3. In Chromium

CERTIFICATE = layout.certificate("ledgerlens-b-1")  # a secret gate, every item revealed, a clamped score
REVEAL = layout.reveal("b-0002")  # one of its items


@dataclass
class Sites:
    """The demo site and its tampered copies, each served, in one browser: by name, where it is
    served, its folder, and the pages of CERTIFICATE and REVEAL."""

    served: dict[str, Browsing]
    folders: dict[str, Path]
    pages: dict[str, tuple[str, str]]


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory, demo_site: BuiltSite) -> Iterator[Sites]:
    root = tmp_path_factory.mktemp("browser-check")
    folders = {}
    for name in ("pristine", "reveal", "signature", "witness"):
        folders[name] = root / name
        shutil.copytree(demo_site.out, folders[name])
    reveal = folders["reveal"] / REVEAL
    reveal.write_bytes(reveal.read_bytes().replace(b'"gate":"b"', b'"gate": "b"', 1))
    edit_checkpoints(folders["signature"], flip_log_signature)
    edit_checkpoints(folders["witness"], log_lines_only)
    with pytest.MonkeyPatch.context() as monkeypatch:
        folders["score"] = forged_demo(root / "forged", "ledgerlens-b-1", "score", 94, monkeypatch)
    pages = {
        n: (harness_page(f, "certificate", CERTIFICATE), harness_page(f, "reveal", REVEAL)) for n, f in folders.items()
    }
    with browser() as chromium, ExitStack() as stack:
        served = {n: Browsing(stack.enter_context(serve(f)), chromium) for n, f in folders.items()}
        yield Sites(served, folders, pages)


def test_verify_in_this_browser_says_valid_on_the_pristine_site(sites: Sites) -> None:
    for page, says in zip(
        sites.pages["pristine"], ("follows from its results", "It says: item b-0002 of gate b"), strict=True
    ):
        text, steps = press_verify(sites.served["pristine"], page)
        assert text.startswith("Valid: ") and says in text, (text, steps)
        # Each status in words, after a symbol that is hidden from screen readers: never colour alone.
        words = [s["text"].split(" ", 1)[1].split(":")[0] for s in steps]
        assert set(words) <= {"passed", "not checkable here"} and "passed" in words, steps


@pytest.mark.parametrize(
    ("site", "which", "step", "detail"),
    [
        ("reveal", 1, "Recomputing its SHA-256", "SHA-256 of the file is "),
        ("reveal", 0, "Fetching the run spec, methodology and revealed answers", f"SHA-256 of {REVEAL} is "),
        (
            "signature",
            0,
            "Checking the checkpoint signature",
            "signature by transparency.example.org/extraction (key ID ",
        ),
        (
            "witness",
            1,
            "Checking witness cosignatures",
            "not yet cosigned by witness",
        ),
        ("score", 0, "Recomputing the verdict", "score: a clamped score is a band edge (expected 85 or 95, found 94)"),
    ],
)
def test_verify_in_this_browser_names_each_tamper(sites: Sites, site: str, which: int, step: str, detail: str) -> None:
    text, steps = press_verify(sites.served[site], sites.pages[site][which])
    failed = [s for s in steps if s["status"] == "failed"]
    assert len(failed) == 1 and failed[0] == steps[-1], steps
    assert failed[0]["text"].startswith(f"✗ failed: {step} ({detail}"), failed[0]
    noun = "certificate" if which == 0 else "reveal document"
    assert text.startswith(f'Not valid: this {noun} failed "{step}": {detail}'), text


def test_the_check_page_accepts_a_genuine_file_and_rejects_a_forged_one(sites: Sites, tmp_path: Path) -> None:
    folder = sites.folders["pristine"]
    tab = sites.served["pristine"].open(layout.CHECK_PAGE, 390)
    page = tab.page
    section = "document.querySelector('[data-file-check]')"

    def check(file: Path, keyboard: bool) -> str:
        page.evaluate(f"{section}.dataset.outcome = 'none'")
        if keyboard:  # the drop zone is reached and used by keyboard
            with page.expect_file_chooser() as chooser:
                page.locator("[data-check-drop]").focus()
                page.keyboard.press("Enter")
            chooser.value.set_files(str(file))
        else:
            page.get_by_label(re.compile("^Choose a certificate")).set_input_files(str(file))
        page.wait_for_function(f"({OUTCOMES})({section})", timeout=60_000)
        return str(page.locator("[data-file-check] [aria-live=polite]").inner_text())

    assert check(folder / CERTIFICATE, keyboard=False).startswith("Valid: certificate ledgerlens-b-1 is entry ")
    assert check(folder / layout.tlog_proof(REVEAL), keyboard=True).startswith("Valid: its commit entry ")
    forged = tmp_path / "ledgerlens-b-1.json"
    forged.write_bytes((folder / CERTIFICATE).read_bytes().replace(b'"score":95', b'"score":85'))
    text = check(forged, keyboard=True)
    assert text.startswith('Not valid: this file failed "Recomputing its SHA-256": SHA-256 of the file is '), text
    tab.close()


def _outcome_in(context: Any, url: str) -> str:
    page = context.new_page()
    page.goto(url)
    page.get_by_role("button", name=re.compile("in this browser$")).click()
    page.wait_for_function(f"({OUTCOMES})(document.querySelector('[data-browser-check]'))", timeout=60_000)
    return str(page.locator("[data-browser-check] [aria-live=polite]").inner_text())


def test_from_a_file_or_without_ed25519_the_browser_could_not_check(sites: Sites) -> None:
    b = sites.served["pristine"]
    page = sites.pages["pristine"][1]
    context = b.chromium.new_context()
    try:
        text = _outcome_in(context, (sites.folders["pristine"] / page).as_uri())
        assert text.startswith("Could not check this reveal document: this page was opened from a file (file://)"), text
    finally:
        context.close()
    context = b.chromium.new_context()
    try:
        context.add_init_script(
            "const real = crypto.subtle.importKey.bind(crypto.subtle);"
            "crypto.subtle.importKey = (f, k, alg, ...rest) => (alg && alg.name === 'Ed25519')"
            " ? Promise.reject(new DOMException('Unrecognized name', 'NotSupportedError')) : real(f, k, alg, ...rest);"
        )
        text = _outcome_in(context, b.base_url + page)
        assert text.startswith("Could not check this reveal document: this browser's WebCrypto has no Ed25519"), text
    finally:
        context.close()


def test_without_javascript_the_pages_say_how_to_check_with_verify_py(sites: Sites) -> None:
    b = sites.served["pristine"]
    context = b.chromium.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(b.base_url + layout.CHECK_PAGE)
        assert not page.locator("[data-check-controls]").is_visible()
        assert "python3 -P verify.py proof FILE FILE.tlog-proof --key " in page.locator("main").inner_text()
        page.goto(b.base_url + sites.pages["pristine"][0])
        assert not page.get_by_role("button", name=re.compile("in this browser$")).is_visible()
        assert (
            f"python3 -P verify.py proof {CERTIFICATE} {CERTIFICATE}.tlog-proof"
            in page.locator("[data-browser-check]").inner_text()
        )
    finally:
        context.close()


def test_a_malformed_score_edit_re_signed_with_the_demo_keys_fails_as_python_fails_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A certificate's score edits (FORMAT.md, "Score edits") are checked alike by verify.py and
    the page: here one with no value after the edit, an editor who is only white space, and two
    scorers out of order."""
    edits = [
        {"scorer": "sim", "from": 2, "to": 3, "by": "r", "at": "2026-11-29T08:15:00Z", "reason": "why"},
        {"scorer": "judge", "from": 2, "to": None, "by": " \u3000", "at": "2026-11-29T08:15:00Z", "reason": "why"},
    ]
    out = forged_demo(tmp_path, "ledgerlens-a-1", "results.0.score_edits", edits, monkeypatch)
    rel = layout.certificate("ledgerlens-a-1")
    python = [f for f in verify_site(out).failures if f.file == rel]
    assert [(f.where, f.message) for f in python] == [
        ("results[0].score_edits[1].by", "by is who edited the score"),
        ("results[0].score_edits[1].to", "an edit gives the score a value"),
        ("results[0].score_edits", "score edits are sorted by scorer, and each scorer's in the order they were made"),
    ]
    step = failed_step(js("page", site=str(out), kind="certificate", path=rel))
    assert step["name"] == "Recomputing the verdict"
    # The page shows a found value without an expected one too, which describe_problem leaves out.
    assert step["detail"] == "; ".join(
        describe_problem(p) + (f" (found {p.found})" if p.expected is None and p.found is not None else "")
        for p in python
    ), step
