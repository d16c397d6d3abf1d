"""The in-browser check (check.js) on a site whose checkpoints carry both of the log's signatures, Ed25519 and
ML-DSA-44, and whose trust policy names both log keys and needs an ML-DSA-44 witness (docs/formats/ml-dsa.md,
docs/formats/in-browser.md).

With the module the site ships beside check.js (mldsa44.js, @noble/post-quantum's ml_dsa44) every signature is
verified, and a tampered ML-DSA-44 line fails where Python's verifier fails it, in its words. Without it (a page that
cannot load the module, as a browser whose WebCrypto has no ML-DSA-44 and no module would be) each ML-DSA-44 signature
is "could not check", naming the key's fingerprint and why, the Ed25519 signature is still checked, a quorum only the
ML-DSA-44 witness can meet is neither met nor missed, and the outcome is never "valid"; what cannot be parsed, a line
of the wrong length or a key ID that does not match, fails in either case. Under Node for the rules, in Chromium for
the page, its lazy import of the module and a site without it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from generator.core import layout
from generator.core.cosigning_keys import Cosigner
from generator.core.proofs import inclusion_proof
from generator.verifier import ML_DSA_44, leaf_hash, parse_policy, policy_problems, verify_site
from generator.verifier.core.public_keys import parse_vkey
from generator.verifier.tlog.cosignature import parse_cosigner_vkey, subtree_message
from generator.verifier.tlog.tlogproof import format_tlog_proof
from tests.support.browser import Browsing, browser, new_page, serve
from tests.support.check_js import OUTCOMES, failed_step, harness_page, js, press_verify, steps_of
from tests.support.ml_dsa_sites import (
    ML_WITNESS,
    WITNESSES,
    MlDsaSite,
    changed,
    edit_signature_lines,
    flip,
    is_ml_dsa_line_of,
    ml_dsa_site,
)

REVEAL = layout.reveal("a-001")
LOG_STEP, WITNESS_STEP = "Checking the log's ML-DSA-44 signature", "Checking witness cosignatures"
NO_MODULE = (
    "this browser's WebCrypto has no ML-DSA-44 (FIPS 204), and this page cannot load mldsa44.js, which verifies it "
    "in JavaScript"
)
MODULE = "the site's mldsa44.js (@noble/post-quantum 0.7.1, bundled by esbuild 0.28.2)"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> MlDsaSite:
    return ml_dsa_site(tmp_path_factory.mktemp("ml-dsa-site"))


@pytest.fixture
def copy(site: MlDsaSite, tmp_path: Path) -> Path:
    out = tmp_path / "public"
    shutil.copytree(site.out, out)
    return out


def origin_of(out: Path) -> str:
    return (out / layout.CHECKPOINT).read_text(encoding="utf-8").split("\n", 1)[0]


def ml_dsa_row(out: Path) -> dict[str, Any]:
    (row,) = json.loads((out / layout.KEYS).read_bytes())["ml_dsa_44_keys"]
    return dict(row)


def python_policy_problems(out: Path) -> list[str]:
    """verify.py's words for the site's checkpoint against its own policy."""
    keys = json.loads((out / layout.KEYS).read_bytes())["keys"]
    key = parse_vkey(next(k for k in keys if k["status"] == "active")["vkey"])
    policy = parse_policy((out / layout.POLICY).read_bytes())
    return policy_problems(policy, key.name, key.public_key, (out / layout.CHECKPOINT).read_bytes())


def python_failures(out: Path) -> list[str]:
    return [f"{f.file}: {f.message}" for f in verify_site(out).failures]


# ---------------------------------------------------------------------------------------------
# Under Node


def test_with_the_module_both_signatures_and_the_ml_dsa_witness_verify(site: MlDsaSite) -> None:
    assert verify_site(site.out).ok and python_policy_problems(site.out) == []
    row = ml_dsa_row(site.out)
    for outcome in (
        js("page", site=str(site.out), kind="reveal", path=REVEAL),
        js("file", site=str(site.out), file=str(site.out / layout.tlog_proof(REVEAL))),
    ):
        assert outcome["status"] == "valid", outcome
        steps = steps_of(outcome)
        assert {s["status"] for s in outcome["steps"]} == {"passed"}, outcome["steps"]
        assert steps["Checking the checkpoint signature"]["status"] == "passed"
        assert steps[LOG_STEP]["detail"] == (
            f"signed by {origin_of(site.out)} with {row['fingerprint']}, the active ML-DSA-44 key of keys.json, "
            f"verified with {MODULE}"
        )
        assert steps[WITNESS_STEP]["detail"] == (
            "the log's ML-DSA-44 signature, which the policy requires, verifies; cosigned by w-ed (at "
            f"2026-03-01T21:20:00Z), w-ml (at 2026-03-01T21:20:00Z); the quorum of ledger/policy.txt holds; ML-DSA-44 "
            f"verified with {MODULE}"
        )
        assert f"Also signed by the ML-DSA-44 key this site publishes, {row['fingerprint']}." in outcome["text"]


def test_without_ml_dsa_each_signature_could_not_be_checked_and_nothing_is_valid(site: MlDsaSite) -> None:
    row = ml_dsa_row(site.out)
    witness = WITNESSES[ML_WITNESS].key.fingerprint
    outcome = js("page", site=str(site.out), kind="reveal", path=REVEAL, modules=None)
    assert outcome["status"] == "could-not-check", outcome
    assert "Valid" not in outcome["text"] and outcome["text"].startswith(
        "Could not check all of this reveal document: "
    )
    steps = steps_of(outcome)
    # The Ed25519 signature is checked; the run goes on past what it could not check.
    assert [s["status"] for s in outcome["steps"]] == ["passed"] * 4 + ["unavailable"] * 2
    assert steps["Checking the checkpoint signature"]["status"] == "passed"
    assert steps[LOG_STEP]["detail"] == (
        f"could not check the log's ML-DSA-44 signature by {row['fingerprint']} on the tree of "
        f"{tree_size(site.out)} entries: {NO_MODULE}"
    )
    # The quorum needs w-ml: neither met nor missed.
    assert steps[WITNESS_STEP]["detail"] == (
        f"could not check the log's ML-DSA-44 signature by {row['fingerprint']}, which the policy requires and the "
        f"ML-DSA-44 cosignature by witness w-ml ({witness}): {NO_MODULE}; so whether the quorum of ledger/policy.txt "
        "(both) holds, which it does only with that cosignature; cosigned by w-ed (at 2026-03-01T21:20:00Z)"
    )
    assert "What this page could check passed: reveal document a-001 is entry " in outcome["text"]


def test_a_module_that_does_not_load_is_could_not_check(site: MlDsaSite, tmp_path: Path) -> None:
    (tmp_path / "mldsa44.js").write_text("export const ml_dsa44 = {};\n", encoding="utf-8")
    for modules, why in (
        (str(tmp_path / "missing"), "the site's mldsa44.js, which verifies it in JavaScript, could not be loaded ("),
        (str(tmp_path), "the site's mldsa44.js is not the ML-DSA-44 module this script expects"),
    ):
        outcome = js("page", site=str(site.out), kind="reveal", path=REVEAL, modules=modules)
        assert outcome["status"] == "could-not-check", outcome
        assert (
            f"this browser's WebCrypto has no ML-DSA-44 (FIPS 204), and {why}" in steps_of(outcome)[LOG_STEP]["detail"]
        )


@pytest.mark.parametrize("quorum", ["ed", "none"])
def test_a_quorum_met_without_the_ml_dsa_witness_holds_but_its_line_is_still_unchecked(
    tmp_path: Path, quorum: str
) -> None:
    out = ml_dsa_site(tmp_path, quorum=quorum).out
    assert verify_site(out).ok and python_policy_problems(out) == []
    outcome = js("page", site=str(out), kind="reveal", path=REVEAL, modules=None)
    assert outcome["status"] == "could-not-check", outcome
    detail = steps_of(outcome)[WITNESS_STEP]["detail"]
    assert detail.startswith("could not check the log's ML-DSA-44 signature by "), detail
    assert (
        "the quorum of ledger/policy.txt holds" if quorum == "ed" else "the quorum of ledger/policy.txt is none"
    ) in detail
    assert ("cosignature by witness w-ml" in detail) == (quorum == "ed")
    assert js("page", site=str(out), kind="reveal", path=REVEAL)["status"] == "valid"


def test_a_tampered_ml_dsa_line_of_the_log_fails_as_python_fails_it(copy: Path) -> None:
    origin = origin_of(copy)
    edit_signature_lines(copy, lambda lines: changed(lines, is_ml_dsa_line_of(origin), flip(100)))
    python = python_failures(copy)
    step = failed_step(js("page", site=str(copy), kind="reveal", path=REVEAL))
    assert step["name"] == LOG_STEP
    key_id = parse_cosigner_vkey(ml_dsa_row(copy)["vkey"]).key_id.hex()
    assert step["detail"] == f"ML-DSA-44 cosignature by {origin} (key ID {key_id}) does not verify"
    assert any(p.endswith(step["detail"]) for p in python), python
    # Without the module it is never valid: the line could not be checked.
    outcome = js("page", site=str(copy), kind="reveal", path=REVEAL, modules=None)
    assert outcome["status"] == "could-not-check" and "Valid" not in outcome["text"], outcome


def test_a_tampered_ml_dsa_cosignature_fails_the_witness_step_in_verify_py_s_words(copy: Path) -> None:
    name = WITNESSES[ML_WITNESS].name
    edit_signature_lines(copy, lambda lines: changed(lines, is_ml_dsa_line_of(name), flip(2000)))
    python = python_policy_problems(copy)
    step = failed_step(js("page", site=str(copy), kind="reveal", path=REVEAL))
    assert step["name"] == WITNESS_STEP
    assert (
        step["detail"]
        == python[0]
        == (
            "a cosignature by a witness of the policy does not verify: ML-DSA-44 cosignature by "
            f"{name} (key ID {WITNESSES[ML_WITNESS].key.key_id.hex()}) does not verify"
        )
    )
    assert js("page", site=str(copy), kind="reveal", path=REVEAL, modules=None)["status"] == "could-not-check"


def test_a_line_of_the_wrong_length_fails_even_where_ml_dsa_cannot_be_checked(copy: Path) -> None:
    origin = origin_of(copy)
    edit_signature_lines(copy, lambda lines: changed(lines, is_ml_dsa_line_of(origin), lambda raw: raw[:-1]))
    key_id = parse_cosigner_vkey(ml_dsa_row(copy)["vkey"]).key_id.hex()
    for modules in ({}, {"modules": None}):
        step = failed_step(js("page", site=str(copy), kind="reveal", path=REVEAL, **modules))
        assert step["name"] == LOG_STEP
        assert step["detail"] == f"ML-DSA-44 cosignature by {origin} (key ID {key_id}) is 2431 bytes, not 4 + 8 + 2420"
    assert any("is 2431 bytes, not 4 + 8 + 2420" in p for p in python_failures(copy))


def test_a_checkpoint_without_the_log_s_ml_dsa_signature_fails(copy: Path) -> None:
    origin = origin_of(copy)
    edit_signature_lines(copy, lambda lines: [line for line in lines if not is_ml_dsa_line_of(origin)(line)])
    fingerprint, size = ml_dsa_row(copy)["fingerprint"], tree_size(copy)
    want = f"not signed by {fingerprint}, the ML-DSA-44 key valid for a tree of {size} entries"
    assert any(p.endswith(want) for p in python_failures(copy))
    for modules in ({}, {"modules": None}):
        step = failed_step(js("page", site=str(copy), kind="reveal", path=REVEAL, **modules))
        assert (step["name"], step["detail"]) == (LOG_STEP, want)


def test_a_policy_requiring_the_log_s_ml_dsa_key_fails_a_checkpoint_without_it(copy: Path) -> None:
    """keys.json drops the ML-DSA-44 key (so no step of its own looks for its signature) and the line is gone: the
    policy, which names the key, still requires it, in verify.py's words."""
    keys = json.loads((copy / layout.KEYS).read_bytes())
    del keys["ml_dsa_44_keys"]
    (copy / layout.KEYS).write_bytes(json.dumps(keys, sort_keys=True, separators=(",", ":")).encode())
    origin = origin_of(copy)
    edit_signature_lines(copy, lambda lines: [line for line in lines if not is_ml_dsa_line_of(origin)(line)])
    python = python_policy_problems(copy)
    for modules in ({}, {"modules": None}):
        outcome = js("page", site=str(copy), kind="reveal", path=REVEAL, **modules)
        assert LOG_STEP not in steps_of(outcome)
        step = failed_step(outcome)
        assert (step["name"], step["detail"]) == (WITNESS_STEP, python[0])
        assert python[0].startswith("the policy requires the log's ML-DSA-44 signature and the checkpoint has none by ")


