"""Witness cosignatures for the build's checkpoint (c2sp.org/tlog-witness, tlog-cosignature).

The program lists its witnesses in `data/policy.txt`, a C2SP tlog-policy file that is also
published for verifiers to start from. A checkpoint's cosignatures come from three places, each
line checked against the witness's key before it is kept:

1. the last release's checkpoint, or the one data/checkpoints/ kept, when it has the same text (a
   rebuild keeps what it had);
2. `data/cosignatures/<size>.txt`, lines a witness gave offline (`transparency witness cosign`);
3. each witness with a URL, asked over HTTP (`add-checkpoint`) with bounded timeouts, unless
   the build is offline. A witness that does not answer, or refuses, is named in a warning: the
   site is still published, and a verifier's policy decides whether that is enough;
4. for the demo alone (the program signed with the published demo key), its demo witness, whose
   keys the repository publishes too (PRIVATE/demo-witness/witness.key, Ed25519, and
   witness-ml-dsa.key, ML-DSA-44): the build runs that witness itself and says so, so that the
   demo still meets its own policy after a change. Its cosignature proves nothing, like every
   signature of the demo.

A witness that replays the program's rules reads the log from a copy of the site, which cannot
hold the release being built. So the build asks first at `add-checkpoint-with-files`, sending
the files of the new entries (the tiles the log at the witness's size did not have, the new
reveals' documents), already written to the staging folder; a witness that speaks only C2SP
answers 404 there and is asked at `add-checkpoint`.
"""

from __future__ import annotations

import base64
import calendar
import logging
import re
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.build.previous_release import PreviousRelease
from generator.core import layout
from generator.core.cosigning_keys import load_cosigner
from generator.core.generator_errors import InputError, problem
from generator.core.proofs import MerkleTree
from generator.program.datadir import Paths
from generator.verifier import (
    CosignerKey,
    FormatError,
    LogKey,
    NoteError,
    Policy,
    VerifierKey,
    evaluate,
    log_signature_lines,
    parse_policy,
    verify_cosignatures,
)
from generator.witness.server import ADD_CHECKPOINT_PATH, ADD_WITH_FILES_PATH, Witness, files_request

POLICY_FILE = "policy.txt"
# A tree size as a witness's 409 answer gives it: ASCII digits, no more than a 64-bit size has.
_SIZE_RE = re.compile(r"(0|[1-9][0-9]{0,18})")
COSIGNATURES_DIR = "cosignatures"
MAX_RESPONSE_BYTES = 1 << 16
MAX_SHOWN_REPLY = 2000  # of a refusal: the problems a rules witness lists, one a line
# Where the demo keeps its witness's key, in its private directory (data/make-demo-history.sh).
DEMO_WITNESS_KEY = "demo-witness/witness.key"
DEMO_ML_DSA_WITNESS_KEY = "demo-witness/witness-ml-dsa.key"

log = logging.getLogger("transparency")


@dataclass(frozen=True)
class Cosigned:
    note: bytes
    witnesses: tuple[str, ...]
    warnings: tuple[str, ...]


def load_policy(paths: Paths) -> Policy | None:
    path = paths.data / POLICY_FILE
    if not path.is_file():
        return None
    try:
        return parse_policy(path.read_bytes())
    except FormatError as e:
        raise InputError([problem(paths.show(path), str(e))], "the trust policy is malformed") from None


def policy_bytes(paths: Paths) -> bytes | None:
    path = paths.data / POLICY_FILE
    return path.read_bytes() if path.is_file() else None


def _signed_by(note: bytes, key: LogKey) -> bool:
    """Whether the log's `key` (Ed25519 or ML-DSA-44) validly signed `note`."""
    try:
        log_signature_lines(note, [key])
    except NoteError:
        return False
    return True


def _signature_lines(note: bytes) -> list[str]:
    text = note.decode("utf-8", "replace")
    return [line for line in text[text.rfind("\n\n") + 2 :].split("\n") if line]


def _note_text(note: bytes) -> bytes:
    return note[: note.rfind(b"\n\n") + 1]


Post = Callable[[str, bytes, float], tuple[int, bytes]]
# The site files (path, bytes) a witness replaying the rules needs beyond a copy of the site at the
# size it last cosigned (its argument): the new tiles and reveals.
NewFiles = Callable[[int], list[tuple[str, bytes]]]


