"""One MCP server: start it, keep the session open, call it, stop it.

The SDK's `Client` is an async context manager built on anyio task groups, which must be
entered and exited by the same task. Each server therefore gets one long-lived runner task
that enters the client, lists the tools, reports ready and then waits for `stop()`; calls
from tool tasks go through the open session. Start-up has a timeout, and any failure (a
command that does not exist, a server that exits or never answers) ends in the `failed`
state with a message and the tail of the server's stderr, without affecting other servers.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from typing import IO, Any, Literal

import anyio
import httpx2
import mcp_types as types

from agentls.credentials import CREDENTIAL_VARS
from agentls.mcp import elicitation
from agentls.mcp.bridge import HostBridge
from agentls.mcp.config import McpOptions, RemoteServer, ServerSpec, StdioServer
from agentls.mcp.oauth import SIGN_IN_TIMEOUT, SignInRequired, oauth_provider
from agentls.mcp.processes import (
    MARKER_VAR,
    kill_marked,
    new_marker,
    process_alive,
    server_pid,
)
from agentls.mcp.sdk import (
    Client,
    ClientRequestContext,
    MCPError,
    OAuthFlowError,
    Transport,
    http_transport,
    sse_transport,
    stdio_transport,
)

log = logging.getLogger(__name__)


State = Literal["pending", "starting", "ready", "failed", "disconnected", "stopped"]
STOP_TIMEOUT = 8.0
"""Bounded wait for the SDK's shutdown (stdin close, 2 s grace, SIGTERM, 2 s, SIGKILL)."""
STDERR_TAIL = 1500
DEATH_POLL = 0.25
"""How often a call checks that a stdio server's process is still alive."""
MAX_LIST_PAGES = 50
# Our own credentials are not handed to third-party servers; one that needs a key gets it
# through its `env` entry.
WITHHELD_ENV = CREDENTIAL_VARS
NEEDS_AUTH = "this server needs authentication"

ProgressFn = Callable[[float, float | None, str | None], None]
"""(progress, total, message) of a running call, as the server reports them."""


def server_environment(spec: StdioServer, marker: str, base: Mapping[str, str]) -> dict[str, str]:
    """The environment of a stdio server: the base without our credentials, its own `env`
    entry, and the marker that lets us find every process it starts."""
    env = {k: v for k, v in base.items() if k not in WITHHELD_ENV}
    env.update(spec.env)
    env[MARKER_VAR] = marker
    return env


class ServerUnavailable(Exception):
    """The server is not running (failed to start, crashed or stopped); the message says why."""


