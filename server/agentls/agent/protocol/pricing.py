"""Model prices (USD per million tokens) and the cost of a `Usage`.

Prices are matched by the longest model-name prefix, so dated or point releases
(`claude-sonnet-4-5-20250929`) find their family. Unknown models cost `None` with a note
rather than a guess. Override or extend the table with `AGENTLS_PRICES`, a JSON object of
prefix → `{"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}` (or a
four-number list in that order); `cache_read`/`cache_write` default to 0.1× / 1.25× input.

The built-in table is Anthropic's list price, so it applies only to Anthropic's own endpoint
(no `ANTHROPIC_BASE_URL`, or one on `anthropic.com`). Any other endpoint — a local model, a
proxy, the scripted test server — has no known price unless `AGENTLS_PRICES` gives one: its
cost is `None` ("n/a") with a note, never a Sonnet figure it may not charge.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from pydantic import ValidationError

from agentls.agent.protocol.usage import Usage
from agentls.config import PriceSetting, describe_validation_error

PER_MILLION = 1_000_000


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    @classmethod
    def of(cls, input: float, output: float) -> ModelPrice:
        """Anthropic's usual ratios: cache reads 0.1×, 5-minute cache writes 1.25× input."""
        return cls(input, output, round(input * 0.1, 6), round(input * 1.25, 6))

    @classmethod
    def from_setting(cls, setting: PriceSetting) -> ModelPrice:
        """A validated price setting; cache prices default to Anthropic's ratios."""
        base = cls.of(setting.input, setting.output)
        return cls(
            base.input,
            base.output,
            base.cache_read if setting.cache_read is None else setting.cache_read,
            base.cache_write if setting.cache_write is None else setting.cache_write,
        )

    def cost(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_input_tokens * self.cache_read
            + usage.cache_creation_input_tokens * self.cache_write
        ) / PER_MILLION

    def to_dict(self) -> dict[str, float]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
        }


DEFAULT_PRICES: dict[str, ModelPrice] = {
    # Opus: 4.5 and later are priced lower than Opus 4 / 4.1 / 3.
    "claude-opus-": ModelPrice.of(5.0, 25.0),
    "claude-opus-4-": ModelPrice.of(15.0, 75.0),
    "claude-opus-4-5": ModelPrice.of(5.0, 25.0),
    "claude-opus-4-6": ModelPrice.of(5.0, 25.0),
    "claude-opus-4-1": ModelPrice.of(15.0, 75.0),
    "claude-opus-4-0": ModelPrice.of(15.0, 75.0),
    "claude-opus-4-2025": ModelPrice.of(15.0, 75.0),
    "claude-3-opus": ModelPrice.of(15.0, 75.0),
    # Sonnet: every release so far.
    "claude-sonnet-": ModelPrice.of(3.0, 15.0),
    "claude-3-7-sonnet": ModelPrice.of(3.0, 15.0),
    "claude-3-5-sonnet": ModelPrice.of(3.0, 15.0),
    # Haiku.
    "claude-haiku-": ModelPrice.of(1.0, 5.0),
    "claude-3-5-haiku": ModelPrice.of(0.8, 4.0),
    "claude-3-haiku": ModelPrice(0.25, 1.25, 0.03, 0.3),
}
"""Prefix → price. Longest prefix wins, so specific releases override their family."""


@dataclass(frozen=True)
class CostEstimate:
    usd: float | None
    note: str | None = None


def is_anthropic_endpoint(base_url: str | None) -> bool:
    """Whether the built-in (Anthropic list) prices apply to requests sent to `base_url`."""
    if not base_url:
        return True
    host = (urlparse(base_url).hostname or "").lower()
    return host == "anthropic.com" or host.endswith(".anthropic.com")


class PriceTable:
    """Prices by model prefix; `endpoint` decides whether the built-in table applies."""

    def __init__(
        self,
        overrides: Mapping[str, ModelPrice | PriceSetting] | None = None,
        endpoint: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.builtin = is_anthropic_endpoint(endpoint)
        base = DEFAULT_PRICES if self.builtin else {}
        extra = {
            prefix: price if isinstance(price, ModelPrice) else ModelPrice.from_setting(price)
            for prefix, price in (overrides or {}).items()
        }
        self.prices: dict[str, ModelPrice] = {**base, **extra}

    def lookup(self, model: str) -> ModelPrice | None:
        name = model.strip().lower()
        best = max((p for p in self.prices if name.startswith(p.lower())), key=len, default=None)
        return self.prices[best] if best is not None else None

    def cost(self, model: str, usage: Usage) -> CostEstimate:
        price = self.lookup(model)
        if price is None:
            return CostEstimate(None, self._unknown(model))
        return CostEstimate(round(price.cost(usage), 6))

    def _unknown(self, model: str) -> str:
        example = '(e.g. {"' + model + '": {"input": 3, "output": 15}})'
        if self.builtin:
            return f"no price known for model {model!r}; add it with AGENTLS_PRICES {example}"
        return (
            f"no price known for model {model!r} at {self.endpoint} (the built-in prices are "
            f"Anthropic's, for its own API); set AGENTLS_PRICES to count cost here {example}"
        )


def parse_prices(raw: str | Mapping[str, Any]) -> dict[str, ModelPrice]:
    """`AGENTLS_PRICES` (JSON text) or an already-parsed mapping; `ValueError` if malformed."""
    data: Any = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(data, Mapping):
        raise ValueError("prices must be a JSON object of model prefix → price")
    result: dict[str, ModelPrice] = {}
    for prefix, value in data.items():
        try:
            setting = PriceSetting.model_validate(value)
        except ValidationError as exc:
            raise ValueError(f"price for {prefix!r}: {describe_validation_error(exc)}") from None
        result[str(prefix)] = ModelPrice.from_setting(setting)
    return result
