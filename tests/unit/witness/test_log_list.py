"""A witness's log list read from a file (generator/witness/known_logs.py: the verifier's `logs/v0`, its
problems raised as InputError naming the file and each line), the witness's logs from a logs file and a log list
together, a log that signs with an ML-DSA-44 key, and each log's daily quota of add-checkpoint
requests (quota.py: 429 and Retry-After beyond it). The format itself is tested in
tests/unit/verifier/test_log_list.py."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from generator.core.cosigning_keys import Cosigner
from generator.core.generator_errors import InputError
from generator.verifier import (
    ED25519,
    FormatError,
    ListedLog,
    VerifierKey,
    checkpoint_text,
    format_log_list,
    key_id,
    merkle_root,
    parse_cosigner_vkey,
    verify_cosignatures,
)
from generator.witness.known_logs import known_logs, load_log_list, load_logs, read_log_list
from generator.witness.quota import DAY_SECONDS, DailyQuota
from generator.witness.server import Witness
from tests.support.witnesses import (
    LEAVES,
    LOG_KEY,
    ORIGIN,
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

ML_LOG = ml_dsa_cosigner("ml.example/log", "an ML-DSA-44 log")
OTHER_SK = SigningKey(hashlib.sha256(b"another log").digest())
OTHER_KEY = VerifierKey(
    "other.example/log", key_id("other.example/log", bytes(OTHER_SK.verify_key)), bytes(OTHER_SK.verify_key)
)
WITNESS = Cosigner(WITNESS_NAME, ED25519, WITNESS_SEED)


# ---------------------------------------------------------------- a log list read by a witness


def test_read_log_list_raises_every_problem_at_once():
    entry = f"vkey {LOG_KEY.vkey}\norigin none\nbastion none\nqpd 24\ncontact ops\n"
    assert read_log_list("logs/v0\n" + entry) == [ListedLog(LOG_KEY.vkey, None, None, 24, "ops")]
    with pytest.raises(InputError) as e:
        read_log_list("logs/v0 extra\n" + entry.replace("qpd 24", "qpd 010"), "list.txt")
    assert e.value.summary == "list.txt: not a valid log list (logs/v0)"
    assert [(p.file, p.where) for p in e.value.problems] == [("list.txt", "line 1"), ("list.txt", "line 5")]


def test_load_log_list_names_the_file(tmp_path):
    path = tmp_path / "list.txt"
    path.write_bytes(b"logs/v0\n\xff\n")
    with pytest.raises(InputError, match="cannot read the log list"):
        load_log_list(path)
    path.write_text("logs/v0\nvkey x\n")
    with pytest.raises(InputError) as e:
        load_log_list(path)
    assert e.value.summary == f"{path}: not a valid log list (logs/v0)"
    assert all(p.file == str(path) for p in e.value.problems)


# ---------------------------------------------------------------- the witness's logs


def test_a_logs_file_and_a_log_list_together(tmp_path):
    logs = tmp_path / "logs.txt"
    logs.write_text(f"{LOG_KEY.vkey}\n{ML_LOG.key.vkey}\n")
    rotated = SigningKey(hashlib.sha256(b"rotated").digest())
    rotated_key = VerifierKey(ORIGIN, key_id(ORIGIN, bytes(rotated.verify_key)), bytes(rotated.verify_key))
    listed = tmp_path / "list.txt"
    listed.write_text(
        format_log_list(
            [
                ListedLog(rotated_key.vkey, None, None, 3, "ops"),
                ListedLog(OTHER_KEY.vkey, None, None, 10, "ops"),
                ListedLog(LOG_KEY.vkey, ORIGIN, None, 3, "ops"),
            ]
        )
    )
    known = known_logs(logs, listed)
    assert dict(known.keys) == {
        ORIGIN: (LOG_KEY, rotated_key),
        ML_LOG.name: (ML_LOG.key,),
        OTHER_KEY.name: (OTHER_KEY,),
    }
    assert dict(known.quotas) == {ORIGIN: 3, OTHER_KEY.name: 10}
    assert dict(known_logs(None, listed).keys)[ORIGIN] == (rotated_key, LOG_KEY)
    assert dict(known_logs(logs, None).quotas) == {}
    with pytest.raises(InputError, match="give either or both"):
        known_logs(None, None)
    logs.write_text(f"{LOG_KEY.vkey}\n{WITNESS.key.vkey}\n")
    with pytest.raises(InputError, match=r"logs\.txt:2: this is an Ed25519 cosigner key"):
        known_logs(logs, None)
    logs.write_text(f"{ML_LOG.key.vkey}\n{ML_LOG.key.vkey}\n")
    with pytest.raises(FormatError, match=r":2: the key is listed twice"):
        load_logs(logs)


def ml_dsa_note(size: int, signer: Cosigner = ML_LOG, timestamp: int = 0) -> bytes:
    """A checkpoint signed by an ML-DSA-44 log key: a cosignature line by the key's name."""
    text = checkpoint_text(signer.name, size, merkle_root(LEAVES[:size]))
    return (text + "\n" + signer.cosign(text, timestamp)).encode()


