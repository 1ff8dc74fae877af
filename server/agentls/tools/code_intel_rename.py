"""`rename_symbol`: a language server's rename, staged in the session like `edit_file`.

The server computes every edit (definition, calls, imports, aliases across files) against the
text the agent sees; the edits are applied to that text and staged per file, so the user
gets the whole rename as one reviewable `WorkspaceEdit` (or applied at once in auto mode,
with approval), exactly like the agent's other edits. Nothing is staged unless every file
can be: a rename that would touch a file outside the workspace, version-control metadata or
a file the agent may not read is refused whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, PrivateAttr, computed_field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool
from agentls.codeintel.model import FileEdit, Location, RenameResult
from agentls.codeintel.unconfirmed import may_be_incomplete, unconfirmed_matches
from agentls.codeintel.views import apply_changes
from agentls.errors import ToolError
from agentls.tools._code_intel import (
    LineReader,
    PositionInput,
    Query,
    notes_block,
    position_problem,
    prepare,
    what,
)
from agentls.tools._files import write_problem

_NAME = re.compile(r"^[^\W\d][\w$]*$|^\$[\w$]*$")


@dataclass(frozen=True)
class StagedFile:
    path: Path
    new_text: str
    base_text: str
    version: int | None
    count: int


class PlannedEditInput(PositionInput):
    """The input of a tool whose edit a language server plans (`rename_symbol`,
    `code_actions`): `validate_input` plans it once and keeps the plan here."""

    _plan: list[StagedFile] | None = PrivateAttr(default=None)
    _summary: tuple[str, str, tuple[str, ...]] = PrivateAttr(default=("", "", ()))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def paths(self) -> list[str]:
        """Every file the planned edit changes, once `validate_input` computed it: the
        permission policy reads `paths`, so rules on any of those files apply, not only on
        `path`. Not part of the model's input schema (a computed field cannot be given as
        input)."""
        return [str(item.path) for item in self._plan or []]


class RenameSymbolInput(PlannedEditInput):
    new_name: str = Field(description="The new name (an identifier).")
    force: bool = Field(
        default=False,
        description="Stage the rename even though occurrences of the old name that the "
        "language server did not confirm stay unchanged (listed in the refusal).",
    )


class RenameSymbol(Tool[RenameSymbolInput]):
    name = "rename_symbol"
    input_model = RenameSymbolInput
    search_hint = "rename refactor symbol variable function class method across files"
    usage = """
Rename the symbol at a position everywhere it is used — definition, calls, imports,
aliases, across files — using a real language server's rename. The change is staged in this
session like edit_file (the user reviews it as one edit); files on disk are not written.

- Position: `line` (1-based, as read_file shows it) plus `symbol`, the identifier as written
  on that line (`occurrence` for the n-th one), or `character` (1-based column).
- Prefer it over several edit_file calls for renames: it finds every reference and skips
  unrelated symbols with the same name, comments and strings.
- Refused when no language server covers the file (a rename by name could change unrelated
  code) and when it would touch files outside the workspace.
- In dynamic languages (Python, JavaScript, Ruby, PHP) the server renames only the uses it
  can resolve. When other uses of the old name (`.name` for a method, or an override's
  `def name`) would stay unchanged, nothing is staged and they are listed: rename them with
  edit_file too, or pass `force: true` to stage the server's rename anyway.

