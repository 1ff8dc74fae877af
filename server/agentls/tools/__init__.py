"""Built-in tools, one small class per module.

`builtin_tools()` is the one list hosts register; add new built-ins to it.
"""

from __future__ import annotations

from typing import Any

from agentls.agent.claude.subagents import AgentCatalog
from agentls.agent.framework.tool import Tool
from agentls.config.web import WebFetchSettings, WebSearchSettings
from agentls.tools.ask_user import AskUserQuestion
from agentls.tools.background import BashOutput, KillShell
from agentls.tools.code_intel import (
    Diagnostics,
    FindImplementations,
    FindReferences,
    GoToDefinition,
    Hover,
    TypeDefinition,
)
from agentls.tools.code_intel_actions import CodeActions
from agentls.tools.code_intel_calls import CallHierarchyTool
from agentls.tools.code_intel_rename import RenameSymbol
from agentls.tools.delete_file import DeleteFile
from agentls.tools.edit_file import EditFile
from agentls.tools.grep import Grep
from agentls.tools.lint import LintConfig, LintTool
from agentls.tools.list_files import ListFiles
from agentls.tools.notebook_edit import NotebookEdit
from agentls.tools.plan_mode import EnterPlanMode, ExitPlanMode
from agentls.tools.read_file import ReadFile
from agentls.tools.rename_file import RenameFile
from agentls.tools.run_command import RunCommand
from agentls.tools.run_tests import RunTestsTool, TestConfig
from agentls.tools.skill import SkillTool
from agentls.tools.symbol_edits import (
    InsertAfterSymbol,
    InsertBeforeSymbol,
    ReplaceSymbolBody,
    SafeDeleteSymbol,
)
from agentls.tools.symbols import DocumentSymbols, SearchSymbols
from agentls.tools.task import Task
from agentls.tools.todo import TodoWrite
from agentls.tools.web_fetch import WebFetch
from agentls.tools.web_search import WebSearch
from agentls.tools.write_file import WriteFile

__all__ = [
    "AskUserQuestion",
    "DeleteFile",
    "Diagnostics",
    "DocumentSymbols",
    "EditFile",
    "EnterPlanMode",
    "ExitPlanMode",
    "FindImplementations",
    "FindReferences",
    "GoToDefinition",
    "Grep",
    "Hover",
    "LintConfig",
    "LintTool",
    "ListFiles",
    "NotebookEdit",
    "ReadFile",
    "RenameFile",
    "RenameSymbol",
    "RunCommand",
    "RunTestsTool",
    "SearchSymbols",
    "SkillTool",
    "Task",
    "TestConfig",
    "TodoWrite",
    "TypeDefinition",
    "WebFetch",
    "WebSearch",
    "WriteFile",
    "builtin_tools",
]


def builtin_tools(
    lint: LintConfig | None = None,
    tests: TestConfig | None = None,
    run_command: Tool[Any] | None = None,
    agents: AgentCatalog | None = None,
    web_fetch: WebFetchSettings | None = None,
    web_search: WebSearch | None = None,
) -> list[Tool[Any]]:
    """Fresh instances of every built-in tool, configured by the host.

    `run_command` defaults to the shell tool in the shadow workspace; it asks before each
    command unless an allow rule matches (see the permission policy). `agents`: the
    workspace's sub-agent types for `task` (default: the built-in ones and the user's
    `~/.claude/agents`). `web_search` is offered only when the host configures it (it
    depends on the endpoint and the rules).
    """
    tools: list[Tool[Any]] = [
        run_command or RunCommand(),
        LintTool(lint),
        RunTestsTool(tests),
        SearchSymbols(),
        DocumentSymbols(),
        GoToDefinition(),
        FindReferences(),
        FindImplementations(),
        TypeDefinition(),
        Hover(),
        Diagnostics(),
        RenameSymbol(),
        CallHierarchyTool(),
        CodeActions(),
        ReplaceSymbolBody(),
        InsertBeforeSymbol(),
        InsertAfterSymbol(),
        SafeDeleteSymbol(),
        ReadFile(),
        ListFiles(),
        Grep(),
        EditFile(),
        WriteFile(),
        RenameFile(),
        DeleteFile(),
        TodoWrite(),
        AskUserQuestion(),
        EnterPlanMode(),
        ExitPlanMode(),
        NotebookEdit(),
        WebFetch(web_fetch),
        SkillTool(),
        web_search or WebSearch(WebSearchSettings(enabled="never")),
        BashOutput(),
        KillShell(),
    ]
    tools.append(Task(agents or AgentCatalog(roots=()), tools))
    return tools
