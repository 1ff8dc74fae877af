"""The session's todo list: the agent's plan as a checklist (`todo_write`).

One list per session, replaced whole by each `todo_write` call. It is shown to the user
while the agent works (`$/progress` "3/7 · Running tests", the `todos` event, status, the
run views), saved with the session, and pinned into the history after a compaction so the
model keeps its plan when older turns are summarised.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentls.agent.protocol.events import TodoPayload, TodoStatus
from agentls.agent.protocol.messages import PINNED_TAG, TextBlockParam, text_block

PINNED_TODOS = "todos"
"""The `agentls-pinned` tag value of the todo block compaction pins."""

_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


class TodoItem(BaseModel):
    """One entry: what to do, its state, and the present-continuous form shown while it
    runs ("Running the tests")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    content: str = Field(
        min_length=1, max_length=500, description="The task, imperative: 'Run the tests'."
    )
    status: TodoStatus = Field(description="pending, in_progress or completed.")
    active_form: str = Field(
        min_length=1,
        max_length=500,
        description="The task as shown while it is in progress: 'Running the tests'.",
    )

    @field_validator("content", "active_form")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        text = " ".join(value.split())
        if not text:
            raise ValueError("must not be blank")
        return text


def todo_payloads(todos: Sequence[TodoItem]) -> list[TodoPayload]:
    return [_payload(t) for t in todos]


def _payload(todo: TodoItem) -> TodoPayload:
    return {"content": todo.content, "status": todo.status, "active_form": todo.active_form}


def parse_todos(data: object) -> list[TodoItem]:
    """Todos read back from a state file or a journal; entries that do not parse are dropped
    (a damaged list must not stop a session from resuming)."""
    if not isinstance(data, list):
        return []
    todos: list[TodoItem] = []
    for entry in data:
        try:
            todos.append(TodoItem.model_validate(entry))
        except ValueError:
            continue
    return todos


def current(todos: Sequence[TodoItem]) -> TodoItem | None:
    """The entry in progress (the first one, should the model mark several)."""
    return next((t for t in todos if t.status == "in_progress"), None)


def progress_line(todos: Sequence[TodoItem] | Sequence[TodoPayload]) -> str:
    """ "3/7 · Running tests": completed of all, and what is in progress ("" for no list)."""
    entries = [t if isinstance(t, dict) else _payload(t) for t in todos]
    if not entries:
        return ""
    done = sum(1 for t in entries if t["status"] == "completed")
    head = f"{done}/{len(entries)}"
    doing = next((t for t in entries if t["status"] == "in_progress"), None)
    if doing is not None:
        return f"{head} · {doing['active_form']}"
    return f"{head} · all done" if done == len(entries) else head


def progress_count(todos: Sequence[TodoPayload]) -> str:
    """ "3/7" (completed of all), or "" for no list."""
    done = sum(1 for t in todos if t["status"] == "completed")
    return f"{done}/{len(todos)}" if todos else ""


def render(todos: Sequence[TodoItem]) -> list[str]:
    """The list as checklist lines ("[x] Rename greet", "[~] Running the tests")."""
    return [
        f"{_MARKS[t.status]} {t.active_form if t.status == 'in_progress' else t.content}"
        for t in todos
    ]


def todos_block(todos: Sequence[TodoItem]) -> TextBlockParam | None:
    """The list as a pinned reminder (after a compaction), or None when there is none."""
    if not todos:
        return None
    lines = [
        f'<system-reminder {PINNED_TAG}="{PINNED_TODOS}">',
        "Your todo list (from todo_write), as it stands. Keep it current with todo_write:",
        *(f"- {line}" for line in render(todos)),
        "</system-reminder>",
    ]
    return text_block("\n".join(lines))
