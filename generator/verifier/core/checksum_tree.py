"""The checksum list as a tree (docs/formats/v3.md, 5; docs/formats/v4.md, 3): which list holds
each file of a v3 or v4 site, the bytes of every list, and reading a tree's lists back.

A file's key is the SHA-256 of its path; a node is a prefix of keys, written in hex digits in a
v3 site (a leaf holds at most 64 files) and in bits in a v4 site (at most 16). The shape is a
function of the set of paths alone, so the build writes the same tree for the same files and a
list whose files did not change keeps its bytes (and a mirror its copy). The verifier's own check
of a tree, reporting every discrepancy, is generator/verifier/site/checksum_lists.py;
`read_lists` here is the plain reader of the generator's tools (the publisher, the build reading
its last release).
"""

import bisect
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from generator.verifier.core.folder import SUMS_PATH, SUMS_SIG_PATH

# A leaf holds at most this many files; a node with more is split by the next hex digit of the keys.
LEAF_FILES = 64
LISTS_DIR = "sums"
PARTS_DIR = "download"
LIST_SUFFIX = ".sha256"
PART_SUFFIX = ".zip"
# A prefix is at most a whole key: 64 hex digits, or 256 bits.
LIST_RE = re.compile(rf"{LISTS_DIR}/([0-9a-f]{{1,256}})\{LIST_SUFFIX}")
PART_RE = re.compile(rf"{PARTS_DIR}/([0-9a-f]{{1,256}})\{PART_SUFFIX}")
_LINE_RE = re.compile(r"^([0-9a-f]{64})  (.+)$")


def path_key(path: str) -> str:
    """A file's key: the SHA-256, lowercase hex, of its path's UTF-8 bytes."""
    return hashlib.sha256(path.encode("utf-8")).hexdigest()


def _hex_digit(key: str, depth: int) -> str:
    return key[depth]


def _bit(key: str, depth: int) -> str:
    """Bit `depth` (from the most significant) of a hex key."""
    return "1" if int(key[depth >> 2], 16) & (8 >> (depth & 3)) else "0"


def _hex_prefix(key: str, n: int) -> str:
    return key[:n]


