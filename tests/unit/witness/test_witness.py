"""The witness (generator/witness/server.py) against c2sp.org/tlog-witness add-checkpoint: real
checkpoints of real trees, signed by a log key, each answer's status code as the spec sets it,
its state kept across a kill, and an HTTP round trip on 127.0.0.1."""

import base64
import hashlib
import http.client
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from nacl.signing import SigningKey, VerifyKey

from generator.core.cosigning_keys import load_cosigner
from generator.core.generator_errors import KeyFileError
from generator.core.proofs import consistency_proof
from generator.state.witness_state import state_path
from generator.verifier import (
    EMPTY_ROOT,
    FormatError,
    VerifierKey,
    checkpoint_text,
    key_id,
    merkle_root,
    note_signature_line,
)
from generator.verifier.tlog.cosignature import CosignerKey, verify_cosignatures
from generator.witness.known_logs import load_logs
from generator.witness.request_bodies import MAX_REQUEST_BYTES, files_request
from generator.witness.server import Witness
from tests.support.demo import REPO
from tests.support.witnesses import (
    FORK,
    LEAVES,
    LOG_KEY,
    LOG_PK,
    LOG_SK,
    ORIGIN,
    START,
    WITNESS_NAME,
    WITNESS_SEED,
    Clock,
    http_request,
    note,
    request,
    serving,
)
from tests.support.witnesses import grow_request as grow

W_KEY = CosignerKey(WITNESS_NAME, bytes(SigningKey(WITNESS_SEED).verify_key))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def w(state: Path, clock: Clock) -> Witness:
    return Witness(WITNESS_NAME, WITNESS_SEED, state, {ORIGIN: [LOG_KEY]}, clock=clock)


def assert_cosigned(response, checkpoint: bytes, timestamp: int) -> None:
    status, headers, body = response
    assert status == 200, body
    assert headers["Content-Type"].startswith("text/plain")
    line = body.decode()
    assert line.startswith("\u2014 " + WITNESS_NAME + " ") and line.endswith("\n") and line.count("\n") == 1
    # independently of the module: key ID, timestamp, signature over the spec's message
    pk = bytes(SigningKey(WITNESS_SEED).verify_key)
    raw = base64.b64decode(line.split(" ")[2].strip(), validate=True)
    assert raw[:4] == hashlib.sha256(WITNESS_NAME.encode() + b"\n\x04" + pk).digest()[:4]
    assert int.from_bytes(raw[4:12], "big") == timestamp
    text = checkpoint.decode()[: checkpoint.decode().rfind("\n\n") + 1]
    VerifyKey(pk).verify(b"cosignature/v1\ntime %d\n" % timestamp + text.encode(), raw[12:])
    # and as a client does it: the response appended to the checkpoint is a cosigned note
    assert verify_cosignatures(checkpoint + body, [W_KEY]) == {WITNESS_NAME: timestamp}


def assert_refused(response, status: int, fragment: str = "") -> None:
    got, _, body = response
    assert got == status, body
    assert fragment in body.decode()
    assert "\u2014" not in body.decode()  # nothing cosigned


def assert_conflict(response, known_size: int) -> None:
    status, headers, body = response
    assert (status, headers["Content-Type"], body) == (409, "text/x.tlog.size", f"{known_size}\n".encode())


# ---------------------------------------------------------------- accepted checkpoints


def test_first_checkpoint_with_old_0_is_cosigned_and_recorded(w, state):
    cp = note(5)
    assert_cosigned(w.add_checkpoint(request(0, [], cp)), cp, START + 1)
    assert w.latest(ORIGIN) == (5, merkle_root(LEAVES[:5]))
    [path] = state.iterdir()
    assert path.name == hashlib.sha256(ORIGIN.encode()).hexdigest() + ".checkpoint"
    record, kept = path.read_bytes().split(b"\n\n", 1)  # the record, then the cosigned note it serves
    assert record + b"\n" == checkpoint_text(ORIGIN, 5, merkle_root(LEAVES[:5])).encode()
    assert verify_cosignatures(kept, [W_KEY]) == {WITNESS_NAME: START + 1}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(("old", "new"), [(5, 9), (4, 13), (1, 2), (8, 16), (7, 8)])
