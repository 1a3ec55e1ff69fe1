// One MCP client of `velesdb-hooks mcp` (src/mcp/front.ts) for the shared-memory tests: the
// compiled binary started as a host starts it (stdio, newline-delimited JSON-RPC), requests
// matched to answers by id, every wait bounded. Also the process facts the tests assert on
// (which pids run velesdb-memory, a broker's children), read from /proc like `ps` does.
import { afterEach, beforeAll, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { REPO_ROOT } from "./hook-runner.ts";
import { requireRealServerUnderCi } from "./real-velesdb-memory.ts";

export const HOOKS_BINARY = path.join(REPO_ROOT, "dist", "velesdb-hooks");
/** The real velesdb-memory 0.17.0 (docs/real-server.md); unset: the real-server cases skip, and fail under CI=true. */
export const REAL_SERVER = process.env.VELESDB_MEMORY_BIN_REAL;

/**
 * realServerCases(what) → for a file of cases on the real server behind the front: `skip` (no
 * VELESDB_MEMORY_BIN_REAL; under CI=true one failing test naming `what` instead), the server to
 * run, and sandbox/client makers whose sandboxes and clients are gone after each test. The
 * compiled binary must exist before any case runs.
 */
export function realServerCases(what: string) {
  const skip = REAL_SERVER === undefined;
  requireRealServerUnderCi(test, what);
  const server = REAL_SERVER ?? "/nonexistent/velesdb-memory";
  let sandboxes: Array<ReturnType<typeof mcpSandbox>> = [];
  let clients: McpClient[] = [];
  afterEach(() => {
    for (const c of clients) c.proc.kill("SIGKILL");
    clients = [];
    for (const box of sandboxes) box.cleanup();
    sandboxes = [];
  });
  beforeAll(() => {
    if (!skip) expect(fs.existsSync(HOOKS_BINARY)).toBe(true);
  });
  return {
    skip,
    server,
    sandbox(name: string, idleMs?: number) {
      const box = mcpSandbox(name, idleMs);
      sandboxes.push(box);
      return box;
    },
    client(env: Record<string, string>, program: string = server) {
      const c = startClient(program, env);
      clients.push(c);
      return c;
    },
  };
}

export type Message = Record<string, unknown> & { id?: unknown; result?: any; error?: any; method?: string };

export interface McpClient {
  readonly proc: ReturnType<typeof Bun.spawn>;
  send(message: object): void;
  sendLine(line: string): void;
  /** request(method, params) → the answer with that id (a fresh id unless given). */
  request(method: string, params?: object, id?: string | number): Promise<Message>;
  /** rawLines() → every line the front wrote, as bytes came (JSON.parse rounds u64 numbers). */
  rawLines(): string[];
  /** answers(id) → every answer received so far for that id. */
  answers(id: string | number): Message[];
  /** waitFor(predicate, ms) → the first message that matches, received or to come. */
  waitFor(predicate: (m: Message) => boolean, ms?: number): Promise<Message>;
  readonly stderr: () => string;
  close(): Promise<number>;
}

let counter = 0;

export function startClient(server: string, env: Record<string, string>, extraArgs: readonly string[] = []): McpClient {
  const proc = Bun.spawn([HOOKS_BINARY, "mcp", "--server", server, ...extraArgs], {
    env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    cwd: env.HOME ?? os.tmpdir(),
  });
  const received: Message[] = [];
  const raw: string[] = [];
  const waiters: Array<{
    predicate: (m: Message) => boolean;
    resolve: (m: Message) => void;
    fail: (e: Error) => void;
  }> = [];
  let stderr = "";
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() === "") continue;
        raw.push(line);
        const message = JSON.parse(line) as Message;
        received.push(message);
        for (const waiter of [...waiters]) {
          if (waiter.predicate(message)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(message);
          }
        }
      }
    }
  })();
  void (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) stderr += new TextDecoder().decode(chunk);
  })();
  // A front that exits fails every wait at once, with what it said, instead of at the timeout.
  void proc.exited.then((code) => {
    for (const waiter of waiters.splice(0)) waiter.fail(new Error(`velesdb-hooks mcp exited ${code}: ${stderr}`));
  });
  const stdin = proc.stdin as import("bun").FileSink;
  const client: McpClient = {
    proc,
    send: (message) => client.sendLine(JSON.stringify(message)),
    sendLine: (line) => {
      stdin.write(`${line}\n`);
      stdin.flush();
    },
    request: (method, params, id) => {
      const requestId = id ?? `r${++counter}`;
      const answer = client.waitFor((m) => m.id === requestId && m.method === undefined, 60_000);
      client.send({ jsonrpc: "2.0", id: requestId, method, ...(params ? { params } : {}) });
      return answer;
    },
    rawLines: () => [...raw],
    answers: (id) => received.filter((m) => m.id === id && m.method === undefined),
    waitFor: (predicate, ms = 30_000) => {
      const found = received.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (m: Message) => {
            clearTimeout(timer);
            resolve(m);
          },
          fail: (e: Error) => {
            clearTimeout(timer);
            reject(e);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(
            new Error(
              `no matching message within ${ms} ms; received ${JSON.stringify(received).slice(0, 400)}; stderr ${stderr}`,
            ),
          );
        }, ms);
        waiters.push(waiter);
      });
    },
    stderr: () => stderr,
    close: async () => {
      stdin.end();
      return proc.exited;
    },
  };
  return client;
}

