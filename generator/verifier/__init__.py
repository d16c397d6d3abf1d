"""The standalone verifier of public formats v1, as a package of small modules.

Each module holds one concept of SPEC.md (see ARCHITECTURE.md for the table). The modules are
the source of truth; `generator/verify.py`, the single file every site ships, is generated
from them by `python -m generator.verifier.bundle`. Standard library and PyNaCl only, and
nothing of the generator: the generator imports this package, never the other way round.

`__all__` is what the generator may use; a test fails on any other import.
"""

from generator.verifier.answers import RevealedAnswers
from generator.verifier.canonical import (
    MAX_SAFE_INTEGER,
    canonical_bytes,
    canonical_text,
    check_no_surrogates,
    iter_canonical_array,
    loads_strict,
    number_rule_problems,
    parse_canonical,
    strict_decoder,
)
from generator.verifier.certificate_documents import due_records
from generator.verifier.certificates import (
    certificate_binding_problems,
    check_certificate,
    non_scored_problems,
    recheckable,
)
from generator.verifier.cosignature import (
    MAX_COSIGNATURE_TIMESTAMP,
    CosignerKey,
    cosignature_line,
    cosignature_message,
    make_cosigner_vkey,
    parse_cosigner_vkey,
    verify_cosignatures,
)
from generator.verifier.download import (
    ARCHIVE_PATH,
    ARCHIVE_SUMS_PATH,
    DOWNLOAD_DIR,
    archive_sums,
    archive_sums_line,
    in_download,
)
from generator.verifier.errors import (
    FormatError,
    NoteError,
    Problem,
    ProofError,
    RootMismatchError,
    ScoringError,
    SiteUnreadable,
    VerifyError,
)
from generator.verifier.folder import MANIFEST_PATH, SUMS_PATH, SUMS_SIG_PATH
from generator.verifier.formats import (
    GATE_RE,
    ID_RE,
    check_item,
    check_keys,
    check_reveal_document,
    is_gate_id,
    is_hex64,
    is_id,
    is_origin,
    is_safe_path,
    is_time,
    is_valid_key_name,
    same,
    sha256_hex,
    value_kind_problem,
)
from generator.verifier.history import HISTORY_PATH, artifact_proof_problem, open_checkpoint, verify_artifact
from generator.verifier.idindex import IdIndex
from generator.verifier.keyring import KEY_REVOCATION, KEY_ROTATION, KeyRing, KeySpan
from generator.verifier.keys import (
    PUBLISHED_PRIVATE_KEYS,
    KeyRow,
    VerifierKey,
    b64decode_strict,
    ed25519_verify,
    fingerprint,
    key_id,
    key_rows,
    make_vkey,
    parse_vkey,
    public_key_from_pem,
    public_key_pem,
)
from generator.verifier.ledger import LEAF_KEYS, MAX_LEAF_BYTES, Ledger, Revocation, RunEvent
from generator.verifier.lineage import lineage_keys, lineage_problems, lineage_skeleton
from generator.verifier.merkle import (
    EMPTY_ROOT,
    MerkleStream,
    leaf_hash,
    merkle_root,
    node_hash,
    root_from_inclusion_proof,
    verify_consistency,
    verify_inclusion,
)
from generator.verifier.methodology import Grade, Methodology, Tier, check_methodology, parse_methodology
from generator.verifier.note import checkpoint_text, note_signature_line, open_note, parse_checkpoint
from generator.verifier.policy import Policy, evaluate, parse_policy, witnessed_by
from generator.verifier.publication import commitment_rows_bytes
from generator.verifier.recheck import examine_certificate, recheck_certificate
from generator.verifier.release import SUMS_LINE_RE
from generator.verifier.report import Report
from generator.verifier.revocations import REVOCATIONS_PATH, revocation_list
from generator.verifier.rotation import checkpoint_signers, signer_problems
from generator.verifier.runs import check_run_rules, check_run_spec
from generator.verifier.scoring import (
    NON_SCORED,
    SCORED,
    STATUSES,
    ItemScore,
    band_score,
    build_open_result,
    grade_counts,
    is_exact_field,
    is_reported_field,
    keep_bullets,
    round_half_up,
    score_item,
    similarity_form_problem,
    similarity_value,
)
from generator.verifier.site import verify_site
from generator.verifier.snapshot import frontier_of, load_snapshot, snapshot_bytes, stream_from
from generator.verifier.sodium import sodium_function
from generator.verifier.state import replace_atomically, user_cache_dir
from generator.verifier.subjects import prose_problems
from generator.verifier.text import printable, safe_json, show
from generator.verifier.tiles import TILE_WIDTH, TileBuilder, TiledLog, read_tiled_log, tile_paths
from generator.verifier.tlogproof import TlogProof, format_tlog_proof, parse_tlog_proof

