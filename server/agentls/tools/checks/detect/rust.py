"""Rust: `cargo clippy --message-format=json`, or `cargo check` where clippy is not
installed; tests with `cargo test`, read per test.

Builds go to a per-workspace cache (`CARGO_TARGET_DIR`, unless the user sets it), not into
the shadow copy and not into the user's `target/`: a cold build of a crate's dependencies
takes minutes, and the cache keeps it for every later run and session of the workspace.
"""

from __future__ import annotations

from functools import partial
from typing import Final

from agentls.tools.checks.commands import CheckCommand
from agentls.tools.checks.detect.base import Detection
from agentls.tools.checks.projects import ProjectDir

__all__ = ["detect"]

RUST: Final = frozenset({"rust"})
INSTALL: Final = "install Rust with rustup: https://rustup.rs (Debian/Ubuntu: apt install cargo)"
ENV: Final = {"CARGO_TARGET_DIR": "{cargo_target}", "CARGO_TERM_COLOR": "never"}


def detect(project: ProjectDir) -> Detection:
    found = Detection()
    manifest = project.display("Cargo.toml")
    command = partial(CheckCommand, project=project.path, install=INSTALL, env=ENV, languages=RUST)
    check = command(
        kind="lint",
        tool="cargo check",
        argv=("cargo", "check", "--message-format=json", "--all-targets"),
        format="cargo-json",
        why=f"{manifest} found: cargo check compiles every target",
    )
    found.lint.append(
        command(
            kind="lint",
            tool="cargo clippy",
            argv=("cargo", "clippy", "--message-format=json", "--all-targets"),
            format="cargo-json",
            why=f"{manifest} found: cargo clippy checks and lints every target",
            fallback=check,
            probe=("cargo", "clippy", "--version"),
            probe_note="clippy is not installed (rustup component add clippy), so cargo check ran",
        )
    )
    found.tests.append(
        command(
            kind="tests",
            tool="cargo test",
            argv=("cargo", "test", "--no-fail-fast", "--message-format=json", "{target}"),
            format="cargo-json",
            why=f"{manifest} found: cargo test, read per test from its output",
            targets="cargo",
        )
    )
    return found
