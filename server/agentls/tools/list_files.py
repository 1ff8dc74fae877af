"""`list_files`: files in the workspace (or a folder), optionally filtered by a glob."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.errors import ToolError
from agentls.tools._files import read_path_problem, relative_to
from agentls.workspace.globs import GlobError, PathGlob
from agentls.workspace.read_roots import resolve_readable

MAX_FILES = 500


class ListFilesInput(ToolInput):
    path: str | None = Field(
        default=None,
        description="Folder to list, relative to the workspace root (default: the whole "
        "workspace).",
    )
    pattern: str | None = Field(
        default=None,
        description="Glob relative to `path`, e.g. '**/*.py', '<folder>/**/test_*.ts', "
        "'*.{json,yaml}'. `*` stays within one folder; `**` spans folders.",
    )


class ListFiles(Tool[ListFilesInput]):
    name = "list_files"
    input_model = ListFilesInput
    max_result_chars = 40_000
    search_hint = "glob find files folder directory tree ls"
    usage = f"""
List files in the workspace, recursively, as workspace-relative paths (sorted), optionally
filtered by a glob pattern. Use it to discover project structure or to find files by name.

- `.gitignore`/`.ignore` rules apply, and dependency/build/VCS folders (node_modules, .venv,
  __pycache__, dist, build, target, .git, ...) are skipped unless you pass such a folder
  as `path` explicitly.
- `pattern` is a glob relative to `path`: `*.py` matches only files directly in `path`,
  `**/*.py` matches at any depth, `{{a,b}}` alternatives and `[abc]` classes work.
- Files you created, renamed or deleted in this session are reflected.
- At most {MAX_FILES} paths are returned; the output says how many more matched. Narrow
  with `path` or `pattern` then.
- To search file contents, use grep instead. Prefer this tool over shell find/ls.

Example: {{"path": "<folder>", "pattern": "**/*.<ext>"}}
"""

    def is_read_only(self, input: ListFilesInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: ListFilesInput) -> bool:
        return True

    def summary(self, input: ListFilesInput) -> str:
        where = input.path or "the workspace"
        if input.pattern:
            return f"Listing {input.pattern} in {where}"
        return f"Listing files in {where}"

    async def validate_input(self, input: ListFilesInput, ctx: ToolContext) -> str | None:
        return read_path_problem(ctx, input.path) if input.path else None

    async def call(self, input: ListFilesInput, ctx: ToolContext) -> str:
        ws = ctx.workspace
        folder = resolve_readable(ws, input.path) if input.path else None
        view = ws.view(ctx.changes)
        if folder is not None and not view.exists(folder):
            raise ws.missing_error(folder, ctx.changes)
        glob = None
        if input.pattern:
            try:
                glob = PathGlob.compile(input.pattern, rg_style=False)
            except GlobError as exc:
                raise ToolError(f"Invalid glob pattern: {exc}") from None
        files = await asyncio.to_thread(view.file_strs, folder, should_stop=ctx.cancelled.is_set)
        relative = relative_to(view, folder)
        matched = [p for p in files if glob is None or glob.matches(relative(p))]
        where = ws.display(folder) if folder is not None else "the workspace"
        if not matched:
            return self._nothing_found(input, files, relative, where)
        lines = [ws.display(p) for p in matched[:MAX_FILES]]
        if len(matched) > MAX_FILES:
            lines.append(
                f"[{len(matched) - MAX_FILES} more files not shown ({len(matched)} in total); "
                "narrow the listing with `path` or `pattern`]"
            )
        return "\n".join(lines)

    @staticmethod
    def _nothing_found(
        input: ListFilesInput, files: list[str], relative: Callable[[str], str], where: str
    ) -> str:
        if input.pattern is None:
            return f"No files found in {where}."
        message = f"No files in {where} match the pattern '{input.pattern}'."
        if "/" not in input.pattern:
            deep = PathGlob.compile("**/" + input.pattern, rg_style=False)
            count = sum(1 for p in files if deep.matches(relative(p)))
            if count:
                message += (
                    f" '{input.pattern}' only matches directly inside the folder; "
                    f"'**/{input.pattern}' would match {count} files in subfolders."
                )
        return message
