"""Parse a file with tree-sitter and turn the definition-query matches into symbol rows.

The query (queries/*.scm) does the tree walk in C; Python only sees the matches, nests them
by byte range, and applies a few language-neutral rules (a function inside a class is a
method, a variable inside a function is a local and not a symbol, ALL_CAPS is a constant).
Most of the time goes to the C parser, so this module stays simple rather than clever.

Rows are plain tuples (see `Row`) so worker processes can ship them cheaply and the store
can persist them without an object model.
"""

from __future__ import annotations

from functools import cache
from itertools import compress
from operator import not_
from typing import Final

import tree_sitter as ts

from agentls.index.defs import DEF_CAPTURE, MAX_NAME_CHARS, Def, add_plain, node_text
from agentls.index.languages import (
    LanguageSpec,
    definition_query,
    parser,
    pattern_texts,
)
from agentls.index.model import SymbolKind, SyntaxProblem
from agentls.index.python_walk import collect_python
from agentls.index.toplevel import fast_query, toplevel

MAX_FILE_BYTES = 2_000_000
"""Larger files are skipped: mostly generated, and a 9 MB bundle costs ~200 MB to parse."""
TOO_LARGE = f"larger than {MAX_FILE_BYTES // 1_000_000} MB"
MINIFIED_AVG_LINE = 300
"""A file (over 20 kB) whose lines average more than this many bytes is minified/generated."""
MAX_SYNTAX_PROBLEMS = 50
_LINE_TEXT_CHARS = 200

Row = tuple[str, int, str, int, int, int, int, int, int, int, int, int, str]
"""(name, kind code, container, parent row or -1,
full range: start line, start col, end line, end col,
name range: start line, start col, end line, end col, first source line)."""

R_NAME: Final = 0
R_KIND: Final = 1
R_CONTAINER: Final = 2
R_PARENT: Final = 3
R_LINE: Final = 12

_CLASSLIKE = frozenset(
    {
        SymbolKind.CLASS,
        SymbolKind.STRUCT,
        SymbolKind.INTERFACE,
        SymbolKind.TRAIT,
        SymbolKind.IMPL,
        SymbolKind.ENUM,
    }
)
_FUNCLIKE = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CONSTRUCTOR})
_VALUES = frozenset(
    {SymbolKind.VARIABLE, SymbolKind.CONSTANT, SymbolKind.FIELD, SymbolKind.PROPERTY}
)
_QUALIFIED = frozenset({"qualified_identifier", "scope_resolution", "nested_namespace_specifier"})


def skip_reason(source: bytes) -> str | None:
    """Why a file is not worth parsing (huge or minified), or None."""
    size = len(source)
    if size > MAX_FILE_BYTES:
        return TOO_LARGE
    if size > 20_000 and size / (source.count(b"\n") + 1) > MINIFIED_AVG_LINE:
        return "minified or generated (very long lines)"
    return None


def extract_rows(spec: LanguageSpec, source: bytes) -> list[Row]:
    """All definitions in `source`, in document order, parents before children."""
    tree = parser(spec).parse(source)
    return rows_from_tree(spec, tree, source)


def rows_from_tree(spec: LanguageSpec, tree: ts.Tree, source: bytes) -> list[Row]:
    return rows_and_spans(spec, tree, source)[0]


Window = tuple[int, int, list[ts.Node]]
"""Part of a file to extract: a byte range [start, end) and the top-level nodes that
make it up (see `incremental`)."""
Span = tuple[int, int]
"""The byte range of a row's definition (its full range)."""


def rows_and_spans(
    spec: LanguageSpec, tree: ts.Tree, source: bytes, window: Window | None = None
) -> tuple[list[Row], list[Span]]:
    """The rows of `source` and the byte range of each; with `window`, only the
    definitions inside it (parents are then indexes into the returned rows)."""
    found = _collect(spec, tree, window)
    if not found:
        return [], []
    defs = sorted(found.values(), key=lambda d: (d.start, -d.end))
    conv = _Columns(source)
    rows: list[Row] = []
    spans: list[Span] = []
    stack: list[Def] = []
    for d in defs:
        while stack and stack[-1].end < d.end:
            stack.pop()
        parent = stack[-1] if stack else None
        kind = _refine(spec, d, parent)
        if kind is None:
            continue
        d.kind = kind
        container = parent.qualified if parent else ""
        if d.scope:
            container = f"{container}.{d.scope}" if container else d.scope
        d.qualified = f"{container}.{d.scope_name}" if container else d.scope_name
        d.row = len(rows)
        rn, nn = d.range_node, d.name_node
        rows.append(
            (
                d.name,
                kind.code,
                container,
                parent.row if parent else -1,
                *conv.span(rn),
                *conv.span(nn),
                conv.line_text(d.node.start_byte, d.node.start_point),
            )
        )
        spans.append((d.start, d.end))
        stack.append(d)
    return rows, spans


