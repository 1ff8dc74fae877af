"""The JSON Schema of the settings, and the VS Code extension's settings, generated.

    python -m agentls.config.schema            # print the JSON Schema
    python -m agentls.config.schema --write    # update the two committed files
    python -m agentls.config.schema --check    # exit 1 if either is out of date

`docs/settings.schema.json` is the schema of the `agentls` section (also of
`.agentls.toml` and `[tool.agentls]`): editors and TOML tools can validate with it.
`editor-clients/vscode/package.json`'s `contributes.configuration` lists every setting as
`agentls.<key>`, with its type, constraints and description. Only that part of the file is
rewritten; the extension's own settings (`agentls.server.*`, `agentls.trace.*`) are kept.

In VS Code every setting defaults to "not set" (empty text, `null`, an empty list or
object), so the extension sends only what the user set and the server's other layers (the
environment, the project file) still apply; the server's default is in the description.
Settings a project file may not set get `"scope": "machine"` (a repository's
`.vscode/settings.json` cannot set them either), and those that can loosen safety get
`"restricted": true` (ignored in an untrusted workspace).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentls.config.base import META_PREFIX
from agentls.config.docstrings import load_field_docstrings
from agentls.config.model import AgentlsSettings

SCHEMA_FILE = Path("docs/settings.schema.json")
VSCODE_PACKAGE = Path("editor-clients/vscode/package.json")
SCHEMA_ID = "https://github.com/agentls/agentls/blob/main/docs/settings.schema.json"
VSCODE_NAMES = {"baseUrl": "endpoint"}
"""Settings VS Code has always called by another name."""
EXTENSION_OWNED = ("agentls.server.", "agentls.trace.")
"""The extension's own settings (not the server's): kept as they are."""
_UNSET: dict[str, object] = {"string": "", "array": [], "object": {}}


def settings_schema() -> dict[str, object]:
    """The JSON Schema (2020-12) of the `agentls` section."""
    load_field_docstrings()
    generated = AgentlsSettings.model_json_schema(by_alias=True)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "agentls settings",
        **_without_titles(generated),
    }
    return schema


def _without_titles(node: Any) -> Any:
    """pydantic's generated `title`s only repeat the key, and docstrings wrap their lines:
    drop the titles, unwrap the descriptions."""
    if isinstance(node, dict):
        cleaned = {}
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                continue
            if key == "description" and isinstance(value, str):
                value = " ".join(value.split())
            cleaned[key] = _without_titles(value)
        return cleaned
    if isinstance(node, list):
        return [_without_titles(v) for v in node]
    return node


def _without_meta(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_meta(v) for k, v in node.items() if not k.startswith(META_PREFIX)}
    if isinstance(node, list):
        return [_without_meta(v) for v in node]
    return node


def vscode_configuration(existing: dict[str, object] | None = None) -> dict[str, object]:
    """`contributes.configuration`: every setting, then the extension's own from `existing`."""
    schema = settings_schema()
    definitions = _object(schema.get("$defs"))
    properties: dict[str, object] = {}
    for key, prop in _object(schema["properties"]).items():
        name = "agentls." + VSCODE_NAMES.get(key, key)
        properties[name] = _vscode_property(_inline(prop, definitions))
    for name, prop in _object((existing or {}).get("properties")).items():
        if name.startswith(EXTENSION_OWNED):
            properties[name] = prop
    return {"title": "agentls", "properties": properties}


def _object(value: object) -> dict[str, object]:
    """`value` when it is a JSON object, else an empty one (a schema part that is absent)."""
    return value if isinstance(value, dict) else {}


