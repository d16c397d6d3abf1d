"""Incremental builds equal full ones.

A program is driven through random sequences of real events (commits, retirements, gates,
methodologies, registrations on public and secret gates, certifications that pass and fail,
certificate revocations, key rotations and key revocations, and builds with nothing new). After
each event the site is rebuilt into the same folder, where a build may reuse what the last
release published and what it keeps under PRIVATE/cache, and compared byte for byte with a full
build from scratch into a fresh folder, made with the cache moved out of its reach. A second test
damages that cache in several ways before a rebuild: a cache is never trusted blindly, so the
rebuild still equals the full one.

The sequences are planned from a seeded `random.Random` on a model of the program kept here,
apart from the generator, so that every event is valid for the state it meets; a command that
refuses one means the model and the program disagree, and fails the test. Every program starts
from the same prelude (a decided secret run, an open public one), and each seed has a few kinds
it makes sure to do, so that six short sequences meet every kind and their interplay.
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import json
import random
import shutil
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib.resources import files as package_files
from pathlib import Path
from typing import Any

import pytest

from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.gate import GateSpec, add_gate
from generator.commands.keys import revoke_key, rotate_key
from generator.commands.methodology import publish as publish_methodology
from generator.commands.retire import retire_items
from generator.commands.revoke import revoke_certificate
from generator.core import layout
from generator.program.datadir import Paths
from generator.site import search
from generator.verifier import sha256_hex
from tests.support.programs import item, new_program, write_items
from tests.support.runs import certify, register, results, run_spec, scored, write_json

# The reference is a build from scratch: `full=True` once builds take it, a fresh folder and no
# cache in any case.
FULL: dict[str, Any] = {"full": True} if "full" in inspect.signature(build).parameters else {}

# Each sequence's seed and the kinds it makes sure to do, in that order, among its random ones:
# six sequences of six events are too few to meet every kind by chance.
FOCUS: dict[int, tuple[str, ...]] = {
    11: ("rotate", "revoke-key"),
    23: ("gate", "commit", "register-public"),
    37: ("methodology", "register-secret", "certify"),
    41: ("retire", "revoke"),
    59: ("commit", "register-secret", "certify", "retire"),
    73: ("rotate", "certify", "revoke-key"),
}
SEEDS = sorted(FOCUS)
STEPS = 6

KINDS = (
    "commit",
    "gate",
    "methodology",
    "retire",
    "register-public",
    "register-secret",
    "certify",
    "revoke",
    "rotate",
    "revoke-key",
    "none",
)

# Subjects with names no look-alike rule confuses, and organizations other than the judge's.
SUBJECTS = {
    "extractor": ("Extractor", "Acme AI"),
    "parser": ("Parser", "Bolt Labs"),
    "reader": ("Reader", "Cobalt Research"),
}
PROMPTS = ("Extract the account number.", "Find the account in this message.", "Which account is named?")
MIN_SECRET_ITEMS = 10  # the methodology's min_items_secret_gate: every version published here keeps it
# How often each kind is drawn: the runs' lifecycle, where most pages change, above the rarer
# program events. A kind a sequence has not done yet weighs FRESH times more.
WEIGHTS = {
    "commit": 2,
    "gate": 1,
    "methodology": 1,
    "retire": 2,
    "register-public": 2,
    "register-secret": 3,
    "certify": 4,
    "revoke": 3,
    "rotate": 1,
    "revoke-key": 2,
}
FRESH = 3


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------------
# The model and the planner


@dataclass
class RunModel:
    id: str
    gate: str
    subject: str
    items: list[str]
    decided: bool = False


@dataclass
class Model:
    """What the program holds, as far as choosing a valid next event needs."""

    now: datetime
    gates: dict[str, bool] = field(default_factory=dict)  # id -> public
    items: dict[str, str] = field(default_factory=dict)  # id -> gate
    revealed: set[str] = field(default_factory=set)
    numbers: dict[str, int] = field(default_factory=dict)  # the last item number used on each gate
    runs: dict[str, RunModel] = field(default_factory=dict)
    certificates: list[str] = field(default_factory=list)
    revoked: set[str] = field(default_factory=set)
    methodologies: list[str] = field(default_factory=lambda: ["2026.1"])
    rotations: list[datetime] = field(default_factory=list)  # when each retired key was retired
    revoked_keys: set[int] = field(default_factory=set)
    commits: int = 0

    @classmethod
    def of_new_program(cls) -> Model:
        """The state `start` leaves: new_program(public_items=3, secret_items=24, retired=1)."""
        m = cls(now=datetime(2026, 3, 1, tzinfo=UTC), gates={"a": True, "b": False}, numbers={"a": 3, "b": 24})
        for n in range(1, 4):
            m.items[f"a-{n:03d}"] = "a"
            m.revealed.add(f"a-{n:03d}")
        for n in range(1, 25):
            m.items[f"b-{n:04d}"] = "b"
        m.revealed.add("b-0001")
        return m

    def sealed(self, gate: str) -> list[str]:
        return sorted(i for i, g in self.items.items() if g == gate and i not in self.revealed)

    def open_items(self) -> set[str]:
        return {i for r in self.runs.values() if not r.decided for i in r.items}

    def retirable(self) -> list[str]:
        held = self.open_items()
        return [i for g, public in sorted(self.gates.items()) if not public for i in self.sealed(g) if i not in held]

    def runs_of(self, subject: str, gate: str) -> list[RunModel]:
        return [r for r in self.runs.values() if r.subject == subject and r.gate == gate]

    def registrable(self, public: bool) -> list[tuple[str, str, list[str]]]:
        """(gate, subject, the items it may use) for every subject free to register on a gate."""
        out = []
        for gate, is_public in sorted(self.gates.items()):
            if is_public != public:
                continue
            for subject in SUBJECTS:
                earlier = self.runs_of(subject, gate)
                if earlier and not earlier[-1].decided:
                    continue  # its previous run is still open
                if public:
                    usable = sorted(i for i, g in self.items.items() if g == gate and i in self.revealed)
                    enough = 1
                else:
                    seen = {i for r in earlier for i in r.items}
                    usable = [i for i in self.sealed(gate) if i not in seen]
                    enough = MIN_SECRET_ITEMS
                if len(usable) >= enough:
                    out.append((gate, subject, usable))
        return out

    def possible(self) -> list[str]:
        kinds = ["commit"]
        if "c" not in self.gates:
            kinds.append("gate")
        if len(self.methodologies) < 3:
            kinds.append("methodology")
        if self.retirable():
            kinds.append("retire")
        if self.registrable(public=True):
            kinds.append("register-public")
        if self.registrable(public=False):
            kinds.append("register-secret")
        if any(not r.decided for r in self.runs.values()):
            kinds.append("certify")
        if set(self.certificates) - self.revoked:
            kinds.append("revoke")
        if len(self.rotations) < 2:
            kinds.append("rotate")
        if set(range(len(self.rotations))) - self.revoked_keys:
            kinds.append("revoke-key")
        return kinds


@dataclass(frozen=True)
class Event:
    kind: str
    at: str | None
    args: dict[str, Any]

    def describe(self) -> str:
        return f"{self.kind} at {self.at} {json.dumps(self.args, sort_keys=True)}" if self.at else self.kind


# What every program holds before its first build, so that a sequence can revoke or retire
# into a certificate from its first step: a decided secret run and an open public one.
PRELUDE = ("register-secret", "certify", "register-public")


def prelude() -> tuple[Model, list[Event]]:
    rng = random.Random("prelude")
    m = Model.of_new_program()
    events = []
    for kind in PRELUDE:
        m.now += timedelta(hours=2)
        events.append(_choose(kind, m, rng))
    return m, events


def plan(seed: int, steps: int, quiet: bool = True, focus: tuple[str, ...] = ()) -> list[Event]:
    """A valid random sequence of `steps` events after the prelude; with `quiet`, one of them
    (never the first) is no event at all, a rebuild with nothing changed. The `focus` kinds are
    done in order, each as soon as it is valid and a draw says so, or when the steps run short."""
    rng = random.Random(seed)
    m, _ = prelude()
    quiet_at = rng.randrange(1, steps) if quiet else -1
    todo = list(focus)
    done: set[str] = set()
    events: list[Event] = []
    for k in range(steps):
        if k == quiet_at:
            events.append(Event("none", None, {}))
            continue
        m.now += timedelta(hours=rng.randint(1, 30), minutes=rng.randint(0, 59), seconds=rng.randint(0, 59))
        options = m.possible()
        left = steps - k - (1 if k < quiet_at else 0)
        if todo and todo[0] in options and (rng.random() < 0.6 or left <= len(todo)):
            kind = todo.pop(0)
        else:
            kind = rng.choices(options, [WEIGHTS[o] * (1 if o in done else FRESH) for o in options])[0]
        done.add(kind)
        events.append(_choose(kind, m, rng))
    return events


def _choose(kind: str, m: Model, rng: random.Random) -> Event:
    """The event of this kind, its arguments drawn from `rng`, applied to the model."""
    at = stamp(m.now)
    if kind == "commit":
        m.commits += 1
        new: list[tuple[str, str]] = []
        gates = sorted(m.gates)
        chosen = [g for g in gates if rng.random() < 0.6] or [rng.choice(gates)]
        for g in chosen:
            for _ in range(rng.randint(1, 3) if m.gates[g] else rng.randint(2, 8)):
                m.numbers[g] = m.numbers.get(g, 0) + 1
                item_id = f"{g}-{m.numbers[g]:03d}" if m.gates[g] else f"{g}-{m.numbers[g]:04d}"
                new.append((item_id, g))
                m.items[item_id] = g
                if m.gates[g]:
                    m.revealed.add(item_id)
        return Event(kind, at, {"file": f"items-{m.commits:02d}.yaml", "items": new, "prompt": rng.choice(PROMPTS)})
    if kind == "gate":
        public = rng.random() < 0.5
        m.gates["c"] = public
        return Event(kind, at, {"id": "c", "public": public})
    if kind == "methodology":
        version = f"2026.{len(m.methodologies) + 1}"
        m.methodologies.append(version)
        return Event(kind, at, {"version": version, "item_threshold": rng.choice(["0.8", "0.85", "0.9"])})
    if kind == "retire":
        pool = m.retirable()
        # Mostly items of decided runs: retiring them publishes what their certificates sealed.
        used = [i for i in pool if any(r.decided and i in r.items for r in m.runs.values())]
        pool = used if used and rng.random() < 0.7 else pool
        ids = sorted(rng.sample(pool, rng.randint(1, min(3, len(pool)))))
        m.revealed.update(ids)
        return Event(kind, at, {"items": ids, "note": rng.choice(["Rotated out of the set.", "Leaked in a forum."])})
    if kind in ("register-public", "register-secret"):
        public = kind == "register-public"
        gate, subject, usable = rng.choice(m.registrable(public))
        count = rng.randint(1, min(5, len(usable))) if public else rng.randint(MIN_SECRET_ITEMS, min(14, len(usable)))
        earlier = m.runs_of(subject, gate)
        run = RunModel(f"run-{len(m.runs) + 1:03d}", gate, subject, sorted(rng.sample(usable, count)))
        m.runs[run.id] = run
        args = {
            "id": run.id,
            "gate": gate,
            "subject": subject,
            "items": run.items,
            "previous_run": earlier[-1].id if earlier else None,
            "methodology": rng.choice(m.methodologies),
        }
        return Event(kind, at, args)
    if kind == "certify":
        run = rng.choice([r for r in m.runs.values() if not r.decided])
        run.decided = True
        m.certificates.append(run.id)  # the serial is the run's id
        pass_rate = rng.choice([0.97, 0.6, 0.2])  # mostly certified, borderline, mostly failed
        outcomes = [
            "excluded" if rng.random() < 0.05 else "pass" if rng.random() < pass_rate else "fail" for _ in run.items
        ]
        expires = stamp(m.now + timedelta(hours=rng.randint(2, 60))) if rng.random() < 0.4 else None
        rationale = (
            [{"text": "Cited where it mattered.", "evidence_refs": [run.items[0]]}] if rng.random() < 0.5 else None
        )
        decision: dict[str, Any] = {
            "run": run.id,
            "outcomes": outcomes,
            "proposed": rng.randint(0, 100),
            "rationale": rationale,
            "finished_at": stamp(m.now - timedelta(minutes=10)),  # after the run: events are an hour apart
            "expires_at": expires,
        }
        return Event(kind, at, decision)
    if kind == "revoke":
        serial = rng.choice(sorted(set(m.certificates) - m.revoked))
        m.revoked.add(serial)
        return Event(kind, at, {"serial": serial, "reason": "A grading bug was found."})
    if kind == "rotate":
        m.rotations.append(m.now)
        return Event(kind, at, {})
    if kind == "revoke-key":
        n = rng.choice(sorted(set(range(len(m.rotations))) - m.revoked_keys))
        m.revoked_keys.add(n)
        # Compromised after it stopped signing: what it signed while valid still verifies.
        span = int((m.now - m.rotations[n]).total_seconds())
        compromised = stamp(m.rotations[n] + timedelta(seconds=rng.randint(1, span)))
        return Event(kind, at, {"rotation": n, "reason": "The key file was copied.", "compromised_at": compromised})
    raise AssertionError(f"no such event kind {kind!r}")


# --------------------------------------------------------------------------------------------
# Running events and builds


@dataclass
class Program:
    paths: Paths
    root: Path
    retired_keys: list[str] = field(default_factory=list)  # vkeys, in rotation order

    @property
    def out(self) -> Path:
        """The incremental site: always the same folder, so each build sees the last release."""
        return self.root / "public"

    @property
    def cache(self) -> Path:
        return self.paths.private / "cache"


def start(root: Path) -> Program:
    """The program of Model.of_new_program, with the prelude's events run (and not yet built)."""
    p = Program(new_program(root / "data", public_items=3, secret_items=24, retired=1), root)
    for event in prelude()[1]:
        run_event(p, event)
    return p


