"""The operations beyond definition/references (issue 31, Do 2): `find_implementations` and
`type_definition`, headless, with real typescript-language-server and basedpyright."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.codeintel_support import basedpyright_langserver, tool_input, typescript_bin, write_tree
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

SHAPES = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020"}, '
    '"include": ["src"]}\n',
    "src/shape.ts": """
        export interface Shape {
          area(): number;
        }
        """,
    "src/square.ts": """
        import { Shape } from "./shape";

        export class Square implements Shape {
          constructor(private side: number) {}
          area(): number {
            return this.side * this.side;
          }
        }

        export const unit = new Square(1);
        """,
}
PYTHON = {
    "pets/__init__.py": "",
    "pets/models.py": """
        class Dog:
            def bark(self) -> str:
                return "woof"


        def adopt() -> Dog:
            return Dog()


        rex = adopt()
        """,
}


async def tool(editor: FakeEditor, name: str, input: dict[str, Any]) -> tuple[str, bool]:
    result = await command(editor, "agentls.tool", {"name": name, "input": input})
    return str(result["content"]), bool(result["is_error"])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shapes(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FakeEditor]:
    folder = typescript_bin()
    root = tmp_path_factory.mktemp("shapes")
    write_tree(root, SHAPES)
    path = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
    env = server_env(None, tmp_path_factory.mktemp("transcripts"), PATH=path)
    async with editor_session("neovim", root, env) as editor:
        yield editor


async def test_find_implementations_of_an_interface(shapes: FakeEditor) -> None:
    content, is_error = await tool(
        shapes, "find_implementations", tool_input("src/shape.ts", 1, "Shape")
    )
    assert not is_error, content
    assert "(source: language server (typescript-language-server))" in content
    assert "src/square.ts:3" in content, content
    assert "class Square implements Shape" in content


async def test_type_definition_of_a_value(shapes: FakeEditor) -> None:
    content, is_error = await tool(
        shapes, "type_definition", tool_input("src/square.ts", 10, "unit")
    )
    assert not is_error, content
    assert "src/square.ts:3" in content, content


async def test_type_definition_in_python(tmp_path_factory: pytest.TempPathFactory) -> None:
    basedpyright_langserver()
    root = tmp_path_factory.mktemp("pets")
    write_tree(root, PYTHON)
    env = server_env(None, tmp_path_factory.mktemp("transcripts"))
    async with editor_session("neovim", root, env) as editor:
        content, is_error = await tool(
            editor, "type_definition", tool_input("pets/models.py", 10, "rex")
        )
    assert not is_error, content
    assert "(source: language server (basedpyright))" in content
    assert "pets/models.py:1" in content, content
