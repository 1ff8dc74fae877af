"""MCP tools as pool tools, MCP results as tool_result content, and the resource tools.

An `McpTool` is built at run time from the server's tool listing: its name is
`mcp__<server>__<tool>`, its input schema is the server's JSON Schema verbatim (Claude Code's
`inputJSONSchema`), validated locally with `jsonschema` so a bad call is answered at once
with the field at fault, and read-only / concurrency-safe only when the server's
`readOnlyHint` says so (defaults fail closed).
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import jsonschema
import mcp_types as types
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import (
    ContentBlock,
    InvalidToolInput,
    Tool,
    ToolError,
    ToolInput,
    ToolOutput,
)
from agentls.agent.protocol.messages import JsonObject
from agentls.mcp.connection import McpConnection, ServerUnavailable
from agentls.mcp.sdk import MCPError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

MAX_DESCRIPTION = 2048
API_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
MAX_ERRORS_SHOWN = 5
PROGRESS_INTERVAL = 0.25
"""A server's progress reaches the user at most this often (the last one always)."""
TEXT_MIME = ("text/",)
TEXT_MIME_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/ecmascript",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-sh",
        "application/sql",
        "application/graphql",
        "image/svg+xml",
    }
)


class _AnyInput(BaseModel):
    """Placeholder: MCP tools validate against the server's JSON Schema instead."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool[JsonObject]):
    """One tool of one MCP server."""

    input_model = _AnyInput
    defer_when_large = True

    def __init__(self, connection: McpConnection, tool: types.Tool, name: str) -> None:
        self.connection = connection
        self.mcp_name = tool.name
        self.name = name
        self.usage = _description(tool)
        self.search_hint = f"{connection.name} {tool.title or ''}".strip()
        self._schema = _object_schema(tool.input_schema)
        annotations = tool.annotations
        self._read_only = bool(annotations and annotations.read_only_hint is True)
        self._validator = _validator(self._schema)

    def input_schema(self) -> JsonObject:
        return self._schema

    def parse_input(self, raw: JsonObject) -> JsonObject:
        if not isinstance(raw, dict):
            raise InvalidToolInput("the input must be a JSON object")
        if self._validator is not None:
            # the stubs want a recursive JSON type; the validator checks any value at run time
            instance = cast("Mapping[str, Any]", raw)
            errors = sorted(self._validator.iter_errors(instance), key=lambda e: list(e.path))
            if errors:
                raise InvalidToolInput(_describe_schema_errors(errors))
        return dict(raw)

    def is_read_only(self, input: JsonObject | None = None) -> bool:
        return self._read_only

    def is_concurrency_safe(self, input: JsonObject) -> bool:
        return self._read_only

    def summary(self, input: JsonObject) -> str:
        return f"Calling {self.mcp_name} on MCP server {self.connection.name}"

    async def call(self, input: JsonObject, ctx: ToolContext) -> ToolOutput:
        server = self.connection.name
        try:
            result = await self.connection.call_tool(
                self.mcp_name, input, _progress_reporter(self.summary(input), ctx)
            )
        except ServerUnavailable as exc:
            raise ToolError(f"Error: {exc}. Its tools cannot be used in this session.") from exc
        except MCPError as exc:
            if exc.code == types.REQUEST_TIMEOUT:
                raise ToolError(
                    f"Error: MCP server '{server}' did not answer {self.mcp_name} within "
                    f"{self.connection.options.tool_timeout:g} s."
                ) from exc
            if exc.code == types.CONNECTION_CLOSED:
                raise ToolError(
                    f"Error: the MCP server '{server}' stopped responding during the call to "
                    f"{self.mcp_name} (connection closed; the server probably crashed). Its "
                    "tools are unavailable until it is restarted; do not retry them."
                ) from exc
            raise ToolError(
                f"Error from MCP server '{server}' calling {self.mcp_name}: {exc.message}"
            ) from exc
        except TimeoutError as exc:
            raise ToolError(
                f"Error: MCP server '{server}' did not answer {self.mcp_name} within "
                f"{self.connection.options.tool_timeout:g} s."
            ) from exc
        blocks = content_blocks(result.content)
        if not blocks and result.structured_content is not None:
            blocks = [_text(json.dumps(result.structured_content, ensure_ascii=False))]
        if not blocks:
            blocks = [_text(f"{self.mcp_name} returned no content.")]
        return ToolOutput(_simplify(blocks), is_error=bool(result.is_error))


def _progress_reporter(
    summary: str, ctx: ToolContext
) -> Callable[[float, float | None, str | None], None]:
    """The server's progress notifications as the call's progress line (throttled)."""
    last = 0.0

    def report(done: float, total: float | None, message: str | None) -> None:
        nonlocal last
        now = time.monotonic()
        final = total is not None and done >= total
        if now - last < PROGRESS_INTERVAL and not final:
            return
        last = now
        amount = f"{done:g}/{total:g}" if total else f"{done:g}"
        if total:
            amount += f" ({min(100, round(100 * done / total))}%)"
        ctx.report_progress(f"{summary}: {amount}" + (f" — {message}" if message else ""))

    return report


def _description(tool: types.Tool) -> str:
    text = (tool.description or tool.title or f"MCP tool {tool.name}").strip()
    if len(text) > MAX_DESCRIPTION:
        text = text[: MAX_DESCRIPTION - 14].rstrip() + "… (truncated)"
    return text


def _object_schema(schema: JsonObject) -> JsonObject:
    """The server's schema, with `type: object` guaranteed (the API requires it)."""
    result = dict(schema) if isinstance(schema, dict) else {}
    result.setdefault("type", "object")
    if result.get("type") == "object":
        result.setdefault("properties", {})
    return result


