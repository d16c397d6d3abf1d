"""The JSON Schemas the site serves (FORMAT.md, "JSON Schemas"): valid draft 2020-12, one for
every JSON file of a built site, every file valid against its own, tampered documents refused,
and the verifier's shape rules said the same way (its other rules left to it).

`jsonschema` is a test dependency only: the generator never imports it.
"""

from __future__ import annotations

import ast
import base64
import copy
import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

import pytest
from bs4 import BeautifulSoup
from jsonschema import Draft202012Validator, ValidationError

from generator.build import schemas
from generator.commands.agreement import register_label_set
from generator.commands.build import build
from generator.commands.retire import retire_items
from generator.core import layout
from generator.program.datadir import Paths
from generator.verifier import (
    check_certificate,
    check_methodology,
    check_reveal_document,
    check_run_spec,
    key_rows,
    loads_strict,
    parse_methodology,
    prose_problems,
    tile_paths,
)
from generator.verifier.rules.labelsets import label_set_problems, report_document
from tests.support.agreement import HUMAN, ITEMS, JUDGE, LABEL_AT, SCALE, SECRET10, judged, labels_file
from tests.support.demo import REPO, BuiltSite
from tests.support.ledger_cases import CASES, SPEC_CASES, replay
from tests.support.runs import certify, register, results, run_spec, scored
from tests.support.schemas import PACKAGE_SCHEMAS, REGISTRY, SCHEMAS, validator

METASCHEMA = "https://json-schema.org/draft/2020-12/schema"


def locations(errors: Iterator[ValidationError] | list[ValidationError]) -> Iterator[tuple[Any, ...]]:
    """Where each error points, its nested ones (anyOf, if/then) included."""
    for e in errors:
        yield tuple(e.absolute_path)
        yield from locations(e.context)


def refuses(name: str, doc: Any) -> bool:
    return not validator(name).is_valid(doc)


# The schemas of exports in other projects' formats (FORMAT.md, "Exports").
FOREIGN = {
    layout.schema(name)
    for name in (
        "eee-record.schema.json",
        "verifiable-credential.schema.json",
        "status-list-credential.schema.json",
        "did-document.schema.json",
    )
}


def site_json(site: BuiltSite) -> dict[str, Any]:
    """Every JSON document of the site's formats: the search index's own file (pagefind/) is
    the search tool's, presentation outside the format (FORMAT.md, "Search"), and an evidence
    file is a harness's own output, published as it was written (docs/formats/evidence.md)."""
    docs: dict[str, Any] = {}
    for p in sorted(site.out.rglob("*.json")):
        rel = p.relative_to(site.out).as_posix()
        evidence = re.fullmatch(r"certificates/[^/]+/evidence/[^/]+", rel) is not None
        if p.is_file() and not rel.startswith(layout.SEARCH_INDEX_DIR + "/") and not evidence:
            # An export in another project's format keeps that format's numbers (fractions too).
            foreign = layout.schema_for(rel) in FOREIGN
            docs[rel] = json.loads(p.read_bytes()) if foreign else loads_strict(p.read_bytes())
    return docs


def index_rows(site: BuiltSite) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = loads_strict((site.out / layout.SCHEMA_INDEX).read_bytes())["schemas"]
    return rows


def matches(pattern: str, path: str) -> bool:
    """The index's own reading of a pattern (schema-index.schema.json): `*` stands for one or
    more characters other than '/'. Written here again, not taken from layout, so that the two
    are compared."""
    return re.fullmatch("[^/]+".join(map(re.escape, pattern.split("*"))), path) is not None


# ---------------------------------------------------------------------------------------------
# The schemas themselves


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_each_schema_is_valid_draft_2020_12(name: str) -> None:
    doc = SCHEMAS[name]
    Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == METASCHEMA
    assert doc["$id"] == name, "the $id is the file's own name, resolved against wherever it was fetched from"


