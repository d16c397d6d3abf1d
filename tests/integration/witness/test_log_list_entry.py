"""The program's entry in the witness network's log list, `ledger/log-list.txt`: written by every build from
keys.json's active key and program.yaml's `witness_qpd` and `contact` (or their defaults), bad values of those keys
refused naming the key, the verifier failing a published list that names another key, a retired key, another origin
or nothing readable, and passing a site without one; and a witness given the published file with `--log-list`
cosigning the site's checkpoint, offline and over HTTP."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.commands.build import build
from generator.commands.keys import rotate_key
from generator.core import layout
from generator.core.generator_errors import InputError
from generator.core.signing_key import load_key
from generator.program.datadir import Paths, load_program
from generator.verifier import (
    ListedLog,
    Problem,
    parse_cosigner_vkey,
    parse_log_list,
    verify_cosignatures,
    verify_site,
)
from tests.support.demo import BuiltSite
from tests.support.tamper import other_signer, resign_sums
from tests.support.witnesses import WITNESS_NAME, cli, http_request, request, witness_process

ORIGIN = "test.example.org/prog"  # tests.support.programs.new_program's


def set_program(paths: Paths, **changes: Any) -> None:
    """program.yaml with `changes` made (a value of None removes the key)."""
    doc = yaml.safe_load(paths.program_file.read_text(encoding="utf-8"))
    doc.update(changes)
    doc = {k: v for k, v in doc.items() if v is not None}
    paths.program_file.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")


def active_vkey(site: Path) -> str:
    [vkey] = [k["vkey"] for k in json.loads((site / layout.KEYS).read_bytes())["keys"] if k["status"] == "active"]
    return vkey


def published(site: Path) -> ListedLog:
    logs, problems = parse_log_list((site / layout.LOG_LIST).read_text(encoding="utf-8"))
    assert problems == []
    [log] = logs
    return log


def failures(site: Path) -> list[Problem]:
    report = verify_site(site)
    assert report.checks > 0
    return report.failures


# ---------------------------------------------------------------- the build


def test_every_build_publishes_the_log_s_entry(built_program: BuiltSite) -> None:
    site = built_program.out
    text = (site / layout.LOG_LIST).read_text(encoding="utf-8")
    comment, _, rest = text.partition("logs/v0\n")
    assert comment and all(line.startswith("# ") for line in comment.splitlines())
    assert rest == f"\nvkey {active_vkey(site)}\norigin none\nbastion none\nqpd 24\ncontact https://{ORIGIN}/\n"
    assert published(site) == ListedLog(active_vkey(site), None, None, 24, f"https://{ORIGIN}/")
    assert f"  {layout.LOG_LIST}\n" in (site / layout.SUMS).read_text(encoding="utf-8")
    assert verify_site(site).ok


def test_program_yaml_sets_the_quota_and_the_contact(built_program: BuiltSite) -> None:
    paths, site = built_program.paths, built_program.out
    set_program(paths, witness_qpd=96, contact="  ops@example.org, +1 555 0100 ")
    build(paths, site)
    assert published(site) == ListedLog(active_vkey(site), None, None, 96, "ops@example.org, +1 555 0100")
    # Without a contact, the operator's name (on one line), and else the site's URL.
    set_program(paths, contact=None, operator="Example\n  Evaluation Institute", site_url="https://ex.example/p")
    build(paths, site)
    assert (published(site).qpd, published(site).contact) == (96, "Example Evaluation Institute")
    set_program(paths, operator=None, witness_qpd=None)
    build(paths, site)
    assert (published(site).qpd, published(site).contact) == (24, "https://ex.example/p/")
    assert verify_site(site).ok


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        ("witness_qpd", 0, "from 1 to"),
        ("witness_qpd", -5, "from 1 to"),
        ("witness_qpd", True, "from 1 to"),
        ("witness_qpd", "24", "from 1 to"),
        ("witness_qpd", 2.5, "from 1 to"),
        ("witness_qpd", 10**18, "from 1 to 999999999999999999"),
        ("contact", "", "how a witness operator reaches the program"),
        ("contact", "two\nlines", "how a witness operator reaches the program"),
        ("contact", 42, "how a witness operator reaches the program"),
        ("contact", ["ops"], "how a witness operator reaches the program"),
    ],
)
def test_a_bad_log_list_key_is_refused_naming_it(
    make_program: Callable[..., Paths], key: str, value: object, fragment: str
) -> None:
    paths = make_program(retired=0)
    set_program(paths, **{key: value})
    with pytest.raises(InputError) as info:
        load_program(paths)
    [p] = info.value.problems
    assert (p.file.endswith("program.yaml"), p.where) == (True, key)
    assert p.expected is not None and fragment in p.expected


def test_after_a_rotation_the_entry_names_the_new_key(built_program: BuiltSite, tmp_path: Path) -> None:
    paths, site = built_program.paths, built_program.out
    old, new = rotate_key(paths, "2026-03-01T00:00:00Z")
    build(paths, site)
    assert published(site).vkey == new.vkey == active_vkey(site)
    assert verify_site(site).ok
    # The retired key listed again: a witness would cosign what the log no longer signs with.
    text = (site / layout.LOG_LIST).read_text(encoding="utf-8")
    (site / layout.LOG_LIST).write_text(text.replace(new.vkey, old.vkey))
    resign_sums(site, load_key(paths.key_file))
    found = failures(site)
    assert {p.file for p in found} == {layout.LOG_LIST}
    assert any("the listed key is retired (keys.json)" in p.message and p.where == "line 8" for p in found)
    assert any("does not list the log's active key" in p.message and p.expected == f"vkey {new.vkey}" for p in found)


# ---------------------------------------------------------------- the verifier


def tampered_copy(site: BuiltSite, tmp_path: Path, name: str, edit: Callable[[str], str | None]) -> Path:
    """A copy of the built site whose log list `edit` rewrote (None: removed), re-signed by the program's key."""
    copy = tmp_path / name
    shutil.copytree(site.out, copy)
    new = edit((copy / layout.LOG_LIST).read_text(encoding="utf-8"))
    if new is None:
        (copy / layout.LOG_LIST).unlink()
    else:
        (copy / layout.LOG_LIST).write_text(new, encoding="utf-8")
    resign_sums(copy, load_key(site.paths.key_file))
    return copy


