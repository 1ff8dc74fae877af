"""How each well-known language server is started so it runs none of the repository's code
before the workspace is trusted (issue 27: a repository's `tsserver.js` ran unsandboxed).

- typescript-language-server gets the TypeScript installed beside it as `tsserver.path`:
  it would otherwise prefer `node_modules/typescript`, `.yarn/sdks` or `.vscode/pnpify` of
  the workspace. tsserver looks for tsconfig `plugins` next to its own `node_modules` (and
  in the workspace only with `--allowLocalPluginLoads`, which is never passed), so with the
  global one no project plugin loads. Automatic type acquisition (an `npm install` of
  `@types` packages) is off too. With no TypeScript beside the server it is not started.
- pyright/basedpyright: the project's virtualenv is not put on `PATH` (`pool.py`), so the
  interpreter they run to list import paths is the user's; a `pyrightconfig.json`
  `venv`/`venvPath` only names folders it reads (site-packages), nothing it runs.
- rust-analyzer: build scripts, proc macros and `cargo check` on save are off, and the
  user's default toolchain is pinned (`RUSTUP_TOOLCHAIN`), so `rust-toolchain.toml` cannot
  pick a toolchain (a `path` toolchain is a repository binary); `cargo` cannot run a
  repository's `rustc` wrapper.
- gopls (before and after trust): `GOTOOLCHAIN=local` (a `toolchain` line in go.mod would
  download and run another Go), `GOPROXY=off`, `CGO_ENABLED=0` (no C compiler runs for
  `go list`); gopls itself never runs `go:generate`.
- clangd runs nothing of the project (no `--query-driver` is passed).
- vue-language-server gets the TypeScript installed beside it as `typescript.tsdk`.
- Every registry row marked `"held back"` (`agentls.codeintel.registry`: a server that
  would run build files, JavaScript configs or plugins the project names) is not started
  at all before trust; its `problem` says so and names what it would run.

Trust widens what they may load (the workspace's TypeScript and its plugins, the project's
interpreter, build scripts); the sandbox (`sandboxed.py`) keeps what they may touch the
same either way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentls.codeintel.discovery import ServerPlan
from agentls.codeintel.languages import known_server_named

__all__ = ["Hardening", "global_tsserver", "harden", "merge_options"]

GO_ENV = {"GOTOOLCHAIN": "local", "GOPROXY": "off", "CGO_ENABLED": "0", "GOFLAGS": "-mod=readonly"}
RUST_OPTIONS: dict[str, object] = {
    "cargo": {"buildScripts": {"enable": False}},
    "procMacro": {"enable": False},
    "checkOnSave": False,
}


@dataclass(frozen=True)
class Hardening:
    """What the server's start adds: initialization options and environment."""

    initialization_options: Mapping[str, Any] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)
    """The registry's default `workspace/configuration` answers (the user's win per key)."""
    problem: str = ""
    """Why the server must not start at all (then it is not started)."""
    notes: tuple[str, ...] = ()
    """What was restricted, for `agentls.status`."""


def harden(plan: ServerPlan, trusted: bool, roots: Sequence[Path]) -> Hardening:
    """The restrictions for `plan` (by the well-known server it runs), over the registry's
    default initialization options."""
    found = _restrictions(plan, trusted, roots)
    known = known_server_named(plan.name)
    if known is None:
        return found
    options = merge_options(known.initialization_options, dict(found.initialization_options))
    return replace(found, initialization_options=options or {}, settings=known.settings)


def _restrictions(plan: ServerPlan, trusted: bool, roots: Sequence[Path]) -> Hardening:
    known = known_server_named(plan.name)
    if plan.name == "vue-language-server":
        return _vue(plan)
    if plan.name == "gopls":
        return Hardening(env=GO_ENV, notes=("GOTOOLCHAIN=local, GOPROXY=off, CGO_ENABLED=0",))
    if trusted:
        return Hardening()
    if plan.name == "typescript-language-server":
        return _typescript(plan, roots)
    if plan.name == "rust-analyzer":
        return _rust()
    if known is not None and known.before_trust == "held back":
        return Hardening(
            problem=f"{known.name} is not started in an untrusted workspace: it would run "
            f"{known.loads}. Trust the workspace (then it runs in the sandbox) or configure "
            "another server in `languageServers`"
        )
    return Hardening()


