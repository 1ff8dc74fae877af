"""Context compaction and stubbing of old tool results, end to end against the scripted API."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.persistence.store import SessionStore
from agentls.agent.persistence.transcript import read_records, render_tree
from agentls.agent.run.compaction import (
    SUMMARY_SYSTEM,
    CompactionError,
    next_stub_boundary,
    split_history,
    stub_text,
)
from agentls.agent.run.model_client import ModelRequest, ModelResponse
from agentls.agent.run.session import AgentSession
from agentls.testing import RecordedRequest, ScriptedMessagesServer, Turn, text_turn, tool_turn
from agentls.testing._wire import estimate_input_tokens
from tests.agent_support import close_at_loop_end, make_session

SUMMARY = """## Task
Probe every label.
## Decisions
Use the huge tool.
## Files touched
- app.py (staged)
## Current state
Labels 0-3 probed.
## Open todos
- [ ] probe the rest"""


def is_summary_request(request: RecordedRequest) -> bool:
    return request.system_text == SUMMARY_SYSTEM


def agent_requests(api: ScriptedMessagesServer) -> list[RecordedRequest]:
    return [r for r in api.message_requests if not is_summary_request(r)]


def dispatcher(agent_turns: list[Turn]) -> list[Callable[[RecordedRequest], Turn]]:
    """Scenario entries that answer summary requests with SUMMARY, the rest in order."""
    queue = list(agent_turns)

    def respond(request: RecordedRequest) -> Turn:
        if is_summary_request(request):
            return text_turn(SUMMARY, usage={"input_tokens": 900, "output_tokens": 80})
        return queue.pop(0)

    return [respond] * (2 * len(agent_turns) + 2)


def _workspace(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Always run the probes in order.\n")
    (tmp_path / ".agentls").mkdir()
    (tmp_path / ".agentls" / "instructions.md").write_text("Answer in English.\n")


class StreamOnly:
    """A client without `count_tokens` (like a local endpoint): the estimate must do."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def stream(self, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
        response: ModelResponse = await self.inner.stream(request, on_text)
        return response

    async def close(self) -> None:
        await self.inner.close()


@pytest.mark.parametrize("counting", ["api", "estimate"])
async def test_compaction_triggers_at_the_threshold_and_the_session_continues(
    api: ScriptedMessagesServer, tmp_path: Path, counting: str
) -> None:
    _workspace(tmp_path)
    turns = [tool_turn(("huge", {"label": str(i)})) for i in range(10)]
    api.extend(*dispatcher([*turns, text_turn("all probed")]))
    session = make_session(
        api,
        tmp_path,
        context_window=4000,
        compact_threshold=0.6,
        compact_keep_turns=2,
        stub_after_turns=0,
    )
    if counting == "estimate":
        session.client = StreamOnly(session.client)
    session.changes.stage_write(tmp_path / "app.py", "new\n", "old\n")
    limit = session.compaction_limit()
    assert limit == 2400

    result = await session.run("probe labels 0 to 9")
    assert result.status == "completed"
    assert result.text == "all probed"
    assert result.compactions >= 1
    assert result.to_dict()["compactions"] == result.compactions
    assert any("Context compacted" in n for n in result.notices)

    sent = agent_requests(api)
    assert len(sent) == 11  # every agent turn was answered: pairs intact (server validates)
    slack = 1.0 if counting == "api" else 1.1  # a calibrated estimate is close, not exact
    for request in sent:  # nothing sent over the threshold (the scripted server's own count)
        assert estimate_input_tokens(request) <= limit * slack
    first_after = next(i for i, r in enumerate(api.message_requests) if is_summary_request(r))
    assert first_after > 0
    for request in sent:
        head = json.dumps(request.messages[0])
        assert "Always run the probes in order." in head
        assert "Answer in English." in head
    compacted = [r for r in sent if "compacted" in json.dumps(r.messages[0])]
    assert compacted
    for request in compacted:
        head = json.dumps(request.messages[0], ensure_ascii=False)
        assert "Probe every label." in head
        assert str(tmp_path / "app.py") in head
        assert "probe labels 0 to 9" in head  # the summarised request, verbatim
        assert request.messages[1]["role"] == "assistant"

    records = list(read_records(result.transcript))
    compactions = [r for r in records if r["type"] == "compaction"]
    assert len(compactions) == result.compactions
    record = compactions[0]
    assert record["reason"] == "auto"
    assert record["before_tokens"] > limit
    assert record["after_tokens"] < record["before_tokens"]
    assert record["kept_turns"] == 2
    assert record["summarized_messages"] > 0
    assert str(tmp_path / "AGENTS.md") in record["instruction_files"]
    assert "compaction (auto)" in render_tree(records)
    # near the limit the endpoint's own count decides
    counted = any(r.route == "/v1/messages/count_tokens" for r in api.requests)
    assert counted == (counting == "api")
    # the transcript keeps the full history: every tool result is there
    assert sum(r["type"] == "tool_result" for r in records) == 10
    # compaction usage is counted
    assert result.usage.output_tokens >= 80 * result.compactions
    state = SessionStore(tmp_path / "transcripts").load(session.id)
    assert state.compactions == result.compactions
    assert len(state.messages) < 20