def test_consistent_growth_is_cosigned(w, old, new):
    assert w.add_checkpoint(grow(0, old))[0] == 200
    cp = note(new)
    assert_cosigned(w.add_checkpoint(request(old, consistency_proof(LEAVES[:new], old), cp)), cp, START + 2)
    assert w.latest(ORIGIN) == (new, merkle_root(LEAVES[:new]))


def test_the_same_checkpoint_again_is_cosigned_again(w, state):
    assert w.add_checkpoint(grow(0, 6))[0] == 200
    assert_cosigned(w.add_checkpoint(request(6, [], note(6))), note(6), START + 2)
    assert_cosigned(w.add_checkpoint(request(6, [], note(6))), note(6), START + 3)
    assert sorted(p.name for p in state.iterdir()) == [state_path(state, ORIGIN).name]  # one file, replaced
    assert w.latest(ORIGIN) == (6, merkle_root(LEAVES[:6]))


def test_an_empty_tree_then_growth(w):
    assert_cosigned(w.add_checkpoint(request(0, [], note(0))), note(0), START + 1)
    assert w.latest(ORIGIN) == (0, EMPTY_ROOT)
    assert w.add_checkpoint(grow(0, 3))[0] == 200


def test_extension_lines_and_other_signatures_are_fine(w):
    text = checkpoint_text(ORIGIN, 4, merkle_root(LEAVES[:4])) + "extension\n"
    other = SigningKey(hashlib.sha256(b"other").digest())
    cp = (
        text
        + "\n"
        + note_signature_line(
            "someone.else", key_id("someone.else", bytes(other.verify_key)), other.sign(b"x").signature
        )
        + note_signature_line(ORIGIN, key_id(ORIGIN, LOG_PK), LOG_SK.sign(text.encode()).signature)
    ).encode()
    assert_cosigned(w.add_checkpoint(request(0, [], cp)), cp, START + 1)


# ---------------------------------------------------------------- refusals, each with the spec's code


def test_an_inconsistent_proof_is_refused_422(w):
    assert w.add_checkpoint(grow(0, 5))[0] == 200
    # a fork of the log (entry 3 rewritten), proven consistent with its own past, not with ours
    assert_refused(w.add_checkpoint(grow(5, 9, FORK)), 422, "consistency proof from 5 to 9 does not verify")
    proof = consistency_proof(LEAVES[:9], 5)
    proof[0] = bytes(32)
    assert_refused(w.add_checkpoint(request(5, proof, note(9))), 422, "does not verify")
    assert_refused(w.add_checkpoint(request(5, proof[:-1], note(9))), 422, "does not verify")
    assert w.latest(ORIGIN) == (5, merkle_root(LEAVES[:5]))


def test_a_refusal_names_roots_in_base64_as_checkpoints_do(w, caplog):
    """The roots a consistency failure names are written as a checkpoint, the verifier's report and
    the monitor write them (base64), in the answer and in the witness's log alike."""
    assert w.add_checkpoint(grow(0, 5))[0] == 200
    with caplog.at_level("WARNING", logger="generator.witness.server"):
        _, _, body = w.add_checkpoint(request(5, [], note(5, FORK)))
    ours, theirs = merkle_root(LEAVES[:5]), merkle_root(FORK[:5])
    message = body.decode() + caplog.text
    assert (
        f"it leads to root {base64.b64encode(theirs).decode()}, not {base64.b64encode(ours).decode()}" in body.decode()
    )
    assert base64.b64encode(theirs).decode() in caplog.text
    assert ours.hex() not in message and theirs.hex() not in message