def test_the_verifier_checks_the_published_log_list(built_program: BuiltSite, tmp_path: Path) -> None:
    vkey = active_vkey(built_program.out)
    other = other_signer(ORIGIN).vkey
    cases: dict[str, tuple[Callable[[str], str | None], list[tuple[str, str, str | None]]]] = {
        "another key": (
            lambda t: t.replace(vkey, other),
            [
                ("the listed key is not one of the log's keys (keys.json)", "line 8", other),
                ("the log list does not list the log's active key", "", other),
            ],
        ),
        "a wrong origin": (
            lambda t: t.replace("origin none", "origin example.org/elsewhere"),
            [("the listed origin is not the site's", "line 8", "example.org/elsewhere")],
        ),
        "garbage": (
            lambda t: "hello\n",
            [
                ("a log list starts with the line `logs/v0`", "line 1", "hello"),
                ("expected a `vkey` line, which starts a log", "line 1", "hello"),
                ("the log list does not list the log's active key", "", "no log"),
            ],
        ),
        "a second log's entry": (
            lambda t: t + f"\nvkey {other}\norigin none\nbastion none\nqpd 24\ncontact c\n",
            [("the listed key is not one of the log's keys (keys.json)", "line 14", other)],
        ),
    }
    for name, (edit, expected) in cases.items():
        found = failures(tampered_copy(built_program, tmp_path, name.replace(" ", "-"), edit))
        assert {p.file for p in found} == {layout.LOG_LIST}, (name, found)
        assert [(p.message[: len(m)], p.where, p.found) for p, (m, _, _) in zip(found, expected, strict=True)] == [
            (m, w, f) for m, w, f in expected
        ], name
    # The explicit origin, when it is the site's, is as good as `origin none`.
    explicit = tampered_copy(
        built_program, tmp_path, "explicit", lambda t: t.replace("origin none", f"origin {ORIGIN}")
    )
    assert verify_site(explicit).ok
    # Optional: a site of an earlier release has none.
    assert verify_site(tampered_copy(built_program, tmp_path, "none", lambda t: None)).ok


# ---------------------------------------------------------------- a witness reading it


def test_a_witness_given_the_published_list_cosigns_the_site(built_program: BuiltSite, tmp_path: Path) -> None:
    site = built_program.out
    key = tmp_path / "w.key"
    code, out = cli("witness", "key", WITNESS_NAME, "--key", key, "--type", "ed25519")
    assert code == 0, out
    witness_key = parse_cosigner_vkey(out.strip())
    listed = site / layout.LOG_LIST
    checkpoint = (site / layout.CHECKPOINT).read_bytes()

    lines = tmp_path / "cosignatures.txt"
    code, printed = cli(
        "witness", "cosign", site, "--key", key, "--state", tmp_path / "offline", "--log-list", listed, "--out", lines
    )
    assert code == 0, printed
    assert list(verify_cosignatures(checkpoint + lines.read_bytes(), [witness_key])) == [WITNESS_NAME]

    argv: list[str | Path] = ["--key", key, "--state", tmp_path / "served", "--log-list", listed]
    with witness_process(argv, key_lines=1) as (url, _):
        status, _, answer = http_request(url + "/add-checkpoint", request(0, [], checkpoint))
    assert status == 200, answer
    assert list(verify_cosignatures(checkpoint + answer, [witness_key])) == [WITNESS_NAME]
