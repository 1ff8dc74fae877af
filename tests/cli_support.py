"""Running `agentls` subcommands as real subprocesses, against the scripted Messages API.

The CLI under test starts its own `agentls serve` subprocess and drives it over LSP; the
scripted server runs in the test process and is reached through `ANTHROPIC_BASE_URL`.
"""

from __future__ import annotations

import subprocess
import sys
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
    input: str | None = None,
) -> CliResult:
    """`input`: what the user types (stdin); none: stdin is closed."""
    proc = subprocess.run(
        [sys.executable, "-m", "agentls", *args],
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
