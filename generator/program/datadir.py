"""Where a program's files live, and the program file itself.

A program has two directories. The data directory is public: it can sit in a public
repository and everything the site shows is built from it. The private directory holds the
signing key, the item sources and the sealed reveal documents (with their salts); it is found
through --private or TRANSPARENCY_PRIVATE and defaults to `<data>/private`, which is right only
for the demo (whose key is published on purpose): `unsafe_private_place` says why anywhere inside
the data directory or a git work tree is wrong for a real program.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.core import layout
from generator.core.generator_errors import InputError, problem
from generator.core.strict_input import load_data_file, load_json
from generator.verifier import PUBLISHED_PRIVATE_KEYS, Problem, invisible_characters, is_origin, key_rows

__all__ = [
    "ENV_DATA",
    "ENV_PRIVATE",
    "PUBLISHED_PRIVATE_KEYS",
    "Paths",
    "Program",
    "PublicKey",
    "load_program",
    "load_public_keys",
    "unsafe_private_place",
]

ENV_DATA = "TRANSPARENCY_DATA"
ENV_PRIVATE = "TRANSPARENCY_PRIVATE"

PROGRAM_KEYS = (
    "name",
    "origin",
    "description",
    "site_url",
    "download_archive",
    "operator",
    "format",
    "witness_qpd",
    "contact",
)
# The add-checkpoint requests a day the log's entry in the witness network's log list asks for:
# one a build, and a program rarely builds more than once an hour.
DEFAULT_WITNESS_QPD = 24
# The largest quota the log list's format writes (a decimal of at most 18 digits).
MAX_WITNESS_QPD = 10**18 - 1
# The site formats a program can publish (FORMAT.md; docs/formats/v3.md, v4.md): chosen when it starts.
SITE_FORMATS = (2, 3, 4)
# A URL's characters (RFC 3986): anything else (a space, a quote, '<', a non-ASCII letter) must
# be percent-encoded before it can stand in a feed, a sitemap or robots.txt.
_URL_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class Paths:
    data: Path
    private: Path

    @classmethod
    def resolve(cls, data: str | Path | None = None, private: str | Path | None = None) -> Paths:
        """Paths from explicit values, then the environment, then the defaults."""
        d = Path(data or os.environ.get(ENV_DATA) or "data")
        p = Path(private or os.environ.get(ENV_PRIVATE) or d / "private")
        return cls(d, p)

    # public data
    @property
    def program_file(self) -> Path:
        return self.data / "program.yaml"

    @property
    def keys_file(self) -> Path:
        return self.data / "keys.json"

    @property
    def checkpoints_dir(self) -> Path:
        """Every checkpoint a build published, kept with the program: the archive survives the site."""
        return self.data / "checkpoints"

    @property
    def ledger_file(self) -> Path:
        return self.data / "ledger.jsonl"

    @property
    def methodology_dir(self) -> Path:
        return self.data / "methodology"

    @property
    def reveals_dir(self) -> Path:
        return self.data / "reveals"

    @property
    def runs_dir(self) -> Path:
        return self.data / "runs"

    @property
    def certificates_dir(self) -> Path:
        return self.data / "certificates"

    # private material
    @property
    def key_file(self) -> Path:
        return self.private / "signing.key"

    @property
    def ml_dsa_key_file(self) -> Path:
        """The log's ML-DSA-44 signing key, once it has one (`transparency key add-ml-dsa`)."""
        return self.private / "ml-dsa-44.key"

    @property
    def items_dir(self) -> Path:
        return self.private / "items"

    @property
    def sealed_dir(self) -> Path:
        return self.private / "sealed"

    @property
    def private_in_data(self) -> bool:
        """True when the private directory lies inside the public data directory. It says where
        the files are, not whether the program is the demo: that is the demo key's to say."""
        try:
            return self.private.resolve().is_relative_to(self.data.resolve())
        except OSError:
            return False

    def show(self, path: Path) -> str:
        """A path as the user should read it in a message: relative to the working directory."""
        # Without resolving links (a system call per component, and a build names a hundred
        # thousand files): a path under the working directory is shown from it.
        full, here = os.path.abspath(path), os.getcwd()
        if full.startswith(here.rstrip(os.sep) + os.sep):
            return full[len(here.rstrip(os.sep)) + 1 :]
        return str(path)

    def run_spec_file(self, run_id: str) -> Path:
        return self.runs_dir / f"{run_id}.json"

    def certificate_file(self, serial: str) -> Path:
        return self.certificates_dir / f"{serial}.json"

    # A certificate's details documents and grader record are written privately by `certify`
    # and copied to the same relative place in the data directory when they fall due (format v1 §6).
    def details_file(self, serial: str, item_id: str, private: bool = False) -> Path:
        return (self.private if private else self.data) / layout.details(serial, item_id)

    def grader_record_file(self, serial: str, private: bool = False) -> Path:
        return (self.private if private else self.data) / layout.grader_record(serial)

    def evidence_file(self, serial: str, name: str, private: bool = False) -> Path:
        return (self.private if private else self.data) / layout.evidence(serial, name)

    def label_set_file(self, set_id: str) -> Path:
        """A blind human label set as committed, private until its report is due (FORMAT.md)."""
        return self.private / "agreement" / f"{set_id}.json"

    def reveal_file(self, item_id: str) -> Path:
        return self.reveals_dir / f"{item_id}.json"

    def sealed_file(self, item_id: str) -> Path:
        return self.sealed_dir / f"{item_id}.json"


