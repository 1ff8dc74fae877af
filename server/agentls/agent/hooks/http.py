"""`http` hooks: the event's JSON POSTed to a URL, the answer read as a command hook's stdout.

Claude Code's semantics: the body is the hook input (`Content-Type: application/json`);
a 2xx answer with an empty body is "exit 0, no output", a 2xx JSON object is read like a
command hook's JSON (`decision`, `hookSpecificOutput`, …), other 2xx text like its plain
stdout; a non-2xx status, a connection failure or a timeout is a non-blocking error (the
call goes on, the user is told). Header values may use `$VAR` / `${VAR}` for the variables
the hook lists in `allowedEnvVars`; any other reference is sent empty.

Where agentls is stricter than Claude Code (docs/claude-code.md):
- the request goes through `web_fetch`'s address guard: a loopback, link-local or private
  address (also one a name resolves to) is refused unless the user's
  `webFetch.allowedPrivateAddresses` allows it; no proxy, no redirect is followed;
- header variables come from the scrubbed environment the hook commands get: the agent's
  own credentials never (unless `passCredentials`, user settings only), and a project's or
  plugin's hook gets no secret-looking variable (`*TOKEN*`, `*API_KEY*`, `*SECRET*`, …)
  even when it lists it: only the user's own hooks may send those;
- the answer is read up to the hook output cap; the hook's timeout bounds the whole request.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Protocol
from urllib.parse import urlsplit

from agentls import credentials
from agentls.workspace.process import NEVER_PASSED, scrub_env


class HookCommand(Protocol):
    """What an http hook is here (`agentls.agent.hooks.config.HookCommand` has it; named,
    not imported, as hook_config uses this module's checks)."""

    @property
    def command(self) -> str:
        """The URL."""
        ...

    @property
    def timeout(self) -> float: ...
    @property
    def headers(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def allowed_env_vars(self) -> tuple[str, ...]: ...
    @property
    def user_level(self) -> bool: ...
    @property
    def pass_credentials(self) -> bool: ...


MAX_RESPONSE_BYTES = 64 * 1024
USER_AGENT = "agentls-hook/0.1"
_PORTS = {"http": 80, "https": 443}
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def header_variables(value: str) -> list[str]:
    """The variable names a header value refers to (`$X`, `${X}`)."""
    return [m.group(1) or m.group(2) for m in _VARIABLE.finditer(value)]


def withheld_variable(name: str, *, user_level: bool, pass_credentials: bool = False) -> str | None:
    """Why a listed variable is still sent empty, or None when it may be sent."""
    if name in credentials.CREDENTIAL_VARS or name in NEVER_PASSED:
        if user_level and pass_credentials and name in credentials.CREDENTIAL_VARS:
            return None
        return (
            f"${name} is the agent's own credential and is sent empty (a hook in your user "
            "settings may have it with `passCredentials: true`)"
        )
    if user_level:
        return None
    if name not in scrub_env({name: "x"}):
        return (
            f"${name} looks like a secret and a project's or plugin's hook is sent only the "
            "scrubbed environment, so it is sent empty; put the hook in your user settings "
            "(~/.claude/settings.json) to send it"
        )
    return None


def header_values(
    hook: HookCommand,
    environment: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The hook's headers with the variables it may use filled in, every other one empty."""
    source = dict(os.environ if environment is None else environment)
    if hook.pass_credentials and environment is None:
        source.update(credentials.environ())
    source.update(extra or {})
    allowed = {
        name
        for name in hook.allowed_env_vars
        if withheld_variable(
            name, user_level=hook.user_level, pass_credentials=hook.pass_credentials
        )
        is None
    }

    def fill(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return source.get(name, "") if name in allowed else ""

    return {name: _VARIABLE.sub(fill, value).strip() for name, value in hook.headers}


class HttpAnswer:
    """How one POST ended, in a command run's terms (`exit_code` 0 for a 2xx answer)."""

    def __init__(
        self,
        exit_code: int | None,
        body: str = "",
        *,
        error: str | None = None,
        timed_out: bool = False,
        seconds: float = 0.0,
    ) -> None:
        self.exit_code = exit_code
        self.body = body
        self.error = error
        self.timed_out = timed_out
        self.seconds = seconds


async def post_event(
    hook: HookCommand,
    data: str,
    *,
    private_addresses: Sequence[str] = (),
    environment: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> HttpAnswer:
    """POST `data` (the hook input) to the hook's URL within its timeout."""
    from agentls.workspace.netguard import AddressGuard, BlockedAddress, guarded_transport_client

    guard = AddressGuard.of(private_addresses, who="an http hook")
    headers = {"User-Agent": USER_AGENT, "Accept": "application/json, text/plain;q=0.9"}
    headers.update(header_values(hook, environment, extra_env))
    headers["Content-Type"] = "application/json"
    started = time.monotonic()
    split = urlsplit(hook.command)
    try:
        async with asyncio.timeout(hook.timeout):  # a clear refusal before anything is sent
            await guard.resolve(split.hostname or "", split.port or _PORTS[split.scheme])
        async with (
            asyncio.timeout(hook.timeout),
            guarded_transport_client(guard, hook.timeout) as client,
            client.stream(
                "POST", hook.command, content=data.encode("utf-8"), headers=headers
            ) as response,
        ):
            body = await _read_capped(response.aiter_bytes())
            status = response.status_code
    except TimeoutError:
        return HttpAnswer(None, timed_out=True, seconds=time.monotonic() - started)
    except BlockedAddress as exc:
        return HttpAnswer(None, error=str(exc), seconds=time.monotonic() - started)
    except Exception as exc:  # connection refused, bad header value, TLS, …
        detail = str(exc) or type(exc).__name__
        return HttpAnswer(None, error=f"the request failed: {detail}")
    seconds = time.monotonic() - started
    text = body.decode("utf-8", errors="replace")
    if not 200 <= status < 300:
        return HttpAnswer(None, text, error=f"the server answered HTTP {status}", seconds=seconds)
    return HttpAnswer(0, text, seconds=seconds)


async def _read_capped(chunks: AsyncIterator[bytes]) -> bytes:
    """The body up to `MAX_RESPONSE_BYTES` (the rest is not read)."""
    found = bytearray()
    async for chunk in chunks:
        found.extend(chunk)
        if len(found) >= MAX_RESPONSE_BYTES:
            break
    return bytes(found[:MAX_RESPONSE_BYTES])
