"""`register` refuses every run spec that breaks format v1 §4/§6, naming the rule, and writes nothing.

A refused registration that still appended a leaf or left a spec file behind would put a run
in the ledger that no rule vouches for; so each refusal also compares the data and private
trees, byte for byte, before and after.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.commands.register import register_run, register_runs
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths
from generator.verifier import loads_strict
from tests.support.files import refused, tree
from tests.support.runs import certify, methodology_pin, named, register, results, run_spec, scored, write_json

SECRET10 = [f"b-{i:04d}" for i in range(1, 11)]
LATER = "2026-03-03T00:00:00Z"


def register_refused(paths: Paths, spec: dict[str, Any] | None = None, raw: str | None = None) -> InputError:
    """Register `spec` (or the raw file text), require an InputError and an unchanged tree."""
    if raw is None:
        assert spec is not None
        return refused(lambda: register(paths, spec, LATER), paths.data, paths.private)
    source = paths.data.parent / "in" / "raw-spec.json"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(raw, encoding="utf-8")
    return refused(lambda: register_run(paths, source, LATER), paths.data, paths.private)


def certified(paths: Paths, run_id: str, items: list[str], at: str) -> None:
    certify(paths, results(run_id, [scored(i) for i in items], finished_at=at), at=at)


@pytest.fixture
def prog(make_program: Callable[..., Paths]) -> Paths:
    """Gate a: 3 revealed items; gate b: 12 sealed items plus b-0001 retired."""
    return make_program(public_items=3, secret_items=13, retired=1)


# ---------------------------------------------------------------------------------------------
# The spec alone


@pytest.mark.parametrize(
    ("over", "message", "where"),
    [
        ({"items": []}, "must be a non-empty list of item ids", "items"),
        ({"items": ["a-001", "a-002", "a-001"]}, "items must be distinct", "items"),
        ({"repetitions": 2}, "repetitions is 1 in v1", "repetitions"),
        # Found by the fuzz corpus: the example's `…`, `{…}` and `[…]` are types (FORMAT.md 4).
        ({"question": ["Why?"]}, "must be a non-empty string", "question"),
        ({"question": "  "}, "must be a non-empty string", "question"),
        ({"budget": 7200}, "must be an object", "budget"),
        ({"metrics": "pass_rate"}, "must be a list of strings", "metrics"),
        ({"metrics": [1]}, "must be a list of strings", "metrics"),
        # A member the spec must not have, or the wrong type, is named like every other field.
        ({"extra": 1}, "unknown member 'extra'", "extra"),
        ({"type": "run"}, "wrong type or version", "type"),
    ],
)
def test_spec_shape_is_refused(prog: Paths, over: dict[str, Any], message: str, where: str) -> None:
    spec = {**run_spec(prog, "run-x", "a", ["a-001"]), **over}
    named(register_refused(prog, spec), message, where)


def test_repeated_items_name_the_repeated_id(prog: Paths) -> None:
    err = register_refused(prog, run_spec(prog, "run-x", "a", ["a-001", "a-002", "a-001"]))
    assert any(p.where == "items" and p.found == "a-001" for p in err.problems), err.describe()


def test_malformed_json_is_refused(prog: Paths) -> None:
    err = register_refused(prog, raw='{"type": "run-spec", "id": "run-x",')
    named(err, "malformed JSON")


@pytest.mark.parametrize(
    ("budget", "found"),
    [
        ('{"temperature": 0.5}', "0.5"),
        ('{"max_tokens": 1e3}', "1e3"),
    ],
)
def test_a_fraction_anywhere_in_the_spec_is_refused(prog: Paths, budget: str, found: str) -> None:
    text = json.dumps(run_spec(prog, "run-x", "a", ["a-001"], budget={"max_tokens": "PLACEHOLDER"}))
    raw = text.replace('{"max_tokens": "PLACEHOLDER"}', budget)
    assert budget in raw
    err = register_refused(prog, raw=raw)
    named(err, f"a non-integer number {found}")
    assert "integers only" in err.describe()


def test_a_fraction_is_named_by_its_field_and_hides_no_other_problem(prog: Paths) -> None:
    spec = run_spec(prog, "run-x", "a", ["a-001"])
    spec["subject"]["version"] = "VERSION"
    spec["repetitions"] = 2
    raw = json.dumps(spec, indent=1).replace('"VERSION"', "2.1")
    err = register_refused(prog, raw=raw)
    [p] = [p for p in err.problems if "non-integer" in p.message]
    line = next(n for n, text in enumerate(raw.split("\n"), start=1) if "2.1" in text)
    assert p.where == "subject.version" and p.found == "2.1"
    assert f"(line {line}, column " in p.message
    assert p.expected == 'an integer, or the quantity as a decimal string such as "2.1"'
    named(err, "repetitions is 1 in v1", "repetitions")  # the rest of the file is still checked


def test_a_fraction_with_a_huge_exponent_is_named_without_writing_it_out(prog: Paths) -> None:
    spec = run_spec(prog, "run-x", "a", ["a-001"])
    spec["subject"]["version"] = "VERSION"
    err = register_refused(prog, raw=json.dumps(spec).replace('"VERSION"', "1e999999999"))
    [p] = [p for p in err.problems if "non-integer" in p.message]
    assert p.where == "subject.version" and p.found == "1e999999999"
    assert p.expected == 'an integer, or the quantity as a decimal string such as "0.8"'


def test_an_integer_beyond_2_53_in_the_spec_is_refused(prog: Paths) -> None:
    err = register_refused(prog, run_spec(prog, "run-x", "a", ["a-001"], budget={"max_tokens": 2**60}))
    assert any(p.where.startswith("budget") and p.found == str(2**60) for p in err.problems), err.describe()


# ---------------------------------------------------------------------------------------------
# The spec against the ledger


def test_unknown_methodology_version(prog: Paths) -> None:
    pin = {**methodology_pin(prog), "version": "2099.9"}
    err = register_refused(prog, run_spec(prog, "run-x", "a", ["a-001"], methodology=pin))
    named(err, "pins a methodology version not published before the run", "methodology.version")


def test_wrong_methodology_hash(prog: Paths) -> None:
    pin = {**methodology_pin(prog), "sha256": "00" * 32}
    err = register_refused(prog, run_spec(prog, "run-x", "a", ["a-001"], methodology=pin))
    named(err, "pinned methodology hash differs from the published one", "methodology.sha256")
    p = next(p for p in err.problems if p.where == "methodology.sha256")
    assert (p.expected, p.found) == (methodology_pin(prog)["sha256"], json.dumps("00" * 32))


def test_item_never_committed(prog: Paths) -> None:
    err = register_refused(prog, run_spec(prog, "run-x", "a", ["a-001", "a-999"]))
    named(err, "item a-999 was not committed before the run", "items")


def test_item_of_another_gate(prog: Paths) -> None:
    err = register_refused(prog, run_spec(prog, "run-x", "a", ["a-001", "b-0005"]))
    named(err, "item b-0005 is not of the run's gate", "items")


def test_secret_item_already_revealed(prog: Paths) -> None:
    items = ["b-0001", *SECRET10[1:], "b-0011"]  # b-0001 was retired by the fixture
    err = register_refused(prog, run_spec(prog, "run-x", "b", items))
    named(err, "item b-0001 of a secret gate was already revealed when the run was registered", "items")


def test_too_few_items_on_a_secret_gate(prog: Paths) -> None:
    err = register_refused(prog, run_spec(prog, "run-x", "b", SECRET10[1:]))  # 9 items
    named(err, "too few items for a secret gate", "items")
    p = next(p for p in err.problems if "too few" in p.message)
    assert (p.expected, p.found) == ("at least 10", "9")


@pytest.mark.parametrize("provider", ["ACME ai", "Acme Al", "Acme A1"], ids=["case", "l-for-i", "one-for-i"])
def test_judge_of_the_subjects_own_organization(prog: Paths, provider: str) -> None:
    """The subject's organization "Acme AI", in other case or with a look-alike letter, is
    still the subject's organization."""
    judge = {"provider": provider, "model": "m", "version": "1", "rubric_sha256": "ab" * 32, "seed": None}
    err = register_refused(prog, run_spec(prog, "run-x", "a", ["a-001"], judge=judge))
    named(err, "the judge must be independent of the subject's organization", "judge.provider")


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        (" Acme AI ", "begins or ends with a space"),
        ("Acme\u200b AI", "invisible, control or format"),
        ("Acme  AI", "two in a row"),
        ("Acme A\u0406", "mixes letters of scripts"),
    ],
)
def test_a_judge_provider_that_hides_its_name_is_refused(prog: Paths, provider: str, message: str) -> None:
    judge = {"provider": provider, "model": "m", "version": "1", "rubric_sha256": "ab" * 32, "seed": None}
    named(register_refused(prog, run_spec(prog, "run-x", "a", ["a-001"], judge=judge)), message, "judge.provider")


