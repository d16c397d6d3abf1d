"""Verifying a site folder (SPEC §2-4, §6-8): the only module that reads files."""

import base64
import datetime
import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from generator.verifier.canonical import canonical_text, iter_canonical_array, parse_canonical
from generator.verifier.certificates import (
    certificate_binding_problems,
    check_certificate,
    due_records,
    recheck_certificate,
    recheckable,
)
from generator.verifier.errors import FormatError, NoteError, Problem, SiteUnreadable
from generator.verifier.formats import (
    check_keys,
    check_reveal_document,
    is_origin,
    is_safe_path,
    is_time,
    is_v1,
    same,
    sha256_hex,
)
from generator.verifier.isolation import own_file
from generator.verifier.keys import (
    DEMO_KEY_WARNING,
    KEY_STATUSES,
    PUBLISHED_PRIVATE_KEYS,
    VerifierKey,
    check_key_pin,
    ed25519_verify,
    fingerprint,
    key_id,
    parse_vkey,
    public_key_from_pem,
)
from generator.verifier.ledger import Ledger
from generator.verifier.merkle import MerkleStream, leaf_hash
from generator.verifier.methodology import check_methodology
from generator.verifier.note import open_note, parse_checkpoint
from generator.verifier.report import Report
from generator.verifier.runs import check_run_rules, check_run_spec
from generator.verifier.text import show, type_name

SUMS_LINE_RE = re.compile(r"^([0-9a-f]{64})  (.+)$")
MANIFEST_PATH = "transparency.json"
SUMS_PATH = "SHA256SUMS"
SUMS_SIG_PATH = "SHA256SUMS.sig"


class _Site:
    def __init__(self, root: Path, report: Report) -> None:
        self.root = root
        self.resolved = root.resolve()
        self.report = report

    def path(self, rel: Any, what: str) -> Path | None:
        """The file a document's path names, or None (and a failure) if unsafe or missing."""
        if not is_safe_path(rel):
            self.report.check(False, MANIFEST_PATH, f"{what}: unsafe or malformed path", "a relative path with '/', no '..'", show(rel))
            return None
        p = self.root / rel
        try:
            real = p.resolve()
            inside = real.is_relative_to(self.resolved) and not any(
                q.is_symlink() for q in (p, *p.parents) if q.is_relative_to(self.root) and q != self.root
            )
            is_file = p.is_file()
        except (OSError, RuntimeError):  # a link loop, a name too long, a permission
            inside = is_file = False
            real = p
        if not inside:
            self.report.check(False, rel, f"{what}: the path leaves the site or passes through a link", "a regular file inside the site", str(real))
            return None
        if not is_file:
            self.report.check(False, rel, f"{what}: the file is missing", "a regular file", "nothing")
            return None
        return p

    def read(self, rel: Any, what: str) -> bytes | None:
        p = self.path(rel, what)
        if p is None:
            return None
        try:
            return p.read_bytes()
        except OSError as e:
            self.report.check(False, str(rel), f"{what}: cannot be read", "a readable file", e.strerror or str(e))
            return None

    def document(self, rel: Any, what: str) -> tuple[bytes, Any] | None:
        """Read and parse a canonical JSON document; None (and a failure) if it is not one."""
        data = self.read(rel, what)
        if data is None:
            return None
        try:
            value = parse_canonical(data)
        except FormatError as e:
            self.report.check(False, str(rel), f"{what}: {e}")
            return None
        self.report.checks += 1
        return data, value

    def signed(self, rel: str, data: bytes, key: bytes, what: str) -> bool:
        sig = self.read(rel + ".sig", f"signature of {what}")
        if sig is None:
            return False
        return self.report.check(
            ed25519_verify(key, sig, data), rel + ".sig",
            f"detached signature of {rel} does not verify with the site key",
            f"a valid Ed25519 signature by {fingerprint(key)} of the file's {len(data)} bytes",
            f"{len(sig)} bytes that are not",
        )


