"""`AcpPrompts`: the agent's plan approval (`exit_plan_mode`) in an ACP client.

ACP has no question request, so a plan is approved as the permission question of the
`exit_plan_mode` tool call the client already shows, with the plan as its content:
*Approve and let the agent edit (review)* (`allow_once`), *Approve with auto-accepted
edits* (`allow_always`) or *Keep planning* (`reject_once`). Approving leaves plan mode; the
session's new permission mode reaches the client as `current_mode_update` (the reporter).
Questions (`ask_user_question`, `enter_plan_mode`'s) are asked the same way, one at a
time: each option is an `allow_once` choice, and *Skip* (`reject_once`) leaves it
unanswered. ACP's options allow one choice, so a multi-select question takes one; there is
no "Other…" text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from acp.schema import PermissionOption, ToolCallUpdate

from agentls.acp.approvals import ask_client, text_content
from agentls.agent.framework.questions import PLAN_CHOICES, PlanDecision, PlanReview, QuestionAnswer

if TYPE_CHECKING:
    from agentls.acp.client import ClientLink
    from agentls.agent.framework.questions import PlanRequest, Question, QuestionRequest

T = TypeVar("T")


class AskingWorkspace(Protocol):
    """What the prompts need of `acp.workspace.AcpWorkspace` (named by protocol, so the
    workspace, which builds the prompts, is not imported back)."""

    link: ClientLink

    async def unless_cancelled(self, session_id: str, waiting: Awaitable[T]) -> T | None: ...


PLAN_OPTIONS = [
    PermissionOption(option_id="review", name=PLAN_CHOICES["review"], kind="allow_once"),
    PermissionOption(option_id="auto", name=PLAN_CHOICES["auto"], kind="allow_always"),
    PermissionOption(
        option_id="keep_planning", name=PLAN_CHOICES["keep_planning"], kind="reject_once"
    ),
]
DECISIONS: dict[str, PlanDecision] = {
    "review": "review",
    "auto": "auto",
    "keep_planning": "keep_planning",
}


class AcpPrompts:
    """The `UserPrompts` of one workspace's sessions."""

    def __init__(self, workspace: AskingWorkspace) -> None:
        self.workspace = workspace

    async def ask_questions(self, request: QuestionRequest) -> Sequence[QuestionAnswer] | None:
        answers: list[QuestionAnswer] = []
        for question in request.questions:
            options = [
                PermissionOption(option_id=str(i), name=o.label, kind="allow_once")
                for i, o in enumerate(question.options)
            ]
            options.append(PermissionOption(option_id="skip", name="Skip", kind="reject_once"))
            update = ToolCallUpdate(
                tool_call_id=request.tool_use_id,
                title=question.question,
                status="pending",
                content=[text_content(_described(question))],
            )
            chosen = await self._ask(request.session_id, update, options)
            if chosen is None:
                return answers or None  # cancelled: the rest is not asked
            picked = question.options[int(chosen)].label if chosen.isdigit() else None
            answers.append(QuestionAnswer(question.question, selected=(picked,) if picked else ()))
        return answers

    async def _ask(
        self, session_id: str, update: ToolCallUpdate, options: list[PermissionOption]
    ) -> str | None:
        try:
            return await self.workspace.unless_cancelled(
                session_id, ask_client(self.workspace.link, session_id, update, options)
            )
        except ConnectionError:
            return None

    async def review_plan(self, request: PlanRequest) -> PlanReview | None:
        update = ToolCallUpdate(
            tool_call_id=request.tool_use_id,
            title="Approve this plan?",
            kind="switch_mode",
            status="pending",
            content=[text_content(request.plan)],
        )
        chosen = await self._ask(request.session_id, update, PLAN_OPTIONS)
        decision = DECISIONS.get(chosen or "")
        return PlanReview(decision) if decision is not None else None


def _described(question: Question) -> str:
    lines = [question.question]
    for option in question.options:
        lines.append(
            f"- {option.label}: {option.description}" if option.description else f"- {option.label}"
        )
    return "\n".join(lines)
