"""`ask_user_question`: multiple-choice questions to the user (Claude Code's AskUserQuestion).

The questions go through the host's `UserPrompts` port (`ToolContext.run.prompts`): the
editor shows them, the user picks an option (several for a multi-select question) or
writes an answer of their own ("Other…"). Where nobody can be asked (Helix, `--json`, no
terminal, a sub-agent) the model is told to proceed on its best assumption and say so.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.questions import (
    OTHER_LABEL,
    Question,
    QuestionAnswer,
    QuestionOption,
    QuestionRequest,
)
from agentls.agent.framework.tool import Tool, ToolInput, ToolOutput

NOBODY_TO_ASK = (
    "No one can answer questions here (the editor cannot show them, or this is a "
    "non-interactive run). Do not ask again: proceed on your best assumption, and state in "
    "your answer which assumption you made."
)
NOT_ANSWERED = (
    "The user closed the questions without answering. Do not ask the same again: proceed "
    "on your best assumption and say which one you made."
)

USAGE = """Ask the user one to four multiple-choice questions while you work, and wait for \
the answers.

Use it to:
- Clear up an ambiguous request before you build the wrong thing.
- Let the user choose between approaches that differ in ways only they can judge \
(behaviour, naming, scope, a dependency to add).
- Get a preference or a decision you cannot make from the code.

Do not use it:
- For what you can find out yourself by reading the code or running the tools.
- To ask for permission to run a tool (the editor asks the user itself) or for approval \
of a plan (in plan mode use exit_plan_mode).
- For a yes/no question you would not act differently on.

How:
- 1-4 questions, each with 2-4 options. Each option has a short `label` (1-5 words) and a \
`description` of what it means or implies.
- Put a recommended option first and end its label with " (Recommended)".
- `header` is a very short tag for the question (at most 12 characters: "Auth method").
- `multi_select: true` when several options can apply together.
- The user can always answer in their own words instead ("Other…"): do not add an "Other" \
option yourself.
- If nobody can be asked, you are told so: then proceed on your best assumption.

Example: {"questions": [{"question": "Which date library should the parser use?", \
"header": "Library", "options": [{"label": "datetime (Recommended)", "description": \
"Standard library, no new dependency"}, {"label": "dateutil", "description": "Parses more \
formats; adds a dependency"}], "multi_select": false}]}"""


class OptionInput(ToolInput):
    label: str = Field(min_length=1, max_length=80, description="The choice, 1-5 words.")
    description: str = Field(
        default="", max_length=500, description="What this choice means or implies."
    )


class QuestionInput(ToolInput):
    question: str = Field(min_length=1, max_length=1000, description="The full question.")
    header: str = Field(
        min_length=1, max_length=30, description="A very short tag (at most 12 characters)."
    )
    options: list[OptionInput] = Field(
        min_length=2, max_length=4, description="2-4 choices; 'Other…' is always added."
    )
    multi_select: bool = Field(
        default=False, description="Whether the user may choose several options."
    )


class AskUserQuestionInput(ToolInput):
    questions: list[QuestionInput] = Field(min_length=1, max_length=4)


class AskUserQuestion(Tool[AskUserQuestionInput]):
    name = "ask_user_question"
    input_model = AskUserQuestionInput
    usage = USAGE
    search_hint = "ask user question clarify choose option preference decision"

    def is_read_only(self, input: AskUserQuestionInput | None = None) -> bool:
        return True

    def summary(self, input: AskUserQuestionInput) -> str:
        headers = ", ".join(q.header for q in input.questions)
        return f"Asking the user: {headers}"

    async def validate_input(self, input: AskUserQuestionInput, ctx: ToolContext) -> str | None:
        if ctx.run.subagent is not None:
            return "A sub-agent cannot ask the user; proceed on your best assumption."
        texts = [q.question.strip() for q in input.questions]
        if len(set(texts)) != len(texts):
            return "Each question must be different; merge the duplicates."
        for question in input.questions:
            labels = [o.label.strip().lower() for o in question.options]
            if len(set(labels)) != len(labels):
                return f"The options of {question.question!r} must have different labels."
            if any(label.rstrip(".…") == "other" for label in labels):
                return (
                    f"Remove the 'Other' option from {question.question!r}: the user can "
                    "always answer in their own words."
                )
        return None

    async def call(self, input: AskUserQuestionInput, ctx: ToolContext) -> ToolOutput:
        prompts = ctx.run.prompts
        if prompts is None:
            return ToolOutput(NOBODY_TO_ASK, is_error=True)
        request = QuestionRequest(
            session_id=ctx.session_id,
            tool_use_id=ctx.tool_use_id,
            questions=tuple(_question(q) for q in input.questions),
        )
        answers = await prompts.ask_questions(request)
        if answers is None or not any(a.answered for a in answers):
            return ToolOutput(NOT_ANSWERED, is_error=True)
        return ToolOutput(format_answers(request.questions, answers))


def _question(q: QuestionInput) -> Question:
    return Question(
        question=q.question.strip(),
        header=q.header.strip(),
        options=tuple(QuestionOption(o.label.strip(), o.description.strip()) for o in q.options),
        multi_select=q.multi_select,
    )


def format_answers(questions: Sequence[Question], answers: Sequence[QuestionAnswer]) -> str:
    """The answers as the model reads them: one line per question."""
    lines = ["The user answered:"]
    for index, question in enumerate(questions):
        answer = answers[index] if index < len(answers) else QuestionAnswer(question.question)
        lines.append(f'- "{question.question}" → {_answer_text(answer)}')
    lines.append("Continue with these answers in mind.")
    return "\n".join(lines)


def _answer_text(answer: QuestionAnswer) -> str:
    parts = [", ".join(f'"{label}"' for label in answer.selected)] if answer.selected else []
    if answer.other:
        parts.append(f'in their own words: "{answer.other}"')
    elif answer.other == "":
        parts.append(
            f"{OTHER_LABEL} (something else; their editor could not take the text: ask them "
            "in your reply what they want)"
        )
    if not parts:
        return "no answer (proceed on your best assumption and say so)"
    return "; ".join(parts)