def _collect(spec: LanguageSpec, tree: ts.Tree, window: Window | None = None) -> dict[int, Def]:
    """Definitions keyed by name position; the earliest pattern wins a shared name. With
    `window`, those inside it.

    Python takes a hand-written walk that visits statements only (`python_walk`), three
    times faster than the query, which visits every node; the query stays its reference
    (a test checks that both agree)."""
    if spec.name == "python":
        found = collect_python(spec, tree, None if window is None else window[2])
    else:
        found = collect_by_query(spec, tree, window=window)
    if window is not None:
        start, end, _ = window
        found = {k: d for k, d in found.items() if start <= d.start and d.end <= end}
    return found


def collect_by_query(
    spec: LanguageSpec, tree: ts.Tree, *, reference: bool = False, window: Window | None = None
) -> dict[int, Def]:
    """Query matches keyed by name position; the earliest pattern wins a shared name.

    Patterns rooted at the program are matched by `toplevel` instead of the query (much
    cheaper); `reference=True` runs the whole query instead (for tests). With `window`,
    the query runs over its byte range only."""
    found: dict[int, Def] = {}
    wraps: dict[tuple[int, int], ts.Node] = {}
    plan = _pattern_plan(spec)
    query = definition_query(spec) if reference else fast_query(spec)
    if not reference:
        children = None if window is None else window[2]
        for pattern, kind, node, name_node in toplevel(spec, tree.root_node, children):
            add_plain(found, pattern, kind, node, name_node)
    cursor = ts.QueryCursor(query)
    if window is not None:
        cursor.set_byte_range(window[0], window[1])
    for pattern, caps in cursor.matches(tree.root_node):
        step = plan[pattern]
        if step is None:
            inner, outer = caps["wrapped"][0], caps["wrapper"][0]
            wraps[(inner.start_byte, inner.end_byte)] = outer
            continue
        capture, kind = step
        names = caps.get("name")
        defs = caps.get(capture)
        if not names or not defs:
            continue
        key = names[0].start_byte
        prev = found.get(key)
        if prev is not None and prev.pattern <= pattern:
            continue
        made = _match_def(pattern, kind, defs[0], names[0], caps)
        if made is not None:
            found[key] = made
    if wraps:
        _widen_to_wrappers(found, wraps)
    return found


def _match_def(
    pattern: int,
    kind: SymbolKind,
    node: ts.Node,
    name_node: ts.Node,
    caps: dict[str, list[ts.Node]],
) -> Def | None:
    """The definition one query match names (None: it has no usable name)."""
    name, scope, name_node = _name_parts(name_node)
    if not name:
        return None
    name = name[:MAX_NAME_CHARS]
    scope_name = name
    if kind is SymbolKind.IMPL:
        scope_name = name.split("<", 1)[0].strip()
        traits = caps.get("trait")
        trait = node_text(traits[0]) if traits else ""
        name = f"impl {trait} for {name}" if trait else f"impl {name}"
    scopes = caps.get("scope")
    if scopes:
        scope = node_text(scopes[0])
    start, end = node.start_byte, node.end_byte
    return Def(pattern, kind, node, node, name_node, name, scope, scope_name, start, end)


def _widen_to_wrappers(found: dict[int, Def], wraps: dict[tuple[int, int], ts.Node]) -> None:
    """A definition inside a wrapper (a decorator, an export) spans the wrapper too."""
    for d in found.values():
        while (wrapper := wraps.get((d.start, d.end))) is not None:
            d.range_node, d.start, d.end = wrapper, wrapper.start_byte, wrapper.end_byte


@cache
def _pattern_plan(spec: LanguageSpec) -> tuple[tuple[str, SymbolKind] | None, ...]:
    """Per query pattern: the name of its `@def.<kind>` capture and that kind (None: wrapper)."""
    plan: list[tuple[str, SymbolKind] | None] = []
    for i, text in enumerate(pattern_texts(spec)):
        found = DEF_CAPTURE.search(text)
        if found is None:
            if "@wrapper" not in text:
                raise ValueError(f"{spec.name} query pattern {i} has no @def.<kind> capture")
            plan.append(None)
            continue
        plan.append((f"def.{found.group(1)}", SymbolKind(found.group(1))))
    return tuple(plan)