def _bit_prefix(key: str, n: int) -> str:
    """The first `n` bits of a hex key, as '0' and '1' (at most its 256)."""
    n = min(n, len(key) * 4)
    if n <= 0:
        return ""
    digits = -(-n // 4)
    return format(int(key[:digits], 16), f"0{digits * 4}b")[:n]


@dataclass(frozen=True)
class TreeRule:
    """How a format's tree splits: a node holding more than `leaf_files` files has a child for
    each next digit of its files' keys, written in `digits` (`digit_at` reads a hex key's digit
    at a depth, `prefix_of` its first n digits).

    Format v3 splits by hex digits (a node's files spread over up to 16 children), so how full a
    leaf is cycles between a sixteenth of the bound and the bound as a site grows, and with it
    what a release rewrites of the download parts. Format v4 splits by bits: a node splits into
    two halves, so a leaf holds between about half the bound and the bound at any size, and the
    bound is smaller (docs/formats/v4.md, 3)."""

    leaf_files: int
    digits: str
    digit_word: str
    digit_at: Callable[[str, int], str]
    prefix_of: Callable[[str, int], str]
    doc: str  # where the format says so, for failures

    def build(self, paths: Iterable[str]) -> "Tree":
        return build_tree(paths, self.leaf_files, self.digit_at)

    @property
    def name(self) -> str:
        """The rule in words, as the verifier's memory of a tree's lists records what they were
        checked under (memory/list_memory.py)."""
        return f"{self.digit_word}s, {self.leaf_files} files a leaf"

    def key(self, path: str) -> str:
        """A path's whole key in this rule's digits (64 hex digits, or 256 bits)."""
        return self.prefix_of(path_key(path), 256)


HEX_TREE = TreeRule(64, "0123456789abcdef", "hex digit", _hex_digit, _hex_prefix, "docs/formats/v3.md, 5")
BIT_TREE = TreeRule(16, "01", "bit", _bit, _bit_prefix, "docs/formats/v4.md, 3")


def tree_rule(site_format: int) -> TreeRule:
    """The tree a v3 site (or any other format's tool asking) splits by, or a v4 site's."""
    return BIT_TREE if site_format >= 4 else HEX_TREE


def list_path(prefix: str) -> str:
    """The list of node `prefix`: SHA256SUMS for the root, else sums/<prefix>.sha256."""
    return SUMS_PATH if not prefix else f"{LISTS_DIR}/{prefix}{LIST_SUFFIX}"


def part_path(prefix: str) -> str:
    """The download part of leaf `prefix`."""
    return f"{PARTS_DIR}/{prefix}{PART_SUFFIX}"


def is_tree_file(path: str) -> bool:
    """A file the tree itself places (a list, a part, the root and its signature), which no
    leaf lists: every other file of a v3 site is in exactly one leaf."""
    return path in (SUMS_PATH, SUMS_SIG_PATH) or path.startswith((f"{LISTS_DIR}/", f"{PARTS_DIR}/"))


@dataclass(frozen=True)
class Tree:
    """A tree's shape: each leaf's files in path-byte order, each inner node's children (the
    root's prefix is empty) in digit order."""

    leaves: dict[str, list[str]]
    inner: dict[str, list[str]]

    def lists_bottom_up(self) -> list[str]:
        """The inner nodes, deepest first: the order in which each list's children exist before it."""
        return sorted(self.inner, key=lambda p: (-len(p), p))


def build_tree(
    paths: Iterable[str], leaf_files: int = LEAF_FILES, digit_at: Callable[[str, int], str] = _hex_digit
) -> Tree:
    """The tree of a set of paths (docs/formats/v3.md, 5): the root always has children; another
    node is a leaf when it holds at most `leaf_files` files (a TreeRule's bound in a checksum
    tree; the generator's sitemap parts are cut by the same rule), else it has a child for each
    digit some of its keys continue with (`digit_at`: a hex digit, or a v4 tree's bit). Sorted
    by their hex keys, the files are in the order of their bits too."""
    keyed = sorted((path_key(p), p) for p in paths)
    leaves: dict[str, list[str]] = {}
    inner: dict[str, list[str]] = {}
    # Sorted by key, the files of a node are a run of `keyed`: (prefix, start, end) to visit.
    todo = [("", 0, len(keyed))]
    while todo:
        prefix, lo, hi = todo.pop()
        if prefix and hi - lo <= leaf_files:
            leaves[prefix] = sorted((p for _, p in keyed[lo:hi]), key=lambda p: p.encode())
            continue
        depth, children, i = len(prefix), [], lo
        while i < hi:
            # The node's keys are sorted, so its files with this digit are a run: found by
            # bisection, a node costs a few probes and not a look at each of its files.
            digit = digit_at(keyed[i][0], depth)
            j = bisect.bisect_right(keyed, digit, i, hi, key=lambda r: digit_at(r[0], depth))
            children.append(prefix + digit)
            todo.append((prefix + digit, i, j))
            i = j
        inner[prefix] = children
    return Tree(leaves, inner)


def sums_text(rows: Iterable[tuple[str, str]]) -> bytes:
    """A checksum list: `<sha256>  <path>` lines for (path, sha256) rows, sorted by path bytes."""
    return "".join(f"{sha}  {p}\n" for p, sha in sorted(rows, key=lambda r: r[0].encode())).encode()


def leaf_list(tree: Tree, prefix: str, digests: Mapping[str, str]) -> bytes:
    """The list of leaf `prefix`: a line for each of its files."""
    return sums_text((p, digests[p]) for p in tree.leaves[prefix])


def inner_list(tree: Tree, prefix: str, digests: Mapping[str, str], parts: bool) -> bytes:
    """The list of inner node `prefix` (the root's is SHA256SUMS): each child's list and, with
    `parts`, each leaf child's download part."""
    rows = []
    for child in tree.inner[prefix]:
        rows.append((list_path(child), digests[list_path(child)]))
        if parts and child in tree.leaves:
            rows.append((part_path(child), digests[part_path(child)]))
    return sums_text(rows)


def read_lists(root: bytes, read: Callable[[str], bytes | None]) -> tuple[dict[str, str], list[str]]:
    """Every (path, sha256) row of a site's checksum lists: SHA256SUMS's (`root`), and, for each
    list of sums/ a list names, that list's, read with `read` (None: unreadable) and taken only
    when it has the SHA-256 its parent gives. A v1 or v2 SHA256SUMS names no list: its own rows.
    Returns the rows and the problems met, each naming the list and its line; the shape of the
    tree is not checked here (the verifier does)."""
    rows: dict[str, str] = {}
    problems: list[str] = []
    todo = [(SUMS_PATH, root)]
    while todo:
        name, data = todo.pop()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{name}: not valid UTF-8")
            continue
        last = b""
        for n, line in enumerate(text.splitlines(), 1):
            m = _LINE_RE.fullmatch(line)
            if m is None:
                problems.append(f"{name}:{n}: expected `<sha256>  <path>`, found {line[:80]!r}")
                continue
            sha, path = m.group(1), m.group(2)
            if path.encode() <= last:
                problems.append(f"{name}:{n}: lines not sorted by path bytes (or a path listed twice)")
            last = path.encode()
            if path in rows or path in (SUMS_PATH, SUMS_SIG_PATH):
                problems.append(f"{name}:{n}: {path!r} listed twice")
                continue
            rows[path] = sha
            if LIST_RE.fullmatch(path):
                child = read(path)
                if child is None:
                    problems.append(f"{path}: listed in {name} (line {n}) but cannot be read")
                elif hashlib.sha256(child).hexdigest() != sha:
                    problems.append(f"{path}: not the SHA-256 {name} gives it (line {n})")
                else:
                    todo.append((path, child))
        if text and not text.endswith("\n"):
            problems.append(f"{name}: last line does not end with a newline")
    return rows, problems
