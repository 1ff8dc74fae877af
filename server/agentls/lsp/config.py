"""Moved to `agentls.runtime.config_state` (every host's settings state lives in the core).

These names stay importable from here only so work written against the old path still
runs; new code imports `agentls.runtime.config_state`.
"""

from agentls.runtime.config_state import (
    PROJECT_FILE,
    SECTION,
    ConfigState,
    check_entries,
    load_project_config,
    unwrap_section,
)

__all__ = [
    "PROJECT_FILE",
    "SECTION",
    "ConfigState",
    "check_entries",
    "load_project_config",
    "unwrap_section",
]
