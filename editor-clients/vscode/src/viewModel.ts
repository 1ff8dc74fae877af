// The agent view's state, built from the `agentls/event` stream. Pure, unit-tested: the
// webview only draws what this holds.
import { type AgentEvent } from "./events";

export interface ToolCall {
  id: string;
  name: string;
  summary: string;
  status: "running" | "ok" | "error";
  durationMs?: number;
  output?: string;
  outputError?: boolean;
}

export type Item =
  | { kind: "prompt"; text: string }
  | { kind: "text"; text: string }
  | { kind: "tool"; tool: ToolCall }
  | { kind: "note"; text: string };

export interface Todo {
  content: string;
  status: "pending" | "in_progress" | "completed";
  activeForm?: string;
}

export interface FileState {
  uri: string;
  name: string;
  state: "staged" | "applied" | "rejected" | "left out";
  reason?: string;
  /** Its check before review as the run ended ("tests 41/41 ✓ · 0 new errors"). */
  check?: string;
  checkFailed?: boolean;
}

/** The file-system path of a `file:` URI (how the checks name files). */
export function pathOfUri(uri: string): string {
  return uri.startsWith("file://") ? decodeURIComponent(uri.slice("file://".length)) : uri;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Sum of the runs' costs; null once one run's price is unknown. */
  costUsd: number | null;
}

export interface SessionView {
  id: string;
  title: string;
  status: string;
  running: boolean;
  items: Item[];
  todos: Todo[];
  usage: Usage;
  /** The usage before the running run's first response (its turns are added as they come). */
  runBase?: Usage;
  outcome?: string;
  files: FileState[];
}

/** A run whose model work ended while its edits are delivered (the preview, the review). */
export const DELIVERING = "delivering the edits";

type Relativize = (uri: string) => string;

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function lastLine(value: unknown): string {
  const lines = String(value ?? "").trim().split("\n");
  return lines[lines.length - 1] ?? "";
}

const TODO_STATES = new Set(["pending", "in_progress", "completed"]);

export function todosOf(value: unknown): Todo[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value
    .filter((t): t is Record<string, unknown> => typeof t === "object" && t !== null)
    .map((t) => ({
      content: String(t.content ?? ""),
      status: (TODO_STATES.has(String(t.status)) ? String(t.status) : "pending") as Todo["status"],
      activeForm: typeof t.active_form === "string" ? t.active_form : undefined,
    }));
}

/** What a mid-run mode switch means for the user (plan mode entered, or a plan approved). */
export function modeNote(mode: unknown): string {
  if (mode === "plan") {
    return "Plan mode: the agent researches read-only, then shows you a plan to approve.";
  }
  return mode === "auto"
    ? "Plan approved: the agent makes the changes, each applied as it is made."
    : "Plan approved: the agent makes the changes, staged for your review.";
}

export class ViewModel {
  readonly sessions = new Map<string, SessionView>();
  /** Session ids, newest first. */
  order: string[] = [];
  current: string | undefined;

  constructor(private readonly relativize: Relativize = (uri) => uri) {}

