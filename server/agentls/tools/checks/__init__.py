"""Linters and test runners for the `lint` and `run_tests` tools, for every ecosystem.

- `settings`: the `lint` / `tests` settings (pydantic models, one entry per command);
- `detect/`: what a project uses, read from its own files, with the reason for each choice;
- `plan`: which command checks which file or runs which tests (settings first);
- `programs`, `runner`: finding the program the way the project would, and running it in
  the session's shadow copy through the shared process runner;
- `parsing`, `findings`, `targets`: each format into one result shape, and `run_tests`'
  target into each runner's syntax;
- `overview`: what `agentls doctor` shows.

See docs/lint-and-tests.md.
"""
