"""A hostile workspace for the safety tests of every host path.

Secret values are distinct strings ("hunter2-…"), not the API key, so a test proves that
the secret-file step refused the call: credential redaction cannot rescue a leak here.
The API key is planted separately, in an ordinary file, for the redaction tests.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

API_KEY = "sk-ant-api03-ATTACKER-CAN-SEE-THIS-0123456789abcdef"
"""What the agent's process has in ANTHROPIC_API_KEY in these tests."""

SECRET_MARK = "hunter2"
"""Every secret file's value contains this; no tool result may."""


def hostile_workspace(root: Path) -> Path:
    """Secret files, links to them, and an ordinary file with the API key pasted in."""
    root.mkdir(parents=True, exist_ok=True)
    (root / ".env").write_text(f"DB_PASSWORD={SECRET_MARK}-dotenv\n")
    # a separate file on Linux; the same file as .env on macOS and Windows
    (root / ".ENV").write_text(f"DB_PASSWORD={SECRET_MARK}-upper\n")
    (root / ".env.py").write_text(f"API_TOKEN = '{SECRET_MARK}-envpy'\n\n\ndef load():\n    pass\n")
    (root / ".aws").mkdir()
    (root / ".aws" / "credentials").write_text(f"aws_secret_access_key={SECRET_MARK}-aws\n")
    os.symlink(root / ".env", root / "notes.txt")  # an innocent name for .env
    os.symlink(root / ".aws", root / "settings")  # an innocent folder for .aws/
    (root / "sub").mkdir()
    (root / "pasted.md").write_text(f"the key is {API_KEY} (oops)\n")
    (root / "README.md").write_text("hello\n")
    return root


def secret_attacks(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """Calls that would show a secret file's contents, each a different trick."""
    return [
        ("read_file", {"path": ".env"}),
        ("read_file", {"path": "./.env"}),
        ("read_file", {"path": "sub/../.env"}),
        ("read_file", {"path": ".//.env"}),
        ("read_file", {"path": str(root / ".env")}),  # absolute
        ("read_file", {"path": " .env "}),  # padded: the tools strip it
        ("read_file", {"path": ".ENV"}),  # case
        ("read_file", {"path": "notes.txt"}),  # symlink to .env
        ("read_file", {"path": "settings/credentials"}),  # symlinked folder to .aws/
        ("grep", {"pattern": "DB_PASSWORD", "path": ".env"}),
        ("grep", {"pattern": "DB_PASSWORD", "path": ".ENV"}),
        ("grep", {"pattern": "aws_secret", "path": "settings"}),
        ("grep", {"pattern": "DB_PASSWORD|aws_secret|API_TOKEN"}),  # the whole workspace
        ("grep", {"pattern": "DB_PASSWORD", "glob": ".env*"}),
        ("edit_file", {"path": ".env", "old_string": "DB_PASSWORD=", "new_string": "X="}),
        ("document_symbols", {"path": ".env.py"}),
    ]


def leaked(content: object) -> bool:
    return SECRET_MARK in str(content)
