"""The command line of verify.py (format v1 §8, FORMAT.md v2):

python3 -P verify.py [SITE] [--key K] [--since CHECKPOINT]... [--state FILE | --no-state] [--json]
python3 -P verify.py proof FILE FILE.tlog-proof --key VKEY
python3 -P verify.py mirror URL DIR [--jobs N] [--key K] [--policy FILE] [--state FILE | --no-state] [--json]
"""

import argparse
import dataclasses
import os
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from generator.verifier.core.canonical import canonical_text
from generator.verifier.core.errors import FormatError, SiteUnreadable
from generator.verifier.core.isolation import foreign_modules, own_file, path_within
from generator.verifier.core.public_keys import check_key_pin, parse_vkey
from generator.verifier.core.report import Report
from generator.verifier.core.sodium import NACL
from generator.verifier.core.text import printable, safe_json
from generator.verifier.memory.checkpoint_memory import (
    default_state_path,
    read_state,
    remembered_keys,
    saved_from_state,
    write_state,
)
from generator.verifier.memory.mirror_record import load_mirror_memory, record_path, save_record
from generator.verifier.memory.release_memory import remembered_lists
from generator.verifier.rules.revocations import REVOCATIONS_PATH
from generator.verifier.site.history import ArtifactCheck, verify_artifact
from generator.verifier.site.mirror import MirrorFailed, mirror_site
from generator.verifier.site.remote import RemoteUnreadable, open_remote
from generator.verifier.site.verify_site import verify_site
from generator.verifier.tlog.policy import Policy, parse_policy
from generator.verifier.tlog.tlogproof import parse_tlog_proof
from generator.verifier.tlog.witnessing import ml_dsa_log_signers, parse_max_age, policy_logs, policy_problems

# A saved checkpoint is a few hundred bytes; a bound keeps a wrong argument from being read whole.
_MAX_CHECKPOINT_BYTES = 1 << 16


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["proof"]:
        return _proof_main(args_list[1:])
    if args_list[:1] == ["mirror"]:
        return _mirror_main(args_list[1:])
    try:
        args = _site_parser().parse_args(args_list)
    except SystemExit as e:
        return 2 if e.code else 0
    if args.state and args.no_state:
        print("verify.py: --state and --no-state exclude each other", file=sys.stderr)
        return 2
    site = args.site if args.site is not None else os.path.dirname(own_file())
    refused = _refused_to_run([site])
    if refused is not None:
        return refused
    policy = _load_policy(args.policy) if args.policy else None
    if args.policy and policy is None:
        return 2
    return _verify(site, args, policy)


def _verify(
    site: str,
    args: argparse.Namespace,
    policy: Policy | None,
    **handed: Any,
) -> int:
    """Verify `site` as the options in `args` say, and what the mirror `handed` over (verify_site's
    known_files, known_now, folders); print the report, remember a pass; the exit status."""
    try:
        max_age = parse_max_age(args.max_age) if args.max_age is not None else None
    except FormatError as e:
        print(f"verify.py: --max-age: {printable(str(e))}", file=sys.stderr)
        return 2
    if max_age is not None and policy is None:
        print("verify.py: --max-age applies to the cosignatures a --policy asks for: give --policy", file=sys.stderr)
        return 2
    since: list[tuple[str, bytes, str | None]] = []
    for name in args.since:
        data = _read_small(name, "--since")
        if data is None:
            return 2
        since.append((name, data, None))
    state_path = None if args.no_state else (Path(args.state) if args.state else default_state_path())
    try:
        logs = read_state(state_path) if state_path else {}
    except FormatError as e:
        print(f"verify.py: --state: {printable(str(e))}", file=sys.stderr)
        return 2
    for origin in sorted(logs):
        # Which origin is this site's is known only once its manifest is read: offer every
        # remembered log, and the checks keep those of the site's origin.
        remembered = saved_from_state(logs, origin)
        if remembered is not None:
            since.append((f"{state_path} (remembered checkpoint of {origin})", remembered, origin))
    try:
        report = verify_site(
            site,
            args.key,
            debug=args.debug,
            since=since,
            from_tiles=getattr(args, "from_tiles", False),
            policy=policy,
            memory=state_path.parent / "releases" if state_path else None,
            full=args.full,
            known_logs=remembered_keys(logs),
            max_age=max_age,
            **handed,
        )
    except (SiteUnreadable, OSError) as e:
        print(f"verify.py: {printable(str(e))}", file=sys.stderr)
        return 2
    except FormatError as e:
        print(f"verify.py: --key: {printable(str(e))}", file=sys.stderr)
        return 2
    _warn_of_what_the_site_chose(report, args.policy, site)
    if report.ok and state_path is not None and report.tree:
        try:
            write_state(state_path, logs, report.tree, report.checkpoint, report.log_keys)
            report.notes.append(f"remembered checkpoint {report.tree['tree_size']} of {report.tree['origin']}")
        except OSError as e:
            report.warnings.append(f"could not write the state file {state_path}: {e.strerror or e}")
    print(safe_json(report.to_json()) if args.json else report.render())
    for trace in report.debug:
        print(trace, file=sys.stderr)
    return 0 if report.ok else 1


