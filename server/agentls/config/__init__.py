"""agentls settings: one typed pydantic model tree, validated the same way from every source.

The tree's root is `AgentlsSettings` (`model.py`), the `agentls` section editors send. The
same model validates the editor's settings (`initializationOptions`,
`workspace/didChangeConfiguration`, `workspace/configuration`), the project file
(`.agentls.toml`, `[tool.agentls]`) and the environment (fields that name a variable, read
by their exact names). Claude Code's `.claude/settings*.json` are read with
`ClaudeSettingsFile`, built from the same parts.

- `validate_leniently` (`problems.py`): each invalid part is dropped and reported as a
  `Problem` (source, path, bad value, reason, what applies instead); the rest applies.
- `layers.py`: the precedence of the layers and the `userOnly` rule for project files.
- `schema.py`: the JSON Schema (`docs/settings.schema.json`) and the VS Code extension's
  `contributes.configuration` are generated from the tree; tests check both are current.

This package is core-level: it imports pydantic only, so `agent/`,
`tools/`, `workspace/` and every host can use it.

Adding settings for a feature
-----------------------------
1. Write the feature's model in its own module here, `agentls/config/<feature>.py`
   (pydantic only, so the whole tree stays importable from anywhere)::

       class SandboxSettings(SettingsModel):
           \"\"\"Confine `run_command` (Claude Code's `sandbox` keys).\"\"\"

           enabled: bool = False
           \"\"\"Run commands in a sandbox.\"\"\"
           excluded_commands: list[str] = Field(default_factory=list)
           \"\"\"Commands that run outside it.\"\"\"

   Attributes are snake_case; users write camelCase (`excludedCommands`) automatically
   (give `alias=` only for a key that is not the camelCase of its name). The docstring
   under each field is its description in the schema and in the editors' settings UI.
   Give every field a default; use `Field(ge=..., le=...)`, `Literal[...]` and validators
   for constraints: a bad value is then reported and its default applies. A field whose
   bad value must drop its whole list entry raises `entry_error(...)` from its validator.
   Mark fields with `json_schema_extra=meta(...)`: `user_only=True` (a project file may
   not set it), `restricted=True` (it can loosen safety), `env="AGENTLS_..."` (top-level
   fields only: the variable that sets it).
2. Add one field to `AgentlsSettings` in `model.py`::

       sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
       \"\"\"Command sandboxing.\"\"\"

   Lists and maps of entries are one field too, and each entry is validated on its own
   (a bad one is dropped and reported, the others apply)::

       lint: list[LintCommandSettings] = Field(default_factory=list)
       language_servers: dict[str, LanguageServerSettings] = Field(default_factory=dict)

3. The host hands the part to the code that uses it (`ls.config.current.sandbox` in the
   LSP host; core code takes the model as a parameter and never reads settings itself).
   A project file, `[tool.agentls]` and the environment then work with no more code.
4. Regenerate the schema files: `python -m agentls.config.schema --write` (or
   `bash scripts/settings-schema.sh`, or `agentls settings-schema --write`);
   `tests/test_settings_schema.py` fails until they are current.
"""

from agentls.config.base import (
    PERMISSION_MODES,
    RUN_MODES,
    PermissionMode,
    RunMode,
    SettingsModel,
    meta,
)
from agentls.config.layers import Layer, Level, SettingsStack, load_layer, merge_values
from agentls.config.loop import DEFAULT_MODEL, LoopSettings, PriceSetting, ToolsSettings
from agentls.config.mcp import ClaudeMcpApprovals, McpServerConfig, McpSettings
from agentls.config.model import AgentlsSettings
from agentls.config.problems import (
    Checked,
    Problem,
    describe_validation_error,
    entry_error,
    validate_leniently,
)
from agentls.config.safety import (
    ClaudeSettingsFile,
    HookCommandSettings,
    HookMatcherSettings,
    PermissionsSettings,
    RunCommandSettings,
    SecretsSettings,
)
from agentls.config.tool_search import ToolSearchSettings

__all__ = [
    "DEFAULT_MODEL",
    "PERMISSION_MODES",
    "RUN_MODES",
    "AgentlsSettings",
    "Checked",
    "ClaudeMcpApprovals",
    "ClaudeSettingsFile",
    "HookCommandSettings",
    "HookMatcherSettings",
    "Layer",
    "Level",
    "LoopSettings",
    "McpServerConfig",
    "McpSettings",
    "PermissionMode",
    "PermissionsSettings",
    "PriceSetting",
    "Problem",
    "RunCommandSettings",
    "RunMode",
    "SecretsSettings",
    "SettingsModel",
    "SettingsStack",
    "ToolSearchSettings",
    "ToolsSettings",
    "describe_validation_error",
    "entry_error",
    "load_layer",
    "merge_values",
    "meta",
    "validate_leniently",
]
