"""Handing freed memory back to the system between the build's two large states.

The generator's state (a million-item ledger replayed, the tree, every certificate's record) is
freed before the verifier builds its own; but the C allocator keeps freed blocks for reuse, so
the process would hold both at once. glibc's malloc_trim returns them. Elsewhere (another C
library, another system) this does nothing, and only the figure differs.
"""

from __future__ import annotations

import ctypes
import gc


def release() -> None:
    gc.collect()
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own C library
    except (OSError, AttributeError):
        return
    trim.argtypes = [ctypes.c_size_t]
    trim(0)
