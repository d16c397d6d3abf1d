"""A log is its key as much as its origin (issue 24, item 15): the verifier's state remembers the
keys of every log it verified, a remembered key is never accepted under another origin, and an
origin that looks like a remembered one (every UTS #39 confusable, case, small capitals) is a
look-alike of a known log."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import unicodedata
from pathlib import Path
from types import SimpleNamespace

import pytest

from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.gate import GateSpec
from generator.commands.init import init_program
from generator.core.generator_errors import InputError
from generator.core.signing_key import Signer, generate_signer, load_key
from generator.program.datadir import Paths
from generator.verifier.core.confusables import (
    DEFAULT_IGNORABLE_RANGES,
    confusable_prototypes,
    invisible_characters,
    is_default_ignorable,
    origin_fold,
    skeleton,
)
from generator.verifier.core.confusables_table import CONFUSABLES_VERSION
from generator.verifier.core.errors import FormatError
from generator.verifier.core.formats import is_origin
from generator.verifier.memory.checkpoint_memory import other_log_problems, read_state, remembered_keys, write_state
from tests.support.demo import BUNDLE, BuiltSite
from tests.support.programs import AT0, item, write_items

DEMO_ORIGIN = "transparency.example.org/extraction"
# The three look-alikes of the finding: DIVISION SLASH, LATIN SMALL LETTER ALPHA, LATIN LETTER
# SMALL CAPITAL G (which UTS #39 does not list: the fold reads small capitals as their letter).
LOOK_ALIKES = [
    DEMO_ORIGIN.replace("/", "\u2215"),
    DEMO_ORIGIN.replace("example", "ex\u0251mple"),
    DEMO_ORIGIN.replace("org", "or\u0262"),
]


def run_verifier(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", str(BUNDLE), *map(str, args)], capture_output=True, text=True)


# -- the fold


def test_the_table_is_unicode_s_whole_confusables_list() -> None:
    table = confusable_prototypes()
    assert CONFUSABLES_VERSION.count(".") == 2
    assert len(table) > 6000  # every mapping of confusables.txt, not a hand-picked subset
    assert table[0x2215] == "/" and table[0x0251] == "a" and table[ord("m")] == "rn"
    assert table[ord("1")] == "l" and table[ord("I")] == "l" and table[0x0430] == "a"


@pytest.mark.parametrize(
    ("look_alike", "original"),
    [
        ("lookalike.example.org\u2215prog", "lookalike.example.org/prog"),
        ("lookalike.ex\u0251mple.org/prog", "lookalike.example.org/prog"),
        ("lookalike.example.org/pro\u0262", "lookalike.example.org/prog"),
        ("lookalike.exarnple.org/prog", "lookalike.example.org/prog"),  # rn and m
        ("1ookalike.example.org/prog", "lookalike.example.org/prog"),  # 1 and l
        ("Iookalike.example.org/prog", "lookalike.example.org/prog"),  # I and l
        ("lookalike.example.org/pr0g", "lookalike.example.org/prog"),  # 0 and o
        ("LOOKALIKE.example.org/prog", "lookalike.example.org/prog"),
        ("lookalike.\u0435xample.org/prog", "lookalike.example.org/prog"),  # Cyrillic e
        ("lookalike.example.org/prog", "lookalike.example.org/prog"),
    ],
)
def test_look_alike_origins_fold_alike(look_alike: str, original: str) -> None:
    assert origin_fold(look_alike) == origin_fold(original)


@pytest.mark.parametrize(
    ("one", "other"),
    [("lookalike.example.org/prog", "lookalike.example.org/prog2"), ("a.example/x", "b.example/x")],
)
def test_different_origins_fold_apart(one: str, other: str) -> None:
    assert origin_fold(one) != origin_fold(other)


def test_the_skeleton_is_uts39_s() -> None:
    assert skeleton("rn") == skeleton("m") and skeleton("paypa1") == skeleton("paypal")
    assert skeleton("\u0261") == "g" and skeleton("a") != skeleton("b")


# Printable characters that draw nothing: default-ignorable ones (a combining grapheme joiner,
# variation selectors, Hangul fillers, Khmer inherent vowels, a Mongolian free variation selector)
# and the Braille blank. Each makes an origin that reads exactly as the original.
INVISIBLE = [0x034F, 0xFE00, 0xFE0F, 0x180B, 0x3164, 0x115F, 0x1160, 0xFFA0, 0x2800, 0x17B4, 0x17B5, 0xE0100]


@pytest.mark.parametrize("code_point", INVISIBLE, ids=[f"U+{c:04X}" for c in INVISIBLE])
def test_a_character_that_draws_nothing_is_folded_away_and_refused_in_an_origin(code_point: int) -> None:
    ch = chr(code_point)
    assert ch.isprintable()  # what the origin check accepted
    for look_alike in (DEMO_ORIGIN.replace("example", f"exa{ch}mple"), DEMO_ORIGIN + ch, ch + DEMO_ORIGIN):
        assert origin_fold(look_alike) == origin_fold(DEMO_ORIGIN)
        assert not is_origin(look_alike)
        assert f"U+{code_point:04X} " in invisible_characters(look_alike)
    problems = other_log_problems(DEMO_ORIGIN + ch, [bytes(32)], {DEMO_ORIGIN: []})
    assert len(problems) == 1 and "a look-alike of a known log" in problems[0]
    assert is_origin(DEMO_ORIGIN) and is_origin("lookalike.ex\u0251mple.org/prog")  # visible: still an origin


def test_the_default_ignorable_list_is_unicode_s_derivation() -> None:
    """DerivedCoreProperties.txt derives Default_Ignorable_Code_Point as Cf + Variation_Selector +
    Other_Default_Ignorable_Code_Point - White_Space - FFF9..FFFB - 13430..13440 -
    Prepended_Concatenation_Mark: every format character this Python knows, minus those, is in
    the list; and the list's assigned characters are format characters, variation selectors
    (and the grapheme joiner), the Hangul fillers and the Khmer inherent vowels, nothing else."""
    listed = {cp for low, high in DEFAULT_IGNORABLE_RANGES for cp in range(low, high + 1)}
    assert len(listed) == 4174
    prepended = {*range(0x0600, 0x0606), 0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD}
    excluded = {*range(0xFFF9, 0xFFFC), *range(0x13430, 0x13441), *prepended}
    format_characters = {cp for cp in range(0x110000) if unicodedata.category(chr(cp)) == "Cf"}
    assert format_characters - excluded <= listed
    others = {cp for cp in listed if unicodedata.category(chr(cp)) not in ("Cf", "Cn")}
    selectors = {0x034F, *range(0x180B, 0x180E), 0x180F, *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)}
    assert others == selectors | {0x115F, 0x1160, 0x3164, 0xFFA0, 0x17B4, 0x17B5}
    assert all(is_default_ignorable(chr(cp)) for cp in listed) and not is_default_ignorable("a")


# -- the state's rule


def test_a_remembered_key_is_refused_under_any_other_origin() -> None:
    key = bytes(range(32))
    problems = other_log_problems("another.example.com/unrelated", [key], {"lookalike.example.org/prog": [key]})
    assert len(problems) == 1
    assert '"another.example.com/unrelated"' in problems[0] and '"lookalike.example.org/prog"' in problems[0]
    assert "is remembered as the key of the log" in problems[0]
    assert other_log_problems("lookalike.example.org/prog", [key], {"lookalike.example.org/prog": [key]}) == []


def test_a_look_alike_origin_is_refused_whatever_its_key() -> None:
    problems = other_log_problems("lookalike.ex\u0251mple.org/prog", [bytes(32)], {"lookalike.example.org/prog": []})
    assert len(problems) == 1 and "a look-alike of a known log" in problems[0]
    assert "U+0251 LATIN SMALL LETTER ALPHA" in problems[0]  # named: as it is, it reads as the original
    assert other_log_problems("other.example.org/prog", [bytes(32)], {"lookalike.example.org/prog": []}) == []


def test_the_state_remembers_keys_and_reads_rows_without_them(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    row = {"checkpoint": base64.b64encode(b"x").decode(), "root": base64.b64encode(bytes(32)).decode(), "tree_size": 1}
    doc = {"logs": {"old.example.org/prog": row}, "type": "verifier-state", "v": 1}
    path.write_text(json.dumps(doc, separators=(",", ":"), sort_keys=True))
    logs = read_state(path)
    assert remembered_keys(logs) == {"old.example.org/prog": frozenset()}
    tree = {"origin": "new.example.org/prog", "tree_size": 3, "root": base64.b64encode(bytes(32)).decode()}
    write_state(path, logs, tree, b"note", [b"\x02" * 32, b"\x01" * 32])
    write_state(path, read_state(path), tree, b"note", [b"\x03" * 32])  # a rotation keeps the old keys
    assert remembered_keys(read_state(path)) == {
        "old.example.org/prog": frozenset(),
        "new.example.org/prog": frozenset({b"\x01" * 32, b"\x02" * 32, b"\x03" * 32}),
    }
    doc["logs"]["old.example.org/prog"] = {**row, "keys": ["AAAA"]}
    path.write_text(json.dumps(doc, separators=(",", ":"), sort_keys=True))
    with pytest.raises(FormatError, match="not Ed25519 public keys"):
        read_state(path)


# -- end to end: a rewritten history under a look-alike origin, signed with the demo's own seed


def _program_under(tmp: Path, origin: str, signer: Signer) -> Path:
    """A program of its own (another history than the demo's) under `origin`, signed with `signer`'s
    seed, built by the real tools; returns its site."""
    paths = Paths(tmp / "data", tmp / "data" / "private")
    gates = [GateSpec("a", "Gate A", True), GateSpec("b", "Gate B", False)]
    init_program(paths, "Rewritten", origin, gates, "Another history.", AT0, signer=Signer(origin, signer.seed))
    write_items(paths, [item("a-001", "a"), item("b-0001", "b")])
    commit_new_items(paths, "2026-01-12T10:00:00Z")
    build(paths, tmp / "public")
    return tmp / "public"


def _copy(state: Path, folder: Path) -> Path:
    copy = folder / "state.json"
    copy.write_bytes(state.read_bytes())
    return copy


@pytest.fixture(scope="module")
def remembered_demo(demo_site: BuiltSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A state file that remembers the demo's log, as an auditor's verify.py run leaves it."""
    state = tmp_path_factory.mktemp("auditor") / "state.json"
    r = run_verifier(demo_site.out, "--state", state)
    assert r.returncode == 0, r.stdout + r.stderr
    assert remembered_keys(read_state(state))[DEMO_ORIGIN]
    return state


@pytest.mark.parametrize("origin", LOOK_ALIKES, ids=["division-slash", "latin-alpha", "small-capital-g"])
def test_a_look_alike_re_publication_with_the_demo_key_fails(
    origin: str, demo_site: BuiltSite, remembered_demo: Path, tmp_path: Path
) -> None:
    site = _program_under(tmp_path, origin, load_key(demo_site.paths.key_file))
    state = _copy(remembered_demo, tmp_path)
    # The key pinned by its fingerprint, which names no origin: the state alone must catch it.
    r = run_verifier(site, "--state", state, "--key", load_key(demo_site.paths.key_file).fingerprint)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "is remembered as the key of the log" in r.stdout, r.stdout
    assert json.dumps(origin, ensure_ascii=False) in r.stdout and json.dumps(DEMO_ORIGIN) in r.stdout, r.stdout
    assert f"U+{ord(next(ch for ch in origin if not ch.isascii())):04X}" in r.stdout, r.stdout
    assert state.read_bytes() == remembered_demo.read_bytes()  # a failed run remembers nothing


def test_the_demo_key_under_an_unrelated_origin_fails(
    demo_site: BuiltSite, remembered_demo: Path, tmp_path: Path
) -> None:
    """No name rule is needed to catch it: the key alone is the log's."""
    site = _program_under(tmp_path, "another.example.net/unrelated", load_key(demo_site.paths.key_file))
    r = run_verifier(site, "--state", _copy(remembered_demo, tmp_path))
    assert r.returncode == 1 and "is remembered as the key of the log" in r.stdout, r.stdout


def test_a_look_alike_with_a_key_of_its_own_fails_and_another_log_passes(remembered_demo: Path, tmp_path: Path) -> None:
    own = generate_signer("x.example/y")
    look_alike = _program_under(tmp_path / "l", LOOK_ALIKES[1], own)
    state = _copy(remembered_demo, tmp_path)
    r = run_verifier(look_alike, "--state", state)
    assert r.returncode == 1 and "a look-alike of a known log" in r.stdout, r.stdout
    other = _program_under(tmp_path / "o", "another.example.net/prog", generate_signer("x.example/z"))
    r = run_verifier(other, "--state", state)
    assert r.returncode == 0, r.stdout + r.stderr
    assert set(read_state(state)) == {DEMO_ORIGIN, "another.example.net/prog"}


def test_a_site_whose_origin_holds_an_invisible_character_fails(
    remembered_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's origin with a COMBINING GRAPHEME JOINER, published with a key of its own by tools
    that (unlike these) let the origin through: not an origin, and its character named."""
    for module in ("generator.commands.init", "generator.program.datadir"):
        monkeypatch.setattr(f"{module}.is_origin", lambda value: True)
    # The build verifies what it made with the verify.py it ships, which refuses it: skipped here.
    monkeypatch.setattr("generator.commands.build.self_check", lambda *args: SimpleNamespace(ok=True, checks=0))
    origin = DEMO_ORIGIN.replace("example", "exa\u034fmple")
    site = _program_under(tmp_path, origin, generate_signer("x.example/y"))
    state = _copy(remembered_demo, tmp_path)
    r = run_verifier(site, "--state", state)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "malformed origin" in r.stdout and "U+034F COMBINING GRAPHEME JOINER" in r.stdout, r.stdout
    assert state.read_bytes() == remembered_demo.read_bytes()


def test_init_refuses_an_origin_with_an_invisible_character(tmp_path: Path) -> None:
    paths = Paths(tmp_path / "data", tmp_path / "data" / "private")
    origin = DEMO_ORIGIN + "\ufe0f"
    with pytest.raises(InputError) as e:
        init_program(paths, "P", origin, [GateSpec("a", "Gate A", True)], "About.", AT0)
    assert "U+FE0F VARIATION SELECTOR-16" in str(e.value) and not (tmp_path / "data").exists()


def test_a_key_the_log_rotated_away_from_is_compared_too(demo_site: BuiltSite, tmp_path: Path) -> None:
    """The demo's ledger rotated away from its first key (then revoked it): that key, remembered for
    another origin, makes the demo that other log under a new name, as its active key would."""
    rows = json.loads((demo_site.out / "keys.json").read_text())["keys"]
    retired = [r for r in rows if r["status"] != "active"]
    assert retired, "the demo rotates its key"
    for row in [*retired, next(r for r in rows if r["status"] == "active")]:
        state = tmp_path / f"{row['status']}.json"
        remembered = {
            "checkpoint": base64.b64encode(b"x").decode(),
            "keys": [row["public_key"]],
            "root": base64.b64encode(bytes(32)).decode(),
            "tree_size": 1,
        }
        doc = {"logs": {"other.example.org/log": remembered}, "type": "verifier-state", "v": 1}
        state.write_text(json.dumps(doc, separators=(",", ":"), sort_keys=True))
        r = run_verifier(demo_site.out, "--state", state)
        assert r.returncode == 1, (row["status"], r.stdout + r.stderr)
        assert f"the site's key {row['fingerprint']} is remembered as the key of the log" in r.stdout, r.stdout
        assert '"other.example.org/log"' in r.stdout
