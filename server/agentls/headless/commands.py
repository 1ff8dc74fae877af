"""`agentls run`, `ask`, `tools`, `tool`: the agent without an editor.

Each command starts `agentls serve` and drives it over stdio as an LSP client
(`ServerConnection`), so the CLI exercises exactly what an editor does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from rich.console import Console
from rich.markup import escape

from agentls.headless.client import ServerConnection, ServerError
from agentls.headless.edits import EditLedger, FileChange
from agentls.headless.mcp_options import StderrNotices, with_mcp
from agentls.headless.prompts import paused, plan_reviewer, question_prompter
from agentls.headless.ui import (
    LiveAnswer,
    RunView,
    checks_table,
    files_table,
    is_interactive,
    make_console,
    print_diff,
    usage_table,
)

if TYPE_CHECKING:
    from agentls.agent.protocol.results import RefusedEditPayload, RunPayload

Output = Literal["show", "apply", "diff", "patch"]
EXIT_CODES = {"completed": 0, "cancelled": 2}
"""Run status → exit code; every other status (failed, max_turns, refused) is 1."""
CANCELLED_BY_USER = "cancelled by the user"


@dataclass
class RunOptions:
    prompt: str
    workspace: Path
    mode: str | None = None
    session: str | None = None
    output: Output = "show"
    patch: Path | None = None
    json: bool = False
    allow: list[str] = field(default_factory=list)
    permission_mode: str | None = None
    allow_mcp: list[str] | None = None
    """`--allow-mcp`: the workspace's `.mcp.json` servers approved for this run."""
    env: Mapping[str, str] | None = None
    title: str | None = None
    emit_json: bool = True
    show_transcript: bool = True
    """With `json`: print the result (a caller that adds to it prints it itself)."""


WRITE_TOOLS = frozenset({"edit_file", "write_file", "rename_file", "delete_file"})
REFUSAL_MARKERS = ("approval", "denied", "not allowed", "permission")


def exit_code(result: RunPayload) -> int:
    if result.get("all_edits_refused"):
        return 1  # "completed", but nothing the run set out to change was allowed
    return EXIT_CODES.get(str(result.get("status")), 1)


async def refused_edits(conn: ServerConnection, view: RunView) -> list[RefusedEditPayload]:
    """The run's write calls that the permission policy refused, with the reason and the
    rule that would allow each (from the tool result the model got)."""
    refused: list[RefusedEditPayload] = []
    for tool_use_id in sorted(view.failed):
        name, summary = view.calls.get(tool_use_id, ("", ""))
        if name not in WRITE_TOOLS or view.session is None:
            continue
        try:
            out = await conn.command(
                "agentls.toolResult", {"session": view.session, "tool_use_id": tool_use_id}
            )
        except ServerError:
            continue
        reason = str(out.get("content") or "")
        if any(marker in reason.lower() for marker in REFUSAL_MARKERS):
            rule = re.search(r"`([^`]+\([^`]*\))`", reason)
            refused.append(
                {
                    "tool": name,
                    "summary": summary,
                    "reason": reason,
                    "rule": rule.group(1) if rule else name,
                }
            )
    return refused


def initialization_options(
    allow: list[str], permission_mode: str | None
) -> dict[str, object] | None:
    options: dict[str, object] = {}
    if allow:
        options["permissions"] = {"allow": list(allow)}
    if permission_mode:
        options["permissionMode"] = permission_mode
    return options or None


def check_workspace(path: Path) -> Path:
    if not path.is_dir():
        raise SystemExit(f"agentls: workspace {path} is not a folder")
    return path.resolve()


def _failed(message: str, session: str | None = None) -> RunPayload:
    return {
        "session": session,
        "status": "failed",
        "text": "",
        "edit": None,
        "usage": {},
        "error": message,
    }


def _cancelled(session: str | None = None) -> RunPayload:
    result = _failed(CANCELLED_BY_USER, session)
    result["status"] = "cancelled"
    return result


def _run_payload(result: object) -> RunPayload:
    """The server's run result (`agentls.agent.protocol.results.RunPayload`), checked for the
    fields the CLI relies on; anything else is a failed run that says what came back."""
    if isinstance(result, dict) and isinstance(result.get("status"), str):
        result.setdefault("usage", {})
        result.setdefault("text", "")
        return cast("RunPayload", result)
    return _failed(f"unexpected result from the server: {result!r}")


