// The `agentls.*` settings → the server's `agentls` section (initializationOptions and
// workspace/didChangeConfiguration). Pure: no vscode import, unit-tested.
//
// Every setting in package.json's `contributes.configuration` (generated from
// docs/settings.schema.json by `python -m agentls.config.schema --write`) is forwarded
// under its server key, except the extension's own `agentls.server.*` / `agentls.trace.*`.
// Only what the user set is sent, so the server's other layers (the environment, the
// project file) and its defaults still apply; the server validates each value and reports
// a bad one with what applies instead.
import manifest from "../package.json";

/** The server's settings section: camelCase keys as in docs/settings.schema.json. */
export type ServerSettings = Record<string, unknown>;

/** What `vscode.WorkspaceConfiguration.inspect` returns (the parts used here). */
export interface InspectedValue<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
  globalLanguageValue?: T;
  workspaceLanguageValue?: T;
  workspaceFolderLanguageValue?: T;
}

/** Read access to the `agentls` configuration section (vscode.WorkspaceConfiguration fits). */
export interface SettingsSource {
  get<T>(key: string): T | undefined;
  /** When present, a setting counts as set only if some scope sets it explicitly. */
  inspect?<T>(key: string): InspectedValue<T> | undefined;
}

const EXTENSION_OWNED = ["server.", "trace."];
/** Settings VS Code calls by another name than the server (see VSCODE_NAMES in schema.py). */
const SERVER_NAMES: Readonly<Record<string, string>> = { endpoint: "baseUrl" };

/** The `agentls.*` keys (without the prefix) this extension forwards, from package.json. */
export const FORWARDED_KEYS: readonly string[] = Object.keys(manifest.contributes.configuration.properties)
  .map((name) => name.replace(/^agentls\./, ""))
  .filter((key) => !EXTENSION_OWNED.some((prefix) => key.startsWith(prefix)));

/** The server's name for a forwarded key (`endpoint` → `baseUrl`). */
export function serverKey(key: string): string {
  return SERVER_NAMES[key] ?? key;
}

function setSomewhere<T>(inspected: InspectedValue<T>): boolean {
  return [
    inspected.globalValue,
    inspected.workspaceValue,
    inspected.workspaceFolderValue,
    inspected.globalLanguageValue,
    inspected.workspaceLanguageValue,
    inspected.workspaceFolderLanguageValue,
  ].some((value) => value !== undefined);
}

/** VS Code's "not set" values: the defaults package.json gives (empty text, list, object). */
function empty(value: unknown): boolean {
  if (value === undefined || value === null) {
    return true;
  }
  if (typeof value === "string") {
    return value.trim() === "";
  }
  if (Array.isArray(value)) {
    return value.length === 0;
  }
  return typeof value === "object" && Object.keys(value as object).length === 0;
}

/** Only the fields the user set, under the server's keys. */
export function serverSettings(source: SettingsSource): ServerSettings {
  const settings: ServerSettings = {};
  for (const key of FORWARDED_KEYS) {
    const inspected = source.inspect?.<unknown>(key);
    if (inspected !== undefined && !setSomewhere(inspected)) {
      continue; // a default (e.g. `mode`'s "review") must not hide the project's setting
    }
    const value = source.get<unknown>(key);
    if (empty(value)) {
      continue;
    }
    settings[serverKey(key)] = typeof value === "string" ? value.trim() : value;
  }
  return settings;
}

/** Settings whose change needs a server restart rather than didChangeConfiguration. */
export const RESTART_KEYS = ["agentls.server.command", "agentls.server.args"] as const;
