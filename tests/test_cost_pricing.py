"""Token cost accounting: the price table, overrides, and cost in results and status."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.protocol.pricing import ModelPrice, PriceTable, parse_prices
from agentls.agent.protocol.usage import Usage
from agentls.agent.settings import AgentSettings, ConfigError
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.agent_support import make_session

USAGE = {
    "input_tokens": 1000,
    "output_tokens": 500,
    "cache_read_input_tokens": 2000,
    "cache_creation_input_tokens": 100,
}
SONNET_COST = (1000 * 3 + 500 * 15 + 2000 * 0.3 + 100 * 3.75) / 1e6  # 0.011475


def test_prices_match_model_families_by_longest_prefix() -> None:
    table = PriceTable()
    assert table.lookup("claude-sonnet-4-5-20250929") == ModelPrice(3, 15, 0.3, 3.75)
    assert table.lookup("claude-3-7-sonnet-latest") == ModelPrice(3, 15, 0.3, 3.75)
    assert table.lookup("claude-opus-4-1-20250805") == ModelPrice(15, 75, 1.5, 18.75)
    assert table.lookup("claude-opus-4-5") == ModelPrice(5, 25, 0.5, 6.25)
    assert table.lookup("claude-haiku-4-5") == ModelPrice(1, 5, 0.1, 1.25)
    assert table.lookup("claude-3-5-haiku-latest") == ModelPrice(0.8, 4, 0.08, 1.0)
    assert table.lookup("llama3.2") is None
    cost = table.cost("claude-sonnet-4-5", Usage(**USAGE))
    assert cost.usd == pytest.approx(SONNET_COST)
    assert cost.note is None
    unknown = table.cost("qwen2.5-coder", Usage(**USAGE))
    assert unknown.usd is None
    assert unknown.note
    assert "AGENTLS_PRICES" in unknown.note


def test_price_overrides_from_env_and_errors() -> None:
    settings = AgentSettings.from_env(
        {
            "AGENTLS_PRICES": '{"qwen": [0.5, 1], "claude-sonnet-": '
            '{"input": 2, "output": 10, "cache_read": 0.2, "cache_write": 2.5}}'
        }
    )
    table = PriceTable(settings.prices)
    assert table.lookup("qwen2.5-coder") == ModelPrice(0.5, 1.0, 0.05, 0.625)
    assert table.lookup("claude-sonnet-4-5") == ModelPrice(2, 10, 0.2, 2.5)
    assert parse_prices({"x": [1, 2, 3, 4]})["x"] == ModelPrice(1, 2, 3, 4)
    with pytest.raises(ConfigError, match="AGENTLS_PRICES"):
        AgentSettings.from_env({"AGENTLS_PRICES": "{not json"})
    with pytest.raises(ConfigError, match="non-negative"):
        AgentSettings.from_env({"AGENTLS_PRICES": '{"m": {"input": -1, "output": 1}}'})
    with pytest.raises(ConfigError, match="must be"):
        AgentSettings.from_env({"AGENTLS_PRICES": '{"m": "cheap"}'})


async def test_run_result_and_status_carry_cost_for_a_known_model(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(
        tool_turn(("probe_read", {"label": "a"}), usage=USAGE),
        text_turn("done", usage=USAGE),
        text_turn("again", usage=USAGE),
    )
    # the default model, a Sonnet; the scripted endpoint is not Anthropic's, so its price
    # is configured (the built-in table applies to api.anthropic.com only)
    session = make_session(api, tmp_path, prices={"claude-sonnet-": [3, 15]})
    first = await session.run("go")
    usage = first.to_dict()["usage"]
    assert usage["cost_usd"] == pytest.approx(2 * SONNET_COST)
    assert usage["input_tokens"] == 2000
    assert "cost_note" not in usage
    second = await session.run("more")
    assert second.to_dict()["usage"]["cost_usd"] == pytest.approx(SONNET_COST)
    status = session.status_dict()
    assert status["usage"]["cost_usd"] == pytest.approx(3 * SONNET_COST)
    assert status["usage"]["output_tokens"] == 1500
    assert status["context"]["window"] == 200_000
    assert status["context"]["last_input_tokens"]


async def test_unknown_model_has_no_cost_but_a_note(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("hi", usage=USAGE))
    session = make_session(api, tmp_path, model="my-local-llm")
    result = await session.run("go")
    usage = result.to_dict()["usage"]
    assert usage["cost_usd"] is None
    assert "my-local-llm" in usage["cost_note"]
    assert usage["input_tokens"] == 1000  # tokens are still counted
    assert session.status_dict()["usage"]["cost_usd"] is None


def test_only_anthropics_endpoint_gets_the_built_in_prices() -> None:
    usage = Usage(**USAGE)
    for anthropic_endpoint in (None, "https://api.anthropic.com", "https://api.anthropic.com/"):
        assert PriceTable(endpoint=anthropic_endpoint).cost("claude-sonnet-4-5", usage).usd
    for other in ("http://127.0.0.1:8080", "http://localhost:11434", "https://litellm.corp"):
        cost = PriceTable(endpoint=other).cost("claude-sonnet-4-5", usage)
        assert cost.usd is None
        assert cost.note
        assert other in cost.note
        assert "AGENTLS_PRICES" in cost.note
    configured = PriceTable({"claude-sonnet-": ModelPrice.of(3, 15)}, "http://localhost:11434")
    assert configured.cost("claude-sonnet-4-5", usage).usd == pytest.approx(SONNET_COST)


async def test_a_scripted_endpoint_shows_cost_na_not_sonnet_prices(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    api.extend(text_turn("hi", usage=USAGE))
    session = make_session(api, tmp_path)  # the default model is a Sonnet
    result = await session.run("go")
    usage = result.to_dict()["usage"]
    assert usage["cost_usd"] is None
    assert api.base_url in usage.get("cost_note", "")
    assert usage["input_tokens"] == 1000
    status = session.status_dict()["usage"]
    assert status["cost_usd"] is None
    assert "cost_note" in status
