"""`transparency witness key|serve|cosign`: the witness program (generator/witness/) as commands: a
new witness key of either type, a witness opened from its keys, state and logs (a logs file, a log
list, or both; with --rules, the program's rules replayed over a copy of the site), its HTTP
server, and an offline cosignature of a site folder kept beside the other witnesses' lines."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from generator.core.cosigning_keys import generate_cosigner, write_cosigner
from generator.core.generator_errors import InputError, problem
from generator.verifier import FormatError
from generator.witness.server import Rules, Witness, WitnessServer
from generator.witness.site_reader import cosign_site, folder_reader, site_rules


def new_witness_key(key_path: Path, name: str, kind: str) -> str:
    """Create the witness key `name` of type `kind` (ed25519 or ml-dsa-44) in a new file
    `key_path` (mode 0600, never over an existing file); its vkey."""
    cosigner = generate_cosigner(name, kind)
    write_cosigner(key_path, cosigner)
    return cosigner.key.vkey


def open_witness(
    key_paths: Sequence[Path],
    name: str | None,
    state_dir: Path,
    logs_path: Path | None,
    log_list_path: Path | None,
    rules: Rules | None,
) -> Witness:
    """The witness of these files; InputError (naming the file) or KeyFileError when they cannot
    start one."""
    try:
        return Witness.from_files(key_paths, name, state_dir, logs_path, log_list_path, rules=rules)
    except (FormatError, ValueError) as e:
        where = str(logs_path or log_list_path or state_dir)
        raise InputError([problem(where, str(e))], "cannot start the witness") from None


def witness_server(
    key_paths: Sequence[Path],
    name: str | None,
    state_dir: Path,
    logs_path: Path | None,
    log_list_path: Path | None,
    listen: str,
    rules_site: Path | None,
) -> tuple[Witness, WitnessServer, str]:
    """The witness and its server listening on `listen` (HOST:PORT; no host: 127.0.0.1), replaying
    the rules over the site folder `rules_site` when given; also the host as written."""
    host, _, port = listen.rpartition(":")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise InputError([problem("--listen", "expected HOST:PORT, the port a number 0..65535", found=listen)])
    rules = site_rules(folder_reader(rules_site), state_dir) if rules_site else None
    w = open_witness(key_paths, name, state_dir, logs_path, log_list_path, rules)
    return w, w.make_server(host or "127.0.0.1", int(port)), host


def cosign_folder(
    site: Path,
    key_paths: Sequence[Path],
    name: str | None,
    state_dir: Path,
    logs_path: Path | None,
    log_list_path: Path | None,
    rules: bool,
) -> tuple[int, str]:
    """Cosign the checkpoint of the site folder `site` offline: the HTTP status the server would
    answer (200 when cosigned) and its answer, the cosignature lines (one a key) or why it was
    refused."""
    read = folder_reader(site)
    reader_rules = site_rules(read, state_dir) if rules else None
    w = open_witness(key_paths, name, state_dir, logs_path, log_list_path, reader_rules)
    return cosign_site(w, read)


def add_cosignature(out: Path, lines: str) -> None:
    """Append the cosignature `lines` to `out`, beside other witnesses' lines, never over them."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as f:
        f.write(lines + "\n")
