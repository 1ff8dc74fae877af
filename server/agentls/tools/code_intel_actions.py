"""`code_actions`: the quick fixes and refactorings a language server offers for a range
(organize imports, add a missing import, extract a function, implement an interface), and
applying one as a staged edit.

Without `apply` it lists them (read-only). With `apply` (a title from the list, or its
number) the action's `WorkspaceEdit` — resolved with `codeAction/resolve` when the server
sends it lazily, or captured from `workspace/applyEdit` while its command runs — is staged
in the session's change set like `rename_symbol`'s, never written to disk; the permission
rules see every file it changes (`paths`), and the after-edit checks run on them.
"""

from __future__ import annotations

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool
from agentls.codeintel.actions import choose
from agentls.codeintel.model import CodeAction, Pos, SourceFailed, Span
from agentls.codeintel.views import document_of, overlay_of
from agentls.errors import ToolError
from agentls.tools._code_intel import notes_block, position_problem, prepare
from agentls.tools._files import after_staging, write_problem
from agentls.tools.code_intel import _POSITION_HELP
from agentls.tools.code_intel_rename import PlannedEditInput, plan_edits
from agentls.workspace.textio import split_lines

MAX_LISTED = 40


class CodeActionsInput(PlannedEditInput):
    end_line: int | None = Field(
        default=None,
        ge=1,
        description="Last line of the range (1-based, inclusive): for refactorings of several "
        "lines such as extract function. Default: the symbol, or the whole `line`.",
    )
    kind: str | None = Field(
        default=None,
        description="Only actions of this kind: `quickfix`, `refactor`, `refactor.extract`, "
        "`source.organizeImports`, ... (default: all, with the source actions).",
    )
    apply: str | None = Field(
        default=None,
        description="The title of the action to apply (or its number), as the list showed it. "
        "Omit it to list the actions.",
    )


class CodeActions(Tool[CodeActionsInput]):
    name = "code_actions"
    input_model = CodeActionsInput
    search_hint = (
        "code actions quick fix refactor organize imports add import extract function "
        "implement interface"
    )
    usage = (
        """
List the quick fixes and refactorings a real language server offers at a position or for
a range of lines (organize imports, add a missing import, extract function, implement an
interface, fixes for the diagnostics there), and apply one as an edit staged in this
session like edit_file's (files on disk are not written).

- First call without `apply` to see the actions; then call again with `apply` set to the
  exact title (or its number) to stage that action's edit.
- For the fixes of a diagnostic give its `line` alone (the whole line is the range). For a
  refactoring of several lines (extract function) give `line` and `end_line`; `symbol`
  narrows the range to one name (extract constant, implement interface).
"""
        + _POSITION_HELP
        + """
Example: {"path": "<path>", "line": <line>, "apply": "<action title>"}
"""
    )

    def is_read_only(self, input: CodeActionsInput | None = None) -> bool:
        return input is not None and input.apply is None

    def is_concurrency_safe(self, input: CodeActionsInput) -> bool:
        return input.apply is None

    def summary(self, input: CodeActionsInput) -> str:
        if input.apply:
            return f"Applying `{input.apply}` in {input.path}"
        return f"Listing code actions in {input.path}"

    async def validate_input(self, input: CodeActionsInput, ctx: ToolContext) -> str | None:
        """With `apply`, the action's edit is computed here, before the permission step,
        so the rules see every file it changes."""
        problem = position_problem(ctx, input.path)
        if problem is None and input.apply is not None:
            problem = write_problem(ctx, input.path)
        if problem is not None or input.apply is None:
            return problem
        try:
            await self._compute(input, ctx)
        except ToolError as exc:
            return str(exc)
        return None

    async def call(self, input: CodeActionsInput, ctx: ToolContext) -> str:
        if input.apply is None:
            return await self._list(input, ctx)
        if input._plan is None:  # a hook replaced the input after validation
            raise ToolError(
                "The action's input was changed after validation (by a hook), so the files it "
                "changes were not checked against the permission rules. Call code_actions again."
            )
        title, source, notes = input._summary
        for item in input._plan:
            ctx.changes.stage_write(item.path, item.new_text, item.base_text, item.version)
        files = "\n".join(
            f"  {ctx.workspace.display(item.path)}: {item.count} change"
            + ("s" if item.count != 1 else "")
            for item in input._plan
        )
        head = (
            f"Applied `{title}` (source: {source}; staged in this session, delivered to the "
            f"user as one edit):\n{files}"
        )
        note_text = notes_block(notes)
        result = f"{head}\n{note_text}" if note_text else head
        return await after_staging(ctx, result, input._plan[0].path)

    async def _list(self, input: CodeActionsInput, ctx: ToolContext) -> str:
        span, where = _span(ctx, input)
        document = document_of(ctx.workspace, ctx.workspace.resolve(input.path), ctx.changes)
        overlay = overlay_of(ctx.workspace, ctx.changes)
        answer = await ctx.services.code_intel.code_actions(
            document, span, overlay, input.kind, None
        )
        notes = notes_block(answer.notes)
        if not answer.value:
            head = f"No code actions for {where} (source: {answer.source})."
            return f"{head}\n{notes}" if notes else head
        offered = [(i + 1, a) for i, a in enumerate(answer.value) if not a.disabled]
        hidden = len(answer.value) - len(offered)
        count = len(offered)
        plural = "s" if count != 1 else ""
        head = f"{count} code action{plural} for {where} (source: {answer.source}):"
        lines = [_line(number, a) for number, a in offered[:MAX_LISTED]]
        if count > MAX_LISTED:
            lines.append(f"[{count - MAX_LISTED} more not shown; give a narrower range or `kind`]")
        if hidden:
            lines.append(
                f"[{hidden} more the server offers elsewhere are not available for this range]"
            )
        lines.append("Apply one with `apply` set to its title.")
        return "\n".join([head, notes, *lines] if notes else [head, *lines])

    async def _compute(self, input: CodeActionsInput, ctx: ToolContext) -> None:
        assert input.apply is not None
        span, _ = _span(ctx, input)
        document = document_of(ctx.workspace, ctx.workspace.resolve(input.path), ctx.changes)
        overlay = overlay_of(ctx.workspace, ctx.changes)
        answer = await ctx.services.code_intel.code_actions(
            document, span, overlay, input.kind, input.apply
        )
        chosen = _applied(answer.value, input.apply)
        if chosen.edit is None or not chosen.edit.edits:
            why = chosen.unsupported or "it has no edit"
            raise ToolError(f"`{chosen.title}` cannot be applied here: {why}. Nothing was staged.")
        notes = list(answer.notes)
        if chosen.edit.skipped:
            notes.append("Not staged: " + "; ".join(chosen.edit.skipped))
        if chosen.unsupported:  # the edit is staged, the command that follows it did not run
            notes.append(f"Staged the action's edit only: {chosen.unsupported}.")
        input._plan = plan_edits(ctx, chosen.edit, f"`{chosen.title}`")
        input._summary = (chosen.title, answer.source, tuple(notes))