def _site_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verify.py",
        description="Verify a transparency site offline: every hash, signature, Merkle root, "
        "ledger rule and reveal, and every certificate recomputed. Needs only Python 3.11+ and PyNaCl. "
        "Run a copy you obtained from the project and keep outside the site's folder, not the site's own, as: "
        "python3 -P /path/to/verify.py SITE (-P keeps Python from importing modules from the script's folder).",
        epilog="Exit status: 0 every check passed, 1 at least one check failed, 2 the site "
        "could not be read, the arguments are wrong, or the verifier cannot run (a module loaded from the site, "
        "PyNaCl missing, Python older than 3.11).",
    )
    parser.add_argument(
        "site", nargs="?", default=None, help="the site directory (default: the directory holding this file)"
    )
    _verification_options(parser)
    parser.add_argument(
        "--from-tiles",
        action="store_true",
        help="replay the ledger from its C2SP tiles (ledger/tile/) instead of ledger/entries.json, which is then "
        "never read: for a log too large to read as one file (a format v3 site, which has no entries document, is "
        "always read so)",
    )
    return parser


def _verification_options(parser: argparse.ArgumentParser) -> None:
    """The options of a site's verification, which `verify.py mirror` passes through."""
    parser.add_argument(
        "--key",
        metavar="VKEY_OR_FINGERPRINT",
        help="pin the signing key: a signed-note verifier key or 'SHA256:<hex>'; without it the key shipped in "
        "the site is trusted",
    )
    parser.add_argument(
        "--since",
        metavar="CHECKPOINT",
        action="append",
        default=[],
        help="a checkpoint saved earlier: fail unless today's "
        "ledger extends it; may be repeated. Keep it outside the site (a copy of ledger/checkpoint you saved "
        "after a passing run): a file of the site is the site's word",
    )
    parser.add_argument(
        "--state",
        metavar="FILE",
        help="where to remember the last verified checkpoint of each log, so that a later run catches a rollback "
        "or a rewritten history by itself (default: $XDG_CACHE_HOME/transparency-verify/state.json); written "
        "only when every check passed",
    )
    parser.add_argument(
        "--no-state", action="store_true", help="neither read nor write the state file (nor the memory beside it)"
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="verify everything from nothing, even when the state file's folder remembers the release verified "
        "last (releases/ beside it); without --full a site that extends that release is verified from it: only "
        "its new ledger entries are replayed, a run or certificate is read and checked again only if "
        "something its check read changed, such as a reveal of one of its items or a file it names, and an "
        "inclusion proof (format v3) only if it is new or its bytes changed (every file is still hashed, every "
        "other check still made)",
    )
    parser.add_argument(
        "--policy",
        metavar="FILE",
        help="a C2SP tlog-policy file you obtained out of band and keep yourself: the site's key must be one of "
        "its logs, and today's checkpoint must carry valid cosignatures from its quorum of witnesses (the missing "
        "ones are named); a policy read from inside the site is the site's word, and the report warns of it",
    )
    parser.add_argument(
        "--max-age",
        metavar="DURATION",
        help="with --policy: fail when a witness's cosignature on today's checkpoint is older than this (3600s, 36h, "
        "7d); one dated in the future (beyond a minute of clock skew) fails with or without it",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--debug", action="store_true", help="on an internal error of the verifier, print its traceback too"
    )


