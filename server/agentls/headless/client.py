"""Drive `agentls serve` as an ordinary LSP client over stdio (the path editors take).

`ServerConnection` starts the server as a subprocess in its own process group (so a
terminal's Ctrl-C reaches only the CLI, which then cancels the run cleanly), initializes
it with the capabilities of a capable editor (versioned `documentChanges`, resource
operations, change annotations, work-done progress), answers `workspace/applyEdit`
through an `EditLedger`, and forwards progress, log lines and `agentls/event`
notifications to a `Listener`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from agentls import __version__, credentials
from agentls.headless.edits import EditLedger
from agentls.parentwatch import PARENT_ENV

if TYPE_CHECKING:
    from agentls.agent.protocol.events import EventPayload

log = logging.getLogger(__name__)

SHUTDOWN_SECONDS = 5.0
INVALID_PARAMS = -32602
_F = TypeVar("_F", bound=Callable[..., Any])


class Listener(Protocol):
    """What the connection reports while a command runs; methods must not raise."""

    def on_event(self, event: EventPayload) -> None: ...

    def on_progress(self, kind: str, message: str) -> None: ...

    def on_message(self, kind: int, message: str) -> None: ...


class _Quiet:
    def on_event(self, event: EventPayload) -> None:
        return None

    def on_progress(self, kind: str, message: str) -> None:
        return None

    def on_message(self, kind: int, message: str) -> None:
        return None


class ServerError(Exception):
    """The server could not be started, or answered a command with an error."""


_T = TypeVar("_T")


async def _in_daemon_thread(ask: Callable[..., _T | None], *args: Any) -> _T | None:
    """Run a blocking prompt off the loop in a daemon thread: if the run ends (Ctrl-C) while
    the prompt still waits for a key, the process can exit without it."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T | None] = loop.create_future()

    def work() -> None:
        try:
            answer = ask(*args)
        except Exception:
            answer = None

        def deliver() -> None:
            if not future.done():
                future.set_result(answer)

        loop.call_soon_threadsafe(deliver)

    threading.Thread(target=work, name="agentls-approval", daemon=True).start()
    return await future


