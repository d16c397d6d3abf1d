"""Everything the generator keeps between runs, each in a file of the private cache written whole or not at all
(`cache_file`): the replayed ledger, its Merkle tree, the certificates already recomputed, each committed item's
digest, what each page was made from, and the record of the last build. State modules import core only, apart from
the two exceptions named in `generator.architecture`.
"""