def _vue(plan: ServerPlan) -> Hardening:
    """Vue's server needs a TypeScript (`typescript.tsdk`): the one installed beside it."""
    for word in plan.argv or ():
        program = shutil.which(word) if os.sep not in word else word
        if program is None or "vue-language-server" not in Path(word).name:
            continue
        for folder in Path(os.path.realpath(program)).parents:
            lib = folder / "node_modules" / "typescript" / "lib"
            if (lib / "tsserver.js").is_file():
                return Hardening({"typescript": {"tsdk": str(lib)}}, notes=(f"TypeScript: {lib}",))
    return Hardening(
        problem="vue-language-server needs a TypeScript beside it (npm install -g "
        "@vue/language-server typescript), or `typescript.tsdk` in its initializationOptions"
    )


def _typescript(plan: ServerPlan, roots: Sequence[Path]) -> Hardening:
    configured = _configured_tsserver(plan)
    if configured is not None:
        return Hardening({"disableAutomaticTypingAcquisition": True}, notes=(configured,))
    found = global_tsserver(plan.argv or ())
    if found is None or any(_is_under(found, Path(r).resolve()) for r in roots):
        return Hardening(
            problem="typescript-language-server is not started in an untrusted workspace "
            "without a TypeScript of your own beside it (it would run the workspace's "
            "node_modules/typescript): install `typescript` next to it (npm install -g "
            "typescript), or trust the workspace"
        )
    options = {"tsserver": {"path": str(found)}, "disableAutomaticTypingAcquisition": True}
    return Hardening(options, notes=(f"TypeScript: {found}",))


def _configured_tsserver(plan: ServerPlan) -> str | None:
    """A `tsserver.path` the user configured (user settings: the only ones before trust)."""
    options = plan.config.initialization_options if plan.config is not None else None
    tsserver = options.get("tsserver") if isinstance(options, dict) else None
    path = tsserver.get("path") if isinstance(tsserver, dict) else None
    return f"TypeScript: {path} (user settings)" if isinstance(path, str) and path else None


def global_tsserver(argv: Sequence[str]) -> Path | None:
    """`typescript/lib/tsserver.js` as node would resolve it from typescript-language-server
    itself (its own `node_modules`, then each folder above it)."""
    for word in argv:
        program = shutil.which(word) if os.sep not in word else word
        if program is None or "typescript-language-server" not in Path(word).name:
            continue
        real = Path(os.path.realpath(program))
        for folder in real.parents:
            candidate = folder / "node_modules" / "typescript" / "lib" / "tsserver.js"
            if candidate.is_file():
                return candidate
    return None


def _rust() -> Hardening:
    env = {"CARGO_BUILD_RUSTC_WRAPPER": "", "RUSTC_WRAPPER": ""}
    toolchain = _default_toolchain()
    if toolchain:
        env["RUSTUP_TOOLCHAIN"] = toolchain
    notes = ("build scripts, proc macros and check-on-save off",)
    return Hardening(RUST_OPTIONS, env, notes=notes)


@lru_cache(maxsize=1)
def _default_toolchain() -> str:
    """The user's default rustup toolchain (asked from HOME, away from any project file)."""
    rustup = shutil.which("rustup")
    if rustup is None:
        return ""
    try:
        done = subprocess.run(
            [rustup, "default"],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=Path.home(),
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    words = done.stdout.split()
    return words[0] if done.returncode == 0 and words else ""


def merge_options(ours: Mapping[str, Any], configured: Any) -> Any:
    """The configured initialization options over ours (the user's choice wins; a project's
    entries only exist once it is trusted)."""
    if not ours:
        return configured
    if configured is None:
        return dict(ours)
    if not isinstance(configured, Mapping):
        return configured
    merged: dict[str, object] = dict(ours)
    for key, value in configured.items():
        mine = merged.get(key)
        if isinstance(mine, Mapping) and isinstance(value, Mapping):
            merged[key] = merge_options(mine, value)
        else:
            merged[key] = value
    return merged


def _is_under(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)