export const initializeParams = (protocolVersion = "2025-06-18") => ({
  protocolVersion,
  capabilities: {},
  clientInfo: { name: "velesdb-hooks-test", version: "1" },
});

/** initialize(client) → the initialize answer, after which notifications/initialized is sent (as every host does). */
export async function initialize(client: McpClient, protocolVersion?: string): Promise<Message> {
  const answer = await client.request("initialize", initializeParams(protocolVersion));
  client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return answer;
}

/** callTool(client, name, args) → the tools/call answer. */
export const callTool = (client: McpClient, name: string, args: object, id?: string | number) =>
  client.request("tools/call", { name, arguments: args }, id);

/** The parsed JSON a tool answered (rmcp Json<T>: structuredContent, or the one text block). */
export function toolJson(answer: Message): any {
  const result = answer.result;
  if (!result || result.isError) throw new Error(`tool failed: ${JSON.stringify(answer).slice(0, 400)}`);
  return result.structuredContent ?? JSON.parse(result.content[0].text);
}

/** pidsRunning(program) → the pids whose executable is `program` (from /proc/<pid>/exe, as ps does). */
export function pidsRunning(program: string): number[] {
  const real = fs.realpathSync(program);
  return fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
        if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return [];
        return fs.readlinkSync(`/proc/${d}/exe`) === real ? [Number(d)] : [];
      } catch {
        return [];
      }
    });
}

/** serversOn(program, store) → the pids of `program` working in `store` (the broker starts its server there). */
export function serversOn(program: string, store: string): number[] {
  return pidsRunning(program).filter((pid) => {
    try {
      return fs.readlinkSync(`/proc/${pid}/cwd`) === store;
    } catch {
      return false;
    }
  });
}

/** childrenOf(pid) → its direct children (/proc/<pid>/task/<pid>/children). */
export function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

/** until(check, ms) → true once check() holds, polled every 25 ms; false after ms. */
export async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await Bun.sleep(25);
  }
  return check();
}

/** A private HOME and state directory per test; the store defaults to $HOME/.velesdb-memory. */
export function mcpSandbox(
  name: string,
  idleMs = 2000,
): { root: string; env: Record<string, string>; stateDir: string; cleanup(): void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `vh-${name}-`));
  const home = path.join(root, "home");
  fs.mkdirSync(home);
  const stateDir = path.join(root, "state");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    VELESDB_HOOKS_STATE_DIR: stateDir,
    VELESDB_HOOKS_MCP_IDLE_MS: String(idleMs),
    VELESDB_MEMORY_QUIET: "1",
  };
  return {
    root,
    env,
    stateDir,
    cleanup: () => {
      // Every broker of this sandbox and its server go with it (a case that unsets
      // VELESDB_HOOKS_STATE_DIR has its brokers in the home: src/core/mcp-runtime.ts mcpRuntimeDirectory).
      for (const pid of [...brokersOf(stateDir), ...brokersIn(path.join(home, ".velesdb-hooks", "run"))]) killTree(pid);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/** brokersOf(stateDir) → pids of live brokers whose status file lies in that state directory. */
export function brokersOf(stateDir: string): number[] {
  return brokersIn(path.join(stateDir, "mcp"));
}

/** brokersIn(dir) → pids of live brokers whose status file lies in dir (the broker's runtime directory). */
export function brokersIn(dir: string): number[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".status.json"))
    .flatMap((f) => {
      try {
        const pid = JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")).pid as number;
        return alive(pid) ? [pid] : [];
      } catch {
        return [];
      }
    });
}

export function killTree(pid: number): void {
  for (const child of childrenOf(pid)) killTree(child);
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}
