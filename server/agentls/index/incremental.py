"""Re-extract only the definitions an edit touched (typing in a big file).

Re-parsing from the previous tree is cheap (tree-sitter reuses every untouched subtree),
but turning the whole tree into rows again costs ~3 ms on a 3k-line file, on every
keystroke. An edit changes the text between two byte offsets; the top-level statements
that overlap it (or whose structure tree-sitter reports as changed) are the *window*. The
previous rows before the window are kept as they are, the rows after it are shifted by the
lines the edit added or removed, and only the window is extracted again.

Rows hold positions as lines and columns, and each row's first source line: both stay
valid only when no kept row shares a line with the edit. Whenever that, or any other
assumption (a definition spanning the window's edge), does not hold, `splice` returns None
and the caller extracts the whole file, so the result is always what a full extraction
gives (a test compares them after random edits in every language).
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

from agentls.index.extract import Row, Span, Window, rows_and_spans
from agentls.index.languages import LanguageSpec

_LINE = 4  # a row's start line (see extract.Row)


@dataclass(frozen=True)
class Extraction:
    """A file's rows and the byte range of each (to tell which rows an edit touches)."""

    rows: list[Row]
    spans: list[Span]


@dataclass(frozen=True)
class Edit:
    """One contiguous change: bytes [start, old_end) of the old text became bytes
    [start, new_end) of the new one."""

    start: int
    old_end: int
    new_end: int


def extract(spec: LanguageSpec, tree: ts.Tree, source: bytes) -> Extraction:
    """The whole file's rows (a first parse, or when `splice` cannot be used)."""
    return Extraction(*rows_and_spans(spec, tree, source))


def window_of(tree: ts.Tree, changed: list[ts.Range], edit: Edit) -> Window:
    """The top-level statements (of the new tree) that the edit or a structural change
    touches, and the byte range they cover together with the edit."""
    lo, hi = edit.start, edit.new_end
    for r in changed:
        lo, hi = min(lo, r.start_byte), max(hi, r.end_byte)
    touched = [c for c in tree.root_node.children if c.end_byte >= lo and c.start_byte <= hi]
    if touched:
        lo, hi = min(lo, touched[0].start_byte), max(hi, touched[-1].end_byte)
    return lo, hi, [c for c in touched if c.is_named]


def splice(
    spec: LanguageSpec,
    tree: ts.Tree,
    changed: list[ts.Range],
    old: bytes,
    new: bytes,
    edit: Edit,
    previous: Extraction,
) -> Extraction | None:
    """`previous` (the rows of `old`) updated for `new`, extracting only the edit's
    window from `tree` (the new tree); None when the whole file must be extracted."""
    window = window_of(tree, changed, edit)
    lo, hi, _ = window
    delta = edit.new_end - edit.old_end
    kept = _partition(previous.spans, lo, hi - delta)
    if kept is None:
        return None
    before, after = kept
    rows, spans = previous.rows, previous.spans
    if before and int(rows[before - 1][_LINE]) >= new.count(b"\n", 0, edit.start):
        return None  # a kept row starts on the edit's line: its line text may differ
    if after < len(rows) and new.find(b"\n", edit.new_end, spans[after][0] + delta) < 0:
        return None  # a row after the edit starts on its last line: its columns moved
    inner, inner_spans = rows_and_spans(spec, tree, new, window)
    lines = new.count(b"\n", edit.start, edit.new_end) - old.count(b"\n", edit.start, edit.old_end)
    first_after = before + len(inner)
    moved = _shifted(rows[after:], after, first_after, lines)
    if moved is None:
        return None
    return Extraction(
        [*rows[:before], *_reparented(inner, before), *moved],
        [
            *spans[:before],
            *inner_spans,
            *((s + delta, e + delta) for s, e in spans[after:]),
        ],
    )


def _partition(spans: list[Span], lo: int, hi_old: int) -> tuple[int, int] | None:
    """(rows before the window, first row after it) in the old text, where the window
    is [lo, hi_old); None when a row straddles one of its edges."""
    before, after = 0, len(spans)
    for i, (start, end) in enumerate(spans):
        if end <= lo:
            if i != before:
                return None  # out of order: a row inside the window ends before it
            before = i + 1
        elif start >= hi_old:
            after = i
            break  # rows are in start order: the rest are after it too
        elif start < lo or end > hi_old:
            return None
    return before, after


def _reparented(rows: list[Row], offset: int) -> list[Row]:
    """Window rows, whose parents are indexes into the window, as rows of the file."""
    if not offset:
        return rows
    out: list[Row] = []
    for row in rows:
        name, kind, container, parent, *rest = row
        if parent >= 0:
            row = (name, kind, container, parent + offset, *rest)  # type: ignore[assignment]
        out.append(row)
    return out


def _shifted(rows: list[Row], old_first: int, new_first: int, lines: int) -> list[Row] | None:
    """Rows after the window, `lines` lower, with parents renumbered (None: a parent
    lies before them, which a well-nested file never has)."""
    out: list[Row] = []
    for name, kind, container, parent, sl, sc, el, ec, nsl, nsc, nel, nec, text in rows:
        if parent >= 0:
            if parent < old_first:
                return None
            parent += new_first - old_first
        out.append(
            (
                name,
                kind,
                container,
                parent,
                sl + lines,
                sc,
                el + lines,
                ec,
                nsl + lines,
                nsc,
                nel + lines,
                nec,
                text,
            )
        )
    return out
