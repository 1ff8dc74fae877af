"""Shared parts of the code-intelligence tools: the position input, the query target, and
how locations are shown (grouped by file, with the text the agent sees on each line).

Locations in files the agent may not read — outside the workspace, secret files, files a
deny rule hides — are named but their text is not shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import ToolInput
from agentls.codeintel.model import Answer, Document, Location, Overlay
from agentls.codeintel.positions import Target, locate
from agentls.codeintel.views import document_of, overlay_of
from agentls.errors import ToolError
from agentls.tools._files import cut_line, path_problem
from agentls.workspace.textio import number_line, split_lines

LINE_CHARS = 200


class PositionInput(ToolInput):
    path: str = Field(description="The file, relative to the workspace root.")
    line: int = Field(ge=1, description="1-based line number, as read_file shows it.")
    symbol: str | None = Field(
        default=None,
        description="The identifier as written on that line (e.g. `save`); preferred over "
        "`character`.",
    )
    character: int | None = Field(
        default=None, ge=1, description="1-based column on the line, instead of `symbol`."
    )
    occurrence: int | None = Field(
        default=None,
        ge=1,
        description="Which occurrence of `symbol` on the line (default 1, the first).",
    )


def position_problem(ctx: ToolContext, raw_path: str) -> str | None:
    """Refuse paths outside the workspace and files the agent may not read, up front."""
    problem = path_problem(ctx, raw_path)
    if problem is not None:
        return problem
    path = ctx.workspace.resolve(raw_path)
    blocked = ctx.services.secrets.reading_blocked_by(path)
    if blocked is not None:
        return (
            f"{ctx.workspace.display(path)} may not be read ({blocked}), so it cannot be "
            "queried either. Do not try to read it another way."
        )
    return None


@dataclass(frozen=True)
class Query:
    document: Document
    target: Target
    overlay: Overlay
    display: str


def prepare(ctx: ToolContext, input: PositionInput) -> Query:
    """Load the file as the session sees it and find the position the model means."""
    ws = ctx.workspace
    path = ws.resolve(input.path)
    display = ws.display(path)
    if ws.is_dir(path, ctx.changes):
        raise ToolError(f"{display} is a folder; give the file the symbol is in.")
    document = document_of(ws, path, ctx.changes)
    target = locate(
        document.text, display, input.line, input.symbol, input.character, input.occurrence
    )
    return Query(document, target, overlay_of(ws, ctx.changes), display)


def what(query: Query) -> str:
    name = f"`{query.target.name}`" if query.target.name else "the symbol"
    return f"{name} at {query.display}:{query.target.line}"


def source_line(answer: Answer[Any]) -> str:
    return f"(source: {answer.source})"


def notes_block(notes: Sequence[str]) -> str:
    unique = list(dict.fromkeys(n for n in notes if n))
    return "\n".join(f"Note: {n}" for n in unique)


@dataclass
class LineReader:
    """File lines as the agent sees them, loaded once per call; hidden files stay hidden."""

    ctx: ToolContext
    overlay: Overlay
    cache: dict[Path, list[str] | None] = field(default_factory=dict)

    def visible(self, path: Path) -> bool:
        ws = self.ctx.workspace
        if not ws.contains(path):
            return False
        return not self.ctx.services.secrets.blocks_reading(path)

    def lines(self, path: Path) -> list[str] | None:
        if path not in self.cache:
            self.cache[path] = self._load(path)
        return self.cache[path]

    def _load(self, path: Path) -> list[str] | None:
        if not self.visible(path):
            return None
        text = self.overlay.texts.get(path)
        if text is None:
            try:
                text = self.ctx.workspace.read_text(path, self.ctx.changes)
            except ToolError:
                return None
        return split_lines(text)

    def line(self, path: Path, index: int) -> str | None:
        lines = self.lines(path)
        if lines is None or index >= len(lines):
            return None
        return cut_line(lines[index].strip(), LINE_CHARS)

    def display(self, path: Path) -> str:
        ws = self.ctx.workspace
        if ws.contains(path):
            return ws.display(path)
        return f"{path} (outside the workspace)"


def group_by_file(locations: Sequence[Location], first: Path | None) -> list[list[Location]]:
    """Locations grouped per file: the queried file first, then by path; sorted within."""
    groups: dict[Path, list[Location]] = {}
    for loc in locations:
        groups.setdefault(loc.path, []).append(loc)
    order = sorted(groups, key=lambda p: (p != first, not _inside_hint(p), str(p)))
    return [sorted(groups[p], key=lambda loc: loc.span) for p in order]


def _inside_hint(path: Path) -> bool:
    return "site-packages" not in path.parts and "node_modules" not in path.parts


def dedupe(locations: Sequence[Location]) -> list[Location]:
    return list(dict.fromkeys(locations))


def context_snippet(reader: LineReader, loc: Location, before: int = 2, after: int = 3) -> str:
    lines = reader.lines(loc.path)
    if lines is None:
        why = "outside the workspace" if not reader.ctx.workspace.contains(loc.path) else "hidden"
        return f"    ({why}: text not shown)"
    first = max(0, loc.span.start.line - before)
    last = min(len(lines), loc.span.start.line + after + 1)
    return "\n".join(number_line(n + 1, cut_line(lines[n], LINE_CHARS)) for n in range(first, last))