def test_the_generator_never_imports_a_schema_library() -> None:
    """The schemas are for readers and tests; the verifier is what the build checks with."""
    for path in sorted((REPO / "generator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(n.split(".")[0] in ("jsonschema", "referencing") for n in names), path


def test_the_site_serves_the_package_s_schemas_byte_for_byte(demo_site: BuiltSite) -> None:
    served = sorted(p.name for p in (demo_site.out / layout.SCHEMAS).glob("*.schema.json"))
    assert served == sorted(SCHEMAS)
    for name in served:
        assert (demo_site.out / layout.schema(name)).read_bytes() == (PACKAGE_SCHEMAS / name).read_bytes()
    assert set(SCHEMAS) - {name for _, name in layout.JSON_SCHEMAS} == {"defs.schema.json", "ledger-event.schema.json"}


def test_every_ref_resolves_to_a_served_schema_under_any_prefix(demo_site: BuiltSite) -> None:
    """A reader that fetches one schema from wherever the site lives finds what it refers to
    beside it: no $ref names a host, and every one lands on a served file and a real place in it."""
    folder = demo_site.out / layout.SCHEMAS

    def refs(value: Any) -> Iterator[str]:
        if isinstance(value, dict):
            if isinstance(value.get("$ref"), str):
                yield value["$ref"]
            for v in value.values():
                yield from refs(v)
        elif isinstance(value, list):
            for v in value:
                yield from refs(v)

    bases = (
        "https://example.org/some/prefix/schemas/",
        "file:///home/someone/site%20copy/schemas/",
        "http://x/schemas/",
    )
    seen = 0
    for name, doc in SCHEMAS.items():
        for ref in refs(doc):
            assert "://" not in ref and not ref.startswith("/"), f"{name}: {ref} does not resolve under any prefix"
            for base in bases:
                target, pointer = urldefrag(urljoin(base + name, ref))
                assert target.startswith(base), (name, ref, target)
                file = folder / target.removeprefix(base)
                assert file.is_file(), f"{name}: {ref} names {file.name}, which the site does not serve"
                node: Any = json.loads(file.read_text(encoding="utf-8"))
                for part in [p for p in pointer.split("/") if p]:
                    node = node[part]
                assert isinstance(node, dict), (name, ref)
            seen += 1
    assert seen > 50


# ---------------------------------------------------------------------------------------------
# Every JSON file of the built site


def test_the_index_is_sorted_disjoint_and_valid(demo_site: BuiltSite) -> None:
    index = loads_strict((demo_site.out / layout.SCHEMA_INDEX).read_bytes())
    validator("schema-index").validate(index)
    paths = [r["path"] for r in index["schemas"]]
    assert paths == sorted(paths)
    assert index == schemas.schema_index()
    # No two patterns can match one path: each pattern's own path (a star read as a letter) matches it alone.
    for p in paths:
        example = p.replace("*", "x")
        assert [q for q in paths if matches(q, example)] == [p]


def test_every_json_file_of_the_site_validates_against_its_schema(demo_site: BuiltSite) -> None:
    rows = index_rows(demo_site)
    docs = site_json(demo_site)
    used: set[str] = set()
    problems: list[str] = []
    for rel, doc in docs.items():
        hits = [r for r in rows if matches(r["path"], rel)]
        if len(hits) != 1:
            problems.append(f"{rel}: matched by {len(hits)} rows of {layout.SCHEMA_INDEX}")
            continue
        row = hits[0]
        used.add(row["path"])
        if row["schema"] == METASCHEMA:
            Draft202012Validator.check_schema(doc)
            continue
        # A schema is named by the `type` of the documents it describes; an export in another
        # project's format has no `type` member, and its schema is named for the format.
        if row["schema"] not in FOREIGN and doc.get("type") != Path(row["schema"]).name.removesuffix(".schema.json"):
            problems.append(f"{rel}: a {doc.get('type')!r} document, described by {row['schema']}")
        schema = loads_strict((demo_site.out / row["schema"]).read_bytes())
        v = Draft202012Validator(schema, registry=REGISTRY)
        problems += [f"{rel} at {e.json_path}: {e.message[:300]}" for e in v.iter_errors(doc)]
    assert problems == []
    # The demo is a v2 site: the parts of a v3 commitment list are checked in
    # tests/integration/format/test_v3_history.py, a v4 manifest's in test_v4_manifest.py.
    v3_only = {
        layout.commitment_part(0).replace("/0.json", "/*.json"),
        layout.manifest_part("*", 0).replace("/0.json", "/*.json"),
    }
    assert used == {r["path"] for r in rows} - v3_only, "every row of the index describes some file of the demo"


def test_no_json_hides_under_another_name(demo_site: BuiltSite) -> None:
    """Every file that holds a JSON document is named *.json, so the index above sees it (the
    leaves inside tiles and proofs are the next test's)."""
    for p in sorted(demo_site.out.rglob("*")):
        if p.is_file() and p.suffix != ".json" and p.read_bytes()[:1] in (b"{", b"["):
            try:
                json.loads(p.read_bytes())
            except ValueError:
                continue
            pytest.fail(f"{p.relative_to(demo_site.out)} is JSON without a .json name")


def test_every_leaf_in_the_tiles_and_proofs_is_a_ledger_event(demo_site: BuiltSite) -> None:
    v = validator("ledger-event")
    # The bundles of today's size (an archived size's partial bundles repeat a head of them).
    size = int((demo_site.out / layout.CHECKPOINT).read_text().split("\n")[1])
    leaves: list[bytes] = []
    for rel, _ in tile_paths(size):
        if rel.startswith("tile/entries/"):
            data = (demo_site.out / "ledger" / rel).read_bytes()
            while data:
                n = int.from_bytes(data[:2], "big")
                leaves.append(data[2 : 2 + n])
                data = data[2 + n :]
    entries = loads_strict((demo_site.out / layout.ENTRIES).read_bytes())["entries"]
    assert [loads_strict(raw) for raw in leaves] == entries
    extras = []
    for proof in sorted(demo_site.out.rglob("*.tlog-proof")):
        line = proof.read_text(encoding="utf-8").split("\n")[1]
        assert line.startswith("extra ")
        extras.append(base64.b64decode(line.removeprefix("extra "), validate=True))
    assert extras
    for raw in [*leaves, *extras]:
        v.validate(loads_strict(raw))
    types = {loads_strict(raw)["type"] for raw in leaves}
    assert types >= {"gate", "methodology", "commit", "reveal", "run", "certificate", "revocation"}


def test_schema_for_names_the_index_s_schema(demo_site: BuiltSite) -> None:
    rows = index_rows(demo_site)
    for p in sorted(demo_site.out.rglob("*")):
        rel = p.relative_to(demo_site.out).as_posix()
        if not p.is_file():
            continue
        want = next((r["schema"] for r in rows if matches(r["path"], rel)), None)
        got = layout.schema_for(rel)
        if rel.endswith(".schema.json"):
            assert (got, want) == (None, METASCHEMA), rel
        else:
            assert got == want, rel
            assert got is None or (demo_site.out / got).is_file()


def test_every_json_twin_is_described_by_its_schema(demo_site: BuiltSite) -> None:
    """Each page that links its JSON twin also links the twin's schema (`describedby`): a v1
    document cannot carry a `$schema` member of its own, its bytes are hashed and signed."""
    pages = 0
    for page in sorted(demo_site.out.rglob("*.html")):
        rel = page.relative_to(demo_site.out).as_posix()
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        twin = soup.find("link", rel="alternate", type="application/json")
        if twin is None:
            continue
        resolved = urljoin(f"https://example.org/prefix/{rel}", str(twin["href"])).removeprefix(
            "https://example.org/prefix/"
        )
        described = soup.find_all("link", rel="describedby")
        want = layout.schema_for(resolved)
        assert want is not None, f"{rel}: its twin {resolved} has no schema"
        hrefs = [
            urljoin(f"https://example.org/prefix/{rel}", str(d["href"])).removeprefix("https://example.org/prefix/")
            for d in described
            if d.get("type") == "application/schema+json"
        ]
        assert hrefs == [want], f"{rel}: twin {resolved}, describedby {hrefs}"
        pages += 1
    assert pages > 30


# ---------------------------------------------------------------------------------------------
# Tampered documents of the demo site: refused, and refused where the change is


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Any], None]:
    def change(doc: Any) -> None:
        for p in path[:-1]:
            doc = doc[p]
        doc[path[-1]] = value

    return change


