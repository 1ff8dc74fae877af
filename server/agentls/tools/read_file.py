"""`read_file`: numbered lines of a file as the session sees it (staged > buffer > disk)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.errors import ToolError, WorkspaceError
from agentls.tools._files import MAX_LINE_CHARS, cut_line, read_path_problem
from agentls.tools._notebook import is_notebook, parse, render
from agentls.workspace.core import TextSnapshot
from agentls.workspace.read_roots import resolve_readable
from agentls.workspace.textio import (
    FileTooLargeError,
    newline_of,
    number_line,
    page_lines,
    split_lines,
)

DEFAULT_LIMIT = 2000
OUTPUT_BUDGET = 90_000
"""Characters of numbered lines per call; the rest is left for the next call (offset)."""


class ReadFileInput(ToolInput):
    path: str = Field(
        description="File to read, relative to the workspace root (e.g. '<folder>/<file>') or "
        "absolute inside the workspace."
    )
    offset: int | None = Field(
        default=None, ge=1, description="1-based line number to start at (default 1)."
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description=f"Maximum number of lines to return (default {DEFAULT_LIMIT}).",
    )


class ReadFile(Tool[ReadFileInput]):
    name = "read_file"
    input_model = ReadFileInput
    max_result_chars = 100_000
    search_hint = "read view open show file contents lines"
    usage = f"""
Read a text file from the workspace. Returns numbered lines (`cat -n` style: line number,
tab, text) and a footer with the line range and the total line count.

- You see the file as the user's editor does: unsaved editor changes and the edits you
  staged in this session are included.
- Reads up to {DEFAULT_LIMIT} lines from the start by default. For long files, read the part
  you need with `offset` (1-based first line) and `limit`; when the output is truncated the
  footer says which offset to use next.
- Lines longer than {MAX_LINE_CHARS} characters are cut. Binary files are refused; files that
  are not valid UTF-8 are shown with replacement characters (and cannot be edited).
- Very large files (over 10 MB) can still be paged through with offset/limit.
- Paths must be inside the workspace, except the files of a loaded skill (the skill tool
  lists their absolute paths).
- The line numbers are not part of the file: never include them in edit_file's old_string.
- Jupyter notebooks (.ipynb) are shown as cells: cell_id, cell_number, type, numbered
  source and outputs (images summarised, long outputs cut); `offset`/`limit` count cells
  there (offset=1 is cell_number 0). Change cells with notebook_edit, not edit_file.
- Prefer this over shell commands like cat/head/tail. To find where something is, use
  grep or list_files first instead of reading files at random. Read several files in
  parallel when you need them all.

Example: {{"path": "<path>", "offset": 120, "limit": 80}}
"""

    def is_read_only(self, input: ReadFileInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: ReadFileInput) -> bool:
        return True

    def summary(self, input: ReadFileInput) -> str:
        if input.offset or input.limit:
            first = input.offset or 1
            last = first + (input.limit or DEFAULT_LIMIT) - 1
            return f"Reading {input.path} (lines {first}-{last})"
        return f"Reading {input.path}"

    async def validate_input(self, input: ReadFileInput, ctx: ToolContext) -> str | None:
        problem = read_path_problem(ctx, input.path)
        if problem is not None and ctx.services.skills.readable(input.path) is not None:
            return (
                None  # a file of a skill folder: readable, and only those (agent/claude/skills.py)
            )
        return problem

    async def call(self, input: ReadFileInput, ctx: ToolContext) -> str:
        ws = ctx.workspace
        path = _readable(ctx, input.path)
        display = ws.display(path)
        first = input.offset or 1
        count = input.limit or DEFAULT_LIMIT
        notes: list[str] = []
        try:
            snap = ws.load(path, ctx.changes, lossy=True)
        except FileTooLargeError as exc:
            page = await asyncio.to_thread(
                page_lines, exc.path, display, first, count, max_line_bytes=MAX_LINE_CHARS * 4
            )
            lines = page.lines
            total = page.total_lines
            cut = page.cut
            lossy = page.lossy
            notes.append("large file: paged from disk")
            full_text: str | None = None
        else:
            full_text = snap.text
            if ctx.reads is not None:
                ctx.reads.record(path, snap.text)
            all_lines = split_lines(snap.text)
            total = len(all_lines)
            lines = all_lines[first - 1 : first - 1 + count]
            cut = [False] * len(lines)
            lossy = snap.lossy
            notes += _source_notes(snap)
        if full_text is not None and is_notebook(path):
            shown = _notebook_view(full_text, display, input, notes)
            if shown is not None:
                return shown
        if total == 0:
            return f"[{display} is empty (0 lines)]"
        if first > total:
            raise ToolError(
                f"offset {first} is past the end of {display}, which has {total} lines; "
                f"use an offset between 1 and {total}."
            )
        body = _numbered(lines, cut, first)
        return "\n".join(body) + "\n" + _footer(first, first + len(body) - 1, total, notes, lossy)


def _source_notes(snap: TextSnapshot) -> list[str]:
    """Where the text came from when it is not the saved file, and CRLF endings."""
    notes = []
    if snap.source == "buffer":
        version = f" version {snap.version}" if snap.version is not None else ""
        notes.append(f"unsaved editor buffer{version}")
    elif snap.source == "staged":
        notes.append("includes changes staged in this session")
    if newline_of(snap.text) == "\r\n":
        notes.append("CRLF line endings")
    return notes


def _numbered(lines: list[str], cut: list[bool], first: int) -> list[str]:
    """Numbered lines from `first`, long ones cut, up to the output budget (at least one)."""
    body: list[str] = []
    used = 0
    for number, (text, was_cut) in enumerate(zip(lines, cut, strict=True), start=first):
        shown = f"{text[:MAX_LINE_CHARS]}… [line cut]" if was_cut else cut_line(text)
        line = number_line(number, shown)
        if body and used + len(line) > OUTPUT_BUDGET:
            break
        body.append(line)
        used += len(line) + 1
    return body


def _footer(first: int, last: int, total: int, notes: list[str], lossy: bool) -> str:
    """What was shown of how much, how to read on, and what to know about the text."""
    footer = f"[lines {first}-{last} of {total}"
    if last < total:
        footer += f"; truncated: call again with offset={last + 1}"
    footer += "".join(f"; {note}" for note in notes) + "]"
    if lossy:
        footer += (
            "\n[note: the file is not valid UTF-8; undecodable bytes are shown as �, and "
            "it cannot be edited with edit_file]"
        )
    return footer


def _notebook_view(text: str, display: str, input: ReadFileInput, notes: list[str]) -> str | None:
    """A notebook as cells (offset/limit count cells); None to show the raw JSON instead
    (it is not a valid notebook: the model then sees why, and the text)."""
    try:
        notebook = parse(text, display)
    except ToolError as exc:
        notes.append(f"{exc}; shown as text")
        return None
    first = (input.offset or 1) - 1
    shown = render(notebook, display, first, input.limit, budget=OUTPUT_BUDGET)
    return shown + "".join(f"\n[{note}]" for note in notes)


def _readable(ctx: ToolContext, raw: str) -> Path:
    """The workspace path (or one in a folder the settings make readable), else the real
    path of a skill's file (`validate_input` let it by)."""
    try:
        return resolve_readable(ctx.workspace, raw)
    except WorkspaceError:
        found = ctx.services.skills.readable(raw)
        if found is None:
            raise
        return found
