"""The mirror, a program of its own (`transparency mirror follow SITE`): keeps a copy of a published
log's tiles and cosigns (c2sp.org/tlog-mirror) only a checkpoint whose every entry it durably
stored. It imports core, the monitor's reading of a site (`monitor/site_source.py`,
`monitor/read_ahead.py`) and the verifier's `__all__`.
"""
