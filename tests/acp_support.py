"""Two real ACP clients for the `agentls acp` tests, and the editor behind both.

- `PythonClient`: the official Python SDK's client side (`acp.spawn_agent_process`,
  `ClientSideConnection`), typed requests;
- `NodeClient`: the official TypeScript SDK (`@agentclientprotocol/sdk`) in
  `tests/acp_client.mjs`, which validates everything the agent sends against the schema.

Both answer the agent's requests through one `FakeEditor` (JSON in, JSON out): permission
prompts from a queue of answers, `fs/read_text_file` from its unsaved buffers (else the
disk), `fs/write_text_file` into the buffer and the file, and real terminals
(`terminal/*` run real processes). Tests speak JSON dicts to either client, so one test
body checks both implementations.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
NODE_CLIENT = REPO / "tests" / "acp_client.mjs"
DEPS = REPO / "scripts" / "deps" / "acp"


class AcpError(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


def node_sdk_entry() -> str:
    """The TypeScript SDK installed by scripts/deps/acp.sh (as a file URL for `import()`)."""
    tools = Path(os.environ.get("AGENTLS_TOOLS_DIR") or Path.home() / ".cache" / "agentls-tools")
    digest = hashlib.sha256(
        (DEPS / "package.json").read_bytes() + (DEPS / "package-lock.json").read_bytes()
    ).hexdigest()[:12]
    entry = tools / f"acp-{digest}" / "node_modules" / "@agentclientprotocol" / "sdk" / "dist"
    entry = entry / "v1" / "stable" / "acp.js"
    if not entry.is_file():
        raise RuntimeError(
            f"the TypeScript ACP SDK is not installed ({entry} is missing): run "
            "`bash scripts/deps/acp.sh`"
        )
    return entry.as_uri()


def agent_env(api_url: str | None, home: Path, **extra: str) -> dict[str, str]:
    """The agent's environment: the scripted model, a private HOME and transcript folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
    env["HOME"] = str(home)
    env["AGENTLS_TRANSCRIPT_DIR"] = str(home / "transcripts")
    env["XDG_CACHE_HOME"] = str(home / "cache")
    env["XDG_CONFIG_HOME"] = str(home / "config")
    env["AGENTLS_RETRY_BASE_DELAY"] = "0.01"
    env["AGENTLS_RETRY_MAX_DELAY"] = "0.05"
    env["AGENTLS_READ_BEFORE_EDIT"] = "0"  # scenarios written before read-before-edit
    if api_url is not None:
        env["ANTHROPIC_BASE_URL"] = api_url
        env["ANTHROPIC_API_KEY"] = "test"
    env.update(extra)
    return env


def agent_command(settings: object = None, log_file: Path | None = None) -> list[str]:
    command = [sys.executable, "-m", "agentls", "acp"]
    if settings is not None:
        command += ["--settings", json.dumps(settings)]
    if log_file is not None:
        command += ["--log-file", str(log_file), "--log-level", "DEBUG"]
    return command


# --- the editor ------------------------------------------------------------------------


@dataclass
class Terminal:
    process: asyncio.subprocess.Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    reader: asyncio.Task[None] | None = None
    truncated: bool = False


