"""Verifying a site (format v1 §2-§8): the checks in their order, and the one last-resort catch."""

import base64
import os
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from generator.verifier.core.checksum_tree import tree_rule
from generator.verifier.core.errors import FormatError, NoteError, SiteUnreadable
from generator.verifier.core.folder import MANIFEST_PATH, KnownHashes, Site
from generator.verifier.core.formats import MANIFEST_V3, MANIFEST_V4, is_int, site_format
from generator.verifier.core.public_keys import KeyRow, VerifierKey, check_key_pin
from generator.verifier.core.report import Report, environment_hints
from generator.verifier.memory.checkpoint_memory import other_log_problems
from generator.verifier.memory.folder_memory import FolderRecord
from generator.verifier.memory.release_memory import Memory, private_to_user
from generator.verifier.rules.beacon import beacon_notes
from generator.verifier.rules.ledger import Ledger
from generator.verifier.rules.revocations import check_revocations
from generator.verifier.site.accounting import check_accounted
from generator.verifier.site.agreement_files import check_label_sets
from generator.verifier.site.certificate_files import check_certificates
from generator.verifier.site.certificate_memo import Vouched
from generator.verifier.site.checksum_lists import check_sums_tree
from generator.verifier.site.download import check_download
from generator.verifier.site.export_files import check_credential_files
from generator.verifier.site.history import (
    HISTORY_PATH,
    SavedCheckpoint,
    check_artifact_proofs,
    check_extends,
    check_history,
    check_tiles,
    history_sizes,
    proven_artifacts,
    read_history,
    saved_checkpoint,
    signed_tree,
    verify_saved,
)
from generator.verifier.site.history_v3 import HISTORY_V3, check_artifact_proofs_v3, check_history_v3
from generator.verifier.site.ledger_files import check_ledger
from generator.verifier.site.log_list_file import check_log_list_file
from generator.verifier.site.manifest_parts import PARTED_ROWS_NOTE, read_manifest_parts
from generator.verifier.site.publication import check_gates, check_methodology_files, check_reveals, check_runs
from generator.verifier.site.release import (
    Listing,
    check_keys_document,
    check_manifest_shape,
    check_sums,
    check_verifier_copy,
)
from generator.verifier.site.timestamp_files import check_draws_logged_in_time, check_timestamps
from generator.verifier.tlog.policy import Policy, witnessed_by
from generator.verifier.tlog.rotation import (
    ML_DSA_KEYS_MEMBER,
    check_checkpoint_keys,
    check_hand_overs,
    check_keys_follow_the_ledger,
    check_pin_followed,
)
from generator.verifier.tlog.witnessing import cosignature_age_problems, policy_problems

# The test suite sets this, so that a bug in a check fails the test that met it instead of
# being reported, like any other failure, as an internal error of the verifier.
RAISE_INTERNAL_ERRORS = False


