"""Removing what a build no longer needs beside its work, not in its way.

A folder of tens of thousands of files (the last release after the swap, the search index's
scratch site) takes seconds to remove, nearly all of it in system calls that release the GIL:
a thread removes it while the build goes on, and the build waits for it before it returns. A
kill meanwhile leaves a `.<out>.staging-*` folder, which the next build removes first
(generator.build.staging.remove_leftovers).
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path


class Cleanup:
    def __init__(self) -> None:
        self._threads: list[threading.Thread] = []

    def remove(self, path: Path) -> None:
        """Remove the folder `path` (already out of the site's way) in the background."""
        t = threading.Thread(target=shutil.rmtree, args=(path,), kwargs={"ignore_errors": True}, name="cleanup")
        t.start()
        self._threads.append(t)

    def wait(self) -> None:
        """Every removal asked for is done."""
        for t in self._threads:
            t.join()
        self._threads.clear()
