// An ACP client on the official TypeScript SDK (@agentclientprotocol/sdk), driven by the
// Python tests (tests/acp_support.py: NodeClient).
//
//   node tests/acp_client.mjs -- AGENT_COMMAND [ARGS...]
//
// It starts the agent, speaks ACP to it with the SDK (which validates every request and
// notification the agent sends against the protocol's schema), and bridges to the test over
// its own stdin/stdout, one JSON object per line:
//
//   test → bridge  {"id", "op": "request", "method", "params"}   a request to the agent
//                  {"id", "op": "notify", "method", "params"}    a notification to the agent
//                  {"op": "respond", "rid", "result"|"error"}    the answer to a client request
//   bridge → test  {"id", "result"} | {"id", "error": {code, message, data}}
//                  {"event": "notification", "method", "params"} session/update
//                  {"event": "request", "rid", "method", "params"} a request from the agent
//                  {"event": "exit", "code", "signal"}            the agent process ended
//
// The test decides every answer (permissions, files, terminals); the SDK does the protocol.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";

const sdkPath = process.env.ACP_SDK_PATH;
const acp = await import(sdkPath);

const separator = process.argv.indexOf("--");
const [command, ...args] = process.argv.slice(separator + 1);
const agent = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], env: process.env });
const agentExited = new Promise((resolve) =>
  agent.on("exit", (code, signal) => {
    emit({ event: "exit", code, signal });
    resolve();
  }),
);

function emit(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

let nextRequest = 0;
const pending = new Map();

function forward(method) {
  return async ({ params }) => {
    const rid = nextRequest++;
    const answer = new Promise((resolve, reject) => pending.set(rid, { resolve, reject }));
    emit({ event: "request", rid, method, params });
    return answer;
  };
}

const m = acp.methods.client;
const app = acp
  .client({ name: "agentls-test-client" })
  .onNotification(m.session.update, ({ params }) =>
    emit({ event: "notification", method: m.session.update, params }),
  );
for (const method of [
  m.session.requestPermission,
  m.fs.readTextFile,
  m.fs.writeTextFile,
  m.terminal.create,
  m.terminal.output,
  m.terminal.release,
  m.terminal.waitForExit,
  m.terminal.kill,
]) {
  app.onRequest(method, forward(method));
}

const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

await app.connectWith(stream, async (ctx) => {
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const op = JSON.parse(line);
    if (op.op === "close") {
      lines.close();
      break;
    }
    if (op.op === "respond") {
      const waiter = pending.get(op.rid);
      pending.delete(op.rid);
      if (!waiter) continue;
      if (op.error) waiter.reject(new acp.RequestError(op.error.code, op.error.message, op.error.data));
      else waiter.resolve(op.result ?? {});
      continue;
    }
    const send =
      op.op === "notify" ? ctx.notify(op.method, op.params) : ctx.request(op.method, op.params);
    send.then(
      (result) => emit({ id: op.id, result: result ?? null }),
      (error) =>
        emit({
          id: op.id,
          error: { code: error?.code ?? -32603, message: String(error?.message ?? error), data: error?.data ?? null },
        }),
    );
  }
});
// The test closed the bridge: end the agent's input (an editor closing the connection),
// let it shut down, and leave.
agent.stdin.end();
await agentExited;
process.exit(0);
