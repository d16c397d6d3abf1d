"""Witness cosignatures (c2sp.org/tlog-cosignature) and trust policies (c2sp.org/tlog-policy).

Every byte the module makes is checked against a computation written here from the spec
(hashlib and PyNaCl), and against two published vectors: the example cosignature line of
tlog-cosignature.md, and a real Sigsum tree head with real witness cosignatures (quoted in the
tests of the florolf/sigmon monitor, in its test_quorum.py). The tests run on the package: the
bundled verify.py is its modules joined (tests/structure/test_structure.py).
"""

import base64
import hashlib
import types

import pytest
from nacl.signing import SigningKey, VerifyKey

import generator.verifier.tlog.cosignature as cosignature_module
import generator.verifier.tlog.policy as policy_module
from generator.verifier import (
    VerifierKey,
    checkpoint_text,
    key_id,
    note_signature_line,
    open_note,
)


@pytest.fixture(scope="module")
def v():
    ns = types.SimpleNamespace(**vars(cosignature_module))
    ns.__dict__.update(vars(policy_module))
    return ns


# ---------------------------------------------------------------- independent computations


def ref_key_id(name: str, public_key: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + b"\x04" + public_key).digest()[:4]


def ref_message(text: str, timestamp: int) -> bytes:
    return b"cosignature/v1\ntime " + str(timestamp).encode() + b"\n" + text.encode()


def ref_line(name: str, public_key: bytes, timestamp: int, signature: bytes) -> str:
    raw = ref_key_id(name, public_key) + timestamp.to_bytes(8, "big") + signature
    return f"\u2014 {name} {base64.b64encode(raw).decode()}\n"


def ref_cosign(sk: SigningKey, name: str, text: str, timestamp: int) -> str:
    return ref_line(name, bytes(sk.verify_key), timestamp, sk.sign(ref_message(text, timestamp)).signature)


def ref_vkey(name: str, public_key: bytes, kind: int = 4) -> str:
    kid = hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public_key).digest()[:4]
    return f"{name}+{kid.hex()}+{base64.b64encode(bytes([kind]) + public_key).decode()}"


def seed(label: str) -> bytes:
    return hashlib.sha256(label.encode()).digest()


LOG_SK = SigningKey(seed("log"))
LOG_PK = bytes(LOG_SK.verify_key)
ORIGIN = "example.com/log"
TEXT = checkpoint_text(ORIGIN, 7, hashlib.sha256(b"root").digest())
W1 = SigningKey(seed("w1"))
W2 = SigningKey(seed("w2"))
W3 = SigningKey(seed("w3"))


def log_signed(text: str = TEXT) -> str:
    return text + "\n" + note_signature_line(ORIGIN, key_id(ORIGIN, LOG_PK), LOG_SK.sign(text.encode()).signature)


def cosigner(v, name: str, sk: SigningKey):
    return v.CosignerKey(name, bytes(sk.verify_key))


# ---------------------------------------------------------------- bytes: key ID, message, line, vkey


def test_key_id_is_sha256_of_name_newline_0x04_key(v):
    pk = bytes(W1.verify_key)
    assert v.cosignature_key_id("witness.example/w1", pk) == ref_key_id("witness.example/w1", pk)
    assert v.cosignature_key_id("witness.example/w1", pk) != key_id("witness.example/w1", pk)  # 0x01's
    assert v.CosignerKey("witness.example/w1", pk).key_id == ref_key_id("witness.example/w1", pk)


def test_message_is_the_spec_example_to_the_byte(v):
    text = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    expected = (
        b"cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\n"
        b"CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
    )
    assert v.cosignature_message(text, 1679315147) == expected
    assert v.cosignature_message(text + "extension line\n", 0) == ref_message(text + "extension line\n", 0)


def test_the_spec_example_line_round_trips_timestamp_before_signature(v):
    line = (
        "\u2014 witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZ"
        "qhf5nNo0xUe+mbIUBkBIfZ+qnA==\n"
    )
    raw = base64.b64decode(line.split(" ")[2].strip(), validate=True)
    assert len(raw) == 76
    assert int.from_bytes(raw[4:12], "big") == 1679315147  # the time line of the spec's message example
    assert v.cosignature_line("witness.example.com/w1", raw[:4], 1679315147, raw[12:]) == line


