"""A v3 or v4 site's checksum lists (docs/formats/v3.md, 5; v4.md, 3): SHA256SUMS signed, every
list the tree implies read and checked (its lines, their order, each file in the leaf its key
names, once), no other file under sums/, and every file of the site against its line.

The lists are read from the root down, each only where its parent names it; the tree's shape is
then held to the rule that makes it a function of the paths (a leaf holds at most the format's
bound of files, an inner node more; a v3 node's children named by hex digits, a v4 node's by
bits), so the lists read are exactly the ones the build would write for these files.

Verifying from the release verified last (memory/list_memory.py), a list its parent names with
the SHA-256 of a list that passed then, and whose file has the length it had, is not read: it
and every list below it are taken as remembered, with what their check found (their rows, each
leaf's files, the checks counted). Before any file is held to its line, each list taken so must
have the SHA-256 its parent names (hashed once, or known); if one does not, the tree is read
again from the site, so that it fails as it fails from nothing.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from generator.verifier.core.checksum_tree import (
    LIST_RE,
    LISTS_DIR,
    PART_RE,
    PARTS_DIR,
    TreeRule,
    is_tree_file,
    list_path,
    part_path,
    path_key,
)
from generator.verifier.core.folder import SUMS_PATH, Site
from generator.verifier.memory.list_memory import ListMemory, ListRecord
from generator.verifier.site.release import Listing, check_files, parse_sums

# The download parts' rules are format v3's in both formats (a v4 tree only splits otherwise).
_PARTS_DOC = "docs/formats/v3.md, 6"


@dataclass
class _Tree:
    """The lists as read: every row of every list, where each was read, the leaves and parts."""

    rule: TreeRule
    listed: dict[str, str] = field(default_factory=dict)  # every path any list names -> its SHA-256
    where: dict[str, str] = field(default_factory=dict)  # path -> "<list> line <n>", for lists read
    leaves: dict[str, list[str]] = field(default_factory=dict)
    inner: dict[str, list[str]] = field(default_factory=dict)
    parts: set[str] = field(default_factory=set)  # prefixes whose part a list names
    memory: ListMemory | None = None  # the lists of the release verified last
    record: ListRecord | None = None  # the lists of this run, for the next (when it is remembered)
    sizes: dict[str, int] = field(default_factory=dict)  # node -> files below it (_shape)
    # The lists taken from the memory: each must be found in the site as remembered. An inner
    # list's bytes are kept to say on which line it names a file that fails.
    taken: set[str] = field(default_factory=set)
    kept_inner: dict[str, memoryview] = field(default_factory=dict)
    doubled: set[str] = field(default_factory=set)  # leaves naming a path another list named first


def check_sums_tree(
    s: Site, key: bytes, verifier: str, rule: TreeRule, memory: ListMemory | None = None, remember: bool = False
) -> tuple[Listing, ListRecord | None] | None:
    """A v3 or v4 site's SHA256SUMS and its tree of lists (split by `rule`, its format's), a list
    `memory` remembers taken from there; what they list and, if `remember`, the lists as met
    (for the memory, if the run passes); None if SHA256SUMS cannot be read."""
    data = s.read(SUMS_PATH, "checksum list")
    if data is None:
        return None
    signed = s.signed(SUMS_PATH, data, key, "checksum list")
    report = s.report
    mark = (len(report.failures), report.checks, len(report.notes))
    t = _walk(s, data, rule, memory, remember)
    if t.taken and not _as_remembered(s, t):
        # A list taken from the memory is not in the site as remembered (its parent names bytes
        # it does not have): the tree is read again from the site, and fails as from nothing.
        del report.failures[mark[0] :], report.notes[mark[2] :]
        report.checks = mark[1]
        if t.record is not None:
            t.record.close()
        t = _walk(s, data, rule, None, remember)
    matched = check_files(s, verifier, t.listed, lambda rel: _named_in(t, rel), _unlisted(rule.doc))
    return Listing(t.listed, signed, matched, t.leaves, frozenset(t.doubled)), t.record


def _as_remembered(s: Site, t: _Tree) -> bool:
    """Whether every list taken from the memory is in the site with the SHA-256 its parent names:
    known (a file the mirror or the build hashed), or hashed now, once (check_files takes it)."""
    for rel in sorted(t.taken):
        sha = s.known_sha256(rel)
        if sha is None:
            try:
                sha = s.hashed_now[rel] = s.hash_file(rel)
            except OSError:
                return False
        if sha != t.listed.get(rel):
            return False
    return True


def _walk(s: Site, data: bytes, rule: TreeRule, memory: ListMemory | None, remember: bool) -> _Tree:
    """Every list from SHA256SUMS (`data`) down, read or taken from `memory`, and the tree's shape."""
    t = _Tree(rule, memory=memory, record=ListRecord() if remember else None)
    # A list to read, or a subtree to take from the memory, met in the same order either way:
    # what this run remembers does not depend on what the last one remembered.
    todo: list[tuple[str, bytes | range]] = [("", data)]
    while todo:
        prefix, body = todo.pop()
        if isinstance(body, range):
            _take(s, t, body)
            continue
        rows = parse_sums(s.report, list_path(prefix), body)
        if rows is None:
            continue
        inner = not prefix or any(path.startswith(f"{LISTS_DIR}/") for _, _, path in rows)
        if t.record is not None:
            t.record.read(prefix, inner, body)
        if inner:
            _inner(s, t, prefix, rows, todo)
        else:
            _leaf(s, t, prefix, rows)
    _shape(s, t)
    return t


