"""Everything the generator and its programs keep between runs, each module named for it: a
`*_cache` is a file of the private `cache/` folder written whole or not at all (`cache_file`), or
record by record where each record checks itself, a shortcut whose loss costs time and never a
result (the replayed ledger, its Merkle tree, the certificates already recomputed, each
committed item's digest, where each item source's rows are, what each page was made from, which
download archive was written, the record of the last build); a `*_state` is a program's own
memory, which it cannot rebuild (the monitor's pinned key and last checkpoint per log, the
witness's last cosigned checkpoint per log). A state module imports core and, of a program's
files, where they lie, the sealed store and the item sources as a commit read them.
"""
