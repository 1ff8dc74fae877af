"""Pydantic model → compact JSON Schema for the API's `input_schema`.

`model_json_schema()` emits titles and `$defs`; both cost tokens on every request and the
model gains nothing from them, so titles are dropped and local references are inlined.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from agentls.agent.protocol.messages import JsonObject


def compact_json_schema(model: type[BaseModel]) -> JsonObject:
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    result = _inline(schema, defs if isinstance(defs, dict) else {})
    assert isinstance(result, dict)
    result.setdefault("properties", {})
    return result


def _inline(node: object, defs: Mapping[str, object]) -> object:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            definition = defs[ref.removeprefix("#/$defs/")]
            target = dict(definition) if isinstance(definition, dict) else {}
            extra = {k: v for k, v in node.items() if k != "$ref"}
            return _inline({**target, **extra}, defs)
        return {
            key: _inline(value, defs)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    return node
