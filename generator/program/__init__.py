"""A program's own files, read and changed: where they live (`datadir`), crash-safe changes
(`journal`), the ledger file, methodology versions, the documents the ledger commits to, item
sources and the sealed store, the evaluator's results file, evidence and judge-agreement files, and
what falls due for disclosure. A program module imports core only (and the ledger file the replay
its cache remembers, the one edge named in `generator.architecture.EXCEPTIONS`); never the build or
the site.
"""
