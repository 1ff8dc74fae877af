"""`edit_file`: exact string replacement, staged in the session's changeset.

The replacement runs on the file as the session sees it (staged > buffer > disk) and is
staged, never written: the LSP layer delivers it as a `WorkspaceEdit`. Line endings are
kept: on a CRLF file an `old_string` written with plain newlines still matches, and the
new text gets CRLF too.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.errors import ToolError
from agentls.tools._files import after_staging, snippet, write_problem
from agentls.workspace.textio import newline_of, number_line, split_lines, with_newlines

_NUMBERED = re.compile(r"^\s*\d+\t")


class EditFileInput(ToolInput):
    path: str = Field(description="File to edit, relative to the workspace root.")
    old_string: str = Field(
        description="The exact text to replace, copied from the file (without read_file's "
        "line-number prefixes), with enough surrounding lines to be unique."
    )
    new_string: str = Field(description="The replacement text (must differ from old_string).")
    replace_all: bool = Field(
        default=False,
        description="Replace every occurrence instead of requiring exactly one.",
    )


@dataclass(frozen=True)
class _Plan:
    old: str
    new: str
    starts: list[int]


class EditFile(Tool[EditFileInput]):
    name = "edit_file"
    input_model = EditFileInput
    search_hint = "modify change replace patch update code"
    usage = """
Edit a file by replacing an exact string with a new one. This is the tool for changing
existing files; the edit is staged in this session and shown to the user as an editor
edit (the file on disk is not written directly).

- Read the file first (read_file), then copy `old_string` exactly: same indentation,
  whitespace and characters. Do not include the line-number prefix ("   12<tab>") from
  read_file output.
- `old_string` must occur exactly once unless `replace_all` is true; if it occurs several
  times, include more surrounding lines to make it unique. Use `replace_all` for renaming
  a variable throughout the file.
- The edit applies to what the user currently sees, including unsaved editor changes and
  your earlier staged edits. Line endings are preserved (CRLF files stay CRLF).
- If old_string is not found, the error shows the most similar lines; fix old_string from
  them rather than guessing again.
- To create a new file or replace a whole file use write_file; with an empty `old_string`
  this tool also creates a file that does not exist yet.
- Keep edits minimal and focused; make several small edits rather than one huge one.

Example: {"path": "<path>", "old_string": "<exact text copied from read_file>",
"new_string": "<replacement text>"}
"""

    def summary(self, input: EditFileInput) -> str:
        return f"Editing {input.path}"

    async def validate_input(self, input: EditFileInput, ctx: ToolContext) -> str | None:
        if input.old_string == input.new_string:
            return (
                "old_string and new_string are identical, so the edit would change nothing. "
                "Give the new text in new_string."
            )
        return write_problem(ctx, input.path)

    async def call(self, input: EditFileInput, ctx: ToolContext) -> str:
        ws = ctx.workspace
        path = ws.resolve(input.path)
        display = ws.display(path)
        if input.old_string == "" and not ws.exists(path, ctx.changes):
            ctx.changes.stage_write(path, input.new_string, None)
            count = len(split_lines(input.new_string))
            return await after_staging(
                ctx, f"Created {display} ({count} lines; staged in this session).", path
            )
        snap = ws.load(path, ctx.changes)
        text = snap.text
        _require_read(ctx, path, display, text)
        if input.old_string == "":
            if text:
                raise ToolError(
                    f"old_string is empty but {display} already has content. Give the text to "
                    "replace, or use write_file to replace the whole file."
                )
            plan = _Plan("", input.new_string, [0])
        else:
            plan = _plan(text, input.old_string, input.new_string)
            if not plan.starts:
                elsewhere = _found_elsewhere(ctx, path, input.old_string)
                raise ToolError(elsewhere or _not_found(display, text, input.old_string))
            if len(plan.starts) > 1 and not input.replace_all:
                raise ToolError(_several(display, text, plan.starts))
        new_text = text.replace(plan.old, plan.new) if plan.old else plan.new
        if new_text == text:
            raise ToolError(f"The edit would not change {display}.")
        ctx.changes.stage_write(path, new_text, text, snap.version)
        if ctx.reads is not None:
            ctx.reads.record(path, new_text)
        return await after_staging(ctx, _confirmation(display, new_text, plan), path)


MAX_OCCURRENCES_SHOWN = 10


def _several(display: str, text: str, starts: list[int]) -> str:
    """old_string occurs more than once: where, with each line as read_file shows it (a
    small model that sees only "occurs 2 times" re-sent the same call, then old = new)."""
    numbers = list(dict.fromkeys(text.count("\n", 0, s) + 1 for s in starts))
    lines = text.splitlines()
    shown = [f"{n:>6}\t{lines[n - 1]}" for n in numbers[:MAX_OCCURRENCES_SHOWN] if n <= len(lines)]
    more = len(numbers) - len(shown)
    return "\n".join(
        [
            f"old_string occurs {len(starts)} times in {display} (at lines "
            f"{', '.join(str(n) for n in numbers[:20])}):",
            *shown,
            *([f"… and {more} more lines"] if more > 0 else []),
            "To change every occurrence (a rename), send the same call with "
            "replace_all=true. To change one, include more of its line (or the lines "
            "around it) in old_string so that it occurs once.",
        ]
    )


def _require_read(ctx: ToolContext, path: Path, display: str, text: str) -> None:
    """Read before edit (`agentls.agent.framework.reads`); the session's own staged text counts as
    read (the model saw what it wrote)."""
    if ctx.reads is None or ctx.changes.text(path) == text:
        return
    problem = ctx.reads.problem(path, text, display)
    if problem is not None:
        raise ToolError(problem)


def _plan(text: str, old: str, new: str) -> _Plan:
    """Find `old`, trying the file's line-ending style if the literal text is absent."""
    newline = newline_of(text)
    new_adjusted = with_newlines(new, newline) if ("\n" in new or "\r" in new) else new
    starts = _occurrences(text, old)
    if starts:
        return _Plan(old, new_adjusted, starts)
    adjusted = with_newlines(old, newline)
    if adjusted != old:
        starts = _occurrences(text, adjusted)
        if starts:
            return _Plan(adjusted, new_adjusted, starts)
    return _Plan(old, new_adjusted, [])


