"""Pydantic model → compact JSON Schema for the API's `input_schema`.

`model_json_schema()` emits titles and `$defs`; both cost tokens on every request and the
model gains nothing from them, so titles are dropped and local references are inlined.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def compact_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    defs: dict[str, Any] = schema.pop("$defs", {})
    result = _inline(schema, defs)
    assert isinstance(result, dict)
    result.setdefault("properties", {})
    return result


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = dict(defs[ref.removeprefix("#/$defs/")])
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
