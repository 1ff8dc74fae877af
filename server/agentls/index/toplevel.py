"""Top-level variables of JavaScript/TypeScript, found by looking at the program's direct
children instead of by query patterns rooted at `program`.

A pattern such as `(program (lexical_declaration ...))` keeps a match in progress for the
whole file while the query cursor walks every node below the root; in our measurements the
six such patterns cost about a third of the JavaScript query. Their matches are all direct
children of the root, so a loop over those children finds them for almost nothing.

The patterns stay in the .scm files as the specification: they are disabled in the query
the index runs (`fast_query`), and this module reads their shapes (which wrapper, which
declaration, `const` only or not, which kind) from their text, so both always agree; a test
compares the two on real code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, partial

import tree_sitter as ts

from agentls.index.defs import DEF_CAPTURE
from agentls.index.languages import (
    LanguageSpec,
    compiled_query,
    field_id,
    kind_id,
    pattern_texts,
)
from agentls.index.model import SymbolKind

_DECLARATIONS = ("lexical_declaration", "variable_declaration")
_CONTAINERS = ("statement_block", "if_statement", "else_clause", "try_statement")
"""Top-level statements whose block's variables are top-level too (see ecmascript.scm)."""
_FIRST_NODE = re.compile(r"\(program\s+\((\w+)")


@dataclass(frozen=True)
class Shape:
    """One top-level pattern: `(program [wrapper] (declaration [kind: "const"]
    (variable_declarator name: (identifier) @name) @def.<kind>))`."""

    pattern: int
    wrapper: str
    """"export_statement", "ambient_declaration" or "" (the declaration is the statement)."""
    container: str
    """"" (a direct child of the program), or the top-level statement whose block holds
    the declaration: "statement_block", "if_statement" (its consequence), "else_clause"
    (its alternative) or "try_statement" (its body)."""
    declaration: str
    const_only: bool
    kind: SymbolKind


@cache
def toplevel_shapes(spec: LanguageSpec) -> tuple[Shape, ...]:
    """The query's patterns rooted at `program`, in pattern order (empty: none)."""
    shapes = []
    for i, text in enumerate(pattern_texts(spec)):
        if not text.lstrip().startswith("(program"):
            continue
        capture = DEF_CAPTURE.search(text)
        declaration = next((d for d in _DECLARATIONS if d in text), None)
        if capture is None or declaration is None or "variable_declarator" not in text:
            raise ValueError(f"{spec.name}: unsupported top-level pattern {i}: {text!r}")
        wrapper = next((w for w in ("export_statement", "ambient_declaration") if w in text), "")
        shapes.append(
            Shape(
                i,
                wrapper,
                _container(text),
                declaration,
                'kind: "const"' in text,
                SymbolKind(capture.group(1)),
            )
        )
    return tuple(shapes)


def _container(text: str) -> str:
    first = _FIRST_NODE.match(text.lstrip())
    node = first.group(1) if first is not None else ""
    if node not in _CONTAINERS:
        return ""
    return "else_clause" if node == "if_statement" and "else_clause" in text else node


@cache
def fast_query(spec: LanguageSpec) -> ts.Query:
    """The definition query with the top-level patterns disabled (found by `toplevel`)."""
    query = compiled_query(spec)
    for shape in toplevel_shapes(spec):
        query.disable_pattern(shape.pattern)
    return query


@dataclass(frozen=True)
class _Ids:
    export_statement: int
    ambient_declaration: int
    statement_block: int
    if_statement: int
    else_clause: int
    try_statement: int
    consequence_field: int
    alternative_field: int
    body_field: int
    declarations: dict[int, str]
    declarator: int
    identifier: int
    declaration_field: int
    kind_field: int
    name_field: int