def _delete(path: tuple[Any, ...]) -> Callable[[Any], None]:
    def change(doc: Any) -> None:
        for p in path[:-1]:
            doc = doc[p]
        del doc[path[-1]]

    return change


def _seal_first_result(doc: Any) -> None:
    r = doc["results"][0]
    doc["results"][0] = {"item": r["item"], "status": r["status"], "details": "ab" * 32}


TAMPERED: list[tuple[str, str, str, Callable[[Any], None], tuple[Any, ...]]] = [
    # id, file, schema, change, where the schema must say the problem is
    ("certificate-extra-member", "certificates/quill-a-1.json", "certificate", _set(("extra",), 1), ()),
    (
        "summary-extra-member",
        "certificates/quill-a-1.json",
        "certificate",
        _set(("summary", "mean"), "1"),
        ("summary",),
    ),
    (
        "manifest-row-extra-member",
        "transparency.json",
        "transparency-manifest",
        _set(("runs", 0, "url"), "x"),
        ("runs", 0),
    ),
    ("reveal-salt-uppercase", "reveals/a-001.json", "item-reveal", _set(("salt",), "AB" * 32), ("salt",)),
    (
        "commitment-63-hex",
        "ledger/commitments.json",
        "commitment-list",
        _set(("commitments", 0, "commitment"), "a" * 63),
        ("commitments", 0, "commitment"),
    ),
    (
        "run-spec-hash-uppercase",
        "runs/quill-a-1.json",
        "run-spec",
        _set(("methodology", "sha256"), "A" * 64),
        ("methodology", "sha256"),
    ),
    ("manifest-without-ledger", "transparency.json", "transparency-manifest", _delete(("ledger",)), ()),
    ("certificate-without-verdict", "certificates/orca-b-1.json", "certificate", _delete(("verdict",)), ()),
    ("key-revoked-without-reason", "keys.json", "keys", _delete(("keys", 0, "reason")), ("keys", 0)),
    (
        "entry-of-unknown-type",
        "ledger/entries.json",
        "ledger-entries",
        _set(("entries", 0, "type"), "audit"),
        ("entries", 0, "type"),
    ),
    (
        "entry-v2-event-as-v1",
        "ledger/entries.json",
        "ledger-entries",
        _set(("entries", 87, "v"), 1),
        ("entries", 87, "v"),
    ),
    (
        "entry-v1-event-as-v2",
        "ledger/entries.json",
        "ledger-entries",
        _set(("entries", 0, "v"), 2),
        ("entries", 0, "v"),
    ),
    ("id-with-a-trailing-newline", "reveals/a-001.json", "item-reveal", _set(("id",), "a-001\n"), ("id",)),
    (
        "time-in-arabic-indic-digits",
        "ledger/revocations.json",
        "certificate-revocations",
        _set(("revocations", 0, "at"), "٢٠٢٦-11-29T09:00:00Z"),
        ("revocations", 0, "at"),
    ),
    ("open-and-sealed-results-mixed", "certificates/quill-a-1.json", "certificate", _seal_first_result, ("results",)),
    (
        "critical-similarity-not-exact",
        "certificates/quill-a-1.json",
        "certificate",
        _set(("results", 0, "fields", 0, "similarity"), "0.5"),
        ("results", 0, "fields", 0, "similarity"),
    ),
    (
        "scalar-output-a-list",
        "certificates/quill-a-1.json",
        "certificate",
        _set(("results", 0, "fields", 0, "output"), ["1"]),
        ("results", 0, "fields", 0, "output"),
    ),
    (
        "item-score-above-1",
        "certificates/quill-a-1.json",
        "certificate",
        _set(("results", 0, "score"), "1.000001"),
        ("results", 0, "score"),
    ),
    (
        "rate-above-100",
        "certificates/quill-a-1.json",
        "certificate",
        _set(("summary", "pass_rate"), "100.0001"),
        ("summary", "pass_rate"),
    ),
    (
        "excluded-without-rule",
        "certificates/quill-a-1.json",
        "certificate",
        _delete(("results", 5, "rule")),
        ("results", 5),
    ),
    (
        "history-path-with-dotdot",
        "ledger/history.json",
        "checkpoint-history",
        _set(("checkpoints", 0, "consistency"), "ledger/../x.json"),
        ("checkpoints", 0, "consistency"),
    ),
    (
        "consistency-hash-short",
        "ledger/consistency/87.json",
        "consistency-proof",
        _set(("hashes", 0), "ab"),
        ("hashes", 0),
    ),
    (
        "grader-proposal-a-number",
        "certificates/quill-a-1/grader-record.json",
        "grader-record",
        _set(("proposed_json",), 90),
        ("proposed_json",),
    ),
    (
        "details-result-unknown-status",
        "certificates/orca-b-1/details/b-0021.json",
        "result-details",
        _set(("result", "status"), "passed"),
        ("result", "status"),
    ),
    (
        "methodology-weight-a-number",
        "methodology/2026.1.json",
        "methodology",
        _set(("tiers", "high", "weight"), 1),
        ("tiers", "high", "weight"),
    ),
    (
        "answer-value-not-of-its-kind",
        "reveals/a-001.json",
        "item-reveal",
        _set(("item", "answer", "account_number", "value"), {"x": 1}),
        ("item", "answer", "account_number", "value"),
    ),
    (
        "two-active-keys",
        "keys.json",
        "keys",
        lambda d: (d["keys"][0].pop("reason"), d["keys"][0].update(status="active")),
        ("keys",),
    ),
    (
        "index-row-without-schema",
        "schemas/index.json",
        "schema-index",
        _delete(("schemas", 0, "schema")),
        ("schemas", 0),
    ),
]


