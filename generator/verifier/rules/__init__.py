"""The program's rules: methodology parameters and the scoring engine, judge agreement and label sets, subjects, runs,
withdrawals, the ledger replay, answers, lineage, score edits, evidence, certificates and their recomputation,
revocations. A rules module imports core, tlog and rules.
"""
