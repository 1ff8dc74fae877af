"""ACP cancel latency: `session/cancel` mid-tool until the `session/prompt` answer, against
a plain request round trip on the same connection, measured in one run.

`agentls acp` is driven by the official Python SDK client; the scripted model calls a slow
MCP tool (the demo server's `nap`, 30 s), and each cancel is sent once the tool runs. The
reference is `session/set_mode` (a request the agent answers at once), so the machine's
load shows in both. Target: the prompt answers within 0.5 s of the cancel.

    python bench/acp_cancel.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from acp import spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    McpServerStdio,
    RequestPermissionResponse,
    TextContentBlock,
)

from agentls.testing import ScriptedMessagesServer, tool_turn

DEMO = Path(__file__).resolve().parents[1] / "tests" / "mcp_servers" / "demo_server.py"


class Client:
    """Records which tool calls run; allows what is asked."""

    def __init__(self) -> None:
        self.running: dict[str, asyncio.Event] = {}

    def started(self, call: str) -> asyncio.Event:
        return self.running.setdefault(call, asyncio.Event())

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        kind = getattr(update, "session_update", "")
        if kind in ("tool_call", "tool_call_update") and update.status == "in_progress":
            self.started(update.tool_call_id).set()

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="allow_once")
        )


async def run(rounds: int) -> None:
    with ScriptedMessagesServer([]) as api, tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "ws"
        root.mkdir()
        (root / ".agentls.toml").write_text('[toolSearch]\nmode = "never"\n')
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTLS_"))}
        env.update(
            HOME=folder,
            AGENTLS_TRANSCRIPT_DIR=str(Path(folder) / "t"),
            ANTHROPIC_BASE_URL=api.base_url,
            ANTHROPIC_API_KEY="bench",
        )
        client = Client()
        command = [sys.executable, "-m", "agentls", "acp"]
        async with spawn_agent_process(
            lambda agent: client, command[0], *command[1:], env=env, cwd=root
        ) as (conn, _process):
            await conn.initialize(protocol_version=1)
            demo = McpServerStdio(name="demo", command=sys.executable, args=[str(DEMO)], env=[])
            session = (await conn.new_session(cwd=str(root), mcp_servers=[demo])).session_id
            cancels, trips = [], []
            for index in range(rounds):
                began = time.perf_counter()
                await conn.set_session_mode(session_id=session, mode_id="default")
                trips.append(time.perf_counter() - began)
                call = f"toolu_nap_{index}"
                api.extend(tool_turn(("mcp__demo__nap", {"seconds": 30}, call)))
                prompt = asyncio.ensure_future(
                    conn.prompt(
                        session_id=session, prompt=[TextContentBlock(type="text", text="nap")]
                    )
                )
                await client.started(call).wait()
                await asyncio.sleep(0.3)  # the server is napping
                began = time.perf_counter()
                await conn.cancel(session_id=session)
                response = await prompt
                cancels.append(time.perf_counter() - began)
                assert response.stop_reason == "cancelled", response
    median, worst = statistics.median(cancels), max(cancels)
    trip = statistics.median(trips)
    print(f"cancel → prompt answer: median {median * 1000:.1f} ms, max {worst * 1000:.1f} ms")
    print(f"request round trip (session/set_mode): median {trip * 1000:.1f} ms")
    print(f"ratio (median cancel / median round trip): {median / trip:.1f}×")
    print(f"target < 500 ms: {'met' if worst < 0.5 else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(run(args.rounds))


if __name__ == "__main__":
    main()
