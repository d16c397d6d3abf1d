"""The witness, a program of its own: a C2SP tlog-witness (`add-checkpoint`, the HTTP server) and a
witness reading a site (offline cosigning, `--rules`). It imports core, its own state
(`state/witness_state.py`) and the verifier's `__all__`; the build uses its protocol to ask for
cosignatures.
"""
