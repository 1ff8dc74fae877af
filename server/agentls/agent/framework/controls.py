"""`RunControls`: what the session-level tools may do to the run they are called in.

Defined in `agentls.agent.framework.context` beside `ToolContext`, which holds them (the two would
otherwise import each other); this module names them for the tools and the loop.
"""

from agentls.agent.framework.context import NOT_IN_A_RUN, NoRunControls, RunControls, SubagentReport

__all__ = ["NOT_IN_A_RUN", "NoRunControls", "RunControls", "SubagentReport"]
