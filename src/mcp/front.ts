// `velesdb-hooks mcp --server <path>`: the stdio MCP server every agent is wired to by
// `install --mcp` (docs/shared-memory.md). It is a pipe to the broker of its store,
// starting that broker (detached: its own session, so a host killing its MCP process tree does
// not take memory from the other sessions) when none answers. A host must never hang on it:
// the start is bounded (VELESDB_HOOKS_MCP_START_MS, default 15 s: Codex gives an MCP server 10 s
// by default, so the server's own start dominates), a failure is one stderr line and exit 1.
// Once started, a broker that goes away costs each request in flight exactly one error answer
// (never a re-send: a save must not apply twice), and the next request reaches a fresh broker.
import type * as net from "node:net";
import * as path from "node:path";
import {
  errorLine,
  idKey,
  idOf,
  isRequest,
  isResponse,
  LineSplitter,
  parseMessage,
  SERVER_STOPPED,
  type JsonRpcId,
} from "./lines.ts";
import { mcpRuntimePaths, recordFront, resolveStore, type McpRuntimePaths } from "../core/mcp-runtime.ts";
import { HELLO_KEY, openRuntimeDirectory } from "./channel.ts";
import { reachBroker } from "./reach.ts";

const EXIT_FAILED = 1;
const EXIT_USAGE = 64;
const DEFAULT_START_MS = 15_000;
const DEFAULT_IDLE_MS = 30_000;
/**
 * How long one request may wait for velesdb-memory's answer before its session gets an error
 * (docs/shared-memory.md "A hung server"). Measured with velesdb-memory 0.17.0 and its default
 * hash embedder on a loaded 2-core machine, the slowest call was ~1.1 s (compile_transcript on
 * 7.5 MiB); with a remote embedder the server itself waits up to 60 s per embedding request
 * (src/embedder.rs EMBED_TIMEOUT_SECS): twice that is left to it.
 */
const DEFAULT_CALL_MS = 120_000;

interface FrontOptions {
  readonly server: string;
  readonly store: string;
  readonly paths: McpRuntimePaths;
  readonly startMs: number;
}

/** runMcpCommand(["--server", "/abs/velesdb-memory"]) → an exit code; `--broker` runs the broker itself. */
export async function runMcpCommand(args: readonly string[]): Promise<number> {
  let server: string | undefined;
  let broker = false;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--server" && args[i + 1] !== undefined) server = args[++i];
    else if (args[i] === "--broker") broker = true;
    else return usage(`unexpected argument ${JSON.stringify(args[i])}`);
  }
  if (server === undefined || !path.isAbsolute(server))
    return usage("needs --server with the absolute path of velesdb-memory");
  // No Unix socket on Windows, and a named pipe is unproven (docs/shared-memory.md "Windows"):
  // install --mcp wires velesdb-memory directly there, so only a hand-made entry gets here.
  if (process.platform === "win32")
    return failLine(
      "the shared front does not run on Windows yet; register velesdb-memory itself (install --mcp does)",
    );
  const store = resolveStore(process.env, process.cwd());
  if (!store.ok) return failLine(store.problem);
  const paths = mcpRuntimePaths({ ...process.env, VELESDB_MEMORY_PATH: store.store }, process.cwd());
  const startMs = boundFromEnv("VELESDB_HOOKS_MCP_START_MS", DEFAULT_START_MS);
  if (broker) {
    const { runBroker } = await import("./broker.ts");
    return runBroker({
      server,
      store: store.store,
      paths,
      env: { ...process.env, VELESDB_MEMORY_PATH: store.store },
      idleMs: boundFromEnv("VELESDB_HOOKS_MCP_IDLE_MS", DEFAULT_IDLE_MS),
      startMs: startMs + 5000,
      // 0 would fail every call at once: a deadline is at least 100 ms.
      callMs: Math.max(100, boundFromEnv("VELESDB_HOOKS_MCP_CALL_MS", DEFAULT_CALL_MS)),
    });
  }
  const dir = openRuntimeDirectory(paths);
  if (!dir.ok) return failLine(dir.problem);
  recordFront(paths, server, process.env);
  return new Front({ server, store: store.store, paths, startMs }).run();
}

function usage(problem: string): number {
  process.stderr.write(`velesdb-hooks mcp: ${problem} (usage: velesdb-hooks mcp --server /abs/path/velesdb-memory)\n`);
  return EXIT_USAGE;
}

function failLine(problem: string): number {
  process.stderr.write(`velesdb-hooks mcp: ${problem}\n`);
  return EXIT_FAILED;
}

function boundFromEnv(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? "");
  return process.env[name] !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback;
}

