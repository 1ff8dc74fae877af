"""Code intelligence at its boundaries: a server that crashes mid-query, what a server
process inherits, whose commands may start, permissions, and files the agent may not read.

Real basedpyright throughout; the crash comes from a stdio proxy in front of it that exits
while a `textDocument/references` request is in flight.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.codeintel_support import (
    CART_TOTAL_REFERENCES,
    PYTHON_SHOP,
    basedpyright_langserver,
    reference_lines,
    tool_input,
    write_tree,
)
from tests.lsp_support import FakeEditor, command, editor_session, server_env
from tests.trust_support import trust_workspace

HERE = Path(__file__).resolve().parent / "codeintel"
NO_SANDBOX = {"sandbox": {"enabled": False}}
"""For the servers below that report by writing a file outside the workspace, which the
language-server sandbox would keep in its private /tmp (tests/test_codeintel_untrusted.py)."""


async def tool(
    editor: FakeEditor, name: str, input: dict[str, Any], **extra: Any
) -> tuple[str, bool]:
    result = await command(editor, "agentls.tool", {"name": name, "input": input, **extra})
    return str(result["content"]), bool(result["is_error"])


def python_server(wrapper: str, *args: str) -> list[str]:
    return [
        sys.executable,
        str(HERE / wrapper),
        *args,
        "--",
        str(basedpyright_langserver()),
        "--stdio",
    ]


def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    write_tree(root, PYTHON_SHOP)
    return root


async def test_a_server_crashing_mid_query_gives_a_clear_error_then_restarts(
    tmp_path: Path,
) -> None:
    root = shop(tmp_path)
    marker = tmp_path / "crashed"
    options = {
        "languageServers": {"python": {"command": python_server("crash_proxy.py", str(marker))}},
        **NO_SANDBOX,
    }
    env = server_env(None, tmp_path / "transcripts")
    async with editor_session("neovim", root, env, initialization_options=options) as editor:
        content, is_error = await tool(editor, "hover", tool_input("shop/checkout.py", 5, "total"))
        assert not is_error
        assert "def total(tax: float) -> float" in content  # it works at first
        content, is_error = await tool(
            editor, "find_references", tool_input("shop/checkout.py", 5, "total")
        )
        assert marker.exists()
        assert is_error, content
        assert (
            "crashed while answering the references (exit code 3: proxy: simulated crash" in content
        )
        assert "restarted on the next call" in content
        status = await command(editor, "agentls.status", {})
        python = next(e for e in status["code_intel"] if e.get("language") == "python")
        assert python["state"] == "crashed"
        assert "exit code 3" in python["reason"]

        content, is_error = await tool(
            editor, "find_references", tool_input("shop/checkout.py", 5, "total")
        )
        assert not is_error, content
        assert reference_lines(content) == CART_TOTAL_REFERENCES
        assert "(source: language server (basedpyright))" in content  # the proxied server
        status = await command(editor, "agentls.status", {})
        python = next(e for e in status["code_intel"] if e.get("language") == "python")
        assert python["state"] == "running"


async def test_servers_do_not_inherit_the_agents_credentials(tmp_path: Path) -> None:
    root = shop(tmp_path)
    dump = tmp_path / "env.json"
    options = {
        "languageServers": {"python": {"command": python_server("env_dump.py", str(dump))}},
        **NO_SANDBOX,
    }
    env = server_env(
        None,
        tmp_path / "transcripts",
        ANTHROPIC_API_KEY="sk-ant-secret-123456",
        GITHUB_TOKEN="ghp-secret-123456",
        LANG_SERVER_HARMLESS="kept",
    )
    async with editor_session("neovim", root, env, initialization_options=options) as editor:
        content, is_error = await tool(editor, "hover", tool_input("shop/checkout.py", 5, "total"))
        assert not is_error, content
    seen = json.loads(dump.read_text())
    assert seen["LANG_SERVER_HARMLESS"] == "kept"
    assert "ANTHROPIC_API_KEY" not in seen
    assert "GITHUB_TOKEN" not in seen


def _project_server(root: Path, marker: Path) -> None:
    """A cloned repository that names its own language-server command."""
    command_list = python_server("env_dump.py", str(marker))
    quoted = ", ".join(json.dumps(part) for part in command_list)
    (root / ".agentls.toml").write_text(f"[languageServers.python]\ncommand = [{quoted}]\n")


async def test_an_untrusted_projects_server_command_never_runs(tmp_path: Path) -> None:
    root = shop(tmp_path)
    marker = tmp_path / "project-server-ran"
    _project_server(root, marker)
    env = server_env(None, tmp_path / "transcripts")
    untrusted = {"trustProjectSettings": False}
    async with editor_session("neovim", root, env, initialization_options=untrusted) as editor:
        content, is_error = await tool(editor, "hover", tool_input("shop/checkout.py", 5, "total"))
        assert not is_error, content
        assert "(source: language server (basedpyright))" in content  # discovered instead
        status = await command(editor, "agentls.status", {})
    assert not marker.exists()
    ignored = [e for e in status["code_intel"] if e.get("state") == "ignored"]
    assert ignored
    assert "not trusted" in ignored[0]["reason"]


async def test_a_trusted_projects_server_command_is_used(tmp_path: Path) -> None:
    root = shop(tmp_path)
    marker = tmp_path / "project-server-ran"
    _project_server(root, marker)
    env = server_env(None, tmp_path / "transcripts")
    trust_workspace(root, env)
    async with editor_session("neovim", root, env, initialization_options=NO_SANDBOX) as editor:
        content, is_error = await tool(editor, "hover", tool_input("shop/checkout.py", 5, "total"))
        assert not is_error, content
    assert marker.exists()  # the project setting applies once the workspace is trusted


async def test_an_untrusted_projects_own_executables_are_not_discovered(tmp_path: Path) -> None:
    root = shop(tmp_path)
    marker = tmp_path / "node-modules-server-ran"
    fake = root / "node_modules" / ".bin" / "basedpyright-langserver"
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fake.chmod(0o755)
    env = server_env(None, tmp_path / "transcripts")
    untrusted = {"trustProjectSettings": False}
    async with editor_session("neovim", root, env, initialization_options=untrusted) as editor:
        content, is_error = await tool(editor, "hover", tool_input("shop/checkout.py", 5, "total"))
        assert not is_error, content
        assert "basedpyright" in content, content
    assert not marker.exists()


async def test_edit_rules_apply_to_every_file_a_rename_changes(tmp_path: Path) -> None:
    root = shop(tmp_path)
    env = server_env(None, tmp_path / "transcripts")
    options = {"permissions": {"deny": ["edit_file(./shop/legacy.py)"]}}
    async with editor_session("neovim", root, env, initialization_options=options) as editor:
        rename = {**tool_input("shop/legacy.py", 6, "total"), "new_name": "grand_total"}
        content, is_error = await tool(editor, "rename_symbol", rename, mode="plan")
        assert is_error
        assert "No such tool available: rename_symbol" in content  # a write
        assert "find_references" in content
        assert "hover" in content  # read-only ones stay
        content, is_error = await tool(editor, "rename_symbol", rename)
        assert is_error
        assert "edit_file(./shop/legacy.py)" in content  # the edit family's rule
        # asked from another file, the rename would change legacy.py too: the rule sees it
        rename = {**tool_input("shop/checkout.py", 5, "total"), "new_name": "grand_total"}
        content, is_error = await tool(editor, "rename_symbol", rename)
        assert is_error, content
        assert "edit_file(./shop/legacy.py)" in content, content
        result = await command(editor, "agentls.accept", {"session": "tool"})
        assert not result.get("files"), result  # nothing was staged


async def test_read_rules_hide_text_from_the_code_tools(tmp_path: Path) -> None:
    root = shop(tmp_path)
    env = server_env(None, tmp_path / "transcripts")
    options = {"permissions": {"deny": ["read_file(./shop/report.py)"]}}
    async with editor_session("neovim", root, env, initialization_options=options) as editor:
        content, is_error = await tool(
            editor, "find_references", tool_input("shop/checkout.py", 5, "total"), mode="plan"
        )
        assert not is_error, content  # read-only: allowed in plan mode
        # report.py may not be read: its reference is listed, its text is not shown
        assert ("shop/report.py", 5) in reference_lines(content)
        assert "cart.total(0.1)" not in content
        content, is_error = await tool(editor, "hover", tool_input("shop/report.py", 5, "total"))
        assert is_error
        assert "may not be read" in content
        rename = {**tool_input("shop/checkout.py", 5, "total"), "new_name": "grand_total"}
        content, is_error = await tool(editor, "rename_symbol", rename)
        assert is_error
        assert "shop/report.py (deny rule `read_file(./shop/report.py)`)" in content
        assert "Nothing was staged" in content


async def test_hover_withholds_values_defined_in_secret_files(tmp_path: Path) -> None:
    root = shop(tmp_path)
    (root / "shop" / "private").mkdir()
    (root / "shop" / "private" / "__init__.py").write_text("")
    (root / "shop" / "private" / "keys.py").write_text('API_KEY = "sk-live-0123456789"\n')
    (root / "shop" / "pay.py").write_text(
        "from shop.private.keys import API_KEY\n\nprint(API_KEY)\n"
    )
    env = server_env(None, tmp_path / "transcripts")
    options = {"permissions": {"deny": ["read_file(./shop/private/**)"]}}
    async with editor_session("neovim", root, env, initialization_options=options) as editor:
        content, is_error = await tool(editor, "hover", tool_input("shop/pay.py", 3, "API_KEY"))
        assert not is_error, content
        assert "sk-live" not in content
        assert "shop/private/keys.py, which may not be read" in content
        content, _ = await tool(editor, "go_to_definition", tool_input("shop/pay.py", 3, "API_KEY"))
        assert "shop/private/keys.py:1" in content
        assert "sk-live" not in content


async def test_hooks_see_the_code_tools(tmp_path: Path) -> None:
    root = shop(tmp_path)
    seen = tmp_path / "hook-input.json"
    hooks = {
        "PreToolUse": [
            {
                "matcher": "find_references|rename_symbol",
                "hooks": [
                    {
                        "type": "command",
                        "command": f"cat > {seen}; echo 'references are off today' >&2; exit 2",
                    }
                ],
            }
        ]
    }
    env = server_env(None, tmp_path / "transcripts")
    options = {"hooks": hooks}
    async with editor_session("neovim", root, env, initialization_options=options) as editor:
        query = tool_input("shop/checkout.py", 5, "total")
        content, is_error = await tool(editor, "find_references", query)
        assert is_error
        assert "Blocked by hook: references are off today" in content
        assert json.loads(seen.read_text())["tool_input"]["symbol"] == "total"
        content, is_error = await tool(editor, "hover", query)  # not matched: runs
        assert not is_error
        assert "def total" in content


async def test_diagnostics_and_hover_never_quote_values_of_secret_modules(tmp_path: Path) -> None:
    """Issue 27, item 5: basedpyright's `reveal_type` / literal types name the value."""
    root = tmp_path / "app"
    write_tree(
        root,
        {
            "settings_local.py": 'PLAIN = "tok-plain-000"\nPORT = 5433\n',
            "main.py": (
                "from settings_local import PLAIN, PORT\n\n"
                "reveal_type(PLAIN)\nreveal_type(PORT)\nx: int = PLAIN\n"
            ),
        },
    )
    env = server_env(None, tmp_path / "transcripts")
    options = {"secrets": {"extraPatterns": ["settings_local.py"]}}
    async with editor_session("neovim", root, env, initialization_options=options) as editor:
        content, is_error = await tool(
            editor, "diagnostics", {"paths": ["main.py"], "severity": "all"}
        )
        assert not is_error, content
        assert "main.py:3" in content, content  # the reveal_type lines were reported
        assert "tok-plain-000" not in content
        assert "5433" not in content
        assert "REDACTED: value from a secret file" in content
        content, _ = await tool(editor, "hover", tool_input("main.py", 3, "PLAIN"))
        assert "tok-plain-000" not in content
