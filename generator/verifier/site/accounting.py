"""Every file of the ledger's folder, of an artifact's proof and of a certificate's evidence,
accounted for (FORMAT.md v2, "History"; "Evidence files").

A signed file that no document of the site names is checked by nothing, yet reads as part of the
record: a `ledger/checkpoints/77` over another root (a fork), a checkpoint of a size the log
never had, a consistency proof or a tile of no published size, a `.tlog-proof` beside no
artifact, an evidence file no certificate lists, a file nested under a certificate's folder, a
reveal, run spec, methodology file or key the manifest (or keys.json) does not name. Each file
there is one the verifier expects, and checks where its document is checked, or a failure naming
it, as agreement/ is (agreement_files.py).
"""

import re
from collections.abc import Callable, Sequence
from typing import Any

from generator.verifier.core.errors import FormatError
from generator.verifier.core.folder import Site
from generator.verifier.core.formats import MANIFEST_V3, MANIFEST_V4, site_format
from generator.verifier.core.public_keys import KeyRow
from generator.verifier.rules.evidence import evidence_path
from generator.verifier.rules.ledger import Ledger
from generator.verifier.rules.revocations import REVOCATIONS_PATH
from generator.verifier.site.commitment_parts import COMMITMENT_PARTS_DIR, commitment_part_count, commitment_part_path
from generator.verifier.site.history import HISTORY_PATH, tile_reader
from generator.verifier.site.history_v3 import V2_CONSISTENCY_RE
from generator.verifier.site.log_list_file import LOG_LIST_PATH
from generator.verifier.site.manifest_parts import (
    MANIFEST_PARTS_DIR,
    PARTED_LISTS,
    manifest_part_count,
    manifest_part_path,
)
from generator.verifier.site.timestamp_files import AUTHORITIES_PATH, TIMESTAMPS_FOLDER
from generator.verifier.tlog.tiles import TILE_HASH_BYTES, parse_entry_bundle, partial_tile_paths, tile_paths

LEDGER_FOLDER = "ledger/"
MANIFEST_FOLDER = MANIFEST_PARTS_DIR + "/"
PROOF_SUFFIX = ".tlog-proof"
# The ledger's own documents (each checked where its rule is), the trust policy, the log's entry
# in the witness network's log list, and its pages.
_LEDGER_DOCUMENTS = (
    "ledger/checkpoint",
    HISTORY_PATH,
    REVOCATIONS_PATH,
    "ledger/policy.txt",
    LOG_LIST_PATH,
    "ledger/index.html",
)
_LEDGER_PAGE_RE = re.compile(r"ledger/page-[1-9][0-9]*\.html")
_EVIDENCE_RE = re.compile(r"certificates/([^/]+)/evidence/([^/]+)")
# The folders of the record's documents, each holding only what the manifest (and keys.json, and
# each certificate's evidence list) names, beside its list pages.
ARTIFACT_FOLDERS = ("certificates/", "reveals/", "runs/", "methodology/", "keys/")
_LIST_PAGE_RE = re.compile(
    r"(certificates|runs|methodology|keys)/index\.html|(certificates|runs)/page-[1-9][0-9]*\.html"
)


def check_accounted(
    s: Site,
    manifest: dict[str, Any],
    ledger: Ledger,
    history: dict[str, Any] | None,
    key_rows: Sequence[KeyRow] = (),
) -> None:
    """Fail every file under ledger/, named *.tlog-proof, or under certificates/, reveals/, runs/,
    methodology/ or keys/ that no document of the site accounts for; check the partial tiles of
    archived sizes."""
    # The site's files sorted into what each check below looks at, in one pass over them all.
    ledger_files, proof_files, evidence, credentials, artifacts, parts = [], [], [], [], [], []
    for f in s.files_found:
        if f.startswith(LEDGER_FOLDER):
            ledger_files.append(f)
            continue
        if f.startswith(MANIFEST_FOLDER):
            parts.append(f)
        proof = f.endswith(PROOF_SUFFIX)
        if proof:
            proof_files.append(f)
        is_evidence = "/evidence/" in f and _EVIDENCE_RE.fullmatch(f) is not None
        if is_evidence:
            evidence.append(f)
        if f in CREDENTIAL_FILES or f.startswith(CREDENTIAL_FOLDERS):
            credentials.append(f)
        # Proofs and evidence files have their checks of their own: each file is reported once.
        if not proof and not is_evidence and f.startswith(ARTIFACT_FOLDERS):
            artifacts.append(f)
    _check_ledger_folder(s, manifest, ledger.size, history, sorted(ledger_files), ledger.commit_count)
    proofs = {
        row["path"] + PROOF_SUFFIX
        for kind in ("reveals", "certificates")
        for row in manifest[kind]
        if isinstance(row, dict) and isinstance(row.get("path"), str)
    }
    for rel in sorted(proof_files):
        s.report.check(
            rel in proofs,
            rel,
            "an inclusion proof beside no artifact the manifest lists",
            "FILE.tlog-proof beside a reveal or certificate of the manifest",
            "a stray proof",
        )
    if site_format(manifest) >= MANIFEST_V4:
        _check_manifest_folder(s, manifest, sorted(parts))
    _check_evidence_folder(s, manifest, sorted(evidence))
    _check_credential_files(s, manifest, sorted(credentials))
    _check_artifact_folders(s, manifest, key_rows, sorted(artifacts))


