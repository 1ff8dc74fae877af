"""The `languageServers` setting and the code-intelligence options, as typed models.

`languageServers` is `{language: {command: [...], initializationOptions?, settings?}}`, in
the editor's settings or the project file (`.agentls.toml`):

```toml
[languageServers.python]
command = ["basedpyright-langserver", "--stdio"]
settings = { basedpyright = { analysis = { typeCheckingMode = "standard" } } }

[languageServers.lua]                 # a language agentls has no table entry for
command = ["lua-language-server"]
extensions = [".lua"]
```

A project's servers are commands a cloned repository chooses, so they are used only while
project settings are trusted (`trustProjectSettings`, on by default, user level only), the
same rule that governs the project's hooks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agentls.config.code_intel import LanguageServerConfig as LanguageServerConfig

DEFAULT_REQUEST_TIMEOUT = 60.0
"""Seconds one language-server request may take (a cold server indexes the project first)."""
DEFAULT_IDLE_TIMEOUT = 600.0
"""Seconds a language server may sit unused before it is stopped."""
DEFAULT_MAX_RESTARTS = 3
"""Restarts after crashes within ten minutes before a server stays down."""
DEFAULT_EDITOR_TIMEOUT = 5.0
"""Seconds the editor gets to answer one `agentls/editorQuery`."""


LanguageServersSetting = dict[str, LanguageServerConfig | bool]
"""The value of `languageServers` (language → server, and the `autoInstall` flag)."""
AUTO_INSTALL = "autoInstall"


@dataclass(frozen=True)
class ConfiguredServer:
    """A `languageServers` entry and where it was written."""

    config: LanguageServerConfig
    origin: str
    """"user settings" or the project file's name."""


@dataclass(frozen=True)
class LanguageServerSettings:
    """What the language-server pool needs from the settings, resolved by the host."""

    configured: Mapping[str, ConfiguredServer] = field(default_factory=dict)
    """By language key as written (user entries over project entries)."""
    trust_project: bool = True
    """Whether the project's own executables (its virtualenv, `node_modules/.bin`) and its
    `languageServers` entries may be started."""
    ignored_project: tuple[str, ...] = ()
    """Project entries left out because project settings are not trusted (for status)."""
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    """`languageServerIdleTimeout`: seconds unused before a server is stopped (0: never)."""
    memory_budget_mb: int = 0
    """`languageServerMemoryBudget`: MiB for all servers together (0: no budget)."""
    max_restarts: int = DEFAULT_MAX_RESTARTS
    """`languageServerMaxRestarts`: restarts after crashes within ten minutes."""
    auto_install: bool = False
    """`languageServers.autoInstall` (the user's, or a trusted project's)."""

    @classmethod
    def merge(
        cls,
        user: Mapping[str, LanguageServerConfig | bool] | None,
        project: Mapping[str, LanguageServerConfig | bool] | None,
        *,
        project_label: str = ".agentls.toml",
        trust_project: bool = True,
        lifecycle: tuple[float, int, int] = (DEFAULT_IDLE_TIMEOUT, 0, DEFAULT_MAX_RESTARTS),
    ) -> LanguageServerSettings:
        """`lifecycle`: (idle timeout, memory budget, max restarts)."""
        configured: dict[str, ConfiguredServer] = {}
        ignored: list[str] = []
        auto_install = False
        for language, config in (project or {}).items():
            if not trust_project:  # a repository never installs anything before trust
                ignored.append(language)
            elif isinstance(config, bool):
                auto_install = config
            else:
                configured[language.lower()] = ConfiguredServer(config, project_label)
        for language, config in (user or {}).items():
            if isinstance(config, bool):
                auto_install = config
            else:
                configured[language.lower()] = ConfiguredServer(config, "user settings")
        return cls(configured, trust_project, tuple(ignored), *lifecycle, auto_install)


@dataclass(frozen=True)
class EditorQuerySettings:
    """How the editor is asked (source 1)."""

    methods: frozenset[str] = frozenset()
    """The `agentls/editorQuery` methods the client announced (empty: never asked)."""
    timeout: float = DEFAULT_EDITOR_TIMEOUT


def parse_language_servers(raw: object) -> LanguageServersSetting:
    """Validate a raw `languageServers` value (raises pydantic's `ValidationError`)."""
    from pydantic import TypeAdapter

    adapter: TypeAdapter[LanguageServersSetting] = TypeAdapter(LanguageServersSetting)
    return adapter.validate_python(raw)


def announced_methods(value: object) -> frozenset[str]:
    """`editorQueries` / `agentlsEditorQueries` as a client sends it: a list of methods, or
    `true` for all of them."""
    from agentls.codeintel.sources import EDITOR_METHODS

    if value is True:
        return EDITOR_METHODS
    if isinstance(value, list | tuple):
        return frozenset(m for m in value if isinstance(m, str) and m in EDITOR_METHODS)
    return frozenset()
