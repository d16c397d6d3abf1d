"""The monitor, a program of its own (`transparency monitor SITE`): follows a published log over time,
entry by entry. It imports core, its own state (`state/monitor_state.py`) and the verifier's
`__all__`.
"""