def test_line_is_built_as_the_spec_says(v):
    sig = W1.sign(ref_message(TEXT, 1700000000)).signature
    kid = ref_key_id("w.example/1", bytes(W1.verify_key))
    assert v.cosignature_line("w.example/1", kid, 1700000000, sig) == ref_line(
        "w.example/1", bytes(W1.verify_key), 1700000000, sig
    )


@pytest.mark.parametrize("timestamp", [-1, 2**63, True, 1.5])
def test_message_and_line_refuse_timestamps_outside_u63(v, timestamp):
    with pytest.raises(v.FormatError):
        v.cosignature_message(TEXT, timestamp)
    with pytest.raises(v.FormatError):
        v.cosignature_line("w", b"\0" * 4, timestamp, b"\0" * 64)


def test_message_needs_the_final_newline_and_line_the_right_lengths(v):
    with pytest.raises(v.FormatError, match="newline"):
        v.cosignature_message(TEXT[:-1], 1)
    with pytest.raises(v.FormatError, match="4-byte key ID"):
        v.cosignature_line("w", b"\0" * 3, 1, b"\0" * 64)
    with pytest.raises(v.FormatError, match="valid key name"):
        v.cosignature_line("has space", b"\0" * 4, 1, b"\0" * 64)


def test_vkey_round_trip(v):
    pk = bytes(W1.verify_key)
    vkey = ref_vkey("witness.example/w1", pk)
    assert v.make_cosigner_vkey("witness.example/w1", pk) == vkey
    key = v.parse_cosigner_vkey(vkey)
    assert (key.name, key.public_key, key.vkey) == ("witness.example/w1", pk, vkey)


@pytest.mark.parametrize(
    ("vkey", "message"),
    [
        (ref_vkey("w.example", bytes(32), kind=1), "type 0x01"),
        (ref_vkey("w.example", bytes(1311), kind=6), "not a cosigner key"),
        (ref_vkey("w.example", bytes(32), kind=6), "not a cosigner key"),
        (ref_vkey("w.example", bytes(32), kind=2), "not a cosigner key"),
        (ref_vkey("w.example", bytes(31)), "not a cosigner key"),
        (ref_vkey("w.example", bytes(32)).replace("w.example+", "w.other+"), "does not match"),
        (ref_vkey("w.example", bytes(32)).upper().replace("W.EXAMPLE", "w.example"), "lowercase hex"),
        ("w example+00000000+BAAA", "valid key name"),
        ("w.example+00000000", "form <name>"),
        (ref_vkey("w.example", bytes(32))[:-1] + "!", "base64"),
    ],
)
def test_vkey_refusals(v, vkey, message):
    with pytest.raises(v.FormatError, match=message):
        v.parse_cosigner_vkey(vkey)


# ---------------------------------------------------------------- verifying cosignatures