def tree_size(out: Path) -> int:
    return int((out / layout.CHECKPOINT).read_text(encoding="utf-8").split("\n")[1])


@pytest.mark.parametrize(
    ("what", "detail"),
    [
        ("key ID", r"keys.json: ml_dsa_44_keys\[0\]\.vkey: not a verifier key: key ID [0-9a-f]{8} does not match the "),
        ("fingerprint", r"keys.json: ml_dsa_44_keys\[0\]: public_key or fingerprint differs from the vkey's key$"),
        (
            "type",
            r"keys.json: ml_dsa_44_keys\[0\]\.vkey: not a verifier key: the key is not an ML-DSA-44 key \(type 0x06\)$",
        ),
        ("member", r"keys.json: ml_dsa_44_keys\[0\]: unknown member 'note'$"),
        (
            "active",
            r"keys.json lists 0 active ML-DSA-44 keys; exactly one signs today's checkpoint beside the Ed25519 key$",
        ),
    ],
    ids=["key ID", "fingerprint", "type", "member", "active"],
)
def test_a_malformed_ml_dsa_row_of_keys_json_fails(copy: Path, what: str, detail: str) -> None:
    keys = json.loads((copy / layout.KEYS).read_bytes())
    row = keys["ml_dsa_44_keys"][0]
    name, key_id, b64 = row["vkey"].split("+", 2)
    if what == "key ID":
        row["vkey"] = f"{name}+{'0' * 8 if key_id != '0' * 8 else '1' * 8}+{b64}"
    elif what == "fingerprint":
        row["fingerprint"] = "SHA256:" + "00" * 32
    elif what == "type":
        row["vkey"] = keys["keys"][-1]["vkey"]
    elif what == "member":
        row["note"] = "x"
    else:
        row["status"] = "retired"
    (copy / layout.KEYS).write_bytes(json.dumps(keys, sort_keys=True, separators=(",", ":")).encode())
    step = failed_step(js("page", site=str(copy), kind="reveal", path=REVEAL, modules=None))
    assert step["name"] == "Fetching the reveal document" and re.match(detail, step["detail"]), step


