"""Bad input gets a clear error, and nothing is written.

Every refusal names the file, the field and what was expected; one run lists every problem it
can find, not just the first; and a refused command leaves the ledger, the sealed items and the
published reveals byte for byte as they were.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from generator.cli import main
from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.core.generator_errors import InputError
from generator.core.strict_input import parse_yaml
from generator.program.datadir import Paths
from generator.program.methodology_files import load_params, render_prose
from generator.verifier import Problem, sha256_hex
from tests.support.demo import REPO, BuiltSite
from tests.support.files import refused, tree
from tests.support.programs import item, write_items

AT = "2026-03-01T00:00:00Z"
DEFAULT_PARAMS = REPO / "generator" / "defaults" / "methodology.json"
DEFAULT_PROSE = REPO / "generator" / "defaults" / "methodology.md"


# ---------------------------------------------------------------------------------------------
# Helpers


def field_path(where: str) -> str:
    """A problem's location without the item label: 'items[0] (x-1).answer' -> 'items[0].answer'."""
    return re.sub(r" \([^()]*\)", "", where).replace("..", ".")


def find(problems: list[Problem], file: str, where: str, message: str) -> Problem:
    """The problem located in a file ending with `file`, at `where` (a field path, or a prefix ending
    in ','), whose message contains `message`; fail listing them all if there is none."""
    for p in problems:
        loc = field_path(p.where)
        at = loc.startswith(where) if where.endswith(",") or where.startswith("line ") else loc == where
        if p.file.endswith(file) and at and message in p.message:
            return p
    listing = "\n".join(p.describe() for p in problems)
    pytest.fail(f"no problem in {file} at {where!r} saying {message!r}; got:\n{listing}")


def commit_refused(paths: Paths) -> InputError:
    """Run commit on sources that must be refused; check nothing was written; return the error."""
    e = refused(lambda: commit_new_items(paths, AT), paths.data, paths.private)
    assert "nothing was" in e.summary  # "...; nothing was committed/written"
    return e


@pytest.fixture
def prog(make_program: Callable[..., Paths]) -> Paths:
    """Gates a (public) and b (secret), a-001 revealed and b-0001, b-0002 sealed; plus two valid new
    items waiting in zz-good.yaml, so that a partial commit would show."""
    paths = make_program(public_items=1, secret_items=2, retired=0)
    write_items(paths, [item("new-public", "a"), item("new-secret", "b")], "zz-good.yaml")
    return paths


def write_text(paths: Paths, name: str, text: str) -> Path:
    f = paths.items_dir / name
    f.write_text(text, encoding="utf-8")
    return f


def dump(rows: list[Any]) -> str:
    return yaml.safe_dump({"items": rows}, allow_unicode=True, sort_keys=False)


def amount(**field: Any) -> dict[str, Any]:
    """An item source whose answer is the single field `amount`."""
    return item("bad-1", "b", amount=field)


def without(row: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != key}


# ---------------------------------------------------------------------------------------------
# Item sources fed to commit


@pytest.mark.parametrize(
    "bad_id",
    [
        "../../etc/passwd",
        "a/b",
        "..",
        "A-001",
        "a" * 65,
        "",
        "-abc",
        "_abc",
        "a b",
        "a.json",
        7,
        None,
    ],
)
def test_malformed_item_id(prog: Paths, bad_id: Any) -> None:
    write_text(prog, "bad.yaml", dump([item(bad_id, "b")]))
    e = commit_refused(prog)
    p = find(e.problems, "bad.yaml", "items[0].id", "malformed item id")
    assert p.expected == "^[a-z0-9][a-z0-9_-]{0,63}$"
    assert p.found == json.dumps(bad_id)
    assert all(q.file.endswith("bad.yaml") for q in e.problems)
    # Path traversal never reached the file system.
    assert not (prog.data.parent / "etc").exists()


def test_longest_id_is_accepted(prog: Paths) -> None:
    write_text(prog, "ok.yaml", dump([item("a" * 64, "b")]))
    assert commit_new_items(prog, AT).committed >= 1
    assert b'"id":"' + b"a" * 64 + b'","type":"commit"' in prog.ledger_file.read_bytes()


def test_duplicate_id_in_one_file(prog: Paths) -> None:
    write_text(prog, "bad.yaml", dump([item("dup-1", "b"), item("dup-1", "b")]))
    e = commit_refused(prog)
    p = find(e.problems, "bad.yaml", "items[1].id", "duplicate item id dup-1")
    assert "bad.yaml" in (p.found or "") and "items[0]" in (p.found or "")


def test_duplicate_id_across_files(prog: Paths) -> None:
    write_text(prog, "one.yaml", dump([item("dup-1", "b")]))
    write_text(prog, "two.yaml", dump([item("ok-2", "b"), item("dup-1", "a")]))
    e = commit_refused(prog)
    p = find(e.problems, "two.yaml", "items[1].id", "duplicate item id dup-1")
    assert "one.yaml" in (p.found or "") and "items[0]" in (p.found or "")


