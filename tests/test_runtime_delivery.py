"""The runtime decides when staged edits are delivered; hosts only carry it out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agentls.agent.framework.context import RunMode
from agentls.agent.permissions.approval import PermissionMode
from agentls.agent.permissions.policy import RulePolicy
from agentls.host import AgentHost, EditOutcome, HostOptions, NullPort, RunHandle, RunReporter
from agentls.runtime.delivery import Handoff, delivery_for
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.workspace import ChangeSet, Workspace


@pytest.mark.parametrize(
    ("mode", "permission_mode", "final", "expected"),
    [
        ("plan", "bypassPermissions", True, "none"),
        ("auto", "default", False, "write"),
        ("review", "default", False, "later"),
        ("review", "default", True, "review"),
        ("review", "dontAsk", True, "review"),
        ("review", "acceptEdits", True, "write"),
        ("review", "bypassPermissions", True, "write"),
    ],
)
def test_delivery_by_run_mode_and_permission_mode(
    mode: str, permission_mode: str, final: bool, expected: str
) -> None:
    assert delivery_for(mode, permission_mode, final=final) == expected  # type: ignore[arg-type]


def test_nothing_staged_is_never_delivered() -> None:
    assert delivery_for("auto", "bypassPermissions", final=True, empty=True) == "none"


@dataclass
class RecordingPort:
    """An `EditorPort` that records what the runtime told it to do (and writes nothing to
    disk)."""

    told: list[tuple[str, list[str]]] = field(default_factory=list)

    def reporter(self, run: RunHandle) -> RunReporter:
        return NullPort().reporter(run)

    async def deliver(
        self,
        session_id: str,
        changes: ChangeSet,
        how: Handoff,
        summary: str,
        *,
        final: bool = False,
    ) -> EditOutcome | None:
        self.told.append((how, [p.name for p in changes.changed_paths()]))
        if how == "write":
            changes.discard()  # as if written: nothing is left to deliver at the end
        return None


@pytest.mark.parametrize(
    ("permission_mode", "run_mode", "expected"),
    [
        ("default", "review", [("review", ["a.py"])]),
        ("acceptEdits", "review", [("write", ["a.py"])]),
        ("acceptEdits", "auto", [("write", ["a.py"])]),
        ("default", "plan", []),
    ],
)
async def test_the_runtime_tells_every_host_what_to_deliver(
    tmp_path: Path,
    api: ScriptedMessagesServer,
    monkeypatch: pytest.MonkeyPatch,
    permission_mode: PermissionMode,
    run_mode: RunMode,
    expected: list[tuple[str, list[str]]],
) -> None:
    """The host's port gets "write" or "review" and the files, never a permission mode."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
    api.extend(tool_turn(("write_file", {"path": "a.py", "content": "x = 1\n"})), text_turn("ok"))
    port = RecordingPort()
    options = HostOptions(permissions=lambda: RulePolicy(mode=permission_mode))
    host = AgentHost(Workspace([tmp_path]), port, options)
    try:
        handle = host.start_run("write a.py", mode=run_mode)
        assert handle.task is not None
        result = await handle.task
        assert result["status"] == "completed"
        assert port.told == expected
        assert not (tmp_path / "a.py").exists()  # the port wrote nothing
    finally:
        await host.shutdown()
