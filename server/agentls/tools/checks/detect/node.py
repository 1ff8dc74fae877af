"""JavaScript and TypeScript: eslint or biome, tsc, and vitest / jest / mocha / `npm test`.

Binaries come from `node_modules/.bin` (the project's own versions, never a global one that
may not read its config); the package manager, and so the install command named when a
binary is missing, comes from the lock file.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, Final

from agentls.tools.checks.commands import CheckCommand
from agentls.tools.checks.detect.base import Detection
from agentls.tools.checks.projects import ProjectDir

__all__ = ["PackageManager", "detect", "package_manager"]

ESLINT_FLAT: Final = tuple(f"eslint.config.{e}" for e in ("js", "mjs", "cjs", "ts", "mts", "cts"))
ESLINT_LEGACY: Final = tuple(f".eslintrc{e}" for e in (".js", ".cjs", ".yaml", ".yml", ".json", ""))
BIOME: Final = ("biome.json", "biome.jsonc")
JS_TS: Final = frozenset({"javascript", "typescript"})
_LOCKS: Final = (
    ("pnpm-lock.yaml", "pnpm", "pnpm install --frozen-lockfile"),
    ("yarn.lock", "yarn", "yarn install --frozen-lockfile"),
    ("bun.lockb", "bun", "bun install --frozen-lockfile"),
    ("bun.lock", "bun", "bun install --frozen-lockfile"),
    ("package-lock.json", "npm", "npm ci"),
    ("npm-shrinkwrap.json", "npm", "npm ci"),
)
_NPM_DEFAULT_TEST = 'echo "Error: no test specified" && exit 1'
_SHELL_OPERATORS: Final = ("&&", "||", "|", ";", ">", "<", "$(", "`")
_WATCH_WORDS: Final = frozenset({"run", "watch", "--watch", "--run", "--watchAll", "-w"})


@dataclass(frozen=True)
class PackageManager:
    name: str
    install: str
    lock: str | None

    def explained_install(self) -> str:
        source = f" ({self.lock})" if self.lock else ""
        return f"{self.install}{source}"


def package_manager(project: ProjectDir) -> PackageManager:
    """From the lock file in the project or a parent folder (a monorepo keeps one at the top)."""
    for base, path in project.upwards():
        for lock, name, install in _LOCKS:
            if (base / lock).exists():
                if name == "yarn" and (base / ".yarnrc.yml").exists():
                    install = "yarn install --immutable"  # yarn 2+
                shown = lock if path == project.path else f"{lock} in {_rel(project, path)}"
                return PackageManager(name, install, shown)
    return PackageManager("npm", "npm install", None)


def _rel(project: ProjectDir, path: Any) -> str:
    rel = path.relative_to(project.root).as_posix()
    return "the workspace root" if rel == "." else f"{rel}/"


def detect(project: ProjectDir) -> Detection:
    found = Detection()
    package = project.read_json("package.json")
    deps = _dependencies(package)
    manager = package_manager(project)
    _linter(project, package, manager, found)
    _typechecker(project, deps, manager, found)
    _tests(project, package, deps, manager, found)
    if not found.lint:
        found.nothing_found = (
            f"no eslint config ({ESLINT_FLAT[0]}, .eslintrc*), biome.json or tsconfig.json "
            f"for {project.where()}"
        )
    return found


def _dependencies(package: dict[str, object]) -> dict[str, str]:
    deps: dict[str, str] = {}
    for key in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
        section = package.get(key)
        if isinstance(section, dict):
            deps.update({str(k): str(v) for k, v in section.items()})
    return deps


def _node_command(
    project: ProjectDir, manager: PackageManager, tool: str, argv: tuple[str, ...], **extra: Any
) -> CheckCommand:
    return CheckCommand(
        tool=tool,
        argv=argv,
        project=project.path,
        lookup=("node",),
        install=manager.explained_install(),
        requires=("node",),
        **extra,
    )


def _linter(
    project: ProjectDir, package: dict[str, object], manager: PackageManager, found: Detection
) -> None:
    """eslint (flat, then legacy config), else biome: the first match is the linter."""
    flat = project.find_up(*ESLINT_FLAT)
    legacy = project.find_up(*ESLINT_LEGACY)
    biome = project.find_up(*BIOME)
    if flat or legacy or "eslintConfig" in package:
        name = flat[0] if flat else legacy[0] if legacy else "eslintConfig in package.json"
        env = {} if flat else {"ESLINT_USE_FLAT_CONFIG": "false"}
        found.lint.append(
            _node_command(
                project,
                manager,
                "eslint",
                ("eslint", "-f", "json", "{paths}"),
                kind="lint",
                format="eslint-json",
                languages=JS_TS,
                why=f"{name} found: eslint with its JSON formatter",
                env=env,
            )
        )
        if biome:
            found.notes.append(f"{biome[0]} is also present; eslint is the linter (first match)")
    elif biome:
        found.lint.append(
            _node_command(
                project,
                manager,
                "biome",
                ("biome", "lint", "--reporter=json", "{paths}"),
                kind="lint",
                format="biome-json",
                languages=JS_TS,
                why=f"{biome[0]} found: biome lint with its JSON reporter",
            )
        )


def _typechecker(
    project: ProjectDir, deps: dict[str, str], manager: PackageManager, found: Detection
) -> None:
    if not project.has("tsconfig.json"):
        return
    options = project.read_json("tsconfig.json").get("compilerOptions")
    check_js = isinstance(options, dict) and options.get("checkJs") is True
    program = "vue-tsc" if "vue-tsc" in deps else "tsc"
    found.lint.append(
        _node_command(
            project,
            manager,
            program,
            (program, "--noEmit", "--pretty", "false", "-p", "tsconfig.json"),
            kind="lint",
            format="tsc",
            languages=JS_TS if check_js else frozenset({"typescript"}),
            why=f"{project.display('tsconfig.json')} found: {program} type-checks the project",
        )
    )


def _tests(
    project: ProjectDir,
    package: dict[str, object],
    deps: dict[str, str],
    manager: PackageManager,
    found: Detection,
) -> None:
    scripts = _dict(package.get("scripts"))
    script = str(scripts.get("test") or "")
    for runner in ("vitest", "jest", "mocha"):
        if runner in deps:
            extra = _script_args(script, runner)
            found.tests.append(_runner(project, manager, runner, extra))
            others = [r for r in ("vitest", "jest", "mocha") if r != runner and r in deps]
            if others:
                found.notes.append(f"{', '.join(others)} also in package.json; {runner} runs")
            return
    if script and script.strip() != _NPM_DEFAULT_TEST:
        found.tests.append(
            CheckCommand(
                kind="tests",
                tool=f"{manager.name} test",
                argv=(manager.name, "test", "{target}"),
                format="raw",
                project=project.path,
                why=(
                    f"no vitest, jest or mocha in {project.display('package.json')}: "
                    f"`{manager.name} test` runs its test script ({script!r}); its output is "
                    "plain text"
                ),
                install=f"install Node.js and {manager.name}",
                targets="script",
            )
        )


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _script_args(script: str, runner: str) -> tuple[str, ...]:
    """The options of a plain `"test": "vitest --dir src"` script, to run the runner the
    way the project does (without watch mode)."""
    if not script or any(op in script for op in _SHELL_OPERATORS):
        return ()
    try:
        words = shlex.split(script)
    except ValueError:
        return ()
    if not words or words[0] != runner:
        return ()
    return tuple(w for w in words[1:] if w not in _WATCH_WORDS)


def _major(project: ProjectDir, package: str) -> int | None:
    """The installed major version of an npm package (None when not installed)."""
    head = str(project.read_json_up(f"node_modules/{package}/package.json").get("version", ""))
    major = head.split(".")[0]
    return int(major) if major.isdigit() else None


def _runner(
    project: ProjectDir, manager: PackageManager, runner: str, extra: tuple[str, ...]
) -> CheckCommand:
    why = f"{runner} in {project.display('package.json')}"
    if runner == "vitest":
        location = () if (_major(project, "vitest") or 2) < 2 else ("--includeTaskLocation",)
        argv = (
            "vitest",
            "run",
            *extra,
            "--reporter=json",
            "--outputFile={report}",
            *location,
            "{target}",
        )
        fmt = "vitest-json"
    elif runner == "jest":
        argv = ("jest", *extra, "--json", "--outputFile={report}", "--testLocationInResults")
        argv = (*argv, "{target}")
        fmt = "jest-json"
    else:
        argv = ("mocha", *extra, "--reporter", "json", "--reporter-option", "output={report}")
        argv = (*argv, "{target}")
        fmt = "mocha-json"
    return _node_command(
        project,
        manager,
        runner,
        argv,
        kind="tests",
        format=fmt,
        languages=JS_TS,
        why=f"{why}: its JSON report gives per-test results",
        targets=runner,
    )