def _validator(schema: JsonObject) -> Validator | None:
    """A validator for the schema, or None when the server's schema is itself invalid
    (then the server validates; refusing every call would make the tool useless)."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError:
        return None
    validator: Validator = cls(schema)
    return validator


def _describe_schema_errors(errors: Sequence[jsonschema.ValidationError]) -> str:
    problems = []
    for error in errors[:MAX_ERRORS_SHOWN]:
        where = ".".join(str(p) for p in error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            required = error.validator_value if isinstance(error.validator_value, list) else []
            for name in required:
                if name not in error.instance:
                    field = f"{where}.{name}" if where else str(name)
                    problems.append(f"`{field}`: Field required")
            continue
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
            for name in error.instance:
                if name not in allowed:
                    field = f"{where}.{name}" if where else str(name)
                    problems.append(f"`{field}`: unexpected field (not in the schema)")
            continue
        problems.append(f"`{where or '(input)'}`: {error.message}")
    if len(errors) > MAX_ERRORS_SHOWN:
        problems.append(f"and {len(errors) - MAX_ERRORS_SHOWN} more")
    return "; ".join(problems)


def _text(text: str) -> ContentBlock:
    return {"type": "text", "text": text}


def _simplify(blocks: list[ContentBlock]) -> str | list[ContentBlock]:
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return str(blocks[0]["text"])
    return blocks


def _image(data: str, mime: str, what: str) -> ContentBlock:
    if mime not in API_IMAGE_TYPES:
        return _text(
            f"[{what}: {mime} image, {len(data) * 3 // 4} bytes; not a type the model can view]"
        )
    if len(data) > MAX_IMAGE_BASE64:
        return _text(f"[{what}: {mime} image of {len(data) * 3 // 4} bytes omitted: too large]")
    image = {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}
    return cast(ContentBlock, image)  # `mime` is one of API_IMAGE_TYPES


def resource_blocks(
    contents: types.TextResourceContents | types.BlobResourceContents,
) -> ContentBlock:
    """One resource's contents as a content block (text, image, or a note for other blobs)."""
    if isinstance(contents, types.TextResourceContents):
        mime = f" ({contents.mime_type})" if contents.mime_type else ""
        return _text(f"[resource {contents.uri}{mime}]\n{contents.text}")
    mime = contents.mime_type or "application/octet-stream"
    if _is_text(mime):
        text = _decoded_text(contents.blob)
        if text is not None:
            return _text(f"[resource {contents.uri} ({mime})]\n{text}")
    if mime.startswith("image/") and mime != "image/svg+xml":
        return _image(contents.blob, mime, f"resource {contents.uri}")
    return _text(
        f"[resource {contents.uri}: {mime}, {len(contents.blob) * 3 // 4} bytes of binary "
        "data not shown]"
    )


def _is_text(mime: str) -> bool:
    base = mime.split(";", 1)[0].strip().lower()
    return (
        base.startswith(TEXT_MIME)
        or base in TEXT_MIME_TYPES
        or base.endswith(("+json", "+xml", "+yaml"))
    )


