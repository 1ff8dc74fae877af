"""The one process runner for everything agentls executes (commands, tests, linters, hooks).

Why a runner of our own rather than `asyncio.create_subprocess_exec` at each call site:
every external process the agent starts must (a) have a timeout, (b) not flood memory or
the model's context with output, (c) die completely — children and grandchildren too —
when it times out, the user cancels, or agentls itself dies, (d) never see the user's API
credentials, and (e) run inside the sandbox when the caller gives one (`confinement`, see
`agentls.sandbox`). Each process therefore starts in its own session/process group,
output is read in chunks into head+tail buffers, and on timeout the whole group gets the
stop signals (by default SIGTERM), a short grace, then SIGKILL; on cancellation the grace
is cut to `CANCEL_GRACE` so a cancel lands at once.

Without a confinement, on Linux the command runs under `_supervisor.py` (death signal +
subreaper), so its tree dies with agentls too; the sandbox's PID namespace does the same
for confined runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import os
import shutil
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentls.errors import WorkspaceError

__all__ = [
    "CANCEL_GRACE",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_TIMEOUT",
    "NEVER_PASSED",
    "Confinement",
    "Launch",
    "ProcessCancelled",
    "ProcessResult",
    "ProcessStartError",
    "group_alive",
    "run_process",
    "scrub_env",
]

DEFAULT_TIMEOUT = 300.0
DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024
DEFAULT_KILL_GRACE = 1.0
CANCEL_GRACE = 0.2
"""On cancel: how long the first stop signal gets before SIGKILL (the user is waiting)."""
_DRAIN_TIMEOUT = 2.0
_CANCEL_DRAIN_TIMEOUT = 0.1
_POLL_INTERVAL = 0.02
_SUPERVISOR = Path(__file__).with_name("_supervisor.py")
_CHUNK = 64 * 1024

NEVER_PASSED = frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"})
"""The agent's own credentials: dropped even when a caller asks to pass them on."""

SECRET_PATTERNS: tuple[str, ...] = (
    "*API_KEY*",
    "*APIKEY*",
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*CREDENTIAL*",
    "*PRIVATE_KEY*",
)
"""Variable names (matched upper-cased) that look like credentials and are not inherited."""

_HARMLESS = frozenset({"TOKENIZERS_PARALLELISM"})
"""Names that match a secret pattern but are known not to be secrets."""


class ProcessStartError(WorkspaceError):
    """The command could not be started at all (not found, not executable, bad cwd)."""


@dataclass
class Launch:
    """What actually starts: the command as wrapped by a confinement (or as given)."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    note: str = ""
    """What the confinement wants the caller to know (e.g. which limits apply)."""
    extra: dict[str, str] = field(default_factory=dict)


class Confinement(Protocol):
    """Wraps a command so it runs isolated (the sandbox, `agentls.sandbox`).

    `launch` is an async context manager: it prepares per-run resources (a cgroup, network
    bridges), yields the wrapped command, and releases them after the process is gone.
    `signal` delivers a polite stop signal to the confined command (the wrapper itself may
    need to survive it); False when nothing was left to signal.
    """

    name: str

    def launch(
        self, argv: Sequence[str], env: dict[str, str], cwd: Path
    ) -> contextlib.AbstractAsyncContextManager[Launch]: ...

    def signal(self, leader: int, sig: int) -> bool: ...


@dataclass(frozen=True)
class ProcessResult:
    """What a finished (or stopped) process left behind.

    `exit_code` is the raw return code: negative when a signal ended the process. Output
    is decoded as UTF-8 with replacement; `*_dropped` count the bytes cut from the middle.
    """

    argv: tuple[str, ...]
    exit_code: int | None
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False
    stdout_dropped: int = 0
    stderr_dropped: int = 0
    pid: int = 0
    """Also the process group id: the group is gone by the time the result exists."""
    confinement: str = ""
    """The confinement the process ran in ("" when none, e.g. "bwrap")."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class ProcessCancelled(asyncio.CancelledError):
    """Cancellation reached a running process: the group is dead, `partial` holds its output.

    A subclass of `CancelledError` so cancellation still propagates as cancellation.
    """

    def __init__(self, partial: ProcessResult) -> None:
        super().__init__("process cancelled")
        self.partial = partial


