"""The `transparency` command: a thin layer of click over generator.commands.

Each command resolves the program's directories, calls one function of generator.commands, and
prints what happened. Exit status: 0 ok, 1 verification failed, 2 bad input or usage. Besides
the commands it imports only the generator's error tree (for the message and exit status), the
program's directories (its --data and --private options) and the verifier's safe printing:
generator/architecture.py's root line, which the tests enforce.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from generator import __version__
from generator.commands.monitor_site import EVENT_TYPES
from generator.core.generator_errors import TransparencyError
from generator.program.datadir import ENV_DATA, ENV_PRIVATE, Paths, unsafe_private_place
from generator.verifier import printable, safe_json

DEMO_WARNING = (
    "WARNING: this site is signed with the DEMO key, which is published in the repository "
    "(data/private). Its signatures prove nothing. A real program keeps its private directory "
    "outside the repository and points --private or TRANSPARENCY_PRIVATE at it."
)


class _Group(click.Group):
    """Turns the generator's errors into a plain message and their exit status, no traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TransparencyError as e:
            click.echo(f"error: {e}", err=True)
            ctx.exit(e.exit_code)


class ProgressPrinter:
    """Progress on stderr: a live counter on a terminal, one line per phase elsewhere."""

    def __init__(self) -> None:
        self.phase: str | None = None
        self.tty = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, phase: str, n: int, total: int) -> None:
        if phase != self.phase:
            if self.tty and self.phase:
                click.echo("", err=True)
            if not self.tty:
                click.echo(f"{phase}...", err=True)
            self.phase = phase
        now = time.monotonic()
        if self.tty and (now - self._last > 0.1 or n == total):
            self._last = now
            count = f"{n:,}/{total:,}" if total else f"{n:,}"
            click.echo(f"\r{phase}: {count}", err=True, nl=False)

    def done(self) -> None:
        if self.tty and self.phase:
            click.echo("", err=True)
        self.phase = None


