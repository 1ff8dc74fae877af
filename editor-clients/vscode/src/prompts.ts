// Prompts the extension builds itself. Pure, unit-tested.

export interface DiagnosticInfo {
  /** 0-based line. */
  line: number;
  message: string;
  source?: string;
  code?: string | number;
}

const MAX_DIAGNOSTICS = 20;

/** "Fix these diagnostics" prompt, or undefined when there is nothing to fix. */
export function fixPrompt(diagnostics: readonly DiagnosticInfo[]): string | undefined {
  if (diagnostics.length === 0) {
    return undefined;
  }
  const lines = diagnostics.slice(0, MAX_DIAGNOSTICS).map((d) => {
    const source = d.source ? `${d.source} ` : "";
    const code = d.code !== undefined && d.code !== "" ? `[${String(d.code)}] ` : "";
    return `- line ${d.line + 1}: ${source}${code}${d.message}`;
  });
  return `Fix these diagnostics with minimal changes:\n${lines.join("\n")}`;
}

type Json = Record<string, unknown>;

function record(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function text(value: unknown): string {
  return typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value);
}

/** One-paragraph summary of `agentls.status` for a notification. */
export function statusSummary(status: unknown): string {
  if (typeof status !== "object" || status === null) {
    return "agentls: no status";
  }
  const s = status as Json;
  const sessions = list(s.sessions);
  const running = sessions.filter((x) => record(x).running).length;
  const parts = [`${sessions.length} session(s)`, `${running} running`];
  for (const key of ["model", "endpoint", "base_url", "mode"]) {
    if (typeof s[key] === "string" && s[key] !== "") {
      parts.push(`${key}: ${String(s[key])}`);
    }
  }
  if (s.sandbox !== undefined) {
    parts.push(`sandbox: ${sandboxLine(record(s.sandbox))}`);
  }
  const servers = list(s.code_intel).map(record).filter((e) => e.source === "language server");
  if (servers.length > 0) {
    const runningServers = servers.filter((e) => e.state === "running").length;
    parts.push(`language servers: ${runningServers} running of ${servers.length}`);
  }
  if (s.trust !== undefined) {
    parts.push(`workspace: ${trustLine(record(s.trust))}`);
  }
  return `agentls — ${parts.join(", ")}`;
}

function sandboxLine(sandbox: Json): string {
  if (sandbox.enabled === false) {
    return "off (sandbox.enabled: false)";
  }
  if (sandbox.available !== true) {
    return "unavailable";
  }
  const network = sandbox.network === "off" ? "network off" : "network limited";
  return `on (${text(sandbox.backend) || "?"}, ${network})`;
}

function trustLine(trust: Json): string {
  switch (trust.state) {
    case "trusted":
      return "trusted";
    case "not_needed":
      return "nothing to trust";
    case "disabled":
      return "project settings held back (trustProjectSettings: false)";
    case "untrusted":
      return "not trusted (its settings that loosen safety are held back)";
    default:
      return "not trusted yet (its settings that loosen safety are held back)";
  }
}

/** `agentls.status` as readable lines for the log: sessions, the sandbox (and the fix when
 *  it cannot run), workspace trust (what is held back), and code intelligence (which
 *  language servers run, for which languages, and why one does not). */
export function statusDetails(status: unknown): string[] {
  const s = record(status);
  const lines = ["agentls status"];
  lines.push(`  model: ${text(s.model)}   endpoint: ${text(s.endpoint)}   mode: ${text(s.mode) || "review"}`);
  for (const session of list(s.sessions).map(record)) {
    const running = session.running ? " (running)" : "";
    lines.push(`  session ${text(session.id)}: ${text(session.status)}, ${text(session.turns)} turn(s)${running}`);
  }
  if (s.sandbox !== undefined) {
    const sandbox = record(s.sandbox);
    lines.push(`  sandbox: ${sandboxLine(sandbox)} — ${text(sandbox.message)}`);
    if (sandbox.available !== true && sandbox.enabled !== false) {
      if (sandbox.fix) {
        lines.push(`    fix: ${text(sandbox.fix)}`);
      }
      const fallback = Object.entries(record(sandbox.fallback)).map(([tool, mode]) => `${tool}: ${text(mode)}`);
      if (fallback.length > 0) {
        lines.push(`    without it: ${fallback.join(", ")}`);
      }
    }
    if (sandbox.network !== undefined && sandbox.network !== "off") {
      lines.push(`    network: ${text(sandbox.network)}`);
    }
    if (sandbox.limits) {
      lines.push(`    limits: ${text(sandbox.limits)}`);
    }
  }
  if (s.trust !== undefined) {
    const trust = record(s.trust);
    lines.push(`  workspace trust: ${trustLine(trust)}`);
    for (const item of list(trust.held_back).map(record)) {
      const detail = item.detail ? `: ${text(item.detail)}` : "";
      lines.push(`    held back: ${text(item.setting)}${detail} (${text(item.source)})`);
    }
  }
  const intel = list(s.code_intel).map(record);
  if (intel.length > 0) {
    lines.push("  code intelligence:");
    for (const entry of intel) {
      lines.push(`    ${codeIntelLine(entry)}`);
    }
  }
  return lines;
}

function codeIntelLine(entry: Json): string {
  if (entry.source === "editor") {
    const methods = list(entry.methods).map(text).join(", ");
    const reason = entry.reason ? ` — ${text(entry.reason)}` : "";
    return `editor: ${text(entry.state)}${methods ? ` (${methods})` : ""}${reason}`;
  }
  const server = entry.server ? `${text(entry.server)} ` : ""; // none found: the reason says why
  const origin = entry.origin ? ` from ${text(entry.origin)}` : "";
  const pid = entry.pid !== undefined ? `, pid ${text(entry.pid)}` : "";
  const reason = entry.reason ? ` — ${text(entry.reason)}` : "";
  return `${text(entry.language)}: ${server}${text(entry.state)}${origin}${pid}${reason}`;
}