def test_a_different_root_at_the_recorded_size_is_refused_422(w):
    assert w.add_checkpoint(grow(0, 5))[0] == 200
    assert_refused(w.add_checkpoint(request(5, [], note(5, FORK))), 422, "does not verify")
    assert_refused(w.add_checkpoint(request(5, [bytes(32)], note(5))), 422)  # equal sizes: the proof is empty
    assert w.latest(ORIGIN) == (5, merkle_root(LEAVES[:5]))


def test_proofs_from_size_0_and_empty_trees_are_checked_422(w):
    assert_refused(w.add_checkpoint(request(0, [bytes(32)], note(5))), 422, "from size 0 must be empty")
    assert_refused(w.add_checkpoint(request(0, [], note(0, root=bytes(32)))), 422, "empty tree's root hash")
    assert w.latest(ORIGIN) is None


def test_a_smaller_size_or_a_wrong_old_size_is_409_with_the_recorded_size(w):
    assert_conflict(w.add_checkpoint(grow(5, 9)), 0)  # never cosigned: the recorded size is 0
    assert w.add_checkpoint(grow(0, 9))[0] == 200
    assert_conflict(w.add_checkpoint(request(5, [], note(5))), 9)  # a smaller checkpoint, from its own size
    assert_conflict(w.add_checkpoint(grow(3, 12)), 9)  # growth from a size the witness is not at
    assert_conflict(w.add_checkpoint(grow(0, 12)), 9)  # a client that does not know the witness's size
    assert_refused(w.add_checkpoint(request(9, [], note(5))), 400, "old size 9 is larger than the checkpoint's size 5")
    assert w.add_checkpoint(grow(9, 12))[0] == 200  # the client, told 9, goes on from there


def test_a_bad_log_signature_is_403(w):
    cp = bytearray(note(5))
    sig_at = cp.rindex(b" ") + 10
    cp[sig_at] = ord("A") if cp[sig_at] != ord("A") else ord("B")
    assert_refused(w.add_checkpoint(request(0, [], bytes(cp))), 403, "invalid signature")
    impostor = SigningKey(hashlib.sha256(b"impostor").digest())  # the log's name, another key: an unknown key
    assert_refused(w.add_checkpoint(request(0, [], note(5, sk=impostor))), 403, "no signature by a known key")
    unsigned_by_log = note(5).split(b"\n\n")[0] + b"\n\n" + note_signature_line("x", b"\0" * 4, b"\0" * 64).encode()
    assert_refused(w.add_checkpoint(request(0, [], unsigned_by_log)), 403)
    assert w.latest(ORIGIN) is None


def test_an_unknown_log_is_404(w):
    assert_refused(w.add_checkpoint(request(0, [], note(5, origin="example.com/unknown"))), 404, "unknown log")


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"", "`old <size>`"),
        (b"old 1", "`old <size>`"),
        (b"old 01\n\n" + note(5), "`old <size>`"),
        (b"old -1\n\n" + note(5), "`old <size>`"),
        (b"Old 0\n\n" + note(5), "`old <size>`"),
        (b"old 0 \n\n" + note(5), "`old <size>`"),
        (b"old 0\n" + note(5), "consistency proof line 1 is not"),
        (b"old 5\nAAAA\n\n" + note(9), "consistency proof line 1 is not a base64 32-byte hash"),
        (b"old 5\n" + base64.b64encode(bytes(32))[:-1] + b"\n\n" + note(9), "line 1 is not"),
        (b"old 5\n" + b"".join([base64.b64encode(bytes(32)) + b"\n"] * 64) + b"\n" + note(9), "more than 63"),
        (b"old 5\n" + base64.b64encode(bytes(32)), "no empty line"),
        (b"old 0\n\n" + note(5).replace(b"\n\n", b"\n"), "malformed checkpoint"),
        (b"old 0\n\n" + note(5).replace(ORIGIN.encode() + b"\n5", ORIGIN.encode() + b"\nfive"), "malformed checkpoint"),
        (b"old 0\n\n\xff" + note(5), "malformed checkpoint: note is not valid UTF-8"),
    ],
)
def test_malformed_requests_are_400(w, body, fragment):
    assert_refused(w.add_checkpoint(body), 400, fragment)