def verify_site(site: Path | str, key: str | None = None, debug: bool = False) -> Report:
    """Verify a site directory.

    Raise SiteUnreadable if it is not a readable site at all, FormatError if `key` is neither
    a verifier key nor a fingerprint: both are the caller's errors, not the site's.
    """
    if key is not None:
        check_key_pin(key)
    root = Path(site)
    report = Report(str(site))
    if not root.is_dir():
        raise SiteUnreadable(f"{site}: not a directory")
    if not (root / MANIFEST_PATH).is_file():
        raise SiteUnreadable(f"{site}: no {MANIFEST_PATH}: not a transparency site")
    s = _Site(root, report)
    loaded = s.document(MANIFEST_PATH, "manifest")
    if loaded is None:
        return report
    manifest = loaded[1]
    if not _check_manifest_shape(manifest, report):
        return report
    origin = manifest["origin"]

    public_key = _guarded(report, "keys", None, _check_keys, s, manifest, origin, key)
    if public_key is None:
        return report
    _guarded(report, SUMS_PATH, None, _check_sums, s, public_key, manifest["verifier"])
    ledger = _guarded(report, "ledger", None, _check_ledger, s, manifest, origin, public_key)
    if ledger is None:
        return report
    params = _guarded(report, "methodology", {}, _check_methodology, s, manifest, ledger)
    _guarded(report, "gates", None, _check_gates, s, manifest, ledger)
    _guarded(report, "reveals", None, _check_reveals, s, manifest, ledger)
    specs = _guarded(report, "runs", {}, _check_runs, s, manifest, ledger, params)
    _guarded(report, "certificates", None, _check_certificates, s, manifest, ledger, specs, params)
    _guarded(report, "verifier", None, _check_verifier, s, manifest)
    report.counts = {
        "ledger entries": ledger.size,
        "gates": len(ledger.gates),
        "commitments": ledger.commit_count,
        "revealed": len(ledger.reveals),
        "runs": len(ledger.runs),
        "certificates": len(ledger.certificates),
        "methodology versions": len(ledger.methodologies),
    }
    open_runs = [r for r in ledger.runs if r not in ledger.certificate_of_run]
    if open_runs:
        report.notes.append(f"{len(open_runs)} run(s) still open (not yet decided): {', '.join(open_runs[:10])}")
    return report


def _guarded(report: Report, part: str, default: Any, check: Any, *args: Any) -> Any:
    """Run one part of the verification; an error the checks did not foresee (a value of a shape
    nobody expected) becomes a failure of that part, never a traceback and never a pass."""
    try:
        return check(*args)
    except SiteUnreadable:
        raise
    except Exception as e:  # fail closed on anything unforeseen
        report.check(False, MANIFEST_PATH, f"the {part} could not be checked: the site holds a value of an unexpected shape ({type(e).__name__}: {str(e)[:200]})")
        return default
MANIFEST_KEYS = (
    "type", "v", "origin", "name", "generated_at", "keys", "verifier", "gates", "methodology",
    "ledger", "reveals", "runs", "certificates",
)


def _check_manifest_shape(m: Any, report: Report) -> bool:
    problems = check_keys(m, MANIFEST_KEYS)
    if isinstance(m, dict):
        if m.get("type") != "transparency-manifest" or not is_v1(m):
            problems.append(Problem("wrong type or version", expected='"transparency-manifest", v 1', found=f"{show(m.get('type'))}, v {show(m.get('v'))}"))
        if not is_origin(m.get("origin")):
            problems.append(Problem("malformed origin", where="origin", expected="a URL without scheme, spaces or '+'", found=show(m.get("origin"))))
        if not is_time(m.get("generated_at")):
            problems.append(Problem("malformed time", where="generated_at", found=show(m.get("generated_at"))))
        for k in ("gates", "methodology", "reveals", "runs", "certificates"):
            if k in m and not isinstance(m[k], list):
                problems.append(Problem("must be a list", where=k, found=type_name(m[k])))
        problems += check_keys(m.get("ledger"), ("entries", "checkpoint", "tree_size", "commitment_list"), where="ledger")
        for k in ("keys", "verifier"):
            if k in m and not is_safe_path(m[k]):
                problems.append(Problem("unsafe or malformed path", where=k, found=show(m[k])))
        if "name" in m and not (isinstance(m["name"], str) and m["name"].strip()):
            problems.append(Problem("the program's name must be a non-empty string", where="name", found=show(m["name"])))
        led = m.get("ledger")
        if isinstance(led, dict):
            for k in ("entries", "checkpoint", "commitment_list"):
                if k in led and not is_safe_path(led[k]):
                    problems.append(Problem("unsafe or malformed path", where=f"ledger.{k}", found=show(led[k])))
    return report.add(problems, MANIFEST_PATH)


