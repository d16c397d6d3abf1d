"""The witness's read API (c2sp.org/tlog-witness, "Monitor Retrieval Mechanism") and the state
that holds what it serves (generator/state/witness_state.py): the latest cosigned checkpoint of a
log with the log's signatures the witness verified and the witness's own lines, byte for byte as
add-checkpoint returned them; 404 for a log never cosigned, an unknown origin hash and a record kept
without its note (an earlier release's state file, a kill between recording and signing); a note
never served for another checkpoint than the record's."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from generator.core.cosigning_keys import Cosigner
from generator.core.proofs import consistency_proof
from generator.state.witness_state import (
    WitnessStateError,
    read_latest,
    read_record,
    record_latest,
    state_path,
)
from generator.verifier import (
    ED25519,
    VerifierKey,
    checkpoint_text,
    key_id,
    merkle_root,
    note_signature_line,
    open_note,
    verify_cosignatures,
)
from generator.witness.server import Witness
from tests.support.demo import REPO
from tests.support.witnesses import (
    LEAVES,
    LOG_KEY,
    ORIGIN,
    START,
    WITNESS_NAME,
    WITNESS_SEED,
    Clock,
    grow_request,
    http_request,
    ml_dsa_cosigner,
    note,
    request,
    serving,
)

ED = Cosigner(WITNESS_NAME, ED25519, WITNESS_SEED)
ML_DSA = ml_dsa_cosigner(WITNESS_NAME, "test witness ml-dsa")
ORIGIN_HASH = hashlib.sha256(ORIGIN.encode()).hexdigest()


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def w(state: Path) -> Witness:
    return Witness(WITNESS_NAME, [ED, ML_DSA], state, {ORIGIN: [LOG_KEY]}, clock=Clock())


def served(w: Witness, origin: str = ORIGIN) -> tuple[int, dict[str, str], bytes]:
    return w.served_checkpoint(hashlib.sha256(origin.encode()).hexdigest())


def test_nothing_is_served_before_the_first_cosignature(w):
    status, headers, body = served(w)
    assert (status, headers["Content-Type"]) == (404, "text/plain; charset=utf-8")
    assert b"serves no cosigned checkpoint" in body
    assert served(w, "example.com/unknown")[0] == 404


def test_the_latest_cosigned_checkpoint_is_served_with_the_verified_signatures(w):
    assert w.add_checkpoint(grow_request(0, 5))[0] == 200
    # A checkpoint signed by the log and by an unknown key: only the log's line is served.
    text = checkpoint_text(ORIGIN, 9, merkle_root(LEAVES[:9]))
    stranger = SigningKey(hashlib.sha256(b"stranger").digest())
    signed = (
        note(9)
        + note_signature_line(
            "stranger.example", key_id("stranger.example", bytes(stranger.verify_key)), stranger.sign(b"x").signature
        ).encode()
    )
    status, _, lines = w.add_checkpoint(request(5, consistency_proof(LEAVES[:9], 5), signed))
    assert status == 200
    status, headers, body = served(w)
    assert (status, headers["Content-Type"]) == (200, "text/plain; charset=utf-8")
    assert body == note(9) + lines  # the text, the log's verified line, the lines add-checkpoint returned
    assert body.startswith(text.encode() + b"\n")
    assert b"stranger.example" not in body
    assert open_note(body, [LOG_KEY]).text == text
    assert verify_cosignatures(body, [ED.key]) == {WITNESS_NAME: START + 2}
    assert verify_cosignatures(body, [ML_DSA.key]) == {WITNESS_NAME: START + 2}


def test_cosigning_the_same_checkpoint_again_serves_the_newest_cosignatures(w, state):
    """A log asks again for the tree it had to get a fresh timestamp: the read API must not go on
    serving the first cosignatures (tlog-witness: no more than an hour's delay)."""
    _, _, first = w.add_checkpoint(grow_request(0, 5))
    _, _, again = w.add_checkpoint(request(5, [], note(5)))
    assert again != first  # a new timestamp
    assert served(w)[2] == note(5) + again
    assert read_latest(state, ORIGIN) == (5, merkle_root(LEAVES[:5]))


def test_a_refused_checkpoint_changes_nothing_served(w):
    _, _, lines = w.add_checkpoint(grow_request(0, 5))
    assert w.add_checkpoint(request(5, [bytes(32)], note(9)))[0] == 422
    assert w.add_checkpoint(grow_request(0, 9))[0] == 409
    assert served(w)[2] == note(5) + lines


def test_an_earlier_release_s_state_file_serves_nothing_until_the_next_cosignature(w, state):
    state.mkdir(exist_ok=True)
    path = state_path(state, ORIGIN)
    path.write_text(checkpoint_text(ORIGIN, 5, merkle_root(LEAVES[:5])))  # three lines, as before
    assert read_latest(state, ORIGIN) == (5, merkle_root(LEAVES[:5]))
    assert served(w)[0] == 404
    _, _, lines = w.add_checkpoint(request(5, [], note(5)))  # the same checkpoint: the note is kept now
    assert served(w)[2] == note(5) + lines
    assert w.add_checkpoint(grow_request(5, 9))[0] == 200
    assert served(w)[2].startswith(note(9))


KILLED_CHILD = """
import os, sys
from pathlib import Path
from generator.core.cosigning_keys import Cosigner
from generator.core.proofs import consistency_proof
from generator.verifier import parse_vkey
from generator.witness.server import Witness

state, seed, vkey, body = sys.argv[1:]
key = parse_vkey(vkey)

def killed_once_the_record_is_written():
    os.kill(os.getpid(), 9)  # the clock is read after (size, root) is recorded, before anything is signed

w = Witness("witness.example/w1", bytes.fromhex(seed), Path(state), {key.name: [key]},
            clock=killed_once_the_record_is_written)
print(w.add_checkpoint(Path(body).read_bytes()))
"""


def test_a_kill_between_recording_and_signing_serves_no_note_it_did_not_make(state, tmp_path):
    w = Witness(WITNESS_NAME, WITNESS_SEED, state, {ORIGIN: [LOG_KEY]}, clock=Clock())
    assert w.add_checkpoint(grow_request(0, 5))[0] == 200
    body = tmp_path / "body"
    body.write_bytes(grow_request(5, 9))
    child = subprocess.run(
        [sys.executable, "-c", KILLED_CHILD, str(state), WITNESS_SEED.hex(), LOG_KEY.vkey, str(body)],
        cwd=REPO,
        capture_output=True,
        timeout=60,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    assert child.stdout == b""
    record = read_record(state, ORIGIN)
    assert record is not None and (record.size, record.note) == (9, None)  # moved on, and no note of 5 kept
    restarted = Witness(WITNESS_NAME, WITNESS_SEED, state, {ORIGIN: [LOG_KEY]}, clock=Clock())
    assert served(restarted)[0] == 404
    _, _, lines = restarted.add_checkpoint(request(9, [], note(9)))  # the client, told 9, asks again
    assert served(restarted)[2] == note(9) + lines


def test_a_failed_note_write_returns_no_cosignature_and_serves_no_note(w, state, monkeypatch):
    assert w.add_checkpoint(grow_request(0, 5))[0] == 200
    real_replace = os.replace
    writes: list[str] = []

    def second_write_fails(src, dst):
        writes.append(str(dst))
        if len(writes) == 2:
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", second_write_fails)
    status, _, body = w.add_checkpoint(grow_request(5, 9))
    monkeypatch.undo()
    assert status == 500 and "\u2014" not in body.decode()
    assert read_latest(state, ORIGIN) == (9, merkle_root(LEAVES[:9]))
    assert served(w)[0] == 404
    assert w.add_checkpoint(request(9, [], note(9)))[0] == 200
    assert served(w)[0] == 200


# ---------------------------------------------------------------- the state file


def test_a_note_of_another_checkpoint_is_never_recorded_nor_read(state):
    state.mkdir()
    root5, root9 = merkle_root(LEAVES[:5]), merkle_root(LEAVES[:9])
    with pytest.raises(ValueError, match="at size 9, not of the record"):
        record_latest(state, ORIGIN, 5, root5, note(9))
    record_latest(state, ORIGIN, 5, root5, note(5))
    path = state_path(state, ORIGIN)
    path.write_bytes(checkpoint_text(ORIGIN, 5, root5).encode() + b"\n" + note(9))
    with pytest.raises(WitnessStateError, match="at size 9, not of the record"):
        read_record(state, ORIGIN)
    path.write_bytes(checkpoint_text(ORIGIN, 9, root9).encode() + note(9))
    with pytest.raises(WitnessStateError, match="followed by an empty line"):
        read_record(state, ORIGIN)
    path.write_bytes(checkpoint_text(ORIGIN, 9, root9).encode() + b"\nnot a note\n")
    with pytest.raises(WitnessStateError, match="not a cosigned checkpoint"):
        read_record(state, ORIGIN)
    path.write_bytes(checkpoint_text(ORIGIN, 9, root9).encode()[:-1])
    with pytest.raises(WitnessStateError, match="does not end with a newline"):
        read_record(state, ORIGIN)


def test_an_unreadable_note_is_the_witness_s_own_failure(w, state):
    assert w.add_checkpoint(grow_request(0, 5))[0] == 200
    path = state_path(state, ORIGIN)
    path.write_bytes(path.read_bytes() + b"trailing garbage")
    assert w.served_checkpoint(ORIGIN_HASH)[0] == 500
    assert w.add_checkpoint(grow_request(5, 9))[0] == 500


# ---------------------------------------------------------------- over HTTP


def test_the_read_api_over_http(w):
    other = VerifierKey("example.com/other", LOG_KEY.key_id, LOG_KEY.public_key)
    w2 = Witness(WITNESS_NAME, [ED], w.state_dir, {ORIGIN: [LOG_KEY], other.name: [other]}, clock=Clock())
    with serving(w2) as url:
        assert http_request(f"{url}/{ORIGIN_HASH}/checkpoint", method="GET")[0] == 404
        _, _, lines = http_request(url + "/add-checkpoint", grow_request(0, 5))
        status, headers, body = http_request(f"{url}/{ORIGIN_HASH}/checkpoint", method="GET")
        assert (status, headers["Content-Type"], body) == (200, "text/plain; charset=utf-8", note(5) + lines)
        status, headers, body = http_request(f"{url}/{ORIGIN_HASH}/checkpoint", method="HEAD")
        assert (status, body, headers["Content-Length"]) == (200, b"", str(len(note(5) + lines)))
        other_hash = hashlib.sha256(other.name.encode()).hexdigest()
        assert http_request(f"{url}/{other_hash}/checkpoint", method="GET")[0] == 404  # known, never cosigned
        assert http_request(f"{url}/{ORIGIN_HASH.upper()}/checkpoint", method="GET")[0] == 404
        assert http_request(f"{url}/{ORIGIN_HASH[:-1]}/checkpoint", method="GET")[0] == 404
        assert http_request(f"{url}/{'0' * 64}/checkpoint", method="GET")[0] == 404
        assert http_request(f"{url}/{ORIGIN_HASH}/checkpoint/", method="GET")[0] == 404
        status, headers, _ = http_request(f"{url}/{ORIGIN_HASH}/checkpoint", b"x")
        assert (status, headers["Allow"]) == (405, "GET, HEAD")
        status, headers, _ = http_request(f"{url}/{ORIGIN_HASH}/checkpoint", method="DELETE")
        assert (status, headers["Allow"]) == (405, "GET, HEAD")
