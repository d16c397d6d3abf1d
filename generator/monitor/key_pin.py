"""Which key the monitor trusts for a log: the --key pin (a verifier key or a SHA256 fingerprint),
or on first contact the active key of the site's keys.json, its rules checked and its fingerprint
said aloud; later runs trust only the key remembered. A key or a look-alike origin of another log
the same state folder remembers is that log, never a first contact."""

from __future__ import annotations

from collections.abc import Iterable

from generator.core import layout
from generator.monitor.monitor_errors import Inconsistent, Unreadable, problem_text
from generator.monitor.site_source import Fetch
from generator.state.monitor_state import Remembered
from generator.verifier import (
    ML_DSA_KEYS_MEMBER,
    FormatError,
    VerifierKey,
    check_keys,
    is_hex64,
    key_rows,
    other_log_problems,
    parse_canonical,
    parse_vkey,
    show,
)

_MAX_KEYS_BYTES = 1 << 20


def parse_pin(pin: str | None) -> VerifierKey | str | None:
    """--key: a verifier key, or a `SHA256:<hex>` fingerprint of the key that keys.json must list."""
    if pin is None:
        return None
    pin = pin.strip()
    if pin.startswith("SHA256:"):
        if not is_hex64(pin[7:]):
            raise Unreadable("--key: a fingerprint is SHA256: followed by 64 lowercase hex digits")
        return pin
    try:
        return parse_vkey(pin)
    except FormatError as e:
        raise Unreadable(f"--key: {e}") from None


def trusted_key(
    fetch: Fetch, origin: str, pin: VerifierKey | str | None, remembered: Remembered | None
) -> tuple[VerifierKey, str | None]:
    """The key that must sign today's checkpoint, and on first contact where it came from."""
    if remembered is not None:
        # KEY ROTATION HOOK. Until the format's key events land here, any key other than the pinned
        # one is an inconsistency. With them the pinned key stays the root of trust: its successor
        # is learnt from the ledger's key-rotation leaf under the hand-over checkpoint the pinned
        # key signed, and is what write_state pins next; never from keys.json alone.
        if pin is not None and not pin_matches(pin, remembered.key):
            raise Inconsistent(
                [
                    f"--key {pin_text(pin)} is not the key this monitor pinned for {origin}: "
                    f"{remembered.key.vkey} ({remembered.key.fingerprint}). A key change is an inconsistency; "
                    "to trust another key on purpose, move the state file away"
                ]
            )
        return remembered.key, None
    if isinstance(pin, VerifierKey):
        if pin.name != origin:
            raise Inconsistent([f"{layout.CHECKPOINT} is a checkpoint of {origin}, but --key is a key of {pin.name}"])
        return pin, "the key given with --key"
    key = site_key(fetch, origin)
    if pin is not None and not pin_matches(pin, key):
        raise Inconsistent(
            [f"the site's active key {key.vkey} ({key.fingerprint}) is not the key given with --key {pin}"]
        )
    return key, "the key pinned with --key, as the site's keys.json lists it" if pin else "the site's keys.json"


def pin_matches(pin: VerifierKey | str, key: VerifierKey) -> bool:
    return pin == key.fingerprint if isinstance(pin, str) else (pin.name, pin.public_key) == (key.name, key.public_key)


def pin_text(pin: VerifierKey | str) -> str:
    return pin if isinstance(pin, str) else pin.vkey


def site_key(fetch: Fetch, origin: str) -> VerifierKey:
    """The active key of the site's keys.json, its rules checked (format v1 §2)."""
    data = fetch(layout.KEYS, _MAX_KEYS_BYTES)
    if data is None:
        raise Unreadable(f"no {layout.KEYS}: the site names no key to trust; pin one with --key")
    try:
        doc = parse_canonical(data)
    except FormatError as e:
        raise Inconsistent([f"{layout.KEYS}: {e}"]) from None
    shape = check_keys(doc, ("keys", "origin", "type", "v"), (ML_DSA_KEYS_MEMBER,))
    if shape or doc["type"] != "keys" or doc["v"] != 1:
        raise Inconsistent([f"{layout.KEYS}: not a v1 keys document"])
    if doc["origin"] != origin:
        raise Inconsistent([f"{layout.KEYS}: origin {show(doc['origin'])} is not the checkpoint's {origin}"])
    rows, problems = key_rows(doc["keys"], origin, published=True)
    if problems:
        raise Inconsistent([f"{layout.KEYS}: {problem_text(p)}" for p in problems])
    return next(r.key for r in rows if r.status == "active")  # key_rows requires exactly one


def refuse_another_log(origin: str, keys: Iterable[VerifierKey], known: dict[str, list[bytes]]) -> None:
    """The same site re-served under another origin (a look-alike, or any name at all with a key
    this monitor pinned for another log) is not a first contact: it is that log."""
    problems = other_log_problems(origin, [k.public_key for k in keys], known)
    if problems:
        raise Inconsistent(problems)
