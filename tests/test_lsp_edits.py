"""Edits across clients: encodings, staged review, accept/reject, stale buffers, approvals.

Each test runs against four clients — the recorded VS Code (UTF-16, documentChanges,
annotations), Neovim 0.11 (UTF-8, plain `changes`), Emacs/eglot (UTF-32, documentChanges
without resource operations) and a Helix-like set (UTF-8, no documentChanges, no prompts,
no progress) — and checks the text the fake editor ends up with.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types

from agentls.testing import ScriptedMessagesServer, Turn, text_turn, tool_turn
from tests.lsp_support import (
    HELIX_LIKE,
    FakeEditor,
    code_actions,
    command,
    editor_session,
    run_to_applied,
    server_env,
    wait_for,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

PRESETS = ["visual-studio-code", "neovim", "emacs", HELIX_LIKE]
ENCODING = {
    "visual-studio-code": "utf-16",
    "neovim": "utf-8",
    "emacs": "utf-32",
    HELIX_LIKE: "utf-8",
}


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=PRESETS)
async def editor(
    request: pytest.FixtureRequest,
    api: ScriptedMessagesServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[FakeEditor]:
    preset: str = request.param
    root = tmp_path_factory.mktemp("ws")
    env = server_env(api.base_url, tmp_path_factory.mktemp("transcripts"))
    async with editor_session(preset, root, env) as fake:
        yield fake


@pytest.fixture(autouse=True)
def _script_fully_played(api: ScriptedMessagesServer) -> Iterator[None]:
    yield
    assert api.remaining == 0, "the test left scripted turns unplayed"


def write(editor: FakeEditor, name: str, text: str) -> Path:
    path = editor.root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def edit(path: str, old: str, new: str) -> tuple[str, dict[str, str]]:
    return ("edit_file", {"path": path, "old_string": old, "new_string": new})


async def test_the_negotiated_encoding_is_the_one_expected(editor: FakeEditor) -> None:
    assert editor.encoding == ENCODING[editor.preset]


async def test_emoji_cjk_and_crlf_positions_in_the_negotiated_encoding(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    original = "s = '😀🎉'\r\nname = '中文字'\r\nmid = 1\r\nlast = '👍🏽 ok'"
    path = write(editor, "enc/u.py", original)
    editor.open(path)
    api.extend(
        tool_turn(
            edit("enc/u.py", "name = '中文字'", "name = '汉字'\nextra = '🚀'"),
            edit("enc/u.py", "last = '👍🏽 ok'", "last = '✅ 完成'"),
        ),
        text_turn("done"),
    )
    await run_to_applied(editor, "fix")
    expected = "s = '😀🎉'\r\nname = '汉字'\r\nextra = '🚀'\r\nmid = 1\r\nlast = '✅ 完成'"
    assert editor.text(path) == expected
    sent = editor.edits[-1]
    edits = [
        e
        for op in sent.document_changes or []
        if isinstance(op, types.TextDocumentEdit)
        for e in op.edits
    ] or [e for changes in (sent.changes or {}).values() for e in changes]
    # the whole-line edit of the last line (no trailing newline) ends at that line's
    # length in the negotiated units: 'last = ' 7 + '👍🏽' + ' ok' 3 + quotes 2
    units = {"utf-16": 4, "utf-8": 8, "utf-32": 2}[editor.encoding]
    assert types.Position(3, 12 + units) in [e.range.end for e in edits]


async def test_review_without_annotation_support_stays_staged_until_accepted(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    if editor.preset == "visual-studio-code":
        pytest.skip("VS Code reviews in its refactor preview")
    one = write(editor, "staged/one.py", "ONE = 1\n")
    two = write(editor, "staged/two.py", "TWO = 2\n")
    api.extend(
        tool_turn(
            edit("staged/one.py", "ONE = 1", "ONE = 11"),
            edit("staged/two.py", "TWO = 2", "TWO = 22"),
            ("write_file", {"path": "staged/three.py", "content": "THREE = 3\n"}),
        ),
        text_turn("done"),
    )
    sent_before = len(editor.edits)
    result = await command(editor, "agentls.run", {"prompt": "bump", "wait": True})
    assert result["edit"]["applied"] is None
    assert sorted(Path(u).name for u in result["edit"]["files"]) == ["one.py", "three.py", "two.py"]
    assert len(editor.edits) == sent_before, "nothing is sent before the user accepts"
    assert "agentls.accept" in editor.client.messages[-1].message
    session = result["session"]

    accepted = await command(editor, "agentls.accept", {"session": session, "uris": [one.as_uri()]})
    assert accepted["applied"] is True
    assert accepted["files"] == [one.as_uri()]
    assert editor.text(one) == "ONE = 11\n"
    assert editor.text(two) == "TWO = 2\n"

    # the file creation needs resource operations: Neovim lists them (and so handles
    # documentChanges, though it does not say so); Emacs and Helix offer none
    created = await command(
        editor,
        "agentls.accept",
        {"session": session, "uris": [(editor.root / "staged/three.py").as_uri()]},
    )
    if editor.preset == "neovim":
        assert created["applied"] is True, created
        assert (editor.root / "staged/three.py").exists()
        three_left = []
    else:
        assert created["applied"] is False
        assert "not supported by this editor" in created["reason"]
        assert created["left_out"][0]["uri"].endswith("/staged/three.py")
        assert not (editor.root / "staged/three.py").exists()
        three_left = ["three.py"]

    # the affected document offers accept/reject as code actions
    actions = await code_actions(
        editor,
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=two.as_uri()),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        ),
    )
    titles = {a["title"]: a["command"] for a in actions}
    reject_two = titles[f"Reject agentls changes to this file (session {session})"]
    assert f"Accept agentls changes to this file (session {session})" in titles
    rejected = await command(editor, reject_two["command"], *reject_two["arguments"])
    assert rejected["files"] == [two.as_uri()]
    rejected = await command(editor, "agentls.reject", {"session": session})
    assert [Path(u).name for u in rejected["files"]] == three_left
    read = await command(
        editor, "agentls.tool", {"name": "read_file", "input": {"path": "staged/two.py"}}
    )
    assert "TWO = 2" in read["content"]
    assert "TWO = 22" not in read["content"]
    nothing = await command(editor, "agentls.accept", {"session": session})
    assert nothing["files"] == []


async def test_a_stale_buffer_is_rebased_when_changes_do_not_touch(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    if editor.preset == "visual-studio-code":
        pytest.skip("covered with the staged clients, which let the test act in between")
    path = write(editor, "stale/ok.py", "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")
    uri = editor.open(path)
    api.extend(tool_turn(edit("stale/ok.py", "e = 5", "e = 50")), text_turn("done"))
    result = await command(editor, "agentls.run", {"prompt": "e", "wait": True})
    editor.type(uri, (0, 4), (0, 5), "100")  # the user keeps typing, far from the change
    accepted = await command(editor, "agentls.accept", {"session": result["session"]})
    assert accepted["applied"] is True
    assert editor.text(path) == "a = 100\nb = 2\nc = 3\nd = 4\ne = 50\n"


async def test_a_stale_buffer_with_overlapping_changes_loses_nothing(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    if editor.preset == "visual-studio-code":
        pytest.skip("covered with the staged clients, which let the test act in between")
    path = write(editor, "stale/clash.py", "x = 1\ny = 2\n")
    uri = editor.open(path)
    api.extend(tool_turn(edit("stale/clash.py", "y = 2", "y = 3")), text_turn("done"))
    result = await command(editor, "agentls.run", {"prompt": "y", "wait": True})
    editor.type(uri, (1, 4), (1, 5), "user")  # the same line the agent changed
    accepted = await command(editor, "agentls.accept", {"session": result["session"]})
    assert accepted["applied"] is False
    assert accepted["conflicts"] == [uri]
    assert "changed in the editor since the agent read it" in accepted["reason"]
    await wait_for(lambda: "agentls accept:" in editor.client.messages[-1].message)
    assert editor.text(path) == "x = 1\ny = user\n", "the user's text is untouched"
    # the agent's version is still there to look at or discard
    staged = await command(editor, "agentls.accept", {"session": result["session"]})
    assert staged["conflicts"] == [uri]
    rejected = await command(editor, "agentls.reject", {"session": result["session"]})
    assert rejected["files"] == [uri]
    assert editor.text(path) == "x = 1\ny = user\n"


async def test_a_change_made_while_vs_code_reviews_is_not_clobbered(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    if editor.preset != "visual-studio-code":
        pytest.skip("review-at-end is VS Code's path")
    path = write(editor, "stale/vs.py", "p = 1\nq = 2\n")
    uri = editor.open(path)

    loop = asyncio.get_running_loop()

    async def type_now() -> None:
        editor.type(uri, (1, 0), (1, 5), "q = 'mine'")

    def user_types_first(request: object) -> Turn:
        # runs in the scripted API's thread, after the agent staged its edit
        asyncio.run_coroutine_threadsafe(type_now(), loop).result(5)
        return text_turn("done", event_delay=0.05)

    api.extend(tool_turn(edit("stale/vs.py", "q = 2", "q = 3")), user_types_first)
    result = await command(editor, "agentls.run", {"prompt": "q", "wait": True})
    assert result["edit"]["applied"] is False
    assert result["edit"]["conflicts"] == [uri]
    assert editor.text(path) == "p = 1\nq = 'mine'\n"
    await command(editor, "agentls.reject", {"session": result["session"]})


async def test_an_ask_rule_prompts_every_time_or_denies_without_prompts(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"agentls": {"permissions": {"ask": ["write_file"]}}}
        )
    )
    try:
        await _approvals(editor, api)
    finally:
        editor.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"agentls": {}})
        )


async def _approvals(editor: FakeEditor, api: ScriptedMessagesServer) -> None:
    def write_call(name: str) -> tuple[str, dict[str, str]]:
        return ("write_file", {"path": f"approve/{name}.txt", "content": name})

    if editor.preset in ("emacs", HELIX_LIKE):
        api.extend(tool_turn(write_call("x")), text_turn("denied"))
        result = await command(editor, "agentls.run", {"prompt": "w", "wait": True})
        denial = api.message_requests[-1].tool_results()[0]
        assert denial["is_error"] is True
        assert "no approval prompt is available" in denial["content"]
        assert result["edit"] is None
        return
    editor.prompts.clear()
    editor.choices[:] = ["Deny", "Allow once", "Allow once"]
    api.extend(
        tool_turn(write_call("denied")),
        tool_turn(write_call("first")),
        tool_turn(write_call("second")),
        text_turn("done"),
    )
    result = await command(editor, "agentls.run", {"prompt": "w", "wait": True})
    results = [r.tool_results()[0] for r in api.message_requests[-3:]]
    assert results[0]["is_error"]
    assert "the user denied this call" in results[0]["content"]
    assert not results[1]["is_error"]
    assert not results[2]["is_error"]
    assert len(editor.prompts) == 3, "an ask rule asks every time"
    assert "Writing approve/denied.txt" in editor.prompts[0].message
    # an ask rule cannot be remembered, so "Allow for this session" is not offered
    assert [a.title for a in editor.prompts[0].actions or []] == ["Allow once", "Deny"]
    await command(editor, "agentls.reject", {"session": result["session"]})


async def test_auto_mode_without_prompts_needs_allowed_tools(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    if editor.preset not in ("emacs", HELIX_LIKE):
        pytest.skip("clients that cannot show approval prompts")
    path = write(editor, "autoallow/a.py", "A = 1\n")
    api.extend(tool_turn(edit("autoallow/a.py", "A = 1", "A = 2")), text_turn("denied"))
    await command(editor, "agentls.run", {"prompt": "a", "mode": "auto", "wait": True})
    denial = api.message_requests[-1].tool_results()[0]
    assert denial["is_error"]
    assert "edit_file" in denial["content"]
    assert editor.text(path) == "A = 1\n"
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"agentls": {"allowedTools": ["edit_file"]}})
    )
    try:
        api.extend(tool_turn(edit("autoallow/a.py", "A = 1", "A = 2")), text_turn("done"))
        result = await command(editor, "agentls.run", {"prompt": "a", "mode": "auto", "wait": True})
    finally:
        editor.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"agentls": {}})
        )
    assert result["status"] == "completed"
    assert editor.text(path) == "A = 2\n"


async def test_a_long_answer_is_a_message_where_documents_cannot_be_shown(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    if editor.preset != HELIX_LIKE:
        pytest.skip("the other clients support window/showDocument")
    answer = "\n".join(f"- point {i}" for i in range(30))
    api.extend(text_turn(answer))
    result = await command(editor, "agentls.ask", {"prompt": "explain", "wait": True})
    assert result["text"] == answer
    assert "answer" not in result
    await wait_for(lambda: editor.client.messages[-1].message == answer)
    assert editor.client.shown_documents == []
