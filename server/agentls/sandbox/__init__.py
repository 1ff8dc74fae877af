"""The sandbox for everything agentls executes on the agent's behalf (docs/sandbox.md).

`run_command`, `run_tests` and `lint` run their processes through the one process runner
(`agentls.workspace.process`) with a `Confinement` from here: bubblewrap on Linux,
Seatbelt on macOS. This package decides what a run may see and write (`layout`), which
resources it gets (`limits`, `network`), whether a sandbox can run at all
(`availability`) and, from the settings (`settings`), what happens where it cannot
(`service.SandboxService.place`). It never imports editor code.
"""

from agentls.sandbox.availability import Availability, probe
from agentls.sandbox.service import Placement, SandboxConfig, SandboxService
from agentls.sandbox.settings import SandboxSettings, merge_layers

__all__ = [
    "Availability",
    "Placement",
    "SandboxConfig",
    "SandboxService",
    "SandboxSettings",
    "merge_layers",
    "probe",
]
