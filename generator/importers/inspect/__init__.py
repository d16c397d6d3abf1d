"""The Inspect importer (`transparency results from-inspect`): an Inspect evaluation log turned into a run-results
file. It imports core, program and the verifier's `__all__` only.
"""
