import assert from "node:assert/strict";
import { test } from "node:test";
import { serverSettings, type SettingsSource } from "../src/settings";

function source(values: Record<string, unknown>): SettingsSource {
  return { get: <T>(key: string) => values[key] as T | undefined };
}

test("defaults send only the mode", () => {
  assert.deepEqual(serverSettings(source({ mode: "review", model: "", endpoint: "", allowedTools: [] })), {
    mode: "review",
  });
});

test("set fields map onto the server's camelCase keys", () => {
  const settings = serverSettings(
    source({
      mode: "auto",
      model: " claude-x ",
      endpoint: "http://127.0.0.1:11434",
      maxTurns: 5,
      maxTokens: 2048,
      allowedTools: ["edit_file", "", 3],
      askTools: [],
      instructions: "Be brief.",
    }),
  );
  assert.deepEqual(settings, {
    mode: "auto",
    model: "claude-x",
    baseUrl: "http://127.0.0.1:11434",
    maxTurns: 5,
    maxTokens: 2048,
    allowedTools: ["edit_file"],
    instructions: "Be brief.",
  });
});

test("invalid values fall back instead of reaching the server", () => {
  const settings = serverSettings(source({ mode: "yolo", maxTurns: -1, maxTokens: 1.5, model: 42 }));
  assert.deepEqual(settings, { mode: "review" });
});

test("no API key field exists in the server settings", () => {
  const settings = serverSettings(source({ mode: "review", apiKey: "sk-secret" }));
  assert.equal(JSON.stringify(settings).includes("sk-secret"), false);
});