ITEM_CASES: list[tuple[str, str, list[Any] | str, str, str]] = [
    # (case, file name, rows or raw text, field path, message)
    ("unknown gate", "bad.yaml", [item("bad-1", "z")], "items[0].gate", "unknown gate"),
    ("malformed gate id", "bad.yaml", [item("bad-1", "Gate-B")], "items[0].gate", "malformed gate id"),
    ("gate missing", "bad.yaml", [without(item("bad-1", "b"), "gate")], "items[0].gate", "malformed gate id"),
    (
        "unknown kind",
        "bad.yaml",
        [amount(kind="number", tier="high", value=1)],
        "items[0].answer.amount.kind",
        "unknown kind",
    ),
    (
        "unknown tier",
        "bad.yaml",
        [amount(kind="scalar", tier="medium", value=1)],
        "items[0].answer.amount.tier",
        "unknown tier",
    ),
    ("missing value", "bad.yaml", [amount(kind="scalar", tier="high")], "items[0].answer.amount", "missing 'value'"),
    (
        "extra member",
        "bad.yaml",
        [amount(kind="scalar", tier="high", value=1, unit="EUR")],
        "items[0].answer.amount",
        "unknown member 'unit'",
    ),
    (
        "scalar holding a list",
        "bad.yaml",
        [amount(kind="scalar", tier="high", value=[1, 2])],
        "items[0].answer.amount.value",
        "scalar field",
    ),
    (
        "text holding an integer",
        "bad.yaml",
        [amount(kind="text", tier="low", value=12)],
        "items[0].answer.amount.value",
        "text field",
    ),
    (
        "array holding an object",
        "bad.yaml",
        [amount(kind="array", tier="low", value=[{"a": 1}])],
        "items[0].answer.amount.value",
        "array field",
    ),
    (
        "array holding a list",
        "bad.yaml",
        [amount(kind="array", tier="low", value=[[1]])],
        "items[0].answer.amount.value",
        "array field",
    ),
    (
        "field that is not an object",
        "bad.yaml",
        [item("bad-1", "b", amount="12")],
        "items[0].answer.amount",
        "must be an object",
    ),
    (
        "float value",
        "bad.yaml",
        [amount(kind="scalar", tier="critical", value=12.5)],
        "items[0].answer.amount.value",
        "non-integer",
    ),
    (
        "float in an array",
        "bad.yaml",
        [amount(kind="array", tier="low", value=["x", 0.5])],
        "items[0].answer.amount.value[1]",
        "non-integer",
    ),
    (
        "integer beyond 2^53-1",
        "bad.yaml",
        [amount(kind="scalar", tier="critical", value=2**53)],
        "items[0].answer.amount.value",
        "beyond",
    ),
    (
        "negative integer beyond",
        "bad.yaml",
        [amount(kind="scalar", tier="critical", value=-(2**53))],
        "items[0].answer.amount.value",
        "beyond",
    ),
    ("missing prompt", "bad.yaml", [without(item("bad-1", "b"), "prompt")], "items[0]", "'prompt' must be a string"),
    ("prompt not a string", "bad.yaml", [item("bad-1", "b", prompt=["a"])], "items[0]", "'prompt' must be a string"),
    (
        "empty answer",
        "bad.yaml",
        [{"id": "bad-1", "gate": "b", "prompt": "p", "answer": {}}],
        "items[0].answer",
        "at least one field",
    ),
    ("missing answer", "bad.yaml", [without(item("bad-1", "b"), "answer")], "items[0].answer", "at least one field"),
    ("unknown key in an item", "bad.yaml", [{**item("bad-1", "b"), "notes": "x"}], "items[0]", "unknown key(s) notes"),
    ("item that is not a mapping", "bad.yaml", ["just a string"], "items[0]", "must be a mapping"),
    (
        "second item of a file",
        "bad.yaml",
        [item("ok-1", "b"), amount(kind="scalar", tier="top", value=1)],
        "items[1].answer.amount.tier",
        "unknown tier",
    ),
    ("unknown top-level key", "bad.yaml", "items: []\nowner: me\n", "", "unknown top-level key(s) owner"),
    ("top level is a list", "bad.yaml", "- id: bad-1\n  gate: b\n", "", "must be a mapping with a list 'items'"),
    ("items is not a list", "bad.yaml", "items: {id: bad-1}\n", "", "must be a mapping with a list 'items'"),
    ("bad indentation", "bad.yaml", "items:\n- id: bad-1\n  gate: b\n   prompt: x\n", "line 4,", "malformed YAML"),
    ("tab indentation", "bad.yaml", "items:\n- id: bad-1\n\tgate: b\n", "line 3,", "malformed YAML"),
    (
        "YAML duplicate key",
        "bad.yaml",
        "items:\n- id: bad-1\n  gate: b\n  id: bad-2\n",
        "line 4,",
        "duplicate key 'id'",
    ),
    ("YAML timestamp tag", "bad.yml", "items:\n- id: !!timestamp 2026-03-04\n", "line 2,", "malformed YAML"),
    ("malformed JSON", "bad.json", '{"items": [{"id": "bad-1",}]}', "", "malformed JSON"),
    ("JSON duplicate key", "bad.json", '{"items": [], "items": []}', "", "duplicate key 'items'"),
    (
        "JSON fraction",
        "bad.json",
        json.dumps({"items": [amount(kind="scalar", tier="high", value=1)]}).replace('"value": 1', '"value": 12.5'),
        "items[0].answer.amount.value",  # named by its field, as a YAML source's would be
        "non-integer number 12.5 (line 1, column ",
    ),
    (
        "JSON item with a bad id",
        "bad.json",
        json.dumps({"items": [item("Bad_1", "b")]}),
        "items[0].id",
        "malformed item id",
    ),
    ("not UTF-8", "bad.yaml", "items:\n- id: caf\udce9\n", "line 2,", "not valid UTF-8"),
]