Example: {"path": "<path>", "line": <line>, "symbol": "<old name>", "new_name": "<new name>"}
"""

    def summary(self, input: RenameSymbolInput) -> str:
        return f"Renaming {input.symbol or 'a symbol'} to {input.new_name} in {input.path}"

    async def validate_input(self, input: RenameSymbolInput, ctx: ToolContext) -> str | None:
        """Checks the name and the path, then computes the rename: before the permission
        step, so the policy sees every file it would change (`input.paths`)."""
        if not _NAME.match(input.new_name):
            return (
                f"`{input.new_name}` is not an identifier; give the bare new name "
                "(letters, digits, underscores; not starting with a digit)."
            )
        problem = position_problem(ctx, input.path) or write_problem(ctx, input.path)
        if problem is not None:
            return problem
        try:
            await self._compute(input, ctx)
        except ToolError as exc:
            return str(exc)
        return None

    async def call(self, input: RenameSymbolInput, ctx: ToolContext) -> str:
        if input._plan is None:  # a hook replaced the input after validation
            planned = await self._compute(input, ctx)
            checked = ctx.workspace.resolve(input.path)
            if any(item.path != checked for item in planned):
                raise ToolError(
                    "The rename's input was changed after validation (by a hook), so the "
                    "files it changes were not checked against the permission rules. Call "
                    "rename_symbol again."
                )
        staged = input._plan or []
        what_text, source, notes = input._summary
        for item in staged:
            ctx.changes.stage_write(item.path, item.new_text, item.base_text, item.version)
        total = sum(item.count for item in staged)
        files = "\n".join(
            f"  {ctx.workspace.display(item.path)}: {item.count} change"
            + ("s" if item.count != 1 else "")
            for item in staged
        )
        head = (
            f"Renamed {what_text} to `{input.new_name}`: {total} change"
            f"{'s' if total != 1 else ''} in {len(staged)} file"
            f"{'s' if len(staged) != 1 else ''} (source: {source}; staged in this "
            "session, delivered to the user as one edit):"
        )
        note_text = notes_block(notes)
        return f"{head}\n{files}" + (f"\n{note_text}" if note_text else "")

    async def _compute(self, input: RenameSymbolInput, ctx: ToolContext) -> list[StagedFile]:
        query = prepare(ctx, input)
        if query.target.name == input.new_name:
            raise ToolError(f"{what(query)} is already named `{input.new_name}`.")
        answer = await ctx.services.code_intel.rename(
            query.document, query.target.pos, query.overlay, input.new_name
        )
        notes = list(answer.notes)
        if answer.value.skipped:
            notes.append("Not staged: " + "; ".join(answer.value.skipped))
        if may_be_incomplete(query.document, answer.source):
            notes.extend(await _left_unchanged(ctx, query, answer.value, input.force))
        input._plan = plan_edits(ctx, answer.value)
        input._summary = (what(query), answer.source, tuple(notes))
        return input._plan


MAX_LISTED = 40


async def _left_unchanged(
    ctx: ToolContext, query: Query, result: RenameResult, force: bool
) -> list[str]:
    """Occurrences of the old name the rename does not change: a refusal listing them, or
    with `force`, a note listing them."""
    changed = [Location(edit.path, change.span) for edit in result.edits for change in edit.changes]
    left = await unconfirmed_matches(
        ctx.workspace,
        query.document,
        query.target.pos,
        query.overlay,
        changed,
        sparse=len(changed) <= 1,  # the declaration alone: the server may not see every use
    )
    if not left.locations:
        return []
    reader = LineReader(ctx, query.overlay)
    lines = []
    for loc in left.locations[:MAX_LISTED]:
        text = (reader.line(loc.path, loc.span.start.line) or "").strip()
        lines.append(f"  {reader.display(loc.path)}:{loc.span.start.line + 1}  {text}")
    if len(left.locations) > MAX_LISTED:
        lines.append(f"  [{len(left.locations) - MAX_LISTED} more]")
    listing = "\n".join(lines)
    count = len(left.locations)
    if not force:
        raise ToolError(
            f"Not staged: the language server's rename would leave {count} occurrence"
            f"{'s' if count != 1 else ''} of `{left.name}` unchanged ({left.describe()}):\n"
            f"{listing}\nRenaming only part of them breaks the code. Rename them too (edit_file), "
            "or call rename_symbol again with `force: true` to stage the server's rename anyway."
        )
    return [f"Left unchanged (force): {left.describe()}:\n{listing}"]


def plan_edits(
    ctx: ToolContext, result: RenameResult, what: str = "The rename"
) -> list[StagedFile]:
    """Every file's new text, or a `ToolError` naming the files that may not change (also
    for a code action's edit)."""
    ws = ctx.workspace
    refused: list[str] = []
    for edit in result.edits:
        if not ws.contains(edit.path):
            refused.append(f"{edit.path} (outside the workspace)")
            continue
        problem = write_problem(ctx, str(edit.path))
        blocked = ctx.services.secrets.reading_blocked_by(edit.path)
        if problem is not None or blocked is not None:
            refused.append(f"{ws.display(edit.path)} ({problem or blocked})")
    if refused:
        raise ToolError(
            f"{what} would also change files that may not be edited: "
            + "; ".join(refused)
            + ". Nothing was staged. Change only code defined in the workspace, or edit the "
            "allowed files with edit_file."
        )
    return [_stage_one(ctx, edit) for edit in result.edits]


def _stage_one(ctx: ToolContext, edit: FileEdit) -> StagedFile:
    snapshot = ctx.workspace.load(edit.path, ctx.changes)
    new_text = apply_changes(snapshot.text, edit.changes)
    return StagedFile(edit.path, new_text, snapshot.text, snapshot.version, len(edit.changes))
