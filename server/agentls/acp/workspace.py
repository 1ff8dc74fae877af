"""`AcpWorkspace`: one session folder (`cwd`) — its settings, rules, MCP servers and host.

ACP sessions name their folder; every session of the same folder shares one `AgentHost`
(and so one workspace, symbol index, shadow copy and MCP manager), as the LSP host shares
one per editor window. Settings come in layers as in the LSP (docs/lsp.md "Settings"): the
environment, the project's `.agentls.toml` / `[tool.agentls]`, and the user's `agentls`
section given to `agentls acp --settings`; project `.mcp.json`, Claude Code settings
files, rules and hooks apply the same way, and what in the project's own settings loosens
safety waits until the user trusts the workspace (`agentls.acp.trust`).

This module plugs the ACP client into the core's ports: the approver (permission
requests), `EditorFiles` (reads through `fs/read_text_file`), `HostTerminal` (client
terminals) and the `EditorPort` (updates and writing edits).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from acp.schema import EnvVariable, TerminalToolCallContent, ToolCallProgress

from agentls.acp.approvals import (
    AcpApprover,
    PreviewSource,
    ToolCallContent,
    approve_project_file,
)
from agentls.acp.client import ClientLink
from agentls.acp.delivery import deliver, write_disk
from agentls.acp.prompts import AcpPrompts
from agentls.acp.reporter import AcpReporter
from agentls.acp.trust import AcpTrust
from agentls.agent.permissions.approval import ApprovalRequest, PermissionMode
from agentls.host import AgentHost
from agentls.runtime.config_state import ConfigState
from agentls.runtime.ports import HostPorts
from agentls.runtime.runtime import start_runtime
from agentls.workspace import Workspace
from agentls.workspace.process import ProcessResult
from agentls.workspace.terminals import TerminalCommand

if TYPE_CHECKING:
    from agentls.agent.framework.context import RunMode
    from agentls.agent.safety import Safety
    from agentls.host import EditOutcome, RunHandle, RunReporter
    from agentls.mcp import McpManager
    from agentls.mcp.config import ServerSpec
    from agentls.runtime.delivery import Handoff
    from agentls.workspace.changes import ChangeSet

log = logging.getLogger(__name__)

SETTINGS_SOURCE = "agentls acp --settings"
T = TypeVar("T")


@dataclass
class AcpSession:
    """What the ACP host keeps about one session besides the core's `AgentSession`."""

    id: str
    workspace: AcpWorkspace
    delivery: RunMode
    """review or auto: when this session's edits are written (the `mode` setting)."""
    mode: PermissionMode
    commands_sent: bool = False
    sources: Sequence[McpManager] = ()
    """The client's MCP servers for this session (`session/new`'s `mcpServers`)."""
    mode_chosen: bool = False
    """The client set the mode (`session/set_mode`): the settings' mode no longer applies."""
    trust_noted: bool = False
    model: str | None = None
    """The model the client chose (the `model` config option); None: the settings'."""
    titled: bool = False
    """The client was told the session's title (`session_info_update`)."""
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    """Set by `session/cancel`, cleared when a prompt starts: stops the waits of a prompt
    that are not the run's (the trust question, the review at the end)."""

    @property
    def run_mode(self) -> RunMode:
        """Plan mode offers read-only tools only; otherwise the delivery mode."""
        return "plan" if self.mode == "plan" else self.delivery