def _check_keys(s: _Site, manifest: dict[str, Any], origin: str, pin: str | None) -> bytes | None:
    report = s.report
    loaded = s.document(manifest["keys"], "keys")
    if loaded is None:
        return None
    rel, doc = manifest["keys"], loaded[1]
    problems = check_keys(doc, ("type", "v", "origin", "keys"))
    if problems or doc.get("type") != "keys" or not is_v1(doc) or not isinstance(doc.get("keys"), list):
        report.add(problems or [Problem("not a v1 keys document")], rel)
        return None
    report.check(doc["origin"] == origin, rel, "origin differs from the manifest's", origin, doc["origin"])
    active: list[VerifierKey] = []
    previous_from = ""
    for i, k in enumerate(doc["keys"]):
        w = f"keys[{i}]"
        kp = check_keys(k, ("vkey", "public_key", "fingerprint", "pem", "valid_from", "valid_until", "status"), ("reason",), where=w)
        if not report.add(kp, rel):
            continue
        try:
            vk = parse_vkey(k["vkey"])
        except FormatError as e:
            report.check(False, rel, f"vkey: {e}", where=w, found=show(k["vkey"]))
            continue
        report.check(vk.name == origin, rel, "key name must be the origin", origin, vk.name, where=w)
        report.check(k["public_key"] == base64.b64encode(vk.public_key).decode(), rel, "public_key differs from the vkey's key", base64.b64encode(vk.public_key).decode(), k["public_key"], where=w)
        report.check(k["fingerprint"] == vk.fingerprint, rel, "fingerprint differs from the key", vk.fingerprint, k["fingerprint"], where=w)
        report.check(k["status"] in KEY_STATUSES, rel, "unknown key status", " | ".join(KEY_STATUSES), show(k["status"]), where=w)
        report.check(k["status"] != "revoked" or isinstance(k.get("reason"), str), rel, "a revoked key needs a reason", "a string 'reason'", show(k.get("reason")), where=w)
        report.check(is_time(k["valid_from"]) and k["valid_from"] >= previous_from, rel, "valid_from malformed or out of order", found=show(k["valid_from"]), where=w)
        previous_from = k["valid_from"] if is_time(k["valid_from"]) else previous_from
        report.check(k["valid_until"] is None or is_time(k["valid_until"]), rel, "valid_until must be a time or null", found=show(k["valid_until"]), where=w)
        pem = s.read(k["pem"], f"PEM of {w}")
        if pem is not None:
            try:
                pem_key = public_key_from_pem(pem)
                report.check(pem_key == vk.public_key, k["pem"], "PEM holds a different key than keys.json", vk.fingerprint, fingerprint(pem_key))
            except FormatError as e:
                report.check(False, k["pem"], str(e))
        if k["status"] == "active":
            active.append(vk)
    if not report.check(len(active) == 1, rel, "v1 has exactly one active key", "1", str(len(active))):
        return None
    vk = active[0]
    report.key = {"vkey": vk.vkey, "fingerprint": vk.fingerprint}
    if vk.fingerprint in PUBLISHED_PRIVATE_KEYS:
        report.demo_key = True
        report.warnings.append(DEMO_KEY_WARNING)
    if pin is None:
        report.key["source"] = "trusting the key shipped inside the site (keys.json); compare its fingerprint out of band, or pin it with --key"
    else:
        pinned = pin.strip()
        if pinned.startswith("SHA256:"):
            match = pinned == vk.fingerprint
        else:
            pk = parse_vkey(pinned)
            match = pk.public_key == vk.public_key and pk.name == vk.name
        report.key["source"] = "pinned with --key" + ("" if match else " (does NOT match the site's key)")
        if not report.check(match, rel, "the site's active key is not the key given with --key", pinned, f"{vk.vkey} ({vk.fingerprint})"):
            return None
    return vk.public_key
# A site's deepest path (certificates/<serial>/details/<item>.json) is four levels down; a
# folder far deeper is refused where it is, instead of being walked until Python gives up.
MAX_SITE_DEPTH = 32
# Files Python would import or run if they sat next to a module search path: a site has no
# business shipping any, apart from the verifier the manifest names.
PYTHON_CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyw", ".pyd", ".pth", ".so")


def _site_files(s: _Site, verifier: str) -> Iterator[str]:
    """Every regular file of the site, as a '/' path; failures for anything else found.

    An explicit stack rather than recursion (a folder 1,200 levels deep is data, not a crash),
    and never a link followed.
    """
    report = s.report
    stack: list[tuple[str, int]] = [("", 0)]
    while stack:
        rel_dir, depth = stack.pop()
        folder = s.root / rel_dir if rel_dir else s.root
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            report.check(False, rel_dir or ".", "folder cannot be read", "a readable folder", e.strerror or str(e))
            continue
        if rel_dir and not entries:
            report.check(False, rel_dir, "the site holds an empty folder, which no SHA256SUMS line can list", "no empty folders", "an empty folder")
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_symlink():
                    report.check(False, rel, "the site holds a symbolic link", "regular files and folders only", f"a link to {os.readlink(entry.path)}")
                elif entry.is_dir(follow_symlinks=False):
                    if entry.name == "__pycache__":
                        report.check(False, rel, "the site holds a Python bytecode cache", "no Python code but the verifier", "a __pycache__ folder")
                    if depth + 1 >= MAX_SITE_DEPTH:
                        report.check(False, rel, "folder nested too deeply to be part of a site", f"at most {MAX_SITE_DEPTH} levels", "deeper (not read further)")
                    else:
                        stack.append((rel, depth + 1))
                elif entry.is_file(follow_symlinks=False):
                    if entry.name.endswith(PYTHON_CODE_SUFFIXES) and rel != verifier:
                        report.check(False, rel, "the site holds Python code a verifier could be made to import", "no Python code but the verifier", "a Python file")
                    yield rel
                else:
                    report.check(False, rel, "the site holds something that is neither a file nor a folder", "regular files and folders only", "a device, socket or pipe")
            except OSError as e:
                report.check(False, rel, "cannot be read", "a readable file or folder", e.strerror or str(e))