class _NoteHandler(logging.Handler):
    """What a command says besides its result (an interrupted command it finished), on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(f"note: {printable(record.getMessage())}", err=True)


def _paths(ctx: click.Context) -> Paths:
    return ctx.find_object(Paths)  # type: ignore[return-value]


def _echo_lines(prefix: str, text: str) -> None:
    """`text` from elsewhere (a witness's answer) on stderr, its lines as lines, each escaped: a
    newline in it starts a line of its own, never shows as \\x0a, and can never start a fake one."""
    first, *rest = text.split("\n")
    click.echo(f"{prefix}{printable(first)}", err=True)
    for line in rest:
        click.echo(f"  | {printable(line)}", err=True)


_AT = click.option(
    "--at",
    metavar="TIME",
    help="Time of the new ledger event, YYYY-MM-DDTHH:MM:SSZ (UTC). Default: now. "
    "Never earlier than the ledger's last event.",
)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--data",
    type=click.Path(path_type=Path, file_okay=False),
    envvar=ENV_DATA,
    default="data",
    show_default=True,
    help=f"The program's public data directory (or ${ENV_DATA}).",
)
@click.option(
    "--private",
    type=click.Path(path_type=Path, file_okay=False),
    envvar=ENV_PRIVATE,
    default=None,
    help=f"The private directory: signing key, item sources, sealed items (or ${ENV_PRIVATE}). "
    "Default: DATA/private, which is only right for the demo: a real program's private directory lies outside "
    "the data directory and any git work tree.",
)
@click.version_option(__version__, prog_name="transparency")
@click.pass_context
def main(ctx: click.Context, data: Path, private: Path | None) -> None:
    """Build and verify the transparency site of an AI-evaluation program.

    \b
    A program's life, command by command:
      transparency init --name NAME --origin ORIGIN   create data/ and a signing key
      transparency commit                             commit new items from PRIVATE/items
      transparency retire ID --note TEXT              reveal a retired secret item
      transparency register RUN_SPEC.json             fix a run before it happens
      transparency results from-inspect LOG.eval ...  its results file, from an Inspect log
      transparency results from-lm-eval OUTPUT ...    ... or from lm-evaluation-harness's output
      transparency results from-harbor JOB_DIR ...    ... or from a Harbor job
      transparency agreement register LABELS --run R  commit blind human labels of a run's items
      transparency certify RESULTS.json               decide the run, issue its certificate
      transparency agreement report LABEL_SET         how far the judge agrees with the labels
      transparency revoke SERIAL --reason TEXT        withdraw a certificate, publicly and for good
      transparency withdraw RUN --reason TEXT         withdraw a registered run that will never be run
      transparency status                             the program's state, and what is not built yet
      transparency build                              render and sign the site into public/
      transparency verify public                      check it as an outsider would
      transparency publish s3://BUCKET/PREFIX         send what changed to a store (or a folder)
      transparency monitor SITE                       follow a published log, event by event
      transparency mirror follow SITE --out DIR ...   keep a copy of its log, cosigned (C2SP tlog-mirror)
      transparency serve                              preview it on localhost

    Every artifact is signed with Ed25519. An auditor checks a site with a verify.py obtained
    from the project and kept outside the site (python3 -P /path/to/verify.py SITE), never the
    copy the site ships; it needs only Python and PyNaCl. Exit status: 0 ok, 1 verification
    failed, 2 bad input or usage.

    The input formats ("format v1 §N" in these texts and in error messages) are
    docs/formats/v1.md and FORMAT.md of the source repository; examples/ holds a whole file of
    each kind and docs/tutorial.md makes a program from nothing with them.
    """
    ctx.obj = Paths.resolve(data, private)
    log = logging.getLogger("transparency")
    if not any(isinstance(h, _NoteHandler) for h in log.handlers):
        log.addHandler(_NoteHandler())


@main.command()
@click.option("--name", required=True, help="The program's name, shown on every page.")
@click.option(
    "--origin",
    required=True,
    help="The program's identity and key name: a URL without scheme, e.g. transparency.example.org/oracle.",
)
@click.option(
    "--gate",
    "gates",
    multiple=True,
    metavar="ID:NAME:public|secret",
    help="A gate to declare; repeat for several. Default: a:Gate A:public and b:Gate B:secret.",
)
@click.option("--description", default="", help="A paragraph (Markdown) for the home page.")
@click.option(
    "--methodology",
    "params",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="PARAMS.(json|yaml)",
    help="The program's methodology parameters, published as the ledger's first methodology (with --prose). "
    "Without them none is published: publish it later with 'transparency methodology publish'.",
)
@click.option(
    "--prose",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="PROSE.md",
    help="The methodology's prose (Markdown with {{ placeholders }} from the parameters); with --methodology.",
)
@_AT
@click.pass_context
def init(
    ctx: click.Context,
    name: str,
    origin: str,
    gates: tuple[str, ...],
    description: str,
    params: Path | None,
    prose: Path | None,
    at: str | None,
) -> None:
    """Create a new program: the data skeleton, a signing key, its gates and, if given, its
    methodology.

    Writes DATA/program.yaml, DATA/keys.json and DATA/ledger.jsonl (the gates, and the
    methodology given with --methodology and --prose, as its first events), and
    PRIVATE/signing.key (mode 0600). Without --methodology no methodology is published, and no
    run can be registered until 'transparency methodology publish PARAMS --prose PROSE' publishes
    the program's own. Refuses to touch an existing program or key. Warns when the private
    directory lies inside the data directory or a git work tree, where it would be published.
    """
    from generator.commands.gate import GateSpec
    from generator.commands.init import init_program, methodology_option

    methodology = methodology_option(params, prose)
    paths = _paths(ctx)
    gate_list: list[GateSpec | str] = list(gates or ("a:Gate A:public", "b:Gate B:secret"))
    new_private = not paths.private.exists()
    signer = init_program(paths, name, origin, gate_list, description, at, methodology=methodology)
    click.echo(f"Created the program in {paths.show(paths.data)} (private material in {paths.show(paths.private)}).")
    if new_private:
        click.echo(
            f"Wrote {paths.show(paths.private / '.gitignore')} ('*'): git ignores the private directory, signing "
            "key included."
        )
    click.echo(f"Signing key: {paths.show(paths.key_file)}")
    click.echo(f"  verifier key {signer.vkey}")
    click.echo(f"  fingerprint  {signer.fingerprint}")
    unsafe = unsafe_private_place(paths)
    if unsafe is not None:
        click.echo(f"warning: {unsafe}", err=True)
    if methodology is None:
        click.echo(
            "No methodology is published yet: write the program's own parameters and prose, then run "
            "'transparency methodology publish PARAMS.json --prose PROSE.md' (before registering any run)."
        )
    click.echo("Next: add item sources to PRIVATE/items/*.yaml, then run 'transparency commit'.")


@main.command()
@click.option("--origin", help="The key's name: the program's origin. Default: the origin in DATA/program.yaml.")
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Where to write the key. Default: PRIVATE/signing.key.",
)
@click.pass_context
def keygen(ctx: click.Context, origin: str | None, out: Path | None) -> None:
    """Generate an Ed25519 signing key (mode 0600); never overwrites a file.

    The key file uses the C2SP signed-note format (PRIVATE+KEY+<origin>+...), which
    golang.org/x/mod/sumdb/note reads too. Prints the verifier key and its fingerprint.
    """
    from generator.commands.init import keygen as make_key

    target, signer = make_key(_paths(ctx), origin, out)
    click.echo(f"Wrote {target} (mode 0600).")
    click.echo(f"  verifier key {signer.vkey}")
    click.echo(f"  fingerprint  {signer.fingerprint}")


@main.group(cls=_Group)
def key() -> None:
    """Rotate the program's signing keys (Ed25519, and ML-DSA-44 once added), add its ML-DSA-44 key,
    or record a key's compromise (format v2 ledger events)."""


@key.command("add-ml-dsa")
@click.option("--at", metavar="TIME", help="Event time (UTC, YYYY-MM-DDTHH:MM:SSZ); default now.")
@click.pass_context
def key_add_ml_dsa(ctx: click.Context, at: str | None) -> None:
    """Give the log an ML-DSA-44 key: every checkpoint from now on carries two signatures.

    Appends a key-addition event and writes PRIVATE/ml-dsa-44.key. From the tree that holds the
    event, every checkpoint is signed by the Ed25519 key (which Go's sumdb/note and every format
    v1 reader check) and by the ML-DSA-44 key, in the C2SP cosignature format under the log's
    name, which a quantum computer cannot forge. DATA/policy.txt gets a log line for the new
    key in the same transaction, so verifiers holding the policy require both signatures.

    \b
    Example:
      transparency key add-ml-dsa && transparency build
    """
    from generator.commands.ml_dsa_keys import add_ml_dsa_key

    done = add_ml_dsa_key(_paths(ctx), at)
    click.echo(f"Added the ML-DSA-44 key {done.new.key.fingerprint}")
    click.echo(f"  verifier key {done.new.key.vkey}")
    if done.policy:
        click.echo(f"Updated {done.policy}.")
    click.echo("Run 'transparency build' to publish the first checkpoint signed by both keys.")


@key.command("rotate")
@click.option("--at", metavar="TIME", help="Event time (UTC, YYYY-MM-DDTHH:MM:SSZ); default now.")
@click.option("--ml-dsa", "ml_dsa", is_flag=True, help="Rotate the log's ML-DSA-44 key instead of its Ed25519 key.")
@click.pass_context
def key_rotate(ctx: click.Context, at: str | None, ml_dsa: bool) -> None:
    """Introduce a new signing key, in the ledger (with --ml-dsa: a new ML-DSA-44 key).

    Appends a key-rotation event, writes a new PRIVATE/signing.key (with --ml-dsa:
    PRIVATE/ml-dsa-44.key) and keeps the old one in PRIVATE/retired-keys/ (ml-dsa-44-<key ID>.key
    for an ML-DSA-44 key) until the next build, which signs the hand-over checkpoint (the tree
    that first holds the rotation) with both keys: readers who trusted the old key can follow to
    the new one. The old key stays valid for what it signed before; anything it signs for a
    later tree fails verification. Run 'transparency build' next, then destroy the retired key.

    DATA/policy.txt, the trust policy, gets the new key in place of the old on its log lines, in
    the same transaction; every other small file of the data and private directories that still
    names the old key (a witness's logs file, say) is named in a warning.
    """
    if ml_dsa:
        from generator.commands.ml_dsa_keys import rotate_ml_dsa_key

        changed = rotate_ml_dsa_key(_paths(ctx), at)
        old = changed.old.key.fingerprint if changed.old else "none"
        click.echo(f"Rotated the ML-DSA-44 key: {old} -> {changed.new.key.fingerprint}")
        click.echo(f"  new verifier key {changed.new.key.vkey}")
        if changed.policy:
            click.echo(f"Updated {changed.policy}.")
        for line in changed.flagged:
            click.echo(f"warning: {line}.", err=True)
        click.echo("Run 'transparency build' to publish the hand-over checkpoint, signed by both ML-DSA-44 keys.")
        return
    from generator.commands.keys import rotate

    done = rotate(_paths(ctx), at)
    click.echo(f"Rotated: {done.old.fingerprint} -> {done.new.fingerprint}")
    click.echo(f"  new verifier key {done.new.vkey}")
    for line in done.updated:
        click.echo(f"Updated {line}.")
    for line in done.flagged:
        click.echo(f"warning: {line}.", err=True)
    click.echo("Run 'transparency build' to publish the hand-over checkpoint, signed by both keys.")


@key.command("revoke")
@click.argument("key_id", metavar="KEY")
@click.option("--reason", required=True, help="Why, in plain words (shown on the keys page and by verifiers).")
@click.option(
    "--compromised-at",
    required=True,
    metavar="TIME",
    help="From when the key must be distrusted (UTC, YYYY-MM-DDTHH:MM:SSZ): it stays valid only for trees whose "
    "every entry is older.",
)
@click.option("--at", metavar="TIME", help="Event time (UTC); default now.")
@click.pass_context
def key_revoke(ctx: click.Context, key_id: str, reason: str, compromised_at: str, at: str | None) -> None:
    """Record that KEY (a retired key's vkey or SHA256 fingerprint, Ed25519 or ML-DSA-44) was compromised.

    The active key cannot be revoked: rotate first, then revoke the old one. Permanent and
    public: the keys page and every verifier show it."""
    from generator.commands.keys import revoke_key

    row = revoke_key(_paths(ctx), key_id, reason, compromised_at, at)
    click.echo(f"Revoked {row.vkey} (valid until {row.valid_until}). Run 'transparency build' to publish.")


@main.group("beacon", cls=_Group)
def beacon_group() -> None:
    """The randomness beacon the methodology pins: its rounds, fetched for 'draw' and 'retire --draw'."""


@beacon_group.command("fetch")
@click.argument("round_number", metavar="ROUND", type=click.IntRange(min=1))
@click.option(
    "--relay",
    "relays",
    metavar="URL",
    multiple=True,
    help="A relay of the beacon's HTTP API, tried in order (repeatable). Default: drand's public relays.",
)
@click.option("--timeout", default=10.0, show_default=True, help="Seconds to wait for each relay.")
@click.option(
    "--out", type=click.Path(path_type=Path, dir_okay=False), help="Where to store it. Default: DATA/beacon/ROUND.json."
)
@click.pass_context
def beacon_fetch(
    ctx: click.Context, round_number: int, relays: tuple[str, ...], timeout: float, out: Path | None
) -> None:
    """Fetch round ROUND of the pinned beacon, check its signature, and store it.

    Each relay is asked in turn (GET RELAY/CHAIN_HASH/public/ROUND) until one serves the round
    signed by the pinned key; a relay that fails or lies is named, and the next is tried. The
    stored file is what 'transparency draw' and 'transparency retire --draw' take.
    """
    from generator.commands.beacon_rounds import fetch

    target = fetch(_paths(ctx), round_number, relays, timeout, out)
    click.echo(f"Round {round_number} checked and stored in {target}")


@beacon_group.command("round")
@click.argument("when", metavar="TIME")
@click.pass_context
def beacon_round(ctx: click.Context, when: str) -> None:
    """The first round of the pinned beacon published at or after TIME (YYYY-MM-DDTHH:MM:SSZ).

    For a drawn run's spec: name a round after the time you will register it.
    """
    from generator.commands.beacon_rounds import round_at
    from generator.verifier import is_time

    if not is_time(when):
        raise click.BadParameter("expected YYYY-MM-DDTHH:MM:SSZ (UTC)", param_hint="TIME")
    r = round_at(_paths(ctx), when)
    click.echo(f"{r.beacon}: round {r.round}, published {r.published}")


@beacon_group.command("due")
@click.pass_context
def beacon_due(ctx: click.Context) -> None:
    """The round of the next scheduled retirement, and when it is published."""
    from generator.commands.beacon_rounds import due

    r = due(_paths(ctx))
    click.echo(f"{r.beacon}: the next scheduled retirement is drawn by round {r.round}, published {r.published}")


@main.group(cls=_Group)
def gate() -> None:
    """Declare the program's gates (stages), each public or secret for good."""


@gate.command("add")
@click.argument("gate_id", metavar="ID")
@click.option("--name", required=True, help="The gate's name, e.g. 'Gate C'.")
@click.option(
    "--public/--secret",
    "public",
    required=True,
    help="Public: items are revealed when committed. Secret: items stay sealed until retired.",
)
@_AT
@click.pass_context
def gate_add(ctx: click.Context, gate_id: str, name: str, public: bool, at: str | None) -> None:
    """Declare gate ID (1-16 lowercase letters or digits) in the ledger."""
    from generator.commands.gate import GateSpec, add_gate

    leaf = add_gate(_paths(ctx), GateSpec(gate_id, name, public), at)
    click.echo(f"Declared gate {gate_id} ({'public' if public else 'secret'}) at {leaf['at']}.")


@main.group(cls=_Group)
def methodology() -> None:
    """Publish versions of the scoring methodology."""


@methodology.command("publish")
@click.argument("params", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option(
    "--prose",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="The methodology's explanation in Markdown; write numbers as placeholders such as {{ item_threshold }}.",
)
@_AT
@click.pass_context
def methodology_publish(ctx: click.Context, params: Path, prose: Path, at: str | None) -> None:
    """Validate PARAMS (JSON or YAML, format v1 §5) and publish it with its prose.

    The parameter file is stored in canonical form and its SHA-256 enters the ledger; runs pin
    it by version and hash. A published version never changes: publish a new version instead.
    """
    from generator.commands.methodology import publish

    pub = publish(_paths(ctx), params, prose, at)
    click.echo(f"Published methodology {pub.version} (sha256 {pub.sha256}) at {pub.at}.")


@main.command()
@_AT
@click.pass_context
def commit(ctx: click.Context, at: str | None) -> None:
    """Commit every item source in PRIVATE/items not yet in the ledger.

    Each new item gets a fresh 32-byte salt; its reveal document is written once and its SHA-256
    enters the ledger as the commitment. Items of a public gate are revealed at once; the others
    are sealed in PRIVATE/sealed until retired. Any problem in any source file stops the whole
    batch before anything is written.
    """
    from generator.commands.commit import commit_new_items

    progress = ProgressPrinter()
    result = commit_new_items(_paths(ctx), at, progress)
    progress.done()
    sealed = result.committed - result.revealed
    click.echo(
        f"Committed {result.committed} new item(s): {result.revealed} revealed (public gate), {sealed} sealed; "
        f"{result.unchanged} already committed."
    )


@main.command()
@click.argument("item_ids", metavar="[ID...]", nargs=-1)
@click.option("--note", help="Why the items are retired; published in the ledger. Required with ID...")
@click.option(
    "--draw",
    "round_file",
    metavar="ROUND-FILE",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Retire what the schedule's next beacon round draws (a round file from 'transparency beacon fetch').",
)
@_AT
@click.pass_context
def retire(
    ctx: click.Context, item_ids: tuple[str, ...], note: str | None, round_file: Path | None, at: str | None
) -> None:
    """Retire sealed item(s) ID... for cause, or the items a beacon round draws (--draw).

    \b
    For cause: transparency retire ID... --note TEXT
    Drawn:     transparency retire --draw data/beacon/ROUND.json

    Either way the items' committed texts are published and their reveals appended, with one
    note and one time. A drawn retirement is the one the methodology's schedule makes due: its
    round is fixed by the schedule ('transparency beacon due' names it), and the items are drawn
    from every sealed item no open run holds; the ledger records the round, and a verifier
    recomputes the draw. Pages show drawn retirements apart from those for cause.

    Refuses (writing nothing) an unknown or already revealed item, an item whose source changed
    since it was committed, an item used by a run that is still open, and, with --draw, a round
    that is not the one due, a round the pinned beacon did not sign, and a retirement recorded
    after a later event (it was due first). Publishes, with the items, the details of every
    certificate that used them, and the grader record of each certificate whose items are then
    all revealed.
    """
    if round_file is not None:
        from generator.commands.retire_drawn import retire_drawn

        if item_ids:
            raise click.UsageError("give either ID... or --draw, not both")
        drawn = retire_drawn(_paths(ctx), round_file, note, at)
        click.echo(
            f"Round {drawn.round} drew {len(drawn.items)} of {drawn.pool} sealed item(s): "
            f"{', '.join(drawn.items) or 'none'}; retired at {drawn.at}. Run 'transparency build' to publish."
        )
        return
    from generator.commands.retire import retire_items

    if not item_ids or note is None:
        raise click.UsageError("give ID... and --note TEXT (or --draw ROUND-FILE for a scheduled retirement)")
    leaves = retire_items(_paths(ctx), list(item_ids), note, at)
    click.echo(f"Retired {', '.join(item_ids)} at {leaves[0]['at']}; run 'transparency build' to publish.")


@main.command("draw")
@click.argument("run_id", metavar="RUN")
@click.argument("round_file", metavar="ROUND-FILE", type=click.Path(path_type=Path, dir_okay=False))
@_AT
@click.pass_context
def draw_command(ctx: click.Context, run_id: str, round_file: Path, at: str | None) -> None:
    """Fix the items of drawn run RUN with the beacon round its spec named (ROUND-FILE).

    A run spec may name a draw instead of its items ("draw": {"beacon": CHAIN_HASH, "round": N,
    "count": K}, v 2); the round must be published after the registration. Once it is, fetch
    it ('transparency beacon fetch N') and run this: the round's signature is checked against
    the beacon the methodology pins, and K items are drawn from the run's pool (its gate's
    items committed and not revealed when it was registered, less those its subject already
    ran) by the algorithm of FORMAT.md "Draws and timestamps". The `draw` leaf records the round
    and the items; results and the certificate then use exactly those items.
    """
    from generator.commands.draw import draw_run

    drawn = draw_run(_paths(ctx), run_id, round_file, at)
    click.echo(
        f"Run {drawn.run}: round {drawn.round} drew {len(drawn.items)} of {drawn.pool} eligible item(s) at {drawn.at}: "
        f"{', '.join(drawn.items)}"
    )


@main.command()
@click.argument(
    "specs", metavar="RUN_SPEC.json...", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False)
)
@_AT
@click.pass_context
def register(ctx: click.Context, specs: tuple[Path, ...], at: str | None) -> None:
    """Fix runs before they happen: validate each RUN_SPEC.json and append its `run` leaf.

    A spec (format v1 §6) names the subject, the gate, the items, the budget, the exclusion rules,
    the judge and the pinned methodology version and hash. Refuses, writing nothing: an
    unpublished methodology or a wrong hash; empty or repeated items, or repetitions other than
    1; an item not committed, not of the gate, already revealed (secret gate) or not yet
    revealed (public gate); a previous_run that is not this subject's last run on the gate, or
    is still open; a judge from the subject's own organization when the methodology asks for an
    independent one; on a secret gate, too few items or an item this subject already ran; a
    run id used before. Each spec is stored in canonical form as DATA/runs/<id>.json.

    Several specs register together, all or nothing, with one ledger replay: the way to
    register thousands of runs.
    """
    from generator.commands.register import register_runs

    registered = register_runs(_paths(ctx), list(specs), at)
    for reg in registered:
        chain = f", after run {reg.previous_run}" if reg.previous_run else ", the subject's first on this gate"
        drawn = f" to be drawn by beacon round {reg.round}" if reg.round is not None else ""
        click.echo(f"Registered run {reg.id} ({reg.items} items{drawn}{chain}) at {reg.at}; sha256 {reg.sha256}.")
    for reg in registered:
        if reg.round is not None:
            click.echo(
                f"Next for {reg.id}: once round {reg.round} is out, 'transparency beacon fetch {reg.round}' and "
                f"'transparency draw {reg.id} DATA/beacon/{reg.round}.json' fix its items."
            )
    click.echo("Next: run the evaluation, then 'transparency certify RESULTS.json'.")


@main.command()
@click.argument(
    "results", metavar="RESULTS.json...", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False)
)
@click.option("--serial", help="The certificate's serial (one results file only). Default: the run id.")
@click.option(
    "--expires-at", metavar="TIME", help="When the certificates expire (YYYY-MM-DDTHH:MM:SSZ). Default: never."
)
@_AT
@click.pass_context
def certify(
    ctx: click.Context, results: tuple[Path, ...], serial: str | None, expires_at: str | None, at: str | None
) -> None:
    """Decide registered runs from the evaluator's RESULTS.json files and issue their certificates.

    Every run gets exactly one certificate, whatever its verdict. Scores every item with the
    private answers, computes the summary, grades, band and verdict (format v1 §5), applies the
    grader's proposal inside the band and appends the certificate's leaf; the build signs it.
    On a secret gate each result is sealed: its salted details document stays in
    PRIVATE/certificates/<serial>/ until 'retire' reveals the item. Refuses, writing nothing:
    an unregistered or already certified run; results that do not name exactly the run spec's
    items; a missing or unknown field; a similarity that is not a decimal string in [0, 1]; an
    output of the wrong type or with a non-integer number; finished_at outside the run's time.
    Several files are decided together, all or nothing, with one ledger replay.
    """
    from generator.commands.certify import certify_runs

    progress = ProgressPrinter()
    decided = certify_runs(_paths(ctx), list(results), at, serial, expires_at, progress)
    progress.done()
    for c in decided:
        s = c.summary
        click.echo(f"Certificate {c.serial} for run {c.run}: {c.verdict.upper()}.")
        click.echo(
            f"  grade {c.grade}, score {c.score} ({c.score_rule}); {s['passed']} of {s['scored']} scored items passed "
            f"({s['pass_rate']} %), {s['total'] - s['scored']} not scored."
        )
        if c.sealed:
            click.echo("  Results are sealed; their details stay private until each item is retired.")
    click.echo("Run 'transparency build' to publish.")


