// Finding the `agentls serve` command: setting → workspace virtualenv → PATH.
// Pure (file checks are injected), unit-tested.
import * as path from "node:path";

export interface ResolveInput {
  /** `agentls.server.command` (may be empty). */
  configured: string;
  /** `agentls.server.args`. */
  args: readonly string[];
  /** Workspace folder paths, first one first. */
  folders: readonly string[];
  platform: NodeJS.Platform;
  isExecutable(file: string): boolean;
  /** Full path of `name` on PATH, if any. */
  onPath(name: string): string | undefined;
}

export type Resolved =
  | { ok: true; command: string; args: string[]; source: "setting" | "workspace venv" | "PATH" }
  | { ok: false; message: string };

const VENV_DIRS = [".venv", "venv", "env"];

export function venvCandidates(folder: string, platform: NodeJS.Platform): string[] {
  return VENV_DIRS.map((dir) =>
    platform === "win32"
      ? path.win32.join(folder, dir, "Scripts", "agentls.exe")
      : path.posix.join(folder, dir, "bin", "agentls"),
  );
}

export function resolveServerCommand(input: ResolveInput): Resolved {
  const args = [...input.args];
  const configured = input.configured.trim();
  if (configured !== "") {
    const expanded = expandVariables(configured, input.folders[0]);
    const found = path.isAbsolute(expanded) ? expanded : input.onPath(expanded);
    if (found && input.isExecutable(found)) {
      return { ok: true, command: found, args, source: "setting" };
    }
    return {
      ok: false,
      message:
        `agentls: the server command "${configured}" (setting agentls.server.command) ` +
        `is not an executable file. Point it at the agentls executable of the Python ` +
        `environment where agentls is installed (e.g. /path/to/.venv/bin/agentls).`,
    };
  }
  for (const folder of input.folders) {
    for (const candidate of venvCandidates(folder, input.platform)) {
      if (input.isExecutable(candidate)) {
        return { ok: true, command: candidate, args, source: "workspace venv" };
      }
    }
  }
  const onPath = input.onPath(input.platform === "win32" ? "agentls.exe" : "agentls");
  if (onPath) {
    return { ok: true, command: onPath, args, source: "PATH" };
  }
  return {
    ok: false,
    message:
      "agentls: cannot find the agentls server. Install it (pip install agentls) into the " +
      "workspace's .venv or onto PATH, or set agentls.server.command to its executable.",
  };
}

/** `${workspaceFolder}` and a leading `~` in a configured path. */
export function expandVariables(value: string, folder: string | undefined): string {
  let out = value;
  if (folder) {
    out = out.split("${workspaceFolder}").join(folder);
  }
  if (out.startsWith("~/") && process.env.HOME) {
    out = path.join(process.env.HOME, out.slice(2));
  }
  return out;
}
