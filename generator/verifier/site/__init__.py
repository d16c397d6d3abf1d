"""A site checked as a whole: the release files, the downloadable copy, history, what the ledger publishes, certificate
and agreement files, every file accounted for, the checks in their order and the command line of `verify.py`. It may
import every other part of the verifier.
"""
