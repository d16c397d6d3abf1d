"""Unit tests: one module or package at a time, in folders named for the package they test (core/,
verifier/, state/, site/, witness/, monitor/)."""
