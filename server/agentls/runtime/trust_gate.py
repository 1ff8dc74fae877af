"""The hosts' side of workspace trust: assess and apply, remember the answer, ask once, wait.

The decision and its storage are the core's (`agentls.agent.claude.trust`). Every host (the
language server, `agentls.lsp.trust`; the ACP agent, `agentls.acp.trust`) does the same
around it, and only how it asks differs, so that part lives here:

- `refresh` assesses the workspace for its current settings (the project file re-read
  when asked) and applies the result to the host's `ConfigState` (the project layer held
  back or not); the host then reloads its safety settings with `project_trusted`;
- `record` remembers the user's answer (an answer that cannot be saved holds for this
  connection, and the caller is told why);
- `start` runs the host's question once per settings digest (a dismissed question is not
  asked again in this connection; changed settings ask again), and `wait` lets a run wait
  for the answer so it never starts on settings the user is being asked about.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentls.agent.claude.trust import WorkspaceTrust
    from agentls.runtime.config_state import ConfigState

Ask = Callable[["WorkspaceTrust"], Coroutine[Any, Any, None]]


@dataclass
class TrustGate:
    """The trust state of one host's workspace and its open question."""

    trust: WorkspaceTrust | None = None
    prompt: asyncio.Task[None] | None = None
    asked: set[str] = field(default_factory=set)
    """Digests of the settings the user was asked about in this connection."""
    unsaved: tuple[str, bool] | None = None
    """(digest, answer) when the answer could not be saved: it holds for this connection."""

    def refresh(
        self, config: ConfigState, roots: Sequence[Path], *, reload_project: bool
    ) -> WorkspaceTrust:
        """Assess the workspace (re-reading the project file when `reload_project`) and
        apply the result to `config`; returns the new state."""
        from agentls.agent.claude.trust import assess_trust
        from agentls.runtime.config_state import load_project_config

        if reload_project:
            config.set_project(load_project_config(roots[0]))  # its problems were shown once
        user = config.editor.settings
        trust = assess_trust(
            roots,
            project=config.project_source,
            trust_project_settings=user.trust_project_settings,
            read_claude=user.read_claude_settings,
        )
        if trust.state == "pending" and self.unsaved and self.unsaved[0] == trust.digest:
            trust = dataclasses.replace(trust, state="trusted" if self.unsaved[1] else "untrusted")
        self.trust = trust
        config.set_project_trusted(trust.trusted)
        return trust

    def record(self, trust: WorkspaceTrust, trusted: bool) -> list[str]:
        """Remember the answer for these settings; returns problems to show the user."""
        from agentls.agent.claude.trust import TrustStore

        try:
            TrustStore().record(trust, trusted)
        except OSError as exc:
            self.unsaved = (trust.digest, trusted)
            return [f"the trust answer could not be saved ({exc}); it holds until restart"]
        return []

    @property
    def pending(self) -> bool:
        return self.trust is not None and self.trust.state == "pending"

    @property
    def asking(self) -> bool:
        return self.prompt is not None and not self.prompt.done()

    def should_ask(self) -> bool:
        """Whether the question is due: not answered, not asked about these settings yet."""
        trust = self.trust
        return (
            trust is not None
            and trust.state == "pending"
            and trust.digest not in self.asked
            and not self.asking
        )

    def start(self, ask: Ask) -> None:
        """Ask now (the caller checked `should_ask`); the question runs as its own task."""
        trust = self.trust
        assert trust is not None
        self.asked.add(trust.digest)
        self.prompt = asyncio.get_running_loop().create_task(ask(trust), name="agentls-trust")

    async def wait(self) -> None:
        """Wait while the question is open (the run then starts on the answer)."""
        if self.prompt is not None and not self.prompt.done():
            await asyncio.shield(self.prompt)