class AcpWorkspace:
    """The settings, rules and agent host of one session folder."""

    def __init__(self, root: Path, link: ClientLink, editor_settings: object) -> None:
        self.root = root
        self.link = link
        self.config = ConfigState()
        self.sessions: dict[str, AcpSession] = {}
        self.reporters: dict[str, AcpReporter] = {}
        self.terminals: dict[str, str] = {}
        """tool_use_id → the client terminal its command runs in."""
        self.active_session: str | None = None
        """The session whose prompt runs now (asked about `.mcp.json` when it starts)."""
        self.problems: list[str] = []
        """Settings problems, shown in the next prompt's answer."""
        self.trust = AcpTrust(self)
        self.approver = AcpApprover(link, EditPreviews(self))
        workspace = Workspace([root])
        self.runtime, problems = start_runtime(
            self.config,
            workspace,
            self._ports(),
            editor=(editor_settings, SETTINGS_SOURCE),
            trust=self._first_trust,
        )
        self.host = AgentHost(workspace, AcpPort(self), self.runtime)
        self.problems = problems
        self._poll: asyncio.Task[None] | None = None

    def start_polling(self) -> None:
        """ACP clients report no disk changes: poll, so the index follows a `git checkout`."""
        from agentls.config.environment import environment
        from agentls.workspace.disk_poll import POLL_SECONDS, poll_disk

        if self._poll is None:
            interval = environment()[0].disk_poll_seconds or POLL_SECONDS
            self._poll = asyncio.get_running_loop().create_task(
                poll_disk(self.host.workspace, interval), name="agentls-acp-poll-disk"
            )

    # -- settings and rules ---------------------------------------------------------------

    def _first_trust(self) -> list[str]:
        """The trust step of `start_runtime`: ACP tells about held-back settings when a
        prompt runs (`AcpTrust.note`), so there is nothing to show now."""
        self.trust.refresh()
        return []

    def _ports(self) -> HostPorts:
        """What only the ACP client can do for the runtime: ask (`session/request_permission`,
        also about the project's `.mcp.json`), show hook problems in the next answer, and —
        when it offers them — read its files and run commands in its terminal."""
        return HostPorts(
            approver=lambda: self.approver,
            prompts=lambda: AcpPrompts(self),  # plan approval, questions (agentls.acp.prompts)
            hook_problem=self._hook_problem,
            approve_mcp_project_file=lambda request: approve_project_file(
                self.link, self.active_session, request
            ),
            editor_files=ClientFiles(self) if self.link.reads_files else None,
            terminal=ClientTerminal(self) if self.link.has_terminal else None,
        )

    @property
    def safety(self) -> Safety | None:
        """The loaded permission rules and hooks (None when they could not be loaded)."""
        return self.runtime.safety

    def reload_safety(self) -> list[str]:
        """Permission rules, hooks, secrets and the sandbox from the settings (as the LSP)."""
        return self.runtime.reload_safety()

    def refresh_trust(self) -> None:
        """Assess the workspace again (a new session starts): changed settings, or an answer
        given meanwhile (`agentls trust`), apply to the sessions created from now on."""
        if self.trust.refresh():
            self.settings_changed()

    def settings_changed(self) -> None:
        """The trust decision changed: reload the safety settings for new sessions."""
        self.problems += self.reload_safety()
        self.host.settings_changed()

    async def unless_cancelled(self, session_id: str, waiting: Awaitable[T]) -> T | None:
        """`waiting`'s result, or None when the session's prompt is cancelled first (the
        wait is then cancelled: an answer arriving later is dropped)."""
        session = self.sessions.get(session_id)
        task = asyncio.ensure_future(waiting)
        if session is None:
            return await task
        stop = asyncio.ensure_future(session.cancelled.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not task.done():
                task.cancel()
        if task.cancelled():
            return None
        return task.result()

    def _hook_problem(self, message: str) -> None:
        log.warning("hooks: %s", message)
        self.problems.append(f"hooks: {message}")

    # -- sessions -------------------------------------------------------------------------

    def initial_mode(self) -> PermissionMode:
        """A new session's permission mode: the settings' (plan when `mode` is plan)."""
        if self.config.current.mode == "plan":
            return "plan"
        if self.safety is None:
            return "default"
        try:
            return self.safety.check_mode()
        except Exception as exc:
            self.problems.append(str(exc))
            return "default"

    @property
    def bypass_enabled(self) -> bool:
        return self.safety is not None and self.safety.bypass_enabled

    def delivery(self) -> RunMode:
        return "auto" if self.config.current.mode == "auto" else "review"

    def session_sources(self, specs: Sequence[ServerSpec]) -> list[McpManager]:
        """The client's MCP servers for a session (`session/new`'s `mcpServers`)."""
        return self.runtime.session_mcp(specs)

    async def close(self) -> None:
        if self._poll is not None:
            self._poll.cancel()
        await self.host.shutdown()
        await self.runtime.aclose()

    # -- files ----------------------------------------------------------------------------

    def inside(self, path: Path) -> Path:
        """`path` resolved, if it is inside the workspace (`WorkspaceError` otherwise)."""
        return self.host.workspace.resolve(path)

    def layered_text(self, session_id: str, path: str | Path) -> str | None:
        """The text the session sees (staged > buffer > disk); None when there is none."""
        session = self.host.sessions.get(session_id)
        changes = session.changes if session is not None else None
        try:
            return self.host.workspace.load(self.inside(Path(path)), changes).text
        except Exception:
            return None

    async def current_text(self, session_id: str, path: Path) -> str | None:
        """What the user has now: the client's text (when it reads files), else the disk."""
        path = self.inside(path)
        if self.link.reads_files and path.is_file():
            text = await self.link.read_text_file(session_id, str(path))
            if text is not None:
                return text
        try:
            with path.open(encoding="utf-8", newline="") as handle:
                return handle.read()
        except FileNotFoundError:
            return None

    async def write_text(self, session_id: str, path: Path, text: str) -> None:
        """Through the client when it writes files, else to disk; the overlay follows."""
        path = self.inside(path)
        if self.link.writes_files:
            await self.link.write_text_file(session_id, str(path), text)
        else:
            await asyncio.to_thread(write_disk, path, text)
        workspace = self.host.workspace
        try:
            on_disk = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            on_disk = None
        if on_disk == text:
            workspace.close_buffer(path)
        else:
            workspace.set_buffer(path, text, None)  # the client holds it unsaved
        workspace.notify_disk_change(path)


class AcpPort:
    """The `EditorPort` of one workspace's host."""

    def __init__(self, workspace: AcpWorkspace) -> None:
        self.workspace = workspace

    def reporter(self, run: RunHandle) -> RunReporter:
        reporter = AcpReporter(self.workspace, run)
        self.workspace.reporters[run.session_id] = reporter
        return reporter

    async def deliver(
        self,
        session_id: str,
        changes: ChangeSet,
        how: Handoff,
        summary: str,
        *,
        final: bool = False,
    ) -> EditOutcome | None:
        return await deliver(self.workspace, session_id, changes, how, summary, final=final)


class ClientFiles:
    """`EditorFiles` through `fs/read_text_file` (the client's unsaved text)."""

    def __init__(self, workspace: AcpWorkspace) -> None:
        self.workspace = workspace

    async def read(self, session_id: str, path: Path) -> str | None:
        if not await asyncio.to_thread(path.is_file):  # a new file: clients answer an error
            return None
        text = await self.workspace.link.read_text_file(session_id, str(path))
        reporter = self.workspace.reporters.get(session_id)
        if text is not None and reporter is not None:
            reporter.pulled(path, text)
        return text


class ClientTerminal:
    """`HostTerminal` through `terminal/*`: the command runs where the user watches it.

    The terminal is embedded in the tool call at once, so the output streams in the
    client's panel; on timeout or cancel the command is killed, and the terminal is always
    released."""

    def __init__(self, workspace: AcpWorkspace) -> None:
        self.workspace = workspace

    async def run(self, command: TerminalCommand) -> ProcessResult:
        link = self.workspace.link
        session = command.session_id
        await link.flush()
        started = time.monotonic()
        try:
            created = await link.client.create_terminal(
                session_id=session,
                command=command.argv[0],
                args=list(command.argv[1:]),
                env=[EnvVariable(name=k, value=v) for k, v in command.env.items()],
                cwd=str(command.cwd),
                output_byte_limit=command.max_output_bytes,
            )
        except Exception as exc:
            raise OSError(f"terminal/create failed: {exc}") from exc
        terminal = created.terminal_id
        self.workspace.terminals[command.tool_use_id] = terminal
        link.send(
            session,
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=command.tool_use_id,
                content=[TerminalToolCallContent(type="terminal", terminal_id=terminal)],
            ),
        )
        try:
            return await self._wait(command, terminal, started)
        finally:
            await asyncio.shield(self._release(session, terminal))

    async def _wait(self, command: TerminalCommand, terminal: str, started: float) -> ProcessResult:
        client = self.workspace.link.client
        session = command.session_id
        timed_out = False
        try:
            await asyncio.wait_for(
                client.wait_for_terminal_exit(session_id=session, terminal_id=terminal),
                command.timeout,
            )
        except TimeoutError:
            timed_out = True
            await self._kill(session, terminal)
        except asyncio.CancelledError:
            await asyncio.shield(self._kill(session, terminal))
            raise
        output = await client.terminal_output(session_id=session, terminal_id=terminal)
        status = output.exit_status
        exit_code = status.exit_code if status is not None else None
        if exit_code is None and status is not None and status.signal:
            exit_code = -1
        return ProcessResult(
            argv=command.argv,
            exit_code=None if timed_out else exit_code,
            stdout=output.output,
            stderr="",
            duration=time.monotonic() - started,
            timed_out=timed_out,
            stdout_dropped=1 if output.truncated else 0,
            confinement="",
        )

    async def _kill(self, session: str, terminal: str) -> None:
        try:
            await self.workspace.link.client.kill_terminal(session_id=session, terminal_id=terminal)
        except Exception as exc:
            log.info("terminal/kill failed: %s", exc)

    async def _release(self, session: str, terminal: str) -> None:
        try:
            await self.workspace.link.client.release_terminal(
                session_id=session, terminal_id=terminal
            )
        except Exception as exc:
            log.info("terminal/release failed: %s", exc)


