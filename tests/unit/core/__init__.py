"""generator/core/: the strict readers, the YAML loaders and the signing key's fast paths."""
