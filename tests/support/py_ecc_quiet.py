"""PyPI py_ecc imported without its side effect: on its first import it raises the recursion limit
to 100,000, which turns the deep recursion some tests feed on purpose into a crash of the whole
process instead of a RecursionError. The suite imports this module before anything imports py_ecc
(tests/conftest.py), so the limit is put back once and for all."""

import sys

_LIMIT = sys.getrecursionlimit()
import py_ecc  # noqa: E402, F401

sys.setrecursionlimit(_LIMIT)
