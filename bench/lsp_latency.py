"""LSP overhead: `initialize` time of `agentls serve` vs a bare pygls 2 server, and the
`agentls.tool` round trip vs the same tool call in process — all measured in one run.

Start-up is timed from spawning the process to receiving the `initialize` response (what
an editor waits for), alternating the two servers so machine noise hits both alike. The
round trip runs `read_file` through `workspace/executeCommand` and, in this process,
through `AgentHost.run_tool` (the same pipeline without LSP). Targets: start-up within
1.2× of the bare server; the LSP round trip adds under 2 ms. A bare pygls server echoing the
same payload is timed alongside, so the transport's own cost (and the machine's noise) is
visible; medians suffer from a loaded machine, minimums less so.

    python bench/lsp_latency.py [--starts 7] [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from agentls.agent.safety import load_safety
from agentls.host import AgentHost, HostOptions
from agentls.workspace import Workspace

TRIVIAL_SERVER = (
    "from pygls.lsp.server import LanguageServer\nLanguageServer('trivial', '1').start_io()\n"
)
ECHO_SERVER = (
    "from pygls.lsp.server import LanguageServer\n"
    "server = LanguageServer('echo', '1')\n"
    "@server.command('echo')\n"
    "async def echo(ls, *args):\n"
    "    return args[0]\n"
    "server.start_io()\n"
)
"""A bare pygls server answering a command with its argument: the transport's own cost."""
TOOL_INPUT = {"path": "sample.py"}


def make_workspace(folder: Path) -> Path:
    root = folder / "ws"
    root.mkdir()
    lines = [f"def function_{i}(x):\n    return x + {i}\n" for i in range(100)]
    (root / "sample.py").write_text("".join(lines), encoding="utf-8")
    return root


def env_for(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
    env["AGENTLS_TRANSCRIPT_DIR"] = str(folder / "transcripts")
    env["XDG_CACHE_HOME"] = str(folder / "cache")
    env["HOME"] = str(folder)
    return env


async def start(
    command: list[str], root: Path, env: dict[str, str]
) -> tuple[LanguageClient, float]:
    """Spawn a server and initialize it; returns the client and the seconds it took."""
    client = LanguageClient("bench", "1")
    began = time.perf_counter()
    await client.start_io(*command, env=env)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=root.as_uri(),
            process_id=os.getpid(),
        )
    )
    elapsed = time.perf_counter() - began
    client.initialized(types.InitializedParams())
    return client, elapsed


async def stop(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


async def startup(starts: int, root: Path, env: dict[str, str]) -> tuple[list[float], list[float]]:
    trivial_cmd = [sys.executable, "-c", TRIVIAL_SERVER]
    agentls_cmd = [sys.executable, "-m", "agentls", "serve"]
    trivial: list[float] = []
    agentls: list[float] = []
    for _ in range(starts):
        for command, times in ((trivial_cmd, trivial), (agentls_cmd, agentls)):
            client, elapsed = await start(command, root, env)
            times.append(elapsed)
            await stop(client)
    return trivial, agentls


async def round_trips(
    calls: int, root: Path, env: dict[str, str]
) -> tuple[list[float], list[float], list[float]]:
    """In-process tool calls, the same over LSP, and a bare pygls echo of the same size."""
    # the same permission policy and hooks the server builds from (empty) settings
    safety = load_safety([root], home=root)
    options = HostOptions(permissions=safety.policy, hooks=safety.hooks)
    host = AgentHost(Workspace([root]), options=options)
    expected = await host.run_tool("read_file", TOOL_INPUT)
    assert not expected.is_error, expected.content
    client, _ = await start([sys.executable, "-m", "agentls", "serve"], root, env)
    echo_client, _ = await start([sys.executable, "-c", ECHO_SERVER], root, env)
    params = types.ExecuteCommandParams(
        command="agentls.tool", arguments=[{"name": "read_file", "input": TOOL_INPUT}]
    )
    echo = types.ExecuteCommandParams(
        command="echo", arguments=[{"content": expected.content, "is_error": False}]
    )
    in_process: list[float] = []
    over_lsp: list[float] = []
    bare: list[float] = []
    try:
        first = await client.workspace_execute_command_async(params)  # waits for start-up
        assert first["content"] == expected.content, "LSP and in-process results differ"
        await asyncio.sleep(2)  # let the server's background warm-up finish
        for _ in range(calls):  # interleaved so all three see the same machine state
            began = time.perf_counter()
            await host.run_tool("read_file", TOOL_INPUT)
            in_process.append(time.perf_counter() - began)
            began = time.perf_counter()
            await client.workspace_execute_command_async(params)
            over_lsp.append(time.perf_counter() - began)
            began = time.perf_counter()
            await echo_client.workspace_execute_command_async(echo)
            bare.append(time.perf_counter() - began)
    finally:
        await stop(client)
        await stop(echo_client)
    return in_process, over_lsp, bare


def ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:8.2f} ms   min {min(values) * 1000:8.2f} ms"


async def main(starts: int, calls: int) -> None:
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        folder = Path(tmp)
        root = make_workspace(folder)
        env = env_for(folder)
        trivial, agentls = await startup(starts, root, env)
        in_process, over_lsp, bare = await round_trips(calls, root, env)
    ratio = statistics.median(agentls) / statistics.median(trivial)
    best_ratio = min(agentls) / min(trivial)
    added = (statistics.median(over_lsp) - statistics.median(in_process)) * 1000
    best_added = (min(over_lsp) - min(in_process)) * 1000
    print(f"initialize, bare pygls server : {ms(trivial)}")
    print(f"initialize, agentls serve     : {ms(agentls)}")
    print(
        f"start-up ratio                : median {ratio:.2f}x   min {best_ratio:.2f}x"
        "   (target <= 1.20x)"
    )
    print(f"read_file in process          : {ms(in_process)}")
    print(f"read_file via agentls.tool    : {ms(over_lsp)}")
    print(f"bare pygls echo, same payload : {ms(bare)}")
    print(
        f"LSP round trip adds           : median {added:.2f} ms   min {best_added:.2f} ms"
        "   (target < 2 ms)"
    )
    print(f"machine load average          : {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=7, help="server starts of each kind")
    parser.add_argument("--calls", type=int, default=300, help="tool calls of each kind")
    args = parser.parse_args()
    asyncio.run(main(args.starts, args.calls))
