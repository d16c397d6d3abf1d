"""The mirror's copy of a log on disk and the parts of one update."""
