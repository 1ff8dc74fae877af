"""Streamed model text reaches the editor coalesced: one `agentls/event` text_delta per
flush window instead of one per streamed chunk, in order with the other events, and nothing
is lost at the end of a run. (The end-to-end run tests check the events over real stdio.)"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from agentls.agent.protocol.events import TextDelta, ToolStarted
from agentls.host import RunHandle
from agentls.lsp.progress import EVENT_METHOD, TEXT_FLUSH_SECONDS, LspRunReporter


class _Server:
    """The parts of the language server a run reporter uses."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.protocol = SimpleNamespace(notify=self._notify)
        self.features = SimpleNamespace(work_done_progress=False)

    def _notify(self, method: str, params: dict[str, Any]) -> None:
        assert method == EVENT_METHOD
        self.sent.append(params)

    def log_line(self, line: str) -> None:
        del line


def _tool(session: str) -> ToolStarted:
    return ToolStarted(session, "toolu_1", "read_file", "Reading a.py", {"path": "a.py"}, 0.0)


async def test_text_chunks_are_coalesced_in_order_and_flushed_at_the_end() -> None:
    server = _Server()
    reporter = LspRunReporter(server, RunHandle("s1", "fix it", "review"))  # type: ignore[arg-type]
    chunks = [f"word{i} " for i in range(200)]
    for chunk in chunks[:100]:
        reporter.on_event(TextDelta("s1", chunk))
    await asyncio.sleep(TEXT_FLUSH_SECONDS * 3)
    assert [e["type"] for e in server.sent] == ["text_delta"]
    for chunk in chunks[100:150]:
        reporter.on_event(TextDelta("s1", chunk))
    reporter.on_event(_tool("s1"))  # pending text goes out before the tool event
    for chunk in chunks[150:]:
        reporter.on_event(TextDelta("s1", chunk))
    await reporter.end({"status": "completed"})  # the tail is not lost
    assert [e["type"] for e in server.sent] == [
        "text_delta",
        "text_delta",
        "tool_started",
        "text_delta",
        "run_result",  # the result (edits applied, staged, left out) comes last
    ]
    assert server.sent[-1]["status"] == "completed"
    assert server.sent[-1]["session_id"] == "s1"
    texts = [e["text"] for e in server.sent if e["type"] == "text_delta"]
    assert "".join(texts) == "".join(chunks)
    assert texts[1] == "".join(chunks[100:150])
