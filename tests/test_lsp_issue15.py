"""Issue 15 over real stdio: custom commands, skills, web_fetch, web_search and
notebook_edit through `agentls serve`, driven like VS Code drives it."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import nbformat
import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcInvalidParams

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn, web_search_turn
from tests.lsp_support import FakeEditor, command, editor_session, server_env, wait_for
from tests.web_support import base_url, web_server

pytestmark = pytest.mark.asyncio(loop_scope="module")
NOTEBOOK = Path(__file__).parent / "fixtures" / "notebooks" / "sales.ipynb"


@pytest.fixture(scope="module")
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


@pytest.fixture(scope="module")
def web() -> Iterator[ThreadingHTTPServer]:
    with web_server() as server:
        yield server


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    write(
        root / ".claude" / "commands" / "review.md",
        "---\ndescription: Review a file\nargument-hint: <file>\n---\nReview @$0 carefully.\n",
    )
    write(root / ".claude" / "commands" / "broken.md", "---\n\tmodel: [x\n---\nbody\n")
    write(
        root / ".claude" / "skills" / "release" / "SKILL.md",
        "---\nname: release\ndescription: Write release notes.\n---\nRead CHANGELOG.md first.\n",
    )
    write(root / "src" / "app.py", "def main():\n    return 1\n")
    shutil.copy(NOTEBOOK, root / "sales.ipynb")
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def editor(
    api: ScriptedMessagesServer, root: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FakeEditor]:
    transcripts = tmp_path_factory.mktemp("transcripts")
    home = transcripts / "home"  # server_env's HOME: the user's skills live here
    write(
        home / ".claude" / "skills" / "pdf" / "SKILL.md",
        "---\nname: pdf\ndescription: Fill PDF forms.\n---\nUse forms.py.\n",
    )
    write(home / ".claude" / "skills" / "pdf" / "reference.md", "Field names: a, b.\n")
    env = server_env(api.base_url, transcripts)
    options = {
        "webFetch": {"allowedPrivateAddresses": ["127.0.0.1"]},
        "webSearch": {"enabled": "always", "maxUses": 3},
        "permissions": {"allow": ["WebFetch(domain:127.0.0.1)"]},
    }
    async with editor_session(
        "visual-studio-code", root, env, initialization_options=options
    ) as fake:
        yield fake


@pytest.fixture(autouse=True)
def _script_fully_played(api: ScriptedMessagesServer) -> Iterator[None]:
    yield
    assert api.remaining == 0, "the test left scripted turns unplayed"


def user_text(request: Any) -> str:
    blocks = request.json["messages"][0]["content"]
    return "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict))


async def test_commands_are_listed_and_expanded_in_agentls_run(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    listed = await command(editor, "agentls.commands", {})
    [review] = listed["commands"]
    assert (review["name"], review["argument_hint"], review["source"]) == (
        "review",
        "<file>",
        "project",
    )
    assert any("broken.md" in p for p in listed["problems"])
    api.extend(text_turn("Looks fine."))
    result = await command(editor, "agentls.run", {"prompt": "/review src/app.py", "wait": True})
    assert result["status"] == "completed"
    sent = user_text(api.requests[-1])
    assert "Review @src/app.py carefully." in sent
    assert '<attached-file path="src/app.py">' in sent
    assert "def main():" in sent
    with pytest.raises(
        JsonRpcInvalidParams, match=r"unknown command /deploy \(known commands: /review\)"
    ):
        await command(editor, "agentls.run", {"prompt": "/deploy prod"})


async def test_skills_are_in_the_system_prompt_and_load_with_the_skill_tool(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    api.extend(tool_turn(("skill", {"name": "pdf"})), text_turn("Loaded."))
    result = await command(editor, "agentls.run", {"prompt": "fill the form", "wait": True})
    assert result["status"] == "completed"
    system = api.requests[-2].json["system"][0]["text"]
    assert "- release: Write release notes." in system
    assert "- pdf: Fill PDF forms." in system
    answer = api.requests[-1].json["messages"][-1]["content"][0]["content"]
    assert "Use forms.py." in answer
    assert "reference.md" in answer
    path = answer.split("- ", 1)[1].split(" (")[0]
    read = await command(editor, "agentls.tool", {"name": "read_file", "input": {"path": path}})
    assert not read["is_error"], read
    assert "Field names: a, b." in read["content"], read


async def test_web_fetch_with_the_settings_and_rules_of_the_editor(
    editor: FakeEditor, web: ThreadingHTTPServer
) -> None:
    out = await command(
        editor, "agentls.tool", {"name": "web_fetch", "input": {"url": base_url(web) + "/page"}}
    )
    assert not out["is_error"], out["content"]
    assert "# Widgets" in out["content"]
    assert "A **widget** turns *gears*." in out["content"]
    out = await command(
        editor,
        "agentls.tool",
        {"name": "web_fetch", "input": {"url": base_url(web) + "/to/http://169.254.169.254/"}},
    )
    assert out["is_error"]
    assert "link-local address" in out["content"]


async def test_web_search_is_offered_and_shown_as_it_runs(
    editor: FakeEditor, api: ScriptedMessagesServer
) -> None:
    tools = await command(editor, "agentls.tools", {})
    search = [t for t in tools if t.get("type") == "web_search_20250305"]
    assert search
    assert search[0]["max_uses"] == 3
    api.extend(
        web_search_turn("pygls notebooks", [("https://pygls.readthedocs.io", "pygls")], "Found it.")
    )
    editor.events.clear()
    result = await command(editor, "agentls.run", {"prompt": "search", "wait": True})
    assert result["status"] == "completed"
    assert result["text"] == "Found it."
    kinds = [(e["type"], e.get("name")) for e in editor.events if e["type"].startswith("tool_")]
    assert kinds == [("tool_started", "web_search"), ("tool_finished", "web_search")]
    started = next(e for e in editor.events if e["type"] == "tool_started")
    assert started["summary"] == "Searching the web: pygls notebooks"


async def test_notebook_edit_reaches_a_text_editor_as_a_minimal_ipynb_edit(
    editor: FakeEditor, root: Path
) -> None:
    out = await command(
        editor,
        "agentls.tool",
        {
            "name": "notebook_edit",
            "input": {"path": "sales.ipynb", "cell_id": "show", "new_source": "values * 2"},
        },
    )
    assert not out["is_error"], out["content"]
    accepted = await command(editor, "agentls.accept", {"session": "tool"})
    assert accepted["applied"] is True
    await wait_for(lambda: (root / "sales.ipynb").as_uri() in editor.docs)
    text = editor.docs[(root / "sales.ipynb").as_uri()].text
    notebook = nbformat.reads(text, as_version=4)
    nbformat.validate(notebook)
    assert notebook.cells[2].source == "values * 2"
    assert notebook.cells[2].outputs == []
    [edit] = editor.edits[-1].document_changes  # one document, a few lines: not a rewrite
    assert len(edit.edits) <= 3
