"""The TypedDicts docs/lsp.md names match what the server really sends."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from agentls.agent.persistence.store import SessionStore
from agentls.agent.protocol import events, results
from agentls.agent.run.compaction import CompactionResult
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.agent_support import EventLog, make_session


def keys(typed: Any) -> set[str]:
    return set(typed.__required_keys__ | typed.__optional_keys__)


def test_every_event_payload_matches_its_event() -> None:
    pairs = {
        events.RunStarted: events.RunStartedPayload,
        events.TextDelta: events.TextDeltaPayload,
        events.ToolStarted: events.ToolStartedPayload,
        events.ToolFinished: events.ToolFinishedPayload,
        events.ToolProgress: events.ToolProgressPayload,
        events.TurnUsage: events.TurnUsagePayload,
        events.Retrying: events.RetryingPayload,
        events.Notice: events.NoticePayload,
        events.RunFinished: events.RunFinishedPayload,
        events.ToolOutputReady: events.ToolOutputReadyPayload,
        events.Todos: events.TodosPayload,
        events.ModeChanged: events.ModeChangedPayload,
    }
    assert set(pairs) == set(events.AgentEvent.__args__)
    for event, payload in pairs.items():
        assert {f.name for f in dataclasses.fields(event)} == keys(payload), event.__name__


async def test_results_status_and_sessions_have_the_documented_keys(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(tool_turn(("probe_read", {"label": "a"})), text_turn("done"))
    session = make_session(api, tmp_path)
    log = EventLog()
    result = await session.run("go", events=log)
    payload = result.to_dict()
    assert set(payload) <= keys(results.RunPayload)
    assert keys(results.RunPayload) - set(payload) <= {
        "edit", "checks", "error", "notices", "compactions", "answer", "diff", "refused_edits",
        "all_edits_refused",
    }  # fmt: skip
    assert set(payload["usage"]) <= keys(results.UsagePayload)
    status = session.status_dict()
    assert set(status) <= keys(results.SessionStatusPayload)
    # the host adds the checks before review (`Host.status`), for sessions that have them
    assert keys(results.SessionStatusPayload) - set(status) == {"checks"}
    assert set(status["context"]) == keys(results.ContextPayload)
    (summary,) = SessionStore(tmp_path / "transcripts").list()
    assert set(summary) == keys(results.SessionSummaryPayload)
    for event in log:
        payload_keys = set(events.event_to_dict(event))
        assert payload_keys == {f.name for f in dataclasses.fields(type(event))}
    compaction = CompactionResult("manual", 2, 1, 4, 2, 2, 1)
    assert set(compaction.to_dict()) == keys(results.CompactionPayload)