def _inline(node: Any, definitions: dict[str, object]) -> Any:
    """`$ref`s replaced by their definitions (VS Code's settings do not resolve them)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = _object(definitions[ref.rsplit("/", 1)[-1]])
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return _inline({**target, **rest}, definitions)
        return {k: _inline(v, definitions) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, definitions) for v in node]
    return node


def _vscode_property(prop: dict[str, object]) -> dict[str, object]:
    prop = _nullable_as_type(dict(prop))
    meta = {
        k.removeprefix(META_PREFIX): prop.pop(k) for k in list(prop) if k.startswith(META_PREFIX)
    }
    server_default = prop.pop("default", None)
    description = str(prop.pop("description", ""))
    kinds = [k for k in _types(prop) if k != "null"]
    keeps_default = "enum" in prop and server_default is not None
    result: dict[str, object] = {}
    if keeps_default:
        result["default"] = server_default
    elif len(kinds) == 1 and kinds[0] in _UNSET and "enum" not in prop:
        prop["type"] = kinds[0]
        prop.pop("minLength", None)  # empty means "not set"
        result["default"] = _UNSET[kinds[0]]
    else:
        prop["type"] = [k for k in kinds if k != "null"] + ["null"]
        enum, any_of = prop.get("enum"), prop.get("anyOf")
        if isinstance(enum, list) and None not in enum:
            prop["enum"] = [*enum, None]
        if isinstance(any_of, list):
            prop["anyOf"] = [*any_of, {"type": "null"}]
        result["default"] = None
    notes = []
    if server_default not in (None, "", [], {}) and not keeps_default:
        shown = server_default if isinstance(server_default, str) else json.dumps(server_default)
        notes.append(f"Default: `{shown}`.")
    if "env" in meta:
        notes.append(f"Environment: `{meta['env']}`.")
    if meta.get("userOnly"):
        notes.append("User settings only (not a project's).")
    result["markdownDescription"] = " ".join([description, *notes]).strip()
    if meta.get("userOnly"):
        result["scope"] = "machine"
    if meta.get("restricted"):
        result["restricted"] = True
    return _ordered({**_without_meta(prop), **result})


_FIRST = ("type", "enum", "enumDescriptions", "items", "default")
_LAST = ("markdownDescription", "scope", "restricted")


def _ordered(prop: dict[str, object]) -> dict[str, object]:
    """Type and default first, description and scope last (easier to read)."""
    middle = [k for k in prop if k not in _FIRST and k not in _LAST]
    return {k: prop[k] for k in (*_FIRST, *middle, *_LAST) if k in prop}


def _types(prop: dict[str, object]) -> list[str]:
    """The JSON types a property allows (from `type`, else from its `anyOf` options)."""
    kind = prop.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [str(k) for k in kind]
    options = prop.get("anyOf")
    found = (
        [o.get("type") for o in options if isinstance(o, dict)] if isinstance(options, list) else []
    )
    return list(dict.fromkeys(str(k) for k in found if isinstance(k, str)))


def _nullable_as_type(prop: dict[str, object]) -> dict[str, object]:
    """`anyOf: [X, {"type": "null"}]` → X with `"null"` among its types (VS Code's form)."""
    options = prop.get("anyOf")
    if not isinstance(options, list):
        return prop
    others = [o for o in options if o != {"type": "null"}]
    if len(others) != 1 or len(options) != 2:
        return prop
    (inner,) = others
    merged = {k: v for k, v in prop.items() if k != "anyOf"}
    merged.update({k: v for k, v in inner.items() if k not in merged or k == "type"})
    kind = inner.get("type")
    if isinstance(kind, str):
        merged["type"] = [kind, "null"]
    return merged


# --- files ---------------------------------------------------------------------------------


def render_schema() -> str:
    return json.dumps(settings_schema(), indent=2, ensure_ascii=False) + "\n"


def render_package(text: str) -> str:
    """`package.json`'s text with only `contributes.configuration` regenerated."""
    package = json.loads(text)
    existing = package.get("contributes", {}).get("configuration")
    start, end, indent = _configuration_span(text)
    block = _render_configuration(vscode_configuration(existing), indent)
    return text[:start] + block + text[end:]


def _configuration_span(text: str) -> tuple[int, int, str]:
    """Where the value of `contributes.configuration` is in `text`, and its key's indent."""
    contributes = text.index('"contributes"')
    key = text.index('"configuration"', contributes)
    start = text.index("{", key)
    line_start = text.rfind("\n", 0, key) + 1
    return start, _matching_brace(text, start) + 1, text[line_start:key]


def _matching_brace(text: str, start: int) -> int:
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index
    raise ValueError("unbalanced braces in package.json")


def _render_configuration(configuration: dict[str, object], indent: str) -> str:
    """The file's style: one line per setting; a setting with nested settings expanded."""
    inner, deeper = indent + "  ", indent + "    "
    lines = []
    for name, prop in _object(configuration["properties"]).items():
        one_line = _compact(prop)
        if isinstance(prop, dict) and ("properties" in prop or "additionalProperties" in prop):
            nested = json.dumps(prop, indent=2, ensure_ascii=False).replace("\n", "\n" + deeper)
            lines.append(f"{deeper}{json.dumps(name)}: {nested}")
        else:
            lines.append(f"{deeper}{json.dumps(name)}: {one_line}")
    title = json.dumps(configuration["title"])
    body = ",\n".join(lines)
    return f'{{\n{inner}"title": {title},\n{inner}"properties": {{\n{body}\n{inner}}}\n{indent}}}'


def _compact(value: Any) -> str:
    """`{ "type": "string", "enum": ["a", "b"] }`, as the file is written."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = ", ".join(f"{json.dumps(k)}: {_compact(v)}" for k, v in value.items())
        return "{ " + items + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_compact(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def outdated(root: Path) -> list[Path]:
    """The generated files under `root` that differ from what the model generates."""
    stale = []
    schema_file = root / SCHEMA_FILE
    if not schema_file.is_file() or schema_file.read_text(encoding="utf-8") != render_schema():
        stale.append(SCHEMA_FILE)
    package = root / VSCODE_PACKAGE
    if package.is_file():
        text = package.read_text(encoding="utf-8")
        if render_package(text) != text:
            stale.append(VSCODE_PACKAGE)
    return stale


def write(root: Path) -> None:
    (root / SCHEMA_FILE).write_text(render_schema(), encoding="utf-8")
    package = root / VSCODE_PACKAGE
    package.write_text(render_package(package.read_text(encoding="utf-8")), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentls.config.schema")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository root")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="update the generated files")
    action.add_argument("--check", action="store_true", help="exit 1 if they are out of date")
    args = parser.parse_args(argv)
    if args.write:
        write(args.root)
        return 0
    if args.check:
        stale = outdated(args.root)
        for path in stale:
            sys.stderr.write(
                f"{path} is out of date: run python -m agentls.config.schema --write\n"
            )
        return 1 if stale else 0
    sys.stdout.write(render_schema())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
