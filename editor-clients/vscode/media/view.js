// The agentls view's webview: draws the state the extension posts (src/view.ts) and sends
// the user's clicks back. Text arrives as escaped, rendered Markdown.
(function () {
  const vscode = acquireVsCodeApi();
  const $ = (id) => document.getElementById(id);
  let state = { sessions: [], session: undefined, context: undefined };
  const openTools = new Set();

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child !== undefined && child !== null) node.append(child);
    }
    return node;
  }

  function button(label, title, onclick, cls) {
    return el("button", { class: "btn " + (cls || ""), title: title, "aria-label": title, onclick: onclick }, label);
  }

  function send(message) {
    vscode.postMessage(message);
  }

  function drawSessions() {
    const box = $("sessions");
    box.replaceChildren();
    if (!state.sessions.length) return;
    const select = el("select", { "aria-label": "session", onchange: (e) => send({ type: "select", session: e.target.value }) });
    for (const s of state.sessions) {
      const option = el("option", { value: s.id }, `${s.running ? "● " : ""}${s.title.slice(0, 48)} — ${s.status}`);
      if (s.id === state.current) option.selected = true;
      select.append(option);
    }
    if (!state.current) select.prepend(el("option", { value: "", selected: "" }, "New session"));
    box.append(select, button("+", "New session", () => send({ type: "newSession" })));
  }

  const MARK = { running: "⟳", ok: "✓", error: "✗" };
  const TODO = { completed: "☑", in_progress: "◐", pending: "☐" };

  function drawTool(session, tool) {
    const open = openTools.has(tool.id);
    const ms = tool.durationMs !== undefined ? `${Math.round(tool.durationMs)} ms` : "running…";
    const head = el(
      "button",
      {
        class: `tool-head ${tool.status}`,
        "aria-expanded": String(open),
        onclick: () => {
          if (openTools.has(tool.id)) openTools.delete(tool.id);
          else {
            openTools.add(tool.id);
            if (tool.output === undefined && tool.status !== "running") send({ type: "toolOutput", session: session.id, id: tool.id });
          }
          draw();
        },
      },
      el("span", { class: "mark" }, MARK[tool.status] || "?"),
      el("span", { class: "summary" }, tool.summary),
      el("span", { class: "duration" }, ms),
    );
    const box = el("div", { class: "tool", "data-tool": tool.name }, head);
    if (open) {
      box.append(el("pre", { class: "tool-output" + (tool.outputError ? " error" : "") }, tool.output === undefined ? "loading…" : tool.output));
    }
    return box;
  }

  function drawFiles(session) {
    if (!session.files.length) return null;
    const waiting = session.files.filter((f) => f.state === "staged" || f.state === "left out");
    const box = el("div", { class: "files" }, el("h3", {}, "Files"));
    for (const file of session.files) {
      const row = el(
        "div",
        { class: `file ${file.state.replace(" ", "-")}`, "data-file": file.name },
        el("a", { href: "#", class: "file-name", title: "Show the diff", onclick: (e) => { e.preventDefault(); send({ type: "diff", session: session.id, uri: file.uri }); } }, file.name),
        el("span", { class: "file-state" }, file.state),
      );
      if (file.state === "staged" || file.state === "left out") {
        row.append(
          button("Accept", `Accept ${file.name}`, () => send({ type: "accept", session: session.id, uri: file.uri }), "accept"),
          button("Reject", `Reject ${file.name}`, () => send({ type: "reject", session: session.id, uri: file.uri }), "reject"),
        );
      }
      if (file.reason) row.append(el("div", { class: "reason" }, file.reason));
      if (file.check) row.append(el("div", { class: file.checkFailed ? "check failed" : "check", title: "Checked before review" }, file.check));
      box.append(row);
    }
    if (waiting.length > 1) {
      box.append(
        el(
          "div",
          { class: "row" },
          button("Accept all", "Accept all staged files", () => send({ type: "accept", session: session.id }), "accept"),
          button("Reject all", "Reject all staged files", () => send({ type: "reject", session: session.id }), "reject"),
        ),
      );
    }
    return box;
  }

  function drawUsage(session) {
    const u = session.usage;
    if (!u.input && !u.output) return null;
    const cost = u.costUsd === null ? "cost n/a" : `$${u.costUsd.toFixed(4)}`;
    return el("div", { class: "usage", title: `cache read ${u.cacheRead}, cache write ${u.cacheWrite}` }, `${u.input.toLocaleString()} in · ${u.output.toLocaleString()} out · ${cost}`);
  }

  function drawSession() {
    const box = $("session");
    box.replaceChildren();
    const session = state.session;
    if (!session) {
      box.append(el("p", { class: "empty" }, "Ask agentls to do something below. The current file and selection go along as context."));
      return;
    }
    const header = el("div", { class: "header" }, el("span", { class: `status ${session.running ? "running" : ""}` }, session.status));
    if (session.running) header.append(button("Cancel", "Cancel the run", () => send({ type: "cancel", session: session.id }), "cancel"));
    box.append(header);
    if (session.todos.length) {
      const list = el("ul", { class: "todos", "aria-label": "todo list" });
      for (const todo of session.todos) {
        const text = todo.status === "in_progress" && todo.activeForm ? todo.activeForm : todo.content;
        list.append(el("li", { class: `todo ${todo.status}` }, el("span", { class: "mark" }, TODO[todo.status] || "☐"), " ", text));
      }
      box.append(el("div", { class: "todo-box" }, el("h3", {}, "Todo"), list));
    }
    const log = el("div", { class: "transcript" });
    for (const item of session.items) {
      if (item.kind === "prompt") log.append(el("div", { class: "prompt" }, item.text));
      else if (item.kind === "text") {
        const md = el("div", { class: "markdown" });
        md.innerHTML = item.html; // rendered by markdown-it in the extension, raw HTML off
        for (const link of md.querySelectorAll("a.file-link")) {
          link.addEventListener("click", (e) => {
            e.preventDefault();
            send({ type: "open", path: link.dataset.path, line: link.dataset.line });
          });
        }
        log.append(md);
      } else if (item.kind === "tool") log.append(drawTool(session, item.tool));
      else if (item.kind === "note") log.append(el("div", { class: "note" }, "! " + item.text));
    }
    box.append(log);
    if (session.outcome) box.append(el("div", { class: "outcome" }, session.outcome));
    const usage = drawUsage(session);
    if (usage) box.append(usage);
    const files = drawFiles(session);
    if (files) box.append(files);
  }

  function draw() {
    drawSessions();
    drawSession();
    $("context").textContent = state.context ? `Context: ${state.context}` : "No file open: the prompt goes alone.";
    $("follow-up").parentElement.style.display = state.session ? "" : "none";
  }

  $("prompt-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("prompt").value.trim();
    if (!text) return;
    send({ type: "prompt", text, followUp: $("follow-up").checked });
    $("prompt").value = "";
  });
  $("prompt").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      $("prompt-form").requestSubmit();
    }
  });
  window.addEventListener("message", (event) => {
    if (event.data && event.data.type === "state") {
      state = event.data;
      draw();
    }
  });
  draw();
  send({ type: "ready" });
})();
