"""Signed-note vectors from golang.org/x/mod sumdb/note and C2SP (tests/vectors/signed_note.json).

The PyNaCl tests check the vector file itself; the others exercise
generator.verify (key_id, make_vkey, parse_vkey, open_note) and
generator.core.signing_key (parse_signer_key / Signer.sign_note).
"""

import base64
import importlib
import json
import pathlib

import pytest
from nacl.signing import SigningKey, VerifyKey

ROOT = pathlib.Path(__file__).resolve().parents[2]

VECTORS = json.loads((ROOT / "tests" / "vectors" / "signed_note.json").read_text(encoding="utf-8"))
PETER = {k: VECTORS[k] for k in ("vkey", "name", "key_id", "public_key")}
KEYS = [
    PETER,
    VECTORS["other_keys"]["EnochRoot"],
    {k: VECTORS["checkpoint"][k] for k in ("vkey", "name", "key_id", "public_key")},
]


def _ids(cases):
    return [c["description"] for c in cases]


def _note_bytes(case):
    return bytes.fromhex(case["note_hex"])


def _key_id_bytes(x):
    if isinstance(x, (bytes, bytearray)):
        return bytes(x)
    if isinstance(x, int):
        return x.to_bytes(4, "big")
    return bytes.fromhex(x)


@pytest.fixture
def verify(verifier):
    return verifier


@pytest.fixture(scope="module")
def keys():
    return importlib.import_module("generator.core.signing_key")


# ---------------------------------------------------------------- vector file sanity (PyNaCl only)


def test_pynacl_reproduces_signed_note():
    seed = bytes.fromhex(VECTORS["seed"])
    sk = SigningKey(seed)
    assert sk.verify_key.encode().hex() == VECTORS["public_key"]
    sig = sk.sign(VECTORS["text"].encode()).signature
    line = "\u2014 " + VECTORS["name"] + " " + base64.b64encode(bytes.fromhex(VECTORS["key_id"]) + sig).decode() + "\n"
    assert VECTORS["text"] + "\n" + line == VECTORS["signed"]


def test_pynacl_verifies_checkpoint():
    cp = VECTORS["checkpoint"]
    text, sigline = cp["signed"].split("\n\n")
    assert text + "\n" == cp["text"]
    assert sigline.startswith("\u2014 " + cp["name"] + " ") and sigline.endswith("\n")
    raw = base64.b64decode(sigline.rsplit(" ", 1)[1])
    assert raw[:4].hex() == cp["key_id"]
    VerifyKey(bytes.fromhex(cp["public_key"])).verify(cp["text"].encode(), raw[4:])


@pytest.mark.parametrize("k", KEYS, ids=[k["name"] for k in KEYS])
def test_vkey_fields_are_consistent(k):
    name, kid, b64 = k["vkey"].split("+", 2)
    assert name == k["name"] and kid == k["key_id"]
    assert base64.b64decode(b64) == b"\x01" + bytes.fromhex(k["public_key"])


# ---------------------------------------------------------------- generator.verify: keys


@pytest.mark.parametrize("k", KEYS, ids=[k["name"] for k in KEYS])
def test_key_id(verify, k):
    assert verify.key_id(k["name"], bytes.fromhex(k["public_key"])) == bytes.fromhex(k["key_id"])


@pytest.mark.parametrize("k", KEYS, ids=[k["name"] for k in KEYS])
def test_make_vkey(verify, k):
    assert verify.make_vkey(k["name"], bytes.fromhex(k["public_key"])) == k["vkey"]


@pytest.mark.parametrize("k", KEYS, ids=[k["name"] for k in KEYS])
def test_parse_vkey(verify, k):
    vk = verify.parse_vkey(k["vkey"])
    assert vk.name == k["name"]
    assert vk.key_id == bytes.fromhex(k["key_id"])
    assert vk.public_key == bytes.fromhex(k["public_key"])


BAD_VKEYS = VECTORS["bad_vkeys"]


@pytest.mark.parametrize("case", BAD_VKEYS, ids=_ids(BAD_VKEYS))
def test_parse_vkey_rejects(verify, case):
    with pytest.raises(verify.FormatError) as e:
        verify.parse_vkey(case["vkey"])
    assert f"{type(e.value).__name__}: {e.value}" == case["error"]


# ---------------------------------------------------------------- generator.core.signing_key: signing side


def test_signer_reproduces_signed_note(keys):
    signer = keys.parse_signer_key(VECTORS["skey"])
    assert signer.name == VECTORS["name"]
    assert bytes(signer.public_key) == bytes.fromhex(VECTORS["public_key"])
    assert _key_id_bytes(signer.key_id) == bytes.fromhex(VECTORS["key_id"])
    assert signer.sign_note(VECTORS["text"]) == VECTORS["signed"].encode("utf-8")


def test_signed_note_round_trip(verify, keys):
    signer = keys.parse_signer_key(VECTORS["skey"])
    note = verify.open_note(signer.sign_note(VECTORS["text"]), [verify.parse_vkey(VECTORS["vkey"])])
    assert note.text == VECTORS["text"]


BAD_SKEYS = VECTORS["bad_skeys"]


@pytest.mark.parametrize("case", BAD_SKEYS, ids=_ids(BAD_SKEYS))
def test_parse_signer_key_rejects(verify, keys, case):
    with pytest.raises(ValueError) as e:
        keys.parse_signer_key(case["skey"])
    assert f"{type(e.value).__name__}: {e.value}" == case["error"]


# ---------------------------------------------------------------- generator.verify: open_note


def test_open_expected_signed_note(verify):
    note = verify.open_note(VECTORS["signed"].encode("utf-8"), [verify.parse_vkey(VECTORS["vkey"])])
    assert note.text == VECTORS["text"]


OPEN = VECTORS["open"]


@pytest.mark.parametrize("case", OPEN, ids=_ids(OPEN))
def test_open_cases(verify, case):
    verifiers = [verify.parse_vkey(k) for k in case["verifiers"]]
    if case["expect"] == "ok":
        assert verify.open_note(_note_bytes(case), verifiers).text == case["text"]
    else:
        assert case["expect"] == "error"
        with pytest.raises(verify.NoteError) as e:
            verify.open_note(_note_bytes(case), verifiers)
        assert f"{type(e.value).__name__}: {e.value}" == case["error"]


MALFORMED = VECTORS["malformed"]


@pytest.mark.parametrize("case", MALFORMED, ids=_ids(MALFORMED))
def test_malformed_rejected(verify, case):
    with pytest.raises(verify.NoteError) as e:
        verify.open_note(_note_bytes(case), [verify.parse_vkey(VECTORS["vkey"])])
    assert f"{type(e.value).__name__}: {e.value}" == case["error"]


def test_open_checkpoint(verify):
    cp = VECTORS["checkpoint"]
    note = verify.open_note(cp["signed"].encode("utf-8"), [verify.parse_vkey(cp["vkey"])])
    assert note.text == cp["text"]
    # the same checkpoint with only an unrelated known key must be rejected
    with pytest.raises(verify.NoteError):
        verify.open_note(cp["signed"].encode("utf-8"), [verify.parse_vkey(VECTORS["vkey"])])


EXAMPLES = VECTORS["unverifiable_examples"]


@pytest.mark.parametrize("case", EXAMPLES, ids=_ids(EXAMPLES))
def test_examples_without_known_key_rejected(verify, case):
    for verifiers in ([], [verify.parse_vkey(VECTORS["vkey"])]):
        with pytest.raises(verify.NoteError):
            verify.open_note(case["note"].encode("utf-8"), verifiers)