def test_a_policy_vkey_whose_key_id_does_not_match_fails(copy: Path) -> None:
    policy = (copy / layout.POLICY).read_text(encoding="utf-8")
    vkey = WITNESSES[ML_WITNESS].key.vkey
    name, key_id, b64 = vkey.split("+", 2)
    wrong = f"{name}+{'0' * 8 if key_id != '0' * 8 else '1' * 8}+{b64}"
    (copy / layout.POLICY).write_text(policy.replace(vkey, wrong), encoding="utf-8")
    lineno = next(n for n, line in enumerate(policy.splitlines(), 1) if vkey in line)
    with pytest.raises(Exception, match="does not match"):
        parse_policy((copy / layout.POLICY).read_bytes())
    step = failed_step(js("page", site=str(copy), kind="reveal", path=REVEAL, modules=None))
    assert step["name"] == WITNESS_STEP
    assert step["detail"].startswith(
        f'policy line {lineno}: witness "w-ml" key: key ID {wrong.split("+")[1]} does not match'
    )


def test_webcrypto_s_ml_dsa_is_tried_first_and_its_no_is_asked_of_the_module(site: MlDsaSite) -> None:
    honest = js("page", site=str(site.out), kind="reveal", path=REVEAL, webcrypto_ml_dsa="honest", modules=None)
    assert honest["status"] == "valid", honest
    assert steps_of(honest)[LOG_STEP]["detail"].endswith("verified with this browser's WebCrypto")
    # A browser that refuses every ML-DSA-44 signature does not fail a genuine site: the module is asked again.
    says_no = js("page", site=str(site.out), kind="reveal", path=REVEAL, webcrypto_ml_dsa="says-no")
    assert says_no["status"] == "valid", says_no
    assert steps_of(says_no)[LOG_STEP]["detail"].endswith(f"verified with {MODULE}")
    alone = js("page", site=str(site.out), kind="reveal", path=REVEAL, webcrypto_ml_dsa="says-no", modules=None)
    assert alone["status"] == "could-not-check", alone