def _named_in(t: _Tree, rel: str) -> str:
    """Which list names `rel`, and on which line, for a failure: where it was read, or for a row
    taken from the memory, its leaf's list (a file) or its parent's (a list or a part)."""
    where = t.where.get(rel)
    if where is not None:
        return where
    m = LIST_RE.fullmatch(rel) or PART_RE.fullmatch(rel)
    if m is not None:
        parent = m.group(1)[:-1]
        lines = str(t.kept_inner.get(parent, memoryview(b"")), "utf-8").split("\n")
        n = next((n for n, line in enumerate(lines, start=1) if line.endswith(f"  {rel}")), None)
        return f"{list_path(parent)} line {n}" if n is not None else list_path(parent)
    key = path_key(rel)
    for n in range(len(key) * 4 + 1):
        files = t.leaves.get(p := t.rule.prefix_of(key, n))
        if files is not None and rel in files:
            return f"{list_path(p)} line {files.index(rel) + 1}"
    return SUMS_PATH


def _take(s: Site, t: _Tree, span: range) -> None:
    """A subtree of lists as the memory holds it: their rows, each leaf's files and each inner
    node's children and parts, and the checks their reading counted, without reading them. A
    leaf naming a path a list read in this run names too is checked as read (the duplicate is
    then reported as from nothing)."""
    assert t.memory is not None
    if t.record is not None:
        t.record.taken(t.memory, span)
    listed = t.listed
    for kept in t.memory.lists(span):
        t.taken.add(list_path(kept.prefix))
        rows = kept.rows()
        if not kept.inner:
            paths = [path for _, path in rows]
            if listed.keys().isdisjoint(paths):
                listed.update(zip(paths, (sha for sha, _ in rows), strict=True))
                t.leaves[kept.prefix] = paths
                s.report.checks += len(rows) + 1  # a check a file, and the leaf's bound (_leaf)
            else:
                _leaf(s, t, kept.prefix, parse_sums(s.report, list_path(kept.prefix), bytes(kept.body)) or [])
            continue
        t.kept_inner[kept.prefix] = kept.body
        children = []
        for sha, path in rows:
            listed[path] = sha
            if m := LIST_RE.fullmatch(path):
                children.append(m.group(1))
            elif m := PART_RE.fullmatch(path):
                t.parts.add(m.group(1))
        t.inner[kept.prefix] = children


def _unlisted(doc: str) -> Callable[[str], tuple[str, str]]:
    def why(rel: str) -> tuple[str, str]:
        if rel.startswith(f"{LISTS_DIR}/"):
            return f"a list the tree does not imply ({doc})", f"only the lists {SUMS_PATH} leads to"
        if rel.startswith(f"{PARTS_DIR}/"):
            return (
                f"a download part the tree does not imply ({doc}; {_PARTS_DOC})",
                "only the parts of the tree's leaves",
            )
        return "file is not listed in any checksum list", f"every file in the leaf list its key names ({doc})"

    return why


def _add(s: Site, t: _Tree, rel: str, n: int, sha: str, path: str) -> bool:
    """Record a row of list `rel`; False (and a failure) if another list named the path already."""
    if path in t.listed:
        s.report.check(
            False, rel, f"a path listed twice (also in {_named_in(t, path)})", "each path once", path, f"line {n}"
        )
        return False
    t.listed[path], t.where[path] = sha, f"{rel} line {n}"
    return True