def run_event(p: Program, e: Event) -> None:
    paths, a, at, inbox = p.paths, e.args, e.at, p.root / "in"
    if e.kind == "none":
        return
    if e.kind == "commit":
        write_items(paths, [item(i, g, a["prompt"]) for i, g in a["items"]], a["file"])
        result = commit_new_items(paths, at)
        assert result.committed == len(a["items"]), e.describe()
    elif e.kind == "gate":
        add_gate(paths, GateSpec(a["id"], f"Gate {a['id'].upper()}", a["public"]), at)
    elif e.kind == "methodology":
        params = json.loads((package_files("generator") / "defaults" / "methodology.json").read_text())
        params["version"], params["item_threshold"] = a["version"], a["item_threshold"]
        prose = inbox / f"{a['version']}.md"
        write_json(inbox / f"{a['version']}.json", params)
        prose.write_text(f"# Version {a['version']}\n\nAn item passes at {{{{ item_threshold }}}}.\n")
        publish_methodology(paths, inbox / f"{a['version']}.json", prose, at)
    elif e.kind == "retire":
        retire_items(paths, a["items"], a["note"], at)
    elif e.kind in ("register-public", "register-secret"):
        name, organization = SUBJECTS[a["subject"]]
        data = (paths.methodology_dir / f"{a['methodology']}.json").read_bytes()
        spec = run_spec(
            paths,
            a["id"],
            a["gate"],
            a["items"],
            previous_run=a["previous_run"],
            subject={"id": a["subject"], "name": name, "version": "1.0", "organization": organization},
            methodology={"version": a["methodology"], "sha256": sha256_hex(data)},
        )
        assert at is not None
        register(paths, spec, at)
    elif e.kind == "certify":
        run = json.loads(paths.run_spec_file(a["run"]).read_bytes())
        rows = [
            {"item": i, "status": "excluded", "note": "Not in a supported language.", "rule": 0}
            if o == "excluded"
            else scored(i, passing=o == "pass")
            for i, o in zip(run["items"], a["outcomes"], strict=True)
        ]
        doc = results(a["run"], rows, proposed=a["proposed"], rationale=a["rationale"], finished_at=a["finished_at"])
        assert at is not None
        certify(paths, doc, at=at, expires_at=a["expires_at"])
    elif e.kind == "revoke":
        revoke_certificate(paths, a["serial"], a["reason"], at)
    elif e.kind == "rotate":
        old, _ = rotate_key(paths, at)
        p.retired_keys.append(old.vkey)
    elif e.kind == "revoke-key":
        revoke_key(paths, p.retired_keys[a["rotation"]], a["reason"], a["compromised_at"], at)
    else:
        raise AssertionError(f"no such event kind {e.kind!r}")


