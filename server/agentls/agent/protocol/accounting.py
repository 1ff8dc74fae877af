"""Usage and cost of a session and of its current run, each response counted once.

Every model response (a turn, or a compaction's summary request) goes through
`Accounting.charge`: its cost is computed there, once, and added to the session's totals
and to the running run's totals. Nothing else adds tokens or cost, so the two can never
disagree. A response with no known price (see `agentls.agent.protocol.pricing`) makes the totals it
joins `None` ("n/a") with a note: a partial sum would understate the cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from agentls.agent.protocol.pricing import CostEstimate, PriceTable
from agentls.agent.protocol.usage import Usage


class UsagePayload(TypedDict):
    """`usage` in run results and status: token counts plus cost (`null` = no known price)."""

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    cost_usd: float | None
    cost_note: NotRequired[str]
    """Why `cost_usd` is null (no known price for this model or endpoint)."""


@dataclass
class Tally:
    """Tokens and cost summed over some responses."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    cost_note: str | None = None

    def add(self, usage: Usage, cost: CostEstimate) -> None:
        self.usage.add(usage)
        if cost.usd is None:
            self.cost_usd, self.cost_note = None, cost.note
        elif self.cost_usd is not None:
            self.cost_usd = round(self.cost_usd + cost.usd, 6)

    def payload(self) -> UsagePayload:
        counts = self.usage
        result: UsagePayload = {
            "input_tokens": counts.input_tokens,
            "output_tokens": counts.output_tokens,
            "cache_read_input_tokens": counts.cache_read_input_tokens,
            "cache_creation_input_tokens": counts.cache_creation_input_tokens,
            "cost_usd": self.cost_usd,
        }
        if self.cost_note:
            result["cost_note"] = self.cost_note
        return result


class Accounting:
    """The session's tally and, while a run is going, the run's own."""

    def __init__(
        self, prices: PriceTable, default_model: str, parent: Accounting | None = None
    ) -> None:
        self.prices = prices
        self.default_model = default_model
        self.session = Tally()
        self.run: Tally | None = None
        self.parent = parent
        """A sub-agent's accounting rolls up into its parent session's: every response it
        charges is added there too, with the cost computed here (its own model's price)."""

    def start_run(self) -> Tally:
        self.run = Tally()
        return self.run

    def end_run(self) -> Tally:
        """The finished run's tally (empty if none was started)."""
        run, self.run = self.run or Tally(), None
        return run

    def charge(self, model: str, usage: Usage) -> CostEstimate:
        """Count one response (priced by the model that answered, else the configured one)."""
        cost = self.prices.cost(model or self.default_model, usage)
        self.add(usage, cost)
        return cost

    def add(self, usage: Usage, cost: CostEstimate) -> None:
        """Count a response priced already (here, and in the parent's accounting)."""
        self.session.add(usage, cost)
        if self.run is not None:
            self.run.add(usage, cost)
        if self.parent is not None:
            self.parent.add(usage, cost)
