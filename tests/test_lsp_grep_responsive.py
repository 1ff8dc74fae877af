"""The server keeps answering while grep runs a pathological pattern (issue 20, item 1).

`(a+)+$` on lines of "a…ab" takes exponential time in a backtracking engine: with Python's
`re` it held the GIL for minutes and the editor got no answer to anything. grep now runs
ripgrep (disk) and RE2 (unsaved buffers), both linear and neither holding the GIL, so the
search ends quickly and `agentls.status` is answered while it runs. The latency bound here
is generous (a loaded CI machine); bench/lsp_latency.py measures the real figure.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.testing import ScriptedMessagesServer
from tests.lsp_support import FakeEditor, command, editor_session, server_env

EVIL = r"(a+)+$"
LINE = "a" * 40 + "b\n"
STATUS_BOUND_S = 2.0
"""Far above the 100 ms the server answers in; far below the minutes the old engine took."""


@pytest.fixture
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


async def timed_status(editor: FakeEditor) -> float:
    began = time.perf_counter()
    status = await asyncio.wait_for(command(editor, "agentls.status"), timeout=10)
    assert "index" in status
    return time.perf_counter() - began


async def test_status_answers_while_grep_runs_a_pathological_pattern(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "big.txt").write_text(LINE * 200_000)  # 8 MB on disk, searched by rg
    buffer = root / "open.txt"
    buffer.write_text("nothing\n")
    env = server_env(api.base_url, tmp_path / "transcripts")
    async with editor_session("visual-studio-code", root, env) as editor:
        editor.open(buffer, LINE * 50_000)  # 2 MB unsaved buffer, searched by RE2
        await timed_status(editor)  # the server is up
        grep = asyncio.ensure_future(
            command(editor, "agentls.tool", {"name": "grep", "input": {"pattern": EVIL}})
        )
        latencies = []
        for _ in range(5):
            await asyncio.sleep(0.02)
            latencies.append(await timed_status(editor))
        result = await asyncio.wait_for(grep, timeout=60)
        assert result["is_error"] is False, result["content"]
        assert "No matches" in result["content"]
        assert max(latencies) < STATUS_BOUND_S, latencies


async def test_a_10mb_pattern_is_refused_clearly_over_lsp(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("aaaa\n")
    env = server_env(api.base_url, tmp_path / "transcripts")
    async with editor_session("visual-studio-code", root, env) as editor:
        pattern = "a" * (10 * 1024 * 1024)
        result = await asyncio.wait_for(
            command(editor, "agentls.tool", {"name": "grep", "input": {"pattern": pattern}}),
            timeout=60,
        )
        assert result["is_error"] is True
        assert "grep accepts at most 4,096" in result["content"]
        assert len(result["content"]) < 1000
        assert await timed_status(editor) < STATUS_BOUND_S
