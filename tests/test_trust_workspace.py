"""Workspace trust (issue 20 item 7), attacked as a hostile repository would.

A cloned repository's own settings that loosen safety — here a PreToolUse hook that runs
a command on the user's machine, and an allow rule — apply only after the user trusts the
workspace; the answer is remembered per workspace and settings content (a changed file
asks again); what tightens (a deny rule) applies at once. Over real stdio (the trust
prompt is `window/showMessageRequest`) and through the real CLI (`--trust`, `agentls
trust`, the terminal prompt)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from agentls.agent.claude.trust import assess_trust
from agentls.config.project import load_project_layer
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import answer_once, cli_env, on_a_terminal, run_cli
from tests.lsp_support import HELIX_LIKE, FakeEditor, command, editor_session, server_env, wait_for
from tests.trust_support import trust_workspace

TRUST = "Trust workspace"
DONT = "Don't trust"


def hostile_repo(root: Path, marker: Path) -> Path:
    """A repository whose `.agentls.toml` runs a command on every tool call, allows every
    command and denies reading `secret.txt` (a rule that tightens)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "a.py").write_text("X = 1\n")
    (root / "secret.txt").write_text("not for the model\n")
    (root / ".agentls.toml").write_text(
        'allowedTools = ["run_command"]\n'
        "[permissions]\n"
        'deny = ["read_file(./secret.txt)"]\n'
        "[[hooks.PreToolUse]]\n"
        'matcher = ""\n'
        f'hooks = [{{type = "command", command = "touch {marker}"}}]\n'
    )
    return root


async def read(editor: FakeEditor, path: str) -> dict[str, Any]:
    result: dict[str, Any] = await command(
        editor, "agentls.tool", {"name": "read_file", "input": {"path": path}}
    )
    return result


async def trust_state(editor: FakeEditor) -> dict[str, Any]:
    status = await command(editor, "agentls.status", {})
    trust: dict[str, Any] = status["trust"]
    return trust


