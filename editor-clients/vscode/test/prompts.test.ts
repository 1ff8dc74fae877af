import assert from "node:assert/strict";
import { test } from "node:test";
import { fixPrompt, statusDetails, statusSummary } from "../src/prompts";

test("fix prompt lists diagnostics with 1-based lines", () => {
  assert.equal(
    fixPrompt([
      { line: 0, message: "undefined name 'x'", source: "pyflakes", code: "F821" },
      { line: 4, message: "line too long" },
    ]),
    "Fix these diagnostics with minimal changes:\n- line 1: pyflakes [F821] undefined name 'x'\n- line 5: line too long",
  );
});

test("no diagnostics, no prompt", () => {
  assert.equal(fixPrompt([]), undefined);
});

test("status summary", () => {
  const summary = statusSummary({
    sessions: [{ id: "a", running: true }, { id: "b", running: false }],
    model: "claude-x",
    endpoint: "http://127.0.0.1:1",
  });
  assert.equal(summary, "agentls — 2 session(s), 1 running, model: claude-x, endpoint: http://127.0.0.1:1");
  assert.equal(statusSummary(null), "agentls: no status");
});

const STATUS = {
  sessions: [{ id: "abc", status: "completed", turns: 2, running: false }],
  model: "claude-x",
  endpoint: "https://api.anthropic.com",
  mode: "review",
  sandbox: {
    enabled: true,
    available: false,
    backend: null,
    message: "bubblewrap is not installed.",
    fix: "sudo apt install bubblewrap",
    network: "off",
    limits: "",
    fallback: { run_command: "refuse", run_tests: "ask", lint: "ask" },
  },
  trust: {
    state: "pending",
    trusted: false,
    held_back: [{ source: ".agentls.toml", setting: "hooks", detail: "PreToolUse: ./check.sh" }],
  },
  code_intel: [
    { source: "editor", state: "available", methods: ["textDocument/definition", "textDocument/hover"] },
    { source: "language server", language: "python", server: "basedpyright", state: "running", origin: "PATH", pid: 42 },
    { source: "language server", language: "go", server: null, state: "unavailable", reason: "gopls not found on PATH" },
    { source: "language server", language: "rust", state: "ignored", reason: "set in the project file, but the workspace is not trusted" },
  ],
};

test("status summary names the sandbox, the language servers and workspace trust", () => {
  const summary = statusSummary(STATUS);
  assert.match(summary, /sandbox: unavailable/);
  assert.match(summary, /language servers: 1 running of 3/);
  assert.match(summary, /workspace: not trusted yet/);
});

test("status details: which language servers run, for which languages, and why one does not", () => {
  const lines = statusDetails(STATUS);
  assert.ok(lines.includes("    python: basedpyright running from PATH, pid 42"), lines.join("\n"));
  assert.ok(lines.includes("    go: unavailable — gopls not found on PATH"), lines.join("\n"));
  assert.ok(lines.some((l) => l.startsWith("    rust:") && l.includes("not trusted")));
  assert.ok(lines.includes("    editor: available (textDocument/definition, textDocument/hover)"));
  assert.ok(lines.includes("  sandbox: unavailable — bubblewrap is not installed."));
  assert.ok(lines.includes("    fix: sudo apt install bubblewrap"));
  assert.ok(lines.includes("    without it: run_command: refuse, run_tests: ask, lint: ask"));
  assert.ok(lines.includes("    held back: hooks: PreToolUse: ./check.sh (.agentls.toml)"));
});
