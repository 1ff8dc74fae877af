"""Runs a real language server behind a stdio pipe and dies in the middle of a request.

Usage: python crash_proxy.py MARKER -- SERVER ARGV...

Messages pass through unchanged, except: the first time a `textDocument/references`
request arrives (and MARKER does not exist yet), the proxy creates MARKER, says so on
stderr and exits with code 3 before the server answers — to the client, the language
server crashed mid-query. Once MARKER exists it only forwards, so a restart works.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path


def read_message(stream: object) -> bytes | None:
    raw = b""
    length = 0
    while True:
        line = stream.readline()  # type: ignore[attr-defined]
        if not line:
            return None
        raw += line
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1].strip())
        if line in (b"\r\n", b"\n"):
            break
    return raw + stream.read(length)  # type: ignore[attr-defined]


def main() -> int:
    marker = Path(sys.argv[1])
    argv = sys.argv[sys.argv.index("--") + 1 :]
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None
    assert child.stdout is not None

    def pump_out() -> None:
        assert child.stdout is not None
        while True:
            chunk = child.stdout.read1(65536)
            if not chunk:
                os._exit(child.wait())
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()

    threading.Thread(target=pump_out, daemon=True).start()
    while True:
        message = read_message(sys.stdin.buffer)
        if message is None:
            child.stdin.close()
            return child.wait()
        if b'"textDocument/references"' in message and not marker.exists():
            marker.write_text("crashed\n")
            sys.stderr.write("proxy: simulated crash while answering references\n")
            sys.stderr.flush()
            child.kill()
            os._exit(3)
        child.stdin.write(message)
        child.stdin.flush()


if __name__ == "__main__":
    sys.exit(main())