def scrub_env(
    base: Mapping[str, str] | None = None,
    *,
    allow: Collection[str] = (),
    patterns: Sequence[str] = SECRET_PATTERNS,
) -> dict[str, str]:
    """A copy of `base` (default `os.environ`) without credential-looking variables.

    `allow` names variables to keep anyway (a project that needs e.g. `NPM_TOKEN` for its
    tests) — except the agent's own `NEVER_PASSED` credentials, which never leave.
    """
    source = os.environ if base is None else base
    kept: dict[str, str] = {}
    for name, value in source.items():
        if name in NEVER_PASSED:
            continue
        if name not in allow and name not in _HARMLESS and _looks_secret(name, patterns):
            continue
        kept[name] = value
    return kept


AGENT_PREFIXES = ("ANTHROPIC_", "AGENTLS_", "CLAUDE_CODE_")
"""The agent's own variables (its model endpoint, `ANTHROPIC_BASE_URL`, model and agentls
settings): a sandboxed command needs none of them, and they tell a hostile script where
the agent's endpoint is (issue 27)."""


def without_agent_variables(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without the agent's own variables (`AGENT_PREFIXES`), for sandboxed runs."""
    return {k: v for k, v in env.items() if not k.upper().startswith(AGENT_PREFIXES)}


def _looks_secret(name: str, patterns: Sequence[str]) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in patterns)


