"""A v3 or v4 site's checksum lists and download parts (docs/formats/v3.md, 5 and 6; a v4 tree
splits by bits, docs/formats/v4.md, 3): the leaves' lists under sums/, each leaf's part under
download/, then the inner lists and SHA256SUMS, their root.

Every list and part is a function of the files it covers (a part's members are dated at one
fixed time, not the release's), so a release gives new bytes only to those on the paths of the
files that changed; the writer hard-links the rest from the last release. A part whose list did
not change is the last release's part, taken as it is if it is the one this builder wrote with
the deflater it runs now (generator.state.archive_cache); a new part copies compressed the
members the last release's parts hold, as v2's archive does (generator.build.site_archive).
"""

from __future__ import annotations

import functools

from generator.build.gather import SiteContext
from generator.build.site_archive import PreviousArchive, fill_zip, open_archive
from generator.build.writer import SiteWriter
from generator.core.signing_key import Signer
from generator.state.archive_cache import archive_cache_path, last_parts, parts_digest, remember_parts
from generator.verifier import (
    LIST_RE,
    PART_RE,
    Tree,
    TreeRule,
    inner_list,
    is_tree_file,
    leaf_list,
    list_path,
    part_path,
    path_key,
    tree_rule,
)

# Every member of every part is dated so (the earliest DOS time): a part that carried the
# release's time would change with every release.
PART_TIME = (1980, 1, 1, 0, 0, 0)


def write_leaves(ctx: SiteContext, w: SiteWriter) -> Tree:
    """The tree of every file written by now, each leaf's list, and its part unless program.yaml
    says `download_archive: false`. Every file of the site but the tree's must be written by now."""
    rule = tree_rule(ctx.program.format)
    tree = rule.build(p for p in w.hashes if not is_tree_file(p))
    for prefix in sorted(tree.leaves):
        w.write(list_path(prefix), leaf_list(tree, prefix, w.hashes))
    if ctx.program.download_archive:
        _write_parts(ctx, w, tree, rule)
    return tree


def write_root(ctx: SiteContext, w: SiteWriter, tree: Tree) -> None:
    """The inner lists, deepest first, then SHA256SUMS and its signature."""
    parts = ctx.program.download_archive
    for prefix in tree.lists_bottom_up():
        if prefix:
            w.write(list_path(prefix), inner_list(tree, prefix, w.hashes, parts))
    signer: Signer = ctx.signer
    w.finish(signer, inner_list(tree, "", w.hashes, parts))


def _write_parts(ctx: SiteContext, w: SiteWriter, tree: Tree, rule: TreeRule) -> None:
    record = archive_cache_path(ctx.paths.private)
    last = _LastParts.of(w, last_parts(record), rule)
    for prefix, files in sorted(tree.leaves.items()):
        if last is not None and last.keep(prefix):
            continue
        members = sorted([*files, list_path(prefix)], key=lambda p: p.encode())
        fill = functools.partial(
            fill_zip,
            w=w,
            members=members,
            when=PART_TIME,
            inline={},
            previous_for=last.archive_for if last is not None else lambda name: None,
        )
        try:
            w.write_file(part_path(prefix), fill)
        finally:
            if last is not None:
                last.close()  # a part's sources are its leaf's, nearby: a handful open at a time
    remember_parts(record, parts_digest((part_path(p), w.hashes[part_path(p)]) for p in tree.leaves))


class _LastParts:
    """The last release's parts, known to be the bytes this builder wrote with this deflater."""

    def __init__(self, w: SiteWriter, parts: dict[str, str], rule: TreeRule) -> None:
        self.w, self.rule = w, rule
        self.parts = parts  # leaf prefix -> the SHA-256 its part is listed with
        self.longest = max(map(len, parts), default=0)
        self.opened: dict[str, PreviousArchive | None] = {}

    @classmethod
    def of(cls, w: SiteWriter, remembered: str | None, rule: TreeRule) -> _LastParts | None:
        """The last release's parts if the cache's record names them; else None (all are made anew)."""
        if remembered is None or w.previous is None or not w.previous.reuse:
            return None
        rows = {p: sha for p, sha in w.previous.sums.items() if PART_RE.fullmatch(p)}
        if not rows or parts_digest(rows.items()) != remembered:
            return None
        return cls(w, {p[len("download/") : -len(".zip")]: sha for p, sha in rows.items()}, rule)

    def keep(self, prefix: str) -> bool:
        """Take the last release's part of leaf `prefix` as it is, if its list did not change."""
        previous, lst = self.w.previous, list_path(prefix)
        sha = self.parts.get(prefix)
        return (
            sha is not None
            and previous is not None
            and previous.digest(lst) == self.w.hashes[lst]
            and self.w.link_previous(part_path(prefix), sha)
        )

    def archive_for(self, name: str) -> PreviousArchive | None:
        """The last part that held member `name`: its leaf's (a list is its own leaf's member)."""
        m = LIST_RE.fullmatch(name)
        if m is not None:
            prefix: str | None = m.group(1) if m.group(1) in self.parts else None
        else:
            key = self.rule.prefix_of(path_key(name), self.longest)
            prefix = next((key[:n] for n in range(1, self.longest + 1) if key[:n] in self.parts), None)
        if prefix is None:
            return None
        if prefix not in self.opened:
            self.opened[prefix] = self._open(prefix)
        return self.opened[prefix]

    def _open(self, prefix: str) -> PreviousArchive | None:
        previous = self.w.previous
        assert previous is not None  # `of` made this only with a last release
        return open_archive(
            previous.file(part_path(prefix)),
            self.parts[prefix],
            lambda zf: {i.filename: d for i in zf.infolist() if (d := previous.digest(i.filename)) is not None},
        )

    def close(self) -> None:
        for archive in self.opened.values():
            if archive is not None:
                archive.f.close()
        self.opened.clear()
