"""Issue 31, Do 2: `code_actions` with real servers: typescript-language-server's quick
fixes (add a missing import, implement an interface), organize imports (a source action)
and extract function (a refactoring whose edit comes from a command's
`workspace/applyEdit`), each listed, then applied as a staged edit; the file on disk is
never written.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.codeintel_support import (
    basedpyright_langserver,
    tool_input,
    typescript_bin,
    write_tree,
)
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

TS = "language server (typescript-language-server)"
PROJECT = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020"}, '
    '"include": ["src"]}\n',
    "src/shape.ts": """
        export interface Shape {
          area(): number;
        }
        """,
    "src/units.ts": """
        export const ONE = 1;
        export const TWO = 2;
        """,
    "src/circle.ts": """
        import { Shape } from "./shape";

        export class Circle implements Shape {
          constructor(private r: number) {}
        }
        """,
    "src/missing.ts": """
        export const total = ONE + 1;
        """,
    "src/use.ts": """
        import { compute } from "./math";

        export function twice(x: number): number {
          return compute(x) + compute(x);
        }
        """,
    "src/math.ts": """
        import { TWO, ONE } from "./units";
        import { Shape } from "./shape";

        export function compute(x: number): number {
          const y = x * TWO;
          const z = y + ONE;
          return z;
        }
        """,
}


async def tool(editor: FakeEditor, name: str, input: dict[str, Any]) -> tuple[str, bool]:
    result = await command(editor, "agentls.tool", {"name": name, "input": input})
    return str(result["content"]), bool(result["is_error"])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def app(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FakeEditor]:
    folder = typescript_bin()
    root = tmp_path_factory.mktemp("actions")
    write_tree(root, PROJECT)
    path = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
    env = server_env(None, tmp_path_factory.mktemp("transcripts"), PATH=path)
    async with editor_session("neovim", root, env) as editor:
        yield editor


async def staged(editor: FakeEditor, path: str) -> str:
    content, is_error = await tool(editor, "read_file", {"path": path})
    assert not is_error, content
    return content


async def reject(editor: FakeEditor) -> None:
    await command(editor, "agentls.reject", {"session": "tool"})


async def test_add_missing_import(app: FakeEditor) -> None:
    where = tool_input("src/missing.ts", 1, "ONE")
    content, is_error = await tool(app, "code_actions", where)
    assert not is_error, content
    assert f"for src/missing.ts:1 (source: {TS}):" in content
    assert '1. Add import from "./units" [quickfix] (preferred)' in content
    assert "fixes: Cannot find name 'ONE'." in content
    on_disk = (app.root / "src" / "missing.ts").read_bytes()
    content, is_error = await tool(
        app, "code_actions", {**where, "apply": 'Add import from "./units"'}
    )
    assert not is_error, content
    assert 'Applied `Add import from "./units"`' in content
    assert "src/missing.ts: 1 change" in content
    text = await staged(app, "src/missing.ts")
    assert 'import { ONE } from "./units";' in text
    assert (app.root / "src" / "missing.ts").read_bytes() == on_disk  # staged, not written
    await reject(app)


async def test_implement_interface(app: FakeEditor) -> None:
    where = tool_input("src/circle.ts", 3, "Circle")
    content, is_error = await tool(app, "code_actions", {**where, "apply": "1"})
    assert not is_error, content
    assert "Applied `Implement interface 'Shape'`" in content
    text = await staged(app, "src/circle.ts")
    assert "area(): number {" in text
    await reject(app)


async def test_organize_imports_is_a_source_action(app: FakeEditor) -> None:
    content, is_error = await tool(
        app,
        "code_actions",
        {"path": "src/math.ts", "line": 1, "kind": "source.organizeImports"},
    )
    assert not is_error, content
    assert "Organize Imports [source.organizeImports.ts]" in content
    assert "Extract" not in content  # only the kind asked for
    content, is_error = await tool(
        app, "code_actions", {"path": "src/math.ts", "line": 1, "apply": "Organize Imports"}
    )
    assert not is_error, content
    text = await staged(app, "src/math.ts")
    first, second = text.splitlines()[:2]
    assert first.endswith('import { Shape } from "./shape";'), text  # files sorted
    assert second.endswith('import { ONE, TWO } from "./units";'), text  # names sorted
    await reject(app)


async def test_extract_function_runs_the_command_and_stages_its_edit(app: FakeEditor) -> None:
    """typescript-language-server's refactorings are commands: the edit comes back as
    `workspace/applyEdit` while it runs, and is staged instead of applied."""
    where = {"path": "src/math.ts", "line": 5, "end_line": 6}
    content, is_error = await tool(app, "code_actions", where)
    assert "Extract to function in module scope [refactor.extract.function]" in content
    on_disk = (app.root / "src" / "math.ts").read_bytes()
    content, is_error = await tool(
        app, "code_actions", {**where, "apply": "Extract to function in module scope"}
    )
    assert not is_error, content
    assert "Applied `Extract to function in module scope`" in content
    text = await staged(app, "src/math.ts")
    assert "function newFunction(" in text
    assert (app.root / "src" / "math.ts").read_bytes() == on_disk
    await reject(app)


async def test_an_unknown_title_lists_the_offered_ones(app: FakeEditor) -> None:
    content, is_error = await tool(
        app, "code_actions", {**tool_input("src/circle.ts", 3, "Circle"), "apply": "Fix it"}
    )
    assert is_error
    assert "No code action is titled `Fix it` here" in content
    assert "Implement interface 'Shape'" in content


async def test_a_denied_file_is_not_changed_by_an_action(app: FakeEditor) -> None:
    """The permission rules see the files an applied action changes (`paths`)."""
    content, is_error = await tool(
        app,
        "code_actions",
        {"path": ".git/config", "line": 1, "apply": "Organize Imports"},
    )
    assert is_error
    assert "version-control metadata" in content, content


async def test_symbol_edit_with_typescript_ranges(app: FakeEditor) -> None:
    """The symbol edits take the definition's extent from typescript-language-server."""
    body = "export function compute(x: number): number {\n  return x * TWO + ONE;\n}"
    content, is_error = await tool(
        app, "replace_symbol_body", {**tool_input("src/math.ts", 4, "compute"), "body": body}
    )
    assert not is_error, content
    assert f"Replaced `compute` (lines 4-8) with 3 lines (range from {TS}" in content
    text = await staged(app, "src/math.ts")
    assert "return x * TWO + ONE;" in text
    assert "const y" not in text
    await reject(app)


