"""Go: `go vet -json ./...` and `gofmt -l`; tests with `go test -json`.

Go's build and module caches are the user's own (`GOCACHE`, `GOMODCACHE`, shared across
runs and sessions); `GOTOOLCHAIN=local` (unless the user sets it) keeps a run from
downloading another Go release because go.mod asks for a newer one.
"""

from __future__ import annotations

from functools import partial
from typing import Final

from agentls.tools.checks.commands import CheckCommand
from agentls.tools.checks.detect.base import Detection
from agentls.tools.checks.projects import ProjectDir

__all__ = ["detect", "go_module"]

GO: Final = frozenset({"go"})
INSTALL: Final = "install Go: https://go.dev/doc/install (Debian/Ubuntu: apt install golang-go)"
ENV: Final = {"GOTOOLCHAIN": "local", "GOFLAGS": "-buildvcs=false"}


def go_module(project: ProjectDir) -> str | None:
    """The module path from go.mod."""
    for line in (project.read_text("go.mod") or "").splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "module":
            return words[1].strip('"')
    return None


def detect(project: ProjectDir) -> Detection:
    found = Detection()
    go_mod = project.display("go.mod")
    command = partial(CheckCommand, project=project.path, install=INSTALL, env=ENV, languages=GO)
    found.lint.append(
        command(
            kind="lint",
            tool="go vet",
            argv=("go", "vet", "-json", "./..."),
            format="go-json",
            why=f"{go_mod} found: go vet checks every package of the module",
        )
    )
    found.lint.append(
        command(
            kind="lint",
            tool="gofmt",
            argv=("gofmt", "-l", "{paths}"),
            format="gofmt",
            why=f"{go_mod} found: gofmt -l lists files that are not formatted",
        )
    )
    found.tests.append(
        command(
            kind="tests",
            tool="go test",
            argv=("go", "test", "-json", "{target}"),
            format="go-json",
            why=f"{go_mod} found: go test -json gives per-test results",
            targets="go",
        )
    )
    return found
