"""Background commands: `run_command` with `run_in_background`, then `bash_output` and
`kill_shell` (Claude Code's BashOutput and KillShell).

A background command goes through exactly the same path as a foreground one — the same
permission step (it was allowed before it starts), the shadow copy, the sandbox, the
scrubbed environment, the output caps — only it runs in a task instead of the model
waiting for it, for at most `BACKGROUND_TIMEOUT` seconds (or its own `timeout`). Its
output is collected when it ends (the process runner keeps head and tail); while it runs
`bash_output` says how long it has been running. Jobs belong to the workspace object and
are killed (their process group with them) by `kill_shell`, or by `close_jobs` when the
host closes the workspace.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field

from pydantic import Field

from agentls.agent.context import ToolContext
from agentls.agent.tool import Tool, ToolError, ToolInput, ToolOutput
from agentls.workspace.core import Attachment, Workspace

__all__ = ["BackgroundJobs", "BashOutput", "KillShell", "close_jobs", "jobs_of"]

BACKGROUND_TIMEOUT = 8 * 3600.0
MAX_JOBS = 20


@dataclass
class Job:
    id: str
    command: str
    task: asyncio.Task[ToolOutput]
    started: float = field(default_factory=time.monotonic)
    killed: bool = False
    read: bool = False


@dataclass
class BackgroundJobs:
    """The background commands of one workspace."""

    jobs: dict[str, Job] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def start(self, command: str, work: Awaitable[ToolOutput]) -> Job:
        running = [j for j in self.jobs.values() if not j.task.done()]
        if len(running) >= MAX_JOBS:
            raise ToolError(
                f"{MAX_JOBS} background commands are running; stop one with kill_shell first"
            )
        job = Job(f"bash_{next(self._ids)}", command, asyncio.ensure_future(work))
        self.jobs[job.id] = job
        return job

    async def close(self) -> None:
        tasks = [job.task for job in self.jobs.values()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        for task in tasks:  # retrieved, so a failure is not reported as never looked at
            if not task.cancelled():
                task.exception()


_JOBS: Attachment[BackgroundJobs] = Attachment("background commands")


def jobs_of(workspace: Workspace) -> BackgroundJobs:
    return workspace.attached(_JOBS, BackgroundJobs)


async def close_jobs(workspace: Workspace) -> None:
    """Kill every background command of the workspace (hosts call it when they close)."""
    await jobs_of(workspace).close()


def _find(ctx: ToolContext, job_id: str) -> Job:
    job = jobs_of(ctx.workspace).jobs.get(job_id.strip())
    if job is None:
        known = ", ".join(jobs_of(ctx.workspace).jobs) or "none"
        raise ToolError(f"No background command {job_id!r} (known: {known}).")
    return job


class BashOutputInput(ToolInput):
    bash_id: str = Field(min_length=1, description="The id run_command gave (e.g. bash_1).")
    filter: str | None = Field(
        default=None, description="Only output lines containing this text (plain text)."
    )


class BashOutput(Tool[BashOutputInput]):
    name = "bash_output"
    input_model = BashOutputInput
    usage = """Check a background command started by run_command with run_in_background:
whether it is still running and, once it has ended, its exit code and output.
Example: {"bash_id": "bash_1"}"""
    search_hint = "background command output status shell job"

    def is_read_only(self, input: BashOutputInput | None = None) -> bool:
        return True

    def summary(self, input: BashOutputInput) -> str:
        return f"Checking background command {input.bash_id}"

    async def call(self, input: BashOutputInput, ctx: ToolContext) -> ToolOutput:
        job = _find(ctx, input.bash_id)
        seconds = round(time.monotonic() - job.started)
        if not job.task.done():
            return ToolOutput(
                f"{job.id} is still running ({seconds} s): {job.command}\n"
                "Its output is available when it ends (or stop it with kill_shell)."
            )
        if job.task.cancelled():
            return ToolOutput(f"{job.id} was stopped (kill_shell): {job.command}")
        error = job.task.exception()
        if error is not None:
            return ToolOutput(f"{job.id} failed: {error}", is_error=True)
        output = job.task.result()
        text = str(output.content)
        if input.filter:
            text = "\n".join(line for line in text.splitlines() if input.filter in line)
        return ToolOutput(f"{job.id} has ended: {job.command}\n{text}", output.is_error)


class KillShellInput(ToolInput):
    shell_id: str = Field(min_length=1, description="The id run_command gave (e.g. bash_1).")


class KillShell(Tool[KillShellInput]):
    name = "kill_shell"
    input_model = KillShellInput
    usage = """Stop a background command started by run_command with run_in_background
(it and every process it started). Example: {"shell_id": "bash_1"}"""
    search_hint = "kill stop background command shell job server watcher"

    def is_read_only(self, input: KillShellInput | None = None) -> bool:
        return True  # stops the agent's own command; changes no file

    def summary(self, input: KillShellInput) -> str:
        return f"Stopping background command {input.shell_id}"

    async def call(self, input: KillShellInput, ctx: ToolContext) -> str:
        job = _find(ctx, input.shell_id)
        if job.task.done():
            return f"{job.id} had already ended."
        job.task.cancel()
        await asyncio.wait([job.task])  # its cancellation stops the whole process group
        job.killed = True
        return f"{job.id} is stopped: {job.command}"