def _check_sums(s: _Site, key: bytes, verifier: str) -> None:
    report = s.report
    data = s.read(SUMS_PATH, "checksum list")
    if data is None:
        return
    s.signed(SUMS_PATH, data, key, "checksum list")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        report.check(False, SUMS_PATH, "not valid UTF-8")
        return
    listed: dict[str, str] = {}
    previous = b""
    for n, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), start=1):
        m = SUMS_LINE_RE.fullmatch(line)
        if not m or not is_safe_path(m.group(2)):
            report.check(False, SUMS_PATH, "malformed line", "<64 hex>  <path>", show(line), where=f"line {n}")
            continue
        path = m.group(2)
        key_bytes = path.encode()
        if key_bytes <= previous:
            report.check(False, SUMS_PATH, "lines not sorted by path bytes (or a path listed twice)", where=f"line {n}", found=path)
        previous = key_bytes
        listed[path] = m.group(1)
    if not text.endswith("\n"):
        report.check(False, SUMS_PATH, "last line does not end with a newline")
    actual = set(_site_files(s, verifier))
    actual -= {SUMS_PATH, SUMS_SIG_PATH}
    for rel in sorted(actual - set(listed)):
        report.check(False, rel, f"file is not listed in {SUMS_PATH}", f"only the files {SUMS_PATH} lists", "an extra file")
    for rel in sorted(set(listed) - actual):
        report.check(False, rel, f"listed in {SUMS_PATH} but missing", f"a file with SHA-256 {listed[rel]}", "nothing")
    for rel in sorted(actual & set(listed)):
        digest = _file_sha256(s.root / rel)
        report.check(digest == listed[rel], rel, f"SHA-256 differs from {SUMS_PATH}", listed[rel], digest)


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _check_ledger(s: _Site, manifest: dict[str, Any], origin: str, key: bytes) -> Ledger | None:
    """Replay the entries, recompute the root, and check the checkpoint and commitment list.

    One large document at a time: the entries are replayed and released before the
    commitment list is read, which is then checked against the replayed state.
    """
    report = s.report
    led = manifest["ledger"]
    rel = led["entries"]
    data = s.read(rel, "ledger entries")
    if data is None:
        return None
    s.signed(rel, data, key, "ledger entries")
    ledger = Ledger()
    merkle = MerkleStream()
    try:
        entries, rest = iter_canonical_array(data, "entries")
        for leaf, raw in entries:
            problems = ledger.apply(leaf, len(raw))
            merkle.append(leaf_hash(raw))
            if problems:
                report.add(problems, rel, checks=0)
        report.checks += ledger.size
    except FormatError as e:
        report.check(False, rel, str(e))
        return None
    del data, entries  # the iterator holds the bytes too: free both before the next large document
    report.add(ledger.final_problems(), rel)
    report.add(check_keys(rest, ("origin", "tree_size", "type", "v")), rel)
    report.check(rest.get("type") == "ledger-entries" and is_v1(rest), rel, "wrong type or version", '"ledger-entries", v 1', f"{show(rest.get('type'))}, v {show(rest.get('v'))}")
    report.check(rest.get("origin") == origin, rel, "origin differs from the manifest's", origin, show(rest.get("origin")))
    report.check(same(rest.get("tree_size"), ledger.size), rel, "tree_size differs from the number of entries", ledger.size, show(rest.get("tree_size")))
    report.check(same(led["tree_size"], ledger.size), MANIFEST_PATH, "ledger.tree_size differs from the number of entries", ledger.size, show(led["tree_size"]))
    _check_checkpoint(s, led["checkpoint"], origin, key, ledger.size, merkle.root())
    _check_commitment_list(s, led["commitment_list"], origin, key, ledger)
    return ledger