async def test_manual_compaction_and_resume_of_a_compacted_session(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    _workspace(tmp_path)
    api.extend(
        *dispatcher(
            [
                tool_turn(("probe_read", {"label": "a"})),
                tool_turn(("probe_read", {"label": "b"})),
                text_turn("first done"),
                text_turn("second done"),
            ]
        )
    )
    # the scripted endpoint has no known price unless one is configured
    prices = {"claude-": [3, 15]}
    session = make_session(api, tmp_path, compact_keep_turns=1, prices=prices)
    with pytest.raises(CompactionError, match="nothing to compact"):
        await session.compact()
    await session.run("probe a then b")
    before = len(session.messages)
    result = await session.compact()  # reason="manual"
    assert result.reason == "manual"
    assert result.kept_turns == 1
    assert result.messages_before == before
    assert result.messages_after == 2
    assert session.messages[0]["role"] == "user"
    assert session.messages[1]["role"] == "assistant"
    assert "Probe every label." in json.dumps(session.messages[0])
    assert session.compactions == 1
    assert session.cost_usd
    assert session.cost_usd > 0

    follow_up = await session.run("and now?")
    assert follow_up.status == "completed"
    assert follow_up.text == "second done"
    request = agent_requests(api)[-1]
    assert "Always run the probes in order." in json.dumps(request.messages[0])
    assert request.messages[-1]["content"][-1]["text"] == "and now?"
    records = list(read_records(follow_up.transcript))
    manual = [r for r in records if r["type"] == "compaction"]
    assert manual
    assert manual[0]["reason"] == "manual"
    assert manual[0]["before_tokens"] > manual[0]["after_tokens"] > 0

    store = SessionStore(tmp_path / "transcripts")
    state = store.load(session.id)
    assert state.compactions == 1
    assert state.messages == session.messages


async def test_failed_summary_leaves_history_unchanged(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(("probe_read", {"label": "a"})),
        text_turn("done"),
        text_turn("never", error_status=400, error_times=5),
    )
    session = make_session(api, tmp_path, compact_keep_turns=1)
    await session.run("go")
    history = list(session.messages)
    with pytest.raises(CompactionError, match="summary request failed"):
        await session.compact()
    assert session.messages == history
    assert session.compactions == 0


async def test_old_large_tool_results_are_stubbed_stepwise(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    turns = [tool_turn(("huge", {"label": f"L{i}"})) for i in range(8)]
    api.extend(*turns, text_turn("done"))
    session = make_session(api, tmp_path, stub_after_turns=4, stub_min_chars=500)
    await session.run("go")
    sent = api.message_requests
    assert len(sent) == 9

    def stubbed(request: RecordedRequest) -> list[bool]:
        results = [
            b
            for m in request.messages
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        return ["Old tool result removed" in str(b["content"]) for b in results]

    # the boundary moves at 6 unstubbed turns to "4 turns ago", then stays for 2 turns
    assert stubbed(sent[5]) == [False] * 5
    assert stubbed(sent[6]) == [True, True, False, False, False, False]
    assert stubbed(sent[7]) == [True, True, False, False, False, False, False]
    assert stubbed(sent[8]) == [True] * 4 + [False] * 4
    stub = sent[8].messages[2]["content"][0]["content"]
    assert "huge" in stub
    assert '"label": "L0"' in stub
    assert "1" in stub
    # between boundary moves the earlier messages are byte-identical (cache prefix stable)
    prefix = len(sent[6].messages) - 1
    assert json.dumps(sent[7].messages[:prefix]) == json.dumps(
        [_without_cache_control(m) for m in sent[6].messages[:prefix]]
    )
    # the session's history (and the transcript) keep the full results
    full = [
        b["content"]
        for m in session.messages
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    assert all("Old tool result removed" not in str(c) for c in full)


def _without_cache_control(message: dict[str, Any]) -> dict[str, Any]:
    return {
        **message,
        "content": [
            {k: v for k, v in b.items() if k != "cache_control"} for b in message["content"]
        ],
    }


def test_stub_names_the_re_read_and_boundaries_are_stepwise() -> None:
    call = {"name": "read_file", "input": {"path": "src/app.py", "offset": 10, "limit": 50}}
    text = stub_text(call, "x" * 4000)
    assert "read_file src/app.py (lines 10–59) again" in text
    assert "4000 chars" in text
    other = stub_text({"name": "grep", "input": {"pattern": "TODO"}}, "y" * 3000)
    assert 'call grep again with {"pattern": "TODO"}' in other
    assert [next_stub_boundary(0, t, 6) for t in range(8, 12)] == [0, 3, 4, 5]
    assert next_stub_boundary(3, 10, 6) == 3
    assert next_stub_boundary(3, 12, 6) == 6
    assert next_stub_boundary(0, 100, 0) == 0


def test_split_never_separates_a_tool_use_from_its_result() -> None:
    def use(i: int) -> dict[str, Any]:
        return {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}"}]}

    def result(i: int) -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}"}]}

    history = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    for i in range(4):
        history += [use(i), result(i)]
    old, kept = split_history(history, 2)
    assert kept == [use(2), result(2), use(3), result(3)]
    assert old == history[:5]
    old, kept = split_history(history, 10)  # at least one turn is summarised
    assert kept[0] == use(1)
    assert old == history[:3]
    old, kept = split_history(history, 0)
    assert kept == []
    assert old == history


async def test_session_is_reusable_object(api: ScriptedMessagesServer, tmp_path: Path) -> None:
    api.extend(text_turn("ok"))
    session: AgentSession = make_session(api, tmp_path)
    await session.run("hi")
    status = session.status_dict()
    assert status["context"]["compactions"] == 0
    assert status["state_file"].endswith(".state.json")


async def test_a_run_killed_after_an_auto_compaction_resumes_from_the_compacted_history(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    """The state file is saved by the compaction mid-run; the journal replays from there.

    Five huge results make the compaction happen just before the sixth request, which
    hangs: the crash comes after the compaction and before any later checkpoint."""
    import asyncio
    import time

    from agentls.agent.run.model_client import AnthropicModelClient

    turns = [tool_turn(("huge", {"label": str(i)})) for i in range(5)]
    api.extend(*dispatcher([*turns, text_turn("never", hang=True), text_turn("resumed")]))
    settings: dict[str, Any] = {
        "context_window": 4000,
        "compact_threshold": 0.6,
        "compact_keep_turns": 2,
        "stub_after_turns": 0,
    }
    session = make_session(api, tmp_path, **settings)
    task = asyncio.create_task(session.run("probe labels 0 to 4"))

    def hanging() -> None:
        deadline = time.monotonic() + 20
        while len(agent_requests(api)) < 6 and time.monotonic() < deadline:
            time.sleep(0.01)

    await asyncio.to_thread(hanging)
    await asyncio.sleep(0.2)
    kinds = [r["type"] for r in read_records(session.transcript.path)]
    assert kinds[-3:] == ["compaction", "notice", "request"], kinds[-4:]
    folder, crashed = tmp_path / "transcripts", tmp_path / "crashed"
    crashed.mkdir()
    for name in (f"{session.id}.state.json", f"{session.id}.jsonl"):
        (crashed / name).write_bytes((folder / name).read_bytes())
    complete = list(session.messages)
    session.cancel()
    await task

    store = SessionStore(crashed)
    saved = store.load(session.id)
    assert saved.status == "running"
    assert saved.compactions == session.compactions
    resumed = make_session(api, tmp_path, **settings)
    config = resumed.config
    config.transcript_dir = crashed
    restored = close_at_loop_end(
        AgentSession.resume(session.id, AnthropicModelClient(config.settings), config, store)
    )
    assert restored.status == "interrupted"
    assert restored.messages == complete  # no turn twice, none lost
    assert restored.turns == 5
