"""`agentls trust` and `--trust`: workspace trust from the command line.

The decision and its storage are the core's (`agentls.agent.claude.trust`). `agentls trust`
shows what a workspace's own settings would loosen and records the user's answer (the
same answer the editor's trust prompt records); `--trust` on `run`, `resume`, `ask`,
`tool` and `tools` records it before the server starts, for scripts. On a terminal without
`--trust`, the server asks through the CLI's prompt.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentls.agent.claude.trust import TrustStore, WorkspaceTrust, assess_trust


def assess(workspace: Path) -> WorkspaceTrust:
    """The workspace's trust state as `agentls serve` would assess it for the CLI (user
    settings at their defaults: the CLI sends none that change trust)."""
    from agentls.config.project import load_project_layer

    root = workspace.resolve()
    return assess_trust([root], project=load_project_layer(root))


def trust_workspace(workspace: Path, *, quiet: bool = False) -> WorkspaceTrust:
    """`--trust`: trust the workspace for its current settings (a no-op when nothing in
    them needs trust or it is trusted already). Says on stderr what it trusted."""
    trust = assess(workspace)
    if trust.state in ("trusted", "not_needed", "disabled"):
        return trust
    try:
        trusted = TrustStore().record(trust, True)
    except OSError as exc:
        sys.stderr.write(f"agentls: --trust: cannot save the answer ({exc}); held back\n")
        return trust
    if not quiet:
        held = "; ".join(h.describe() for h in trust.held_back)
        sys.stderr.write(f"agentls: trusted {trusted.roots[0]} (--trust): {held}\n")
    return trusted


def held_back_note(workspace: Path) -> None:
    """One line on stderr when the workspace's settings that loosen safety are held back
    because nobody answered yet (for commands that cannot show the question)."""
    try:
        trust = assess(workspace)
    except Exception:
        return
    if trust.state == "pending":
        held = "; ".join(h.describe() for h in trust.held_back)
        sys.stderr.write(
            f"agentls: held back until you trust this workspace: {held} "
            "(run with --trust, or `agentls trust`)\n"
        )


def trust_command(workspace: Path, *, revoke: bool, show: bool, as_json: bool) -> int:
    """`agentls trust [--revoke | --show]`."""
    if not workspace.is_dir():
        sys.stderr.write(f"agentls: workspace {workspace} is not a folder\n")
        return 2
    trust = assess(workspace)
    if not show and trust.state not in ("not_needed", "disabled"):
        try:
            trust = TrustStore().record(trust, not revoke)
        except OSError as exc:
            sys.stderr.write(f"agentls: cannot save the answer: {exc}\n")
            return 1
    if as_json:
        sys.stdout.write(json.dumps(trust.payload(), indent=2) + "\n")
        return 0
    sys.stdout.write(f"{', '.join(map(str, trust.roots))}: {trust.summary()}\n")
    if show or trust.state == "not_needed":
        return 0
    if trust.state == "trusted":
        sys.stdout.write("Its own settings apply to new sessions (asked again if they change).\n")
    else:
        sys.stdout.write("Its settings that loosen safety stay held back.\n")
    return 0
