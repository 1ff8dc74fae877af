"""Symbol-level edits: `replace_symbol_body`, `insert_before_symbol`, `insert_after_symbol`,
`safe_delete_symbol`.

The model names a definition by position (the `{path, line, symbol}` contract); its extent
comes from a language server (`textDocument/documentSymbol`) or, when none covers the file,
from the tree-sitter outline. The edit covers whole lines, so the model never counts
columns or copies the old text. Like `edit_file` the change is staged (never written), the
file must have been read first (`agentls.agent.framework.reads`), and the after-edit checks run.
`safe_delete_symbol` refuses while references remain, listing them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool
from agentls.codeintel.model import Answer, Location, SymbolRange
from agentls.codeintel.unconfirmed import may_be_incomplete, unconfirmed_matches
from agentls.errors import ToolError
from agentls.tools._code_intel import (
    LineReader,
    PositionInput,
    Query,
    notes_block,
    position_problem,
    prepare,
)
from agentls.tools._files import after_staging, snippet, write_problem
from agentls.tools.code_intel import _POSITION_HELP
from agentls.tools.edit_file import _require_read
from agentls.workspace.textio import newline_of, split_lines, with_newlines

MAX_LISTED = 40


@dataclass(frozen=True)
class _Found:
    symbol: SymbolRange
    source: str
    notes: tuple[str, ...]
    first: int
    """0-based first line of the definition."""
    last: int
    """0-based last line (inclusive)."""


InputT = TypeVar("InputT", bound=PositionInput)


class _SymbolEdit(Tool[InputT]):
    """A staged edit of whole lines around one definition."""

    verb = ""

    def summary(self, input: InputT) -> str:
        return f"{self.verb} {input.symbol or 'a symbol'} in {input.path}"

    async def validate_input(self, input: InputT, ctx: ToolContext) -> str | None:
        return position_problem(ctx, input.path) or write_problem(ctx, input.path)

    async def call(self, input: InputT, ctx: ToolContext) -> str:
        query = prepare(ctx, input)
        path = query.document.path
        text = query.document.text
        _require_read(ctx, path, query.display, text)
        found = await _definition(ctx, query)
        lines = _keep_ends(text)
        new_lines, result, at = await self.change(ctx, input, query, found, lines)
        new_text = "".join(new_lines)
        if new_text == text:
            raise ToolError(f"The edit would not change {query.display}.")
        version = ctx.workspace.load(path, ctx.changes).version
        ctx.changes.stage_write(path, new_text, text, version)
        if ctx.reads is not None:
            ctx.reads.record(path, new_text)
        shown = snippet(new_text, at[0], at[1], context=1) if at[1] >= at[0] else ""
        head = f"{result} (range from {found.source}; staged in this session)."
        notes = notes_block(found.notes)
        body = "\n".join(part for part in (head, notes, shown) if part)
        return await after_staging(ctx, body, path)

    async def change(
        self,
        ctx: ToolContext,
        input: InputT,
        query: Query,
        found: _Found,
        lines: list[str],
    ) -> tuple[list[str], str, tuple[int, int]]:
        """The new lines, the result's first sentence, and the 1-based lines to show."""
        raise NotImplementedError


class SymbolBodyInput(PositionInput):
    body: str = Field(
        description="The symbol's new definition, whole: signature, decorators and body, "
        "indented as in the file."
    )


class TextInput(PositionInput):
    text: str = Field(description="The code to insert (whole lines, indented as in the file).")


class ReplaceSymbolBody(_SymbolEdit[SymbolBodyInput]):
    name = "replace_symbol_body"
    input_model = SymbolBodyInput
    verb = "Replacing"
    search_hint = "replace function method class definition body rewrite symbol"
    usage = (
        """
Replace the whole definition of the function, method or class at a position (its lines,
from decorators and signature to the end of its body, as the language server or the
outline reports them) with `body`. Staged in this session like edit_file; no need to copy
the old text.

- Read the file first. Give `body` indented as in the file; a body whose first line is not
  indented is indented like the old definition.
"""
        + _POSITION_HELP
        + """
Example: {"path": "<path>", "line": <line>, "symbol": "<name>", "body": "<new definition>"}
"""
    )

    async def change(
        self,
        ctx: ToolContext,
        input: SymbolBodyInput,
        query: Query,
        found: _Found,
        lines: list[str],
    ) -> tuple[list[str], str, tuple[int, int]]:
        old = lines[found.first : found.last + 1]
        new = _block(input.body, old[0] if old else "", query.document.text)
        result = (
            f"Replaced `{found.symbol.name}` (lines {found.first + 1}-{found.last + 1}) "
            f"with {len(new)} lines"
        )
        at = (found.first + 1, found.first + len(new))
        return [*lines[: found.first], *new, *lines[found.last + 1 :]], result, at


