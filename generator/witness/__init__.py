"""The witness, a program of its own: a C2SP tlog-witness (`add-checkpoint`, `sign-subtree`, the
read API, the HTTP server), the logs it knows (a logs file, the witness network's log list) and a
witness reading a site (offline cosigning, `--rules`). It imports core, its own state
(`state/witness_state.py`) and the verifier's `__all__`; the build uses its protocol to ask for
cosignatures. The log list's format is the verifier's (`generator/verifier/tlog/log_list.py`), which
the build also uses to publish the program's own entry.
"""
