"""Terminal output for headless runs, with `rich`.

On a terminal: a spinner showing the current tool summary, finished steps and the model's
text printed above it as they arrive. Elsewhere (CI logs, pipes): the same lines as plain
text, no spinner, no colour, no cursor movement.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.table import Table
from rich.text import Text

from agentls.headless.edits import FileChange, change_kind, line_counts

if TYPE_CHECKING:
    from agentls.agent.protocol.events import (
        EventPayload,
        TodoPayload,
        ToolFinishedPayload,
        ToolStartedPayload,
    )


def progress(todos: list[TodoPayload]) -> str:
    """ "3/7 · Running tests" (the same line the editors show)."""
    from agentls.agent.framework.todos import progress_line

    return progress_line(todos)


def todo_count(todos: list[TodoPayload]) -> str:
    """ "3/7", or "" without a list."""
    from agentls.agent.framework.todos import progress_count

    return progress_count(todos)


def make_console(stream: IO[str] | None = None) -> Console:
    stream = stream or sys.stdout
    interactive = stream.isatty()
    return Console(
        file=stream,
        force_terminal=interactive,
        no_color=not interactive or None,
        highlight=False,
        soft_wrap=not interactive,
        emoji=False,
    )


def is_interactive(console: Console) -> bool:
    return console.is_terminal and not console.is_dumb_terminal


class RunView:
    """A `Listener` that renders one run."""

    def __init__(self, console: Console, *, quiet: bool = False) -> None:
        self.console = console
        self.quiet = quiet
        self.live = is_interactive(console) and not quiet
        self._status: Status | None = None
        self._text = ""
        self._summaries: dict[str, str] = {}
        self._current = "Starting…"
        self.session: str | None = None
        self.started = time.monotonic()
        self.tool_calls = 0
        self.calls: dict[str, tuple[str, str]] = {}
        """tool_use_id → (tool name, summary) of every call."""
        self.failed: set[str] = set()
        """tool_use_ids of the calls that ended with an error."""
        self.todos: list[TodoPayload] = []
        """The agent's todo list as last shown."""

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, title: str) -> None:
        if self.quiet:
            return
        self.line(f"[bold]agentls[/bold] {escape(title)}", plain=f"agentls {title}")
        if self.live:
            self._status = self.console.status(self._current, spinner="dots")
            self._status.start()

    def stop(self) -> None:
        self._flush_text()
        if self._status is not None:
            self._status.stop()
            self._status = None

    async def tick(self) -> None:
        """Keep the spinner's elapsed time current (cancelled when the run ends)."""
        while self.live:
            await asyncio.sleep(1.0)
            self.set_status(self._current)

    def set_status(self, message: str) -> None:
        self._current = message
        if self._status is not None:
            elapsed = time.monotonic() - self.started
            self._status.update(f"{escape(message)} [dim]({elapsed:.0f}s)[/dim]")

    # -- output ------------------------------------------------------------------------------

    def line(self, markup: str, *, plain: str | None = None) -> None:
        if self.quiet:
            return
        if self.live:
            self.console.print(markup)
        else:
            self.console.print(Text(plain if plain is not None else Text.from_markup(markup).plain))
        self.console.file.flush()

    def note(self, message: str) -> None:
        self._flush_text()
        self.line(f"[yellow]![/yellow] {escape(message)}", plain=f"! {message}")

    def _flush_text(self, complete_only: bool = False) -> None:
        if not self._text:
            return
        if complete_only:
            head, sep, rest = self._text.rpartition("\n")
            if not sep:
                return
            chunk, self._text = head, rest
        else:
            chunk, self._text = self._text.rstrip("\n"), ""
        for text_line in chunk.split("\n"):
            self.line(escape(text_line), plain=text_line)

    # -- Listener ----------------------------------------------------------------------------

    def on_event(self, event: EventPayload) -> None:
        if event.get("session_id"):
            self.session = str(event["session_id"])
        if event["type"] == "text_delta":
            self._text += str(event.get("text") or "")
            self._flush_text(complete_only=True)
        elif event["type"] == "tool_started":
            self._tool_started(event)
        elif event["type"] == "tool_finished":
            self._tool_finished(event)
        elif event["type"] == "retrying":
            self.note(
                f"model request failed ({event.get('error')}); retry {event.get('attempt')} "
                f"in {float(event.get('delay_s') or 0):.1f}s"
            )
        elif event["type"] == "notice":
            self.note(str(event.get("message")))
        elif event["type"] == "todos":
            self._show_todos(event["todos"])
        elif event["type"] == "mode_changed":
            self._show_mode(str(event.get("mode")), event.get("permission_mode"))
        elif event["type"] == "turn_usage":
            self.set_status("Thinking…")
        elif event["type"] == "run_finished":
            self._flush_text()

    def _tool_started(self, event: ToolStartedPayload) -> None:
        self._flush_text()
        summary = str(event.get("summary") or event.get("name"))
        self._summaries[str(event.get("tool_use_id"))] = summary
        self.calls[str(event.get("tool_use_id"))] = (str(event.get("name")), summary)
        self.tool_calls += 1
        count = todo_count(self.todos)
        self.set_status(f"{count} · {summary}" if count else summary)
        if not self.live:
            self.line(f"→ {summary}")

    def _tool_finished(self, event: ToolFinishedPayload) -> None:
        summary = self._summaries.get(str(event.get("tool_use_id")), str(event.get("name")))
        ms = float(event.get("duration_ms") or 0)
        if event.get("is_error"):
            self.failed.add(str(event.get("tool_use_id")))
            self.line(
                f"[red]✗[/red] {escape(summary)} [dim]({ms:.0f} ms)[/dim]",
                plain=f"✗ {summary} ({ms:.0f} ms, failed)",
            )
        elif self.live:
            self.line(f"[green]✓[/green] {escape(summary)} [dim]({ms:.0f} ms)[/dim]")
        self.set_status("Thinking…")

    def _show_todos(self, todos: list[TodoPayload]) -> None:
        """The list, whenever it changes (a checklist above the spinner)."""
        self._flush_text()
        self.todos = list(todos)
        if not todos:
            self.line("[dim]Todo list cleared[/dim]", plain="Todo list cleared")
            return
        self.line(f"[bold]Todo[/bold] {escape(progress(todos))}", plain=f"Todo {progress(todos)}")
        for todo in todos:
            mark = {"completed": "[x]", "in_progress": "[~]"}.get(todo["status"], "[ ]")
            text = todo["active_form"] if todo["status"] == "in_progress" else todo["content"]
            style = {"completed": "dim", "in_progress": "bold"}.get(todo["status"], "")
            shown = f"[{style}]{escape(text)}[/{style}]" if style else escape(text)
            self.line(f"  {escape(mark)} {shown}", plain=f"  {mark} {text}")
        self.set_status(progress(todos))

    def _show_mode(self, mode: str, permission_mode: object) -> None:
        self._flush_text()
        if mode == "plan":
            self.note("Plan mode: the agent researches read-only, then shows you a plan.")
        else:
            edits = "auto-accepted edits" if mode == "auto" else "edits for review"
            self.note(f"Plan approved: the agent now makes the changes ({edits}).")

    def on_progress(self, kind: str, message: str) -> None:
        if kind == "report" and message:
            self.set_status(message)

    def on_message(self, kind: int, message: str) -> None:
        if kind != 2:  # warnings; errors come back in the result
            return
        if self.quiet:  # --json: stdout is the result, but the user still hears it
            sys.stderr.write(f"{message}\n")
            sys.stderr.flush()
        else:
            self.note(message)


