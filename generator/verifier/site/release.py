"""A release as a whole (format v1 §2, §7, §8): the manifest, the keys, SHA256SUMS over every file,
and the verifier copy the site ships."""

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from generator.verifier.core.confusables import invisible_characters
from generator.verifier.core.errors import Problem
from generator.verifier.core.folder import MANIFEST_PATH, SUMS_PATH, SUMS_SIG_PATH, Site
from generator.verifier.core.formats import (
    MANIFEST_V4,
    check_keys,
    is_origin,
    is_safe_path,
    is_time,
    is_v1,
    plain_sums_rows,
    sha256_hex,
    site_format,
)
from generator.verifier.core.public_keys import (
    DEMO_KEY_WARNING,
    PUBLISHED_PRIVATE_KEYS,
    KeyRow,
    VerifierKey,
    fingerprint,
    key_rows,
    parse_vkey,
    public_key_from_pem,
)
from generator.verifier.core.report import Report
from generator.verifier.core.text import show, type_name
from generator.verifier.core.windowed import windowed
from generator.verifier.site.manifest_parts import PARTED_LISTS
from generator.verifier.tlog.rotation import ML_DSA_KEYS_MEMBER, ml_dsa_key_row_problems

SUMS_LINE_RE = re.compile(r"^([0-9a-f]{64})  (.+)$")
MANIFEST_KEYS = (
    "type",
    "v",
    "origin",
    "name",
    "generated_at",
    "keys",
    "verifier",
    "gates",
    "methodology",
    "ledger",
    "reveals",
    "runs",
    "certificates",
)
MANIFEST_LISTS = ("gates", "methodology", "reveals", "runs", "certificates")


def check_manifest_shape(m: Any, report: Report) -> bool:
    """transparency.json's members and their types (format v1 §7): what every later check reads."""
    problems = check_keys(m, MANIFEST_KEYS)
    if isinstance(m, dict):
        if m.get("type") != "transparency-manifest" or not (is_v1(m) or site_format(m) >= 3):
            problems.append(
                Problem(
                    "wrong type or version",
                    expected='"transparency-manifest", v 1 (format v1 or v2), 3 (format v3) or 4 (format v4)',
                    found=f"{show(m.get('type'))}, v {show(m.get('v'))}",
                )
            )
        if not is_origin(m.get("origin")):
            invisible = invisible_characters(m["origin"]) if isinstance(m.get("origin"), str) else ""
            problems.append(
                Problem(
                    "malformed origin",
                    where="origin",
                    expected="a URL without scheme, spaces, '+' or characters that draw nothing",
                    found=show(m.get("origin")) + (f" (with {invisible})" if invisible else ""),
                )
            )
        if not is_time(m.get("generated_at")):
            problems.append(Problem("malformed time", where="generated_at", found=show(m.get("generated_at"))))
        # A v4 manifest's growing lists are indexes of parts, read by manifest_parts.py.
        parted = PARTED_LISTS if site_format(m) >= MANIFEST_V4 else ()
        for k in MANIFEST_LISTS:
            if k in m and k not in parted and not isinstance(m[k], list):
                problems.append(Problem("must be a list", where=k, found=type_name(m[k])))
        # A v3 site's ledger is its tiles: no entries document (docs/formats/v3.md, 3).
        ledger_keys = ("checkpoint", "tree_size", "commitment_list")
        problems += check_keys(
            m.get("ledger"), ledger_keys if site_format(m) >= 3 else ("entries", *ledger_keys), where="ledger"
        )
        for k in ("keys", "verifier"):
            if k in m and not is_safe_path(m[k]):
                problems.append(Problem("unsafe or malformed path", where=k, found=show(m[k])))
        if "name" in m and not (isinstance(m["name"], str) and m["name"].strip()):
            problems.append(
                Problem("the program's name must be a non-empty string", where="name", found=show(m["name"]))
            )
        led = m.get("ledger")
        if isinstance(led, dict):
            for k in ("entries", "checkpoint", "commitment_list"):
                if k in led and not is_safe_path(led[k]):
                    problems.append(Problem("unsafe or malformed path", where=f"ledger.{k}", found=show(led[k])))
    return report.add(problems, MANIFEST_PATH)