def verify_site(
    site: Path | str,
    key: str | None = None,
    debug: bool = False,
    since: Sequence[tuple[str, bytes, str | None]] = (),
    from_tiles: bool = False,
    policy: Policy | None = None,
    memory: Path | None = None,
    full: bool = False,
    known_logs: Mapping[str, Iterable[bytes]] | None = None,
    known_files: KnownHashes | None = None,
    known_from: str = "verify.py mirror computed when it wrote them",
    max_age: int | None = None,
    known_now: bool = False,
    folders: FolderRecord | None = None,
) -> Report:
    """Verify a site directory; `since` holds checkpoints saved outside it that today's ledger
    must extend: a label for the report, the note's bytes, and the origin it was remembered for
    (None for one the caller named: it must be this site's; a remembered one of another log is
    skipped). `from_tiles` replays the ledger from its tiles, never reading the entries file. With a
    `policy`, the site's key must be one of its logs' and today's checkpoint needs its quorum of
    witness cosignatures, none dated in the future or (with `max_age`, seconds) older than that
    on this machine's clock. With `memory`, a folder where the verifier remembers the last release
    it verified (generator/verifier/memory/release_memory.py): the site is verified from the release remembered
    there, if it is the one `since` remembers, and what this run verified is remembered when
    every check passes; `full` verifies from nothing all the same. `known_logs` maps each
    origin the verifier remembers to the keys remembered for it: a site whose key is another
    origin's, or whose origin looks like another (the origins of `since` too), fails.
    `known_files` is what `verify.py mirror` hands over: the SHA-256 of files it wrote and
    hashed itself, each with the stat identity the file had then (memory/mirror_record.py says
    why they may be trusted), or the build hands over for the files it took from the last release
    (`known_from` says which, for the report); a file whose identity is unchanged is not read
    again, unless the site's folder is not this user's alone or `full` is set; `known_now` says
    the caller checked every such identity in this very run (the mirror, and the build on its
    look at the staged site), so none is looked at again. `folders` is what the last walk of
    this folder found (the mirror's, or the build's for the folder it stages into,
    memory/folder_memory.py): a folder unchanged since is not
    read again, on the same conditions, and what this walk finds is kept there.

    Raise SiteUnreadable if it is not a readable site at all, FormatError if `key` is neither
    a verifier key nor a fingerprint: both are the caller's errors, not the site's. An error in
    the verifier itself is reported as an internal error against the file it was checking (with
    its traceback under `debug`), never as a pass.
    """
    if key is not None:
        check_key_pin(key)
    root = Path(site)
    report = Report(str(site))
    if not root.is_dir():
        raise SiteUnreadable(f"{site}: not a directory")
    if not (root / MANIFEST_PATH).is_file():
        raise SiteUnreadable(f"{site}: no {MANIFEST_PATH}: not a transparency site")
    s = Site(root, report, _trusted(root, known_files, full, report), known_now)
    # Not on Windows, where a folder's times can be set to anything (and ctime is its creation).
    if folders is not None and folders.path is not None and os.name != "nt" and private_to_user(root):
        s.folders = {} if full else folders.remembered
    try:
        _check(s, key, since, from_tiles, (policy, max_age), memory, full, known_logs or {})
    except SiteUnreadable:
        raise
    except Exception as e:  # the last resort: a bug must never read as a pass
        if RAISE_INTERNAL_ERRORS:
            raise
        report.internal_error(str(s.current), e, traceback.format_exc() if debug else None)
    report.hints += environment_hints(root, report.failures)
    _keep_folders(s, folders)
    if s.known_used:
        looked = "as found in this run before the check" if known_now else "as this run found them"
        report.notes.append(
            f"{len(s.known_used)} file(s) not read again: their SHA-256 is the one {known_from}, and their "
            f"size, times and inode are unchanged since, {looked}"
        )
    return report


def _keep_folders(s: Site, folders: FolderRecord | None) -> None:
    """Keep what the walk found in each folder for the next (only once the walk ran: a run that
    stopped before it would leave nothing to take next time)."""
    if folders is None or s.folders is None or not s.files_found:
        return
    if s.folders_taken:
        s.report.notes.append(
            f"{s.folders_taken} folder(s) not read again: each has the size, times and inode it had when the "
            "last walk of this folder read it, so it holds the entries it held then"
        )
    why = folders.save(s.folders_seen)
    if why:
        s.report.warnings.append(f"every folder will be read again next time: {why}")


def _trusted(root: Path, known: KnownHashes | None, full: bool, report: Report) -> KnownHashes | None:
    """The hashes handed over (by the mirror, or the build), if they may be used: another user
    who could write the folder could replace a file and put back what the record checks."""
    if not known or full:
        return None
    if not private_to_user(root):
        report.notes.append(
            f"every file hashed: {root} is not this user's alone, so the hashes handed over are not used"
        )
        return None
    return known