class _Interrupts:
    """Ctrl-C (and SIGTERM) while a run is in flight: the first cancels the run cleanly,
    the second kills the server."""

    def __init__(
        self, conn: ServerConnection, ledger: EditLedger, view: RunView | LiveAnswer
    ) -> None:
        self.conn = conn
        self.ledger = ledger
        self.view = view
        self.count = 0
        self.run: asyncio.Task[Any] | None = None
        self._canceller: asyncio.Task[None] | None = None

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.fire)

    def uninstall(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)

    def fire(self) -> None:
        self.count += 1
        # from now on nothing is written, whatever the server still sends
        self.ledger.refusing = CANCELLED_BY_USER
        if self.count == 1:
            self.view.note("Cancelling… (press Ctrl-C again to stop at once)")
            if self.run is not None:
                self._canceller = asyncio.get_running_loop().create_task(self._cancel())
            return
        self.view.note("Stopping the server.")
        self.conn.kill()
        if self.run is not None:
            self.run.cancel()

    async def _cancel(self) -> None:
        run = self.run
        assert run is not None
        while not run.done():
            with contextlib.suppress(ServerError):
                await self.conn.command("agentls.cancel", {})
            await asyncio.wait({run}, timeout=1.0)


def _approver(view: RunView) -> Any:
    """Approval prompts on a terminal: stop the spinner, ask, resume."""

    def approve(message: str, choices: list[str]) -> str | None:
        console = view.console
        with paused(view):
            console.print(f"[bold yellow]?[/bold yellow] {escape(message)}")
            for index, choice in enumerate(choices, 1):
                console.print(f"  {index}) {escape(choice)}")
            try:
                answer = console.input("choice [1]: ").strip() or "1"
            except (EOFError, KeyboardInterrupt):
                return None
        if answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1]
        return next((c for c in choices if c.lower().startswith(answer.lower())), None)

    return approve


def _text_prompt(view: RunView) -> Any:
    """Free-text questions (an MCP server asking for a value) on a terminal."""

    def ask_text(message: str, default: str | None) -> str | None:
        view.stop()
        console = view.console
        console.print(f"[bold yellow]?[/bold yellow] {escape(message)}")
        hint = f" [{default}]" if default else ""
        try:
            answer = console.input(f"answer{escape(hint)}: ")
        except (EOFError, KeyboardInterrupt):
            return None
        finally:
            if view.live:
                view._status = console.status(view._current, spinner="dots")
                view._status.start()
        return answer if answer.strip() or default is None else default

    return ask_text


async def run_agent(options: RunOptions, console: Console | None = None) -> tuple[int, RunPayload]:
    """Run one prompt end to end; returns (exit code, result object)."""
    workspace = check_workspace(options.workspace)
    diff_only = options.output == "diff"
    console = console or make_console(sys.stderr if diff_only else sys.stdout)
    view = RunView(console, quiet=options.json)
    ledger = EditLedger(workspace, apply=options.output == "apply")
    interactive = is_interactive(console) and sys.stdin.isatty() and not options.json
    conn = ServerConnection(
        workspace,
        env=options.env,
        ledger=ledger,
        listener=view,
        initialization_options=with_mcp(
            initialization_options(options.allow, options.permission_mode), options.allow_mcp
        ),
        approve=_approver(view) if interactive else None,
        ask_text=_text_prompt(view) if interactive else None,
        ask_questions=question_prompter(view) if interactive else None,
        review_plan=plan_reviewer(view) if interactive else None,
    )
    interrupts = _Interrupts(conn, ledger, view)
    interrupts.install()
    started = time.monotonic()
    view.start(options.title or options.prompt)
    ticker = asyncio.get_running_loop().create_task(view.tick())
    try:
        result = await _drive(conn, options, interrupts)
    finally:
        ticker.cancel()
        view.stop()
        interrupts.uninstall()
    elapsed = time.monotonic() - started
    diff = ledger.diff()
    result["diff"] = diff
    if options.patch is not None:
        options.patch.write_text(diff, encoding="utf-8")
    code = exit_code(result)
    if options.json:
        if not options.emit_json:
            return code, result
        sys.stdout.write(json.dumps(result, ensure_ascii=False, indent=2) + "\n")
        sys.stdout.flush()
        return code, result
    summarize(console, result, ledger, elapsed, view.tool_calls, options)
    if diff_only:
        sys.stdout.write(diff)
        sys.stdout.flush()
    return code, result