class EditPreviews(PreviewSource):
    """An approval prompt for an edit shows the file before and after it."""

    def __init__(self, workspace: AcpWorkspace) -> None:
        self.workspace = workspace

    def preview(self, request: ApprovalRequest) -> list[ToolCallContent]:
        from acp.schema import FileEditToolCallContent

        raw = request.input
        path = raw.get("path")
        if not isinstance(path, str) or request.tool not in ("edit_file", "write_file"):
            return []
        try:
            absolute = self.workspace.inside(self.workspace.root / path)
        except Exception:
            return []

        if self.workspace.host.workspace.services.secrets.match(absolute) is not None:
            return []  # a secret file's text is shown to no one, the user's panel included
        before = self.workspace.layered_text(request.session_id, absolute)
        after = _after(request.tool, raw, before)
        if after is None or after == before:
            return []
        return [
            FileEditToolCallContent(
                type="diff", path=str(absolute), old_text=before, new_text=after
            )
        ]


def _after(tool: str, raw: dict[str, object], before: str | None) -> str | None:
    if tool == "write_file":
        content = raw.get("content")
        return content if isinstance(content, str) else None
    old, new = raw.get("old_string"), raw.get("new_string")
    if before is None or not isinstance(old, str) or not isinstance(new, str) or old not in before:
        return None
    return before.replace(old, new) if raw.get("replace_all") else before.replace(old, new, 1)
