"""Run one turn's tool calls: parallel where safe, serial otherwise, results in model order.

Consecutive concurrency-safe calls form one batch that runs in parallel (at most
`MAX_PARALLEL` at once); any other call is a batch of its own. A cancelled run stops
starting calls, cancels the running ones, and still returns one result per call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Sequence
from typing import Any

from agentls.agent.framework.context import ToolContext
from agentls.agent.run.pipeline import Pipeline, ToolCall, ToolCallResult, cancelled_result

log = logging.getLogger(__name__)

MAX_PARALLEL = 10


def partition(calls: Sequence[ToolCall], pipeline: Pipeline) -> list[list[int]]:
    """Indices of calls grouped into batches; unparseable input counts as unsafe."""
    batches: list[list[int]] = []
    safe_run: list[int] = []
    for index, call in enumerate(calls):
        parsed = pipeline.parse(call)
        if parsed is not None and parsed[0].is_concurrency_safe(parsed[1]):
            safe_run.append(index)
            continue
        if safe_run:
            batches.append(safe_run)
            safe_run = []
        batches.append([index])
    if safe_run:
        batches.append(safe_run)
    return batches


async def run_tool_calls(
    calls: Sequence[ToolCall], pipeline: Pipeline, ctx: ToolContext
) -> list[ToolCallResult]:
    results: list[ToolCallResult | None] = [None] * len(calls)
    limiter = asyncio.Semaphore(MAX_PARALLEL)

    async def run_one(index: int) -> None:
        async with limiter:
            try:
                results[index] = await pipeline.execute(calls[index], ctx)
            except Exception as exc:  # a pipeline bug must not cost the siblings' results
                log.exception("pipeline failed for %s", calls[index].name)
                results[index] = ToolCallResult(
                    calls[index].id, f"Internal error running {calls[index].name}: {exc}", True
                )

    for batch in partition(calls, pipeline):
        if ctx.cancelled.is_set():
            break
        await _run_batch([run_one(i) for i in batch], ctx.cancelled)
    return [
        r if r is not None else cancelled_result(c) for r, c in zip(results, calls, strict=True)
    ]


async def _run_batch(coros: list[Coroutine[Any, Any, None]], cancelled: asyncio.Event) -> None:
    """Run coroutines together; on cancel, stop them all and return promptly."""
    tasks = [asyncio.create_task(c) for c in coros]
    cancel_wait = asyncio.create_task(cancelled.wait())
    try:
        pending: set[asyncio.Future[Any]] = set(tasks)
        while pending and not cancelled.is_set():
            _, pending = await asyncio.wait(
                pending | {cancel_wait}, return_when=asyncio.FIRST_COMPLETED
            )
            pending.discard(cancel_wait)
    finally:
        cancel_wait.cancel()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