def test_a_body_over_the_limit_is_413(w):
    assert_refused(w.add_checkpoint(grow(0, 3) + b"x" * MAX_REQUEST_BYTES), 413)


# ---------------------------------------------------------------- the rules hook


def test_rules_run_after_the_proof_checks_and_can_refuse(state, clock):
    calls = []

    def rules(origin, old, new, root, note, files):
        calls.append((origin, old, new))
        return [f"entries {old}..{new} break rule 7", "and rule 8"] if new > 10 else []

    w = Witness(WITNESS_NAME, WITNESS_SEED, state, {ORIGIN: [LOG_KEY]}, clock=clock, rules=rules)
    assert w.add_checkpoint(grow(0, 5))[0] == 200
    assert w.add_checkpoint(grow(5, 9, FORK))[0] == 422  # refused by the proof: the rules are not asked
    assert w.add_checkpoint(request(0, [], note(9)))[0] == 409  # nor on a conflict
    response = w.add_checkpoint(grow(5, 12))
    assert_refused(response, 422, "refused by the witness's rules:\n- entries 5..12 break rule 7\n- and rule 8\n")
    assert calls == [(ORIGIN, 0, 5), (ORIGIN, 5, 12)]
    assert w.latest(ORIGIN) == (5, merkle_root(LEAVES[:5]))  # nothing recorded
    assert w.add_checkpoint(grow(5, 9))[0] == 200


def test_a_broken_rule_or_clock_is_500_and_nothing_is_cosigned(state, clock):
    def rules(origin, old, new, root, note, files):
        raise RuntimeError("the replay crashed")

    w = Witness(WITNESS_NAME, WITNESS_SEED, state, {ORIGIN: [LOG_KEY]}, clock=clock, rules=rules)
    assert_refused(w.add_checkpoint(grow(0, 5)), 500, "nothing was cosigned")
    assert w.latest(ORIGIN) is None
    for i, bad in enumerate([lambda: 0, lambda: 1.5, lambda: 2**63, lambda: True]):
        w = Witness(WITNESS_NAME, WITNESS_SEED, state.with_name(f"clock-{i}"), {ORIGIN: [LOG_KEY]}, clock=bad)
        assert_refused(w.add_checkpoint(grow(0, 5)), 500)


def test_files_sent_with_the_checkpoint_reach_the_rules_for_that_request_only(state, clock):
    seen = []

    def rules(origin, old, new, root, note, files):
        seen.append(dict(files))
        return [] if files.get("reveals/b-1.json") == b"doc" else ["reveals/b-1.json: missing"]

    w = Witness(WITNESS_NAME, WITNESS_SEED, state, {ORIGIN: [LOG_KEY]}, clock=clock, rules=rules)
    sent = [("ledger/tile/0/000.p/5", bytes(160)), ("reveals/b-1.json", b"doc")]
    assert w.add_checkpoint_with_files(files_request(grow(0, 5), sent))[0] == 200
    assert seen == [dict(sent)]
    # Nothing sent is kept: the next request is judged on its own files.
    assert_refused(w.add_checkpoint(grow(5, 9)), 422, "refused by the witness's rules:\n- reveals/b-1.json: missing")
    assert seen[-1] == {}


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ([("ledger/checkpoint", b"x")], "neither a tile of the log nor a reveal"),
        ([("ledger/tile/../../etc/passwd", b"x")], "neither a tile of the log nor a reveal"),
        ([("reveals/B-1.json", b"x")], "neither a tile of the log nor a reveal"),
        ([("reveals/b-1.json", b"x"), ("reveals/b-1.json", b"y")], "sent twice"),
    ],
)
def test_files_other_than_tiles_and_reveals_are_refused_400(w, files, fragment):
    assert_refused(w.add_checkpoint_with_files(files_request(grow(0, 5), files)), 400, fragment)
    assert w.latest(ORIGIN) is None


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"5\nold 0",
        b"05\n" + grow(0, 5),
        b"x\n" + grow(0, 5),
        files_request(grow(0, 5), []) + b"reveals/a.json 9\nab",
    ],
)
def test_a_malformed_files_request_is_400(w, body):
    assert_refused(w.add_checkpoint_with_files(body), 400)
    assert w.latest(ORIGIN) is None


