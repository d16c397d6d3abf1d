"""A site is data an attacker chose: nothing in it may steer the verifier that checks it.

Every test here runs the verifier the way people do, in a subprocess: `python3 verify.py .`
from inside the site (with and without -P), `python public/verify.py public` from outside it,
and `transparency verify`. A hostile module that got imported would print HIJACKED and exit 0.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from generator.commands.serve import SiteRequestHandler
from tests.support.demo import REPO, BuiltSite

TRANSPARENCY = Path(sys.executable).with_name("transparency")
HOSTILE = 'import sys\nprint("HIJACKED\\nPASS: all 721 checks passed.")\nsys.exit(0)\n'

# Every module verify.py imports, and the ones the interpreter would look up for it.
SHADOWS = [
    "argparse.py",
    "json.py",
    "hashlib.py",
    "base64.py",
    "ctypes.py",
    "fractions.py",
    "re.py",
    "unicodedata.py",
    "dataclasses.py",
    "pathlib.py",
    "typing.py",
    "nacl/__init__.py",
    "__future__.py",
    "sitecustomize.py",
    "encodings/__init__.py",
]


def _genuine_verifier(tmp: Path) -> Path:
    """A verify.py obtained from the project (not the site's copy), in a folder of its own."""
    own = tmp / "own-verifier"
    own.mkdir(exist_ok=True)
    shutil.copy(REPO / "generator" / "verify.py", own / "verify.py")
    return own / "verify.py"


def _plant(site: Path, rel: str, text: str = HOSTILE) -> None:
    p = site / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def _commands(site: Path, tmp: Path) -> dict[str, tuple[list[str], Path]]:
    """Each documented way to run the verifier: (argv, working directory)."""
    return {
        "python3 verify.py . (in the site)": ([sys.executable, "verify.py", "."], site),
        "python3 -P verify.py . (in the site)": ([sys.executable, "-P", "verify.py", "."], site),
        "python public/verify.py public": ([sys.executable, str(site / "verify.py"), str(site)], site.parent),
        "python -P public/verify.py public": ([sys.executable, "-P", str(site / "verify.py"), str(site)], site.parent),
        "own verify.py on the site": ([sys.executable, "-P", str(_genuine_verifier(tmp)), str(site)], tmp),
        "transparency verify": ([str(TRANSPARENCY), "verify", str(site)], site),
    }


def _run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    full.update(env)
    r = subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=120, env=full, encoding="utf-8", errors="strict"
    )
    assert "internal error of the verifier" not in r.stdout, r.stdout[-3000:]  # a bug, not a verdict
    return r


# Every command with the modules the first report named; the plain, unprotected command with
# all of them (the other commands only add protection).
EVERY_COMMAND = ("argparse.py", "json.py", "nacl/__init__.py", "__future__.py")


@pytest.mark.parametrize("module", SHADOWS)
def test_a_shadowing_module_never_runs(demo_copy: BuiltSite, tmp_path: Path, module: str) -> None:
    site = demo_copy.out
    _plant(site, module)
    for how, (argv, cwd) in _commands(site, tmp_path).items():
        if module not in EVERY_COMMAND and how != "python3 verify.py . (in the site)":
            continue
        r = _run(argv, cwd)
        assert "HIJACKED" not in r.stdout + r.stderr, f"{how}: the site's {module} ran"
        assert r.returncode == 1, f"{how}: exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
        assert f"FAIL {module}: file is not listed in SHA256SUMS" in r.stdout, how
        assert f"FAIL {module}: the site holds Python code" in r.stdout, how