@pytest.mark.parametrize(
    ("name", "rows", "where", "message"), [c[1:] for c in ITEM_CASES], ids=[c[0] for c in ITEM_CASES]
)
def test_item_source_problem(prog: Paths, name: str, rows: list[Any] | str, where: str, message: str) -> None:
    if isinstance(rows, str):
        (prog.items_dir / name).write_bytes(rows.encode("utf-8", "surrogateescape"))
    else:
        write_text(prog, name, dump(rows))
    e = commit_refused(prog)
    p = find(e.problems, name, where, message)
    assert p.file.endswith(name)
    # Every problem is about the bad file: the valid sources raise none.
    assert all(q.file.endswith(name) for q in e.problems), [q.describe() for q in e.problems]
    # The rendered error names the file, and the field or line.
    text = e.describe()
    assert name in text
    if where:
        assert p.where in text


def test_float_value_message(prog: Paths) -> None:
    """A float amount is refused as a non-integer, with the field's path and the value found."""
    write_text(prog, "bad.yaml", dump([amount(kind="scalar", tier="critical", value=12.5)]))
    e = commit_refused(prog)
    p = find(e.problems, "bad.yaml", "items[0].answer.amount.value", "non-integer")
    assert p.found == "12.5"
    assert "string" in (p.expected or "")


@pytest.mark.parametrize(
    ("rows", "where"),
    [
        ([amount(kind="number", tier="high", value=1)], "items[0].answer.amount.kind"),
        ([amount(kind="scalar", tier="high")], "items[0].answer.amount"),
        ([amount(kind="text", tier="low", value=12)], "items[0].answer.amount.value"),
        ([{"id": "bad-1", "gate": "b", "prompt": "p", "answer": {}}], "items[0].answer"),
        ([amount(kind="scalar", tier="critical", value=12.5)], "items[0].answer.amount.value"),
    ],
    ids=["kind", "missing value", "value type", "empty answer", "float"],
)
def test_field_paths_are_well_formed(prog: Paths, rows: list[Any], where: str) -> None:
    """A problem's location reads as one path: 'items[0] (bad-1).answer.amount.kind', with the item's
    id as a label and no doubled or stray dots, whichever check found it."""
    write_text(prog, "bad.yaml", dump(rows))
    e = commit_refused(prog)
    for p in e.problems:
        assert re.fullmatch(r"items\[\d+\]( \([^()]*\))?(\.[A-Za-z0-9_]+|\[\d+\])*", p.where), p.where
        assert re.sub(r" \([^()]*\)", "", p.where).startswith(where.split(".answer")[0])
    assert any(re.sub(r" \([^()]*\)", "", p.where) == where for p in e.problems), [p.where for p in e.problems]


def test_yaml_error_names_file_and_line(prog: Paths) -> None:
    f = write_text(prog, "bad.yaml", "items:\n- id: bad-1\n  gate: b\n   prompt: x\n")
    e = commit_refused(prog)
    [p] = e.problems
    assert p.file.endswith("bad.yaml") and Path(p.file).name == f.name
    assert p.where.startswith("line 4")
    assert "bad.yaml [line 4" in e.describe()


