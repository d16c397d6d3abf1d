"""The standalone verifier of public formats v1, as a package of small modules.

Each module holds one concept of SPEC.md (see ARCHITECTURE.md for the table). The modules are
the source of truth; `generator/verify.py`, the single file every site ships, is generated
from them by `python -m generator.verifier.bundle`. Standard library and PyNaCl only, and
nothing of the generator: the generator imports this package, never the other way round.

`__all__` is what the generator may use; a test fails on any other import.
"""

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
from generator.verifier.certificates import (
    certificate_binding_problems,
    check_certificate,
    due_records,
    recheck_certificate,
    recheckable,
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
from generator.verifier.formats import (
    GATE_RE,
    ID_RE,
    check_item,
    check_keys,
    check_reveal_document,
    is_gate_id,
    is_id,
    is_origin,
    is_safe_path,
    is_time,
    is_valid_key_name,
    same,
    sha256_hex,
    value_kind_problem,
)
from generator.verifier.idindex import IdIndex
from generator.verifier.keys import (
    PUBLISHED_PRIVATE_KEYS,
    VerifierKey,
    b64decode_strict,
    ed25519_verify,
    fingerprint,
    key_id,
    make_vkey,
    parse_vkey,
    public_key_from_pem,
    public_key_pem,
)
from generator.verifier.ledger import MAX_LEAF_BYTES, Ledger, RunEvent
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
from generator.verifier.methodology import check_methodology, grade_order
from generator.verifier.note import checkpoint_text, note_signature_line, open_note, parse_checkpoint
from generator.verifier.report import Report
from generator.verifier.runs import check_run_rules, check_run_spec
from generator.verifier.scoring import (
    NON_SCORED,
    SCORED,
    STATUSES,
    ItemScore,
    band_score,
    build_open_result,
    grade_counts,
    grade_reaches,
    is_exact_field,
    is_reported_field,
    keep_bullets,
    round_half_up,
    score_item,
    similarity_form_problem,
    similarity_value,
)
from generator.verifier.site import SUMS_LINE_RE, verify_site
from generator.verifier.sodium import sodium_function
from generator.verifier.text import printable, safe_json, show

__all__ = [
    "EMPTY_ROOT", "GATE_RE", "ID_RE", "MAX_LEAF_BYTES", "MAX_SAFE_INTEGER", "NON_SCORED", "PUBLISHED_PRIVATE_KEYS",
    "SCORED", "STATUSES", "SUMS_LINE_RE", "FormatError", "IdIndex", "ItemScore", "Ledger", "MerkleStream", "NoteError",
    "Problem", "ProofError", "Report", "RootMismatchError", "RunEvent", "ScoringError", "SiteUnreadable", "VerifierKey",
    "VerifyError", "b64decode_strict", "band_score", "build_open_result", "canonical_bytes", "canonical_text",
    "certificate_binding_problems", "check_certificate", "check_item", "check_keys", "check_methodology",
    "check_no_surrogates", "check_reveal_document", "check_run_rules", "check_run_spec", "checkpoint_text",
    "due_records", "ed25519_verify", "fingerprint", "grade_counts", "grade_order", "grade_reaches", "is_exact_field",
    "is_gate_id", "is_id", "is_origin", "is_reported_field", "is_safe_path", "is_time", "is_valid_key_name",
    "iter_canonical_array", "keep_bullets", "key_id", "leaf_hash", "loads_strict", "make_vkey", "merkle_root",
    "node_hash", "note_signature_line", "number_rule_problems", "open_note", "parse_canonical", "parse_checkpoint",
    "parse_vkey", "printable", "public_key_from_pem", "public_key_pem", "recheck_certificate", "recheckable",
    "root_from_inclusion_proof", "round_half_up", "safe_json", "same", "score_item", "sha256_hex",
    "show", "similarity_form_problem", "similarity_value", "sodium_function", "strict_decoder", "value_kind_problem",
    "verify_consistency", "verify_inclusion", "verify_site",
]
