"""Sub-agent types: the built-in ones and those defined in Markdown files.

A type says what a sub-agent launched by the `task` tool is for (its description goes into
the tool's description, so the model can pick one), which tools it gets and its system
prompt. Built in: `general-purpose` (every tool) and `explore` (read-only tools only).
User-defined types come from `~/.claude/agents/**/*.md`, then `.claude/agents/**/*.md` and
`.agentls/agents/**/*.md` in each workspace root (subfolders such as `agents/team/` too; a
later definition of a name wins), in Claude Code's format (front matter read as Claude Code
reads it, see `agentls.agent.claude.frontmatter`)::

    ---
    name: reviewer
    description: Reviews a change for bugs and style. Use after finishing an edit.
    tools: Read, Grep, Glob          # optional: Claude Code's names or ours; omitted = all
    model: inherit                   # optional: inherit, an alias (sonnet, opus, haiku,
                                     # fable, …) or a model id
    ---
    You are a meticulous code reviewer. …   (the body is the system prompt)

A file that cannot be used (no front matter, bad YAML, no name or description, too large)
is skipped and reported (`AgentCatalog.problems`; the hosts show it to the user). Whatever a
type asks for, a sub-agent never gets `SUBAGENT_EXCLUDED_TOOLS`: no sub-agents of its own,
no questions to the user, no plan-mode switches.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, TypeVar

from agentls.agent.claude.frontmatter import FrontMatterError, split_front_matter
from agentls.agent.claude.settings import is_model_alias, resolve_model

if TYPE_CHECKING:
    pass


class _ToolLike(Protocol):
    """What choosing a sub-agent's tools needs of a tool (`agent.framework.tool.Tool` is one)."""

    @property
    def name(self) -> str: ...

    def is_read_only(self, input: Any = None, /) -> bool: ...


AnyTool = TypeVar("AnyTool", bound=_ToolLike)

log = logging.getLogger(__name__)

TASK_TOOL = "task"
SUBAGENT_EXCLUDED_TOOLS: frozenset[str] = frozenset(
    {TASK_TOOL, "ask_user_question", "enter_plan_mode", "exit_plan_mode"}
)
"""Never given to a sub-agent (as Claude Code withholds them from its agents): no recursion, no
questions to the user, no plan-mode switches."""

EXECUTING_TOOLS: frozenset[str] = frozenset(
    {"run_command", "run_tests", "lint", "web_fetch", "web_search"}
)
"""Withheld from read-only types (`explore`) with every MCP tool: `run_tests`, `lint` and the
web tools change nothing in the workspace (they count as read-only for permissions), but
they run the repository's code or reach the network, and exploring means reading."""


def withheld_from_readers(name: str) -> bool:
    """Whether a read-only type (`explore`) never gets this tool: it executes something or
    reaches the network (an MCP tool is another program, whatever its `readOnlyHint`)."""
    return name in EXECUTING_TOOLS or name.startswith("mcp__")


MAX_AGENT_FILE_BYTES = 100_000
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")

CLAUDE_AGENT_TOOLS: dict[str, tuple[str, ...]] = {
    "Read": ("read_file",),
    "Grep": ("grep",),
    "Glob": ("list_files",),
    "LS": ("list_files",),
    "Edit": ("edit_file",),
    "MultiEdit": ("edit_file",),
    "Write": ("write_file",),
    "Bash": ("run_command",),
    "TodoWrite": ("todo_write",),
    "Task": (TASK_TOOL,),
    "Agent": (TASK_TOOL,),
    "AskUserQuestion": ("ask_user_question",),
    "ExitPlanMode": ("exit_plan_mode",),
    "EnterPlanMode": ("enter_plan_mode",),
    "WebFetch": ("web_fetch",),
    "WebSearch": ("web_search",),
    "NotebookEdit": ("notebook_edit",),
    "NotebookRead": ("read_file",),
    "BashOutput": ("bash_output",),
    "KillShell": ("kill_shell",),
    "KillBash": ("kill_shell",),
    "TaskOutput": ("bash_output",),
    "TaskStop": ("kill_shell",),
    "TaskCreate": ("todo_write",),
    "TaskUpdate": ("todo_write",),
    "TaskList": ("todo_write",),
    "TaskGet": ("todo_write",),
    "Skill": ("skill",),
    "ToolSearch": ("tool_search",),
}
"""Claude Code's tool names in an agent file's `tools` → ours."""

GENERAL_PURPOSE_PROMPT = """You are a general-purpose sub-agent. Research complex questions, \
search for code, and carry out multi-step tasks on your own until they are done.
- Search broadly when you do not know where something lives; read the files that matter.
- When the task asks for changes, make them with the editing tools: they are staged in the \
session like the main agent's and reviewed by the user with them.
- Do not create files unless the task needs them; prefer editing existing files."""

EXPLORE_PROMPT = """You are a fast, read-only exploration sub-agent. You find files and code, \
read them and answer questions about the codebase. You cannot change anything: you have \
read-only tools only.
- Start broad (list_files with a glob, grep, search_symbols), then read the relevant parts.
- Make independent searches and reads in the same turn: they run in parallel.
- Report concrete findings: file paths with line numbers, the names of functions and classes, \
short quotes of the relevant code. Say what you did not find as clearly as what you found."""


