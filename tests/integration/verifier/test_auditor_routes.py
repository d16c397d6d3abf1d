"""The auditor's documented routes, run as the verifying guide (docs/verifying.md) and the site's "Verify it
yourself" page give them: a verify.py obtained apart from the site and kept outside its folder, run with
`-P` by (a) Debian's python3 with python3-nacl, (b) a virtual environment made inside the
site's folder, (c) one made beside it. Each exits 0 on a pristine site, 1 on a site with one
changed byte in a certificate, and 2, with one message saying what to do, when it cannot run.

The virtual environments are real (`python -m venv`); to stay offline and fast they get PyNaCl
by copying the installed package into their own site-packages, which is what the auditor's
`pip install pynacl` puts there, inside the site's folder for route (b).
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nacl
import pytest
from bs4 import BeautifulSoup

from generator.core import layout
from generator.core.signing_key import load_key
from tests.support.demo import BUNDLE, REPO, BuiltSite

DEBIAN_PYTHON = Path("/usr/bin/python3")
SKIPPED_NOTE = "verify-env/ was not read: it is the Python environment running this verifier"


@dataclass
class Audit:
    """An auditor's folder: their own verify.py beside the site they downloaded."""

    work: Path
    verifier: Path
    site: Path
    key_file: Path


@pytest.fixture
def audit(demo_copy: BuiltSite, tmp_path: Path) -> Audit:
    work = tmp_path / "audit"
    work.mkdir()
    verifier = work / "verify.py"
    shutil.copyfile(BUNDLE, verifier)  # the project's generator/verify.py, at this release
    site = work / "site"
    shutil.move(demo_copy.out, site)
    # The site ships the same bytes: that is what the verifier compares its copy with.
    assert hashlib.sha256((site / "verify.py").read_bytes()).digest() == hashlib.sha256(verifier.read_bytes()).digest()
    return Audit(work, verifier, site, demo_copy.paths.key_file)


def run(argv: list[str | Path], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    full.update(env)
    r = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=300, env=full)
    assert "internal error of the verifier" not in r.stdout, r.stdout[-3000:]
    return r


