"""Interoperability: the site read by other implementations of its formats (Go's sumdb/note and
sumdb/tlog, with the Go program in go/)."""
