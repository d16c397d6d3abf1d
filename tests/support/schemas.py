"""The JSON Schemas the package serves (generator/site/schemas/), loaded and registered by file name, and a
draft 2020-12 validator for any of them. `jsonschema` is a test dependency only: the generator never imports it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tests.support.demo import REPO

PACKAGE_SCHEMAS = REPO / "generator" / "site" / "schemas"


def _load_schemas(folder: Path) -> dict[str, dict[str, Any]]:
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.schema.json"))}


SCHEMAS = _load_schemas(PACKAGE_SCHEMAS)


# Registered by file name, as their relative $ids say: a `$ref` to "defs.schema.json" then
# resolves to the file beside the schema, wherever the site lives.
REGISTRY: Registry[Any] = Registry().with_resources(
    (name, Resource.from_contents(doc, default_specification=DRAFT202012)) for name, doc in SCHEMAS.items()
)


def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(SCHEMAS[f"{name}.schema.json"], registry=REGISTRY)