async def _drive(
    conn: ServerConnection, options: RunOptions, interrupts: _Interrupts
) -> RunPayload:
    try:
        await conn.start()
        if interrupts.count:
            return _cancelled()
        arguments: dict[str, object] = {"prompt": options.prompt, "wait": True}
        if options.mode:
            arguments["mode"] = options.mode
        if options.session:
            arguments["session"] = options.session
        interrupts.run = asyncio.get_running_loop().create_task(
            conn.command("agentls.run", arguments)
        )
        try:
            result = await interrupts.run
        except asyncio.CancelledError:
            return _cancelled(interrupts.view.session)
        except ServerError as exc:
            if interrupts.count:
                return _cancelled(interrupts.view.session)
            return _failed(str(exc), interrupts.view.session)
        payload = _run_payload(result)
        view = interrupts.view
        if isinstance(result, dict) and isinstance(view, RunView) and view.failed:
            refused = await refused_edits(conn, view)
            if refused:
                writes = [c for c in view.calls.values() if c[0] in WRITE_TOOLS]
                payload["refused_edits"] = refused
                payload["all_edits_refused"] = len(refused) == len(writes)
        return payload
    except ServerError as exc:
        if interrupts.count:
            return _cancelled(interrupts.view.session)
        return _failed(str(exc))
    finally:
        await conn.stop()


def summarize(
    console: Console,
    result: RunPayload,
    ledger: EditLedger,
    elapsed: float,
    tool_calls: int,
    options: RunOptions,
) -> None:
    """The end of a run: status, files, refusals, usage, the diff and what to do next."""
    status = str(result.get("status"))
    _print_status(console, result, status, elapsed, tool_calls)
    changes = ledger.file_changes()
    _print_changes(console, result, ledger, changes)
    _print_refused(console, result, options)
    _print_usage(console, result)
    _print_output(console, result, options)
    if changes and not ledger.apply and options.output == "show" and status != "cancelled":
        console.print(
            "[dim]nothing was written: "
            + escape(apply_hint(result.get("session")))
            + " writes these changes (without running the model again)[/dim]"
        )
    if result.get("transcript") and options.show_transcript:
        console.print(f"[dim]transcript: {escape(str(result['transcript']))}[/dim]")


def _print_status(
    console: Console, result: RunPayload, status: str, elapsed: float, tool_calls: int
) -> None:
    colour = {"completed": "green", "cancelled": "yellow"}.get(status, "red")
    console.print()
    line = f"[bold {colour}]{status}[/bold {colour}] in {elapsed:.1f}s · {tool_calls} tool call(s)"
    if result.get("session"):
        line += f" · session {result['session']}"
    console.print(line)
    if result.get("error") and status != "cancelled":
        console.print(f"[red]error:[/red] {escape(str(result['error']))}")


def _print_changes(
    console: Console, result: RunPayload, ledger: EditLedger, changes: list[FileChange]
) -> None:
    """The files the run changed, whether they were written, and why an edit was not."""
    if changes:
        state = "written" if ledger.apply else "not written: dry run"
        if ledger.apply and ledger.refusing:
            state = "not written: cancelled"
        console.print(files_table(changes, ledger.relative, state))
    if result.get("checks"):
        console.print(checks_table(list(result.get("checks") or []), ledger.relative))
    edit = result.get("edit")
    if isinstance(edit, dict):
        reason = edit.get("reason")
        if reason and reason not in ("dry run", CANCELLED_BY_USER):
            console.print(f"[yellow]edits:[/yellow] {escape(str(reason))}")
        if edit.get("conflicts"):
            console.print(f"[yellow]conflicts:[/yellow] {escape(', '.join(edit['conflicts']))}")


def _print_usage(console: Console, result: RunPayload) -> None:
    usage = result.get("usage")
    if isinstance(usage, dict) and usage:
        console.print(usage_table(usage))
        note = usage.get("cost_note")
        if note:
            console.print(f"[dim]cost n/a: {escape(str(note))}[/dim]")


