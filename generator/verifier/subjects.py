"""Subjects (SPEC §6, FORMAT.md reading 22): a subject is known by its id; its name is what people\nread, so a name must look like nothing but itself. The rules use only the standard library's\nUnicode database, so every verifier applies them the same way."""

import re
import unicodedata
from typing import Any

from generator.verifier.errors import Problem
from generator.verifier.formats import ID_RE, check_keys, is_id
from generator.verifier.text import show

SUBJECT_KEYS = ("id", "name", "version", "organization")
# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties) that are not Cf already: the
# Hangul fillers, combining grapheme joiner, Mongolian and variation selectors, and the like.
_IGNORABLE_RE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]")
# The single scripts a name may combine with Latin and Han, as Unicode's "highly restrictive"
# profile does (UTS #39 §5.2): Japanese, Korean and Chinese writing mix them by nature.
_SCRIPT_SETS = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
)
_SCRIPT_ALIASES = {"CJK": "HAN", "IDEOGRAPHIC": "HAN", "KATAKANA-HIRAGANA": "KATAKANA"}
# Letters of other scripts that look like Latin ones, and digits that look like letters: a
# subset of UTS #39's confusables, enough that "Оrca" (Cyrillic О) or "0rca" reads as "Orca".
_CONFUSABLES = str.maketrans({
    **dict(zip("АВЕЅІЈКМНОРСТХУаеіјорсхуѕһԁԛԝӏ", "ABESIJKMHOPCTXYaeijopcxyshdqwl", strict=True)),
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχ", "ABEZHIKMNOPTYXaikvoptux", strict=True)),
    "0": "O", "1": "l", "I": "l", "|": "l",
})


def _script(ch: str) -> str | None:
    """The script of a letter or digit, from its Unicode name ("CYRILLIC CAPITAL LETTER O"), or
    None for what every script shares: punctuation, symbols, spaces, marks, ASCII digits."""
    category = unicodedata.category(ch)
    if category[0] not in "LN" or "0" <= ch <= "9":
        return None
    word = unicodedata.name(ch, "UNKNOWN").split()[0]
    if word == "DIGIT":
        return None
    return _SCRIPT_ALIASES.get(word, word)


def name_problems(text: Any, where: str, scripts: bool = True) -> list[Problem]:
    """Why a subject's name, version or organization could mislead a reader, if it could.

    Refused: anything but a non-empty string; text not in NFC, or holding compatibility forms
    (fullwidth letters, ligatures, styled letters) whose plain form differs; control, format,
    private-use, unassigned or invisible characters (zero-width spaces, bidi controls, Hangul
    fillers); spaces other than U+0020, at either end or doubled; and, with `scripts`, letters
    of scripts that are not written together (Latin with Cyrillic, say).
    """
    if not isinstance(text, str) or not text.strip():
        return [Problem("must be a non-empty string", where=where, found=show(text))]
    problems = []
    if not unicodedata.is_normalized("NFC", text):
        problems.append(Problem("not in Unicode normal form NFC (the same letters written another way)", where=where, found=ascii(text)))
    elif not unicodedata.is_normalized("NFKC", text):
        problems.append(Problem("holds compatibility characters (fullwidth, ligature or styled letters); write their plain form",
                                where=where, expected=unicodedata.normalize("NFKC", text), found=ascii(text)))
    hidden = sorted({f"U+{ord(c):04X}" for c in text if (not c.isprintable() and c != " ") or _IGNORABLE_RE.match(c)})
    if hidden:
        problems.append(Problem("holds invisible, control or format characters", where=where, expected="visible characters and single spaces", found=", ".join(hidden[:10])))
    if text != " ".join(text.split(" ")).strip() or "  " in text:
        problems.append(Problem("begins or ends with a space, or holds two in a row", where=where, found=show(text)))
    if scripts:
        used = {sc for c in text if (sc := _script(c)) is not None}
        if len(used) > 1 and not any(used <= allowed for allowed in _SCRIPT_SETS):
            problems.append(Problem("mixes letters of scripts that are not written together", where=where,
                                    expected="one script (Latin, Han and Kana, or Latin, Han and Hangul, may mix)", found=", ".join(sorted(used))))
    return problems


def check_subject(subject: Any, where: str = "subject") -> list[Problem]:
    """A run's subject (SPEC §6 and FORMAT.md): an id, and a name, version and organization
    that each read as what they are."""
    problems = check_keys(subject, SUBJECT_KEYS, where=where)
    if not isinstance(subject, dict):
        return problems
    if "id" in subject and not is_id(subject["id"]):
        problems.append(Problem("a subject id is an id", where=f"{where}.id", expected=ID_RE.pattern, found=show(subject["id"])))
    for k in ("name", "organization", "version"):
        if k in subject:
            problems += name_problems(subject[k], f"{where}.{k}", scripts=k != "version")
    return problems


def subject_fold(name: str) -> str:
    """What a name looks like: two names with the same fold would be read as one subject."""
    return " ".join(unicodedata.normalize("NFKC", name).translate(_CONFUSABLES).casefold().split())