def test_a_log_that_signs_with_an_ml_dsa_44_key_is_cosigned(tmp_path):
    log_key = parse_cosigner_vkey(ML_LOG.key.vkey)
    w = Witness(WITNESS_NAME, WITNESS, tmp_path / "state", {ML_LOG.name: [log_key]}, clock=Clock())
    status, _, lines = w.add_checkpoint(request(0, [], ml_dsa_note(5)))
    assert status == 200, lines
    assert verify_cosignatures(ml_dsa_note(5) + lines, [WITNESS.key])
    served = w.served_checkpoint(hashlib.sha256(ML_LOG.name.encode()).hexdigest())[2]
    assert verify_cosignatures(served, [log_key]) == {ML_LOG.name: 0}  # the log's line, kept
    impostor = ml_dsa_cosigner(ML_LOG.name, "impostor")
    status, _, answer = w.add_checkpoint(request(5, [], ml_dsa_note(5, impostor)))
    assert (status, b"no signature by a known key" in answer) == (403, True)
    signed = ml_dsa_note(5)  # made once: ML-DSA-44 signs with fresh randomness each time
    line = signed.splitlines(keepends=True)[-1]
    head, b64 = line.rstrip(b"\n").rsplit(b" ", 1)
    raw = bytearray(base64.b64decode(b64))
    raw[100] ^= 1  # inside the signature: a change of the last base64 character may touch only padding bits
    tampered = signed.replace(line, head + b" " + base64.b64encode(bytes(raw)) + b"\n")
    status, _, answer = w.add_checkpoint(request(5, [], tampered))
    assert status == 403 and b"ML-DSA-44 signature by ml.example/log" in answer and b"does not verify" in answer


# ---------------------------------------------------------------- quotas


class DayClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_quota_is_a_rolling_day():
    clock = DayClock()
    quota = DailyQuota({ORIGIN: 2, "zero.example": 0}, clock)
    assert quota.take(ORIGIN) is None
    clock.now += 100
    assert quota.take(ORIGIN) is None
    clock.now += 10
    assert quota.take(ORIGIN) == DAY_SECONDS - 110  # until the first request is a day old
    clock.now = 1000.0 + DAY_SECONDS - 0.5
    assert quota.take(ORIGIN) == 1  # rounded up, never 0
    clock.now = 1000.0 + DAY_SECONDS
    assert quota.take(ORIGIN) is None  # the first one has left the day
    assert quota.take(ORIGIN) == 100
    assert quota.take("unlisted.example") is None
    assert quota.take("zero.example") == DAY_SECONDS


def test_a_log_over_its_quota_is_answered_429_with_retry_after(tmp_path):
    day = DayClock()
    w = Witness(
        WITNESS_NAME, WITNESS, tmp_path / "state", {ORIGIN: [LOG_KEY]}, clock=Clock(), quotas={ORIGIN: 3}, day_clock=day
    )
    # Requests the log did not sign cost it nothing: anyone can send them. Nor do replays of its
    # public checkpoints, refused (409) or of the tree the witness holds: only a moved record counts.
    for _ in range(5):
        assert w.add_checkpoint(request(0, [], note(5, sk=OTHER_SK)))[0] == 403
    assert w.add_checkpoint(grow_request(0, 5))[0] == 200
    for _ in range(5):
        assert w.add_checkpoint(grow_request(0, 5))[0] == 409
        assert w.add_checkpoint(request(5, [], note(5)))[0] == 200
    day.now += 60
    assert w.add_checkpoint(grow_request(5, 9))[0] == 200
    day.now += 60
    assert w.add_checkpoint(grow_request(9, 10))[0] == 200
    status, headers, body = w.add_checkpoint(grow_request(10, 12))
    assert (status, headers["Retry-After"], headers["Content-Type"]) == (
        429,
        str(DAY_SECONDS - 120),  # until the first counted request is a day old
        "text/plain; charset=utf-8",
    )
    assert b"over its quota" in body and w.latest(ORIGIN) == (10, merkle_root(LEAVES[:10]))
    day.now += DAY_SECONDS
    assert w.add_checkpoint(grow_request(10, 12))[0] == 200


def test_429_over_http_from_a_log_list(tmp_path: Path):
    listed = tmp_path / "list.txt"
    listed.write_text(format_log_list([ListedLog(LOG_KEY.vkey, None, None, 1, "ops")]))
    key = tmp_path / "w.key"
    key.write_bytes(WITNESS_SEED)
    key.chmod(0o600)
    w = Witness.from_files([key], WITNESS_NAME, tmp_path / "state", None, listed, clock=Clock())
    with serving(w) as url:
        assert http_request(url + "/add-checkpoint", grow_request(0, 5))[0] == 200
        status, headers, _ = http_request(url + "/add-checkpoint", grow_request(5, 9))
        assert status == 429 and 0 < int(headers["Retry-After"]) <= DAY_SECONDS
