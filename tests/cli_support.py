"""Running `agentls` subcommands as real subprocesses, against the scripted Messages API.

The CLI under test starts its own `agentls serve` subprocess and drives it over LSP; the
scripted server runs in the test process and is reached through `ANTHROPIC_BASE_URL`.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.lsp_support import server_env

CLI_TIMEOUT = 180


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str


def cli_env(api_url: str | None, state: Path, **extra: str) -> dict[str, str]:
    env = server_env(api_url, state, **extra)
    env.pop("AGENTLS_CLI_LOG_LEVEL", None)
    env["COLUMNS"] = "120"
    return env


def run_cli(
    *args: str,
    env: dict[str, str],
    cwd: Path | None = None,
    timeout: float = CLI_TIMEOUT,
    python: Sequence[str] = (),
    input: str | None = None,
) -> CliResult:
    """`python` options go before `-m agentls` (e.g. `-X importtime`); `input`: what the
    user types (stdin); none: stdin is closed."""
    proc = subprocess.run(
        [sys.executable, *python, "-m", "agentls", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        timeout=timeout,
        input=None if input is None else input.encode(),
        stdin=subprocess.DEVNULL if input is None else None,
    )
    # bytes, decoded without newline translation: CRLF in a diff must survive
    return CliResult(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` (bytes), to prove a tree unchanged."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@dataclass
class TerminalRun:
    """A CLI run on a pseudo-terminal: its exit code, its raw output (escape sequences
    included) and the same output as plain text."""

    code: int
    raw: str

    @property
    def plain(self) -> str:
        return plain_text(self.raw)


Responder = Callable[[bytes], bytes | None]
"""Given everything the terminal has shown so far, what to type next (None: nothing)."""


def on_a_terminal(
    argv: list[str], env: dict[str, str], respond: Responder | None = None, timeout: float = 120
) -> TerminalRun:
    """Runs `argv` on a pseudo-terminal, as a user at a terminal would; `respond` types the
    answers to its prompts. Reads until the program closes the terminal or `timeout` passes."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the program on a terminal
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    output = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                data = os.read(fd, 4096)
            except OSError:  # EIO: the program closed the terminal
                break
            if not data:
                break
            output += data
            typed = respond(output) if respond else None
            if typed:
                os.write(fd, typed)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    return TerminalRun(os.waitstatus_to_exitcode(status), output.decode("utf-8", "replace"))


def plain_text(text: str) -> str:
    """`text` without terminal escape sequences."""
    return re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", text)


def answer_once(prompt: bytes, answer: bytes) -> Responder:
    """Types `answer` the first time `prompt` appears."""
    answered = False

    def respond(output: bytes) -> bytes | None:
        nonlocal answered
        if answered or prompt not in output:
            return None
        answered = True
        return answer

    return respond