def _decoded_text(blob: str) -> str | None:
    """A base64 blob of a text type as text; None when it is not valid base64 or UTF-8
    (it is then described like other binary data)."""
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def content_blocks(content: Sequence[Any]) -> list[ContentBlock]:
    """MCP content → Messages-API content blocks."""
    blocks: list[ContentBlock] = []
    for item in content:
        if isinstance(item, types.TextContent):
            blocks.append(_text(item.text))
        elif isinstance(item, types.ImageContent):
            blocks.append(_image(item.data, item.mime_type, "image"))
        elif isinstance(item, types.EmbeddedResource):
            blocks.append(resource_blocks(item.resource))
        elif isinstance(item, types.ResourceLink):
            about = f": {item.description}" if item.description else ""
            blocks.append(_text(f"[resource link {item.name} <{item.uri}>{about}]"))
        elif isinstance(item, types.AudioContent):
            blocks.append(_text(f"[audio ({item.mime_type}) omitted: the model cannot hear it]"))
        else:
            blocks.append(_text(f"[unsupported MCP content: {getattr(item, 'type', '?')}]"))
    return blocks


# -- resources ---------------------------------------------------------------------------


class ListResourcesInput(ToolInput):
    server: str | None = Field(
        default=None, description="Only this MCP server's resources (default: all servers)."
    )


class ReadResourceInput(ToolInput):
    server: str = Field(description="The MCP server that has the resource.")
    uri: str = Field(description="The resource URI, as listed by list_mcp_resources.")


ConnectionsFn = Callable[[], Sequence[McpConnection]]


class ListMcpResources(Tool[ListResourcesInput]):
    name = "list_mcp_resources"
    usage = """Lists the resources (files, documents, records) that connected MCP servers \
offer, with their URIs. Use before read_mcp_resource; pass `server` to list one server only."""
    search_hint = "mcp resources list documents"
    input_model = ListResourcesInput

    def __init__(self, connections: ConnectionsFn) -> None:
        self._connections = connections

    def is_read_only(self, input: ListResourcesInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: ListResourcesInput) -> bool:
        return True

    def summary(self, input: ListResourcesInput) -> str:
        return f"Listing MCP resources{f' of {input.server}' if input.server else ''}"

    async def call(self, input: ListResourcesInput, ctx: ToolContext) -> list[Any]:
        servers = [c for c in self._connections() if c.supports_resources]
        if input.server is not None:
            servers = [c for c in servers if c.name == input.server]
            if not servers:
                names = ", ".join(c.name for c in self._connections() if c.supports_resources)
                raise ToolError(
                    f"No MCP server named {input.server!r} offers resources "
                    f"(servers with resources: {names or 'none'})."
                )
        listing: list[JsonObject] = []
        for connection in servers:
            try:
                resources = await connection.list_resources()
            except (ServerUnavailable, MCPError, TimeoutError) as exc:
                listing.append({"server": connection.name, "error": str(exc)})
                continue
            for resource in resources:
                entry: JsonObject = {
                    "server": connection.name,
                    "uri": resource.uri,
                    "name": resource.name,
                }
                if resource.mime_type:
                    entry["mimeType"] = resource.mime_type
                if resource.description:
                    entry["description"] = resource.description
                listing.append(entry)
        return listing


class ReadMcpResource(Tool[ReadResourceInput]):
    name = "read_mcp_resource"
    usage = """Reads one resource from an MCP server by its URI (see list_mcp_resources). \
Text comes back as text, images as images; other binary content is only described."""
    search_hint = "mcp resource read fetch document"
    input_model = ReadResourceInput

    def __init__(self, connections: ConnectionsFn) -> None:
        self._connections = connections

    def is_read_only(self, input: ReadResourceInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: ReadResourceInput) -> bool:
        return True

    def summary(self, input: ReadResourceInput) -> str:
        return f"Reading {input.uri} from {input.server}"

    async def call(self, input: ReadResourceInput, ctx: ToolContext) -> ToolOutput:
        connection = next((c for c in self._connections() if c.name == input.server), None)
        if connection is None:
            names = ", ".join(c.name for c in self._connections())
            raise ToolError(f"No MCP server named {input.server!r} (servers: {names or 'none'}).")
        try:
            result = await connection.read_resource(input.uri)
        except ServerUnavailable as exc:
            raise ToolError(f"Error: {exc}.") from exc
        except MCPError as exc:
            raise ToolError(
                f"Error from MCP server '{input.server}' reading {input.uri}: {exc.message}"
            ) from exc
        blocks = [resource_blocks(c) for c in result.contents]
        return ToolOutput(_simplify(blocks) if blocks else f"{input.uri} is empty.")