def test_sigsum_tree_head_with_real_cosignatures(v):
    """A Sigsum tree head and two of its witnesses' cosignatures, as published: the log signs the
    checkpoint with a 0x01 note signature, the witnesses with cosignature/v1."""
    log_pk = bytes.fromhex("0ec7e16843119b120377a73913ac6acbc2d03d82432e2c36b841b09a95841f25")
    root = bytes.fromhex("4ccedda0c3e6afc83cfcddfad7df3d95cbd1e857ecf3cf0569b8f69ce32727f8")
    log_sig = bytes.fromhex(
        "880207e73dbe7aa11ebab8118d4da67e59a2ff29d9b11e98b8d5d4062dbd4d12"
        "765b5389b4f0583130fa8573cf997d60b94c9e4d700469aba5a9f4383f619509"
    )
    witnesses = {
        "witness.glasklar.is": (
            "b2106db9065ec97f25e09c18839216751a6e26d8ed8b41e485a563d3d1498536",
            "9ab58c0f6cbfd02549891b3b9d7e68fd7fefd42b6dc22fbbee7ed3119d1ed180"
            "7edc74c8b12fd430e4ee6084b59077d4c8eafe09eefdbbe31666828c34d24702",
        ),
        "witness.mullvad.net": (
            "15d6d0141543247b74bab3c1076372d9c894f619c376d64b29aa312cc00f61ad",
            "82f16ff572ba54e6f0b2f27e0e34fa729ab42d566b1d54a0b689d345c373fd0d"
            "87a61a6b6e81b4d17b3ca9f13f01a6c1325d701e6350ecddfa54b6b453691d0f",
        ),
    }
    origin = "sigsum.org/v1/tree/" + hashlib.sha256(log_pk).hexdigest()
    text = checkpoint_text(origin, 12851, root)
    note = text + "\n" + note_signature_line(origin, key_id(origin, log_pk), log_sig)
    keys = []
    for name, (pk_hex, sig_hex) in witnesses.items():
        pk, sig = bytes.fromhex(pk_hex), bytes.fromhex(sig_hex)
        VerifyKey(pk).verify(ref_message(text, 1754020861), sig)  # the vector, checked without the module
        note += v.cosignature_line(name, v.cosignature_key_id(name, pk), 1754020861, sig)
        keys.append(v.CosignerKey(name, pk))
    data = note.encode()
    opened = open_note(data, [VerifierKey(origin, key_id(origin, log_pk), log_pk)])
    assert [s.name for s in opened.verified] == [origin]
    assert v.verify_cosignatures(data, keys) == {"witness.glasklar.is": 1754020861, "witness.mullvad.net": 1754020861}
    # sigmon's negative: the same signature under another timestamp
    glasklar_sig = bytes.fromhex(witnesses["witness.glasklar.is"][1])
    forged = note.replace(
        v.cosignature_line("witness.glasklar.is", keys[0].key_id, 1754020861, glasklar_sig),
        v.cosignature_line("witness.glasklar.is", keys[0].key_id, 1234567890, glasklar_sig),
    )
    with pytest.raises(v.NoteError, match=r"witness\.glasklar\.is .* does not verify"):
        v.verify_cosignatures(forged.encode(), keys)


def test_valid_cosignatures_by_name_with_timestamps_unknown_lines_ignored(v):
    note = log_signed() + ref_cosign(W1, "w1.example", TEXT, 100) + ref_cosign(W2, "w2.example", TEXT, 200)
    note += ref_cosign(W3, "stranger.example", TEXT, 300)
    keys = [cosigner(v, "w1.example", W1), cosigner(v, "w2.example", W2)]
    assert v.verify_cosignatures(note.encode(), keys) == {"w1.example": 100, "w2.example": 200}
    assert v.verify_cosignatures(note.encode(), []) == {}
    assert v.verify_cosignatures(note.encode(), [cosigner(v, "w3.example", W3)]) == {}


def test_extension_lines_are_signed(v):
    text = TEXT + "an extension line\n"
    note = log_signed(text) + ref_cosign(W1, "w1.example", text, 5)
    assert v.verify_cosignatures(note.encode(), [cosigner(v, "w1.example", W1)]) == {"w1.example": 5}
    # signing only the first three lines (an older reading) does not verify
    bad = log_signed(text) + ref_cosign(W1, "w1.example", TEXT, 5)
    with pytest.raises(v.NoteError, match="does not verify"):
        v.verify_cosignatures(bad.encode(), [cosigner(v, "w1.example", W1)])


def test_only_the_first_line_of_a_witness_counts(v):
    note = log_signed() + ref_cosign(W1, "w1.example", TEXT, 100) + ref_cosign(W1, "w1.example", TEXT, 999)
    assert v.verify_cosignatures(note.encode(), [cosigner(v, "w1.example", W1)]) == {"w1.example": 100}


def _raw_line(name: str, raw: bytes) -> str:
    return f"\u2014 {name} {base64.b64encode(raw).decode()}\n"