def _warn_of_what_the_site_chose(report: Report, policy: str | None, site: str) -> None:
    """A policy or a verifier read from inside the site is the site's word: a pass proves nothing more."""
    if policy and _inside(policy, site):
        report.warnings.append(
            f"the trust policy was read from inside the site it judges ({policy}): the site can rewrite it to "
            "need no witness, so this check proves nothing the site did not choose; use a policy obtained out of "
            "band and kept by you, outside the site, as you would a key"
        )
    if os.path.abspath(__file__) == own_file() and _inside(own_file(), site):
        # The site's own copy checks the site with the code the site chose: a pass proves nothing more.
        report.warnings.append(
            f"this verify.py came with the site ({own_file()}): a site can ship a verifier that passes anything; "
            "use one you obtained yourself, kept outside the site"
        )


def _refused_to_run(folders: list[str]) -> int | None:
    """2, after one message saying what to do, if the verifier cannot run: a module may have
    come from the site (its code could have run, so no verdict of this process is worth
    anything) or PyNaCl is missing; None when the checks may go on. Never 1: that is a site
    that failed its checks, and automation must not read "could not look" as "looked and failed"."""
    if os.path.abspath(__file__) == own_file():  # run as verify.py: the site's folder is near
        hijacked = foreign_modules([*folders, os.path.dirname(own_file())])
        if hijacked:
            names = ", ".join(printable(name) for name, _ in hijacked[:5]) + (", ..." if len(hijacked) > 5 else "")
            print(
                f"verify.py: cannot run: {len(hijacked)} module(s) ({names}) were loaded from inside the site or the "
                f"current folder (first: {printable(hijacked[0][1])}), not from this Python's own installation "
                f"({printable(sys.prefix)}), so a site's code could have run. Keep the verify.py you obtained outside "
                "the site's folder, and run it with a Python whose PyNaCl you installed yourself (the system's, or a "
                "virtual environment you made): python3 -P /path/to/verify.py SITE",
                file=sys.stderr,
            )
            return 2
    if not NACL:
        print(
            f"verify.py: cannot run: PyNaCl is not installed for {printable(sys.executable)}. On Debian or Ubuntu: "
            "sudo apt install python3-nacl, then python3 -P verify.py SITE; elsewhere, in a virtual environment "
            "of your own: python3 -m venv verify-env && verify-env/bin/python -m pip install pynacl, then "
            "verify-env/bin/python -P verify.py SITE",
            file=sys.stderr,
        )
        return 2
    return None


def _inside(name: str, folder: str) -> bool:
    """Whether file `name` is in `folder`, as written or once every link is followed: a link
    either way is something the site chose, or leads to what it holds."""
    folders = {os.path.abspath(folder), os.path.realpath(folder)}
    files = {os.path.abspath(name), os.path.realpath(name)}
    return any(f != d and path_within(f, d) for f in files for d in folders)


def _load_policy(name: str) -> Policy | None:
    data = _read_small(name, "--policy")
    if data is None:
        return None
    try:
        return parse_policy(data)
    except FormatError as e:
        print(f"verify.py: --policy {printable(name)}: {printable(str(e))}", file=sys.stderr)
        return None


def _read_small(name: str, what: str) -> bytes | None:
    try:
        with open(name, "rb") as f:
            data = f.read(_MAX_CHECKPOINT_BYTES + 1)
    except OSError as e:
        print(f"verify.py: {what} {printable(name)}: {printable(e.strerror or str(e))}", file=sys.stderr)
        return None
    if len(data) > _MAX_CHECKPOINT_BYTES:
        print(f"verify.py: {what} {printable(name)}: larger than {_MAX_CHECKPOINT_BYTES} bytes", file=sys.stderr)
        return None
    return data


