"""Write this release's row of the verifier release table, docs/verifier-releases.md.

The table gives, for each release, the SHA-256 of its `generator/verify.py`, the file every site the release builds
ships; auditors check their copy against it. `make bundle` runs this after regenerating the bundle: the row of the
package's version is rewritten with the bundle's SHA-256, or, for a version the table does not have yet, added after
the last row. Every other byte of the file is kept.

    python tools/release_table.py [FILE]     # FILE: docs/verifier-releases.md
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TABLE = REPO / "docs" / "verifier-releases.md"
BUNDLE = REPO / "generator" / "verify.py"
ROW = re.compile(r"^\| (?P<version>[^|`\s]+) \| `(?P<digest>[0-9a-f]{64})` \|$", re.M)


def with_release(text: str, version: str, digest: str) -> str:
    """The table's text with VERSION's row giving DIGEST (rewritten, or added after the last row)."""
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise ValueError(f"not a SHA-256: {digest!r}")
    row = f"| {version} | `{digest}` |"
    rows = list(ROW.finditer(text))
    if not rows:
        raise ValueError("no release table (rows '| VERSION | `SHA-256` |') in the file")
    mine = [m for m in rows if m.group("version") == version]
    if len(mine) > 1:
        raise ValueError(f"release {version} has {len(mine)} rows")
    if mine:
        return text[: mine[0].start()] + row + text[mine[0].end() :]
    last = rows[-1]
    return text[: last.end()] + "\n" + row + text[last.end() :]


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(REPO))
    from generator import __version__

    table = Path(argv[0]) if argv else TABLE
    digest = hashlib.sha256(BUNDLE.read_bytes()).hexdigest()
    text = table.read_text(encoding="utf-8")
    try:
        new = with_release(text, __version__, digest)
    except ValueError as e:
        print(f"{table}: {e}", file=sys.stderr)
        return 1
    if new != text:
        table.write_text(new, encoding="utf-8")
        print(f"{table}: release {__version__}, verify.py {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
