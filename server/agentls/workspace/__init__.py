"""The world the tools act on: roots, ignore rules, path safety, the buffer overlay, the
session changeset, the shadow copy for lint/test, the symbol index and the process runner.
"""

from agentls.workspace.buffers import Buffer
from agentls.workspace.changes import (
    DELETED,
    Change,
    ChangeEvent,
    ChangeKind,
    ChangeSet,
    Deleted,
    MovedFrom,
    StagedText,
)
from agentls.workspace.core import TextSnapshot, TextSource, Workspace
from agentls.workspace.view import LayeredView

__all__ = [
    "DELETED",
    "Buffer",
    "Change",
    "ChangeEvent",
    "ChangeKind",
    "ChangeSet",
    "Deleted",
    "LayeredView",
    "MovedFrom",
    "StagedText",
    "TextSnapshot",
    "TextSource",
    "Workspace",
]
