"""The `sandbox` settings: Claude Code's keys, ours, and a project that may only tighten."""

from __future__ import annotations

import json
from pathlib import Path

from agentls.agent.safety import load_safety
from agentls.config import load_layer
from agentls.sandbox import SandboxSettings, merge_layers


def test_defaults_are_strict() -> None:
    settings = SandboxSettings()
    assert settings.enabled
    assert settings.allow_unsandboxed_commands
    assert settings.network.allowed_domains == ()
    assert not settings.network.allow_local_binding
    assert settings.fallback_for("run_command") == "refuse"
    assert settings.fallback_for("run_tests") == settings.fallback_for("lint") == "ask"
    assert set(settings.caches) == {"pip", "npm", "go", "go-build", "cargo"}


def test_claude_code_keys_and_ours_are_read_in_camel_case() -> None:
    settings = SandboxSettings.model_validate(
        {
            "enabled": True,
            "excludedCommands": ["docker:*"],
            "allowUnsandboxedCommands": False,
            "network": {"allowedDomains": ["pypi.org", "*.github.com"]},
            "allowLocalBinding": True,
            "caches": {"pip": "~/.cache/pip"},
            "fallback": {"run_tests": "refuse"},
            "limits": {"memoryMb": 512, "processes": 64, "fileSizeMb": 10},
        }
    )
    assert settings.network.allow_local_binding
    assert settings.network.allows_host("api.github.com")
    assert settings.network.allows_host("PyPI.org")
    assert not settings.network.allows_host("github.com.evil.net")
    assert settings.excluded("docker run x") == "docker:*"
    assert settings.excluded("dockerx") is None
    words = SandboxSettings.model_validate({"excludedCommands": ["git push", "make *"]})
    assert words.excluded("git push origin") == "git push"
    assert words.excluded("git pull") is None
    assert words.excluded("make all") == "make *"
    assert settings.fallback_for("lint") == "refuse"  # allowUnsandboxedCommands: false


def test_a_project_layer_only_tightens() -> None:
    user = {
        "network": {"allowedDomains": ["pypi.org", "example.com"]},
        "excludedCommands": ["docker:*"],
    }
    project = {
        "enabled": False,
        "network": {"allowedDomains": ["pypi.org", "evil.example"], "allowLocalBinding": True},
        "excludedCommands": ["docker:*", "curl:*"],
        "caches": {"pip": "~/.cache/pip", "evil": "/etc"},
        "fallback": {"run_command": "ask", "run_tests": "refuse"},
        "limits": {"memoryMb": 1024, "processes": 10000},
        "allowUnsandboxedCommands": False,
    }
    merged, problems = merge_layers([("user", user, True), (".agentls.toml", project, False)])
    assert merged.enabled
    assert merged.network.allowed_domains == ("pypi.org",)
    assert not merged.network.allow_local_binding
    assert merged.excluded_commands == ("docker:*",)
    assert merged.caches == {"pip": "~/.cache/pip"}
    assert merged.fallback_for("run_command") == "refuse"
    assert merged.fallback_for("run_tests") == "refuse"
    assert merged.limits.memory_mb == 1024
    assert merged.limits.processes == 512
    assert not merged.allow_unsandboxed_commands
    refused = " ".join(problems)
    for key in ("enabled", "network.allowedDomains", "network.allowLocalBinding", "caches"):
        assert f"`sandbox.{key}` would loosen the sandbox" in refused
    assert "`sandbox.excludedCommands`" in refused
    assert "fallback.run_command" in refused


def test_an_invalid_section_is_reported_and_ignored() -> None:
    merged, problems = merge_layers([("settings", {"network": {"allowedDomains": "x"}}, True)])
    assert merged == SandboxSettings()
    assert problems
    assert "network.allowedDomains" in problems[0]
    layer = load_layer({"sandbox": {"enabled": "maybe"}}, "initializationOptions", "editor")
    assert "enabled" not in layer.values.get("sandbox", {})
    assert "`sandbox.enabled`" in str(layer.problems[0])


def test_claude_settings_files_feed_the_sandbox(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "ws"
    (home / ".claude").mkdir(parents=True)
    (root / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "sandbox": {
                    "enabled": True,
                    "autoAllowBashIfSandboxed": True,  # Claude Code's own: named as unused
                    "network": {"allowedDomains": ["pypi.org"], "httpProxyPort": 8080},
                }
            }
        )
    )
    (root / ".claude" / "settings.json").write_text(
        json.dumps({"sandbox": {"network": {"allowedDomains": ["pypi.org", "evil.example"]}}})
    )
    safety = load_safety(
        [root],
        home=home,
        section={"sandbox": {"excludedCommands": ["make:*"]}},
        project_section={"sandbox": {"enabled": False}},
        env={},
    )
    assert safety.sandbox.enabled
    assert safety.sandbox.network.allowed_domains == ("pypi.org",)
    assert safety.sandbox.excluded_commands == ("make:*",)
    assert any("allowedDomains` would loosen" in p for p in safety.problems)
    assert any("`sandbox.enabled` would loosen" in p for p in safety.problems)
    [unused] = [p for p in safety.problems if "autoAllowBashIfSandboxed" in p]
    assert unused.startswith("Claude Code settings agentls does not use (ignored)")


def test_deny_rules_for_reading_outside_the_workspace_are_hidden(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "ws"
    root.mkdir()
    safety = load_safety(
        [root],
        home=home,
        section={
            "permissions": {"deny": ["Read(~/private/**)", "Read(./inside/**)", "Edit(//etc)"]}
        },
        env={},
    )
    assert safety.sandbox_hidden == (home / "private",)
