"""The `Tool` base class: everything the loop needs to know about one tool.

Mirrors Claude Code's tool interface and its defaults. Defaults fail closed: a tool
that says nothing is treated as writing (not read-only) and as unsafe to run in parallel.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from agentls.agent.framework.requirement import NO_RISK, CallRisk
from agentls.agent.framework.schema import compact_json_schema
from agentls.agent.protocol.messages import JsonObject, ToolResultContent, ToolUnionParam
from agentls.errors import ToolError

__all__ = [
    "NO_RISK",
    "CallRisk",
    "ContentBlock",
    "InvalidToolInput",
    "Tool",
    "ToolError",
    "ToolInput",
    "ToolOutput",
    "one_line",
]

if TYPE_CHECKING:
    from agentls.agent.framework.context import ToolContext

ContentBlock = ToolResultContent
"""An API content block for a tool_result: the SDK's `TextBlockParam`, `ImageBlockParam`, …"""


@dataclass(frozen=True)
class ToolOutput:
    """What a tool call produced, before formatting and truncation."""

    content: str | list[ContentBlock]
    is_error: bool = False


class InvalidToolInput(ValueError):
    """Raised by `Tool.parse_input` for tools validated by something other than pydantic
    (e.g. an MCP tool's JSON Schema). The message names each bad field; the pipeline turns
    it into an `InputValidationError` result just like a pydantic `ValidationError`."""


class ToolInput(BaseModel):
    """Base for tool input models: unknown fields are rejected so typos reach the model."""

    model_config = ConfigDict(extra="forbid")


InputT = TypeVar("InputT")


class Tool(ABC, Generic[InputT]):
    """One tool the model can call.

    Subclasses set the class attributes and implement `call`; everything else has a
    conservative default. Tools get one typed `ToolContext` and never import editor code.
    """

    name: str
    """Class attribute for built-ins; tools made at run time (MCP) set it per instance."""
    usage: str
    """The model's manual: becomes the API `description`. Say when to use, when not, limits."""
    input_model: ClassVar[type[BaseModel]]
    aliases: ClassVar[tuple[str, ...]] = ()
    search_hint: str = ""
    max_result_chars: ClassVar[int] = 30_000
    should_defer: ClassVar[bool] = False
    """Always deferred: its schema is sent only after `tool_search` loads it."""
    defer_when_large: ClassVar[bool] = False
    """Deferred when the pool is large (MCP tools): see `ToolSearchSettings`."""
    strict: ClassVar[bool] = False

    def input_schema(self) -> JsonObject:
        """JSON Schema of the input (compact: no titles, no `$defs`)."""
        return compact_json_schema(self.input_model)

    def description(self) -> str:
        return self.usage.strip()

    def api_definition(self) -> ToolUnionParam | None:
        """A server tool's own entry in the `tools` array (the API runs it, e.g. Anthropic's
        web search); None for client tools, whose entry is built from name, usage and
        input schema."""
        return None

    def parse_input(self, raw: JsonObject) -> InputT:
        """Validate raw model input; raises `pydantic.ValidationError` (or `InvalidToolInput`)
        on bad input."""
        parsed: InputT = self.input_model.model_validate(raw)  # type: ignore[assignment]
        return parsed

    def is_read_only(self, input: InputT | None = None) -> bool:
        """Whether the call changes nothing. `None` asks about the tool in general."""
        return False

    def is_concurrency_safe(self, input: InputT) -> bool:
        """Whether the call may run in parallel with other concurrency-safe calls."""
        return False

    def is_enabled(self) -> bool:
        return True

    async def validate_input(self, input: InputT, ctx: ToolContext) -> str | None:
        """Tool-specific checks beyond the schema; return an error message or None."""
        return None

    async def assess(self, input: InputT, ctx: ToolContext) -> CallRisk:
        """What this call would do that bears on permission, found out at call time (e.g.
        it runs code the session staged, or would run outside the sandbox). Facts, not a
        decision: the pipeline's permission step decides (see
        `agentls.agent.permissions.policy`)."""
        return NO_RISK

    def always_ask(self, input: InputT | None = None) -> bool:
        """Whether every call needs the user's approval, whatever the allow rules say (e.g.
        `run_command` configured to run in the real tree). A fact about the tool, not a
        decision: the pipeline's permission step decides (see
        `agentls.agent.permissions.policy`)."""
        return False

    def summary(self, input: InputT) -> str:
        """A short human line for progress UI, e.g. "Reading server/app.py"."""
        return f"Running {self.name}"

    @abstractmethod
    async def call(
        self, input: InputT, ctx: ToolContext
    ) -> ToolOutput | str | BaseModel | JsonObject | list[object]:
        """Do the work. Raise `ToolError` for failures the model should hear about."""


def output_to_content(result: object) -> ToolOutput:
    """Normalise what `Tool.call` returned into a `ToolOutput` (structured data → compact JSON)."""
    if isinstance(result, ToolOutput):
        return result
    if isinstance(result, str):
        return ToolOutput(result)
    if isinstance(result, BaseModel):
        return ToolOutput(result.model_dump_json(exclude_none=True))
    return ToolOutput(json.dumps(result, ensure_ascii=False, separators=(",", ":"), default=str))


def one_line(text: str, limit: int = 120) -> str:
    """The first non-empty line of a description, cut to `limit` characters."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
