"""The manifest's lists in parts (docs/formats/v4.md): a v4 `transparency.json` names, for each of
its lists of reveals, runs and certificates, parts of 256 rows, `manifest/<list>/<k>.json`, with
their row counts and SHA-256. A part holds no time and no tree size, so a part whose rows did not
change keeps its bytes, and an event rewrites the index and the parts its rows are in instead of
a row for every reveal, run and certificate of the history.

The build cuts the lists with `cut_manifest`; the verifier reads them back whole with
`read_manifest_parts`, and every other check reads the result as it reads a v3 manifest."""

from typing import Any

from generator.verifier.core.canonical import canonical_bytes, parse_canonical
from generator.verifier.core.errors import FormatError, Problem
from generator.verifier.core.folder import MANIFEST_PATH, Site
from generator.verifier.core.formats import MANIFEST_V4, check_keys, is_int, sha256_hex
from generator.verifier.core.text import show

# A part's rows: a certificate's row is about 300 bytes, so a part of certificates about 75 KiB,
# what one event rewrites at most in each list.
MANIFEST_PART_ROWS = 256
MANIFEST_PARTS_DIR = "manifest"
# The lists that grow with the history; `gates` and `methodology` stay whole in the index.
PARTED_LISTS = ("reveals", "runs", "certificates")
PART_TYPE = "manifest-part"
# The checks of the rows read them as one list, and name the manifest and the row's id.
PARTED_ROWS_NOTE = (
    f"in this format v4 site the rows of {MANIFEST_PATH}'s reveals, runs and certificates are in the parts "
    f"{MANIFEST_PARTS_DIR}/<list>/<k>.json it names: a failure at a row names {MANIFEST_PATH} and the row's id"
)
_SHA256_CHARS = frozenset("0123456789abcdef")


def manifest_part_path(name: str, k: int) -> str:
    """Where part `k` (from 0) of the manifest's list `name` is: its rows 256k to 256k + 255."""
    return f"{MANIFEST_PARTS_DIR}/{name}/{k}.json"


def manifest_part_count(rows: int) -> int:
    return -(-rows // MANIFEST_PART_ROWS)


def manifest_part_bytes(origin: str, name: str, k: int, rows: list[Any]) -> bytes:
    """Part `k` of list `name`, JCS `{"list":L,"origin":O,"part":k,"rows":[…],"type":"manifest-part","v":1}`."""
    return canonical_bytes({"list": name, "origin": origin, "part": k, "rows": rows, "type": PART_TYPE, "v": 1})


def cut_manifest(manifest: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
    """A v4 manifest from one whose lists are whole: the index (each parted list replaced by
    `{"count":C,"parts":[{"count":K,"path":P,"sha256":H}]}`) and every part's path and bytes."""
    index = {**manifest, "v": MANIFEST_V4}
    files: list[tuple[str, bytes]] = []
    for name in PARTED_LISTS:
        rows = manifest[name]
        parts = []
        for k in range(manifest_part_count(len(rows))):
            chunk = rows[k * MANIFEST_PART_ROWS : (k + 1) * MANIFEST_PART_ROWS]
            path, data = manifest_part_path(name, k), manifest_part_bytes(manifest["origin"], name, k, chunk)
            files.append((path, data))
            parts.append({"count": len(chunk), "path": path, "sha256": sha256_hex(data)})
        index[name] = {"count": len(rows), "parts": parts}
    return index, files


def read_manifest_parts(s: Site, manifest: dict[str, Any]) -> dict[str, Any] | None:
    """A v4 manifest with its parted lists read back whole from their parts, each part held to the
    SHA-256 and row count its index gives and to the one form the format allows; None when any
    index or part is not what the format says (every problem reported, named by its file): the
    checks that read the lists would otherwise judge rows no honest build wrote."""
    whole = dict(manifest)
    ok = True
    for name in PARTED_LISTS:
        rows = _read_list(s, manifest["origin"], name, manifest.get(name))
        ok = ok and rows is not None
        whole[name] = rows
    return whole if ok else None


def _read_list(s: Site, origin: str, name: str, index: Any) -> list[Any] | None:
    report = s.report
    problems = check_keys(index, ("count", "parts"), where=name)
    if problems:
        report.add(problems, MANIFEST_PATH)
        return None
    count, parts = index["count"], index["parts"]
    if not (is_int(count) and count >= 0):
        report.check(
            False, MANIFEST_PATH, "malformed row count", "a non-negative integer", show(count), f"{name}.count"
        )
        return None
    want = manifest_part_count(count)
    if not isinstance(parts, list) or len(parts) != want:
        report.check(
            False,
            MANIFEST_PATH,
            f"the list {name} must name a part for each {MANIFEST_PART_ROWS} rows of its count (the last fewer)",
            f"{want} parts for {count} rows",
            f"{len(parts)} parts" if isinstance(parts, list) else show(parts),
            where=f"{name}.parts",
        )
        return None
    rows: list[Any] = []
    ok = True
    for k, part in enumerate(parts):
        expected = min(MANIFEST_PART_ROWS, count - k * MANIFEST_PART_ROWS)
        found = _read_part(s, origin, name, k, part, expected)
        ok = ok and found is not None
        rows.extend(found or ())
    return rows if ok else None


def _read_part(s: Site, origin: str, name: str, k: int, part: Any, count: int) -> list[Any] | None:
    report, where, path = s.report, f"{name}.parts[{k}]", manifest_part_path(name, k)
    problems = check_keys(part, ("count", "path", "sha256"), where=where)
    if not problems:
        if part["path"] != path:
            problems.append(
                Problem("a part out of place", where=f"{where}.path", expected=path, found=show(part["path"]))
            )
        if not (is_int(part["count"]) and part["count"] == count):
            problems.append(
                Problem("wrong row count", where=f"{where}.count", expected=str(count), found=show(part["count"]))
            )
        sha = part["sha256"]
        if not (isinstance(sha, str) and len(sha) == 64 and set(sha) <= _SHA256_CHARS):
            problems.append(
                Problem(
                    "malformed SHA-256", where=f"{where}.sha256", expected="64 lowercase hex digits", found=show(sha)
                )
            )
    if not report.add(problems, MANIFEST_PATH):
        return None
    # Held to its SHA-256 before it is parsed: what is parsed is the part the index names.
    data = s.read(path, f"part {k} of the manifest's {name}")
    if data is None or not report.check(
        sha256_hex(data) == part["sha256"],
        path,
        f"the part's bytes do not have the SHA-256 {MANIFEST_PATH} gives it",
        part["sha256"],
        sha256_hex(data),
    ):
        return None
    try:
        doc = parse_canonical(data)
    except FormatError as e:
        report.check(False, path, f"part {k} of the manifest's {name}: {e}")
        return None
    problems = check_keys(doc, ("list", "origin", "part", "rows", "type", "v"))
    if not problems:
        header = {"list": name, "origin": origin, "part": k, "type": PART_TYPE, "v": 1}
        for key, value in header.items():
            if doc[key] != value or type(doc[key]) is not type(value):
                problems.append(Problem("not this part's", where=key, expected=show(value), found=show(doc[key])))
        if not (isinstance(doc["rows"], list) and len(doc["rows"]) == count):
            found = f"{len(doc['rows'])} rows" if isinstance(doc["rows"], list) else show(doc["rows"])
            problems.append(Problem("wrong rows", where="rows", expected=f"a list of {count} rows", found=found))
    return doc["rows"] if report.add(problems, path) else None
