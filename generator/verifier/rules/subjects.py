"""Subjects and the names people read (format v1 §6, FORMAT.md reading 22).

A subject is known by its id; its name is what people read, so a name must look like nothing
but itself. The same goes for an organization and a judge's provider: the independence rule
compares them. The rules use only the standard library's Unicode database, so every verifier
applies them the same way.
"""

import re
import unicodedata
from typing import Any

from generator.verifier.core.errors import Problem
from generator.verifier.core.formats import ID_RE, check_keys, is_id
from generator.verifier.core.text import show

SUBJECT_KEYS = ("id", "name", "version", "organization")
# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties) that are not Cf already: the
# Hangul fillers, combining grapheme joiner, Mongolian and variation selectors, and the like.
_IGNORABLE_RE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)
# Unicode's recommended scripts for identifiers (UTS #31 table 4), by the first word of their
# letters' names. Scripts of limited use (Cherokee, whose letters look like Latin capitals, say)
# are not for names.
_RECOMMENDED_SCRIPTS = frozenset(
    {
        "LATIN",
        "GREEK",
        "CYRILLIC",
        "ARMENIAN",
        "HEBREW",
        "ARABIC",
        "GEORGIAN",
        "HAN",
        "HIRAGANA",
        "KATAKANA",
        "HANGUL",
        "BOPOMOFO",
        "DEVANAGARI",
        "BENGALI",
        "GURMUKHI",
        "GUJARATI",
        "ORIYA",
        "TAMIL",
        "TELUGU",
        "KANNADA",
        "MALAYALAM",
        "SINHALA",
        "THAI",
        "LAO",
        "TIBETAN",
        "MYANMAR",
        "ETHIOPIC",
        "KHMER",
        "THAANA",
    }
)
# The single scripts a name may combine with Latin and Han, as Unicode's "highly restrictive"
# profile does (UTS #39 §5.2): Japanese, Korean and Chinese writing mix them by nature.
_SCRIPT_SETS = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
)
_SCRIPT_ALIASES = {"CJK": "HAN", "IDEOGRAPHIC": "HAN", "KATAKANA-HIRAGANA": "KATAKANA"}
# Latin letters of real alphabets that are not an ASCII letter with marks. Any other Latin
# letter (phonetic letters, small capitals, clicks: "ᴄ", "ɑ", "ǀ") is refused: they exist to look
# like the plain ones.
_LATIN_EXTRA = frozenset("ßæÆøØœŒđĐłŁþÞðÐŋŊħĦ")
# What a letter looks like (after case folding): the Cyrillic, Greek and Armenian letters that
# look like Latin ones, Han characters that look like Katakana, and digits that look like
# letters. A subset of UTS #39's confusables, applied by subject_fold.
_CONFUSABLES = str.maketrans(
    {
        **dict(zip("асԁеһіјӏорԛѕуԝхүѵ", "acdehijlopqsywxyv", strict=True)),  # Cyrillic
        **dict(zip("αικνορτυχγω", "aikvoptuxyw", strict=True)),  # Greek
        **dict(zip("օսհոզ", "ouhnq", strict=True)),  # Armenian
        **dict(
            zip("力口工二八卜夕〇一", "カロエニハトタoー", strict=True)
        ),  # Han that reads as Katakana, ideographic zero
        "0": "o",
        "1": "i",
        "|": "i",
        "l": "i",
        "ı": "i",  # l, I and 1 look alike in most fonts
    }
)


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


def _odd_latin(ch: str) -> bool:
    """A Latin letter that is neither an ASCII letter (with or without marks) nor one of the
    ordinary letters of a real alphabet."""
    if ch.isascii() or ch in _LATIN_EXTRA or _script(ch) != "LATIN":
        return False
    base = unicodedata.normalize("NFD", ch)[0]
    return not (base.isascii() and base.isalpha())