def test_subtree_messages_and_vkeys_are_python_s(site: MlDsaSite) -> None:
    row = ml_dsa_row(site.out)
    root = bytes(range(32))
    cases: list[tuple[str, int, str, int]] = [
        ("a.example/log", 0, "a.example/log", 12),
        ("w", 1_772_400_000, "o" * 255, 2**64 - 1),
    ]
    vkeys = [row["vkey"], WITNESSES[ML_WITNESS].key.vkey, *[line.split()[-1] for line in policy_log_lines(site.out)]]
    # Sizes as decimal strings: a JSON number loses digits beyond 2^53 in JavaScript.
    got = js("ml_dsa", cases=[[n, t, o, str(size)] for n, t, o, size in cases], root=root.hex(), vkeys=vkeys)
    for (name, ts, origin, size), message in zip(cases, got["messages"], strict=True):
        assert message == subtree_message(name, ts, origin, 0, size, root).hex()
    assert got["too_long"] == "failed: the log origin is 256 bytes; the subtree/v1 message holds 1 to 255"
    for vkey, parsed in zip(vkeys, got["vkeys"], strict=True):
        try:
            key = parse_cosigner_vkey(vkey)
        except Exception:
            key = None
        if key is None:
            assert parsed["kind"] == "ed25519" and parsed["type"] == 1, parsed  # the log's Ed25519 note key
            continue
        assert (parsed["kind"], parsed["id"], parsed["fingerprint"]) == (key.kind, key.key_id.hex(), key.fingerprint)
        assert parsed["label"] == key.label and parsed["size"] == len(key.public_key)