def usage_table(usage: Mapping[str, object]) -> Table:
    """Tokens, and cost when the result has a figure for it ("n/a": no known price)."""
    table = Table(title="Token usage", title_justify="left", show_edge=False)
    names = [
        ("input", "input_tokens"),
        ("output", "output_tokens"),
        ("cache read", "cache_read_input_tokens"),
        ("cache write", "cache_creation_input_tokens"),
    ]
    for label, _ in names:
        table.add_column(label, justify="right")
    row = [f"{_count(usage.get(key)):,}" for _, key in names]
    if "cost_usd" in usage:
        cost = usage["cost_usd"]
        table.add_column("cost", justify="right")
        row.append(format_cost(cost))
    table.add_row(*row)
    return table


def format_cost(cost: object) -> str:
    """`$0.0123`, or `n/a` when the endpoint has no known price."""
    return f"${float(cost):.4f}" if isinstance(cost, int | float) else "n/a"


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0


def files_table(changes: list[FileChange], relative: Any, state: str) -> Table:
    table = Table(title=f"Files changed ({state})", title_justify="left", show_edge=False)
    table.add_column("file")
    table.add_column("change")
    table.add_column("+", justify="right")
    table.add_column("-", justify="right")
    for change in changes:
        added, removed = line_counts(change)
        name = relative(change.path)
        if change.renamed_from is not None:
            name = f"{relative(change.renamed_from)} → {name}"
        table.add_row(name, change_kind(change), str(added), str(removed))
    return table


