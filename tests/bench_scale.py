"""Scale benchmark: commit, build and verify a large program, and print the figures.

    python tests/bench_scale.py [--items 1000000] [--retired 1000] [--public 1000]
                                [--runs 20000] [--run-items 25] [--dir DIR] [--phases ...]

Not a test: speed and memory targets live here, where a number is read by a person, not in
timed unit tests that flake on shared machines. Each phase runs in its own process so its peak
memory (max RSS) is its own.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PHASES = {
    "init": """
from generator.datadir import Paths
from generator.commands.gate import GateSpec
from generator.commands.init import init_program
p = Paths(Path(d), Path(d) / "private")
gates = [GateSpec("a", "Gate A", True), GateSpec("b", "Gate B", False)]
init_program(p, "Bench", "bench.example.org/scale", gates, "", "2026-01-01T00:00:00Z")
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
from generator.datadir import Paths
commit_new_items(Paths(Path(d), Path(d) / "private"), "2026-01-02T00:00:00Z")
""",
    "retire": """
from generator.commands.retire import retire_items
from generator.datadir import Paths
p = Paths(Path(d), Path(d) / "private")
if RETIRED:
    retire_items(p, [f"b-{i * (SECRET // RETIRED):07d}" for i in range(RETIRED)], "Rotation.", "2026-02-01T00:00:00Z")
""",
    # RUNS runs of RUN_ITEMS items each, half on the public gate and half on the secret one,
    # each by its own subject, registered in one command. Secret runs use items never retired.
    "register": """
import hashlib
from generator.datadir import Paths
from generator.commands.register import register_runs
p = Paths(Path(d), Path(d) / "private")
params = (Path(d) / "methodology" / "2026.1.json").read_bytes()
pin = {"version": "2026.1", "sha256": hashlib.sha256(params).hexdigest()}
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
    spec = {"type": "run-spec", "v": 1, "id": f"run-{r:06d}", "previous_run": None,
            "subject": {"id": f"subject-{r}", "name": f"Subject {r}", "version": "1", "organization": f"Org {r}"},
            "gate": "a" if public else "b", "question": "Bench?", "items": items, "budget": {}, "repetitions": 1,
            "metrics": ["pass_rate"], "exclusion_rules": ["none"], "methodology": pin,
            "judge": {"provider": "Judge Co", "model": "j", "version": "1", "rubric_sha256": "ab" * 32, "seed": None}}
    f = out / f"run-{r:06d}.json"
    f.write_text(json.dumps(spec))
    files.append(f)
register_runs(p, files, "2026-03-01T00:00:00Z")
print(json.dumps({"runs": RUNS}))
""",
    "certify": """
from generator.commands.certify import certify_runs
from generator.datadir import Paths
p = Paths(Path(d), Path(d) / "private")
out = Path(d).parent / "results-in"
out.mkdir(exist_ok=True)
files = []
for f in sorted((Path(d).parent / "runs-in").glob("run-*.json")):
    spec = json.loads(f.read_text())
    rows = []
    for k, item_id in enumerate(spec["items"]):
        i = int(item_id[2:])
        wrong = k % 7 == 3
        rows.append({"item": item_id, "status": "scored", "fields": [
            {"name": "account", "output": f"110-{i:06d}"},
            {"name": "amount", "output": i * 7 + (1 if wrong else 0)},
            {"name": "address", "output": f"{i} Main St.", "similarity": "0.93"},
            {"name": "tags", "output": ["transfer"]}]})
    doc = {"type": "run-results", "v": 1, "run": spec["id"], "finished_at": "2026-03-01T12:00:00Z", "results": rows,
           "grader": {"proposed_score": 80, "rationale": [{"text": "ok", "evidence_refs": [spec["items"][0]]}]}}
    g = out / f.name
    g.write_text(json.dumps(doc))
    files.append(g)
certify_runs(p, files, "2026-03-02T00:00:00Z")
print(json.dumps({"certificates": len(files)}))
""",
    "build": """
