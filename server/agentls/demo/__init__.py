"""Package data for `agentls demo`: a sample project with a bug and a recorded scenario."""

from pathlib import Path

SAMPLE = Path(__file__).parent / "sample"
SCENARIO = Path(__file__).parent / "scenario.json"