def test_a_module_loaded_from_the_site_stops_the_verifier(demo_copy: BuiltSite, tmp_path: Path) -> None:
    """PYTHONPATH naming the site gets a module imported from it before main() runs: the
    verifier sees where the module came from and refuses, naming it."""
    site = demo_copy.out
    _plant(site, "nacl/__init__.py", "raise ImportError('not the real PyNaCl')\n")
    _plant(site, "hashlib.py", "from _sha256 import sha256\nimport _hashlib\n")  # a quiet impostor
    r = _run([sys.executable, "-P", str(_genuine_verifier(tmp_path)), str(site)], tmp_path, PYTHONPATH=str(site))
    assert r.returncode == 2, r.stdout + r.stderr  # cannot run: not a verdict on the site
    assert r.stdout == "" and r.stderr.count("\n") == 1, r.stderr  # one message, saying what to do
    assert "verify.py: cannot run:" in r.stderr and "hashlib" in r.stderr
    assert "were loaded from inside the site" in r.stderr
    assert "python3 -P /path/to/verify.py SITE" in r.stderr
    assert str(site / "hashlib.py") in r.stderr


def test_a_replaced_verify_py_is_caught_by_the_genuine_one(demo_copy: BuiltSite, tmp_path: Path) -> None:
    site = demo_copy.out
    (site / "verify.py").write_text(HOSTILE)
    fooled = _run([sys.executable, "verify.py", "."], site)
    assert fooled.returncode == 0 and "HIJACKED" in fooled.stdout, (
        "the site's own copy says what it likes: that is why it is not trusted"
    )
    for how, (argv, cwd) in _commands(site, tmp_path).items():
        if "own verify.py" not in how and "transparency" not in how:
            continue
        r = _run(argv, cwd)
        assert r.returncode == 1, how
        assert "FAIL verify.py: the site's verifier differs from this verifier" in r.stdout, how
        assert "FAIL verify.py: SHA-256 differs from SHA256SUMS" in r.stdout, how


def test_a_re_signed_replaced_verifier_still_fails(demo_copy: BuiltSite, tmp_path: Path) -> None:
    """A key holder can re-sign SHA256SUMS over a new verify.py; the copy still differs from
    the verifier that checks it."""
    from generator.core.signing_key import load_key

    site = demo_copy.out
    (site / "verify.py").write_text(HOSTILE)
    _resign_sums(site, load_key(demo_copy.paths.key_file))
    r = _run([sys.executable, "-P", str(_genuine_verifier(tmp_path)), str(site)], tmp_path)
    assert r.returncode == 1
    assert "FAIL verify.py: the site's verifier differs from this verifier" in r.stdout
    assert "SHA256SUMS" not in r.stdout.split("FAIL verify.py")[0].split("\n")[-1]


def _resign_sums(site: Path, signer: object) -> None:
    import hashlib

    files = sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*")
        if p.is_file() and p.name not in ("SHA256SUMS", "SHA256SUMS.sig")
    )
    data = "".join(
        f"{hashlib.sha256((site / f).read_bytes()).hexdigest()}  {f}\n" for f in sorted(files, key=str.encode)
    ).encode()
    (site / "SHA256SUMS").write_bytes(data)
    (site / "SHA256SUMS.sig").write_bytes(signer.sign(data))  # type: ignore[attr-defined]


# -- names that try to spoof the report


SPOOFS = {
    "newline and ANSI": "x\nPASS: all 721 checks passed.\n\x1b[8m",
    "right-to-left override": "evil\u202egnp.json",
    "carriage return": "ok\rPASS: all 721 checks passed.",
}


