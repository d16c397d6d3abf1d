"""Timestamped releases: a build asks a real RFC 3161 authority (OpenSSL's, on loopback) for a token
over its checkpoint, publishes it, and the verifier checks it; `openssl ts -verify` accepts what was
published; a token over another checkpoint, an event dated after its token and an authority that
does not answer each meet the right answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.build.timestamping import token_file
from generator.commands.build import build
from generator.commands.gate import GateSpec
from generator.commands.init import init_program
from generator.core.generator_errors import VerificationFailed
from generator.program.datadir import Paths
from generator.verifier import checkpoint_body, read_timestamp_token, verify_site
from tests.support.forgery import forked_build
from tests.support.programs import METHODOLOGY, item, write_items
from tests.support.timestamp_authority import TimestampAuthority, timestamp_authority

# Events dated well before any clock this test runs under, so that a real token is later than all.
AT = "2026-01-05T09:00:00Z"


@pytest.fixture(scope="module")
def tsa() -> Iterator[TimestampAuthority]:
    with timestamp_authority("ecdsa-p256") as authority:
        yield authority


def list_authority(paths: Paths, tsa: TimestampAuthority, name: str = "local-tsa", url: str | None = None) -> None:
    doc = {
        "type": "timestamp-authorities",
        "v": 1,
        "authorities": [{"name": name, "url": url or tsa.url, "certificate": tsa.certificate_pem.decode()}],
    }
    (paths.data / "timestamp-authorities.json").write_text(json.dumps(doc))


def small_program(root: Path) -> Paths:
    paths = Paths(root / "data", root / "private")
    gates = [GateSpec("a", "Gate A", True), GateSpec("b", "Gate B", False)]
    init_program(paths, "Stamped program", "stamped.example.org/prog", gates, "A test.", AT, methodology=METHODOLOGY)
    write_items(paths, [item("a-001", "a"), item("b-0001", "b")])
    from generator.commands.commit import commit_new_items

    commit_new_items(paths, "2026-01-06T09:00:00Z")
    return paths


def test_a_build_publishes_a_token_the_verifier_and_openssl_accept(tmp_path: Path, tsa: TimestampAuthority) -> None:
    paths = small_program(tmp_path)
    list_authority(paths, tsa)
    site = tmp_path / "site"
    build(paths, site)
    size = json.loads((site / "ledger" / "history.json").read_text())["tree_size"]
    token = (site / "ledger" / "timestamps" / str(size) / "local-tsa.tst").read_bytes()
    assert token == token_file(paths, size, "local-tsa").read_bytes()  # kept with the program
    body = checkpoint_body((site / "ledger" / "checkpoints" / str(size)).read_bytes())
    report = verify_site(site)
    assert report.ok, [p.describe() for p in report.failures]
    assert any(f"checkpoint {size} timestamped by local-tsa" in n for n in report.notes)
    ok, why = tsa.verify_with_openssl(body, token)
    assert ok, why
    assert not tsa.verify_with_openssl(b"another checkpoint\n", token)[0]  # and refuses it for other bytes
    assert read_timestamp_token(token).hashed_message.hex() and len(tsa.queries) >= 1
    # A rebuild asks nothing: the token is kept.
    asked = len(tsa.queries)
    build(paths, site)
    assert len(tsa.queries) == asked


def test_a_token_over_another_checkpoint_fails(
    tmp_path: Path, tsa: TimestampAuthority, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = small_program(tmp_path)
    list_authority(paths, tsa)
    build(paths, tmp_path / "site")
    size = json.loads((tmp_path / "site" / "ledger" / "history.json").read_text())["tree_size"]
    other = tsa.token(b"stamped.example.org/prog\n1\nAAAA\n")
    token_file(paths, size, "local-tsa").write_bytes(other)
    report = forked_build(paths, tmp_path / "forked", monkeypatch)
    failures = "\n".join(p.describe() for p in report.failures)
    assert "message imprint is not the hash of checkpoint" in failures, failures
    with pytest.raises(VerificationFailed, match="message imprint"):
        build(paths, tmp_path / "site2")


def test_an_event_dated_after_its_token_fails(tmp_path: Path, tsa: TimestampAuthority) -> None:
    paths = small_program(tmp_path)
    list_authority(paths, tsa)
    from generator.commands.retire import retire_item

    retire_item(paths, "b-0001", "Dated in the future.", "2099-01-01T00:00:00Z")
    # The build keeps no token older than the checkpoint's last event: it would fail the site for good.
    result = build(paths, tmp_path / "site")
    assert any("before the checkpoint's last event (2099-01-01T00:00:00Z); not kept" in w for w in result.warnings)
    size = json.loads((tmp_path / "site" / "ledger" / "history.json").read_text())["tree_size"]
    assert not token_file(paths, size, "local-tsa").exists()
    # A token kept all the same (by hand, or by another tool) fails the verifier, named.
    body = checkpoint_body((tmp_path / "site" / "ledger" / "checkpoints" / str(size)).read_bytes())
    token_file(paths, size, "local-tsa").parent.mkdir(parents=True, exist_ok=True)
    token_file(paths, size, "local-tsa").write_bytes(tsa.token(body))
    with pytest.raises(VerificationFailed, match="an event is dated after the time local-tsa stamped"):
        build(paths, tmp_path / "site")


def test_an_authority_that_does_not_answer_is_a_warning(tmp_path: Path, tsa: TimestampAuthority) -> None:
    paths = small_program(tmp_path)
    list_authority(paths, tsa, url="http://127.0.0.1:9/")  # the discard port: nothing listens
    site = tmp_path / "site"
    result = build(paths, site)
    assert any("timestamp authority local-tsa" in w for w in result.warnings), result.warnings
    assert verify_site(site).ok
    assert not (site / "ledger" / "timestamps").exists()
    assert (site / "ledger" / "timestamp-authorities.json").exists()


def test_a_drawn_run_logged_after_a_token_past_its_round_fails(tmp_path: Path, tsa: TimestampAuthority) -> None:
    """The registration is dated before its round, but a checkpoint without it was stamped after
    the round was public: the operator wrote it knowing the round."""
    from generator.commands.methodology import publish
    from generator.verifier import unix_time
    from tests.support.beacon import OwnBeacon, drawn_methodology_file, drawn_spec
    from tests.support.forgery import register_by_hand

    beacon = OwnBeacon()
    paths = small_program(tmp_path)
    write_items(paths, [item(f"b-{i:04d}", "b") for i in range(2, 14)], name="more.yaml")
    from generator.commands.commit import commit_new_items

    commit_new_items(paths, "2026-01-07T09:00:00Z")
    publish(paths, drawn_methodology_file(tmp_path / "m", beacon), METHODOLOGY[1], "2026-01-08T00:00:00Z")
    list_authority(paths, tsa)
    build(paths, tmp_path / "site")  # checkpoint stamped now, long after the round below
    registered = "2026-01-09T00:00:00Z"
    round_number = beacon.round_at(unix_time(registered) + 60)
    register_by_hand(paths, drawn_spec(paths, beacon, round_number), registered)
    with pytest.raises(VerificationFailed, match="run run-1's registration was logged after its round was public"):
        build(paths, tmp_path / "site")
