"""Writes its environment (JSON) to a file, then becomes the real command (exec).

Usage: python env_dump.py OUTPUT -- COMMAND ARGV...  — shows what a language server
started by agentls inherits, and whether it was started at all.
"""

from __future__ import annotations

import json
import os
import sys

out = sys.argv[1]
argv = sys.argv[sys.argv.index("--") + 1 :]
with open(out, "w", encoding="utf-8") as handle:
    json.dump(dict(os.environ), handle)
os.execvp(argv[0], argv)
