"""Keeping the site's code out of the verifier.

Python puts the folder of the script it runs first on sys.path, and verify.py runs from inside
the site it checks: a site shipping `json.py` or `nacl/` would otherwise replace the modules
the verifier imports with its own code. `-P` (Python 3.11+) leaves that folder out; this module
does it too, for the plain `python3 verify.py`, before any other import, and afterwards finds
any module that was loaded from the site anyway (through PYTHONPATH, say).

In the bundled verify.py this module comes first, before every other import, and runs its
`__main__` blocks; imported as part of the package it only offers `foreign_modules`. No
`from __future__` import in any module of the verifier either: it is a real import of a module
named __future__, looked up on sys.path like any other.
"""

import sys

if __name__ == "__main__" and sys.version_info < (3, 11):
    # Before anything an older Python cannot run (sys.flags.safe_path is 3.11's): a verifier that
    # cannot run says so and exits 2, never 1, the code of a failed verification.
    sys.stderr.write(
        f"verify.py: cannot run: it needs Python 3.11 or newer, and {sys.executable} is "
        f"{sys.version_info[0]}.{sys.version_info[1]}; run it with a newer one: python3.11 -P verify.py SITE "
        "(or later)\n"
    )
    sys.exit(2)

if __name__ == "__main__" and not sys.flags.safe_path and sys.path:
    del sys.path[0]

import os  # already loaded (frozen) by every interpreter that runs a script


def _real(path: str) -> str:
    try:
        return os.path.realpath(path or ".")
    except (OSError, ValueError):
        return path


def _untrusted_dirs() -> set[str]:
    """This file's folder and the working directory: a site's folder, when run as documented."""
    dirs = {_real(os.path.dirname(os.path.abspath(__file__)))}
    try:  # noqa: SIM105 - contextlib is not imported yet, on purpose
        dirs.add(_real(os.getcwd()))
    except OSError:  # the working directory was removed
        pass
    return dirs


if __name__ == "__main__":
    # PYTHONPATH or an odd launcher can still name the current folder ('' or '.') or this one.
    _UNTRUSTED = _untrusted_dirs()
    sys.path[:] = [p for p in sys.path if p not in ("", ".") and _real(p) not in _UNTRUSTED]


def own_file() -> str:
    """The verify.py this code is: this very file in the bundle, else the bundle the project
    generates beside the package (generator/verify.py, two folders up from this module)."""
    here = os.path.abspath(__file__)
    if os.path.basename(here) == "verify.py":
        return here
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(here))), "verify.py")


def interpreter_dirs() -> list[str]:
    """The running interpreter's own installation: its prefixes, that is a virtual environment's
    folder (whose site-packages the auditor's own pip filled) and the Python it was made from."""
    return sorted({_real(p) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix) if p})


def interpreter_folder_in(root: str) -> str | None:
    """The running interpreter's prefix (a virtual environment's folder), as a '/' path relative
    to `root`, when it lies strictly inside that folder; else None. The site's walk leaves it
    out: it holds the auditor's Python and PyNaCl, not files of the site."""
    base, prefix = _real(root), _real(sys.prefix)
    if prefix == base or not path_within(prefix, base):
        return None
    return os.path.relpath(prefix, base).replace(os.sep, "/")


def path_within(entry: str, folder: str) -> bool:
    """Whether path `entry` is `folder` or lies under it (both as given: resolve them first)."""
    return entry == folder or entry.startswith(folder.rstrip(os.sep) + os.sep)


def foreign_modules(untrusted: list[str]) -> list[tuple[str, str]]:
    """Loaded modules that came from the current folder, or from inside an untrusted folder
    (the site, this file's folder), as (name, file). A module's search-path entry is found by
    walking up from its file once per dotted part of its name.

    The innermost folder holding the entry decides: a module of the running interpreter's own
    installation (interpreter_dirs) is not the site's code even when that installation, a virtual
    environment the auditor made, lies inside the site's folder; but a site inside that
    installation is still the site, and anything else inside the site is refused. Whoever runs a
    Python the site shipped has already run the site's code: no check made from inside can undo
    that, which is why the documentation has the auditor make their own environment."""
    roots = [_real(d) for d in untrusted]
    cwd = _untrusted_dirs()
    own = interpreter_dirs()
    found = []
    for name, module in sorted(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None) if spec is not None and getattr(spec, "has_location", False) else None
        if name == "__main__" or not isinstance(origin, str):
            continue
        entry = os.path.dirname(_real(origin))
        for _ in range(name.count(".") + (os.path.basename(origin).startswith("__init__.") and 1)):
            entry = os.path.dirname(entry)
        refused = max([len(r) for r in roots if path_within(entry, r)] + [len(entry) if entry in cwd else -1])
        trusted = max([len(p) for p in own if path_within(entry, p)], default=-1)
        # Both are folders holding the entry, so the longer path is the inner one; a tie is refused.
        if refused >= 0 and refused >= trusted:
            found.append((name, origin))
    return found
