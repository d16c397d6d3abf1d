"""Gathering a site: read and validate every input, derive what the artifacts and pages need.

The first of the build's phases. Nothing is written and nothing is signed here; every problem in
the data is collected and raised together, so one run shows them all.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.core import layout
from generator.core.generator_errors import InputError, TransparencyError, problem
from generator.core.progress import Progress
from generator.core.proofs import MerkleTree
from generator.core.signing_key import Signer, load_key
from generator.core.strict_input import read_text
from generator.program.agreement_reports import agreement_files
from generator.program.datadir import (
    PUBLISHED_PRIVATE_KEYS,
    Paths,
    Program,
    PublicKey,
    load_program,
    load_public_keys,
    public_key_row,
)
from generator.program.documents import read_document, read_or_none
from generator.program.evidence_files import published_evidence
from generator.program.ledgerfile import replay_from
from generator.program.methodology_files import params_file, prose_file, prose_html, render_prose
from generator.state.gather_cache import GatherMemo
from generator.state.hash_index_cache import FileRows
from generator.state.ledger_cache import ReplayStart
from generator.state.recheck_cache import RecheckMemo
from generator.state.tree_cache import grow, load_tree
from generator.verifier import (
    LabelSetEvent,
    Ledger,
    Methodology,
    OutsideBound,
    Problem,
    RevealedAnswers,
    canonical_bytes,
    canonical_text,
    check_methodology,
    check_reveal_document,
    check_run_rules,
    check_run_spec,
    due_records,
    effective_spec,
    examine_certificate,
    parse_methodology,
    parse_vkey,
    recheckable,
    required_draw_problems,
    retirement_problems,
    sha256_hex,
)


@dataclass(frozen=True)
class RevealedItem:
    id: str
    gate: str
    reason: str
    note: str
    commitment: str
    commit_index: int
    committed_at: str
    reveal_index: int
    revealed_at: str
    field_names: tuple[str, ...]
    drawn_round: int | None = None  # the beacon round of a scheduled retirement that drew it

    def load(self, paths: Paths) -> tuple[bytes, dict[str, Any]]:
        """The reveal document's bytes and parsed form, read again when the site is written and
        checked against the commitment (a file changed since the gather is an error)."""
        problems: list[Problem] = []
        loaded = read_document(
            paths, paths.reveal_file(self.id), self.commitment, f"reveal document of {self.id}", problems, again=True
        )
        if loaded is None:
            raise InputError(problems, "a reveal document changed while the site was being built")
        return loaded[0], loaded[1]


@dataclass(frozen=True)
class MethodologyVersion:
    version: str
    sha256: str
    at: str
    index: int
    params: dict[str, Any]
    methodology: Methodology
    params_bytes: bytes
    document: str  # the prose with its numbers filled in (Markdown)
    html: str


@dataclass(frozen=True)
class RunInfo:
    id: str
    spec: dict[str, Any]
    spec_bytes: bytes
    at: str
    index: int
    certificate: str | None
    status: str


@dataclass(frozen=True)
class PublishedRecord:
    """A details document or grader record that has fallen due: its bytes and parsed form."""

    path: str  # the site path
    data: bytes
    doc: dict[str, Any]


@dataclass(frozen=True)
class CertificateInfo:
    """What the build keeps of a checked certificate: enough for lists, the manifest and the
    runs page. The documents themselves are re-read one at a time when the certificate is
    written (`load`): tens of thousands of them do not fit in memory together."""

    serial: str
    run: str
    sha256: str
    at: str
    index: int
    public: bool
    methodology: Methodology
    spec: dict[str, Any]
    subject: dict[str, Any]
    gate: str
    verdict: str
    grade: str
    score: int
    score_rule: str
    details_items: tuple[str, ...]  # items whose details document is published, in result order
    grader_record_due: bool
    asserted: tuple[str, ...]
    expires_at: str | None = None
    evidence_paths: tuple[str, ...] = ()  # site paths of its evidence files that are due
    # Its run's due label sets and their reports (site path, bytes): few and small, made once.
    agreement: tuple[tuple[str, bytes], ...] = ()

    @property
    def detail_paths(self) -> list[str]:
        return [layout.details(self.serial, i) for i in self.details_items]

    @property
    def grader_record_path(self) -> str | None:
        return layout.grader_record(self.serial) if self.grader_record_due else None

    def load(self, paths: Paths) -> CertificateRecord:
        """The certificate's bytes and its published documents, read again and re-checked
        against the hashes the build verified (a file changed since then is an error)."""
        problems: list[Problem] = []
        loaded = read_document(
            paths, paths.certificate_file(self.serial), self.sha256, f"certificate {self.serial}", problems, again=True
        )
        if loaded is None:
            raise InputError(problems, "a certificate changed while the site was being built")
        data, doc = loaded
        by_item = {r["item"]: r for r in doc["results"]}
        details, record = _read_records(
            paths, doc, [by_item[i] for i in self.details_items], self.grader_record_due, problems, again=True
        )
        # The files due when the build checked the certificate, read again and re-checked.
        names = {p.rpartition("/")[2] for p in self.evidence_paths}
        evidence = published_evidence(paths, doc, self.public, (), problems, names)
        if problems:
            raise InputError(problems, "a certificate's documents changed while the site was being built")
        return CertificateRecord(self, doc, data, details, record, tuple(evidence) + self.agreement)


@dataclass(frozen=True)
class CertificateRecord:
    """One certificate in full, for writing it and its page."""

    info: CertificateInfo
    doc: dict[str, Any]
    data: bytes
    details: dict[str, PublishedRecord]  # by item, in result order
    grader_record: PublishedRecord | None
    evidence: tuple[tuple[str, bytes], ...] = ()  # due evidence files and agreement files: site path, bytes

    @property
    def serial(self) -> str:
        return self.info.serial

    @property
    def run(self) -> str:
        return self.info.run

    @property
    def at(self) -> str:
        return self.info.at

    @property
    def index(self) -> int:
        return self.info.index

    @property
    def public(self) -> bool:
        return self.info.public

    @property
    def methodology(self) -> Methodology:
        return self.info.methodology

    @property
    def spec(self) -> dict[str, Any]:
        return self.info.spec

    @property
    def asserted(self) -> tuple[str, ...]:
        return self.info.asserted


@dataclass(frozen=True)
class CacheUpdates:
    """What the caches should remember of this reading, as data: the build stages each beside its
    place before it verifies and puts it in place once the release is published
    (generator.commands.build_steps), so that a refused or failed build changes nothing."""

    replay: ReplayStart | None  # the replayed ledger, when it reached further than its cache
    tree_end: int | None  # the ledger's bytes the tree was grown to, when its cache is behind
    rechecks: RecheckMemo  # the certificates recomputed
    gathered: GatherMemo  # the runs and certificates checked


@dataclass
class SiteContext:
    paths: Paths
    program: Program
    program_html: str
    signer: Signer
    demo: bool
    public_keys: list[PublicKey]
    ledger: Ledger
    root: bytes
    tree: MerkleTree
    latest: list[tuple[int, dict[str, Any]]]
    methodologies: list[MethodologyVersion]
    revealed: list[RevealedItem]
    runs: list[RunInfo]
    certificates: list[CertificateInfo]
    generated_at: str
    warnings: list[str] = field(default_factory=list)
    # What timestamp authorities say of the ledger's times: set by the build's timestamps step.
    bounds: list[OutsideBound] = field(default_factory=list)
    caches: CacheUpdates | None = None  # what the caches should remember of this reading

    @property
    def origin(self) -> str:
        return self.program.origin


def generated_at(ledger: Ledger) -> str:
    """SOURCE_DATE_EPOCH when set, else the newest ledger event: never the clock."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        try:
            return _dt.datetime.fromtimestamp(int(epoch), _dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        except (ValueError, OverflowError):
            raise InputError(
                [problem("SOURCE_DATE_EPOCH", "must be a whole number of seconds since 1970", found=epoch)]
            ) from None
    return ledger.last_at or "1970-01-01T00:00:00Z"


def gather(
    paths: Paths, progress: Progress | None = None, use_snapshot: bool = True, files: FileRows | None = None
) -> SiteContext:
    """Read and validate the whole data directory; raise InputError with every problem.

    The ledger is replayed from its saved state when that still describes it (generator.state.ledger_cache),
    and certificates recomputed before are not recomputed again (generator.state.recheck_cache).
    Given `files`, the build's reading of its inputs (each file's place and SHA-256), a run or
    certificate checked by the last build, with every file it read unchanged and every leaf it
    depends on the same, is taken from what that build remembered (generator.state.gather_cache),
    its files not read again. `use_snapshot=False` replays every line, reads every file and
    recomputes every certificate, reading no cache (and leaving each, through `caches`, for the
    next build)."""
    problems: list[Problem] = []
    warnings: list[str] = []
    program, keys, signer = _program_and_key(paths, problems, warnings)
    ledger, replayed, merkle, tree_end = _read_ledger(paths, progress, use_snapshot, problems)
    if keys:
        _check_keys_file(paths, ledger, keys, problems)
    if progress:
        progress("reading the ledger", ledger.size, ledger.size)

    methodologies = _gather_methodologies(paths, ledger, problems)
    revealed = _gather_reveals(paths, ledger, problems, progress)
    rechecks = RecheckMemo(paths.private, read=use_snapshot)
    known = _Known.of(paths, files)
    gathered = GatherMemo(paths.private, merkle, read=use_snapshot and known.files is not None)
    runs, certificates = _gather_runs(paths, ledger, methodologies, problems, rechecks, _Memos(gathered, known))
    gathered.done()
    if problems:
        raise InputError(problems, "the data directory has problems; nothing was built")
    assert signer is not None and program is not None
    return SiteContext(
        paths=paths,
        program=program,
        program_html=prose_html(program.description),
        signer=signer,
        demo=signer.fingerprint in PUBLISHED_PRIVATE_KEYS,  # the key alone: where it is kept says nothing
        public_keys=keys,
        ledger=ledger,
        root=merkle.root(),
        tree=merkle,
        latest=list(reversed(replayed.latest)),
        methodologies=methodologies,
        revealed=revealed,
        runs=runs,
        certificates=certificates,
        generated_at=generated_at(ledger),
        warnings=warnings,
        # A build from scratch reads no cache but leaves every one for the next build.
        caches=CacheUpdates(replayed if replayed.moved_on() else None, tree_end, rechecks, gathered),
    )


def _program_and_key(
    paths: Paths, problems: list[Problem], warnings: list[str]
) -> tuple[Program | None, list[PublicKey], Signer | None]:
    """The program file, keys.json and the signing key, which must be keys.json's active key."""
    program: Program | None = None
    try:
        program, w = load_program(paths)
        warnings += w
    except InputError as e:
        problems += e.problems
    keys: list[PublicKey] = []
    try:
        keys = load_public_keys(paths, program.origin if program else None)
    except InputError as e:
        problems += e.problems
    signer = None
    try:
        signer = load_key(paths.key_file, program_has_keys=paths.keys_file.exists() or paths.ledger_file.exists())
    except TransparencyError as e:
        problems.append(problem(paths.show(paths.key_file), str(e).removeprefix(f"{paths.key_file}: ")))
    if signer is not None and keys:
        active = next(k for k in keys if k.status == "active")
        if signer.vkey != active.vkey:
            problems.append(
                problem(
                    paths.show(paths.key_file),
                    "the signing key does not match the published key in keys.json",
                    expected=f"{active.vkey} ({parse_vkey(active.vkey).fingerprint})",
                    found=f"{signer.vkey} ({signer.fingerprint})",
                )
            )
    return program, keys, signer


def _read_ledger(
    paths: Paths, progress: Progress | None, use_snapshot: bool, problems: list[Problem]
) -> tuple[Ledger, ReplayStart, MerkleTree, int | None]:
    """The ledger replayed (from its cache when it still describes it), and its Merkle tree
    (every leaf's hash, for the proofs): the remembered tree, grown by the lines after it,
    parsing none of them; or, when it disagrees with the replay's root, every line. The last
    value is the ledger's bytes the tree covers when the tree's cache must be written again."""

    def on_leaf(index: int, leaf: dict[str, Any], raw: bytes) -> None:
        if progress and index % 10000 == 0:
            progress("reading the ledger", index, 0)

    ledger, ledger_problems, replayed = replay_from(paths, on_leaf, use_snapshot, save=False)
    replayed.spans = len(ledger.keys.spans)  # before keys.json's first key joins the ring
    problems += ledger_problems
    merkle = MerkleTree()
    if ledger_problems:
        return ledger, replayed, merkle, None
    merkle, offset = load_tree(paths) if use_snapshot else (MerkleTree(), 0)
    cached = merkle.size
    end = grow(paths, merkle, offset)
    if cached and merkle.root() != replayed.stream.root():
        merkle, cached = MerkleTree(), 0
        end = grow(paths, merkle, 0)
    if merkle.root() != replayed.stream.root():
        problems.append(problem(paths.show(paths.ledger_file), "the ledger changed while it was read"))
        return ledger, replayed, merkle, None
    return ledger, replayed, merkle, end if merkle.size != cached else None


def _check_keys_file(paths: Paths, ledger: Ledger, keys: list[PublicKey], problems: list[Problem]) -> None:
    """data/keys.json must say what the ledger's key events make of the keys, row for row."""
    ledger.keys.start(parse_vkey(keys[0].vkey))
    want = ledger.keys.rows(keys[0].valid_from)
    got = [public_key_row(k) for k in keys]
    if got != want:
        problems.append(
            problem(
                paths.show(paths.keys_file),
                "the keys differ from what the ledger's key events make them (status, validity, reason)",
                expected=canonical_text(want),
                found=canonical_text(got),
            )
        )


def _gather_methodologies(paths: Paths, ledger: Ledger, problems: list[Problem]) -> list[MethodologyVersion]:
    out = []
    for m in ledger.methodologies.values():
        loaded = read_document(
            paths, params_file(paths, m.version), m.sha256, f"parameters of methodology {m.version}", problems
        )
        if loaded is None:
            continue
        data, params = loaded
        file = paths.show(params_file(paths, m.version))
        rules = check_methodology(params)
        if rules:
            problems += [p.at(file) for p in rules]
            continue
        try:
            template = read_text(prose_file(paths, m.version), paths.show(prose_file(paths, m.version)))
            document = render_prose(template, params, paths.show(prose_file(paths, m.version)))
        except InputError as e:
            problems += e.problems
            continue
        out.append(
            MethodologyVersion(
                m.version,
                m.sha256,
                m.at,
                m.index,
                params,
                parse_methodology(params),
                data,
                document,
                prose_html(document),
            )
        )
    return out


def _gather_reveals(
    paths: Paths, ledger: Ledger, problems: list[Problem], progress: Progress | None
) -> list[RevealedItem]:
    out = []
    events = sorted(ledger.reveals.values(), key=lambda r: r.index)
    for n, r in enumerate(events, start=1):
        c = ledger.commit(r.id)
        assert c is not None  # the replay guarantees it
        loaded = read_document(paths, paths.reveal_file(r.id), c.commitment, f"reveal document of {r.id}", problems)
        if progress and (n % 1000 == 0 or n == len(events)):
            progress("checking reveals", n, len(events))
        if loaded is None:
            continue
        doc = loaded[1]
        file = paths.show(paths.reveal_file(r.id))
        shape = check_reveal_document(doc)
        if shape:
            problems += [p.at(file) for p in shape]
            continue
        if doc["id"] != r.id or doc["gate"] != c.gate:
            problems.append(
                problem(
                    file,
                    "id or gate differs from the ledger",
                    expected=f"{r.id} on gate {c.gate}",
                    found=f"{doc['id']} on gate {doc['gate']}",
                )
            )
            continue
        out.append(
            RevealedItem(
                r.id,
                c.gate,
                r.reason,
                r.note,
                c.commitment,
                c.index,
                c.at,
                r.index,
                r.at,
                tuple(doc["item"]["answer"]),
                _drawn_round(ledger, r.id),
            )
        )
    if paths.reveals_dir.is_dir():
        known = set(ledger.reveals)
        for p in sorted(paths.reveals_dir.iterdir()):
            if p.name.startswith("."):
                continue
            if p.suffix != ".json" or p.stem not in known:
                problems.append(
                    problem(
                        paths.show(p),
                        "a file in the reveals directory without a reveal event in the ledger; it would not be "
                        "published (if it is a sealed item's document, it belongs in the private directory)",
                    )
                )
    return out


def _folder_place(paths: Paths, folder: Path) -> str:
    """A data folder's place among the inputs (as build_cache names them), with its slash."""
    return f"data/{folder.relative_to(paths.data).as_posix()}/"


@dataclass(frozen=True)
class _Known:
    """The SHA-256 of each file under the run specs' and certificates' folders, as this build's
    reading of its inputs found it (None: not read, so every file is read here). A run's spec
    and a certificate are `<folder's place><id>.json`, spelt once, not a Path each."""

    paths: Paths
    files: dict[str, str] | None
    runs: str
    certificates: str

    @staticmethod
    def of(paths: Paths, files: FileRows | None) -> _Known:
        runs, certificates = _folder_place(paths, paths.runs_dir), _folder_place(paths, paths.certificates_dir)
        return _Known(
            paths, files.regular_under((runs, certificates)) if files is not None else None, runs, certificates
        )

    def certificate(self, serial: str) -> str:
        return f"{self.certificates}{serial}.json"

    def has(self, place: str, sha256: str) -> bool:
        return self.files is not None and self.files.get(place) == sha256


@dataclass(frozen=True)
class _Memos:
    gathered: GatherMemo
    known: _Known


def _gather_runs(
    paths: Paths,
    ledger: Ledger,
    methodologies: list[MethodologyVersion],
    problems: list[Problem],
    rechecks: RecheckMemo,
    memos: _Memos,
) -> tuple[list[RunInfo], list[CertificateInfo]]:
    """Every run spec against its leaf and the rules of registered runs, then every certificate
    recomputed (or known from the rechecks) with the documents it makes due; no stray file
    under data/certificates/."""
    by_version = {m.version: m.methodology for m in methodologies}
    specs, spec_bytes = _gather_specs(paths, ledger, by_version, problems, rechecks, memos)
    certificates: list[CertificateInfo] = []
    verdicts: dict[str, str] = {}
    due: set[str] = set()
    answers = RevealedAnswers(ledger, lambda item: read_or_none(paths.reveal_file(item)))
    # By run, once: a certificate looks only at its own run's label sets.
    label_sets: dict[str, list[LabelSetEvent]] = {}
    for event in ledger.label_sets.values():
        label_sets.setdefault(event.run, []).append(event)
    for cert in ledger.certificates.values():
        found = _CertificateFound(cert, label_sets.get(cert.run, []), due)
        info = _gather_certificate(paths, ledger, found, specs, by_version, rechecks, answers, memos, problems)
        if info is not None:
            certificates.append(info)
            verdicts[cert.run] = str(info.verdict)
    _refuse_stray_records(paths, ledger, due, memos.known, problems)
    runs = [
        RunInfo(
            r.id,
            specs[r.id],
            spec_bytes[r.id],
            r.at,
            r.index,
            ledger.certificate_of_run.get(r.id),
            verdicts.get(r.id, "open")
            if r.id in ledger.certificate_of_run
            else "withdrawn"
            if r.id in ledger.withdrawals
            else "open",
        )
        for r in ledger.runs.values()
        if r.id in specs
    ]
    return runs, certificates


def _gather_specs(
    paths: Paths,
    ledger: Ledger,
    by_version: dict[str, Methodology],
    problems: list[Problem],
    rechecks: RecheckMemo,
    memos: _Memos,
) -> tuple[dict[str, dict[str, Any]], dict[str, bytes]]:
    """Each run spec checked against its leaf, its shape and the rules a registered run obeys
    (given the specs before it): the parsed specs and their bytes, by run. A spec's shape is a
    function of its bytes alone (and of the code): one `rechecks` remembers passing, under its
    SHA-256, is not checked again (at the bench scale, 20,000 of them each build); its rules, of
    what `_run_key` hashes, so one the last build found passing under the same key is not
    checked again either, and its bytes are then taken from that build's memo."""
    specs: dict[str, dict[str, Any]] = {}
    spec_bytes: dict[str, bytes] = {}
    # Each subject's and gate's runs so far, as one chained SHA-256 of their items (by the run
    # that ends the chain): what a run's one-observation rule and draw compare with.
    chains: dict[str, str] = {}
    for run in ledger.runs.values():
        loaded = _spec_of(paths, run, memos, problems)
        before = ledger.runs_before(run)
        chain = chains.get(before[-1].id, "") if before else ""
        if loaded is None:
            chains[run.id] = _chained(chain, run.id, None)
            continue
        data, spec = loaded
        shape_key = RecheckMemo.key("run spec shape", run.sha256)
        if rechecks.get(shape_key) is None:
            shape = check_run_spec(spec)
            if shape:
                problems += [p.at(paths.show(paths.run_spec_file(run.id))) for p in shape]
                chains[run.id] = _chained(chain, run.id, None)
                continue
            rechecks.put(shape_key, [])
        spec = effective_spec(spec, ledger)
        key = _run_key(ledger, run, spec, by_version, before, chain)
        if key is None or memos.gathered.run(run.id, key, run.sha256) is None:
            found = check_run_rules(ledger, run, spec, by_version.get(spec["methodology"]["version"]), specs)
            problems += [p.at(paths.show(paths.run_spec_file(run.id))) for p in found]
            if not found and key is not None:
                memos.gathered.put_run(run.id, key, data)
        specs[run.id] = spec
        spec_bytes[run.id] = data
        chains[run.id] = _chained(chain, run.id, spec)
    problems += [p.at(paths.show(paths.ledger_file)) for p in retirement_problems(ledger, by_version, specs)]
    problems += [p.at(paths.show(paths.ledger_file)) for p in required_draw_problems(ledger, by_version, specs)]
    return specs, spec_bytes


def _spec_of(paths: Paths, run: Any, memos: _Memos, problems: list[Problem]) -> tuple[bytes, dict[str, Any]] | None:
    """The run's spec bytes and parsed form: from the last build's memo when the file is, by
    this build's reading of its inputs, still the one with the leaf's SHA-256 (the memo's bytes
    hash to it too, and were found canonical when kept: the same bytes, the same answer); else
    read and checked."""
    if memos.known.has(f"{memos.known.runs}{run.id}.json", run.sha256):
        data = memos.gathered.spec_text(run.id, run.sha256)
        try:
            if data is not None:
                return data, json.loads(data)
        except (ValueError, RecursionError):
            pass  # bytes the ledger holds that never parsed: read, and reported, below
    return read_document(paths, paths.run_spec_file(run.id), run.sha256, f"run spec {run.id}", problems)


def _chained(chain: str, run_id: str, spec: dict[str, Any] | None) -> str:
    items = spec.get("items") if spec is not None else None
    shown = canonical_bytes(items).decode("utf-8") if isinstance(items, list) else "!"
    return hashlib.sha256(f"{chain}\n{run_id}\n{shown}".encode()).hexdigest()


def _run_key(
    ledger: Ledger,
    run: Any,
    spec: dict[str, Any],
    by_version: dict[str, Methodology],
    before: list[Any],
    chain: str,
) -> str | None:
    """What the rules of a registered run (check_run_rules) read, beyond its spec: its leaf and
    the leaf that decided it, the run before it and the chain of the items of every earlier one
    of its subject and gate, its gate, its pinned methodology (published, and parsed this
    build), its draw, and when each of its items was revealed. Every leaf older than the last
    build's ledger is the one it read (the memo is bound to that ledger's root). None for a
    spec whose items or methodology are not as the rules read them: it is checked every time."""
    items = spec.get("items")
    pinned = spec.get("methodology")
    version = pinned.get("version") if isinstance(pinned, dict) else None
    if not (isinstance(items, list) and all(isinstance(i, str) for i in items) and isinstance(version, str)):
        return None
    prev = before[-1] if before else None
    gate = ledger.gates.get(run.gate)
    published = ledger.methodologies.get(version)
    draw = ledger.draws.get(run.id)
    return GatherMemo.key(
        "run",
        [run.id, run.sha256, run.subject, run.gate, run.index, run.at, ledger.decided_at(run.id)],
        [prev.id, prev.index, ledger.decided_at(prev.id)] if prev is not None else None,
        [gate.public, gate.index] if gate is not None else None,
        [version, published.sha256, published.index, version in by_version] if published is not None else version,
        draw.index if draw is not None else None,
        _reveal_indices(ledger, items),
        chain,
    )


def _reveal_indices(ledger: Ledger, items: list[str]) -> list[list[Any]]:
    """Each item with the leaf that revealed it (None while sealed): what a key holds of them."""
    return [[i, r.index if (r := ledger.reveals.get(i)) is not None else None] for i in items]


@dataclass(frozen=True)
class _CertificateFound:
    """A certificate's leaf, its run's label sets, and the set of data files found due so far
    (data-relative places), to which its own are added."""

    cert: Any
    label_sets: list[LabelSetEvent]
    due: set[str]


def _gather_certificate(
    paths: Paths,
    ledger: Ledger,
    found: _CertificateFound,
    specs: dict[str, dict[str, Any]],
    by_version: dict[str, Methodology],
    rechecks: RecheckMemo,
    answers: RevealedAnswers,
    memos: _Memos,
    problems: list[Problem],
) -> CertificateInfo | None:
    """One certificate of the ledger against its leaf, its run spec and every rule of format v1
    §6, recomputed unless the rechecks know it passed with these very inputs, and taken from the
    last build's memo unread when nothing it read has changed; the files it makes due added to
    `found.due`. None when it has a problem (added to `problems`)."""
    cert = found.cert
    spec = specs.get(cert.run)
    run = ledger.runs[cert.run]
    pinned = by_version.get(spec["methodology"]["version"]) if spec else None
    if spec is None or pinned is None:
        # Read all the same: a missing or changed certificate is reported with the rest.
        read_document(paths, paths.certificate_file(cert.serial), cert.sha256, f"certificate {cert.serial}", problems)
        return None
    public = ledger.gates[run.gate].public
    remembered = _remembered_certificate(ledger, found, run, spec, pinned, public, by_version, rechecks, memos)
    if remembered is not None:
        return remembered
    before = len(problems)
    info, facts = _check_certificate(paths, ledger, found, spec, pinned, public, rechecks, answers, problems)
    if info is not None and facts is not None and len(problems) == before and not found.label_sets:
        facts["files"] = [[memos.known.certificate(cert.serial), cert.sha256], *facts["files"]]
        key = _certificate_key(ledger, cert, run, spec, public, by_version, facts["extra"])
        memos.gathered.put_certificate(cert.serial, key, facts)
    return info


def _certificate_key(
    ledger: Ledger,
    cert: Any,
    run: Any,
    spec: dict[str, Any],
    public: bool,
    by_version: dict[str, Methodology],
    extra: list[str],
) -> str:
    """What a certificate's check reads beyond its files (each checked by SHA-256 on its own):
    its leaf and its run's, its run's draw, its gate, its methodology (published, and parsed
    this build), and when each item it looks at (its spec's, and `extra`) was revealed: which
    documents are due, which answers its recomputation scores. Its spec and items are fixed by
    the leaves."""
    version = spec["methodology"]["version"]
    published = ledger.methodologies.get(version)
    draw = ledger.draws.get(run.id)
    return GatherMemo.key(
        "certificate",
        [cert.serial, cert.run, cert.sha256, cert.index, cert.at],
        [run.id, run.sha256, run.gate, run.index, ledger.decided_at(run.id)],
        draw.index if draw is not None else None,
        public,
        [version, published.sha256 if published is not None else None, version in by_version],
        _reveal_indices(ledger, [*spec["items"], *extra]),
    )


def _remembered_certificate(
    ledger: Ledger,
    found: _CertificateFound,
    run: Any,
    spec: dict[str, Any],
    pinned: Methodology,
    public: bool,
    by_version: dict[str, Methodology],
    rechecks: RecheckMemo,
    memos: _Memos,
) -> CertificateInfo | None:
    """The certificate as the last build found it, when its key is the same and every file it
    read (the certificate, its due documents) is still the one with that SHA-256; else None. A
    run a label set measures is always checked: its reports are made from what the check reads."""
    cert = found.cert
    if found.label_sets or memos.known.files is None:
        return None
    facts = memos.gathered.certificate(
        cert.serial, lambda looked: _certificate_key(ledger, cert, run, spec, public, by_version, looked)
    )
    if facts is None:
        return None
    try:
        files = [(str(place), str(sha)) for place, sha in facts["files"]]
        info = _certificate_info(cert, public, pinned, spec, facts)
        recheck = str(facts["recheck"])
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    first = (memos.known.certificate(cert.serial), cert.sha256)
    if not files or files[0] != first or any(not memos.known.has(place, sha) for place, sha in files):
        return None
    found.due.update(place.removeprefix("data/") for place, _ in files[1:])
    rechecks.put(recheck, list(info.asserted))
    memos.gathered.took_certificate(cert.serial)
    return info


def _check_certificate(
    paths: Paths,
    ledger: Ledger,
    found: _CertificateFound,
    spec: dict[str, Any],
    pinned: Methodology,
    public: bool,
    rechecks: RecheckMemo,
    answers: RevealedAnswers,
    problems: list[Problem],
) -> tuple[CertificateInfo | None, dict[str, Any] | None]:
    """The certificate read and checked: what the build keeps of it, and what the memo keeps
    (the data files it read beside the certificate, the items it looked at, its facts)."""
    cert, due = found.cert, found.due
    path = paths.certificate_file(cert.serial)
    loaded = read_document(paths, path, cert.sha256, f"certificate {cert.serial}", problems)
    run = ledger.runs[cert.run]
    if loaded is None:
        return None, None
    doc = loaded[1]
    file = paths.show(path)
    if not recheckable(doc) or doc["serial"] != cert.serial:
        problems += [
            p.at(file)
            for p in examine_certificate(
                doc, cert, run, spec, pinned, public, layout.run_spec(run.id), {}, {}, None
            ).problems
        ]
        # Already refused; its folder's files are not reported again as strays.
        folder = paths.certificates_dir / cert.serial
        if folder.is_dir():
            due.update(f.relative_to(paths.data).as_posix() for f in folder.rglob("*") if f.is_file())
        return None, None
    sealed_due, record_due = due_records(doc["results"], spec["items"], public, ledger.reveals)
    due.update(layout.details(cert.serial, r["item"]) for r in sealed_due)
    if record_due:
        due.add(layout.grader_record(cert.serial))
    evidence = published_evidence(paths, doc, public, ledger.reveals, problems)
    due.update(evidence_rel for evidence_rel, _ in evidence)
    details, record = _read_records(paths, doc, sealed_due, record_due, problems)
    version = spec["methodology"]["version"]
    revealed = [(i, c.commitment) for i in spec["items"] if i in ledger.reveals and (c := ledger.commit(i))]
    key = rechecks.key(
        cert, run, version, ledger.methodologies[version].sha256, public, revealed, sorted(details), bool(record)
    )
    asserted = rechecks.get(key)
    if asserted is None:
        checked = examine_certificate(
            doc,
            cert,
            run,
            spec,
            pinned,
            public,
            layout.run_spec(run.id),
            answers.answers(spec["items"]),
            {i: d.doc for i, d in details.items()},
            record.doc if record else None,
        )
        problems += [p.at(file) for p in checked.problems]
        if checked.problems:
            return None, None
        asserted = list(checked.asserted)
        rechecks.put(key, asserted)
    facts = _facts(doc, spec, details, record, evidence, key, asserted)
    # Made from the facts, as the memo's are: a certificate taken from it is the one checked.
    agreement = agreement_files(
        paths,
        ledger,
        found.label_sets,
        doc,
        spec,
        public,
        [d.doc["result"] for d in details.values()] if not public else doc["results"],
        problems,
    )
    return _certificate_info(cert, public, pinned, spec, facts, agreement), facts


def _certificate_info(
    cert: Any,
    public: bool,
    pinned: Methodology,
    spec: dict[str, Any],
    facts: dict[str, Any],
    agreement: tuple[tuple[str, bytes], ...] = (),
) -> CertificateInfo:
    """What the build keeps of a certificate, from its leaf and the facts its check found (or the
    memo remembered: TypeError, ValueError, KeyError or OverflowError for facts not so made)."""
    return CertificateInfo(
        cert.serial,
        cert.run,
        cert.sha256,
        cert.at,
        cert.index,
        public,
        pinned,
        spec,
        dict(facts["subject"]),
        str(facts["gate"]),
        str(facts["verdict"]),
        str(facts["grade"]),
        int(facts["score"]),
        str(facts["score_rule"]),
        tuple(str(i) for i in facts["details"]),
        facts["record"] is True,
        tuple(str(a) for a in facts["asserted"]),
        None if facts["expires_at"] is None else str(facts["expires_at"]),
        tuple(str(p) for p in facts["evidence"]),
        agreement,
    )


def _facts(
    doc: dict[str, Any],
    spec: dict[str, Any],
    details: dict[str, PublishedRecord],
    record: PublishedRecord | None,
    evidence: list[tuple[str, bytes]],
    recheck: str,
    asserted: list[str],
) -> dict[str, Any]:
    """What the gather memo keeps of a certificate that passed: the data files it read beside
    the certificate (the caller puts the certificate first), the items it looked at beyond its
    spec's, its recomputation's key, and what the lists and pages take from it."""
    read = [*details.values(), *([record] if record is not None else [])]
    files = [[f"data/{r.path}", sha256_hex(r.data)] for r in read] + [
        [f"data/{rel}", sha256_hex(data)] for rel, data in evidence
    ]
    # The items it looked at beyond its spec's (none, for a certificate that passed: its results
    # and evidence are of its spec's items), kept in case: their reveals are in its key too.
    looked = {r["item"] for r in doc["results"]}
    looked.update(
        i for e in doc.get("evidence") or () if isinstance(e, dict) for i in e.get("items") or () if isinstance(i, str)
    )
    return {
        "files": files,
        "extra": sorted(looked - set(spec["items"])),
        "recheck": recheck,
        "subject": doc["subject"],
        "gate": doc["gate"],
        "verdict": doc["verdict"],
        "grade": doc["grade"],
        "score": doc["score"],
        "score_rule": doc["score_rule"],
        "details": list(details),
        "record": record is not None,
        "asserted": list(asserted),
        "expires_at": doc["expires_at"],
        "evidence": [rel for rel, _ in evidence],
    }


def _read_records(
    paths: Paths,
    cert: dict[str, Any],
    sealed_due: list[dict[str, Any]],
    record_due: bool,
    problems: list[Problem],
    again: bool = False,
) -> tuple[dict[str, PublishedRecord], PublishedRecord | None]:
    """A certificate's due details documents and grader record, read from the data directory,
    where `certify` and `retire` put them, and checked against the hashes it holds (`again`:
    read before in this build, as read_document says)."""
    serial = cert["serial"]
    details: dict[str, PublishedRecord] = {}
    for r in sealed_due:
        got = _read_record(
            paths,
            paths.details_file(serial, r["item"]),
            r["details"],
            f"details of {r['item']} in certificate {serial}",
            paths.details_file(serial, r["item"], private=True),
            layout.details(serial, r["item"]),
            problems,
            again,
        )
        if got is not None:
            details[r["item"]] = got
    record = None
    if record_due:
        record = _read_record(
            paths,
            paths.grader_record_file(serial),
            cert["grader"]["record"],
            f"grader record of certificate {serial}",
            paths.grader_record_file(serial, private=True),
            layout.grader_record(serial),
            problems,
            again,
        )
    return details, record


def _read_record(
    paths: Paths,
    file: Path,
    sha: str,
    what: str,
    private: Path,
    site_path: str,
    problems: list[Problem],
    again: bool = False,
) -> PublishedRecord | None:
    if not file.exists():
        problems.append(
            problem(
                paths.show(file),
                f"the {what} is due (format v1 §6) but missing from the data directory",
                expected=f"a copy of {paths.show(private)}",
                found="nothing",
            )
        )
        return None
    loaded = read_document(paths, file, sha, what, problems, again)
    if loaded is None or not isinstance(loaded[1], dict):
        return None
    return PublishedRecord(site_path, loaded[0], loaded[1])


def _refuse_stray_records(paths: Paths, ledger: Ledger, due: set[str], known: _Known, problems: list[Problem]) -> None:
    """A file under data/certificates/<serial>/ that is not due must not be there: a details
    document of a sealed item would reveal its answer the moment the site is published. `due`
    holds data-relative places; the folder's files are those the build's reading of its inputs
    found, when it has them, else a walk of it."""
    folder = known.certificates.removeprefix("data/")
    expected = due | {f"{folder}{c.serial}.json" for c in ledger.certificates.values()}
    if known.files is not None:
        found = sorted(place.removeprefix("data/") for place in known.files if place.startswith(known.certificates))
    elif paths.certificates_dir.is_dir():
        found = sorted(f.relative_to(paths.data).as_posix() for f in paths.certificates_dir.rglob("*") if f.is_file())
    else:
        found = []
    for rel in found:
        if rel not in expected and not rel.rpartition("/")[2].startswith("."):
            problems.append(
                problem(
                    paths.show(paths.data / rel),
                    "not published: no certificate in the ledger makes this file due; a details document or "
                    "grader record is published only once its items are revealed (format v1 §6). If it is private, it "
                    "belongs in the private directory",
                )
            )


def _drawn_round(ledger: Ledger, item_id: str) -> int | None:
    n = ledger.drawn_retirement.get(item_id)
    return None if n is None else ledger.retirement_draws[n].round