def _good_raw(timestamp: int = 100) -> bytes:
    return base64.b64decode(ref_cosign(W1, "w1.example", TEXT, timestamp).split(" ")[2])


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        # the timestamp field changed: the signature was made over another time line
        (_good_raw()[:4] + (101).to_bytes(8, "big") + _good_raw()[12:], "does not verify"),
        # a flipped signature byte
        (_good_raw()[:-1] + bytes([_good_raw()[-1] ^ 1]), "does not verify"),
        # the witness's name and key ID, another key's signature
        (_good_raw()[:12] + W2.sign(ref_message(TEXT, 100)).signature, "does not verify"),
        # a timestamp beyond 2^63-1
        (_good_raw()[:4] + (2**63).to_bytes(8, "big") + _good_raw()[12:], "beyond 2\\^63-1"),
        # no timestamp at all: a plain Ed25519 note signature under the cosigner's key ID
        (_good_raw()[:4] + W1.sign(TEXT.encode()).signature, "is 68 bytes, not 4 \\+ 8 \\+ 64"),
        (_good_raw() + b"\0", "is 77 bytes"),
    ],
    ids=["timestamp-changed", "flipped-signature-byte", "other-key", "timestamp-2^63", "untimestamped", "long"],
)
def test_a_failing_line_by_a_known_witness_rejects_the_note(v, raw, message):
    note = log_signed() + _raw_line("w1.example", raw)
    with pytest.raises(v.NoteError, match=message):
        v.verify_cosignatures(note.encode(), [cosigner(v, "w1.example", W1)])


def test_wrong_key_id_or_name_is_another_key_and_ignored(v):
    raw = _good_raw()
    other_id = bytes([raw[0] ^ 1]) + raw[1:]
    note = log_signed() + _raw_line("w1.example", other_id) + _raw_line("w1.other", raw)
    assert v.verify_cosignatures(note.encode(), [cosigner(v, "w1.example", W1)]) == {}


@pytest.mark.parametrize(
    ("note", "message"),
    [
        (TEXT + "\n", "signature block is empty"),
        (TEXT + "no empty line", "no empty line"),
        (log_signed() + "- w1 AAAA\n", "does not start with"),
        (log_signed() + "\u2014 w1 !!!\n", "not base64"),
        (log_signed().replace(TEXT, "origin\nnot a size\nAAAA\n"), "not a checkpoint"),
        (log_signed().replace(TEXT, TEXT + "\next\n"), "not a checkpoint: its text holds an empty line"),
        (log_signed().replace("example.com", "example\x01com"), "control character"),
    ],
)
def test_malformed_notes_are_rejected(v, note, message):
    with pytest.raises(v.NoteError, match=message):
        v.verify_cosignatures(note.encode(), [cosigner(v, "w1.example", W1)])


def test_non_utf8_note_and_duplicate_names_are_refused(v):
    with pytest.raises(v.NoteError, match="UTF-8"):
        v.verify_cosignatures(b"\xff\n\n", [])
    with pytest.raises(ValueError, match="given twice"):
        v.verify_cosignatures(log_signed().encode(), [cosigner(v, "w", W1), cosigner(v, "w", W2)])


def test_cosigner_key_checks_its_fields(v):
    with pytest.raises(v.FormatError, match="32 bytes"):
        v.CosignerKey("w", bytes(31))
    with pytest.raises(v.FormatError, match="valid key name"):
        v.CosignerKey("a+b", bytes(32))


# ---------------------------------------------------------------- policy parsing


def wkey(label: str) -> str:
    return ref_vkey(f"{label}.example", bytes(SigningKey(seed(label)).verify_key))


LOG_VKEY = ref_vkey(ORIGIN, LOG_PK, kind=1)

C2SP_EXAMPLE = f"""log {LOG_VKEY}

witness X1 {wkey("x1")}
witness X2 {wkey("x2")}
witness X3 {wkey("x3")}
group X-witnesses 2 X1 X2 X3

witness Y1 {wkey("y1")}
witness Y2 {wkey("y2")}
witness Y3 {wkey("y3")}
group Y-witnesses any Y1 Y2 Y3

group X-and-Y all X-witnesses Y-witnesses
quorum X-and-Y
"""