def _applied(actions: list[CodeAction], apply: str) -> CodeAction:
    """The action `apply` means (the source filled in its edit, or why it has none)."""
    try:
        return actions[choose(actions, apply)]
    except SourceFailed as exc:
        raise ToolError(str(exc)) from None


def _line(number: int, action: CodeAction) -> str:
    kind = f" [{action.kind}]" if action.kind else ""
    extra = " (preferred)" if action.preferred else ""
    fixed = " ".join("; ".join(action.diagnostics).split())
    fixes = f"\n     fixes: {fixed[:200]}" if fixed else ""
    return f"  {number}. {action.title}{kind}{extra}{fixes}"


def _span(ctx: ToolContext, input: CodeActionsInput) -> tuple[Span, str]:
    """The range the model means: the symbol (to `end_line` if given), or whole lines."""
    ws = ctx.workspace
    display = ws.display(ws.resolve(input.path))
    if input.symbol or input.character:
        query = prepare(ctx, input)
        start = query.target.pos
        end = Pos(start.line, start.character + len(query.target.name))
    else:
        text = ws.load(ws.resolve(input.path), ctx.changes).text
        lines = split_lines(text)
        if input.line > len(lines):
            raise ToolError(f"Line {input.line} is past the end of {display} ({len(lines)} lines).")
        start = Pos(input.line - 1, 0)
        end = Pos(input.line - 1, len(lines[input.line - 1]))
    if input.end_line is not None:
        text = ws.load(ws.resolve(input.path), ctx.changes).text
        lines = split_lines(text)
        if input.end_line < input.line or input.end_line > len(lines):
            raise ToolError(
                f"end_line must be between line ({input.line}) and the last line of {display} "
                f"({len(lines)})."
            )
        end = Pos(input.end_line - 1, len(lines[input.end_line - 1]))
        return Span(start, end), f"{display}:{input.line}-{input.end_line}"
    return Span(start, end), f"{display}:{input.line}"
