"""Hugo on the same pages, for bench/bench_scale.py: the yardstick of "a static site generator
building this many pages of this size", with the site's other files copied as static files.

prepare() writes a Hugo source folder (untimed): one Markdown page per HTML page of the built
site, at the same path (front matter `url`), with a body sized so that the rendered pages
average the built site's page size, a base template with a header and footer partial, and
every non-HTML file of the site hard-linked (or copied) into `static/`. command() is what is
timed: `hugo --quiet` into a fresh folder.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

INSTALL = "apt-get install -y hugo  (Debian's package; the figures quoted are of Hugo 0.111)"

_CONFIG = """baseURL = "/"
title = "Bench"
disableKinds = ["taxonomy", "term", "RSS", "sitemap", "robotsTXT", "404", "section"]
enableRobotsTXT = false
"""

_BASEOF = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ .Title }} · {{ site.Title }}</title>
<link rel="stylesheet" href="{{ "style.css" | relURL }}">
</head>
<body>
{{ partial "header.html" . }}
<main id="main">
{{ block "main" . }}{{ end }}
</main>
{{ partial "footer.html" . }}
</body>
</html>
"""

_HEADER = """<header><nav aria-label="Site">
<a href="{{ "index.html" | relURL }}">{{ site.Title }}</a>
{{ range $name, $path := dict "Items" "items/" "Runs" "runs/" "Certificates" "certificates/" "Ledger" "ledger/" }}
<a href="{{ $path | relURL }}">{{ $name }}</a>
{{ end }}
</nav></header>
"""

_FOOTER = """<footer><p>{{ .Params.summary }} Page {{ .Params.n }} of {{ site.Params.pages }}.</p></footer>
"""

_SINGLE = """{{ define "main" }}<h1>{{ .Title }}</h1>
{{ .Content }}
{{ end }}
"""

_WORDS = [
    *("ledger", "item", "commit", "reveal", "certificate", "run", "gate", "secret", "public", "score"),
    *("result", "field", "answer", "account", "amount", "address", "delivery", "transfer", "methodology"),
    *("judge", "rubric", "checkpoint", "signature", "proof", "tree", "leaf", "root", "consistency"),
]


def hugo_binary() -> str | None:
    return shutil.which("hugo")


def hugo_version(binary: str) -> str:
    p = subprocess.run([binary, "version"], capture_output=True, text=True)
    return p.stdout.strip().split(" BuildDate")[0]


def _body(rng: random.Random, size: int) -> str:
    """Markdown of about `size` bytes: headings, paragraphs, a list and a table, as a page of
    the site holds; plain words, so that the rendered size follows the Markdown's."""
    parts: list[str] = []
    length = 0
    k = 0
    while length < size:
        k += 1
        if k % 4 == 1:
            block = f"## Section {k}\n"
        elif k % 4 == 3:
            rows = [f"| {rng.choice(_WORDS)} | {rng.randrange(10**6)} | {rng.choice(_WORDS)} |" for _ in range(4)]
            block = "| name | value | note |\n| --- | ---: | --- |\n" + "\n".join(rows) + "\n"
        elif k % 8 == 0:
            block = "".join(f"- {' '.join(rng.choices(_WORDS, k=6))}\n" for _ in range(4))
        else:
            block = " ".join(rng.choices(_WORDS, k=60)).capitalize() + ".\n"
        parts.append(block)
        length += len(block) + 1
    return "\n".join(parts)


def _write_pages(src: Path, pages: list[str], body_size: int) -> None:
    content = src / "content"
    if content.exists():
        shutil.rmtree(content)
    (content / "p").mkdir(parents=True)
    for n, rel in enumerate(pages):
        rng = random.Random(n)  # deterministic: the same pages every run
        front = f'---\ntitle: "Page {n}"\nn: {n}\nsummary: "A page of the bench."\n'
        body = _body(rng, body_size)
        if rel == "index.html":
            (content / "_index.md").write_text(front + "---\n" + body)
        else:
            (content / "p" / f"{n:07d}.md").write_text(front + f'url: "/{rel}"\n---\n' + body)


def _average_html(folder: Path) -> tuple[int, float]:
    sizes = [p.stat().st_size for p in folder.rglob("*.html")]
    return len(sizes), (sum(sizes) / len(sizes) if sizes else 0.0)


