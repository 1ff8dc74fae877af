"""`call_hierarchy`: who calls a function (incoming) or what it calls (outgoing), from a
language server's call hierarchy (`textDocument/prepareCallHierarchy`, then
`callHierarchy/incomingCalls` or `outgoingCalls`), `depth` levels deep.

Read-only like the other position queries. The index by name does not answer it: by name it
cannot tell which function a call means.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.codeintel.model import Call, CallItem
from agentls.tools._code_intel import LineReader, PositionInput, notes_block, prepare, what
from agentls.tools.code_intel import _POSITION_HELP, _PositionQuery

MAX_DEPTH = 5
MAX_SITES_SHOWN = 3


class CallHierarchyInput(PositionInput):
    direction: Literal["incoming", "outgoing"] = Field(
        description="`incoming`: the functions that call it; `outgoing`: the functions it calls."
    )
    depth: int = Field(
        default=1,
        ge=1,
        le=MAX_DEPTH,
        description=f"Levels to follow (default 1, at most {MAX_DEPTH}): 2 adds the callers' "
        "callers (or the callees' callees).",
    )


class CallHierarchyTool(_PositionQuery[CallHierarchyInput]):
    name = "call_hierarchy"
    input_model = CallHierarchyInput
    search_hint = "call hierarchy callers callees who calls incoming outgoing call graph"
    usage = (
        """
Show the call hierarchy of the function or method at a position: the functions that call
it (`direction: "incoming"`) or that it calls (`"outgoing"`), each with the lines where the
calls happen, resolved by a real language server; `depth` follows more levels.
"""
        + _POSITION_HELP
        + """
- Use it to see who is affected by a change to a function, or what a function depends on.
- Needs a language server for the file; find_references lists callers by name otherwise.

Example: {"path": "<path>", "line": <line>, "symbol": "<name>", "direction": "incoming"}
"""
    )

    def summary(self, input: CallHierarchyInput) -> str:
        return f"Finding {input.direction} calls of {input.symbol or 'a symbol'} in {input.path}"

    async def call(self, input: CallHierarchyInput, ctx: ToolContext) -> str:
        query = prepare(ctx, input)
        answer = await ctx.services.code_intel.call_hierarchy(
            query.document, query.target.pos, query.overlay, input.direction, input.depth
        )
        reader = LineReader(ctx, query.overlay)
        tree = answer.value
        noun = "callers" if input.direction == "incoming" else "calls"
        root = _name(reader, tree.root)
        if not tree.calls:
            head = f"No {noun} of {root} found (source: {answer.source})."
            return _with_notes(head, notes_block(answer.notes), [])
        count = _count(tree.calls)
        levels = f", {input.depth} levels" if input.depth > 1 else ""
        edges = "edge" if count == 1 else "edges"
        head = (
            f"{'Incoming' if input.direction == 'incoming' else 'Outgoing'} calls of {root} "
            f"({count} {edges}{levels}; source: {answer.source}):"
        )
        lines: list[str] = []
        for call in tree.calls:
            _render(reader, call, input.direction, 0, lines)
        if not lines:
            lines.append(f"(none shown for {what(query)})")
        return _with_notes(head, notes_block(answer.notes), lines)


def _with_notes(head: str, notes: str, lines: list[str]) -> str:
    return "\n".join([head, notes, *lines] if notes else [head, *lines])


def _count(calls: tuple[Call, ...]) -> int:
    return sum(1 + _count(c.calls) for c in calls)


def _name(reader: LineReader, item: CallItem) -> str:
    loc = item.location
    return f"`{item.name}` ({item.kind}) at {reader.display(loc.path)}:{loc.span.start.line + 1}"


def _render(reader: LineReader, call: Call, direction: str, level: int, out: list[str]) -> None:
    pad = "  " * level
    verb = "called from" if direction == "incoming" else "called at"
    out.append(f"{pad}- {_name(reader, call.item)}")
    lines = list(dict.fromkeys((site.path, site.span.start.line) for site in call.sites))
    for path, line in lines[:MAX_SITES_SHOWN]:  # two calls on one line: the line once
        text = reader.line(path, line)
        shown = text if text is not None else "(text not shown)"
        out.append(f"{pad}    {verb} {reader.display(path)}:{line + 1}: {shown}")
    if len(lines) > MAX_SITES_SHOWN:
        out.append(f"{pad}    [{len(lines) - MAX_SITES_SHOWN} more lines with calls]")
    for deeper in call.calls:
        _render(reader, deeper, direction, level + 1, out)