def policy_log_lines(out: Path) -> list[str]:
    return [line for line in (out / layout.POLICY).read_text(encoding="utf-8").splitlines() if line.startswith("log ")]


def key_event_proof(out: Path, kind: str) -> bytes:
    """A proof of the ledger's first `kind` entry against today's checkpoint, as `verify.py proof` would take it."""
    entries = json.loads((out / layout.ENTRIES).read_bytes())["entries"]
    raw = [json.dumps(e, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode() for e in entries]
    index = next(i for i, e in enumerate(entries) if e["type"] == kind)
    path = inclusion_proof([leaf_hash(r) for r in raw], index)
    return format_tlog_proof(raw[index], index, path, (out / layout.CHECKPOINT).read_bytes())


def test_a_key_addition_entry_sent_to_the_check_page_is_found_in_keys_json(site: MlDsaSite, tmp_path: Path) -> None:
    sent = tmp_path / "key-addition.tlog-proof"
    sent.write_bytes(key_event_proof(site.out, "key-addition"))
    row = ml_dsa_row(site.out)
    outcome = js("file", site=str(site.out), file=str(sent))
    assert outcome["status"] == "valid", outcome
    assert steps_of(outcome)["Finding its key in keys.json"]["detail"] == (
        f"keys.json's ml_dsa_44_keys lists the ML-DSA-44 key {row['fingerprint']}, active"
    )
    assert f"It says: key-addition of the ML-DSA-44 key {row['fingerprint']}." in outcome["text"]
    # keys.json with another time for the key than the entry's: the entry is in the ledger, keys.json disagrees.
    copy = tmp_path / "public"
    shutil.copytree(site.out, copy)
    keys = json.loads((copy / layout.KEYS).read_bytes())
    keys["ml_dsa_44_keys"][0]["valid_from"] = "2026-03-02T00:00:00Z"
    (copy / layout.KEYS).write_bytes(json.dumps(keys, sort_keys=True, separators=(",", ":")).encode())
    step = failed_step(js("file", site=str(copy), file=str(sent)))
    assert (step["name"], step["detail"]) == (
        "Finding its key in keys.json",
        f'keys.json\'s ml_dsa_44_keys has {row["fingerprint"]} valid from "2026-03-02T00:00:00Z", but this entry '
        f'enters it at "{row["valid_from"]}"',
    )


# ---------------------------------------------------------------------------------------------
# In Chromium


@pytest.fixture(scope="module")
def served(site: MlDsaSite, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Browsing, str]]]:
    """The site as built, a copy with the log's ML-DSA-44 line tampered, and one without mldsa44.js: each served,
    with the page of REVEAL's "Verify in this browser"."""
    root = tmp_path_factory.mktemp("ml-dsa-served")
    folders = {name: root / name for name in ("pristine", "tampered", "no-module")}
    for folder in folders.values():
        shutil.copytree(site.out, folder)
    origin = origin_of(site.out)
    edit_signature_lines(folders["tampered"], lambda lines: changed(lines, is_ml_dsa_line_of(origin), flip(100)))
    (folders["no-module"] / layout.BROWSER_ML_DSA).unlink()
    pages = {name: harness_page(folder, "reveal", REVEAL) for name, folder in folders.items()}
    with browser() as chromium, ExitStack() as stack:
        yield {name: (Browsing(stack.enter_context(serve(f)), chromium), pages[name]) for name, f in folders.items()}


