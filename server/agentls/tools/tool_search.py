"""`tool_search` is part of the agent core (`agentls.agent.framework.tool_search`): the
registry adds it to a pool whose tools are deferred. Re-exported here beside the other tools."""

from agentls.agent.framework.tool_search import (
    ToolSearch,
    ToolSearchInput,
    discovered_tool_names,
    rank_tools,
)

__all__ = ["ToolSearch", "ToolSearchInput", "discovered_tool_names", "rank_tools"]