def test_all_problems_across_two_files(prog: Paths) -> None:
    write_text(
        prog,
        "one.yaml",
        dump(
            [
                item("BAD-ID", "b"),
                item("u-1", "z"),
                item("f-1", "b", amount={"kind": "scalar", "tier": "critical", "value": 12.5}),
                without(item("p-1", "b"), "prompt"),
            ]
        ),
    )
    write_text(
        prog,
        "two.yaml",
        dump(
            [
                item("k-1", "b", amount={"kind": "number", "tier": "high", "value": 1}),
                item("m-1", "b", amount={"kind": "scalar", "tier": "high", "value": 1, "unit": "EUR"}),
                item("f-1", "a"),
                {**item("x-1", "b"), "notes": "x"},
            ]
        ),
    )
    e = commit_refused(prog)
    expected = [
        ("one.yaml", "items[0].id", "malformed item id"),
        ("one.yaml", "items[1].gate", "unknown gate"),
        ("one.yaml", "items[2].answer.amount.value", "non-integer"),
        ("one.yaml", "items[3]", "'prompt' must be a string"),
        ("two.yaml", "items[0].answer.amount.kind", "unknown kind"),
        ("two.yaml", "items[1].answer.amount", "unknown member 'unit'"),
        ("two.yaml", "items[2].id", "duplicate item id f-1"),
        ("two.yaml", "items[3]", "unknown key(s) notes"),
    ]
    for file, where, message in expected:
        find(e.problems, file, where, message)


def test_malformed_file_does_not_hide_other_files(prog: Paths) -> None:
    write_text(prog, "a-broken.yaml", "items:\n- id: x\n  gate: b\n  id: y\n")
    write_text(prog, "b-broken.json", "{not json")
    write_text(prog, "c-items.yaml", dump([item("C-1", "b")]))
    e = commit_refused(prog)
    find(e.problems, "a-broken.yaml", "line 4,", "duplicate key")
    find(e.problems, "b-broken.json", "", "malformed JSON")
    find(e.problems, "c-items.yaml", "items[0].id", "malformed item id")


def test_commit_command_lists_every_problem(prog: Paths) -> None:
    write_text(prog, "one.yaml", dump([item("BAD-ID", "b"), item("u-1", "z")]))
    write_text(prog, "two.yaml", dump([amount(kind="scalar", tier="critical", value=12.5)]))
    before = tree(prog.data, prog.private)
    result = CliRunner().invoke(main, ["--data", str(prog.data), "--private", str(prog.private), "commit", "--at", AT])
    assert result.exit_code == 2, result.output
    err = result.stderr
    assert err.startswith("error:") and "nothing was" in err
    assert "Traceback" not in err
    for text in (
        "one.yaml",
        "two.yaml",
        "items[0].id",
        "malformed item id",
        "BAD-ID",
        "items[1] (u-1).gate",
        "unknown gate",
        "answer.amount.value",
        "non-integer",
        "12.5",
    ):
        assert text in err, text
    assert tree(prog.data, prog.private) == before


# ---------------------------------------------------------------------------------------------
# Methodology parameters


def base_params() -> dict[str, Any]:
    return json.loads(DEFAULT_PARAMS.read_text())