def _name_parts(node: ts.Node) -> tuple[str, str, ts.Node]:
    """Name, written scope ("A.B" for `A::B::f`) and the node of the last name segment."""
    text = node_text(node)
    if node.type not in _QUALIFIED or "::" not in text:
        return text, "", node
    last = node
    while last.type in _QUALIFIED:
        nxt = last.child_by_field_name("name")
        if nxt is None:
            named = last.named_children
            if not named:
                break
            nxt = named[-1]
        last = nxt
    parts = [p.strip() for p in text.split("::")]
    scope = ".".join(p for p in parts[:-1] if p)
    return parts[-1], scope, last


def _refine(spec: LanguageSpec, d: Def, parent: Def | None) -> SymbolKind | None:
    """The final kind given the enclosing definition; None drops a local."""
    kind = d.kind
    pk = parent.kind if parent else None
    if kind in _VALUES and pk in _FUNCLIKE:
        return None
    if kind is SymbolKind.FUNCTION and (pk in _CLASSLIKE or d.scope):
        kind = SymbolKind.METHOD
    elif (
        kind is SymbolKind.METHOD
        and spec.toplevel_methods_are_functions
        and not d.scope
        and pk in (None, SymbolKind.MODULE)
    ):
        kind = SymbolKind.FUNCTION
    elif kind is SymbolKind.VARIABLE and pk in _CLASSLIKE:
        kind = SymbolKind.FIELD
    if kind is SymbolKind.METHOD:
        owner = d.scope.rsplit(".", 1)[-1] if d.scope else (parent.scope_name if parent else "")
        if d.name in spec.constructor_names or d.name == owner:
            kind = SymbolKind.CONSTRUCTOR
    if (
        spec.upper_constants
        and kind in (SymbolKind.VARIABLE, SymbolKind.FIELD)
        and len(d.name) > 1
        and d.name.isupper()
    ):
        kind = SymbolKind.CONSTANT
    return kind


class _Columns:
    """Byte columns → code-point columns: the identity on lines that are pure ASCII, which
    is every line of most files and most lines of the rest (a © in a licence header must
    not make every column of a 40k-definition .d.ts file cost a decode)."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.ascii = source.isascii()
        self.wide_rows = frozenset() if self.ascii else _non_ascii_rows(source)

    def span(self, node: ts.Node) -> tuple[int, int, int, int]:
        """(start line, start column, end line, end column) of `node`."""
        start, end = node.start_point, node.end_point
        if self.ascii:
            return start[0], start[1], end[0], end[1]
        return (*self.point(node.start_byte, start), *self.point(node.end_byte, end))

    def point(self, byte: int, point: ts.Point) -> tuple[int, int]:
        row, col = point
        if col == 0 or row not in self.wide_rows:
            return row, col
        start = byte - col
        return row, len(self.source[start:byte].decode("utf-8", "replace"))

    def line_text(self, byte: int, point: ts.Point) -> str:
        start = byte - point[1]
        end = self.source.find(b"\n", start)
        if end < 0:
            end = len(self.source)
        end = min(end, start + _LINE_TEXT_CHARS * 4)
        line = self.source[start:end].decode("utf-8", "replace").strip()
        return line[:_LINE_TEXT_CHARS]


def _non_ascii_rows(source: bytes) -> frozenset[int]:
    """Rows (0-based) holding a non-ASCII byte (whole-list operations: no loop per line)."""
    lines = source.split(b"\n")
    return frozenset(compress(range(len(lines)), map(not_, map(bytes.isascii, lines))))


def syntax_problems(
    spec: LanguageSpec, source: bytes, limit: int = MAX_SYNTAX_PROBLEMS
) -> list[SyntaxProblem]:
    """ERROR and MISSING nodes as problems, outermost first, in document order, capped."""
    tree = parser(spec).parse(source)
    root = tree.root_node
    if not root.has_error:
        return []
    conv = _Columns(source)
    out: list[SyntaxProblem] = []
    stack = [root]
    while stack and len(out) < limit:
        node = stack.pop()
        if node.is_missing:
            line, col = conv.point(node.start_byte, node.start_point)
            out.append(SyntaxProblem(line, col, f"syntax error: missing {node.type!r}"))
        elif node.is_error:
            line, col = conv.point(node.start_byte, node.start_point)
            out.append(SyntaxProblem(line, col, _unexpected(node)))
        else:
            stack.extend(c for c in reversed(node.children) if c.has_error or c.is_missing)
    return out


def _unexpected(node: ts.Node) -> str:
    raw = (node.text or b"")[:200].decode("utf-8", "replace")
    snippet = " ".join(raw.split())
    if not snippet:
        return "syntax error"
    if len(snippet) > 40:
        snippet = snippet[:40] + "…"
    return f"syntax error near {snippet!r}"
