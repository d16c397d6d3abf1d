"""Public-key primitives the verifier needs beyond Ed25519, written out in the standard library:
ML-DSA-44 (a log's and a witness's post-quantum signatures), BLS12-381 (a randomness beacon's
signatures), DER, RSA and ECDSA (a timestamp authority's tokens).

Each is written for verification only, from its published specification, and tested against
that specification's vectors and an independent implementation. Nothing here is constant-time:
a verifier handles public values only.
"""
