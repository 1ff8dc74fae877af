"""The editor bridge's protocol: `agentls/editorQuery` is asked only when announced, its
answer names the editor's server, and a failing or slow editor hands over to the next
source. The client here is a pytest-lsp client that answers the request itself (the real
editors are driven in tests/test_codeintel_editor_neovim.py and _vscode.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.codeintel_support import PYTHON_SHOP, tool_input, write_tree
from tests.lsp_support import FakeEditor, command, editor_session, server_env

ALL = [
    "textDocument/definition",
    "textDocument/references",
    "textDocument/hover",
    "textDocument/rename",
    "agentls/diagnostics",
]


async def tool(editor: FakeEditor, name: str, input: dict[str, Any]) -> tuple[str, bool]:
    result = await command(editor, "agentls.tool", {"name": name, "input": input})
    return str(result["content"]), bool(result["is_error"])


def plain(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


class Answers:
    """What the fake editor answers, and what it was asked."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []
        self.delay = 0.0
        self.fail = False
        self.follow_up: dict[str, Any] | None = None
        """A command the code action carries after its edit (VS Code's TypeScript adds
        `_typescript.applyCodeActionCommand` to every quick fix)."""

    def install(self, editor: FakeEditor) -> None:
        @editor.client.feature("agentls/editorQuery")
        async def editor_query(params: Any) -> Any:
            query = plain(params)
            self.asked.append(query)
            if self.delay:
                await asyncio.sleep(self.delay)
            if self.fail:
                raise RuntimeError("no language server is attached to this buffer")
            found = self.answer(query, editor.root)
            if self.follow_up is not None and query["method"] == "textDocument/codeAction":
                found["result"][0]["command"] = self.follow_up
            return found

    @staticmethod
    def answer(query: dict[str, Any], root: Path) -> Any:
        method = query["method"]
        models = (root / "shop" / "models.py").as_uri()
        if method == "textDocument/references":
            # "ñ" before `total` on line 2: UTF-8 columns differ from code points
            spans = [(1, 8), (3, 31)]
            return {
                "result": [
                    {
                        "uri": models,
                        "range": {
                            "start": {"line": line, "character": col},
                            "end": {"line": line, "character": col + 5},
                        },
                    }
                    for line, col in spans
                ],
                "source": "pyright",
            }
        if method == "textDocument/documentSymbol":
            return {
                "result": [
                    _symbol(
                        "Cart",
                        5,
                        (0, 0, 3, 29),
                        (0, 6, 0, 10),
                        [
                            _symbol("total", 6, (1, 4, 3, 29), (1, 8, 1, 13), []),
                        ],
                    )
                ],
                "source": "pyright",
            }
        if method == "textDocument/codeAction":
            uri = query["params"]["textDocument"]["uri"]
            start = {"line": 0, "character": 0}
            edit = {
                "changes": {
                    uri: [
                        {
                            "range": {"start": start, "end": start},
                            "newText": "# fixed by the editor\n",
                        }
                    ]
                }
            }
            return {
                "result": [{"title": "Editor fix", "kind": "quickfix", "edit": edit}],
                "source": "pyright",
            }
        if method == "textDocument/hover":
            return {"contents": {"kind": "markdown", "value": "(method) total: from the editor"}}
        if method == "agentls/diagnostics":
            return [
                {
                    "uri": uri,
                    "diagnostics": [
                        {
                            "range": {
                                "start": {"line": 0, "character": 0},
                                "end": {"line": 0, "character": 4},
                            },
                            "severity": 1,
                            "message": "editor says no",
                            "source": "Pylance",
                        }
                    ],
                }
                for uri in query["params"]["uris"]
            ]
        return None


def _symbol(
    name: str,
    kind: int,
    whole: tuple[int, int, int, int],
    at: tuple[int, int, int, int],
    children: list[dict[str, Any]],
) -> dict[str, Any]:
    def rng(a: int, b: int, c: int, d: int) -> dict[str, Any]:
        return {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}}

    return {
        "name": name,
        "kind": kind,
        "range": rng(*whole),
        "selectionRange": rng(*at),
        "children": children,
    }


SHOP = {
    **PYTHON_SHOP,
    "shop/models.py": '''
        class Cart:
            def total(self, tax: float) -> float:
                """Sum of the items, with tax."""
                return 0.0 * tax  # ñ total
        ''',
}


async def session(
    tmp_path: Path, options: dict[str, Any] | None, preset: str = "neovim"
) -> tuple[Any, Answers]:
    root = tmp_path / "shop"
    write_tree(root, SHOP)
    env = server_env(None, tmp_path / "transcripts")
    answers = Answers()
    manager = editor_session(preset, root, env, initialization_options=options)
    editor = await manager.__aenter__()
    answers.install(editor)
    return (manager, editor), answers


