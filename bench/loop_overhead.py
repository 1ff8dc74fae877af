"""Loop overhead: one tool round trip through the agent loop vs a bare SDK stream.

Both sides stream the same scripted responses from the same local Messages-API server in
the same run; the loop adds request building, orchestration, the pipeline, events and the
transcript. Prints the per-round-trip times and the ratio (target: loop ≤ 1.10× bare).

    python bench/loop_overhead.py [--rounds 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anthropic

from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.agent.run.model_client import AnthropicModelClient
from agentls.agent.run.session import AgentSession, SessionConfig
from agentls.agent.settings import AgentSettings
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.workspace import Workspace


class NoopInput(ToolInput):
    n: int = 0


class Noop(Tool[NoopInput]):
    name = "noop"
    usage = "Does nothing."
    input_model = NoopInput

    def is_read_only(self, input: NoopInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: NoopInput) -> bool:
        return True

    async def call(self, input: NoopInput, ctx: ToolContext) -> str:
        return "ok"


def scenario(rounds: int) -> list[Any]:
    return [*(tool_turn(("noop", {"n": i})) for i in range(rounds)), text_turn("done")]


async def through_loop(rounds: int, folder: Path) -> float:
    with ScriptedMessagesServer(scenario(rounds)) as server:
        settings = AgentSettings(api_key="bench", base_url=server.base_url, max_turns=rounds + 5)
        config = SessionConfig(settings, Workspace([folder]), tools=[Noop()], transcript_dir=folder)
        session = AgentSession(AnthropicModelClient(settings), config)
        started = time.perf_counter()
        result = await session.run("go")
        elapsed = time.perf_counter() - started
        assert result.status == "completed", result
        await session.client.close()
    return elapsed / (rounds + 1)


async def bare_sdk(rounds: int) -> float:
    """The same responses, streamed by the SDK with a growing history, nothing else."""
    with ScriptedMessagesServer(scenario(rounds)) as server:
        client = anthropic.AsyncAnthropic(api_key="bench", base_url=server.base_url, max_retries=0)
        tools = [
            {"name": "noop", "description": "Does nothing.", "input_schema": {"type": "object"}}
        ]
        messages: list[Any] = [{"role": "user", "content": "go"}]
        started = time.perf_counter()
        for _ in range(rounds + 1):
            async with client.messages.stream(
                model="claude-sonnet-5-5",
                max_tokens=1024,
                messages=messages,
                tools=tools,  # type: ignore[arg-type]
            ) as stream:
                async for _event in stream:
                    pass
                message = await stream.get_final_message()
            messages.append({"role": "assistant", "content": message.to_param()["content"]})
            uses = [b for b in message.content if b.type == "tool_use"]
            if uses:
                messages.append(
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": u.id, "content": "ok"}
                            for u in uses
                        ],
                    }
                )
        elapsed = time.perf_counter() - started
        await client.close()
    return elapsed / (rounds + 1)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    loop_times, bare_times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        await bare_sdk(10)  # warm-up: imports, connection pool
        for _ in range(args.repeats):
            bare_times.append(await bare_sdk(args.rounds))
            loop_times.append(await through_loop(args.rounds, Path(tmp)))
    bare, loop = statistics.median(bare_times), statistics.median(loop_times)
    print(f"bare SDK round trip : {bare * 1000:7.2f} ms")
    print(f"agent loop round trip: {loop * 1000:7.2f} ms")
    print(f"ratio loop/bare      : {loop / bare:7.3f}  (target ≤ 1.10)")


if __name__ == "__main__":
    asyncio.run(main())
