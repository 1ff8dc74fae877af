"""`grep`: regex search across the session's view of the workspace."""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Final, Literal

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.errors import ToolError
from agentls.tools._files import cut_line, read_path_problem, relative_to
from agentls.workspace import Workspace
from agentls.workspace.core import Attachment
from agentls.workspace.globs import GlobError, PathGlob
from agentls.workspace.read_roots import resolve_readable
from agentls.workspace.regex_dialect import MAX_PATTERN_CHARS, PatternError, check_pattern
from agentls.workspace.ripgrep import RgError
from agentls.workspace.search import (
    SearchOutcome,
    SearchRequest,
    context_groups,
    run_search,
    run_search_listing,
)
from agentls.workspace.view import LayeredView

DEFAULT_MAX = {"content": 200, "files": 500, "count": 500}
MAX_LINE = 400
OUTPUT_BUDGET = 28_000

OutputMode = Literal["content", "files", "count"]


class GrepInput(ToolInput):
    pattern: str = Field(
        min_length=1,
        description="Regular expression in ripgrep's syntax (RE2/Rust: no look-around, no "
        "back-references), e.g. 'def \\w+_handler' or 'TODO|FIXME'. Escape ( [ { . * + ? | \\ "
        f"to match them literally. At most {MAX_PATTERN_CHARS} characters.",
    )
    path: str | None = Field(
        default=None,
        description="File or folder to search, relative to the workspace root (default: the "
        "whole workspace).",
    )
    glob: str | None = Field(
        default=None,
        description="Only search files matching this glob, e.g. '*.py', '*.{ts,tsx}', "
        "'<folder>/**/*.go'; without '/' it matches file names at any depth; a leading '!' "
        "excludes.",
    )
    ignore_case: bool = Field(default=False, description="Case-insensitive matching.")
    context: int | None = Field(
        default=None,
        ge=0,
        le=20,
        description="Lines of context to show before and after each match (content output).",
    )
    output: OutputMode = Field(
        default="content",
        description="'content': matching lines as path:line: text (default); 'files': only "
        "the paths of matching files; 'count': matches per file.",
    )
    max_results: int | None = Field(
        default=None,
        ge=1,
        le=5000,
        description="Maximum matching lines (content) or files (files/count) to return "
        "(default 200 lines / 500 files).",
    )


class Grep(Tool[GrepInput]):
    name = "grep"
    input_model = GrepInput
    search_hint = "search find text regex ripgrep occurrences usages"
    usage = r"""
Search file contents in the workspace with a regular expression. Powered by ripgrep:
the syntax is ripgrep's (RE2/Rust), as in Claude Code's Grep: `\w`, `\d`, `\s` are
Unicode-aware, `(?i)` and other inline flags work, and there is no look-around
(`(?=`, `(?<=`, …) and no back-references (`\1`); matching is per line (`^` and `$` match
at line starts and ends, also before "\r\n") and takes linear time. Use it to find
definitions, usages, strings, config keys, TODOs.

- Output 'content' (default): one line per match as `path:line: text`; with `context`,
  surrounding lines appear as `path-line- text` and groups are separated by `--`.
  'files' lists matching files; 'count' gives `path:count` per file.
- Searches what the user's editor shows: unsaved editor buffers and the edits you staged
  in this session are included; files you deleted are not.
- `.gitignore`/`.ignore` rules apply and dependency/build/VCS folders are skipped unless
  you name one in `path`. Binary files are skipped.
- Results are capped (`max_results`); the output says when more exist. Narrow the search
  with `path` or `glob` rather than raising the cap a lot.
- Prefer this over running grep/rg in a shell. For symbol definitions a symbol search
  tool may be more precise when available. Run several searches in parallel if useful.

Example: {"pattern": "<regex>", "path": "<folder>", "glob": "*.py", "context": 2}
"""

    def is_read_only(self, input: GrepInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: GrepInput) -> bool:
        return True

    def summary(self, input: GrepInput) -> str:
        where = f" in {input.path}" if input.path else ""
        pattern = input.pattern if len(input.pattern) <= 80 else input.pattern[:80] + "…"
        return f"Searching for /{pattern}/{where}"

    async def validate_input(self, input: GrepInput, ctx: ToolContext) -> str | None:
        try:
            check_pattern(input.pattern)
        except PatternError as exc:
            return str(exc)
        return read_path_problem(ctx, input.path) if input.path else None

    async def call(self, input: GrepInput, ctx: ToolContext) -> str:
        ws = ctx.workspace
        request = _request(input, ws.max_file_bytes)
        glob = _glob(input.glob)
        folder = resolve_readable(ws, input.path) if input.path else None
        view = ws.view(ctx.changes)
        if folder is not None and not view.exists(folder):
            raise ws.missing_error(folder, ctx.changes)

        secrets = ctx.services.secrets
        stop = ctx.cancelled.is_set
        listings = ws.attached(_LISTINGS, _Listings)
        key = (str(folder) if folder is not None else None, input.glob)

        def list_files() -> list[str]:
            files = _filter(view, folder, glob, stop)
            if folder is None:  # the warm-up asks about every file: a folder's few need not wait
                ws.join_secrets_warm_up()  # its answers are remembered: ours are lookups then
            return secrets.readable(files)

        def work() -> tuple[int, SearchOutcome]:
            guess = listings.get(key)
            if guess is None:
                files = list_files()
                outcome = run_search(view, files, request, stop)
            else:
                files, outcome = run_search_listing(view, guess, list_files, request, stop)
            if not stop():
                listings.put(key, files)
            return len(files), outcome

        try:
            searched, outcome = await asyncio.to_thread(work)
        except RgError as exc:
            raise ToolError(f"Invalid regex /{input.pattern[:200]}/: {exc}") from None
        return _report(outcome, input, ws, folder, searched)


