"""The foundations every other layer stands on: the generator's exception tree, canonical JSON, exact digests, every
site path (`layout`), progress callbacks, strict reading of the operator's YAML and JSON, the signing key and which
key signs what after a rotation, making Merkle proofs, reading a file someone else chose, and the build's
housekeeping (freed memory, leftovers). A core module imports only other core modules, the standard library, its
dependencies and the verifier's `__all__`.
"""
