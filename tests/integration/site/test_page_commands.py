"""The shell commands the site tells readers to run do what the page says they do.

Every `<pre class="cmd" data-run="site" data-expect="…">` on the "verify it yourself" page and on
item pages is run in the built site's folder, exactly as printed (with this test's Python for
`python3`), and must exit 0 and print what `data-expect` promises. The page has the auditor keep
their own verify.py in the folder above the site, so the tests put the project's copy there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from generator.core import layout
from tests.support.demo import BUNDLE, BuiltSite
from tests.support.manifest import whole_manifest
from tests.support.v3 import v3_demo


@dataclass(frozen=True)
class PageCommand:
    page: str
    text: str  # as printed on the page
    expect: str

    @property
    def shell(self) -> str:
        """The command to run: this test's Python stands in for `python3`."""
        if self.text.startswith("python3 "):
            return f'"{sys.executable}" ' + self.text[len("python3 ") :]
        return self.text

    @property
    def needs_openssl(self) -> bool:
        return "openssl " in self.text


def page_commands(root: Path, page: str) -> list[PageCommand]:
    soup = BeautifulSoup((root / page).read_text(encoding="utf-8"), "html.parser")
    out = []
    for pre in soup.select("pre.cmd"):
        if pre.get("data-run") != "site":
            continue
        assert pre.has_attr("data-expect"), f"{page}: a runnable command without data-expect: {pre}"
        out.append(PageCommand(page, pre.get_text().strip(), pre["data-expect"]))
    return out


def pages_under_test(root: Path) -> list[str]:
    """The verify page, one Gate A item page and two retired item pages."""
    manifest = whole_manifest(root)
    public = [r["id"] for r in manifest["reveals"] if r["reason"] == "public-gate"]
    retired = [r["id"] for r in manifest["reveals"] if r["reason"] == "retired"]
    assert public and len(retired) >= 2, f"{layout.MANIFEST}: the demo needs public and retired items"
    return [
        layout.VERIFY_PAGE,
        layout.item_page(public[0]),
        layout.item_page(retired[0]),
        layout.item_page(retired[-1]),
    ]


def run(cmd: PageCommand, cwd: Path) -> subprocess.CompletedProcess[str]:
    own = cwd.parent / "verify.py"  # the auditor's copy, obtained from the project, outside the site
    if not own.exists():
        shutil.copyfile(BUNDLE, own)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", LC_ALL="C")
    return subprocess.run(cmd.shell, shell=True, cwd=cwd, capture_output=True, text=True, timeout=60, env=env)


def openssl_available() -> bool:
    if shutil.which("openssl") is not None:
        return True
    assert not os.environ.get("CI"), "openssl is missing on CI, where the page's openssl commands must be tested"
    return False


def all_commands(root: Path) -> list[PageCommand]:
    return [c for page in pages_under_test(root) for c in page_commands(root, page)]


def test_pages_carry_the_essential_commands(demo_site: BuiltSite) -> None:
    """The commands below are really on the pages, so the run test cannot pass vacuously."""
    cmds = all_commands(demo_site.out)
    verify_page = [c.text for c in cmds if c.page == layout.VERIFY_PAGE]
    wanted = {
        "sha256sum -c": lambda t: t.startswith("sha256sum --quiet -c SHA256SUMS"),
        "openssl pkeyutl -verify": lambda t: (
            t.startswith("openssl pkeyutl -verify -pubin -inkey keys/") and "SHA256SUMS.sig" in t
        ),
        "fingerprint pipeline": lambda t: (
            t.startswith("openssl pkey -pubin -in keys/") and t.endswith("| tail -c 32 | sha256sum")
        ),
        "verify.py": lambda t: t == "python3 -P ../verify.py .",
        "verify.py --key": lambda t: t.startswith("python3 -P ../verify.py . --key '"),
        "the auditor's own saved checkpoint": lambda t: t == "python3 -P ../verify.py . --since ../saved-checkpoint",
    }
    for name, matches in wanted.items():
        assert any(matches(t) for t in verify_page), f"{layout.VERIFY_PAGE}: no {name} command among {verify_page}"
    for page in pages_under_test(demo_site.out)[1:]:
        texts = [c.text for c in cmds if c.page == page]
        assert len(texts) == 3, f"{page}: expected the sha256sum, grep and openssl commands, found {texts}"
        assert any(t.startswith("sha256sum reveals/") for t in texts), f"{page}: no sha256sum of its reveal file"
        assert any(t.startswith("openssl pkeyutl -verify") for t in texts), f"{page}: no openssl signature check"


