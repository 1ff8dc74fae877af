"""The index's head start at server start-up: the host's imports wait for the index's first
useful answer (or its end), unless a request already waits for the host."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from agentls.index import SymbolIndex
from agentls.lsp import symbols
from agentls.lsp.server import AgentLanguageServer


def stalled_index(root: Path, gate: threading.Event) -> tuple[SymbolIndex, threading.Thread]:
    files = []
    for i in range(5):
        path = root / f"mod{i}.py"
        path.write_text(f"class Widget{i}:\n    pass\n")
        files.append(path)

    def read(path: Path) -> bytes:
        gate.wait(10)
        return path.read_bytes()

    index = SymbolIndex(None)
    return index, index.start_build(files, read, workers=1)


async def test_a_command_ends_the_index_head_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = threading.Event()
    index, thread = stalled_index(tmp_path, gate)
    monkeypatch.setattr(symbols, "index_of", lambda ls: index)
    ls = AgentLanguageServer()
    try:
        waiting = asyncio.ensure_future(symbols.index_serving(ls, 30.0))
        await asyncio.sleep(0.2)
        assert not waiting.done()  # the build runs and nothing was asked: the host waits
        ls.host_wanted.set()  # what `wait_ready` does for a command
        await asyncio.wait_for(waiting, 5.0)
    finally:
        gate.set()
        thread.join(10)


async def test_without_requests_the_head_start_ends_with_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = threading.Event()
    index, thread = stalled_index(tmp_path, gate)
    monkeypatch.setattr(symbols, "index_of", lambda ls: index)
    ls = AgentLanguageServer()
    try:
        waiting = asyncio.ensure_future(symbols.index_serving(ls, 30.0))
        await asyncio.sleep(0.2)
        assert not waiting.done()
        gate.set()
        await asyncio.wait_for(waiting, 5.0)
        assert index.state.ready and not ls.host_wanted.is_set()
    finally:
        gate.set()
        thread.join(10)


async def test_wait_ready_marks_the_host_as_wanted() -> None:
    ls = AgentLanguageServer()
    with pytest.raises(Exception, match="did not finish starting"):
        await ls.wait_ready(0.05)
    assert ls.host_wanted.is_set()
