"""mldsa44.js, the ML-DSA-44 verifier the site ships beside check.js: its bytes are what tools/make_mldsa_module.py
makes from the pins of package.json (each tarball fetched by npm, held to the lockfile's integrity, bundled by the
pinned esbuild), its header records those inputs and the packages' licenses, it stays small, and it verifies what an
independent signer (`cryptography`) signs and refuses what was changed.

npm, esbuild (npm ci --prefix tests/browser) or Node missing skips these tests, saying why; with CI set they fail.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey

from tests.support.browser import unavailable
from tests.support.check_js import node
from tests.support.demo import REPO

TOOL = REPO / "tools" / "make_mldsa_module.py"
SHIPPED = REPO / "generator" / "verifier" / "browser" / "mldsa44.js"
PACKAGE_JSON = REPO / "tests" / "browser" / "package.json"


def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_mldsa_module", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_module_is_what_the_pinned_packages_make() -> None:
    make = tool()
    if shutil.which("npm") is None:
        unavailable("npm is not installed (Debian: apt install npm)")
    try:
        fresh = make.build_module()
    except make.BuildError as e:
        unavailable(str(e))
    assert fresh == SHIPPED.read_bytes(), "mldsa44.js is not what the pins make: run python tools/make_mldsa_module.py"


def test_the_header_records_the_pins_the_tarballs_and_the_licenses() -> None:
    text = SHIPPED.read_text(encoding="utf-8")
    header = text.split("*/", 1)[0]
    pins = json.loads(PACKAGE_JSON.read_bytes())["dependencies"]
    lock = json.loads((PACKAGE_JSON.parent / "package-lock.json").read_bytes())["packages"]
    assert f"bundled by esbuild {pins['esbuild']} into one ES module" in " ".join(header.split())
    rows = re.findall(r"^ +(@noble/[a-z-]+) ([0-9.]+), tarball SHA-256 ([0-9a-f]{64})$", header, re.MULTILINE)
    assert {name: version for name, version, _ in rows} == {
        "@noble/curves": lock["node_modules/@noble/curves"]["version"],
        "@noble/hashes": lock["node_modules/@noble/hashes"]["version"],
        "@noble/post-quantum": pins["@noble/post-quantum"],
    }
    for name, version, _ in rows:
        assert f"/* {name} {version}: LICENSE\n\nThe MIT License (MIT)\n" in text, name
    assert (
        f'var source = "@noble/post-quantum {pins["@noble/post-quantum"]}, bundled by esbuild {pins["esbuild"]}";'
        in text
    )
    # One module that imports nothing: no import statement, no require, nothing fetched.
    assert not re.search(r"^\s*import\b|\brequire\(|\bimport\(|\bfetch\(", text, re.MULTILINE)


def test_the_module_is_small() -> None:
    assert SHIPPED.stat().st_size < 100_000, "the ML-DSA-44 module every site ships must stay small"


def test_it_verifies_what_cryptography_signs_and_refuses_a_change(tmp_path: Path) -> None:
    key = MLDSA44PrivateKey.from_seed_bytes(hashlib.sha256(b"mldsa44.js test").digest())
    public = key.public_key().public_bytes_raw()
    message = b"subtree/v1\n\x00" + b"an independent signer's message"
    signature = key.sign(message)
    flipped = bytearray(signature)
    flipped[1000] ^= 1
    cases = [
        (signature, message, public),
        (bytes(flipped), message, public),
        (signature, message + b"!", public),
        (signature, message, bytes(1312)),
    ]
    script = tmp_path / "verify.mjs"
    script.write_text(
        f"import {{ ml_dsa44 }} from {json.dumps(SHIPPED.as_uri())};\n"
        "const cases = JSON.parse(process.argv[2]);\n"
        "const bytes = (h) => Uint8Array.from(Buffer.from(h, 'hex'));\n"
        "console.log(JSON.stringify(cases.map(([s, m, p]) => {\n"
        "  try { return ml_dsa44.verify(bytes(s), bytes(m), bytes(p)); } catch (e) { return 'threw'; }\n"
        "})));\n",
        encoding="utf-8",
    )
    arg = json.dumps([[s.hex(), m.hex(), p.hex()] for s, m, p in cases])
    out = subprocess.run([node(), str(script), arg], capture_output=True, text=True, timeout=120, check=True).stdout
    assert json.loads(out) == [True, False, False, False]
