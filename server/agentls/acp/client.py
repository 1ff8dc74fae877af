"""`ClientLink`: the editor on the other end of the connection, as the host uses it.

It holds what the client said it can do (`initialize`'s capabilities) and sends everything
the host sends it. `session/update` notifications go through one queue, in order, from one
task: the core emits events synchronously and the SDK's sends are coroutines, so sending
each from its own task could reorder them. Requests to the client (permission, files,
terminals) first wait until the queue is empty, so the client has seen every update (say,
the `tool_call` a permission request refers to) before it is asked anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from acp.schema import ClientCapabilities

if TYPE_CHECKING:
    from acp.interfaces import Client

log = logging.getLogger(__name__)

READ_TIMEOUT = 10.0
"""Longest wait for the client's answer to `fs/read_text_file` before using the disk."""


@dataclass
class ClientLink:
    """The connection's client side: capabilities, the update queue, and requests."""

    conn: Client | None = None
    capabilities: ClientCapabilities = field(default_factory=ClientCapabilities)
    _queue: asyncio.Queue[tuple[str, Any]] | None = None
    _sender: asyncio.Task[None] | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    # -- what the client can do -----------------------------------------------------------

    @property
    def reads_files(self) -> bool:
        fs = self.capabilities.fs
        return bool(fs and fs.read_text_file)

    @property
    def writes_files(self) -> bool:
        fs = self.capabilities.fs
        return bool(fs and fs.write_text_file)

    @property
    def has_terminal(self) -> bool:
        return bool(self.capabilities.terminal)

    @property
    def client(self) -> Client:
        if self.conn is None:
            raise ConnectionError("no ACP client is connected")
        return self.conn

    # -- session/update, in order ---------------------------------------------------------

    def send(self, session_id: str, update: Any) -> None:
        """Queue one `session/update` (never raises, never blocks). Called from another
        thread, it hands the update to the connection's loop."""
        if self.conn is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self.send, session_id, update)
            return
        self._loop = loop
        if self._queue is None:
            self._queue = asyncio.Queue()
        if self._sender is None or self._sender.done():
            self._sender = loop.create_task(self._send_all(self._queue), name="agentls-acp-updates")
        self._queue.put_nowait((session_id, update))

    async def flush(self) -> None:
        """Wait until every queued update was handed to the transport."""
        if self._queue is not None and self._sender is not None and not self._sender.done():
            await self._queue.join()

    async def _send_all(self, queue: asyncio.Queue[tuple[str, Any]]) -> None:
        while True:
            session_id, update = await queue.get()
            try:
                await self.client.session_update(session_id=session_id, update=update)
            except ConnectionError:
                log.info("the client is gone; dropping session updates")
            except Exception:
                log.exception("cannot send a session/update")
            finally:
                queue.task_done()

    async def close(self) -> None:
        if self._sender is not None:
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sender

    # -- files ----------------------------------------------------------------------------

    async def read_text_file(self, session_id: str, path: str) -> str | None:
        """The client's text of a file (its unsaved buffer, else the disk); None when it
        cannot say in time or answers with an error."""
        await self.flush()
        try:
            response = await asyncio.wait_for(
                self.client.read_text_file(session_id=session_id, path=path), READ_TIMEOUT
            )
        except TimeoutError:
            log.warning("the client did not answer fs/read_text_file for %s in time", path)
            return None
        except Exception as exc:
            log.info("fs/read_text_file %s: %s", path, exc)
            return None
        return response.content

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        """Write through the client (it records undo); raises when the client refuses."""
        await self.flush()
        await self.client.write_text_file(session_id=session_id, path=path, content=content)