class InsertBeforeSymbol(_SymbolEdit[TextInput]):
    name = "insert_before_symbol"
    input_model = TextInput
    verb = "Inserting before"
    search_hint = "insert add code before definition function class new symbol above"
    usage = (
        """
Insert code on the lines just before the definition at a position (before its decorators
or comments as the language server or the outline reports them): a new function, class,
import or decorator. Staged in this session like edit_file.
"""
        + _POSITION_HELP
        + """
Example: {"path": "<path>", "line": <line>, "symbol": "<name>", "text": "<code>"}
"""
    )

    async def change(
        self,
        ctx: ToolContext,
        input: TextInput,
        query: Query,
        found: _Found,
        lines: list[str],
    ) -> tuple[list[str], str, tuple[int, int]]:
        reference = lines[found.first] if found.first < len(lines) else ""
        new = _block(input.text, reference, query.document.text)
        result = f"Inserted {len(new)} lines before `{found.symbol.name}`"
        at = (found.first + 1, found.first + len(new))
        return [*lines[: found.first], *new, *lines[found.first :]], result, at


class InsertAfterSymbol(_SymbolEdit[TextInput]):
    name = "insert_after_symbol"
    input_model = TextInput
    verb = "Inserting after"
    search_hint = "insert add code after definition function class method new symbol below"
    usage = (
        """
Insert code on the lines just after the end of the definition at a position (a new method
after a method, a function after a function). Staged in this session like edit_file.
"""
        + _POSITION_HELP
        + """
Example: {"path": "<path>", "line": <line>, "symbol": "<name>", "text": "<code>"}
"""
    )

    async def change(
        self,
        ctx: ToolContext,
        input: TextInput,
        query: Query,
        found: _Found,
        lines: list[str],
    ) -> tuple[list[str], str, tuple[int, int]]:
        newline = newline_of(query.document.text)
        head = list(lines[: found.last + 1])
        if head and not head[-1].endswith(("\n", "\r")):
            head[-1] += newline
        new = _block(input.text, lines[found.first] if lines else "", query.document.text)
        result = f"Inserted {len(new)} lines after `{found.symbol.name}`"
        at = (found.last + 2, found.last + 1 + len(new))
        return [*head, *new, *lines[found.last + 1 :]], result, at


class SafeDeleteSymbol(_SymbolEdit[PositionInput]):
    name = "safe_delete_symbol"
    input_model = PositionInput
    verb = "Deleting"
    search_hint = "delete remove unused function class method dead code safely"
    usage = (
        """
Delete the definition at a position (its whole lines), but only when nothing else uses it:
the references are looked up first (a language server's, plus occurrences of the name it
did not confirm in dynamic languages), and while any remain nothing is deleted and they are
listed. Staged in this session like edit_file.
"""
        + _POSITION_HELP
        + """
Example: {"path": "<path>", "line": <line>, "symbol": "<name>"}
"""
    )

    async def change(
        self,
        ctx: ToolContext,
        input: PositionInput,
        query: Query,
        found: _Found,
        lines: list[str],
    ) -> tuple[list[str], str, tuple[int, int]]:
        await _refuse_if_used(ctx, query, found)
        first, last = found.first, found.last
        before = lines[first - 1] if first > 0 else ""
        after = lines[last + 1] if last + 1 < len(lines) else ""
        if not before.strip() and not after.strip() and last + 1 < len(lines):
            last += 1  # do not leave two blank separators where one definition was
        result = f"Deleted `{found.symbol.name}` (lines {found.first + 1}-{found.last + 1})"
        at = (first + 1, first)  # nothing new to show
        return [*lines[:first], *lines[last + 1 :]], result, at


# -- finding the definition ---------------------------------------------------------------


