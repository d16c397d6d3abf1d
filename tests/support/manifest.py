"""A site's manifest with its lists whole, whatever its format: a v4 manifest's reveals, runs and
certificates read from the parts it names (docs/formats/v4.md), with plain JSON, as a reader
outside this project would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PARTED = ("reveals", "runs", "certificates")


def whole_manifest(site: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((site / "transparency.json").read_bytes())
    for name in PARTED:
        if isinstance(manifest.get(name), dict):
            manifest[name] = [
                row
                for part in manifest[name]["parts"]
                for row in json.loads((site / part["path"]).read_bytes())["rows"]
            ]
    return manifest