def mutate(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(p: dict[str, Any]) -> None:
        target = p
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = value

    return apply


def _rename_grade(p: dict[str, Any]) -> None:
    p["grade_cutoffs"][2]["grade"] = "A"  # B becomes a second A
    del p["bands"]["B"]


def _drop_band(p: dict[str, Any]) -> None:
    del p["bands"]["C"]


def _extra_band(p: dict[str, Any]) -> None:
    p["bands"]["E"] = [0, 10]


PARAM_CASES: list[tuple[str, Callable[[dict[str, Any]], None], str, str]] = [
    ("weight 0.7a", mutate(["tiers", "high", "weight"], "0.7a"), "tiers.high.weight", "decimal string above 0"),
    ("weight 0", mutate(["tiers", "high", "weight"], "0"), "tiers.high.weight", "above 0"),
    ("weight .5", mutate(["tiers", "low", "weight"], ".5"), "tiers.low.weight", "decimal string"),
    ("floor 1.5", mutate(["tiers", "low", "min_similarity"], "1.5"), "tiers.low.min_similarity", "[0, 1]"),
    ("threshold 2", mutate(["item_threshold"], "2"), "item_threshold", "[0, 1]"),
    ("missing tier", lambda p: p["tiers"].pop("low"), "tiers", "missing 'low'"),
    (
        "cut-offs not descending",
        mutate(["grade_cutoffs", 2, "min_pass_rate"], "80"),
        "grade_cutoffs[2].min_pass_rate",
        "strictly descending",
    ),
    (
        "equal cut-offs",
        mutate(["grade_cutoffs", 1, "min_pass_rate"], "90"),
        "grade_cutoffs[1].min_pass_rate",
        "strictly descending",
    ),
    ("duplicate grades", _rename_grade, "grade_cutoffs", "grades must be distinct"),
    ("lowest grade repeats a cut-off", mutate(["lowest_grade"], "C"), "grade_cutoffs", "grades must be distinct"),
    ("band for an unknown grade", _extra_band, "bands", "band for unknown grade 'E'"),
    ("grade without a band", _drop_band, "bands", "grade 'C' has no band"),
    ("overlapping bands", mutate(["bands", "A"], [80, 96]), "bands.A", "wholly above"),
    ("band min above max", mutate(["bands", "D"], [54, 0]), "bands.D", "min ≤ max"),
    ("band beyond 100", mutate(["bands", "S"], [96, 101]), "bands.S", "≤ 100"),
    ("min_grade not a grade", mutate(["certify", "min_grade"], "Q"), "certify.min_grade", "one of the grades"),
    ("min_scored_fraction 0", mutate(["certify", "min_scored_fraction"], "0"), "certify.min_scored_fraction", "(0, 1]"),
    (
        "min_scored_fraction 1.1",
        mutate(["certify", "min_scored_fraction"], "1.1"),
        "certify.min_scored_fraction",
        "(0, 1]",
    ),
    (
        "min_items_secret_gate 0",
        mutate(["certify", "min_items_secret_gate"], 0),
        "certify.min_items_secret_gate",
        "at least 1",
    ),
    (
        "min_items_secret_gate as text",
        mutate(["certify", "min_items_secret_gate"], "10"),
        "certify.min_items_secret_gate",
        "integer",
    ),
    (
        "independent_judge not a boolean",
        mutate(["certify", "independent_judge"], "yes"),
        "certify.independent_judge",
        "true or false",
    ),
    ("unknown top-level key", mutate(["colour"], "blue"), "", "unknown member 'colour'"),
    ("malformed version", mutate(["version"], "../x"), "version", "malformed version"),
    ("unknown measure", mutate(["text_similarity", "measure"], "euclid"), "text_similarity.measure", "unknown measure"),
]


@pytest.mark.parametrize(("change", "where", "message"), [c[1:] for c in PARAM_CASES], ids=[c[0] for c in PARAM_CASES])
def test_methodology_parameter_problem(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], where: str, message: str
) -> None:
    params = base_params()
    change(params)
    f = tmp_path / "params.json"
    f.write_text(json.dumps(params, ensure_ascii=False, indent=2), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_params(f)
    p = find(info.value.problems, "params.json", where, message)
    assert p.file == str(f)
    assert "params.json" in info.value.describe()


def test_json_weight_number_is_refused(tmp_path: Path) -> None:
    """JSON input is read by the strict parser: a fraction is refused, named by its field."""
    f = tmp_path / "params.json"
    f.write_text(DEFAULT_PARAMS.read_text().replace('"weight": "0.7"', '"weight": 0.7'))
    assert '"weight": 0.7' in f.read_text()
    with pytest.raises(InputError) as info:
        load_params(f)
    [p] = info.value.problems
    assert p.file.endswith("params.json")
    assert "non-integer number 0.7" in p.message and p.where == "tiers.high.weight"
    assert 'a decimal string such as "0.7"' in (p.expected or "")  # says what to write instead


def test_yaml_weight_number_is_refused(tmp_path: Path) -> None:
    params = base_params()
    params["tiers"]["high"]["weight"] = 0.7
    f = tmp_path / "params.yaml"
    f.write_text(yaml.safe_dump(params, sort_keys=False))
    with pytest.raises(InputError) as info:
        load_params(f)
    p = find(info.value.problems, "params.yaml", "tiers.high.weight", "decimal string")
    assert p.found == "0.7"


def test_yaml_parameter_file_is_allowed(tmp_path: Path) -> None:
    params = base_params()
    f = tmp_path / "params.yaml"
    f.write_text(yaml.safe_dump(params, sort_keys=False))
    assert load_params(f) == params
    g = tmp_path / "params.yml"
    g.write_text(yaml.safe_dump(params, sort_keys=True))
    assert load_params(g) == params


def test_all_parameter_problems_of_one_file(tmp_path: Path) -> None:
    params = base_params()
    params["tiers"]["critical"]["weight"] = "0"
    params["tiers"]["low"]["min_similarity"] = "1.5"
    params["grade_cutoffs"][3]["min_pass_rate"] = "60"
    params["certify"]["min_grade"] = "Q"
    params["certify"]["min_scored_fraction"] = "0"
    params["certify"]["min_items_secret_gate"] = 0
    params["colour"] = "blue"
    f = tmp_path / "params.json"
    f.write_text(json.dumps(params))
    with pytest.raises(InputError) as info:
        load_params(f)
    problems = info.value.problems
    for where, message in [
        ("tiers.critical.weight", "above 0"),
        ("tiers.low.min_similarity", "[0, 1]"),
        ("grade_cutoffs[3].min_pass_rate", "strictly descending"),
        ("certify.min_grade", "one of the grades"),
        ("certify.min_scored_fraction", "(0, 1]"),
        ("certify.min_items_secret_gate", "at least 1"),
        ("", "unknown member 'colour'"),
    ]:
        find(problems, "params.json", where, message)
    assert all(p.file == str(f) for p in problems)


def test_publish_command_refuses_bad_parameters(make_program: Callable[..., Paths], tmp_path: Path) -> None:
    paths = make_program(public_items=1, secret_items=1, retired=0)
    params = base_params()
    params["version"] = "2026.2"
    params["tiers"]["high"]["weight"] = "0.7a"
    params["certify"]["min_items_secret_gate"] = 0
    f = tmp_path / "params.json"
    f.write_text(json.dumps(params))
    before = tree(paths.data, paths.private)
    result = CliRunner().invoke(
        main,
        [
            "--data",
            str(paths.data),
            "--private",
            str(paths.private),
            "methodology",
            "publish",
            str(f),
            "--prose",
            str(DEFAULT_PROSE),
            "--at",
            AT,
        ],
    )
    assert result.exit_code == 2, result.output
    err = result.stderr
    assert err.startswith("error:") and "Traceback" not in err
    for text in ("params.json", "tiers.high.weight", "0.7a", "certify.min_items_secret_gate", "at least 1"):
        assert text in err, text
    assert tree(paths.data, paths.private) == before
    assert not (paths.methodology_dir / "2026.2.json").exists()


def test_publish_command_accepts_yaml(make_program: Callable[..., Paths], tmp_path: Path) -> None:
    paths = make_program(public_items=1, secret_items=1, retired=0)
    params = base_params()
    params["version"] = "2026.2"
    f = tmp_path / "params.yaml"
    f.write_text(yaml.safe_dump(params, sort_keys=False))
    result = CliRunner().invoke(
        main,
        [
            "--data",
            str(paths.data),
            "--private",
            str(paths.private),
            "methodology",
            "publish",
            str(f),
            "--prose",
            str(DEFAULT_PROSE),
            "--at",
            AT,
        ],
    )
    assert result.exit_code == 0, result.output
    stored = (paths.methodology_dir / "2026.2.json").read_bytes()
    assert json.loads(stored) == params
    last = json.loads(paths.ledger_file.read_bytes().splitlines()[-1])
    assert last["version"] == "2026.2" and last["sha256"] == sha256_hex(stored)


def test_publish_command_refuses_unknown_placeholder(make_program: Callable[..., Paths], tmp_path: Path) -> None:
    paths = make_program(public_items=1, secret_items=1, retired=0)
    params = base_params()
    params["version"] = "2026.2"
    f = tmp_path / "params.json"
    f.write_text(json.dumps(params))
    prose = tmp_path / "prose.md"
    prose.write_text("# Methodology\n\nThe threshold is {{ item_treshold }}.\n")
    before = tree(paths.data, paths.private)
    result = CliRunner().invoke(
        main,
        [
            "--data",
            str(paths.data),
            "--private",
            str(paths.private),
            "methodology",
            "publish",
            str(f),
            "--prose",
            str(prose),
            "--at",
            AT,
        ],
    )
    assert result.exit_code == 2, result.output
    assert "prose.md" in result.stderr and "item_treshold" in result.stderr
    assert tree(paths.data, paths.private) == before


def test_prose_problems_name_their_lines_and_the_placeholders_there_are() -> None:
    """An unterminated placeholder hides no unknown one, every unknown one is named with its line,
    and each says which names there are."""
    params = base_params()
    prose = "# Methodology\n\nThe threshold is {{ item_threshold\nand {{ no_such_param }}, {{ nor_this }}.\n"
    with pytest.raises(InputError) as e:
        render_prose(prose, params, "prose.md")
    by_name = {p.found: p for p in e.value.problems if p.found}
    assert set(by_name) == {"no_such_param", "nor_this"}
    assert all(p.where == "line 4" and "unknown placeholder" in p.message for p in by_name.values())
    assert "item_threshold" in (by_name["nor_this"].expected or "") and "grades" in (by_name["nor_this"].expected or "")
    assert any(not p.found and p.where.startswith("line ") for p in e.value.problems)  # the syntax error too
    # Loop variables and the whole default prose are not unknown names.
    assert render_prose(DEFAULT_PROSE.read_text(), params, "m.md")


# ---------------------------------------------------------------------------------------------
# Strict YAML


@pytest.mark.parametrize(
    "text",
    [
        "yes",
        "no",
        "on",
        "off",
        "Yes",
        "NO",
        "y",
        "n",
        "12:30",
        "2026-03-04",
        "2026-03-04T10:00:00Z",
        "0x1F",
        "0o17",
        "1_000",
        "+12:00",
        "1e3x",
        ".",
        "<<",
    ],
)
def test_yaml_strings_stay_strings(text: str) -> None:
    assert parse_yaml(f"v: {text}\n", "f.yaml") == {"v": text}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("false", False),
        ("True", True),
        ("FALSE", False),
        ("null", None),
        ("~", None),
        ("", None),
        ("42", 42),
        ("-7", -7),
        ("0", 0),
        ("'42'", "42"),
        ('"yes"', "yes"),
        ("[1, 'a']", [1, "a"]),
    ],
)
def test_yaml_json_compatible_values(text: str, value: Any) -> None:
    got = parse_yaml(f"v: {text}\n", "f.yaml")["v"]
    assert got == value and type(got) is type(value)