def test_every_page_command_runs_and_prints_what_the_page_says(demo_site: BuiltSite) -> None:
    root = demo_site.out
    have_openssl = openssl_available()
    cmds = all_commands(root)
    ran = 0
    failures = []
    for cmd in cmds:
        if cmd.needs_openssl and not have_openssl:
            continue
        r = run(cmd, root)
        output = r.stdout + r.stderr
        ran += 1
        if r.returncode != 0:
            failures.append(f"{cmd.page}: `{cmd.text}` exited {r.returncode}:\n{output[-2000:]}")
        elif cmd.expect not in output:
            failures.append(f"{cmd.page}: `{cmd.text}` did not print {cmd.expect!r}; it printed:\n{output[-2000:]}")
        elif cmd.text.startswith("sha256sum --quiet") and output.strip():
            failures.append(
                f"{cmd.page}: `{cmd.text}` should print nothing when every file matches; it printed:\n{output[-2000:]}"
            )
    assert not failures, "\n\n".join(failures)
    assert ran >= (len(cmds) if have_openssl else 1), f"only {ran} of {len(cmds)} commands ran"


def test_the_checksum_command_catches_a_changed_byte(demo_copy: BuiltSite) -> None:
    root = demo_copy.out
    manifest = json.loads((root / layout.MANIFEST).read_bytes())
    target = manifest["reveals"][0]["path"]
    data = bytearray((root / target).read_bytes())
    i = data.index(b'"salt":"') + len(b'"salt":"')
    data[i] = ord("0") if data[i] != ord("0") else ord("1")
    (root / target).write_bytes(bytes(data))

    cmds = page_commands(root, layout.VERIFY_PAGE)
    sums = [c for c in cmds if c.text.startswith("sha256sum --quiet -c SHA256SUMS")]
    assert len(sums) == 1, f"{layout.VERIFY_PAGE}: expected one sha256sum -c command, found {[c.text for c in cmds]}"
    r = run(sums[0], root)
    output = r.stdout + r.stderr
    assert r.returncode != 0, f"`{sums[0].text}` passed on a site whose {target} was changed:\n{output}"
    assert target in output and "FAILED" in output, f"`{sums[0].text}` does not name {target} as FAILED:\n{output}"

    # A whole-site check must catch the changed byte; a one-file proof only when it is that file's.
    shutil.copyfile(root / layout.CHECKPOINT, root.parent / "saved-checkpoint")  # as the page's `cp` would
    checks = [c for c in cmds if c.text.startswith("python3 -P ../verify.py")]
    assert checks, f"{layout.VERIFY_PAGE}: no verify.py command"
    for cmd in (c for c in checks if " proof " not in c.text or f" {target} " in c.text):
        r = run(cmd, root)
        output = r.stdout + r.stderr
        assert r.returncode == 1, (
            f"`{cmd.text}` exited {r.returncode} on a tampered site (expected 1):\n{output[-2000:]}"
        )
        assert target in output, f"`{cmd.text}` does not name the tampered file {target}:\n{output[-2000:]}"


@pytest.mark.parametrize("fmt", [3, 4])
def test_a_tree_sites_checksum_commands_catch_a_changed_byte(tmp_path: Path, fmt: int) -> None:
    """On a site whose checksum list is a tree, SHA256SUMS names only lists: the changed file is
    caught by the leaves' lists, which the page's `find … -exec sha256sum` runs."""
    root = v3_demo(tmp_path, fmt).out
    target = whole_manifest(root)["reveals"][0]["path"]
    data = bytearray((root / target).read_bytes())
    i = data.index(b'"salt":"') + len(b'"salt":"')
    data[i] = ord("0") if data[i] != ord("0") else ord("1")
    (root / target).write_bytes(bytes(data))
    sums = [c for c in page_commands(root, layout.VERIFY_PAGE) if c.text.startswith("sha256sum --quiet -c SHA256SUMS")]
    assert len(sums) == 1 and "find sums" in sums[0].text, [c.text for c in sums]
    r = run(sums[0], root)
    output = r.stdout + r.stderr
    assert r.returncode != 0 and target in output and "FAILED" in output, output


@pytest.mark.parametrize("fmt", [3, 4])
def test_a_v3_sites_page_commands_run_too(tmp_path: Path, fmt: int) -> None:
    """A format v3 site (and so a v4 one) has no entries document: its pages grep the entry
    bundles instead, and show no signature check of a file it does not publish
    (docs/formats/v3.md, 3)."""
    root = v3_demo(tmp_path, fmt).out
    have_openssl = openssl_available()
    cmds = all_commands(root)
    assert not [c.text for c in cmds if layout.ENTRIES in c.text]
    greps = [c for c in cmds if c.text.startswith("grep -o ") and not c.text.endswith(".json")]  # not a certificate
    assert greps and all(c.text.endswith(" -ra ledger/tile/entries") for c in greps), [c.text for c in greps]
    failures = []
    for cmd in cmds:
        if cmd.needs_openssl and not have_openssl:
            continue
        r = run(cmd, root)
        output = r.stdout + r.stderr
        if r.returncode != 0 or cmd.expect not in output:
            failures.append(f"{cmd.page}: `{cmd.text}` exited {r.returncode}, printed:\n{output[-2000:]}")
    assert not failures, "\n\n".join(failures)