def step_line(steps: list[dict[str, str]], name: str) -> dict[str, str]:
    (found,) = [s for s in steps if f": {name} (" in s["text"]]
    return found


# A browser whose WebCrypto has no ML-DSA-44, as most have not yet (Chromium has it since about version 150).
HIDE_ML_DSA = (
    "const real = crypto.subtle.importKey.bind(crypto.subtle);"
    "crypto.subtle.importKey = (f, k, alg, ...rest) => (alg && alg.name === 'ML-DSA-44')"
    " ? Promise.reject(new DOMException('Unrecognized name', 'NotSupportedError')) : real(f, k, alg, ...rest);"
)


def verify_without_webcrypto_ml_dsa(b: Browsing, path: str) -> tuple[str, list[dict[str, str]]]:
    """press_verify in a browser whose WebCrypto has no ML-DSA-44: the page must import the site's module."""
    tab = new_page(b.chromium, b.base_url, 1280)
    tab.page.context.add_init_script(HIDE_ML_DSA)
    tab.page.goto(b.base_url + path, wait_until="load")
    tab.page.get_by_role("button", name=re.compile("^Verify this .* in this browser$")).click()
    tab.page.wait_for_function(f"({OUTCOMES})(document.querySelector('[data-browser-check]'))", timeout=60_000)
    text = tab.page.locator("[data-browser-check] [aria-live=polite]").inner_text()
    steps = tab.page.locator("[data-browser-check] [data-check-steps] li").evaluate_all(
        "lis => lis.map(li => ({status: li.dataset.status, text: li.textContent}))"
    )
    tab.close()
    return text, steps


def browser_has_ml_dsa(b: Browsing) -> bool:
    tab = b.open(layout.CHECK_PAGE, 1280)
    has = tab.page.evaluate(
        "async () => { try { await crypto.subtle.importKey('raw-public', new Uint8Array(1312), {name: 'ML-DSA-44'},"
        " false, ['verify']); return true; } catch (e) { return false; } }"
    )
    tab.close()
    return bool(has)


def test_in_chromium_both_signatures_verify_with_webcrypto_or_the_module(
    served: dict[str, tuple[Browsing, str]],
) -> None:
    b, page = served["pristine"]
    text, steps = press_verify(b, page)
    assert text.startswith("Valid: reveal document a-001 is entry "), (text, steps)
    assert "Also signed by the ML-DSA-44 key this site publishes, SHA256:" in text
    log = step_line(steps, LOG_STEP)
    by = "this browser's WebCrypto" if browser_has_ml_dsa(b) else MODULE
    assert log["status"] == "passed" and log["text"].endswith(f"verified with {by})"), log
    assert step_line(steps, WITNESS_STEP)["status"] == "passed"
    # Where WebCrypto has no ML-DSA-44, the page imports the site's module, and it verifies.
    text, steps = verify_without_webcrypto_ml_dsa(b, page)
    assert text.startswith("Valid: reveal document a-001 is entry "), (text, steps)
    assert step_line(steps, LOG_STEP)["text"].endswith(f"verified with {MODULE})"), steps


