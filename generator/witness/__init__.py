"""The witness, a program of its own: a C2SP tlog-witness (its state, `add-checkpoint`, the HTTP server) and a witness
reading a site (offline cosigning, `--rules`). It imports core and the verifier's `__all__` only; the build uses its
protocol to ask for cosignatures.
"""
