"""The generated settings files are current and agree with the model.

`docs/settings.schema.json` and the VS Code extension's `contributes.configuration` are
generated from `agentls.config` (`python -m agentls.config.schema --write`, or
`bash scripts/settings-schema.sh`); these tests fail when a setting changes without them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agentls.config import AgentlsSettings, load_layer
from agentls.config.schema import (
    EXTENSION_OWNED,
    SCHEMA_FILE,
    VSCODE_NAMES,
    VSCODE_PACKAGE,
    render_package,
    render_schema,
    settings_schema,
    vscode_configuration,
)

ROOT = Path(__file__).resolve().parents[1]
REGENERATE = "run `python -m agentls.config.schema --write` (bash scripts/settings-schema.sh)"


def _package() -> dict[str, Any]:
    return json.loads((ROOT / VSCODE_PACKAGE).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_committed_json_schema_is_current() -> None:
    committed = (ROOT / SCHEMA_FILE).read_text(encoding="utf-8")
    assert committed == render_schema(), f"{SCHEMA_FILE} is stale: {REGENERATE}"


def test_the_vscode_settings_are_generated_from_the_schema() -> None:
    contributed = _package()["contributes"]["configuration"]
    assert contributed == vscode_configuration(contributed), f"{VSCODE_PACKAGE}: {REGENERATE}"
    text = (ROOT / VSCODE_PACKAGE).read_text(encoding="utf-8")
    assert render_package(text) == text, f"{VSCODE_PACKAGE}: {REGENERATE}"


def test_vscode_lists_every_setting_with_type_default_and_description() -> None:
    properties = _package()["contributes"]["configuration"]["properties"]
    for name, field in AgentlsSettings.model_fields.items():
        alias = field.alias or name
        key = "agentls." + VSCODE_NAMES.get(alias, alias)
        assert key in properties, f"{key} is missing from {VSCODE_PACKAGE}"
        prop = properties[key]
        assert prop.get("type"), key
        assert prop.get("markdownDescription"), key
        assert "default" in prop, key
        jsonschema.validate(prop["default"], prop)  # VS Code warns about an invalid default
    ours = [k for k in properties if not k.startswith(EXTENSION_OWNED)]
    assert len(ours) == len(AgentlsSettings.model_fields)
    # the extension's own settings are kept as they are
    assert {"agentls.server.command", "agentls.server.args", "agentls.trace.server"} <= set(
        properties
    )


def test_a_repository_s_vscode_settings_cannot_set_the_user_only_ones() -> None:
    """`"scope": "machine"`: VS Code ignores them in a workspace's .vscode/settings.json."""
    properties = _package()["contributes"]["configuration"]["properties"]
    machine = {k for k, v in properties.items() if v.get("scope") == "machine"}
    assert machine == {
        "agentls.endpoint",
        "agentls.mcp",
        "agentls.allowBypassPermissions",
        "agentls.trustProjectSettings",
        "agentls.readClaudeSettings",
        "agentls.apiKeyHelper",
        "agentls.authHeader",
        "agentls.headers",
    }
    restricted = {k for k, v in properties.items() if v.get("restricted")}
    assert {"agentls.permissions", "agentls.hooks", "agentls.allowedTools"} <= restricted


def test_the_schema_is_valid_and_agrees_with_the_model() -> None:
    schema = settings_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    good = {
        "model": "claude-haiku-4-5",
        "maxTurns": 5,
        "permissions": {"allow": ["read_file"], "defaultMode": "acceptEdits"},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},
        "secrets": ["*.vault"],
        "prices": {"qwen": [0.5, 1], "m": {"input": 1, "output": 2}},
        "mcp": {"mcpServers": {"files": {"command": "npx", "args": ["-y", "x"]}}},
        "toolSearch": {"mode": "never"},
        "runCommand": {"where": "workspace"},
    }
    assert not list(validator.iter_errors(good))
    assert not load_layer(good, "example", "user").problems
    for bad in ({"maxTurns": 0}, {"mode": "sideways"}, {"colour": "red"}, {"hooks": {"Nope": []}}):
        assert list(validator.iter_errors(bad)), bad
        assert load_layer(bad, "example", "user").problems, bad


@pytest.mark.parametrize("flag", ["--check"])
def test_the_regeneration_command_reports_a_stale_file(tmp_path: Path, flag: str) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / SCHEMA_FILE).write_text("{}\n")
    package = tmp_path / VSCODE_PACKAGE
    package.parent.mkdir(parents=True)
    package.write_text((ROOT / VSCODE_PACKAGE).read_text(encoding="utf-8"))
    command = [sys.executable, "-m", "agentls", "settings-schema", "--root", str(tmp_path)]
    stale = subprocess.run([*command, flag], capture_output=True, text=True, check=False)
    assert stale.returncode == 1
    assert str(SCHEMA_FILE) in stale.stderr
    subprocess.run([*command, "--write"], check=True)
    assert subprocess.run([*command, flag], check=False).returncode == 0
    assert (tmp_path / SCHEMA_FILE).read_text(encoding="utf-8") == render_schema()


def test_importing_the_settings_reads_no_source_and_the_schema_still_has_descriptions() -> None:
    """A server start (issue 33) must not pay for the descriptions: pydantic's attribute
    docstrings read, tokenized and parsed each model's source at import. The schema reads
    them when it is generated, and shows them."""
    probe = (
        "import linecache, agentls.config, agentls.config.environment\n"
        "print([f for f in linecache.cache if '/agentls/' in f])\n"
        "from agentls.config import AgentlsSettings\n"
        "print(AgentlsSettings.model_fields['mode'].description)\n"
        "from agentls.config.schema import settings_schema\n"
        "print(settings_schema()['properties']['mode']['description'][:20])\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    read, before, after = done.stdout.splitlines()
    assert read == "[]"
    assert before == "None"
    assert after not in ("", "None")
