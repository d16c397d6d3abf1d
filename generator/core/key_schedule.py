"""The keys a build signs with (format v2): each artifact by the key the ledger made valid for
it. A certificate keeps the signature of the key that was active when it was issued; a
checkpoint is signed by every key valid for its size whose private half is here, the newest
first, and must be signed by the newest: the hand-over checkpoint of a rotation gets both.

A log with an ML-DSA-44 key signs each checkpoint with it too, after the Ed25519 lines, in the
cosignature format under its own name with timestamp 0 (it claims no time). ML-DSA-44 signing
is randomized, so a checkpoint signed before (kept in data/checkpoints/) keeps its line: the
same ledger gives the same bytes, build after build.
"""

from __future__ import annotations

from pathlib import Path

from generator.core.cosigning_keys import Cosigner, load_cosigner
from generator.core.generator_errors import InputError, KeyFileError, problem
from generator.core.signing_key import RETIRED_KEYS, Signer, load_key, retired_key_file
from generator.verifier import (
    CosignerKey,
    FormatError,
    KeyRing,
    NoteError,
    VerifierKey,
    checkpoint_text,
    note_signature_line,
    split_note,
    verify_cosignatures,
)


def retired_ml_dsa_key_file(private: Path, key_id_hex: str) -> Path:
    """Where a rotated-out ML-DSA-44 key waits for the build that signs its hand-over."""
    return private / RETIRED_KEYS / f"ml-dsa-44-{key_id_hex}.key"


class BuildKeys:
    def __init__(
        self, private: Path, signer: Signer, ring: KeyRing, kept: Path | None = None, ml_dsa_key: Path | None = None
    ) -> None:
        self.signer = signer
        self.ring = ring
        self._private = private
        self._ml_dsa_key = ml_dsa_key  # the active ML-DSA-44 key's file (Paths.ml_dsa_key_file)
        self._kept = kept  # data/checkpoints/: the checkpoints published before, by size
        self._loaded: dict[str, Signer | None] = {signer.vkey: signer}
        self._loaded_ml: dict[str, Cosigner | None] = {}

    def ml_dsa_private_key(self, key: CosignerKey) -> Cosigner | None:
        """The private half of the log's ML-DSA-44 `key`, if this program still holds it."""
        if key.vkey not in self._loaded_ml:
            found = None
            for path in (self._ml_dsa_key, retired_ml_dsa_key_file(self._private, key.key_id.hex())):
                try:
                    candidate = load_cosigner(path) if path is not None and path.is_file() else None
                except KeyFileError:
                    candidate = None
                if candidate is not None and candidate.key == key:
                    found = candidate
                    break
            self._loaded_ml[key.vkey] = found
        return self._loaded_ml[key.vkey]

    def _kept_line(self, key: CosignerKey, text: str, size: int, earlier: bytes | None) -> str | None:
        """`key`'s line on the checkpoint of `text` as published before (kept in data/checkpoints/,
        or `earlier`, the last release's), if it still verifies."""
        path = self._kept / str(size) if self._kept is not None else None
        for data in (path.read_bytes() if path is not None and path.is_file() else None, earlier):
            line = _line_of(key, text, data) if data is not None else None
            if line is not None:
                return line
        return None

    def _ml_dsa_lines(self, text: str, size: int, earlier: bytes | None) -> list[str]:
        newest = self.ring.newest_ml_dsa_at(size)
        lines = []
        for key in [s.key for s in reversed(self.ring.ml_dsa) if s.covers(size)]:
            # A line kept from before first: the private key is then not needed (nor loaded).
            kept = self._kept_line(key, text, size, earlier)
            private = self.ml_dsa_private_key(key) if kept is None else None
            if kept is not None:
                lines.append(kept)
            elif private is not None:
                lines.append(private.cosign(text, 0))
            elif key == newest:
                raise InputError(
                    [
                        problem(
                            str(self._ml_dsa_key or self._private),
                            f"the checkpoint of {size} entries must be signed by the ML-DSA-44 key {key.fingerprint}, "
                            "whose private key is not here",
                        )
                    ],
                    "cannot sign the ledger's checkpoint",
                )
        return lines

    def private_key(self, key: VerifierKey) -> Signer | None:
        """The private half of `key`, if this program still holds it."""
        if key.vkey not in self._loaded:
            path = retired_key_file(self._private, key.key_id.hex())
            try:
                found = load_key(path) if path.is_file() else None
            except KeyFileError:
                found = None
            self._loaded[key.vkey] = found if found is not None and found.vkey == key.vkey else None
        return self._loaded[key.vkey]

    def for_leaf(self, index: int) -> VerifierKey | None:
        """The key that signs the document of the leaf at `index` (valid for the tree it ends)."""
        valid = self.ring.valid_at(index + 1)
        return valid[-1] if valid else None

    def checkpoint(self, origin: str, size: int, root: bytes, earlier: bytes | None = None) -> bytes:
        """The checkpoint of the tree, signed by the keys valid for `size`; `earlier`, the last
        release's checkpoint, lends the ML-DSA-44 line it has for the same text."""
        text = checkpoint_text(origin, size, root)
        newest = self.ring.newest_at(size)
        # A key revoked since still signs a tree whose leaves all predate its compromise: the
        # hand-over of a later-revoked key is rebuilt as it was first made.
        valid = [s.key for s in reversed(self.ring.spans) if s.covers(size)]
        lines = []
        for key in valid:
            private = self.private_key(key)
            if private is not None:
                lines.append(note_signature_line(private.name, private.key_id, private.sign(text.encode("utf-8"))))
            elif key == newest:
                raise InputError(
                    [
                        problem(
                            str(retired_key_file(self._private, key.key_id.hex())),
                            f"the checkpoint of {size} entries must be signed by {key.fingerprint}, whose private "
                            "key is not here",
                        )
                    ],
                    "cannot sign the ledger's checkpoint",
                )
        return (text + "\n" + "".join(lines + self._ml_dsa_lines(text, size, earlier))).encode("utf-8")


def _line_of(key: CosignerKey, text: str, data: bytes) -> str | None:
    """`key`'s signature line in the note `data`, if the note's text is `text` and the line verifies."""
    try:
        kept_text, lines = split_note(data)
        if kept_text != text or key.name not in verify_cosignatures(data, [key]):
            return None
    except (NoteError, FormatError):
        return None
    return next(
        (note_signature_line(n, raw[:4], raw[4:]) for n, raw in lines if (n, raw[:4]) == (key.name, key.key_id)),
        None,
    )
