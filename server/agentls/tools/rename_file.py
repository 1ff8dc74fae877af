"""`rename_file`: move a file to a new path, staged in the session."""

from __future__ import annotations

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.errors import ToolError
from agentls.tools._files import (
    after_staging,
    file_state,
    refuse_folder_conflicts,
    write_problem,
)


class RenameFileInput(ToolInput):
    path: str = Field(description="The file to rename or move, relative to the workspace root.")
    new_path: str = Field(
        description="Its new path, relative to the workspace root; must not exist yet. "
        "Missing parent folders are created."
    )


class RenameFile(Tool[RenameFileInput]):
    name = "rename_file"
    input_model = RenameFileInput
    search_hint = "move mv rename file"
    usage = """
Rename or move one file within the workspace. Staged in this session and delivered to the
editor as a rename (so open editors follow it); later reads, listings and searches see the
file at its new path at once.

- The target must not exist; delete it first if you really mean to replace it.
- Only files, not folders. Content is kept as is; edit it afterwards at the new path.
- This does not update imports or references: search for them with grep and edit them.

Example: {"path": "<old path>", "new_path": "<new path>"}
"""

    def summary(self, input: RenameFileInput) -> str:
        return f"Renaming {input.path} → {input.new_path}"

    async def validate_input(self, input: RenameFileInput, ctx: ToolContext) -> str | None:
        return write_problem(ctx, input.path, input.new_path)

    async def call(self, input: RenameFileInput, ctx: ToolContext) -> str:
        ws = ctx.workspace
        old = ws.resolve(input.path)
        new = ws.resolve(input.new_path)
        old_display, new_display = ws.display(old), ws.display(new)
        if ws.is_dir(old, ctx.changes) and not ws.is_file(old, ctx.changes):
            raise ToolError(
                f"{old_display} is a directory; rename_file moves single files. Move the files "
                "in it one by one."
            )
        if not ws.is_file(old, ctx.changes):
            raise ws.missing_error(old, ctx.changes)
        if old == new:
            raise ToolError(f"{old_display} and {new_display} are the same path.")
        if ws.exists(new, ctx.changes):
            kind = "directory" if ws.is_dir(new, ctx.changes) else "file"
            raise ToolError(
                f"Cannot rename {old_display} to {new_display}: a {kind} already exists there. "
                "Choose another name, or delete it first if you mean to replace it."
            )
        refuse_folder_conflicts(ctx, new)
        state = file_state(ctx, old)
        ctx.changes.stage_rename(old, new, state.text, state.version)
        return await after_staging(
            ctx, f"Renamed {old_display} → {new_display} (staged in this session)."
        )