def http_post(url: str, body: bytes, timeout: float) -> tuple[int, bytes]:
    """POST to a witness; (status, body), the body bounded in size and the whole exchange in
    time (`timeout` bounds each socket wait, the deadline the answer: a witness sending a byte
    now and then cannot hold the build). Network failures raise OSError."""
    deadline = time.monotonic() + 3 * timeout
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "text/plain"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, _read_until(response, deadline)
    except urllib.error.HTTPError as e:
        return e.code, _read_until(e, deadline)


def _read_until(response: Any, deadline: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < MAX_RESPONSE_BYTES:
        if time.monotonic() > deadline:
            raise TimeoutError("the witness took too long to answer")
        chunk = response.read1(min(4096, MAX_RESPONSE_BYTES - size)) if hasattr(response, "read1") else b""
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def cosign(
    paths: Paths,
    policy: Policy | None,
    note: bytes,
    tree: MerkleTree,
    previous: PreviousRelease | None,
    last_size: int,
    offline: bool = False,
    timeout: float = 10.0,
    post: Post = http_post,
    files: NewFiles | None = None,
    demo_at: str | None = None,
) -> Cosigned:
    """`note` (the log-signed checkpoint of `tree`) with every valid cosignature found.

    `demo_at`, given only when the program is the demo, is the release time: a policy witness
    still missing whose key is the demo witness's own cosigns then, with that time."""
    if policy is None:
        return Cosigned(note, (), ())
    log_keys: list[LogKey] = [*policy.log_keys, *policy.ml_dsa_log_keys]
    if not any(_signed_by(note, k) for k in log_keys):
        raise InputError(
            [problem(paths.show(paths.data / POLICY_FILE), "names no log key that signs this program's checkpoint")],
            "the trust policy is not this program's",
        )
    text = _note_text(note)
    found: dict[str, str] = {}  # policy witness name -> its line
    warnings: list[str] = []

    def keep(line: str, source: str, strict: bool) -> None:
        candidate = text + b"\n" + line.encode() + b"\n"
        for w in policy.witnesses:
            try:
                if w.key.name in verify_cosignatures(candidate, [w.key]):
                    found.setdefault(w.name, line)
                    return
            except NoteError as e:
                if strict:
                    raise InputError([problem(source, f"a cosignature by {w.name} does not verify: {e}")]) from None
                warnings.append(f"{source}: a cosignature by {w.name} does not verify ({e}); left out")
                return
        if strict:
            raise InputError([problem(source, "a line that is no cosignature by a witness of the policy", found=line)])

    # What was published before, in the last release or kept in data/checkpoints/ (a build into a
    # new folder): a witness's ML-DSA-44 cosignature is randomized, and a rebuild keeps its bytes.
    kept = paths.checkpoints_dir / str(tree.size)
    for old in (previous.file(layout.CHECKPOINT) if previous else None, kept):
        if old is not None and old.is_file() and _note_text(old.read_bytes()) == text:
            for line in _signature_lines(old.read_bytes())[1:]:
                keep(line, str(old), strict=False)
    stored = paths.data / COSIGNATURES_DIR / f"{tree.size}.txt"
    if stored.is_file():
        for line in stored.read_text(encoding="utf-8").splitlines():
            if line.strip():
                keep(line, paths.show(stored), strict=True)
    if not offline:
        for w in policy.witnesses:
            if w.name in found or not w.url:
                continue
            line_or_error = _ask(w.url, note, tree, last_size, timeout, post, files)
            if line_or_error.startswith("\u2014 "):
                before = len(warnings)
                for line in line_or_error.splitlines():
                    keep(line.strip(), f"witness {w.name} ({w.url})", strict=False)
                if w.name not in found and len(warnings) == before:
                    warnings.append(f"witness {w.name} ({w.url}) answered with another witness's cosignature")
            else:
                warnings.append(f"witness {w.name} ({w.url}): {line_or_error}")
    if demo_at is not None:
        for w in policy.witnesses:
            made = None if w.name in found else _demo_cosignature(paths, w.key, note, demo_at, policy.log_keys)
            if made is not None:
                keep(made, f"the demo witness {w.name}", strict=True)
                log.warning(
                    "demo: the checkpoint of size %d is cosigned by the demo's witness %s (%s), run by this build with "
                    "a key the repository publishes (under %s); a demo cosignature proves nothing",
                    tree.size,
                    w.name,
                    w.key.label,
                    paths.show(paths.private / "demo-witness"),
                )
    names = [w.name for w in policy.witnesses if w.name in found]
    out = note + "".join(found[n] + "\n" for n in names).encode()
    holds, missing = evaluate(policy, names)
    if not holds:
        # The site still verifies with verify.py (which follows the policy only with --policy),
        # but every reader who applies the published policy, the in-browser check among them,
        # will refuse this checkpoint: the operator must hear it before publishing.
        warnings.append(
            f"today's checkpoint (size {tree.size}) does not meet the quorum of "
            f"{paths.show(paths.data / POLICY_FILE)}: no cosignature yet by {', '.join(missing)}; readers who apply "
            f"the policy will not accept it until one is stored in {paths.show(paths.data / COSIGNATURES_DIR)}/"
            f"{tree.size}.txt or a witness answers"
        )
    return Cosigned(out, tuple(names), tuple(warnings))


def _demo_cosignature(
    paths: Paths, key: CosignerKey, note: bytes, at: str, log_keys: tuple[VerifierKey, ...]
) -> str | None:
    """The demo witness's cosignature line of `note`, made by the witness's own code (a fresh
    state: the demo's committed one stays as it is) at time `at`, so that a rebuild makes the
    same bytes; None unless PRIVATE holds the demo witness's key and it is `key`."""
    path = paths.private / DEMO_WITNESS_KEY
    cosigner = None
    for candidate in (path, paths.private / DEMO_ML_DSA_WITNESS_KEY):
        if candidate.is_file():
            found = load_cosigner(candidate, key.name)
            cosigner, path = (found, candidate) if found.key == key else (cosigner, path)
    if cosigner is None:
        return None
    origin = note.split(b"\n", 1)[0].decode("utf-8", "replace")
    when = max(1, calendar.timegm(time.strptime(at, "%Y-%m-%dT%H:%M:%SZ")))
    logs = {origin: tuple(k for k in log_keys if k.name == origin)}
    with tempfile.TemporaryDirectory(prefix="demo-witness-") as state:
        witness = Witness(key.name, cosigner, Path(state), logs, clock=lambda: when)
        status, _, answer = witness.add_checkpoint(b"old 0\n\n" + note)
    if status != 200:
        raise InputError([problem(paths.show(path), f"the demo witness refused the checkpoint: {answer.decode()}")])
    return answer.decode().strip()


def _ask(
    url: str, note: bytes, tree: MerkleTree, old: int, timeout: float, post: Post, files: NewFiles | None = None
) -> str:
    """One witness's cosignature line, or what went wrong (its answer's lines kept as lines). A
    witness that knows another size answers 409 with it: asked once more, from there."""
    if not url.startswith(("https://", "http://")):
        return "its URL is neither https:// nor http://"
    endpoint = url.rstrip("/") + ADD_CHECKPOINT_PATH
    with_files = files is not None
    for _ in range(2):
        if not 0 <= old <= tree.size:
            return f"it knows a size {old} beyond this ledger's {tree.size}: it saw another history"
        proof = "".join(base64.b64encode(h).decode() + "\n" for h in tree.consistency_proof(old))
        body = f"old {old}\n{proof}\n".encode() + note
        try:
            if files is not None and with_files:
                status, answer = post(url.rstrip("/") + ADD_WITH_FILES_PATH, files_request(body, files(old)), timeout)
                with_files = status not in (404, 405)  # a witness of the C2SP protocol alone
            if not with_files:
                status, answer = post(endpoint, body, timeout)
        except (OSError, ValueError) as e:
            return f"no answer ({e})"
        reply = answer.decode("utf-8", "replace").strip()
        if status == 200:
            return reply if reply else "an empty answer"  # one line a key of the witness
        if status == 409 and _SIZE_RE.fullmatch(reply):
            old = int(reply)
            continue
        if len(reply) > MAX_SHOWN_REPLY:
            reply = reply[:MAX_SHOWN_REPLY] + "…"
        return f"refused with HTTP {status}: {reply}"
    return "it answered 409 twice"
