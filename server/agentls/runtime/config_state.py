"""A host's layered settings: the environment, the project file and the user's section.

The model, validation and precedence are `agentls.config`'s (see `agentls.config.layers`);
this module keeps one host's layers and applies workspace trust to the project layer. Every
host fills it the same way: the environment and the project file once at start-up, the
user's `agentls` section from wherever the host gets it (the LSP's `initializationOptions`
and `workspace/didChangeConfiguration`, `agentls acp --settings`). Every invalid part is
reported (the caller shows the messages) and dropped; the rest applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.config import Layer, SettingsStack, load_layer
from agentls.config.project import PROJECT_FILE, SECTION, load_project_layer

if TYPE_CHECKING:
    from agentls.config.checks import LintEntry, TestEntry

__all__ = [
    "PROJECT_FILE",
    "SECTION",
    "ConfigState",
    "check_entries",
    "load_project_config",
    "unwrap_section",
]


def load_project_config(root: Path | None) -> Layer:
    """The project layer: `.agentls.toml`, else `[tool.agentls]` in `pyproject.toml`."""
    return load_project_layer(root)


def unwrap_section(raw: object) -> object:
    """Editors send either `{agentls: {...}}` or the section itself; accept both."""
    if isinstance(raw, Mapping) and SECTION in raw and isinstance(raw[SECTION], Mapping):
        return raw[SECTION]
    return raw


class ConfigState(SettingsStack):
    """The layered settings of one connection; `current` is always valid.

    The project layer in the stack is the project file without what loosens safety
    (`agentls.agent.claude.trust.hold_back`) until the workspace is trusted (`project_trusted`,
    set by the host from `agentls.agent.claude.trust.assess_trust`); `project_source` is the
    whole file, for the trust assessment and status."""

    project_trusted: bool = False
    _project_source: Layer | None = None

    def set_environment(self) -> list[str]:
        """The process environment's settings (once, at start-up)."""
        from agentls.config.environment import ENVIRONMENT, environment, environment_values

        values, problems = environment_values()
        _, process_problems = environment()
        layer = Layer(ENVIRONMENT, "environment", values, [*process_problems, *problems])
        return self.set("environment", layer)

    def set_project(self, layer: Layer) -> list[str]:
        self._project_source = layer
        return self.set("project", self._effective_project())

    def set_project_trusted(self, trusted: bool) -> None:
        """Apply the workspace-trust decision to the project layer (its problems were
        reported when it was set)."""
        self.project_trusted = trusted
        if self._project_source is not None:
            self.set("project", self._effective_project())

    def _effective_project(self) -> Layer:
        from agentls.agent.claude.trust import hold_back

        source = self.project_source
        return source if self.project_trusted else hold_back(source)

    @property
    def project_source(self) -> Layer:
        """The whole project layer, loosening parts included."""
        return self._project_source or self.layer("project")

    def load_layers(self, root: Path, editor: tuple[object, str] | None) -> list[str]:
        """Every host's start: the environment, `root`'s project file and (unless None)
        the user's section with where it came from; returns the problems to show."""
        problems = self.set_environment()
        problems += self.set_project(load_project_config(root))
        if editor is not None:
            problems += self.set_editor(*editor)
        return problems

    def set_editor(self, raw: object, source: str) -> list[str]:
        return self.set("editor", load_layer(unwrap_section(raw), source, "user"))

    @property
    def project(self) -> Layer:
        return self.layer("project")

    @property
    def editor(self) -> Layer:
        return self.layer("editor")


def check_entries(state: ConfigState) -> tuple[tuple[LintEntry, ...], tuple[TestEntry, ...]]:
    """The `lint` and `tests` entries for the tools. Like hooks, a project file's commands
    apply only once the workspace is trusted (they are held back from the project layer
    until then, see `ConfigState`) and never with `trustProjectSettings: false`."""
    chosen = state.editor.settings if not state.editor.settings.trust_project_settings else None
    settings = chosen or state.current
    return tuple(settings.lint), tuple(settings.tests)