def _mirror_main(argv: list[str]) -> int:
    """`verify.py mirror URL DIR`: bring DIR to the site URL publishes now, then verify DIR."""
    try:
        args = _mirror_parser().parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    problem = _mirror_argument_problem(args)
    if problem:
        print(f"verify.py mirror: {problem}", file=sys.stderr)
        return 2
    refused = _refused_to_run([args.dir])
    if refused is not None:
        return refused
    policy = _load_policy(args.policy) if args.policy else None
    if args.policy and policy is None:
        return 2
    state_path = None if args.no_state else (Path(args.state) if args.state else default_state_path())
    folder = Path(args.dir)
    record_file = record_path(state_path.parent, folder) if state_path else None
    record, folders, whys = load_mirror_memory(record_file, folder)
    for why in whys:
        print(f"verify.py mirror: {printable(why)}", file=sys.stderr)
    try:
        remote = open_remote(args.url)
    except RemoteUnreadable as e:
        print(f"verify.py mirror: {printable(str(e))}", file=sys.stderr)
        return 2
    if remote.plain_http and not (args.key or policy):
        print(
            f"verify.py mirror: warning: {printable(remote.label)} is plain http: anyone on the way can serve "
            "another site with another key; pin the program's key with --key",
            file=sys.stderr,
        )
    try:
        releases = state_path.parent / "releases" if state_path and not args.full else None
        lists = partial(remembered_lists, releases) if releases else lambda origin: None
        outcome = mirror_site(remote, folder, args.key, record, args.jobs, sys.stderr, lists)
    except MirrorFailed as e:
        print(f"verify.py mirror: FAIL {printable(str(e))}", file=sys.stderr)
        return 1
    except (RemoteUnreadable, OSError) as e:
        print(f"verify.py mirror: {printable(str(e))} (the mirror is unchanged)", file=sys.stderr)
        return 2
    finally:
        remote.close()
    if record_file is not None:
        try:
            save_record(record_file, remote.label, outcome.files)
        except OSError as e:
            print(f"verify.py mirror: warning: could not write {record_file}: {e.strerror or e}", file=sys.stderr)
            record_file = None
    # Every file of the record was looked at (or written) by this run: its identity is not taken again.
    handed = {"known_files": outcome.files if record_file else None, "known_now": True, "folders": folders}
    return _verify(str(folder), args, policy, **handed)


def _mirror_argument_problem(args: argparse.Namespace) -> str | None:
    if args.state and args.no_state:
        return "--state and --no-state exclude each other"
    if not 1 <= args.jobs <= 64:
        return f"--jobs {args.jobs}: expected 1 to 64 requests at once"
    if args.key is not None:
        try:
            check_key_pin(args.key)
        except FormatError as e:
            return f"--key: {printable(str(e))}"
    return None


def _mirror_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verify.py mirror",
        description="Keep a copy of a published site in DIR and verify it. The first run copies every file; a "
        "later run fetches only the files whose SHA-256 in the signed SHA256SUMS changed (and the lists under "
        "sums/ of a format v3 or v4 site whose bytes changed, reading none the verifier remembers from the "
        "release it verified last), removes the files it wrote that the site no longer lists, and verifies the "
        "copy from the release it verified last, without reading again the files it wrote and hashed itself "
        "nor the folders unchanged since it last walked them. Nothing replaces a file of DIR before every new "
        "file arrived with the bytes SHA256SUMS lists.",
        epilog="Exit status: 0 the copy is up to date and every check passed, 1 the site failed a check (its "
        "SHA256SUMS signature, a file that arrived with other bytes than listed twice over, or the "
        "verification), 2 the site could not be read, the arguments are wrong or the verifier cannot run.",
    )
    parser.add_argument("url", help="the site: an https:// or http:// URL, a file:// URL or a folder")
    parser.add_argument("dir", help="the folder holding the copy (made on the first run)")
    jobs = "requests in flight at once (default 8), on kept-alive connections"
    parser.add_argument("--jobs", type=int, default=8, metavar="N", help=jobs)
    _verification_options(parser)
    return parser