@pytest.mark.slow
def test_hostile_file_names_cannot_spoof_the_report(demo_copy: BuiltSite, tmp_path: Path) -> None:
    site = demo_copy.out
    for name in SPOOFS.values():
        (site / name).write_text("x")
    os.mkdir(site / os.fsdecode(b"caf\xe9-not-utf8"))
    (site / os.fsdecode(b"caf\xe9-not-utf8") / os.fsdecode(b"\xff\xfe.json")).write_text("{}")
    env = {"PYTHONIOENCODING": "utf-8", "LC_ALL": "C.UTF-8"}
    for how, (argv, cwd) in _commands(site, tmp_path).items():
        r = _run(argv, cwd, **env)
        assert r.returncode == 1, f"{how}: {r.stderr[-2000:]}"
        assert "Traceback" not in r.stderr, f"{how}: {r.stderr[-2000:]}"
        out = r.stdout
        assert "\x1b" not in out and "\r" not in out and "\u202e" not in out, how
        assert not any(line.startswith("PASS") for line in out.splitlines()), how
        assert "FAIL x\\x0aPASS: all 721 checks passed.\\x0a\\x1b[8m: file is not listed in SHA256SUMS" in out, how
        assert "FAIL evil\\u202egnp.json: file is not listed" in out, how
        assert "FAIL caf\\xe9-not-utf8/\\xff\\xfe.json: file is not listed" in out, how
        assert out.rstrip().splitlines()[-1].startswith("FAILED:"), how
        j = _run([*argv, "--json"], cwd, **env)
        assert j.returncode == 1 and "Traceback" not in j.stderr, how
        assert "\x1b" not in j.stdout and "\u202e" not in j.stdout, how
        report = json.loads(j.stdout)
        files = {f["file"] for f in report["failures"]}
        assert set(SPOOFS.values()) <= files, how
        assert os.fsdecode(b"caf\xe9-not-utf8/\xff\xfe.json") in files, how


def test_a_terminal_that_cannot_show_unicode_gets_escapes_not_a_traceback(demo_copy: BuiltSite) -> None:
    site = demo_copy.out
    r = subprocess.run(
        [sys.executable, "-P", "verify.py", "."],
        cwd=site,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
    )
    assert r.returncode == 0, r.stderr.decode()
    assert b"PASS: all" in r.stdout


def test_a_deep_folder_is_reported_against_itself(demo_copy: BuiltSite, tmp_path: Path) -> None:
    site = demo_copy.out
    _nest(site / "deep", 1200)
    try:
        r = _run([sys.executable, "-P", str(_genuine_verifier(tmp_path)), str(site)], tmp_path)
    finally:
        _unnest(site / "deep", 1200)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "RecursionError" not in r.stdout
    assert "FAIL deep/" + "/".join(["d"] * 31) + ": folder nested too deeply" in r.stdout
    assert "transparency.json" not in "".join(line for line in r.stdout.splitlines() if line.startswith("FAIL"))


def _nest(top: Path, depth: int) -> None:
    """`depth` folders inside each other, made through folder descriptors (a path that long
    is past what the system takes in one string)."""
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


def _unnest(top: Path, depth: int) -> None:
    fds = [os.open(top, os.O_RDONLY)]
    for _ in range(depth - 1):
        fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
    while fds:
        fd = fds.pop()
        os.rmdir("d", dir_fd=fd)
        os.close(fd)
    top.rmdir()


def test_the_demo_key_is_named_in_the_report(demo_site: BuiltSite, tmp_path: Path) -> None:
    r = _run([sys.executable, "-P", str(_genuine_verifier(tmp_path)), str(demo_site.out)], tmp_path)
    assert r.returncode == 0
    assert "WARNING: this site is signed with the project's published DEMO key" in r.stdout
    j = json.loads(
        _run([sys.executable, "-P", str(_genuine_verifier(tmp_path)), str(demo_site.out), "--json"], tmp_path).stdout
    )
    assert j["demo_key"] is True and any("DEMO key" in w for w in j["warnings"])


def test_a_real_key_gets_no_demo_warning(built_program: BuiltSite, tmp_path: Path) -> None:
    j = json.loads(
        _run(
            [sys.executable, "-P", str(_genuine_verifier(tmp_path)), str(built_program.out), "--json"], tmp_path
        ).stdout
    )
    assert j["ok"] and j["demo_key"] is False and j["warnings"] == []


# -- serve