def _check_commitment_list(s: _Site, rel: str, origin: str, key: bytes, ledger: Ledger) -> None:
    """The signed list must hold every commit leaf, in ledger order, with its current status."""
    report = s.report
    data = s.read(rel, "commitment list")
    if data is None:
        return
    s.signed(rel, data, key, "commitment list")
    commits = ledger.commits()
    try:
        rows, rest = iter_canonical_array(data, "commitments")
        for row, _ in rows:
            c = next(commits, None)
            if c is None:
                report.check(False, rel, "lists an item the ledger never committed", found=show(row))
                break
            want = {"at": c.at, "commitment": c.commitment, "gate": c.gate, "id": c.id, "index": c.index,
                    "status": "revealed" if c.id in ledger.reveals else "sealed"}
            if row != want or type(row.get("index")) is not int:  # a dict compares true == 1
                report.failures.append(_row_problem(rel, c.id, want, row))
        for _ in rows:
            pass
    except FormatError as e:
        report.check(False, rel, str(e))
        return
    missing = next(commits, None)
    if missing is not None:
        report.check(False, rel, f"ends before the ledger's commit of {missing.id}", where="commitments")
    report.checks += ledger.commit_count
    report.add(check_keys(rest, ("origin", "tree_size", "type", "v")), rel)
    report.check(rest.get("type") == "commitment-list" and is_v1(rest), rel, "wrong type or version", '"commitment-list", v 1', show(rest.get("type")))
    report.check(rest.get("origin") == origin, rel, "origin differs from the manifest's", origin, show(rest.get("origin")))
    report.check(same(rest.get("tree_size"), ledger.size), rel, "tree_size differs from the ledger's", ledger.size, show(rest.get("tree_size")))


def _row_problem(rel: str, item_id: str, want: dict[str, Any], row: Any) -> Problem:
    where = f"commitments[{item_id}]"
    if not isinstance(row, dict) or set(row) != set(want):
        return Problem("row differs from the ledger's commit leaf", rel, where, canonical_text(want), show(row, 300))
    diffs = [k for k in want if not same(row[k], want[k])]
    if diffs == ["status"]:
        told = "revealed it" if want["status"] == "revealed" else "never revealed it"
        return Problem(f"item {item_id} is marked {row['status']} but the ledger {told}", rel, where, want["status"], show(row["status"]))
    return Problem(
        f"row differs from the ledger's commit leaf ({', '.join(diffs)})", rel, where,
        ", ".join(f"{k}={show(want[k])}" for k in diffs), ", ".join(f"{k}={show(row[k])}" for k in diffs),
    )


def _check_checkpoint(s: _Site, rel: str, origin: str, key: bytes, size: int, root: bytes) -> None:
    report = s.report
    data = s.read(rel, "checkpoint")
    if data is None:
        return
    try:
        note = open_note(data, [VerifierKey(origin, key_id(origin, key), key)])
        cp_origin, cp_size, cp_root = parse_checkpoint(note.text)
    except (NoteError, FormatError) as e:
        report.check(False, rel, f"checkpoint does not verify: {e}", f"a signed note by {origin} ({fingerprint(key)}) with a checkpoint body", "a note that is not")
        return
    report.check(cp_origin == origin, rel, "checkpoint origin differs", origin, cp_origin)
    report.check(cp_size == size, rel, "checkpoint size differs from the number of entries", size, cp_size)
    report.check(cp_root == root, rel, "checkpoint root differs from the RFC 6962 root of the entries", base64.b64encode(root).decode(), base64.b64encode(cp_root).decode())


def _ordered_ids(report: Report, listed: Any, file: str, what: str, key: str, want: list[str]) -> list[dict[str, Any]]:
    """Check a manifest list names exactly `want`, in ledger order; return its well-formed rows."""
    rows = [r for r in listed if isinstance(r, dict)] if isinstance(listed, list) else []
    got = [r.get(key) for r in rows]
    if got != want:
        got_set = {x for x in got if isinstance(x, str)}
        want_set = set(want)
        missing = [x for x in want if x not in got_set]
        extra = [x for x in got if not isinstance(x, str) or x not in want_set]
        detail = f"missing {show(missing[:5])}, extra {show(extra[:5])}" if missing or extra else "same entries in another order"
        report.check(False, file, f"{what} differ from the ledger's, in ledger order ({detail})", show(want[:5]), show(got[:5]))
    else:
        report.checks += 1
    return rows


def _check_gates(s: _Site, manifest: dict[str, Any], ledger: Ledger) -> None:
    rows = _ordered_ids(s.report, manifest["gates"], MANIFEST_PATH, "gates", "id", list(ledger.gates))
    for r in rows:
        g = ledger.gates.get(r["id"]) if isinstance(r.get("id"), str) else None
        if g is not None:
            want = {"id": g.id, "name": g.name, "public": g.public}
            s.report.check(same(r, want), MANIFEST_PATH, f"gate {g.id} differs from its ledger leaf", canonical_text(want), show(r))