from generator.commands.build import build
from generator.datadir import Paths
r = build(Paths(Path(d), Path(d) / "private"), Path(d) / "public")
print(json.dumps({"files": r.files, "checks": r.checks}))
""",
    "rebuild": """
from generator.commands.build import build
from generator.datadir import Paths
build(Paths(Path(d), Path(d) / "private"), Path(d) / "public")
""",
    "onemore": """
import hashlib, os
from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.datadir import Paths
p = Paths(Path(d), Path(d) / "private")
site = Path(d) / "public"
def sums():
    rows = (line.split("  ", 1) for line in (site / "SHA256SUMS").read_text().splitlines())
    return {path: digest for digest, path in rows}
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
}


def run_phase(name: str, d: Path, env: dict[str, str]) -> tuple[float, float, float, str]:
    code = (
        "import json\nfrom pathlib import Path\n"
        + "\n".join(f"{k} = {v}" for k, v in env.items())
        + f"\nd = {str(d)!r}\n"
        + PHASES[name]
    )
    script = f"""
import resource, sys, time
t = time.perf_counter()
exec(compile({code!r}, {name!r}, "exec"))
u = resource.getrusage(resource.RUSAGE_SELF)
sys.stderr.write("BENCH %f %f %d\\n" % (time.perf_counter() - t, u.ru_utime + u.ru_stime, u.ru_maxrss))
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"phase {name} failed:\n{p.stderr[-3000:]}")
    line = [ln for ln in p.stderr.splitlines() if ln.startswith("BENCH ")][-1].split()
    return float(line[1]), float(line[2]), int(line[3]) / 1024, p.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1_000_000, help="secret items (default 1,000,000)")
    ap.add_argument("--public", type=int, default=1000, help="public-gate items (default 1,000)")
    ap.add_argument("--retired", type=int, default=1000, help="secret items retired, in one command (default 1,000)")
    ap.add_argument(
        "--runs", type=int, default=20_000, help="runs registered and certified, half on each gate (default 20,000)"
    )
    ap.add_argument("--run-items", type=int, default=25, help="items per run (default 25)")
    ap.add_argument("--dir", type=Path, help="work directory (default: a temporary one, removed afterwards)")
    ap.add_argument(
        "--phases",
        default="init,sources,commit,retire,register,certify,build,rebuild,verify,onemore",
        help="comma-separated phases to run (e.g. build,verify on an existing --dir)",
    )
    args = ap.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="transparency-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    d = work / "data"
    env = {
        "SECRET": str(args.items),
        "PUBLIC": str(args.public),
        "RETIRED": str(args.retired),
        "RUNS": str(args.runs),
        "RUN_ITEMS": str(args.run_items),
    }
    print(
        f"program: {args.items:,} secret items, {args.public:,} public items, {args.retired:,} retired, "
        f"{args.runs:,} runs of {args.run_items} items; in {work}"
    )
    # CPU seconds (user + system) beside the wall clock: on a shared machine, or one whose disk
    # is slow today, the wall clock of an fsync-heavy phase says more about the disk than the code.
    print(f"{'phase':<10}{'seconds':>10}{'cpu s':>9}{'peak MiB':>11}  notes")
    try:
        for name in args.phases.split(","):
            secs, cpu, mib, out = run_phase(name, d, env)
            note = out
            if name == "retire" and args.retired:
                note = f"{args.retired:,} items in one command"
            if name in ("build", "rebuild", "onemore"):
                site = d / "public"
                size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
                note = f"{out + '; ' if out else ''}site {size / 2**20:.0f} MiB"
            print(f"{name:<10}{secs:>10.1f}{cpu:>9.1f}{mib:>11.0f}  {note}")
    finally:
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; max RSS from getrusage, {time.strftime('%Y-%m-%d')}"
    )


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_NOFILE, resource.getrlimit(resource.RLIMIT_NOFILE))
    main()