def _git_work_tree(path: Path) -> Path | None:
    """The nearest folder at or above `path` holding `.git` (a folder, or a file in a linked
    work tree or submodule): where `git add` would take the path in."""
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
    return None


def unsafe_private_place(paths: Paths) -> str | None:
    """Why the private directory is where it will be published or committed (inside the data
    directory, or inside a git work tree), with what to do; None when it is apart from both.

    The key, the item sources and the salts are the program's secrets: in the data directory
    they are published with it, in a work tree one `git add` away from a public repository."""
    try:
        private, data = paths.private.resolve(), paths.data.resolve()
    except OSError:
        return None
    if private.is_relative_to(data):
        place = f"inside the data directory {paths.show(paths.data)}, whose files are published"
    else:
        work_tree = _git_work_tree(private)
        if work_tree is None:
            return None
        place = f"inside the git work tree {work_tree}, whence it will be committed and published"
    return (
        f"the private directory {paths.show(paths.private)} (the signing key, the item sources, the salts) is "
        f"{place}: anyone who gets it can sign as the program and read the secret items. Move it outside any "
        f"repository and point --private or {ENV_PRIVATE} at it (for instance: mv {paths.show(paths.private)} "
        f"~/program-private && export {ENV_PRIVATE}=~/program-private)."
    )


@dataclass(frozen=True)
class Program:
    name: str
    origin: str
    description: str
    site_url: str | None = None  # where the site is served, ending with '/' (FORMAT.md, feeds)
    download_archive: bool = True  # publish download/site.zip (FORMAT.md, format v2)
    operator: str = ""  # who runs the program, for the home page (the operator's words)
    format: int = 2  # the site format it publishes: 2, 3 (releases that cost what changed) or 4 (docs/formats/v4.md)
    # The log's entry in the witness network's log list (ledger/log-list.txt): its daily quota of
    # add-checkpoint requests, and how a witness operator reaches the program ("": the operator, or
    # else the site's URL).
    witness_qpd: int = DEFAULT_WITNESS_QPD
    contact: str = ""


def site_url(value: Any) -> str | None:
    """An https URL of the folder the site is served from, as a base URL ending with '/';
    None if `value` is not one (no user, query or fragment; only URL characters)."""
    if not isinstance(value, str) or not value.startswith("https://") or not _URL_CHARS.fullmatch(value):
        return None
    if _BAD_PERCENT.search(value):
        return None
    try:
        parts = urllib.parse.urlsplit(value)
        _ = parts.port  # raises ValueError on a port that is not a number in range
    except ValueError:
        return None
    if not parts.hostname or "@" in parts.netloc or "?" in value or "#" in value:
        return None
    return value if value.endswith("/") else value + "/"