@dataclass
class FakeEditor:
    """What an editor does for an ACP agent; every request and update is recorded."""

    buffers: dict[str, str] = field(default_factory=dict)
    """Unsaved text by absolute path (what `fs/read_text_file` answers)."""
    answers: list[str | None] = field(default_factory=list)
    """Option ids for the next permission requests; None answers `cancelled`. When empty,
    a request is rejected (`reject_once`, or the last offered option)."""
    permission_gate: asyncio.Event | None = None
    """When set, permission requests are answered only once it is set."""
    updates: list[dict[str, Any]] = field(default_factory=list)
    permission_requests: list[dict[str, Any]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    terminal_requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    terminals: dict[str, Terminal] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "session/update":
            self.updates.append(params)
            self.changed.set()

    async def on_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.changed.set()
        if method == "session/request_permission":
            return await self._permission(params)
        if method == "fs/read_text_file":
            return self._read(params)
        if method == "fs/write_text_file":
            return self._write(params)
        if method.startswith("terminal/"):
            self.terminal_requests.append((method, params))
            return await self._terminal(method, params)
        raise AcpError(-32601, f"method not found: {method}")

    async def _permission(self, params: dict[str, Any]) -> dict[str, Any]:
        self.permission_requests.append(params)
        if self.permission_gate is not None:
            await self.permission_gate.wait()
        offered = [o["optionId"] for o in params["options"]]
        if self.answers:
            answer = self.answers.pop(0)
        else:
            answer = "reject_once" if "reject_once" in offered else offered[-1]
        if answer is None:
            return {"outcome": {"outcome": "cancelled"}}
        return {"outcome": {"outcome": "selected", "optionId": answer}}

    def _read(self, params: dict[str, Any]) -> dict[str, Any]:
        path = params["path"]
        self.reads.append(path)
        if path in self.buffers:
            text = self.buffers[path]
        else:
            try:
                text = Path(path).read_text(encoding="utf-8")
            except OSError as exc:
                raise AcpError(-32002, f"cannot read {path}: {exc.strerror}") from None
        line, limit = params.get("line"), params.get("limit")
        if line or limit:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : start + limit if limit else None])
        return {"content": text}

    def _write(self, params: dict[str, Any]) -> dict[str, Any]:
        path, content = params["path"], params["content"]
        self.writes.append((path, content))
        if path in self.buffers:
            self.buffers[path] = content  # the open buffer changes (and is saved below)
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return {}

    async def _terminal(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "terminal/create":
            env = {**os.environ, **{e["name"]: e["value"] for e in params.get("env") or []}}
            process = await asyncio.create_subprocess_exec(
                params["command"],
                *params.get("args", []),
                cwd=params.get("cwd"),
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
            terminal = Terminal(process, params.get("outputByteLimit"))
            terminal.reader = asyncio.create_task(_collect(terminal))
            terminal_id = f"term-{len(self.terminals) + 1}"
            self.terminals[terminal_id] = terminal
            return {"terminalId": terminal_id}
        terminal = self.terminals[params["terminalId"]]
        if method == "terminal/wait_for_exit":
            code = await terminal.process.wait()
            return _exit_status(code)
        if method == "terminal/output":
            result: dict[str, Any] = {
                "output": terminal.output.decode("utf-8", "replace"),
                "truncated": terminal.truncated,
            }
            if terminal.process.returncode is not None:
                if terminal.reader is not None:
                    await terminal.reader
                    result["output"] = terminal.output.decode("utf-8", "replace")
                result["exitStatus"] = _exit_status(terminal.process.returncode)
            return result
        if method in ("terminal/kill", "terminal/release"):
            if terminal.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(terminal.process.pid, signal.SIGKILL)
                await terminal.process.wait()
            return {}
        raise AcpError(-32601, f"method not found: {method}")

    # -- reading what happened ------------------------------------------------------------

    def session_updates(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        found = [u["update"] for u in self.updates if u["sessionId"] == session_id]
        return [u for u in found if kind is None or u["sessionUpdate"] == kind]

    def tool_calls(self, session_id: str) -> dict[str, dict[str, Any]]:
        """Each tool call as the client sees it: `tool_call` merged with its updates."""
        calls: dict[str, dict[str, Any]] = {}
        for update in self.session_updates(session_id):
            if update["sessionUpdate"] not in ("tool_call", "tool_call_update"):
                continue
            call = calls.setdefault(update["toolCallId"], {})
            call.update({k: v for k, v in update.items() if v is not None})
        return calls

    def text(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(
            u["content"].get("text", "")
            for u in self.session_updates(session_id, kind)
            if u["content"]["type"] == "text"
        )


async def _collect(terminal: Terminal) -> None:
    stream = terminal.process.stdout
    assert stream is not None
    while chunk := await stream.read(4096):
        terminal.output.extend(chunk)
        if terminal.limit is not None and len(terminal.output) > terminal.limit:
            del terminal.output[: len(terminal.output) - terminal.limit]
            terminal.truncated = True


def _exit_status(code: int) -> dict[str, Any]:
    if code < 0:
        return {"exitCode": None, "signal": signal.Signals(-code).name}
    return {"exitCode": code, "signal": None}


async def wait_until(check: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out waiting for a condition")
        await asyncio.sleep(0.02)


# --- the Python SDK's client -----------------------------------------------------------


class _PyClientSide:
    """The SDK's `Client` protocol, answered by the editor (typed models ↔ JSON)."""

    def __init__(self, editor: FakeEditor) -> None:
        self.editor = editor

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        params = {"sessionId": session_id, "update": _dump(update)}
        await self.editor.on_notification("session/update", params)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **kw: Any
    ) -> Any:
        from acp.schema import RequestPermissionResponse

        params = {
            "sessionId": session_id,
            "toolCall": _dump(tool_call),
            "options": [_dump(o) for o in options],
        }
        return RequestPermissionResponse.model_validate(
            await self._ask("session/request_permission", params)
        )

    async def read_text_file(
        self, session_id: str, path: str, line: Any = None, limit: Any = None, **kw: Any
    ) -> Any:
        from acp.schema import ReadTextFileResponse

        params = {"sessionId": session_id, "path": path, "line": line, "limit": limit}
        return ReadTextFileResponse.model_validate(await self._ask("fs/read_text_file", params))

    async def write_text_file(self, session_id: str, path: str, content: str, **kw: Any) -> Any:
        from acp.schema import WriteTextFileResponse

        params = {"sessionId": session_id, "path": path, "content": content}
        return WriteTextFileResponse.model_validate(await self._ask("fs/write_text_file", params))

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: Any = None,
        env: Any = None,
        cwd: Any = None,
        output_byte_limit: Any = None,
        **kw: Any,
    ) -> Any:
        from acp.schema import CreateTerminalResponse

        params = {
            "sessionId": session_id,
            "command": command,
            "args": args or [],
            "env": [_dump(e) for e in env or []],
            "cwd": cwd,
            "outputByteLimit": output_byte_limit,
        }
        return CreateTerminalResponse.model_validate(await self._ask("terminal/create", params))

    async def terminal_output(self, session_id: str, terminal_id: str, **kw: Any) -> Any:
        from acp.schema import TerminalOutputResponse

        return TerminalOutputResponse.model_validate(
            await self._ask("terminal/output", {"sessionId": session_id, "terminalId": terminal_id})
        )

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kw: Any) -> Any:
        from acp.schema import WaitForTerminalExitResponse

        return WaitForTerminalExitResponse.model_validate(
            await self._ask(
                "terminal/wait_for_exit", {"sessionId": session_id, "terminalId": terminal_id}
            )
        )

    async def kill_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> Any:
        await self._ask("terminal/kill", {"sessionId": session_id, "terminalId": terminal_id})
        return None

    async def release_terminal(self, session_id: str, terminal_id: str, **kw: Any) -> Any:
        await self._ask("terminal/release", {"sessionId": session_id, "terminalId": terminal_id})
        return None

    async def _ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from acp import RequestError

        try:
            return await self.editor.on_request(method, params)
        except AcpError as exc:
            raise RequestError(exc.code, exc.message, exc.data) from None


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class PythonClient:
    """`agentls acp` driven by the Python SDK's `ClientSideConnection`."""

    kind = "python"
    env: dict[str, str]
    """The agent's environment (for `tests.trust_support.trust_workspace`)."""

    def __init__(self, conn: Any, process: asyncio.subprocess.Process, editor: FakeEditor) -> None:
        self.conn = conn
        self.process = process
        self.editor = editor

    @property
    def agent_alive(self) -> bool:
        return self.process.returncode is None

    async def request(self, method: str, params: Any, *, raw: bool = False) -> dict[str, Any]:
        """A typed request through the SDK's methods (`raw`: the params as they are)."""
        from acp import RequestError
        from acp import schema as s

        typed = {
            "initialize": (s.InitializeRequest, "initialize"),
            "session/new": (s.NewSessionRequest, "new_session"),
            "session/load": (s.LoadSessionRequest, "load_session"),
            "session/prompt": (s.PromptRequest, "prompt"),
            "session/set_mode": (s.SetSessionModeRequest, "set_session_mode"),
            "session/list": (s.ListSessionsRequest, "list_sessions"),
        }
        try:
            if raw or method not in typed:
                result = await self.conn._conn.send_request(method, params)
                return result if isinstance(result, dict) else {}
            model, attr = typed[method]
            request = model.model_validate(params)
            kwargs = {n: getattr(request, n) for n in model.model_fields if n != "field_meta"}
            response = await getattr(self.conn, attr)(**kwargs)
            return _dump(response) if response is not None else {}
        except RequestError as exc:
            raise AcpError(exc.code, str(exc), exc.data) from None

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        if method == "session/cancel":
            await self.conn.cancel(session_id=params["sessionId"])
        else:
            await self.conn._conn.send_notification(method, params)


@asynccontextmanager
async def python_client(
    editor: FakeEditor, env: dict[str, str], cwd: Path, settings: object = None
) -> AsyncIterator[PythonClient]:
    from acp import spawn_agent_process

    command = agent_command(settings)
    async with spawn_agent_process(
        lambda agent: _PyClientSide(editor),
        command[0],
        *command[1:],
        env=env,
        cwd=cwd,
        transport_kwargs={"stderr": None, "limit": 50 * 1024 * 1024},
    ) as (conn, process):
        yield PythonClient(conn, process, editor)


# --- the TypeScript SDK's client -------------------------------------------------------


class NodeClient:
    """`agentls acp` driven by the TypeScript SDK (tests/acp_client.mjs)."""

    kind = "node"
    env: dict[str, str]

    def __init__(self, process: asyncio.subprocess.Process, editor: FakeEditor) -> None:
        self.process = process
        self.editor = editor
        self.exited: dict[str, Any] | None = None
        self._next = 0
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader = asyncio.create_task(self._read())
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def agent_alive(self) -> bool:
        return self.exited is None and self.process.returncode is None

    async def request(self, method: str, params: Any, *, raw: bool = False) -> dict[str, Any]:
        self._next += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._next] = future
        await self._write({"id": self._next, "op": "request", "method": method, "params": params})
        answer = await future
        if "error" in answer:
            error = answer["error"]
            raise AcpError(error["code"], error["message"], error.get("data"))
        result = answer.get("result")
        return result if isinstance(result, dict) else {}

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        self._next += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._next] = future
        await self._write({"id": self._next, "op": "notify", "method": method, "params": params})
        await future

    async def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        await self.process.stdin.drain()

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            message = json.loads(line)
            if "id" in message and "event" not in message:
                future = self._waiting.pop(message["id"], None)
                if future is not None and not future.done():
                    future.set_result(message)
            elif message["event"] == "notification":
                await self.editor.on_notification(message["method"], message["params"])
            elif message["event"] == "request":
                task = asyncio.create_task(self._answer(message))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            elif message["event"] == "exit":
                self.exited = message
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionError("the node client ended"))

    async def _answer(self, message: dict[str, Any]) -> None:
        try:
            result = await self.editor.on_request(message["method"], message["params"])
            reply: dict[str, Any] = {"op": "respond", "rid": message["rid"], "result": result}
        except AcpError as exc:
            error = {"code": exc.code, "message": exc.message, "data": exc.data}
            reply = {"op": "respond", "rid": message["rid"], "error": error}
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self._write(reply)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self._write({"op": "close"})
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


