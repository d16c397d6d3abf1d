"""A witness's keys of either type (generator/witness/server.py, `transparency witness key`): an
ML-DSA-44 key cosigns with the current time over the `subtree/v1` message (checked here against the
spec's bytes, independently of the module), a witness with one key of each type answers one line a
key, key files of earlier releases (bare Ed25519 seeds) still load, and a key set that cannot be one
witness's is refused by name."""

from __future__ import annotations

import base64
import hashlib
import stat
import struct
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import mldsa

from generator.core.cosigning_keys import Cosigner, load_cosigner, write_cosigner
from generator.core.generator_errors import KeyFileError
from generator.verifier import (
    ED25519,
    ML_DSA_44,
    merkle_root,
    parse_cosigner_vkey,
    verify_cosignatures,
)
from generator.witness.server import Witness, load_keys
from tests.support.witnesses import (
    LEAVES,
    LOG_KEY,
    ORIGIN,
    START,
    WITNESS_NAME,
    WITNESS_SEED,
    Clock,
    cli,
    grow_request,
    ml_dsa_cosigner,
    note,
    request,
)

ML_DSA = ml_dsa_cosigner(WITNESS_NAME, "test witness ml-dsa")
ED = Cosigner(WITNESS_NAME, ED25519, WITNESS_SEED)


def subtree_v1(name: str, timestamp: int, origin: str, start: int, end: int, root: bytes) -> bytes:
    """c2sp.org/tlog-cosignature's `cosigned_message`, written from the spec."""
    return (
        b"subtree/v1\n\x00"
        + bytes([len(name)])
        + name.encode()
        + struct.pack(">Q", timestamp)
        + bytes([len(origin)])
        + origin.encode()
        + struct.pack(">QQ", start, end)
        + root
    )


def raw_of(line: str) -> bytes:
    assert line.startswith("\u2014 ") and line.endswith("\n")
    return base64.b64decode(line.rstrip("\n").rsplit(" ", 1)[1], validate=True)


def test_an_ml_dsa_44_witness_cosigns_with_the_current_time(tmp_path):
    w = Witness(WITNESS_NAME, ML_DSA, tmp_path / "state", {ORIGIN: [LOG_KEY]}, clock=Clock())
    status, headers, body = w.add_checkpoint(request(0, [], note(5)))
    assert status == 200 and headers["Content-Type"] == "text/plain; charset=utf-8"
    [line] = body.decode().splitlines(keepends=True)
    raw = raw_of(line)
    assert raw[:4] == hashlib.sha256(WITNESS_NAME.encode() + b"\n\x06" + ML_DSA.key.public_key).digest()[:4]
    assert int.from_bytes(raw[4:12], "big") == START + 1  # the current time, never 0
    message = subtree_v1(WITNESS_NAME, START + 1, ORIGIN, 0, 5, merkle_root(LEAVES[:5]))
    mldsa.MLDSA44PublicKey.from_public_bytes(ML_DSA.key.public_key).verify(raw[12:], message)
    assert verify_cosignatures(note(5) + body, [ML_DSA.key]) == {WITNESS_NAME: START + 1}


def test_a_witness_with_a_key_of_each_type_answers_one_line_a_key(tmp_path):
    w = Witness(WITNESS_NAME, [ED, ML_DSA], tmp_path / "state", {ORIGIN: [LOG_KEY]}, clock=Clock())
    status, _, body = w.add_checkpoint(grow_request(0, 7))
    assert status == 200
    ed_line, ml_line = body.decode().splitlines(keepends=True)  # in the order the keys were given
    assert raw_of(ed_line)[:4] == ED.key.key_id and raw_of(ml_line)[:4] == ML_DSA.key.key_id
    # As a client reads it: each key, one call each (one name, two keys), one timestamp for both.
    assert verify_cosignatures(note(7) + body, [ED.key]) == {WITNESS_NAME: START + 1}
    assert verify_cosignatures(note(7) + body, [ML_DSA.key]) == {WITNESS_NAME: START + 1}
    assert w.vkeys == [ED.key.vkey, ML_DSA.key.vkey] and w.vkey == ED.key.vkey
    assert w.add_checkpoint(grow_request(7, 9))[0] == 200


def test_a_broken_clock_makes_no_ml_dsa_44_cosignature_either(tmp_path):
    w = Witness(WITNESS_NAME, ML_DSA, tmp_path / "state", {ORIGIN: [LOG_KEY]}, clock=lambda: 0)
    status, _, body = w.add_checkpoint(request(0, [], note(5)))
    assert status == 500 and "\u2014" not in body.decode()


def test_keys_that_cannot_be_one_witness_s_are_refused(tmp_path):
    other = ml_dsa_cosigner("someone.else", "other")
    with pytest.raises(ValueError, match=r"is named 'someone\.else'"):
        Witness(WITNESS_NAME, [ED, other], tmp_path / "s1", {ORIGIN: [LOG_KEY]})
    with pytest.raises(ValueError, match="at least one key"):
        Witness(WITNESS_NAME, [], tmp_path / "s2", {ORIGIN: [LOG_KEY]})
    with pytest.raises(ValueError, match="32-byte Ed25519 seed"):
        Witness(WITNESS_NAME, bytes(31), tmp_path / "s3", {ORIGIN: [LOG_KEY]})
    long_origin = "o" * 256
    with pytest.raises(ValueError, match="1 to 255 bytes"):
        Witness(WITNESS_NAME, ML_DSA, tmp_path / "s4", {long_origin: [LOG_KEY]})


