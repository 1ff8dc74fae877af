"""Test support shipped with the package: a scripted fake of the Anthropic Messages API.

Used by the test suite, the benchmarks and the offline demo, so that an agent loop can be
driven end to end (streaming, tool calls, retries, cancellation) without network or key.
"""

from agentls.testing._server import ScriptedMessagesServer
from agentls.testing.recorded import RecordedRequest
from agentls.testing.scenario import (
    ContentBlock,
    RedactedThinkingBlock,
    Scenario,
    ServerToolUseBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCall,
    ToolUseBlock,
    Turn,
    TurnFactory,
    TurnLike,
    Usage,
    WebSearchResult,
    WebSearchToolResultBlock,
    new_tool_use_id,
    text_turn,
    tool_turn,
    web_search_turn,
)

__all__ = [
    "ContentBlock",
    "RecordedRequest",
    "RedactedThinkingBlock",
    "Scenario",
    "ScriptedMessagesServer",
    "ServerToolUseBlock",
    "StopReason",
    "TextBlock",
    "ThinkingBlock",
    "ToolCall",
    "ToolUseBlock",
    "Turn",
    "TurnFactory",
    "TurnLike",
    "Usage",
    "WebSearchResult",
    "WebSearchToolResultBlock",
    "new_tool_use_id",
    "text_turn",
    "tool_turn",
    "web_search_turn",
]
