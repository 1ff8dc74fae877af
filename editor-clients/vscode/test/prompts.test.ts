import assert from "node:assert/strict";
import { test } from "node:test";
import { fixPrompt, statusSummary } from "../src/prompts";

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