def _check_methodology(s: _Site, manifest: dict[str, Any], ledger: Ledger) -> dict[str, dict[str, Any]]:
    report = s.report
    rows = _ordered_ids(report, manifest["methodology"], MANIFEST_PATH, "methodology versions", "version", list(ledger.methodologies))
    params: dict[str, dict[str, Any]] = {}
    for r in rows:
        version = r.get("version")
        event = ledger.methodologies.get(version) if isinstance(version, str) else None
        report.add(check_keys(r, ("version", "document", "parameters", "sha256"), where=f"methodology[{version}]"), MANIFEST_PATH)
        if event is None:
            continue
        report.check(r.get("sha256") == event.sha256, MANIFEST_PATH, f"methodology {version}: hash differs from the ledger", event.sha256, show(r.get("sha256")))
        s.path(r.get("document"), f"methodology {version} document")
        loaded = s.document(r.get("parameters"), f"methodology {version} parameters")
        if loaded is None:
            continue
        data, doc = loaded
        rel = str(r.get("parameters"))
        digest = sha256_hex(data)
        report.check(digest == event.sha256, rel, "SHA-256 differs from the ledger's methodology leaf", event.sha256, digest)
        report.add(check_methodology(doc), rel)
        report.check(isinstance(doc, dict) and doc.get("version") == version, rel, "version inside the file differs", version, show(doc.get("version") if isinstance(doc, dict) else None))
        if isinstance(doc, dict) and not check_methodology(doc):
            params[str(version)] = doc
    return params


def _check_reveals(s: _Site, manifest: dict[str, Any], ledger: Ledger) -> None:
    report = s.report
    want = sorted(ledger.reveals, key=lambda i: ledger.reveals[i].index)
    rows = _ordered_ids(report, manifest["reveals"], MANIFEST_PATH, "reveals", "id", want)
    salts: dict[str, str] = {}
    for r in rows:
        item_id = r.get("id")
        ev = ledger.reveals.get(item_id) if isinstance(item_id, str) else None
        commit = ledger.commit(item_id) if isinstance(item_id, str) else None
        w = f"reveals[{item_id}]"
        report.add(check_keys(r, ("id", "gate", "path", "reason", "revealed_at"), where=w), MANIFEST_PATH)
        if ev is None or commit is None:
            continue
        want_row = {"gate": commit.gate, "reason": ev.reason, "revealed_at": ev.at}
        got_row = {k: r.get(k) for k in want_row}
        report.check(same(got_row, want_row), MANIFEST_PATH, f"reveal of {item_id} differs from its ledger leaves", canonical_text(want_row), show(got_row), where=w)
        data = s.read(r.get("path"), f"reveal of {item_id}")
        if data is None:
            continue
        rel = str(r.get("path"))
        digest = sha256_hex(data)
        report.check(digest == commit.commitment, rel, f"SHA-256 of the reveal file is not the commitment of {item_id}", f"{commit.commitment} (ledger entries[{commit.index}])", digest)
        try:
            doc = parse_canonical(data)
        except FormatError as e:
            report.check(False, rel, str(e))
            continue
        if not report.add(check_reveal_document(doc), rel):
            continue
        report.check(doc["id"] == item_id, rel, "id differs from the ledger", item_id, doc["id"])
        report.check(doc["gate"] == commit.gate, rel, "gate differs from the commit leaf", commit.gate, doc["gate"])
        if doc["salt"] in salts:
            report.check(False, rel, f"salt reused (also in the reveal of {salts[doc['salt']]})")
        salts[doc["salt"]] = item_id


