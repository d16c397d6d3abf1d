"""A program's own files, read and changed: where they live (`datadir`), crash-safe changes (`journal`), the ledger
file, methodology versions, the documents the ledger commits to, item sources and the sealed store, the evaluator's
results file, evidence and judge-agreement files, and what falls due for disclosure. A program module imports core
and the state kept between runs, never the build or the site.
"""