@asynccontextmanager
async def node_client(
    editor: FakeEditor, env: dict[str, str], cwd: Path, settings: object = None
) -> AsyncIterator[NodeClient]:
    node_env = {**env, "ACP_SDK_PATH": node_sdk_entry()}
    process = await asyncio.create_subprocess_exec(
        "node",
        str(NODE_CLIENT),
        "--",
        *agent_command(settings),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=node_env,
        cwd=cwd,
        limit=50 * 1024 * 1024,
    )
    client = NodeClient(process, editor)
    try:
        yield client
    finally:
        await client.close()


AnyClient = PythonClient | NodeClient
CLIENTS = ("python", "node")


@asynccontextmanager
async def acp_client(
    kind: str, editor: FakeEditor, env: dict[str, str], cwd: Path, settings: object = None
) -> AsyncIterator[AnyClient]:
    """A client of `kind` ("python" or "node") connected to a fresh `agentls acp`."""
    async with AsyncExitStack() as stack:
        if kind == "python":
            client: AnyClient = await stack.enter_async_context(
                python_client(editor, env, cwd, settings)
            )
        else:
            client = await stack.enter_async_context(node_client(editor, env, cwd, settings))
        client.env = env
        yield client


@asynccontextmanager
async def initialized_client(kind: str, api_url: str, home: Path) -> AsyncIterator[AnyClient]:
    """A client of `kind` with a fresh editor, initialized (the answer in `.initialized`)."""
    async with acp_client(kind, FakeEditor(), agent_env(api_url, home), home) as client:
        client.initialized = await initialize(client)  # type: ignore[union-attr]
        yield client