def plain(value: Any) -> Any:
    """pygls hands untyped payloads over as named tuples; make them plain JSON values."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


@dataclass
class ServerConnection:
    workspace: Path
    env: Mapping[str, str] | None = None
    """The server's environment (default: this process's)."""
    ledger: EditLedger | None = None
    """Answers `workspace/applyEdit`; None refuses every edit."""
    listener: Listener = field(default_factory=_Quiet)
    initialization_options: Any = None
    approve: Callable[[str, list[str]], str | None] | None = None
    """Answers approval prompts (message, choices) → choice; None: the server is told the
    client cannot prompt, so it denies with a message naming the rule that would allow."""
    ask_text: Callable[[str, str | None], str | None] | None = None
    """Answers `agentls/textInput` (message, default) → text (MCP servers' questions)."""
    ask_questions: Callable[[Mapping[str, Any]], dict[str, object] | None] | None = None
    """Answers `agentls/askQuestions` (blocking, run in a thread); None: not announced, so
    the agent is told nobody can be asked."""
    review_plan: Callable[[Mapping[str, Any]], dict[str, object] | None] | None = None
    """Answers `agentls/reviewPlan` (blocking, run in a thread)."""
    log_file: Path | None = None
    index_on_demand: bool = False
    """Ask the server to start its symbol index only when a request needs it (one-shot
    commands: `agentls tool`, `tools`, `commands`)."""
    client: LanguageClient | None = None
    encoding: str = "utf-16"
    _started: bool = False
    _own_log: bool = False

    async def start(self) -> None:
        client = LanguageClient("agentls-cli", __version__)
        self.client = client
        self._register(client)
        if self.log_file is None:
            handle, name = tempfile.mkstemp(prefix="agentls-serve-", suffix=".log")
            os.close(handle)
            self.log_file = Path(name)
            self._own_log = True
        env = dict(credentials.environ() if self.env is None else self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        env[PARENT_ENV] = str(os.getpid())  # the server ends when we do (parentwatch)
        try:
            await client.start_io(
                sys.executable,
                "-m",
                "agentls",
                "serve",
                "--stdio",
                "--log-file",
                str(self.log_file),
                env=env,
                cwd=str(self.workspace),
                start_new_session=True,  # Ctrl-C in the terminal is ours to handle
            )
        except OSError as exc:
            raise ServerError(f"cannot start the language server: {exc}") from exc
        self._started = True
        root = self.workspace.resolve()
        try:
            response = await asyncio.wait_for(
                client.initialize_async(
                    types.InitializeParams(
                        capabilities=self._capabilities(),
                        client_info=types.ClientInfo(name="agentls-cli", version=__version__),
                        process_id=os.getpid(),
                        root_uri=root.as_uri(),
                        workspace_folders=[
                            types.WorkspaceFolder(uri=root.as_uri(), name=root.name)
                        ],
                        initialization_options=self.initialization_options,
                    )
                ),
                timeout=60,
            )
        except Exception as exc:
            raise ServerError(
                f"the language server did not initialize: {exc}{self._log_tail()}"
            ) from exc
        encoding = response.capabilities.position_encoding
        self.encoding = str(getattr(encoding, "value", encoding) or "utf-16")
        if self.ledger is not None:
            self.ledger.encoding = self.encoding
        client.initialized(types.InitializedParams())

    def _capabilities(self) -> types.ClientCapabilities:
        window = types.WindowClientCapabilities(work_done_progress=True)
        if self.approve is not None:
            window.show_message = types.ShowMessageRequestClientCapabilities(
                message_action_item=types.ClientShowMessageActionItemOptions(
                    additional_properties_support=False
                )
            )
        flags: dict[str, bool] = {}
        if self.ask_text is not None:
            flags["textInput"] = True
        if self.ask_questions is not None:
            flags["questions"] = True
        if self.review_plan is not None:
            flags["planReview"] = True
        if self.index_on_demand:
            flags["indexOnDemand"] = True
        return types.ClientCapabilities(
            experimental={"agentls": flags} if flags else None,
            workspace=types.WorkspaceClientCapabilities(
                apply_edit=True,
                workspace_edit=types.WorkspaceEditClientCapabilities(
                    document_changes=True,
                    resource_operations=[
                        types.ResourceOperationKind.Create,
                        types.ResourceOperationKind.Rename,
                        types.ResourceOperationKind.Delete,
                    ],
                    failure_handling=types.FailureHandlingKind.Transactional,
                    change_annotation_support=types.ChangeAnnotationsSupportOptions(
                        groups_on_label=False
                    ),
                ),
                execute_command=types.ExecuteCommandClientCapabilities(),
                workspace_folders=True,
            ),
            window=window,
            general=types.GeneralClientCapabilities(
                position_encodings=[
                    types.PositionEncodingKind.Utf32,
                    types.PositionEncodingKind.Utf16,
                ]
            ),
        )

    def _register(self, client: LanguageClient) -> None:
        """Answer the server's requests and notifications for the terminal's user."""
        feature = cast(Callable[[str], Callable[[_F], _F]], client.feature)
        handlers: dict[str, Callable[..., Any]] = {  # functions: pygls marks what it registers
            types.WORKSPACE_APPLY_EDIT: ServerConnection._apply_edit,
            types.WINDOW_WORK_DONE_PROGRESS_CREATE: ServerConnection._create_progress,
            types.PROGRESS: ServerConnection._progress,
            types.WINDOW_LOG_MESSAGE: ServerConnection._log_message,
            types.WINDOW_SHOW_MESSAGE: ServerConnection._show_message,
            types.WINDOW_SHOW_MESSAGE_REQUEST: ServerConnection._show_message_request,
            "agentls/textInput": ServerConnection._text_input,
            "agentls/askQuestions": ServerConnection._ask_questions,
            "agentls/reviewPlan": ServerConnection._review_plan,
            types.WORKSPACE_CONFIGURATION: ServerConnection._configuration,
            "agentls/event": ServerConnection._agent_event,
        }
        for method, handler in handlers.items():
            feature(method)(functools.partial(handler, self))

    def _apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        if self.ledger is None:
            return types.ApplyWorkspaceEditResult(
                applied=False, failure_reason="this client does not apply edits"
            )
        return self.ledger.handle(params.edit)

    def _create_progress(self, params: types.WorkDoneProgressCreateParams) -> None:
        return None

    def _progress(self, params: types.ProgressParams) -> None:
        value = plain(params.value)
        if not isinstance(value, dict):
            value = plain(getattr(params.value, "__dict__", {}))
        kind = str(value.get("kind") or "")
        message = str(value.get("message") or value.get("title") or "")
        self.listener.on_progress(kind, message)

    def _log_message(self, params: types.LogMessageParams) -> None:
        log.debug("server: %s", params.message)

    def _show_message(self, params: types.ShowMessageParams) -> None:
        self.listener.on_message(int(params.type), params.message)

    async def _show_message_request(
        self,
        params: types.ShowMessageRequestParams,
    ) -> types.MessageActionItem | None:
        if self.approve is None:
            return None
        titles = [a.title for a in params.actions or []]
        choice = await _in_daemon_thread(self.approve, params.message, titles)
        return None if choice is None else types.MessageActionItem(title=choice)

    async def _text_input(self, params: Any) -> str | None:
        request = plain(params)
        if self.ask_text is None or not isinstance(request, dict):
            return None
        message = str(request.get("message") or "")
        default = request.get("default")
        return await _in_daemon_thread(
            lambda text, _: self.ask_text(text, default) if self.ask_text else None,
            message,
            [],
        )

    async def _ask_questions(self, params: Any) -> dict[str, object] | None:
        if self.ask_questions is None:
            return None
        return await _in_daemon_thread(self.ask_questions, plain(params))

    async def _review_plan(self, params: Any) -> dict[str, object] | None:
        if self.review_plan is None:
            return None
        return await _in_daemon_thread(self.review_plan, plain(params))

    def _configuration(self, params: types.ConfigurationParams) -> list[Any]:
        return [None for _ in params.items]

    def _agent_event(self, params: Any) -> None:
        event = plain(params)
        if isinstance(event, dict) and isinstance(event.get("type"), str):
            # the payloads of `agentls.agent.protocol.events`; readers still use .get for fields
            self.listener.on_event(cast("EventPayload", event))

    async def command(self, name: str, argument: Any = None) -> Any:
        assert self.client is not None
        arguments = [] if argument is None else [argument]
        try:
            result = await self.client.workspace_execute_command_async(
                types.ExecuteCommandParams(command=name, arguments=arguments)
            )
        except Exception as exc:
            message = getattr(exc, "message", None) or str(exc)
            if getattr(exc, "code", None) == INVALID_PARAMS:
                # the server's clear answer to a bad argument (an unknown session, …): its
                # log holds only the same message with a traceback
                raise ServerError(message) from exc
            raise ServerError(f"{message}{self._log_tail()}") from exc
        return plain(result)

    def _log_tail(self) -> str:
        if self.log_file is None:
            return ""
        with contextlib.suppress(OSError):
            lines = self.log_file.read_text(encoding="utf-8", errors="replace").splitlines()
            errors = [line for line in lines if " ERROR " in line or "Traceback" in line]
            if errors:
                return "\n(server log " + str(self.log_file) + "):\n" + "\n".join(lines[-15:])
        return ""

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        server: asyncio.subprocess.Process | None = getattr(self.client, "_server", None)
        return server

    async def stop(self) -> None:
        """shutdown + exit; the server process is killed if it does not go in time."""
        client = self.client
        if client is None or not self._started:
            return
        self._started = False
        process = self.process
        if process is not None and process.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.shutdown_async(None), SHUTDOWN_SECONDS)
            with contextlib.suppress(Exception):
                client.exit(None)
            try:
                await asyncio.wait_for(process.wait(), SHUTDOWN_SECONDS)
            except TimeoutError:
                self.kill()
        with contextlib.suppress(Exception):
            stop = cast(Callable[[], Awaitable[None]], client.stop)
            await asyncio.wait_for(stop(), SHUTDOWN_SECONDS)
        if self.log_file is not None and self._own_log:
            # keep the log only when it records a server error (its path is in the message)
            with contextlib.suppress(OSError):
                text = self.log_file.read_text(encoding="utf-8", errors="replace")
                if " ERROR " not in text and "Traceback" not in text:
                    self.log_file.unlink()

    def kill(self) -> None:
        """Kill the server and everything it started (its own process group)."""
        process = self.process
        if process is None or process.returncode is not None:
            return
        import signal

        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)

    async def __aenter__(self) -> ServerConnection:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