def test_serve_refuses_links_that_leave_the_site(built_program: BuiltSite) -> None:
    site = built_program.out
    os.symlink("/etc/passwd", site / "passwd")
    os.symlink(site / "keys.json", site / "inner-link.json")
    server = ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: SiteRequestHandler(*a, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        assert urllib.request.urlopen(base + "keys.json").status == 200
        for path in ("passwd", "inner-link.json", "..%2f..%2fetc%2fpasswd", "../../etc/passwd"):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(base + path)
            assert e.value.code == 404, path
    finally:
        server.shutdown()
        server.server_close()


def test_serve_checks_the_index_it_would_open_and_lists_no_folder(built_program: BuiltSite) -> None:
    site = built_program.out
    (site / "sub").mkdir()
    os.symlink("/etc/passwd", site / "sub" / "index.html")
    (site / "plain").mkdir()
    (site / "plain" / "a.txt").write_text("x")
    server = ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: SiteRequestHandler(*a, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        assert b"<html" in urllib.request.urlopen(base).read().lower()  # the site's own index.html
        for path in ("sub/", "sub/index.html", "plain/"):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(base + path)
            assert e.value.code == 404, path
    finally:
        server.shutdown()
        server.server_close()


def test_python_code_is_found_whatever_its_case(demo_copy: BuiltSite, tmp_path: Path) -> None:
    site = demo_copy.out
    (site / "JSON.PY").write_text("x")
    (site / "hook.Pth").write_text("x")
    r = _run([sys.executable, "-P", str(_genuine_verifier(tmp_path)), str(site)], tmp_path)
    assert (
        "FAIL JSON.PY: the site holds Python code" in r.stdout
        and "FAIL hook.Pth: the site holds Python code" in r.stdout
    )


def test_a_run_of_spaces_cannot_wrap_a_fake_line_onto_the_screen(demo_copy: BuiltSite, tmp_path: Path) -> None:
    site = demo_copy.out
    (site / ("x" + " " * 200 + "PASS: all 721 checks passed.")).write_text("x")
    r = _run([sys.executable, "-P", str(_genuine_verifier(tmp_path)), str(site)], tmp_path)
    assert (
        r.returncode == 1
        and "x\\x20\\x20\\x20" in r.stdout
        and " " * 3 not in r.stdout.split("FAIL x")[1].split("\n")[0]
    )


def test_the_site_s_own_verify_py_warns_that_it_came_with_the_site(demo_copy: BuiltSite, tmp_path: Path) -> None:
    site = demo_copy.out
    own = _run([sys.executable, "-P", "verify.py", "."], site)
    assert own.returncode == 0, own.stdout[-2000:]  # a warning, not a failure
    assert f"WARNING: this verify.py came with the site ({site / 'verify.py'})" in own.stdout
    assert "use one you obtained yourself" in own.stdout
    genuine = _run([sys.executable, "-P", str(_genuine_verifier(tmp_path)), str(site)], tmp_path)
    assert genuine.returncode == 0 and "came with the site" not in genuine.stdout


def test_a_python_environment_made_inside_the_site_is_named_once(demo_copy: BuiltSite, tmp_path: Path) -> None:
    """An auditor's `python3 -m venv verify-env` inside the site fails as hundreds of extra files;
    one line says what the folder probably is and which python to run instead."""
    site = demo_copy.out
    _plant(site, "verify-env/pyvenv.cfg", "home = /usr/bin\n")
    _plant(site, "verify-env/bin/python", "")
    _plant(site, "verify-env/lib/python3/site-packages/nacl/__init__.py", "")
    _plant(site, "tools/notes.txt", "not an environment\n")
    for argv, cwd in (
        ([sys.executable, "-P", str(_genuine_verifier(tmp_path)), str(site)], tmp_path),
        ([str(TRANSPARENCY), "verify", str(site)], tmp_path),
    ):
        r = _run(argv, cwd)
        assert r.returncode == 1, r.stdout[-2000:]
        hints = [line for line in r.stdout.splitlines() if line.startswith("Hint: ")]
        assert hints == [
            "Hint: verify-env looks like a Python environment: if you made it, run the verifier with "
            "verify-env/bin/python (a site must not ship one)"
        ], r.stdout[-2000:]
        assert r.stdout.rstrip().endswith(hints[0])  # said after the failures, where the reader looks
