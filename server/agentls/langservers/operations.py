"""Call hierarchy, code actions and document symbols over LSP, for the language-server
client and the editor bridge alike.

Both ask through a `Requester` (method, params, result type → the result as lsprotocol
values), so the walk of a call hierarchy, the choice of the code action to apply and its
`codeAction/resolve` are written once. Converting to the core's types needs the texts the
positions refer to (`Converter`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Optional

import attrs
from lsprotocol import types

from agentls.codeintel.actions import choose
from agentls.codeintel.model import (
    Call,
    CallHierarchy,
    CallItem,
    CodeAction,
    Location,
    Pos,
    RenameResult,
    SourceFailed,
    Span,
    SymbolRange,
)
from agentls.codeintel.sources import Direction
from agentls.langservers.convert import Converter, path_of

Requester = Callable[[str, object, Any], Awaitable[Any]]
"""(method, params, result type) → the result, structured as that type."""
Executor = Callable[[types.Command], Awaitable[RenameResult | str]]
"""Runs a command; the edits it applied through `workspace/applyEdit`, or why it could not."""

MAX_CALLS = 200
"""Edges of a call hierarchy, over all levels (a deep walk of a busy function explodes)."""

ITEMS = Optional[list[types.CallHierarchyItem]]  # noqa: UP045 (a runtime type for cattrs)
INCOMING = Optional[list[types.CallHierarchyIncomingCall]]  # noqa: UP045
OUTGOING = Optional[list[types.CallHierarchyOutgoingCall]]  # noqa: UP045
RAW = None
"""The result type that asks for plain JSON (structured here, see `_structure_action`)."""
SYMBOLS_RAW = Optional[list[dict[str, object]]]  # noqa: UP045 (DocumentSymbol or SymbolInformation)

_NOWHERE = Span(Pos(0, 0), Pos(0, 0))
_SYMBOL_KINDS = {kind.value: kind.name.lower() for kind in types.SymbolKind}


# -- document symbols ---------------------------------------------------------------------


def symbols_of(conv: Converter, path: Path, raw: Any) -> list[SymbolRange]:
    """`DocumentSymbol[]` (nested) or `SymbolInformation[]` (flat, nested here by range)."""
    from lsprotocol.converters import get_converter

    converter = get_converter()
    items = [_plain(item) for item in raw or []]
    if items and isinstance(items[0], dict) and "location" in items[0]:
        infos = [converter.structure(i, types.SymbolInformation) for i in items]
        flat = [
            SymbolRange(
                i.name,
                _SYMBOL_KINDS.get(int(i.kind), "symbol"),
                conv.span(path, i.location.range),
                conv.span(path, i.location.range),
            )
            for i in infos
            if path_of(i.location.uri) in (path, None)
        ]
        return _nest(flat)
    symbols = [converter.structure(i, types.DocumentSymbol) for i in items]
    return [_symbol(conv, path, s) for s in symbols]


def _plain(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "__attrs_attrs__"):
        from lsprotocol.converters import get_converter

        return get_converter().unstructure(value)
    return value


def _symbol(conv: Converter, path: Path, item: types.DocumentSymbol) -> SymbolRange:
    return SymbolRange(
        item.name,
        _SYMBOL_KINDS.get(int(item.kind), "symbol"),
        conv.span(path, item.range),
        conv.span(path, item.selection_range),
        tuple(_symbol(conv, path, c) for c in item.children or []),
    )


def _nest(flat: list[SymbolRange]) -> list[SymbolRange]:
    """Flat symbols nested by containment (outer ranges first)."""
    ordered = sorted(flat, key=lambda s: (s.span.start, _neg(s.span.end)))
    roots: list[SymbolRange] = []
    for symbol in reversed(ordered):  # inner first, so parents can collect them
        inside = [r for r in roots if _contains(symbol.span, r.span) and r != symbol]
        if inside:
            roots = [r for r in roots if r not in inside]
            symbol = SymbolRange(
                symbol.name, symbol.kind, symbol.span, symbol.selection, tuple(inside)
            )
        roots.append(symbol)
    return sorted(roots, key=lambda s: s.span.start)


def _neg(pos: Any) -> tuple[int, int]:
    return (-pos[0], -pos[1])


def _contains(outer: Span, inner: Span) -> bool:
    return outer.start <= inner.start and inner.end <= outer.end and outer != inner


# -- call hierarchy -----------------------------------------------------------------------


async def call_hierarchy(
    ask: Requester,
    conv: Converter,
    params: types.CallHierarchyPrepareParams,
    direction: Direction,
    depth: int,
) -> CallHierarchy | None:
    """Prepare, then walk `depth` levels; None when nothing callable is at the position."""
    items = await ask(types.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY, params, ITEMS)
    if not items:
        return None
    root = items[0]
    budget = [MAX_CALLS]
    calls = await _calls(ask, conv, root, direction, depth, budget, {_key(root)})
    return CallHierarchy(_item(conv, root), tuple(calls))


async def _calls(
    ask: Requester,
    conv: Converter,
    item: types.CallHierarchyItem,
    direction: Direction,
    depth: int,
    budget: list[int],
    seen: set[tuple[str, int, int]],
) -> list[Call]:
    if depth <= 0 or budget[0] <= 0:
        return []
    found: list[Call] = []
    if direction == "incoming":
        incoming = await ask(
            types.CALL_HIERARCHY_INCOMING_CALLS,
            types.CallHierarchyIncomingCallsParams(item=item),
            INCOMING,
        )
        edges = [(call.from_, call.from_.uri, call.from_ranges) for call in incoming or []]
    else:
        outgoing = await ask(
            types.CALL_HIERARCHY_OUTGOING_CALLS,
            types.CallHierarchyOutgoingCallsParams(item=item),
            OUTGOING,
        )
        # outgoing `fromRanges` lie in the queried item's own file
        edges = [(call.to, item.uri, call.from_ranges) for call in outgoing or []]
    for other, sites_uri, ranges in edges:
        if budget[0] <= 0:
            break
        budget[0] -= 1
        key = _key(other)
        deeper: list[Call] = []
        if key not in seen:  # recursion: a function calling itself, or a cycle
            deeper = await _calls(ask, conv, other, direction, depth - 1, budget, seen | {key})
        found.append(
            Call(_item(conv, other), tuple(_sites(conv, sites_uri, ranges)), tuple(deeper))
        )
    return found


def _key(item: types.CallHierarchyItem) -> tuple[str, int, int]:
    start = item.selection_range.start
    return (item.uri, start.line, start.character)


def _sites(conv: Converter, uri: str, ranges: Sequence[types.Range]) -> list[Location]:
    path = path_of(uri)
    if path is None:
        return []
    return [Location(path, conv.span(path, r)) for r in ranges]


def _item(conv: Converter, item: types.CallHierarchyItem) -> CallItem:
    path = path_of(item.uri)
    span = conv.span(path, item.selection_range) if path is not None else _NOWHERE
    return CallItem(
        item.name,
        _SYMBOL_KINDS.get(int(item.kind), "symbol"),
        item.detail or "",
        Location(path or Path(item.uri), span),
    )


# -- code actions -------------------------------------------------------------------------


async def code_actions(
    ask: Requester,
    conv: Converter,
    params: types.CodeActionParams,
    only: str | None,
    apply: str | None,
    can_resolve: bool,
    execute: Executor,
) -> list[CodeAction]:
    """The actions for a range (of kind `only`; by default also the source actions such
    as organize imports, which servers offer only when asked for them); with `apply`, the
    chosen one's edit filled in (resolved first when the server sends edits lazily, else
    captured from its command)."""
    asks = [[only]] if only else [None, [types.CodeActionKind.Source.value]]
    raw: list[types.CodeAction | types.Command] = []
    for kinds in asks:
        context = attrs.evolve(params.context, only=kinds)
        more = await ask(
            types.TEXT_DOCUMENT_CODE_ACTION, attrs.evolve(params, context=context), RAW
        )
        titles = {item.title for item in raw}
        raw += [a for a in map(_structure_action, _plain(more) or []) if a.title not in titles]
    actions = [_action(conv, item) for item in raw]
    if apply is None:
        return actions
    index = choose(actions, apply)
    chosen = raw[index]
    if isinstance(chosen, types.CodeAction) and chosen.disabled is not None:
        raise SourceFailed(
            f"`{chosen.title}` is not available here: {chosen.disabled.reason}", final=True
        )
    if (
        isinstance(chosen, types.CodeAction)
        and chosen.edit is None
        and chosen.data is not None
        and can_resolve
    ):
        resolved = await ask(types.CODE_ACTION_RESOLVE, chosen, RAW)
        chosen = _converter().structure(_plain(resolved), types.CodeAction)
    actions[index] = await _applied(conv, chosen, execute)
    return actions


def _converter() -> Any:
    from lsprotocol.converters import get_converter

    return get_converter()


def _structure_action(item: Any) -> types.CodeAction | types.Command:
    """`Command | CodeAction` told apart by `command`'s type: a string in a Command, an
    object in a CodeAction (lsprotocol's own hook takes any `command` key for a Command)."""
    converter = _converter()
    if isinstance(item, dict) and isinstance(item.get("command"), str):
        return converter.structure(item, types.Command)  # type: ignore[no-any-return]
    return converter.structure(item, types.CodeAction)  # type: ignore[no-any-return]


async def _applied(
    conv: Converter, chosen: types.CodeAction | types.Command, execute: Executor
) -> CodeAction:
    action = _action(conv, chosen)
    edit = RenameResult(())
    if isinstance(chosen, types.CodeAction) and chosen.edit is not None:
        edit = conv.rename(chosen.edit)
    command = chosen if isinstance(chosen, types.Command) else chosen.command
    if command is not None:
        ran = await execute(command)
        if isinstance(ran, str):
            return _with(action, edit if edit.edits else None, ran)
        edit = RenameResult((*edit.edits, *ran.edits), (*edit.skipped, *ran.skipped))
    if not edit.edits and not edit.skipped:
        return _with(action, None, "the server's action changes nothing")
    return _with(action, edit, "")


def _with(action: CodeAction, edit: RenameResult | None, unsupported: str) -> CodeAction:
    return CodeAction(
        action.title,
        action.kind,
        action.preferred,
        action.diagnostics,
        action.disabled,
        action.command,
        edit,
        unsupported,
    )


def _action(conv: Converter, item: types.CodeAction | types.Command) -> CodeAction:
    if isinstance(item, types.Command):
        return CodeAction(item.title, command=item.command)
    return CodeAction(
        item.title,
        str(item.kind or ""),
        bool(item.is_preferred),
        tuple(d.message for d in item.diagnostics or []),
        item.disabled.reason if item.disabled is not None else "",
        item.command.command if item.command is not None else "",
        conv.rename(item.edit) if item.edit is not None else None,
    )


def code_action_params(
    uri: str,
    rng: types.Range,
    diagnostics: Sequence[types.Diagnostic],
) -> types.CodeActionParams:
    return types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=rng,
        context=types.CodeActionContext(
            diagnostics=list(diagnostics), trigger_kind=types.CodeActionTriggerKind.Invoked
        ),
    )


def overlapping(items: Sequence[types.Diagnostic], rng: types.Range) -> list[types.Diagnostic]:
    """The diagnostics on the range's lines (a quick fix is offered for those; an editor
    offers the fixes of the cursor's line the same way)."""
    first, last = rng.start.line, rng.end.line
    return [d for d in items if d.range.start.line <= last and first <= d.range.end.line]
