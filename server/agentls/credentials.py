"""The agent's own credentials, held in memory, never in this process's environment.

Why: scrubbing the environment of child processes is not enough. Linux shows every
process's *initial* environment in `/proc/<pid>/environ`, readable by any process of the
same user, so a test, a linter plugin or a command the agent started could read the key
from its parent (`/proc/$PPID/environ`) and print it reversed, past every redaction.
Removing the variable with `os.environ.pop` does not help: that file shows the memory
the process was started with.

So `isolate()` runs first thing at start-up: when `ANTHROPIC_API_KEY` or
`ANTHROPIC_AUTH_TOKEN` is in the environment, the process writes them into a pipe and
re-executes itself with the same arguments, an environment without them, and the pipe's
read end named in `AGENTLS_CREDENTIALS_FD`. The new image reads the pipe, closes it and
keeps the values here. Code that needs them reads `environ()` (the environment plus the
held credentials); child environments are built from `os.environ` and never see them.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Mapping

__all__ = [
    "CREDENTIAL_VARS",
    "FD_VAR",
    "environ",
    "held",
    "isolate",
    "remember",
    "remember_secret",
    "secret_values",
]

CREDENTIAL_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
FD_VAR = "AGENTLS_CREDENTIALS_FD"

_held: dict[str, str] = {}


def held() -> dict[str, str]:
    """The credentials this process holds (a copy)."""
    return dict(_held)


_secret_values: set[str] = set()


def remember_secret(value: str) -> None:
    """Redact this value everywhere the agent's credentials are redacted: a key an
    `apiKeyHelper` printed, a custom header's value (`agentls.workspace.secrets`)."""
    if value:
        _secret_values.add(value)


def secret_values() -> list[str]:
    """The values `remember_secret` was given."""
    return list(_secret_values)


def remember(values: Mapping[str, str]) -> None:
    """Hold these credentials (non-empty values of `CREDENTIAL_VARS` only)."""
    _held.update({k: v for k, v in values.items() if k in CREDENTIAL_VARS and v})


def environ() -> dict[str, str]:
    """`os.environ` with the held credentials: for code that reads the agent's settings.

    A credential still in the environment (a process that was not isolated, tests that
    set it with monkeypatch) wins over a held one.
    """
    merged = dict(_held)
    merged.update(os.environ)
    return merged


def isolate() -> None:
    """Take the credentials out of this process's environment (see the module docstring).

    Returns normally once the environment holds no credential (after reading the pipe of
    a previous step); otherwise replaces the process image and does not return. Only
    call it at process entry, before threads or children exist.
    """
    _read_pipe()
    found = {name: os.environ[name] for name in CREDENTIAL_VARS if os.environ.get(name)}
    if not found or not hasattr(os, "execve") or sys.platform == "win32":
        return
    remember(found)
    reader, writer = os.pipe()
    payload = json.dumps(found).encode()
    if len(payload) > 60_000:  # a pipe's buffer: never block on our own pipe
        return
    os.write(writer, payload)
    os.close(writer)
    os.set_inheritable(reader, True)
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_VARS}
    env[FD_VAR] = str(reader)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, list(sys.orig_argv), env)


def _read_pipe() -> None:
    raw = os.environ.pop(FD_VAR, None)
    if raw is None or not raw.isdigit():
        return
    fd = int(raw)
    chunks = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except OSError:
        return
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    try:
        values = json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        return
    if isinstance(values, dict):
        remember({str(k): str(v) for k, v in values.items()})