def _print_output(console: Console, result: RunPayload, options: RunOptions) -> None:
    """The diff (shown or applied) or where the patch went."""
    diff = str(result.get("diff") or "")
    if options.output in ("show", "apply") and diff:
        console.print()
        print_diff(console, diff)
    if options.output == "patch" and options.patch is not None:
        console.print(f"patch written to {escape(str(options.patch))}")


def agentls_command() -> str:
    """How the user runs agentls from where they are: `agentls` when it is on PATH, else the
    path of this installation's script (e.g. `.venv/bin/agentls`, relative when shorter)."""
    script = Path(sys.executable).with_name("agentls")
    found = shutil.which("agentls")
    if found and Path(found).resolve() == script.resolve():
        return "agentls"
    try:
        relative = os.path.relpath(script)
    except ValueError:
        relative = str(script)
    return relative if len(relative) < len(str(script)) else str(script)


def apply_hint(session: object) -> str:
    """The command that writes a dry run's staged edits (`agentls apply SESSION`)."""
    return f"{agentls_command()} apply {session}" if session else "run again with --apply"


def _print_refused(console: Console, result: RunPayload, options: RunOptions) -> None:
    """Why the run's edits were refused, and the exact flag or rule that allows them."""
    refused = result.get("refused_edits") or []
    if not refused:
        return
    for item in refused:
        console.print(f"[red]refused:[/red] {escape(item['summary'])} — {escape(item['reason'])}")
    rules = sorted({item["rule"] for item in refused})
    tools = sorted({item["tool"] for item in refused})
    flags = " ".join(f"--allow {shlex.quote(rule)}" for rule in rules)
    console.print(
        "To allow these edits in a script, run again with "
        + escape(flags)
        + " (or --allow "
        + escape(" --allow ".join(tools))
        + " for any file, or --permission-mode acceptEdits); on a terminal you are asked."
    )
    if result.get("all_edits_refused"):
        console.print("[red]Every edit the run asked for was refused: exit code 1.[/red]")


# -- ask ---------------------------------------------------------------------------------


async def ask(
    prompt: str,
    workspace: Path,
    env: Mapping[str, str] | None = None,
    as_json: bool = False,
    allow_mcp: list[str] | None = None,
) -> int:
    workspace = check_workspace(workspace)
    console = make_console(sys.stdout)
    live = is_interactive(console) and not as_json
    view: RunView | LiveAnswer
    if live:
        # on a terminal: the answer is rendered once, live, as it streams
        view = LiveAnswer(console)
    else:
        # elsewhere: progress on stderr, the answer alone on stdout at the end
        view = RunView(make_console(sys.stderr), quiet=as_json)
        view.on_message = StderrNotices().on_message  # type: ignore[method-assign]
    ledger = EditLedger(workspace, apply=False)
    conn = ServerConnection(
        workspace,
        env=env,
        ledger=ledger,
        listener=view,
        initialization_options=with_mcp(None, allow_mcp),
    )
    interrupts = _Interrupts(conn, ledger, view)
    interrupts.install()
    if isinstance(view, LiveAnswer):
        view.start()
        ticker = None
    else:
        view.start(prompt)
        ticker = asyncio.get_running_loop().create_task(view.tick())
    try:
        result = await _drive_command(
            conn, "agentls.ask", {"prompt": prompt, "wait": True}, interrupts
        )
    finally:
        if ticker is not None:
            ticker.cancel()
        view.stop()
        interrupts.uninstall()
    if as_json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False, indent=2) + "\n")
        return exit_code(result)
    from rich.markdown import Markdown

    text = str(result.get("text") or "").strip()
    status = str(result.get("status"))
    if text and not live:
        console.print(Markdown(text))
    if status != "completed":
        err = make_console(sys.stderr)
        err.print(f"{status}" + (f": {result['error']}" if result.get("error") else ""))
    return exit_code(result)


async def _drive_command(
    conn: ServerConnection, name: str, argument: dict[str, object], interrupts: _Interrupts
) -> RunPayload:
    try:
        await conn.start()
        if interrupts.count:
            return _cancelled()
        interrupts.run = asyncio.get_running_loop().create_task(conn.command(name, argument))
        try:
            result = await interrupts.run
        except asyncio.CancelledError:
            return _cancelled()
        return _run_payload(result)
    except ServerError as exc:
        if interrupts.count:
            return _cancelled()
        return _failed(str(exc))
    finally:
        await conn.stop()