def prepare(site: Path, src: Path, binary: str) -> dict[str, Any]:
    """Write the Hugo source for `site` into `src`; return what it will build."""
    html = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    if "index.html" not in html:
        raise AssertionError("the built site has no index.html")
    target = sum((site / rel).stat().st_size for rel in html) / len(html)
    if src.exists():
        shutil.rmtree(src)
    for rel, text in [
        ("hugo.toml", _CONFIG + f"[params]\npages = {len(html)}\n"),
        ("layouts/_default/baseof.html", _BASEOF),
        ("layouts/_default/single.html", _SINGLE),
        ("layouts/index.html", _SINGLE),
        ("layouts/partials/header.html", _HEADER),
        ("layouts/partials/footer.html", _FOOTER),
    ]:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    # The rendered size is a + b × the Markdown size: two small builds find a and b, untimed.
    probe = src.parent / (src.name + "-probe")
    points = []
    for size in (1000, 8000):
        _write_pages(src, ["index.html", *(f"p{n}.html" for n in range(1, 8))], size)
        shutil.rmtree(probe, ignore_errors=True)
        subprocess.run([binary, "--quiet", "--source", str(src), "--destination", str(probe)], check=True)
        points.append((size, _average_html(probe)[1]))
    shutil.rmtree(probe, ignore_errors=True)
    (s1, o1), (s2, o2) = points
    slope = (o2 - o1) / (s2 - s1)
    body_size = max(0, round(s1 + (target - o1) / slope))
    _write_pages(src, html, body_size)
    static = src / "static"
    linked = copied = 0
    for p in sorted(site.rglob("*")):
        if p.is_dir() or p.suffix == ".html":
            continue
        rel = p.relative_to(site)
        (static / rel).parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(p, static / rel)  # the same bytes, no copy: preparing is not what is timed
            linked += 1
        except OSError:
            shutil.copyfile(p, static / rel)
            copied += 1
    out = {"pages": len(html), "target page bytes": round(target), "static files": linked + copied}
    (src / PREPARED).write_text(json.dumps(out))  # for a run stopped before Hugo says what it built
    return out


# Hugo holds every page in memory at once: on the bench's full program it passed 22 GB on a
# 23 GB machine and left it swapping, which measures the disk, not Hugo. The issue quotes Hugo at
# 8 GB; past that it is stopped, and the figure is read as a bound.
DEFAULT_CAP_MIB = 8 * 1024
PREPARED = "bench-prepared.json"  # beside hugo.toml, which Hugo alone reads


def _held_mib(pid: int) -> float | None:
    """Resident plus swapped-out memory of `pid` (once swapping, the resident part stops
    growing); None where /proc cannot tell."""
    held = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmSwap:")):
                    held[line.split(":")[0]] = int(line.split()[1]) / 1024
    except OSError:
        return None
    return sum(held.values()) if held else None


def run_capped(cmd: list[str], cap_mib: float, poll: float = 0.25) -> dict[str, Any]:
    """Run `cmd`, stopping it once the memory it holds (resident and swapped) passes `cap_mib`.
    Returns the wall seconds, the peak seen, and whether it was stopped (its seconds are then a
    lower bound of what it would have taken). Without /proc the cap cannot be watched: the run
    is not capped, and says so."""
    with tempfile.TemporaryFile() as err:  # a file, not a pipe: a pipe left full would block it
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        peak, watched, stopped = 0.0, True, False
        while True:
            try:
                proc.wait(timeout=poll)
                break
            except subprocess.TimeoutExpired:
                pass
            held = _held_mib(proc.pid)
            if held is None:
                if proc.poll() is not None:  # it ended between the wait and the look: a zombie has no memory lines
                    break
                watched = False
                proc.wait()
                break
            peak = max(peak, held)
            if peak > cap_mib:
                proc.kill()
                proc.wait()
                stopped = True
                break
        seconds = time.perf_counter() - t
        if not stopped and proc.returncode:
            err.seek(0)
            said = err.read().decode("utf-8", "replace")[-3000:]
            raise RuntimeError(f"{cmd[0]} exited with status {proc.returncode}:\n{said}")
    return {"seconds": seconds, "peak_mib": peak, "stopped": stopped, "capped": watched}


def command(binary: str, src: Path, dest: Path) -> list[str]:
    return [binary, "--quiet", "--source", str(src), "--destination", str(dest), "--cacheDir", str(src / ".cache")]


def built(dest: Path) -> dict[str, Any]:
    """What Hugo made: its pages and their average size, and every file."""
    pages, average = _average_html(dest)
    files = sum(1 for p in dest.rglob("*") if p.is_file())
    return {"pages": pages, "page bytes": round(average), "files": files}