def incremental_build(p: Program) -> None:
    build(p.paths, p.out, offline=True)


def full_build(p: Program, out: Path) -> None:
    """A build from scratch into `out`, a folder of its own, with the cache out of reach: moved
    aside for the build, whatever the build left there discarded, then put back, so that the
    incremental chain goes on with its own cache and the reference never uses one."""
    assert not out.exists()
    aside = p.root / "cache-aside"
    moved = p.cache.exists() or p.cache.is_symlink()
    if moved:
        p.cache.rename(aside)
    try:
        build(p.paths, out, offline=True, **FULL)
    finally:
        if p.cache.is_dir() and not p.cache.is_symlink():
            shutil.rmtree(p.cache)
        elif p.cache.exists() or p.cache.is_symlink():
            p.cache.unlink()
        if moved:
            aside.rename(p.cache)


def site_tree(root: Path) -> dict[str, tuple[str, int, bytes | None]]:
    """Every entry under `root` by relative path: its kind, mode and bytes (a link's target)."""
    out: dict[str, tuple[str, int, bytes | None]] = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        rel = p.relative_to(root).as_posix()
        if stat.S_ISLNK(st.st_mode):
            out[rel] = ("link", 0, str(p.readlink()).encode())
        elif stat.S_ISDIR(st.st_mode):
            out[rel] = ("dir", stat.S_IMODE(st.st_mode), None)
        else:
            out[rel] = ("file", stat.S_IMODE(st.st_mode), p.read_bytes())
    return out