async def _definition(ctx: ToolContext, query: Query) -> _Found:
    """The innermost definition whose name is at the position (or, failing that, the one
    whose first line is the given line and whose name matches)."""
    answer = await ctx.services.code_intel.document_symbols(query.document, query.overlay)
    pos = query.target.pos
    flat = list(_walk(answer.value))
    at_name = [s for s in flat if s.selection.start <= pos <= s.selection.end]
    if not at_name:
        at_name = [s for s in flat if s.name == query.target.name and s.span.start.line == pos.line]
    if not at_name:
        raise ToolError(_not_a_definition(query, flat, answer))
    symbol = min(at_name, key=lambda s: _size(s))
    last = symbol.span.end.line
    if symbol.span.end.character == 0 and last > symbol.span.start.line:
        last -= 1  # a range ending at the start of the next line
    return _Found(symbol, answer.source, answer.notes, symbol.span.start.line, last)


def _walk(symbols: list[SymbolRange] | tuple[SymbolRange, ...]) -> list[SymbolRange]:
    found: list[SymbolRange] = []
    for symbol in symbols:
        found.append(symbol)
        found.extend(_walk(symbol.children))
    return found


def _size(symbol: SymbolRange) -> tuple[int, int]:
    span = symbol.span
    return (span.end.line - span.start.line, span.end.character - span.start.character)


def _not_a_definition(
    query: Query, flat: list[SymbolRange], answer: Answer[list[SymbolRange]]
) -> str:
    name = f"`{query.target.name}`" if query.target.name else "that position"
    shown = ", ".join(f"`{s.name}` (line {s.selection.start.line + 1})" for s in flat[:MAX_LISTED])
    return (
        f"{name} on line {query.target.line} of {query.display} is not where a definition is "
        f"named (source: {answer.source}). Point at the name in its definition; the "
        f"definitions in this file: {shown or 'none'}."
    )


# -- text ---------------------------------------------------------------------------------


def _keep_ends(text: str) -> list[str]:
    """Lines with their "\n" (as `split_lines` counts them; a "\r" stays on its line)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def _block(text: str, reference_line: str, file_text: str) -> list[str]:
    """`text` as whole lines in the file's line endings (a final newline ends its last
    line; blank lines before or after separate it, as the model wrote them); indented like
    `reference_line` when its first line carries no indentation of its own."""
    newline = newline_of(file_text)
    lines = split_lines(with_newlines(text, "\n"))  # a final "\n" ends the last line
    indent = reference_line[: len(reference_line) - len(reference_line.lstrip(" \t"))]
    if indent and lines and lines[0] and not lines[0][0].isspace():
        lines = [indent + line if line.strip() else line for line in lines]
    return [line + newline for line in lines]


async def _refuse_if_used(ctx: ToolContext, query: Query, found: _Found) -> None:
    """A `ToolError` listing the uses outside the definition itself, if any."""
    service = ctx.services.code_intel
    name_pos = found.symbol.selection.start
    references = await service.references(query.document, name_pos, query.overlay, False)
    used = [loc for loc in references.value if not _inside(loc, query.document.path, found)]
    unconfirmed: list[Location] = []
    if may_be_incomplete(query.document, references.source):
        extra = await unconfirmed_matches(
            ctx.workspace, query.document, name_pos, query.overlay, references.value
        )
        unconfirmed = [
            loc for loc in extra.locations if not _inside(loc, query.document.path, found)
        ]
    if not used and not unconfirmed:
        return
    reader = LineReader(ctx, query.overlay)
    listing = [_site(reader, loc, "") for loc in used[:MAX_LISTED]]
    listing += [_site(reader, loc, " (unconfirmed)") for loc in unconfirmed[:MAX_LISTED]]
    count = len(used) + len(unconfirmed)
    raise ToolError(
        f"Not deleted: `{found.symbol.name}` is still used in {count} place"
        f"{'s' if count != 1 else ''} (source: {references.source}):\n"
        + "\n".join(listing)
        + "\nRemove or change these uses first, then delete it."
    )


def _inside(loc: Location, path: Path, found: _Found) -> bool:
    return loc.path == path and found.first <= loc.span.start.line <= found.last


def _site(reader: LineReader, loc: Location, label: str) -> str:
    text = reader.line(loc.path, loc.span.start.line)
    shown = text if text is not None else "(text not shown)"
    return f"  {reader.display(loc.path)}:{loc.span.start.line + 1}{label}  {shown}"