@main.group("results", cls=_Group)
def results_group() -> None:
    """Make the results file 'transparency certify' reads from an evaluation harness's log."""


@results_group.command("from-inspect")
@click.argument("log", metavar="LOG.eval", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--run", "run_id", required=True, metavar="RUN_ID", help="The registered run the log is of.")
@click.option(
    "--map",
    "mapping",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The mapping file (YAML or JSON): the task and model the log must be of, and where the outputs are.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Where to write the results. Default: PRIVATE/results/RUN_ID.json.",
)
@click.option("--force", is_flag=True, help="Replace the --out file if it exists.")
@click.option(
    "--evidence-name",
    metavar="NAME",
    help="The log's name as an evidence file of the certificate (certificates/SERIAL/evidence/NAME). "
    "Default: its file name.",
)
@click.option(
    "--no-evidence",
    is_flag=True,
    help="Do not list the log as evidence: the certificate then binds the results, not the log they came from.",
)
@click.pass_context
def results_from_inspect(
    ctx: click.Context,
    log: Path,
    run_id: str,
    mapping: Path,
    out: Path | None,
    force: bool,
    evidence_name: str | None,
    no_evidence: bool,
) -> None:
    """Turn an Inspect evaluation log into the results file of run RUN_ID.

    Reads LOG.eval with inspect_ai (the 'inspect' extra: README, "Install"), checks it is of
    the task and model the mapping states, finished, and started after the run was registered;
    maps each sample to an item and its outputs to the item's answer fields; and writes a
    results file (format v1 §6) that 'transparency certify' takes, with the log's SHA-256 and size
    under "source". A sample that errored is an infra_error, one stopped by a limit, cancelled
    or without output is not_run, never a failure; errors Inspect retried (retry_on_error) are
    kept as the result's earlier attempts. An item the mapping excludes is excluded, what its
    sample came to kept as the attempt the exclusion sets aside. The log itself is listed as an
    evidence file of every item, by its path from the results file's folder, so the certificate
    binds it by hash and publishes it as details documents are (not with --no-evidence).
    Refuses, writing nothing: another task or model, an unfinished log, a sample of no item of
    the run, two samples of one item (epochs > 1), an item without a sample (unless the log was
    cancelled or stopped by an error: not_run), a missing or extra field, a non-critical text
    field without its similarity, a judge label that is not an integer, an exclusion of an item
    or under a rule the run spec does not have, a log name that cannot be an evidence name, a
    score edited by hand after the evaluation (unless the mapping accepts score edits).

    \b
    The mapping (unknown keys are errors):
      task: extract_fields        # required: the log's eval.task
      model: openai/gpt-4o        # required: the log's eval.model
      item: metadata.item_id      # default: id (the sample id is the item id)
      fields:                     # default for each field: completion.<field>,
        tags: store.tags          #   the completion read as a JSON object
      similarity:                 # required for every non-critical text field
        summary: score.similarity.metadata.summary
      judge_labels:               # optional: the judge's integer labels, by dimension
        correctness: score.judge.metadata.correctness
      exclude:                    # optional: items set aside under a rule of the run spec
        a-006:
          rule: 0                 # index into the run spec's exclusion_rules
          note: Pasted HTML, which the subject's input filter strips by design.
          at: "2026-11-28T12:00:00Z"  # when decided: not after the log's end
      accept_score_edits: false   # default: refuse a score edited by hand after the
                                  #   evaluation; true carries each edit into the results
    A source is completion, completion.<key>, metadata.<key>, store.<key>,
    score.<scorer>.value, score.<scorer>.answer or score.<scorer>.metadata.<key>;
    each further .<key> goes one member deeper.

    \b
    Example:
      transparency results from-inspect logs/extract.eval --run quill-a-3 --map inspect-map.yaml
      transparency certify PRIVATE/results/quill-a-3.json
    """
    from generator.commands.results_import import imported_lines, results_from_inspect

    paths = _paths(ctx)
    done = results_from_inspect(paths, log, run_id, mapping, out, force, evidence_name, not no_evidence)
    for line in imported_lines(paths, done):
        click.echo(line)


def _import_options(what: str, identity: str, files: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options every `results from-…` importer but Inspect's takes: the run, the mapping, where
    to write, --force and --no-evidence (Inspect's adds --evidence-name: its log is one file)."""

    def add(f: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(
            (
                click.option(
                    "--run", "run_id", required=True, metavar="RUN_ID", help=f"The registered run the {what} is of."
                ),
                click.option(
                    "--map",
                    "mapping",
                    required=True,
                    type=click.Path(path_type=Path, dir_okay=False),
                    help=f"The mapping file (YAML or JSON): {identity}, and where the outputs are.",
                ),
                click.option(
                    "--out",
                    type=click.Path(path_type=Path, dir_okay=False),
                    help="Where to write the results. Default: PRIVATE/results/RUN_ID.json.",
                ),
                click.option("--force", is_flag=True, help="Replace the --out file if it exists."),
                click.option(
                    "--no-evidence",
                    is_flag=True,
                    help=f"Do not list {files} as evidence: the certificate then binds the results, not what they "
                    "came from.",
                ),
            )
        ):
            f = option(f)
        return f

    return add


@results_group.command("from-lm-eval")
@click.argument("output", metavar="OUTPUT", type=click.Path(path_type=Path))
@_import_options("output", "the task and model the output must be of", "lm-eval's files")
@click.pass_context
def results_from_lm_eval(
    ctx: click.Context, output: Path, run_id: str, mapping: Path, out: Path | None, force: bool, no_evidence: bool
) -> None:
    """Turn an lm-evaluation-harness output into the results file of run RUN_ID.

    OUTPUT is what 'lm-eval run ... --output_path OUT --log_samples' wrote for the model: the
    folder OUT/<model> holding one results_<time>.json, or that file; the samples of the
    mapping's task, samples_<task>_<time>.jsonl, are read from beside it. Both are plain JSON,
    read without lm-eval installed. Checks the output is of the task and model (lm-eval's
    model_name) the mapping states, finished, started after the run was registered, with one
    response a document; maps each logged record to an item (by default its document's id) and
    its response, read as one JSON object, to the item's answer fields; and writes a results
    file (format v1 §6) that 'transparency certify' takes. An empty response is not_run. An
    item the mapping excludes is excluded, dated at the evaluation's end (lm-eval keeps no time
    per record). Both files are listed as evidence of every item, so the certificate binds them
    by hash (not with --no-evidence). Refuses, writing nothing: another task or model, no end
    time, repeats other than 1, a samples file the results do not count, a record of no item of
    the run, two records of one item, an item without a record, a missing or extra field, a
    non-critical text field without its similarity, a judge label that is not an integer.

    \b
    The mapping (unknown keys are errors):
      task: quill_extract         # required: a task of the results
      model: orca-parser-3.1      # required: the results' model_name
      item: doc.id                # default: doc.id (the document's id member); or doc_id
      fields:                     # default for each field: response.<field>,
        tags: doc.tags            #   the response read as a JSON object
      similarity:                 # required for every non-critical text field
        summary: metric.similarity.summary
      judge_labels:               # optional: the judge's integer labels, by dimension
        correctness: metric.judge.correctness
      exclude:                    # optional, as for from-inspect
        a-006: {rule: 0, note: "Pasted HTML.", at: "2026-12-05T12:26:32Z"}
      filter: none                # the task's filter read (default: the only one)
    A source is response, response.<key>, doc.<key>, target or metric.<name>[.<key>];
    each further .<key> goes one member deeper.

    \b
    Example:
      transparency results from-lm-eval out/orca-parser-3.1 --run orca-a-1 --map lm-eval-map.yaml
      transparency certify PRIVATE/results/orca-a-1.json
    """
    from generator.commands.results_import import imported_lines, results_from_lm_eval

    paths = _paths(ctx)
    done = results_from_lm_eval(paths, output, run_id, mapping, out, force, not no_evidence)
    for line in imported_lines(paths, done):
        click.echo(line)


@results_group.command("from-harbor")
@click.argument("job", metavar="JOB_DIR", type=click.Path(path_type=Path, file_okay=False))
@_import_options("job", "the agent and model the job must be of", "the job's files")
@click.pass_context
def results_from_harbor(
    ctx: click.Context, job: Path, run_id: str, mapping: Path, out: Path | None, force: bool, no_evidence: bool
) -> None:
    """Turn a Harbor job into the results file of run RUN_ID.

    JOB_DIR is the folder 'harbor run' wrote for the job (jobs_dir/<job_name>), holding its
    result.json and a folder per trial; read as JSON, without Harbor installed. Each item of the
    run is a task of the job named by the item's id. Checks every trial is of the agent and
    model the mapping states and the job started after the run was registered; a trial that
    raised an exception is an infra_error (a time limit or a cancellation not_run), one that left
    no answer file not_run, the others scored from the agent's answer (one JSON object, by
    default artifacts/answer.json in the trial's folder) and the verifier's rewards. Earlier
    trials of a task that failed (Harbor retried them) become the result's earlier attempts. A
    job with no finished_at is refused as unfinished, unless the mapping says interrupted: true;
    its tasks never started are then not_run. The job's result and each trial's result, answer
    and trajectory are listed as evidence (a trial's files of its item only), so the certificate
    binds them by hash (not with --no-evidence). Refuses, writing nothing: another agent or
    model, an unfinished job, a trial of no item of the run, two finished trials of one task, an
    item without a trial, a missing or extra field, a non-critical text field without its
    similarity, a judge label that is not an integer.

    \b
    The mapping (unknown keys are errors):
      agent: heron-agent            # required: every trial's agent_info.name
      model: heron/heron-agent-0.9  # required: agent_info.model_info.name
      item: task_name               # the default: the trial's task is the item
      answer_file: artifacts/answer.json  # the default
      fields:                       # default for each field: answer.<field>
        tags: reward.tags
      similarity:                   # required for every non-critical text field
        summary: reward.similarity_summary
      judge_labels:                 # optional: the judge's integer labels, by dimension
        correctness: reward.correctness
      exclude:                      # optional, as for from-inspect
        a-006: {rule: 0, note: "Pasted HTML.", at: "2026-12-05T13:06:30Z"}
      interrupted: false            # true: a job without an end was stopped for good
    A source is answer, answer.<key>, reward.<key> (the verifier's rewards) or
    result.<key> (the trial's result.json); each further .<key> goes one member deeper.

    \b
    Example:
      transparency results from-harbor jobs/heron-a-1 --run heron-a-1 --map harbor-map.yaml
      transparency certify PRIVATE/results/heron-a-1.json
    """
    from generator.commands.results_import import imported_lines, results_from_harbor

    paths = _paths(ctx)
    done = results_from_harbor(paths, job, run_id, mapping, out, force, not no_evidence)
    for line in imported_lines(paths, done):
        click.echo(line)


@main.group("agreement", cls=_Group)
def agreement_group() -> None:
    """Measure the judge against blind human labels: commit the labels first, report after."""


@agreement_group.command("register")
@click.argument("labels", metavar="LABELS.json", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--run", "run_id", required=True, metavar="RUN_ID", help="The registered run whose items were labelled.")
@click.option("--id", "set_id", required=True, metavar="ID", help="The label set's id, new in the ledger.")
@_AT
@click.pass_context
def agreement_register(ctx: click.Context, labels: Path, run_id: str, set_id: str, at: str | None) -> None:
    """Commit a blind human label set for run RUN_ID in the ledger (format v2).

    Humans label the subject's outputs with the run spec's rubric before they see the judge's
    scores. This fixes their labels: the ledger holds the SHA-256 of the salted label set,
    the labels stay in PRIVATE/agreement/ID.json, and the build publishes them with the
    report once the run's certificate has disclosed the judge's labels (on a secret gate,
    once every item of the run is revealed).

    \b
    LABELS.json:
      {"scale": [1, 2, 3, 4],
       "labels": [{"labeller": "h1", "item": "a-001", "dimension": "correctness", "label": 3}, ...]}
    The scale is the rubric's ordinal categories, in order; labellers and dimensions are ids.

    Refuses, writing nothing: a run whose certificate is already issued (its judge's scores
    are disclosed, so labels made now are not blind), an item that is not the run's, a label
    off the scale, a labeller labelling one item's dimension twice, an id already used.

    \b
    Example:
      transparency agreement register labels.json --run quill-a-3 --id quill-a-3-humans
      transparency certify PRIVATE/results/quill-a-3.json
      transparency agreement report quill-a-3-humans
    """
    from generator.commands.agreement import register_label_set

    done = register_label_set(_paths(ctx), labels, run_id, set_id, at)
    click.echo(
        f"Committed label set {done.id} for run {done.run} at {done.at}: {done.labels} labels by "
        f"{done.labellers} labeller(s) on {', '.join(done.dimensions)}; sha256 {done.sha256}."
    )
    click.echo("The labels stay private until the run's certificate is issued and its items are disclosed.")


@agreement_group.command("report")
@click.argument("set_id", metavar="LABEL_SET")
@click.option("--json", "as_json", is_flag=True, help="Print the report document the build publishes.")
@click.pass_context
def agreement_report(ctx: click.Context, set_id: str, as_json: bool) -> None:
    """How far the judge agrees with label set LABEL_SET, per rubric dimension.

    The judge's labels are those of the run's certificate (its scored results' judge_labels).
    For each dimension: the sample (items with a judge label and a human one), raw agreement,
    Cohen's kappa with linear and quadratic weights, Krippendorff's ordinal alpha, each as a
    6-decimal figure and an exact fraction, and every disagreeing case. The build publishes the
    same document at agreement/LABEL_SET.json once it is due, and verify.py recomputes it.
    """
    from generator.commands.agreement import label_set_report, report_text

    done = label_set_report(_paths(ctx), set_id)
    if as_json:
        click.echo(json.dumps(done.report, indent=1, ensure_ascii=False))
    else:
        click.echo(report_text(done), nl=False)


@main.command()
@click.argument("serial", metavar="SERIAL")
@click.option(
    "--reason",
    required=True,
    help="Why the certificate is withdrawn, in one line; published in the ledger and on its page, for good.",
)
@_AT
@click.pass_context
def revoke(ctx: click.Context, serial: str, reason: str, at: str | None) -> None:
    """Revoke certificate SERIAL: append a revocation event to the ledger (format v2).

    \b
    A revocation is permanent: it cannot be undone, and a certificate is revoked once.
    It is public: the reason is published in the ledger, on the certificate's page and in
    ledger/revocations.json, and verify.py reports the certificate as revoked, never as valid.
    It removes nothing: the certificate stays published exactly as issued, so anyone can still
    check what it claimed. To decide the run's question again, register a new run.

    Refuses, writing nothing: a serial no certificate has, one already revoked, and an empty
    reason or one holding control or format characters (a newline, a tab, a bidi override).
    """
    from generator.commands.revoke import revoke_certificate

    leaf = revoke_certificate(_paths(ctx), serial, reason, at)
    click.echo(f"Revoked certificate {serial} at {leaf['at']}; run 'transparency build' to publish.")


@main.command()
@click.argument("run_id", metavar="RUN")
@click.option(
    "--reason",
    required=True,
    help="Why the run will never be run, in one line; published in the ledger and on the runs page, for good.",
)
@_AT
@click.pass_context
def withdraw(ctx: click.Context, run_id: str, reason: str, at: str | None) -> None:
    """Withdraw registered run RUN, which will never be run: append a run-withdrawn event (format v2).

    \b
    A withdrawal decides the run for good: it never gets a certificate, the subject's next run
    may follow it, and its items may be retired. Its items stay counted as seen by the subject
    (nothing proves the run did not start), so a later run of the subject on the gate cannot
    reuse them. The reason is published in the ledger and on the runs page.

    Refuses, writing nothing: a run that is not registered, one that has a certificate (revoke
    it instead), one already withdrawn, and an empty reason or one holding control or format
    characters.
    """
    from generator.commands.withdraw import withdraw_run

    leaf = withdraw_run(_paths(ctx), run_id, reason, at)
    click.echo(f"Withdrew run {run_id} at {leaf['at']}; run 'transparency build' to publish.")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as one JSON object.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Print where the program stands: per gate the items committed, sealed and revealed; the
    open runs (registered, neither certified nor withdrawn) and the withdrawn ones; certificates
    issued and revoked; the ledger's size and how many of its events the last build did not
    publish. Read from the saved replay of the ledger when it is current: fast, and it writes
    nothing but that cache.
    """
    import json

    from generator.commands.status import program_status, status_text

    paths = _paths(ctx)
    state = program_status(paths)
    click.echo(
        json.dumps(state, ensure_ascii=False, sort_keys=True) if as_json else status_text(state, paths), nl=as_json
    )


@main.command()
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default="public",
    show_default=True,
    help="The site directory to (re)build.",
)
@click.option("--strict", is_flag=True, help="Treat warnings (such as unknown keys in program.yaml) as errors.")
@click.option(
    "--offline",
    is_flag=True,
    help="Ask no witness over the network for a cosignature; those kept in data/cosignatures/ are still published.",
)
@click.option(
    "--full",
    is_flag=True,
    help="Build from scratch: replay every ledger line and render every page, using none of what the "
    "private directory's cache/ remembers (the result is the same bytes; use it to rule the cache out).",
)
@click.pass_context
def build(ctx: click.Context, out: Path, strict: bool, offline: bool, full: bool) -> None:
    """Render, sign and verify the site, then swap it into OUT.

    Reads and validates everything first, builds into a staging directory beside OUT, runs the
    standalone verifier on it and replaces OUT only if it passes: a failed build leaves the last
    site untouched. Refuses a ledger that does not extend the last release and any change to an
    artifact it published. Deterministic: the time comes from SOURCE_DATE_EPOCH or the newest
    ledger event, never from the clock.

    History (format v2): the ledger is also written as C2SP tiles, every checkpoint is archived
    with a consistency proof to today's, and every reveal and certificate gets an inclusion
    proof. With data/policy.txt, each witness it lists with a URL is asked to cosign the
    checkpoint (10 s timeout each; a witness that fails is named in a warning), and is sent the
    new tiles and reveals, which a witness replaying the rules cannot find on its mirror yet.
    The demo (signed with its published key) cosigns as its own published witness when its
    checkpoint lacks that witness's cosignature, and says so.

    Warns when the private directory lies inside the data directory or a git work tree, where it
    would be published or committed.

    Incremental: the replayed ledger and what each page was made from are remembered in the
    private directory's cache/, so a build after one event replays one line and renders only
    the pages that changed; the bytes are those of a build from scratch (--full). A build whose
    inputs (every file of the data and private directories but the caches and the stores no
    build reads: items/, sealed/, certificates/; the code, the libraries, SOURCE_DATE_EPOCH,
    --offline) are those the last build read, into a site still byte for byte
    the one it published, writes nothing (unless it would ask witnesses: a policy, no --offline).
    When no file has changed since that build recorded it (same size, times and inode), this is
    told without reading them; otherwise by reading every byte.
    """
    from generator.commands.build import build as build_site

    progress = ProgressPrinter()
    paths = _paths(ctx)
    result = build_site(paths, out, progress, strict, offline, full)
    progress.done()
    for w in result.warnings:
        _echo_lines("warning: ", w)  # a witness's answer is in some: never raw
    unsafe = unsafe_private_place(paths)
    if result.demo:
        click.echo(DEMO_WARNING, err=True)  # which says where the demo keeps its published key
    elif unsafe is not None:
        click.echo(f"warning: {unsafe}", err=True)
    if result.unchanged:
        click.echo(
            f"Nothing to build: every input is as the last build read it, and {out} is still the release it "
            f"published and verified ({result.files} files, ledger of {result.tree_size} entries), byte for byte; "
            f"nothing was written ({result.seconds:.1f} s). --full builds and verifies it again."
        )
    else:
        click.echo(
            f"Built {out}: {result.files} files, ledger of {result.tree_size} entries, "
            f"{result.checks} verification checks passed, {result.seconds:.1f} s."
        )
        click.echo(f"{result.rendered} pages rendered; {result.kept} files kept as the last release had them.")
    click.echo(f"Signed by {result.fingerprint}.")


@main.command()
@click.argument("site", type=click.Path(path_type=Path, file_okay=False), default="public")
@click.option(
    "--key",
    metavar="VKEY_OR_FINGERPRINT",
    help="Pin the signing key (a verifier key or SHA256:<hex>). Default: trust the key in the site and print its "
    "fingerprint.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def verify(site: Path, key: str | None, as_json: bool) -> None:
    """Verify SITE (default: public) with this installation's verifier, the code every site
    ships as verify.py.

    Checks SHA256SUMS and its signature, every file, canonical form, the keys, the checkpoint
    and its Merkle root, the ledger's rules, every reveal against its commitment, the
    commitment list, methodology and run specs, and recomputes every certificate (item scores,
    rates, interval, grades, band, score, verdict) from its results, published details and
    grader record, saying what it could only take as asserted. Exit status 0 if every check
    passed, 1 if any failed, 2 if the site could not be read.
    """
    from generator.commands.check_site import check_site

    report = check_site(site, key)
    click.echo(safe_json(report.to_json()) if as_json else report.render())
    sys.exit(0 if report.ok else 1)


@main.command()
@click.argument("site", metavar="SITE")
@click.option(
    "--key",
    metavar="VKEY_OR_FINGERPRINT",
    help="First run: trust this key (a verifier key, or SHA256:<hex> of the key the site's keys.json lists) "
    "instead of the site's word. Later runs use the pinned key; another --key is an inconsistency.",
)
@click.option(
    "--state",
    "state_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="The monitor's memory, one file per log. Default: $XDG_CACHE_HOME/transparency-monitor "
    "(else ~/.cache/transparency-monitor).",
)
@click.option(
    "--type",
    "types",
    multiple=True,
    type=click.Choice(EVENT_TYPES),
    help="Print only events of this type (repeat). 'certificate' also prints revocations of certificates, "
    "'run' withdrawals of runs.",
)
@click.option(
    "--gate",
    "gates",
    multiple=True,
    metavar="GATE",
    help="Print only events about this gate: its declaration, its items' commits and reveals, its runs and their "
    "certificates (repeat).",
)
@click.option(
    "--subject",
    "subjects",
    multiple=True,
    metavar="NAME_OR_ID",
    help="Print only the runs of this subject (its id or exact name) and their certificates (repeat).",
)
@click.option(
    "--witnesses",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="POLICY",
    help="Your trust policy (C2SP tlog-policy), obtained out of band: the site's own ledger/policy.txt is only its "
    "claim. Ask each of its "
    "witnesses that has a URL for its latest checkpoint of the log, and fail on a split view, a fork, or a "
    "cosignature from the future. A witness that does not answer is a warning.",
)
@click.option(
    "--max-age",
    metavar="DURATION",
    help="With --witnesses: fail on a witness's cosignature older than this (a whole number then s, m, h or d: "
    "3600s, 36h, 7d). Default: any age, since a quiet log's latest cosignature is as old as its last release.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='One JSON object per new event: {"index": N, "leaf": {...}}; with --witnesses, then one per witness: '
    '{"witness": {"name": ..., "checkpoint": ..., "log": ..., "findings": [...]}}.',
)
def monitor(
    site: str,
    key: str | None,
    state_dir: Path | None,
    types: tuple[str, ...],
    gates: tuple[str, ...],
    subjects: tuple[str, ...],
    as_json: bool,
    witnesses: Path | None,
    max_age: str | None,
) -> None:
    """Follow SITE's ledger over time: print each new event, fail on any inconsistency.

    SITE is a site's folder or its https:// URL. Each run opens the site's signed checkpoint
    (ledger/checkpoint) with the key pinned on the first run; checks that the log only grew
    since the checkpoint this monitor saw last (a smaller tree is a rollback, another root at
    the remembered size a rewritten history: both are printed); reads every entry from the
    C2SP tiles under ledger/tile/, each tile checked, up to the checkpoint's root; and replays
    the ledger's rules. Only then does it print the new events, one line each
    (INDEX TIME TYPE ID DETAIL), and remember the new checkpoint.

    On the first run it trusts --key or, without it, the site's keys.json, and prints the
    key's fingerprint: compare it out of band. The key is pinned from then on: a checkpoint
    that another key signed is an inconsistency.

    With --witnesses POLICY it also asks each witness of the policy for the latest checkpoint
    it cosigned of this log (GET URL/<SHA-256 of the origin>/checkpoint, C2SP tlog-witness),
    checks the log's signature and the witness's cosignature with the policy's keys, and
    compares the views with each other and with the log it read: two trees of one size (a
    split view), a view whose root is not the log's at its size (a fork), a cosignature dated
    in the future or older than --max-age are inconsistencies, printed with both sides. A view
    larger than the site's checkpoint (the site shows this monitor an older tree) and a witness
    that does not answer, or never cosigned this log (404), are warnings.

    The state is one file per log under --state, replaced atomically and only after a run
    that found nothing wrong (an interrupted run prints its events again next time, never
    skips one). A damaged state stops the run and is left as it is.

    \b
    Examples:
      transparency monitor https://transparency.example.org/oracle/
      transparency monitor public --key 'ORIGIN+KEYID+BASE64KEY'
      transparency monitor SITE --type certificate --subject acme-extractor
      transparency monitor SITE --gate b --json | jq .leaf
      transparency monitor SITE --witnesses policy.txt --max-age 7d

    Filters choose what is printed, never what is checked. A summary goes to stderr. Exit
    status: 0 consistent, 1 an inconsistency (the state is not moved), 2 the site or the
    state cannot be read, or a bad argument.
    """
    from generator.commands.monitor_site import follow_site

    sys.exit(follow_site(site, key, state_dir, types, gates, subjects, as_json, witnesses, max_age))


@main.command()
@click.argument("target")
@click.option(
    "--site",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default="public",
    show_default=True,
    help="The built site to publish.",
)
@click.option("--check", is_flag=True, help="Publish nothing: read every object back and compare it with the site.")
@click.option(
    "--without-quorum",
    is_flag=True,
    help="Publish a checkpoint that lacks the cosignatures the trust policy (ledger/policy.txt) asks for.",
)
@click.option("--endpoint-url", metavar="URL", help="The S3 endpoint. Default: AWS_ENDPOINT_URL, else AWS's own.")
@click.option("--region", help="The S3 region. Default: AWS_REGION or the profile's.")
@click.option("--profile", help="The AWS profile (shared config and credentials files). Default: AWS_PROFILE.")
@click.option(
    "--no-cors", is_flag=True, help="Leave the bucket's CORS rule as it is (publish sets GET and HEAD from anywhere)."
)
@click.option("--jobs", default=8, show_default=True, type=click.IntRange(1, 32), help="Objects sent at once.")
@click.pass_context
def publish(
    ctx: click.Context,
    target: str,
    site: Path,
    check: bool,
    without_quorum: bool,
    endpoint_url: str | None,
    region: str | None,
    profile: str | None,
    no_cors: bool,
    jobs: int,
) -> None:
    """Publish the built SITE to TARGET: s3://BUCKET[/PREFIX] on any S3-compatible store, or a folder.

    Sends only the files whose bytes changed since the last publish to TARGET (remembered in the
    private directory's cache/publish/, and used only while the store's checkpoint is still the
    one that publish sent; otherwise every file is sent again). Before anything is sent,
    SHA256SUMS.sig is checked with the program's active key (data/keys.json), every file to send is
    hashed against SHA256SUMS (and, in format v3, the lists of its tree), the checkpoint's quorum
    is checked (below), and a store whose checkpoint is newer than the site's is refused: that
    would roll the log back.

    The order: first the new immutable objects (artifacts, their signatures, tiles), each created
    only if absent, an object already there with other bytes being an error, never overwritten;
    then the pages and indexes that changed (a format v3 site's lists under sums/ after the rest,
    the deepest first), SHA256SUMS and its signature last of them; then ledger/checkpoint. A
    reader following the log (the checkpoint, then its tiles) therefore never sees a checkpoint
    whose tiles or artifacts are missing; the pages and indexes are replaced one by one, so until
    the checkpoint lands a reader may get some of the new release's beside the last checkpoint. A
    failure stops before the checkpoint; running the command again finishes the
    job, whenever it was interrupted. Then the pages the last publish sent and this release no
    longer lists are removed (a renamed search shard); an immutable object is never removed. One
    publish to a target at a time.

    Refuses a checkpoint that lacks the quorum of cosignatures the site's trust policy
    (ledger/policy.txt) asks for, unless --without-quorum.

    Headers: Content-Type by file; Cache-Control "public, max-age=604800, immutable" on immutable
    objects and "no-cache" on everything else; on a bucket, a CORS rule allowing GET and HEAD from
    any origin is added beside the bucket's rules (--no-cors leaves them alone). The site's
    _headers file tells a static host the same.

    S3 credentials, region and endpoint are found the standard AWS way (AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL, AWS_PROFILE, ~/.aws/config and
    credentials); the flags override them. Exit status: 0 published (or --check found nothing
    wrong), 1 an object failed or differs, or the store is ahead of the site, 2 bad input (the
    site is not as the build made it, or lacks its quorum).
    """
    from generator.commands.publish import StoreOptions, check_store, publish_site

    options = StoreOptions(endpoint_url, region, profile, not no_cors)
    progress = ProgressPrinter()
    if check:
        found = check_store(_paths(ctx), site, target, options, jobs, progress)
        progress.done()
        for label, rows in (("missing", found.missing), ("altered", found.altered)):
            for path in rows:
                click.echo(f"{label}: {printable(path)}")
        for path in found.extra:
            click.echo(f"not in the site (left in place): {printable(path)}")
        bad = len(found.missing) + len(found.altered)
        click.echo(
            f"Checked {found.checked:,} objects of {site} against {target}: "
            + (
                "all present with the site's bytes."
                if not bad
                else f"{len(found.missing)} missing, {len(found.altered)} altered."
            )
        )
        sys.exit(1 if bad else 0)
    summary = publish_site(
        _paths(ctx), site, target, options, require_quorum=not without_quorum, jobs=jobs, progress=progress
    )
    progress.done()
    click.echo(
        f"Published {site} to {target}: {summary.created:,} immutable objects created, "
        f"{summary.replaced:,} pages and indexes written, "
        f"{summary.unchanged:,} unchanged since the last publish"
        + (f", {summary.already_there:,} already there" if summary.already_there else "")
        + f"; {summary.bytes_sent:,} bytes sent"
        + ("" if summary.checkpoint_sent else "; the checkpoint was already there")
        + "."
    )
    if summary.record_dropped:
        click.echo(f"note: {summary.record_dropped}", err=True)
    if summary.removed:
        click.echo(f"{summary.removed:,} pages the release no longer lists were removed.")
    for path in summary.left_in_place:
        click.echo(
            f"warning: {printable(path)} was published before and this release does not list it: an immutable "
            "object, left in place",
            err=True,
        )


@main.command()
@click.argument("site", type=click.Path(path_type=Path, file_okay=False, exists=True), default="public")
@click.option("--port", default=8000, show_default=True, help="Port to listen on.")
@click.option(
    "--bind", default="127.0.0.1", show_default=True, help="Address to listen on (localhost only by default)."
)
def serve(site: Path, port: int, bind: str) -> None:
    """Preview SITE on http://127.0.0.1:PORT/ (Ctrl-C to stop). For previews, not production.

    Serves regular files inside SITE only: a symbolic link, or a path that leaves SITE, is
    answered 404 (a site is data from elsewhere, and a link in it could point at any file)."""
    from generator.commands.serve import open_server

    httpd = open_server(site, port, bind)
    with httpd:
        click.echo(f"Serving {site} at http://{bind}:{httpd.server_address[1]}/ (Ctrl-C to stop)")
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            click.echo("stopped")


@main.group(cls=_Group)
def witness() -> None:
    """Run a witness: an independent party that cosigns a log's checkpoints (C2SP tlog-witness).

    A witness keeps, per log, the last checkpoint it cosigned and cosigns a new one only if it is
    signed by the log and provably extends that one (an RFC 9162 consistency proof): a log that
    showed two histories to two witnesses could not get both cosigned. Run it with your own keys
    and state, apart from the program's operator. Its keys are ML-DSA-44 (the default, as C2SP
    recommends for new witnesses) or Ed25519; give --key once per key, all of one name, and each
    answer carries one cosignature line a key. It knows its logs from a logs file (--logs, one
    log vkey a line) and/or the witness network's log list (--log-list, `logs/v0`, whose `qpd`
    caps each log's add-checkpoint requests a day that get a new tree cosigned: beyond it, 429
    with Retry-After).

    \b
      transparency witness key witness.example.org --key witness.key
      echo 'LOG_VKEY' > logs.txt          # the logs it will cosign (keys.json's vkey)
      transparency witness serve --key witness.key --state wstate --logs logs.txt
      transparency witness cosign SITE --key witness.key --state wstate --logs logs.txt

    The server answers POST /add-checkpoint, POST /add-checkpoint-with-files, POST /sign-subtree
    (with an ML-DSA-44 key) and GET /<sha256 of the origin, hex>/checkpoint (the latest checkpoint
    it cosigned for that log, with its cosignatures); docs/formats/witnesses.md lists every answer.
    """


@witness.command("key")
@click.argument("name")
@click.option("--key", "key_path", type=click.Path(path_type=Path, dir_okay=False), required=True, help="Key file.")
@click.option(
    "--type",
    "kind",
    type=click.Choice(["ml-dsa-44", "ed25519"]),
    default="ml-dsa-44",
    show_default=True,
    help="The key's type: ML-DSA-44 (C2SP tlog-witness: new witnesses SHOULD use it; signs subtrees too) or Ed25519.",
)
def witness_key(name: str, key_path: Path, kind: str) -> None:
    """Create a witness key NAME (e.g. your domain) of type --type in a new file (mode 0600; never
    over an existing file); print its vkey, which the program lists in its policy
    (data/policy.txt) and verifiers in theirs. Run it twice with two files for a witness with one
    key of each type."""
    from generator.commands.witness_run import new_witness_key

    click.echo(new_witness_key(key_path, name, kind))


def _witness_options(f: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option(
            "--key",
            "key_paths",
            type=click.Path(path_type=Path, dir_okay=False),
            multiple=True,
            required=True,
            help="A key file (`transparency witness key`); repeat for several keys of one name (e.g. one Ed25519 and "
            "one ML-DSA-44).",
        ),
        click.option(
            "--name",
            help="The witness's name, as in its keys: needed only for a key file of earlier releases (a bare Ed25519 "
            "seed); checked against the others.",
        ),
        click.option(
            "--state",
            "state_dir",
            type=click.Path(path_type=Path, file_okay=False),
            required=True,
            help="Folder of the last checkpoint cosigned per log (created if missing). Keep it: it is the witness.",
        ),
        click.option(
            "--logs",
            "logs_path",
            type=click.Path(path_type=Path, dir_okay=False, exists=True),
            help="The logs to cosign: one log vkey a line (the key's name is the log's origin).",
        ),
        click.option(
            "--log-list",
            "log_list_path",
            type=click.Path(path_type=Path, dir_okay=False, exists=True),
            help="The logs to cosign as a witness-network log list (`logs/v0`: vkey, origin, bastion, qpd, contact); "
            "with --logs, or instead of it. Each log's qpd caps, in any 24 hours, its add-checkpoint requests that "
            "get a new tree cosigned (a 409 or the tree already held costs nothing).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@witness.command("serve")
@_witness_options
@click.option("--listen", default="127.0.0.1:7380", show_default=True, help="HOST:PORT to listen on.")
@click.option(
    "--rules",
    "rules_site",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="Also replay the program's rules (format v1 §4) over the log read from this copy of its site (e.g. a "
    "`verify.py mirror` folder, holding at least the release last cosigned; not a `transparency mirror` folder, "
    "which holds only tiles; a build sends the newer tiles and reveals with its request), and refuse a "
    "checkpoint whose new entries break them.",
)
def witness_serve(
    key_paths: tuple[Path, ...],
    name: str | None,
    state_dir: Path,
    logs_path: Path | None,
    log_list_path: Path | None,
    listen: str,
    rules_site: Path | None,
) -> None:
    """Serve C2SP tlog-witness until interrupted: POST /add-checkpoint (one cosignature line a
    key), POST /add-checkpoint-with-files (the same request followed by the new tiles and reveals,
    which a build sends so that --rules can replay entries its mirror does not hold yet), POST
    /sign-subtree (a subtree of a checkpoint it cosigned, signed by its ML-DSA-44 keys; 404 for a
    witness with none) and GET /<hex SHA-256 of the origin>/checkpoint (the latest checkpoint it
    cosigned for that log, with the log's signatures and its own)."""
    from generator.commands.witness_run import witness_server

    w, server, host = witness_server(key_paths, name, state_dir, logs_path, log_list_path, listen, rules_site)
    with server:
        click.echo(f"Witness at http://{host}:{server.server_address[1]}/add-checkpoint (Ctrl-C to stop), keys:")
        for vkey in w.vkeys:
            click.echo(f"  {vkey}")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            click.echo("stopped")


@witness.command("cosign")
@click.argument("site", type=click.Path(path_type=Path, file_okay=False, exists=True))
@_witness_options
@click.option(
    "--rules", is_flag=True, help="Also replay the program's rules (format v1 §4) over the site's log before cosigning."
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the cosignature lines here (e.g. the program's data/cosignatures/<size>.txt) instead of printing them.",
)
def witness_cosign(
    site: Path,
    key_paths: tuple[Path, ...],
    name: str | None,
    state_dir: Path,
    logs_path: Path | None,
    log_list_path: Path | None,
    rules: bool,
    out: Path | None,
) -> None:
    """Cosign SITE's checkpoint offline, from a downloaded site folder: the same checks as
    serve, the consistency proof computed from the site's own tiles; one line a key. Exit 1 if
    refused."""
    from generator.commands.witness_run import add_cosignature, cosign_folder

    status, answer = cosign_folder(site, key_paths, name, state_dir, logs_path, log_list_path, rules)
    if status != 200:
        _echo_lines(f"refused ({status}): ", answer)
        sys.exit(1)
    if out is None:
        click.echo(answer)
    else:
        add_cosignature(out, answer)  # beside other witnesses' lines, never over them
        click.echo(f"added the cosignature to {out}")


@main.group(cls=_Group)
def mirror() -> None:
    """Run a mirror: a copy of a program's log, cosigned only once every entry is stored (C2SP tlog-mirror).

    A mirror reads a published site's checkpoint (ledger/checkpoint) and its C2SP tiles
    (ledger/tile/), checks every tile against the checkpoint, stores them, and only then
    cosigns the checkpoint with its own key: its cosignature says "I hold every entry of this
    tree and serve it". It refuses a smaller tree and a fork of the tree it holds. Its folder is
    a tlog-tiles copy per log, DIR/<SHA-256 of the origin>/ (checkpoint, tile/...), which any
    static server (or `transparency mirror serve`) can serve. Run it with your own key, apart
    from the program's operator.

    \b
    Examples:
      transparency mirror key mirror.example.org --key mirror.key
      transparency mirror follow https://transparency.example.org/oracle/ --out mirror --key mirror.key \\
          --log 'ORIGIN+KEYID+BASE64KEY'
      transparency mirror serve mirror --listen 127.0.0.1:7381
    """


@mirror.command("key")
@click.argument("name")
@click.option("--key", "key_path", type=click.Path(path_type=Path, dir_okay=False), required=True, help="Key file.")
@click.option(
    "--type",
    "kind",
    type=click.Choice(["ml-dsa-44", "ed25519"]),
    default="ml-dsa-44",
    show_default=True,
    help="The cosignature type (C2SP tlog-cosignature): ML-DSA-44 (subtree/v1), or Ed25519 (cosignature/v1).",
)
def mirror_key(name: str, key_path: Path, kind: str) -> None:
    """Create a mirror key NAME (e.g. your domain) in a new file (mode 0600); print its vkey,
    which monitors and trust policies list to accept the mirror's cosignatures.

    \b
    Example:
      transparency mirror key mirror.example.org --key mirror.key --type ed25519
    """
    from generator.commands.mirror_run import new_mirror_key

    click.echo(new_mirror_key(key_path, name, kind))


@mirror.command("follow")
@click.argument("site")
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="The mirror's folder, one DIR/<SHA-256 of the origin>/ per log (created if missing). Keep it: it is the "
    "mirror.",
)
@click.option("--key", "key_path", type=click.Path(path_type=Path, dir_okay=False), required=True, help="Key file.")
@click.option("--name", help="The mirror's name, as in its key (needed only for a bare 32-byte Ed25519 seed).")
@click.option(
    "--log",
    "log_vkeys",
    multiple=True,
    metavar="VKEY",
    help="The log's key, obtained out of band (never from the site): its checkpoint must verify with it. Repeat "
    "for several (a log rotating its key).",
)
@click.option(
    "--policy",
    "policy_path",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="A C2SP tlog-policy file: its `log` lines are the keys to pin (instead of --log).",
)
@click.option("--once", is_flag=True, help="One update, then exit (the default).")
@click.option(
    "--every",
    type=click.FloatRange(min=1),
    metavar="SECONDS",
    help="Update again every SECONDS until interrupted (a daemon); Ctrl-C stops it cleanly.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
def mirror_follow(
    site: str,
    out: Path,
    key_path: Path,
    name: str | None,
    log_vkeys: tuple[str, ...],
    policy_path: Path | None,
    once: bool,
    every: float | None,
    quiet: bool,
) -> None:
    """Copy SITE's log into --out and cosign its checkpoint once every entry is stored.

    SITE is a site's folder or its https:// URL (plain http:// only on 127.0.0.1). The run
    opens SITE's ledger/checkpoint with the pinned log key; refuses a tree smaller than the one
    the mirror holds, or another tree of the same size (a fork), naming both roots; proves the
    new tree extends the held one (from the site's hash tiles); fetches every tile it lacks,
    checking each entry bundle and hash tile against the checkpoint's tree and writing each
    durably; reads them all back from disk and recomputes the root; and only then writes
    DIR/<SHA-256 of the origin>/checkpoint: the log's checkpoint with the mirror's cosignature,
    atomically and last. A kill leaves the old checkpoint and its tiles (the next run goes on
    from the tiles already fetched); a refusal changes nothing; an unchanged checkpoint is not
    signed again.

    \b
    Examples:
      transparency mirror follow https://transparency.example.org/oracle/ --out mirror --key mirror.key \\
          --log 'transparency.example.org/oracle+1a2b3c4d+AXYU...'
      transparency mirror follow site/ --out mirror --key mirror.key --policy my-policy.txt
      transparency mirror follow URL --out mirror --key mirror.key --policy my-policy.txt --every 300 --quiet

    Exit status: 0 stored and cosigned, or unchanged; 1 refused (a rollback, a fork, tiles that
    do not hold the signed tree, a checkpoint the pinned keys do not open); 2 the site, the
    folder or an argument cannot be used. With --every, a failed run is reported and the next
    one tried.
    """
    from generator.commands.mirror_run import follow_every, follower, summary

    if once and every is not None:
        raise click.UsageError("--once and --every exclude each other")
    f = follower(site, out, key_path, name, log_vkeys, policy_path)

    printer = ProgressPrinter()

    def progress() -> Any:
        return (lambda phase, n, total: None) if quiet else printer

    if every is None:
        result = f.run(progress())
        printer.done()
        click.echo(summary(result))
        return

    def report(outcome: Any) -> None:
        printer.done()  # the run's counter line ends before its result
        if isinstance(outcome, TransparencyError):
            click.echo(f"error: {outcome}", err=True)
        else:
            click.echo(summary(outcome))

    try:
        follow_every(f, every, progress, report)
    except KeyboardInterrupt:
        click.echo("stopped: the mirror's checkpoint is the last one cosigned", err=True)


@mirror.command("serve")
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--listen", default="127.0.0.1:7381", show_default=True, help="HOST:PORT to listen on.")
def mirror_serve(folder: Path, listen: str) -> None:
    """Serve the mirror's FOLDER read-only over HTTP until interrupted: GET of regular files only,
    no folder listing, no link followed, no path outside FOLDER. A monitor reads a log's copy at
    http://HOST:PORT/<SHA-256 of the origin>/checkpoint and tile/... (C2SP tlog-tiles).

    \b
    Example:
      transparency mirror serve mirror --listen 0.0.0.0:7381   # behind a TLS proxy in production
    """
    from generator.commands.mirror_run import mirror_server

    server = mirror_server(folder, listen)
    with server:
        host = listen.rpartition(":")[0] or "127.0.0.1"
        click.echo(f"Serving the mirror {folder} at http://{host}:{server.server_address[1]}/ (Ctrl-C to stop)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            click.echo("stopped")
