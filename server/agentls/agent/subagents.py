"""Sub-agent types: the built-in ones and those defined in Markdown files.

A type says what a sub-agent launched by the `task` tool is for (its description goes into
the tool's description, so the model can pick one), which tools it gets and its system
prompt. Built in: `general-purpose` (every tool) and `explore` (read-only tools only).
User-defined types come from `~/.claude/agents/*.md`, then `.claude/agents/*.md` and
`.agentls/agents/*.md` in each workspace root (a later definition of a name wins), in
Claude Code's format::

    ---
    name: reviewer
    description: Reviews a change for bugs and style. Use after finishing an edit.
    tools: Read, Grep, Glob          # optional: Claude Code's names or ours; omitted = all
    model: inherit                   # optional: inherit, or a model id
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, TypedDict, TypeVar

from agentls.workspace.core import Attachment

if TYPE_CHECKING:
    from agentls.workspace import Workspace


class _ToolLike(Protocol):
    """What choosing a sub-agent's tools needs of a tool (`agent.tool.Tool` is one)."""

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

MAX_AGENT_FILE_BYTES = 100_000
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
MODEL_ALIASES = ("sonnet", "opus", "haiku")

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
    """Only read-only tools (`explore`), whatever `tools` says."""
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
            if self.read_only_tools and not _read_only(tool):
                continue
            chosen.append(tool)
        return chosen

    def is_read_only(self, available: Iterable[AnyTool]) -> bool:
        """Whether every tool it gets is read-only (so it may run beside other such calls)."""
        return self.read_only_tools or all(_read_only(t) for t in self.select_tools(available))

    def model_for(self, parent_model: str) -> tuple[str, str]:
        """The model this type runs on, and a note when its setting could not be used."""
        model = (self.model or "").strip()
        if not model or model == "inherit":
            return parent_model, ""
        if model in MODEL_ALIASES:
            if f"-{model}-" in f"-{parent_model}-" or parent_model.startswith(f"claude-{model}"):
                return parent_model, ""
            return parent_model, (
                f"model alias {model!r} of sub-agent type {self.name!r} names no model id here; "
                f"using the session's model {parent_model} (write a full model id to choose one)"
            )
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
    meta, body = _split_front_matter(text)
    name = _text_field(meta, "name")
    if not NAME_PATTERN.match(name):
        raise AgentFileError(
            f"`name` {name!r} must be lower-case letters, digits, '-' or '_' (at most 64)"
        )
    description = _text_field(meta, "description")
    model = meta.get("model")
    if model is not None and not isinstance(model, str):
        raise AgentFileError("`model` must be a string (inherit, or a model id)")
    return AgentType(
        name=name,
        description=" ".join(description.split()),
        prompt=body.strip(),
        tools=_tool_list(meta, "tools"),
        disallowed=_tool_list(meta, "disallowedTools") or (),
        model=model.strip() if model else None,
        source=str(path),
    )


def _split_front_matter(text: str) -> tuple[dict[str, object], str]:
    import yaml

    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise AgentFileError("it has no front matter (a `---` line, then name and description)")
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            break
    else:
        raise AgentFileError("its front matter is not closed by a `---` line")
    try:
        meta = yaml.safe_load("".join(lines[1:index]))
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise AgentFileError(f"its front matter is not valid YAML{line}: {problem}") from None
    if not isinstance(meta, dict):
        raise AgentFileError("its front matter must be a mapping of keys to values")
    return {str(k): v for k, v in meta.items()}, "".join(lines[index + 1 :])


def _text_field(meta: dict[str, object], key: str) -> str:
    value = meta.get(key)
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
        for path in self._files():
            try:
                found = parse_agent_file(path)
            except AgentFileError as exc:
                problems.append(f"sub-agent file {path} was skipped: {exc}")
                continue
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

    def _files(self) -> list[Path]:
        files: list[Path] = []
        for folder in agent_folders(self.roots, self.home):
            try:
                files.extend(sorted(p for p in folder.glob("*.md") if p.is_file()))
            except OSError:
                continue
        return files

    def _scan_signature(self) -> tuple[object, ...]:
        """What changes when an agent file is added, removed or edited (a few stat calls)."""
        entries: list[object] = []
        for path in self._files():
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


_CATALOG: Final = Attachment[AgentCatalog]("sub-agent types")


def agents_for(workspace: Workspace) -> AgentCatalog:
    """The workspace's catalog (made on first use)."""
    return workspace.attached(_CATALOG, lambda: AgentCatalog(list(workspace.roots)))


@dataclass(frozen=True)
class SubagentRole:
    """What makes a loop a sub-agent's: its type, and the session and `task` call it works
    for (its calls carry the session's id: its edits, approvals and events are the
    session's)."""

    agent: AgentType
    session_id: str
    parent_tool_use_id: str
