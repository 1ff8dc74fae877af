"""The file tools' contract: names, inputs, flags, usage text, summaries, layering rule."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import agentls
from agentls.agent.framework.registry import ToolPool
from agentls.tools import builtin_tools

EXPECTED_INPUTS = {
    "read_file": {"path", "offset", "limit"},
    "list_files": {"path", "pattern"},
    "grep": {"pattern", "path", "glob", "ignore_case", "context", "output", "max_results"},
    "edit_file": {"path", "old_string", "new_string", "replace_all"},
    "write_file": {"path", "content"},
    "rename_file": {"path", "new_path"},
    "delete_file": {"path"},
}
READ_ONLY = {"read_file", "list_files", "grep"}


def _by_name() -> dict[str, Any]:
    return {tool.name: tool for tool in builtin_tools()}


def test_builtin_tools_have_the_contracted_inputs() -> None:
    tools = _by_name()
    assert set(EXPECTED_INPUTS) <= set(tools)
    for name, fields in EXPECTED_INPUTS.items():
        schema = tools[name].input_schema()
        assert set(schema["properties"]) == fields, name
    assert set(tools["grep"].input_schema()["required"]) == {"pattern"}
    assert set(tools["edit_file"].input_schema()["required"]) == {
        "path",
        "old_string",
        "new_string",
    }


def test_read_only_and_parallel_flags() -> None:
    tools = _by_name()
    for name in EXPECTED_INPUTS:
        tool = tools[name]
        parsed = tool.parse_input(_minimal_input(name))
        assert tool.is_read_only(parsed) is (name in READ_ONLY), name
        assert tool.is_read_only(None) is (name in READ_ONLY), name
        assert tool.is_concurrency_safe(parsed) is (name in READ_ONLY), name


def test_usage_text_and_summaries() -> None:
    tools = _by_name()
    for name in EXPECTED_INPUTS:
        usage = tools[name].description()
        assert "Example:" in usage, name
        assert len(usage) > 300, name
    read = tools["read_file"]
    assert read.summary(read.parse_input({"path": "server/app.py"})) == "Reading server/app.py"
    edit = tools["edit_file"]
    assert edit.summary(edit.parse_input(_minimal_input("edit_file"))) == "Editing a.py"


def test_plan_mode_pool_keeps_only_read_tools() -> None:
    from agentls.agent.framework.registry import PoolFilter

    pool = ToolPool.assemble(builtin_tools(), pool_filter=PoolFilter(read_only=True))
    assert set(pool.names) & set(EXPECTED_INPUTS) == READ_ONLY


_EDITOR_IMPORT = re.compile(r"^\s*(?:from|import)\s+(?:pygls|lsprotocol)\b", re.MULTILINE)


@pytest.mark.parametrize("package", ["workspace", "tools"])
def test_core_layers_do_not_import_editor_libraries(package: str) -> None:
    folder = Path(agentls.__file__).parent / package
    offenders = [
        str(source)
        for source in folder.rglob("*.py")
        if _EDITOR_IMPORT.search(source.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def _minimal_input(name: str) -> dict[str, Any]:
    return {
        "read_file": {"path": "a.py"},
        "list_files": {},
        "grep": {"pattern": "x"},
        "edit_file": {"path": "a.py", "old_string": "a", "new_string": "b"},
        "write_file": {"path": "a.py", "content": ""},
        "rename_file": {"path": "a.py", "new_path": "b.py"},
        "delete_file": {"path": "a.py"},
    }[name]