def tamper_a_certificate(site: Path) -> str:
    """One changed byte in the first certificate, as a careless or dishonest edit would leave it."""
    cert = sorted(site.glob("certificates/*.json"))[0]
    data = bytearray(cert.read_bytes())
    data[len(data) // 2] ^= 1
    cert.write_bytes(bytes(data))
    return cert.relative_to(site).as_posix()


def make_venv(where: Path, with_nacl: bool = True) -> Path:
    """A real virtual environment; PyNaCl copied into its own site-packages, as pip would install it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if with_nacl:
        installed = Path(nacl.__file__).parent
        shutil.copytree(installed, Path(purelib) / "nacl")
        for backend in glob.glob(str(installed.parent / "_cffi_backend*")):
            shutil.copy(backend, purelib)
        loaded = run([python, "-c", "import nacl.signing; print(nacl.__file__)"], where).stdout.strip()
        assert loaded.startswith(str(where.resolve())) or loaded.startswith(str(where)), loaded
    return python


def assert_routes(pristine: list[str | Path], cwd: Path, audit: Audit, **env: str) -> None:
    """0 on the pristine site, then 1 once a certificate has one byte changed."""
    r = run(pristine, cwd, **env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "PASS: all" in r.stdout
    changed = tamper_a_certificate(audit.site)
    r = run(pristine, cwd, **env)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    assert f"FAIL {changed}: SHA-256 differs from SHA256SUMS" in r.stdout


def assert_cannot_run(r: subprocess.CompletedProcess[str], *said: str) -> None:
    assert r.returncode == 2, r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stdout == "", r.stdout[-3000:]
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("verify.py: cannot run: "), r.stderr  # one message
    for words in said:
        assert words in r.stderr, r.stderr


# --- (a) Debian: /usr/bin/python3 -P verify.py SITE, with python3-nacl


def debian_python() -> Path:
    """Debian's python3 with python3-nacl; the test skips without it, except under CI (.ci/run installs it)."""
    why = None
    if not DEBIAN_PYTHON.is_file():
        why = f"{DEBIAN_PYTHON} is not installed"
    elif subprocess.run([DEBIAN_PYTHON, "-c", "import nacl.signing"], capture_output=True).returncode != 0:
        why = f"{DEBIAN_PYTHON} has no PyNaCl (apt-get install python3-nacl)"
    elif subprocess.run([DEBIAN_PYTHON, "-c", "import sys; assert sys.version_info >= (3, 11)"]).returncode != 0:
        why = f"{DEBIAN_PYTHON} is older than Python 3.11"
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the Debian route cannot be tested under CI: {why}")
        pytest.skip(why)
    return DEBIAN_PYTHON


def test_the_debian_route_passes_a_pristine_site_and_fails_a_tampered_one(audit: Audit) -> None:
    python = debian_python()
    assert_routes([python, "-P", audit.verifier, audit.site], audit.work, audit)


def test_the_debian_route_cannot_run_without_pynacl_or_with_a_module_from_the_site(audit: Audit) -> None:
    python = debian_python()
    # -S: no site-packages, so no python3-nacl; what the auditor meets before `apt install`.
    r = run([python, "-S", "-P", audit.verifier, audit.site], audit.work)
    assert_cannot_run(r, "PyNaCl is not installed", "sudo apt install python3-nacl")
    # A module of the site on the path (here through PYTHONPATH) stops it before any verdict.
    (audit.site / "nacl").mkdir()
    (audit.site / "nacl" / "__init__.py").write_text("raise ImportError('not the real PyNaCl')\n")
    (audit.site / "hashlib.py").write_text("from _sha256 import sha256\nimport _hashlib\n")
    r = run([python, "-P", audit.verifier, audit.site], audit.work, PYTHONPATH=str(audit.site))
    assert_cannot_run(r, "hashlib", "were loaded from inside the site", "python3 -P /path/to/verify.py SITE")


# --- (b) a virtual environment made inside the site's folder


def test_a_venv_inside_the_site_passes_a_pristine_site_and_fails_a_tampered_one(audit: Audit) -> None:
    make_venv(audit.site / "verify-env")
    argv: list[str | Path] = ["verify-env/bin/python", "-P", audit.verifier, "."]
    r = run(argv, audit.site)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    # The folder is named, once, as what it is; nothing under it is a failure of the site.
    skipped = [line for line in r.stdout.splitlines() if SKIPPED_NOTE in line]
    assert skipped == [f"Note: {SKIPPED_NOTE} (its sys.prefix), not a file of the site"], r.stdout
    assert_routes(argv, audit.site, audit)


def test_a_venv_inside_the_site_without_pynacl_cannot_run(audit: Audit) -> None:
    make_venv(audit.site / "verify-env", with_nacl=False)
    r = run(["verify-env/bin/python", "-P", audit.verifier, "."], audit.site)
    assert_cannot_run(r, "PyNaCl is not installed", "verify-env/bin/python -m pip install pynacl")


def test_the_auditor_s_venv_is_only_trusted_by_the_python_it_belongs_to(audit: Audit) -> None:
    """The same folder, seen by another interpreter, is the site's: its files are counted, and
    its modules on the path are refused."""
    make_venv(audit.site / "verify-env")
    r = run([sys.executable, "-P", audit.verifier, audit.site], audit.work)
    assert r.returncode == 1, r.stdout[-3000:]
    assert "FAIL verify-env/pyvenv.cfg: file is not listed in SHA256SUMS" in r.stdout
    assert "the site holds Python code a verifier could be made to import" in r.stdout
    assert SKIPPED_NOTE not in r.stdout
    purelib = next((audit.site / "verify-env" / "lib").glob("python3*/site-packages"))
    r = run([sys.executable, "-P", audit.verifier, audit.site], audit.work, PYTHONPATH=str(purelib))
    assert_cannot_run(r, "nacl", "were loaded from inside the site")


def test_a_site_that_ships_the_running_venv_fails(audit: Audit) -> None:
    """A site whose SHA256SUMS lists files in the environment running the verifier shipped that
    environment: its code ran, and the report says so rather than skip the folder."""
    python = make_venv(audit.site / "verify-env")
    sums = (audit.site / layout.SUMS).read_text().splitlines(keepends=True)
    cfg = audit.site / "verify-env" / "pyvenv.cfg"
    sums.append(f"{hashlib.sha256(cfg.read_bytes()).hexdigest()}  verify-env/pyvenv.cfg\n")
    data = "".join(sorted(sums, key=lambda line: line.split("  ", 1)[1].encode())).encode()
    (audit.site / layout.SUMS).write_bytes(data)
    (audit.site / layout.SUMS_SIG).write_bytes(load_key(audit.key_file).sign(data))  # the key holder would
    r = run([python, "-P", audit.verifier, "."], audit.site)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    assert "FAIL verify-env/pyvenv.cfg: listed in SHA256SUMS, inside the Python environment running" in r.stdout


# --- (c) a virtual environment made beside the site


def test_a_venv_beside_the_site_passes_a_pristine_site_and_fails_a_tampered_one(audit: Audit) -> None:
    make_venv(audit.work / "verify-env")
    argv: list[str | Path] = ["verify-env/bin/python", "-P", "verify.py", "site"]
    r = run(argv, audit.work)
    assert r.returncode == 0 and SKIPPED_NOTE not in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
    assert_routes(argv, audit.work, audit)


def test_a_venv_beside_the_site_without_pynacl_cannot_run(audit: Audit) -> None:
    make_venv(audit.work / "verify-env", with_nacl=False)
    r = run(["verify-env/bin/python", "-P", "verify.py", "site"], audit.work)
    assert_cannot_run(r, "PyNaCl is not installed")


# --- a Python too old to run it


def _runs_old(python: str) -> bool:
    probe = [python, "-c", "import sys; sys.exit(0 if (3, 8) <= sys.version_info < (3, 11) else 1)"]
    return subprocess.run(probe, capture_output=True).returncode == 0


def test_a_python_older_than_3_11_cannot_run_and_says_so(audit: Audit) -> None:
    # pyenv's shims refuse a version not selected, so its installed versions are looked at directly too.
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [shutil.which(f"python3.{minor}") for minor in (10, 9, 8)]
    candidates += [str(p) for minor in (10, 9, 8) for p in sorted(pyenv_root.glob(f"versions/3.{minor}.*/bin/python3"))]
    old = next((p for p in candidates if p and _runs_old(p)), None)
    if old is None:
        pytest.skip("no Python 3.8 to 3.10 runs on this machine")
    r = run([old, audit.verifier, audit.site], audit.work)
    assert_cannot_run(r, "needs Python 3.11 or newer")
    # With -P such a Python refuses by itself, also with 2: it does not know the option.
    assert run([old, "-P", audit.verifier, audit.site], audit.work).returncode == 2


# --- what the verifying guide (docs/verifying.md) and the site's page tell the auditor agree with the verifier


def _verify_commands(texts: list[str]) -> list[list[str]]:
    """The arguments after `verify.py` of every command that runs it (comments dropped)."""
    out = []
    for text in texts:
        for line in text.splitlines():
            words = shlex.split(line.split(" #", 1)[0].replace("\\", "/"))
            at = next((i for i, w in enumerate(words) if w.endswith("verify.py") and i and words[i - 1] == "-P"), None)
            if at is not None:
                out.append(words[at + 1 :])
    return out


def _options(argv: list[str]) -> set[str]:
    help_text = subprocess.run(
        [sys.executable, BUNDLE, *argv, "--help"], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return set(re.findall(r"--[a-z][a-z-]*", help_text))


def test_the_documented_commands_use_the_verifier_s_own_options(demo_site: BuiltSite) -> None:
    page = BeautifulSoup((demo_site.out / layout.VERIFY_PAGE).read_text(encoding="utf-8"), "html.parser")
    on_page = [pre.get_text() for pre in page.select("pre.cmd")]
    guide = (REPO / "docs" / "verifying.md").read_text(encoding="utf-8")
    section = guide[guide.index("## Verify a site yourself") : guide.index("## Monitor a site")]
    in_guide = re.findall(r"```sh\n(.*?)```", section, re.S)
    options = {"": _options([]), "proof": _options(["proof"]), "mirror": _options(["mirror"])}
    commands = _verify_commands(on_page) + _verify_commands(in_guide)
    assert len(commands) >= 12, commands
    for args in commands:
        known = options.get(args[0], options[""]) if args else options[""]
        assert {a for a in args if a.startswith("--")} <= known, args
    # Every command runs the auditor's own copy, kept outside the site; nothing the site holds is
    # offered as the saved checkpoint or the trust policy.
    runs_own = [c for c in on_page if "-P " in c and "verify.py" in c]
    assert runs_own and all("../verify.py" in c.replace("\\", "/") for c in runs_own), runs_own
    for args in commands:
        for option in ("--since", "--policy"):
            if option in args:
                value = args[args.index(option) + 1]
                assert not value.startswith(("ledger/", "site/ledger/")), (option, value)
    assert "download our verify.py" not in page.get_text()
    # The Windows commands are the Linux ones with the launcher's names.
    windows = [c for c in on_page if "Scripts\\python -P" in c]
    assert windows and all(c.split(" -P ", 1)[1].replace("\\", "/") in " ".join(on_page) for c in windows), windows