def _inner(
    s: Site, t: _Tree, prefix: str, rows: list[tuple[int, str, str]], todo: list[tuple[str, bytes | range]]
) -> None:
    """An inner node's list: a line for each child's list and each leaf child's part, nothing else."""
    rel, rule = list_path(prefix), t.rule
    children = []
    for n, sha, path in rows:
        m = LIST_RE.fullmatch(path) or PART_RE.fullmatch(path)
        if (
            m is None
            or len(m.group(1)) != len(prefix) + 1
            or not m.group(1).startswith(prefix)
            or m.group(1)[-1] not in rule.digits
        ):
            word = rule.digit_word
            s.report.check(
                False,
                rel,
                f"a line that names neither the list nor the part of a child of this node ({rule.doc})",
                f"{LISTS_DIR}/{prefix}<{word}>.sha256 or {PARTS_DIR}/{prefix}<{word}>.zip",
                path,
                f"line {n}",
            )
            continue
        if not _add(s, t, rel, n, sha, path):
            continue
        child = m.group(1)
        if path.startswith(f"{PARTS_DIR}/"):
            t.parts.add(child)
            continue
        children.append(child)
        span = t.memory.subtree(child, sha) if t.memory is not None else None
        size = s.file_size(path)  # a missing list is reported with every missing file
        if span is not None and t.memory is not None and size == t.memory.length(span.start):
            todo.append((child, span))  # the list that passed in the release verified last, and its subtree
        elif size is not None:
            body = s.read(path, "checksum list")
            if body is not None:
                todo.append((child, body))
    if not children:
        s.report.check(
            False, rel, f"an inner list without a child's list ({rule.doc})", "a line for each child", "none"
        )
    t.inner[prefix] = children


def _leaf(s: Site, t: _Tree, prefix: str, rows: list[tuple[int, str, str]]) -> None:
    """A leaf's list: files whose keys start with its prefix, at least one, at most the rule's bound."""
    rel, rule = list_path(prefix), t.rule
    files = []
    for n, sha, path in rows:
        if is_tree_file(path):
            s.report.check(
                False,
                rel,
                f"a leaf's list names a list or a part, which the inner lists place ({rule.doc})",
                "a file",
                path,
            )
            continue
        key = path_key(path)
        if rule.prefix_of(key, len(prefix)) == prefix:
            s.report.checks += 1  # the message is made only for a failure: this runs once a file
        else:
            s.report.check(
                False,
                rel,
                f"a file in the wrong leaf: its key {key} (SHA-256 of its path) begins "
                f"{rule.prefix_of(key, len(prefix))} in {rule.digit_word}s: the list of that prefix ({rule.doc})",
                f"a key starting with {prefix}",
                path,
                f"line {n}",
            )
        if _add(s, t, rel, n, sha, path):
            files.append(path)
        else:
            t.doubled.add(prefix)
    s.report.check(
        0 < len(files) <= rule.leaf_files,
        rel,
        f"a leaf holds from 1 to {rule.leaf_files} files ({rule.doc})",
        f"1 to {rule.leaf_files} files",
        f"{len(files)} files",
    )
    t.leaves[prefix] = files


def _shape(s: Site, t: _Tree) -> None:
    """Every inner node but the root holds more than the rule's bound of files (else it is a
    leaf), and every leaf has a download part or none does."""
    bound, doc = t.rule.leaf_files, t.rule.doc

    def count(p: str) -> int:
        # Each node's count once: counted afresh from every inner node, a tree of a million
        # items' files would be walked once for each level of it.
        n = t.sizes.get(p)
        if n is None:
            n = len(t.leaves[p]) if p in t.leaves else sum(count(c) for c in t.inner.get(p, ()))
            t.sizes[p] = n
        return n

    for p in sorted(t.inner):
        if p and (n := count(p)) <= bound:
            s.report.check(
                False,
                list_path(p),
                f"an inner list over {n} files: a node of at most {bound} is a leaf ({doc})",
                "a leaf's list",
                "an inner list",
            )
    for p in sorted(t.parts - set(t.leaves)):
        s.report.check(
            False,
            list_path(p[:-1]),
            f"a download part of a node that is not a leaf ({doc}; {_PARTS_DOC})",
            None,
            part_path(p),
        )
    if t.parts:
        for p in sorted(set(t.leaves) - t.parts):
            s.report.check(
                False,
                list_path(p[:-1]),
                f"no line for {part_path(p)}: every leaf has a download part, or none does ({doc}; {_PARTS_DOC})",
                part_path(p),
                "no line",
            )
