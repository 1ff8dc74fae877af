"""The settings fields' descriptions, read from their attribute docstrings on demand.

Only the JSON Schema (and the editors' settings UI generated from it) shows a field's
description. pydantic's `use_attribute_docstrings` reads them at import instead: it finds,
tokenizes and parses each model's source, a quarter of the settings' import time, which
every `agentls serve` and `agentls tool` paid before its first tool call (issue 33), and
keeps the source lines cached. `load_field_docstrings` does the same work for the schema
generator only, giving the same descriptions through pydantic's own extraction.
"""

from __future__ import annotations

from pydantic import BaseModel
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

from agentls.config.base import SettingsModel

_loaded = False


def load_field_docstrings() -> None:
    """Give every settings field without a description its attribute docstring (the nearest
    class in its MRO that documents it), then rebuild the models so their JSON Schema shows
    them. Idempotent."""
    global _loaded
    if _loaded:
        return
    models = _settings_models()
    for model in models:
        docs: dict[str, str] = {}
        for klass in reversed(model.__mro__):
            if issubclass(klass, BaseModel) and klass not in (BaseModel, SettingsModel):
                docs.update(extract_docstrings_from_cls(klass, use_inspect=True))
        for name, info in model.model_fields.items():
            if info.description is None and name in docs:
                info.description = docs[name]
    _rebuild_until_stable(models)
    _loaded = True


def _settings_models() -> list[type[SettingsModel]]:
    found: list[type[SettingsModel]] = []
    pending = list(SettingsModel.__subclasses__())
    while pending:
        model = pending.pop(0)
        if model not in found:
            found.append(model)
            pending.extend(model.__subclasses__())
    return found


def _rebuild_until_stable(models: list[type[SettingsModel]]) -> None:
    """A model's schema embeds its field models' schemas as they were built: rebuild every
    model until no schema changes (once per level of nesting)."""
    before = [m.model_json_schema() for m in models]
    for _ in range(len(models)):
        for model in models:
            model.model_rebuild(force=True)
        after = [m.model_json_schema() for m in models]
        if after == before:
            return
        before = after
