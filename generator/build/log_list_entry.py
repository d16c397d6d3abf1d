"""The program's entry in the witness network's log list (`ledger/log-list.txt`), written by every
release for witness operators.

Before a public witness cosigns a log, the log must be in the list the witness reads; the
program's operator hands this entry to witness operators (or to the network's maintainers).
It is the witness network's format (`logs/v0`, generator/verifier/tlog/log_list.py), so the file
itself is a log list a witness can read (`transparency witness serve --log-list`), and the
verifier checks it against keys.json. One entry: the log's active Ed25519 key, `origin none`
(the key is named by the origin), no bastion, program.yaml's `witness_qpd` requests a day and its
`contact` (by default the operator, or else the site's URL). The ML-DSA-44 key, if the log has
one, is not listed: the format does not say that a log may appear twice, the network asks logs
for an Ed25519 key, and every checkpoint carries that key's signature.
"""

from __future__ import annotations

from generator.build.gather import SiteContext
from generator.build.writer import SiteWriter
from generator.core import layout
from generator.verifier import LOG_LIST_HEADER, FormatError, program_log_list_entry

HEADER_COMMENT = """\
# This log's entry in the witness network's log list (its logs/v0 format).
# A witness cosigns the log once its operator adds the entry below to the list the witness
# reads; this file is itself such a list (transparency witness serve --log-list FILE).
# Only the active Ed25519 key is listed: every checkpoint carries its signature. After a key
# rotation the entry changes: take it again from the site.
"""


def contact_of(ctx: SiteContext, site_url: str) -> str:
    """program.yaml's `contact`; else its `operator` on one line; else the site's URL."""
    if ctx.program.contact:
        return ctx.program.contact
    operator = " ".join(ctx.program.operator.split())
    return operator if operator and operator.isprintable() else site_url


def log_list_text(ctx: SiteContext, site_url: str) -> str:
    """The published file: the comment, `logs/v0` and the log's entry (FormatError if the entry
    cannot be written: an origin longer than the format's 255 bytes)."""
    active = next(k for k in ctx.public_keys if k.status == "active")
    entry = program_log_list_entry(active.vkey, ctx.origin, ctx.program.witness_qpd, contact_of(ctx, site_url))
    return f"{HEADER_COMMENT}{LOG_LIST_HEADER}\n\n{entry}"


def write_log_list(ctx: SiteContext, w: SiteWriter, site_url: str) -> None:
    """`ledger/log-list.txt`; a warning instead when the log cannot be listed."""
    try:
        text = log_list_text(ctx, site_url)
    except FormatError as e:
        ctx.warnings.append(f"{layout.LOG_LIST} not published: the log cannot be listed in a log list ({e})")
        return
    w.write(layout.LOG_LIST, text.encode("utf-8"))
