"""Answers an agent can trust (issue 31): where basedpyright cannot resolve a call (an
untyped parameter, an override's `super()` call), `find_references` lists it as an
unconfirmed match with a count, and `rename_symbol` refuses to leave it unchanged unless
`force` is passed.

Real basedpyright over `agentls serve` (stdio).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from tests.codeintel_support import (
    basedpyright_langserver,
    reference_lines,
    tool_input,
    write_tree,
)
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

DYNAMIC = {
    "store/__init__.py": "",
    "store/models.py": """
        class Store:
            def refresh(self) -> None:
                pass


        class Cached(Store):
            def refresh(self) -> None:
                super().refresh()
        """,
    "store/jobs.py": """
        from store.models import Store


        def typed(s: Store) -> None:
            s.refresh()


        def untyped(obj):
            obj.refresh()


        def each(items):
            for item in items:
                item.refresh()
        """,
    "store/other.py": """
        def refresh():  # a module function of the same name: someone else
            return 1


        refresh()
        # obj.refresh() in a comment never counts
        """,
}
TRUE_USES = {
    ("store/models.py", 2),
    ("store/models.py", 7),
    ("store/models.py", 8),
    ("store/jobs.py", 5),
    ("store/jobs.py", 9),
    ("store/jobs.py", 14),
}
"""Every line that defines, overrides or calls `Store.refresh` (the override included)."""
UNTYPED = {("store/jobs.py", 9), ("store/jobs.py", 14)}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def store(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FakeEditor]:
    basedpyright_langserver()
    root = tmp_path_factory.mktemp("store")
    write_tree(root, DYNAMIC)
    env = server_env(None, tmp_path_factory.mktemp("transcripts"))
    async with editor_session("neovim", root, env) as editor:
        yield editor


async def tool(editor: FakeEditor, name: str, input: dict[str, Any]) -> tuple[str, bool]:
    result = await command(editor, "agentls.tool", {"name": name, "input": input})
    return str(result["content"]), bool(result["is_error"])


async def test_references_add_what_the_server_did_not_confirm(store: FakeEditor) -> None:
    content, is_error = await tool(
        store, "find_references", tool_input("store/models.py", 2, "refresh")
    )
    assert not is_error, content
    confirmed_text, _, unconfirmed_text = content.partition("unconfirmed match")
    assert "confirmed reference" in confirmed_text
    assert "(source: language server (basedpyright))" in confirmed_text
    confirmed = reference_lines(confirmed_text)
    unconfirmed = reference_lines(unconfirmed_text)
    assert unconfirmed >= UNTYPED, content  # the server missed them; they are reported
    assert not confirmed & unconfirmed
    assert confirmed | unconfirmed == TRUE_USES, content  # recall 1, and nothing unrelated
    count = int(unconfirmed_text and content.split("unconfirmed match")[0].split()[-1])
    assert count == len(unconfirmed)


async def test_rename_refuses_to_leave_unconfirmed_uses(store: FakeEditor) -> None:
    content, is_error = await tool(
        store,
        "rename_symbol",
        tool_input("store/models.py", 2, "refresh", new_name="reload_data"),
    )
    assert is_error, content
    assert "Not staged" in content
    for path, line in UNTYPED:
        assert f"{path}:{line}" in content, content
    assert "store/other.py" not in content
    assert "force: true" in content


async def test_rename_with_force_stages_and_lists_what_it_left(store: FakeEditor) -> None:
    content, is_error = await tool(
        store,
        "rename_symbol",
        tool_input("store/models.py", 2, "refresh", new_name="reload_data", force=True),
    )
    assert not is_error, content
    assert "Left unchanged (force)" in content
    for path, line in UNTYPED:
        assert f"{path}:{line}" in content, content


def _many_calls(count: int) -> str:
    """A TestCase subclass whose methods call `self.assertQuerySetEqual` `count` times."""
    lines = ["from suite.base import TestCase", "", "", "class ManyTests(TestCase):"]
    for n in range(count):
        lines += [
            f"    def test_{n}(self) -> None:",
            f"        self.assertQuerySetEqual([{n}, {n + 1}], [{n}, {n + 1}])  # {'x' * 40}",
        ]
    return "\n".join(lines) + "\n"


MIXINS = {
    "suite/__init__.py": "",
    "suite/base.py": """
        class TestCase:
            def assertQuerySetEqual(self, qs: object, values: object) -> None:
                pass
        """,
    "suite/mixins.py": """
        class OrderingMixin:
            def check_order(self) -> None:
                self.assertQuerySetEqual([], [])
        """,
}
MIXIN_CALL = ("suite/mixins.py", 3)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def suite(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FakeEditor]:
    basedpyright_langserver()
    root = tmp_path_factory.mktemp("suite")
    write_tree(root, MIXINS)
    (root / "suite" / "many.py").write_text(_many_calls(400), encoding="utf-8")
    env = server_env(None, tmp_path_factory.mktemp("transcripts"))
    async with editor_session("neovim", root, env) as editor:
        yield editor


async def test_mixin_self_call_is_unconfirmed_even_after_many_confirmed(suite: FakeEditor) -> None:
    """Django's 12 missed `self.assertQuerySetEqual(` calls in mixins: they were found by
    name, but listed after 635 confirmed lines, past the tool's output limit, and cut."""
    content, is_error = await tool(
        suite,
        "find_references",
        {**tool_input("suite/base.py", 2, "assertQuerySetEqual"), "max_results": 1000},
    )
    assert not is_error, content
    assert "Output truncated" not in content
    confirmed_text, _, unconfirmed_text = content.partition("unconfirmed match")
    assert reference_lines(unconfirmed_text) == {MIXIN_CALL}, content[-2000:]
    assert "1 unconfirmed match in 1 file" in content
    confirmed = reference_lines(confirmed_text)
    assert len({c for c in confirmed if c[0] == "suite/many.py"}) == 400  # positions kept
