"""`transparency witness key|serve|cosign`: the witness program (generator/witness/) as commands: a
new witness key, a witness opened from its key, state and logs (and, with --rules, the program's
rules replayed over a copy of the site), its HTTP server, and an offline cosignature of a site
folder kept beside the other witnesses' lines."""

from __future__ import annotations

from pathlib import Path

from generator.core.generator_errors import InputError, problem
from generator.verifier import FormatError
from generator.witness.server import Rules, Witness, WitnessServer, create_key
from generator.witness.site_reader import cosign_site, folder_reader, site_rules


def new_witness_key(key_path: Path, name: str) -> str:
    """Create the witness key `name` in a new file `key_path` (mode 0600); its vkey."""
    return create_key(key_path, name)


def open_witness(key_path: Path, name: str, state_dir: Path, logs_path: Path, rules: Rules | None) -> Witness:
    """The witness of these files; InputError (naming the logs file) when they cannot start one."""
    try:
        return Witness.from_files(key_path, name, state_dir, logs_path, rules=rules)
    except (FormatError, ValueError) as e:
        raise InputError([problem(str(logs_path), str(e))], "cannot start the witness") from None


def witness_server(
    key_path: Path, name: str, state_dir: Path, logs_path: Path, listen: str, rules_site: Path | None
) -> tuple[Witness, WitnessServer, str]:
    """The witness and its server listening on `listen` (HOST:PORT; no host: 127.0.0.1), replaying
    the rules over the site folder `rules_site` when given; also the host as written."""
    host, _, port = listen.rpartition(":")
    rules = site_rules(folder_reader(rules_site), state_dir) if rules_site else None
    w = open_witness(key_path, name, state_dir, logs_path, rules)
    return w, w.make_server(host or "127.0.0.1", int(port)), host


def cosign_folder(
    site: Path, key_path: Path, name: str, state_dir: Path, logs_path: Path, rules: bool
) -> tuple[int, str]:
    """Cosign the checkpoint of the site folder `site` offline: the HTTP status the server would
    answer (200 when cosigned) and its answer, the cosignature line or why it was refused."""
    read = folder_reader(site)
    w = open_witness(key_path, name, state_dir, logs_path, site_rules(read, state_dir) if rules else None)
    return cosign_site(w, read)


def add_cosignature(out: Path, line: str) -> None:
    """Append the cosignature `line` to `out`, beside other witnesses' lines, never over them."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as f:
        f.write(line + "\n")
