"""A small MCP server for the tests, over stdio or streamable HTTP.

    python -m tests.mcp_servers.demo_server [--name N] [--http PORT] [--many K]
        [--fail-start] [--spawn-child PIDFILE] [--delay SECONDS] [--instructions TEXT]
        [--instructions-size N]

Tools cover each result shape agentls maps (text, image, embedded resource, isError), a
read-only annotated tool, a name that needs sanitising, a crash mid-call and a slow call;
`--many K` adds K generated tools so the tool pool crosses the deferral threshold.

No `from __future__ import annotations` here: MCPServer inspects the tool signatures, and
their annotations name classes imported inside `build`.
"""

import argparse
import base64
import os
import subprocess
import sys
import time
from typing import Any

# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def build(name: str, many: int, instructions: str | None = None, **options: Any) -> Any:
    """The server; imports are local so `--fail-start` fails before paying for them.
    `options` go to `MCPServer` (e.g. `auth_server_provider` and `auth` for OAuth)."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(name, instructions=instructions, log_level="WARNING", **options)
    _add_deploy(server)
    _add_tools(server)

    for index in range(many):
        topic = ["invoice", "calendar", "ticket", "deploy", "mailbox"][index % 5]

        server.add_tool(
            _generated(index),
            name=f"{topic}_op_{index:02d}",
            description=f"Operation {index} on the {topic} service: look up a {topic} by id.",
        )

    @server.resource("demo://readme", name="readme", mime_type="text/markdown")
    def readme() -> str:
        """The demo server's readme."""
        return "# Demo\nA readme resource."

    @server.resource("demo://logo", name="logo", mime_type="image/png")
    def logo() -> bytes:
        """A tiny logo."""
        return PNG

    return server


def _add_deploy(server: Any) -> None:
    """A tool that asks the user (elicitation) before it acts."""
    from typing import Literal

    from mcp.server.mcpserver import Context
    from mcp.types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS as MODERN
    from pydantic import BaseModel

    class Confirmation(BaseModel):
        confirm: bool
        region: Literal["eu", "us"]
        note: str = ""

    @server.tool()
    async def deploy(target: str, ctx: Context) -> Any:
        """Deploy `target` after asking the user to confirm (elicitation: a request of its
        own on handshake-era sessions, an `InputRequiredResult` round on 2026 ones)."""
        message = f"Deploy {target}?"
        answer = (ctx.input_responses or {}).get("confirm")
        if answer is None and ctx.protocol_version in MODERN:
            schema = Confirmation.model_json_schema()
            request = ElicitRequest(
                params=ElicitRequestFormParams(message=message, requested_schema=schema)
            )
            return InputRequiredResult(input_requests={"confirm": request})
        if answer is None:
            legacy = await ctx.elicit(message, Confirmation)
            action, data = legacy.action, legacy.data if legacy.action == "accept" else None
        else:
            action = answer.action
            data = Confirmation.model_validate(answer.content) if action == "accept" else None
        if data is None:
            return f"deploy {action}"
        return f"deployed {target} to {data.region} (confirm={data.confirm}, note={data.note!r})"


def _add_tools(server: Any) -> None:
    """Plain tools: results of every content type, failures, crashes, slow calls."""
    from mcp.server.mcpserver import Image
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import EmbeddedResource, TextResourceContents, ToolAnnotations

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str, times: int = 1) -> str:
        """Echo `text` back, repeated `times` times."""
        return text * times

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two integers and return the sum."""
        return str(a + b)

    @server.tool()
    def fail(message: str) -> str:
        """Always fails with `message`."""
        raise ToolError(message)

    @server.tool()
    def crash() -> str:
        """Kill the server process mid-call (for crash tests)."""
        os._exit(3)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def pixel() -> Image:
        """Return a 1x1 PNG image."""
        return Image(data=PNG, format="png")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def attach() -> list[object]:
        """Return some text and an embedded text resource."""
        return [
            "see attachment",
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri="demo://notes.txt", mime_type="text/plain", text="attached notes"
                ),
            ),
        ]

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def big(size: int) -> str:
        """Return `size` characters of text."""
        return "y" * size

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def whoami() -> str:
        """Return the server's process id."""
        return str(os.getpid())

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def nap(seconds: float) -> str:
        """Sleep `seconds`, then return."""
        time.sleep(seconds)
        return "rested"

    @server.tool(name="get.weather v2")
    def get_weather(city: str) -> str:
        """Weather forecast for a city (a tool name the API would reject as is)."""
        return f"sunny in {city}"


def _generated(index: int) -> Any:
    def generated(item_id: str, verbose: bool = False) -> str:
        return f"generated {index}: {item_id}"

    return generated


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="demo")
    parser.add_argument("--http", type=int, default=0)
    parser.add_argument("--many", type=int, default=0)
    parser.add_argument("--fail-start", action="store_true")
    parser.add_argument("--spawn-child", default="")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--instructions", default=None)
    parser.add_argument("--instructions-size", type=int, default=0)
    args = parser.parse_args()
    if args.delay:
        time.sleep(args.delay)  # a server that is slow to start
    if args.fail_start:
        sys.stderr.write("demo server: refusing to start (--fail-start)\n")
        sys.exit(2)
    if args.spawn_child:
        # A grandchild that ignores stdin: only a process sweep gets rid of it.
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(120)"], stdin=subprocess.DEVNULL
        )
        with open(args.spawn_child, "w") as handle:
            handle.write(str(child.pid))
    instructions = args.instructions
    if args.instructions_size:
        instructions = (instructions or "") + "x" * args.instructions_size
    server = build(args.name, args.many, instructions)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
