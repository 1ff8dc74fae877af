"""Background commands: `run_command` with `run_in_background`, then `bash_output` and
`kill_shell` (Claude Code's BashOutput and KillShell).

A background command goes through exactly the same path as a foreground one — the same
permission step (it was allowed before it starts), the shadow copy, the sandbox, the
scrubbed environment, the output caps — only it runs in a task instead of the model
waiting for it, for at most `BACKGROUND_TIMEOUT` seconds (or its own `timeout`). Its
output is collected as it comes (`LiveOutput`): `bash_output` returns only what is new
since the last read, as Claude Code's BashOutput does, whole lines while the command runs
(a secret split across two reads is still redacted), with an optional regular `filter`
(RE2, linear time) whose non-matching lines are consumed. Jobs belong to the workspace
object and are killed (their process group with them) by `kill_shell`, by `close_jobs`
when a session ends (its own jobs) or when the host shuts down (all of them): no
background command outlives the server.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolError, ToolInput, ToolOutput
from agentls.workspace.core import Attachment, Workspace

__all__ = ["BackgroundJobs", "BashOutput", "KillShell", "LiveOutput", "close_jobs", "jobs_of"]

BACKGROUND_TIMEOUT = 8 * 3600.0
MAX_JOBS = 20


class _Stream:
    """One stream's unread bytes (capped: the oldest unread ones go first, counted)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.unread = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.unread += chunk
        excess = len(self.unread) - self.limit
        if excess > 0:
            del self.unread[:excess]
            self.dropped += excess

    def take(self, final: bool) -> tuple[str, int]:
        """The unread text up to its last newline (all of it when `final`), and how many
        bytes were dropped before it."""
        end = len(self.unread) if final else self.unread.rfind(b"\n") + 1
        taken = bytes(self.unread[:end])
        del self.unread[:end]
        dropped, self.dropped = self.dropped, 0
        return taken.decode("utf-8", errors="replace"), dropped


class LiveOutput:
    """A background command's output as it arrives, read once (`bash_output`)."""

    def __init__(self, limit: int) -> None:
        self.streams = {"stdout": _Stream(limit), "stderr": _Stream(limit)}
        self.transform: Callable[[str], str] = lambda text: text
        """Set by the run: shadow paths mapped back, secrets redacted."""
        self.note = ""
        """Said with the end (e.g. that it ran without the sandbox)."""
        self.ended = False
        self.exit_code: int | None = None
        self.timed_out = False
        self.timeout = 0.0

    def add(self, name: str, chunk: bytes) -> None:
        self.streams[name].add(chunk)

    def finish(self, exit_code: int | None, timed_out: bool, timeout: float) -> None:
        self.ended, self.exit_code, self.timed_out, self.timeout = (
            True,
            exit_code,
            timed_out,
            timeout,
        )

    def read(self, keep: Callable[[str], bool] | None = None) -> dict[str, str]:
        """What is new per stream (filtered lines only; the rest is consumed)."""
        found: dict[str, str] = {}
        for name, stream in self.streams.items():
            text, dropped = stream.take(self.ended)
            text = self.transform(text) if text else ""
            if keep is not None:
                text = "".join(line for line in text.splitlines(True) if keep(line))
            if dropped:
                text = f"[... {dropped} bytes of output dropped before this ...]\n{text}"
            found[name] = text.rstrip("\n")
        return found


@dataclass
class Job:
    id: str
    command: str
    task: asyncio.Task[ToolOutput]
    live: LiveOutput | None = None
    session_id: str = ""
    started: float = field(default_factory=time.monotonic)
    killed: bool = False


@dataclass
class BackgroundJobs:
    """The background commands of one workspace."""

    jobs: dict[str, Job] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def start(
        self,
        command: str,
        work: Awaitable[ToolOutput],
        live: LiveOutput | None = None,
        session_id: str = "",
    ) -> Job:
        running = [j for j in self.jobs.values() if not j.task.done()]
        if len(running) >= MAX_JOBS:
            if asyncio.iscoroutine(work):
                work.close()
            raise ToolError(
                f"{MAX_JOBS} background commands are running; stop one with kill_shell first"
            )
        task = asyncio.ensure_future(work)
        job = Job(f"bash_{next(self._ids)}", command, task, live, session_id)
        self.jobs[job.id] = job
        return job

    def close(self) -> None:
        """`Workspace.close`: cancel every job (each stops its process group as its task
        unwinds); `aclose` also waits for that."""
        for job in self.jobs.values():
            job.task.cancel()

    async def aclose(self, session_id: str | None = None) -> None:
        """Kill the jobs (of one session, or all) and wait until their groups are gone."""
        tasks = [
            job.task
            for job in self.jobs.values()
            if session_id is None or job.session_id == session_id
        ]
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


