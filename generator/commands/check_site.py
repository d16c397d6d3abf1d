"""`transparency verify SITE`: the site checked with this installation's verifier (the code every
site ships as verify.py), an unreadable site or a bad --key turned into the generator's input error."""

from __future__ import annotations

from pathlib import Path

from generator.core.generator_errors import InputError, problem
from generator.verifier import FormatError, Report, SiteUnreadable, verify_site


def check_site(site: Path, key: str | None) -> Report:
    """The verifier's report on `site`, with the signing key pinned to `key` when given (a verifier
    key or SHA256:<hex>). InputError when the site cannot be read or the key is malformed."""
    try:
        return verify_site(site, key)
    except SiteUnreadable as e:
        # The verifier's message already starts with the site's name, which the problem names too.
        raise InputError([problem(str(site), str(e).removeprefix(f"{site}: "))], "cannot read the site") from None
    except FormatError as e:
        raise InputError([problem("--key", str(e))], "bad --key") from None
