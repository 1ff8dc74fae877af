"""`agentls serve`: logging set-up and the transport, then hand over to pygls.

Logs go to a file or stderr, never stdout (stdout is the LSP channel under `--stdio`).

When stdin is a pipe (how editors start language servers), it is read with an asyncio
stream instead of pygls's default reader, which hands every header line and body to a
worker thread: on a busy machine each of those thread hops costs a scheduling delay, and
they add up to milliseconds per request. Anything else (a TTY, a file, a socket shared
with stdout) uses pygls's reader unchanged.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import os
import stat
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentls.lsp.server import AgentLanguageServer

log = logging.getLogger(__name__)


def parse_address(value: str) -> tuple[str, int]:
    """`HOST:PORT` (IPv6 hosts in brackets) → (host, port); raises ValueError."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, got {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def configure_logging(level: str, log_file: str | None) -> None:
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8")
        if log_file
        else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def serve(args: argparse.Namespace) -> int:
    configure_logging(args.log_level, args.log_file)
    try:
        tcp = parse_address(args.tcp) if args.tcp else None
        ws = parse_address(args.ws) if args.ws else None
    except ValueError as exc:
        sys.stderr.write(f"agentls serve: {exc}\n")
        return 2
    from agentls.lsp.server import create_server

    server = create_server()
    if tcp is not None:
        server.start_tcp(*tcp)
    elif ws is not None:
        if importlib.util.find_spec("websockets") is None:
            sys.stderr.write(
                "agentls serve --ws needs the websockets package (pip install 'pygls[ws]')\n"
            )
            return 2
        server.start_ws(*ws)
    elif stdin_is_private_pipe():
        start_stdio_pipe(server)
    else:
        server.start_io()
    return 0


def stdin_is_private_pipe() -> bool:
    """stdin is a pipe and not the same file as stdout (making it non-blocking is safe)."""
    try:
        stdin, stdout = os.fstat(0), os.fstat(1)
    except OSError:
        return False
    same = (stdin.st_dev, stdin.st_ino) == (stdout.st_dev, stdout.st_ino)
    return stat.S_ISFIFO(stdin.st_mode) and not same


class _PipeReader:
    """pygls's `AsyncReader` over an asyncio stream (EOF reads as b"", as pygls expects)."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.stream = stream

    async def readline(self) -> bytes:
        return await self.stream.readline()

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self.stream.readexactly(n)
        except asyncio.IncompleteReadError:
            return b""


def start_stdio_pipe(server: AgentLanguageServer) -> None:
    """`server.start_io()`, reading stdin on the event loop instead of in a thread."""
    from pygls.io_ import StdoutWriter, run_async

    stop = threading.Event()
    server._stop_event = stop  # what pygls's own start_io sets, so shutdown() stops the loop

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=1 << 20)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), sys.stdin)
        server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
        await run_async(
            stop_event=stop,
            reader=_PipeReader(stream),
            protocol=server.protocol,
            logger=log,
            error_handler=server.report_server_error,
        )

    try:
        asyncio.run(main())
    except BrokenPipeError:
        log.error("the connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
