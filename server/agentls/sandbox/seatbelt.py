"""The macOS sandbox: Seatbelt (`sandbox-exec`) with a profile equivalent to the Linux one.

UNTESTED HERE: agentls is developed and tested on Linux; nothing in the test suite runs
this code (see docs/sandbox.md). It is kept small and follows Apple's SBPL profile
language as Claude Code's sandbox uses it:

- writes are denied except in the shadow copy, the private HOME, the caches and the temp
  folders;
- reads of the hidden paths (real workspace, credentials, agentls's folders) are denied;
- network is denied except loopback connections to agentls's proxy port (allowed
  domains) and, with `allowLocalBinding`, to and from localhost.

What Seatbelt cannot do that bwrap does: a PID namespace (the runner's process group and
supervisor stop the tree instead), per-run cgroups, and a private `/tmp` (the run gets
its own `TMPDIR` instead).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from agentls.sandbox.backend import OsConfinement
from agentls.sandbox.layout import Layout
from agentls.workspace.process import Launch, without_agent_variables

__all__ = ["SeatbeltConfinement", "seatbelt_profile"]


def _quote(path: Path | str) -> str:
    return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'


def seatbelt_profile(layout: Layout, proxy_port: int | None, local_binding: bool) -> str:
    """The SBPL profile for one layout."""
    lines = ["(version 1)", "(allow default)", "(deny network*)", "(deny file-write*)"]
    writable = [*layout.writable, layout.home, *(t for _, t in layout.cache_binds)]
    writable += [Path("/private/tmp"), Path("/private/var/folders"), Path("/dev")]
    for path in writable:
        lines.append(f"(allow file-write* (subpath {_quote(path)}))")
    for path in (*layout.hidden_dirs, *layout.hidden_files):
        lines.append(f"(deny file-read* file-write* (subpath {_quote(path)}))")
    for path in layout.reexposed:
        lines.append(f"(allow file-read* (subpath {_quote(path)}))")
    # the git folder (no bind mounts here: its config is the real one, read-only)
    for _, path in layout.read_only_binds:
        lines.append(f"(allow file-read* (subpath {_quote(path)}))")
    for _, path in layout.writable_binds:
        lines.append(f"(allow file-read* file-write* (subpath {_quote(path)}))")
    for _, path in layout.read_only_after:
        lines.append(f"(deny file-write* (subpath {_quote(path)}))")
    lines.append('(allow network* (remote unix-socket (path-literal "/private/var/run/syslog")))')
    if proxy_port is not None:
        lines.append(f'(allow network-outbound (remote ip "localhost:{proxy_port}"))')
    if local_binding:
        lines.append('(allow network* (local ip "localhost:*") (remote ip "localhost:*"))')
    return "\n".join(lines) + "\n"


class SeatbeltConfinement(OsConfinement):
    """Runs commands under `sandbox-exec -p PROFILE`."""

    name = "seatbelt"

    @contextlib.asynccontextmanager
    async def launch(
        self, argv: Sequence[str], env: dict[str, str], cwd: Path
    ) -> AsyncIterator[Launch]:
        network = self.settings.network
        port = await self.proxies.port(network) if network.allowed_domains else None
        profile = seatbelt_profile(self.layout, port, network.allow_local_binding)
        self.layout.home.mkdir(parents=True, exist_ok=True)
        run_env = {
            **without_agent_variables(env),
            "HOME": str(self.layout.home),
            "AGENTLS_SANDBOX": "seatbelt",
        }
        if port is not None:
            proxy = f"http://127.0.0.1:{port}"
            for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
                run_env[var] = proxy
        yield Launch([self.program, "-p", profile, *argv], run_env, cwd)

    def signal(self, leader: int, sig: int) -> bool:
        import os

        try:
            os.killpg(leader, sig)
        except OSError:
            return False
        return True