def _check_manifest_folder(s: Site, manifest: dict[str, Any], present: list[str]) -> None:
    """A v4 site's manifest/ holds the parts its index names (docs/formats/v4.md), read whole by
    then into the manifest's lists: any other file there is one no reader is told of."""
    expected = {
        manifest_part_path(name, k) for name in PARTED_LISTS for k in range(manifest_part_count(len(manifest[name])))
    }
    for rel in present:
        s.report.check(
            rel in expected,
            rel,
            "a file under manifest/ that is no part the manifest names",
            "only manifest/<list>/<k>.json, the parts of the manifest's lists",
            "a stray file",
        )


def _strings(*values: Any) -> set[str]:
    return {v for v in values if isinstance(v, str)}


def _check_artifact_folders(s: Site, manifest: dict[str, Any], key_rows: Sequence[KeyRow], present: list[str]) -> None:
    """A file in a folder of the record that nothing names, a certificate of no ledger entry, a
    document nested under a certificate's folder, would read as part of the record unchecked."""
    rows = {kind: [r for r in manifest[kind] if isinstance(r, dict)] for kind in ("certificates", "reveals", "runs")}
    expected: set[str] = set()
    for r in rows["certificates"]:
        expected |= _strings(r.get("path"), r.get("grader_record"))
        expected |= _strings(r["path"] + ".sig") if isinstance(r.get("path"), str) else set()
        expected |= _strings(*r["details"]) if isinstance(r.get("details"), list) else set()
        expected |= _strings(*r["exports"]) if isinstance(r.get("exports"), list) else set()
        if isinstance(r.get("serial"), str):
            expected.add(f"certificates/{r['serial']}/index.html")
    expected |= {p for r in rows["reveals"] for p in _strings(r.get("path"))}
    expected |= {p for r in rows["runs"] for p in _strings(r.get("spec"))}
    for m in manifest["methodology"] if isinstance(manifest.get("methodology"), list) else []:
        if isinstance(m, dict):
            expected |= _strings(m.get("document"), m.get("parameters"))
            if isinstance(m.get("version"), str):
                expected.add(f"methodology/{m['version']}/index.html")
    expected |= {r.pem for r in key_rows if r.pem is not None}
    for rel in present:
        if rel in expected or _LIST_PAGE_RE.fullmatch(rel):
            continue
        folder = rel.split("/", 1)[0]
        s.report.check(
            False,
            rel,
            f"a file under {folder}/ that no document of the site accounts for",
            _WHAT_IS_EXPECTED[folder],
            "a stray file",
        )


_WHAT_IS_EXPECTED = {
    "certificates": "a certificate the manifest lists, its signature and proof, its page, the details documents, "
    "grader record and exports the manifest lists for it, and certificates/<serial>/evidence/<name> for each "
    "evidence file it lists",
    "reveals": "a reveal the manifest lists, and its proof",
    "runs": "a run spec the manifest lists, and the runs' list pages",
    "methodology": "a methodology document or parameters file the manifest lists, and their pages",
    "keys": "a PEM file keys.json names, and the keys' page",
}


