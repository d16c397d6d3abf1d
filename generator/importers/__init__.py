"""Importers, programs of their own that turn another tool's output into a program's input files. Each imports core,
program and the verifier's `__all__` only.
"""
