"""The lint tool with real ruff, on the session's layered view, in the shadow copy."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import ToolError, output_to_content
from agentls.tools.checks.settings import LintEntry
from agentls.tools.lint import LintConfig, LintInput, LintTool
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.shadow import ShadowRegistry
from tests.shadow_support import make_ctx, stage, tree_state

BAD = "import os\n\n\ndef f():\n    return undefined_name\n"
CLEAN = "def f():\n    return 1\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "app").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[tool.ruff]\nline-length = 40\n[tool.ruff.lint]\nselect = ["F", "E501"]\n'
    )
    (root / "app" / "bad.py").write_text(BAD)
    (root / "app" / "clean.py").write_text(CLEAN)
    (root / "notes.xyz").write_text("whatever\n")
    return root


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[ShadowRegistry]:
    reg = ShadowRegistry(base_dir=tmp_path / "shadows")
    yield reg
    reg.close()


async def _lint(tool: LintTool, ctx: ToolContext, **raw: object) -> dict[str, Any]:
    result = await tool.call(tool.parse_input(raw), ctx)
    content = output_to_content(result).content
    assert isinstance(content, str)
    parsed: dict[str, Any] = json.loads(content)
    return parsed


async def test_ruff_findings_come_back_structured_with_correct_lines(
    project: Path, registry: ShadowRegistry
) -> None:
    before = tree_state(project)
    tool = LintTool(shadows=registry)
    result = await _lint(tool, make_ctx(Workspace([project])), paths=["app/bad.py", "app/clean.py"])
    diags = result["diagnostics"]
    assert [(d["file"], d["line"], d["column"], d["code"]) for d in diags] == [
        ("app/bad.py", 5, 12, "F821"),  # errors first
        ("app/bad.py", 1, 8, "F401"),
    ]
    undefined, unused = diags
    assert undefined["severity"] == "error"
    assert not undefined["fixable"]
    assert unused["severity"] == "warning"
    assert unused["fixable"]
    assert "`os` imported but unused" in unused["message"]
    assert unused["source"] == "ruff"
    assert result["summary"] == "2 diagnostics (1 errors) in 2 files"
    # The user's tree is untouched: no .ruff_cache, no changes.
    assert tree_state(project) == before


async def test_project_configuration_applies(project: Path, registry: ShadowRegistry) -> None:
    (project / "app" / "long.py").write_text("VALUE = 'a string well past forty characters'\n")
    tool = LintTool(shadows=registry)
    result = await _lint(tool, make_ctx(Workspace([project])), paths=["app/long.py"])
    assert [d["code"] for d in result["diagnostics"]] == ["E501"]


async def test_staged_edits_and_buffers_are_what_gets_linted(
    project: Path, registry: ShadowRegistry
) -> None:
    ws, changes = Workspace([project]), ChangeSet()
    stage(changes, project / "app" / "bad.py", CLEAN)  # the agent fixed it
    changes.stage_delete(project / "app" / "clean.py", CLEAN)
    stage(changes, project / "app" / "new.py", "import json\n")  # ...and broke a new file
    ws.set_buffer(project / "app" / "other.py", "import sys\n", 1)  # the user, unsaved
    tool = LintTool(shadows=registry)
    result = await _lint(tool, make_ctx(ws, changes), paths=["app"])
    assert [(d["file"], d["code"]) for d in result["diagnostics"]] == [
        ("app/new.py", "F401"),
        ("app/other.py", "F401"),
    ]


async def test_defaults_to_changed_files_then_open_files(
    project: Path, registry: ShadowRegistry
) -> None:
    ws, changes = Workspace([project]), ChangeSet()
    tool = LintTool(shadows=registry)
    with pytest.raises(ToolError, match="Nothing to lint"):
        await _lint(tool, make_ctx(ws, changes))
    ws.set_buffer(project / "app" / "bad.py", BAD, 1)
    result = await _lint(tool, make_ctx(ws, changes))
    assert {d["file"] for d in result["diagnostics"]} == {"app/bad.py"}
    stage(changes, project / "app" / "new.py", "import json\n")
    result = await _lint(tool, make_ctx(ws, changes))
    assert [(d["file"], d["code"]) for d in result["diagnostics"]] == [("app/new.py", "F401")]


async def test_unknown_file_types_are_reported_not_configured(
    project: Path, registry: ShadowRegistry
) -> None:
    tool = LintTool(shadows=registry)
    result = await _lint(tool, make_ctx(Workspace([project])), paths=["notes.xyz", "app/clean.py"])
    assert result["diagnostics"] == []
    assert result["not_configured"] == [
        {
            "type": ".xyz",
            "reason": "agentls detects no linter for .xyz files; add a `lint` setting to "
            "check them",
            "paths": ["notes.xyz"],
        }
    ]


async def test_missing_path_is_an_error_naming_it(project: Path, registry: ShadowRegistry) -> None:
    tool = LintTool(shadows=registry)
    with pytest.raises(ToolError, match=r"File not found: app/nope\.py"):
        await _lint(tool, make_ctx(Workspace([project])), paths=["app/nope.py"])


async def test_configured_regex_linter_maps_paths_back(
    project: Path, registry: ShadowRegistry
) -> None:
    # A tiny "linter" that flags the word TODO, printing absolute shadow paths.
    script = (
        "import sys, pathlib\n"
        "for name in sys.argv[1:]:\n"
        "    for n, line in enumerate(pathlib.Path(name).read_text().splitlines(), 1):\n"
        "        if 'TODO' in line:\n"
        '            print(f\'{pathlib.Path(name).resolve()}:{n}:{line.index("TODO") + 1}: '
        "warning: [todo] leftover TODO')\n"
        "print('1 file checked')\n"
    )
    todo = LintEntry(
        name="todo",
        command=(sys.executable, "-c", script, "{paths}"),
        globs=("*.xyz",),
        format=r"regex:^(?P<file>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<severity>\w+): "
        r"\[(?P<code>\w+)\] (?P<message>.+)$",
    )
    (project / "notes.xyz").write_text("ok\nsee TODO here\n")
    tool = LintTool(LintConfig(entries=(todo,)), shadows=registry)
    result = await _lint(tool, make_ctx(Workspace([project])), paths=["notes.xyz"])
    assert result["diagnostics"] == [
        {
            "file": "notes.xyz",
            "line": 2,
            "column": 5,
            "code": "todo",
            "severity": "warning",
            "message": "leftover TODO",
            "fixable": False,
            "source": "todo",
        }
    ]


async def test_missing_linter_is_an_error_naming_the_install(
    project: Path, registry: ShadowRegistry
) -> None:
    ghost = LintEntry(
        name="ghostlint",
        command=("ghostlint-not-installed", "{paths}"),
        globs=("*.xyz",),
        install="pip install ghostlint",
    )
    tool = LintTool(LintConfig(entries=(ghost,)), shadows=registry)
    output = await tool.call(LintInput(paths=["notes.xyz"]), make_ctx(Workspace([project])))
    assert output.is_error
    result = json.loads(str(output.content))
    [problem] = result["problems"]
    assert problem["tool"] == "ghostlint"
    assert problem["install"] == "pip install ghostlint"
    assert "ghostlint-not-installed is not installed" in problem["message"]
    assert "pip install ghostlint" in problem["message"]


async def test_syntax_check_covers_files_no_linter_parsed(
    project: Path, registry: ShadowRegistry
) -> None:
    seen: list[tuple[Path, str]] = []

    def checker(path: Path, text: str) -> list[dict[str, object]]:
        seen.append((path, text))
        return [{"line": 2, "column": 5, "message": "unclosed call"}] if "(\n" in text else []

    ws, changes = Workspace([project]), ChangeSet()
    stage(changes, project / "notes.xyz", "a\ncall(\n")
    stage(changes, project / "app" / "clean.py", "x = f(\n")
    tool = LintTool(shadows=registry, syntax_checker=checker)
    result = await _lint(tool, make_ctx(ws, changes), paths=["notes.xyz", "app/clean.py"])
    found = {(d["file"], d["source"], d["line"]) for d in result["diagnostics"]}
    assert ("notes.xyz", "tree-sitter", 2) in found  # staged text, checked
    assert ("app/clean.py", "ruff", 2) in found  # ruff parsed it: its own syntax error...
    assert seen == [(project / "notes.xyz", "a\ncall(\n")]  # ...and no second opinion


def test_usage_and_flags() -> None:
    tool = LintTool()
    assert tool.is_read_only(None)
    assert not tool.is_concurrency_safe(LintInput())
    assert tool.summary(LintInput(paths=["a.py"])) == "Linting a.py"
    assert "not_configured" in tool.description()
    assert set(tool.input_schema()["properties"]) == {"paths"}


async def test_index_syntax_check_covers_languages_without_a_linter(
    project: Path, registry: ShadowRegistry
) -> None:
    (project / "web.js").write_text("function ok() {}\n\nfunction broken( {\n")
    tool = LintTool(shadows=registry)  # the real tree-sitter check from the symbol index
    result = await _lint(tool, make_ctx(Workspace([project])), paths=["web.js"])
    [diag] = result["diagnostics"]
    assert (diag["file"], diag["line"], diag["code"], diag["source"]) == (
        "web.js",
        3,
        "syntax",
        "tree-sitter",
    )
    assert result["not_configured"][0]["type"] == ".js"
