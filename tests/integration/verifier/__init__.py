"""verify.py as an auditor runs it: its routes, its policy, its memory, and the bundled file itself."""
