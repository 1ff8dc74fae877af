"""The Linux sandbox: a command wrapped in bubblewrap (`bwrap`), as a `Confinement`.

bubblewrap does the isolation (namespaces, mounts, dropped capabilities); this module only
says what to mount where (`Layout`), which resources each run gets (cgroup, rlimits,
network doors) and how to stop it. Every run gets:

- new user, PID, network, IPC, UTS and cgroup namespaces (`--unshare-all`) and no
  capabilities (`--cap-drop ALL`, also when agentls runs as root);
- `--die-with-parent`: if agentls dies, bwrap dies, and with its PID namespace every
  process of the run; on timeout or cancel the runner kills bwrap for the same effect;
- the filesystem of `Layout`, the environment of `sandbox_env`, the limits of `limits`.

No `--new-session`: the run has no controlling terminal anyway (the runner starts it in
a new session with stdin closed), and staying in bwrap's process group lets a polite
SIGINT reach pytest so it can report where it hung.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path

from agentls.sandbox.backend import OsConfinement
from agentls.sandbox.layout import Layout
from agentls.sandbox.limits import prlimit_argv, run_cgroup, wrap_in_cgroup
from agentls.sandbox.network import FORWARDER, INSIDE, NetworkPlan, open_network
from agentls.workspace.process import Launch, without_agent_variables

__all__ = ["BwrapConfinement", "bwrap_args", "sandbox_env"]

DROPPED_ENV = (
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "PYTHONPYCACHEPREFIX",
)
"""Pointers to agents, buses and displays outside the sandbox (their sockets are hidden
anyway), and the shared bytecode cache (replaced by the run's private one)."""


def bwrap_args(layout: Layout, network: NetworkPlan) -> list[str]:
    """bubblewrap's options for `layout` (everything before `--`)."""
    args = ["--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/"]
    args += ["--dev", "/dev", "--proc", "/proc"]
    args += _each("--tmpfs", layout.private)
    # Checked again here, at launch: a folder removed since the layout was built (a cache
    # cleared meanwhile) has nothing to hide, and bwrap cannot mount over a missing path.
    hidden = [folder for folder in layout.hidden_dirs if folder.is_dir()]
    args += _each("--tmpfs", hidden)
    args += _pairs("--ro-bind", [("/dev/null", f) for f in layout.hidden_files if f.exists()])
    args += _pairs("--ro-bind", [(p, p) for p in layout.reexposed if p.is_dir()])
    args += _pairs("--ro-bind", layout.read_only_binds)
    args += _pairs("--bind", layout.writable_binds)
    args += _pairs("--ro-bind", layout.read_only_after)
    args += _pairs("--bind", [(p, p) for p in layout.writable])
    args += _pairs("--bind", layout.cache_binds)
    if network.folder is not None:
        args += ["--ro-bind", str(network.folder), INSIDE]
    args += _each("--remount-ro", hidden)  # last: mount points inside them are made by now
    args += ["--chdir", str(layout.cwd)]
    return args


def _each(option: str, paths: Iterable[str | Path]) -> list[str]:
    """`option PATH` for every path, in order."""
    return [arg for path in paths for arg in (option, str(path))]


def _pairs(option: str, pairs: Iterable[tuple[str | Path, str | Path]]) -> list[str]:
    """`option SOURCE TARGET` for every pair, in order."""
    return [arg for source, target in pairs for arg in (option, str(source), str(target))]


def sandbox_env(env: dict[str, str], layout: Layout) -> dict[str, str]:
    """The run's environment: private HOME and temp, XDG folders under that HOME; none of
    the agent's own variables (`without_agent_variables`: its endpoint, model, settings)."""
    result = {k: v for k, v in without_agent_variables(env).items() if k not in DROPPED_ENV}
    home = str(layout.home)
    result.update(
        HOME=home,
        TMPDIR="/tmp",
        XDG_CACHE_HOME=f"{home}/.cache",
        XDG_CONFIG_HOME=f"{home}/.config",
        XDG_DATA_HOME=f"{home}/.local/share",
        XDG_STATE_HOME=f"{home}/.local/state",
        AGENTLS_SANDBOX="bwrap",
    )
    result.update(layout.env)
    return result


class BwrapConfinement(OsConfinement):
    """Runs commands under bubblewrap with one fixed layout (one per tool call)."""

    name = "bwrap"

    @contextlib.asynccontextmanager
    async def launch(
        self, argv: Sequence[str], env: dict[str, str], cwd: Path
    ) -> AsyncIterator[Launch]:
        layout = self.layout
        if cwd != layout.cwd:
            from dataclasses import replace

            layout = replace(layout, cwd=cwd)
        layout.home.mkdir(parents=True, exist_ok=True)
        async with open_network(self.settings.network, self.proxies) as network:
            with run_cgroup(self.settings.limits) as group:
                procs = group.create() if group is not None else []
                inner = [*prlimit_argv(self.settings.limits), *_forwarder(network), *argv]
                command = [self.program, *bwrap_args(layout, network), "--", *inner]
                yield Launch(wrap_in_cgroup(procs, command), sandbox_env(env, layout), cwd)

    def signal(self, leader: int, sig: int) -> bool:
        """Signal the sandboxed processes, not bubblewrap itself (it would just die and
        take the run with it before pytest could write its report)."""
        import psutil

        try:
            children = psutil.Process(leader).children(recursive=True)
        except psutil.Error:
            return False
        sent = False
        for child in children:
            try:
                if child.name() == "bwrap":
                    continue
                child.send_signal(sig)
                sent = True
            except psutil.Error:
                continue
        return sent


def _forwarder(network: NetworkPlan) -> list[str]:
    if network.folder is None:
        return []
    import sys

    script = f"{INSIDE}/{FORWARDER.name}"
    return [os.path.realpath(sys.executable), "-I", "-S", script, INSIDE, network.no_proxy, "--"]