@pytest.fixture
def announced() -> dict[str, Any]:
    return {"editorQueries": ALL, "editorQueryTimeout": 1}


async def test_an_announced_editor_answers_and_is_named(
    tmp_path: Path, announced: dict[str, Any]
) -> None:
    (manager, editor), answers = await session(tmp_path, announced)
    try:
        content, is_error = await tool(
            editor, "find_references", tool_input("shop/checkout.py", 5, "total")
        )
        assert not is_error, content
        assert "(source: editor (pyright))" in content
        assert "shop/models.py" in content
        assert "  2:9" in content  # Neovim's UTF-8 columns back to code points
        assert "  4:31" in content  # 31 bytes = 30 characters before `total` (ñ: 2 bytes)
        query = answers.asked[-1]
        assert query["method"] == "textDocument/references"
        assert query["params"]["position"] == {"line": 4, "character": 16}
        assert query["params"]["textDocument"]["uri"].endswith("/shop/checkout.py")
        content, _ = await tool(editor, "hover", tool_input("shop/checkout.py", 5, "total"))
        assert "(source: editor)" in content
        assert "from the editor" in content
        content, _ = await tool(editor, "diagnostics", {"paths": ["shop/checkout.py"]})
        assert "editor says no (Pylance)" in content
        assert "(source: editor)" in content
        status = await command(editor, "agentls.status", {})
        entry = next(e for e in status["code_intel"] if e["source"] == "editor")
        assert entry["state"] == "available"
        assert entry["asked"] >= 3
    finally:
        await manager.__aexit__(None, None, None)


