"""The JSON Schemas of the site's documents (FORMAT.md, "JSON Schemas"): served byte for byte
from the package's `generator/site/schemas/`, with `schemas/index.json`, which names the schema
of every published JSON path.

The schemas describe shapes only; the verifier is the authority on every rule. The generator
never validates against them (no schema library is a dependency): the tests do, on every JSON
file of a built site.
"""

from __future__ import annotations

import json
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

from generator.build.writer import SiteWriter
from generator.core import canonical_json, layout
from generator.core.generator_errors import TransparencyError

SUFFIX = ".schema.json"


def _folder() -> Traversable:
    return files("generator.site") / layout.SCHEMAS


def schema_files() -> dict[str, bytes]:
    """Every schema the package holds, by file name in name order, each checked to be JSON
    whose `$id` is its own name: a broken or misnamed schema stops the build instead of being
    served."""
    folder = _folder()
    out: dict[str, bytes] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(SUFFIX):
            continue
        data = entry.read_bytes()
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise TransparencyError(f"{folder}/{entry.name}: not a JSON schema ({e})") from None
        if not isinstance(doc, dict) or doc.get("$id") != entry.name:
            raise TransparencyError(f"{folder}/{entry.name}: its $id must be its file name, {entry.name!r}")
        out[entry.name] = data
    missing = sorted({name for _, name in layout.JSON_SCHEMAS} - set(out))
    if missing:
        raise TransparencyError(f"{folder}: no schema file {', '.join(missing)}")
    return out


def schema_index() -> dict[str, Any]:
    """schemas/index.json: a row per published JSON path pattern, sorted by pattern."""
    rows = [{"path": pattern, "schema": layout.schema(name)} for pattern, name in layout.JSON_SCHEMAS]
    rows.append({"path": layout.SCHEMA_FILES, "schema": layout.METASCHEMA})
    return {"type": "schema-index", "v": 1, "schemas": sorted(rows, key=lambda r: r["path"])}


def write_schemas(w: SiteWriter) -> None:
    for name, data in schema_files().items():
        w.write(layout.schema(name), data)
    w.write(layout.SCHEMA_INDEX, canonical_json.dumps(schema_index()))
