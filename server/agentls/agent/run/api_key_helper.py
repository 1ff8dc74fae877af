"""`apiKeyHelper`: a command that prints the API key (Claude Code's setting of that name).

Companies hand out short-lived keys through a script (a vault, an SSO exchange). agentls
runs the command with `/bin/sh` when a session needs a key and none is in the
environment, uses its trimmed output as the credential, and runs it again after the time
to live (`CLAUDE_CODE_API_KEY_HELPER_TTL_MS`, as Claude Code, else 5 minutes) or when
the endpoint answers 401. The command is the user's (user or managed settings only; a
project's is refused when the settings load), runs outside the sandbox with the scrubbed
environment, and its output is registered for redaction, so the key never appears in a
tool result, a hook's input or the transcript.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from agentls import credentials
from agentls.workspace.process import ProcessStartError, scrub_env
from agentls.workspace.process_guard import run_guarded

__all__ = ["API_KEY_HELPER_TTL", "ApiKeyHelper", "ApiKeyHelperError"]

API_KEY_HELPER_TTL = 300.0
"""Seconds a key from the helper is used before the helper runs again."""
TTL_VARIABLE = "CLAUDE_CODE_API_KEY_HELPER_TTL_MS"
HELPER_TIMEOUT = 30.0


class ApiKeyHelperError(Exception):
    """The helper failed, timed out or printed nothing (the message says which)."""


class ApiKeyHelper:
    """Runs the helper command and caches its key for `ttl` seconds."""

    def __init__(
        self, command: str, *, ttl: float | None = None, timeout: float = HELPER_TIMEOUT
    ) -> None:
        self.command = command
        self.ttl = ttl if ttl is not None else _ttl_from_env()
        self.timeout = timeout
        self.runs = 0
        self._key: str | None = None
        self._fetched = 0.0
        self._lock = asyncio.Lock()

    async def key(self, *, refresh: bool = False) -> str:
        """The current key, running the helper when there is none, it is older than the
        time to live, or `refresh` (after a 401)."""
        async with self._lock:
            fresh = self._key is not None and time.monotonic() - self._fetched < self.ttl
            if fresh and not refresh:
                assert self._key is not None
                return self._key
            self._key = await self._run()
            self._fetched = time.monotonic()
            return self._key

    async def _run(self) -> str:
        self.runs += 1
        try:
            result = await run_guarded(
                ["/bin/sh", "-c", self.command],
                cwd=Path.home(),
                env=scrub_env(),
                inherit_env=False,
                timeout=self.timeout,
                max_output_bytes=64 * 1024,
                kill_grace=1.0,
            )
        except ProcessStartError as exc:
            raise ApiKeyHelperError(f"the apiKeyHelper command could not start: {exc}") from exc
        if result.timed_out:
            raise ApiKeyHelperError(
                f"the apiKeyHelper command did not finish within {self.timeout:g} s"
            )
        key = result.stdout.strip()
        if not result.ok:
            detail = result.stderr.strip().splitlines()[-1:] or ["no error output"]
            raise ApiKeyHelperError(
                f"the apiKeyHelper command failed with exit status {result.exit_code}: {detail[0]}"
            )
        if not key:
            raise ApiKeyHelperError("the apiKeyHelper command printed no key")
        credentials.remember_secret(key)
        return key


def _ttl_from_env() -> float:
    text = os.environ.get(TTL_VARIABLE, "")
    try:
        return max(0.0, float(text) / 1000) if text else API_KEY_HELPER_TTL
    except ValueError:
        return API_KEY_HELPER_TTL