# -- tools -------------------------------------------------------------------------------


async def list_tools(
    workspace: Path,
    env: Mapping[str, str] | None = None,
    as_json: bool = False,
    mode: str = "review",
    allow_mcp: list[str] | None = None,
    deferred: bool = False,
) -> int:
    workspace = check_workspace(workspace)
    async with ServerConnection(
        workspace,
        env=env,
        listener=StderrNotices(),
        initialization_options=with_mcp(None, allow_mcp),
        index_on_demand=True,
    ) as conn:
        try:
            arguments = {"mode": mode, "deferred": deferred or not as_json}
            tools = await conn.command("agentls.tools", arguments)
        except ServerError as exc:
            sys.stderr.write(f"agentls: {exc}\n")
            return 1
    if as_json:
        sys.stdout.write(json.dumps(tools, ensure_ascii=False, indent=2) + "\n")
        return 0
    from rich.table import Table

    console = make_console(sys.stdout)
    table = Table(show_edge=False, title=f"{len(tools)} tools ({mode} mode)", title_justify="left")
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("description")
    for tool in tools:
        about = str(tool.get("description") or "")
        if not about and tool.get("type"):  # a server tool: its definition has no text
            about = f"Runs on the API's servers ({tool['type']})."
        description = first_sentence(about)
        if tool.get("defer_loading"):
            description = "(deferred: loaded with tool_search) " + description
        table.add_row(str(tool.get("name")), description)
    console.print(table)
    console.print(
        "[dim]agentls tools --json: the full definitions, exactly as the model gets them[/dim]"
    )
    return 0


async def list_commands(
    workspace: Path, env: Mapping[str, str] | None = None, as_json: bool = False
) -> int:
    """`agentls commands`: the custom commands (`agentls.commands`), and skipped files."""
    workspace = check_workspace(workspace)
    async with ServerConnection(workspace, env=env, index_on_demand=True) as conn:
        try:
            listed = await conn.command("agentls.commands", {})
        except ServerError as exc:
            sys.stderr.write(f"agentls: {exc}\n")
            return 1
    if as_json:
        sys.stdout.write(json.dumps(listed, ensure_ascii=False, indent=2) + "\n")
        return 0
    console = make_console(sys.stdout)
    for item in listed.get("commands", []):
        hint = f" {item['argument_hint']}" if item.get("argument_hint") else ""
        console.print(
            f"[bold]/{escape(item['name'])}[/bold]{escape(hint)}  {escape(item['description'])}"
        )
    if not listed.get("commands"):
        console.print("no custom commands (.claude/commands/*.md, ~/.claude/commands/*.md)")
    for problem in listed.get("problems", []):
        console.print(f"[yellow]![/yellow] {escape(problem)}")
    return 0


def first_sentence(text: str) -> str:
    """The description's first sentence (wrapped by the table), "…" when more follows."""
    flat = " ".join(text.split())
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z`(\"'])", flat)
    if match is None:
        return flat
    return flat[: match.start()] + " …"


async def run_tool(
    name: str,
    raw_input: str,
    workspace: Path,
    env: Mapping[str, str] | None = None,
    apply: bool = False,
    as_json: bool = False,
    allow_mcp: list[str] | None = None,
) -> int:
    from agentls.headless.reuse import parse_input, print_result

    workspace = check_workspace(workspace)
    tool_input = parse_input(raw_input)
    if tool_input is None:
        return 2
    ledger = EditLedger(workspace, apply=apply)
    async with ServerConnection(
        workspace,
        env=env,
        ledger=ledger,
        listener=StderrNotices(),
        initialization_options=with_mcp(None, allow_mcp),
        index_on_demand=True,
    ) as conn:
        try:
            result = await conn.command("agentls.tool", {"name": name, "input": tool_input})
            if not result.get("is_error"):
                # writes are staged in the direct-tool session: hand them over like a run's
                await conn.command("agentls.accept", {"session": "tool"})
        except ServerError as exc:
            sys.stderr.write(f"agentls: {exc}\n")
            return 1
    return print_result(result, ledger.diff(), apply=apply, as_json=as_json)
