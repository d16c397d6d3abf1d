"""A fuzz corpus for the verifier: the demo site with one document made hostile, by a forger
who holds the key and re-signs what the change touches.

Each case is fixed by its seed, so a failure can be replayed. The verifier must answer every
case with a report: the suite turns its last-resort catch into a raised exception
(conftest.py), so a rule that trips over a shape it did not expect fails here instead of
hiding as "internal error". Half the cases also rebind the changed document: its ledger leaf
takes the new hash and the ledger, checkpoint, commitment list and every signature are remade,
so that the change reaches the rules behind the hash checks (certificate recomputation, run
rules, methodology rules).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
import rfc8785

import generator.verifier as v
from generator.core.signing_key import Signer, load_key
from tests.support.demo import BuiltSite
from tests.support.tamper import CLIST, ENTRIES, entries_doc, read_json, resign_everything, rewrite_ledger

CASES = 160

HOSTILE: list[Any] = [
    None,
    True,
    0,
    -1,
    9007199254740991,
    1.5,
    "",
    " ",
    "x" * 5000,
    "\u202e\u0000\ud7ff",
    "../../../etc/passwd",
    "0" * 64,
    "1970-01-01T00:00:00Z",
    [],
    [None],
    {},
    {"type": "certificate", "v": 1},
    [{"item": "a-001", "status": "scored"}],
]


def _slots(doc: Any) -> list[tuple[Any, Any]]:
    """Every (container, key or index) of a document, in a fixed order."""
    out: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        children = sorted(node.items()) if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
        for k, child in children:
            out.append((node, k))
            stack.append(child)
    return out


def _mutate(doc: Any, rng: random.Random) -> Any:
    slots = _slots(doc)
    if not slots:
        return rng.choice(HOSTILE)
    node, key = rng.choice(slots)
    op = rng.choice(("replace", "replace", "replace", "delete", "duplicate", "rename"))
    if op == "delete":
        del node[key]
    elif op == "duplicate" and isinstance(node, list):
        node.insert(key, json.loads(json.dumps(node[key])))
    elif op == "rename" and isinstance(node, dict):
        node[f"{key}_"] = node.pop(key)
    else:
        node[key] = json.loads(json.dumps(rng.choice(HOSTILE)))
    return doc


def _byte_mutation(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(max(1, len(data)))
    return rng.choice(
        (
            data[:at],
            data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1 :] if data else b"\x00",
            b"\xef\xbb\xbf" + data,
            data + b"\n",
            data[:at] + b"\xff\xfe" + data[at:],
            b"null",
        )
    )


def _rebind(site: Path, rel: str, signer: Signer) -> None:
    """The leaf that holds the changed document's hash takes the new one, and everything the
    leaf is part of is remade and re-signed."""
    digest = v.sha256_hex((site / rel).read_bytes())
    stem = Path(rel).name.removesuffix(".json")
    leaves = entries_doc(site)["entries"]
    folder = rel.split("/")[0]
    kind, name, field = BINDING[folder]
    for leaf in leaves:
        if leaf["type"] == kind and leaf[name] == stem:
            leaf[field] = digest
    clist = read_json(site, CLIST)
    by_id = {leaf["id"]: leaf["commitment"] for leaf in leaves if leaf["type"] == "commit"}
    for row in clist["commitments"]:
        row["commitment"] = by_id[row["id"]]
    (site / CLIST).write_bytes(rfc8785.dumps(clist))
    rewrite_ledger(site, signer, leaves)
    resign_everything(site, signer, entries_doc(site)["origin"])


# The folder of a document bound to a leaf -> (leaf type, member naming it, member of its hash).
BINDING = {
    "reveals": ("commit", "id", "commitment"),
    "methodology": ("methodology", "version", "sha256"),
    "runs": ("run", "id", "sha256"),
    "certificates": ("certificate", "serial", "sha256"),
}
BOUND = tuple(f"{folder}/" for folder in BINDING)


def _documents(site: Path) -> list[str]:
    return sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.json")
        if p.relative_to(site).as_posix() not in (ENTRIES, CLIST)
    )


@pytest.fixture(scope="module")
def signer(demo_site: BuiltSite) -> Signer:
    return load_key(demo_site.paths.key_file)


@pytest.mark.parametrize("seed", range(CASES))
def test_a_hostile_document_gets_a_report_never_a_crash(
    seed: int, demo_site: BuiltSite, signer: Signer, tmp_path: Path
) -> None:
    rng = random.Random(seed)
    site = tmp_path / "site"
    shutil.copytree(demo_site.out, site)
    docs = _documents(site)
    bound = [d for d in docs if d.startswith(BOUND) and d.count("/") == 1]
    rebind = seed % 2 == 0
    rel = rng.choice(bound if rebind else docs)
    before = (site / rel).read_bytes()
    if rebind or seed % 4 == 1:
        data = rfc8785.dumps(_mutate(json.loads(before), rng))
    else:
        data = _byte_mutation(before, rng)
    if data == before:
        data = before + b" "
    (site / rel).write_bytes(data)
    if rebind:
        _rebind(site, rel, signer)
    else:
        resign_everything(site, signer, entries_doc(site)["origin"])

    report = v.verify_site(site)

    assert report.render() and json.dumps(report.to_json())
    if not rebind:
        # The ledger still binds the old bytes: re-signing the file cannot make it pass. (A
        # rebound change may be a consistent other history, such as another prompt text.)
        assert not report.ok, f"seed {seed}: {rel} changed, yet the site verified"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("metrics", "x" * 100, "must be a list of strings"),
        ("budget", 7200, "must be an object"),
        ("question", ["Why?"], "must be a non-empty string"),
        ("judge", {"provider": "P", "model": {}, "version": "1", "rubric_sha256": "0" * 64, "seed": None}, "string"),
    ],
)
def test_a_run_spec_of_the_wrong_shape_fails_even_rebound(
    key: str, value: Any, message: str, demo_site: BuiltSite, signer: Signer, tmp_path: Path
) -> None:
    """Found by the corpus (seed 42): a run spec whose `metrics` was a string verified once its
    ledger leaf was rebound. The spec's `…`, `{…}` and `[…]` are types (FORMAT.md reading 4)."""
    site = tmp_path / "site"
    shutil.copytree(demo_site.out, site)
    rel = "runs/quill-a-3.json"
    spec = read_json(site, rel)
    spec[key] = value
    (site / rel).write_bytes(rfc8785.dumps(spec))
    _rebind(site, rel, signer)
    report = v.verify_site(site)
    assert not report.ok
    assert any(message in f.describe() and rel in f.describe() for f in report.failures), report.render()
