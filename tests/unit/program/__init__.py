"""generator/program/: reading the program's own files (the ledger read from its end)."""
