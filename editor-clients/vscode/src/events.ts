// `agentls/event` notifications → output-channel text and run state. Pure, unit-tested.

export interface AgentEvent {
  type: string;
  session_id?: string;
  [key: string]: unknown;
}

export interface RunInfo {
  session: string;
  running: boolean;
  status: string;
  transcript?: string;
  text: string;
}

function firstLine(value: unknown): string {
  const lines = String(value ?? "").trim().split("\n");
  return lines[lines.length - 1] ?? "";
}

/**
 * Text to append to the live view for one event; `textOpen` tells whether streamed text
 * is mid-line (so a tool line starts on a new line).
 */
export function renderEvent(event: AgentEvent, textOpen: boolean): { text: string; textOpen: boolean } {
  const nl = textOpen ? "\n" : "";
  switch (event.type) {
    case "run_started":
      return { text: `${nl}\n## ${event.session_id} — ${firstLine(event.prompt)}\n`, textOpen: false };
    case "text_delta":
      return { text: String(event.text ?? ""), textOpen: true };
    case "tool_started":
      return { text: `${nl}→ ${String(event.summary ?? event.name ?? "tool")}\n`, textOpen: false };
    case "tool_finished": {
      const mark = event.is_error ? "✗" : "✓";
      const ms = Math.round(Number(event.duration_ms ?? 0));
      return { text: `${nl}${mark} ${String(event.name)} (${ms} ms)\n`, textOpen: false };
    }
    case "retrying":
      return {
        text: `${nl}! model request failed (${String(event.error)}); retry ${String(event.attempt)}\n`,
        textOpen: false,
      };
    case "notice":
      return { text: `${nl}! ${String(event.message ?? "")}\n`, textOpen: false };
    case "todos": {
      const todos = Array.isArray(event.todos) ? (event.todos as Record<string, unknown>[]) : [];
      const done = todos.filter((t) => t.status === "completed").length;
      const doing = todos.find((t) => t.status === "in_progress");
      const current = doing ? ` · ${String(doing.active_form ?? doing.content ?? "")}` : "";
      return { text: `${nl}☐ todos ${done}/${todos.length}${current}\n`, textOpen: false };
    }
    case "mode_changed":
      return { text: `${nl}! mode: ${String(event.mode)}\n`, textOpen: false };
    case "turn_usage": {
      const usage = (event.usage ?? {}) as Record<string, number>;
      return {
        text: `${nl}  (turn ${String(event.turn)}: ${usage.input_tokens ?? 0} in / ${usage.output_tokens ?? 0} out)\n`,
        textOpen: false,
      };
    }
    case "run_finished": {
      const error = event.error ? `: ${String(event.error)}` : "";
      return { text: `${nl}== ${String(event.status)} after ${String(event.turns ?? 0)} turn(s)${error}\n`, textOpen: false };
    }
    default:
      return { text: "", textOpen };
  }
}

/** Which sessions are running; feeds the status-bar item and the accept/reject defaults. */
export class RunTracker {
  private readonly runs = new Map<string, RunInfo>();
  last: string | undefined;

  started(session: string): void {
    this.last = session;
    if (!this.runs.has(session)) {
      this.runs.set(session, { session, running: true, status: "starting", text: "" });
    } else {
      const info = this.runs.get(session)!;
      info.running = true;
      info.status = "starting";
    }
  }

  onEvent(event: AgentEvent): void {
    const session = event.session_id;
    if (!session) {
      return;
    }
    if (!this.runs.has(session)) {
      this.started(session);
    }
    const info = this.runs.get(session)!;
    this.last = session;
    switch (event.type) {
      case "run_started":
        info.running = true;
        info.status = "running";
        info.text = "";
        break;
      case "text_delta":
        info.text += String(event.text ?? "");
        break;
      case "tool_started":
        info.status = String(event.summary ?? event.name ?? "running");
        break;
      case "run_finished":
        info.running = false;
        info.status = String(event.status);
        info.transcript = typeof event.transcript === "string" ? event.transcript : undefined;
        break;
    }
  }

  get(session: string): RunInfo | undefined {
    return this.runs.get(session);
  }

  running(): RunInfo[] {
    return [...this.runs.values()].filter((r) => r.running);
  }

  /** Status-bar text, or undefined when nothing runs. */
  statusText(): string | undefined {
    const running = this.running();
    if (running.length === 0) {
      return undefined;
    }
    if (running.length === 1) {
      return `$(sync~spin) agentls: ${truncate(running[0].status, 40)}`;
    }
    return `$(sync~spin) agentls: ${running.length} runs`;
  }
}

export function truncate(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}
