"""A new program as its operator first makes it: whose methodology it publishes, whether it is
called a demo, and what it is told about where its private directory lies."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bs4 import BeautifulSoup
from click.testing import CliRunner, Result

from generator.cli import main
from generator.commands.build import build
from generator.commands.commit import commit_new_items
from generator.commands.methodology import publish
from generator.commands.register import register_run
from generator.core.generator_errors import InputError
from generator.program.datadir import Paths, unsafe_private_place
from tests.support.demo import REPO, BuiltSite
from tests.support.files import tree
from tests.support.programs import METHODOLOGY, item, write_items
from tests.support.runs import run_spec, write_json

DEMO_PROSE_WORDS = "customer message"  # what the demo's methodology says its items are


def cli(args: list[object], paths: Paths) -> Result:
    argv = ["--data", str(paths.data), "--private", str(paths.private), *map(str, args)]
    return CliRunner().invoke(main, argv, prog_name="transparency")


def init_args(*extra: object) -> list[object]:
    return [
        "init",
        "--name",
        "Real program",
        "--origin",
        "real.example.org/prog",
        "--at",
        "2026-01-05T09:00:00Z",
        *extra,
    ]


def ledger(paths: Paths) -> list[dict]:
    return [json.loads(line) for line in paths.ledger_file.read_bytes().splitlines()]


# -- item 5: init publishes the program's own methodology, or none


def test_init_without_a_methodology_publishes_none_and_nothing_of_the_demo(tmp_path: Path) -> None:
    paths = Paths(tmp_path / "data", tmp_path / "private")
    result = cli(init_args(), paths)
    assert result.exit_code == 0, result.output
    assert [leaf["type"] for leaf in ledger(paths)] == ["gate", "gate"]
    assert not any(paths.methodology_dir.iterdir())
    written = b"".join(p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file())
    assert DEMO_PROSE_WORDS.encode() not in written.lower()
    assert "transparency methodology publish" in result.stdout


def test_register_before_any_methodology_is_refused_saying_how(tmp_path: Path) -> None:
    paths = Paths(tmp_path / "data", tmp_path / "private")
    assert cli(init_args(), paths).exit_code == 0
    write_items(paths, [item("a-001", "a")])
    commit_new_items(paths, "2026-01-12T10:00:00Z")
    spec = run_spec(paths=Paths(REPO / "data", REPO / "data" / "private"), run_id="run-1", gate="a", items=["a-001"])
    source = write_json(tmp_path / "in" / "run-1.json", spec)
    before = tree(paths.data, paths.private)
    result = cli(["register", source, "--at", "2026-03-01T00:00:00Z"], paths)
    assert result.exit_code == 2, result.output
    assert "published no methodology yet" in result.stderr
    assert "transparency methodology publish PARAMS.json --prose PROSE.md" in result.stderr
    assert "methodology.version" in result.stderr
    assert "not published before the run" not in result.stderr, "one clear problem, not two"
    assert tree(paths.data, paths.private) == before
    # The tutorial's route: publish the program's own, then the same spec registers.
    publish(paths, *METHODOLOGY, "2026-02-01T00:00:00Z")
    registered = register_run(paths, source, "2026-03-01T00:00:00Z")
    assert registered.id == "run-1"


def test_init_publishes_the_methodology_it_is_given(tmp_path: Path) -> None:
    params = json.loads(METHODOLOGY[0].read_text())
    params["version"] = "1.0"
    own = write_json(tmp_path / "in" / "params.json", params)
    prose = tmp_path / "in" / "prose.md"
    prose.write_text("# Our method\n\nAn item passes at {{ item_threshold }}.\n", encoding="utf-8")
    paths = Paths(tmp_path / "data", tmp_path / "private")
    result = cli(init_args("--methodology", own, "--prose", prose), paths)
    assert result.exit_code == 0, result.output
    assert [leaf.get("version") for leaf in ledger(paths) if leaf["type"] == "methodology"] == ["1.0"]
    assert (paths.methodology_dir / "1.0.md").read_text() == prose.read_text()
    assert "methodology publish" not in result.stdout


def test_init_refuses_half_a_methodology_or_a_bad_one_writing_nothing(tmp_path: Path) -> None:
    paths = Paths(tmp_path / "data", tmp_path / "private")
    result = cli(init_args("--methodology", METHODOLOGY[0]), paths)
    assert result.exit_code == 2 and "--prose" in result.stderr
    bad = write_json(tmp_path / "bad.json", {"version": "1.0"})
    result = cli(init_args("--methodology", bad, "--prose", METHODOLOGY[1]), paths)
    assert result.exit_code == 2 and "bad.json" in result.stderr, result.output
    assert not paths.data.exists() and not paths.private.exists()


# -- item 4: the demo is the demo key, and a private directory in the open is said to be


def test_a_real_program_with_its_private_directory_in_data_is_no_demo(tmp_path: Path) -> None:
    """README's route taken literally (no --private): the key sits in data/private. The pages
    must not call the program a demo; the operator is warned, at init and at every build."""
    paths = Paths(tmp_path / "data", tmp_path / "data" / "private")
    result = cli(init_args("--methodology", METHODOLOGY[0], "--prose", METHODOLOGY[1]), paths)
    assert result.exit_code == 0, result.output
    assert "warning: the private directory" in result.stderr and "inside the data directory" in result.stderr
    assert "TRANSPARENCY_PRIVATE" in result.stderr and "--private" in result.stderr
    write_items(paths, [item("a-001", "a"), item("b-0001", "b")])
    commit_new_items(paths, "2026-01-12T10:00:00Z")
    out = tmp_path / "public"
    for _ in range(2):  # a build, then one with nothing to do: each says it
        built = cli(["build", "--out", out], paths)
        assert built.exit_code == 0, built.output
        assert "inside the data directory" in built.stderr and "DEMO" not in built.stderr
    assert not build(paths, out, full=True).demo
    for page in sorted(out.rglob("*.html")):
        page_text = page.read_text(encoding="utf-8")
        assert not BeautifulSoup(page_text, "html.parser").select(".demo-banner, .demo-key-note"), page


def test_a_private_directory_inside_a_git_work_tree_is_unsafe(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    inside = Paths(repo / "data", repo / "secret")
    assert "git work tree" in (unsafe_private_place(inside) or "")
    apart = Paths(repo / "data", tmp_path / "elsewhere" / "private")
    assert unsafe_private_place(apart) is None
    assert "data directory" in (unsafe_private_place(Paths(repo / "d", repo / "d" / "private")) or "")


def test_the_demo_is_decided_by_its_key(demo_copy: BuiltSite) -> None:
    result = cli(["build", "--out", demo_copy.out], demo_copy.paths)
    assert result.exit_code == 0, result.output
    assert "DEMO key" in result.stderr
    # What the demo warning says already (its key is published in data/private) is not said twice.
    assert "warning: the private directory" not in result.stderr


def test_a_methodology_given_to_init_is_checked_like_a_published_one(tmp_path: Path) -> None:
    prose = tmp_path / "prose.md"
    prose.write_text("Threshold {{ no_such_parameter }}.\n", encoding="utf-8")
    paths = Paths(tmp_path / "data", tmp_path / "private")
    from generator.commands.init import init_program

    try:
        init_program(paths, "P", "p.example.org/x", ["a:A:public"], methodology=(METHODOLOGY[0], prose))
    except InputError as e:
        assert "prose.md" in e.describe()
    else:
        raise AssertionError("a prose with an unknown placeholder was accepted")
    assert not paths.data.exists() and not paths.private.exists()


def test_init_in_a_git_work_tree_keeps_the_new_private_directory_out_of_git(tmp_path: Path) -> None:
    """`git add data` must not commit the signing key of a private directory init made under data/."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    paths = Paths(repo / "data", repo / "data" / "private")
    r = cli(["init", "--name", "P", "--origin", "p.example.org/x"], paths)
    assert r.exit_code == 0, r.output
    assert (paths.private / ".gitignore").read_text() == "*\n"
    assert "git ignores the private directory" in r.stdout
    assert "warning: the private directory" in r.stderr  # the unsafe place is still said
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "add", "data"], check=True)
    staged = subprocess.run([*git, "diff", "--cached", "--name-only"], check=True, capture_output=True, text=True)
    assert "data/program.yaml" in staged.stdout.split()
    assert not [f for f in staged.stdout.split() if f.startswith("data/private/")], staged.stdout


def test_init_leaves_an_existing_private_directory_as_it_is(tmp_path: Path) -> None:
    """A private directory that was there before is the operator's (the demo commits its own on purpose)."""
    paths = Paths(tmp_path / "data", tmp_path / "private")
    paths.private.mkdir(mode=0o700)
    r = cli(["init", "--name", "P", "--origin", "p.example.org/x"], paths)
    assert r.exit_code == 0, r.output
    assert not (paths.private / ".gitignore").exists()
    assert "git ignores" not in r.stdout
