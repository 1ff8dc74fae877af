"""A real model for tests and the bench: llama.cpp's server (xllamacpp) on 127.0.0.1.

`scripts/deps/realmodel.sh` installs the server's venv and the GGUF files under
$AGENTLS_MODELS_DIR (default ~/.cache/agentls-models); without them the tests skip.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS = Path(os.environ.get("AGENTLS_MODELS_DIR", Path.home() / ".cache" / "agentls-models"))
SERVER_PYTHON = MODELS / "venv" / "bin" / "python"
SMALL = MODELS / "qwen2.5-coder-0.5b.gguf"
BIG = MODELS / "qwen2.5-coder-1.5b.gguf"
SERVE = ROOT / "scripts" / "realmodel_serve.py"


def missing(model: Path) -> str | None:
    """Why the real model cannot run here, or None."""
    if not SERVER_PYTHON.exists():
        return f"no xllamacpp venv at {SERVER_PYTHON}: run scripts/deps/realmodel.sh"
    if not model.exists():
        return f"no model at {model}: run scripts/deps/realmodel.sh"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def llama_server(model: Path, ctx: int = 8192, threads: int = 2) -> Iterator[str]:
    """Serve `model` (temperature 0, seed 42 by default) and yield its base URL."""
    port = _free_port()
    log = open(MODELS / f"server-{port}.log", "w")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        [str(SERVER_PYTHON), str(SERVE), str(model), str(port), str(ctx), str(threads)],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 600
        line = ""
        while time.monotonic() < deadline and not line.startswith("listening"):
            line = process.stdout.readline()
            if not line and process.poll() is not None:
                raise RuntimeError(f"the llama.cpp server exited; see {log.name}")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        log.close()
