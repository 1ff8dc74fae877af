"""Python definitions by a walk over statements, equivalent to `queries/python.scm`.

A tree-sitter query visits every node of the tree, and for Python that costs more than half
as much as parsing. Definitions only ever sit at statement level, so this walk visits
module, class and function bodies and compound statements, and never looks inside an
expression: about a third of the query's time. The query remains the specification; a test
checks that both find the same definitions. Pattern numbers follow the query's order, so
the "earliest pattern wins" rule means the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, partial

import tree_sitter as ts

from agentls.index.defs import Def, add_plain
from agentls.index.languages import LanguageSpec, field_id, kind_id
from agentls.index.model import SymbolKind

(
    _CLASS,
    _FUNCTION,
    _MODULE_VAR,
    _IF_VAR,
    _TRY_VAR,
    _FIELD,
    _ELIF_VAR,
    _ELSE_VAR,
    _EXCEPT_VAR,
    _TRY_ELSE_VAR,
    _FINALLY_VAR,
    _MODULE_TUPLE,
    _FIELD_TUPLE,
) = range(13)
"""Pattern numbers, in the order of python.scm."""
_CONTAINERS = (
    "block",
    "if_statement",
    "elif_clause",
    "else_clause",
    "for_statement",
    "while_statement",
    "try_statement",
    "except_clause",
    "except_group_clause",
    "finally_clause",
    "with_statement",
    "match_statement",
    "case_clause",
    "ERROR",
)
"""Statements and clauses that can hold a definition (never inside an expression)."""


@dataclass(frozen=True)
class _Ids:
    """Node kind and field ids of the grammar (ints compare faster than type names)."""

    containers: frozenset[int]
    cls: int
    function: int
    decorated: int
    expression_statement: int
    assignment: int
    identifier: int
    block: int
    if_statement: int
    try_statement: int
    elif_clause: int
    else_clause: int
    except_clause: int
    finally_clause: int
    tuples: frozenset[int]
    name: int
    body: int
    left: int
    definition: int
    consequence: int
    alternative: int


@cache
def _ids(spec: LanguageSpec) -> _Ids:
    kind, field = partial(kind_id, spec), partial(field_id, spec)
    return _Ids(
        frozenset(kind(n) for n in _CONTAINERS) - {-1},
        kind("class_definition"),
        kind("function_definition"),
        kind("decorated_definition"),
        kind("expression_statement"),
        kind("assignment"),
        kind("identifier"),
        kind("block"),
        kind("if_statement"),
        kind("try_statement"),
        kind("elif_clause"),
        kind("else_clause"),
        kind("except_clause"),
        kind("finally_clause"),
        frozenset({kind("pattern_list"), kind("tuple_pattern")}),
        field("name"),
        field("body"),
        field("left"),
        field("definition"),
        field("consequence"),
        field("alternative"),
    )


class _Walk:
    def __init__(self, ids: _Ids) -> None:
        self.ids = ids
        self.found: dict[int, Def] = {}

    def assignments(
        self,
        block: ts.Node | list[ts.Node],
        pattern: int,
        kind: SymbolKind,
        tuples: int | None = None,
    ) -> None:
        """`x = ...` statements directly in `block` (or among these statements; the
        assignment is the definition), and with `tuples` also each name of `a, b = ...`
        (found by that pattern)."""
        ids = self.ids
        statements = block if isinstance(block, list) else block.named_children
        for statement in statements:
            if statement.kind_id != ids.expression_statement or not statement.named_child_count:
                continue
            assignment = statement.named_child(0)
            if assignment is None or assignment.kind_id != ids.assignment:
                continue
            left = assignment.child_by_field_id(ids.left)
            if left is None:
                continue
            if left.kind_id == ids.identifier:
                add_plain(self.found, pattern, kind, assignment, left, assignment)
            elif tuples is not None and left.kind_id in ids.tuples:
                for name in left.named_children:
                    if name.kind_id == ids.identifier:
                        add_plain(self.found, tuples, kind, assignment, name, assignment)

    def module_level(self, children: list[ts.Node]) -> None:
        ids = self.ids
        self.assignments(children, _MODULE_VAR, SymbolKind.VARIABLE, _MODULE_TUPLE)
        for statement in children:
            for block, pattern in self._branches(statement):
                if block is not None and block.kind_id == ids.block:
                    self.assignments(block, pattern, SymbolKind.VARIABLE)

    def _branches(self, statement: ts.Node) -> list[tuple[ts.Node | None, int]]:
        """The blocks of a module-level if/try whose assignments are definitions."""
        ids = self.ids
        k = statement.kind_id
        if k == ids.if_statement:
            found = [(statement.child_by_field_id(ids.consequence), _IF_VAR)]
            for branch in statement.children_by_field_id(ids.alternative):
                if branch.kind_id == ids.elif_clause:
                    found.append((branch.child_by_field_id(ids.consequence), _ELIF_VAR))
                elif branch.kind_id == ids.else_clause:
                    found.append((branch.child_by_field_id(ids.body), _ELSE_VAR))
            return found
        if k != ids.try_statement:
            return []
        found = [(statement.child_by_field_id(ids.body), _TRY_VAR)]
        for clause in statement.named_children:
            if clause.kind_id == ids.except_clause:
                found.extend((c, _EXCEPT_VAR) for c in clause.named_children)
            elif clause.kind_id == ids.else_clause:
                found.append((clause.child_by_field_id(ids.body), _TRY_ELSE_VAR))
            elif clause.kind_id == ids.finally_clause:
                found.extend((c, _FINALLY_VAR) for c in clause.named_children)
        return found

    def statements(self, node: ts.Node | list[ts.Node], decorator: ts.Node | None = None) -> None:
        """Classes and functions anywhere below `node` (or these statements), and
        class-level fields."""
        ids = self.ids
        for child in node if isinstance(node, list) else node.named_children:
            k = child.kind_id
            if k == ids.cls or k == ids.function:
                self.definition(child, decorator)
            elif k == ids.decorated:
                self.statements(child, child)
            elif k in ids.containers:
                self.statements(child)

    def definition(self, node: ts.Node, decorator: ts.Node | None) -> None:
        ids = self.ids
        is_class = node.kind_id == ids.cls
        name = node.child_by_field_id(ids.name)
        if name is not None and name.kind_id == ids.identifier:
            wrapped = decorator is not None and decorator.child_by_field_id(ids.definition) == node
            span = decorator if wrapped and decorator is not None else node
            if is_class:
                add_plain(self.found, _CLASS, SymbolKind.CLASS, node, name, span)
            else:
                add_plain(self.found, _FUNCTION, SymbolKind.FUNCTION, node, name, span)
        body = node.child_by_field_id(ids.body)
        if body is not None:
            if is_class:
                self.assignments(body, _FIELD, SymbolKind.FIELD, _FIELD_TUPLE)
            self.statements(body)


def collect_python(
    spec: LanguageSpec, tree: ts.Tree, children: list[ts.Node] | None = None
) -> dict[int, Def]:
    """Definitions keyed by name position, as `extract.collect_by_query` finds them; with
    `children`, only those inside these top-level statements (an edit's window)."""
    walk = _Walk(_ids(spec))
    statements = tree.root_node.named_children if children is None else children
    walk.module_level(statements)
    walk.statements(statements)
    return walk.found