def checks_table(checks: list[Any], relative: Any) -> Table:
    """The staged files checked before review (`checks.beforeReview`): one row per file."""
    table = Table(title="Checks before review", title_justify="left", show_edge=False)
    table.add_column("file")
    table.add_column("result")
    for check in checks:
        style = (
            "red" if check.get("new_errors") else "yellow" if not check.get("checked") else "green"
        )
        table.add_row(
            relative(Path(check["path"])), f"[{style}]{escape(str(check['summary']))}[/{style}]"
        )
    return table


def print_diff(console: Console, diff: str) -> None:
    if not diff:
        return
    if is_interactive(console):
        from rich.syntax import Syntax

        console.print(Syntax(diff, "diff", theme="ansi_dark", background_color="default"))
    else:
        console.file.write(diff)
        console.file.flush()


class LiveAnswer:
    """A `Listener` for `agentls ask` on a terminal: the answer rendered as Markdown while
    it streams, in one place, with the current step under it (no raw text first and the
    rendered answer again after)."""

    def __init__(self, console: Console) -> None:
        from rich.live import Live

        self.console = console
        self.text = ""
        self.step = "Thinking…"
        self.session: str | None = None
        self.tool_calls = 0
        self._live = Live(self._render(), console=console, refresh_per_second=8, transient=False)

    def _render(self, final: bool = False) -> Any:
        from rich.console import Group
        from rich.markdown import Markdown

        answer = Markdown(self.text) if self.text.strip() else Text("")
        if final:
            return answer
        return Group(answer, Text(f"… {self.step}", style="dim"))

    def start(self) -> None:
        self._live.start()

    def stop(self) -> None:
        self._live.update(self._render(final=True))
        self._live.stop()

    def on_event(self, event: EventPayload) -> None:
        if event.get("session_id"):
            self.session = str(event["session_id"])
        if event["type"] == "text_delta":
            self.text += event["text"]
        elif event["type"] == "tool_started":
            self.tool_calls += 1
            self.step = event["summary"] or event["name"]
        elif event["type"] in ("tool_finished", "turn_usage"):
            self.step = "Thinking…"
        elif event["type"] == "retrying":
            self.text = ""  # the failed attempt's text is discarded, as the server does
            self.step = f"model request failed ({event['error']}); retrying"
        else:
            return
        self._live.update(self._render())

    def note(self, message: str) -> None:
        self.step = message
        self._live.update(self._render())

    def on_progress(self, kind: str, message: str) -> None:
        return None

    def on_message(self, kind: int, message: str) -> None:
        return None
