"""The map of the code: which folder's modules may import which folders, in one place.

ARCHITECTURE.md describes it and tests/structure/test_structure.py enforces it. A module belongs to the
most specific folder the map names (`site.views` before `site`; "" is the package's root:
`cli`, `__main__`, this map). It may import the modules of the folders its entry lists, and
besides them only the standard library, its dependencies and, in the generator, the names the
verifier declares in `generator.verifier.__all__`. The generator's data flows one way, from a
program's files to the site: no folder imports a folder above it. The few edges that cross the
layers are named one by one in EXCEPTIONS, each with its reason. The verifier has a map of its
own and imports nothing of the generator.
"""

# The generator, lowest layer first.
GENERATOR: dict[str, tuple[str, ...]] = {
    "core": ("core",),
    "program": ("core", "program"),
    "state": ("core", "program", "state"),
    "witness": ("core", "witness"),
    "monitor": ("core", "monitor"),
    "importers": ("core", "program", "importers"),
    "build": ("core", "program", "state", "witness", "build"),
    "site.views": ("core", "site.views", "build.gather"),
    "site": ("core", "program", "state", "build", "site"),
    "commands": ("core", "program", "state", "witness", "monitor", "importers", "build", "site", "commands"),
    "": ("core", "program", "state", "witness", "monitor", "importers", "build", "site", "commands", ""),
}

# (importing module, imported module): why this edge crosses the layers of GENERATOR.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("program.ledgerfile", "state.ledger_cache"): "reading the ledger starts from the replay remembered last time",
    ("state.page_memo", "build.writer"): "a page unchanged since the last release is hard-linked through the writer",
}

# The verifier (generator/verifier/), lowest first; its root holds `__init__` (the generator's
# door, `__all__`) and `bundle` (the tool that joins the modules into verify.py).
VERIFIER: dict[str, tuple[str, ...]] = {
    "core": ("core",),
    "tlog": ("core", "tlog"),
    "rules": ("core", "tlog", "rules"),
    "memory": ("core", "tlog", "rules", "memory"),
    "site": ("core", "tlog", "rules", "memory", "site"),
    "": ("core", "tlog", "rules", "memory", "site", ""),
}


def folder_of(module: str, layers: dict[str, tuple[str, ...]]) -> str:
    """The folder of the map a dotted module (relative to its package) belongs to."""
    parts = module.split(".")
    for n in range(len(parts) - 1, 0, -1):
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
    target = folder_of(imported, layers)
    return target in allowed or any(imported == a or imported.startswith(a + ".") for a in allowed if a)