def test_duplicate_run_id(prog: Paths) -> None:
    register(prog, run_spec(prog, "run-a", "a", ["a-001"]))
    err = register_refused(prog, run_spec(prog, "run-a", "a", ["a-002"], previous_run="run-a"))
    named(err, "run run-a is already registered", "id")


def test_previous_run_naming_no_run(prog: Paths) -> None:
    err = register_refused(prog, run_spec(prog, "run-x", "a", ["a-001"], previous_run="run-nowhere"))
    named(err, "previous_run is not the last run of this subject on this gate", "previous_run")
    p = next(p for p in err.problems if p.where == "previous_run")
    assert (p.expected, p.found) == ("null", '"run-nowhere"')


def test_previous_run_null_after_an_earlier_run(prog: Paths) -> None:
    register(prog, run_spec(prog, "run-a", "a", ["a-001"]))
    certified(prog, "run-a", ["a-001"], "2026-03-02T00:00:00Z")
    err = register_refused(prog, run_spec(prog, "run-b", "a", ["a-002"]))
    named(err, "previous_run is not the last run of this subject on this gate", "previous_run")


def test_previous_run_naming_an_older_attempt(prog: Paths) -> None:
    """Skipping an attempt in the chain would hide it: previous_run must be the last one."""
    register(prog, run_spec(prog, "run-a", "a", ["a-001"]), "2026-03-01T00:00:00Z")
    certified(prog, "run-a", ["a-001"], "2026-03-01T06:00:00Z")
    register(prog, run_spec(prog, "run-b", "a", ["a-002"], previous_run="run-a"), "2026-03-01T12:00:00Z")
    certified(prog, "run-b", ["a-002"], "2026-03-02T00:00:00Z")
    err = register_refused(prog, run_spec(prog, "run-c", "a", ["a-003"], previous_run="run-a"))
    named(err, "previous_run is not the last run of this subject on this gate", "previous_run")
    p = next(p for p in err.problems if p.where == "previous_run")
    assert (p.expected, p.found) == ('"run-b"', '"run-a"')


