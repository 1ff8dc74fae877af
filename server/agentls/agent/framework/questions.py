"""The "ask the user a question" port: what `ask_user_question` and the plan-mode tools need
from the host, in the manner of `Approver` for permission prompts.

A host implements `UserPrompts` with whatever its protocol has (LSP: the agentls clients'
own requests, else `window/showMessageRequest`; the CLI answers those on its terminal; ACP:
its own). A host with nobody to ask (Helix, `--json`, no terminal) gives none, and the
tools tell the model to proceed on its best assumption.

`None` from a method means nobody answered: the prompt was dismissed, or withdrawn because
the run was cancelled (the awaiting task is cancelled then; an implementation withdraws its
prompt and re-raises, like an `Approver`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

OTHER_LABEL = "Other…"
"""The choice every question offers besides its options: a free-text answer."""

PlanDecision = Literal["review", "auto", "keep_planning"]
"""The user's choice on a plan: approve and let the agent edit with the usual review of its
changes, approve with auto-accepted edits, or keep planning (with optional feedback)."""

PLAN_CHOICES: dict[PlanDecision, str] = {
    "review": "Approve and let the agent edit (review)",
    "auto": "Approve with auto-accepted edits",
    "keep_planning": "Keep planning",
}
"""Each decision's label, the same in every host."""


@dataclass(frozen=True)
class QuestionOption:
    label: str
    description: str = ""


@dataclass(frozen=True)
class Question:
    question: str
    header: str
    options: tuple[QuestionOption, ...]
    multi_select: bool = False


@dataclass(frozen=True)
class QuestionRequest:
    """Questions to show together (1–4), for one tool call of one session."""

    session_id: str
    questions: tuple[Question, ...]
    tool_use_id: str = ""


@dataclass(frozen=True)
class QuestionAnswer:
    """The answer to one question: the option labels chosen (several when multi-select)
    and the user's own text when they chose "Other…". `other` is `""` when the user chose
    "Other…" but their editor could not take text."""

    question: str
    selected: tuple[str, ...] = ()
    other: str | None = None

    @property
    def answered(self) -> bool:
        return bool(self.selected) or self.other is not None


@dataclass(frozen=True)
class PlanRequest:
    """A plan (Markdown) the user approves or sends back."""

    session_id: str
    plan: str
    tool_use_id: str = ""
    choices: dict[PlanDecision, str] = field(default_factory=lambda: dict(PLAN_CHOICES))


@dataclass(frozen=True)
class PlanReview:
    decision: PlanDecision
    feedback: str = ""


class UserPrompts(Protocol):
    """The host's side of asking the user (one implementation per host)."""

    async def ask_questions(self, request: QuestionRequest) -> Sequence[QuestionAnswer] | None:
        """One answer per question, in order; None when nobody answered."""
        ...

    async def review_plan(self, request: PlanRequest) -> PlanReview | None:
        """The user's decision on the plan; None when nobody decided."""
        ...