@dataclass(frozen=True)
class AgentType:
    """One kind of sub-agent."""

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    """Tool names the type asked for (ours or Claude Code's); None: every tool."""
    disallowed: tuple[str, ...] = ()
    model: str | None = None
    """A model id, an alias (`sonnet`, `opus`, `haiku`) or None / "inherit"."""
    read_only_tools: bool = False
    """Only read-only tools (`explore`), whatever `tools` says, and none that executes or
    reaches the network (`withheld_from_readers`)."""
    source: str = "built-in"
    pin_instructions: bool = True
    """Whether the workspace's AGENTS.md / CLAUDE.md go into its context."""

    def select_tools(self, available: Iterable[AnyTool]) -> list[AnyTool]:
        """The tools this type gets from `available` (the parent's pool for the run's mode)."""
        wanted = None if self.tools is None else set(_our_names(self.tools))
        unwanted = set(_our_names(self.disallowed)) | SUBAGENT_EXCLUDED_TOOLS
        chosen = []
        for tool in available:
            if tool.name in unwanted or (wanted is not None and tool.name not in wanted):
                continue
            if self.read_only_tools and (not _read_only(tool) or withheld_from_readers(tool.name)):
                continue
            chosen.append(tool)
        return chosen

    def missing_tools(self, available: Iterable[AnyTool]) -> list[str]:
        """Names in `tools` that match no tool offered here (said, never silently dropped);
        Claude Code's names count as their agentls tools."""
        if self.tools is None:
            return []
        offered = {tool.name for tool in available}
        return [
            name
            for name in self.tools
            if not name.startswith("mcp__")
            and not any(ours in offered for ours in _our_names([name]))
        ]

    def is_read_only(self, available: Iterable[AnyTool]) -> bool:
        """Whether every tool it gets is read-only (so it may run beside other such calls)."""
        return self.read_only_tools or all(_read_only(t) for t in self.select_tools(available))

    def model_for(self, parent_model: str) -> tuple[str, str]:
        """The model this type runs on (aliases resolved as Claude Code resolves them)."""
        model = (self.model or "").strip()
        if not model or model == "inherit":
            return parent_model, ""
        if is_model_alias(model):
            return resolve_model(model)[0], ""
        return model, ""


def _read_only(tool: _ToolLike) -> bool:
    try:
        return bool(tool.is_read_only(None))
    except Exception:
        return False


def _our_names(names: Iterable[str]) -> list[str]:
    found: list[str] = []
    for name in names:
        found.extend(CLAUDE_AGENT_TOOLS.get(name, (name,)))
    return found


GENERAL_PURPOSE = AgentType(
    name="general-purpose",
    description=(
        "General-purpose agent for researching complex questions, searching for code and "
        "carrying out multi-step tasks, edits included. Use it when a search may take "
        "several rounds or a self-contained part of the work can be handed off."
    ),
    prompt=GENERAL_PURPOSE_PROMPT,
)
EXPLORE = AgentType(
    name="explore",
    description=(
        "Fast read-only agent for exploring the codebase: finding files by pattern, "
        "searching code for keywords, answering questions about how something works. "
        "Cannot change files. Launch several at once for independent questions."
    ),
    prompt=EXPLORE_PROMPT,
    read_only_tools=True,
    pin_instructions=False,
)
BUILTIN_TYPES: tuple[AgentType, ...] = (GENERAL_PURPOSE, EXPLORE)


class AgentTypeStatus(TypedDict):
    """One type in `agentls.status` (`agents.types`)."""

    name: str
    description: str
    source: str
    tools: list[str] | None
    model: str | None


class AgentsStatusPayload(TypedDict):
    """`agents` in `agentls.status`: the sub-agent types and the files that were skipped."""

    types: list[AgentTypeStatus]
    problems: list[str]


class AgentFileError(ValueError):
    """An agent file that cannot be used; the message says why."""


def parse_agent_file(path: Path) -> AgentType:
    """One agent definition (`AgentFileError` when it cannot be used)."""
    try:
        size = path.stat().st_size
        if size > MAX_AGENT_FILE_BYTES:
            raise AgentFileError(f"it is {size} bytes (the limit is {MAX_AGENT_FILE_BYTES})")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise AgentFileError("it is not UTF-8 text") from None
    except OSError as exc:
        raise AgentFileError(f"it cannot be read ({exc.strerror or exc})") from None
    if not text.lstrip("\ufeff").startswith("---"):
        raise AgentFileError("it has no front matter (a `---` line, then name and description)")
    try:
        meta, body = split_front_matter(text)
    except FrontMatterError as exc:
        raise AgentFileError(str(exc)) from None
    name = _text_field(meta, "name")
    if not NAME_PATTERN.match(name):
        raise AgentFileError(f"`name` {name!r} must be letters, digits, '-' or '_' (at most 64)")
    description = _text_field(meta, "description")
    model = meta.get("model")
    if model is not None and not isinstance(model, str):
        raise AgentFileError("`model` must be a string (inherit, an alias or a model id)")
    return AgentType(
        name=name,
        description=" ".join(description.replace("\\n", "\n").split()),
        prompt=body.strip(),
        tools=_tool_list(meta, "tools"),
        disallowed=_tool_list(meta, "disallowedTools") or (),
        model=model.strip() if model else None,
        source=str(path),
    )