def _check_ledger_folder(
    s: Site,
    manifest: dict[str, Any],
    size: int,
    history: dict[str, Any] | None,
    present: list[str],
    commits: int = 0,
) -> None:
    expected = set(_LEDGER_DOCUMENTS)
    for value in manifest["ledger"].values():
        if isinstance(value, str):
            expected |= {value, value + ".sig"}
    expected |= {HISTORY_PATH + ".sig", REVOCATIONS_PATH + ".sig"}
    rows = history["checkpoints"] if history else []
    expected |= {r["checkpoint"] for r in rows if isinstance(r["checkpoint"], str)}
    expected |= {r["consistency"] for r in rows if isinstance(r["consistency"], str)}
    v3 = site_format(manifest) >= MANIFEST_V3
    if v3:  # the commitment list's parts (docs/formats/v3.md, 4)
        expected |= {commitment_part_path(k) for k in range(commitment_part_count(commits))}
    today = {LEDGER_FOLDER + p for p, _ in tile_paths(size)} if history else set()
    expected |= today
    archived: dict[int, set[str]] = {}
    for m in sorted({r["tree_size"] for r in rows} - {size}):
        if 0 < m < size:
            # Every full tile of a smaller log is one of today's: only its partial ones can be
            # its own (naming each of its tiles cost a second at a million leaves and 46 sizes).
            archived[m] = {LEDGER_FOLDER + p for p in partial_tile_paths(m)} - today
            expected |= archived[m]
    for rel in present:
        # Timestamp files are checked, each named when it fails, by timestamp_files.py.
        if (
            rel in expected
            or _LEDGER_PAGE_RE.fullmatch(rel)
            or rel == AUTHORITIES_PATH
            or rel.startswith(TIMESTAMPS_FOLDER)
        ):
            continue
        if rel.startswith("ledger/checkpoints/"):
            why = "a checkpoint that no row of the checkpoint history archives (a fork, or a size the log never had)"
        elif v3 and V2_CONSISTENCY_RE.fullmatch(rel):
            why = (
                "a format v2 consistency proof (ledger/consistency/<size>.json) in a format v3 or v4 site, whose every "
                "proof is a history row's ledger/consistency/<M0>-<M>.json"
            )
        elif rel.startswith("ledger/consistency/"):
            why = "a consistency proof of no row of the checkpoint history"
        elif rel.startswith(COMMITMENT_PARTS_DIR + "/"):
            why = "a part of the commitment list that the ledger's commits do not make"
        elif rel.startswith("ledger/tile/"):
            why = f"a tile of no size the log published (today's {size} and the history's)"
        else:
            why = "a file under ledger/ that no document of the site accounts for"
        s.report.check(
            False, rel, why, "only the ledger's documents, the history's files and its tiles", "a stray file"
        )
    # A partial tile kept for an archived size restates that size's tree: it must hold that tree.
    # That tree is a prefix of today's, whose tiles check_tiles holds against today's root: each
    # such tile is the head of today's tile of the same level and index. Comparing the two costs
    # two small files a tile, where re-hashing the tiled log would cost the whole log per size.
    held = set(present)
    today_by_name = {_tile_name(p): (p, w) for p, w in tile_paths(size)} if history else {}
    read = tile_reader(s)
    for m, paths in archived.items():
        for rel in sorted(paths & held):
            width = int(rel.rsplit(".p/", 1)[1])  # a partial tile's path ends with its width
            problem = _archived_tile_problem(read, rel, width, today_by_name)
            s.report.check(
                problem is None,
                rel,
                f"a tile of archived size {m} that does not hold the ledger's first {m} entries: {problem}",
            )


def _tile_name(path: str) -> str:
    """A tile's level (or entries) and index, without its width: an archived size's partial tile
    and today's tile at the same place share it."""
    return path.split(".p/", 1)[0]


def _archived_tile_problem(
    read: Callable[[str], bytes | None], rel: str, width: int, today_by_name: dict[str, tuple[str, int]]
) -> str | None:
    path = rel[len(LEDGER_FOLDER) :]
    today, today_width = today_by_name[_tile_name(path)]
    mine, theirs = read(path), read(today)
    if mine is None:
        return "it cannot be read"
    if theirs is None:
        return f"today's tile {LEDGER_FOLDER}{today}, which it must begin, is missing"
    try:
        if path.startswith("tile/entries/"):
            head = parse_entry_bundle(theirs, today_width, LEDGER_FOLDER + today)[:width]
            same = parse_entry_bundle(mine, width, rel) == head
        else:
            same = len(mine) == width * TILE_HASH_BYTES and theirs[: len(mine)] == mine
    except FormatError as e:
        return str(e)
    return None if same else f"it is not the head of today's tile {LEDGER_FOLDER}{today}"


# The files of the certificates' credentials (FORMAT.md, "Exports"): present with exports, and only then.
CREDENTIAL_FILES = ("did.json", ".well-known/did.json", "credentials/status.json")
CREDENTIAL_FOLDERS = ("credentials/", ".well-known/")


def _check_credential_files(s: Site, manifest: dict[str, Any], present: list[str]) -> None:
    rows = [r for r in manifest["certificates"] if isinstance(r, dict)]
    exports = any("exports" in r for r in rows)
    for rel in present:
        s.report.check(
            exports and rel in CREDENTIAL_FILES,
            rel,
            "a credential file the site's exports do not account for",
            "did.json, .well-known/did.json and credentials/status.json, on a site whose certificates list exports",
            "a stray file",
        )


def _check_evidence_folder(s: Site, manifest: dict[str, Any], present: list[str]) -> None:
    if not present:
        return
    paths = {
        row["serial"]: row["path"]
        for row in manifest["certificates"]
        if isinstance(row, dict) and isinstance(row.get("serial"), str) and isinstance(row.get("path"), str)
    }
    listed: dict[str, set[str]] = {}
    for rel in present:
        m = _EVIDENCE_RE.fullmatch(rel)
        assert m is not None
        serial = m.group(1)
        if serial not in listed:
            listed[serial] = set()
            loaded = s.document(paths[serial], f"certificate {serial}") if serial in paths else None
            evidence = loaded[1].get("evidence") if loaded and isinstance(loaded[1], dict) else None
            for e in evidence if isinstance(evidence, list) else []:
                if isinstance(e, dict) and isinstance(e.get("name"), str):
                    listed[serial].add(evidence_path(serial, e["name"]))
        s.report.check(
            rel in listed[serial],
            rel,
            "an evidence file that no certificate of the manifest lists",
            f"a file certificate {serial}'s evidence list names",
            "a stray file",
        )