async def close_jobs(workspace: Workspace, session_id: str | None = None) -> None:
    """Kill the background commands of the workspace, or of one of its sessions (hosts
    call it when a session ends and when they shut down)."""
    await jobs_of(workspace).aclose(session_id)


def _find(ctx: ToolContext, job_id: str) -> Job:
    job = jobs_of(ctx.workspace).jobs.get(job_id.strip())
    if job is None:
        known = ", ".join(jobs_of(ctx.workspace).jobs) or "none"
        raise ToolError(f"No background command {job_id!r} (known: {known}).")
    return job


class BashOutputInput(ToolInput):
    bash_id: str = Field(min_length=1, description="The id run_command gave (e.g. bash_1).")
    filter: str | None = Field(
        default=None,
        max_length=1000,
        description="A regular expression: only new output lines matching it are returned "
        "(the others are consumed and not shown again), e.g. 'error|warning'.",
    )


class BashOutput(Tool[BashOutputInput]):
    name = "bash_output"
    input_model = BashOutputInput
    usage = """Read a background command started by run_command with run_in_background:
whether it is still running (or its exit code once it ended) and the output it printed
since your last bash_output call for it — each call returns only new output. `filter`
(a regular expression) keeps only the matching new lines.
Example: {"bash_id": "bash_1", "filter": "error|listening on"}"""
    search_hint = "background command output status shell job logs"

    def is_read_only(self, input: BashOutputInput | None = None) -> bool:
        return True

    def summary(self, input: BashOutputInput) -> str:
        return f"Checking background command {input.bash_id}"

    async def validate_input(self, input: BashOutputInput, ctx: ToolContext) -> str | None:
        if input.filter:
            try:
                _pattern(input.filter)
            except ValueError as exc:
                return f"`filter` {input.filter!r} is not a valid regular expression ({exc})"
        return None

    async def call(self, input: BashOutputInput, ctx: ToolContext) -> ToolOutput:
        job = _find(ctx, input.bash_id)
        keep = None
        if input.filter:
            pattern = _pattern(input.filter)
            keep = lambda line: pattern.search(line) is not None  # noqa: E731
        seconds = round(time.monotonic() - job.started)
        if job.task.done() and job.task.cancelled():
            return ToolOutput(f"{job.id} was stopped (kill_shell): {job.command}")
        if job.task.done() and (error := job.task.exception()) is not None:
            return ToolOutput(f"{job.id} failed: {error}", is_error=True)
        live = job.live
        if live is None or (job.task.done() and not live.ended):
            return _whole(job, keep)  # no live output (the editor's terminal ran it)
        status = (
            f"{job.id} is still running ({seconds} s): {job.command}"
            if not job.task.done()
            else f"{job.id} has ended: {job.command}\n{_end(live)}"
        )
        return ToolOutput(_with_output(status, live.read(keep)), job.task.done() and _failed(live))


def _pattern(text: str) -> Any:
    from agentls.config.regex import RegexGroupsError, compile_linear

    try:
        return compile_linear(text)
    except RegexGroupsError as exc:
        raise ValueError(str(exc)) from None


def _end(live: LiveOutput) -> str:
    if live.timed_out:
        line = f"Timed out after {live.timeout:g}s: it and every process it started were killed."
    else:
        line = f"Exit code: {live.exit_code}"
    return f"{live.note}\n{line}" if live.note else line


def _failed(live: LiveOutput) -> bool:
    return live.timed_out or live.exit_code != 0


def _with_output(status: str, output: dict[str, str]) -> str:
    lines = [status]
    for name in ("stdout", "stderr"):
        if output[name]:
            lines += [f"{name} (new):", output[name]]
    if not output["stdout"] and not output["stderr"]:
        lines.append("(no new output)")
    return "\n".join(lines)


def _whole(job: Job, keep: Callable[[str], bool] | None) -> ToolOutput:
    if not job.task.done():
        return ToolOutput(f"{job.id} is still running: {job.command}")
    output = job.task.result()
    text = str(output.content)
    if keep is not None:
        text = "\n".join(line for line in text.splitlines() if keep(line))
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
