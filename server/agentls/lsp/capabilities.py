"""Questions about the client's capabilities, answered in one place with safe defaults."""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types
from pygls.capabilities import get_capability


@dataclass(frozen=True)
class ClientFeatures:
    """The client abilities the server adapts to (all default to "not supported")."""

    document_changes: bool = False
    resource_operations: frozenset[str] = frozenset()
    change_annotations: bool = False
    show_document: bool = False
    show_message_request: bool = False
    work_done_progress: bool = False
    configuration: bool = False
    """`workspace/configuration` (pull model) is supported."""
    watch_files: bool = False
    """The server may register a `workspace/didChangeWatchedFiles` watcher dynamically."""
    position_encoding: str = "utf-16"
    shows_outcomes: bool = False
    """The client renders run results itself (`experimental.agentls.runResults`), with its own
    command names: the server does not add messages that repeat them."""
    text_input: bool = False
    """The client answers `agentls/textInput` (free text for MCP servers' questions;
    `experimental.agentls.textInput`)."""
    syncs_before_apply_reply: bool = False
    """The client sends the didChange of every document it changed by `workspace/applyEdit`
    before it answers (`experimental.agentls.syncBeforeApplyReply`): an applied edit is
    confirmed from the documents' versions and text at the answer, without waiting."""
    questions: bool = False
    """The client shows `agentls/askQuestions` itself (`experimental.agentls.questions`)."""
    plan_review: bool = False
    """The client shows `agentls/reviewPlan` itself (`experimental.agentls.planReview`)."""
    index_on_demand: bool = False
    """The symbol index starts when a request first needs it, not at `initialized`
    (`experimental.agentls.indexOnDemand`): short-lived clients such as `agentls tool`
    do not pay for tree-sitter and a background index they never query (issue 33)."""

    @classmethod
    def of(cls, caps: types.ClientCapabilities, encoding: object) -> ClientFeatures:
        ops = get_capability(caps, "workspace.workspace_edit.resource_operations", None) or []
        agentls = _experimental(caps)
        return cls(
            # Resource operations only exist inside `documentChanges`: a client that lists
            # them handles `documentChanges` (Neovim applies both but advertises only these).
            document_changes=bool(
                get_capability(caps, "workspace.workspace_edit.document_changes", False) or ops
            ),
            resource_operations=frozenset(str(getattr(op, "value", op)) for op in ops),
            change_annotations=get_capability(
                caps, "workspace.workspace_edit.change_annotation_support", None
            )
            is not None,
            show_document=bool(get_capability(caps, "window.show_document.support", False)),
            show_message_request=get_capability(caps, "window.show_message", None) is not None,
            work_done_progress=bool(get_capability(caps, "window.work_done_progress", False)),
            configuration=bool(get_capability(caps, "workspace.configuration", False)),
            watch_files=bool(
                get_capability(
                    caps, "workspace.did_change_watched_files.dynamic_registration", False
                )
            ),
            position_encoding=str(getattr(encoding, "value", encoding) or "utf-16"),
            shows_outcomes=agentls.get("runResults") is True,
            syncs_before_apply_reply=agentls.get("syncBeforeApplyReply") is True,
            text_input=agentls.get("textInput") is True,
            questions=agentls.get("questions") is True,
            plan_review=agentls.get("planReview") is True,
            index_on_demand=agentls.get("indexOnDemand") is True,
        )


def _experimental(caps: types.ClientCapabilities) -> dict[str, object]:
    """`capabilities.experimental.agentls` (the agentls editor clients' own flags), or {}."""
    experimental = caps.experimental  # LSPAny: plain JSON values
    section = experimental.get("agentls") if isinstance(experimental, dict) else None
    return dict(section) if isinstance(section, dict) else {}
