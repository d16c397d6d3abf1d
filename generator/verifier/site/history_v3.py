"""The checkpoint history and the inclusion proofs of a format v3 site (docs/formats/v3.md, 1 and
2): one consistency proof per release, from the row before, and each proof written once, against
the archived checkpoint of the release that first published its artifact.

As for v2 (site/history.py), nothing is taken from the site's word: every archived checkpoint is
opened with the keys the ledger made valid for its size and its root compared with the root
recomputed from the leaves; every consistency proof is checked between the two recomputed roots;
and every inclusion proof against the root recomputed at the size of the checkpoint it holds,
which must be one the history archives, byte for byte.
"""

import re
from collections.abc import Callable
from typing import Any

from generator.verifier.core.errors import FormatError, NoteError
from generator.verifier.core.folder import Site
from generator.verifier.core.formats import same, sha256_hex
from generator.verifier.core.text import show
from generator.verifier.memory.release_memory import Memory
from generator.verifier.site.history import (
    HISTORY_PATH,
    artifact_proof_problem,
    b64,
    check_consistency_document,
    open_checkpoint,
)
from generator.verifier.tlog.keyring import KeyRing
from generator.verifier.tlog.rotation import checkpoint_signers, signer_problems
from generator.verifier.tlog.tlogproof import parse_tlog_proof

# A v3 history's document version (its rows chain: each consistency proof is from the row before).
HISTORY_V3 = 2
# v2's proof from an archived size to today's: never in a v3 site, where every proof is a row's.
V2_CONSISTENCY_RE = re.compile(r"ledger/consistency/(0|[1-9][0-9]*)\.json")


def archived_checkpoint_path(size: int) -> str:
    return f"ledger/checkpoints/{size}"


def consistency_between(old: int, new: int) -> str:
    """Where a v3 site keeps the consistency proof from size `old` (the row before) to `new`."""
    return f"ledger/consistency/{old}-{new}.json"


def check_history_v3(
    s: Site,
    history: dict[str, Any],
    origin: str,
    key: bytes,
    size: int,
    roots_at: dict[int, bytes],
    checkpoint: bytes | None,
    ring: KeyRing | None = None,
) -> dict[int, tuple[str, bytes]]:
    """Every row of a v3 history: its archived checkpoint at `ledger/checkpoints/<M>`, signed by
    the keys valid for its size, over the recomputed root; its consistency proof from the row
    before (none for the first row). Today's row archives a checkpoint of today's tree, which
    may carry fewer cosignatures than today's checkpoint (`checkpoint`, None when it failed its
    own check: today's row is then not judged). Returns the archived checkpoints read, by size
    (path, bytes), for the hand-over and proof checks."""
    archived: dict[int, tuple[str, bytes]] = {}
    report = s.report
    s.signed(HISTORY_PATH, history["data"], key, "checkpoint history")
    report.check(history["origin"] == origin, HISTORY_PATH, "origin differs from the manifest's", origin)
    report.check(same(history["tree_size"], size), HISTORY_PATH, "tree_size differs from the ledger's", size)
    rows = history["checkpoints"]
    report.check(rows[-1]["tree_size"] == size, HISTORY_PATH, "the last row is not today's checkpoint", size)
    before: int | None = None
    for i, row in enumerate(rows):
        m, rel = row["tree_size"], row["checkpoint"]
        where = f"checkpoints[{i}]"
        want = roots_at.get(m)
        if m > size or want is None:
            report.check(False, HISTORY_PATH, f"archives a checkpoint of size {m} beyond the ledger's {size}")
            continue
        consistency = None if before is None else consistency_between(before, m)
        old = before
        before = m
        report.check(
            rel == archived_checkpoint_path(m) and row["consistency"] == consistency,
            HISTORY_PATH,
            "a row's files are not where format v3 puts them",
            f"checkpoint {archived_checkpoint_path(m)}, consistency {show(consistency)}",
            f"checkpoint {show(rel)}, consistency {show(row['consistency'])}",
            where,
        )
        if m == size and checkpoint is None:
            continue  # today's checkpoint failed its own check: what restates it is not judged
        path = archived_checkpoint_path(m)
        data = s.read(path, f"archived checkpoint of size {m}")
        if data is None or not _archived_checkpoint_holds(s, path, data, m, want, origin, key, ring):
            continue
        archived[m] = (path, data)
        report.check(
            row["root"] == want.hex(), HISTORY_PATH, f"root of size {m} is not the ledger's", want.hex(), where=where
        )
        if old is not None and old in roots_at:
            check_consistency_document(s, consistency, old, m, roots_at[old], want)
    return archived


