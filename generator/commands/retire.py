"""`transparency retire`: sealed items revealed, with what their reveal makes due (format v1 §3, §6)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from generator.core import canonical_json
from generator.core.generator_errors import InputError, problem
from generator.program.datadir import Paths
from generator.program.disclosure import certificate_items, due_documents, read_due
from generator.program.documents import load_spec
from generator.program.itemsources import ItemSource, indexed_source, scan_item_sources
from generator.program.ledgerfile import LedgerAppender, appending, event_time
from generator.program.sealed import find_sealed_many
from generator.state import item_uses_cache, source_index_cache
from generator.verifier import MAX_LEAF_BYTES, Ledger, Problem, is_id, loads_strict


def retire_items(paths: Paths, item_ids: list[str], note: str, at: str | None = None) -> list[dict[str, Any]]:
    """Reveal sealed items of a secret gate: publish their committed bytes, append the reveals.

    Refuses (writing nothing) an unknown or already revealed item, one whose source changed
    since it was committed, one whose sealed document is missing, and one used by an open run.
    """
    with appending(paths, "retire") as app:
        problems: list[Problem] = []
        when = event_time(at, app.ledger, problems)
        return retire_within(paths, app, item_ids, note, when, problems)


def retire_within(
    paths: Paths,
    app: LedgerAppender,
    item_ids: list[str],
    note: str,
    when: str,
    problems: list[Problem],
    first: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """retire_items inside an open append, the leaves `first` (a retirement draw) before the
    reveals; everything `problems` already holds refuses the whole retirement too."""
    ledger = app.ledger
    if not note.strip():
        problems.append(problem("--note", "a retirement needs a note saying why"))
    twice = sorted(i for i, n in Counter(item_ids).items() if n > 1)
    if twice:
        problems.append(problem("retire", f"an id is given twice: {', '.join(twice)}"))
    open_specs = _open_run_items(paths, ledger, problems)
    known = {
        i: c.commitment
        for i in item_ids
        if is_id(i) and (c := ledger.commit(i)) is not None and i not in ledger.reveals
    }
    # One pass over the sealed batches and one over the sources, however many items retire.
    sealed = find_sealed_many(paths, known, ledger)
    sources = _item_sources(paths, ledger, sorted(known), problems)
    documents: list[tuple[str, bytes]] = []
    leaves: list[dict[str, Any]] = []
    for item_id in item_ids:
        found = _reveal(paths, ledger, item_id, note, when, open_specs, sealed, sources, problems)
        if found is not None:
            documents.append((item_id, found[0]))
            leaves.append(found[1])
    # Retiring makes due the details of every certificate that used these items, and the
    # grader record of every certificate whose items are now all revealed (format v1 §6).
    retiring = set(item_ids)
    revealed = _RevealedAfter(ledger, retiring)
    serials = item_uses_cache.certificates_using(
        paths, ledger, retiring, lambda serial: certificate_items(paths, ledger, serial)
    )
    published = [
        (due, read_due(paths, due, problems))
        for due in due_documents(paths, ledger, revealed, problems, only_items=retiring, serials=serials)
    ]
    if problems:
        raise InputError(problems, f"cannot retire {', '.join(item_ids)}; nothing was written")
    app.append((first or []) + leaves)
    # Staged: the item's text reaches data/ only once its reveal is in the ledger.
    for item_id, data in documents:
        app.stage(paths.reveal_file(item_id), data)
    for due, due_data in published:
        assert due_data is not None
        app.stage(due.target, due_data)
    return leaves


def _item_sources(paths: Paths, ledger: Ledger, item_ids: list[str], problems: list[Problem]) -> dict[str, ItemSource]:
    """The sources of the items, each row read where the index says it is (one row, not its
    file of 50,000), and the others found by a scan of the files that mention them."""
    sources: dict[str, ItemSource] = {}
    for item_id, (path, n, raw) in source_index_cache.lookup(paths, item_ids).items():
        src = indexed_source(paths, ledger, item_id, path, n, raw)
        if src is not None:
            sources[item_id] = src
    rest = {i for i in item_ids if i not in sources}
    if rest:
        try:
            sources.update((src.id, src) for src in scan_item_sources(paths, ledger, wanted=rest, mentioning=rest))
        except InputError as e:
            problems += e.problems
    return sources


def _reveal(
    paths: Paths,
    ledger: Ledger,
    item_id: str,
    note: str,
    when: str,
    open_specs: dict[str, set[str]],
    sealed: dict[str, bytes],
    sources: dict[str, ItemSource],
    problems: list[Problem],
) -> tuple[bytes, dict[str, Any]] | None:
    """The reveal document of `item_id` and its ledger leaf, or None when there is none to make;
    what stands in the way of retiring it recorded in `problems` either way."""
    c = ledger.commit(item_id) if is_id(item_id) else None
    if c is None:
        problems.append(problem("retire", f"unknown item {item_id!r}: it was never committed"))
        return None
    if item_id in ledger.reveals:
        r = ledger.reveals[item_id]
        problems.append(problem("retire", f"item {item_id} is already revealed ({r.reason}, {r.at})"))
        return None
    for run_id, items in open_specs.items():
        if item_id in items:
            problems.append(
                problem(
                    "retire",
                    f"item {item_id} is used by run {run_id}, which is still open; certify the run first",
                )
            )
    data = sealed.get(item_id)
    if data is None:
        problems.append(
            problem(
                paths.show(paths.sealed_dir),
                f"no sealed document of {item_id} hashes to its commitment {c.commitment}; without it the "
                "item cannot be revealed",
            )
        )
        return None
    src = sources.get(item_id)
    if src is None:
        problems.append(
            problem(
                paths.show(paths.items_dir),
                f"no item source for {item_id}: cannot confirm its text is the one committed",
            )
        )
    elif canonical_json.dumps_validated(src.item) != canonical_json.dumps_validated(loads_strict(data)["item"]):
        problems.append(
            problem(
                src.file,
                f"item {item_id} changed since it was committed; a committed item cannot change (revert the "
                "edit, or commit a new item)",
                src.where,
            )
        )
    leaf = {"type": "reveal", "v": 1, "id": item_id, "reason": "retired", "note": note, "at": when}
    size = len(canonical_json.dumps(leaf))
    if size > MAX_LEAF_BYTES:
        problems.append(
            problem(
                "--note",
                "the note makes the ledger leaf too large",
                expected=f"at most {MAX_LEAF_BYTES} bytes",
                found=f"{size} bytes",
            )
        )
    return data, leaf


class _RevealedAfter:
    """The items revealed once a retire lands: the ledger's reveals and the ones retiring."""

    def __init__(self, ledger: Ledger, retiring: set[str]) -> None:
        self.ledger = ledger
        self.retiring = retiring

    def __contains__(self, item_id: object) -> bool:
        return item_id in self.retiring or item_id in self.ledger.reveals


def retire_item(paths: Paths, item_id: str, note: str, at: str | None = None) -> dict[str, Any]:
    return retire_items(paths, [item_id], note, at)[0]


def _open_run_items(paths: Paths, ledger: Ledger, problems: list[Problem]) -> dict[str, set[str]]:
    """The items of every run still open: such items cannot be retired (it would contaminate the run)."""
    out: dict[str, set[str]] = {}
    for run in ledger.runs.values():
        if ledger.decided_at(run.id) is not None:  # certified, or withdrawn
            continue
        spec = load_spec(paths, ledger, run.id, problems)
        if isinstance(spec, dict) and "draw" in spec and run.id not in ledger.draws:
            # Its pool was fixed at registration: no item of its gate may leave it before the draw.
            out[run.id] = {c.id for c in ledger.commits() if c.gate == run.gate}
        elif isinstance(spec, dict) and isinstance(spec.get("items"), list):
            out[run.id] = set(spec["items"])
        elif spec is not None:
            problems.append(
                problem(
                    paths.show(paths.run_spec_file(run.id)),
                    f"the spec of open run {run.id} lists no items; cannot check which items it uses",
                )
            )
    return out
