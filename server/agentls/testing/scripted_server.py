"""Scripted fake of the Anthropic Messages API: public entry point and command line.

`python -m agentls.testing.scripted_server --scenario FILE.json [--port N]` serves a scenario
file for clients in other processes (editor end-to-end tests, the offline demo) and prints
`listening on http://127.0.0.1:PORT` once it accepts connections.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TextIO

from agentls.testing._server import ScriptedMessagesServer
from agentls.testing.recorded import RecordedRequest
from agentls.testing.scenario import Scenario

__all__ = ["ScriptedMessagesServer", "main"]


class _JsonLinesRecorder:
    """Appends each request to a file, so out-of-process tests can assert on what was sent."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._file: TextIO = path.open("a", encoding="utf-8")

    def __call__(self, request: RecordedRequest) -> None:
        line = json.dumps(
            {
                "method": request.method,
                "path": request.path,
                "headers": request.headers,
                "json": request.json,
            }
        )
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        self._file.close()


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m agentls.testing.scripted_server",
        description="Serve a scripted fake of the Anthropic Messages API.",
    )
    parser.add_argument("--scenario", required=True, type=Path, help="scenario JSON file")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 (default) picks a free port")
    parser.add_argument("--require-auth", default=None, help="answer 401 unless this key is sent")
    parser.add_argument("--record", type=Path, default=None, help="append requests as JSON lines")
    return parser.parse_args(argv)


def _stop_on_signals(stop: threading.Event) -> None:
    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Serves until SIGTERM/SIGINT; the "listening on" line is the readiness signal."""
    args = _parse_args(argv)
    scenario = Scenario.from_file(args.scenario)
    recorder = _JsonLinesRecorder(args.record) if args.record else None
    stop = threading.Event()
    _stop_on_signals(stop)
    server = ScriptedMessagesServer(
        scenario,
        host=args.host,
        port=args.port,
        require_auth=args.require_auth,
        on_request=recorder,
    )
    with server:
        sys.stdout.write(f"listening on {server.base_url}\n")
        sys.stdout.flush()
        stop.wait()
    if recorder is not None:
        recorder.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
