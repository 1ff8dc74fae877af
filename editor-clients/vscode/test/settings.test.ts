import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";
import { FORWARDED_KEYS, type InspectedValue, serverKey, serverSettings, type SettingsSource } from "../src/settings";

function source(values: Record<string, unknown>, explicit?: Record<string, unknown>): SettingsSource {
  return {
    get: <T>(key: string) => values[key] as T | undefined,
    inspect: explicit
      ? <T>(key: string): InspectedValue<T> => ({ globalValue: explicit[key] as T | undefined })
      : undefined,
  };
}

/** The settings schema the server validates with (docs/settings.schema.json). */
function schemaKeys(): string[] {
  const file = resolve(__dirname, "../../../../docs/settings.schema.json");
  const schema = JSON.parse(readFileSync(file, "utf8")) as { properties: Record<string, unknown> };
  return Object.keys(schema.properties);
}

/** A value of the right kind for a schema property, so it counts as set. */
function sample(key: string): unknown {
  const file = resolve(__dirname, "../../package.json");
  const manifest = JSON.parse(readFileSync(file, "utf8")) as {
    contributes: { configuration: { properties: Record<string, { type?: unknown; enum?: unknown[] }> } };
  };
  const prop = manifest.contributes.configuration.properties[`agentls.${key}`];
  const types = ([] as unknown[]).concat(prop.type ?? "object");
  if (Array.isArray(prop.enum)) {
    return prop.enum.find((v) => v !== null);
  }
  if (types.includes("boolean")) {
    return false; // a set `false` is a value, not "unset"
  }
  if (types.includes("integer") || types.includes("number")) {
    return 3;
  }
  if (types.includes("string")) {
    return "x";
  }
  if (types.includes("array")) {
    return ["x"];
  }
  return { x: 1 };
}

test("every server setting in the schema is forwarded under its server key", () => {
  const keys = schemaKeys();
  const vscodeKeys = new Set(FORWARDED_KEYS.map(serverKey));
  assert.deepEqual([...vscodeKeys].sort(), [...keys].sort(), "package.json and the schema list the same settings");
  const values = Object.fromEntries(FORWARDED_KEYS.map((key) => [key, sample(key)]));
  const settings = serverSettings(source(values));
  for (const key of keys) {
    assert.ok(key in settings, `${key} is not forwarded`);
  }
  assert.equal(settings.baseUrl, "x");
  assert.equal("endpoint" in settings, false);
});

test("the extension's own settings stay local", () => {
  const settings = serverSettings(
    source({ "server.command": "/bin/agentls", "server.args": ["serve"], "trace.server": "verbose", model: "m" }),
  );
  assert.deepEqual(settings, { model: "m" });
});

test("unset values are left out, so the project file and the server defaults apply", () => {
  assert.deepEqual(
    serverSettings(source({ mode: "review", model: "", endpoint: " ", allowedTools: [], hooks: {}, maxTurns: null })),
    { mode: "review" },
  );
  // with inspect (VS Code): package.json's default of `mode` is not a value the user set
  assert.deepEqual(serverSettings(source({ mode: "review", maxTurns: 5 }, { maxTurns: 5 })), { maxTurns: 5 });
});

test("set fields map onto the server's camelCase keys", () => {
  const settings = serverSettings(
    source({
      mode: "auto",
      model: " claude-x ",
      endpoint: "http://127.0.0.1:11434",
      maxTurns: 5,
      autoCompact: false,
      allowedTools: ["edit_file"],
      sandbox: { network: { allowedDomains: ["pypi.org"] } },
      languageServers: { python: { command: ["pyright-langserver", "--stdio"] } },
      instructions: "Be brief.",
    }),
  );
  assert.deepEqual(settings, {
    mode: "auto",
    model: "claude-x",
    baseUrl: "http://127.0.0.1:11434",
    maxTurns: 5,
    autoCompact: false,
    allowedTools: ["edit_file"],
    sandbox: { network: { allowedDomains: ["pypi.org"] } },
    languageServers: { python: { command: ["pyright-langserver", "--stdio"] } },
    instructions: "Be brief.",
  });
});

test("no API key field exists in the server settings", () => {
  const settings = serverSettings(source({ mode: "review", apiKey: "sk-secret" }));
  assert.equal(JSON.stringify(settings).includes("sk-secret"), false);
});