def load_program(paths: Paths) -> tuple[Program, list[str]]:
    """The program file, validated; returns the program and warnings (unknown keys)."""
    file = paths.show(paths.program_file)
    raw = load_data_file(paths.program_file, file)
    problems: list[Problem] = []
    warnings: list[str] = []
    if not isinstance(raw, dict):
        raise InputError([problem(file, "must be a mapping with name, origin and description")])
    for k in PROGRAM_KEYS[:2]:
        if not isinstance(raw.get(k), str) or not raw[k].strip():
            problems.append(problem(file, "missing or empty", where=k, expected="a non-empty string", found=raw.get(k)))
    if isinstance(raw.get("origin"), str) and not is_origin(raw["origin"]):
        invisible = invisible_characters(raw["origin"])
        problems.append(
            problem(
                file,
                "not a valid origin",
                where="origin",
                expected="a URL without scheme, spaces, '+' or characters that draw nothing, such as "
                "transparency.example.org/oracle",
                found=raw["origin"] + (f" (with {invisible})" if invisible else ""),
            )
        )
    if "description" in raw and not isinstance(raw["description"], str):
        problems.append(problem(file, "must be text", where="description", found=raw["description"]))
    if "site_url" in raw and site_url(raw["site_url"]) is None:
        problems.append(
            problem(
                file,
                "not an https URL of the folder the site is served from",
                where="site_url",
                expected="https://HOST/PATH/ with only URL characters (percent-encode others), no user, query or "
                "fragment, such as https://transparency.example.org/oracle/",
                found=raw["site_url"],
            )
        )
    if "operator" in raw and (not isinstance(raw["operator"], str) or not raw["operator"].strip()):
        problems.append(
            problem(
                file,
                "must be a non-empty name",
                where="operator",
                expected="who runs the program, such as 'Example Evaluation Institute'",
                found=raw["operator"],
            )
        )
    if "download_archive" in raw and not isinstance(raw["download_archive"], bool):
        problems.append(problem(file, "must be true or false", where="download_archive", found=raw["download_archive"]))
    if "format" in raw and (isinstance(raw["format"], bool) or raw["format"] not in SITE_FORMATS):
        problems.append(
            problem(
                file,
                "not a site format this version publishes",
                where="format",
                expected=" or ".join(map(str, SITE_FORMATS))
                + " (3: releases that cost what changed, docs/formats/v3.md; 4: 3 with the manifest's"
                " lists in parts, docs/formats/v4.md)",
                found=raw["format"],
            )
        )
    problems += _log_list_problems(raw, file)
    for k in sorted(set(raw) - set(PROGRAM_KEYS)):
        warnings.append(f"{file}: unknown key {k!r} ignored (known: {', '.join(PROGRAM_KEYS)})")
    if problems:
        raise InputError(problems)
    return (
        Program(
            raw["name"].strip(),
            raw["origin"],
            raw.get("description", ""),
            site_url(raw["site_url"]) if "site_url" in raw else None,
            raw.get("download_archive", True),
            raw["operator"].strip() if "operator" in raw else "",
            raw.get("format", 2),
            raw.get("witness_qpd", DEFAULT_WITNESS_QPD),
            raw["contact"].strip() if "contact" in raw else "",
        ),
        warnings,
    )


def _log_list_problems(raw: dict[str, Any], file: str) -> list[Problem]:
    """The program file's keys for the log's entry in the witness network's log list."""
    problems = []
    qpd = raw.get("witness_qpd", DEFAULT_WITNESS_QPD)
    if isinstance(qpd, bool) or not isinstance(qpd, int) or not 1 <= qpd <= MAX_WITNESS_QPD:
        problems.append(
            problem(
                file,
                "not a number of add-checkpoint requests a day",
                where="witness_qpd",
                expected=f"a whole number from 1 to {MAX_WITNESS_QPD}: how many builds the program makes a day at "
                f"most (default {DEFAULT_WITNESS_QPD})",
                found=qpd,
            )
        )
    contact = raw.get("contact", "x")
    if not isinstance(contact, str) or not contact.strip() or not contact.strip().isprintable():
        problems.append(
            problem(
                file,
                "must be one line of text",
                where="contact",
                expected="how a witness operator reaches the program, such as 'ops@example.org' or a URL",
                found=contact,
            )
        )
    return problems


@dataclass(frozen=True)
class PublicKey:
    vkey: str
    valid_from: str
    valid_until: str | None
    status: str
    reason: str | None = None


def load_public_keys(paths: Paths, origin: str | None) -> list[PublicKey]:
    """The program's published keys (data/keys.json), by the verifier's own keys.json rules."""
    file = paths.show(paths.keys_file)
    raw = load_json(paths.keys_file, file)
    if not isinstance(raw, dict) or set(raw) != {"keys"}:
        raise InputError([problem(file, "must be an object with a non-empty list 'keys' and nothing else")])
    rows, problems = key_rows(raw["keys"], origin, published=False)
    if problems:
        raise InputError([p.at(file) for p in problems])
    return [PublicKey(r.key.vkey, r.valid_from, r.valid_until, r.status, r.reason) for r in rows]


def public_key_row(k: PublicKey) -> dict[str, Any]:
    """A key as data/keys.json holds it; the site's keys.json adds what follows from the vkey."""
    row: dict[str, Any] = {"vkey": k.vkey, "valid_from": k.valid_from, "valid_until": k.valid_until, "status": k.status}
    if k.reason is not None:
        row["reason"] = k.reason
    return row


def public_keys_document(keys: list[PublicKey]) -> dict[str, Any]:
    return {"keys": [public_key_row(k) for k in keys]}