def test_yaml_fraction_is_a_float_to_be_refused_later() -> None:
    got = parse_yaml("v: 1.5\n", "f.yaml")["v"]
    assert isinstance(got, float) and got == 1.5


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a: 1\nb: 2\na: 3\n", 3, "duplicate key 'a'"),
        ("items:\n- id: x\n  id: y\n", 3, "duplicate key 'id'"),
        ("a: 1\nb: !!python/object:os.system {}\n", 2, ""),
        ("a: 1\nb: !!python/name:os.system ''\n", 2, ""),
        ("x: !!binary aGVsbG8=\n", 1, "unsupported YAML type"),
        ("x: !!set {a: null}\n", 1, "unsupported YAML type"),
        ("1: one\n", 1, "keys must be strings"),
    ],
)
def test_yaml_refusals_name_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(InputError) as info:
        parse_yaml(text, "src/f.yaml")
    [p] = info.value.problems
    assert p.file == "src/f.yaml"
    assert p.where.startswith(f"line {line},"), p.where
    assert "malformed YAML" in p.message and message in p.message


# ---------------------------------------------------------------------------------------------
# The data directory, read by build


def _edit_ledger_line(paths: Paths, n: int, edit: Callable[[bytes], bytes]) -> None:
    lines = paths.ledger_file.read_bytes().split(b"\n")
    lines[n - 1] = edit(lines[n - 1])
    paths.ledger_file.write_bytes(b"\n".join(lines))


