"""The systems a program evaluates, and where each of their certificates stands today.

A system is a run spec's subject, known by its id (format v1 §6: one id, one name, for good). Its page
gathers every run registered for it, on every gate, with each certificate's standing: valid,
revoked, expired, or not a certificate at all but a result (a run that was not certified). The
standing is read, like everything on the pages, from what the build has already checked: the
certificate's verdict and expiry, and the ledger's revocations, judged at the release's time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from generator.core import layout
from generator.site.views.view_models import VERDICT_WORDS, CertificateRow, RunRow

NOT_CERTIFIED = "Not certified (a result, not a certificate)"


@dataclass(frozen=True)
class Standing:
    code: str  # views.validity's word: a class name for the eye, never the only signal
    words: str
    expires: str  # the expiry, in words


def standing(row: CertificateRow) -> Standing:
    """Where a certificate stands as of the release (the row's `validity`: a revocation or an
    expiry outranks a certified verdict). A run that was not certified holds no certificate to
    be valid or to expire: it is called a result."""
    code = row.validity
    if row.verdict != "certified":
        return Standing(code, NOT_CERTIFIED, "not applicable: a result does not expire")
    if row.expires_at is None:
        expires = "never"
    else:
        expires = f"{row.expires_at} (expired)" if row.expired else row.expires_at
    words = {"revoked": f"Revoked on {row.revoked_at}", "expired": f"Expired on {row.expires_at}"}.get(code, "Valid")
    return Standing(code, words, expires)


@dataclass(frozen=True, kw_only=True)  # keyword-only: after the row's fields, defaults or not
class ListedCertificate(CertificateRow):
    """A row of the certificates list, with its standing and its system's page."""

    standing: Standing
    system_page: str


def listed_certificates(rows: Iterable[CertificateRow], subjects: dict[str, str]) -> list[ListedCertificate]:
    """`subjects`: each certificate's subject id, by serial."""
    names = [f.name for f in dataclasses.fields(CertificateRow)]  # asked once, not once a row
    return [
        ListedCertificate(
            **{name: getattr(row, name) for name in names},
            standing=standing(row),
            system_page=layout.system_page(subjects[row.serial]),
        )
        for row in rows
    ]


@dataclass(frozen=True)
class SystemRun:
    """A run as a system's page and an item's page show it: its row on the runs pages, and
    its certificate's verdict and standing once it is decided."""

    run: RunRow
    system_page: str
    verdict_words: str  # the verdict, or that the run is open
    standing: Standing | None  # None while the run is open


def system_runs(run_rows: Iterable[RunRow], certificates: Iterable[CertificateRow]) -> list[SystemRun]:
    """Every run (in the order of `run_rows`) with its certificate's standing. Linear."""
    by_serial = {c.serial: c for c in certificates}
    out = []
    for row in run_rows:
        cert = by_serial.get(row.certificate) if row.certificate else None
        out.append(
            SystemRun(
                row,
                layout.system_page(row.subject_id),
                VERDICT_WORDS.get(cert.verdict, cert.verdict) if cert else "Open: not yet decided",
                standing(cert) if cert else None,
            )
        )
    return out


@dataclass(frozen=True)
class SystemView:
    id: str
    name: str
    versions: tuple[str, ...]  # in the order they were first registered
    organizations: tuple[str, ...]
    page: str
    runs: tuple[SystemRun, ...]  # in ledger order
    decided: int  # runs with a certificate or result
    valid: int  # certificates valid as of the release
    latest: SystemRun | None  # the run of the system's latest certificate

    @property
    def latest_text(self) -> str:
        """The latest certificate's verdict, its gate and, for a certificate, its standing."""
        latest = self.latest
        if latest is None or latest.standing is None:
            return "no verdict yet"
        text = f"{latest.verdict_words} on {latest.run.gate_name}"
        if latest.standing.words == NOT_CERTIFIED:
            return text
        words = latest.standing.words
        return f"{text}: {words[:1].lower()}{words[1:]}"


def systems(runs: Sequence[SystemRun], certificate_order: dict[str, int]) -> list[SystemView]:
    """Every system that has a run, sorted by name (case folded), then id: the order a reader
    looks a name up in. `certificate_order`: each serial's place in ledger order, which tells
    a system's latest certificate. Linear, plus the sort."""
    grouped: dict[str, list[SystemRun]] = {}
    for r in runs:
        grouped.setdefault(r.run.subject_id, []).append(r)
    out = []
    for sid, members in grouped.items():
        members.sort(key=lambda r: r.run.index)
        decided = [(certificate_order[c], r) for r in members if (c := r.run.certificate) in certificate_order]
        latest = max(decided, key=lambda d: d[0])[1] if decided else None
        out.append(
            SystemView(
                id=sid,
                name=members[0].run.subject_name,
                versions=tuple(dict.fromkeys(r.run.subject_version for r in members)),
                organizations=tuple(dict.fromkeys(r.run.organization for r in members)),
                page=layout.system_page(sid),
                runs=tuple(members),
                decided=len(decided),
                valid=sum(1 for _, r in decided if r.standing is not None and r.standing.code == "valid"),
                latest=latest,
            )
        )
    out.sort(key=lambda s: (s.name.casefold(), s.name, s.id))
    return out