def _check(
    s: Site,
    key: str | None,
    since: Sequence[tuple[str, bytes, str | None]],
    from_tiles: bool,
    trust: tuple[Policy | None, int | None],
    memory_folder: Path | None = None,
    full: bool = False,
    known_logs: Mapping[str, Iterable[bytes]] | None = None,
) -> None:
    report = s.report
    policy, max_age = trust
    loaded = s.document(MANIFEST_PATH, "manifest")
    if loaded is not None:
        _refuse_a_later_format(s, loaded[1])
    if loaded is None or not check_manifest_shape(loaded[1], report):
        return
    manifest = loaded[1]
    if site_format(manifest) >= MANIFEST_V4:  # its lists in parts (docs/formats/v4.md)
        whole = read_manifest_parts(s, manifest)
        if whole is None:
            return
        manifest = whole
    origin = manifest["origin"]
    earlier: list[VerifierKey] = []
    key_rows: list[KeyRow] = []
    public_key = check_keys_document(s, manifest, origin, key, earlier, key_rows)
    if public_key is None:
        return
    saved = _saved_checkpoints(s, since, origin)
    v3 = site_format(manifest) >= MANIFEST_V3
    memory = None
    # A v3 site's ledger is its tiles, and its memory is kept by tree size (release_memory.py).
    if memory_folder is not None and (v3 or not from_tiles):
        memory = Memory(memory_folder, origin, full)
        memory.bind([(cp.size, cp.root) for cp in saved])
        if memory.why_not:
            report.notes.append(f"verified in full: {memory.why_not}")
    sums = _check_lists(s, manifest, public_key, memory)
    if sums is not None:
        check_download(s, public_key, sums, memory)
    history = read_history(s, HISTORY_V3 if v3 else 1)
    roots_at: dict[int, bytes] = dict.fromkeys(history_sizes(history) | {cp.size for cp in saved}, b"")
    # A v3 manifest names no entries document: its ledger is its tiles (docs/formats/v3.md, 3).
    ledger = check_ledger(s, manifest, origin, public_key, roots_at, from_tiles or v3, memory, sums)
    # Another log's key, or a look-alike of another log's origin, would let this site start
    # afresh beside the history this verifier remembers for that log. Every key the log has
    # signed with counts, not only today's: a key it rotated away from is still the key of
    # whichever log the state remembers it for.
    known: dict[str, Iterable[bytes]] = {o: () for _, _, o in since if o is not None}
    known.update(known_logs or {})
    spans = ledger.keys.spans if ledger is not None else []
    log_keys = {public_key, *(r.key.public_key for r in key_rows), *(span.key.public_key for span in spans)}
    for problem in other_log_problems(origin, log_keys, known):
        report.check(False, MANIFEST_PATH, problem)
    report.checks += 1
    if ledger is None:
        return
    roots_at = {size: root for size, root in roots_at.items() if root}
    root = roots_at[ledger.size]
    keys_rel = manifest["keys"]
    keys_doc = s.document(keys_rel, "keys")
    rows = keys_doc[1].get("keys") if keys_doc and isinstance(keys_doc[1], dict) else None
    ml_rows = keys_doc[1].get(ML_DSA_KEYS_MEMBER) if keys_doc and isinstance(keys_doc[1], dict) else None
    check_keys_follow_the_ledger(
        s, keys_rel, rows if isinstance(rows, list) else [], ledger.keys, ml_rows if isinstance(ml_rows, list) else []
    )
    check_extends(s, [cp for cp in saved if verify_saved(s, cp, ledger.keys)], ledger.size, roots_at)
    checkpoint = s.read(manifest["ledger"]["checkpoint"], "checkpoint") or b""
    check_checkpoint_keys(s, manifest["ledger"]["checkpoint"], checkpoint, ledger.keys)
    if policy is not None:
        problems = policy_problems(policy, origin, public_key, checkpoint)
        if not problems:  # the cosignatures verify: their times can be read
            now = int(time.time())
            problems = cosignature_age_problems(witnessed_by(policy, checkpoint), now, max_age)
        for problem in problems:
            report.check(False, manifest["ledger"]["checkpoint"], problem)
        report.checks += 1
    pinned = earlier[0] if earlier else None
    # What a remembered check read is known by the SHA-256es this run verified. Not on Windows:
    # there the walk that lists the site's files sees a junction as a folder, and only Site.path,
    # which a remembered check's files no longer go through, refuses it.
    vouched = (
        (lambda rel: sums.files.get(rel) if rel in sums.matched else None)
        if memory is not None and sums is not None and sums.signed and os.name != "nt"
        else None
    )
    _check_restatements(
        s, manifest, public_key, ledger, history, checkpoint, roots_at, root, pinned, from_tiles, memory, vouched
    )
    _check_the_program(s, manifest, ledger, history, key_rows, public_key, memory, vouched)
    _conclude(report, manifest, public_key, ledger, checkpoint, root, memory)
    if site_format(manifest) >= MANIFEST_V4 and any(p.file == MANIFEST_PATH for p in report.failures):
        report.notes.append(PARTED_ROWS_NOTE)


def _check_lists(s: Site, manifest: dict[str, Any], public_key: bytes, memory: Memory | None) -> Listing | None:
    """SHA256SUMS, or a v3 site's tree of lists whose root it is (docs/formats/v3.md, 5; a v4
    site's splits by bits, v4.md, 3), from the lists the memory holds where it can."""
    if site_format(manifest) < MANIFEST_V3:
        return check_sums(s, public_key, manifest["verifier"])
    rule = tree_rule(site_format(manifest))
    remembered = memory.remembered_lists(rule.name) if memory is not None else None
    if memory is not None and memory.lists_why_not:
        s.report.notes.append(f"the checksum lists were read again: {memory.lists_why_not}")
    checked = check_sums_tree(s, public_key, manifest["verifier"], rule, remembered, memory is not None)
    if checked is None:
        return None
    record = checked[1]
    if memory is not None and record is not None:
        if record.why_not:
            s.report.warnings.append(f"the checksum lists will be read again next time: {record.why_not}")
        else:
            memory.took_lists(record, rule.name)
    return checked[0]


