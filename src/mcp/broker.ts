// The broker: one detached process per store that runs the one velesdb-memory the store allows
// and shares it among every `velesdb-hooks mcp` front (docs/shared-memory.md).
// One module past 400 lines on purpose: the Broker class is one state machine (starting →
// ready → stopping, with its failure) whose handlers — the server's lines and exit, each
// client's lines, a cancellation, the idle timer, the stop — all read and change the same
// connections, requests in flight and state; cut apart, each piece would need all of them.
// Measured facts of velesdb-memory 0.17.0 it is built on:
// - a second server on one store exits at start with "[velesdb-memory] another velesdb-memory
//   process holds <store> — kill it (pkill velesdb-memory) or point VELESDB_MEMORY_PATH
//   elsewhere", after 3 tries 500 ms apart (src/daemon_startup.rs): that line becomes the cause;
// - its orphan watchdog exits when its parent pid changes (src/daemon_serve.rs,
//   spawn_orphan_watchdog): the broker is its parent, so a broker killed outright takes the
//   server with it and releases the store lock;
// - it never sends a request to its client (src/mcp.rs uses no peer; rmcp 3.11 sends none
//   unasked), so a request from it is answered "method not found" rather than routed;
// - a cancelled request gets no answer at all (rmcp 3.11 src/service.rs: "dropping response for
//   cancelled request"), so a cancellation also forgets the request here;
// - `initialize` is answered with the client's version when it knows it (rmcp 3.11
//   src/service/server.rs negotiate_protocol_version), which this broker repeats per client.
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import { writePrivateFile } from "../core/state.ts";
import { readerJson } from "../core/texts.ts";
import {
  errorLine,
  idKey,
  idOf,
  withTopLevelId,
  isNotification,
  isRequest,
  isResponse,
  LineSplitter,
  type LineEvent,
  METHOD_NOT_FOUND,
  oneLine,
  parseMessage,
  PARSE_ERROR,
  SERVER_STOPPED,
  CALL_TIMED_OUT,
  type JsonRpcId,
  type JsonRpcMessage,
} from "./lines.ts";
import { isSocketOfOurs, type McpRuntimePaths, type McpStatusRecord } from "../core/mcp-runtime.ts";
import { acquireStartLock, brokerAt, HELLO_KEY, openRuntimeDirectory, type Hello } from "./channel.ts";

/** The versions velesdb-memory 0.17.0 answers over `initialize` (rmcp 3.11 ProtocolVersion::KNOWN_VERSIONS with a handshake). */
export const HANDSHAKE_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] as const;
/** What the broker asks for itself: the newest one with a handshake (rmcp LATEST_WITH_INITIALIZE). */
const BROKER_PROTOCOL_VERSION = "2025-11-25";
const BROKER_INIT_ID = "velesdb-hooks-broker-initialize";
/** The broker's own ping to its server, sent when a call ran past its deadline: is the server there at all? */
const BROKER_PING_ID = "velesdb-hooks-broker-ping";
/** How long the server has to answer that ping (at most; never longer than a call's own deadline). */
const LIVENESS_MS = 10_000;
/** A stderr line of the server longer than this says nothing a cause line could show (one line, 300 characters). */
const STDERR_LINE_BYTES = 4096;
/** How long a new broker waits for its first client before it counts as idle. */
const FIRST_CLIENT_GRACE_MS = 10_000;
/** Lines velesdb-memory 0.17.0 prints on every healthy start (the hash-embedder notice, src/embedder.rs HASH_EMBEDDER_NOTICE; the config file's count, src/daemon_startup.rs): never a cause. */
const STARTUP_NOTICE = /Using the offline 'hash' embedder|setting\(s\) from /;

export interface BrokerOptions {
  readonly server: string;
  readonly store: string;
  readonly paths: McpRuntimePaths;
  readonly env: NodeJS.ProcessEnv;
  readonly idleMs: number;
  readonly startMs: number;
  /** How long one request may wait for the server's answer (VELESDB_HOOKS_MCP_CALL_MS). */
  readonly callMs: number;
}