class McpConnection:
    """Lifecycle and calls for one configured server."""

    def __init__(
        self,
        spec: ServerSpec,
        options: McpOptions,
        cwd: str | None = None,
        bridge: HostBridge | None = None,
    ) -> None:
        self.spec = spec
        self.options = options
        self.cwd = cwd
        self.bridge = bridge or HostBridge()
        self._reset()

    def _reset(self) -> None:
        """Everything one start owns (a restart begins from here again)."""
        self.state: State = "pending"
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.supports_resources = False
        self.instructions: str | None = None
        self.server_version: str | None = None
        self.startup_ms: float | None = None
        self.started_at: float | None = None
        self.signing_in = False
        self.reported_slow = False
        self.refused: tuple[int, str] | None = None
        """The last 401 a remote server answered (status, URL), until a success."""
        """A run went on without this server (its readiness is then announced)."""
        self._client: Client | None = None
        self._runner: asyncio.Task[None] | None = None
        self._starting: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._marker = new_marker()
        self._stderr: IO[str] | None = None
        self._pid: int | None = None
        self._scope: anyio.CancelScope | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def marker(self) -> str:
        """The environment marker of this server's processes (see `agentls.mcp.processes`)."""
        return self._marker

    # -- lifecycle -------------------------------------------------------------------------

    def begin(self) -> asyncio.Task[None]:
        """Start in the background (once); the task ends when ready or failed."""
        if self._starting is None:
            self._starting = asyncio.get_running_loop().create_task(
                self.start(), name=f"mcp-start-{self.name}"
            )
        return self._starting

    async def start(self) -> None:
        """Start the server and wait until it is ready or has failed (never raises)."""
        if self.state != "pending":
            return
        self.state = "starting"
        started = self.started_at = time.monotonic()
        self._runner = asyncio.create_task(self._run(), name=f"mcp-{self.name}")
        ready = asyncio.create_task(self._ready.wait())
        try:
            # The runner enforces the start-up timeout itself (an anyio deadline, which the
            # SDK's transports unwind cleanly, extended while the user signs in); this wait
            # only guards against a stuck runner.
            guard = self.options.startup_timeout + SIGN_IN_TIMEOUT + STOP_TIMEOUT
            await asyncio.wait(
                {self._runner, ready}, timeout=guard, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            ready.cancel()
        if self._ready.is_set():
            self.startup_ms = (time.monotonic() - started) * 1000
            log.info(
                "MCP server %s ready in %.0f ms with %d tools",
                self.name,
                self.startup_ms,
                len(self.tools),
            )
            return
        if self.state == "starting":
            self._fail("did not finish starting")
        await self._stop_runner()  # a failed start leaves no process and no open stderr file
        log.warning("MCP server %s failed to start: %s", self.name, self.error)

    def reconfigure(self, spec: ServerSpec, options: McpOptions) -> None:
        """Take a new configuration (the server must be stopped); starts from pending."""
        self.spec = spec
        self.options = options
        self._reset()

    async def restart(self) -> None:
        """Stop (if running) and start again, as the same object: sessions that hold its
        tools use the new process."""
        await self.stop()
        self._reset()
        await self.start()

    async def stop(self) -> None:
        """Close the session and make sure no process of this server survives."""
        await self._stop_runner()
        starting = self._starting
        if starting is not None and not starting.done():
            starting.cancel()
        if self.state in ("ready", "starting", "pending"):
            self.state = "stopped"

    async def _stop_runner(self) -> None:
        self._stop.set()
        if self._scope is not None:
            # Ends a start-up still in progress; after start-up the scope only wraps the
            # wait for `_stop`, so cancelling it is the same as a normal stop.
            self._scope.cancel()
        runner = self._runner
        if runner is not None and not runner.done():
            try:
                await asyncio.wait_for(asyncio.shield(runner), STOP_TIMEOUT)
            except TimeoutError:
                log.warning("MCP server %s did not shut down in time; cancelling", self.name)
                runner.cancel()
            except Exception:  # the runner records its own failure
                pass
        if runner is not None and isinstance(self.spec, StdioServer):
            await asyncio.to_thread(kill_marked, self._marker)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def _run(self) -> None:
        """Own the client session from start to stop, in this one task.

        Cancellation goes through an anyio cancel scope rather than `Task.cancel()`: the
        SDK's stdio transport only guarantees its kill-the-process shutdown for anyio
        cancellation.
        """
        timeout = self.options.startup_timeout
        scope = anyio.CancelScope(deadline=anyio.current_time() + timeout)
        self._scope = scope
        try:
            with scope:
                async with self._client_for(self._transport()) as client:
                    await self._discover(client)
                    if isinstance(self.spec, StdioServer):
                        self._pid = await asyncio.to_thread(server_pid, self._marker)
                    scope.deadline = math.inf
                    self._client = client
                    self.state = "ready"
                    self.signing_in = False
                    self._ready.set()
                    await self._stop.wait()
            if scope.cancelled_caught and self.state == "starting":
                self._fail(
                    f"did not start within {timeout:g} s"
                    if not self._stop.is_set()
                    else "stopped during start-up"
                )
        except Exception as exc:
            message = describe_error(exc)
            if NEEDS_AUTH not in message:
                message = self._refusal() or message
            if self.state == "ready" and not self._stop.is_set():
                self._disconnect(f"connection lost: {message}")
            elif self.state == "starting":
                self._fail(message)
            log.debug("MCP server %s runner ended", self.name, exc_info=True)
        finally:
            self._client = None
            self.signing_in = False
            if self.state == "starting":
                self._fail("exited during start-up")
            if isinstance(self.spec, StdioServer):
                # A server that died (or exited cleanly) may leave children of its own.
                await asyncio.shield(asyncio.to_thread(kill_marked, self._marker))

    def _client_for(self, transport: Transport) -> Client:
        """The SDK client with the features we offer: roots always (the workspace
        folders), elicitation only when a user can be asked."""
        questions = self.bridge.questions
        return Client(
            transport,
            client_info=types.Implementation(name="agentls", version="0.1.0"),
            cache=None,
            list_roots_callback=self._list_roots,
            elicitation_callback=self._elicit if questions is not None else None,
        )

    async def _list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        roots = [
            types.Root(uri=root.resolve().as_uri(), name=root.name or str(root))  # type: ignore[arg-type]
            for root in self.bridge.roots()
        ]
        return types.ListRootsResult(roots=roots)

    async def _elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        """The server asks the user something mid-call (never raises: a failure cancels)."""
        request = elicitation.Elicitation.of(self.name, params)
        try:
            return await elicitation.ask(self.bridge.questions, request)
        except Exception:
            log.exception("asking the user for MCP server %s failed", self.name)
            return types.ElicitResult(action="cancel")

    def _signing_in(self) -> None:
        """The user is signing in in a browser: give the start-up that much longer."""
        self.signing_in = True
        if self._scope is not None and self.state == "starting":
            self._scope.deadline = anyio.current_time() + SIGN_IN_TIMEOUT + 30

    async def _discover(self, client: Client) -> None:
        capabilities = client.server_capabilities
        self.instructions = client.instructions
        info = client.server_info
        self.server_version = info.version if info is not None else None
        tools: list[types.Tool] = []
        if capabilities.tools is not None:
            cursor: str | None = None
            for _ in range(MAX_LIST_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        self.tools = tools
        self.supports_resources = capabilities.resources is not None

    def _transport(self) -> Transport:
        spec = self.spec
        if isinstance(spec, StdioServer):
            env = server_environment(spec, self._marker, self.bridge.environment())
            # Closed in `_stop_runner`: it must outlive this call (the server writes to it).
            self._stderr = tempfile.TemporaryFile(  # noqa: SIM115
                "w+", encoding="utf-8", errors="replace", prefix=f"agentls-mcp-{self.name}-"
            )
            return stdio_transport(
                spec.command, list(spec.args), env, spec.cwd or self.cwd, self._stderr
            )
        auth = self._oauth(spec)
        if spec.kind == "sse":
            return sse_transport(spec.url, spec.headers, auth, self._on_status)
        return http_transport(spec.url, spec.headers, auth, self._on_status)

    def _refusal(self) -> str | None:
        """ "needs authentication" when the server answered 401 (the SDK reports it only as
        "an error response")."""
        if self.refused is None:
            return None
        status, url = self.refused
        return (
            f"{NEEDS_AUTH} (HTTP {status} from {url}); sign in when asked, or set an "
            "`Authorization` header in its `headers`"
        )

    def _on_status(self, status: int, url: str) -> None:
        if status == 401:
            self.refused = (status, url)
        elif 200 <= status < 300:
            self.refused = None

    def _oauth(self, spec: RemoteServer) -> httpx2.Auth | None:
        """OAuth sign-in, unless the configuration sends credentials of its own."""
        if any(key.lower() == "authorization" for key in spec.headers):
            return None
        questions = self.bridge.questions
        return oauth_provider(
            self.name,
            spec.url,
            questions.open_url if questions is not None else None,
            self._signing_in,
            self.bridge.oauth_folder,
        )

    # -- calls -----------------------------------------------------------------------------

    def _session(self) -> Client:
        if self.state != "ready" or self._client is None:
            raise ServerUnavailable(self.unavailable_reason())
        return self._client

    def unavailable_reason(self) -> str:
        detail = f": {self.error}" if self.error else ""
        return f"the MCP server '{self.name}' is not running ({self.state}{detail})"

    async def call_tool(
        self, tool: str, arguments: dict[str, object], on_progress: ProgressFn | None = None
    ) -> types.CallToolResult:
        """Call a tool; with `on_progress`, a progress token is sent and the server's
        progress notifications for this call reach it."""
        client = self._session()

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            if on_progress is not None:
                on_progress(progress, total, message)

        call = asyncio.ensure_future(
            client.call_tool(
                tool,
                arguments,
                read_timeout_seconds=self.options.tool_timeout,
                progress_callback=progress if on_progress is not None else None,
            )
        )
        try:
            return await self._unless_server_dies(call)
        except MCPError as exc:
            self._check_connection(exc)
            raise

    async def _unless_server_dies(
        self, call: asyncio.Future[types.CallToolResult]
    ) -> types.CallToolResult:
        """Await a call, giving up when the server process exits.

        A crashed server's pipes stay open while a child it spawned still holds them, so
        the SDK would wait for the full tool timeout; watching the process ends it at once.
        """
        pid = self._pid
        if pid is None:
            return await call
        watcher: asyncio.Future[Any] = asyncio.ensure_future(self._wait_for_exit(pid))
        pending: set[asyncio.Future[Any]] = {call, watcher}
        try:
            await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watcher.cancel()
            if not call.done():
                call.cancel()
        if call.done() and not call.cancelled():
            return call.result()
        raise MCPError(types.CONNECTION_CLOSED, f"the server process {pid} exited")

    @staticmethod
    async def _wait_for_exit(pid: int) -> None:
        # Polling on purpose: nothing signals the death of a process whose pipes stay open.
        while process_alive(pid):  # noqa: ASYNC110
            await asyncio.sleep(DEATH_POLL)

    async def list_resources(self) -> list[types.Resource]:
        client = self._session()
        resources: list[types.Resource] = []
        cursor: str | None = None
        try:
            for _ in range(MAX_LIST_PAGES):
                page = await client.list_resources(cursor=cursor)
                resources.extend(page.resources)
                cursor = page.next_cursor
                if not cursor:
                    break
        except MCPError as exc:
            self._check_connection(exc)
            raise
        return resources

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        client = self._session()
        try:
            return await client.read_resource(uri)
        except MCPError as exc:
            self._check_connection(exc)
            raise

    def _check_connection(self, exc: MCPError) -> None:
        """A closed connection means the server died: mark it and reap its processes."""
        if exc.code == types.CONNECTION_CLOSED:
            self._disconnect(f"the server closed the connection ({exc.message}){self._tail()}")
            self._stop.set()

    # -- status ----------------------------------------------------------------------------

    def _fail(self, message: str) -> None:
        self.state = "failed"
        self.error = message + self._tail()

    def _disconnect(self, message: str) -> None:
        if self.state != "disconnected":
            log.warning("MCP server %s disconnected: %s", self.name, message)
        self.state = "disconnected"
        self.error = message

    def _tail(self) -> str:
        """The end of the server's stderr: usually the only clue why it died."""
        handle = self._stderr
        if handle is None:
            return ""
        try:
            handle.flush()
            fd = handle.fileno()
            size = os.fstat(fd).st_size
            data = os.pread(fd, STDERR_TAIL, max(0, size - STDERR_TAIL))
        except (OSError, ValueError):
            return ""
        text = data.decode("utf-8", "replace").strip()
        return f"; stderr: {text}" if text else ""

    def status(self) -> dict[str, object]:
        status: dict[str, object] = {
            "name": self.name,
            "source": self.spec.source,
            "transport": self.spec.transport,
            "target": self.spec.describe(),
            "state": self.state,
            "tools": len(self.tools),
            "resources": self.supports_resources,
        }
        if self.startup_ms is not None:
            status["startup_ms"] = round(self.startup_ms)
        if self.state == "starting" and self.started_at is not None:
            status["starting_for_s"] = round(time.monotonic() - self.started_at, 1)
        if self.signing_in:
            status["signing_in"] = True
        if self.instructions:
            status["instructions"] = True
        if self.error:
            status["error"] = self.error
        return status


def describe_error(exc: BaseException) -> str:
    """The innermost meaningful message of an (often grouped) SDK error."""
    auth = _auth_problem(exc)
    if auth is not None:
        return auth
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    cause = exc.__cause__ or exc.__context__
    if isinstance(exc, MCPError) and exc.code == types.CONNECTION_CLOSED:
        return "the server closed the connection (did it exit? see stderr)"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, OSError) and cause is None:
        return f"{type(exc).__name__}: {exc}"
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url}"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if not isinstance(exc, MCPError) else text


def _auth_problem(exc: BaseException) -> str | None:
    """ "this server needs authentication …" when a 401 or a failed sign-in is anywhere in
    the error (the SDK wraps transport errors in exception groups and causes)."""
    for found in _chain(exc):
        if isinstance(found, SignInRequired):
            return f"{NEEDS_AUTH}: {found}"
        if isinstance(found, OAuthFlowError):
            return f"{NEEDS_AUTH}, and the OAuth sign-in failed: {found}"
        if isinstance(found, httpx2.HTTPStatusError) and found.response.status_code == 401:
            return (
                f"{NEEDS_AUTH} (HTTP 401 from {found.request.url}); sign in when asked, or "
                "set an `Authorization` header in its `headers`"
            )
    return None


def _chain(exc: BaseException, depth: int = 0) -> list[BaseException]:
    """The error, the members of its groups and its causes (bounded)."""
    if depth > 8:
        return []
    found = [exc]
    if isinstance(exc, BaseExceptionGroup):
        for member in exc.exceptions:
            found += _chain(member, depth + 1)
    cause = exc.__cause__ or exc.__context__
    if cause is not None and cause is not exc:
        found += _chain(cause, depth + 1)
    return found
