"""`write_file`: create a file or replace its whole content, staged in the session."""

from __future__ import annotations

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.tools._files import (
    after_staging,
    count_lines,
    file_state,
    refuse_folder_conflicts,
    write_problem,
)
from agentls.workspace.textio import newline_of, with_newlines


class WriteFileInput(ToolInput):
    path: str = Field(
        description="File to create or overwrite, relative to the workspace root. Missing "
        "parent folders are created."
    )
    content: str = Field(description="The complete new content of the file.")


class WriteFile(Tool[WriteFileInput]):
    name = "write_file"
    input_model = WriteFileInput
    search_hint = "create new file save overwrite"
    usage = """
Create a new file, or replace the entire content of an existing one. The write is staged
in this session and delivered to the user's editor as an edit (nothing is written to disk
directly); later reads, listings and searches see it at once.

- Use it for new files. For changes to an existing file prefer edit_file: it is smaller,
  safer and easier for the user to review. Only overwrite a whole file when most of it
  changes, and read it first so nothing is lost.
- Missing parent folders are created. The path must be inside the workspace.
- When overwriting a file that uses CRLF line endings, the new content gets CRLF too.
- Do not create documentation or README files unless asked.

Example: {"path": "<path>", "content": "<the whole file>"}
"""

    def summary(self, input: WriteFileInput) -> str:
        return f"Writing {input.path}"

    async def validate_input(self, input: WriteFileInput, ctx: ToolContext) -> str | None:
        return write_problem(ctx, input.path)

    async def call(self, input: WriteFileInput, ctx: ToolContext) -> str:
        ws = ctx.workspace
        path = ws.resolve(input.path)
        display = ws.display(path)
        refuse_folder_conflicts(ctx, path)
        state = file_state(ctx, path)
        content = input.content
        note = ""
        if state.text is not None and newline_of(state.text) == "\r\n" and "\r\n" not in content:
            content = with_newlines(content, "\r\n")
            note = " Line endings converted to CRLF to match the file."
        if state.exists and state.text == content:
            return f"{display} already has exactly this content; nothing to change."
        ctx.changes.stage_write(path, content, state.text, state.version, existed=state.exists)
        if ctx.reads is not None:
            ctx.reads.record(path, content)  # what it wrote, it knows: edit_file may follow
        lines = count_lines(content)
        if not state.exists:
            return await after_staging(
                ctx,
                f"Created {display} ({lines} lines; staged in this session).{note}",
                path,
            )
        before = f"{count_lines(state.text)} lines" if state.text is not None else "not text"
        return await after_staging(
            ctx,
            f"Overwrote {display} (was {before}, now {lines} lines; staged in this session).{note}",
            path,
        )
