"""`enter_plan_mode` / `exit_plan_mode`: research read-only, then have the plan approved.

Plan mode is the run's mode `plan` (or the permission mode `plan`): the one permission
decision forbids every call that is not read-only (`agentls.agent.run.decision.decide`) and the
pool offers read-only tools only (`Conversation.pool`). These tools only
ask the user and switch that mode (`ToolContext.run.switch_mode`); the switch takes effect
when the current turn's calls are done.

- `enter_plan_mode` proposes planning first; the user confirms (a question).
- `exit_plan_mode {plan}` shows the plan; the user approves it — the agent then edits with
  the usual review of its changes, or with auto-accepted edits (applied as they are made,
  without asking: the permission mode becomes `acceptEdits`) — or keeps it planning, with
  feedback that becomes the tool result.

Both change no file, so they are read-only (offered in plan mode, never asked for).
"""

from __future__ import annotations

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.controls import NOT_IN_A_RUN
from agentls.agent.framework.questions import (
    PLAN_CHOICES,
    PlanRequest,
    Question,
    QuestionOption,
    QuestionRequest,
)
from agentls.agent.framework.tool import Tool, ToolInput, ToolOutput

PLAN_FIRST = "Plan first"
SKIP_PLANNING = "Continue without planning"

ENTER_USAGE = """Propose to switch into plan mode before a non-trivial change: you research \
with read-only tools, then present a plan with exit_plan_mode for the user to approve before \
you change anything. The user is asked to confirm.

Use it when the task:
- Adds a feature or changes behaviour in ways that can be done several ways.
- Touches many files, or its approach is unclear until you have read the code.
- Is a large refactoring, or the user would want a say in the design.

Do not use it for small, clear changes (a typo, a one-line fix, a rename), for questions \
about the code, or when you are already in plan mode. If the user declines, go ahead with \
the task directly."""

EXIT_USAGE = """Present your plan for approval and leave plan mode. Use it in plan mode, \
once your read-only research is done and you know what to change.

The plan (Markdown) is shown to the user, who either approves it — then you make the \
changes, reviewed by the user as usual or auto-accepted — or asks you to keep planning, \
with feedback.

The plan should be concise and concrete: the files to change and what changes in each, \
the order of the steps, how you will verify the change (tests, lint), and any open \
question or risk. Do not use this tool for research-only tasks (answering a question, \
explaining code): answer in your reply instead.

Example: {"plan": "## Plan\\n1. `<file>`: <what changes>.\\n2. `<file>`: <what changes>.\\n\
3. Verify: <tests or lint to run>."}"""

NOBODY_TO_CONFIRM = (
    "Plan mode needs the user's confirmation and no one can be asked here: stay in the "
    "current mode and go ahead with the task carefully."
)
NOBODY_TO_APPROVE = (
    "No one can approve a plan here (the editor cannot show it, or this is a "
    "non-interactive run): you stay in plan mode and cannot change files. Present the plan "
    "in your final answer and stop there."
)


class EnterPlanModeInput(ToolInput):
    pass


class ExitPlanModeInput(ToolInput):
    plan: str = Field(
        min_length=1,
        max_length=50_000,
        description="The plan in Markdown: what to change where, the steps, how to verify.",
    )


def in_plan_mode(ctx: ToolContext) -> bool:
    return ctx.run.mode == "plan" or ctx.run.permission_mode == "plan"


