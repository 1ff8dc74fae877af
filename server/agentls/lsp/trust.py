"""Workspace trust in the language server: assess, ask once, apply.

The decision and its storage are the core's (`agentls.agent.trust`); this module asks the
editor's user (`window/showMessageRequest`: "Trust workspace" / "Don't trust"), applies the
answer to the settings (the project layer, the permission policy, hooks, commands,
language servers) and makes new sessions wait while the question is open, so a run never
starts on settings the user is being asked about. A client that cannot show the question
(Helix) is told once, with `window/showMessage`, what is held back and how to trust the
workspace: the `agentls.trust` command, `agentls trust` in a terminal, or `--trust` on the
command line. A dismissed question is not asked again in this connection.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from agentls.agent.trust import WorkspaceTrust
    from agentls.lsp.server import AgentLanguageServer

log = logging.getLogger(__name__)

TRUST = "Trust workspace"
DONT_TRUST = "Don't trust"
HOW_TO_TRUST = (
    "trust the workspace with the agentls.trust command (`:lsp-workspace-command "
    "agentls.trust` in Helix), `agentls trust` in a terminal, or `--trust` on the command line"
)


@dataclass
class _Gate:
    trust: WorkspaceTrust | None = None
    prompt: asyncio.Task[None] | None = None
    asked: bool = False
    unsaved: tuple[str, bool] | None = None
    """(digest, answer) when the answer could not be saved: it holds for this connection."""


_GATES: weakref.WeakKeyDictionary[AgentLanguageServer, _Gate] = weakref.WeakKeyDictionary()


def _gate(ls: AgentLanguageServer) -> _Gate:
    return _GATES.setdefault(ls, _Gate())


def trust_of(ls: AgentLanguageServer) -> WorkspaceTrust | None:
    return _gate(ls).trust


def refresh_trust(ls: AgentLanguageServer) -> list[str]:
    """Assess the workspace (again, from disk) and apply the result to the settings;
    returns what to tell the user. Call `reload_safety` afterwards."""
    from agentls.agent.trust import assess_trust
    from agentls.lsp.config import load_project_config

    gate = _gate(ls)
    config = ls.config
    roots = ls.roots()
    if gate.trust is not None:  # at start-up the caller has just loaded (and reported) it
        config.set_project(load_project_config(roots[0]))
    user = config.editor.settings
    trust = assess_trust(
        roots,
        project=config.project_source,
        trust_project_settings=user.trust_project_settings,
        read_claude=user.read_claude_settings,
    )
    if trust.state == "pending" and gate.unsaved and gate.unsaved[0] == trust.digest:
        trust = dataclasses.replace(trust, state="trusted" if gate.unsaved[1] else "untrusted")
    first = gate.trust is None
    gate.trust = trust
    config.set_project_trusted(trust.trusted)
    if trust.trusted:
        return []
    held = "; ".join(h.describe() for h in trust.held_back)
    ls.log_line(f"agentls: project settings held back ({trust.state}): {held}")
    if trust.state == "pending" and not ls.features.show_message_request and first:
        return [
            f"this workspace's own settings that loosen safety are held back: {held}; "
            + HOW_TO_TRUST
        ]
    return []


def start_trust_prompt(ls: AgentLanguageServer) -> None:
    """Ask the user, once per connection, when the workspace waits for an answer."""
    gate = _gate(ls)
    trust = gate.trust
    if trust is None or trust.state != "pending" or gate.asked:
        return
    if not ls.features.show_message_request:
        return
    if gate.prompt is not None and not gate.prompt.done():
        return
    gate.asked = True
    gate.prompt = asyncio.get_running_loop().create_task(_ask(ls, trust), name="agentls-trust")


async def wait_for_trust(ls: AgentLanguageServer) -> None:
    """Wait while the trust question is open (a new session then starts on the answer)."""
    prompt = _gate(ls).prompt
    if prompt is not None and not prompt.done():
        await asyncio.shield(prompt)


async def _ask(ls: AgentLanguageServer, trust: WorkspaceTrust) -> None:
    params = types.ShowMessageRequestParams(
        type=types.MessageType.Warning,
        message=trust.question(),
        actions=[types.MessageActionItem(title=t) for t in (TRUST, DONT_TRUST)],
    )
    try:
        choice = await ls.window_show_message_request_async(params)
    except Exception as exc:
        log.info("the trust prompt failed: %s", exc)
        choice = None
    if choice is None or choice.title not in (TRUST, DONT_TRUST):
        ls.log_line("agentls: the trust question was dismissed; project settings stay held back")
        return
    decide(ls, trust, choice.title == TRUST)


def decide(ls: AgentLanguageServer, trust: WorkspaceTrust, trusted: bool) -> WorkspaceTrust:
    """Remember the user's answer for these settings and apply it to new sessions."""
    from agentls.agent.trust import TrustStore
    from agentls.lsp.lifecycle import report_problems
    from agentls.lsp.safety import reload_safety

    gate = _gate(ls)
    problems: list[str] = []
    try:
        TrustStore().record(trust, trusted)
    except OSError as exc:
        gate.unsaved = (trust.digest, trusted)
        problems.append(f"the trust answer could not be saved ({exc}); it holds until restart")
    problems += refresh_trust(ls)
    if ls.has_host:
        problems += reload_safety(ls)
        ls.host.settings_changed()
    report_problems(ls, problems)
    now = gate.trust or trust
    if trusted:
        text = "agentls: workspace trusted; its own settings apply to new sessions"
    else:
        text = "agentls: workspace not trusted; its settings that loosen safety stay held back"
    ls.message(types.MessageType.Info, text)
    return now
