"""Building a release: `gather` reads and validates every input once and derives the site's context,
`release_continuity` checks what a release owes the last (`previous_release`, the last release read
back), `cosigning` asks the witnesses, and the rest write the artifacts through the staging `writer`
(keys, ledger documents, signed checkpoint, manifest, history and proofs, JSON Schemas, the
downloadable archive). A build module imports core, where the program's files lie and its ledger,
one cache and the witness's protocol; never the site's pages.
"""