class EnterPlanMode(Tool[EnterPlanModeInput]):
    name = "enter_plan_mode"
    input_model = EnterPlanModeInput
    usage = ENTER_USAGE
    search_hint = "plan mode planning design approach read-only research first"

    def is_read_only(self, input: EnterPlanModeInput | None = None) -> bool:
        return True

    def summary(self, input: EnterPlanModeInput) -> str:
        return "Proposing to plan first"

    async def validate_input(self, input: EnterPlanModeInput, ctx: ToolContext) -> str | None:
        if not ctx.run.in_run:
            return NOT_IN_A_RUN.format(tool=self.name)
        if ctx.run.subagent is not None:
            return "A sub-agent cannot switch to plan mode."
        return None

    async def call(self, input: EnterPlanModeInput, ctx: ToolContext) -> ToolOutput:
        if in_plan_mode(ctx):
            return ToolOutput(
                "You are already in plan mode: research with read-only tools, then call "
                "exit_plan_mode with your plan."
            )
        prompts = ctx.run.prompts
        if prompts is None:
            return ToolOutput(NOBODY_TO_CONFIRM, is_error=True)
        question = Question(
            question=(
                "The agent proposes to plan first: research read-only, then show you a plan "
                "to approve before it changes anything. Switch to plan mode?"
            ),
            header="Plan mode",
            options=(
                QuestionOption(PLAN_FIRST, "Research read-only, then approve a plan"),
                QuestionOption(SKIP_PLANNING, "Let the agent work on the task directly"),
            ),
        )
        answers = await prompts.ask_questions(
            QuestionRequest(ctx.session_id, (question,), ctx.tool_use_id)
        )
        answer = answers[0] if answers else None
        if answer is not None and PLAN_FIRST in answer.selected:
            ctx.run.switch_mode("plan")
            return ToolOutput(
                "Plan mode is on (from your next step). Research with read-only tools; do "
                "not change files. When you know what to do, call exit_plan_mode with your "
                "plan for the user to approve."
            )
        if answer is not None and answer.other:
            return ToolOutput(
                f'The user did not switch to plan mode and said: "{answer.other}". '
                "Take that into account and continue."
            )
        if answer is None or not answer.answered:
            return ToolOutput(
                "The user did not answer; plan mode stays off. Go ahead with the task.",
                is_error=True,
            )
        return ToolOutput("The user declined plan mode: go ahead with the task directly.")


class ExitPlanMode(Tool[ExitPlanModeInput]):
    name = "exit_plan_mode"
    input_model = ExitPlanModeInput
    usage = EXIT_USAGE
    search_hint = "plan approve present plan mode exit start implementing"

    def is_read_only(self, input: ExitPlanModeInput | None = None) -> bool:
        return True

    def summary(self, input: ExitPlanModeInput) -> str:
        return "Presenting the plan for approval"

    async def validate_input(self, input: ExitPlanModeInput, ctx: ToolContext) -> str | None:
        if not ctx.run.in_run:
            return NOT_IN_A_RUN.format(tool=self.name)
        if ctx.run.subagent is not None:
            return "A sub-agent cannot leave plan mode; report your plan instead."
        if not in_plan_mode(ctx):
            return "You are not in plan mode: go ahead with the changes (no approval needed)."
        return None

    async def call(self, input: ExitPlanModeInput, ctx: ToolContext) -> ToolOutput:
        prompts = ctx.run.prompts
        if prompts is None:
            return ToolOutput(NOBODY_TO_APPROVE, is_error=True)
        review = await prompts.review_plan(
            PlanRequest(ctx.session_id, input.plan.strip(), ctx.tool_use_id)
        )
        if review is None:
            return ToolOutput(
                "The user closed the plan without deciding: you are still in plan mode and "
                "cannot change files. Ask them what to change, or refine the plan.",
                is_error=True,
            )
        permission = ctx.run.permission_mode
        if review.decision == "review":
            ctx.run.switch_mode("review", "default" if permission == "plan" else None)
            return ToolOutput(
                "The user approved your plan. Plan mode is off: make the changes now, step "
                "by step (keep your todo list current if you use one). Your edits are staged "
                "for the user to review at the end."
            )
        if review.decision == "auto":
            keep = permission == "bypassPermissions"
            ctx.run.switch_mode("auto", None if keep else "acceptEdits")
            return ToolOutput(
                "The user approved your plan with auto-accepted edits. Plan mode is off: "
                "make the changes now, step by step. Each edit is applied to the user's "
                "files as you make it."
            )
        feedback = review.feedback.strip()
        said = (
            f'The user\'s feedback: "{feedback}". Revise the plan accordingly'
            if feedback
            else "They gave no feedback: ask what they want changed, or refine the plan"
        )
        return ToolOutput(
            f"The user wants you to keep planning ({PLAN_CHOICES['keep_planning']}): you are "
            f"still in plan mode and cannot change files. {said}, then call exit_plan_mode "
            "again.",
            is_error=True,
        )
