"""A real model in the loop (issue 29): Qwen2.5-Coder 0.5B under llama.cpp's server.

What must not break, whatever the small model answers: no traceback, every tool call gets
exactly one result, calls written as text are recognised and run, and files on disk are
untouched (a run's edits are staged until applied). Temperature 0 and a fixed seed (the
server's), so a run is repeatable on one machine. Two tasks through `/v1/messages`, one
through `/v1/chat/completions`. Skips (with the reason) when scripts/deps/realmodel.sh has
not installed the model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.persistence.transcript import read_records
from agentls.agent.run.chat_completions import ChatCompletionsClient
from agentls.agent.run.conversation import SessionConfig
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.session import AgentSession
from agentls.agent.settings import AgentSettings
from agentls.tools import builtin_tools
from agentls.workspace import Workspace
from tests.realmodel.support import SMALL, llama_server, missing

pytestmark = [
    pytest.mark.skipif(missing(SMALL) is not None, reason=str(missing(SMALL))),
    pytest.mark.timeout(1800),
]

CALC = "def add(a, b):\n    return a - b\n"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with llama_server(SMALL, ctx=8192) as url:
        yield url


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text(CALC, encoding="utf-8")
    (root / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n", encoding="utf-8"
    )
    return root


def _session(url: str, root: Path, tmp_path: Path, api: str) -> AgentSession:
    settings = AgentSettings.from_env(
        {"ANTHROPIC_BASE_URL": url},
        model="qwen",
        api=api,
        temperature=0.0,
        max_tokens=300,
        max_turns=4,
        context_window=8192,
        stall_timeout=0,
        request_deadline=900,
    )
    config = SessionConfig(
        settings=settings,
        workspace=Workspace([root]),
        tools=builtin_tools(),
        transcript_dir=tmp_path / "transcripts",
    )
    client: Any = (
        ChatCompletionsClient(settings)
        if api == "chat-completions"
        else AnthropicModelClient(settings)
    )
    return AgentSession(client, config)


async def _run(url: str, tmp_path: Path, api: str, prompt: str) -> tuple[Any, list[dict[str, Any]]]:
    root = _workspace(tmp_path)
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    session = _session(url, root, tmp_path, api)
    try:
        result = await session.run(prompt)
    finally:
        await session.aclose()
    records = [dict(r) for r in read_records(result.transcript)]
    # files untouched: a run's edits are staged, never written without apply
    assert {p.name: p.read_bytes() for p in root.iterdir()} == before
    text = json.dumps(records)
    assert "Traceback" not in text
    assert result.status in ("completed", "failed", "max_turns"), result
    if result.status == "failed":  # a failure says why (never a hollow "completed")
        assert result.error
    _every_call_answered(records)
    return result, records


def _every_call_answered(records: list[dict[str, Any]]) -> None:
    used: list[str] = []
    answered: list[str] = []
    for record in records:
        if record.get("type") != "message":
            continue
        for block in record.get("content") or []:
            if block.get("type") == "tool_use":
                used.append(block["id"])
            elif block.get("type") == "tool_result":
                answered.append(block["tool_use_id"])
    assert sorted(used) == sorted(answered)
    assert len(set(answered)) == len(answered)


def _calls(records: list[dict[str, Any]]) -> int:
    return sum(
        1
        for r in records
        if r.get("type") == "message"
        for b in r.get("content") or []
        if b.get("type") == "tool_use"
    )


async def test_messages_fix_task(endpoint: str, tmp_path: Path) -> None:
    _, records = await _run(
        endpoint, tmp_path, "messages", "Read calc.py, then fix add so that it returns a + b."
    )
    assert _calls(records) >= 1, "the model's calls (written as text) were recognised"
    assert any(r.get("type") == "text_tool_calls" for r in records)


async def test_messages_question_task(endpoint: str, tmp_path: Path) -> None:
    result, _ = await _run(
        endpoint, tmp_path, "messages", "Which file defines the function add? Answer briefly."
    )
    assert result.status != "completed" or result.text


async def test_chat_completions_fix_task(endpoint: str, tmp_path: Path) -> None:
    result, records = await _run(
        endpoint,
        tmp_path,
        "chat-completions",
        "Read calc.py, then fix add so that it returns a + b.",
    )
    assert _calls(records) >= 1
    assert result.usage.output_tokens > 0
