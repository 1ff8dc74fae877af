#!/usr/bin/env node
// Code intelligence through the editor (source 1), in a real VS Code: code-server with the
// extension installed from the .vsix, driven by Playwright. A TypeScript project is opened;
// "agentls: Run Task…" runs the scripted model, whose one tool call is find_references on
// `greet`. The extension answers the server's `agentls/editorQuery` with
// `vscode.executeReferenceProvider`, i.e. code-server's built-in TypeScript features. The
// tool result the model got is read back from the scripted server's request log.
//
// Usage: node e2e/code-intel.mjs [--python PATH] [--code-server PATH] [--chromium PATH]
//                                [--vsix PATH] [--keep]
// Prints one JSON line {ok, toolResult, steps, ...}; exit status 0 only when ok.
import * as fs from "node:fs";
import * as path from "node:path";
import { baseSettings, finish, parseArgs, recordedRequests, runSession, runTask, waitFor, writeScenario } from "./harness.mjs";

const args = parseArgs();

const FILES = {
  "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020"}, "include": ["src"]}\n',
  "src/greeter.ts": "export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n",
  "src/a.ts": 'import { greet } from "./greeter";\n\nexport const a = greet("a");\n',
  "src/b.ts": 'import { greet as hello } from "./greeter";\n\nexport const b = hello("b");\n',
};
const SCENARIO = {
  description: "code intelligence through the editor: one find_references call, then done",
  turns: [
    {
      content: [
        { type: "text", text: "Let me find the callers." },
        { type: "tool_use", name: "find_references", input: { path: "src/greeter.ts", line: 1, symbol: "greet" } },
      ],
    },
    { content: [{ type: "text", text: "greet is used in a.ts and b.ts." }] },
  ],
};

/** The tool_result blocks of the scripted model's second request (what the model was told). */
function toolResults(tmp) {
  const requests = recordedRequests(tmp);
  if (requests.length < 2) {
    return null;
  }
  const messages = requests[1].json?.messages ?? [];
  const last = messages[messages.length - 1];
  const blocks = Array.isArray(last?.content) ? last.content.filter((b) => b.type === "tool_result") : [];
  return blocks.length ? blocks : null;
}

/** The TypeScript project of FILES, and the scenario written next to it. */
function prepare(tmp, workspace) {
  for (const [name, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
    fs.writeFileSync(path.join(workspace, name), text);
  }
  const settings = {
    ...baseSettings(tmp),
    "agentls.mode": "review",
    "extensions.autoUpdate": false,
    "typescript.surveys.enabled": false,
    "typescript.tsserver.experimental.enableProjectDiagnostics": false,
  };
  return { settings, scenario: writeScenario(tmp, SCENARIO) };
}

async function drive({ page, tmp, result }) {
  const row = (name) => page.locator(".explorer-folders-view .monaco-list-row", { hasText: name }).first();
  await row("src").waitFor({ state: "visible", timeout: 60000 });
  await row("src").click();
  await row("greeter.ts").waitFor({ state: "visible", timeout: 20000 });
  await row("greeter.ts").dblclick();
  const lines = page.locator(".editor-instance .monaco-editor .view-lines").first();
  const text = async () => ((await lines.textContent()) ?? "").replace(/\u00a0/g, " ");
  await waitFor("greeter.ts open", 20000, async () => (await text()).includes("export function greet"));

  // The editor's own TypeScript features first (as a user would): Go to References on
  // `greet` until its peek view lists the other files, so tsserver has loaded the project.
  await lines.click();
  await page.keyboard.press("Control+Home");
  for (let i = 0; i < 17; i++) {
    await page.keyboard.press("ArrowRight");
  }
  const peek = page.locator(".zone-widget .monaco-list-row", { hasText: "b.ts" }).first();
  await waitFor("the editor's references list b.ts", 90000, async () => {
    await page.keyboard.press("Shift+F12");
    try {
      await peek.waitFor({ state: "visible", timeout: 5000 });
      return true;
    } catch {
      return false;
    }
  });
  await page.keyboard.press("Escape");

  await runTask(page, "Who calls greet?", { timeout: 60000 });
  const blocks = await waitFor("the model got the tool result", 90000, async () => toolResults(tmp));
  result.toolResult = blocks[0];
}

await finish(() =>
  runSession(args, {
    tmpPrefix: "agentls-vscode-codeintel-",
    prepare,
    viewport: { width: 1200, height: 760 },
    logTail: 4000,
    drive,
  }),
);
