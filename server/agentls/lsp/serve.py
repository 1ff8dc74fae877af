"""`agentls serve`: logging set-up and the transport, then hand over to pygls.

Logs go to a file or stderr, never stdout (stdout is the LSP channel under `--stdio`).

stdio is read by our own loop (`start_stdio`) rather than pygls's: its frame reader
(`agentls.lsp.framing`) survives any input, where pygls's raised out of the loop on an
overlong header line and never recovered from a short `Content-Length`. When stdin is a pipe
(how editors start language servers) it is read on the event loop instead of in a worker
thread: on a busy machine each thread hop costs a scheduling delay, and they add up to
milliseconds per request.
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
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from pygls.exceptions import JsonRpcParseError

if TYPE_CHECKING:
    from agentls.lsp.connection import AgentLanguageServer
    from agentls.lsp.framing import Frame

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
    from agentls.lsp.gc_freeze import drop_generated_sources, limit_malloc_arenas
    from agentls.parentwatch import die_with_parent

    limit_malloc_arenas()  # before any thread starts

    die_with_parent()  # started by the CLI: end with it
    try:
        tcp = parse_address(args.tcp) if args.tcp else None
        ws = parse_address(args.ws) if args.ws else None
    except ValueError as exc:
        sys.stderr.write(f"agentls serve: {exc}\n")
        return 2
    from agentls.lsp.server import create_server

    server = create_server()
    drop_generated_sources()  # lsprotocol's, before the host's imports reuse the memory
    if tcp is not None:
        start_tcp(server, *tcp)
    elif ws is not None:
        if importlib.util.find_spec("websockets") is None:
            sys.stderr.write(
                "agentls serve --ws needs the websockets package (pip install 'pygls[ws]')\n"
            )
            return 2
        server.start_ws(*ws)
    else:
        start_stdio(server)
    return 0


def stdin_is_private_pipe() -> bool:
    """stdin is a pipe and not the same file as stdout (making it non-blocking is safe)."""
    try:
        stdin, stdout = os.fstat(0), os.fstat(1)
    except OSError:
        return False
    same = (stdin.st_dev, stdin.st_ino) == (stdout.st_dev, stdout.st_ino)
    return stat.S_ISFIFO(stdin.st_mode) and not same


CHUNK = 1 << 16


def start_stdio(server: AgentLanguageServer) -> None:
    """Serve LSP on stdin/stdout until `exit`, end of input, or a lost client.

    Frames are read by `agentls.lsp.framing` (no input can end the loop); a private pipe
    (how editors start language servers) is read on the event loop, anything else (a TTY, a
    file) in a thread.
    """
    from pygls.io_ import StdoutWriter

    from agentls.lsp.protocol import set_stop_event

    stop = threading.Event()
    set_stop_event(server, stop)
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        asyncio.run(_read_stdin(server, stop))
    except BrokenPipeError:
        log.error("the connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]


def start_tcp(server: AgentLanguageServer, host: str, port: int) -> None:
    """Serve one client on a TCP socket (as pygls's `start_tcp`), with our frame reader."""
    from agentls.lsp.protocol import set_stop_event

    stop = threading.Event()
    set_stop_event(server, stop)

    async def main() -> None:
        done = asyncio.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            server.protocol.set_writer(writer)
            try:
                await _read_loop(server, stop, lambda: reader.read(CHUNK))
            finally:
                done.set()

        listener = await asyncio.start_server(connection, host, port)
        log.info("serving on %s", ", ".join(str(s.getsockname()) for s in listener.sockets))
        async with listener:
            await done.wait()

    try:
        asyncio.run(main())
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]


async def _read_stdin(server: AgentLanguageServer, stop: threading.Event) -> None:
    await _read_loop(server, stop, await _chunk_reader())


async def _read_loop(
    server: AgentLanguageServer, stop: threading.Event, read: Callable[[], Awaitable[bytes]]
) -> None:
    """Feed the frames of a byte stream to the protocol until `exit` or the stream ends.

    While a body is incomplete the loop looks at the clock every second (the read stays
    pending, so no byte is lost) and lets the parser give up a body whose `Content-Length`
    was too long (`FrameParser.expire`)."""
    from agentls.lsp.framing import FrameParser

    parser = FrameParser()
    pending: asyncio.Future[bytes] | None = None
    while not stop.is_set():
        if pending is None:
            pending = asyncio.ensure_future(read())
        wait = 1.0 if parser.waiting_for_body else None
        done, _ = await asyncio.wait({pending}, timeout=wait)
        if not done:
            if not _handle(server, stop, parser.expire()):
                return
            continue
        chunk, pending = pending.result(), None
        if not chunk:
            log.info("end of input; shutting down")
            return
        if not _handle(server, stop, parser.feed(chunk)):
            return


def _handle(server: AgentLanguageServer, stop: threading.Event, frames: Iterable[Frame]) -> bool:
    """Hand frames to the protocol; False once `exit` was handled."""
    from agentls.lsp.framing import BadFrame
    from agentls.lsp.protocol import send_error

    for frame in frames:
        if isinstance(frame, BadFrame):
            log.warning("dropped %d bytes of input: %s", frame.dropped, frame.reason)
            if frame.answer:
                error = JsonRpcParseError(f"Parse error: {frame.reason}")
                send_error(server.protocol, None, error)
        else:
            server.protocol.handle_body(frame.data)
        if stop.is_set():
            return False
    return True


async def _chunk_reader() -> Callable[[], Awaitable[bytes]]:
    """A function returning the next bytes of stdin (b"" at its end)."""
    loop = asyncio.get_running_loop()
    if stdin_is_private_pipe():
        stream = asyncio.StreamReader(limit=CHUNK)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), sys.stdin)
        return lambda: stream.read(CHUNK)
    fd = sys.stdin.fileno()
    return lambda: loop.run_in_executor(None, os.read, fd, CHUNK)
