"""A sealed certificate publishes nothing a subject could learn answers from (format v1 §3, §6).

On a secret gate the outputs, notes, similarities and the judge's words sit in salted
details documents and a grader record kept private; the site carries only their hashes until
the items are retired. These tests certify a run with distinctive strings everywhere, build,
and search every byte of the site (also with JSON and HTML escapes decoded) for each of them.
Retiring one item must then publish exactly that item's details and nothing of the others.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from generator.commands.build import build
from generator.commands.retire import retire_items
from generator.program.datadir import Paths
from generator.program.sealed import iter_sealed
from generator.verifier import loads_strict, verify_site
from tests.support.programs import item
from tests.support.runs import certify, register, results, run_spec, scored

SERIAL = "cert-s"
S_ITEMS = [f"s-{i:02d}" for i in range(1, 11)]
B_ITEMS = [f"b-{i:04d}" for i in range(1, 6)]
RUN_ITEMS = S_ITEMS + B_ITEMS
WRONG = {"s-01", "s-04", "s-07", "s-10"}  # given a wrong account number, itself a distinctive output
RETIRED = "s-04"

_U_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def s_item(item_id: str) -> dict[str, Any]:
    """A sealed item whose prompt, field names and values are all distinctive."""
    return item(
        item_id,
        "b",
        prompt=f"PROMPT-ORCA-{item_id}",
        acct_wombat={"kind": "scalar", "tier": "critical", "value": f"ACCT-OCELOT-{item_id}"},
        summary_quokka={"kind": "text", "tier": "high", "value": f"ANSWER-IBIS-{item_id}"},
        tags_narwhal={"kind": "array", "tier": "low", "value": [f"TAG-KUDU-{item_id}"]},
    )


def s_row(item_id: str) -> dict[str, Any]:
    acct = f"WRONG-HERON-{item_id}" if item_id in WRONG else f"ACCT-OCELOT-{item_id}"
    return {
        "item": item_id,
        "status": "scored",
        "fields": [
            {"name": "acct_wombat", "output": acct},
            {"name": "summary_quokka", "output": f"ZEBRA-{item_id}-SECRET", "similarity": "0.91"},
            {"name": "tags_narwhal", "output": [f"TAG-KUDU-{item_id}"]},
        ],
    }


def b_row(item_id: str) -> dict[str, Any]:
    summary = {"name": "summary", "output": f"ZEBRA-{item_id}-SECRET", "similarity": "0.88"}
    return scored(item_id, summary=summary)


def decoded_forms(data: bytes) -> list[str]:
    """A file's text as written, with \\uXXXX escapes decoded, and with HTML entities decoded."""
    text = data.decode("utf-8", errors="replace")
    unescaped = _U_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    return [text, unescaped, html.unescape(unescaped)]


