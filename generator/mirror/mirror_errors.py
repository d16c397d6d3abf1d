"""The mirror's two errors: a checkpoint it refuses to cosign (exit status 1), and a site, a copy
on disk or an argument it cannot use (exit status 2). Either way its checkpoint is left as it was."""

from __future__ import annotations

from generator.core.generator_errors import TransparencyError


class MirrorError(TransparencyError):
    """The site, the mirror's folder or an argument cannot be used (exit status 2)."""


class Refused(MirrorError):
    """A checkpoint the mirror will not cosign: one its pinned keys do not open, a smaller tree, a
    fork of the tree it holds, or tiles that do not hold the tree the checkpoint signs (exit status 1)."""

    exit_code = 1
