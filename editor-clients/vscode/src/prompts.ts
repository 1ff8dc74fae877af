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

/** One-paragraph summary of `agentls.status` for a notification. */
export function statusSummary(status: unknown): string {
  if (typeof status !== "object" || status === null) {
    return "agentls: no status";
  }
  const s = status as Record<string, unknown>;
  const sessions = Array.isArray(s.sessions) ? s.sessions : [];
  const running = sessions.filter((x) => (x as Record<string, unknown>).running).length;
  const parts = [`${sessions.length} session(s)`, `${running} running`];
  for (const key of ["model", "endpoint", "base_url", "mode"]) {
    if (typeof s[key] === "string" && s[key] !== "") {
      parts.push(`${key}: ${String(s[key])}`);
    }
  }
  return `agentls — ${parts.join(", ")}`;
}
