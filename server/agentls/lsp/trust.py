"""Workspace trust in the language server: assess, ask once, apply.

The decision and its storage are the core's (`agentls.agent.claude.trust`); this module asks the
editor's user (`window/showMessageRequest`: "Trust workspace" / "Don't trust"), applies the
answer to the settings (the project layer, the permission policy, hooks, commands,
language servers) and makes new sessions wait while the question is open, so a run never
starts on settings the user is being asked about. A client that cannot show the question
(Helix) is told once, with `window/showMessage`, what is held back and how to trust the
workspace: the `agentls.trust` command, `agentls trust` in a terminal, or `--trust` on the
command line. A dismissed question is not asked again in this connection.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING

from lsprotocol import types

from agentls.runtime.trust_gate import TrustGate

if TYPE_CHECKING:
    from agentls.agent.claude.trust import WorkspaceTrust
    from agentls.lsp.contract import Connection

log = logging.getLogger(__name__)

TRUST = "Trust workspace"
DONT_TRUST = "Don't trust"
HOW_TO_TRUST = (
    "trust the workspace with the agentls.trust command (`:lsp-workspace-command "
    "agentls.trust` in Helix), `agentls trust` in a terminal, or `--trust` on the command line"
)


_GATES: weakref.WeakKeyDictionary[Connection, TrustGate] = weakref.WeakKeyDictionary()


def _gate(ls: Connection) -> TrustGate:
    return _GATES.setdefault(ls, TrustGate())


def trust_of(ls: Connection) -> WorkspaceTrust | None:
    return _gate(ls).trust


def refresh_trust(ls: Connection) -> list[str]:
    """Assess the workspace (again, from disk) and apply the result to the settings;
    returns what to tell the user. Reload the runtime's safety settings afterwards."""
    gate = _gate(ls)
    first = gate.trust is None
    # at start-up the caller has just loaded (and reported) the project file
    trust = gate.refresh(ls.config, ls.roots(), reload_project=not first)
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


def start_trust_prompt(ls: Connection) -> None:
    """Ask the user, once per connection, when the workspace waits for an answer."""
    gate = _gate(ls)
    if not gate.should_ask() or not ls.features.show_message_request:
        return
    gate.start(lambda trust: _ask(ls, trust))


async def wait_for_trust(ls: Connection) -> None:
    """Wait while the trust question is open (a new session then starts on the answer)."""
    await _gate(ls).wait()


async def _ask(ls: Connection, trust: WorkspaceTrust) -> None:
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


def decide(ls: Connection, trust: WorkspaceTrust, trusted: bool) -> WorkspaceTrust:
    """Remember the user's answer for these settings and apply it to new sessions."""
    gate = _gate(ls)
    problems = gate.record(trust, trusted)
    problems += refresh_trust(ls)
    if ls.has_host:
        problems += ls.runtime.reload_safety()
        ls.host.settings_changed()
    ls.report_problems(problems)
    now = gate.trust or trust
    if trusted:
        text = "agentls: workspace trusted; its own settings apply to new sessions"
    else:
        text = "agentls: workspace not trusted; its settings that loosen safety stay held back"
    ls.message(types.MessageType.Info, text)
    return now
