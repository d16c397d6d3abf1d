"""generator/verifier/: its rules, readers and log formats called directly, without a site."""