__all__ = [
    "ARCHIVE_PATH",
    "ARCHIVE_SUMS_PATH",
    "DOWNLOAD_DIR",
    "EMPTY_ROOT",
    "GATE_RE",
    "HISTORY_PATH",
    "ID_RE",
    "KEY_REVOCATION",
    "KEY_ROTATION",
    "LEAF_KEYS",
    "MANIFEST_PATH",
    "MAX_COSIGNATURE_TIMESTAMP",
    "MAX_LEAF_BYTES",
    "MAX_SAFE_INTEGER",
    "NON_SCORED",
    "PUBLISHED_PRIVATE_KEYS",
    "REVOCATIONS_PATH",
    "SCORED",
    "STATUSES",
    "SUMS_LINE_RE",
    "SUMS_PATH",
    "SUMS_SIG_PATH",
    "TILE_WIDTH",
    "CosignerKey",
    "FormatError",
    "Grade",
    "IdIndex",
    "ItemScore",
    "KeyRing",
    "KeyRow",
    "KeySpan",
    "Ledger",
    "MerkleStream",
    "Methodology",
    "NoteError",
    "Policy",
    "Problem",
    "ProofError",
    "Report",
    "RevealedAnswers",
    "Revocation",
    "RootMismatchError",
    "RunEvent",
    "ScoringError",
    "SiteUnreadable",
    "Tier",
    "TileBuilder",
    "TiledLog",
    "TlogProof",
    "VerifierKey",
    "VerifyError",
    "archive_sums",
    "archive_sums_line",
    "artifact_proof_problem",
    "b64decode_strict",
    "band_score",
    "build_open_result",
    "canonical_bytes",
    "canonical_text",
    "certificate_binding_problems",
    "check_certificate",
    "check_item",
    "check_keys",
    "check_methodology",
    "check_no_surrogates",
    "check_reveal_document",
    "check_run_rules",
    "check_run_spec",
    "checkpoint_signers",
    "checkpoint_text",
    "commitment_rows_bytes",
    "cosignature_line",
    "cosignature_message",
    "due_records",
    "ed25519_verify",
    "evaluate",
    "examine_certificate",
    "fingerprint",
    "format_tlog_proof",
    "frontier_of",
    "grade_counts",
    "in_download",
    "is_exact_field",
    "is_gate_id",
    "is_hex64",
    "is_id",
    "is_origin",
    "is_reported_field",
    "is_safe_path",
    "is_time",
    "is_valid_key_name",
    "iter_canonical_array",
    "keep_bullets",
    "key_id",
    "key_rows",
    "leaf_hash",
    "lineage_keys",
    "lineage_problems",
    "lineage_skeleton",
    "load_snapshot",
    "loads_strict",
    "make_cosigner_vkey",
    "make_vkey",
    "merkle_root",
    "node_hash",
    "non_scored_problems",
    "note_signature_line",
    "number_rule_problems",
    "open_checkpoint",
    "open_note",
    "parse_canonical",
    "parse_checkpoint",
    "parse_cosigner_vkey",
    "parse_methodology",
    "parse_policy",
    "parse_tlog_proof",
    "parse_vkey",
    "printable",
    "prose_problems",
    "public_key_from_pem",
    "public_key_pem",
    "read_tiled_log",
    "recheck_certificate",
    "recheckable",
    "replace_atomically",
    "revocation_list",
    "root_from_inclusion_proof",
    "round_half_up",
    "safe_json",
    "same",
    "score_item",
    "sha256_hex",
    "show",
    "signer_problems",
    "similarity_form_problem",
    "similarity_value",
    "snapshot_bytes",
    "sodium_function",
    "stream_from",
    "strict_decoder",
    "tile_paths",
    "user_cache_dir",
    "value_kind_problem",
    "verify_artifact",
    "verify_consistency",
    "verify_cosignatures",
    "verify_inclusion",
    "verify_site",
    "witnessed_by",
]