def test_the_spec_example_policy(v):
    p = v.parse_policy(C2SP_EXAMPLE.encode())
    assert [log.key.name for log in p.logs] == [ORIGIN]
    assert p.log_keys[0].public_key == LOG_PK and p.logs[0].url is None
    assert [w.name for w in p.witnesses] == ["X1", "X2", "X3", "Y1", "Y2", "Y3"]
    assert p.witnesses[0].key.vkey == wkey("x1")
    assert [(g.name, g.threshold, g.members) for g in p.groups] == [
        ("X-witnesses", 2, ("X1", "X2", "X3")),
        ("Y-witnesses", 1, ("Y1", "Y2", "Y3")),
        ("X-and-Y", 2, ("X-witnesses", "Y-witnesses")),
    ]
    assert p.quorum == "X-and-Y"
    assert v.parse_policy(C2SP_EXAMPLE) == p  # text or bytes
    hash(p)  # frozen all the way down


def test_layout_freedoms(v):
    text = (
        "# a comment\n"
        "   \t\n"
        f"  log\t{LOG_VKEY}   https://log.example/  \n"
        "\t# an indented comment\n"
        f"witness\tA {wkey('a')} https://a.example/witness\n"
        "quorum A\n"
        f"witness B {wkey('b')}"  # after the quorum, and no final newline
    )
    p = v.parse_policy(text)
    assert p.logs[0].url == "https://log.example/"
    assert [(w.name, w.url) for w in p.witnesses] == [("A", "https://a.example/witness"), ("B", None)]
    assert p.quorum == "A" and p.groups == ()


def test_quorum_none_and_no_logs(v):
    p = v.parse_policy(b"quorum none\n")
    assert (p.logs, p.witnesses, p.groups, p.quorum) == ((), (), (), "none")


