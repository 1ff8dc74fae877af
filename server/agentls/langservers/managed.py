"""One language server's life: started lazily, kept warm, restarted with a back-off.

A crash is recorded with its exit code and the last line the server wrote to stderr; the
next query restarts it once the back-off has passed (immediately after a first crash, then
1, 5, 15, 30 and 60 s while crashes keep coming within ten minutes). After
`languageServerMaxRestarts` restarts (3 by default) within ten minutes it stays down and
every query says why. Nothing is restarted in the background: a server nobody asks for
stays down.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentls.codeintel.discovery import ServerPlan
from agentls.codeintel.model import SourceFailed
from agentls.codeintel.settings import DEFAULT_REQUEST_TIMEOUT
from agentls.langservers.connection import (
    LanguageServerConnection,
    RequestTimeout,
    ServerError,
    ServerGone,
    close_connection,
)
from agentls.langservers.hardening import Hardening, merge_options
from agentls.langservers.sandboxed import Confinement
from agentls.langservers.spawn import SpawnedServer

log = logging.getLogger(__name__)

Spawn = Callable[..., Awaitable[SpawnedServer]]
"""`spawn_language_server(argv, *, cwd, extra_env)`."""

BACKOFF_SECONDS = (0.0, 1.0, 5.0, 15.0, 30.0, 60.0)
CRASH_WINDOW_SECONDS = 600.0
START_TIMEOUT = 60.0
READY_TIMEOUT = 30.0
"""At most this long the first query waits for a server's readiness message."""


