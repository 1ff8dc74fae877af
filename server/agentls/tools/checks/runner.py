"""Running a `CheckCommand` in the session's shadow copy: the one place the lint and test
tools start processes (through `process_guard.run_guarded`, i.e. the shared runner in
`workspace/process.py`, so its sandbox and limits apply to every linter and test run).

Resolves the program the way the project would (its `node_modules/.bin`, its virtualenv,
PATH, `python -m`), names the install command when it is missing, fills the placeholders,
and sets the environment: the project's venv, the shadow's Python paths, Cargo's build
cache, no colours.
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from agentls.tools.checks.commands import CheckCommand
from agentls.tools.checks.programs import Missing, Programs
from agentls.workspace.process import Confinement, ProcessResult, ProcessStartError
from agentls.workspace.process_guard import run_guarded
from agentls.workspace.shadow import ShadowWorkspace
from agentls.workspace.toolchain import has_module, venv_env

__all__ = ["CheckRun", "CheckRunner", "Limits", "Missing"]

_NO_COLOUR: Final = {"NO_COLOR": "1", "FORCE_COLOR": "0", "CLICOLOR": "0", "TERM": "dumb"}
_ANSI: Final = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_probes: set[tuple[str, ...]] = set()
"""Probes that succeeded (is clippy installed?), for this process."""


@dataclass(frozen=True)
class Limits:
    timeout: float
    max_output_bytes: int
    stop_signals: tuple[int, ...] = (signal.SIGTERM,)
    kill_grace: float = 2.0


@dataclass
class CheckRun:
    """One command's run: what ran (the fallback, when the first choice could not), where,
    and what it left (process result, report file text)."""

    command: CheckCommand
    argv: list[str]
    cwd: Path
    result: ProcessResult
    report_text: str | None = None
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    """The file arguments `{paths}` stood for (relative to `cwd`)."""


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


class CheckRunner:
    """Runs commands for one session's shadow copy of the workspace."""

    def __init__(
        self, shadow: ShadowWorkspace, confine: Callable[[Path], Confinement | None] | None = None
    ) -> None:
        self.shadow = shadow
        self.confine = confine
        """The sandbox for a process started in a folder (None: unsandboxed, as the
        permission step allowed; see `agentls.tools._execution.confinement_for`)."""
        self.workspace = shadow.workspace
        self.programs = Programs(shadow.to_shadow, shadow.root_for)

    # -- resolving ------------------------------------------------------------------------

    async def resolve(self, command: CheckCommand, limits: Limits) -> tuple[CheckCommand, str]:
        """The command to run: its fallback when its probe fails (clippy missing); `Missing`
        when a `{python} -m module` command's interpreter cannot import the module."""
        if command.program == "{python}" and command.module:
            python = self.programs.python(command.project)
            if not has_module(self.programs.venv(command.project), command.module):
                code = "import importlib.util as u, sys; sys.exit(u.find_spec(sys.argv[1]) is None)"
                probe = [python, "-c", code, command.module]
                if not await self._probe(command, probe, limits):
                    message = f"{command.module} is not installed for {python}"
                    raise Missing(message, command.install)
        if not command.probe or command.fallback is None:
            return command, ""
        probe = [*self.programs.program(command), *command.probe[1:]]
        if await self._probe(command, probe, limits):
            return command, ""
        return command.with_fallback(), command.probe_note

    async def _probe(self, command: CheckCommand, argv: list[str], limits: Limits) -> bool:
        """Whether `argv` exits 0. A success is remembered for this process; a failure is
        not (the user may install the missing piece at any time)."""
        key = tuple(argv)
        if key in _probes:
            return True
        result = await self._launch(
            argv,
            self.shadow.to_shadow(command.project),
            self._env(command),
            Limits(min(limits.timeout, 60.0), 64 * 1024),
        )
        if result.exit_code == 0:
            _probes.add(key)
        return result.exit_code == 0

    # -- running --------------------------------------------------------------------------

    async def run(
        self,
        command: CheckCommand,
        limits: Limits,
        *,
        paths: Sequence[Path] = (),
        target: Sequence[str] = (),
    ) -> CheckRun:
        """Run `command` with `paths` (workspace paths) for `{paths}` and `target` (runner
        arguments) for `{target}`; `Missing` when the program is not installed."""
        command, note = await self.resolve(command, limits)
        argv, cwd, report, files = self._prepare(command, paths, target)
        try:
            result = await self._launch(argv, cwd, self._env(command), limits)
        finally:
            report_text = _read_and_remove(report)
        run = CheckRun(command, argv, cwd, result, report_text, files=files)
        if note:
            run.notes.append(note)
        return run

    def _prepare(
        self, command: CheckCommand, paths: Sequence[Path], target: Sequence[str]
    ) -> tuple[list[str], Path, Path, list[str]]:
        """(argv, folder to run in, report file, file arguments) with placeholders filled."""
        prefix = self.programs.program(command, check_module=False)
        cwd = self.shadow.to_shadow(command.project)
        cwd.mkdir(parents=True, exist_ok=True)  # a configured `cwd` the copy lacks
        report = self.shadow.reports_dir / f"report-{uuid.uuid4().hex}"
        values = {
            "{root}": str(cwd),
            "{python}": self.programs.python(command.project),
            "{report}": str(report),
            "{junitxml}": str(report),
        }
        files = [os.path.relpath(self.shadow.to_shadow(p), cwd) for p in paths]
        return [*prefix, *expand(command.argv[1:], values, files, list(target))], cwd, report, files

    async def _launch(
        self, argv: list[str], cwd: Path, env: Mapping[str, str], limits: Limits
    ) -> ProcessResult:
        """The one place lint and test processes start."""
        try:
            return await run_guarded(
                argv,
                cwd=cwd,
                env=env,
                timeout=limits.timeout,
                max_output_bytes=limits.max_output_bytes,
                stop_signals=limits.stop_signals,
                kill_grace=limits.kill_grace,
                confinement=self.confine(cwd) if self.confine is not None else None,
            )
        except ProcessStartError as exc:
            raise Missing(str(exc), None) from exc

    def _env(self, command: CheckCommand) -> dict[str, str]:
        root = self.shadow.root_for(command.project)
        venv = self.programs.venv(command.project)
        env = dict(_NO_COLOUR)
        env.update(self.shadow.workspace.services.environment)  # the settings' `env`
        env.update(venv_env([venv.parent]) if venv is not None else {})
        env.update(self.shadow.python_env(root))
        if command.project != root:  # a nested Python project: its copy's sources win too
            copy = self.shadow.to_shadow(command.project)
            first = [str(p) for p in (copy / "src", copy) if p.is_dir()]
            env["PYTHONPATH"] = os.pathsep.join([*first, env["PYTHONPATH"]]).rstrip(os.pathsep)
        env["PYTHONUNBUFFERED"] = "1"
        for key, value in command.env.items():
            if key not in os.environ:  # the user's own setting wins
                env[key] = value.replace("{cargo_target}", str(self.cargo_target(command)))
        return env

    def cargo_target(self, command: CheckCommand) -> Path:
        """Cargo's build folder for this crate: a cache shared by every session and run of the
        workspace, outside it (a cold build of the dependencies takes minutes)."""
        key = hashlib.sha256(str(command.project).encode()).hexdigest()[:16]
        folder = self.shadow.cache_root / "cargo-target" / f"{command.project.name}-{key}"
        if any(folder.is_relative_to(r) for r in self.workspace.roots):
            folder = self.shadow.directory / "cargo-target"  # never build into the user's tree
        return folder


def expand(
    template: Sequence[str], values: Mapping[str, str], files: list[str], target: list[str]
) -> list[str]:
    """Fill an argv template. `{paths}` / `{target}` alone become the files / target
    arguments; inside a word (`--only={target}`) they are joined with spaces, and the word is
    dropped when there is nothing to put in it."""
    argv: list[str] = []
    lists = {"{paths}": files, "{files}": files, "{target}": target}
    for part in template:
        if part in lists:
            argv.extend(lists[part])
            continue
        inside = [key for key in lists if key in part]
        if inside and not any(lists[key] for key in inside):
            continue
        for key in inside:
            part = part.replace(key, " ".join(lists[key]))
        for key, value in values.items():
            part = part.replace(key, value)
        argv.append(part)
    return argv


def _read_and_remove(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace") or None
    except OSError:
        return None
    finally:
        path.unlink(missing_ok=True)