async def test_call_hierarchy_in_typescript(app: FakeEditor) -> None:
    content, is_error = await tool(
        app,
        "call_hierarchy",
        {**tool_input("src/math.ts", 4, "compute"), "direction": "incoming"},
    )
    assert not is_error, content
    assert f"Incoming calls of `compute` (function) at src/math.ts:4 (1 edge; source: {TS}):" in (
        content
    )
    assert "- `twice` (function) at src/use.ts:3" in content
    assert content.count("called from src/use.ts:4: return compute(x) + compute(x);") == 1


PYTHON = {
    "pkg/__init__.py": "",
    "pkg/units.py": "ONE = 1\n",
    "pkg/use.py": "import os\nimport sys\n\nvalue = ONE + len(sys.argv)\n",
}


async def test_python_add_missing_import_with_basedpyright(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    basedpyright_langserver()
    root = tmp_path_factory.mktemp("py")
    write_tree(root, PYTHON)
    env = server_env(None, tmp_path_factory.mktemp("transcripts"))
    async with editor_session("neovim", root, env) as editor:
        where = tool_input("pkg/use.py", 4, "ONE")
        content, is_error = await tool(editor, "code_actions", where)
        assert not is_error, content
        assert "(source: language server (basedpyright))" in content
        assert "1. from pkg.units import ONE [quickfix]" in content
        content, is_error = await tool(
            editor, "code_actions", {**where, "apply": "from pkg.units import ONE"}
        )
        assert not is_error, content
        text = await staged(editor, "pkg/use.py")
        assert "from pkg.units import ONE" in text
        assert (root / "pkg" / "use.py").read_text() == PYTHON["pkg/use.py"]
        # the staged text is what the after-edit check saw: no undefined name is left
        assert "reportUndefinedVariable" not in content
