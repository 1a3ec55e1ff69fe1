// One scripted MCP session over stdio (newline-delimited JSON-RPC), the way a host talks to
// velesdb-memory: used by the double's own test, the contract test that runs the double and the
// real server through the same cases (velesdb-memory-contract.test.ts), and the script that
// captures the real wire (scripts/capture-velesdb-memory-wire.ts).
import { spawn } from "node:child_process";

export type McpRequest = { readonly method: string; readonly params?: unknown } | { readonly notification: string };

export const initialize = (protocolVersion = "2025-06-18"): McpRequest => ({
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "velesdb-hooks-test", version: "0" } },
});
export const initialized: McpRequest = { notification: "notifications/initialized" };
export const toolCall = (name: string, args: Record<string, unknown>): McpRequest => ({
  method: "tools/call",
  params: { name, arguments: args },
});

/**
 * mcpSession(argv, requests, env) → the server's answer line to each request (notifications
 * get none), in order, ids 1, 2, …. Each answer is awaited before the next request is sent,
 * bounded by `timeoutMs`; the server is stopped at the end.
 */
export async function mcpSession(
  argv: readonly string[],
  requests: readonly McpRequest[],
  env: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<string[]> {
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: ["pipe", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
  });
  const lines: string[] = [];
  let buffer = "";
  let stderr = "";
  const waiters: (() => void)[] = [];
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      lines.push(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      waiters.shift()?.();
    }
  });
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const answers: string[] = [];
  let id = 0;
  try {
    for (const request of requests) {
      if ("notification" in request) {
        child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: request.notification })}\n`);
        continue;
      }
      const before = lines.length;
      const arrived = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no answer to ${request.method} from ${argv.join(" ")}; stderr: ${stderr}`)),
          timeoutMs,
        );
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: ++id, method: request.method, params: request.params ?? {} })}\n`,
      );
      await arrived;
      answers.push(lines[before]!);
    }
  } finally {
    child.stdin.end();
    // The real server exits when its stdin closes; a bounded wait, then the kill.
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
    child.kill("SIGKILL");
  }
  return answers;
}