def _occurrences(text: str, needle: str) -> list[int]:
    starts: list[int] = []
    pos = text.find(needle)
    while pos != -1:
        starts.append(pos)
        pos = text.find(needle, pos + len(needle))
    return starts


def _confirmation(display: str, new_text: str, plan: _Plan) -> str:
    """Say what changed and show the new text around the first few replacements."""
    delta = len(plan.new) - len(plan.old)
    new_lines = len(split_lines(plan.new)) or 1
    regions: list[tuple[int, int]] = []
    for index, start in enumerate(plan.starts):
        at = start + index * delta
        first = new_text.count("\n", 0, at) + 1
        regions.append((first, first + new_lines - 1))
    count = len(plan.starts)
    what = "1 occurrence" if count == 1 else f"{count} occurrences"
    spans = ", ".join(_span(a, b) for a, b in regions[:10])
    parts = [f"Edited {display}: replaced {what} (now at {spans}; staged in this session)."]
    for first, last in _merged(regions[:3]):
        parts.append(snippet(new_text, first, last))
    if count > 3:
        parts.append(f"[{count - 3} more replacements not shown]")
    return "\n".join(parts)


def _merged(regions: list[tuple[int, int]], context: int = 3) -> list[tuple[int, int]]:
    """Regions whose snippets (with `context` lines each side) would overlap, joined: each
    line is shown once (a rename's two replacements 4 lines apart printed lines 2-4 twice)."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted(regions):
        if merged and first - context <= merged[-1][1] + context + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def _span(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _found_elsewhere(ctx: ToolContext, path: Path, old: str) -> str | None:
    """When old_string is not in `path` but is in another file this session read: the
    model mixed up the paths (a small model edits the test that names the function it
    means), so the error names the file that has the text."""
    if ctx.reads is None or not old.strip():
        return None
    ws = ctx.workspace
    for other in ctx.reads.paths():
        if other == path:
            continue
        try:
            text = ws.load(other, ctx.changes).text
        except Exception:  # gone or unreadable since: no hint from it
            continue
        if old in text or _plan(text, old, old).starts:
            return (
                f"old_string was not found in {ws.display(path)}, but it is in "
                f"{ws.display(other)}. To change that file, call edit_file with path "
                f'"{ws.display(other)}".'
            )
    return None


def _not_found(display: str, text: str, old: str) -> str:
    message = f"old_string was not found in {display}."
    old_lines = split_lines(old)
    if old_lines and all(_NUMBERED.match(line) for line in old_lines if line.strip()):
        message += (
            " It looks like old_string includes read_file's line-number prefixes "
            "('   12<tab>'); remove them and copy only the file text."
        )
    region = _closest_region(split_lines(text), old_lines)
    if region is None:
        return message + " No similar lines were found; read the file again to see its content."
    first, last, ratio = region
    lines = split_lines(text)
    shown = "\n".join(number_line(n, lines[n - 1]) for n in range(first, last + 1))
    return (
        f"{message} The most similar text ({ratio:.0%} similar) is at {_span(first, last)}:\n"
        f"{shown}\n"
        "Check whitespace, indentation and exact characters, then retry with old_string "
        "copied from the file."
    )


def _closest_region(lines: list[str], old_lines: list[str]) -> tuple[int, int, float] | None:
    """The window of the file most similar to `old_lines`, anchored on its distinctive lines."""
    wanted = [line.strip() for line in old_lines]
    if not lines or not any(wanted):
        return None
    stripped = [line.strip() for line in lines]
    by_text: dict[str, list[int]] = {}
    for index, line in enumerate(stripped):
        by_text.setdefault(line, []).append(index)
    anchors = sorted({i for i, line in enumerate(wanted) if line}, key=lambda i: -len(wanted[i]))[
        :3
    ]
    first_anchor = next(i for i, line in enumerate(wanted) if line)
    if first_anchor not in anchors:
        anchors.append(first_anchor)
    starts: set[int] = set()
    for anchor in anchors:
        close = difflib.get_close_matches(wanted[anchor], list(by_text), n=5, cutoff=0.5)
        for match in close:
            for index in by_text[match]:
                starts.add(max(0, index - anchor))
    target = "\n".join(wanted)
    best: tuple[float, int] | None = None
    for start in sorted(starts):
        window = "\n".join(stripped[start : start + len(wanted)])
        ratio = difflib.SequenceMatcher(None, window, target, autojunk=False).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, start)
    if best is None or best[0] < 0.4:
        return None
    ratio, start = best
    end = min(len(lines), start + max(len(old_lines), 1))
    return start + 1, end, ratio
