"""The monitor, a program of its own (`transparency monitor SITE`): follows a published log over time, entry by entry,
with its own state. It imports core and the verifier's `__all__` only.
"""
