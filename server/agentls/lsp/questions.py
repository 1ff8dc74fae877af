"""Questions and plan reviews: the core's `UserPrompts` port in LSP terms.

Clients that render them themselves announce `capabilities.experimental.agentls.questions`
and `.planReview` (the VS Code extension: a quick pick with multi-select and free text;
Neovim: `vim.ui.select`; the headless CLI: a terminal prompt) and get agentls's own
requests:

- `agentls/askQuestions {session_id, tool_use_id, questions: [{question, header, options:
  [{label, description}], multi_select}], other_label}` → `{answers: [{selected: [label],
  other: str | null}]}` (one per question), or null when the user dismissed them;
- `agentls/reviewPlan {session_id, tool_use_id, plan, choices: [{id, label}]}` →
  `{decision: "review" | "auto" | "keep_planning", feedback?: str}`, or null.

Any other client with `window/showMessageRequest` gets one message request per question
(the options as actions, plus "Other…", which such a client cannot follow with text; a
multi-select question is asked one choice at a time, until "Done"), and a plan is opened
as a Markdown document (`window/showDocument`, else shown in the message) with the three
choices as actions. A client with neither (Helix) gets no `UserPrompts`: the tools tell the
model nobody can be asked.

An answer that does not fit the protocol counts as no answer (and is logged). When the run
is cancelled while a prompt is open, the request is withdrawn with `$/cancelRequest`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentls.agent.framework.questions import (
    OTHER_LABEL,
    PlanRequest,
    PlanReview,
    Question,
    QuestionAnswer,
    QuestionRequest,
)
from agentls.lsp.editor_queries import RawResponse

if TYPE_CHECKING:
    from agentls.lsp.contract import Connection

log = logging.getLogger(__name__)

QUESTIONS_REQUEST = "agentls/askQuestions"
PLAN_REQUEST = "agentls/reviewPlan"
DONE = "Done"
MAX_MESSAGE_PLAN_CHARS = 6000


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    selected: list[str] = Field(default_factory=list, max_length=10)
    other: str | None = Field(default=None, max_length=10_000)


class _Answers(BaseModel):
    model_config = ConfigDict(extra="ignore")

    answers: list[_Answer] = Field(max_length=4)


class _Review(BaseModel):
    model_config = ConfigDict(extra="ignore")

    decision: Literal["review", "auto", "keep_planning"]
    feedback: str = Field(default="", max_length=20_000)


class LspPrompts:
    """`UserPrompts` for one connection (see the module docstring)."""

    def __init__(self, ls: Connection) -> None:
        self.ls = ls

    # -- questions ------------------------------------------------------------------------

    async def ask_questions(self, request: QuestionRequest) -> Sequence[QuestionAnswer] | None:
        headers = ", ".join(q.header for q in request.questions)
        self.ls.log_line(f"[{request.session_id}] asking the user: {headers}")
        if self.ls.features.questions:
            return await self._ask_client(request)
        if not self.ls.features.show_message_request:
            return None
        answers: list[QuestionAnswer] = []
        for question in request.questions:
            answer = await self._ask_by_message(request.session_id, question)
            if answer is None:  # dismissed: the user does not want to answer now
                break
            answers.append(answer)
        if not any(a.answered for a in answers):
            return None
        answers += [QuestionAnswer(q.question) for q in request.questions[len(answers) :]]
        return answers

    async def _ask_client(self, request: QuestionRequest) -> Sequence[QuestionAnswer] | None:
        params = {
            "session_id": request.session_id,
            "tool_use_id": request.tool_use_id,
            "other_label": OTHER_LABEL,
            "questions": [
                {
                    "question": q.question,
                    "header": q.header,
                    "options": [
                        {"label": o.label, "description": o.description} for o in q.options
                    ],
                    "multi_select": q.multi_select,
                }
                for q in request.questions
            ],
        }
        raw = await self._request(QUESTIONS_REQUEST, params, request.session_id)
        if raw is None:
            return None
        try:
            parsed = _Answers.model_validate(raw)
        except ValidationError as exc:
            self._bad_answer(QUESTIONS_REQUEST, exc)
            return None
        return [
            _answer(question, parsed.answers[i] if i < len(parsed.answers) else _Answer())
            for i, question in enumerate(request.questions)
        ]

    async def _ask_by_message(self, session_id: str, question: Question) -> QuestionAnswer | None:
        labels = [o.label for o in question.options]
        details = "".join(
            f"\n• {o.label}" + (f": {o.description}" if o.description else "")
            for o in question.options
        )
        chosen: list[str] = []
        while True:
            remaining = [label for label in labels if label not in chosen]
            if question.multi_select:
                so_far = f" (chosen so far: {', '.join(chosen)})" if chosen else ""
                note = f"\nChoose one at a time, then {DONE}{so_far}."
                titles = [*remaining, DONE, OTHER_LABEL] if chosen else [*remaining, OTHER_LABEL]
            else:
                note, titles = "", [*labels, OTHER_LABEL]
            message = f"agentls asks — {question.header}: {question.question}{details}{note}"
            title = await self._message(session_id, message, titles)
            if title is None:
                return QuestionAnswer(question.question, tuple(chosen)) if chosen else None
            if title == OTHER_LABEL:
                return QuestionAnswer(question.question, tuple(chosen), other="")
            if title == DONE or title not in labels:
                return QuestionAnswer(question.question, tuple(chosen))
            chosen.append(title)
            if not question.multi_select or len(chosen) == len(labels):
                return QuestionAnswer(question.question, tuple(chosen))

    # -- plans ----------------------------------------------------------------------------

    async def review_plan(self, request: PlanRequest) -> PlanReview | None:
        self.ls.log_line(f"[{request.session_id}] the plan is shown for approval")
        if self.ls.features.plan_review:
            params = {
                "session_id": request.session_id,
                "tool_use_id": request.tool_use_id,
                "plan": request.plan,
                "choices": [{"id": k, "label": v} for k, v in request.choices.items()],
            }
            raw = await self._request(PLAN_REQUEST, params, request.session_id)
            if raw is None:
                return None
            try:
                review = _Review.model_validate(raw)
            except ValidationError as exc:
                self._bad_answer(PLAN_REQUEST, exc)
                return None
            return PlanReview(review.decision, review.feedback.strip())
        if not self.ls.features.show_message_request:
            return None
        shown = await self._show_plan(request)
        if shown:
            message = "agentls: the agent's plan is open in the editor. Approve it?"
        else:
            plan = request.plan
            if len(plan) > MAX_MESSAGE_PLAN_CHARS:
                plan = plan[:MAX_MESSAGE_PLAN_CHARS] + "\n…"
            message = f"agentls: the agent's plan:\n\n{plan}\n\nApprove it?"
        by_label = {label: decision for decision, label in request.choices.items()}
        title = await self._message(request.session_id, message, list(by_label))
        if title is None or title not in by_label:
            return None
        return PlanReview(by_label[title])

    async def _show_plan(self, request: PlanRequest) -> bool:
        """The plan as a Markdown document in the editor (False when it cannot show one)."""
        if not self.ls.features.show_document:
            return False
        path = _plan_file(request.session_id, request.plan)
        try:
            result = await self.ls.window_show_document_async(
                types.ShowDocumentParams(uri=path.as_uri(), take_focus=True)
            )
        except Exception as exc:
            log.info("showDocument of the plan failed: %s", exc)
            return False
        return bool(getattr(result, "success", False))

    # -- requests -------------------------------------------------------------------------

    async def _message(self, session_id: str, message: str, titles: list[str]) -> str | None:
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message=message,
            actions=[types.MessageActionItem(title=t) for t in titles],
        )
        choice = await self._send(types.WINDOW_SHOW_MESSAGE_REQUEST, params, session_id)
        title = getattr(choice, "title", None)
        return title if isinstance(title, str) else None

    async def _request(self, method: str, params: dict[str, Any], session_id: str) -> Any:
        try:
            return _plain(await self._send(method, params, session_id, raw=True))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the client failed the request: no answer
            self.ls.log_line(f"[{session_id}] {method} failed: {exc}")
            return None

    async def _send(self, method: str, params: Any, session_id: str, *, raw: bool = False) -> Any:
        """A request the user answers, withdrawn (`$/cancelRequest`) if the run stops
        waiting; shielded so pygls's own future still gets the late answer."""
        msg_id = f"agentls-question-{uuid.uuid4().hex}"
        answer = self.ls.protocol.send_request_async(method, params, msg_id=msg_id)
        if raw:
            # keep the answer as plain JSON (pygls makes named tuples of untyped results)
            self.ls.protocol._result_types[msg_id] = RawResponse
        answer.add_done_callback(_drop_late_answer)
        try:
            result = await asyncio.shield(answer)
        except asyncio.CancelledError:
            self.ls.log_line(f"[{session_id}] question withdrawn: the run was cancelled")
            self.ls.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise
        return result

    def _bad_answer(self, method: str, exc: ValidationError) -> None:
        log.warning("the client's answer to %s does not fit: %s", method, exc)
        self.ls.log_line(f"agentls: the editor's answer to {method} was not understood: {exc}")


def _answer(question: Question, raw: _Answer) -> QuestionAnswer:
    labels = [o.label for o in question.options]
    selected = [label for label in dict.fromkeys(raw.selected) if label in labels]
    if not question.multi_select:
        selected = selected[:1]
    other = raw.other.strip() if raw.other is not None else None
    return QuestionAnswer(question.question, tuple(selected), other or None)


def _plan_file(session_id: str, plan: str) -> Path:
    """The plan as a private Markdown file (0600 in a 0700 folder) the editor opens."""
    from agentls.privatefiles import user_temp_dir, write_private

    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in session_id)[:40]
    return write_private(user_temp_dir("plans") / f"plan-{name}.md", plan + "\n")


def _plain(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _drop_late_answer(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.debug("question request ended: %s", future.exception())


def prompts_for(ls: Connection) -> LspPrompts | None:
    """Where this client's user can be asked, or None (Helix: no prompts at all)."""
    features = ls.features
    if features.questions or features.plan_review or features.show_message_request:
        return LspPrompts(ls)
    return None
