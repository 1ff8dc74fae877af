"""`ask_user_question` and plan mode over real stdio, in three kinds of client.

- A plain LSP client (the recorded VS Code capabilities): one `window/showMessageRequest`
  per question (multi-select one choice at a time), the plan opened with
  `window/showDocument` and decided with a message request.
- A client that announces `experimental.agentls.questions` / `.planReview` (what the VS Code
  extension, the Neovim plugin and the CLI do): `agentls/askQuestions` (multi-select and
  the user's own words) and `agentls/reviewPlan` (feedback when the user keeps planning).
- A Helix-like client (no prompts at all): the model is told nobody can be asked, and plan
  mode cannot be left.

Approving a plan switches the run's mode and the edits follow in the chosen mode; keeping it
in planning sends the feedback to the model; a protected file still asks after an approval
with auto-accepted edits.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.lsp_support import (
    HELIX_LIKE,
    FakeEditor,
    capabilities,
    command,
    editor_session,
    plain,
    server_env,
    wait_for,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

PLAN = "## Plan\n1. Change `GREETING` in greet.py to 'hello'.\n2. Run the tests."
REVIEW = "Approve and let the agent edit (review)"
AUTO = "Approve with auto-accepted edits"
EDIT = ("edit_file", {"path": "greet.py", "old_string": "'hi'", "new_string": "'hello'"})


def question(text: str, header: str, labels: list[str], multi: bool = False) -> dict[str, Any]:
    return {
        "question": text,
        "header": header,
        "options": [{"label": label, "description": f"about {label}"} for label in labels],
        "multi_select": multi,
    }


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest.fixture(autouse=True)
def _script_fully_played(api: ScriptedMessagesServer) -> Iterator[None]:
    yield
    assert api.remaining == 0, "the test left scripted turns unplayed"


def _workspace(factory: pytest.TempPathFactory) -> Path:
    root = factory.mktemp("ws")
    (root / "greet.py").write_text("GREETING = 'hi'\n")
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def plain_client(
    api: ScriptedMessagesServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FakeEditor]:
    root = _workspace(tmp_path_factory)
    env = server_env(api.base_url, tmp_path_factory.mktemp("transcripts"))
    async with editor_session("visual-studio-code", root, env) as fake:
        yield fake


class Answers:
    """What the custom client answers to agentls/askQuestions and agentls/reviewPlan."""

    def __init__(self) -> None:
        self.questions: list[Any] = []
        self.plans: list[Any] = []
        self.question_answers: list[Any] = []
        self.plan_answers: list[Any] = []


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def custom_client(
    api: ScriptedMessagesServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[FakeEditor, Answers]]:
    root = _workspace(tmp_path_factory)
    env = server_env(api.base_url, tmp_path_factory.mktemp("transcripts"))
    caps = capabilities("visual-studio-code")
    caps.experimental = {"agentls": {"questions": True, "planReview": True}}
    answers = Answers()
    async with editor_session("visual-studio-code", root, env, caps=caps) as fake:

        @fake.client.feature("agentls/askQuestions")
        def ask(params: Any) -> Any:
            answers.questions.append(plain(params))
            return answers.question_answers.pop(0)

        @fake.client.feature("agentls/reviewPlan")
        def review(params: Any) -> Any:
            answers.plans.append(plain(params))
            return answers.plan_answers.pop(0)

        yield fake, answers


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def helix(
    api: ScriptedMessagesServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FakeEditor]:
    root = _workspace(tmp_path_factory)
    env = server_env(api.base_url, tmp_path_factory.mktemp("transcripts"))
    async with editor_session(HELIX_LIKE, root, env) as fake:
        yield fake


async def run(editor: FakeEditor, prompt: str, **extra: Any) -> dict[str, Any]:
    result: dict[str, Any] = await command(
        editor, "agentls.run", {"prompt": prompt, "wait": True, **extra}
    )
    return result


def last_results(api: ScriptedMessagesServer) -> list[dict[str, Any]]:
    return api.message_requests[-1].tool_results()


# -- a plain LSP client ---------------------------------------------------------------------


async def test_questions_are_asked_with_message_requests_one_choice_at_a_time(
    plain_client: FakeEditor, api: ScriptedMessagesServer
) -> None:
    editor = plain_client
    editor.prompts.clear()
    api.extend(
        tool_turn(
            (
                "ask_user_question",
                {
                    "questions": [
                        question("Which date library?", "Library", ["datetime", "dateutil"]),
                        question("Which formats?", "Formats", ["ISO", "RFC", "Unix"], True),
                    ]
                },
            )
        ),
        text_turn("Thanks."),
    )
    editor.choices[:] = ["dateutil", "RFC", "ISO", "Done"]
    result = await run(editor, "parse dates")
    assert result["status"] == "completed"
    messages = [p.message for p in editor.prompts]
    assert len(messages) == 4
    assert "Library: Which date library?" in messages[0]
    assert "• dateutil: about dateutil" in messages[0]
    assert [a.title for a in editor.prompts[0].actions or []] == ["datetime", "dateutil", "Other…"]
    assert "chosen so far: RFC" in messages[2]
    assert [a.title for a in editor.prompts[2].actions or []] == ["ISO", "Unix", "Done", "Other…"]
    (answer,) = last_results(api)
    assert not answer["is_error"]
    assert '"Which date library?" → "dateutil"' in answer["content"]
    assert '"Which formats?" → "RFC", "ISO"' in answer["content"]


async def test_other_in_a_message_request_and_a_dismissed_question(
    plain_client: FakeEditor, api: ScriptedMessagesServer
) -> None:
    editor = plain_client
    ask = ("ask_user_question", {"questions": [question("Which?", "Pick", ["a", "b"])]})
    api.extend(tool_turn(ask), tool_turn(ask), text_turn("ok"))
    editor.choices[:] = ["Other…", None]
    result = await run(editor, "choose")
    assert result["status"] == "completed"
    first, second = api.message_requests[-2].tool_results(), last_results(api)
    assert not first[0]["is_error"]
    assert "could not take the text: ask them in your reply" in first[0]["content"]
    assert second[0]["is_error"]
    assert "closed the questions without answering" in second[0]["content"]


async def test_plan_approved_for_review_then_the_edit_arrives_as_one_reviewed_workspace_edit(
    plain_client: FakeEditor, api: ScriptedMessagesServer
) -> None:
    editor = plain_client
    editor.edits.clear()
    editor.events.clear()
    editor.prompts.clear()
    editor.client.shown_documents.clear()
    api.extend(
        tool_turn(EDIT, ("exit_plan_mode", {"plan": PLAN})),
        tool_turn(EDIT),
        text_turn("Done: greeting changed."),
    )
    editor.choices[:] = [REVIEW]
    result = await run(editor, "plan the greeting change", mode="plan")
    assert result["status"] == "completed", result
    first, second, third = api.message_requests[-3:]
    # plan mode: read-only tools, the write refused; after approval the edit tools are offered
    assert "edit_file" not in first.tool_names
    assert "exit_plan_mode" in first.tool_names
    refused, approved = second.tool_results()
    assert refused["is_error"]
    assert "No such tool available: edit_file" in refused["content"]
    assert not approved["is_error"]
    assert "approved your plan" in approved["content"]
    assert "edit_file" in second.tool_names
    assert not third.tool_results()[0]["is_error"]
    # the plan was shown as a Markdown document, then decided in a message request
    (shown,) = editor.client.shown_documents
    assert shown.uri.endswith(".md")
    plan_file = Path(shown.uri.removeprefix("file://"))
    assert plan_file.read_bytes().decode() == PLAN + "\n"  # noqa: ASYNC240
    (prompt,) = editor.prompts
    assert [a.title for a in prompt.actions or []] == [REVIEW, AUTO, "Keep planning"]
    # review mode: one WorkspaceEdit at the end (needing confirmation), applied by the editor
    assert len(editor.edits) == 1
    assert editor.edits[0].change_annotations
    assert result["edit"]["applied"] is True
    assert editor.text(editor.root / "greet.py") == "GREETING = 'hello'\n"
    changed = [e for e in editor.events if e["type"] == "mode_changed"]
    assert changed == [
        {"type": "mode_changed", "session_id": result["session"], "mode": "review",
         "permission_mode": None}
    ]  # fmt: skip


async def test_plan_approved_with_auto_accepted_edits_applies_each_edit_without_asking(
    plain_client: FakeEditor, api: ScriptedMessagesServer
) -> None:
    editor = plain_client
    root = editor.root
    (root / "greet.py").write_text("GREETING = 'hi'\n")
    uri = (root / "greet.py").as_uri()
    if uri in editor.docs:  # the previous test's edit left it open: start from the disk
        editor.close(uri)
    editor.edits.clear()
    editor.prompts.clear()
    settings = ("write_file", {"path": ".claude/settings.json", "content": "{}\n"})
    api.extend(
        tool_turn(("exit_plan_mode", {"plan": PLAN})),
        tool_turn(EDIT),
        tool_turn(settings),
        text_turn("Done."),
    )
    editor.choices[:] = [AUTO, "Deny"]
    result = await run(editor, "plan and do it", mode="plan")
    assert result["status"] == "completed", result
    edited, protected = api.message_requests[-2].tool_results(), last_results(api)
    # the edit was applied as it was made (auto delivery), and nobody was asked about it
    assert "The editor applied this change." in edited[0]["content"]
    assert editor.text(root / "greet.py") == "GREETING = 'hello'\n"
    # acceptEdits does not reach the agent's own configuration: that still asks (denied here)
    assert [p.message.split("?")[0] for p in editor.prompts] == [
        "agentls: the agent's plan is open in the editor. Approve it",
        "agentls: allow write_file",
    ]
    assert protected[0]["is_error"]
    assert "denied" in protected[0]["content"]
    assert not (root / ".claude" / "settings.json").exists()
    status = await command(editor, "agentls.status")
    assert status["permission_mode"] in (None, "default")  # the session's own policy changed


async def test_a_question_open_when_the_run_is_cancelled_is_withdrawn(
    plain_client: FakeEditor, api: ScriptedMessagesServer
) -> None:
    editor = plain_client
    editor.held_prompts.clear()
    editor.withdrawn_prompts.clear()
    api.extend(
        tool_turn(("ask_user_question", {"questions": [question("Now?", "When", ["x", "y"])]}))
    )
    editor.prompt_gate = asyncio.Event()
    try:
        pending = asyncio.ensure_future(run(editor, "ask me"))
        await wait_for(lambda: len(editor.held_prompts) == 1, 60)
        status = await command(editor, "agentls.status")
        (session,) = [s["id"] for s in status["sessions"] if s["running"]]
        await command(editor, "agentls.cancel", {"session": session})
        result = await asyncio.wait_for(pending, 5)
        assert result["status"] == "cancelled"
        await wait_for(lambda: len(editor.withdrawn_prompts) == 1)
    finally:
        editor.prompt_gate.set()
        editor.prompt_gate = None
    api.extend(text_turn("fine"))
    follow = await run(editor, "go on", session=session)
    assert follow["status"] == "completed"
    (answer,) = last_results(api)
    assert answer["is_error"]
    assert "ancel" in answer["content"]


# -- a client that shows agentls's own requests ---------------------------------------------


async def test_own_request_multi_select_and_the_users_own_words(
    custom_client: tuple[FakeEditor, Answers], api: ScriptedMessagesServer
) -> None:
    editor, answers = custom_client
    api.extend(
        tool_turn(
            (
                "ask_user_question",
                {
                    "questions": [
                        question("Which formats?", "Formats", ["ISO", "RFC", "Unix"], True),
                        question("Which library?", "Library", ["datetime", "dateutil"]),
                    ]
                },
            )
        ),
        text_turn("Thanks."),
    )
    answers.question_answers[:] = [
        {
            "answers": [
                {"selected": ["ISO", "Unix", "Bogus"], "other": None},
                {"selected": [], "other": "  pendulum, please  "},
            ]
        }
    ]
    result = await run(editor, "dates")
    assert result["status"] == "completed"
    (sent,) = answers.questions[-1:]
    assert sent["other_label"] == "Other…"
    assert sent["session_id"] == result["session"]
    assert sent["questions"][0]["multi_select"] is True
    assert sent["questions"][0]["options"][1] == {"label": "RFC", "description": "about RFC"}
    (answer,) = last_results(api)
    assert '"Which formats?" → "ISO", "Unix"' in answer["content"]  # an unknown label dropped
    assert 'in their own words: "pendulum, please"' in answer["content"]
    assert editor.prompts == []  # no message request for a client that shows its own


async def test_keep_planning_sends_the_feedback_to_the_model_and_stays_in_plan_mode(
    custom_client: tuple[FakeEditor, Answers], api: ScriptedMessagesServer
) -> None:
    editor, answers = custom_client
    api.extend(
        tool_turn(("exit_plan_mode", {"plan": PLAN})),
        tool_turn(EDIT),
        text_turn("I will revise the plan."),
    )
    answers.plan_answers[:] = [{"decision": "keep_planning", "feedback": "Also update the docs."}]
    result = await run(editor, "plan it", mode="plan")
    assert result["status"] == "completed"
    (sent,) = answers.plans[-1:]
    assert sent["plan"] == PLAN
    assert [c["id"] for c in sent["choices"]] == ["review", "auto", "keep_planning"]
    assert [c["label"] for c in sent["choices"]] == [REVIEW, AUTO, "Keep planning"]
    feedback = api.message_requests[-2].tool_results()[0]
    assert feedback["is_error"]
    assert 'The user\'s feedback: "Also update the docs."' in feedback["content"]
    still = last_results(api)[0]
    assert still["is_error"]
    assert "No such tool available: edit_file" in still["content"]
    assert (editor.root / "greet.py").read_text() == "GREETING = 'hi'\n"
    assert result["edit"] is None


async def test_a_garbled_answer_counts_as_none_and_the_server_carries_on(
    custom_client: tuple[FakeEditor, Answers], api: ScriptedMessagesServer
) -> None:
    editor, answers = custom_client
    api.extend(
        tool_turn(("ask_user_question", {"questions": [question("Q?", "Q", ["a", "b"])]})),
        tool_turn(("exit_plan_mode", {"plan": PLAN})),
        text_turn("ok"),
    )
    answers.question_answers[:] = [{"answers": "not a list"}]
    answers.plan_answers[:] = [{"decision": "ship it"}]
    result = await run(editor, "go", mode="plan")
    assert result["status"] == "completed"
    asked, planned = api.message_requests[-2].tool_results(), last_results(api)
    assert asked[0]["is_error"]
    assert "without answering" in asked[0]["content"]
    assert planned[0]["is_error"]
    assert "without deciding" in planned[0]["content"]


async def test_enter_plan_mode_asks_and_then_only_reads_are_offered(
    custom_client: tuple[FakeEditor, Answers], api: ScriptedMessagesServer
) -> None:
    editor, answers = custom_client
    editor.events.clear()
    api.extend(
        tool_turn(("enter_plan_mode", {})),
        tool_turn(EDIT),
        text_turn("Researching first."),
    )
    answers.question_answers[:] = [{"answers": [{"selected": ["Plan first"]}]}]
    result = await run(editor, "big change", mode="auto")
    assert result["status"] == "completed"
    (sent,) = answers.questions[-1:]
    assert [o["label"] for o in sent["questions"][0]["options"]] == [
        "Plan first",
        "Continue without planning",
    ]
    entered = api.message_requests[-2]
    assert "Plan mode is on" in entered.tool_results()[0]["content"]
    assert "edit_file" not in entered.tool_names
    (refused,) = last_results(api)
    assert refused["is_error"]
    assert "No such tool available: edit_file" in refused["content"]
    modes = [e["mode"] for e in editor.events if e["type"] == "mode_changed"]
    assert modes == ["plan"]


# -- nobody to ask --------------------------------------------------------------------------


async def test_with_nobody_to_ask_the_model_is_told_to_assume_and_plan_mode_holds(
    helix: FakeEditor, api: ScriptedMessagesServer
) -> None:
    api.extend(
        tool_turn(
            ("ask_user_question", {"questions": [question("Q?", "Q", ["a", "b"])]}),
            ("enter_plan_mode", {}),
        ),
        tool_turn(("exit_plan_mode", {"plan": PLAN})),
        tool_turn(EDIT),
        text_turn("Here is the plan."),
    )
    result = await run(helix, "go", mode="plan")
    assert result["status"] == "completed"
    asked, entered = api.message_requests[-3].tool_results()
    assert asked["is_error"]
    assert "proceed on your best assumption" in asked["content"]
    assert not entered["is_error"]
    assert "already in plan mode" in entered["content"]
    (exited,) = api.message_requests[-2].tool_results()
    assert exited["is_error"]
    assert "No one can approve a plan here" in exited["content"]
    (edited,) = last_results(api)
    assert edited["is_error"]
    assert "No such tool available: edit_file" in edited["content"]
    assert (helix.root / "greet.py").read_text() == "GREETING = 'hi'\n"
    assert all(m.type != types.MessageType.Error for m in helix.client.messages)