def _text_field(meta: dict[str, object], key: str) -> str:
    value = meta.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise AgentFileError(f"`{key}` is missing or empty")
    return value.strip()


def _tool_list(meta: dict[str, object], key: str) -> tuple[str, ...] | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        names = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        names = [str(v).strip() for v in value]
    else:
        raise AgentFileError(f"`{key}` must be a comma-separated string or a list of names")
    if key == "tools" and names == ["*"]:
        return None
    return tuple(n for n in names if n)


def agent_folders(roots: Sequence[Path], home: Path | None) -> list[Path]:
    """Where agent files are read from, lowest precedence first."""
    folders: list[Path] = []
    if home is not None:
        folders.append(home / ".claude" / "agents")
    for root in roots:
        folders.append(root / ".claude" / "agents")
        folders.append(root / ".agentls" / "agents")
    return folders


@dataclass
class AgentCatalog:
    """The sub-agent types of a workspace, re-read when an agent file changes."""

    roots: Sequence[Path]
    home: Path | None = field(default_factory=Path.home)
    on_problems: Callable[[list[str]], None] | None = None
    """Told about problems a (re)load found that were not reported before."""
    _types: dict[str, AgentType] = field(default_factory=dict, init=False)
    _problems: list[str] = field(default_factory=list, init=False)
    _signature: tuple[object, ...] | None = field(default=None, init=False)
    _reported: set[str] = field(default_factory=set, init=False)

    def types(self) -> list[AgentType]:
        """Every type, built-ins first, then by name."""
        self._refresh()
        return list(self._types.values())

    def find(self, name: str) -> AgentType | None:
        self._refresh()
        return self._types.get(name)

    @property
    def problems(self) -> list[str]:
        self._refresh()
        return list(self._problems)

    def status(self) -> AgentsStatusPayload:
        return {
            "types": [
                {
                    "name": t.name,
                    "description": t.description,
                    "source": t.source,
                    "tools": list(t.tools) if t.tools is not None else None,
                    "model": t.model,
                }
                for t in self.types()
            ],
            "problems": self.problems,
        }

    def _refresh(self) -> None:
        signature = self._scan_signature()
        if signature == self._signature:
            return
        self._signature = signature
        types = {t.name: t for t in BUILTIN_TYPES}
        problems: list[str] = []
        for path, prefix in self._files():
            try:
                found = parse_agent_file(path)
            except AgentFileError as exc:
                problems.append(f"sub-agent file {path} was skipped: {exc}")
                continue
            if prefix:
                found = replace(found, name=f"{prefix}:{found.name}")
            types[found.name] = found
        self._types = dict(sorted(types.items(), key=lambda kv: _order(kv[1])))
        self._problems = problems
        fresh = [p for p in problems if p not in self._reported]
        self._reported.update(fresh)
        for problem in fresh:
            log.warning("%s", problem)
        if fresh and self.on_problems is not None:
            try:
                self.on_problems(fresh)
            except Exception:
                log.exception("reporting sub-agent file problems failed")

    def _files(self) -> list[tuple[Path, str]]:
        """Agent files with their name prefix (a plugin's name, else "")."""
        from agentls.agent.claude.plugins import load_plugins

        folders = [(folder, "") for folder in agent_folders(self.roots, self.home)]
        if self.home is not None:
            plugins = load_plugins(self.roots, self.home).folders("agents")
            folders += [(folder, plugin.name) for plugin, folder in plugins]
        files: list[tuple[Path, str]] = []
        for folder, prefix in folders:
            try:
                found = sorted(p for p in folder.rglob("*.md") if p.is_file())
            except OSError:
                continue
            files.extend((path, prefix) for path in found)
        return files

    def _scan_signature(self) -> tuple[object, ...]:
        """What changes when an agent file is added, removed or edited (a few stat calls)."""
        entries: list[object] = []
        for path, _prefix in self._files():
            try:
                stat = path.stat()
            except OSError:
                continue
            entries.append((str(path), stat.st_mtime_ns, stat.st_size))
        return tuple(entries)


def _order(agent: AgentType) -> tuple[int, str]:
    """Built-ins first, in their own order (general-purpose, the default, leads)."""
    for index, builtin in enumerate(BUILTIN_TYPES):
        if agent is builtin:
            return index, ""
    return len(BUILTIN_TYPES), agent.name


@dataclass(frozen=True)
class SubagentRole:
    """What makes a loop a sub-agent's: its type, and the session and `task` call it works
    for (its calls carry the session's id: its edits, approvals and events are the
    session's)."""

    agent: AgentType
    session_id: str
    parent_tool_use_id: str
