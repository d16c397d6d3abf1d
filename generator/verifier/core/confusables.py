"""Unicode's confusables (UTS #39, section 4) and the look-alike fold of a log's origin.

Two origins that a reader cannot tell apart are one log to that reader: a verifier or a monitor
that remembers a log must refuse a look-alike of its origin as firmly as the origin itself. The
standard library knows no confusables, so Unicode's table ships beside this module, as data
generated from Unicode's own file (confusables_table.py).

The skeleton also removes the characters that draw nothing (Unicode's Default_Ignorable_Code_Point,
listed below), as UTS #39 does since Unicode 15.1: an origin with a COMBINING GRAPHEME JOINER or a
VARIATION SELECTOR in it draws the same as the origin without.
"""

import base64
import unicodedata
import zlib
from functools import cache

from generator.verifier.core.confusables_table import CONFUSABLES_TABLE

# A prototype may be a capital (0 -> O), folded only by the next round's casefold: the fold
# repeats until nothing changes, within a bound that no crafted origin can stretch.
_FOLD_ROUNDS = 4
# Default_Ignorable_Code_Point as DerivedCoreProperties.txt, Version 17.0.0, lists it (4,174 code
# points). Unicode derives it as Other_Default_Ignorable_Code_Point + Cf (format characters) +
# Variation_Selector - White_Space - FFF9..FFFB (interlinear annotation) - 13430..13440 (Egyptian
# hieroglyph format controls) - Prepended_Concatenation_Mark. The standard library has no such
# property, and its Unicode database is that of the running Python (older than this table's), so
# the ranges are written out rather than derived from unicodedata.category at run time.
DEFAULT_IGNORABLE_RANGES = (
    (0x00AD, 0x00AD),  # SOFT HYPHEN
    (0x034F, 0x034F),  # COMBINING GRAPHEME JOINER
    (0x061C, 0x061C),  # ARABIC LETTER MARK
    (0x115F, 0x1160),  # HANGUL CHOSEONG FILLER, HANGUL JUNGSEONG FILLER
    (0x17B4, 0x17B5),  # KHMER VOWEL INHERENT AQ, AA
    (0x180B, 0x180F),  # MONGOLIAN FREE VARIATION SELECTORS ONE-FOUR, MONGOLIAN VOWEL SEPARATOR
    (0x200B, 0x200F),  # ZERO WIDTH SPACE..RIGHT-TO-LEFT MARK
    (0x202A, 0x202E),  # LEFT-TO-RIGHT EMBEDDING..RIGHT-TO-LEFT OVERRIDE
    (0x2060, 0x206F),  # WORD JOINER..NOMINAL DIGIT SHAPES (2065 reserved)
    (0x3164, 0x3164),  # HANGUL FILLER
    (0xFE00, 0xFE0F),  # VARIATION SELECTOR-1..16
    (0xFEFF, 0xFEFF),  # ZERO WIDTH NO-BREAK SPACE
    (0xFFA0, 0xFFA0),  # HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),  # reserved
    (0x1BCA0, 0x1BCA3),  # SHORTHAND FORMAT LETTER OVERLAP..UP STEP
    (0x1D173, 0x1D17A),  # MUSICAL SYMBOL BEGIN BEAM..END PHRASE
    (0xE0000, 0xE0FFF),  # LANGUAGE TAG, TAG SPACE..CANCEL TAG, VARIATION SELECTOR-17..256, reserved
)
# Not default-ignorable, yet drawn as an empty cell: an origin reads the same with it or without.
BLANKS = frozenset({0x2800})  # BRAILLE PATTERN BLANK


def is_default_ignorable(ch: str) -> bool:
    """Unicode's Default_Ignorable_Code_Point: a character that draws nothing where it is not supported."""
    cp = ord(ch)
    return any(low <= cp <= high for low, high in DEFAULT_IGNORABLE_RANGES)


def draws_nothing(ch: str) -> bool:
    """A character a reader cannot see: default-ignorable, or a blank."""
    return is_default_ignorable(ch) or ord(ch) in BLANKS


def invisible_characters(text: str) -> str:
    """The characters of `text` that draw nothing, named ("U+034F COMBINING GRAPHEME JOINER"), for
    an error message: printed as they are, they would show nothing."""
    found = sorted({ch for ch in text if draws_nothing(ch)})
    return ", ".join(f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')}" for ch in found)


@cache
def confusable_prototypes() -> dict[int, str]:
    """Every source code point of confusables.txt -> its prototype (one or more characters)."""
    text = zlib.decompress(base64.b85decode("".join(CONFUSABLES_TABLE))).decode("ascii")
    table: dict[int, str] = {}
    for line in text.splitlines():
        source, *target = line.split(" ")
        table[int(source, 16)] = "".join(chr(int(t, 16)) for t in target)
    return table


def skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, default-ignorable characters removed, each character replaced by
    its prototype, NFD again. Two strings are confusable when their skeletons are equal ("rn" and
    "m", "l" and "1", "ɑ" and "a", "ab" and "ab" with a COMBINING GRAPHEME JOINER between)."""
    decomposed = "".join(ch for ch in unicodedata.normalize("NFD", text) if not is_default_ignorable(ch))
    return unicodedata.normalize("NFD", decomposed.translate(confusable_prototypes()))


def _small_capital(ch: str) -> str:
    # A small capital (ɢ, ʀ) is drawn as its capital at the height of a small letter, so it reads as
    # the letter itself; UTS #39 leaves most of them out because it does not fold case.
    name = unicodedata.name(ch, "")
    if name.startswith("LATIN LETTER SMALL CAPITAL "):
        letter = name.removeprefix("LATIN LETTER SMALL CAPITAL ")
        if len(letter) == 1 and "A" <= letter <= "Z":
            return letter.lower()
    return ch


def origin_fold(origin: str) -> str:
    """What an origin looks like to a reader: case, compatibility forms, small capitals and every
    UTS #39 confusable folded, what draws nothing removed, until nothing changes. Two origins with
    the same fold are one log to whoever reads them."""
    text = origin
    for _ in range(_FOLD_ROUNDS):
        text = "".join(ch for ch in text if ord(ch) not in BLANKS)
        # Skeleton first, case second: UTS #39 maps "I" to "l", which folding case first would lose.
        # And since case does not matter in an origin (hosts ignore it), "i", whose capital is that
        # "I", is folded with "l" too.
        plain = "".join(ch if ch.isascii() else _small_capital(ch) for ch in unicodedata.normalize("NFKC", text))
        folded = skeleton(plain).casefold().replace("i", "l")
        if folded == text:
            break
        text = folded
    return text
