"""Re-parse an edited file from its previous syntax tree (tree-sitter incremental parsing).

Typing in an open file re-indexes it on every change. Parsing a 500-line file from scratch
costs a few milliseconds; handing tree-sitter the previous tree and the edited byte range
lets it reuse every untouched subtree, which is several times cheaper. The editor sends the
whole new text, so the edit is recovered by comparing old and new bytes (common prefix and
suffix, found with C-level slice comparisons).

`RecentTrees` keeps the last trees of a few recently edited files; each entry is taken out
while it is being used, so two threads never edit the same tree.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import tree_sitter as ts

from agentls.index.languages import LanguageSpec, parser

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


def edit_tree(tree: ts.Tree, old: bytes, new: bytes) -> None:
    """Tell `tree` (parsed from `old`) which byte range changed to become `new`."""
    start = common_prefix(old, new)
    tail = common_suffix(old, new, min(len(old), len(new)) - start)
    old_end, new_end = len(old) - tail, len(new) - tail
    tree.edit(
        start_byte=start,
        old_end_byte=old_end,
        new_end_byte=new_end,
        start_point=_point(old, start),
        old_end_point=_point(old, old_end),
        new_end_point=_point(new, new_end),
    )


class RecentTrees:
    """The last syntax tree of a few recently re-indexed files, for incremental parsing."""

    def __init__(self, keep: int = KEEP_TREES) -> None:
        self._keep = keep
        self._lock = threading.Lock()
        self._trees: OrderedDict[str, tuple[str, bytes, ts.Tree]] = OrderedDict()

    def parse(self, key: str, spec: LanguageSpec, data: bytes) -> ts.Tree:
        """Parse `data` as the new text of `key`, from its previous tree when there is one."""
        with self._lock:
            previous = self._trees.pop(key, None)
        tree: ts.Tree
        if previous is not None and previous[0] == spec.name and previous[1] != data:
            old_tree = previous[2]
            edit_tree(old_tree, previous[1], data)
            tree = parser(spec).parse(data, old_tree)
        elif previous is not None and previous[1] == data:
            tree = previous[2]
        else:
            tree = parser(spec).parse(data)
        with self._lock:
            self._trees[key] = (spec.name, data, tree)
            self._trees.move_to_end(key)
            while len(self._trees) > self._keep:
                self._trees.popitem(last=False)
        return tree

    def forget(self, key: str) -> None:
        with self._lock:
            self._trees.pop(key, None)