def _written(tmp_path: Path, name: str, cosigner: Cosigner) -> Path:
    path = tmp_path / name
    write_cosigner(path, cosigner)
    return path


def test_load_keys_reads_both_types_and_old_seed_files(tmp_path):
    ed, ml = _written(tmp_path, "ed.key", ED), _written(tmp_path, "ml.key", ML_DSA)
    seed = tmp_path / "seed.key"
    seed.write_bytes(WITNESS_SEED)
    seed.chmod(0o600)
    assert [k.key for k in load_keys([ed, ml], None)] == [ED.key, ML_DSA.key]
    assert [k.key for k in load_keys([seed, ml], WITNESS_NAME)] == [ED.key, ML_DSA.key]
    with pytest.raises(KeyFileError, match="bare Ed25519 seed; give the cosigner's name"):
        load_keys([seed], None)
    with pytest.raises(KeyFileError, match="the same key is given twice"):
        load_keys([ed, seed], WITNESS_NAME)
    other = _written(tmp_path, "other.key", ml_dsa_cosigner("someone.else", "other"))
    with pytest.raises(KeyFileError, match=r"other\.key: the key is named 'someone\.else', not 'witness\.example/w1'"):
        load_keys([ml, other], None)
    with pytest.raises(KeyFileError, match=r"not 'another\.name'"):
        load_keys([ml], "another.name")
    with pytest.raises(KeyFileError, match="at least one key"):
        load_keys([], None)


def test_from_files_with_two_keys_and_a_logs_file(tmp_path):
    ed, ml = _written(tmp_path, "ed.key", ED), _written(tmp_path, "ml.key", ML_DSA)
    logs = tmp_path / "logs.txt"
    logs.write_text(LOG_KEY.vkey + "\n")
    w = Witness.from_files([ml, ed], None, tmp_path / "state", logs, clock=Clock())
    assert (w.name, w.vkeys) == (WITNESS_NAME, [ML_DSA.key.vkey, ED.key.vkey])
    assert len(w.add_checkpoint(request(0, [], note(3)))[2].splitlines()) == 2


# ---------------------------------------------------------------- `transparency witness key`


def test_the_key_command_makes_an_ml_dsa_44_key_by_default(tmp_path):
    path = tmp_path / "keys" / "w.key"
    code, out = cli("witness", "key", WITNESS_NAME, "--key", path)
    assert code == 0, out
    key = parse_cosigner_vkey(out.strip())
    assert (key.name, key.kind) == (WITNESS_NAME, ML_DSA_44)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_cosigner(path).key == key
    before = path.read_bytes()
    code, out = cli("witness", "key", WITNESS_NAME, "--key", path, "--type", "ed25519")
    assert code != 0 and "refusing to overwrite" in out
    assert path.read_bytes() == before


def test_the_key_command_makes_an_ed25519_key_on_request(tmp_path):
    path = tmp_path / "w.key"
    code, out = cli("witness", "key", WITNESS_NAME, "--key", path, "--type", "ed25519")
    assert code == 0, out
    key = parse_cosigner_vkey(out.strip())
    assert (key.name, key.kind) == (WITNESS_NAME, ED25519)
    assert load_cosigner(path).key == key


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["has space"], "cannot name a cosigner"),
        (["a+b"], "cannot name a cosigner"),
        ([WITNESS_NAME, "--type", "rsa"], "'rsa' is not one of"),
    ],
)
def test_the_key_command_refuses_a_bad_name_or_type(tmp_path, argv, fragment):
    code, out = cli("witness", "key", *argv, "--key", tmp_path / "w.key")
    assert code != 0 and fragment in out, out
    assert not (tmp_path / "w.key").exists()


def test_serve_refuses_a_witness_without_logs_or_with_a_bad_listen_address(tmp_path):
    ml = _written(tmp_path, "ml.key", ML_DSA)
    logs = tmp_path / "logs.txt"
    logs.write_text(LOG_KEY.vkey + "\n")
    code, out = cli("witness", "serve", "--key", ml, "--state", tmp_path / "s", "--listen", "127.0.0.1:0")
    assert code != 0 and "--logs / --log-list" in out and "give either or both" in out, out
    code, out = cli("witness", "serve", "--key", ml, "--state", tmp_path / "s", "--logs", logs, "--listen", "h:x")
    assert code != 0 and "--listen" in out and "HOST:PORT" in out, out
    seed = tmp_path / "seed.key"
    seed.write_bytes(WITNESS_SEED)
    seed.chmod(0o600)
    code, out = cli("witness", "cosign", tmp_path, "--key", seed, "--state", tmp_path / "s", "--logs", logs)
    assert code != 0 and "give the cosigner's name" in out, out
