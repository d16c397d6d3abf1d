"""The witness network's log list (generator/verifier/tlog/log_list.py: `logs/v0`, read with every problem
named by its line, written in the documented order, the program's own entry)."""

from __future__ import annotations

import hashlib

import pytest
from nacl.signing import SigningKey

from generator.core.cosigning_keys import Cosigner
from generator.verifier import (
    ED25519,
    ML_DSA_44,
    CosignerKey,
    FormatError,
    ListedLog,
    VerifierKey,
    format_log_list,
    key_id,
    parse_log_list,
    program_log_list_entry,
)
from tests.support.witnesses import LOG_KEY, ORIGIN, WITNESS_NAME, WITNESS_SEED, ml_dsa_cosigner

ML_LOG = ml_dsa_cosigner("ml.example/log", "an ML-DSA-44 log")
OTHER_SK = SigningKey(hashlib.sha256(b"another log").digest())
OTHER_KEY = VerifierKey(
    "other.example/log", key_id("other.example/log", bytes(OTHER_SK.verify_key)), bytes(OTHER_SK.verify_key)
)
WITNESS = Cosigner(WITNESS_NAME, ED25519, WITNESS_SEED)

# The format's own example, with qpd before bastion (and a real key).
EXAMPLE = f"""logs/v0
vkey {LOG_KEY.vkey}
origin none
qpd 86400
bastion https://bastion.tlog.foo.org/
contact https://tlog.foo.org/contact
"""


def logs_of(text: str) -> list[ListedLog]:
    logs, problems = parse_log_list(text)
    assert problems == []
    return logs


def problems_of(text: str) -> list[str]:
    _, problems = parse_log_list(text, "logs.txt")
    assert problems
    return [p.describe() for p in problems]


def test_the_format_s_example_reads_with_qpd_before_bastion():
    [log] = logs_of(EXAMPLE)
    assert log == ListedLog(LOG_KEY.vkey, None, "https://bastion.tlog.foo.org/", 86400, "https://tlog.foo.org/contact")
    assert (log.line, log.log_origin, log.key) == (2, ORIGIN, LOG_KEY)


def test_several_logs_comments_blank_lines_and_both_orders():
    text = f"""# the logs this witness cosigns
logs/v0

# a log whose origin is not its key's name
vkey {OTHER_KEY.vkey}
origin example.org/other log
bastion none
qpd 0
contact ops@example.org, +1 555 0100

   vkey {ML_LOG.key.vkey}
origin none
qpd 24
bastion http://bastion.example/
contact  someone   with spaces
"""
    other, ml = logs_of(text)
    assert (other.log_origin, other.bastion, other.qpd, other.contact, other.line) == (
        "example.org/other log",
        None,
        0,
        "ops@example.org, +1 555 0100",
        5,
    )
    assert isinstance(ml.key, CosignerKey) and ml.key.kind == ML_DSA_44
    assert (ml.log_origin, ml.qpd, ml.bastion, ml.contact) == (
        "ml.example/log",
        24,
        "http://bastion.example/",
        "someone   with spaces",
    )


def test_writing_uses_the_documented_order_and_reads_back():
    logs = [*logs_of(EXAMPLE), ListedLog(OTHER_KEY.vkey, "example.org/x", None, 7, "a person")]
    text = format_log_list(logs)
    assert text == (
        f"logs/v0\n\nvkey {LOG_KEY.vkey}\norigin none\nbastion https://bastion.tlog.foo.org/\nqpd 86400\n"
        "contact https://tlog.foo.org/contact\n"
        f"\nvkey {OTHER_KEY.vkey}\norigin example.org/x\nbastion none\nqpd 7\ncontact a person\n"
    )
    assert logs_of(text) == logs
    assert logs_of(format_log_list([])) == []
    assert logs_of("# nothing yet\nlogs/v0\n") == []


