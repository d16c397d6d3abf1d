"""`transparency init`: a new program, created whole or not at all."""

from __future__ import annotations

from pathlib import Path

import yaml

from generator.commands.gate import GateSpec, gate_leaf
from generator.commands.methodology import stage_methodology
from generator.core import canonical_json
from generator.core.generator_errors import InputError, problem
from generator.core.signing_key import Signer, generate_signer, write_key
from generator.core.strict_input import read_text
from generator.program.datadir import Paths, PublicKey, load_program, public_keys_document
from generator.program.ledgerfile import creating, event_time, finish_interrupted
from generator.program.methodology_files import load_params, render_prose
from generator.verifier import GATE_RE, Ledger, Problem, invisible_characters, is_gate_id, is_origin

PRIVATE_README = """\
# Private program material

This directory holds what must never be published:

- `signing.key`: the program's Ed25519 signing key (mode 0600);
- `items/`: the item sources (prompts and answers) you commit with `transparency commit`;
- `sealed/`: the committed reveal documents of items not yet revealed, with their salts.

Keep it outside any public repository and back it up: a lost sealed document can never be
revealed, and a lost key cannot sign the next release. Point the `transparency` command at it
with `--private DIR` or `TRANSPARENCY_PRIVATE=DIR`.
"""


def _parse_gate_option(text: str) -> GateSpec | Problem:
    parts = text.split(":")
    if len(parts) != 3 or parts[2] not in ("public", "secret") or not is_gate_id(parts[0]) or not parts[1].strip():
        return problem(
            "--gate", "expected ID:NAME:public or ID:NAME:secret", expected=f"ID matching {GATE_RE.pattern}", found=text
        )
    return GateSpec(parts[0], parts[1].strip(), parts[2] == "public")


GITIGNORE = ".gitignore"  # written into a private directory init creates: git ignores all of it


def init_program(
    paths: Paths,
    name: str,
    origin: str,
    gate_options: list[GateSpec | str],
    description: str = "",
    at: str | None = None,
    signer: Signer | None = None,
    methodology: tuple[Path, Path] | None = None,
) -> Signer:
    """Create a program: data skeleton, signing key, gates and, if given as (parameters, prose),
    its first methodology in the ledger.

    Without a methodology none is published: the ledger is permanent, and a methodology that is
    not the program's own (the demo's, say) would stay in it for good; `transparency methodology
    publish` adds the program's own later, and no run can be registered before it.
    Gates are GateSpecs or `ID:NAME:public|secret` strings; every problem is reported at once.
    """
    finish_interrupted(paths)  # a killed init is completed (then refused below) or undone
    problems: list[Problem] = []
    parsed = [_parse_gate_option(g) if isinstance(g, str) else g for g in gate_options]
    problems += [g for g in parsed if isinstance(g, Problem)]
    gates = [g for g in parsed if isinstance(g, GateSpec)]
    if paths.program_file.exists() or paths.ledger_file.exists():
        problems.append(
            problem(
                paths.show(paths.data),
                "a program is already there (program.yaml or ledger.jsonl exists); refusing to overwrite it",
            )
        )
    if not is_origin(origin):
        invisible = invisible_characters(origin)
        problems.append(
            problem(
                "--origin",
                "not a valid origin",
                expected="a URL without scheme, spaces, '+' or characters that draw nothing, such as "
                "transparency.example.org/oracle",
                found=origin + (f" (with {invisible})" if invisible else ""),
            )
        )
    if not name.strip():
        problems.append(problem("--name", "the program needs a name"))
    if not gate_options:
        problems.append(problem("--gate", "a program needs at least one gate"))
    if len({g.id for g in gates}) != len(gates):
        problems.append(problem("--gate", "gate ids must be distinct"))
    if paths.key_file.exists() and signer is None:
        problems.append(problem(paths.show(paths.key_file), "a signing key is already there; refusing to overwrite it"))
    if methodology is not None:
        problems += _methodology_problems(*methodology)
    when = event_time(at, Ledger(), problems)
    if problems:
        raise InputError(problems, "cannot create the program")
    signer = signer or generate_signer(origin)
    if signer.name != origin:
        raise InputError([problem("--key", "the key's name must be the origin", expected=origin, found=signer.name)])
    new_private = not paths.private.exists()
    if new_private:
        paths.private.mkdir(parents=True, mode=0o700)
    for d in (paths.data, paths.methodology_dir, paths.reveals_dir, paths.items_dir, paths.sealed_dir):
        d.mkdir(parents=True, exist_ok=True)
    # One transaction: a kill at any moment leaves either no program or the whole of it.
    with creating(paths, "init") as app:
        if not paths.key_file.exists():
            app.stage(paths.key_file, (signer.skey + "\n").encode(), mode=0o600)
        program = {"name": name.strip(), "origin": origin, "description": description}
        app.stage(paths.program_file, yaml.safe_dump(program, allow_unicode=True, sort_keys=False).encode())
        keys = [PublicKey(signer.vkey, when, None, "active")]
        app.stage(paths.keys_file, canonical_json.dumps(public_keys_document(keys)) + b"\n")
        if not (paths.private / "README.md").exists():
            app.stage(paths.private / "README.md", PRIVATE_README.encode())
        if new_private:
            # A private directory inside a git work tree would be committed with `git add data`,
            # signing key and all. Only one this command made: an existing one is the operator's.
            app.stage(paths.private / GITIGNORE, b"*\n")
        app.append([gate_leaf(g, when) for g in gates])
        if methodology is not None:
            stage_methodology(app, methodology[0], methodology[1], when)
    return signer


def methodology_option(params: Path | None, prose: Path | None) -> tuple[Path, Path] | None:
    """init's --methodology and --prose, which come together: a methodology is its parameters and
    its prose, published together. None when neither is given."""
    if (params is None) != (prose is None):
        given, missing = ("--methodology", "--prose") if prose is None else ("--prose", "--methodology")
        raise InputError(
            [problem(given, f"comes with {missing}: a methodology is its parameters and its prose, published together")]
        )
    return (params, prose) if params is not None and prose is not None else None


def _methodology_problems(params_path: Path, prose_path: Path) -> list[Problem]:
    """What is wrong with a methodology given to init, found before anything is created (the
    transaction would undo its files, but not the directories made for them)."""
    try:
        render_prose(read_text(prose_path), load_params(params_path), str(prose_path))
    except InputError as e:
        return e.problems
    return []


def keygen(paths: Paths, origin: str | None = None, out: Path | None = None) -> tuple[Path, Signer]:
    """A new Ed25519 signing key named `origin` (default: the program's), written to `out`
    (default: PRIVATE/signing.key) with mode 0600; never over an existing file."""
    if origin is None:
        if not paths.program_file.exists():
            raise InputError(
                [problem("--origin", "give the key's name with --origin (no program.yaml to take it from)")]
            )
        origin = load_program(paths)[0].origin
    target = out or paths.key_file
    signer = generate_signer(origin)
    write_key(target, signer)
    return target, signer
