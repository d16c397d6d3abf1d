"""Make generator/verifier/core/confusables_table.py from Unicode's confusables.txt (UTS #39).

    python tools/make_confusables.py PATH/TO/confusables.txt

The verifier uses only the standard library, whose Unicode database has no confusables, so the
table ships inside it: every mapping of the file (source code point -> prototype), one line
"SOURCE TARGET..." in hex each, sorted by source, compressed with zlib and written as Base85
text. The module records the file's version and SHA-256; tests/adversarial/test_lookalike_origins.py checks what
the table decodes to. Same input, same bytes: run it again on the same file and nothing changes.
"""

import base64
import hashlib
import re
import sys
import textwrap
import zlib
from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "generator" / "verifier" / "core" / "confusables_table.py"
_LINE = re.compile(r"^([0-9A-F]{4,6}) ;\t([0-9A-F]{4,6}(?: [0-9A-F]{4,6})*) ;\tMA\t#")
_VERSION = re.compile(r"^# Version: (\d+\.\d+\.\d+)$", re.M)

MODULE = '''"""Unicode's confusables table (UTS #39, section 4), as data: generated, never edited by hand.

tools/make_confusables.py writes this file from Unicode's confusables.txt, Version {version}, of
SHA-256 {sha256}:
{count} mappings, each a line "SOURCE TARGET..." of hex code points, compressed with zlib and
written as Base85. Run the script on that file to check that these bytes are what it makes.
confusables.py reads it.
"""

CONFUSABLES_VERSION = "{version}"
CONFUSABLES_SHA256 = "{sha256}"
CONFUSABLES_TABLE = (
{table}
)
'''


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    data = Path(argv[0]).read_bytes()
    text = data.decode("utf-8-sig")
    version = _VERSION.search(text)
    if not version or "Unicode Security Mechanisms for UTS #39" not in text:
        print(f"{argv[0]}: not Unicode's confusables.txt", file=sys.stderr)
        return 2
    rows: dict[int, list[int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if not m:
            print(f"{argv[0]}:{number}: not a mapping line: {line[:80]!r}", file=sys.stderr)
            return 2
        rows[int(m[1], 16)] = [int(t, 16) for t in m[2].split()]
    plain = "\n".join(f"{s:x} " + " ".join(f"{t:x}" for t in rows[s]) for s in sorted(rows))
    packed = base64.b85encode(zlib.compress(plain.encode("ascii"), 9)).decode("ascii")
    # Base85 uses both quote characters' neighbours but never a backslash or a double quote.
    assert '"' not in packed and "\\" not in packed
    table = "\n".join(f'    "{chunk}"' for chunk in textwrap.wrap(packed, 112, break_on_hyphens=False))
    TARGET.write_text(
        MODULE.format(version=version[1], sha256=hashlib.sha256(data).hexdigest(), count=len(rows), table=table),
        encoding="utf-8",
    )
    print(f"{TARGET}: {len(rows)} mappings of confusables.txt {version[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