def _refuse_a_later_format(s: Site, manifest: Any) -> None:
    """A manifest of a format after this verifier's (an integer `v` past 4) is a site it cannot
    judge, not a failed one: exit 2, as for a site it cannot read."""
    if not isinstance(manifest, dict):
        return
    v = manifest.get("v")
    if manifest.get("type") == "transparency-manifest" and is_int(v) and v > MANIFEST_V4:
        raise SiteUnreadable(
            f"{s.root / MANIFEST_PATH}: says format v{v}, later than the formats this verifier reads (v1 to v4), "
            "an unsigned claim: nothing was verified. Get a later release of verify.py from the project (its "
            "releases are listed with their SHA-256), never the copy the site ships"
        )


def _saved_checkpoints(s: Site, since: Sequence[tuple[str, bytes, str | None]], origin: str) -> list[SavedCheckpoint]:
    """The checkpoints saved outside the site that are this log's, read but not yet verified; one
    remembered for another log is skipped, one that is no checkpoint of this log fails."""
    saved = []
    for label, data, remembered_for in since:
        if remembered_for is not None and remembered_for != origin:
            continue
        try:
            saved.append(saved_checkpoint(label, data, origin))
        except (NoteError, FormatError) as e:
            s.report.check(
                False,
                label,
                f"this saved checkpoint is not one of the site's: {e}",
                f"a checkpoint of {origin}",
                "a file that is not",
            )
    return saved


def _check_restatements(
    s: Site,
    manifest: dict[str, Any],
    public_key: bytes,
    ledger: Ledger,
    history: dict[str, Any] | None,
    checkpoint: bytes,
    roots_at: dict[int, bytes],
    root: bytes,
    pinned: VerifierKey | None,
    from_tiles: bool,
    memory: Memory | None = None,
    vouched: Vouched | None = None,
) -> None:
    """What restates the ledger's tree (the checkpoint history, tiles and inclusion proofs) and
    the key hand-overs the history shows; on a v1 site, which has none of them, that the ledger
    holds nothing that needs them."""
    report, origin, keys_rel = s.report, manifest["origin"], manifest["keys"]
    v3 = site_format(manifest) >= MANIFEST_V3
    if history is not None and v3:
        # The ledger was read from its tiles, each checked (check_ledger): no entries document.
        agreed = signed_tree(checkpoint, origin, public_key) == (ledger.size, root)
        archived = check_history_v3(
            s, history, origin, public_key, ledger.size, roots_at, checkpoint if agreed else None, ledger.keys
        )
        check_hand_overs(s, ledger.keys, archived, None if agreed else ledger.size)
        check_pin_followed(s, keys_rel, ledger.keys, pinned)
        if agreed:
            check_artifact_proofs_v3(s, proven_artifacts(manifest, ledger), archived, roots_at, memory, vouched)
        else:  # today's archived checkpoint is not judged, so a proof holding it cannot be
            report.notes.append("inclusion proofs not checked: the checkpoint does not sign the tiles' tree")
    elif history is not None:
        # Tiles, proofs and today's archived checkpoint all restate the checkpoint. When it does
        # not verify, or signs another tree than the entries', that is reported once, at the
        # checkpoint, and what restates it cannot be judged: it is not checked.
        agreed = signed_tree(checkpoint, origin, public_key) == (ledger.size, root)
        archived = check_history(
            s, history, origin, public_key, ledger.size, roots_at, checkpoint if agreed else None, ledger.keys
        )
        check_hand_overs(s, ledger.keys, archived, None if agreed else ledger.size)
        check_pin_followed(s, keys_rel, ledger.keys, pinned)
        if from_tiles:
            report.notes.append(f"{manifest['ledger']['entries']} was not read (--from-tiles): the tiles were")
        if agreed:
            if not from_tiles:
                check_tiles(s, ledger.size, root)
            check_artifact_proofs(s, manifest, ledger, checkpoint, ledger.size, root)
        else:
            report.notes.append("tiles and inclusion proofs not checked: the checkpoint does not sign the entries")
    elif v3:
        report.check(
            False,
            HISTORY_PATH,
            "a format v3 or v4 site (its manifest's v 3 or 4) publishes no checkpoint history",
            "ledger/history.json, v 2 (docs/formats/v3.md, 1)",
            "no ledger/history.json",
        )
    elif len(ledger.keys.spans) > 1 or ledger.revocations or any(k.reason for k in ledger.keys.spans):
        # Format-v2 events come with a v2 site: a rotation without its hand-over checkpoint is a key
        # nobody endorsed, which a v1 reading of the site would never notice.
        report.check(
            False,
            HISTORY_PATH,
            "the ledger holds format-v2 events (a key rotation, a revocation) but the site publishes no "
            "checkpoint history, so no hand-over checkpoint shows the old key endorsing the new",
            "ledger/history.json with a hand-over checkpoint for every rotation",
            "no ledger/history.json",
        )
    else:
        check_pin_followed(s, keys_rel, ledger.keys, pinned)
        report.notes.append(
            "no checkpoint history, tiles or inclusion proofs: a v1 site; only --since and the state file "
            "can show that its ledger extends an earlier one"
        )


