"""The core of workspace trust (`agentls.agent.claude.trust`): what is held back, what the answer
is remembered by, and the `[tool.agentls]` table as the settings loader reads it."""

from __future__ import annotations

import json
from pathlib import Path

from agentls.agent.claude.trust import TrustStore, assess_trust, hold_back
from agentls.config import load_layer
from agentls.config.project import INVALID, load_project_layer, settings_table


def test_hold_back_keeps_what_tightens_and_drops_what_loosens() -> None:
    layer = load_layer(
        {
            "maxTurns": 7,
            "instructions": "be brief",
            "mode": "auto",
            "permissionMode": "acceptEdits",
            "allowedTools": ["run_command"],
            "askTools": ["grep"],
            "permissions": {"allow": ["edit_file"], "deny": ["run_command(rm:*)"], "ask": ["lint"]},
            "hooks": {"PreToolUse": [{"matcher": "", "hooks": [{"command": "x"}]}]},
            "lint": [{"command": ["evil", "{paths}"]}],
            "tests": [{"command": ["evil"]}],
            "runCommand": {"where": "workspace"},
            "languageServers": {"python": {"command": ["evil"]}},
            "sandbox": {"network": {"allowedDomains": []}},
            "secrets": ["*.secret"],
        },
        "project",
        "project",
    )
    kept = hold_back(layer).values
    assert kept["maxTurns"] == 7
    assert kept["instructions"] == "be brief"
    assert kept["askTools"] == ("grep",)
    assert kept["secrets"]
    assert kept["permissions"] == {"deny": ["run_command(rm:*)"], "ask": ["lint"]}
    assert "sandbox" in kept  # merged so that a project only tightens it
    for key in ("mode", "permissionMode", "allowedTools", "hooks", "lint", "tests"):
        assert key not in kept, key
    assert "runCommand" not in kept
    assert "languageServers" not in kept
    safe = load_layer({"mode": "plan", "permissionMode": "plan"}, "project", "project")
    assert hold_back(safe).values == safe.values


def test_the_agentls_table_is_the_same_in_every_toml_spelling() -> None:
    plain = settings_table('[tool.agentls]\nallowedTools = ["x"]\n')
    assert plain == {"allowedTools": ["x"]}
    assert settings_table('[tool."agentls"]\nallowedTools = ["x"]\n') == plain
    assert settings_table('tool.agentls.allowedTools = ["x"]\n') == plain
    assert settings_table('tool = { agentls = { allowedTools = ["x"] } }\n') == plain
    assert settings_table("[project]\nname = 'x'\n") is None
    assert settings_table("[tool.agentls\n") == INVALID


def test_an_ordinary_pyproject_edit_keeps_the_answer_and_a_table_edit_asks_again(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    pyproject = root / "pyproject.toml"
    table = '[tool.agentls]\nallowedTools = ["run_command"]\n'
    pyproject.write_text('[project]\nname = "a"\n' + table)
    store = TrustStore(tmp_path / "trust.json")
    first = assess_trust([root], project=load_project_layer(root), store=store)
    assert first.state == "pending"
    assert first.sources == ("pyproject.toml [tool.agentls]",)
    assert store.record(first, True).state == "trusted"
    pyproject.write_text('[project]\nname = "a"\ndependencies = ["rich"]\n' + table)
    again = assess_trust([root], project=load_project_layer(root), store=store)
    assert again.state == "trusted"
    assert again.digest == first.digest
    pyproject.write_text('[project]\nname = "a"\n' + table + 'askTools = ["grep"]\n')
    changed = assess_trust([root], project=load_project_layer(root), store=store)
    assert changed.state == "pending"
    assert changed.digest != first.digest


def test_claude_settings_count_and_read_claude_false_holds_nothing_back(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {
                    "allow": ["Bash(curl:*)"],
                    "deny": ["Read(./.env)"],
                    "additionalDirectories": ["~/secrets"],
                },
                "hooks": {
                    "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "x"}]}]
                },
                "model": "opus",  # used by agentls, so held back like the rest
                "spinnerTipsEnabled": False,  # not used by agentls: nothing to hold back
            }
        )
    )
    store = TrustStore(tmp_path / "trust.json")
    read = assess_trust([root], project=load_project_layer(root), store=store)
    assert {h.setting for h in read.held_back} == {
        "permissions.allow",
        "permissions.additionalDirectories",
        "hooks",
        "model",
    }
    skipped = assess_trust([root], project=load_project_layer(root), store=store, read_claude=False)
    assert skipped.state == "not_needed"
    assert skipped.digest == read.digest


def test_the_store_is_private_and_a_corrupt_one_asks_again(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".agentls.toml").write_text('allowedTools = ["x"]\n')
    path = tmp_path / "config" / "trust.json"
    store = TrustStore(path)
    trust = assess_trust([root], project=load_project_layer(root), store=store)
    store.record(trust, True)
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    path.write_text("{not json")
    assert assess_trust([root], project=load_project_layer(root), store=store).state == "pending"
