"""Time to first correct answer: spawn `agentls serve` on the corpus, initialize it as an
editor does, and ask `workspace/symbol` until the answer is right — cold (empty cache) and
warm (the cache the cold run left).

"Right" means the definition a user looks for ranks first: `QuerySet` → the class in
django/db/models/query.py, `WebGLRenderer` → the class in three's src/renderers,
`createServer` → a function in @types/node's http.d.ts. Each query gets its own server
(one query per start, as a user's first search would be). Times are from spawning the
process and from the `initialize` response (what the targets count: ≤ 2 s cold, ≤ 0.5 s
warm). The warm cache is the one a previous session left after indexing everything. A bare
pygls server's `initialize` time is measured in the same run as the machine's reference,
and the load average is printed.

    python bench/ttfa.py [--corpus DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

DEFAULT_CORPUS = Path.home() / ".cache" / "agentls-bench" / "corpus"
QUERIES = {
    "QuerySet": "django/db/models/query.py",
    "WebGLRenderer": "src/renderers/WebGLRenderer.js",
    "createServer": "http.d.ts",
}
TRIVIAL_SERVER = (
    "from pygls.lsp.server import LanguageServer\nLanguageServer('trivial', '1').start_io()\n"
)
TIMEOUT_S = 120.0


def env_for(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
    env["AGENTLS_TRANSCRIPT_DIR"] = str(folder / "transcripts")
    env["XDG_CACHE_HOME"] = str(folder / "cache")
    env["HOME"] = str(folder)
    return env


def correct(found: list[types.WorkspaceSymbol] | list[types.SymbolInformation], name: str) -> bool:
    if not found:
        return False
    first = found[0]
    uri = first.location.uri if hasattr(first.location, "uri") else ""
    return first.name == name and uri.endswith(QUERIES[name])


async def run_once(
    command: list[str], root: Path, env: dict[str, str], ask: str | None, finish: bool = False
) -> dict[str, float]:
    """Seconds from spawn to: initialize answered, and the query `ask` answered correctly.
    `finish`: then wait until the index is complete (so the cache is whole for warm runs)."""
    client = LanguageClient("ttfa", "1")
    began = time.perf_counter()
    await client.start_io(*command, env=env)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            process_id=os.getpid(),
        )
    )
    times = {"initialize": time.perf_counter() - began}
    client.initialized(types.InitializedParams())
    while ask is not None and time.perf_counter() - began < TIMEOUT_S:
        found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=ask))
        if correct(list(found or []), ask):
            times[ask] = time.perf_counter() - began
            break
        await asyncio.sleep(0.01)
    status = types.ExecuteCommandParams(command="agentls.status", arguments=[])
    while finish and time.perf_counter() - began < TIMEOUT_S:
        state = await client.workspace_execute_command_async(status)
        if state["index"]["state"] == "ready":
            await asyncio.sleep(1.0)  # the saved structure is written in the background
            break
        await asyncio.sleep(0.2)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return times


def report(label: str, runs: list[dict[str, float]]) -> None:
    init = statistics.median(r["initialize"] for r in runs)
    parts = [f"initialize {init:.2f} s"]
    for name in QUERIES:
        mine = [r for r in runs if "query" in r and r["query"] == list(QUERIES).index(name)]
        values = [r[name] for r in mine if name in r]
        if not values or len(values) < len(mine):
            parts.append(f"{name}: not correct within {TIMEOUT_S:.0f} s in some runs")
            continue
        spawn = statistics.median(values)
        after = statistics.median(r[name] - r["initialize"] for r in mine)
        parts.append(f"{name} {spawn:.2f} s from spawn, {after:.2f} s after initialize")
    print(f"{label}: " + "; ".join(parts), flush=True)


async def main(root: Path, repeat: int) -> None:
    command = [sys.executable, "-m", "agentls", "serve"]
    trivial = [sys.executable, "-c", TRIVIAL_SERVER]
    print(
        f"corpus: {root}; load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    cold: list[dict[str, float]] = []
    warm: list[dict[str, float]] = []
    bare: list[dict[str, float]] = []
    for _ in range(repeat):
        for number, query in enumerate(QUERIES):
            folder = Path(tempfile.mkdtemp(prefix="agentls-ttfa-"))
            try:
                env = env_for(folder)
                bare.append(await run_once(trivial, root, env, ask=None))
                cold.append({**await run_once(command, root, env, query, True), "query": number})
                warm.append({**await run_once(command, root, env, query), "query": number})
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    print(f"bare pygls server: initialize {statistics.median(r['initialize'] for r in bare):.2f} s")
    report("cold cache", cold)
    report("warm cache", warm)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.corpus.expanduser().resolve(), args.repeat))
