"""`run_tests`' `target` → arguments for each test runner.

The model writes targets one way whatever the runner: a file or folder (`tests/test_api.py`,
`web/src/`), a test id as the results print it (`file::name`, `calc::TestAdd`,
`tests::adds`), or a name filter (`login`). Each runner gets them in its own syntax.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from agentls.agent.framework.tool import ToolError
from agentls.tools.checks.commands import CheckCommand

__all__ = ["ParsedTarget", "parse_target", "target_args"]

_LINE_SUFFIX = re.compile(r":\d+$")


@dataclass(frozen=True)
class ParsedTarget:
    """`paths`: (project-relative path, `::` rest or `:line` suffix) for path-like tokens;
    `name`: the target as a name filter when it is not made of paths."""

    raw: str | None
    paths: list[tuple[str, str]] = field(default_factory=list)
    name: str | None = None


def parse_target(
    target: str | None,
    project: Path,
    resolve: Callable[[str], Path | None],
    exists: Callable[[Path], bool],
) -> ParsedTarget:
    """Split a target into paths inside `project` (that exist in the session's view) or a
    name filter. A `file::test` whose file does not exist is an error, not a filter."""
    if not target or not target.strip():
        return ParsedTarget(None)
    tokens = target.split()

    def as_path(token: str) -> tuple[str, str] | None:
        head, sep, rest = token.partition("::")
        suffix = ""
        if not sep and _LINE_SUFFIX.search(head):  # rspec's file:line
            suffix = head[head.rfind(":") :]
            head = head[: head.rfind(":")]
        absolute = resolve(head)
        if absolute is None or not absolute.is_relative_to(project) or not exists(absolute):
            return None
        relative = absolute.relative_to(project).as_posix()
        return relative, f"::{rest}" if sep else suffix

    paths = [as_path(token) for token in tokens]
    if all(p is not None for p in paths):
        return ParsedTarget(target, [p for p in paths if p is not None])
    whole = as_path(target.strip()) if "::" in target else None  # `file::name with spaces`
    if whole is not None:
        return ParsedTarget(target, [whole])
    first = tokens[0].partition("::")[0]
    if "::" in target and ("/" in first or "." in PurePosixPath(first).name):
        raise ToolError(f"No test file {first} in the workspace (nor staged in this session).")
    if len(tokens) == 1 and re.search(r"\.(py|ts|tsx|js|jsx|mjs|cjs|go|rs|rb)$", target):
        raise ToolError(f"No test file {target} in the workspace (nor staged in this session).")
    return ParsedTarget(target, name=target)


def target_args(command: CheckCommand, target: ParsedTarget) -> list[str]:
    """The arguments `{target}` stands for, for this command's runner."""
    style = command.targets
    if style == "raw":
        return [target.raw] if target.raw else []
    if style == "script":
        if not target.raw:
            return []
        return ["--", target.raw] if command.program == "npm" else [target.raw]
    handler = _STYLES[style]
    return handler(target)


def _pytest(target: ParsedTarget) -> list[str]:
    if target.name is not None:
        return ["-k", target.name]
    return [f"{path}{rest}" for path, rest in target.paths]


def _unittest(target: ParsedTarget) -> list[str]:
    if target.name is not None:
        return ["-k", target.name]
    args = []
    for path, rest in target.paths:
        if rest.startswith("::"):
            module = path.removesuffix(".py").replace("/", ".")
            args.append(".".join([module, *rest[2:].split("::")]))
        else:
            args.append(path)
    return args


def _js(name_flag: str) -> Callable[[ParsedTarget], list[str]]:
    def expand(target: ParsedTarget) -> list[str]:
        if target.name is not None:
            return [name_flag, target.name]
        files = [path for path, _ in target.paths]
        names = [rest[2:] for _, rest in target.paths if rest.startswith("::")]
        return files + (
            [name_flag, "|".join(names) if len(names) > 1 else names[0]] if names else []
        )

    return expand


def _go(target: ParsedTarget) -> list[str]:
    if target.raw is None:
        return ["./..."]
    if target.name is not None:
        return ["-run", target.name, "./..."]
    packages: list[str] = []
    tests: list[str] = []
    for path, rest in target.paths:
        folder = path if not path.endswith(".go") else str(PurePosixPath(path).parent)
        package = "./" + folder.strip("/") if folder not in ("", ".") else "."
        if package not in packages:
            packages.append(package)
        if rest.startswith("::"):
            tests.append("/".join(f"^{re.escape(part)}$" for part in rest[2:].split("/")))
    return [*packages, *(["-run", "|".join(tests)] if tests else [])]


def _cargo(target: ParsedTarget) -> list[str]:
    if target.raw is None:
        return []
    if target.name is not None:
        return [target.name]
    args: list[str] = []
    for path, rest in target.paths:
        if not path.endswith(".rs"):  # `tests::adds` is a module path, not a folder
            args.append(f"{path}{rest}")
            continue
        parts = PurePosixPath(path).parts
        if len(parts) == 2 and parts[0] == "tests":
            args += ["--test", PurePosixPath(path).stem]
        if rest.startswith("::"):
            args.append(rest[2:])
    return args


def _rspec(target: ParsedTarget) -> list[str]:
    if target.name is not None:
        return ["-e", target.name]
    return [f"{path}{rest}" if not rest.startswith("::") else path for path, rest in target.paths]


_STYLES: dict[str, Callable[[ParsedTarget], list[str]]] = {
    "pytest": _pytest,
    "unittest": _unittest,
    "vitest": _js("-t"),
    "jest": _js("-t"),
    "mocha": _js("--grep"),
    "go": _go,
    "cargo": _cargo,
    "rspec": _rspec,
}