def show_difference(path: str, a: bytes, b: bytes) -> str:
    """A short account of how two versions of a file differ: a diff of their first differing
    lines, each cut to a readable width, or the bytes around the first difference."""
    ta: str | None = None
    tb: str | None = None
    with contextlib.suppress(UnicodeDecodeError):
        ta, tb = a.decode("utf-8"), b.decode("utf-8")
    if ta is not None and tb is not None and max(ta.count("\n"), tb.count("\n")) > 1:
        lines = difflib.unified_diff(
            ta.splitlines(), tb.splitlines(), f"incremental/{path}", f"full/{path}", lineterm="", n=1
        )
        return "\n".join(line if len(line) <= 200 else line[:200] + " …" for line in list(lines)[:40])
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    lo = max(0, at - 80)
    return (
        f"{path}: {len(a)} bytes incremental, {len(b)} bytes full; first difference at byte {at}\n"
        f"  incremental: {a[lo : at + 80]!r}\n  full:        {b[lo : at + 80]!r}"
    )


DERIVED = ("SHA256SUMS", "SHA256SUMS.sig")


def assert_same_site(incremental: Path, full: Path, when: str) -> None:
    a, b = site_tree(incremental), site_tree(full)
    only_a = sorted(set(a) - set(b))
    only_b = sorted(set(b) - set(a))
    differ = sorted(k for k in set(a) & set(b) if a[k] != b[k])
    if not (only_a or only_b or differ):
        return
    lines = [f"the incremental build differs from a full one {when}:"]
    lines += [f"  only in the incremental site: {k}" for k in only_a[:30]]
    lines += [f"  missing from the incremental site: {k}" for k in only_b[:30]]
    for k in differ[:30]:
        (ka, ma, _), (kb, mb, _) = a[k], b[k]
        what = "kind" if ka != kb else "mode" if ma != mb else "bytes"
        lines.append(f"  {what} differ: {k} ({ka} {ma:o} incremental, {kb} {mb:o} full)")
    # The first file that differs in its own right: the checksums, their signature and the
    # archive of the site differ whenever anything else does.
    files = [k for k in differ if a[k][0] == b[k][0] == "file" and a[k][2] != b[k][2]]
    first = next((k for k in files if k not in DERIVED and not k.startswith("download/")), files[0] if files else None)
    if first is not None:
        ba, bb = a[first][2], b[first][2]
        assert ba is not None and bb is not None
        lines.append(show_difference(first, ba, bb))
    pytest.fail("\n".join(lines), pytrace=False)


