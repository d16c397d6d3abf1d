"""generator/state/: what the generator keeps between runs."""
