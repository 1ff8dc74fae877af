"""`notebook_edit`: replace, insert or delete one cell of a Jupyter notebook, staged.

The notebook is read as the session sees it (staged > the editor's notebook > disk),
edited with `nbformat`, validated, and staged like any write; the LSP layer delivers it
as cell edits to editors that sync notebooks (VS Code), else as a minimal text edit of the
`.ipynb` JSON (see `agentls.lsp.notebooks`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.errors import ToolError
from agentls.tools._files import after_staging, write_problem
from agentls.tools._notebook import (
    CellEdit,
    apply_edit,
    dumps,
    is_notebook,
    parse,
    render_cell,
    validate,
)

EditMode = Literal["replace", "insert", "delete"]
CellType = Literal["code", "markdown", "raw"]


class NotebookEditInput(ToolInput):
    path: str = Field(description="The .ipynb file, relative to the workspace root.")
    cell_id: str | None = Field(
        default=None,
        description='The cell\'s id, as read_file shows it (cell_id="…"). For insert: the '
        "new cell goes after this cell.",
    )
    cell_number: int | None = Field(
        default=None,
        ge=0,
        description="0-based cell index (read_file's cell_number), for notebooks without cell "
        "ids. For insert: the position the new cell takes.",
    )
    new_source: str = Field(
        default="",
        description="The cell's complete new source (replace, insert); ignored for delete.",
    )
    cell_type: CellType | None = Field(
        default=None,
        description="code, markdown or raw. Required for insert; for replace it changes the "
        "cell's type (default: keep it).",
    )
    edit_mode: EditMode = Field(
        default="replace", description="replace (default), insert or delete."
    )

    @model_validator(mode="after")
    def _one_cell_reference(self) -> NotebookEditInput:
        if self.cell_id is not None and self.cell_number is not None:
            raise ValueError("give cell_id or cell_number, not both")
        return self


class NotebookEdit(Tool[NotebookEditInput]):
    name = "notebook_edit"
    input_model = NotebookEditInput
    search_hint = "jupyter notebook ipynb cell edit insert delete"
    usage = """
Change one cell of a Jupyter notebook (.ipynb): replace its source, insert a new cell, or
delete it. Like edit_file, the change is staged in this session and shown to the user as
an editor edit; the notebook stays a valid nbformat file.

- Read the notebook with read_file first: it shows each cell's cell_id, cell_number
  (0-based), type, numbered source and outputs.
- Name the cell by `cell_id` (preferred) or `cell_number`.
- replace: `new_source` becomes the whole cell source (give the complete text, without
  read_file's line numbers); `cell_type` changes the type. A replaced code cell's outputs
  and execution count are cleared (they belonged to the old code).
- insert: `cell_type` is required; the new cell goes after `cell_id`, or at
  `cell_number`, or first when neither is given.
- delete: removes the cell.
- Use edit_file or write_file for other files; never edit .ipynb JSON with them.

Example: {"path": "<notebook>.ipynb", "cell_id": "<cell id>", "new_source": "<cell source>"}
"""

    def summary(self, input: NotebookEditInput) -> str:
        where = (
            f"cell {input.cell_id}"
            if input.cell_id is not None
            else f"cell {input.cell_number}"
            if input.cell_number is not None
            else "a new cell"
        )
        verb = {"replace": "Editing", "insert": "Inserting", "delete": "Deleting"}[input.edit_mode]
        return f"{verb} {where} of {input.path}"

    async def validate_input(self, input: NotebookEditInput, ctx: ToolContext) -> str | None:
        if not is_notebook(input.path):
            return (
                f"{input.path} is not a Jupyter notebook (.ipynb); use edit_file or write_file "
                "for other files"
            )
        return write_problem(ctx, input.path)

    async def call(self, input: NotebookEditInput, ctx: ToolContext) -> str:
        ws = ctx.workspace
        path = ws.resolve(input.path)
        display = ws.display(path)
        snap = ws.load(path, ctx.changes)
        notebook = parse(snap.text, display)
        edit = apply_edit(
            notebook,
            input.edit_mode,
            input.new_source,
            input.cell_type,
            input.cell_id,
            input.cell_number,
        )
        validate(notebook, display)
        new_text = dumps(notebook, snap.text)
        if new_text == snap.text:
            raise ToolError(f"The edit would not change {display}.")
        ctx.changes.stage_write(path, new_text, snap.text, snap.version)
        return await after_staging(ctx, _confirmation(display, edit, len(notebook.cells)))


def _confirmation(display: str, edit: CellEdit, total: int) -> str:
    where = f"cell_number {edit.index}"
    if edit.cell is not None and edit.cell.get("id"):
        where += f' (cell_id="{edit.cell["id"]}")'
    note = "; its outputs were cleared" if edit.outputs_cleared else ""
    head = (
        f"{edit.action} {where} of {display}{note}; the notebook now has {total} cells "
        "(staged in this session)."
    )
    if edit.cell is None:
        return head
    return f"{head}\n{render_cell(edit.cell, edit.index)}"