def _proof_main(argv: list[str]) -> int:
    try:
        args = _proof_parser().parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    refused = _refused_to_run([os.path.dirname(os.path.abspath(p)) for p in (args.file, args.proof)])
    if refused is not None:
        return refused
    policy = _load_policy(args.policy) if args.policy else None
    if args.policy and policy is None:
        return 2
    try:
        keys = list(policy.log_keys) if policy else [parse_vkey(args.key)]
    except FormatError as e:
        print(f"verify.py proof: --key: {printable(str(e))}", file=sys.stderr)
        return 2
    try:
        with open(args.file, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"verify.py proof: {printable(args.file)}: {printable(e.strerror or str(e))}", file=sys.stderr)
        return 2
    proof = _read_small(args.proof, "proof")
    if proof is None:
        return 2
    origin_line = proof.split(b"\n\n", 1)[-1].split(b"\n", 1)[0].decode("utf-8", "replace")
    # Every key named for the proof's origin, as the site's check accepts any of them.
    candidates = (policy_logs(policy, origin_line) if policy else keys) or keys[:1]
    if policy is not None and not candidates:
        print(
            "verify.py proof: --policy names no Ed25519 log key: a proof's checkpoint is opened with the log's "
            "Ed25519 key, which every checkpoint carries; add its `log` line (keys.json's active key)",
            file=sys.stderr,
        )
        return 2
    result = verify_artifact(data, proof, candidates)
    log = result.signer
    if policy is not None and log is not None and not result.problems:
        checkpoint = parse_tlog_proof(proof).checkpoint
        result.problems.extend(policy_problems(policy, log.name, log.public_key, checkpoint))
        result = dataclasses.replace(result, ml_dsa_signers=ml_dsa_log_signers(policy, log.name, checkpoint)[0])
    _print_proof_result(result, args.file, args.proof, args.json)
    return 1 if result.problems else 0


def _proof_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="verify.py proof",
        description="Check one artifact alone, offline, with its C2SP tlog-proof: the proof's checkpoint is "
        "signed by the log's key, the leaf in its extra line commits to the file's SHA-256 (a reveal by its "
        "commit leaf, a certificate, run spec or methodology file by its own leaf), and the leaf is included in "
        "the checkpoint's tree.",
        epilog="Exit status: 0 the proof holds, 1 it does not, 2 a file could not be read, the arguments are "
        "wrong or the verifier cannot run. A pass says the file was logged; the whole site's check "
        "(verify.py SITE) is what recomputes its rules.",
    )
    parser.add_argument("file", help="the artifact, e.g. reveals/ITEM.json or certificates/SERIAL.json")
    parser.add_argument("proof", help="its proof, e.g. reveals/ITEM.json.tlog-proof")
    trust = parser.add_mutually_exclusive_group(required=True)
    trust.add_argument("--key", metavar="VKEY", help="the log's signed-note verifier key (keys.json's vkey)")
    trust.add_argument(
        "--policy",
        metavar="FILE",
        help="a C2SP tlog-policy file: its log keys sign the checkpoint (one of each signature type it names; it "
        "must name the log's Ed25519 key, with which the proof's checkpoint is opened), and its quorum of "
        "witnesses must have cosigned it (cosignature times are not judged here)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def _print_proof_result(result: ArtifactCheck, file: str, proof: str, as_json: bool) -> None:
    """The outcome of `verify.py proof`, as JSON or as lines for people."""
    log = result.signer
    if as_json:
        print(
            safe_json(
                {
                    "ok": not result.problems,
                    "file": file,
                    "problems": result.problems,
                    "origin": result.origin,
                    "tree_size": result.size,
                    "index": result.index,
                    "leaf": result.leaf,
                    "signers": [{"type": "Ed25519", "fingerprint": k.fingerprint} for k in [log] if k is not None]
                    + [{"type": "ML-DSA-44", "fingerprint": k.fingerprint} for k in result.ml_dsa_signers],
                }
            )
        )
    elif result.problems:
        for p in result.problems:
            print(f"FAIL {printable(proof)}: {printable(p)}")
    else:
        print(
            f"PASS: {printable(file)} is committed by leaf {result.index} of {printable(result.origin)}'s "
            f"log of {result.size} entries, in a checkpoint signed by {log.fingerprint if log else '?'} (Ed25519)"
            + "".join(f" and {k.fingerprint} (ML-DSA-44)" for k in result.ml_dsa_signers)
            + "."
        )
        print(f"  leaf: {printable(canonical_text(result.leaf))}")
        if isinstance(result.leaf, dict) and result.leaf.get("type") == "certificate":
            # A later leaf may revoke it, and one proof cannot show that no such leaf exists.
            print(
                "  not checked: whether the certificate was revoked since (a state only the whole ledger shows: "
                f"verify.py SITE reports it, and {REVOCATIONS_PATH} lists every revocation)"
            )


if __name__ == "__main__":
    # A terminal that cannot show a character gets an escape, never a traceback.
    for _stream in (sys.stdout, sys.stderr):
        if hasattr(_stream, "reconfigure"):
            _stream.reconfigure(errors="backslashreplace")
    sys.exit(main())