def name_problems(text: Any, where: str, scripts: bool = True) -> list[Problem]:
    """Why a subject's name, version or organization (or a judge's provider) could mislead a
    reader, if it could.

    Refused: anything but a non-empty string; text not in NFC, or holding compatibility letters
    or digits (fullwidth, ligature or styled) whose plain form differs; control, format,
    private-use, unassigned or invisible characters (zero-width spaces, bidi controls, Hangul
    fillers); spaces other than U+0020, at either end or doubled; and, with `scripts`, letters of
    scripts not recommended for identifiers, odd Latin letters, and letters of scripts that are
    not written together (Latin with Cyrillic, say).
    """
    if not isinstance(text, str) or not text.strip():
        return [Problem("must be a non-empty string", where=where, found=show(text))]
    problems = []
    if not unicodedata.is_normalized("NFC", text):
        problems.append(
            Problem(
                "not in Unicode normal form NFC (the same letters written another way)", where=where, found=ascii(text)
            )
        )
    elif any(unicodedata.category(c)[0] in "LN" and unicodedata.normalize("NFKC", c) != c for c in text):
        problems.append(
            Problem(
                "holds compatibility characters (fullwidth, ligature or styled letters); write their plain form",
                where=where,
                expected=unicodedata.normalize("NFKC", text),
                found=ascii(text),
            )
        )
    hidden = sorted({f"U+{ord(c):04X}" for c in text if (not c.isprintable() and c != " ") or _IGNORABLE_RE.match(c)})
    if hidden:
        problems.append(
            Problem(
                "holds invisible, control or format characters",
                where=where,
                expected="visible characters and single spaces",
                found=", ".join(hidden[:10]),
            )
        )
    if text != " ".join(text.split(" ")).strip() or "  " in text:
        problems.append(Problem("begins or ends with a space, or holds two in a row", where=where, found=show(text)))
    if scripts:
        used = {sc for c in text if (sc := _script(c)) is not None}
        odd = sorted(used - _RECOMMENDED_SCRIPTS)
        if odd:
            problems.append(
                Problem(
                    "holds letters of a script not recommended for names (UTS #31)",
                    where=where,
                    expected="letters of a script in common use",
                    found=", ".join(odd),
                )
            )
        latin = sorted({f"{c} U+{ord(c):04X}" for c in text if _odd_latin(c)})
        if latin:
            problems.append(
                Problem(
                    "holds Latin letters made to look like others (phonetic letters, small capitals, clicks)",
                    where=where,
                    expected="letters of an alphabet, with or without accents",
                    found=", ".join(latin[:10]),
                )
            )
        if len(used) > 1 and not any(used <= allowed for allowed in _SCRIPT_SETS):
            problems.append(
                Problem(
                    "mixes letters of scripts that are not written together",
                    where=where,
                    expected="one script (Latin, Han and Kana, or Latin, Han and Hangul, may mix)",
                    found=", ".join(sorted(used)),
                )
            )
    return problems


def prose_problems(text: Any, where: str) -> list[Problem]:
    """Why a note people read beside a verdict (a revocation's reason) could mislead them, if it
    could: it must be a non-empty string of visible characters and plain spaces, on one line.
    A control or format character could hide words, reorder them (a bidi override) or forge a
    line of a terminal's report; a page shows the text as written."""
    if not isinstance(text, str) or not text.strip():
        return [Problem("must be a non-empty string", where=where, found=show(text))]
    hidden = sorted({f"U+{ord(c):04X}" for c in text if not c.isprintable() or _IGNORABLE_RE.match(c)})
    if hidden:
        return [
            Problem(
                "holds invisible, control or format characters",
                where=where,
                expected="visible characters and spaces, on one line",
                found=", ".join(hidden[:10]),
            )
        ]
    return []


def check_subject(subject: Any, where: str = "subject") -> list[Problem]:
    """A run's subject (format v1 §6 and FORMAT.md): an id, and a name, version and organization
    that each read as what they are."""
    problems = check_keys(subject, SUBJECT_KEYS, where=where)
    if not isinstance(subject, dict):
        return problems
    if "id" in subject and not is_id(subject["id"]):
        problems.append(
            Problem("a subject id is an id", where=f"{where}.id", expected=ID_RE.pattern, found=show(subject["id"]))
        )
    for k in ("name", "organization", "version"):
        if k in subject:
            problems += name_problems(subject[k], f"{where}.{k}", scripts=k != "version")
    return problems


def subject_fold(name: str) -> str:
    """What a name looks like: two names with the same fold would be read as one.

    NFKC, case folding, the confusables above (l, i and 1 become one letter), case folding
    again, and runs of spaces made one."""
    t = unicodedata.normalize("NFKC", name).casefold()
    return " ".join(t.translate(_CONFUSABLES).casefold().split())


def known_subject_problems(subject: Any, names: dict[str, str], folds: dict[str, str]) -> list[Problem]:
    """A new run's subject, against the subjects registered so far (`names`: id -> name, `folds`:
    subject_fold(name) -> id): well formed (check_subject), with one id for one name, and no
    two names that look alike. Then format v1 §6's rules, which follow a subject by its name,
    follow it by its id as well, and a look-alike name cannot start a fresh chain of
    attempts that sees sealed items again."""
    shape = check_subject(subject)
    if shape:
        return shape
    sid, name = subject["id"], subject["name"]
    known = names.get(sid)
    if known is not None and known != name:
        return [
            Problem(
                f"subject {sid} was registered as {known!r}: a subject keeps its name (a new name is a new "
                "subject, with a new id)",
                where="subject.name",
                expected=known,
                found=name,
            )
        ]
    other = folds.get(subject_fold(name))
    if other is not None and other != sid:
        return [
            Problem(
                f"the name looks like the name of subject {other} ({names[other]!r}): two subjects "
                "cannot have names a reader would confuse",
                where="subject.name",
                expected=f"a name unlike {names[other]!r}, or subject id {other}",
                found=f"{name!r} for subject id {sid}",
            )
        ]
    return []