def check_step(p: Program, k: int, when: str) -> None:
    """Rebuild incrementally, build the reference, compare, and drop the reference."""
    incremental_build(p)
    reference = p.root / f"full-{k:02d}"
    full_build(p, reference)
    assert_same_site(p.out, reference, when)
    shutil.rmtree(reference)


# --------------------------------------------------------------------------------------------
# The tests


def test_the_sequences_cover_every_event_kind() -> None:
    """The planner is what gives the equality test its meaning: across the seeds it must reach
    every kind of event, give each sequence a rebuild with nothing new, and move time forward."""
    kinds: set[str] = set()
    for seed in SEEDS:
        events = plan(seed, STEPS, focus=FOCUS[seed])
        kinds.update(e.kind for e in events)
        assert sum(e.kind == "none" for e in events) == 1
        times = [e.at for e in events if e.at is not None]
        assert times == sorted(set(times)), f"seed {seed}: times must strictly increase"
    assert kinds == set(KINDS), f"never planned: {sorted(set(KINDS) - kinds)}"
    certified = [e for seed in SEEDS for e in plan(seed, STEPS, focus=FOCUS[seed]) if e.kind == "certify"]
    outcomes = {o for e in certified for o in e.args["outcomes"]}
    assert outcomes == {"pass", "fail", "excluded"}, outcomes