  session(id: string): SessionView {
    let found = this.sessions.get(id);
    if (!found) {
      found = {
        id,
        title: id,
        status: "starting",
        running: true,
        items: [],
        todos: [],
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, costUsd: 0 },
        files: [],
      };
      this.sessions.set(id, found);
      this.order.unshift(id);
    }
    return found;
  }

  /** A run this window started (before its first event arrives). */
  started(id: string, prompt: string): void {
    const s = this.session(id);
    s.running = true;
    s.status = "starting";
    this.current = id;
    if (s.items.length === 0) {
      s.title = prompt;
    }
  }

  private tool(s: SessionView, id: string): ToolCall | undefined {
    for (const item of s.items) {
      if (item.kind === "tool" && item.tool.id === id) {
        return item.tool;
      }
    }
    return undefined;
  }

  private addText(s: SessionView, text: string): void {
    const last = s.items[s.items.length - 1];
    if (last && last.kind === "text") {
      last.text += text;
    } else {
      s.items.push({ kind: "text", text });
    }
  }

  private setFiles(s: SessionView, uris: unknown, state: FileState["state"], reason?: string): void {
    if (!Array.isArray(uris)) {
      return;
    }
    for (const uri of uris.map(String)) {
      const found = s.files.find((f) => f.uri === uri);
      if (found) {
        found.state = state;
        found.reason = reason;
      } else {
        s.files.push({ uri, name: this.relativize(uri), state, reason });
      }
    }
  }

  private leftOut(s: SessionView, value: unknown): void {
    if (!Array.isArray(value)) {
      return;
    }
    for (const item of value as Record<string, unknown>[]) {
      this.setFiles(s, [item.uri], "left out", String(item.reason ?? "not applied"));
    }
  }

  /** Each file's check before review (the run result's `checks`, by path). */
  private checks(s: SessionView, value: unknown): void {
    if (!Array.isArray(value)) {
      return;
    }
    for (const check of value as Record<string, unknown>[]) {
      const file = s.files.find((f) => pathOfUri(f.uri) === String(check.path));
      if (!file) {
        continue;
      }
      const tests = check.tests as Record<string, unknown> | undefined;
      file.check = String(check.summary ?? "");
      file.checkFailed = num(check.new_errors) > 0 || tests?.status === "failed";
    }
  }

  private edit(s: SessionView, edit: Record<string, unknown>): void {
    const applied = edit.applied;
    const state = applied === true ? "applied" : applied === false ? "left out" : "staged";
    this.setFiles(s, edit.files, state, applied === false ? String(edit.reason ?? "") : undefined);
    this.leftOut(s, edit.left_out);
  }

  /** Apply one event; true when something the view shows changed. */
  apply(event: AgentEvent): boolean {
    const id = event.session_id;
    if (!id) {
      return false;
    }
    const s = this.session(id);
    switch (event.type) {
      case "run_started":
        s.running = true;
        s.status = "running";
        s.outcome = undefined;
        if (s.items.length === 0) {
          s.title = lastLine(event.prompt);
        }
        s.items.push({ kind: "prompt", text: lastLine(event.prompt) });
        this.current = this.current ?? id;
        return true;
      case "text_delta":
        this.addText(s, String(event.text ?? ""));
        return true;
      case "tool_started":
        s.items.push({
          kind: "tool",
          tool: {
            id: String(event.tool_use_id ?? ""),
            name: String(event.name ?? "tool"),
            summary: String(event.summary ?? event.name ?? "tool"),
            status: "running",
          },
        });
        s.status = String(event.summary ?? event.name ?? "running");
        return true;
      case "tool_finished": {
        const tool = this.tool(s, String(event.tool_use_id ?? ""));
        if (tool) {
          tool.status = event.is_error ? "error" : "ok";
          tool.durationMs = num(event.duration_ms);
        }
        return true;
      }
      case "notice":
      case "retrying":
        s.items.push({
          kind: "note",
          text: event.type === "notice" ? String(event.message ?? "") : `model request failed (${String(event.error)}); retrying`,
        });
        return true;
      case "todos":
        s.todos = todosOf(event.todos);
        return true;
      case "mode_changed":
        s.items.push({ kind: "note", text: modeNote(event.mode) });
        return true;
      case "turn_usage": {
        // the tokens move during the run; the run's result then sets its exact totals
        const usage = (event.usage ?? {}) as Record<string, unknown>;
        s.runBase = s.runBase ?? { ...s.usage };
        s.usage.input += num(usage.input_tokens);
        s.usage.output += num(usage.output_tokens);
        s.usage.cacheRead += num(usage.cache_read_input_tokens);
        s.usage.cacheWrite += num(usage.cache_creation_input_tokens);
        return true;
      }
      case "run_finished":
        // the model's part is over; the run still delivers its edits (preview, review)
        s.status = DELIVERING;
        return true;
      case "run_result": {
        s.running = false;
        s.status = String(event.status ?? "finished");
        s.outcome = typeof event.outcome === "string" ? event.outcome : s.status;
        const usage = (event.usage ?? {}) as Record<string, unknown>;
        const base = s.runBase ?? s.usage;
        s.runBase = undefined;
        s.usage = {
          input: base.input + num(usage.input_tokens),
          output: base.output + num(usage.output_tokens),
          cacheRead: base.cacheRead + num(usage.cache_read_input_tokens),
          cacheWrite: base.cacheWrite + num(usage.cache_creation_input_tokens),
          costUsd: base.costUsd,
        };
        const cost = usage.cost_usd;
        s.usage.costUsd = typeof cost === "number" && s.usage.costUsd !== null ? s.usage.costUsd + cost : null;
        if (event.edit && typeof event.edit === "object") {
          this.edit(s, event.edit as Record<string, unknown>);
        }
        this.checks(s, event.checks);
        return true;
      }
      case "edit_result":
        if (event.action === "reject") {
          this.setFiles(s, event.files, "rejected");
        } else {
          this.edit(s, event);
        }
        return true;
      default:
        return false;
    }
  }

  /** Files of a session still waiting for a decision (staged or left out). */
  pending(id: string): FileState[] {
    return (this.sessions.get(id)?.files ?? []).filter((f) => f.state === "staged" || f.state === "left out");
  }

  anyRunning(): boolean {
    return [...this.sessions.values()].some((s) => s.running);
  }

  anyPending(): boolean {
    return this.order.some((id) => this.pending(id).length > 0);
  }
}
