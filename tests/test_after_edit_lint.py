"""`checks.afterEdit: lint` (issue 30): the configured linter checks the staged text after
each edit and only its new findings are reported; with `diagnostics`, the linter checks the
files no language server covers. Real ruff and basedpyright, a real user-configured linter
(a `lint` entry), all run by `agentls serve` in the checks' own shadow."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.codeintel_support import basedpyright_langserver, write_tree
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

TODO_LINTER = (
    "import sys\n"
    "for name in sys.argv[1:]:\n"
    "    for number, line in enumerate(open(name), 1):\n"
    "        if 'TODO' in line:\n"
    "            print(f'{name}:{number}: error: a TODO is left')\n"
)
TODO_FORMAT = r"regex:^(?P<file>[^:]+):(?P<line>\d+): (?P<severity>\w+): (?P<message>.+)$"
FILES = {
    "e.py": "import os\nvalue = 1\n",
    "notes.cfg": "[main]\nTODO = old\nname = a\n",
}


def _options(after_edit: str) -> dict[str, Any]:
    return {
        "checks": {"afterEdit": after_edit, "afterEditSeconds": 60},
        "lint": [
            {
                "command": [sys.executable, "-c", TODO_LINTER, "{paths}"],
                "globs": ["*.cfg"],
                "name": "todo-check",
                "format": TODO_FORMAT,
            }
        ],
    }


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def linting(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FakeEditor]:
    basedpyright_langserver()
    root = tmp_path_factory.mktemp("proj")
    write_tree(root, FILES)
    env = server_env(None, tmp_path_factory.mktemp("transcripts"))
    options = _options("lint")
    async with editor_session("neovim", root, env, initialization_options=options) as fake:
        yield fake


async def tool(editor: FakeEditor, name: str, input: dict[str, Any]) -> str:
    result = await command(editor, "agentls.tool", {"name": name, "input": input})
    assert not result["is_error"], result["content"]
    return str(result["content"])


async def test_lint_reports_the_linters_new_finding_only(linting: FakeEditor) -> None:
    content = await tool(
        linting,
        "edit_file",
        {"path": "e.py", "old_string": "value = 1\n", "new_string": "import json\nvalue = 1\n"},
    )
    assert "e.py:2 warning: `json` imported but unused (F401)" in content, content
    assert "`os` imported" not in content, content  # there before the session: not new
    assert "ruff" in content.split("(checked by", 1)[1], content
    await command(linting, "agentls.reject", {"session": "tool"})


async def test_a_clean_edit_gets_no_lint_report(linting: FakeEditor) -> None:
    content = await tool(
        linting, "edit_file", {"path": "e.py", "old_string": "value = 1", "new_string": "value = 2"}
    )
    assert "problem" not in content, content
    assert "Lint" not in content, content
    await command(linting, "agentls.reject", {"session": "tool"})


async def test_a_file_no_language_server_covers_is_linted(linting: FakeEditor) -> None:
    content = await tool(
        linting,
        "edit_file",
        {"path": "notes.cfg", "old_string": "name = a", "new_string": "name = a  # TODO"},
    )
    assert "1 new problem: notes.cfg:3 error: a TODO is left" in content, content
    assert "(checked by todo-check)" in content, content
    await command(linting, "agentls.reject", {"session": "tool"})


async def test_with_diagnostics_the_linter_covers_what_no_language_server_does(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    write_tree(root, FILES)
    env = server_env(None, tmp_path / "transcripts")
    options = _options("diagnostics")
    async with editor_session("neovim", root, env, initialization_options=options) as fake:
        content = await tool(
            fake,
            "edit_file",
            {"path": "notes.cfg", "old_string": "name = a", "new_string": "name = TODO"},
        )
        assert "1 new problem: notes.cfg:3 error: a TODO is left" in content, content


async def test_a_linter_a_permission_rule_denies_is_not_run_by_the_checks(
    tmp_path: Path,
) -> None:
    """The user denied `lint` to the model: the checks do not run it behind their back
    (the marker file the linter would write never appears)."""
    root = tmp_path / "ws"
    write_tree(root, FILES)
    marker = tmp_path / "linter-ran"
    options = _options("lint")
    options["lint"][0]["command"] = [
        sys.executable,
        "-c",
        f"open({str(marker)!r}, 'w').close()\n" + TODO_LINTER,
        "{paths}",
    ]
    options["permissions"] = {"deny": ["lint"]}
    env = server_env(None, tmp_path / "transcripts")
    async with editor_session("neovim", root, env, initialization_options=options) as fake:
        content = await tool(
            fake,
            "edit_file",
            {"path": "notes.cfg", "old_string": "name = a", "new_string": "name = TODO"},
        )
    assert "Lint: not run (a permission rule denies `lint`)." in content, content
    assert not marker.exists()


async def test_a_linter_the_repository_ships_is_not_run_outside_the_sandbox(
    tmp_path: Path,
) -> None:
    """An attacker's repository ships `.venv/bin/ruff`; with the sandbox off, linting runs
    code the user has not approved (the session's staged code, the repository's programs),
    which needs the user's approval, and a check never asks for it: nothing is run. (The
    `.venv` is a virtualenv to the checks, pyvenv.cfg and all: without the gate in
    `auto_checks._not_allowed` its ruff runs and writes the marker.)"""
    root = tmp_path / "ws"
    write_tree(root, {**FILES, "pyproject.toml": "[tool.ruff]\n"})
    marker = tmp_path / "repository-ruff-ran"
    fake = root / ".venv" / "bin" / "ruff"
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!/bin/sh\ntouch {marker}\necho '[]'\n")
    fake.chmod(0o755)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")  # a virtualenv, to the checks
    options = {**_options("lint"), "sandbox": {"enabled": False}}
    env = server_env(None, tmp_path / "transcripts")
    async with editor_session("neovim", root, env, initialization_options=options) as editor:
        content = await tool(
            editor,
            "edit_file",
            {"path": "e.py", "old_string": "value = 1", "new_string": "value = 2"},
        )
    assert "Lint: not run (runs code this session wrote: e.py" in content, content
    assert "runs executables from the repository: .venv/bin/ruff" in content, content
    assert not marker.exists()
