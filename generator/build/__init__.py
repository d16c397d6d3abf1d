"""Building a release: `gather` reads and validates every input once and derives the site's context, `cosigning` asks
the witnesses, and the rest write the artifacts through the staging `writer` (keys, ledger documents, signed
checkpoint, manifest, history and proofs, JSON Schemas, the downloadable archive) after checking what a release owes
the last. A build module imports core, program, state and the witness's protocol; never the site's pages.
"""
