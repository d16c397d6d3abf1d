"""A ledger event in a few plain words, and the page that shows what it is about."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from generator.core import layout
from generator.verifier import FormatError, parse_cosigner_vkey, parse_vkey


def _fingerprint(vkey: str) -> str:
    """A log key's fingerprint, of either type, with the type named for an ML-DSA-44 key."""
    try:
        return parse_vkey(vkey).fingerprint
    except FormatError:
        return f"{parse_cosigner_vkey(vkey).fingerprint} (ML-DSA-44)"


_EVENT_TEXT: dict[str, Callable[[dict[str, Any]], str]] = {
    "gate": lambda e: f"Gate {e['id']} declared ({'public' if e['public'] else 'secret'}): {e['name']}",
    "methodology": lambda e: f"Methodology {e['version']} published",
    "commit": lambda e: f"Item {e['id']} committed to gate {e['gate']}",
    "reveal": lambda e: f"Item {e['id']} revealed ({e['reason']})",
    "run": lambda e: f"Run {e['id']} registered for {e['subject'].get('name')} on gate {e['gate']}",
    "certificate": lambda e: f"Certificate {e['serial']} issued for run {e['run']}",
    "revocation": lambda e: f"Certificate {e['serial']} revoked",
    "run-withdrawn": lambda e: f"Run {e['run']} withdrawn, never to be run",
    "draw": lambda e: f"Beacon round {e['round']} drew the {len(e['items'])} items of run {e['run']}",
    "retirement-draw": lambda e: (
        f"Beacon round {e['round']} drew {len(e['items'])} sealed item(s) to retire, as scheduled"
    ),
    "label-set": lambda e: f"Blind human labels {e['id']} committed for run {e['run']}",
    "key-rotation": lambda e: f"Signing key rotated to {_fingerprint(e['vkey'])}",
    "key-revocation": lambda e: f"Key {_fingerprint(e['vkey'])} revoked (compromised {e['compromised_at']})",
    "key-addition": lambda e: f"ML-DSA-44 signing key {_fingerprint(e['vkey'])} added beside the Ed25519 key",
}


_EVENT_PAGE: dict[str, Callable[[dict[str, Any]], str]] = {
    "reveal": lambda e: layout.item_page(e["id"]),
    "methodology": lambda e: layout.methodology_page(e["version"]),
    "certificate": lambda e: layout.certificate_page(e["serial"]),
    "revocation": lambda e: layout.certificate_page(e["serial"]),
    "retirement-draw": lambda e: layout.item_page(e["items"][0]) if e["items"] else layout.HOME,
    "key-rotation": lambda e: layout.KEYS_PAGE,
    "key-revocation": lambda e: layout.KEYS_PAGE,
    "key-addition": lambda e: layout.KEYS_PAGE,
}


def event_summary(leaf: dict[str, Any]) -> str:
    """One line of plain words for a ledger event, for the home page."""
    return _EVENT_TEXT[leaf["type"]](leaf)


def event_link(leaf: dict[str, Any]) -> str | None:
    """The page that shows what an event is about, if there is one."""
    page = _EVENT_PAGE.get(leaf["type"])
    return page(leaf) if page else None
