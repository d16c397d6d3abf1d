"""The witness's C2SP tlog-witness endpoints through the real commands, over HTTP to a separate
process: keys of both types made by `transparency witness key`, a log list with a daily quota,
add-checkpoint answered with one line a key, the read API serving what was cosigned (also after
the process is killed and started again), sign-subtree, and 429 beyond the quota; and an offline
cosignature of a built site from a log list holding the program's own entry."""

from __future__ import annotations

import base64
import hashlib
import signal
from pathlib import Path

from generator.core.proofs import MerkleTree, subtree_consistency_proof
from generator.verifier import (
    ED25519,
    ML_DSA_44,
    CosignerKey,
    open_note,
    parse_cosigner_vkey,
    program_log_list_entry,
    subtree_cosignature_verifies,
    verify_cosignatures,
)
from tests.support.demo import BuiltSite
from tests.support.history import size_of, vkey_of
from tests.support.witnesses import (
    LEAVES,
    LOG_KEY,
    ORIGIN,
    WITNESS_NAME,
    cli,
    grow_request,
    http_request,
    note,
    started_witness,
    witness_process,
)

ORIGIN_HASH = hashlib.sha256(ORIGIN.encode()).hexdigest()


def make_keys(tmp_path: Path) -> tuple[Path, Path, list[CosignerKey]]:
    """An Ed25519 key and one of the default type (ML-DSA-44), by `transparency witness key`."""
    ed, ml = tmp_path / "ed.key", tmp_path / "ml.key"
    keys = []
    for path, kind in [(ed, ["--type", "ed25519"]), (ml, [])]:
        code, out = cli("witness", "key", WITNESS_NAME, "--key", path, *kind)
        assert code == 0, out
        keys.append(parse_cosigner_vkey(out.strip()))
    return ed, ml, keys


def log_list(tmp_path: Path, qpd: int) -> Path:
    path = tmp_path / "logs.list"
    path.write_text(
        "# the logs this witness cosigns\nlogs/v0\n\n" + program_log_list_entry(LOG_KEY.vkey, ORIGIN, qpd, "ops")
    )
    return path


def test_a_witness_process_speaks_the_witness_network_s_protocols(tmp_path: Path) -> None:
    ed, ml, made = make_keys(tmp_path)
    argv: list[str | Path] = [
        "--key",
        ed,
        "--key",
        ml,
        "--state",
        tmp_path / "state",
        "--log-list",
        log_list(tmp_path, 3),
    ]
    with witness_process(argv, key_lines=2) as (url, vkeys):
        keys = [parse_cosigner_vkey(v) for v in vkeys]  # as `witness serve` prints them
        assert keys == made and [k.kind for k in keys] == [ED25519, ML_DSA_44]
        assert http_request(f"{url}/{ORIGIN_HASH}/checkpoint", method="GET")[0] == 404

        status, headers, lines = http_request(url + "/add-checkpoint", grow_request(0, 14))
        assert (status, headers["Content-Type"], len(lines.splitlines())) == (200, "text/plain; charset=utf-8", 2)
        stamps = [verify_cosignatures(note(14) + lines, [k])[WITNESS_NAME] for k in keys]
        assert stamps[0] == stamps[1] > 0

        status, _, served = http_request(f"{url}/{ORIGIN_HASH}/checkpoint", method="GET")
        assert (status, served) == (200, note(14) + lines)
        assert open_note(served, [LOG_KEY]).text.startswith(ORIGIN + "\n14\n")

        tree = MerkleTree(LEAVES)
        proof = subtree_consistency_proof(tree, 8, 13, 14)
        body = b"subtree 8 13\n" + b"".join(base64.b64encode(h) + b"\n" for h in [tree.subtree_root(8, 13), *proof])
        status, _, signed = http_request(url + "/sign-subtree", body + b"\n" + served)
        assert status == 200 and len(signed.splitlines()) == 1  # the ML-DSA-44 key alone signs subtrees
        raw = base64.b64decode(signed.split()[-1], validate=True)
        assert subtree_cosignature_verifies(keys[1], ORIGIN, 8, 13, tree.subtree_root(8, 13), raw)
        assert http_request(url + "/sign-subtree", body + b"\n" + note(14))[0] == 403

        # Only a request that moves the record counts: a 409, or the tree held, spends nothing.
        assert http_request(url + "/add-checkpoint", grow_request(0, 20))[0] == 409
        assert http_request(url + "/add-checkpoint", grow_request(14, 14))[0] == 200
        assert http_request(url + "/add-checkpoint", grow_request(14, 20))[0] == 200  # counted: 2 of 3
        assert http_request(url + "/add-checkpoint", grow_request(20, 25))[0] == 200  # counted: 3 of 3
        status, headers, answer = http_request(url + "/add-checkpoint", grow_request(25, 30))
        assert status == 429 and 0 < int(headers["Retry-After"]) <= 86400, answer
        assert http_request(f"{url}/{ORIGIN_HASH}/checkpoint", method="GET")[2].startswith(note(25))


def test_a_killed_witness_restarts_with_its_record_and_its_note(tmp_path: Path) -> None:
    _, ml, _ = make_keys(tmp_path)
    argv: list[str | Path] = ["--key", ml, "--state", tmp_path / "state", "--log-list", log_list(tmp_path, 100)]
    proc, url, _ = started_witness(argv, key_lines=1)
    try:
        _, _, lines = http_request(url + "/add-checkpoint", grow_request(0, 9))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    with witness_process(argv, key_lines=1) as (url, _):
        assert http_request(f"{url}/{ORIGIN_HASH}/checkpoint", method="GET")[2] == note(9) + lines
        status, headers, size = http_request(url + "/add-checkpoint", grow_request(0, 12))
        assert (status, headers["Content-Type"], size) == (409, "text/x.tlog.size", b"9\n")


def test_an_offline_cosignature_from_a_log_list_holding_the_program_s_entry(
    built_program: BuiltSite, tmp_path: Path
) -> None:
    site = built_program.out
    ed, ml, keys = make_keys(tmp_path)
    listed = tmp_path / "logs.list"
    listed.write_text("logs/v0\n" + program_log_list_entry(vkey_of(site), None, 24, "https://example.org/contact"))
    assert "origin none\n" in listed.read_text()  # the program's origin is its key's name
    out = tmp_path / "cosignatures.txt"
    args = ["--key", ed, "--key", ml, "--state", tmp_path / "state", "--log-list", listed]
    code, printed = cli("witness", "cosign", site, *args, "--out", out)
    assert code == 0, printed
    checkpoint = (site / "ledger" / "checkpoint").read_bytes()
    lines = out.read_bytes()
    assert len(lines.splitlines()) == 2
    assert [list(verify_cosignatures(checkpoint + lines, [k])) for k in keys] == [[WITNESS_NAME], [WITNESS_NAME]]
    assert checkpoint.split(b"\n")[1] == str(size_of(site)).encode()
