"""generator/witness/: the witness server against c2sp.org/tlog-witness."""
