"""`delete_file`: delete one file, staged in the session."""

from __future__ import annotations

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.errors import ToolError
from agentls.tools._files import after_staging, file_state, write_problem


class DeleteFileInput(ToolInput):
    path: str = Field(description="The file to delete, relative to the workspace root.")


class DeleteFile(Tool[DeleteFileInput]):
    name = "delete_file"
    input_model = DeleteFileInput
    search_hint = "remove rm delete file"
    usage = """
Delete one file from the workspace. Staged in this session and delivered to the editor as
a file deletion the user can review and undo; later reads, listings and searches no longer
see the file.

- Only files, not folders. Deleting a file you created in this session simply drops it.
- Check first (grep) that nothing still imports or references the file.

Example: {"path": "<path>"}
"""

    def summary(self, input: DeleteFileInput) -> str:
        return f"Deleting {input.path}"

    async def validate_input(self, input: DeleteFileInput, ctx: ToolContext) -> str | None:
        return write_problem(ctx, input.path)

    async def call(self, input: DeleteFileInput, ctx: ToolContext) -> str:
        ws = ctx.workspace
        path = ws.resolve(input.path)
        display = ws.display(path)
        if not ws.is_file(path, ctx.changes):
            if ws.is_dir(path, ctx.changes):
                raise ToolError(
                    f"{display} is a directory; delete_file deletes single files. Delete the "
                    "files in it one by one."
                )
            raise ws.missing_error(path, ctx.changes)
        state = file_state(ctx, path)
        ctx.changes.stage_delete(path, state.text, state.version)
        return await after_staging(ctx, f"Deleted {display} (staged in this session).")