def build_refused(paths: Paths, out: Path) -> InputError:
    e = refused(lambda: build(paths, out), out, paths.data)
    assert not [p for p in out.parent.iterdir() if ".staging-" in p.name or ".old-" in p.name]
    return e


def test_build_reports_every_data_problem_in_one_run(built_program: BuiltSite) -> None:
    paths, out = built_program.paths, built_program.out
    paths.program_file.write_text("name: Test program\norigin: bad origin\ndescription: ''\n")
    _edit_ledger_line(paths, 1, lambda line: line.replace(b'","', b'", "', 1))
    paths.reveal_file("a-001").unlink()
    (paths.reveals_dir / "orphan.json").write_text("{}")
    e = build_refused(paths, out)
    find(e.problems, "program.yaml", "origin", "not a valid origin")
    find(e.problems, "ledger.jsonl", "line 1", "canonical")
    find(e.problems, "reveals/a-001.json", "", "missing")
    find(e.problems, "reveals/orphan.json", "", "without a reveal event")


def test_build_reports_program_and_reveal_problems_together(built_program: BuiltSite) -> None:
    paths, out = built_program.paths, built_program.out
    paths.program_file.write_text("name: Test program\norigin: bad origin\n")
    paths.reveal_file("a-001").unlink()
    e = build_refused(paths, out)
    find(e.problems, "program.yaml", "origin", "not a valid origin")
    find(e.problems, "reveals/a-001.json", "", "missing")


def test_build_reports_ledger_and_reveal_problems_together(built_program: BuiltSite) -> None:
    paths, out = built_program.paths, built_program.out
    _edit_ledger_line(paths, 1, lambda line: line.replace(b'","', b'", "', 1))
    paths.reveal_file("a-001").unlink()
    e = build_refused(paths, out)
    find(e.problems, "ledger.jsonl", "line 1", "canonical")
    find(e.problems, "reveals/a-001.json", "", "missing")


def test_build_reports_key_and_reveal_problems_together(built_program: BuiltSite) -> None:
    paths, out = built_program.paths, built_program.out
    paths.key_file.chmod(0o640)
    paths.reveal_file("a-001").unlink()
    (paths.reveals_dir / "orphan.json").write_text("{}")
    (paths.reveals_dir / "notes.txt").write_text("x")
    e = build_refused(paths, out)
    p = find(e.problems, "signing.key", "", "readable by others")
    assert "chmod 600" in p.message
    find(e.problems, "reveals/a-001.json", "", "missing")
    find(e.problems, "reveals/orphan.json", "", "without a reveal event")
    find(e.problems, "reveals/notes.txt", "", "without a reveal event")


def test_non_canonical_ledger_line_shows_both_forms(make_program: Callable[..., Paths], tmp_path: Path) -> None:
    paths = make_program()
    original = paths.ledger_file.read_bytes().split(b"\n")[0]
    _edit_ledger_line(paths, 1, lambda line: line.replace(b'","', b'", "', 1))
    e = build_refused(paths, tmp_path / "site")
    p = find(e.problems, "ledger.jsonl", "line 1", "canonical")
    assert p.expected == original.decode()
    assert p.found == original.decode().replace('","', '", "', 1)