# ---------------------------------------------------------------- state: atomic, written first, kept


KILLED_CHILD = """
import os, signal, sys
from pathlib import Path
from generator.verifier import parse_vkey
from generator.witness.server import Witness

state, seed, vkey, body = sys.argv[1:]
key = parse_vkey(vkey)

def killed_after_the_state_is_written():
    os.kill(os.getpid(), signal.SIGKILL)  # the clock is read once the record is on disk

clock = killed_after_the_state_is_written
w = Witness("witness.example/w1", bytes.fromhex(seed), Path(state), {key.name: [key]}, clock=clock)
print(w.add_checkpoint(Path(body).read_bytes()))
"""


def test_a_kill_between_state_write_and_response_is_harmless(w, state, tmp_path, clock):
    assert w.add_checkpoint(grow(0, 5))[0] == 200
    body = tmp_path / "body"
    body.write_bytes(grow(5, 9))
    child = subprocess.run(
        [sys.executable, "-c", KILLED_CHILD, str(state), WITNESS_SEED.hex(), LOG_KEY.vkey, str(body)],
        cwd=REPO,
        capture_output=True,
        timeout=60,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    assert child.stdout == b""  # no response, no cosignature left the process
    assert [p.name for p in state.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    restarted = Witness(WITNESS_NAME, WITNESS_SEED, state, {ORIGIN: [LOG_KEY]}, clock=clock)
    assert restarted.latest(ORIGIN) == (9, merkle_root(LEAVES[:9]))  # the record moved on, nothing signed
    assert_conflict(restarted.add_checkpoint(grow(5, 9)), 9)  # the client's retry is told where the witness is
    assert_cosigned(restarted.add_checkpoint(request(9, [], note(9))), note(9), START + 2)


def test_a_failed_state_write_keeps_the_old_record_and_cosigns_nothing(w, state, monkeypatch):
    assert w.add_checkpoint(grow(0, 5))[0] == 200

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    assert_refused(w.add_checkpoint(grow(5, 9)), 500)
    monkeypatch.undo()
    assert w.latest(ORIGIN) == (5, merkle_root(LEAVES[:5]))
    assert [p.name for p in state.iterdir() if p.name.startswith(".")] == []
    assert w.add_checkpoint(grow(5, 9))[0] == 200


def test_an_unreadable_state_is_500_never_a_fresh_start(w, state):
    assert w.add_checkpoint(grow(0, 5))[0] == 200
    [path] = state.iterdir()
    path.write_text("garbage\n")
    assert_refused(w.add_checkpoint(grow(0, 5)), 500)
    path.write_text(checkpoint_text("example.com/other", 5, merkle_root(LEAVES[:5])))
    assert_refused(w.add_checkpoint(grow(5, 9)), 500)


def test_check_and_record_are_atomic_under_concurrency(w):
    results = []
    barrier = threading.Barrier(8)

    def submit() -> None:
        barrier.wait()
        results.append(w.add_checkpoint(grow(0, 5))[0])

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(results) == [200] + [409] * 7


# ---------------------------------------------------------------- keys and config


def test_a_bare_seed_key_file_is_read_and_refused_when_exposed_or_wrong(tmp_path):
    """An earlier release's witness key, a bare 32-byte Ed25519 seed, still loads (given its name)."""
    path = tmp_path / "w.key"
    path.write_bytes(bytes(32))
    os.chmod(path, 0o644)
    with pytest.raises(KeyFileError, match="readable by others"):
        load_cosigner(path, WITNESS_NAME)
    os.chmod(path, 0o600)
    assert load_cosigner(path, WITNESS_NAME).seed == bytes(32)
    with pytest.raises(KeyFileError, match="a bare Ed25519 seed; give the cosigner's name"):
        load_cosigner(path)
    path.write_bytes(bytes(33))
    with pytest.raises(KeyFileError, match="not a cosigner key"):
        load_cosigner(path, WITNESS_NAME)
    with pytest.raises(KeyFileError, match="cannot read"):
        load_cosigner(tmp_path / "missing.key")


def test_from_files_and_the_logs_config(tmp_path, clock):
    key_path = tmp_path / "w.key"  # a bare Ed25519 seed, as earlier releases wrote: the name comes from --name
    key_path.write_bytes(WITNESS_SEED)
    key_path.chmod(0o600)
    other = SigningKey(hashlib.sha256(b"rotated").digest())
    rotated = VerifierKey(ORIGIN, key_id(ORIGIN, bytes(other.verify_key)), bytes(other.verify_key))
    logs = tmp_path / "logs"
    logs.write_text(f"# known logs\n\n  {LOG_KEY.vkey}\n{rotated.vkey}\n")
    assert load_logs(logs) == {ORIGIN: (LOG_KEY, rotated)}
    w = Witness.from_files([key_path], WITNESS_NAME, tmp_path / "state", logs, clock=clock)
    assert w.vkey == W_KEY.vkey
    assert w.add_checkpoint(request(0, [], note(5, sk=other)))[0] == 200  # either key of the log
    logs.write_text(f"{LOG_KEY.vkey}\nnot a vkey\n")
    with pytest.raises(FormatError, match=":2: "):
        load_logs(logs)
    logs.write_text(f"{LOG_KEY.vkey}\n{LOG_KEY.vkey}\n")
    with pytest.raises(FormatError, match=":2: the key is listed twice"):
        load_logs(logs)


# ---------------------------------------------------------------- HTTP


@pytest.fixture
def server(w):
    with serving(w) as url:
        yield url


def post(url: str, body: bytes, method: str = "POST"):
    return http_request(url, body, method)


def test_http_round_trip(server):
    status, headers, body = post(server + "/add-checkpoint", grow(0, 5))
    assert status == 200
    assert verify_cosignatures(note(5) + body, [W_KEY]) == {WITNESS_NAME: START + 1}
    status, headers, body = post(server + "/add-checkpoint", grow(0, 9))
    assert (status, headers["Content-Type"], body) == (409, "text/x.tlog.size", b"5\n")
    status, _, body = post(server + "/add-checkpoint", grow(5, 9, FORK))
    assert status == 422
    status, _, body = post(server + "/add-checkpoint", grow(5, 9))
    assert status == 200
    assert verify_cosignatures(note(9) + body, [W_KEY]) == {WITNESS_NAME: START + 2}


def test_http_other_paths_methods_and_sizes(server):
    assert post(server + "/other", grow(0, 5))[0] == 404
    assert post(server + "/add-checkpoint/", grow(0, 5))[0] == 404
    status, headers, _ = post(server + "/add-checkpoint", b"", method="GET")
    assert (status, headers["Allow"]) == (405, "POST")
    assert post(server + "/", b"", method="GET")[0] == 404
    host, port = server.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        conn.putrequest("POST", "/add-checkpoint")
        conn.putheader("Content-Length", str(MAX_REQUEST_BYTES + 1))
        conn.endheaders()  # the body is never sent: the witness answers from the header
        response = conn.getresponse()
        assert response.status == 413
    finally:
        conn.close()
    assert post(server + "/add-checkpoint", grow(0, 5))[0] == 200  # and it still serves