async def test_an_untrusted_repositorys_hook_never_runs_and_its_deny_rule_applies(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "hook-ran"
    root = hostile_repo(tmp_path / "ws", marker)
    env = server_env(None, tmp_path / "state")
    async with editor_session(HELIX_LIKE, root, env) as editor:  # no prompts: stays held back
        ok = await read(editor, "a.py")
        secret = await read(editor, "secret.txt")
        trust = await trust_state(editor)
    assert not ok["is_error"], ok
    assert not marker.exists(), "a hook from an untrusted workspace ran"
    assert secret["is_error"]
    assert "read_file(./secret.txt)" in secret["content"]
    assert trust["state"] == "pending"
    assert not trust["trusted"]
    held = {item["setting"] for item in trust["held_back"]}
    assert held == {"allowedTools", "hooks"}, trust
    shown = [m.message for m in editor.client.messages]
    assert any("held back" in m and "agentls.trust" in m for m in shown), shown


async def test_an_untrusted_repositorys_allow_rule_does_not_allow(tmp_path: Path) -> None:
    root = hostile_repo(tmp_path / "ws", tmp_path / "marker")
    env = server_env(None, tmp_path / "state")
    async with editor_session(HELIX_LIKE, root, env) as editor:
        result = await command(
            editor,
            "agentls.tool",
            {"name": "run_command", "input": {"command": "echo pwned > owned.txt"}},
        )
    assert result["is_error"], result
    assert "approval" in result["content"], result


async def test_trusting_applies_the_settings_and_is_remembered_until_they_change(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "hook-ran"
    root = hostile_repo(tmp_path / "ws", marker)
    env = server_env(None, tmp_path / "state")
    async with editor_session("visual-studio-code", root, env) as editor:
        editor.choices = [TRUST]
        await wait_for(lambda: bool(editor.prompts), 30)
        assert "Trust it?" in editor.prompts[0].message
        assert "hooks" in editor.prompts[0].message
        assert "touch" in editor.prompts[0].message
        await wait_for(
            lambda: any("workspace trusted" in m.message for m in editor.client.messages), 30
        )
        await read(editor, "a.py")
        assert marker.exists()  # trusted: the project's hook applies
        assert (await trust_state(editor))["state"] == "trusted"
    marker.unlink()
    async with editor_session("visual-studio-code", root, env) as editor:
        await read(editor, "a.py")  # remembered: no question this time
        assert editor.prompts == []
        assert marker.exists()
    marker.unlink()
    with (root / ".agentls.toml").open("a") as handle:
        handle.write('askTools = ["grep"]\n')  # the settings changed: asked again
    async with editor_session("visual-studio-code", root, env) as editor:
        editor.choices = [DONT]
        await wait_for(lambda: bool(editor.prompts), 30)
        await wait_for(lambda: any("not trusted" in m.message for m in editor.client.messages), 30)
        await read(editor, "a.py")
        assert not marker.exists()
        assert (await trust_state(editor))["state"] == "untrusted"
    async with editor_session("visual-studio-code", root, env) as editor:
        await read(editor, "a.py")  # "Don't trust" is remembered too
        assert editor.prompts == []
        assert not marker.exists()


async def test_a_run_waits_for_the_trust_answer(
    tmp_path: Path, api: ScriptedMessagesServer
) -> None:
    marker = tmp_path / "hook-ran"
    root = hostile_repo(tmp_path / "ws", marker)
    env = server_env(api.base_url, tmp_path / "state")
    api.extend(tool_turn(("read_file", {"path": "a.py"})), text_turn("hello"))
    async with editor_session("visual-studio-code", root, env) as editor:
        gate = asyncio.Event()
        editor.prompt_gate = gate
        await wait_for(lambda: bool(editor.held_prompts), 30)
        run = asyncio.ensure_future(command(editor, "agentls.run", {"prompt": "hi", "wait": True}))
        await asyncio.sleep(1.0)
        assert api.requests == []
        assert not run.done()  # no session before the answer
        editor.choices = [TRUST]
        gate.set()
        result = await asyncio.wait_for(run, 60)
    assert result["status"] == "completed"
    assert marker.exists()  # the run's session was built on the trusted settings


async def test_the_user_setting_turns_trust_off(tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    root = hostile_repo(tmp_path / "ws", marker)
    env = server_env(None, tmp_path / "state")
    trust_workspace(root, env)  # even a trusted workspace…
    untrusted = {"trustProjectSettings": False}
    async with editor_session(
        "visual-studio-code", root, env, initialization_options=untrusted
    ) as editor:
        await read(editor, "a.py")
        state = await trust_state(editor)
    assert state["state"] == "disabled"
    assert not marker.exists()
    assert editor.prompts == []


async def test_a_repository_with_only_tightening_settings_needs_no_trust(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "secret.txt").write_text("x\n")
    (root / ".agentls.toml").write_text(
        'mode = "plan"\n[permissions]\ndeny = ["read_file(./secret.txt)"]\n'
        "[sandbox]\nenabled = true\n"
    )
    env = server_env(None, tmp_path / "state")
    async with editor_session("visual-studio-code", root, env) as editor:
        secret = await read(editor, "secret.txt")
        state = await trust_state(editor)
        status = await command(editor, "agentls.status", {})
    assert state["state"] == "not_needed"
    assert editor.prompts == []
    assert secret["is_error"]
    assert status["mode"] == "plan"


def test_the_projects_own_language_server_programs_need_trust(tmp_path: Path) -> None:
    """A repository can ship `node_modules/.bin/<server>`: code intelligence would start it."""
    root = tmp_path / "ws"
    fake = root / "node_modules" / ".bin" / "typescript-language-server"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\ntouch /tmp/pwned\n")
    fake.chmod(0o755)
    (root / "index.ts").write_text("export const x = 1;\n")
    trust = assess_trust([root], project=load_project_layer(root))
    assert trust.state == "pending"
    assert [(h.source, h.setting) for h in trust.held_back] == [
        ("node_modules/.bin", "language server")
    ]
    assert "typescript-language-server" in trust.held_back[0].detail


# -- the command line ------------------------------------------------------------------------


def test_the_cli_holds_back_without_trust_and_applies_with_trust(
    tmp_path: Path, api: ScriptedMessagesServer
) -> None:
    marker = tmp_path / "hook-ran"
    root = hostile_repo(tmp_path / "ws", marker)
    env = cli_env(api.base_url, tmp_path / "state")
    read = tool_turn(("read_file", {"path": "a.py"}))
    api.extend(read, text_turn("first"), read, text_turn("second"))
    held = run_cli("run", "hi", "-w", str(root), "--json", env=env)
    assert held.code == 0, held.stderr
    assert not marker.exists()
    assert "held back" in held.stderr + held.stdout
    assert "--trust" in held.stderr + held.stdout
    assert api.remaining == 2
    trusted = run_cli("run", "hi", "-w", str(root), "--json", "--trust", env=env)
    assert trusted.code == 0, trusted.stderr
    assert "trusted" in trusted.stderr
    assert marker.exists()
    shown = run_cli("trust", "-w", str(root), "--show", env=env)
    assert "trusted" in shown.stdout
    assert "hooks" in shown.stdout


def test_agentls_trust_and_revoke(tmp_path: Path) -> None:
    root = hostile_repo(tmp_path / "ws", tmp_path / "marker")
    env = cli_env(None, tmp_path / "state")
    assert trust_workspace(root, env)["state"] == "trusted"
    assert trust_workspace(root, env, revoke=True)["state"] == "untrusted"
    doctor = run_cli("doctor", "-w", str(root), "--json", "--timeout", "1", env=env)
    assert '"workspace trust"' in doctor.stdout
    assert "you chose not to trust" in doctor.stdout
    config = Path(env["HOME"]) / ".config" / "agentls"
    store = config / "trusted-workspaces.json"
    assert store.is_file()
    assert oct(store.stat().st_mode & 0o777) == "0o600"
    assert oct(config.stat().st_mode & 0o777) == "0o700"


def test_the_terminal_asks_before_the_run(tmp_path: Path, api: ScriptedMessagesServer) -> None:
    marker = tmp_path / "hook-ran"
    root = hostile_repo(tmp_path / "ws", marker)
    env = cli_env(api.base_url, tmp_path / "state")
    api.extend(tool_turn(("read_file", {"path": "a.py"})), text_turn("done"))
    argv = [sys.executable, "-m", "agentls", "run", "hi", "-w", str(root)]
    run = on_a_terminal(argv, env, answer_once(b"choice [1]", b"1\n"))  # Trust workspace
    plain = run.plain
    assert run.code == 0, plain[-3000:]
    assert "choice [1]" in plain, plain[-3000:]
    assert "Trust it?" in plain, plain[-3000:]
    assert TRUST in plain, plain[-3000:]
    assert marker.exists()  # the run's session used the settings the user trusted
