"""The keys a build signs with (format v2): each artifact by the key the ledger made valid for
it. A certificate keeps the signature of the key that was active when it was issued; a
checkpoint is signed by every key valid for its size whose private half is here, the newest
first, and must be signed by the newest: the hand-over checkpoint of a rotation gets both.
"""

from __future__ import annotations

from pathlib import Path

from generator.core.generator_errors import InputError, KeyFileError, problem
from generator.core.signing_key import Signer, load_key, retired_key_file
from generator.verifier import KeyRing, VerifierKey, checkpoint_text, note_signature_line


class BuildKeys:
    def __init__(self, private: Path, signer: Signer, ring: KeyRing) -> None:
        self.signer = signer
        self.ring = ring
        self._private = private
        self._loaded: dict[str, Signer | None] = {signer.vkey: signer}

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

    def checkpoint(self, origin: str, size: int, root: bytes) -> bytes:
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
        return (text + "\n" + "".join(lines)).encode("utf-8")
