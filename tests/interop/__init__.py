"""Interoperability: the site read by other implementations of its formats (Go's sumdb/note and
sumdb/tlog, with the Go program in go/), and the witness served to a C2SP tlog-witness client written
from the specifications alone (tests/support/spec_witness_client.py)."""
