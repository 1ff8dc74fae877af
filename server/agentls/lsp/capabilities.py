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

    @classmethod
    def of(cls, caps: types.ClientCapabilities, encoding: object) -> ClientFeatures:
        ops = get_capability(caps, "workspace.workspace_edit.resource_operations", None) or []
        return cls(
            document_changes=bool(
                get_capability(caps, "workspace.workspace_edit.document_changes", False)
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
        )
