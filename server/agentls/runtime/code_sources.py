"""The `languageServers` settings for agentls's own language servers, read per query.

Settings are read per query, so a settings change that touches `languageServers` restarts
the affected server on its next use. A project file's `languageServers` (and the project's
own executables found by discovery) are used only once the workspace is trusted
(`agentls.agent.claude.trust`; never with `trustProjectSettings: false`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from agentls.agent.framework.questions import Question, QuestionOption, QuestionRequest, UserPrompts
from agentls.codeintel.registry import KnownServer
from agentls.codeintel.settings import LanguageServerSettings

if TYPE_CHECKING:
    from agentls.runtime.config_state import ConfigState

log = logging.getLogger(__name__)
INSTALL = "Install"


def confirm_install_through(
    prompts: Callable[[], UserPrompts | None],
) -> Callable[[KnownServer], Awaitable[bool]]:
    """`languageServers.autoInstall` asks the user through the host's question port (the
    editor's dialog, the terminal's prompt); no port or no answer: nothing is installed."""

    async def confirm(server: KnownServer) -> bool:
        port = prompts()
        if port is None:
            return False
        question = Question(
            f"Install the language server {server.name} ({', '.join(server.languages)}) "
            f"into agentls's cache with `{server.install}`?",
            "Install",
            (
                QuestionOption(INSTALL, f"{' '.join(server.install_spec.specs)}"),
                QuestionOption("Not now", "agentls falls back to the symbol index"),
            ),
        )
        try:
            answers = await port.ask_questions(QuestionRequest("", (question,)))
        except Exception as exc:  # a host that cannot ask outside a session
            log.info("cannot ask about installing %s: %s", server.name, exc)
            return False
        return answers is not None and len(answers) > 0 and INSTALL in answers[0].selected

    return confirm


class LanguageServerSettingsReader:
    """`LanguageServerSettings` from the layered configuration, merged when it changes."""

    def __init__(self, config: ConfigState) -> None:
        self.config = config
        self._key: str | None = None
        self._value = LanguageServerSettings()

    def language_servers(self) -> LanguageServerSettings:
        config = self.config
        user = config.editor.settings.language_servers
        project = config.project_source.settings.language_servers
        trust = config.project_trusted  # workspace trust (the host's trust gate)
        current = config.current
        lifecycle = (
            current.language_server_idle_timeout,
            current.language_server_memory_budget,
            current.language_server_max_restarts,
        )
        key = repr((user, project, trust, lifecycle))
        if key != self._key:
            self._key = key
            self._value = LanguageServerSettings.merge(
                user, project, trust_project=trust, lifecycle=lifecycle
            )
        return self._value
