"""The command line of verify.py (SPEC §8): `python3 -P verify.py [SITE] [--key K] [--json]`."""

import argparse
import os
import sys
from collections.abc import Sequence

from generator.verifier.errors import FormatError, SiteUnreadable
from generator.verifier.isolation import foreign_modules, own_file
from generator.verifier.site import verify_site
from generator.verifier.sodium import NACL
from generator.verifier.text import printable, safe_json


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="verify.py",
        description="Verify a transparency site offline: every hash, signature, Merkle root, "
        "ledger rule and reveal, and every certificate recomputed. Needs only Python 3.11+ and PyNaCl. "
        "Run a copy obtained from the project, not the site's own, as: python3 -P verify.py SITE "
        "(-P keeps Python from importing modules from the site's folder).",
        epilog="Exit status: 0 every check passed, 1 at least one check failed, 2 the site "
        "could not be read or the arguments are wrong.",
    )
    parser.add_argument(
        "site", nargs="?", default=None, help="the site directory (default: the directory holding this file)"
    )
    parser.add_argument(
        "--key",
        metavar="VKEY_OR_FINGERPRINT",
        help="pin the signing key: a signed-note verifier key or 'SHA256:<hex>'; without it the key shipped in "
        "the site is trusted",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--debug", action="store_true", help="on an internal error of the verifier, print its traceback too"
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    site = args.site if args.site is not None else os.path.dirname(own_file())
    if os.path.abspath(__file__) == own_file():  # run as verify.py: the site's folder is near
        hijacked = foreign_modules([site, os.path.dirname(own_file())])
        if hijacked:
            for name, origin in hijacked:
                print(
                    f"FAIL {printable(origin)}: module {printable(name)} was loaded from inside the site or the "
                    "current folder, "
                    "not from Python's own library: a site's code could have run; refusing to verify",
                    file=sys.stderr,
                )
            print(
                "Run the verifier as documented: python3 -P verify.py SITE, with a verify.py obtained from the "
                "project.",
                file=sys.stderr,
            )
            return 1
    if not NACL:
        print(
            "verify.py: PyNaCl is required: python3 -m pip install pynacl (or apt install python3-nacl)",
            file=sys.stderr,
        )
        return 2
    try:
        report = verify_site(site, args.key, debug=args.debug)
    except (SiteUnreadable, OSError) as e:
        print(f"verify.py: {printable(str(e))}", file=sys.stderr)
        return 2
    except FormatError as e:
        print(f"verify.py: --key: {printable(str(e))}", file=sys.stderr)
        return 2
    print(safe_json(report.to_json()) if args.json else report.render())
    for trace in report.debug:
        print(trace, file=sys.stderr)
    return 0 if report.ok else 1


if __name__ == "__main__":
    # A terminal that cannot show a character gets an escape, never a traceback.
    for _stream in (sys.stdout, sys.stderr):
        if hasattr(_stream, "reconfigure"):
            _stream.reconfigure(errors="backslashreplace")
    sys.exit(main())
