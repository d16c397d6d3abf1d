"""What the verifier remembers between runs: the last checkpoint per log origin, a replayed ledger saved whole
(snapshots), and the last release verified. A memory module imports core, tlog and rules.
"""