def test_previous_run_still_open(prog: Paths) -> None:
    register(prog, run_spec(prog, "run-a", "a", ["a-001"]))
    err = register_refused(prog, run_spec(prog, "run-b", "a", ["a-002"], previous_run="run-a"))
    named(err, "registered while the previous run run-a was still open", "previous_run")


def test_secret_item_this_subject_already_ran(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=1, secret_items=20, retired=0)
    items_a = [f"b-{i:04d}" for i in range(1, 11)]
    register(paths, run_spec(paths, "run-a", "b", items_a))
    certified(paths, "run-a", items_a, "2026-03-02T00:00:00Z")
    items_b = [f"b-{i:04d}" for i in range(11, 20)] + ["b-0005"]  # one sealed item seen before
    err = register_refused(paths, run_spec(paths, "run-b", "b", items_b, previous_run="run-a"))
    named(err, "reuses sealed items already run by this subject on this gate in run run-a", "items")
    assert next(p for p in err.problems if "reuses" in p.message).found == "b-0005"


LOOK_ALIKES = [
    ("case", "extractor", "looks like the name of subject extractor"),
    ("spaces", "Extractor ", "begins or ends with a space"),
    ("zero-width space", "Ex\u200btractor", "holds invisible, control or format characters"),
    ("right-to-left override", "\u202eExtractor", "holds invisible, control or format characters"),
    ("Hangul filler", "Extractor\u3164", "holds invisible, control or format characters"),
    ("Cyrillic E", "\u0415xtractor", "mixes letters of scripts that are not written together"),
    ("decomposed", "Extracto\u0072\u0301", "not in Unicode normal form NFC"),
    ("fullwidth", "\uff25xtractor", "holds compatibility characters"),
    ("digit zero for O", "Extract0r", "looks like the name of subject extractor"),
    ("small capital c", "Extra\u1d04tor", "Latin letters made to look like others"),
    ("phonetic r", "Extracto\u027e", "Latin letters made to look like others"),
    ("dental click for l", "Extr\u01c0ctor", "Latin letters made to look like others"),
    ("capitals", "EXTRACTOR", "looks like the name of subject extractor"),
    ("Cyrillic capital T", "Ex\u0422ractor", "mixes letters of scripts"),
]