@pytest.mark.parametrize(("file", "schema", "change", "where"), [c[1:] for c in TAMPERED], ids=[c[0] for c in TAMPERED])
def test_a_tampered_document_is_refused_where_it_was_changed(
    demo_site: BuiltSite, file: str, schema: str, change: Callable[[Any], None], where: tuple[Any, ...]
) -> None:
    assert layout.schema_for(file) == layout.schema(f"{schema}.schema.json")
    doc = loads_strict((demo_site.out / file).read_bytes())
    v = validator(schema)
    v.validate(doc)  # the pristine document passes: the change is what is refused
    changed = copy.deepcopy(doc)
    change(changed)
    assert changed != doc
    errors = list(v.iter_errors(changed))
    assert errors, "the schema accepts the tampered document"
    found = set(locations(errors))
    assert any(loc[: len(where)] == where for loc in found), f"no error at {where}: {sorted(map(str, found))}"


def test_an_item_may_hold_more_than_its_prompt_and_answer(demo_site: BuiltSite) -> None:
    """Format v1 §3: ITEM has *at least* prompt and answer; the schema leaves the rest open, as the
    verifier does."""
    doc = loads_strict((demo_site.out / "reveals/a-001.json").read_bytes())
    doc["item"]["source"] = {"kind": "synthetic", "batch": 3}
    assert check_reveal_document(doc) == []
    validator("item-reveal").validate(doc)


# ---------------------------------------------------------------------------------------------
# The verifier's own cases: a shape rule is refused by the schema too; any other rule is left
# to the verifier, and the schema accepts the document.

# The ledger cases of test_ledger_rules.py that break the shape of the leaf itself.
LEDGER_SHAPE = {
    "time-malformed-space",
    "time-malformed-month-13",
    "time-malformed-fraction",
    "time-malformed-offset",
    "time-not-a-string",
    "unknown-event-type",
    "missing-type",
    "missing-member",
    "missing-at",
    "extra-member",
    "v-2",
    "v-true",
    "v-string",
    "gate-id-uppercase",
    "gate-id-too-long",
    "gate-id-dash",
    "gate-public-not-bool",
    "item-id-malformed",
    "commitment-uppercase",
    "commitment-short",
    "reveal-unknown-reason",
    "reveal-note-not-string",
    "methodology-version-malformed",
    "methodology-hash-malformed",
    "run-subject-without-name",
    "run-subject-zero-width",
    "run-subject-without-id",
    "revocation-v1",
    "revocation-v-true",
    "revocation-missing-reason",
    "revocation-extra-member",
    "revocation-reason-not-string",
    "revocation-reason-empty",
    "revocation-reason-blank",
    "revocation-reason-newline",
    "revocation-reason-bidi-override",
    "revocation-serial-not-string",
}
# Rules of the leaf alone that no regular expression states: Unicode normal forms and scripts
# (FORMAT.md reading 22), and a leaf's size in canonical bytes.
LEDGER_BEYOND_A_SCHEMA = {"run-subject-cyrillic-look-alike", "run-subject-decomposed", "leaf-over-65535-bytes"}


def test_the_classified_ledger_cases_exist() -> None:
    """Every case not named above is one the ledger alone can decide: the schema accepts it."""
    ids = {c[0] for c in CASES}
    assert ids >= LEDGER_SHAPE | LEDGER_BEYOND_A_SCHEMA
    assert not LEDGER_SHAPE & LEDGER_BEYOND_A_SCHEMA