class _HeadTail:
    """Keeps the first and last `limit // 2` bytes of a stream, counting what fell between."""

    def __init__(self, limit: int) -> None:
        self.head_limit = max(limit // 2, 0)
        self.tail_limit = max(limit - self.head_limit, 0)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        excess = len(self.tail) - self.tail_limit
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if not self.dropped:
            return head + tail
        return f"{head}\n[... {self.dropped} bytes of output dropped ...]\n{tail}"


OutputListener = Callable[[str, bytes], None]
"""Told each chunk as it arrives: ("stdout" | "stderr", bytes) — a background command's
live output (`agentls.tools.background`)."""


async def _pump(
    stream: asyncio.StreamReader | None,
    sink: _HeadTail,
    name: str = "stdout",
    listener: OutputListener | None = None,
) -> None:
    if stream is None:
        return
    while chunk := await stream.read(_CHUNK):
        sink.add(chunk)
        if listener is not None:
            listener(name, chunk)


def group_alive(pgid: int) -> bool:
    """Whether any process of group `pgid` is still running (zombies do not count).

    Zombies matter here: orphans are re-parented to PID 1, which in containers may never
    reap them, and `killpg(pgid, 0)` would report the group alive forever.
    """
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the parenthesised command name: state ppid pgrp ...
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def _signal_group(pgid: int, sig: int) -> bool:
    """Signal every member of the group; False when none is left."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def _wait_group_gone(pgid: int, grace: float) -> bool:
    deadline = time.monotonic() + grace
    while True:
        if not group_alive(pgid):
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL_INTERVAL)


async def _stop_group(
    proc: asyncio.subprocess.Process,
    stop_signals: Sequence[int],
    grace: float,
    confinement: Confinement | None,
    *,
    first_sent: bool = False,
) -> None:
    """Each stop signal to the whole group with `grace` to die, then SIGKILL."""
    pgid = proc.pid
    for index, sig in enumerate(stop_signals):
        if index or not first_sent:
            _polite(pgid, sig, confinement)
        if await _wait_group_gone(pgid, grace):
            break
    _signal_group(pgid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), max(grace, 1.0))


def _polite(pgid: int, sig: int, confinement: Confinement | None) -> bool:
    """A stop signal for the command: through the confinement when there is one."""
    if confinement is not None:
        return confinement.signal(pgid, sig)
    return _signal_group(pgid, sig)


def _build_env(
    env: Mapping[str, str] | None,
    inherit_env: bool,
    allow_env: Collection[str],
    pass_credentials: bool = False,
) -> dict[str, str]:
    merged = scrub_env(allow=allow_env) if inherit_env else {}
    if env:
        merged.update(env)
    if not pass_credentials:
        for name in NEVER_PASSED:
            merged.pop(name, None)
    return merged


def _check_program(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> None:
    """Fail like `exec` would, before a wrapper (supervisor, sandbox) hides the reason."""
    program = argv[0]
    if os.sep in program:
        path = program if os.path.isabs(program) else os.path.join(cwd, program)
        if not os.path.exists(path):
            raise ProcessStartError(f"Cannot run {program!r}: {program} not found.")
        if not os.access(path, os.X_OK) or os.path.isdir(path):
            raise ProcessStartError(f"Cannot run {program!r}: permission denied.")
    elif shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise ProcessStartError(f"Cannot run {program!r}: {program} not found.")
    if not cwd.is_dir():
        raise ProcessStartError(f"Cannot run {program!r}: the folder {cwd} does not exist.")


def _supervised(argv: Sequence[str]) -> list[str]:
    """`argv` under the supervisor where it works (Linux), else unchanged."""
    if sys.platform != "linux" or not _SUPERVISOR.is_file():
        return list(argv)
    return [sys.executable, "-I", "-S", str(_SUPERVISOR), str(os.getpid()), "--", *argv]


@contextlib.asynccontextmanager
async def _unconfined(argv: Sequence[str], env: dict[str, str], cwd: Path) -> AsyncIterator[Launch]:
    yield Launch(_supervised(argv), env, cwd)


async def _spawn(
    argv: Sequence[str], cwd: Path, env: dict[str, str], stdin: bytes | None
) -> asyncio.subprocess.Process:
    """Start the process; a cancel arriving mid-start still kills what was started.

    `create_subprocess_exec` forks before it finishes wiring the pipes, so cancelling it
    plainly can leave a running child nobody owns. Shield the start, then clean up.
    """
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            late = await spawn
            _signal_group(late.pid, signal.SIGKILL)
            await late.wait()
        raise


async def _feed(proc: asyncio.subprocess.Process, data: bytes | None) -> None:
    """Write `data` to the child's stdin and close it (no stdin at all when None)."""
    if data is None or proc.stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    proc.stdin.close()


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    # Not `asyncio.timeout`: a timeout here must kill the group and keep the partial output.
    timeout: float | None = DEFAULT_TIMEOUT,  # noqa: ASYNC109
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    inherit_env: bool = True,
    allow_env: Collection[str] = (),
    stop_signals: Sequence[int] = (signal.SIGTERM,),
    kill_grace: float = DEFAULT_KILL_GRACE,
    stdin: bytes | None = None,
    confinement: Confinement | None = None,
    pass_credentials: bool = False,
    on_output: OutputListener | None = None,
) -> ProcessResult:
    """Run `argv` (no shell) in `cwd` in a new process group and collect its output.

    `env` is layered over the scrubbed inherited environment (or replaces it when
    `inherit_env` is false). On timeout the group is stopped and the result has
    `timed_out=True` with the output so far. On cancellation the group is stopped at once
    (`CANCEL_GRACE`, then SIGKILL) and `ProcessCancelled` (a `CancelledError`) carries the
    partial result. Leftover members of the group are killed when the main process exits,
    so nothing outlives the call. `stop_signals` lets a caller ask politely first (e.g.
    SIGINT makes pytest report). `confinement` runs the command in a sandbox.
    `pass_credentials` lets the agent's own credentials in `env` through (a hook the user
    opted in); they are dropped otherwise, whatever `env` says. `on_output` is told
    every chunk of output as it arrives (the result still has head and tail).
    """
    if not argv:
        raise ProcessStartError("No command given.")
    merged = _build_env(env, inherit_env, allow_env, pass_credentials)
    _check_program(argv, cwd, merged)
    launcher = confinement.launch if confinement is not None else _unconfined
    async with launcher(argv, merged, cwd) as launch:
        return await _run_launched(
            argv,
            launch,
            timeout=timeout,
            max_output_bytes=max_output_bytes,
            stop_signals=stop_signals,
            kill_grace=kill_grace,
            stdin=stdin,
            confinement=confinement,
            on_output=on_output,
        )


