"""Helix: the shipped `languages.toml` / `config.toml` are valid and wire agentls up.

Helix itself is not packaged for Debian 12, so this checks the files' structure (what
Helix reads) rather than running the editor.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HELIX = ROOT / "editor-clients" / "helix"

HELIX_25_07_DEFAULTS = {
    # `language-servers` of these languages in Helix 25.07.1's own languages.toml
    "python": ["ty", "ruff", "jedi", "pylsp"],
    "rust": ["rust-analyzer"],
    "typescript": ["typescript-language-server"],
    "tsx": ["typescript-language-server"],
    "javascript": ["typescript-language-server"],
    "go": ["gopls", "golangci-lint-lsp"],
    "markdown": ["marksman", "markdown-oxide"],
}


def test_languages_toml_defines_the_server_and_uses_it() -> None:
    data = tomllib.loads((HELIX / "languages.toml").read_text(encoding="utf-8"))
    server = data["language-server"]["agentls"]
    assert server["command"] == "agentls"
    assert server["args"] == ["serve"]
    assert server["config"]["mode"] in {"review", "auto", "plan"}
    assert "apiKey" not in server["config"]  # the key never goes into a settings file
    languages = data["language"]
    assert languages
    for language in languages:
        assert "agentls" in language["language-servers"], language["name"]


def test_agentls_is_added_next_to_helix_default_servers_not_instead() -> None:
    """A user [[language]] entry replaces Helix's list: ours must repeat the defaults."""
    data = tomllib.loads((HELIX / "languages.toml").read_text(encoding="utf-8"))
    lists = {entry["name"]: entry["language-servers"] for entry in data["language"]}
    assert set(lists) == set(HELIX_25_07_DEFAULTS)
    for name, defaults in HELIX_25_07_DEFAULTS.items():
        assert lists[name] == [*defaults, "agentls"], name


def test_config_toml_binds_code_actions_and_cancel() -> None:
    data = tomllib.loads((HELIX / "config.toml").read_text(encoding="utf-8"))
    keys = data["keys"]["normal"]["space"]["A"]
    assert keys["a"] == "code_action"
    assert keys["c"] == ":lsp-workspace-command agentls.cancel"