def check_sequence(root: Path, seed: int, label: str = "") -> None:
    """Build after every event of seed `seed`'s sequence, each time both ways, and compare."""
    p = start(root)
    check_step(p, 0, "on the first build")
    history: list[str] = []
    for k, event in enumerate(plan(seed, STEPS, focus=FOCUS[seed]), start=1):
        run_event(p, event)
        history.append(event.describe())
        check_step(p, k, f"after step {k} of seed {seed}{label}:\n    " + "\n    ".join(history) + "\n")


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_incremental_build_equals_full_build_at_every_step(seed: int, tmp_path: Path) -> None:
    check_sequence(tmp_path, seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_incremental_equals_full_with_many_pages(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same, with pages of three rows and search shards of two records: every list spans
    many pages, so that the pages a build keys by their inputs (the ledger's, whose full pages
    it does not read again) are many, and an event lands on the first, a middle and the last of
    them; and the search index is in many shards, of which a build indexes only the changed."""
    monkeypatch.setattr(layout, "PAGE_SIZE", 3)
    monkeypatch.setattr(search, "SHARD_PAGES", 2)
    check_sequence(tmp_path, seed, ", pages of 3, search shards of 2")


# The ways a cache goes wrong: one file cut short, one bit flipped, one file or the whole cache
# from an earlier release, one file gone, everything gone, a stray file. And a page of the last
# release edited in place: what a build reuses from it is no more trusted than its cache.
DAMAGES = (
    "truncate",
    "flip-byte",
    "earlier-file",
    "earlier-cache",
    "delete-file",
    "delete-all",
    "stray",
    "release-page",
)


def cache_files(cache: Path) -> list[Path]:
    return sorted(q for q in cache.rglob("*") if q.is_file() and not q.is_symlink())


def damage(p: Program, how: str, n: int, earlier: dict[str, bytes], rng: random.Random) -> str:
    """Damage the cache `how`, a one-file damage to its n-th file (in turn, so that every file
    gets its share); say what was done, for the failure message."""
    if how == "release-page":
        pages = [q for q in sorted(p.out.rglob("*.html")) if b"</main>" in q.read_bytes()]
        page = pages[rng.randrange(len(pages))]
        page.write_bytes(page.read_bytes().replace(b"</main>", b"<p>Edited in place.</p></main>", 1))
        return f"edited {page.relative_to(p.out).as_posix()} of the last release"
    found = cache_files(p.cache)
    if not found and how not in ("delete-all", "stray"):
        pytest.fail(f"the cache {p.cache} holds no file to damage")
    victim = found[n % len(found)] if found else p.cache
    name = victim.relative_to(p.cache).as_posix() if found else ""
    if how == "truncate":
        data = victim.read_bytes()
        victim.write_bytes(data[: len(data) // 2])
        return f"cut {name} from {len(data)} to {len(data) // 2} bytes"
    if how == "flip-byte":
        flipped = bytearray(victim.read_bytes())
        if not flipped:
            victim.write_bytes(b"\x00")
            return f"wrote a byte into the empty {name}"
        at = rng.randrange(len(flipped))
        flipped[at] ^= 0x01  # one bit: a digit stays a digit, the file may well still parse
        victim.write_bytes(bytes(flipped))
        return f"flipped the low bit of byte {at} of {name}"
    if how == "earlier-file":
        now = {q.relative_to(p.cache).as_posix(): q.read_bytes() for q in found}
        stale = sorted(k for k in now if k in earlier and earlier[k] != now[k])
        if not stale:
            return "no file changed since the earlier release: " + restore(p, earlier)
        pick = stale[n % len(stale)]
        (p.cache / pick).write_bytes(earlier[pick])
        return f"put back the earlier release's {pick}"
    if how == "earlier-cache":
        return restore(p, earlier)
    if how == "delete-file":
        victim.unlink()
        return f"deleted {name}"
    if how == "delete-all":
        shutil.rmtree(p.cache, ignore_errors=True)
        return "deleted the whole cache"
    if how == "stray":
        p.cache.mkdir(parents=True, exist_ok=True)
        stray = p.cache / "zz-stray.json"
        stray.write_bytes(b'{"size": 1, "root": "' + b"0" * 64 + b'"}\n')
        return "added a stray file"
    raise AssertionError(how)


def restore(p: Program, earlier: dict[str, bytes]) -> str:
    """The whole cache as it stood after an earlier release."""
    shutil.rmtree(p.cache, ignore_errors=True)
    for rel, data in earlier.items():
        (p.cache / rel).parent.mkdir(parents=True, exist_ok=True)
        (p.cache / rel).write_bytes(data)
    return f"put back the whole cache of the earlier release ({len(earlier)} files)"


@pytest.mark.slow
def test_a_damaged_cache_never_changes_the_site(tmp_path: Path) -> None:
    """One program, its cache damaged in every way in turn. After each damage a rebuild with
    nothing new, and after a second damage of the same kind one more event and a rebuild: each
    must equal a full build. The earlier release's cache grows staler as the events go on."""
    p = start(tmp_path)
    incremental_build(p)
    if not p.cache.is_dir():
        pytest.skip(f"the build keeps no cache at {p.cache} yet: nothing to damage")
    events = plan(97, 2 + len(DAMAGES), quiet=False, focus=("certify", "revoke", "retire", "register-secret"))
    run_event(p, events[0])
    incremental_build(p)
    # The cache of an earlier release, older than the ledger by every event that follows.
    earlier = {q.relative_to(p.cache).as_posix(): q.read_bytes() for q in cache_files(p.cache)}
    run_event(p, events[1])
    incremental_build(p)
    for k, (how, event) in enumerate(zip(DAMAGES, events[2:], strict=True)):
        rng = random.Random(f"damage-{how}")
        done = damage(p, how, 2 * k, earlier, rng)
        check_step(p, 2 * k, f"after {how} ({done}) and a rebuild with nothing new")
        done = damage(p, how, 2 * k + 1, earlier, rng)
        run_event(p, event)
        check_step(p, 2 * k + 1, f"after {how} ({done}) and then {event.describe()}")


@pytest.mark.parametrize("site_format", [2, 3])
def test_a_new_page_leaves_the_middle_of_its_list_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, site_format: int
) -> None:
    """The commit that opens a new page of the commitment list re-renders the first page, the
    last ones (whose window of page links reaches the new page) and the new page, never the
    pages in between: a middle page names neither the number of pages nor the last one."""
    monkeypatch.setattr(layout, "PAGE_SIZE", 3)
    paths = new_program(tmp_path / "data", public_items=2, secret_items=22, retired=0)
    if site_format == 3:
        with open(paths.program_file, "a") as f:
            f.write("format: 3\n")
    out = tmp_path / "public"
    build(paths, out)
    pool = out / "pool"
    before = {q.name: q.read_bytes() for q in pool.glob("*.html")}
    assert len(before) == 8  # 24 commitments, three a page
    middle = before["page-4.html"].decode()
    assert "Page 4." in middle and "Last</a>" not in middle and "page-8.html" not in middle
    assert "Page 1 of 8." in before["index.html"].decode() and "Page 8 of 8." in before["page-8.html"].decode()
    write_items(paths, [item("b-0100", "b")], "more.yaml")
    commit_new_items(paths, "2026-03-01T00:00:00Z")
    build(paths, out)
    after = {q.name: q.read_bytes() for q in pool.glob("*.html")}
    changed = sorted(name for name in before if after[name] != before[name])
    assert changed == ["index.html", "page-6.html", "page-7.html", "page-8.html"]
    assert set(after) - set(before) == {"page-9.html"}
