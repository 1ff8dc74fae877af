"""The symbol index as users reach it: LSP requests to `agentls serve` and the agent's
tools through `agentls.tool`, timed from the client, on the corpus.

Measured in one run, after the index is ready (warm cache):
- `workspace/symbol` p50/p99 for prefix and fuzzy queries;
- `textDocument/documentSymbol` p50/p99 on an open ~500-line file (the request right after
  an edit, and repeated on unchanged text);
- edit → queryable: `didChange` adding a definition, then `workspace/symbol` until it is
  found, p50/p99 (the time from sending the change to the first answer that has it);
- the `document_symbols` and `search_symbols` tools through `agentls.tool`;
- the transport's own cost: a bare pygls server echoing a command, same machine, same run.

    python bench/lsp_index_bench.py [--corpus DIR] [--samples N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

DEFAULT_CORPUS = Path.home() / ".cache" / "agentls-bench" / "corpus"
ECHO_SERVER = (
    "from pygls.lsp.server import LanguageServer\n"
    "server = LanguageServer('echo', '1')\n"
    "@server.command('echo')\n"
    "async def echo(ls, *args):\n"
    "    return args[0]\n"
    "server.start_io()\n"
)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))]


def line(label: str, values: list[float], target: str = "") -> None:
    p50, p99 = statistics.median(values) * 1000, percentile(values, 99) * 1000
    suffix = f"   (target {target})" if target else ""
    print(f"{label:52} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms{suffix}", flush=True)


EDITOR_CAPABILITIES = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True
        )
    )
)
"""What matters here of a real editor's capabilities: it watches files for the server (VS
Code, Neovim), so the server does not poll the disk during the measurements."""


async def start(command: list[str], root: Path, env: dict[str, str]) -> LanguageClient:
    client = LanguageClient("bench", "1")

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        return None

    await client.start_io(*command, env=env)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=EDITOR_CAPABILITIES,
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            process_id=os.getpid(),
        )
    )
    client.initialized(types.InitializedParams())
    return client


async def stop(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    began = time.perf_counter()
    await fn()
    return time.perf_counter() - began


def pick_file(root: Path, lines: int) -> Path:
    best, gap = root, 1 << 30
    for path in sorted(root.rglob("*.py")):
        count = path.read_bytes().count(b"\n")
        if abs(count - lines) < gap:
            best, gap = path, abs(count - lines)
    return best


def queries(root: Path, count: int) -> tuple[list[str], list[str]]:
    """Prefix queries (3-6 leading letters of real class/def names) and fuzzy ones
    (initials of their words) from the corpus's Python files."""
    rng = random.Random(7)
    names: list[str] = []
    for path in sorted(root.rglob("*.py"))[:400]:
        names += re.findall(
            r"^\s*(?:class|def) ([A-Za-z]\w{5,})", path.read_text(errors="replace"), re.M
        )
    prefix = [n[: rng.randint(3, 6)] for n in rng.sample(names, count)]
    fuzzy = []
    for name in rng.sample(names, count * 3):
        words = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)
        if len(words) >= 2:
            fuzzy.append("".join(w[:2] for w in words[:3]).lower())
        if len(fuzzy) == count:
            break
    return prefix, fuzzy


async def wait_ready(client: LanguageClient) -> None:
    """Until the index is ready and the server has gone quiet (its start-up imports, run
    on a thread after `initialized`, would otherwise compete with the measurements)."""
    params = types.ExecuteCommandParams(command="agentls.status", arguments=[])
    for _ in range(2400):
        status = await client.workspace_execute_command_async(params)
        if status["index"]["state"] == "ready":
            break
        await asyncio.sleep(0.05)
    else:
        raise SystemExit("the index did not become ready")
    await wait_quiet(server_pid(client))