def test_every_problem_is_named_by_its_line_at_once():
    text = f"""logs/v0
vkey {LOG_KEY.vkey}
origin none
contact too early
qpd 5
bastion none
vkey not-a-vkey
origin none
bastion ftp://x
qpd 010
contact c
vkey {OTHER_KEY.vkey}
origin none
bastion none
"""
    logs, problems = parse_log_list(text, "logs.txt")
    found = [p.describe() for p in problems]
    assert found == [
        "logs.txt [line 4]: expected the log's `bastion` or `qpd` line\n      found:    contact",
        found[1],  # lines 5 and 6 belong to the log of line 2: its problem is said once
        "logs.txt [line 9]: bastion: 'ftp://x' is neither `none` nor an https:// or http:// URL",
        "logs.txt [line 10]: qpd: '010' is not a number of requests a day (decimal, no leading zeros)",
        "logs.txt [line 12]: the log ends before its `qpd` line",
    ]
    assert found[1].startswith("logs.txt [line 7]: vkey: ")
    assert logs == []  # a log with a problem is left out
    assert {p.file for p in problems} == {"logs.txt"}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "[line 1]: a log list starts with the line `logs/v0`\n      found:    nothing"),
        ("logs/v1\n", "[line 1]: a log list starts with the line `logs/v0`\n      found:    logs/v1"),
        ("logs/v0 extra\n", "[line 1]: the first line is `logs/v0` alone"),
        ("logs/v0\norigin none\n", "[line 2]: expected a `vkey` line, which starts a log\n      found:    origin"),
        (f"logs/v0\nvkey {LOG_KEY.vkey}\n", "[line 2]: the log ends before its `origin` line"),
        (f"logs/v0\nvkey {WITNESS.key.vkey}\n", "an Ed25519 cosigner key (type 0x04), as witnesses sign with"),
        (EXAMPLE.replace("origin none", "origin "), "[line 3]: '' is not an origin line"),
        (EXAMPLE.replace("contact https://tlog.foo.org/contact", "contact"), "contact: the value is empty"),
        (EXAMPLE.replace("origin none", "origin " + "o" * 256), "the origin is 256 bytes, more than 255"),
        (EXAMPLE.replace("qpd 86400", "qpd -1"), "qpd: '-1' is not a number"),
        (EXAMPLE + EXAMPLE.removeprefix("logs/v0\n"), "[line 7]: the key is listed already, at line 2"),
        (
            EXAMPLE + f"vkey {ML_LOG.key.vkey}\norigin {ORIGIN}\nbastion none\nqpd 5\ncontact c\n",
            "[line 7]: 'example.com/test-log' is listed already, at line 2: one log has one quota\n"
            "      expected: qpd 86400\n      found:    qpd 5",
        ),
    ],
)
def test_a_bad_list_is_refused_with_the_line_and_the_reason(text, fragment):
    assert any(fragment in p for p in problems_of(text)), problems_of(text)


def test_the_program_s_entry():
    entry = program_log_list_entry(LOG_KEY.vkey, ORIGIN, 86400, "https://example.com/contact")
    assert entry == (
        f"vkey {LOG_KEY.vkey}\norigin none\nbastion none\nqpd 86400\ncontact https://example.com/contact\n"
    )
    [log] = logs_of("logs/v0\n" + entry)
    assert (log.log_origin, log.qpd) == (ORIGIN, 86400)
    other = program_log_list_entry(LOG_KEY.vkey, "example.com/elsewhere", 24, "ops")
    assert "origin example.com/elsewhere\n" in other
    assert "origin none\n" in program_log_list_entry(ML_LOG.key.vkey, None, 1, "ops")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("nonsense", ORIGIN, 1, "ops"), "a verifier key has the form"),
        ((LOG_KEY.vkey, ORIGIN, -1, "ops"), "qpd: -1"),
        ((LOG_KEY.vkey, ORIGIN, True, "ops"), "qpd: True"),
        ((LOG_KEY.vkey, ORIGIN, 1, ""), "contact: ''"),
        ((LOG_KEY.vkey, ORIGIN, 1, "two\nlines"), "contact: 'two\\nlines'"),
        ((LOG_KEY.vkey, "x" * 300, 1, "ops"), "origin: the origin is 300 bytes"),
    ],
)
def test_the_program_s_entry_refuses_what_it_cannot_write(args, fragment):
    with pytest.raises(FormatError) as e:
        program_log_list_entry(*args)
    assert fragment in str(e.value)
