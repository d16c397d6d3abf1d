"""The Harbor importer (`transparency results from-harbor`): a Harbor job's folder (its trials' results,
the verifier's rewards, the agents' answers and trajectories) turned into a run-results file. Plain
JSON, read without Harbor installed. It imports core, program, importers.common and the verifier's
`__all__` only.
"""
