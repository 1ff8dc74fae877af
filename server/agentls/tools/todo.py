"""`todo_write`: the agent's plan as a checklist the user watches (Claude Code's TodoWrite).

Each call replaces the session's whole list (`agentls.agent.framework.todos`). The list changes no
file, so the call is read-only (allowed in plan mode, never asked for).
"""

from __future__ import annotations

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.todos import TodoItem, progress_line
from agentls.agent.framework.tool import Tool, ToolInput

MAX_TODOS = 100

USAGE = """Create and update your todo list for the current task. The user sees it while \
you work (in the editor's progress and run view) and it keeps you on track. Each call \
replaces the whole list: send every item, with its current status.

Use it:
- For multi-step work: three or more distinct steps, or a task that needs planning.
- When the user gives several things to do (a numbered or comma-separated list).
- Right after new instructions arrive: capture them as items.
- As you work: mark an item in_progress before you start on it and completed as soon as it \
is done. Do not batch completions up.

Do not use it:
- For a single, straightforward step, or work you can finish in one or two trivial steps.
- For purely conversational or informational requests.

Rules:
- Exactly one item in_progress while you are working.
- Mark an item completed only when it is fully done (tests pass, nothing left). After an \
error or a blocker keep it in_progress and add an item for what must be resolved.
- Each item has `content`, imperative ("Run the tests"), and `active_form`, present \
continuous, shown while it runs ("Running the tests").
- Remove items that are no longer relevant.

Example: {"todos": [{"content": "Add a --verbose flag", "status": "completed", "active_form": \
"Adding a --verbose flag"}, {"content": "Update the tests", "status": "in_progress", \
"active_form": "Updating the tests"}, {"content": "Run the test suite", "status": "pending", \
"active_form": "Running the test suite"}]}"""


class TodoWriteInput(ToolInput):
    todos: list[TodoItem] = Field(
        max_length=MAX_TODOS, description="The whole, updated list (an empty list clears it)."
    )


class TodoWrite(Tool[TodoWriteInput]):
    name = "todo_write"
    input_model = TodoWriteInput
    usage = USAGE
    search_hint = "todo list plan checklist tasks progress track steps"

    def is_read_only(self, input: TodoWriteInput | None = None) -> bool:
        return True

    def summary(self, input: TodoWriteInput) -> str:
        line = progress_line(input.todos)
        return f"Updating the todo list ({line})" if line else "Clearing the todo list"

    async def call(self, input: TodoWriteInput, ctx: ToolContext) -> str:
        ctx.run.set_todos(input.todos)
        if not input.todos:
            return "The todo list is cleared."
        lines = [f"Todo list updated: {progress_line(input.todos)}."]
        doing = sum(1 for t in input.todos if t.status == "in_progress")
        if doing > 1:
            lines.append(f"Note: {doing} items are in_progress; keep exactly one in progress.")
        elif doing == 0 and any(t.status == "pending" for t in input.todos):
            lines.append("Mark the item you work on next as in_progress.")
        lines.append("Keep the list current as you work.")
        return " ".join(lines)