def site_index(out: Path) -> dict[str, tuple[bytes, list[str]]]:
    return {
        p.relative_to(out).as_posix(): (p.read_bytes(), decoded_forms(p.read_bytes()))
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def found_in(index: dict[str, tuple[bytes, list[str]]], needles: Iterable[str]) -> list[tuple[str, str]]:
    """Every (needle, site file) where the needle occurs, raw or decoded."""
    return [
        (n, rel)
        for n in needles
        for rel, (data, forms) in index.items()
        if n.encode() in data or any(n in f for f in forms)
    ]


def secrets_of(paths: Paths, item_id: str) -> list[str]:
    """What must stay private about one item of the run: answer, prompt, outputs, salts."""
    needles = [f"ZEBRA-{item_id}-SECRET"]
    if item_id.startswith("s-"):
        needles += [f"PROMPT-ORCA-{item_id}", f"ACCT-OCELOT-{item_id}", f"ANSWER-IBIS-{item_id}", f"TAG-KUDU-{item_id}"]
        needles += [f"WRONG-HERON-{item_id}"] if item_id in WRONG else []
    else:
        needles.append(f"Summary of {item_id}")
    details = loads_strict(paths.details_file(SERIAL, item_id, private=True).read_bytes())
    needles.append(details["salt"])
    return needles


def shared_secrets(paths: Paths) -> list[str]:
    """What stays private until every item of the certificate is revealed."""
    record = loads_strict(paths.grader_record_file(SERIAL, private=True).read_bytes())
    return [
        "RATIONALE-PANGOLIN",
        "DROPPED-TAPIR",
        "NOTE-AXOLOTL",
        "acct_wombat",
        "summary_quokka",
        "tags_narwhal",
        record["salt"],
    ]


@pytest.fixture
def sealed_site(make_program: Callable[..., Paths]) -> tuple[Paths, Path]:
    """A secret-gate certificate over 15 items, one of them an infra error with a note."""
    paths = make_program(public_items=1, secret_items=6, retired=0, extra_items=[s_item(i) for i in S_ITEMS])
    register(paths, run_spec(paths, "run-s", "b", RUN_ITEMS))
    rows = [s_row(i) for i in S_ITEMS] + [b_row(i) for i in B_ITEMS[:-1]]
    rows.append({"item": B_ITEMS[-1], "status": "infra_error", "note": "NOTE-AXOLOTL: the sandbox crashed."})
    rationale = [
        {"text": "RATIONALE-PANGOLIN: s-01 matched.", "evidence_refs": ["s-01"]},
        {"text": "DROPPED-TAPIR", "evidence_refs": []},
    ]
    c = certify(paths, results("run-s", rows, proposed=60, rationale=rationale), serial=SERIAL)
    assert c.sealed and c.summary["scored"] == 14 and c.summary["infra_error"] == 1
    out = paths.data.parent / "public"
    build(paths, out)
    return paths, out


def test_the_search_sees_escaped_and_raw_needles(tmp_path: Path) -> None:
    """The search would find a leak written raw, JSON-escaped or HTML-escaped."""
    (tmp_path / "a.json").write_bytes(json.dumps({"x": "\u0000ZEBRA-s-01-SECRET"}).encode())
    (tmp_path / "b.json").write_text('{"x":"\\u005aEBRA-s-02-SECRET"}')
    (tmp_path / "c.html").write_text("<p>ZEBRA&#45;s-03-SECRET</p>")
    (tmp_path / "d.txt").write_text("nothing here")
    hits = found_in(
        site_index(tmp_path), ["ZEBRA-s-01-SECRET", "ZEBRA-s-02-SECRET", "ZEBRA-s-03-SECRET", "ZEBRA-s-04-SECRET"]
    )
    assert sorted(hits) == [
        ("ZEBRA-s-01-SECRET", "a.json"),
        ("ZEBRA-s-02-SECRET", "b.json"),
        ("ZEBRA-s-03-SECRET", "c.html"),
    ]


def test_nothing_sealed_reaches_the_site(sealed_site: tuple[Paths, Path]) -> None:
    paths, out = sealed_site
    assert verify_site(out).ok
    index = site_index(out)
    needles = [n for i in RUN_ITEMS for n in secrets_of(paths, i)] + shared_secrets(paths)
    needles += ["Summary of b-0006"]  # a sealed item no run used
    needles += [loads_strict(doc)["salt"] for _, doc in iter_sealed(paths)]
    assert found_in(index, needles) == []
    # The certificate is there, sealed: the search looked at the right site.
    cert = loads_strict(index["certificates/cert-s.json"][0])
    assert [r["item"] for r in cert["results"]] == RUN_ITEMS and all(
        set(r) == {"item", "status", "details"} for r in cert["results"]
    )


def test_retiring_one_item_publishes_exactly_its_details(sealed_site: tuple[Paths, Path]) -> None:
    paths, _ = sealed_site
    retire_items(paths, [RETIRED], "Retired after use.", "2026-03-10T00:00:00Z")
    out = paths.data.parent / "public"
    build(paths, out)
    assert verify_site(out).ok
    index = site_index(out)
    mine = secrets_of(paths, RETIRED)
    assert sorted({n for n, _ in found_in(index, mine)}) == sorted(mine)
    assert f"certificates/{SERIAL}/details/{RETIRED}.json" in index
    others = [n for i in RUN_ITEMS if i != RETIRED for n in secrets_of(paths, i)]
    # The retired item's field names are now public with its answer; its judge's words are not.
    still_shared = [n for n in shared_secrets(paths) if n not in ("acct_wombat", "summary_quokka", "tags_narwhal")]
    assert found_in(index, others + still_shared) == []
    assert [p for p in index if "/details/" in p] == [f"certificates/{SERIAL}/details/{RETIRED}.json"]
