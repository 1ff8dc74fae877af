"""The tool framework: the `Tool` base class, `ToolContext` and the run controls
tools get, the pool (`registry`, `tool_search`, `tool_profile`), todos, questions and the
read log. The built-in tools themselves are `agentls.tools`.
"""
