// The `agentls.*` settings → the server's `agentls` section (initializationOptions and
// workspace/didChangeConfiguration). Pure: no vscode import, unit-tested.

export type Mode = "review" | "auto" | "plan";

/** What the server accepts (camelCase keys; see server/agentls/lsp/config.py). */
export interface ServerSettings {
  mode: Mode;
  model?: string;
  baseUrl?: string;
  maxTurns?: number;
  maxTokens?: number;
  allowedTools?: string[];
  askTools?: string[];
  instructions?: string;
}

/** Read access to the `agentls` configuration section (vscode.WorkspaceConfiguration fits). */
export interface SettingsSource {
  get<T>(key: string): T | undefined;
}

const MODES: readonly Mode[] = ["review", "auto", "plan"];

function text(source: SettingsSource, key: string): string | undefined {
  const value = source.get<unknown>(key);
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function positiveInt(source: SettingsSource, key: string): number | undefined {
  const value = source.get<unknown>(key);
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

function names(source: SettingsSource, key: string): string[] | undefined {
  const value = source.get<unknown>(key);
  if (!Array.isArray(value)) {
    return undefined;
  }
  const list = value.filter((v): v is string => typeof v === "string" && v !== "");
  return list.length > 0 ? list : undefined;
}

/** Only the fields the user set, so the server's own defaults and project file apply. */
export function serverSettings(source: SettingsSource): ServerSettings {
  const mode = source.get<unknown>("mode");
  const settings: ServerSettings = {
    mode: MODES.includes(mode as Mode) ? (mode as Mode) : "review",
  };
  const optional: Partial<ServerSettings> = {
    model: text(source, "model"),
    baseUrl: text(source, "endpoint"),
    maxTurns: positiveInt(source, "maxTurns"),
    maxTokens: positiveInt(source, "maxTokens"),
    allowedTools: names(source, "allowedTools"),
    askTools: names(source, "askTools"),
    instructions: text(source, "instructions"),
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) {
      (settings as unknown as Record<string, unknown>)[key] = value;
    }
  }
  return settings;
}

/** Settings whose change needs a server restart rather than didChangeConfiguration. */
export const RESTART_KEYS = ["agentls.server.command", "agentls.server.args"] as const;