@pytest.mark.parametrize("junk", [b"not json", b"{", b'{"type":"gate"', b"[1,2]", b"\xff\xfe"])
def test_ledger_line_not_json(make_program: Callable[..., Paths], tmp_path: Path, junk: bytes) -> None:
    paths = make_program()
    _edit_ledger_line(paths, 4, lambda line: junk)
    e = build_refused(paths, tmp_path / "site")
    p = next((p for p in e.problems if p.where == "line 4" or p.where.startswith("line 4.")), None)
    assert p is not None, [q.describe() for q in e.problems]
    assert p.file.endswith("ledger.jsonl")
    assert "ledger.jsonl [line 4" in e.describe()


def test_ledger_truncated_last_line(make_program: Callable[..., Paths], tmp_path: Path) -> None:
    paths = make_program()
    data = paths.ledger_file.read_bytes()
    n = data.count(b"\n")
    paths.ledger_file.write_bytes(data[:-25])  # cut inside the last line: no newline, not JSON
    e = build_refused(paths, tmp_path / "site")
    find(e.problems, "ledger.jsonl", f"line {n}", "does not end with a newline")
    find(e.problems, "ledger.jsonl", f"line {n}", "not a JSON leaf")


def test_ledger_last_line_without_newline(make_program: Callable[..., Paths], tmp_path: Path) -> None:
    paths = make_program()
    data = paths.ledger_file.read_bytes()
    paths.ledger_file.write_bytes(data[:-1])
    e = build_refused(paths, tmp_path / "site")
    lines = data.count(b"\n")
    [p] = e.problems
    assert p.file.endswith("ledger.jsonl") and p.where == f"line {lines}"
    assert "does not end with a newline" in p.message


def test_changed_reveal_file(built_program: BuiltSite) -> None:
    paths, out = built_program.paths, built_program.out
    target = paths.reveal_file("a-002")
    commitment = next(
        json.loads(line)["commitment"]
        for line in paths.ledger_file.read_bytes().splitlines()
        if b'"commit"' in line and b'"a-002"' in line
    )
    assert sha256_hex(target.read_bytes()) == commitment
    data = bytearray(target.read_bytes())
    i = data.index(b"Extract")
    data[i] = ord("e")
    target.write_bytes(bytes(data))
    e = build_refused(paths, out)
    p = find(e.problems, "reveals/a-002.json", "", "does not hash to the value in the ledger")
    assert p.expected == commitment
    assert p.found == sha256_hex(bytes(data))
    assert commitment in e.describe() and sha256_hex(bytes(data)) in e.describe()


# ---------------------------------------------------------------------------------------------
# A syntax error hides nothing else; a bad byte is named by its line and column


def test_a_yaml_syntax_error_is_reported_with_every_other_problem(prog: Paths) -> None:
    write_text(
        prog,
        "broken.yaml",
        "items:\n  - id: Bad\n    gate: b\n  - id: half-1\n    gate: b\n    prompt: x\n  - id: late\n    gate: [b\n",
    )
    write_text(prog, "other.yaml", dump([{**item("other-1", "b"), "gate": "nope"}]))
    e = commit_refused(prog)
    syntax = find(e.problems, "broken.yaml", "line ", "malformed YAML")
    assert re.fullmatch(r"line \d+, column \d+", syntax.where)
    find(e.problems, "broken.yaml", "items[0].id", "malformed item id")  # before the error, same file
    find(e.problems, "broken.yaml", "items[1].answer", "must be an object")
    find(e.problems, "other.yaml", "items[0].gate", "unknown gate")  # another file


@pytest.mark.parametrize(
    ("data", "line", "column", "hint"),
    [
        (b"items:\n  - id: x\n    prompt: caf\xe9 au lait\n", 3, 16, "Latin-1"),
        (b"items:\n\n  - id: \xc3\xa9t\xe9\n", 3, 11, "Latin-1"),
        ("items: []\n".encode("utf-16"), 1, 1, "UTF-16"),
    ],
)
def test_a_non_utf8_file_names_line_column_and_the_encoding(
    prog: Paths, data: bytes, line: int, column: int, hint: str
) -> None:
    (prog.items_dir / "latin.yaml").write_bytes(data)
    e = commit_refused(prog)
    p = find(e.problems, "latin.yaml", "line ", "not valid UTF-8")
    assert p.where == f"line {line}, column {column}", p.describe()
    assert hint in p.message and "save the file as UTF-8" in p.message
    assert "at byte" not in p.describe()


@pytest.mark.parametrize("suffix", [".json", ".md"])
def test_every_reader_names_the_line_of_a_bad_byte(tmp_path: Path, suffix: str) -> None:
    """Run specs, results, mappings and label sets (load_json), prose and results (read_text)."""
    from generator.core.strict_input import load_json, read_text

    f = tmp_path / f"in{suffix}"
    f.write_bytes(b'{\n "a":\n "caf\xe9"}\n')
    with pytest.raises(InputError) as info:
        (load_json if suffix == ".json" else read_text)(f, f.name)
    [p] = info.value.problems
    assert p.file == f.name and p.where == "line 3, column 6" and "UTF-8" in p.message
