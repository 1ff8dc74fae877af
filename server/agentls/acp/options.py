"""A session's config options: the model and the permission mode (ACP `configOptions`).

- `model`: the models the endpoint offers (its Models API, `GET /v1/models`, asked once per
  process in a thread with a short timeout), else the configured model; changing it applies
  to the session's next model request (`set_model`).
- `mode`: the permission modes, the same list as the session modes (`session_modes`).

Both are `select` options; a value that is not offered is refused with a clear error.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from acp.schema import (
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
)

from agentls.acp.mapping import session_modes
from agentls.config.base import PermissionMode

log = logging.getLogger(__name__)

MODELS_TIMEOUT = 5.0
"""Seconds the Models API may take; then the configured model is the only choice."""
MODEL_OPTION = "model"
MODE_OPTION = "mode"
ConfigOption = SessionConfigOptionSelect | SessionConfigOptionBoolean


@dataclass(frozen=True)
class ModelChoice:
    id: str
    name: str


class ModelCatalog:
    """The endpoint's models, asked once (the list does not change during a connection)."""

    def __init__(self) -> None:
        self._found: dict[tuple[str | None, str | None], list[ModelChoice]] = {}
        self._lock = threading.Lock()

    def models(self, configured: str, base_url: str | None, key: str | None) -> list[ModelChoice]:
        """The endpoint's models with the configured one first (it is listed even when the
        endpoint does not know it: a gateway may route names the API does not list)."""
        cache_key = (base_url, key)
        with self._lock:
            found = self._found.get(cache_key)
        if found is None:
            found = _ask_endpoint(base_url, key)
            with self._lock:
                self._found[cache_key] = found
        ids = {m.id for m in found}
        first = [] if configured in ids else [ModelChoice(configured, configured)]
        ordered = sorted(found, key=lambda m: m.id != configured)
        return first + ordered


def _ask_endpoint(base_url: str | None, key: str | None) -> list[ModelChoice]:
    """`GET /v1/models` (all pages); empty when the endpoint has no Models API or fails."""
    if not key:
        return []
    try:
        import anthropic

        client = anthropic.Anthropic(
            api_key=key, base_url=base_url, timeout=MODELS_TIMEOUT, max_retries=0
        )
        try:
            return [
                ModelChoice(m.id, m.display_name or m.id) for m in client.models.list(limit=100)
            ]
        finally:
            client.close()
    except Exception as exc:
        log.info("the endpoint lists no models (%s); offering the configured model", exc)
        return []


def config_options(
    models: Sequence[ModelChoice], model: str, mode: PermissionMode, bypass_enabled: bool
) -> list[ConfigOption]:
    """The session's two select options, with their current values."""
    modes = session_modes(mode, bypass_enabled)
    return [
        SessionConfigOptionSelect(
            type="select",
            id=MODEL_OPTION,
            name="Model",
            description="The model of the session's next request",
            category="model",
            current_value=model,
            options=[SessionConfigSelectOption(value=m.id, name=m.name) for m in models],
        ),
        SessionConfigOptionSelect(
            type="select",
            id=MODE_OPTION,
            name="Permission mode",
            description="What the agent may do without asking",
            category="mode",
            current_value=mode,
            options=[
                SessionConfigSelectOption(value=m.id, name=m.name, description=m.description)
                for m in modes.available_modes
            ],
        ),
    ]