@pytest.mark.parametrize(
    ("name", "prefix", "leaf", "size"), [(c[0], c[1], c[2], c[4]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_ledger_event_schema_refuses_exactly_the_shape_cases(
    name: str, prefix: list[dict[str, Any]], leaf: dict[str, Any], size: int | None
) -> None:
    ledger = replay(copy.deepcopy(prefix))
    raw = json.dumps(leaf, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
    assert ledger.apply(copy.deepcopy(leaf), size if size is not None else len(raw)), "the verifier refuses it"
    assert refuses("ledger-event", leaf) == (name in LEDGER_SHAPE)


@pytest.mark.parametrize(("doc", "fragment"), [c[1:] for c in SPEC_CASES], ids=[c[0] for c in SPEC_CASES])
def test_the_run_spec_schema_refuses_each_shape_case(doc: dict[str, Any], fragment: str) -> None:
    assert any(fragment in p.message for p in check_run_spec(doc))
    assert refuses("run-spec", doc)


def _demo(site: BuiltSite, rel: str) -> Any:
    return loads_strict((site.out / rel).read_bytes())


# A public certificate changed as tests/integration/format/test_certificate_shape.py changes one: (change, whether
# it breaks the shape, a fragment of the verifier's message).
CERTIFICATE_CASES: list[tuple[str, dict[str, Any], bool, str]] = [
    ("verdict-unknown", {"verdict": "whatever"}, True, "unknown verdict"),
    ("score-rule-unknown", {"score_rule": "whatever"}, True, "unknown score rule"),
    ("expires-at-a-number", {"expires_at": 12345}, True, "must be a time or null"),
    (
        "grader-record-not-a-hash",
        {"grader": {"record": "x", "kept": 0, "dropped": 0}},
        True,
        "the grader record is a SHA-256",
    ),
    ("extra-member", {"extra": 1}, True, "unknown member"),
    ("score-below-0", {"score": -5}, True, "score lies outside the grade's band"),
    (
        "run-spec-path-unsafe",
        {"run_spec": {"path": "../../etc/passwd", "sha256": "00" * 32}},
        True,
        "run_spec must name",
    ),
    (
        "pass-rate-3-decimals",
        {"summary": {"pass_rate": "50.000"}},
        True,
        "a rate is a percentage with exactly 4 decimals",
    ),
    ("grade-not-of-the-methodology", {"grade": "Z"}, False, "not a grade of the pinned methodology"),
    ("band-not-the-grade-s", {"band": [0, 1]}, False, "band is not the grade's band"),
    ("score-outside-the-band", {"score": 90}, False, "score lies outside the grade's band"),
    ("total-miscounted", {"summary": {"total": 9}}, False, "total does not count the results"),
    (
        "run-spec-hash-differs",
        {"run_spec": {"path": "runs/quill-a-1.json", "sha256": "00" * 32}},
        False,
        "run_spec must name",
    ),
    ("interval-reversed", {"summary": {"pass_rate_ci95": ["81.2387", "18.7613"]}}, False, "two ordered percentages"),
]


@pytest.mark.parametrize(
    ("over", "shape", "fragment"), [c[1:] for c in CERTIFICATE_CASES], ids=[c[0] for c in CERTIFICATE_CASES]
)
def test_certificate_shape_rules_agree_with_the_verifier(
    demo_site: BuiltSite, over: dict[str, Any], shape: bool, fragment: str
) -> None:
    cert = _demo(demo_site, "certificates/quill-a-1.json")
    spec_bytes = (demo_site.out / "runs/quill-a-1.json").read_bytes()
    spec = loads_strict(spec_bytes)
    m = parse_methodology(_demo(demo_site, "methodology/2026.1.json"))
    args = (spec, m, True, "runs/quill-a-1.json", hashlib.sha256(spec_bytes).hexdigest())
    assert check_certificate(cert, *args) == []
    for k, v in over.items():
        cert[k] = {**cert[k], **v} if k == "summary" else v
    assert any(fragment in p.message for p in check_certificate(cert, *args)), "the verifier refuses it"
    assert refuses("certificate", cert) == shape


def _tier(tier: str, **v: str) -> Callable[[dict[str, Any]], None]:
    return lambda d: d["tiers"][tier].update(v)


METHODOLOGY_CASES: list[tuple[str, Callable[[dict[str, Any]], Any], bool, str]] = [
    ("weight-zero", _tier("high", weight="0.0"), True, "weight must be a decimal string above 0"),
    ("floor-above-1", _tier("low", min_similarity="1.5"), True, "floor must be a decimal string in [0, 1]"),
    ("threshold-above-1", lambda d: d.update(item_threshold="1.01"), True, "threshold must be"),
    ("measure-unknown", lambda d: d["text_similarity"].update(measure="euclid"), True, "unknown measure"),
    ("extra-member", lambda d: d.update(notes="x"), True, "unknown member"),
    ("band-above-100", lambda d: d["bands"].update(S=[96, 101]), True, "a band is [min, max]"),
    ("min-items-zero", lambda d: d["certify"].update(min_items_secret_gate=0), True, "at least 1"),
    ("scored-fraction-zero", lambda d: d["certify"].update(min_scored_fraction="0"), True, "in (0, 1]"),
    ("cut-off-above-100", lambda d: d["grade_cutoffs"][0].update(min_pass_rate="100.5"), True, "[0, 100]"),
    ("cut-offs-ascending", lambda d: d["grade_cutoffs"][1].update(min_pass_rate="95"), False, "strictly descending"),
    ("min-grade-unknown", lambda d: d["certify"].update(min_grade="Z"), False, "must be one of the grades"),
    ("bands-overlap", lambda d: d["bands"].update(B=[70, 85]), False, "must lie wholly above"),
    ("grade-without-band", lambda d: d["bands"].pop("C"), False, "has no band"),
    ("band-reversed", lambda d: d["bands"].update(D=[54, 0]), False, "a band is [min, max]"),
]


@pytest.mark.parametrize(
    ("change", "shape", "fragment"), [c[1:] for c in METHODOLOGY_CASES], ids=[c[0] for c in METHODOLOGY_CASES]
)
def test_methodology_shape_rules_agree_with_the_verifier(
    demo_site: BuiltSite, change: Callable[[dict[str, Any]], Any], shape: bool, fragment: str
) -> None:
    doc = _demo(demo_site, "methodology/2026.1.json")
    assert check_methodology(doc) == []
    change(doc)
    assert any(fragment in p.message for p in check_methodology(doc)), "the verifier refuses it"
    assert refuses("methodology", doc) == shape


REVEAL_CASES: list[tuple[str, Callable[[dict[str, Any]], Any], str]] = [
    ("salt-short", lambda d: d.update(salt="ab" * 31), "salt must be 64 lowercase hex digits"),
    ("id-uppercase", lambda d: d.update(id="A-001"), "malformed item id"),
    ("gate-dash", lambda d: d.update(gate="a-b"), "malformed gate id"),
    ("type-wrong", lambda d: d.update(type="reveal"), "wrong type or version"),
    ("v-true", lambda d: d.update(v=True), "wrong type or version"),
    ("extra-member", lambda d: d.update(note="x"), "unknown member"),
    ("prompt-missing", lambda d: d["item"].pop("prompt"), "'prompt' must be a string"),
    ("answer-empty", lambda d: d["item"].update(answer={}), "at least one field"),
    ("kind-unknown", lambda d: d["item"]["answer"]["account_number"].update(kind="number"), "unknown kind"),
    ("tier-unknown", lambda d: d["item"]["answer"]["account_number"].update(tier="medium"), "unknown tier"),
    ("field-extra-member", lambda d: d["item"]["answer"]["account_number"].update(weight="1"), "unknown member"),
    ("scalar-value-a-list", lambda d: d["item"]["answer"]["account_number"].update(value=["1"]), "value of a scalar"),
    (
        "field-name-empty",
        lambda d: d["item"]["answer"].update({"": {"kind": "text", "tier": "low", "value": ""}}),
        "must not be empty",
    ),
]


@pytest.mark.parametrize(("change", "fragment"), [c[1:] for c in REVEAL_CASES], ids=[c[0] for c in REVEAL_CASES])
def test_reveal_shape_rules_agree_with_the_verifier(
    demo_site: BuiltSite, change: Callable[[dict[str, Any]], Any], fragment: str
) -> None:
    doc = _demo(demo_site, "reveals/a-001.json")
    assert check_reveal_document(doc) == []
    change(doc)
    assert any(fragment in p.message for p in check_reveal_document(doc)), "the verifier refuses it"
    assert refuses("item-reveal", doc)


KEY_CASES: list[tuple[str, Callable[[list[dict[str, Any]]], Any], bool, str]] = [
    ("status-unknown", lambda k: k[1].update(status="lost"), True, "unknown key status"),
    ("no-active-key", lambda k: k[1].update(status="retired"), True, "exactly one active key"),
    ("revoked-without-reason", lambda k: k[0].pop("reason"), True, "a revoked key needs a reason"),
    ("pem-absolute", lambda k: k[1].update(pem="/etc/key.pem"), True, "unsafe or malformed path"),
    ("valid-until-a-number", lambda k: k[1].update(valid_until=5), True, "valid_until must be a time or null"),
    ("member-missing", lambda k: k[1].pop("fingerprint"), True, "missing 'fingerprint'"),
    (
        "vkey-not-ed25519",
        lambda k: k[1].update(vkey=k[1]["vkey"][:-44] + "Ag" + k[1]["vkey"][-42:]),
        True,
        "not an Ed25519 key",
    ),
    ("valid-from-out-of-order", lambda k: k[1].update(valid_from="2025-01-01T00:00:00Z"), False, "out of order"),
    ("public-key-of-the-other-key", lambda k: k[1].update(public_key=k[0]["public_key"]), False, "public_key differs"),
    (
        "fingerprint-of-the-other-key",
        lambda k: k[1].update(fingerprint=k[0]["fingerprint"]),
        False,
        "fingerprint differs",
    ),
    ("key-listed-twice", lambda k: k.append({**k[0]}), False, "listed twice"),
]


@pytest.mark.parametrize(("change", "shape", "fragment"), [c[1:] for c in KEY_CASES], ids=[c[0] for c in KEY_CASES])
def test_key_shape_rules_agree_with_the_verifier(
    demo_site: BuiltSite, change: Callable[[list[dict[str, Any]]], Any], shape: bool, fragment: str
) -> None:
    doc = _demo(demo_site, layout.KEYS)
    assert key_rows(doc["keys"], doc["origin"], published=True)[1] == []
    change(doc["keys"])
    problems = key_rows(doc["keys"], doc["origin"], published=True)[1]
    assert any(fragment in p.message for p in problems), "the verifier refuses it"
    assert refuses("keys", doc) == shape


# ---------------------------------------------------------------------------------------------
# The shared patterns, against the verifier's own tests of the same formats


def test_the_invisible_characters_are_the_verifier_s() -> None:
    """The character class the name and prose patterns refuse holds no character the verifier
    allows, and every assigned character of the Basic Multilingual Plane it refuses (unassigned
    code points depend on the Unicode version; a regex cannot say which)."""
    prose = re.compile(SCHEMAS["defs.schema.json"]["$defs"]["prose"]["pattern"])
    for cp in range(0x10000):
        c = chr(cp)
        if 0xD800 <= cp <= 0xDFFF or unicodedata.category(c) == "Cn" or c == " ":
            continue
        text = f"a{c}b"
        assert (prose.search(text) is None) == bool(prose_problems(text, "reason")), f"U+{cp:04X}"


# ---------------------------------------------------------------------------------------------
# Judge agreement (format v2): the demo holds no label set, so a program of its own is built.


def _agreement_site(make_program: Callable[..., Paths], tmp_path: Path, gate: str) -> BuiltSite:
    """A run whose blind label set is committed, certified with the judge's labels and built
    once the label set is due: at once on the public gate, on the secret one once every item
    of the run is revealed (its judge labels are then in the details documents)."""
    if gate == "public":
        paths = make_program(public_items=3, secret_items=0, retired=0)
        register(paths, run_spec(paths, "run-001", "a", ITEMS))
        register_label_set(paths, labels_file(paths.data.parent), "run-001", "humans-1", LABEL_AT)
        certify(paths, results("run-001", [judged(i) for i in ITEMS]))
    else:
        paths = make_program(public_items=1, secret_items=10, retired=0)
        register(paths, run_spec(paths, "run-s", "b", SECRET10))
        rows = [("h1", i, "correctness", 2 + n % 2) for n, i in enumerate(SECRET10)]
        register_label_set(paths, labels_file(paths.data.parent, rows), "run-s", "blind-s", LABEL_AT)
        certify(paths, results("run-s", [{**scored(i), "judge_labels": {"correctness": 3}} for i in SECRET10]))
        retire_items(paths, SECRET10, "Retired after use.", "2026-03-10T00:00:00Z")
    out = tmp_path / "site"
    build(paths, out)
    return BuiltSite(paths, out)


@pytest.mark.parametrize("gate", ["public", "secret"])
def test_the_agreement_files_certificate_and_ledger_validate_through_the_index(
    make_program: Callable[..., Paths], tmp_path: Path, gate: str
) -> None:
    site = _agreement_site(make_program, tmp_path, gate)
    rows = index_rows(site)
    assert {(r["path"], r["schema"]) for r in rows} >= {
        ("agreement/*/labels.json", layout.schema("label-set.schema.json")),
        ("agreement/*.json", layout.schema("agreement-report.schema.json")),
    }
    docs = site_json(site)
    set_id, serial = ("humans-1", "run-001") if gate == "public" else ("blind-s", "run-s")
    details = sorted(rel for rel in docs if rel.startswith(f"certificates/{serial}/details/"))
    agreement = sorted(rel for rel in docs if rel.startswith("agreement/"))
    assert agreement == [f"agreement/{set_id}.json", f"agreement/{set_id}/labels.json"]
    assert len(details) == (0 if gate == "public" else len(SECRET10))
    wanted = [*agreement, f"certificates/{serial}.json", *details, layout.ENTRIES]
    problems: list[str] = []
    types: dict[str, str] = {}
    for rel in wanted:
        doc = docs[rel]
        hits = [r for r in rows if matches(r["path"], rel)]
        assert len(hits) == 1, f"{rel}: matched by {len(hits)} rows of {layout.SCHEMA_INDEX}"
        assert layout.schema_for(rel) == hits[0]["schema"]
        types[rel] = doc["type"]
        # A schema is named by the `type` of the documents it describes.
        if doc["type"] != Path(hits[0]["schema"]).name.removesuffix(".schema.json"):
            problems.append(f"{rel}: a {doc['type']!r} document, described by {hits[0]['schema']}")
        schema = loads_strict((site.out / hits[0]["schema"]).read_bytes())
        v = Draft202012Validator(schema, registry=REGISTRY)
        problems += [f"{rel} at {e.json_path}: {e.message[:300]}" for e in v.iter_errors(doc)]
    assert problems == []
    assert types[f"agreement/{set_id}.json"] == "agreement-report"
    assert types[f"agreement/{set_id}/labels.json"] == "label-set"
    # What was validated holds the new members: the label-set leaf and the judge's labels.
    leaves = [e for e in docs[layout.ENTRIES]["entries"] if e["type"] == "label-set"]
    assert [(e["id"], e["v"]) for e in leaves] == [(set_id, 2)]
    opened = (
        docs[f"certificates/{serial}.json"]["results"] if gate == "public" else [docs[rel]["result"] for rel in details]
    )
    assert opened and all("judge_labels" in r for r in opened)


def _label_set() -> dict[str, Any]:
    return {
        "type": "label-set",
        "v": 2,
        "id": "humans-1",
        "run": "run-001",
        "rubric_sha256": "ab" * 32,
        "scale": SCALE,
        "labels": [
            {"labeller": a, "item": i, "dimension": d, "label": v}
            for a, i, d, v in sorted(HUMAN, key=lambda r: (r[2], r[1], r[0]))
        ],
        "salt": "cd" * 32,
    }


LABEL_SPEC = {"items": ITEMS, "judge": {"rubric_sha256": "ab" * 32}}
JUDGE_BY_KEY = {(item, dim): label for item, dims in JUDGE.items() for dim, label in dims.items()}


def _report() -> dict[str, Any]:
    return report_document(_label_set(), "ef" * 32, "run-001", JUDGE_BY_KEY)


def _refused_at(name: str, doc: Any, where: tuple[Any, ...]) -> None:
    errors = list(validator(name).iter_errors(doc))
    assert errors, f"the {name} schema accepts it"
    found = set(locations(errors))
    assert any(loc[: len(where)] == where for loc in found), f"no error at {where}: {sorted(map(str, found))}"


# (id, a change of a valid label set, where the schema must say the problem is); the verifier refuses each too.
LABEL_SET_CASES: list[tuple[str, Callable[[dict[str, Any]], Any], tuple[Any, ...]]] = [
    ("label-a-bool", _set(("labels", 0, "label"), True), ("labels", 0, "label")),
    ("label-a-float", _set(("labels", 0, "label"), 2.5), ("labels", 0, "label")),
    ("labeller-not-an-id", _set(("labels", 0, "labeller"), "H 1"), ("labels", 0, "labeller")),
    ("label-member-missing", _delete(("labels", 0, "dimension")), ("labels", 0)),
    ("labels-empty", _set(("labels",), []), ("labels",)),
    ("scale-of-one", _set(("scale",), [1]), ("scale",)),
    ("scale-repeated", _set(("scale",), [1, 2, 2]), ("scale",)),
    ("salt-short", _set(("salt",), "cd" * 31), ("salt",)),
    ("v-1", _set(("v",), 1), ("v",)),
    ("extra-member", _set(("note",), "x"), ()),
]


@pytest.mark.parametrize(("change", "where"), [c[1:] for c in LABEL_SET_CASES], ids=[c[0] for c in LABEL_SET_CASES])
def test_the_label_set_schema_refuses_a_bad_shape_as_the_verifier_does(
    change: Callable[[dict[str, Any]], Any], where: tuple[Any, ...]
) -> None:
    doc = _label_set()
    assert label_set_problems(doc, "humans-1", "run-001", LABEL_SPEC) == []
    validator("label-set").validate(doc)
    change(doc)
    assert label_set_problems(doc, "humans-1", "run-001", LABEL_SPEC), "the verifier refuses it"
    _refused_at("label-set", doc, where)


def _figure(dim: int, stat: str, **over: Any) -> Callable[[dict[str, Any]], Any]:
    return lambda d: d["dimensions"][dim][stat].update(over)


REPORT_CASES: list[tuple[str, Callable[[dict[str, Any]], Any], tuple[Any, ...]]] = [
    ("value-5-decimals", _figure(0, "raw_agreement", value="0.50000"), ("dimensions", 0, "raw_agreement")),
    ("value-7-decimals", _figure(1, "kappa_linear", value="0.8000000"), ("dimensions", 1, "kappa_linear")),
    ("value-minus-zero", _figure(1, "alpha_ordinal", value="-0.000000"), ("dimensions", 1, "alpha_ordinal")),
    ("value-a-number", _figure(0, "raw_agreement", value=0.5), ("dimensions", 0, "raw_agreement")),
    ("exact-a-decimal", _figure(0, "raw_agreement", exact="0.5"), ("dimensions", 0, "raw_agreement")),
    ("exact-over-zero", _figure(0, "raw_agreement", exact="1/0"), ("dimensions", 0, "raw_agreement")),
    ("figure-extra-member", _figure(0, "raw_agreement", rounded="0.5"), ("dimensions", 0, "raw_agreement")),
    ("statistic-missing", _delete(("dimensions", 0, "kappa_quadratic")), ("dimensions", 0)),
    ("sample-size-negative", _set(("dimensions", 0, "sample_size"), -1), ("dimensions", 0, "sample_size")),
    (
        "disagreement-label-a-bool",
        _set(("dimensions", 1, "disagreements", 0, "human"), True),
        ("dimensions", 1, "disagreements", 0, "human"),
    ),
    ("labels-hash-short", _set(("labels", "sha256"), "ef" * 31), ("labels", "sha256")),
    ("dimensions-empty", _set(("dimensions",), []), ("dimensions",)),
    ("v-1", _set(("v",), 1), ("v",)),
]


@pytest.mark.parametrize(("change", "where"), [c[1:] for c in REPORT_CASES], ids=[c[0] for c in REPORT_CASES])
def test_the_agreement_report_schema_refuses_a_bad_shape(
    change: Callable[[dict[str, Any]], Any], where: tuple[Any, ...]
) -> None:
    doc = _report()
    assert [r["dimension"] for r in doc["dimensions"]] == ["completeness", "correctness"]
    assert doc["dimensions"][1]["disagreements"]
    validator("agreement-report").validate(doc)
    changed = copy.deepcopy(doc)
    change(changed)
    assert changed != doc
    _refused_at("agreement-report", changed, where)


def test_a_figure_may_be_negative_an_integer_or_null() -> None:
    doc = _report()
    row = doc["dimensions"][0]
    row["kappa_linear"] = {"exact": "-3/7", "value": "-0.428571"}
    row["kappa_quadratic"] = {"exact": "1", "value": "1.000000"}
    row["alpha_ordinal"] = None
    validator("agreement-report").validate(doc)


@pytest.mark.parametrize(
    "labels",
    [{"correctness": True}, {"correctness": 2.5}, {}, {"Correctness": 2}, {"c": 2**53}, ["correctness", 2]],
    ids=["bool", "float", "empty", "dimension-not-an-id", "beyond-2-53", "a-list"],
)
def test_the_certificate_schema_refuses_bad_judge_labels_as_the_verifier_does(
    demo_site: BuiltSite, labels: Any
) -> None:
    cert = _demo(demo_site, "certificates/quill-a-1.json")
    spec_bytes = (demo_site.out / "runs/quill-a-1.json").read_bytes()
    m = parse_methodology(_demo(demo_site, "methodology/2026.1.json"))
    args = (loads_strict(spec_bytes), m, True, "runs/quill-a-1.json", hashlib.sha256(spec_bytes).hexdigest())
    first = next(i for i, r in enumerate(cert["results"]) if r["status"] == "scored")
    cert["results"][first]["judge_labels"] = {"correctness": 3, "completeness": -2}
    assert check_certificate(cert, *args) == []
    validator("certificate").validate(cert)
    details = {"type": "result-details", "v": 1, "serial": "x-1", "salt": "ab" * 32, "result": cert["results"][first]}
    validator("result-details").validate(details)
    cert["results"][first]["judge_labels"] = labels
    assert any("judge_labels" in p.where for p in check_certificate(cert, *args)), "the verifier refuses it"
    _refused_at("certificate", cert, ("results",))
    _refused_at("result-details", details, ("result",))
    # A sealed result never carries them.
    sealed = _demo(demo_site, "certificates/orca-b-1.json")
    sealed["results"][0]["judge_labels"] = {"correctness": 3}
    assert refuses("certificate", sealed)


def test_the_label_set_leaf_is_a_ledger_event_of_v2() -> None:
    leaf = {"type": "label-set", "v": 2, "id": "humans-1", "run": "run-001", "sha256": "ab" * 32, "at": LABEL_AT}
    validator("ledger-event").validate(leaf)
    for change in (
        {"v": 1},
        {"id": "Humans"},
        {"sha256": "AB" * 32},
        {"at": "2026-03-01 13:00:00Z"},
        {"extra": 1},
        {"run": None},
    ):
        assert refuses("ledger-event", {**leaf, **change}), change
    assert refuses("ledger-event", {k: v for k, v in leaf.items() if k != "sha256"})