def test_in_chromium_a_tampered_ml_dsa_line_fails(served: dict[str, tuple[Browsing, str]]) -> None:
    b, page = served["tampered"]
    for text, steps in (press_verify(b, page), verify_without_webcrypto_ml_dsa(b, page)):
        assert text.startswith(f'Not valid: this reveal document failed "{LOG_STEP}": ML-DSA-44 cosignature by '), text
        assert text.endswith("does not verify."), text
        assert steps[-1]["status"] == "failed"


def test_in_chromium_without_the_module_the_ml_dsa_signatures_could_not_be_checked(
    served: dict[str, tuple[Browsing, str]],
) -> None:
    b, page = served["no-module"]
    text, steps = verify_without_webcrypto_ml_dsa(b, page)
    assert text.startswith("Could not check all of this reveal document: "), text
    assert "Valid" not in text and "mldsa44.js, which verifies it in JavaScript, could not be loaded" in text, text
    assert step_line(steps, "Checking the checkpoint signature")["status"] == "passed"
    assert step_line(steps, LOG_STEP)["status"] == "unavailable"
    assert step_line(steps, WITNESS_STEP)["status"] == "unavailable"


def test_the_site_ships_the_module_beside_check_js(site: MlDsaSite) -> None:
    shipped = (site.out / layout.BROWSER_ML_DSA).read_bytes()
    package = Path(layout.__file__).parent.parent / "verifier" / "browser" / "mldsa44.js"
    assert shipped == package.read_bytes()
    sums = (site.out / layout.SUMS).read_text(encoding="utf-8")
    assert f"{hashlib.sha256(shipped).hexdigest()}  {layout.BROWSER_ML_DSA}\n" in sums


@pytest.mark.parametrize("status", ["revoked", "retired"])
def test_a_line_by_a_revoked_ml_dsa_key_fails_and_one_by_a_retired_key_is_not_checkable_here(
    copy: Path, status: str
) -> None:
    """keys.json given an older ML-DSA-44 key of the log, whose line today's checkpoint also carries: revoked, it can
    sign no tree that records its revocation; retired, only its hand-over tree, which needs the ledger to tell."""
    origin, active = origin_of(copy), ml_dsa_row(copy)["fingerprint"]
    old = Cosigner(origin, ML_DSA_44, hashlib.sha256(b"an older ML-DSA-44 key of the log").digest())
    keys = json.loads((copy / layout.KEYS).read_bytes())
    row = {
        "fingerprint": old.key.fingerprint,
        "public_key": base64.b64encode(old.key.public_key).decode(),
        "status": status,
        "valid_from": "2026-02-15T00:00:00Z",
        "valid_until": keys["ml_dsa_44_keys"][0]["valid_from"],
        "vkey": old.key.vkey,
        **({"reason": "The key leaked."} if status == "revoked" else {}),
    }
    keys["ml_dsa_44_keys"].insert(0, row)
    (copy / layout.KEYS).write_bytes(json.dumps(keys, sort_keys=True, separators=(",", ":")).encode())
    text = (copy / layout.CHECKPOINT).read_text(encoding="utf-8").split("\n\n", 1)[0] + "\n"
    edit_signature_lines(copy, lambda lines: [*lines, old.cosign(text, 0).rstrip("\n")])
    outcome = js("page", site=str(copy), kind="reveal", path=REVEAL)
    if status == "revoked":
        step = failed_step(outcome)
        assert (step["name"], step["detail"]) == (
            LOG_STEP,
            f"a signature by {old.key.fingerprint}, a revoked ML-DSA-44 key (The key leaked.): that key cannot sign a "
            f"tree that records its revocation, this one has {tree_size(copy)} entries",
        )
        return
    assert outcome["status"] == "valid", outcome
    skipped = [s for s in outcome["steps"] if s["status"] == "skipped"]
    assert [s["name"] for s in skipped] == ["Checking the retired key's hand-over"]
    assert skipped[0]["detail"].startswith(
        f"the checkpoint is also signed by the retired ML-DSA-44 key {old.key.fingerprint}"
    )
    size = tree_size(copy)
    assert steps_of(outcome)[LOG_STEP]["detail"].endswith(
        f"; in all, the log's ML-DSA-44 signature by {old.key.fingerprint} on the tree of {size} entries, the "
        f"log's ML-DSA-44 signature by {active} on the tree of {size} entries"
    )
