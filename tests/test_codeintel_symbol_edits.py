"""Issue 31, Do 2: `call_hierarchy` and the symbol-level edits (`replace_symbol_body`,
`insert_before_symbol`, `insert_after_symbol`, `safe_delete_symbol`) through `agentls serve`
with real basedpyright, and the tree-sitter outline when no server covers the file.

The edits are staged: the tests read the session's text back with read_file and check the
file on disk is untouched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.codeintel_support import basedpyright_langserver, tool_input, write_tree
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

PYRIGHT = "language server (basedpyright)"
BILLING = {
    "billing/__init__.py": "",
    "billing/models.py": """
        def tax(amount: float) -> float:
            return amount * 0.2


        def total(amount: float) -> float:
            return amount + tax(amount)


        class Invoice:
            def due(self) -> float:
                return total(10.0)

            def label(self) -> str:
                return "invoice"
        """,
    "billing/checkout.py": """
        from billing.models import total


        def pay(amount: float) -> float:
            return total(amount)


        def unused() -> int:
            return 1
        """,
    "billing/cache.py": """
        import functools


        @functools.cache
        def cached() -> int:
            return 1
        """,
    "scripts/tool.rb": """
        def helper
          1
        end

        def main
          2
        end
        """,
}


async def tool(editor: FakeEditor, name: str, input: dict[str, Any]) -> tuple[str, bool]:
    result = await command(editor, "agentls.tool", {"name": name, "input": input})
    return str(result["content"]), bool(result["is_error"])


async def staged_text(editor: FakeEditor, path: str) -> str:
    content, is_error = await tool(editor, "read_file", {"path": path})
    assert not is_error, content
    return content


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def billing(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FakeEditor]:
    basedpyright_langserver()
    root = tmp_path_factory.mktemp("billing")
    write_tree(root, BILLING)
    env = server_env(None, tmp_path_factory.mktemp("transcripts"))
    async with editor_session("neovim", root, env) as editor:
        yield editor


async def reject(editor: FakeEditor) -> None:
    await command(editor, "agentls.reject", {"session": "tool"})


async def test_incoming_calls_two_levels(billing: FakeEditor) -> None:
    content, is_error = await tool(
        billing,
        "call_hierarchy",
        {**tool_input("billing/models.py", 1, "tax"), "direction": "incoming", "depth": 2},
    )
    assert not is_error, content
    assert f"source: {PYRIGHT}" in content
    assert "Incoming calls of `tax` (function) at billing/models.py:1" in content
    assert "- `total` (function) at billing/models.py:5" in content
    assert "called from billing/models.py:6: return amount + tax(amount)" in content
    # the second level: who calls `total` (in another file, and a method)
    assert "  - `pay` (function) at billing/checkout.py:4" in content
    assert "called from billing/checkout.py:5: return total(amount)" in content
    assert "  - `due` (function) at billing/models.py:10" in content  # pyright: a function


async def test_outgoing_calls(billing: FakeEditor) -> None:
    content, is_error = await tool(
        billing,
        "call_hierarchy",
        {**tool_input("billing/checkout.py", 4, "pay"), "direction": "outgoing"},
    )
    assert not is_error, content
    assert "Outgoing calls of `pay`" in content
    assert "- `total` (function) at billing/models.py:5" in content
    assert "called at billing/checkout.py:5: return total(amount)" in content
    assert "tax" not in content  # depth 1 stops at `total`


async def test_replace_symbol_body_is_staged(billing: FakeEditor) -> None:
    on_disk = (billing.root / "billing" / "models.py").read_bytes()
    body = "def label(self) -> str:\n    return 'bill'\n"  # first line not indented
    content, is_error = await tool(
        billing,
        "replace_symbol_body",
        {**tool_input("billing/models.py", 13, "label"), "body": body},
    )
    assert not is_error, content
    assert f"Replaced `label` (lines 13-14) with 2 lines (range from {PYRIGHT}" in content
    text = await staged_text(billing, "billing/models.py")
    assert "13\t    def label(self) -> str:\n" in text  # indented like the old method
    assert "return 'bill'" in text
    assert '"invoice"' not in text
    assert "def due(self)" in text  # the sibling method is untouched
    assert (billing.root / "billing" / "models.py").read_bytes() == on_disk
    await reject(billing)


async def test_insert_before_and_after_a_symbol(billing: FakeEditor) -> None:
    content, is_error = await tool(
        billing,
        "insert_after_symbol",
        {
            **tool_input("billing/models.py", 1, "tax"),
            "text": "\n\ndef fee() -> float:\n    return 1.0",
        },
    )
    assert not is_error, content
    content, is_error = await tool(
        billing,
        "insert_before_symbol",
        {**tool_input("billing/models.py", 1, "tax"), "text": "RATE = 0.2\n\n"},
    )
    assert not is_error, content
    text = await staged_text(billing, "billing/models.py")
    order = [text.index(s) for s in ("RATE = 0.2", "def tax(", "return amount * 0.2", "def fee(")]
    assert order == sorted(order), text
    assert "1\tRATE = 0.2\n     2\t\n     3\tdef tax(" in text  # its blank line kept
    assert "4\t    return amount * 0.2\n     5\t\n     6\t\n     7\tdef fee(" in text
    await reject(billing)


async def test_safe_delete_refuses_while_referenced(billing: FakeEditor) -> None:
    content, is_error = await tool(
        billing, "safe_delete_symbol", tool_input("billing/models.py", 5, "total")
    )
    assert is_error, content
    assert "Not deleted: `total` is still used in" in content
    assert "billing/checkout.py:5" in content
    assert "billing/models.py:11" in content
    text = await staged_text(billing, "billing/models.py")
    assert "def total(" in text


async def test_safe_delete_of_an_unused_function(billing: FakeEditor) -> None:
    content, is_error = await tool(
        billing, "safe_delete_symbol", tool_input("billing/checkout.py", 8, "unused")
    )
    assert not is_error, content
    assert "Deleted `unused`" in content
    text = await staged_text(billing, "billing/checkout.py")
    assert "unused" not in text
    assert "def pay(" in text
    await reject(billing)


async def test_not_a_definition_lists_the_definitions(billing: FakeEditor) -> None:
    content, is_error = await tool(
        billing,
        "replace_symbol_body",
        {**tool_input("billing/models.py", 6, "tax"), "body": "x = 1"},
    )
    assert is_error
    assert "is not where a definition is named" in content
    assert "`total` (line 5)" in content


async def test_without_a_server_the_outline_gives_the_range(billing: FakeEditor) -> None:
    content, is_error = await tool(
        billing,
        "replace_symbol_body",
        {**tool_input("scripts/tool.rb", 1, "helper"), "body": "def helper\n  3\nend"},
    )
    assert not is_error, content
    assert "range from index (tree-sitter outline)" in content
    text = await staged_text(billing, "scripts/tool.rb")
    assert "2\t  3\n" in text
    assert "\t  1\n" not in text
    assert "def main" in text
    await reject(billing)


async def test_call_hierarchy_needs_a_server(billing: FakeEditor) -> None:
    content, is_error = await tool(
        billing,
        "call_hierarchy",
        {**tool_input("scripts/tool.rb", 1, "helper"), "direction": "incoming"},
    )
    assert is_error
    assert "none answered for scripts/tool.rb" in content


async def test_a_decorated_definition_is_replaced_with_its_decorators(billing: FakeEditor) -> None:
    body = "@functools.cache\ndef cached() -> int:\n    return 2"
    content, is_error = await tool(
        billing,
        "replace_symbol_body",
        {**tool_input("billing/cache.py", 5, "cached"), "body": body},
    )
    assert not is_error, content
    text = await staged_text(billing, "billing/cache.py")
    assert text.count("@functools.cache") == 1, text
    assert "return 2" in text
    await reject(billing)
