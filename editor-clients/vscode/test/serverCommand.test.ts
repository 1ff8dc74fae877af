import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveServerCommand, type ResolveInput } from "../src/serverCommand";

function input(overrides: Partial<ResolveInput>, executables: string[] = []): ResolveInput {
  return {
    configured: "",
    args: ["serve"],
    folders: ["/ws"],
    platform: "linux",
    isExecutable: (file) => executables.includes(file),
    onPath: (name) => (executables.includes(`/usr/bin/${name}`) ? `/usr/bin/${name}` : undefined),
    ...overrides,
  };
}

test("the setting wins when it points at an executable", () => {
  const result = resolveServerCommand(input({ configured: "/opt/a/bin/agentls" }, ["/opt/a/bin/agentls", "/ws/.venv/bin/agentls"]));
  assert.deepEqual(result, { ok: true, command: "/opt/a/bin/agentls", args: ["serve"], source: "setting" });
});

test("${workspaceFolder} is expanded in the setting", () => {
  const result = resolveServerCommand(input({ configured: "${workspaceFolder}/tools/agentls" }, ["/ws/tools/agentls"]));
  assert.equal(result.ok && result.command, "/ws/tools/agentls");
});

test("a bad setting is an error naming the setting, not a silent fallback", () => {
  const result = resolveServerCommand(input({ configured: "/nope/agentls" }, ["/usr/bin/agentls"]));
  assert.equal(result.ok, false);
  assert.match(!result.ok ? result.message : "", /agentls\.server\.command/);
});

test("then the workspace virtualenv", () => {
  const result = resolveServerCommand(input({}, ["/ws/.venv/bin/agentls", "/usr/bin/agentls"]));
  assert.deepEqual(result, { ok: true, command: "/ws/.venv/bin/agentls", args: ["serve"], source: "workspace venv" });
});

test("windows virtualenv layout", () => {
  const result = resolveServerCommand(input({ platform: "win32", folders: ["C:\\ws"] }, ["C:\\ws\\.venv\\Scripts\\agentls.exe"]));
  assert.equal(result.ok && result.command, "C:\\ws\\.venv\\Scripts\\agentls.exe");
});

test("then PATH", () => {
  const result = resolveServerCommand(input({ args: ["serve", "--log-level", "DEBUG"] }, ["/usr/bin/agentls"]));
  assert.deepEqual(result, { ok: true, command: "/usr/bin/agentls", args: ["serve", "--log-level", "DEBUG"], source: "PATH" });
});

test("nothing found: a clear message with the ways out", () => {
  const result = resolveServerCommand(input({}));
  assert.equal(result.ok, false);
  assert.match(!result.ok ? result.message : "", /pip install agentls.*agentls\.server\.command/s);
});