class ManagedServer:
    """A language server process for one or more languages of one workspace."""

    def __init__(
        self,
        plan: ServerPlan,
        roots: Sequence[Path],
        spawn: Spawn,
        extra_env: Mapping[str, str],
        *,
        hardening: Hardening | None = None,
        confinement: Confinement | None = None,
        max_restarts: int = 3,
    ) -> None:
        self.plan = plan
        self.hardening = hardening or Hardening()
        """What the server may not load (before trust: the repository's code)."""
        self.confinement = confinement or Confinement(why_not="not requested")
        """The sandbox it runs in."""
        self.languages: set[str] = {plan.language}
        self.roots = list(roots)
        self._spawn = spawn
        self._extra_env = dict(extra_env)
        self.connection: LanguageServerConnection | None = None
        self.state = "idle"
        self.last_error = ""
        self.started_at = 0.0
        self.max_restarts = max_restarts
        self.crashes: deque[float] = deque()
        self.restart_at = 0.0
        self.last_used = time.monotonic()
        """When a query last used it (the idle timeout and the memory budget's LRU)."""
        self.gate = asyncio.Lock()
        """Held while the documents are synced and a request runs (one view at a time)."""
        self._starting: asyncio.Task[LanguageServerConnection] | None = None
        self._stopping = False

    @property
    def name(self) -> str:
        """The plan's name (a well-known server's, or the configured executable's)."""
        return self.plan.name

    @property
    def request_timeout(self) -> float:
        config = self.plan.config
        if config is not None and config.request_timeout:
            return config.request_timeout
        return DEFAULT_REQUEST_TIMEOUT

    # -- starting -------------------------------------------------------------------------

    async def connect(self) -> LanguageServerConnection:
        """The running connection, started (or restarted) now if needed."""
        if self.connection is not None and self.connection.exit_code is None:
            return self.connection
        if self.state == "failed":
            raise SourceFailed(self.last_error, final=True)
        wait = self.restart_at - time.monotonic()
        if wait > 0:
            raise SourceFailed(
                f"The language server {self.name} crashed ({self.last_error}); it is "
                f"restarted in {wait:.0f} s."
            )
        if self._starting is None or self._starting.done():
            self._starting = asyncio.get_running_loop().create_task(self._start())
        try:
            return await asyncio.shield(self._starting)
        except SourceFailed:
            raise
        except Exception as exc:  # never let a start failure escape as a crash of the tool
            raise SourceFailed(f"The language server {self.name} could not start: {exc}") from exc

    async def _start(self) -> LanguageServerConnection:
        assert self.plan.argv is not None
        if self.hardening.problem:
            self.state = "refused"
            self.last_error = self.hardening.problem
            raise SourceFailed(f"The language server {self.name}: {self.hardening.problem}.")
        argv = (*self.confinement.prefix, *self.plan.argv)
        env = {**self._extra_env, **self.hardening.env, **self.confinement.env}
        self.state = "starting"
        cwd = self.roots[0] if self.roots else Path.cwd()
        try:
            spawned = await self._spawn(argv, cwd=cwd, extra_env=env)
        except OSError as exc:
            self._failed(f"cannot run {argv[0]}: {exc.strerror or exc}")
            raise SourceFailed(
                f"The language server {self.name} could not start ({self.last_error})."
            ) from None
        config = self.plan.config
        try:
            connection = LanguageServerConnection(
                self.name,
                spawned,
                self.roots,
                merge_options(self.hardening.settings, config.settings if config else None),
                self._exited,
            )
        except Exception:
            spawned.kill_group()
            raise
        if self.plan.ready_log:
            connection.ready_log = re.compile(self.plan.ready_log)
        self.connection = connection
        try:
            options = merge_options(
                self.hardening.initialization_options,
                config.initialization_options if config is not None else None,
            )
            await connection.initialize(options, START_TIMEOUT)
        except (ServerGone, RequestTimeout, ServerError) as exc:
            self._failed(f"initialize failed: {exc}")
            await close_connection(connection)
            raise SourceFailed(
                f"The language server {self.name} did not start ({self.last_error})."
            ) from None
        await self._wait_ready(connection)
        self.state = "running"
        self.started_at = time.monotonic()
        log.info("started %s (pid %s) for %s", self.name, spawned.pid, sorted(self.languages))
        return connection

    async def _wait_ready(self, connection: LanguageServerConnection) -> None:
        if connection.ready_log is None:
            return
        gone = asyncio.ensure_future(connection.exited.wait())
        ready = asyncio.ensure_future(connection.ready.wait())
        try:
            await asyncio.wait({gone, ready}, timeout=READY_TIMEOUT, return_when="FIRST_COMPLETED")
        finally:
            gone.cancel()
            ready.cancel()
        if not connection.ready.is_set() and connection.exit_code is None:
            log.warning("%s: no readiness message within %.0f s", self.name, READY_TIMEOUT)

    def _failed(self, reason: str) -> None:
        self.state = "crashed"
        self.last_error = reason
        now = time.monotonic()
        while self.crashes and now - self.crashes[0] > CRASH_WINDOW_SECONDS:
            self.crashes.popleft()
        self.crashes.append(now)
        if len(self.crashes) > self.max_restarts:
            self.state = "failed"
            self.last_error = (
                f"The language server {self.name} crashed {len(self.crashes)} times within "
                f"{CRASH_WINDOW_SECONDS / 60:.0f} minutes (last: {reason}); agentls does not "
                f"restart it again (languageServerMaxRestarts: {self.max_restarts}) until "
                "its settings change or agentls restarts"
            )
            log.warning("%s", self.last_error)
            return
        delay = BACKOFF_SECONDS[min(len(self.crashes), len(BACKOFF_SECONDS)) - 1]
        self.restart_at = now + delay
        log.warning("%s: %s (restart allowed in %.0f s)", self.name, reason, delay)

    def _exited(self, code: int | None) -> None:
        if self._stopping:
            self.state = "stopped"
            return
        connection = self.connection
        detail = connection.spawned.last_error_line() if connection is not None else ""
        what = (
            f"exit code {code}"
            if code is not None and code >= 0
            else f"killed by signal {-(code or 0)}"
        )
        self._failed(f"{what}: {detail}" if detail else what)

    # -- requests -------------------------------------------------------------------------

    async def request(self, method: str, params: object, what: str, *, raw: bool = False) -> Any:
        """A request on the running connection, failures as `SourceFailed` (`raw`: the
        result as plain JSON)."""
        connection = await self.connect()
        try:
            return await connection.request(method, params, self.request_timeout, raw=raw)
        except ServerGone:
            reason = self.last_error or connection._exit_text()
            raise SourceFailed(
                f"The language server {self.name} crashed while answering {what} "
                f"({reason}). It is restarted on the next call: try again.",
                final=True,
            ) from None
        except RequestTimeout as exc:
            raise SourceFailed(f"The language server {self.name} timed out: {exc}.") from None
        except ServerError as exc:
            raise SourceFailed(
                f"The language server {self.name} answered an error: {exc}"
            ) from None

    # -- stopping -------------------------------------------------------------------------

    async def stop(self) -> None:
        self._stopping = True
        connection, self.connection = self.connection, None
        if connection is not None:
            await close_connection(connection)
        self.state = "stopped"

    def kill(self) -> None:
        self._stopping = True
        if self.connection is not None:
            self.connection.spawned.kill_group()
        self.state = "stopped"

    @property
    def running(self) -> bool:
        connection = self.connection
        return connection is not None and connection.exit_code is None

    def rss_mb(self) -> float:
        """Resident memory of its process tree in MiB (0 when not running)."""
        connection = self.connection
        if connection is None or connection.exit_code is not None:
            return 0.0
        rss = _tree_rss(connection.spawned.pid)
        return rss / 2**20 if rss is not None else 0.0

    def status(self) -> dict[str, object]:
        connection = self.connection
        running = connection is not None and connection.exit_code is None
        entry: dict[str, object] = {
            "server": self.name,
            "command": list(self.plan.argv or ()),
            "origin": self.plan.origin,
            "state": "running" if running and self.state == "running" else self.state,
        }
        if running and connection is not None:
            entry["pid"] = connection.spawned.pid
            rss = _tree_rss(connection.spawned.pid)
            if rss is not None:
                entry["rss_mb"] = round(rss / 2**20, 1)
        entry["sandbox"] = self.confinement.describe()
        if self.hardening.notes:
            entry["restricted"] = list(self.hardening.notes)
        entry["idle_s"] = round(time.monotonic() - self.last_used)
        if self.state == "failed":
            entry["reason"] = self.last_error
        if self.state == "crashed":
            wait = self.restart_at - time.monotonic()
            entry["reason"] = self.last_error + (
                f"; restarted on the next query in {wait:.0f} s"
                if wait > 0
                else "; restarted on the next query"
            )
        elif self.state == "idle":
            entry["reason"] = "starts on first use"
        return entry


def _tree_rss(pid: int) -> int | None:
    """Resident memory of the server and every process it started (tsserver, the sandbox's
    processes), in bytes; None when it cannot be read."""
    import psutil

    try:
        leader = psutil.Process(pid)
        processes = [leader, *leader.children(recursive=True)]
    except psutil.Error:
        return None
    total = 0
    for process in processes:
        try:
            total += process.memory_info().rss
        except psutil.Error:
            continue
    return total
