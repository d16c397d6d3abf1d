"""How long work reports how far it got: a callable the CLI prints and the library ignores."""

from __future__ import annotations

from collections.abc import Callable

# (phase, done, total): total 0 when it is not known in advance
Progress = Callable[[str, int, int], None]