def _archived_checkpoint_holds(
    s: Site, rel: str, data: bytes, m: int, want: bytes, origin: str, key: bytes, ring: KeyRing | None
) -> bool:
    """An archived checkpoint signed by the keys valid for its size, over the recomputed root."""
    report = s.report
    try:
        if ring is not None and ring.spans:
            (_, cp_size, cp_root), signers = checkpoint_signers(data, ring)
            for problem in signer_problems(ring, m, signers):
                report.check(False, rel, problem)
        else:
            _, cp_size, cp_root = open_checkpoint(data, origin, key)
    except (NoteError, FormatError) as e:
        return report.check(False, rel, f"archived checkpoint does not verify: {e}")
    return report.check(
        (cp_size, cp_root) == (m, want),
        rel,
        f"history rewritten: the ledger's first {m} entries no longer have the root this archived checkpoint signs",
        f"size {m}, root {b64(want)} (recomputed from today's entries)",
        f"size {cp_size}, root {b64(cp_root)}",
    )


def check_artifact_proofs_v3(
    s: Site,
    wanted: list[tuple[str, int]],
    archived: dict[int, tuple[str, bytes]],
    roots_at: dict[int, bytes],
    memory: Memory | None = None,
    vouched: Callable[[str], str | None] | None = None,
) -> None:
    """Each reveal's and certificate's .tlog-proof (artifact path, its leaf's index) holds, byte
    for byte, a checkpoint the history archives, and proves the ledger's leaf at its index
    against the root recomputed at that checkpoint's size.

    A proof is written once and never changes, and its check is a function of its bytes, its
    leaf's index, the checkpoint it holds as the history archives it and the root at that size:
    with the verifier's `memory` and the SHA-256es this run `vouched` for, a proof whose check
    passed before with the same four is not read again."""
    by_bytes = {data: m for m, (_, data) in archived.items()}
    held_at = {m: sha256_hex(data) for m, (_, data) in archived.items()}  # what a proof's key names
    for rel, index in wanted:
        proof_rel = rel + ".tlog-proof"
        sha = vouched(proof_rel) if vouched is not None else None
        if memory is not None and sha is not None and _proof_known(memory, proof_rel, sha, index, held_at, roots_at):
            s.report.checks += 2  # as many as reading it counts
            continue
        proof_data = s.read(proof_rel, "inclusion proof")
        if proof_data is None:
            continue
        try:
            held = parse_tlog_proof(proof_data).checkpoint
        except FormatError as e:
            s.report.check(False, proof_rel, f"inclusion proof fails: {e}")
            continue
        m = by_bytes.get(held)
        if not s.report.check(
            m is not None,
            proof_rel,
            "the proof's checkpoint is not, byte for byte, a checkpoint the history archives",
            "the bytes of ledger/checkpoints/<M> of a row of ledger/history.json",
            f"a checkpoint of {len(held)} bytes that no row archives",
        ):
            continue
        assert m is not None
        problem = artifact_proof_problem(None, proof_data, index, m, roots_at[m])
        passed = s.report.check(problem is None, proof_rel, f"{problem} (against {archived[m][0]})" if problem else "")
        # Remembered under the SHA-256 of the bytes checked, which must be the ones vouched for.
        if passed and memory is not None and sha is not None and sha256_hex(proof_data) == sha:
            memory.took_memo("proofs", proof_rel, [m, _proof_key(memory, sha, index, m, held_at, roots_at)])


def _proof_key(
    memory: Memory, sha: str, index: int, m: int, held_at: dict[int, str], roots_at: dict[int, bytes]
) -> str:
    """`held_at`: the SHA-256 of each archived checkpoint, by size."""
    return memory.recheck_key("proof", sha, index, m, held_at[m], roots_at[m].hex())


def _proof_known(
    memory: Memory,
    proof_rel: str,
    sha: str,
    index: int,
    held_at: dict[int, str],
    roots_at: dict[int, bytes],
) -> bool:
    """Whether the check of the proof at `proof_rel`, whose bytes this run verified have `sha`,
    passed in the release verified last with everything it read as it is now (kept if so)."""
    found = memory.memo("proofs", proof_rel)
    if found is None or len(found) != 2 or not isinstance(found[0], int) or found[0] not in held_at:
        return False
    m = found[0]
    if m not in roots_at or found[1] != _proof_key(memory, sha, index, m, held_at, roots_at):
        return False
    memory.took_memo("proofs", proof_rel, found)
    return True
