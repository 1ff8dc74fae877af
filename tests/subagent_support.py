"""Scripting a session and its sub-agents against the one scripted Messages API.

Sub-agents running in parallel ask the model in no fixed order, so the scenario cannot be a
plain list: `Roles` answers each request from the script of whoever sent it — the session
(its own system prompt), or the sub-agent whose prompt contains a marker — and picks the
turn by how many assistant turns that conversation already has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentls.testing import RecordedRequest, ScriptedMessagesServer, Turn

SUBAGENT_MARK = "You are a sub-agent"


def is_subagent(request: RecordedRequest) -> bool:
    return SUBAGENT_MARK in request.system_text


def first_user_text(request: RecordedRequest) -> str:
    for message in request.messages:
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))
    return ""


@dataclass
class Roles:
    """The session's turns and each sub-agent's (keyed by a marker in its prompt)."""

    session: list[Turn]
    subagents: dict[str, list[Turn]] = field(default_factory=dict)
    seen: list[tuple[str, int]] = field(default_factory=list)

    def __call__(self, request: RecordedRequest) -> Turn:
        turn = sum(1 for m in request.messages if m.get("role") == "assistant")
        if is_subagent(request):
            prompt = first_user_text(request)
            for mark, turns in self.subagents.items():
                if mark in prompt:
                    self.seen.append((mark, turn))
                    return turns[turn]
            raise AssertionError(f"no script for the sub-agent prompt {prompt[:200]!r}")
        self.seen.append(("session", turn))
        return self.session[turn]

    @property
    def count(self) -> int:
        return len(self.session) + sum(len(t) for t in self.subagents.values())

    def play(self, api: ScriptedMessagesServer) -> Roles:
        api.extend(*[self] * self.count)
        return self


def requests_of(api: ScriptedMessagesServer, mark: str | None) -> Sequence[RecordedRequest]:
    """The requests a sub-agent (by its marker) or, with None, the session sent."""
    if mark is None:
        return [r for r in api.message_requests if not is_subagent(r)]
    return [r for r in api.message_requests if is_subagent(r) and mark in first_user_text(r)]