def test_high_bit_octets_are_opaque_names(v):
    kelvin = "\u212a".encode()
    data = b"witness " + kelvin + b" " + wkey("k1").encode() + b"\n"
    data += b"witness K " + wkey("k2").encode() + b"\n"
    data += b"witness \xff " + wkey("k3").encode() + b"\n"
    data += b"group g all " + kelvin + b" K \xff # not a comment, a member\n"
    with pytest.raises(v.FormatError, match="line 4: group 'g': member '#' is not defined"):
        v.parse_policy(data)
    data = data.replace(b" # not a comment, a member", b"") + b"quorum g\n"
    p = v.parse_policy(data)
    assert [w.name for w in p.witnesses] == ["\u212a", "K", "\udcff"]
    assert v.evaluate(p, {"K", "\u212a"}) == (False, ["\udcff"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("frobnicate x\nquorum none\n", "policy line 1: unknown keyword 'frobnicate'; expected log, witness"),
        ("Log x\nquorum none\n", "policy line 1: unknown keyword 'Log'"),
        (
            f"witness A {wkey('a')}\nwitness A {wkey('b')}\nquorum A\n",
            "line 2: duplicate name 'A' \\(defined on line 1",
        ),
        (f"witness A {wkey('a')}\ngroup A any A\nquorum A\n", "line 2: duplicate name 'A'"),
        (f"witness none {wkey('a')}\nquorum none\n", "line 1: 'none' is predefined"),
        (f"witness A {wkey('a')}\ngroup none any A\nquorum A\n", "line 2: 'none' is predefined"),
        (f"witness A {wkey('a')}\ngroup G any A B\nquorum G\n", "line 2: group 'G': member 'B' is not defined"),
        (
            f"witness A {wkey('a')}\ngroup G any A B\nwitness B {wkey('b')}\nquorum G\n",
            "line 2: group 'G': member 'B' is defined later, on line 3; expected a witness or group defined on an "
            "earlier line",
        ),
        (f"witness A {wkey('a')}\ngroup G 0 A\nquorum G\n", "line 2: group 'G': threshold 0 is out of range; expected"),
        (
            f"witness A {wkey('a')}\nwitness B {wkey('b')}\ngroup G 3 A B\nquorum G\n",
            "line 3: group 'G': threshold 3 is out of range; expected 1 <= k <= 2",
        ),
        (f"witness A {wkey('a')}\ngroup G 01 A\nquorum G\n", "threshold '01'; expected all, any or a decimal"),
        (f"witness A {wkey('a')}\ngroup G -1 A\nquorum G\n", "threshold '-1'"),
        (f"witness A {wkey('a')}\ngroup G some A\nquorum G\n", "threshold 'some'"),
        ("group G any\nquorum G\n", "line 1: a group line is .* at least one member"),
        (f"witness A {wkey('a')}\ngroup G 2 A A\nquorum G\n", "'A' is already a member of group 'G' \\(line 2\\)"),
        (
            f"witness A {wkey('a')}\ngroup G1 any A\ngroup G2 any A\nquorum G2\n",
            "line 3: group 'G2': 'A' is already a member of group 'G1' \\(line 2\\); a name can be a group member "
            "only once",
        ),
        (f"witness A {wkey('a')}\ngroup G any A none\nquorum G\n", "'none' cannot be a group member"),
        (f"witness A {wkey('a')}\ngroup G any A G\nquorum G\n", "group 'G' lists itself"),
        (f"witness A {wkey('a')}\n", "ends after line 1 without a quorum line; expected exactly one `quorum <name>`"),
        ("", "policy: is empty without a quorum line"),
        (f"witness A {wkey('a')}\nquorum A\nquorum none\n", "line 3: a second quorum line \\(the first is line 2\\)"),
        ("quorum X\n", "line 1: quorum 'X' is not defined"),
        (f"quorum A\nwitness A {wkey('a')}\n", "line 1: quorum 'A' is defined later, on line 2"),
        ("quorum A B\n", "a quorum line is `quorum <name>`; found 2 items after"),
        (
            f"log {LOG_VKEY}\nlog {ref_vkey('other.example', LOG_PK, kind=1)}\nquorum none\n",
            "line 2: duplicate log: the same public key as line 1",
        ),
        (
            f"witness A {wkey('a')}\nwitness B {wkey('a').replace('a.example', 'b.example', 1)}\nquorum A\n",
            "line 2: witness 'B' key: key ID .* does not match",
        ),
        (
            f"witness A {wkey('a')}\nwitness B {ref_vkey('b.example', bytes(SigningKey(seed('a')).verify_key))}\n"
            "quorum A\n",
            "line 2: duplicate witness: the same public key as line 1",
        ),
        (f"log {wkey('a')}\nquorum none\n", "line 1: log key: .* \\(a witness's key: use a witness line\\)"),
        (f"witness A {ref_vkey('a.example', bytes(32), kind=1)}\nquorum A\n", "witness 'A' key: .*type 0x01"),
        (f"witness A {ref_vkey('a.example', bytes(1311), kind=6)}\nquorum A\n", "1312-byte ML-DSA-44"),
        (f"log {LOG_VKEY} https://log/ extra\nquorum none\n", "a log line is `log <vkey> \\[<url>\\]`; found 3"),
        ("log\nquorum none\n", "found 0 items after `log`"),
        ("witness A\nquorum A\n", "a witness line is `witness <name> <vkey> \\[<url>\\]`; found 1 item after"),
        (f"log {LOG_VKEY} #the-log\nquorum none\n", "line 1: a comment must be on a line of its own"),
        (f"log {LOG_VKEY} # the log\nquorum none\n", "found 4 items \\(a comment must be on a line of its own\\)"),
        ("quorum none\r\n", "policy line 1: control character 0x0d \\(a Windows line ending\\?\\)"),
        ("# fine\nquorum\x00 none\n", "policy line 2: control character 0x00"),
        ("quorum none\x7f\n", "control character 0x7f"),
        (f"log {LOG_VKEY[:-2]}AA\nquorum none\n", "log key: .*expected an Ed25519 note vkey"),
    ],
)
def test_policy_refusals_name_the_line_and_what_was_expected(v, text, message):
    with pytest.raises(v.FormatError, match=message):
        v.parse_policy(text.encode())


def test_a_vkey_must_be_utf8(v):
    with pytest.raises(v.FormatError, match="line 1: log key: a vkey is UTF-8 text"):
        v.parse_policy(b"log \xff+00000000+AAAA\nquorum none\n")


