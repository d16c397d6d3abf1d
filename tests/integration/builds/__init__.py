"""The build as a whole: deterministic, incremental, atomic, crash-safe, and its download."""
