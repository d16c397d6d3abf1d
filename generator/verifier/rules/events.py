"""The ledger's events as the replay keeps them (format v1 §4): one frozen record per kind, with the
leaf index and time it was recorded at."""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Gate:
    id: str
    name: str
    public: bool
    index: int
    at: str


@dataclass(frozen=True)
class MethodologyEvent:
    version: str
    sha256: str
    index: int
    at: str


@dataclass(frozen=True)
class Commit:
    id: str
    gate: str
    commitment: str
    index: int
    at: str


@dataclass(frozen=True)
class Reveal:
    id: str
    reason: str
    note: str
    index: int
    at: str


@dataclass(frozen=True)
class RunEvent:
    id: str
    sha256: str
    subject: dict[str, Any]
    gate: str
    index: int
    at: str


@dataclass(frozen=True)
class CertificateEvent:
    serial: str
    run: str
    sha256: str
    index: int
    at: str