interface Connection {
  readonly socket: net.Socket;
  readonly lines: LineSplitter;
  /** The front's greeting arrived, naming this store. */
  hello: boolean;
  /** The velesdb-memory the session would start itself (its hello), undefined for one that starts none. */
  server: string | undefined;
  /** The broker answered it (ready or failed). */
  greeted: boolean;
  /** client id key → broker id, for the requests of this client in flight. */
  readonly inFlight: Map<string, number>;
}

interface Pending {
  readonly connection: Connection;
  readonly clientId: JsonRpcId;
  /** What was asked ("tools/call remember"), for the deadline's message. */
  readonly what: string;
  /** The call's deadline (BrokerOptions.callMs). */
  readonly timer: ReturnType<typeof setTimeout>;
}

/** runBroker(options) → its exit code, once it has stopped (idle, or its server gone). */
export async function runBroker(options: BrokerOptions): Promise<number> {
  const { paths } = options;
  const dir = openRuntimeDirectory(paths);
  if (!dir.ok) return fail(dir.problem);
  const refuse = (problem: string): number => failed(options, problem);
  const deadline = Date.now() + options.startMs;
  for (;;) {
    const lock = await acquireStartLock(paths.lock, Math.max(0, deadline - Date.now()));
    if (!lock.ok) return refuse(lock.problem);
    // Under the start lock: a live broker keeps the socket (this one was started by a front that
    // raced another); a stopping one is let finish — it needs this lock to let go of the store's
    // server, so it is released meanwhile; a dead one's socket is replaced; anything else at
    // that name is refused.
    const presence = await brokerAt(paths.socket, 1000);
    if (presence === "live") {
      lock.release();
      return 0;
    }
    if (presence === "stopping") {
      lock.release();
      if (Date.now() >= deadline) return refuse(`the broker at ${paths.socket} did not finish stopping`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    const existing = fs.lstatSync(paths.socket, { throwIfNoEntry: false });
    if (existing !== undefined) {
      if (!isSocketOfOurs(paths.socket)) {
        lock.release();
        return refuse(`${paths.socket} exists and is not a socket of ours; remove it`);
      }
      fs.unlinkSync(paths.socket);
    }
    const broker = new Broker(options);
    const listening = await broker.listen();
    lock.release();
    if (!listening.ok) return refuse(listening.problem);
    return broker.run();
  }
}

function fail(problem: string): number {
  process.stderr.write(`velesdb-hooks mcp broker: ${problem}\n`);
  return 1;
}

/** failed(options, problem) → 1, the cause also in the status file, where the waiting front reads it. */
function failed(options: BrokerOptions, problem: string): number {
  writeStatus(options, "failed", problem);
  return fail(problem);
}

function writeStatus(options: BrokerOptions, state: McpStatusRecord["state"], cause: string): void {
  const record: McpStatusRecord = {
    state,
    pid: process.pid,
    server: options.server,
    store: options.store,
    cause,
    at: new Date().toISOString(),
  };
  writePrivateFile(options.paths.status, `${JSON.stringify(record)}\n`);
}

class Broker {
  private readonly connections = new Set<Connection>();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private child: ChildProcess | undefined;
  private childOut = new LineSplitter();
  private stderrTail: string[] = [];
  /** The server's stderr, as lines: a line can arrive in two chunks. */
  private readonly childErr = new LineSplitter(STDERR_LINE_BYTES);
  private spawnFailed = false;
  private initResult: JsonRpcMessage | undefined;
  private state: "starting" | "ready" | "stopping" = "starting";
  private failure: string | undefined;
  private server: net.Server | undefined;
  private socketIno: number | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** The deadline of the broker's own ping to a server that let a call run past its deadline. */
  private livenessTimer: ReturnType<typeof setTimeout> | undefined;
  private finished: ((code: number) => void) | undefined;

  constructor(private readonly options: BrokerOptions) {}

  listen(): Promise<{ ok: true } | { ok: false; problem: string }> {
    return new Promise((resolve) => {
      const server = net.createServer((socket) => this.accept(socket));
      server.once("error", (error) =>
        resolve({
          ok: false,
          problem: `cannot listen on ${this.options.paths.socket} (${(error as NodeJS.ErrnoException).code ?? error.message})`,
        }),
      );
      server.listen(this.options.paths.socket, () => {
        // The directory (0700) is what keeps others out; the mode says so again on the socket.
        fs.chmodSync(this.options.paths.socket, 0o600);
        this.socketIno = fs.lstatSync(this.options.paths.socket).ino;
        this.server = server;
        resolve({ ok: true });
      });
    });
  }

  run(): Promise<number> {
    return new Promise((resolve) => {
      this.finished = resolve;
      this.startChild();
      // The front that started this broker connects only once it listens; until a first client
      // has come, the idle grace is at least FIRST_CLIENT_GRACE_MS. Otherwise a grace of 0 (what
      // check's probe sets) stopped the broker before its own front reached it, and the probe
      // read "velesdb-memory exited (code 0)" (seen on every cold `check` of the npm test).
      this.armIdle(Math.max(this.options.idleMs, FIRST_CLIENT_GRACE_MS));
    });
  }

  private startChild(): void {
    const { server, store, env, startMs } = this.options;
    try {
      fs.mkdirSync(store, { recursive: true, mode: 0o700 });
    } catch (error) {
      this.childFailed(`the store ${store} cannot be created (${(error as NodeJS.ErrnoException).code})`);
      void this.stop(1);
      return;
    }
    // cwd = the store: a repository's ./velesdb-memory.toml (src/config.rs resolve_path reads the
    // working directory's) must not steer a server every session shares. VELESDB_MEMORY_PATH is
    // always set, so no config file can move the store either (the environment wins over it).
    const child = spawn(server, [], {
      cwd: store,
      env: { ...env, VELESDB_MEMORY_PATH: store },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    child.on("error", (error) => {
      this.spawnFailed = true;
      this.childFailed(`velesdb-memory cannot be started: ${spawnProblem(server, error)}`);
      void this.stop(1);
    });
    child.stdout!.on("data", (chunk: Buffer) => {
      for (const event of this.childOut.push(chunk)) if (event.kind === "line") this.fromChild(event.text);
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      process.stderr.write(chunk);
      this.keepStderr(this.childErr.push(chunk));
    });
    // "close", not "exit": exit can come before the last stderr chunk is read, and that chunk
    // holds the server's own `Error:` line, the cause a user needs (seen under load in
    // test/memory-down.test.ts: only an earlier warning had arrived).
    child.on("close", (code, signal) => this.childExited(code, signal));
    child.stdin!.on("error", () => {}); // EPIPE once it died: its exit event says what happened
    this.toChild({
      jsonrpc: "2.0",
      id: BROKER_INIT_ID,
      method: "initialize",
      params: {
        protocolVersion: BROKER_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "velesdb-hooks-broker", version: "1" },
      },
    });
    setTimeout(() => {
      if (this.state === "starting" && this.failure === undefined) {
        this.childFailed(`velesdb-memory did not answer initialize within ${Math.round(startMs / 1000)} s`);
        child.kill("SIGKILL");
      }
    }, startMs).unref();
  }

  private toChild(message: JsonRpcMessage): void {
    const stdin = this.child?.stdin;
    if (stdin && !stdin.destroyed) stdin.write(`${JSON.stringify(message)}\n`);
  }

  private fromChild(line: string): void {
    const message = parseMessage(line);
    if (!message) return;
    if (isResponse(message)) {
      const id = idOf(message);
      if (id === BROKER_INIT_ID) {
        this.initialized(message);
        return;
      }
      if (id === BROKER_PING_ID) {
        this.answeredPing();
        return;
      }
      const pending = typeof id === "number" ? this.forget(id) : undefined;
      if (!pending) return; // cancelled, timed out, or its client is gone
      pending.connection.inFlight.delete(idKey(pending.clientId));
      sendLine(
        pending.connection,
        withTopLevelId(line, pending.clientId) ?? JSON.stringify({ ...message, id: pending.clientId }),
      );
      return;
    }
    if (isRequest(message)) {
      this.toChildLine(
        errorLine(idOf(message)!, METHOD_NOT_FOUND, "velesdb-hooks' broker routes no server request to a client"),
      );
      return;
    }
    // A notification: progress and cancellations would name a broker id no client knows.
    if (message.method === "notifications/progress" || message.method === "notifications/cancelled") return;
    for (const connection of this.connections) if (connection.greeted) sendLine(connection, line);
  }

  private toChildLine(line: string): void {
    const stdin = this.child?.stdin;
    if (stdin && !stdin.destroyed) stdin.write(`${line}\n`);
  }

  private initialized(message: JsonRpcMessage): void {
    // An answer that comes once the broker is stopping (idle before its server was up) changes
    // nothing: it flipped "stopping" back to "ready", and the server's orderly exit that
    // followed was then recorded as a failure (docs/hardening.md, 4.2).
    if (this.state === "stopping") return;
    if (Object.hasOwn(message, "error") || typeof message.result !== "object" || message.result === null) {
      this.childFailed(
        `velesdb-memory refused initialize: ${oneLine(JSON.stringify(message.error ?? message.result))}`,
      );
      this.child?.kill("SIGTERM");
      return;
    }
    this.initResult = message.result as JsonRpcMessage;
    this.toChild({ jsonrpc: "2.0", method: "notifications/initialized" });
    this.state = "ready";
    this.writeStatus("running", "ready");
    this.greetWaiting();
  }

  private greetWaiting(): void {
    for (const connection of this.connections) if (connection.hello && !connection.greeted) this.greet(connection);
  }

  private accept(socket: net.Socket): void {
    const connection: Connection = {
      socket,
      lines: new LineSplitter(),
      hello: false,
      server: undefined,
      greeted: false,
      inFlight: new Map(),
    };
    if (this.state === "stopping") {
      socket.end(`${JSON.stringify({ [HELLO_KEY]: "retry", store: this.options.store } satisfies Hello)}\n`);
      return;
    }
    // A connection counts as a client (it holds the broker up) only once it has said hello.
    this.connections.add(connection);
    socket.on("data", (chunk: Buffer) => {
      for (const event of connection.lines.push(chunk)) {
        if (event.kind === "oversized")
          send(
            connection,
            JSON.parse(
              errorLine(null, PARSE_ERROR, `a message of ${event.bytes} bytes is over the 16 MiB line limit; dropped`),
            ),
          );
        else this.fromClient(connection, event.text);
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => this.drop(connection));
  }

  private greet(connection: Connection): void {
    connection.greeted = true;
    // A session whose own velesdb-memory is another one does not share this one's failure: it
    // is told to start its own broker once this one has gone. One agent's entry naming a
    // missing server made every other agent's sessions fail with its ENOENT (docs/hardening.md, 4.4).
    if (this.failure !== undefined && connection.server !== undefined && connection.server !== this.options.server) {
      connection.socket.end(`${JSON.stringify({ [HELLO_KEY]: "retry", store: this.options.store } satisfies Hello)}\n`);
      return;
    }
    send(connection, {
      [HELLO_KEY]: this.failure === undefined ? "ready" : "failed",
      store: this.options.store,
      cause: this.failure ?? "",
    } satisfies Hello);
  }

  /** A client gone: its answers are dropped when they come (no cancellation: a save it sent still completes whole). */
  private drop(connection: Connection): void {
    this.connections.delete(connection);
    for (const brokerId of connection.inFlight.values()) this.forget(brokerId);
    connection.inFlight.clear();
    if (connection.hello) this.armIdle();
  }

  private fromClient(connection: Connection, line: string): void {
    const message = parseMessage(line);
    if (!connection.hello) {
      // A starting broker asking whether this one runs (channel.ts brokerAt): answered, not counted.
      if (message?.[HELLO_KEY] === "probe") {
        const answer = this.state === "stopping" ? "retry" : "alive";
        connection.socket.end(
          `${JSON.stringify({ [HELLO_KEY]: answer, store: this.options.store } satisfies Hello)}\n`,
        );
        return;
      }
      // The front's greeting: the store it means (two stores can share a checksum).
      if (message?.[HELLO_KEY] !== "hello") return void connection.socket.destroy();
      if (message.store !== this.options.store) {
        send(connection, {
          [HELLO_KEY]: "failed",
          store: this.options.store,
          cause: `the broker at ${this.options.paths.socket} serves ${this.options.store}, not ${String(message.store)}`,
        } satisfies Hello);
        return void connection.socket.end();
      }
      connection.hello = true;
      connection.server = typeof message.server === "string" ? message.server : undefined;
      this.disarmIdle();
      if (this.state === "ready" || this.failure !== undefined) this.greet(connection);
      return;
    }
    if (!message) {
      send(connection, JSON.parse(errorLine(null, PARSE_ERROR, "not a JSON-RPC message")));
      return;
    }
    if (isRequest(message)) {
      const clientId = idOf(message)!;
      if (message.method === "initialize") {
        send(connection, { jsonrpc: "2.0", id: clientId, result: this.initializeAnswer(message) });
        return;
      }
      if (message.method === "ping") {
        send(connection, { jsonrpc: "2.0", id: clientId, result: {} });
        return;
      }
      // Stopping (its server gone, or idle): the request never reached a server, so the front may
      // send it again, to the next broker; a request that did reach one is never re-sent.
      if (this.state !== "ready") {
        send(connection, { [HELLO_KEY]: "retry", store: this.options.store } satisfies Hello);
        return;
      }
      const brokerId = this.nextId++;
      const what = [message.method, (message.params as { name?: unknown } | undefined)?.name]
        .filter((part) => typeof part === "string")
        .join(" ")
        // A tool name is the client's text: it reaches the status file and the guard's words printable only.
        .replace(/[^\x20-\x7e]/g, "?")
        .slice(0, 80);
      const timer = setTimeout(() => this.callTimedOut(brokerId), this.options.callMs);
      this.pending.set(brokerId, { connection, clientId, what, timer });
      connection.inFlight.set(idKey(clientId), brokerId);
      this.toChildLine(withTopLevelId(line, brokerId) ?? JSON.stringify({ ...message, id: brokerId }));
      return;
    }
    if (isNotification(message)) {
      // The broker's own notifications/initialized went once; each client's would repeat it.
      if (message.method === "notifications/initialized") return;
      if (message.method === "notifications/cancelled") {
        const params = (typeof message.params === "object" && message.params !== null ? message.params : {}) as Record<
          string,
          unknown
        >;
        const requestId = idOf({ id: params.requestId });
        const brokerId = requestId === undefined ? undefined : connection.inFlight.get(idKey(requestId));
        if (brokerId === undefined) return;
        connection.inFlight.delete(idKey(requestId!));
        this.forget(brokerId);
        this.toChild({ ...message, params: { ...params, requestId: brokerId } });
        return;
      }
      this.toChildLine(line);
      return;
    }
    // A response to a server request: none is ever routed to a client (see the header).
  }

  /** initializeAnswer(request) → the server's one initialize result, with the version MCP says to answer this client. */
  private initializeAnswer(request: JsonRpcMessage): JsonRpcMessage {
    const params = (typeof request.params === "object" && request.params !== null ? request.params : {}) as Record<
      string,
      unknown
    >;
    const asked = params.protocolVersion;
    const known = typeof asked === "string" && (HANDSHAKE_VERSIONS as readonly string[]).includes(asked);
    return { ...this.initResult, protocolVersion: known ? asked : this.initResult!.protocolVersion };
  }

  private childFailed(cause: string): void {
    if (this.failure !== undefined) return;
    this.failure = cause;
    this.writeStatus("failed", cause);
    this.greetWaiting();
  }

  /** keepStderr(lines) → the last five of the server's stderr lines that can say why it stopped. */
  private keepStderr(events: readonly LineEvent[]): void {
    const lines = events.flatMap((e) => (e.kind === "line" && !STARTUP_NOTICE.test(e.text) ? [e.text] : []));
    this.stderrTail = [...this.stderrTail, ...lines].slice(-5);
  }

  private childExited(code: number | null, signal: string | null): void {
    if (this.state === "stopping") return; // stop() ended it
    // A server that never started: the "error" handler has decided and stops the broker.
    if (this.spawnFailed) return;
    this.keepStderr(this.childErr.push(Buffer.from("\n"))); // the last line, when it had no newline
    const said =
      this.stderrTail.find((l) => l.includes("another velesdb-memory process holds")) ??
      [...this.stderrTail].reverse().find((l) => /^(\[velesdb-memory\] )?Error:/.test(l)) ??
      this.stderrTail.at(-1);
    const how = signal ? `was killed (${signal})` : `exited (code ${code})`;
    this.childFailed(said ? oneLine(said) : `velesdb-memory ${how}`);
    // Every request in flight gets exactly one answer, never a re-send: a save must not apply twice.
    for (const brokerId of [...this.pending.keys()]) {
      const pending = this.forget(brokerId)!;
      pending.connection.inFlight.delete(idKey(pending.clientId));
      send(
        pending.connection,
        JSON.parse(errorLine(pending.clientId, SERVER_STOPPED, `velesdb-memory stopped: ${this.failure}; call again`)),
      );
    }
    void this.stop(1);
  }

  /** forget(brokerId) → the request it named, no longer in flight (its deadline cleared), or undefined. */
  private forget(brokerId: number): Pending | undefined {
    const pending = this.pending.get(brokerId);
    if (pending === undefined) return undefined;
    clearTimeout(pending.timer);
    this.pending.delete(brokerId);
    return pending;
  }

  /**
   * A request had no answer within its deadline: its session gets one error now (a stopped
   * server used to hang every session forever, its initialize answered from the broker's
   * cache), and the server is asked a ping. A server that answers it is alive, only slow on that
   * call, and stays; one that does not is hung (stopped, deadlocked): callTimedOut → hung.
   */
  private callTimedOut(brokerId: number): void {
    const pending = this.forget(brokerId);
    if (pending === undefined) return;
    pending.connection.inFlight.delete(idKey(pending.clientId));
    const seconds = Math.round(this.options.callMs / 1000);
    send(
      pending.connection,
      JSON.parse(
        errorLine(
          pending.clientId,
          CALL_TIMED_OUT,
          `velesdb-memory did not answer ${pending.what} within ${seconds} s (VELESDB_HOOKS_MCP_CALL_MS); it may still complete, so check before repeating a save`,
        ),
      ),
    );
    if (this.livenessTimer !== undefined || this.state !== "ready") return;
    const pingMs = Math.min(LIVENESS_MS, this.options.callMs);
    this.toChild({ jsonrpc: "2.0", id: BROKER_PING_ID, method: "ping" });
    this.livenessTimer = setTimeout(
      () =>
        this.hung(
          `velesdb-memory stopped answering: ${pending.what} had no answer within ${seconds} s, nor a ping within ${Math.round(pingMs / 1000)} s; it was stopped, and the next call starts it again`,
        ),
      pingMs,
    );
  }

  private answeredPing(): void {
    if (this.livenessTimer !== undefined) clearTimeout(this.livenessTimer);
    this.livenessTimer = undefined;
  }

  /**
   * hung(cause): the server is there but answers nothing. It is killed (SIGKILL reaches a stopped
   * process too) and the broker stops as for any server that died: every other request in flight
   * gets its one error, the status says "failed" with the cause, and the next call starts a fresh
   * broker and server. Kept instead, a server that never comes back would cost every call its
   * deadline; and one that does come back (SIGCONT) before the ping's deadline is kept.
   */
  private hung(cause: string): void {
    this.livenessTimer = undefined;
    if (this.state !== "ready") return;
    this.childFailed(cause);
    this.child?.kill("SIGKILL");
  }

  private armIdle(graceMs: number = this.options.idleMs): void {
    this.disarmIdle();
    if (this.state === "stopping") return;
    for (const connection of this.connections) if (connection.hello) return;
    this.idleTimer = setTimeout(() => void this.stop(0), graceMs);
  }

  private disarmIdle(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /** stop(code): under the start lock, so a broker starting meanwhile waits until this store's server has let go. */
  private async stop(code: number): Promise<void> {
    if (this.state === "stopping") return;
    this.state = "stopping";
    this.disarmIdle();
    this.answeredPing();
    // The lock first, the socket after: while this broker waits for the lock it still answers,
    // "retry" to a session and "stopping" to a starting broker's probe, which then lets go of the
    // lock and waits for this one to finish. Closed first, its socket refused connections, and a
    // broker starting meanwhile took it for stale and started a second server on the store.
    const lock = await acquireStartLock(this.options.paths.lock, 10_000);
    this.server?.close();
    const st = fs.lstatSync(this.options.paths.socket, { throwIfNoEntry: false });
    if (st !== undefined && st.ino === this.socketIno) fs.unlinkSync(this.options.paths.socket);
    // Each front is told to take what it still has in flight to the next broker: this one
    // answered every request it gave its server, so nothing it says "retry" to ever ran.
    for (const connection of this.connections)
      connection.socket.end(`${JSON.stringify({ [HELLO_KEY]: "retry", store: this.options.store } satisfies Hello)}\n`);
    const child = this.child;
    // A server that could not be spawned has no pid and never sends "exit": nothing to wait for.
    if (child && child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.stdin?.end();
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      const timer = setTimeout(() => child.kill("SIGTERM"), 3000);
      const hard = setTimeout(() => child.kill("SIGKILL"), 6000);
      await exited;
      clearTimeout(timer);
      clearTimeout(hard);
    }
    // An idle exit leaves no status behind ("absent"); a failure stays for the guard and doctor.
    if (this.failure === undefined) fs.rmSync(this.options.paths.status, { force: true });
    if (lock.ok) lock.release();
    this.finished?.(code);
  }

  private writeStatus(state: McpStatusRecord["state"], cause: string): void {
    writeStatus(this.options, state, cause);
  }
}

/**
 * spawnProblem("/opt/vm", ENOENT) → "/opt/vm does not exist": the path is named, since the
 * agent's entry holds it and each entry may name another (printable: a path can hold controls).
 */
function spawnProblem(server: string, error: NodeJS.ErrnoException): string {
  const shown = readerJsonIfNeeded(server);
  if (error.code === "ENOENT" && !fs.existsSync(server)) return `${shown} does not exist`;
  if (error.code === "EACCES") return `${shown} cannot be run (EACCES: not executable, or a directory)`;
  return `${shown}: ${error.code ?? error.message}`;
}

/** The path as it is when every character is printable, else as a JSON string (texts.ts readerJson). */
function readerJsonIfNeeded(value: string): string {
  return /^[^\u0000-\u001f\u007f-\u009f\u2028\u2029"]*$/.test(value) ? value : readerJson(value);
}

function send(connection: Connection, message: JsonRpcMessage): void {
  sendLine(connection, JSON.stringify(message));
}

/** sendLine(connection, line): the server's bytes as they came (see withTopLevelId). */
function sendLine(connection: Connection, line: string): void {
  if (!connection.socket.destroyed) connection.socket.write(`${line}\n`);
}
