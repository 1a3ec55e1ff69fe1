// The hooks' own connection to velesdb-memory (docs/working-context.md "Loaded by the
// hook"): SessionStart loads the working context and Stop/PreCompact save a compiled one through
// the store's shared broker, so a model that never calls a memory tool still resumes where the
// last session left off. Every call is bounded by the caller's deadline and every failure is a
// one-line cause: the rule then answers as it did before (the instruction to call the tool).
//
// A hook starts a broker only where a front of ours already ran for this store with the same
// server settings (the front's record, runtime.ts mcpRuntimePaths().front): an agent wired to
// velesdb-memory directly holds the store's one lock itself (velesdb-memory 0.17.0
// src/daemon_startup.rs), and a broker started by a hook would take the store from it. The
// record holds the server's path and a checksum of the VELESDB_MEMORY_* settings the front ran
// with, never their values: a hook whose environment differs (an entry's own `env`) only
// connects, so a broker is never started with settings the user's MCP entry did not give it.
import * as fs from "node:fs";
import type * as net from "node:net";
import type { MemoryAnswer, OpenMemory } from "../core/session-memory.ts";
import { openRuntimeDirectory } from "./channel.ts";
import { idOf, isResponse, parseMessage, type JsonRpcMessage } from "./lines.ts";
import { reachBroker } from "./reach.ts";
import {
  mcpRuntimePaths,
  readFrontRecord,
  resolveStore,
  serverSettingsDigest,
  type McpRuntimePaths,
} from "../core/mcp-runtime.ts";

/** startableServer(paths, env) → the server a hook may start a broker with, or why it only connects. */
function startableServer(
  paths: McpRuntimePaths,
  env: NodeJS.ProcessEnv,
): { server?: string; why?: string; unconfigured?: boolean } {
  const record = readFrontRecord(paths);
  if (record === undefined) return { why: "no front of velesdb-hooks mcp has run for this store", unconfigured: true };
  if (!isRunnable(record.server)) return { why: `the server the front ran, ${record.server}, is not there any more` };
  if (record.settings !== serverSettingsDigest(env))
    return { why: "the MCP entry gives velesdb-memory settings this hook does not have; the front starts it" };
  return { server: record.server };
}

/**
 * openMemory(env, cwd, deadline) → a connection to the store's broker by the deadline (a
 * Date.now() value), starting one when a front of ours ran before (see the header), or why not.
 */
export const openMemory: OpenMemory = async (env, cwd, deadline) => {
  // No Unix socket on Windows yet (docs/shared-memory.md "Windows").
  if (process.platform === "win32") return { ok: false, cause: "the shared broker does not run on Windows yet" };
  const store = resolveStore(env, cwd);
  if (!store.ok) return { ok: false, cause: store.problem };
  const storeEnv = { ...env, VELESDB_MEMORY_PATH: store.store };
  const paths = mcpRuntimePaths(storeEnv, cwd);
  const dir = openRuntimeDirectory(paths);
  if (!dir.ok) return { ok: false, cause: dir.problem };
  const start = startableServer(paths, env);
  const pending = new Map<number, (message: JsonRpcMessage | undefined) => void>();
  let closed = false;
  const reached = await reachBroker(
    { server: start.server, store: store.store, paths, env: storeEnv },
    Math.max(0, deadline - Date.now()),
    {
      onLine: (line) => {
        const message = parseMessage(line);
        if (!message || !isResponse(message)) return;
        const id = idOf(message);
        if (typeof id !== "number") return;
        pending.get(id)?.(message);
        pending.delete(id);
      },
      onClose: () => {
        closed = true;
        for (const settle of pending.values()) settle(undefined);
        pending.clear();
      },
    },
  );
  if (!reached.ok) {
    const unset = start.server === undefined && reached.cause.startsWith("no broker");
    return {
      ok: false,
      cause: unset && start.why ? start.why : reached.cause,
      unconfigured: unset && start.unconfigured,
    };
  }
  const socket: net.Socket = reached.socket;
  let nextId = 1;
  return {
    ok: true,
    memory: {
      call: (tool, args) =>
        new Promise<MemoryAnswer>((resolve) => {
          if (closed) return resolve({ ok: false, cause: "the broker closed the connection" });
          const id = nextId++;
          const timer = setTimeout(
            () => {
              pending.delete(id);
              resolve({ ok: false, cause: `${tool} did not answer in time` });
            },
            Math.max(0, deadline - Date.now()),
          );
          pending.set(id, (message) => {
            clearTimeout(timer);
            resolve(message ? toolAnswer(tool, message) : { ok: false, cause: "the broker closed the connection" });
          });
          // The broker initialised its server once and answers for it (broker.ts): a tools/call
          // needs no initialize of its own on this connection.
          socket.write(
            `${JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: args } })}\n`,
          );
        }),
      close: () => {
        closed = true;
        socket.destroy();
      },
    },
  };
};

/**
 * toolAnswer(tool, response) → the tool's JSON object: structuredContent, else the first text
 * block parsed (velesdb-memory 0.17.0 sends both, the same value: rmcp CallToolResult::structured),
 * or the cause of a JSON-RPC error or an `isError` result, in one line.
 */
export function toolAnswer(tool: string, response: JsonRpcMessage): MemoryAnswer {
  const error = response.error as { message?: unknown } | undefined;
  if (error !== undefined) return { ok: false, cause: `${tool} failed: ${oneLineOf(error?.message)}` };
  const result = response.result as Record<string, unknown> | undefined;
  if (typeof result !== "object" || result === null) return { ok: false, cause: `${tool} gave no result` };
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  const text = typeof content[0]?.text === "string" ? (content[0].text as string) : undefined;
  if (result.isError === true) return { ok: false, cause: `${tool} failed: ${oneLineOf(text)}` };
  const structured = result.structuredContent;
  if (typeof structured === "object" && structured !== null && !Array.isArray(structured))
    return { ok: true, value: structured as Record<string, unknown> };
  try {
    const parsed: unknown = JSON.parse(text ?? "");
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      return { ok: true, value: parsed as Record<string, unknown> };
  } catch {
    // not JSON: said below
  }
  return { ok: false, cause: `${tool} answered no JSON object` };
}

function oneLineOf(value: unknown): string {
  const text = typeof value === "string" ? value : "no message";
  const line = text.split(/\r?\n/)[0]!.trim();
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

/** True when p names an executable regular file (the server a record names may have been removed since). */
function isRunnable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    return st.isFile() && (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}
