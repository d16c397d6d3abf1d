"""The test suite. Each folder holds one kind of test (see docs/testing.md): unit/ (one module or package at
a time, mirroring generator/), integration/ (the real commands on programs built in temporary folders),
adversarial/ (tampered, hostile, fuzzed and leaking sites), browser/ (check.js under Node and the site in
Chromium), interop/ (other implementations of the formats), vectors/ (published test vectors), structure/ (the
shape of the code and its packaging) and docs/ (the documents checked against the code). Shared helpers are in
support/, fixtures in conftest.py; no test module imports another."""
