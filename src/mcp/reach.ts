// How a client of the shared broker reaches it: the front (`velesdb-hooks mcp`, one per agent
// session) and the hooks that load and save the working context themselves (docs/shared-memory.md,
// docs/working-context.md "Loaded by the hook"). One path for both, so a hook and a front that
// start at the same moment go through the same start lock and get the same broker — the race
// claude-mem's hook and MCP server lost against each other (docs/working-context.md#loaded-by-the-hook).
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { LineSplitter, parseMessage } from "./lines.ts";
import { readMcpStatus, type McpRuntimePaths } from "../core/mcp-runtime.ts";
import { describeStartLock, HELLO_KEY, type Hello } from "./channel.ts";

/** The broker a client means: its store, the files of that store's broker, and the server it starts when none runs. */
export interface BrokerTarget {
  /** The absolute velesdb-memory to run when no broker answers; undefined: connect only, never start. */
  readonly server: string | undefined;
  readonly store: string;
  readonly paths: McpRuntimePaths;
  /** The environment a started broker (and its server) runs with. */
  readonly env: NodeJS.ProcessEnv;
}

/** What the caller does with the broker's lines once linked, and when the link closes. */
export interface LinkHandlers {
  onLine(line: string): void;
  onClose(): void;
}

export type Reached =
  | { readonly ok: true; readonly socket: net.Socket }
  | { readonly ok: false; readonly cause: string };

type Attempt = { kind: "linked"; socket: net.Socket } | { kind: "absent" | "retry" | "failed"; cause: string };

/** At most this many brokers are started by one reach: each one that finds another running exits at once. */
const MAX_STARTS = 5;

/**
 * reachBroker(target, budgetMs, handlers) → a greeted connection to the store's broker, starting
 * one when nothing answers and target.server is known, within budgetMs. After the link is
 * made, every line of the broker goes to handlers.onLine and its close to handlers.onClose.
 * A broker this reach started that has exited while nothing answers (it found another broker,
 * which then stopped — a probe's broker idles out at once) is replaced by a new start: started
 * once only, a session left waiting for a broker that would never come and failed at its bound
 * (docs/hardening.md, 4.2).
 */
export async function reachBroker(target: BrokerTarget, budgetMs: number, handlers: LinkHandlers): Promise<Reached> {
  const deadline = Date.now() + budgetMs;
  const seconds = Math.max(1, Math.round(budgetMs / 1000));
  let spawnedAt = Number.POSITIVE_INFINITY;
  let starts = 0;
  let running: { exited: boolean } | undefined;
  let last = "no broker answered";
  while (Date.now() < deadline) {
    const attempt = await attemptLink(target, deadline, seconds, handlers);
    if (attempt.kind === "linked") return { ok: true, socket: attempt.socket };
    if (attempt.kind === "failed") return { ok: false, cause: attempt.cause };
    last = attempt.cause;
    // A broker that failed before it could greet says why in the status file only. Only a failure
    // of this session's own server counts: another entry's (a velesdb-memory that is not there)
    // is that entry's alone, and this session starts its own broker (docs/hardening.md, 4.4).
    if (starts > 0) {
      const status = readMcpStatus({ ...target.env, VELESDB_MEMORY_PATH: target.store });
      if (status.state === "failed" && status.server === target.server && Date.parse(status.at) >= spawnedAt)
        return { ok: false, cause: status.cause };
    }
    if (attempt.kind === "absent" && (running === undefined || running.exited) && starts < MAX_STARTS) {
      if (target.server === undefined) return { ok: false, cause: `no broker is running (${last})` };
      if (starts === 0) spawnedAt = Date.now();
      starts++;
      const spawned = startBroker(target, target.server);
      if (typeof spawned === "string") return { ok: false, cause: spawned };
      running = spawned;
    }
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
  // A start lock held all along is what kept every broker from starting: say so, naming the file.
  const lock = describeStartLock(target.paths.lock);
  return {
    ok: false,
    cause: lock
      ? `velesdb-memory did not start within ${seconds} s: ${lock}; remove it if no velesdb-hooks mcp is starting`
      : `velesdb-memory did not start within ${seconds} s (${last}); its log: ${target.paths.log}`,
  };
}

function attemptLink(
  target: BrokerTarget,
  deadline: number,
  seconds: number,
  handlers: LinkHandlers,
): Promise<Attempt> {
  return new Promise((resolve) => {
    const socket = net.connect(target.paths.socket);
    const lines = new LineSplitter();
    let settled = false;
    let linked = false;
    const settle = (value: Attempt): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (value.kind !== "linked") socket.destroy();
      else linked = true;
      resolve(value);
    };
    const timer = setTimeout(
      () =>
        settle({
          kind: "failed",
          cause: `velesdb-memory did not start within ${seconds} s (the broker is still waiting for its answer to initialize); its log: ${target.paths.log}`,
        }),
      Math.max(0, deadline - Date.now()),
    );
    socket.once("connect", () =>
      socket.write(
        `${JSON.stringify({ [HELLO_KEY]: "hello", store: target.store, server: target.server } satisfies Hello)}\n`,
      ),
    );
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // A reset or a broken pipe is a broker closing while we connect (it was stopping): the
      // next attempt reaches its successor (seen as ECONNRESET in test/mcp-front-real.test.ts's
      // two-fronts race under load).
      const code = error.code ?? "";
      const kind =
        code === "ENOENT" || code === "ECONNREFUSED"
          ? "absent"
          : code === "ECONNRESET" || code === "EPIPE"
            ? "retry"
            : "failed";
      settle({ kind, cause: `${target.paths.socket}: ${error.code ?? error.message}` });
    });
    socket.on("close", () => {
      if (!settled) settle({ kind: "retry", cause: "the broker closed the connection while starting" });
      else if (linked) handlers.onClose();
    });
    socket.on("data", (chunk: Buffer) => {
      for (const event of lines.push(chunk)) {
        if (event.kind !== "line") continue;
        if (settled) {
          if (linked) handlers.onLine(event.text);
          continue;
        }
        const hello = parseMessage(event.text) as Partial<Hello> | undefined;
        const said = hello?.[HELLO_KEY];
        if (said === "ready") settle({ kind: "linked", socket });
        else if (said === "failed") settle({ kind: "failed", cause: hello?.cause || "velesdb-memory did not start" });
        else settle({ kind: "retry", cause: "the broker is stopping" });
      }
    });
  });
}

/** startBroker(target, server) → the broker spawned (detached, its own session), which says when it has exited; else why not. */
function startBroker(target: BrokerTarget, server: string): { exited: boolean } | string {
  const compiled =
    typeof Bun !== "undefined" && (Bun.main.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(Bun.main));
  const self = compiled ? [] : [Bun.main];
  let log: number | "ignore" = "ignore";
  try {
    log = fs.openSync(
      target.paths.log,
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW,
      0o600,
    );
  } catch {
    // No log: the broker still runs; its failures reach the status file and the fronts.
  }
  try {
    const child = spawn(process.execPath, [...self, "mcp", "--broker", "--server", server], {
      detached: true,
      stdio: ["ignore", "ignore", log],
      cwd: path.dirname(target.paths.dir),
      env: { ...target.env, VELESDB_MEMORY_PATH: target.store },
    });
    const started = { exited: false };
    child.on("error", () => {
      started.exited = true;
    });
    child.on("exit", () => {
      started.exited = true;
    });
    child.unref();
    return started;
  } catch (error) {
    return `the broker cannot be started (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  } finally {
    if (typeof log === "number") fs.closeSync(log);
  }
}
