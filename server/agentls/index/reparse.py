"""Re-parse an edited file from its previous syntax tree (tree-sitter incremental parsing),
and re-extract only the definitions the edit touched (`incremental`).

Typing in an open file re-indexes it on every change. Parsing a 500-line file from scratch
costs a few milliseconds; handing tree-sitter the previous tree and the edited byte range
lets it reuse every untouched subtree, which is several times cheaper. The editor sends the
whole new text, so the edit is recovered by comparing old and new bytes (common prefix and
suffix, found with C-level slice comparisons).

`RecentTrees` keeps the last trees and rows of a few recently edited files; each entry is taken out
while it is being used, so two threads never edit the same tree.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from typing import NamedTuple

import tree_sitter as ts

from agentls.index.extract import Row
from agentls.index.incremental import Edit, Extraction, extract, splice
from agentls.index.languages import LanguageSpec, parser

log = logging.getLogger(__name__)

KEEP_TREES = 16
"""Files whose last tree is kept: the ones being edited right now, not the workspace."""


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix, by binary search over slice comparisons."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:  # invariant: a[:lo] == b[:lo] and a[:hi] != b[:hi]
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the longest common suffix, at most `limit` bytes."""
    lo, hi = 0, min(len(a), len(b), limit)
    if hi and a[len(a) - hi :] == b[len(b) - hi :]:
        return hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid : len(a) - lo] == b[len(b) - mid : len(b) - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _point(data: bytes, offset: int) -> tuple[int, int]:
    """(row, byte column) of a byte offset, as tree-sitter counts them."""
    row = data.count(b"\n", 0, offset)
    return row, offset - (data.rfind(b"\n", 0, offset) + 1)


def edit_of(old: bytes, new: bytes) -> Edit:
    """The one contiguous change that turns `old` into `new`."""
    start = common_prefix(old, new)
    tail = common_suffix(old, new, min(len(old), len(new)) - start)
    return Edit(start, len(old) - tail, len(new) - tail)


def edit_tree(tree: ts.Tree, old: bytes, new: bytes) -> Edit:
    """Tell `tree` (parsed from `old`) which byte range changed to become `new`."""
    edit = edit_of(old, new)
    tree.edit(
        start_byte=edit.start,
        old_end_byte=edit.old_end,
        new_end_byte=edit.new_end,
        start_point=_point(old, edit.start),
        old_end_point=_point(old, edit.old_end),
        new_end_point=_point(new, edit.new_end),
    )
    return edit


class _Entry(NamedTuple):
    language: str
    data: bytes
    tree: ts.Tree
    extraction: Extraction


class RecentTrees:
    """The last syntax tree and rows of a few recently re-indexed files, for incremental
    parsing and extraction."""

    def __init__(self, keep: int = KEEP_TREES) -> None:
        self._keep = keep
        self._lock = threading.Lock()
        self._trees: OrderedDict[str, _Entry] = OrderedDict()

    def rows(self, key: str, spec: LanguageSpec, data: bytes) -> list[Row]:
        """The rows of `data` as the new text of `key`: re-parsed from its previous tree
        and re-extracted only where the edit changed it, when there is one."""
        with self._lock:
            previous = self._trees.pop(key, None)
        if previous is not None and previous.language == spec.name and previous.data == data:
            entry = previous
        elif previous is not None and previous.language == spec.name:
            entry = self._reparse(spec, previous, data)
        else:
            tree = parser(spec).parse(data)
            entry = _Entry(spec.name, data, tree, extract(spec, tree, data))
        with self._lock:
            self._trees[key] = entry
            self._trees.move_to_end(key)
            while len(self._trees) > self._keep:
                self._trees.popitem(last=False)
        return entry.extraction.rows

    @staticmethod
    def _reparse(spec: LanguageSpec, previous: _Entry, data: bytes) -> _Entry:
        old_tree = previous.tree
        edit = edit_tree(old_tree, previous.data, data)
        tree = parser(spec).parse(data, old_tree)
        try:
            changed = old_tree.changed_ranges(tree)
            spliced = splice(spec, tree, changed, previous.data, data, edit, previous.extraction)
        except Exception:  # a splicing bug must cost time, never symbols
            log.exception("incremental extraction failed; extracting the whole file")
            spliced = None
        extraction = spliced if spliced is not None else extract(spec, tree, data)
        return _Entry(spec.name, data, tree, extraction)

    def __contains__(self, key: object) -> bool:
        return key in self._trees

    def forget(self, key: str) -> None:
        with self._lock:
            self._trees.pop(key, None)