async def _run_launched(
    argv: Sequence[str],
    launch: Launch,
    *,
    timeout: float | None,  # noqa: ASYNC109
    max_output_bytes: int,
    stop_signals: Sequence[int],
    kill_grace: float,
    stdin: bytes | None,
    confinement: Confinement | None,
    on_output: OutputListener | None = None,
) -> ProcessResult:
    started = time.monotonic()
    try:
        proc = await _spawn(launch.argv, launch.cwd, launch.env, stdin)
    except FileNotFoundError as exc:
        missing = argv[0] if exc.filename in (None, argv[0]) else exc.filename
        raise ProcessStartError(f"Cannot run {argv[0]!r}: {missing} not found.") from exc
    except PermissionError as exc:
        raise ProcessStartError(f"Cannot run {argv[0]!r}: permission denied.") from exc
    out, err = _HeadTail(max_output_bytes), _HeadTail(max_output_bytes)
    pumps = asyncio.gather(
        _feed(proc, stdin),
        _pump(proc.stdout, out, "stdout", on_output),
        _pump(proc.stderr, err, "stderr", on_output),
    )
    timed_out = False
    name = confinement.name if confinement is not None else ""
    try:
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            timed_out = True
            await _stop_group(proc, stop_signals, kill_grace, confinement)
        else:
            # Leftovers of a finished run (a daemon a test forgot) die with it.
            if _signal_group(proc.pid, signal.SIGKILL):
                await _wait_group_gone(proc.pid, kill_grace)
    except asyncio.CancelledError:
        # The first signal goes out now, synchronously; the rest is shielded so that a
        # second cancel cannot leave the group running. The user is waiting: a short
        # grace, then SIGKILL.
        if stop_signals:
            _polite(proc.pid, stop_signals[0], confinement)
        grace = min(kill_grace, CANCEL_GRACE)
        stopping = _stop_group(proc, stop_signals[:1], grace, confinement, first_sent=True)
        await asyncio.shield(stopping)
        await _drain(pumps, _CANCEL_DRAIN_TIMEOUT)
        raise ProcessCancelled(_result(argv, proc, out, err, started, timed_out, name)) from None
    await _drain(pumps)
    return _result(argv, proc, out, err, started, timed_out, name)


async def _drain(
    pumps: asyncio.Future[tuple[None, None, None]], limit: float = _DRAIN_TIMEOUT
) -> None:
    """Read what is left in the pipes; a process that escaped the group may hold them open."""
    try:
        await asyncio.wait_for(asyncio.shield(pumps), limit)
    except TimeoutError:
        pumps.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pumps


def _result(
    argv: Sequence[str],
    proc: asyncio.subprocess.Process,
    out: _HeadTail,
    err: _HeadTail,
    started: float,
    timed_out: bool,
    confinement: str = "",
) -> ProcessResult:
    return ProcessResult(
        argv=tuple(argv),
        exit_code=proc.returncode,
        stdout=out.text(),
        stderr=err.text(),
        duration=time.monotonic() - started,
        timed_out=timed_out,
        stdout_dropped=out.dropped,
        stderr_dropped=err.dropped,
        pid=proc.pid,
        confinement=confinement,
    )
