"""The world the tools act on: roots, ignore rules, path safety, the buffer overlay, the
session changeset, the shadow copy for lint/test, the symbol index and the process runner.
"""

from agentls.workspace.changes import ChangeSet
from agentls.workspace.core import Workspace

__all__ = ["ChangeSet", "Workspace"]