def _request(input: GrepInput, max_file_bytes: int) -> SearchRequest:
    try:
        return SearchRequest.build(
            input.pattern,
            ignore_case=input.ignore_case,
            max_results=input.max_results or DEFAULT_MAX[input.output],
            mode=input.output,
            context=input.context or 0,
            max_file_bytes=max_file_bytes,
        )
    except PatternError as exc:
        raise ToolError(str(exc)) from None


def _glob(text: str | None) -> PathGlob | None:
    if not text:
        return None
    try:
        return PathGlob.compile(text, rg_style=True)
    except GlobError as exc:
        raise ToolError(f"Invalid glob: {exc}") from None


def _report(
    outcome: SearchOutcome, input: GrepInput, ws: Workspace, folder: Path | None, searched: int
) -> str:
    """The hits as the output mode asks, or what was searched when nothing matched."""
    where = ws.display(folder) if folder is not None else "the workspace"
    if not outcome.hits:
        scope = f"{searched} file{'s' if searched != 1 else ''} in {where}"
        if input.glob:
            scope += f" matching '{input.glob}'"
        return _with_notes(f"No matches for /{input.pattern}/ in {scope}.", outcome, input, ws)
    if input.output == "files":
        body = [ws.display(hit.path) for hit in outcome.hits]
    elif input.output == "count":
        body = [f"{ws.display(hit.path)}:{hit.count}" for hit in outcome.hits]
        total = sum(hit.count for hit in outcome.hits)
        body.append(f"[{total} matching lines in {len(outcome.hits)} files]")
    else:
        body = _content_lines(outcome, input.context or 0, ws.display)
    return _with_notes(_fit("\n".join(body)), outcome, input, ws)


class _Listings:
    """The file list of the last searches (by folder and glob) of a workspace: the next
    such search starts rg on it while the workspace is walked again (see
    `run_search_listing`; a list that changed meanwhile is searched again)."""

    def __init__(self) -> None:
        self._lists: OrderedDict[_ListingKey, list[str]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: _ListingKey) -> list[str] | None:
        with self._lock:
            return self._lists.get(key)

    def put(self, key: _ListingKey, files: list[str]) -> None:
        with self._lock:
            self._lists[key] = files
            self._lists.move_to_end(key)
            while len(self._lists) > LISTINGS_KEPT:
                self._lists.popitem(last=False)


_ListingKey = tuple[str | None, str | None]
LISTINGS_KEPT = 8
_LISTINGS: Final = Attachment[_Listings]("grep file lists")


def _filter(
    view: LayeredView, folder: Path | None, glob: PathGlob | None, should_stop: Callable[[], bool]
) -> list[str]:
    files = view.file_strs(folder, should_stop=should_stop)
    if glob is None:
        return files
    relative = relative_to(view, folder)
    return [path for path in files if glob.matches(relative(path))]


def _content_lines(
    outcome: SearchOutcome, context: int, display: Callable[[str], str]
) -> list[str]:
    out: list[str] = []
    for hit in outcome.hits:
        name = display(hit.path)
        if context and hit.shown:
            for group in context_groups(hit.shown, [n for n, _ in hit.lines], context):
                if out:
                    out.append("--")
                for number, text, is_match in group:
                    sep = ":" if is_match else "-"
                    out.append(f"{name}{sep}{number}{sep} {cut_line(text, MAX_LINE)}")
        else:
            out.extend(f"{name}:{number}: {cut_line(text, MAX_LINE)}" for number, text in hit.lines)
    return out


def _fit(text: str) -> str:
    if len(text) <= OUTPUT_BUDGET:
        return text
    cut = text.rfind("\n", 0, OUTPUT_BUDGET)
    shown = text[: cut if cut > 0 else OUTPUT_BUDGET]
    return (
        shown + f"\n[output cut at {OUTPUT_BUDGET} characters; narrow the search with `path` or "
        "`glob`, or use output='files']"
    )


def _with_notes(text: str, outcome: SearchOutcome, input: GrepInput, ws: Workspace) -> str:
    notes: list[str] = []
    if outcome.truncated:
        unit = "matching lines" if input.output == "content" else "files"
        notes.append(
            f"[showing the first {input.max_results or DEFAULT_MAX[input.output]} {unit}; more "
            "matches exist. Narrow the search with `path` or `glob`, or raise `max_results`]"
        )
    if outcome.skipped_large:
        names = ", ".join(ws.display(p) for p in outcome.skipped_large[:5])
        notes.append(
            f"[skipped {len(outcome.skipped_large)} file(s) over the size limit: {names}; "
            "page through them with read_file]"
        )
    if outcome.cancelled:
        notes.append("[search cancelled; results are partial]")
    return "\n".join([text, *notes])
