"""The lm-evaluation-harness importer (`transparency results from-lm-eval`): the results JSON and the
logged samples lm-eval writes turned into a run-results file. Plain JSON, read without lm-eval
installed. It imports core, program, importers.common and the verifier's `__all__` only.
"""