def check_keys_document(
    s: Site,
    manifest: dict[str, Any],
    origin: str,
    pin: str | None,
    earlier: list[VerifierKey] | None = None,
    named: list[KeyRow] | None = None,
) -> bytes | None:
    """keys.json and its PEM files (format v1 §2); the active key, if it is the one pinned. A pin
    of an earlier key of keys.json is appended to `earlier` (the caller follows it through the
    ledger's rotations) instead of failing here; every row of keys.json, to `named`."""
    report = s.report
    rel = manifest["keys"]
    loaded = s.document(rel, "keys")
    if loaded is None:
        return None
    doc = loaded[1]
    problems = check_keys(doc, ("type", "v", "origin", "keys"), (ML_DSA_KEYS_MEMBER,))
    if problems or doc.get("type") != "keys" or not is_v1(doc):
        report.add(problems or [Problem("not a v1 keys document")], rel)
        return None
    report.check(doc["origin"] == origin, rel, "origin differs from the manifest's", origin, show(doc["origin"]))
    rows, problems = key_rows(doc["keys"], origin, published=True)
    report.add(problems, rel)
    if ML_DSA_KEYS_MEMBER in doc:
        report.add(ml_dsa_key_row_problems(doc[ML_DSA_KEYS_MEMBER], origin), rel)
    if named is not None:
        named.extend(rows)
    for row in rows:
        if row.pem is None:
            continue  # an unsafe path, reported
        pem = s.read(row.pem, f"PEM of {row.key.vkey}")
        if pem is not None:
            try:
                pem_key = public_key_from_pem(pem)
                report.check(
                    pem_key == row.key.public_key,
                    row.pem,
                    "PEM holds a different key than keys.json",
                    row.key.fingerprint,
                    fingerprint(pem_key),
                )
            except ValueError as e:
                report.check(False, row.pem, str(e))
    active = [r.key for r in rows if r.status == "active"]
    if len(active) != 1:
        return None
    vk = active[0]
    report.key = {"vkey": vk.vkey, "fingerprint": vk.fingerprint}
    if vk.fingerprint in PUBLISHED_PRIVATE_KEYS:
        report.demo_key = True
        report.warnings.append(DEMO_KEY_WARNING)
    if pin is None:
        report.key["source"] = (
            "trusting the key shipped inside the site (keys.json); compare its fingerprint out of band, or pin it "
            "with --key"
        )
        return vk.public_key
    pinned = pin.strip()

    def is_pinned(k: VerifierKey) -> bool:
        if pinned.startswith("SHA256:"):
            return pinned == k.fingerprint
        pk = parse_vkey(pinned)
        return pk.public_key == k.public_key and pk.name == k.name

    match = is_pinned(vk)
    older = next((r.key for r in rows if r.key != vk and is_pinned(r.key)), None)
    if not match and older is not None and earlier is not None:
        earlier.append(older)
        report.key["source"] = "pinned with --key to an earlier key: trusted only through the ledger's hand-overs"
        return vk.public_key
    report.key["source"] = "pinned with --key" + ("" if match else " (does NOT match the site's key)")
    if not report.check(
        match, rel, "the site's active key is not the key given with --key", pinned, f"{vk.vkey} ({vk.fingerprint})"
    ):
        return None
    return vk.public_key


@dataclass(frozen=True)
class Listing:
    """SHA256SUMS as read (a v3 site's tree of lists: every row of every list), for the checks
    of what restates it (the site's archive, a v3 site's download parts)."""

    files: dict[str, str]  # path to SHA-256, as listed
    signed: bool  # its signature verified with the site key
    matched: frozenset[str]  # the listed files whose bytes have the listed SHA-256
    # A v3 site's leaves (docs/formats/v3.md, 5): prefix -> its files, in its list's order.
    leaves: dict[str, list[str]] | None = None
    # The leaves whose list names a path another list named first (that path left out of the
    # leaf's files in `leaves`).
    doubled: frozenset[str] = frozenset()