type Link = { ok: true; socket: net.Socket } | { ok: false; cause: string };

class Front {
  private link: Extract<Link, { ok: true }> | undefined;
  private connecting: Promise<Link> | undefined;
  /** The host's requests sent to the broker and not yet answered (key → the id as the host sent it, and its line), in send order. */
  private readonly inFlight = new Map<string, { readonly id: JsonRpcId; readonly line: string }>();
  private readonly stdinLines = new LineSplitter();
  /** Host lines in order: each waits for the one before it (a reconnect must not reorder them). */
  private queue: Promise<void> = Promise.resolve();
  private exiting = false;

  constructor(private readonly options: FrontOptions) {}

  async run(): Promise<number> {
    const first = await this.connect();
    if (!first.ok) return failLine(first.cause);
    // The host went away (EPIPE on its pipe): nothing is left to answer; leave quietly, no trace.
    process.stdout.on("error", () => process.exit(0));
    return new Promise((resolve) => {
      process.stdin.on("data", (chunk: Buffer) => {
        for (const event of this.stdinLines.push(chunk)) {
          const line = event.kind === "line" ? event.text : undefined;
          this.queue = this.queue.then(() =>
            line === undefined
              ? this.write(errorLine(null, -32700, "message over the 16 MiB line limit; dropped"))
              : this.fromHost(line),
          );
        }
      });
      // The host closed our stdin: the session is over (MCP stdio shutdown). Answers still on
      // their way are dropped with the connection; the broker keeps the server for the others.
      process.stdin.on("end", () => {
        void this.queue.then(() => {
          this.exiting = true;
          this.link?.socket.end();
          process.stdout.write("", () => resolve(0));
        });
      });
    });
  }

  private async fromHost(line: string): Promise<void> {
    const message = parseMessage(line);
    const requestId = message && isRequest(message) ? idOf(message) : undefined;
    if (message?.method === "notifications/cancelled") {
      const params = message.params as Record<string, unknown> | undefined;
      const cancelled = idOf({ id: params?.requestId });
      if (cancelled !== undefined) this.inFlight.delete(idKey(cancelled));
    }
    let link = this.link;
    if (!link) {
      const reached = await this.connect();
      if (!reached.ok) {
        process.stderr.write(`velesdb-hooks mcp: ${reached.cause}\n`);
        if (requestId !== undefined)
          this.write(
            errorLine(
              requestId,
              SERVER_STOPPED,
              `velesdb-memory is not running: ${reached.cause}; see velesdb-hooks doctor`,
            ),
          );
        return;
      }
      link = reached;
    }
    if (requestId !== undefined) this.inFlight.set(idKey(requestId), { id: requestId, line });
    link.socket.write(`${line}\n`);
  }

  private fromBroker(line: string): void {
    const message = parseMessage(line);
    if (message?.[HELLO_KEY] === "retry") {
      this.retry();
      return;
    }
    if (message && isResponse(message)) {
      const id = idOf(message);
      if (id !== undefined) this.inFlight.delete(idKey(id));
    }
    this.write(line);
  }

  private write(line: string): void {
    process.stdout.write(`${line}\n`);
  }

  /** The broker went away: every request still in flight gets its one error; the next line reconnects. */
  private lost(cause: string): void {
    this.link = undefined;
    if (this.exiting) return;
    for (const { id } of this.inFlight.values())
      this.write(errorLine(id, SERVER_STOPPED, `velesdb-memory stopped: ${cause}; call again`));
    this.inFlight.clear();
  }

  /**
   * The broker is stopping and passed no request on: it answered every request it had given its
   * server before it stopped, in order on this one connection, so what is still in flight here
   * never reached a server. Those lines go, in order, to the next broker.
   */
  private retry(): void {
    const lines = [...this.inFlight.values()].map((entry) => entry.line);
    this.inFlight.clear();
    const link = this.link;
    this.link = undefined;
    link?.socket.destroy();
    for (const line of lines) this.queue = this.queue.then(() => this.fromHost(line));
  }

  private connect(): Promise<Link> {
    this.connecting ??= this.reach().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** reach() → a greeted link to the broker (src/mcp/reach.ts), starting one when nothing answers, within the start bound. */
  private async reach(): Promise<Link> {
    const { server, store, paths, startMs } = this.options;
    let socket: net.Socket | undefined;
    const reached = await reachBroker({ server, store, paths, env: process.env }, startMs, {
      onLine: (line) => this.fromBroker(line),
      onClose: () => {
        if (this.link?.socket === socket) this.lost("the broker closed the connection");
      },
    });
    if (!reached.ok) return reached;
    socket = reached.socket;
    this.link = { ok: true, socket };
    return this.link;
  }
}
