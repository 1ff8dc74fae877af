"""A scripted user for MCP servers' questions (the `QuestionPort` a host provides)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class ScriptedUser:
    """Answers by the words in the question: `choices[key]` / `texts[key]` is used for the
    first question whose text contains `key` (a list is answered in order, one per
    question). Unmatched: "Answer" to the opening question, else dismissed (None)."""

    choices: dict[str, str | list[str]] = field(default_factory=dict)
    texts: dict[str, str | list[str]] = field(default_factory=dict)
    typing: bool = True
    asked: list[tuple[str, list[str]]] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)

    @property
    def can_type(self) -> bool:
        return self.typing

    async def choose(self, message: str, options: Sequence[str]) -> str | None:
        self.asked.append((message, list(options)))
        answer = _take(self.choices, message)
        if answer is None and "Answer" in options:
            return "Answer"
        return answer if answer in options else None

    async def text(self, message: str, default: str | None) -> str | None:
        self.asked.append((message, []))
        return _take(self.texts, message)

    async def open_url(self, url: str, message: str) -> bool:
        self.opened.append(url)
        return True


def _take(script: dict[str, str | list[str]], message: str) -> str | None:
    for key, value in script.items():
        if key in message:
            if isinstance(value, list):
                return value.pop(0) if value else None
            return value
    return None