@pytest.mark.parametrize(("what", "name", "message"), LOOK_ALIKES, ids=[c[0] for c in LOOK_ALIKES])
def test_a_look_alike_subject_cannot_start_a_fresh_chain(
    make_program: Callable[..., Paths], what: str, name: str, message: str
) -> None:
    """A name a reader would take for "Extractor", under a new subject id, would start a new
    chain of attempts and see the same sealed items again; so would the same id under a new
    name. Refused, each naming the rule, by the ledger's own replay rules."""
    paths = make_program(public_items=1, secret_items=12, retired=0)
    items = [f"b-{i:04d}" for i in range(1, 11)]
    register(paths, run_spec(paths, "run-a", "b", items))
    certified(paths, "run-a", items, "2026-03-02T00:00:00Z")
    renamed = {"id": "extractor-2", "name": name, "version": "1.1", "organization": "Acme AI"}
    err = register_refused(paths, run_spec(paths, "run-b", "b", items, subject=renamed))
    named(err, message, "subject.name")


def test_a_subject_keeps_its_name(make_program: Callable[..., Paths]) -> None:
    paths = make_program(public_items=1, secret_items=12, retired=0)
    items = [f"b-{i:04d}" for i in range(1, 11)]
    register(paths, run_spec(paths, "run-a", "b", items))
    certified(paths, "run-a", items, "2026-03-02T00:00:00Z")
    renamed = {"id": "extractor", "name": "Extractor Pro", "version": "1.1", "organization": "Acme AI"}
    err = register_refused(paths, run_spec(paths, "run-b", "b", items, subject=renamed))
    named(err, "subject extractor was registered as 'Extractor': a subject keeps its name", "subject.name")


def test_a_name_in_another_script_that_looks_the_same_is_refused(prog: Paths) -> None:
    """ "Сора" in Cyrillic letters is one script, and reads exactly as the Latin "Copa"."""
    register(
        prog,
        run_spec(
            prog,
            "run-a",
            "a",
            ["a-001"],
            subject={"id": "copa", "name": "Copa", "version": "1", "organization": "Acme AI"},
        ),
    )
    spec = run_spec(
        prog,
        "run-b",
        "a",
        ["a-001"],
        subject={"id": "copa-2", "name": "\u0421\u043e\u0440\u0430", "version": "1", "organization": "Acme AI"},
    )
    named(register_refused(prog, spec), "looks like the name of subject copa", "subject.name")


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        (
            "\u30ab\u30e1\u30e9",
            "\u529b\u30e1\u30e9",
            "looks like the name of subject first",
        ),  # Katakana ka, Han chikara
        ("MARS", "\u13b7\u13aa\u13d2\u13da", "script not recommended for names"),  # Cherokee
        ("Iris", "lris", "looks like the name of subject first"),
    ],
)
def test_look_alikes_across_scripts_and_letters(prog: Paths, first: str, second: str, message: str) -> None:
    register(
        prog,
        run_spec(
            prog,
            "run-a",
            "a",
            ["a-001"],
            subject={"id": "first", "name": first, "version": "1", "organization": "Acme AI"},
        ),
    )
    spec = run_spec(
        prog,
        "run-b",
        "a",
        ["a-001"],
        subject={"id": "second", "name": second, "version": "1", "organization": "Acme AI"},
    )
    named(register_refused(prog, spec), message, "subject.name")


