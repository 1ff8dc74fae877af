"""Newline-delimited JSON-RPC on the process's pipes, for the SDK's connection.

The SDK's own stdio transport (`NdjsonTransport`) logs a line that is not JSON and drops
it; a client that sent it would wait for an answer forever. This one answers such a line
the way JSON-RPC says — a parse error (-32700) or an invalid request (-32600) with `id:
null` — and keeps serving. JSON nested deeper than `jsonbody.MAX_DEPTH` is a parse error too
(`json.loads` raised `RecursionError` on it, and the agent exited). Everything else (one
message per line, UTF-8) is the same; the SDK still does all of the protocol above the
framing.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from agentls.jsonbody import loads_bounded

log = logging.getLogger(__name__)

MAX_LINE = 50 * 1024 * 1024
"""Longest message (images come base64-encoded inside prompts)."""


class StdioTransport:
    """The SDK's `Transport` protocol: `send`, `receive` (None at the end), `close`."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()

    async def send(self, message: dict[str, object]) -> None:
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        async with self._lock:  # one message per line, never interleaved
            self._writer.write(data.encode("utf-8"))
            await self._writer.drain()

    async def receive(self) -> dict[str, object] | None:
        while True:
            line = await self._read_line()
            if line is None:
                return None
            if not line.strip():
                continue
            message = await self._parse(line)
            if message is not None:
                return message

    async def close(self) -> None:
        self._writer.close()

    async def _parse(self, line: bytes) -> dict[str, object] | None:
        try:
            message = loads_bounded(line)
        except (ValueError, UnicodeDecodeError) as exc:
            await self._error(None, -32700, f"Parse error: the line is not JSON ({exc})")
            return None
        if not isinstance(message, dict):
            await self._error(
                None, -32600, "Invalid request: send one JSON-RPC object per line (no batches)"
            )
            return None
        method = message.get("method")
        if "method" in message and not isinstance(method, str):
            await self._error(
                message.get("id"), -32600, "Invalid request: `method` must be a string"
            )
            return None
        return message

    async def _error(self, request_id: Any, code: int, text: str) -> None:
        log.warning("bad input: %s", text)
        error = {"code": code, "message": text}
        await self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    async def _read_line(self) -> bytes | None:
        """The next line; None at the end of input. An overlong line is skipped (and
        answered as invalid) without ever holding more than the limit in memory."""
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial or None
        except asyncio.LimitOverrunError as exc:
            await self._skip_line(exc.consumed)
            await self._error(None, -32600, f"Invalid request: a message over {MAX_LINE} bytes")
            return b""
        return line

    async def _skip_line(self, consumed: int) -> None:
        await self._reader.readexactly(consumed)
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.IncompleteReadError:
                return
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