# ---------------------------------------------------------------- quorum evaluation


def policy_of(v, groups: str, quorum: str, names: str = "A B C D E F"):
    lines = [f"witness {n} {wkey(n.lower())}" for n in names.split()]
    return v.parse_policy("\n".join([*lines, groups, f"quorum {quorum}", ""]))


def test_spec_example_quorum(v):
    p = v.parse_policy(C2SP_EXAMPLE)
    assert v.evaluate(p, set()) == (False, ["X1", "X2", "X3", "Y1", "Y2", "Y3"])
    assert v.evaluate(p, {"X1", "X2"}) == (False, ["Y1", "Y2", "Y3"])
    assert v.evaluate(p, {"X1", "Y3"}) == (False, ["X2", "X3"])
    assert v.evaluate(p, {"X1", "X3", "Y2"}) == (True, [])
    assert v.evaluate(p, {"X1", "X2", "X3", "Y1", "Y2", "Y3"}) == (True, [])


def test_all_any_and_k(v):
    p = policy_of(v, "group G all A B C", "G")
    assert v.evaluate(p, {"A"}) == (False, ["B", "C"])
    assert v.evaluate(p, {"A", "B", "C"}) == (True, [])
    p = policy_of(v, "group G any A B C", "G")
    assert v.evaluate(p, set()) == (False, ["A", "B", "C"])
    assert v.evaluate(p, {"B"}) == (True, [])
    p = policy_of(v, "group G 2 A B C", "G")
    assert v.evaluate(p, {"C"}) == (False, ["A", "B"])
    assert v.evaluate(p, {"C", "A"}) == (True, [])


def test_nested_groups_list_only_witnesses_that_could_help(v):
    p = policy_of(v, "group G1 all A B\ngroup G2 any C D\ngroup G3 2 G1 G2 E\ngroup Q all G3 F", "Q")
    # G2 holds (C): its other member D is not listed; G1 lacks B; E is missing too; F is missing
    assert v.evaluate(p, {"A", "C"}) == (False, ["B", "E", "F"])
    assert v.evaluate(p, {"A", "C", "E"}) == (False, ["F"])  # G3 holds: only F is missing
    assert v.evaluate(p, {"A", "C", "E", "F"}) == (True, [])
    assert v.evaluate(p, {"F", "A", "B", "D"}) == (True, [])


def test_single_witness_none_and_foreign_names(v):
    p = policy_of(v, "", "B")
    assert v.evaluate(p, set()) == (False, ["B"])
    assert v.evaluate(p, ["B"]) == (True, [])
    assert v.evaluate(policy_of(v, "", "none"), set()) == (True, [])
    p = policy_of(v, "group G any A", "G")
    assert v.evaluate(p, {"G", "nobody", "none"}) == (False, ["A"])  # a group's name is not a cosignature


def test_witnessed_by_maps_cosignatures_to_policy_names(v):
    text = TEXT
    a, b, c = (SigningKey(seed(n)) for n in ("a", "b", "c"))
    # two witnesses of the policy share a key name: each is still recognised by its own key
    policy = v.parse_policy(
        f"log {LOG_VKEY}\n"
        f"witness A {ref_vkey('shared.example', bytes(a.verify_key))}\n"
        f"witness B {ref_vkey('shared.example', bytes(b.verify_key))}\n"
        f"witness C {ref_vkey('c.example', bytes(c.verify_key))}\n"
        "group G 2 A B C\nquorum G\n"
    )
    note = log_signed(text) + ref_cosign(a, "shared.example", text, 11) + ref_cosign(b, "shared.example", text, 22)
    found = v.witnessed_by(policy, note.encode())
    assert found == {"A": 11, "B": 22}
    assert v.evaluate(policy, found) == (True, [])
    assert open_note(note.encode(), list(policy.log_keys)).text == text
    only_c = log_signed(text) + ref_cosign(c, "c.example", text, 33)
    assert v.evaluate(policy, v.witnessed_by(policy, only_c.encode())) == (False, ["A", "B"])