def _check_runs(s: _Site, manifest: dict[str, Any], ledger: Ledger, params: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    report = s.report
    rows = _ordered_ids(report, manifest["runs"], MANIFEST_PATH, "runs", "id", list(ledger.runs))
    specs: dict[str, dict[str, Any]] = {}
    by_id = {r["id"]: r for r in rows if isinstance(r.get("id"), str)}
    for run in ledger.runs.values():
        row = by_id.get(run.id)
        if row is None:
            continue
        report.add(check_keys(row, ("id", "spec", "status"), where=f"runs[{run.id}]"), MANIFEST_PATH)
        loaded = s.document(row.get("spec"), f"run spec of {run.id}")
        if loaded is None:
            continue
        data, spec = loaded
        rel = str(row.get("spec"))
        digest = sha256_hex(data)
        report.check(digest == run.sha256, rel, f"SHA-256 differs from run {run.id}'s ledger leaf", run.sha256, digest)
        if not report.add(check_run_spec(spec), rel):
            continue
        version = spec["methodology"].get("version")
        report.add(check_run_rules(ledger, run, spec, params.get(version) if isinstance(version, str) else None, specs), rel)
        specs[run.id] = spec
    return specs


def _check_certificates(
    s: _Site, manifest: dict[str, Any], ledger: Ledger, specs: dict[str, dict[str, Any]], params: dict[str, dict[str, Any]]
) -> None:
    report = s.report
    run_rows = manifest["runs"] if isinstance(manifest["runs"], list) else []
    run_paths = {r["id"]: r.get("spec") for r in run_rows if isinstance(r, dict) and isinstance(r.get("id"), str)}
    rows = _ordered_ids(report, manifest["certificates"], MANIFEST_PATH, "certificates", "serial", list(ledger.certificates))
    answers = _AnswerSource(s, manifest, ledger, specs)
    verdicts: dict[str, str] = {}
    now = _Clock()
    for r in rows:
        try:
            _check_one_certificate(s, r, ledger, specs, params, run_paths, answers, verdicts, now)
        except Exception as e:  # one hostile certificate must not stop the others being checked
            report.check(False, MANIFEST_PATH, f"certificate {show(r.get('serial'))} could not be checked: it holds a value of an unexpected shape "
                         f"({type(e).__name__}: {str(e)[:200]})")
    for row in run_rows:
        if isinstance(row, dict) and isinstance(row.get("id"), str) and row["id"] in ledger.runs:
            want = verdicts.get(row["id"], "open") if row["id"] in ledger.certificate_of_run else "open"
            report.check(row.get("status") == want, MANIFEST_PATH, f"run {row['id']}: status differs from its certificate", want, show(row.get("status")))


def _check_one_certificate(
    s: _Site, r: dict[str, Any], ledger: Ledger, specs: dict[str, dict[str, Any]], params: dict[str, dict[str, Any]],
    run_paths: dict[str, Any], answers: "_AnswerSource", verdicts: dict[str, str], now: "_Clock",
) -> None:
    report = s.report
    serial = r.get("serial")
    ev = ledger.certificates.get(serial) if isinstance(serial, str) else None
    report.add(check_keys(r, ("serial", "run", "path", "details", "grader_record"), where=f"certificates[{serial}]"), MANIFEST_PATH)
    if ev is None:
        return
    report.check(r.get("run") == ev.run, MANIFEST_PATH, f"certificate {serial}: run differs from the ledger", ev.run, show(r.get("run")))
    loaded = s.document(r.get("path"), f"certificate {serial}")
    if loaded is None:
        return
    data, cert = loaded
    rel = str(r.get("path"))
    s.signed(rel, data, _site_key(report), f"certificate {serial}")
    digest = sha256_hex(data)
    report.check(digest == ev.sha256, rel, "SHA-256 differs from the certificate's ledger leaf", ev.sha256, digest)
    if not isinstance(cert, dict):
        report.check(False, rel, "a certificate must be an object")
        return
    run = ledger.runs[ev.run]
    spec = specs.get(ev.run)
    bound = report.add(certificate_binding_problems(cert, ev, run, spec), rel, checks=9)
    verdicts[ev.run] = str(cert.get("verdict"))
    expires = cert.get("expires_at")
    if is_time(expires) and expires < now():
        report.notes.append(f"certificate {serial} expired at {expires} (a state, not a failure)")
    if spec is None:
        return
    gate = ledger.gates.get(run.gate)
    public = bool(gate and gate.public)
    version = spec["methodology"].get("version")
    pinned = params.get(version) if isinstance(version, str) else None
    report.add(check_certificate(cert, spec, pinned, public, run_paths.get(ev.run, ""), run.sha256), rel)
    details, record = _published_records(s, r, cert, spec, public, ledger, rel)
    if not (bound and recheckable(cert)) or pinned is None:
        return
    results = cert["results"]
    found = recheck_certificate(cert, pinned, public, answers.answers(spec["items"]), details, record, len(spec["exclusion_rules"]))
    report.add(found.problems, rel, checks=len(results) + 8)
    report.asserted += found.asserted


class _Clock:
    """This machine's time, read once and only if a certificate has an expiry: expiry is a
    state reported against the verifier's clock (FORMAT.md, reading 20), and a build that
    verifies its own output must not otherwise read the clock."""

    def __init__(self) -> None:
        self._now: str | None = None

    def __call__(self) -> str:
        if self._now is None:
            self._now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return self._now


class _AnswerSource:
    """The revealed answers of the items certificates use, read from their reveal files on
    demand: a site may reveal a million items, and only those in runs are needed here."""

    def __init__(self, s: _Site, manifest: dict[str, Any], ledger: Ledger, specs: dict[str, dict[str, Any]]) -> None:
        used = {i for spec in specs.values() for i in spec["items"]}
        rows = manifest["reveals"] if isinstance(manifest["reveals"], list) else []
        self.paths = {r["id"]: r.get("path") for r in rows if isinstance(r, dict) and isinstance(r.get("id"), str) and r["id"] in used}
        self.s = s
        self.ledger = ledger
        self.cache: dict[str, dict[str, Any] | None] = {}

    def answer(self, item_id: str) -> dict[str, Any] | None:
        if item_id in self.cache:
            return self.cache[item_id]
        value = None
        commit = self.ledger.commit(item_id)
        rel = self.paths.get(item_id)
        if commit is not None and item_id in self.ledger.reveals and is_safe_path(rel):
            try:
                data = (self.s.root / rel).read_bytes()
                if sha256_hex(data) == commit.commitment:  # _check_reveals reports any other case
                    doc = parse_canonical(data)
                    if not check_reveal_document(doc):
                        value = doc["item"]["answer"]
            except (OSError, FormatError):
                value = None
        if len(self.cache) > 50_000:
            self.cache.clear()
        self.cache[item_id] = value
        return value

    def answers(self, items: list[str]) -> dict[str, dict[str, Any]]:
        out = {}
        for i in items:
            a = self.answer(i)
            if a is not None:
                out[i] = a
        return out


def _published_records(
    s: _Site, row: dict[str, Any], cert: dict[str, Any], spec: dict[str, Any], public: bool, ledger: Ledger, rel: str
) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
    """The details documents and grader record the manifest lists for a certificate, checked
    against its hashes and against when each is due (SPEC §6): a details document once its
    item is revealed, the grader record once every item is (at once on a public gate). One
    published early would leak answers; one missing when due hides evidence."""
    report = s.report
    serial = cert.get("serial")
    results = [r for r in cert.get("results", []) if isinstance(r, dict) and isinstance(r.get("item"), str)] if isinstance(cert.get("results"), list) else []
    listed = row.get("details")
    if not isinstance(listed, list):
        report.check(False, MANIFEST_PATH, f"certificate {serial}: details must be a list of paths", found=show(listed))
        listed = []
    by_hash = {r.get("details"): r for r in results if isinstance(r.get("details"), str)}
    details: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for path in listed:
        loaded = s.document(path, f"details of certificate {serial}")
        if loaded is None:
            continue
        digest = sha256_hex(loaded[0])
        sealed = by_hash.get(digest)
        if not report.check(sealed is not None, str(path), "details document whose hash no sealed result of the certificate holds", f"one of the results' details hashes in {rel}", digest):
            continue
        item = sealed.get("item")
        report.check(item in ledger.reveals, str(path), f"details of {item} published while the item is sealed: they would reveal its answer", "published after the item's reveal", "published")
        details[str(item)] = loaded[1]
        order.append(str(item))
    sealed_due, due = due_records(results, spec["items"], public, ledger.reveals)
    for r in sealed_due:
        report.check(r["item"] in details, MANIFEST_PATH, f"certificate {serial}: item {r['item']} is revealed but its details document is not published", "listed in details", "missing")
    want_order = [r.get("item") for r in results if r.get("item") in details]
    report.check(order == want_order, MANIFEST_PATH, f"certificate {serial}: details are listed in result order", show(want_order), show(order))
    path = row.get("grader_record")
    record = None
    if path is None:
        report.check(not due, MANIFEST_PATH, f"certificate {serial}: the grader record is due but not published",
                     "published (a public gate's at once, a secret gate's once every item is revealed)", "null")
        return details, None
    report.check(due, str(path), f"certificate {serial}: grader record published before every item of the certificate is revealed", "not yet published", "published")
    loaded = s.document(path, f"grader record of {serial}")
    if loaded is not None:
        want = cert.get("grader", {}).get("record") if isinstance(cert.get("grader"), dict) else None
        if report.check(sha256_hex(loaded[0]) == want, str(path), "grader record does not hash to the certificate's grader.record", show(want), sha256_hex(loaded[0])):
            record = loaded[1] if isinstance(loaded[1], dict) else None
    return details, record


def _site_key(report: Report) -> bytes:
    return parse_vkey(report.key["vkey"]).public_key


def _check_verifier(s: _Site, manifest: dict[str, Any]) -> None:
    """SPEC §8: the site's verify.py is byte for byte this verifier. A copy that differs is a
    failure, whatever it does: readers who run the site's own copy would run other code."""
    rel = manifest["verifier"]
    theirs = s.read(rel, "verifier")
    if theirs is None:
        return
    try:
        mine = Path(own_file()).read_bytes()
    except OSError as e:
        s.report.check(False, rel, "this verifier cannot read its own file to compare", "a readable verify.py", e.strerror or str(e))
        return
    s.report.check(theirs == mine, rel, "the site's verifier differs from this verifier (SPEC §8: byte for byte the project's verify.py)",
                   f"SHA-256 {sha256_hex(mine)} (this verifier)", f"SHA-256 {sha256_hex(theirs)}")