def test_a_subject_needs_an_id(prog: Paths) -> None:
    spec = run_spec(
        prog, "run-x", "a", ["a-001"], subject={"name": "Extractor", "version": "1.0", "organization": "Acme AI"}
    )
    named(register_refused(prog, spec), "missing 'id'", "subject")


@pytest.mark.parametrize(
    "name",
    [
        "LedgerLens 2",
        "한국어 추출기 v2",
        "日本語エクストラクタ",
        "Quill-Extract (beta)",
        "Ünïcödé",
        "Straße GmbH",
        "Łódź AI",
        "株式会社（テスト）",
        "삼성 三星",
        "Phở",
        "GPT-4o mini",
    ],
)
def test_real_names_in_one_script_or_the_usual_mixes_are_accepted(prog: Paths, name: str) -> None:
    reg = register(
        prog,
        run_spec(
            prog,
            "run-x",
            "a",
            ["a-001"],
            subject={"id": "s1", "name": name, "version": "1.0", "organization": "Acme AI"},
        ),
    )
    assert reg.id == "run-x"


# ---------------------------------------------------------------------------------------------
# What is allowed


def test_another_subject_may_use_the_same_sealed_items(prog: Paths) -> None:
    items = [f"b-{i:04d}" for i in range(2, 12)]
    register(prog, run_spec(prog, "run-a", "b", items))
    other = {"id": "other-extractor", "name": "Other Extractor", "version": "2.0", "organization": "Beta Labs"}
    reg = register(prog, run_spec(prog, "run-o", "b", items, subject=other), LATER)
    assert reg.previous_run is None and reg.items == 10
    leaf = loads_strict(prog.ledger_file.read_bytes().splitlines()[-1])
    assert (leaf["type"], leaf["id"], leaf["subject"]) == ("run", "run-o", other)


def test_a_chain_of_attempts_registers_when_each_previous_is_decided(prog: Paths) -> None:
    times = [
        "2026-03-01T00:00:00Z",
        "2026-03-02T00:00:00Z",
        "2026-03-03T00:00:00Z",
        "2026-03-04T00:00:00Z",
        "2026-03-05T00:00:00Z",
    ]
    register(prog, run_spec(prog, "run-a", "a", ["a-001"]), times[0])
    certified(prog, "run-a", ["a-001"], times[1])
    register(prog, run_spec(prog, "run-b", "a", ["a-001", "a-002"], previous_run="run-a"), times[2])
    certified(prog, "run-b", ["a-001", "a-002"], times[3])
    reg = register(prog, run_spec(prog, "run-c", "a", ["a-003"], previous_run="run-b"), times[4])
    assert reg.previous_run == "run-b"
    runs = [json.loads(line) for line in prog.ledger_file.read_bytes().splitlines()]
    assert [e["id"] for e in runs if e["type"] == "run"] == ["run-a", "run-b", "run-c"]
    assert loads_strict((prog.runs_dir / "run-c.json").read_bytes())["previous_run"] == "run-b"


# ---------------------------------------------------------------------------------------------
# The command


def test_cli_refusal_exits_2_and_says_why(prog: Paths) -> None:
    spec = run_spec(prog, "run-x", "a", ["a-001"], methodology={**methodology_pin(prog), "sha256": "00" * 32})
    source = prog.data.parent / "in" / "spec.json"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(json.dumps(spec), encoding="utf-8")
    before = tree(prog.data, prog.private)
    result = CliRunner().invoke(
        main, ["--data", str(prog.data), "--private", str(prog.private), "register", str(source), "--at", LATER]
    )
    assert result.exit_code == 2, result.output
    text = result.output + (result.stderr or "")
    assert "cannot register run run-x; nothing was written" in text
    assert "pinned methodology hash differs from the published one" in text and "[methodology.sha256]" in text
    assert tree(prog.data, prog.private) == before