def client_capabilities(*, fs: bool = True, terminal: bool = False) -> dict[str, Any]:
    return {"fs": {"readTextFile": fs, "writeTextFile": fs}, "terminal": terminal}


async def initialize(
    client: AnyClient, *, fs: bool = True, terminal: bool = False
) -> dict[str, Any]:
    return await client.request(
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": client_capabilities(fs=fs, terminal=terminal),
            "clientInfo": {"name": f"agentls-tests-{client.kind}", "version": "1"},
        },
    )


async def new_session(client: AnyClient, cwd: Path, mcp_servers: list[Any] | None = None) -> str:
    result = await client.request("session/new", {"cwd": str(cwd), "mcpServers": mcp_servers or []})
    return str(result["sessionId"])


async def prompt(client: AnyClient, session_id: str, *blocks: Any) -> dict[str, Any]:
    content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
    return await client.request("session/prompt", {"sessionId": session_id, "prompt": content})


def write_project(
    root: Path, files: dict[str, str], settings: str = "", *, trusted_by: AnyClient | None = None
) -> Path:
    """A project folder with `files` (and `.agentls.toml` holding `settings`); `trusted_by`
    trusts it (`agentls trust`) in that client's agent's config folder, for tests whose
    point needs the project's settings that loosen safety."""
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    if settings:
        (root / ".agentls.toml").write_text(settings, encoding="utf-8")
    if trusted_by is not None:
        from tests.trust_support import trust_workspace

        trust_workspace(root, trusted_by.env)
    return root


def request_with_tool_result(api: Any, tool_use_id: str) -> dict[str, Any]:
    """The tool_result block the model got for `tool_use_id` (from the recorded requests)."""
    for request in reversed(api.message_requests):
        for message in request.messages:
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
                    return dict(block)
    raise AssertionError(f"no tool_result for {tool_use_id} was sent to the model")
