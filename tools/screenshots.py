"""Full-page PNG screenshots of every kind of page of the demo site, at a phone's width and a
desktop's, for review: `make screenshots` writes screenshots/<kind>-<width>.png (git-ignored).

The demo is built afresh from data/ in a temporary folder (so what is shot is what the
templates make now, not the committed public/); --site shoots an already built site instead.
Each kind is shot on its largest page, as tests/browser/test_browser_pages.py tests it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from generator.commands.build import build
from generator.program.datadir import Paths
from tests.support.browser import REPO, Browsing, browser, missing, representatives, serve

WIDTHS = [390, 1280]
OUT = REPO / "screenshots"


def build_demo(into: Path) -> Path:
    data = into / "data"
    shutil.copytree(REPO / "data", data, ignore=shutil.ignore_patterns(".lock", ".pending"))
    for key in (data / "private").glob("**/*.key"):
        os.chmod(key, 0o600)  # git keeps no file modes: a clone's keys are world-readable
    build(Paths(data, data / "private"), into / "public", offline=True)
    return into / "public"


def shoot(site: Path, out: Path) -> list[Path]:
    pages = representatives(site)
    out.mkdir(exist_ok=True)
    for old in sorted(out.glob("*.png")):  # a kind that is gone leaves no stale picture
        old.unlink()
    shots = []
    with browser() as chromium, serve(site) as base_url:
        browsing = Browsing(base_url, chromium)
        for kind, path in pages.items():
            for width in WIDTHS:
                tab = browsing.open(path, width)
                try:
                    shot = out / f"{kind}-{width}.png"
                    tab.page.screenshot(path=str(shot), full_page=True, animations="disabled", caret="hide")
                    for error in tab.errors:
                        print(f"{path} at {width} px: {error}", file=sys.stderr)
                finally:
                    tab.close()
                shots.append(shot)
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site folder (default: build the demo afresh)")
    parser.add_argument("--out", type=Path, default=OUT, help="where the PNGs go (default: screenshots/)")
    args = parser.parse_args()
    reason = missing()
    if reason is not None:
        print(f"screenshots: {reason}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="screenshots-") as tmp:
        site = args.site or build_demo(Path(tmp))
        shots = shoot(site, args.out)
    for shot in shots:
        print(shot.relative_to(REPO) if shot.is_relative_to(REPO) else shot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