def test_cli_registers_a_good_spec(prog: Paths) -> None:
    """The counterpart of the refusal: the same command with a valid spec exits 0 and appends."""
    source = prog.data.parent / "in" / "spec.json"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(json.dumps(run_spec(prog, "run-x", "a", ["a-001"])), encoding="utf-8")
    result = CliRunner().invoke(
        main, ["--data", str(prog.data), "--private", str(prog.private), "register", str(source), "--at", LATER]
    )
    assert result.exit_code == 0, result.output
    assert "Registered run run-x (1 items, the subject's first on this gate)" in result.output
    assert (prog.runs_dir / "run-x.json").is_file()


@pytest.mark.parametrize("key", ["model", "version"])
def test_a_judge_model_or_version_that_is_not_text_is_refused(prog: Paths, key: str) -> None:
    judge = {"provider": "Judges Inc", "model": "m", "version": "1", "rubric_sha256": "ab" * 32, "seed": None}
    judge[key] = {"name": "m"}
    err = register_refused(prog, run_spec(prog, "run-x", "a", ["a-001"], judge=judge))
    named(err, "must be a string", f"judge.{key}")


# ---------------------------------------------------------------------------------------------
# Every problem of every spec in one run, and every member the format gives a type


@pytest.mark.parametrize(
    ("over", "where"),
    [
        ({"budget": {"max_wall_clock_seconds": "ten"}}, "budget.max_wall_clock_seconds"),
        ({"budget": {"max_wall_clock_seconds": 0}}, "budget.max_wall_clock_seconds"),
        ({"budget": {"max_output_tokens_per_item": True}}, "budget.max_output_tokens_per_item"),
        ({"gate": ["a"]}, "gate"),
        ({"methodology": {"version": 2026, "sha256": "ab" * 32}}, "methodology.version"),
    ],
)
def test_every_typed_member_is_type_checked(prog: Paths, over: dict[str, Any], where: str) -> None:
    spec = {**run_spec(prog, "run-x", "a", ["a-001"]), **over}
    err = register_refused(prog, spec)
    assert any(p.where == where for p in err.problems), err.describe()


def test_a_spec_with_a_bad_budget_also_gets_its_ledger_problems_and_other_specs_theirs(prog: Paths) -> None:
    """Shape and ledger problems, of two specs, in one run: not three rounds of fix and rerun."""
    first = run_spec(prog, "run-x", "b", ["b-0001", "b-0099"], budget={"max_wall_clock_seconds": "ten"})
    second = run_spec(prog, "run-y", "z", ["a-001"], question=" ")
    second["subject"] = {**second["subject"], "id": "other", "name": "Other"}
    files = [write_json(prog.data.parent / "in" / f"{s['id']}.json", s) for s in (first, second)]
    err = refused(lambda: register_runs(prog, files, LATER), prog.data, prog.private)
    by_file = {(p.file.rsplit("/", 1)[-1], p.where) for p in err.problems}
    assert ("run-x.json", "budget.max_wall_clock_seconds") in by_file, err.describe()  # shape
    assert any("b-0001" in p.message and p.file.endswith("run-x.json") for p in err.problems)  # revealed item
    assert any("b-0099" in p.message for p in err.problems), err.describe()  # never committed
    assert any("too few items" in p.message for p in err.problems), err.describe()
    assert ("run-y.json", "question") in by_file and ("run-y.json", "gate") in by_file, err.describe()


def test_the_verifier_refuses_a_registered_spec_with_an_untyped_budget(verifier: Any) -> None:
    """check_run_spec is the verifier's: a forged ledger whose spec says "ten" fails verify.py."""
    spec = {"max_wall_clock_seconds": "ten"}
    problems = verifier.check_run_spec({"budget": spec})
    assert any(p.where == "budget.max_wall_clock_seconds" for p in problems)