def parse_sums(report: Report, rel: str, data: bytes) -> list[tuple[int, str, str]] | None:
    """A checksum list's lines (format v1 §7) as (line number, SHA-256, path), each well formed
    and in path-byte order, the last ending with a newline; None if it is not UTF-8. A line
    that is not well formed is reported (naming `rel` and the line) and left out."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        report.check(False, rel, "not valid UTF-8")
        return None
    plain = plain_sums_rows(text)
    if plain is not None:
        return [(n, sha, path) for n, (sha, path) in enumerate(plain, start=1)]
    rows = []
    previous = b""
    for n, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), start=1):
        m = SUMS_LINE_RE.fullmatch(line)
        if not m or not is_safe_path(m.group(2)):
            report.check(False, rel, "malformed line", "<64 hex>  <path>", show(line), where=f"line {n}")
            continue
        path = m.group(2)
        key_bytes = path.encode()
        if key_bytes <= previous:
            report.check(
                False,
                rel,
                "lines not sorted by path bytes (or a path listed twice)",
                where=f"line {n}",
                found=path,
            )
        previous = key_bytes
        rows.append((n, m.group(1), path))
    if not text.endswith("\n"):
        report.check(False, rel, "last line does not end with a newline")
    return rows


def check_sums(s: Site, key: bytes, verifier: str) -> Listing | None:
    """SHA256SUMS (format v1 §7): signed, well formed, sorted, and exactly the site's files. Returns
    what it lists, or None if it cannot be read. Every file is hashed, every run: a file's
    times and inode on disk are no proof that it is unchanged (some file systems let them be
    set back), and hashing is what the floor of a verification is. The one exception is a file
    `verify.py mirror` wrote and hashed itself, in a folder only this user may write, still
    with the identity it had then (Site.known, memory/mirror_record.py)."""
    data = s.read(SUMS_PATH, "checksum list")
    if data is None:
        return None
    signed = s.signed(SUMS_PATH, data, key, "checksum list")
    rows = parse_sums(s.report, SUMS_PATH, data)
    if rows is None:
        return None
    listed = {path: sha for _, sha, path in rows}
    return Listing(listed, signed, check_files(s, verifier, listed, lambda rel: SUMS_PATH))


def check_files(
    s: Site,
    verifier: str,
    listed: dict[str, str],
    named_in: Callable[[str], str],
    unlisted: Callable[[str], tuple[str, str]] = lambda rel: (
        f"file is not listed in {SUMS_PATH}",
        f"only the files {SUMS_PATH} lists",
    ),
) -> frozenset[str]:
    """Every file of the site against the lists: none that no list names (SHA256SUMS and its
    signature aside; `unlisted(path)` says what such a file is, and what was expected), none listed and missing, each
    with the SHA-256 listed (`named_in(path)` says where, for the messages). Returns the files
    that have it."""
    report = s.report
    actual = set(s.files(verifier))
    s.files_found = set(actual)
    actual -= {SUMS_PATH, SUMS_SIG_PATH}
    for rel in sorted(actual - listed.keys()):
        report.check(False, rel, *unlisted(rel), "an extra file")
    env = s.environment
    for rel in sorted(listed.keys() - actual):
        if env is not None and rel.startswith(env + "/"):
            report.check(
                False,
                rel,
                f"listed in {named_in(rel)}, inside the Python environment running this verifier: the site ships "
                "that environment, so its code ran inside this verifier and no verdict of this run can be trusted",
                "an environment you made yourself, outside the site's files",
                "a file of the site",
            )
            continue
        report.check(
            False, rel, f"listed in {named_in(rel)} but missing", f"a file with SHA-256 {listed[rel]}", "nothing"
        )
    present = actual & listed.keys()
    # A file whose SHA-256 the caller knows costs one lstat, here (none, when the caller looked
    # at each in this run): handing tens of thousands of those to threads costs more in their
    # locks than the lstat itself.
    digests = s.known_sha256s(present)
    digests.update((rel, sha) for rel, sha in s.hashed_now.items() if rel in present and rel not in digests)
    unread = sorted(rel for rel in present if rel not in digests)
    # SHA-256 and reading a file both let go of Python's lock: threads hash on every core, a
    # window of files at a time (a future for each of 300,000 files held hundreds of MiB).
    digests.update(zip(unread, windowed(s.hash_file, unread, min(4, os.cpu_count() or 1)), strict=True))
    # One check a file; only those that differ are reported, in path order, so the report is
    # the same whatever order the files were met or hashed in.
    differ = [rel for rel in present if digests[rel] != listed[rel]]
    report.checks += len(present) - len(differ)
    for rel in sorted(differ):
        s.current = rel
        report.check(False, rel, f"SHA-256 differs from {named_in(rel)}", listed[rel], digests[rel])
    return frozenset(present.difference(differ))


def check_verifier_copy(s: Site, manifest: dict[str, Any]) -> None:
    """Format v1 §8: the site's verify.py is byte for byte this verifier. A copy that differs is a
    failure, whatever it does: readers who run the site's own copy would run other code."""
    rel = manifest["verifier"]
    theirs = s.read(rel, "verifier")
    if theirs is None:
        return
    try:
        mine = s.own_verifier()
    except OSError as e:
        s.report.check(
            False,
            rel,
            "this verifier cannot read its own file to compare",
            "a readable verify.py",
            e.strerror or str(e),
        )
        return
    s.report.check(
        theirs == mine,
        rel,
        "the site's verifier differs from this verifier (format v1 §8: byte for byte the project's verify.py)",
        f"SHA-256 {sha256_hex(mine)} (this verifier)",
        f"SHA-256 {sha256_hex(theirs)}",
    )
