"""The `run_command` tool: one shell command, gated by permissions, run in the sandbox.

Why the shadow by default: a command may write anything (builds, caches, generated files,
`rm`), and the user's tree must only change through reviewed edits. The shadow holds the
workspace with the session's staged edits and unsaved buffers, so the command sees what
the agent sees. Why the sandbox (`agentls.sandbox`): "runs in the shadow" alone only sets
the working directory — an allowed `pytest --junitxml=~/.bashrc` or a staged
`package.json` script could still write anywhere, read `~/.ssh` or reach the network.
In the sandbox the shadow copy is the only writable project tree, secrets are invisible
and the network is off unless the settings open it. Where no sandbox can run,
`sandbox.fallback.run_command` decides: refuse (the default) or ask first.

A config switch (`where="workspace"`) runs in the real tree, unsandboxed; then every call
asks the user unless an allow rule covers it (`CallRisk.asks`). A call with
`dangerously_disable_sandbox` always asks (no rule skips it), and
`sandbox.allowUnsandboxedCommands: false` forbids it. A sandboxed call is marked
`confined`, so a command that only reads (`ls`, `git status`; see
`agentls.agent.rules.readonly`) can run without asking.

Git works in the shadow against the real repository's history (`shadow_git`): the
repository is read-only to commands, and a command that would change it (`git commit`,
`git tag v1`, `git checkout main`) asks (unless an allow rule covers it) and, once
allowed, runs with the git folder writable but for its config and hooks.

Every run goes through the shared process runner (via `process_guard`, which also kills
descendants that left the process group): own process group killed as a whole on timeout
or cancel, head+tail capped output, an environment without the agent's credentials (by
name and, defensively, by value), no stdin.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import CallRisk, Tool, ToolError, ToolInput, ToolOutput
from agentls.agent.rules.readonly import git_reads_only
from agentls.agent.rules.shell import dequote, split_command, strip_wrappers
from agentls.config import RunCommandSettings
from agentls.tools._execution import confinement_for, execution_risk, plan_execution
from agentls.tools.background import LiveOutput
from agentls.workspace.process import Confinement, ProcessResult, ProcessStartError, scrub_env
from agentls.workspace.process_guard import run_guarded
from agentls.workspace.secrets import Redactor
from agentls.workspace.shadow import ShadowRegistry, ShadowWorkspace, shadow_for
from agentls.workspace.shadow_git import writes_refs
from agentls.workspace.terminals import HostTerminal, TerminalCommand
from agentls.workspace.toolchain import venv_env

__all__ = ["RunCommand", "RunCommandConfig", "RunCommandInput"]


@dataclass(frozen=True)
class RunCommandConfig:
    """`where`: "shadow" (default) or "workspace" (the user's real tree; always asks)."""

    where: Literal["shadow", "workspace"] = "shadow"
    timeout: float = 120.0
    max_timeout: float = 600.0
    max_output_bytes: int = 48 * 1024
    """Per stream; the first and last halves are kept."""
    kill_grace: float = 1.0
    redactor: Redactor = field(default_factory=Redactor.from_env)


class RunCommandInput(ToolInput):
    command: str = Field(min_length=1, description="The shell command line to run (bash).")
    timeout: float | None = Field(
        default=None,
        gt=0,
        le=600,
        description="Seconds before the command and all its children are killed "
        "(default 120, at most 600).",
    )
    description: str | None = Field(
        default=None,
        max_length=200,
        description="A short description of what the command does, shown to the user "
        "when asking for approval (e.g. 'Install dependencies').",
    )
    run_in_background: bool = Field(
        default=False,
        description="Start the command and return at once with an id (for dev servers, "
        "watchers, long builds); check it with bash_output, stop it with kill_shell. It "
        "runs in the same sandbox, for at most 8 hours (or `timeout` seconds).",
    )
    dangerously_disable_sandbox: bool = Field(
        default=False,
        description="Run outside the sandbox. Only after a command failed because of the "
        "sandbox (read-only file system, no network) and nothing else works; the user is "
        "always asked, and the settings may forbid it.",
    )


class RunCommand(Tool[RunCommandInput]):
    name = "run_command"
    usage = """\
Run a shell command (bash) and return its exit code and output (stdout and stderr,
capped: the start and end are kept when output is long).

Use it for what no dedicated tool does: building, package managers, project scripts,
git queries. Prefer the dedicated tools: read_file (not cat/head/tail), grep (not grep/rg),
list_files (not ls/find), edit_file/write_file (not sed/echo >), run_tests and lint.
The command runs in a sandbox, in a private copy of the workspace that includes your
staged edits; files it creates or changes there do NOT reach the user's files (make
changes with the edit tools). Only that copy, $HOME and /tmp are writable; the network
is off unless the user allowed some hosts. Most commands need the user's approval; if one
is denied, do not retry it.
Each part of a compound command (&&, ||, ;, |, $(...)) is checked on its own.
No interactive input is available (stdin is empty); pass flags like --yes instead.
Limits: killed after `timeout` seconds (default 120, at most 600) together with every
process it started.
Example: {"command": "npm run build", "description": "Build the project"}"""
    input_model = RunCommandInput
    search_hint = "shell bash command terminal execute script build npm make git"
    max_result_chars = 30_000

    def __init__(
        self, config: RunCommandConfig | None = None, *, shadows: ShadowRegistry | None = None
    ) -> None:
        self.config = config or RunCommandConfig()
        self._shadows = shadows

    @classmethod
    def from_settings(
        cls,
        settings: RunCommandSettings,
        redactor: Redactor,
        *,
        shadows: ShadowRegistry | None = None,
    ) -> RunCommand:
        """The tool as the `runCommand` settings say, redacting the agent's credentials."""
        config = RunCommandConfig(where=settings.where, timeout=settings.timeout, redactor=redactor)
        return cls(config, shadows=shadows)

    def summary(self, input: RunCommandInput) -> str:
        outside = " (outside the sandbox)" if input.dangerously_disable_sandbox else ""
        return f"Running{outside}: {input.description or _one_line(input.command)}"

    def always_ask(self, input: RunCommandInput | None = None) -> bool:
        """Read by the permission policy: outside the sandbox on the model's request, no
        allow rule skips the prompt."""
        return input is not None and input.dangerously_disable_sandbox

    async def assess(self, input: RunCommandInput, ctx: ToolContext) -> CallRisk:
        """Refused (or asked) where the sandbox should run but cannot; in the real tree,
        asked unless an allow rule covers it; `confined` when it runs sandboxed."""
        if self.config.where == "workspace":
            return CallRisk.asks(
                "the command runs in your real workspace, without the sandbox "
                '(runCommand.where = "workspace")'
            )
        risk = execution_risk(
            self.name,
            ctx,
            command=input.command,
            unsandboxed_requested=input.dangerously_disable_sandbox,
        )
        if risk.needs.kind != "skip":
            return risk
        plan = plan_execution(
            self.name,
            ctx,
            command=input.command,
            unsandboxed_requested=input.dangerously_disable_sandbox,
        )
        changes = git_change(input.command)
        if changes is not None:
            return CallRisk.asks(
                f"`{changes}` changes the repository (refs, HEAD or history), "
                "which is otherwise read-only to commands",
                confined=plan.placement.sandboxed,
            )
        return CallRisk(confined=plan.placement.sandboxed)

    async def call(self, input: RunCommandInput, ctx: ToolContext) -> ToolOutput:
        if input.run_in_background:
            return self._start_background(input, ctx)
        return await self._execute(input, ctx)

    async def _execute(
        self, input: RunCommandInput, ctx: ToolContext, live: LiveOutput | None = None
    ) -> ToolOutput:
        """The run itself, foreground or background (`live`: the job's output as it comes)."""
        roots = list(ctx.workspace.roots)
        if not roots:
            raise ToolError("The workspace has no root folder to run the command in.")
        if self.config.where != "shadow":
            terminal = ctx.services.terminal
            if terminal is not None:
                return await self._run_in_terminal(terminal, input, ctx, Path(roots[0]))
            note = "Ran WITHOUT the sandbox, in the real workspace (runCommand.where)."
            return await self._run(input, ctx, Path(roots[0]), None, None, note, live=live)
        with shadow_for(ctx, self._shadows).in_use() as shadow:
            await shadow.sync(ctx.changes)
            git_writes = git_change(input.command) is not None  # allowed by now
            git = await asyncio.to_thread(shadow.prepare_git)
            if git is not None and git_writes:
                await asyncio.to_thread(git.migrate_objects)
            cwd = shadow.shadow_root()
            box = confinement_for(
                self.name,
                ctx,
                shadow,
                cwd,
                command=input.command,
                unsandboxed_requested=input.dangerously_disable_sandbox,
                git_writes=git_writes,
            )
            note = ""
            if box is None:
                plan = plan_execution(
                    self.name,
                    ctx,
                    command=input.command,
                    unsandboxed_requested=input.dangerously_disable_sandbox,
                )
                note = f"Ran WITHOUT the sandbox: {plan.placement.why_not}."
            return await self._run(input, ctx, cwd, shadow, box, note, git_writes, live)

    def _start_background(self, input: RunCommandInput, ctx: ToolContext) -> ToolOutput:
        """The same run as a foreground call, in a task (it was allowed already)."""
        from agentls.tools.background import BACKGROUND_TIMEOUT, jobs_of

        update = {"run_in_background": False, "timeout": input.timeout or BACKGROUND_TIMEOUT}
        foreground = input.model_copy(update=update)
        live = LiveOutput(self.config.max_output_bytes)
        work = self._execute(foreground, ctx, live)
        job = jobs_of(ctx.workspace).start(input.command, work, live, ctx.session_id)
        return ToolOutput(
            f"Started in the background as {job.id}: {input.command}\n"
            f'Check it with bash_output ({{"bash_id": "{job.id}"}}); stop it with '
            "kill_shell."
        )

    async def _run(
        self,
        input: RunCommandInput,
        ctx: ToolContext,
        cwd: Path,
        shadow: ShadowWorkspace | None,
        box: Confinement | None,
        note: str,
        git_writes: bool = False,
        live: LiveOutput | None = None,
    ) -> ToolOutput:
        env = self.config.redactor.scrub_env(scrub_env())
        env.update(self.config.redactor.scrub_env(ctx.services.environment))
        env.update(venv_env(list(ctx.workspace.roots)))
        map_output = _identity
        if shadow is not None:
            env.update(shadow.python_env())
            env.update(shadow.git_env(writable=git_writes))
            map_output = shadow.map_output
        timeout = input.timeout or self.config.timeout
        if input.timeout is None or input.timeout <= self.config.max_timeout:
            timeout = min(timeout, self.config.max_timeout)  # a background run may be longer
        ctx.report_progress(self.summary(input))
        if live is not None:  # what bash_output shows: shadow paths mapped, secrets redacted
            redact = self.config.redactor.redact
            live.transform = lambda text: redact(map_output(text))
            live.note = note
        try:
            result = await run_guarded(
                [_shell(), "-c", input.command],
                cwd=cwd,
                env=env,
                inherit_env=False,
                timeout=timeout,
                max_output_bytes=self.config.max_output_bytes,
                kill_grace=self.config.kill_grace,
                confinement=box,
                on_output=live.add if live is not None else None,
            )
        except ProcessStartError as exc:
            raise ToolError(f"Could not start the shell: {exc}") from exc
        if live is not None:
            live.finish(result.exit_code, result.timed_out, timeout)
        text = map_output(_format(result, timeout))
        if note:
            text = f"{note}\n{text}"
        elif not result.ok and _SANDBOX_SIGNS.search(text):
            text += "\n" + _SANDBOX_HINT
        return ToolOutput(self.config.redactor.redact(text), is_error=not result.ok)

    async def _run_in_terminal(
        self, terminal: HostTerminal, input: RunCommandInput, ctx: ToolContext, cwd: Path
    ) -> ToolOutput:
        """In the editor's terminal, where the user watches it (see
        `agentls.workspace.terminals`: only for commands that run in the real tree)."""
        timeout = min(input.timeout or self.config.timeout, self.config.max_timeout)
        ctx.report_progress(self.summary(input))
        command = TerminalCommand(
            session_id=ctx.session_id,
            tool_use_id=ctx.tool_use_id,
            command=input.command,
            argv=(_shell(), "-c", input.command),
            cwd=cwd,
            timeout=timeout,
            max_output_bytes=self.config.max_output_bytes,
            env=venv_env(list(ctx.workspace.roots)),
        )
        try:
            result = await terminal.run(command)
        except OSError as exc:
            raise ToolError(f"The editor's terminal could not run the command: {exc}") from exc
        note = "Ran in the editor's terminal, WITHOUT the sandbox, in the real workspace."
        text = f"{note}\n{_format(result, timeout)}"
        return ToolOutput(self.config.redactor.redact(text), is_error=not result.ok)


def git_change(command: str) -> str | None:
    """The first part of a command line that would change the repository (a git
    subcommand that writes, not used to list: `git branch` lists, `git branch x` creates);
    None when no part does."""
    for part in split_command(command).parts:
        words = strip_wrappers(part.words) or list(part.words)
        if words and dequote(words[0]).rsplit("/", 1)[-1] == "git":
            if git_reads_only(words[1:]):
                continue
            found = writes_refs([[dequote(w) for w in words]])
            if found is not None:
                return found
    return None


_SANDBOX_SIGNS = re.compile(
    r"Read-only file system|Network is unreachable|Temporary failure in name resolution|"
    r"Could not resolve host|Name or service not known|Resource temporarily unavailable"
)
_SANDBOX_HINT = (
    "(Note: the command ran in the sandbox: only the workspace copy, $HOME and /tmp are "
    "writable, the real workspace and credentials are hidden, the repository's .git is "
    "read-only (git queries work; commits, branches, tags and config changes do not), the "
    "network is off unless the user allowed hosts, and processes and memory are limited. "
    "Work within that; ask the user if the task needs more.)"
)


def _format(result: ProcessResult, timeout: float) -> str:
    if result.timed_out:
        head = (
            f"Timed out after {timeout:g}s: the command and every process it started were "
            "killed. Output so far:"
        )
    else:
        head = f"Exit code: {result.exit_code}"
    lines = [head]
    stdout, stderr = result.stdout.rstrip("\n"), result.stderr.rstrip("\n")
    if stdout:
        lines += ["stdout:", stdout]
    if stderr:
        lines += ["stderr:", stderr]
    if not stdout and not stderr:
        lines.append("(no output)")
    return "\n".join(lines)


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def _identity(text: str) -> str:
    return text


def _one_line(command: str) -> str:
    line = " ".join(command.split())
    return line if len(line) <= 80 else line[:79] + "…"