@cache
def _ids(spec: LanguageSpec) -> _Ids:
    kind, field = partial(kind_id, spec), partial(field_id, spec)
    return _Ids(
        kind("export_statement"),
        kind("ambient_declaration"),
        kind("statement_block"),
        kind("if_statement"),
        kind("else_clause"),
        kind("try_statement"),
        field("consequence"),
        field("alternative"),
        field("body"),
        {kind(d): d for d in _DECLARATIONS},
        kind("variable_declarator"),
        kind("identifier"),
        field("declaration"),
        field("kind"),
        field("name"),
    )


def toplevel(
    spec: LanguageSpec, root: ts.Node, children: list[ts.Node] | None = None
) -> list[tuple[int, SymbolKind, ts.Node, ts.Node]]:
    """(pattern, kind, declarator, name) of each top-level variable, as the top-level
    patterns would match them (the earliest matching pattern gives the kind); with
    `children`, only those of these top-level statements (an edit's window)."""
    shapes = toplevel_shapes(spec)
    if not shapes:
        return []
    ids = _ids(spec)
    out = []
    for statement in root.named_children if children is None else children:
        if not statement.is_named:
            continue
        for wrapper, container, declarations in _declarations(ids, statement):
            out.extend(_matched(ids, shapes, wrapper, container, declarations))
    return out


def _matched(
    ids: _Ids, shapes: tuple[Shape, ...], wrapper: str, container: str, declarations: list[ts.Node]
) -> list[tuple[int, SymbolKind, ts.Node, ts.Node]]:
    """The declarators of `declarations` that a top-level pattern matches (the earliest
    matching pattern gives the kind)."""
    out = []
    for declaration in declarations:
        name = ids.declarations.get(declaration.kind_id)
        if name is None:
            continue
        keyword = declaration.child_by_field_id(ids.kind_field)
        is_const = keyword is not None and keyword.type == "const"
        shape = next(
            (
                s
                for s in shapes
                if s.wrapper == wrapper
                and s.container == container
                and s.declaration == name
                and (is_const or not s.const_only)
            ),
            None,
        )
        if shape is not None:
            out.extend(_declarators(ids, shape, declaration))
    return out


def _declarations(ids: _Ids, statement: ts.Node) -> list[tuple[str, str, list[ts.Node]]]:
    """(wrapper, container, declarations) of a top-level statement as the patterns see
    them: the statement itself, or what its export/ambient wrapper or its block holds."""
    k = statement.kind_id
    if k == ids.export_statement:
        declaration = statement.child_by_field_id(ids.declaration_field)
        return [("export_statement", "", [declaration] if declaration is not None else [])]
    if k == ids.ambient_declaration:
        return [("ambient_declaration", "", statement.named_children)]
    if k == ids.statement_block:
        return [("", "statement_block", statement.named_children)]
    if k == ids.if_statement:
        found = [
            ("", "if_statement", _block(ids, statement.child_by_field_id(ids.consequence_field)))
        ]
        alternative = statement.child_by_field_id(ids.alternative_field)
        if alternative is not None and alternative.kind_id == ids.else_clause:
            inner = alternative.named_children[0] if alternative.named_child_count else None
            found.append(("", "else_clause", _block(ids, inner)))
        return found
    if k == ids.try_statement:
        return [("", "try_statement", _block(ids, statement.child_by_field_id(ids.body_field)))]
    return [("", "", [statement])]


def _block(ids: _Ids, node: ts.Node | None) -> list[ts.Node]:
    """The statements of a `statement_block` (none for anything else)."""
    if node is None or node.kind_id != ids.statement_block:
        return []
    return node.named_children


def _declarators(
    ids: _Ids, shape: Shape, declaration: ts.Node
) -> list[tuple[int, SymbolKind, ts.Node, ts.Node]]:
    out = []
    for declarator in declaration.named_children:
        if declarator.kind_id != ids.declarator:
            continue
        name = declarator.child_by_field_id(ids.name_field)
        if name is not None and name.kind_id == ids.identifier:
            out.append((shape.pattern, shape.kind, declarator, name))
    return out
