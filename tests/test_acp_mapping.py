"""The ACP host's pure conversions and the reporter's event mapping, without a process."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
from acp import RequestError
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    ImageContentBlock,
    McpServerStdio,
    ResourceContentBlock,
    SseMcpServer,
    TextContentBlock,
    TextResourceContents,
)

from agentls.acp.mapping import (
    context_source,
    mcp_specs,
    plan_entries,
    prompt_input,
    session_modes,
    stop_reason,
    tool_kind,
)
from agentls.acp.reporter import AcpReporter, first_changed_line


def text(value: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=value)


def test_prompt_text_links_and_embedded_resources() -> None:
    found = prompt_input(
        [
            text("fix the bug"),
            ResourceContentBlock(type="resource_link", uri="file:///w/app.py", name="app.py"),
            EmbeddedResourceContentBlock(
                type="resource",
                resource=TextResourceContents(uri="file:///w/log.txt", text="Traceback …"),
            ),
        ]
    )
    assert found.request == "fix the bug"
    assert "/w/app.py" in found.prompt
    assert found.prompt.startswith("fix the bug")
    (context,) = found.attachments
    assert context["type"] == "text"
    assert context_source(context["text"]) == "file:///w/log.txt"
    assert "Traceback …" in context["text"]


def test_images_become_image_blocks_and_binaries_are_named_not_sent() -> None:
    found = prompt_input(
        [
            text("look"),
            ImageContentBlock(type="image", data="AAAA", mime_type="image/webp"),
            EmbeddedResourceContentBlock(
                type="resource",
                resource=BlobResourceContents(
                    uri="file:///w/a.bin", blob="AAAA", mime_type="application/zip"
                ),
            ),
        ]
    )
    image, binary = found.attachments
    assert image == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/webp", "data": "AAAA"},
    }
    assert "application/zip" in binary["text"]
    assert "AAAA" not in binary["text"]


@pytest.mark.parametrize(
    "blocks",
    [
        [],
        [text("   ")],
        [AudioContentBlock(type="audio", data="AAAA", mime_type="audio/wav")],
        [text("x"), ImageContentBlock(type="image", data="AAAA", mime_type="image/tiff")],
    ],
)
def test_content_the_agent_did_not_advertise_is_an_invalid_params_error(blocks: list[Any]) -> None:
    with pytest.raises(RequestError) as refused:
        prompt_input(blocks)
    assert refused.value.code == -32602
    assert str(refused.value)


def test_mcp_entries_become_specs_with_env_and_headers_as_maps_taken_literally() -> None:
    specs = mcp_specs(
        [
            McpServerStdio(
                name="files",
                command="/usr/bin/files-mcp",
                args=["--root", "${HOME}"],
                env=[EnvVariable(name="TOKEN", value="${NOT_EXPANDED}")],
            ),
            HttpMcpServer(
                type="http",
                name="remote",
                url="https://example.com/mcp",
                headers=[HttpHeader(name="Authorization", value="Bearer t")],
            ),
            SseMcpServer(type="sse", name="legacy", url="https://example.com/sse", headers=[]),
        ]
    )
    stdio, http, sse = specs
    assert stdio.transport == "stdio"
    assert (stdio.command, stdio.args) == ("/usr/bin/files-mcp", ("--root", "${HOME}"))  # type: ignore[union-attr]
    assert dict(stdio.env) == {"TOKEN": "${NOT_EXPANDED}"}  # type: ignore[union-attr]
    assert (http.transport, dict(http.headers)) == ("http", {"Authorization": "Bearer t"})  # type: ignore[union-attr]
    assert sse.transport == "sse"
    assert {s.source for s in specs} == {"config"}


def test_duplicate_mcp_names_are_refused() -> None:
    entry = McpServerStdio(name="x", command="/bin/true", args=[], env=[])
    with pytest.raises(RequestError) as refused:
        mcp_specs([entry, entry])
    assert "x" in str(refused.value)


def test_plan_entries_from_the_todo_list() -> None:
    @dataclass
    class Todo:
        content: str
        status: str
        active_form: str = ""

    entries = plan_entries(
        [
            {"content": "read the code", "status": "completed", "active_form": "Reading"},
            Todo("fix it", "in_progress"),
            {"content": "test it", "status": "later"},
            {"content": "  ", "status": "pending"},
        ]
    )
    assert [(e.content, e.status, e.priority) for e in entries] == [
        ("read the code", "completed", "medium"),
        ("fix it", "in_progress", "medium"),
        ("test it", "pending", "medium"),
    ]
    assert plan_entries(None) == []


@pytest.mark.parametrize(
    ("status", "last", "expected"),
    [
        ("completed", "end_turn", "end_turn"),
        ("completed", "max_tokens", "max_tokens"),
        ("max_turns", "tool_use", "max_turn_requests"),
        ("refused", "refusal", "refusal"),
        ("cancelled", None, "cancelled"),
        ("failed", None, None),
    ],
)
def test_stop_reasons(status: str, last: str | None, expected: str | None) -> None:
    assert stop_reason(status, last) == expected


def test_tool_kinds() -> None:
    assert tool_kind("run_command", False) == "execute"
    assert tool_kind("edit_file", False) == "edit"
    assert tool_kind("delete_file", False) == "delete"
    assert tool_kind("rename_file", False) == "move"
    assert tool_kind("grep", True) == "search"
    assert tool_kind("read_file", True) == "read"
    assert tool_kind("todo_write", False) == "think"
    assert tool_kind("mcp__x__lookup", True) == "read"
    assert tool_kind("mcp__x__deploy", False) == "other"


def test_modes_offer_bypass_only_when_enabled() -> None:
    assert [m.id for m in session_modes("default", False).available_modes] == [
        "default",
        "acceptEdits",
        "plan",
        "dontAsk",
    ]
    state = session_modes("acceptEdits", True)
    assert state.current_mode_id == "acceptEdits"
    assert [m.id for m in state.available_modes][-1] == "bypassPermissions"


def test_commands_run_by_tests_and_linters_are_execute() -> None:
    assert tool_kind("run_tests", True) == "execute"
    assert tool_kind("lint", True) == "execute"


def test_first_changed_line() -> None:
    assert first_changed_line("a\nb\nc\n", "a\nB\nc\n") == 2
    assert first_changed_line("", "new\n") == 1
    assert first_changed_line("same\n", "same\n") is None


@dataclass
class RecordingLink:
    sent: list[tuple[str, Any]] = field(default_factory=list)

    def send(self, session_id: str, update: Any) -> None:
        self.sent.append((session_id, update))

    async def flush(self) -> None:
        return None


@dataclass(frozen=True)
class TodosEvent:
    """The `todo_write` tool's event, as another branch adds it (matched by `type`)."""

    session_id: str
    todos: list[dict[str, str]]
    type: str = "todos"


def test_a_todos_event_becomes_a_plan_update() -> None:
    link = RecordingLink()
    workspace = SimpleNamespace(link=link)
    run = SimpleNamespace(session_id="s1", mode="review")
    reporter = AcpReporter(workspace, run)  # type: ignore[arg-type]
    reporter.on_event(
        TodosEvent(  # type: ignore[arg-type]
            "s1",
            [
                {"content": "Write the parser", "status": "completed", "active_form": "Writing"},
                {"content": "Test it", "status": "in_progress", "active_form": "Testing"},
            ],
        )
    )
    ((session, update),) = link.sent
    assert session == "s1"
    dumped = update.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped == {
        "sessionUpdate": "plan",
        "entries": [
            {"content": "Write the parser", "status": "completed", "priority": "medium"},
            {"content": "Test it", "status": "in_progress", "priority": "medium"},
        ],
    }
    asyncio.run(reporter.end({}))  # type: ignore[typeddict-item]


def test_the_acp_host_runs_without_the_lsp_libraries() -> None:
    """A third host beside the LSP: `agentls acp` never loads pygls or lsprotocol."""
    import subprocess
    import sys

    code = (
        "import sys, agentls.acp.agent, agentls.acp.serve, agentls.acp.workspace\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"