async def test_the_experimental_capability_also_announces(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    write_tree(root, SHOP)
    env = server_env(None, tmp_path / "transcripts")
    answers = Answers()
    from pytest_lsp import client_capabilities

    caps = client_capabilities("neovim")
    caps.experimental = {"agentlsEditorQueries": ["textDocument/hover"]}
    import tests.lsp_support as support

    original = support.capabilities
    support.capabilities = lambda preset: caps  # type: ignore[assignment]
    try:
        async with editor_session("neovim", root, env) as editor:
            answers.install(editor)
            content, _ = await tool(editor, "hover", tool_input("shop/checkout.py", 5, "total"))
            assert "(source: editor)" in content
            content, _ = await tool(
                editor, "go_to_definition", tool_input("shop/checkout.py", 5, "total")
            )
            assert "(source: language server (basedpyright))" in content  # not announced
            assert [q["method"] for q in answers.asked] == ["textDocument/hover"]
    finally:
        support.capabilities = original


async def test_an_editor_that_did_not_announce_is_never_asked(tmp_path: Path) -> None:
    (manager, editor), answers = await session(tmp_path, None)
    try:
        content, is_error = await tool(editor, "hover", tool_input("shop/checkout.py", 5, "total"))
        assert not is_error
        assert "(source: language server (basedpyright))" in content
        assert answers.asked == []
    finally:
        await manager.__aexit__(None, None, None)


async def test_a_failing_editor_hands_over_to_the_language_server(
    tmp_path: Path, announced: dict[str, Any]
) -> None:
    (manager, editor), answers = await session(tmp_path, announced)
    try:
        answers.fail = True
        content, is_error = await tool(editor, "hover", tool_input("shop/checkout.py", 5, "total"))
        assert not is_error, content
        assert "(source: language server (basedpyright))" in content
        assert "The editor could not answer textDocument/hover" in content
        answers.fail = False
        answers.delay = 3.0  # editorQueryTimeout is 1 s
        content, is_error = await tool(editor, "hover", tool_input("shop/checkout.py", 5, "total"))
        assert not is_error
        assert "(source: language server (basedpyright))" in content
        assert "did not answer textDocument/hover within 1 s" in content
    finally:
        await manager.__aexit__(None, None, None)


async def test_with_staged_edits_the_editor_is_not_asked(
    tmp_path: Path, announced: dict[str, Any]
) -> None:
    (manager, editor), answers = await session(tmp_path, announced)
    try:
        await tool(
            editor,
            "edit_file",
            {"path": "shop/report.py", "old_string": "summary", "new_string": "summarise"},
        )
        content, _ = await tool(editor, "hover", tool_input("shop/checkout.py", 5, "total"))
        assert "(source: language server (basedpyright))" in content
        assert "does not see this session's staged edits" in content
        assert answers.asked == []
        # diagnostics: only files with staged edits skip the editor
        content, _ = await tool(editor, "diagnostics", {"paths": ["shop/checkout.py"]})
        assert "(source: editor)" in content
        content, _ = await tool(editor, "diagnostics", {"paths": ["shop/report.py"]})
        assert "(source: language server (basedpyright))" in content
    finally:
        await manager.__aexit__(None, None, None)


async def test_the_editor_answers_rename_as_a_staged_change(
    tmp_path: Path, announced: dict[str, Any]
) -> None:
    (manager, editor), answers = await session(tmp_path, announced)
    models = (editor.root / "shop" / "models.py").as_uri()

    def rename_answer(query: dict[str, Any], root: Path) -> Any:
        if query["method"] != "textDocument/rename":
            return None
        rng = {"start": {"line": 1, "character": 8}, "end": {"line": 1, "character": 13}}
        return {
            "result": {"changes": {models: [{"range": rng, "newText": "grand_total"}]}},
            "source": "pyright",
        }

    answers.answer = rename_answer  # type: ignore[method-assign]
    try:
        content, is_error = await tool(
            editor,
            "rename_symbol",
            {**tool_input("shop/models.py", 2, "total"), "new_name": "grand_total"},
        )
        assert is_error, content  # the editor's rename leaves the calls: refused (issue 31)
        assert "shop/checkout.py:5" in content
        content, is_error = await tool(
            editor,
            "rename_symbol",
            {**tool_input("shop/models.py", 2, "total"), "new_name": "grand_total", "force": True},
        )
        assert not is_error, content
        assert "1 change in 1 file (source: editor (pyright)" in content
        assert "Left unchanged (force)" in content
        result = await command(editor, "agentls.accept", {"session": "tool"})
        assert result["applied"] is True
        assert "def grand_total(self" in editor.text(editor.root / "shop" / "models.py")
        assert isinstance(editor.edits[0], types.WorkspaceEdit)
    finally:
        await manager.__aexit__(None, None, None)


async def test_the_editor_gives_symbol_ranges_and_code_actions(tmp_path: Path) -> None:
    """Source 1 for the refactoring tools: the editor's documentSymbol ranges and its code
    actions; an applied action is staged like any other edit."""
    methods = [*ALL, "textDocument/documentSymbol", "textDocument/codeAction"]
    (manager, editor), answers = await session(
        tmp_path, {"editorQueries": methods, "editorQueryTimeout": 1}
    )
    try:
        where = {"path": "shop/checkout.py", "line": 5}
        content, is_error = await tool(editor, "code_actions", where)
        assert not is_error, content
        assert "1 code action for shop/checkout.py:5 (source: editor (pyright)):" in content
        content, is_error = await tool(editor, "code_actions", {**where, "apply": "Editor fix"})
        assert not is_error, content
        assert "Applied `Editor fix` (source: editor (pyright)" in content
        text, _ = await tool(editor, "read_file", {"path": "shop/checkout.py"})
        assert "1\t# fixed by the editor" in text
        await command(editor, "agentls.reject", {"session": "tool"})
        body = "def total(self, tax: float) -> float:\n    return 1.0"
        content, is_error = await tool(
            editor,
            "replace_symbol_body",
            {**tool_input("shop/models.py", 2, "total"), "body": body},
        )
        assert not is_error, content
        assert "Replaced `total` (lines 2-4) with 2 lines (range from editor (pyright)" in content
        text, _ = await tool(editor, "read_file", {"path": "shop/models.py"})
        assert "        return 1.0" in text
        assert "Sum of the items" not in text
        assert [q["method"] for q in answers.asked].count("textDocument/documentSymbol") == 1
    finally:
        await manager.__aexit__(None, None, None)


async def test_an_editor_action_with_a_command_after_its_edit_is_staged(tmp_path: Path) -> None:
    """VS Code's TypeScript attaches a command to every quick fix (`Add import from …`),
    which the editor would run on its own buffers: the edit is staged and the command is
    named as not run (the e2e in code-server met this: the action used to be refused)."""
    methods = [*ALL, "textDocument/codeAction"]
    (manager, editor), answers = await session(
        tmp_path, {"editorQueries": methods, "editorQueryTimeout": 1}
    )
    answers.follow_up = {"title": "", "command": "_typescript.applyCodeActionCommand"}
    try:
        where = {"path": "shop/checkout.py", "line": 5, "apply": "Editor fix"}
        content, is_error = await tool(editor, "code_actions", where)
        assert not is_error, content
        assert "Applied `Editor fix` (source: editor (pyright)" in content
        assert (
            "Staged the action's edit only: the editor runs its command "
            "`_typescript.applyCodeActionCommand` itself, outside this session, so it was "
            "not run." in content
        )
        text, _ = await tool(editor, "read_file", {"path": "shop/checkout.py"})
        assert "1\t# fixed by the editor" in text
        assert "fixed by the editor" not in (tmp_path / "shop" / "shop" / "checkout.py").read_text()
    finally:
        await manager.__aexit__(None, None, None)
