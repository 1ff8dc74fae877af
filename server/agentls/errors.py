"""Error types shared by the core layers (no editor imports here)."""


class ToolError(Exception):
    """A failure the model should hear about: becomes an `is_error` tool_result.

    The message must say what failed and what to try instead (the closest match, the
    valid range, what already succeeded).
    """


class WorkspaceError(ToolError):
    """A workspace operation was refused or failed: path outside the roots, binary file..."""


class SessionBusy(ValueError):
    """A run or a compaction was asked of a session that is running one.

    A `ValueError` so hosts that map bad requests keep working; the LSP layer maps it to
    its own `RequestFailed` error that says to cancel or wait.
    """