def server_pid(client: LanguageClient) -> int:
    return int(client._server.pid)  # type: ignore[union-attr]


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a process has used."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def wait_quiet(pid: int, window: float = 1.0, limit: float = 60.0) -> None:
    """Until the process used under 3% of a core over `window` seconds (at most `limit`)."""
    began = time.perf_counter()
    last = cpu_of(pid)
    while time.perf_counter() - began < limit:
        await asyncio.sleep(window)
        now = cpu_of(pid)
        if now - last < 0.03 * window:
            return
        last = now


async def main(root: Path, samples: int) -> None:
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        folder = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
        env.update(XDG_CACHE_HOME=str(folder / "cache"), HOME=str(folder))
        env["AGENTLS_TRANSCRIPT_DIR"] = str(folder / "transcripts")
        print(f"corpus: {root}; load average before: {os.getloadavg()[0]:.2f}", flush=True)
        echo = await start([sys.executable, "-c", ECHO_SERVER], root, env)
        client = await start([sys.executable, "-m", "agentls", "serve"], root, env)
        try:
            await wait_ready(client)
            await measure(client, echo, root, samples)
        finally:
            await stop(client)
            await stop(echo)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


async def measure(client: LanguageClient, echo: LanguageClient, root: Path, samples: int) -> None:
    payload = types.ExecuteCommandParams(command="echo", arguments=[{"x": 1}])
    bare = [
        await timed(lambda: echo.workspace_execute_command_async(payload)) for _ in range(samples)
    ]
    line("bare pygls round trip (transport reference)", bare)
    prefix, fuzzy = queries(root, samples)
    for label, batch in (("prefix", prefix), ("fuzzy", fuzzy)):
        times = []
        for q in batch:
            params = types.WorkspaceSymbolParams(query=q)
            times.append(await timed(lambda p=params: client.workspace_symbol_async(p)))
        target = "p99 <= 1 ms in the index" if label == "prefix" else "p99 <= 10 ms in the index"
        line(f"workspace/symbol {label} (e.g. {batch[0]!r})", times, target)

    target = pick_file(root, 500)
    text = target.read_text(encoding="utf-8")
    uri = target.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text))
    )
    doc = types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    await client.text_document_document_symbol_async(doc)
    same = [
        await timed(lambda: client.text_document_document_symbol_async(doc)) for _ in range(samples)
    ]
    edits, after_edit = [], []
    version = 1
    for n in range(samples):
        version += 1
        name = f"bench_marker_{n}"
        current = text + f"\n\ndef {name}():\n    pass\n"
        change = types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [types.TextDocumentContentChangeWholeDocument(text=current)],
        )
        began = time.perf_counter()
        client.text_document_did_change(change)
        while True:
            found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=name))
            if found and found[0].name == name:
                break
        edits.append(time.perf_counter() - began)
        version += 1
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [types.TextDocumentContentChangeWholeDocument(text=current + "\n")],
            )
        )
        after_edit.append(await timed(lambda: client.text_document_document_symbol_async(doc)))
    lines = text.count("\n")
    line(f"documentSymbol, open file ({lines} lines), unchanged", same, "p50 <= 5 ms")
    line(f"documentSymbol, open file ({lines} lines), after an edit", after_edit, "p50 <= 5 ms")
    line("edit -> queryable (didChange, then workspace/symbol)", edits, "p99 <= 20 ms")

    rel = str(target.relative_to(root))
    tool = types.ExecuteCommandParams(
        command="agentls.tool", arguments=[{"name": "document_symbols", "input": {"path": rel}}]
    )
    search = types.ExecuteCommandParams(
        command="agentls.tool",
        arguments=[{"name": "search_symbols", "input": {"query": prefix[0]}}],
    )
    tools = [
        await timed(lambda: client.workspace_execute_command_async(tool)) for _ in range(samples)
    ]
    line("document_symbols tool via agentls.tool (open file)", tools, "p50 <= 5 ms")
    found = [
        await timed(lambda: client.workspace_execute_command_async(search)) for _ in range(samples)
    ]
    line("search_symbols tool via agentls.tool", found)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.corpus.expanduser().resolve(), args.samples))
