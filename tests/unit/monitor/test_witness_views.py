"""generator/monitor/witness_views.py: each witness's latest checkpoint of a log, asked over HTTP on the loopback
at the tlog-witness monitoring path and opened with the policy's keys: a view only when the log's signature and
the witness's cosignature (Ed25519 or ML-DSA-44) both verify, and otherwise the reason, never an exception; the
policy file and --max-age refused with the file, line or option named."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from generator.core.cosigning_keys import Cosigner
from generator.core.signing_key import Signer
from generator.monitor.monitor_errors import Unreadable
from generator.monitor.witness_views import (
    MAX_POLICY_BYTES,
    MAX_VIEW_BYTES,
    Unseen,
    View,
    WitnessOptions,
    fetch_views,
    read_witness_options,
    view_path,
)
from generator.verifier import ML_DSA_44
from tests.support.http_site import closed_port
from tests.support.witness_views import cosigned, cosigner, log_signer, serve_views, signed_checkpoint, write_policy

ORIGIN = "log.example.org/test"
LOG = log_signer(ORIGIN)
ROOT = hashlib.sha256(b"the log's tree").digest()
T = 1_800_000_000


def good(witness: Cosigner, size: int = 10, timestamp: int = T) -> bytes:
    return cosigned(signed_checkpoint(LOG, ORIGIN, size, ROOT), witness, timestamp)


def options(
    tmp_path: Path, witnesses: list[tuple[str, Cosigner, str | None]], max_age: str | None = None
) -> WitnessOptions:
    return read_witness_options(write_policy(tmp_path / "policy.txt", LOG.vkey, witnesses), max_age)


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as s:
        yield s


def served(stack: ExitStack, note: bytes | None, origin: str = ORIGIN) -> str:
    return stack.enter_context(serve_views({origin: note} if note is not None else {})).url


def test_the_path_is_the_hex_sha256_of_the_origin() -> None:
    assert view_path("example.com/log") == hashlib.sha256(b"example.com/log").hexdigest() + "/checkpoint"


def test_a_view_needs_the_log_s_signature_and_the_witness_s_cosignature(stack: ExitStack, tmp_path: Path) -> None:
    w1, w2, pq = cosigner("w1.example"), cosigner("w2.example"), cosigner("pq.example", ML_DSA_44)
    url1 = served(stack, good(w1, 10, T - 5))
    server = stack.enter_context(serve_views({ORIGIN: good(pq, 12, T - 7)}))
    views, unseen = fetch_views(options(tmp_path, [("w1", w1, url1), ("w2", w2, None), ("pq", pq, server.url)]), ORIGIN)
    assert views == [View("w1", url1, 10, ROOT, T - 5), View("pq", server.url, 12, ROOT, T - 7)]
    assert unseen == [Unseen("w2", None, "no-url", "the policy gives no URL for it: not asked")]
    assert server.requests == ["/" + view_path(ORIGIN)]
    # A URL with a path: the view is under it.
    nested = stack.enter_context(serve_views({ORIGIN: good(w1)}))
    views, _ = fetch_views(options(tmp_path, [("w1", w1, nested.url + "/")]), ORIGIN)
    assert [v.witness for v in views] == ["w1"]


def test_every_answer_that_is_not_a_view_says_why(stack: ExitStack, tmp_path: Path) -> None:
    w = cosigner("w.example")
    stranger = Signer(ORIGIN, b"\x07" * 32)  # another key under the log's name
    bad_cosig = bytearray(good(w))
    bad_cosig[-10] ^= 1 if bad_cosig[-10] != ord("A") else 3
    cases = {
        "absent": (None, "absent", f"no checkpoint of {ORIGIN}: it never cosigned one"),
        "other-log": (
            cosigned(signed_checkpoint(stranger, ORIGIN, 10, ROOT), w, T),
            "invalid",
            "note has no signature by a known key",
        ),
        "other-origin": (
            cosigned(signed_checkpoint(LOG, "other.example.org/log", 10, ROOT), w, T),
            "invalid",
            'it is a checkpoint of "other.example.org/log"',
        ),
        "uncosigned": (signed_checkpoint(LOG, ORIGIN, 10, ROOT), "invalid", "it carries no cosignature by the witness"),
        "bad-cosignature": (bytes(bad_cosig), "invalid", "Ed25519 cosignature by w.example (key ID "),
        "junk": (b"\xff\xfe not a note", "invalid", "its answer is not a checkpoint of"),
        "huge": (b"x" * (MAX_VIEW_BYTES + 1), "unreachable", f"bytes, more than the {MAX_VIEW_BYTES} such a file"),
    }
    entries = [(name, w, served(stack, note)) for name, (note, _, _) in cases.items()]
    entries.append(("down", w, f"http://127.0.0.1:{closed_port()}"))
    # A policy names a key once: each case is asked under a policy of its own.
    for name, w_key, url in entries:
        views, unseen = fetch_views(options(tmp_path, [(name, w_key, url)]), ORIGIN)
        assert views == [], name
        [u] = unseen
        kind, why = cases[name][1:] if name in cases else ("unreachable", "no usable answer: ")
        assert (u.witness, u.url, u.kind) == (name, url, kind), (name, u)
        assert why in u.why, (name, u.why)


def test_a_policy_without_the_log_is_a_bad_argument(tmp_path: Path) -> None:
    w = cosigner("w.example")
    other = log_signer("other.example.org/log")
    path = write_policy(tmp_path / "p.txt", other.vkey, [("w", w, "http://127.0.0.1:1")])
    with pytest.raises(Unreadable) as caught:
        fetch_views(read_witness_options(path, None), ORIGIN)
    assert str(caught.value) == (
        f"--witnesses {path}: the policy names no key of the log {ORIGIN}, so no witness's checkpoint of it can be "
        'verified; it names the logs "other.example.org/log"'
    )


def test_the_policy_file_and_max_age_are_read_strictly(tmp_path: Path) -> None:
    path = tmp_path / "policy.txt"
    path.write_text(f"log {LOG.vkey}\nquorum none\n")
    assert read_witness_options(path, "36h").max_age == 36 * 3600
    assert read_witness_options(path, None).max_age is None
    with pytest.raises(Unreadable, match=r"^--max-age: '36' is not a duration; expected a whole number then s"):
        read_witness_options(path, "36")
    path.write_text(f"log {LOG.vkey}\n\nwitness\nquorum none\n")
    with pytest.raises(Unreadable, match=rf"^--witnesses {path}: policy line 3: a witness line is"):
        read_witness_options(path, None)
    path.write_text(f"log {LOG.vkey}\n")
    with pytest.raises(Unreadable, match=rf"^--witnesses {path}: policy: ends after line 1 without a quorum line"):
        read_witness_options(path, None)
    path.write_bytes(b"#" * (MAX_POLICY_BYTES + 1))
    with pytest.raises(Unreadable, match=rf"^--witnesses {path}: larger than {MAX_POLICY_BYTES} bytes; not a policy"):
        read_witness_options(path, None)
    with pytest.raises(Unreadable, match=rf"^--witnesses {tmp_path}: "):
        read_witness_options(tmp_path, None)


def test_a_view_signed_by_any_one_log_key_of_a_two_key_policy_is_opened() -> None:
    """A witness keeps only the log lines it verified, and a log may sign a fork it shows one
    witness with one key only: under a policy naming the log's Ed25519 and ML-DSA-44 keys, a view
    signed by either is the log's word (a split view among them is caught), one by neither is not."""
    from generator.monitor.witness_views import open_view
    from generator.verifier import NoteError, checkpoint_text, parse_policy

    witness = cosigner("w.example")
    log_ml = Cosigner(ORIGIN, ML_DSA_44, hashlib.sha256(b"the log's ml-dsa key").digest())
    policy = parse_policy(f"log {LOG.vkey}\nlog {log_ml.key.vkey}\nwitness W {witness.key.vkey} http://w/\nquorum W\n")
    text = checkpoint_text(ORIGIN, 10, ROOT)
    ed_only = signed_checkpoint(LOG, ORIGIN, 10, ROOT)
    ml_only = (text + "\n" + log_ml.cosign(text, 0)).encode()
    stranger = (text + "\n" + Cosigner(ORIGIN, ML_DSA_44, bytes(32)).cosign(text, 0)).encode()
    for note in (ed_only, ml_only):
        view = open_view(policy, policy.witnesses[0], ORIGIN, cosigned(note, witness, T))
        assert (view.size, view.root, view.timestamp) == (10, ROOT, T)
    with pytest.raises(NoteError, match="no signature by a known key"):
        open_view(policy, policy.witnesses[0], ORIGIN, cosigned(stranger, witness, T))