def _check_the_program(
    s: Site,
    manifest: dict[str, Any],
    ledger: Ledger,
    history: dict[str, Any] | None,
    key_rows: list[KeyRow],
    public_key: bytes,
    memory: Memory | None,
    vouched: Vouched | None = None,
) -> None:
    """The program's own documents against the ledger, in the order each needs the one before:
    methodologies, gates, reveals, runs, certificates, label sets; then that every published file
    is accounted for, the log-list entry, the revocations, the withdrawn runs and the verifier's
    own copy."""
    methodologies = check_methodology_files(s, manifest, ledger)
    check_gates(s, manifest, ledger)
    check_reveals(s, manifest, ledger)
    specs = check_runs(s, manifest, ledger, methodologies, memory, vouched)
    s.report.notes += beacon_notes(methodologies)
    judged = check_certificates(s, manifest, ledger, specs, methodologies, public_key, memory, history, vouched)
    check_label_sets(s, ledger, specs, judged)
    check_credential_files(s, manifest, ledger)
    check_accounted(s, manifest, ledger, history, key_rows)
    check_log_list_file(s, manifest["origin"], key_rows, ledger.keys)
    bounds = check_timestamps(s, ledger, history)
    check_draws_logged_in_time(s, ledger, bounds, specs, methodologies)
    check_revocations(s, manifest["origin"], public_key, ledger)
    for w in ledger.withdrawals.values():
        s.report.withdrawn.append({"run": w.run, "at": w.at, "reason": w.reason, "index": w.index})
        s.report.notes.append(f"run {w.run} WITHDRAWN at {w.at}: {w.reason} (it will never be run nor certified)")
    check_verifier_copy(s, manifest)


def _conclude(
    report: Report,
    manifest: dict[str, Any],
    public_key: bytes,
    ledger: Ledger,
    checkpoint: bytes,
    root: bytes,
    memory: Memory | None,
) -> None:
    """What the report states of the release (its counts, tree and keys), the release remembered
    if every check passed, and the runs still open."""
    report.counts = {
        "ledger entries": ledger.size,
        "gates": len(ledger.gates),
        "commitments": ledger.commit_count,
        "revealed": len(ledger.reveals),
        "runs": len(ledger.runs),
        "certificates": len(ledger.certificates),
        "revocations": len(ledger.revocations),
        "label sets": len(ledger.label_sets),
        "methodology versions": len(ledger.methodologies),
    }
    report.tree = {"origin": manifest["origin"], "tree_size": ledger.size, "root": base64.b64encode(root).decode()}
    report.checkpoint = checkpoint
    report.log_keys = sorted({public_key, *(span.key.public_key for span in ledger.keys.spans)})
    if memory is not None and memory.bound and not memory.used and memory.why_not:
        report.notes.append(f"the ledger was replayed from its first entry: {memory.why_not}")
    if memory is not None and report.ok:
        try:
            memory.save(report.tree, root)
        except OSError as e:  # the site passed; only the next run's shortcut is lost
            report.warnings.append(f"could not remember this release in {memory.folder}: {e.strerror or e}")
    open_runs = [r for r in ledger.runs if ledger.decided_at(r) is None]
    if open_runs:
        report.notes.append(f"{len(open_runs)} run(s) still open (not yet decided): {', '.join(open_runs[:10])}")
