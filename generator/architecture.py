"""The map of the code: which folder's modules may import which folders and modules, in one place.

ARCHITECTURE.md is generated from it and from the docstrings (tools/architecture_doc.py), and
tests/structure/test_structure.py enforces it. A module belongs to the most specific line of the map that
names it (`build.gather` before `build`, `site.views` before `site`; "" is the package's root:
`cli`, `__main__`, this map). It may import the modules of the folders and the modules its line
lists, and besides them only the standard library, its dependencies and, in the generator, the
names the verifier declares in `generator.verifier.__all__`. The generator's data flows one way,
from a program's files to the site: no folder imports a folder above it. A line names a single
module of another folder when the folder needs only that one (`NARROW` says why); a module has a
line of its own when it must import less than its folder (`OWN_LINES` says why); the few edges
that cross the layers are named one by one in `EXCEPTIONS`, each with its reason. The verifier
has a map of its own and imports nothing of the generator.
"""

# The generator, lowest layer first.
GENERATOR: dict[str, tuple[str, ...]] = {
    "core": ("core",),
    "program": ("core", "program"),
    "state": ("core", "program.datadir", "program.itemsources", "program.sealed", "state"),
    "witness": ("core", "state.witness_state", "state.replay_cache", "witness"),
    "monitor": ("core", "state.monitor_state", "state.replay_cache", "monitor"),
    "mirror": ("core", "monitor.site_source", "monitor.read_ahead", "mirror"),
    "importers": ("core", "program", "importers"),
    "build.writer": ("core", "build.previous_release"),
    "build.gather": ("core", "program", "state"),
    "build": ("core", "program.datadir", "program.ledgerfile", "state.archive_cache", "witness.server", "build"),
    "site.views": ("core", "build.gather", "site.views"),
    "site": (
        "core",
        "program.ledgerfile",
        "program.methodology_files",
        "state.page_cache",
        "build.gather",
        "build.previous_release",
        "build.writer",
        "build.artifacts",
        "site",
    ),
    "publish": ("core", "program.journal", "publish"),
    "commands": (
        "core",
        "program",
        "state",
        "witness",
        "monitor",
        "mirror",
        "importers",
        "build",
        "site",
        "publish",
        "commands",
    ),
    "": ("commands", "core.generator_errors", "program.datadir", ""),
}

# (line of the map, the one module of another folder it lists): why that module, and only it.
NARROW: dict[tuple[str, str], str] = {
    ("state", "program.datadir"): "where the private directory's cache/ lies, and the ledger file a cache is bound to",
    ("state", "program.itemsources"): "the item sources a commit read whole, which the source index vouches for",
    ("state", "program.sealed"): "an item's digest is remade from its committed document, revealed or sealed",
    ("witness", "state.witness_state"): "the latest checkpoint it cosigned per log, its own state",
    ("monitor", "state.monitor_state"): "the key it pinned and the checkpoint it saw per log, its own state",
    (
        "witness",
        "state.replay_cache",
    ): "the ledger as of the checkpoint it last cosigned, so that it replays only the new",
    ("monitor", "state.replay_cache"): "the ledger as of the checkpoint it saw last, so that it replays only the new",
    ("mirror", "monitor.site_source"): "a site read as the monitor reads it, from a folder or over https, bounded",
    ("mirror", "monitor.read_ahead"): "the next tiles fetched a few at a time, in the order the reader will ask",
    ("build.writer", "build.previous_release"): "a file the last release holds with the same bytes is hard-linked",
    ("build", "program.datadir"): "where the program's files lie (the policy, the cosignatures, the private keys)",
    ("build", "program.ledgerfile"): "the ledger's lines, streamed into the entries and compared with the last release",
    ("build", "state.archive_cache"): "which archive this builder wrote last, so that its members are copied",
    ("build", "witness.server"): "the witness's protocol, to ask the policy's witnesses for cosignatures",
    ("site.views", "build.gather"): "the gathered context's types, which the views turn into words",
    ("site", "program.ledgerfile"): "the ledger's lines, streamed into the ledger pages and the feeds",
    ("site", "program.methodology_files"): "a methodology's parameters described in words",
    ("site", "state.page_cache"): "what each page of the last release was made from, so that only changed pages render",
    ("site", "build.gather"): "the gathered context, the one input of every page",
    ("site", "build.previous_release"): "the last release's search shards, taken when their pages did not change",
    ("site", "build.writer"): "the staging writer every page is written through",
    ("site", "build.artifacts"): "the documents a page shows as they are published (keys, commitments, verify.py)",
    ("publish", "program.journal"): "the points between two objects where the crash tests kill a publish",
    ("", "core.generator_errors"): "the generator's one error tree, turned into a message and its exit status",
    ("", "program.datadir"): "the program's two directories (--data, --private, their environment variables) resolved "
    "into the Paths every command takes, and the warning when the private one lies where it would be published",
}

# A module with a line of its own: why it may import less than the rest of its folder.
OWN_LINES: dict[str, str] = {
    "build.writer": "the writer writes bytes and knows no document: it imports nothing else of the build",
    "build.gather": "gathering reads and checks every input and writes nothing: it imports no other build module, "
    "so neither the writer nor a signer",
}

# (importing module, imported module): why this edge crosses the layers of GENERATOR.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("program.ledgerfile", "state.ledger_cache"): "reading the ledger starts from the replay remembered last time",
}

# The verifier (generator/verifier/), lowest first; its root holds `__init__` (the generator's
# door, `__all__`) and `bundle` (the tool that joins the modules into verify.py).
VERIFIER: dict[str, tuple[str, ...]] = {
    "core": ("core",),
    "crypto": ("core", "crypto"),
    "tlog": ("core", "crypto", "tlog"),
    "rules": ("core", "crypto", "tlog", "rules"),
    "exports": ("core", "crypto", "tlog", "rules", "exports"),
    "memory": ("core", "crypto", "tlog", "rules", "memory"),
    "site": ("core", "crypto", "tlog", "rules", "exports", "memory", "site"),
    "": ("core", "crypto", "tlog", "rules", "exports", "memory", "site", ""),
}


def folder_of(module: str, layers: dict[str, tuple[str, ...]]) -> str:
    """The line of the map a dotted module (relative to its package) belongs to: its own, or its
    folder's, the most specific first."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in layers:
            return ".".join(parts[:n])
    return ""


def may_import(
    importer: str, imported: str, layers: dict[str, tuple[str, ...]] = GENERATOR, *, exceptions: bool = True
) -> bool:
    """Whether module `importer` may import module `imported` (both dotted, relative to the package)."""
    if exceptions and layers is GENERATOR and (importer, imported) in EXCEPTIONS:
        return True
    allowed = layers[folder_of(importer, layers)]
    return any(imported == a or imported.startswith(a + ".") for a in allowed if a) or (
        "" in allowed and folder_of(imported, layers) == ""
    )
