// End-to-end harness for the DeepSeek harness (`dsh`) host: drives the REAL Codex hook bridge
// `@deepseek-ai/dsh-hooks-codex` (pinned in test/e2e/package.json, imported in this Bun process) with a
// small fake of the harness around it, and our compiled binary registered in the Codex-format
// hooks.json the bridge reads — written by our own installer (`install --client dsh --config`).
//
// What the bridge needs (read from its published lib/index.js 0.0.1-rc.1 and
// @deepseek-ai/dsh-hook-protocol 0.0.1-rc.1; the fake below provides exactly this):
// - `apply(ctx, {configPath, model, defaultTimeoutMs?, stderrSummaryMaxChars?})`, synchronous.
//   It reads configPath ONCE (readFileSync + JSON.parse; a `{hooks:{…}}` wrapper or a bare event
//   map). Unreadable/unparseable config or an invalid matcher regex: `ctx.logger.warn(…)` and no
//   listener at all. `type` other than "command" and `async: true` are skipped with a warning;
//   `timeout` (or `timeoutSec`) is in seconds; `statusMessage`/`commandWindows` are ignored.
// - ctx: `on(name, listener)`, `logger.warn`, `effect(fn, label)` (fn returns the disposer that
//   drains detached SessionStart runs — it aborts them first), `get("sessionPersistence")`
//   (optional; `.locate(header)?.path` becomes `transcript_path`, else null), and `ctx.bash`
//   (`inject = ["bash"]`).
// - ctx.bash: `run(resolve(request))` with request `{command, timeoutMs, stdin, signal,
//   workdir?, env?}` (stdin = JSON.stringify(payload), NO trailing newline; workdir = the
//   session header's cwd); result `{exitCode, stdout:{text}, stderr:{text}}`. A rejected run
//   becomes "no exit code", never an exception in the turn.
// - Listener signatures:
//   agent/session-start  ({agent, source}) — not awaited: the hook runs DETACHED, then
//                        `agent.inject(userMessage)` with the context (JSON additionalContext
//                        for hookEventName "SessionStart", or plain stdout not starting "{").
//   agent/pre-step       ({agent, messages, turn, signal}, next) — UserPromptSubmit; waterfall.
//   tools/pre-execute    (exec, next) with exec {callId, name, arguments, agent, signal} —
//                        PreToolUse; `{kind:"deny", reason}` when the merged decision is deny,
//                        else `next()`. allow/ask/updatedInput/additionalContext are ignored.
//   tools/post-execute   (exec, result, next) with result {content:[blocks], isError} —
//                        PostToolUse; tool_response = the text blocks joined; a block becomes
//                        `{kind:"block", feedback}`, additionalContext rides on `next()`'s
//                        decision as `additionalContexts`.
//   agent/turn-stopping  ({agent, turn, signal}) — Stop; awaited (serial). A merged "deny"
//                        (top-level `decision:"block"` or exit 2) → `agent.steer(userMessage)`
//                        with the reason. Payload always has stop_hook_active:false and
//                        last_assistant_message:null.
// - agent: `session.header {id, cwd}`, `session.events` (turn_id = the last `turn/start`
//   event's `data.turn`, 0 if none), `session.append(type, data)` (it appends `hook/invoked`
//   {turn, point, dialect:"codex", handlerId, matcher?} and `hook/result` {turn, point,
//   handlerId, decision, exitCode?, stderrSummary?, durationMs} for every hook it runs inside a
//   turn — NOT for SessionStart, which has no turn), `inject(message)`, `steer(message)`.
//   Messages are dsh-llm user messages {role:"user", content:[{type:"text",text}],
//   source:{kind:"plugin", plugin:"hooks-codex"}, id}.
// - Decoding (dsh-hook-protocol parseHookOutput): JSON only on exit 0 and only when stdout
//   starts with "{"; `hookSpecificOutput` fields count only when its hookEventName equals the
//   firing event; top-level `decision` counts only as "approve"/"block"; exit 2 blocks with
//   stderr as the reason. hook/result `decision` is the parsed decision ("deny" for a
//   permissionDecision deny, "block" for a Stop block) or "pass".
//
// The fake bash service follows the harness's local executor (dsh-bash-local): `bash -c
// <command>` in its own process group (detached), payload on stdin, cwd = workdir, the
// ambient environment scrubbed of names matching KEY/PASSWORD/SECRET/TOKEN and of `DSH_*`,
// plus NO_COLOR=1 TERM=dumb PAGER=cat GIT_PAGER=cat; the group is killed on timeout or abort.
// Option `freshTmpdirPerSpawn` gives every hook process its own new, empty TMPDIR: the
// sandbox case of docs/contract.md §4.4 where /tmp is private to each hook process.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { dshBridgeEntry } from "../../e2e/host-bins.ts";
// Imported from where host-bins.ts says (the pinned copy, or the newest under VH_E2E_HOSTS).
// The type is read from the e2e package (test/e2e/package.json); this folder has no node_modules of its own.
const { apply: applyBridge } = (await import(
  dshBridgeEntry()
)) as typeof import("../../e2e/node_modules/@deepseek-ai/dsh-hooks-codex");
import { answerLine } from "../../e2e/fake-velesdb-memory.mjs";
import { HOOKS_BIN, shellQuote, type DoubleMode } from "../../e2e/harness.ts";

export { HOOKS_BIN, shellQuote };

// ---------------------------------------------------------------------------------------------
// hooks.json
// ---------------------------------------------------------------------------------------------

/** Our registration for the bridge (docs/contract.md §4.4), as the installer writes it: Codex format, one group per event. */
export const DSH_REGISTRATION = [
  { wireEvent: "SessionStart", argvEvent: "session-start", timeout: 10 },
  { wireEvent: "Stop", argvEvent: "stop", timeout: 10 },
  // The harness's own file tools (its shell `bash` is not an edit). Codex matchers are
  // unanchored regexes, hence the anchors.
  { wireEvent: "PreToolUse", argvEvent: "pre-tool-use", matcher: "^(edit|write|str_replace_editor)$", timeout: 10 },
  // The recall set of docs/contract.md §6.2; the harness spells MCP tools mcp__<server>__<tool> with the
  // server name as configured (velesdb-memory), the Codex CLI with `_`: accept both.
  {
    wireEvent: "PostToolUse",
    argvEvent: "post-tool-use",
    matcher: "^mcp__velesdb[-_]memory__(recall|recall_fused|recall_where|compile_context|entity|why)$",
    timeout: 10,
  },
] as const;

/** dshInstalledBinary(home) → where `install` puts the binary for that home (VELESDB_HOOKS_HOME = <home>/.velesdb-hooks). */
export function dshInstalledBinary(home: string): string {
  return path.join(home, ".velesdb-hooks", "bin", process.platform === "win32" ? "velesdb-hooks.exe" : "velesdb-hooks");
}

/**
 * writeDshHooksJson(file, home) — THE one place our hooks get registered for the bridge:
 * `velesdb-hooks install --client dsh --config <file>`, run from dist/ with a private HOME and
 * VELESDB_HOOKS_HOME under `home`. The installer copies the binary to its stable path
 * (dshInstalledBinary(home)) and writes the Codex-format hooks.json whose commands are
 * `'<that path>' dsh <event>` (POSIX single-quoted: the bridge runs them with `bash -c`).
 * Returns the installed binary's path.
 */
export function writeDshHooksJson(file: string, home: string): string {
  const run = Bun.spawnSync([HOOKS_BIN, "install", "--client", "dsh", "--config", file], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      VELESDB_HOOKS_HOME: path.join(home, ".velesdb-hooks"),
      VELESDB_HOOK_FRESHNESS: "off",
    },
    cwd: home,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
  });
  if (run.exitCode !== 0 || !fs.existsSync(file)) {
    throw new Error(
      `velesdb-hooks install --client dsh --config ${file} failed (exit ${run.exitCode}): ${run.stderr.toString().trim()}`,
    );
  }
  return dshInstalledBinary(home);
}

/** How a case registers hooks: ours, the same file with every command `true`, or none. */
export type HooksMode = "ours" | "inert" | "absent";
export const NEGATIVE_MODES: readonly HooksMode[] = ["inert", "absent"];

/**
 * writeHooksFor(mode, file, home) → "ours": writeDshHooksJson; "inert": what writeDshHooksJson
 * wrote, every command replaced by `true` (same events, matchers, timeouts: the bridge still
 * runs a hook, which answers nothing); "absent": `{"hooks":{}}`.
 */
export function writeHooksFor(mode: HooksMode, file: string, home: string): void {
  writeDshHooksJson(file, home);
  if (mode === "ours") return;
  const config = JSON.parse(fs.readFileSync(file, "utf8")) as {
    hooks: Record<string, { hooks: { command: string }[] }[]>;
  };
  if (mode === "absent") config.hooks = {};
  else
    for (const groups of Object.values(config.hooks))
      for (const g of groups) for (const h of g.hooks) h.command = "true";
  fs.writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
}

// ---------------------------------------------------------------------------------------------
// The bash service
// ---------------------------------------------------------------------------------------------

export interface BashRequest {
  command: string;
  workdir?: string;
  timeoutMs?: number;
  stdin?: string;
  signal?: AbortSignal;
  env?: Record<string, string>;
  stdoutMaxBytes?: number;
}

export interface BashSpec {
  command: string;
  workdir: string;
  timeoutMs: number;
  stdoutMaxBytes: number;
  stdin?: string;
  signal?: AbortSignal;
  env?: Record<string, string>;
}

export interface CollectedOutput {
  text: string;
  truncated: boolean;
}

export interface BashRunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  timeoutMs: number;
  stdout: CollectedOutput;
  stderr: CollectedOutput;
}

/** One process the service spawned, for the checks. */
export interface SpawnRecord {
  readonly command: string;
  readonly workdir: string;
  readonly stdin: string | undefined;
  /** TMPDIR the process got, and whether that directory was empty when it started. */
  readonly tmpdir: string | undefined;
  readonly tmpdirWasEmpty: boolean;
  result?: BashRunResult;
}

const SCRUBBED = /KEY|PASSWORD|SECRET|TOKEN/i;
const ENV_OVERRIDES = { NO_COLOR: "1", TERM: "dumb", PAGER: "cat", GIT_PAGER: "cat" } as const;
/** Upper bound on any hook run here, whatever hooks.json says: every wait is bounded. */
const MAX_RUN_MS = 15_000;
const OUTPUT_CAP = 1 << 20;

export interface FakeBashOptions {
  /** The harness process's environment (scrubbed per spawn, as the real executor does). */
  env: Record<string, string>;
  /** Default workdir when a request names none. */
  defaultWorkdir: string;
  /** Give every spawn its own new empty TMPDIR under this directory. */
  freshTmpdirUnder?: string;
}

export class FakeBash {
  readonly spawns: SpawnRecord[] = [];
  private readonly running = new Map<number, () => void>();
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly options: FakeBashOptions) {}

  get inflight(): number {
    return this.running.size;
  }

  resolve(request: BashRequest): BashSpec {
    return {
      command: request.command,
      workdir: request.workdir ?? this.options.defaultWorkdir,
      timeoutMs: Math.min(request.timeoutMs ?? MAX_RUN_MS, MAX_RUN_MS),
      stdoutMaxBytes: request.stdoutMaxBytes ?? OUTPUT_CAP,
      ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
      ...(request.signal !== undefined ? { signal: request.signal } : {}),
      ...(request.env !== undefined ? { env: request.env } : {}),
    };
  }

  private childEnv(spec: BashSpec): { env: Record<string, string>; tmpdir: string | undefined } {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.options.env)) if (!SCRUBBED.test(k) && !k.startsWith("DSH_")) env[k] = v;
    Object.assign(env, ENV_OVERRIDES, spec.env ?? {});
    if (this.options.freshTmpdirUnder !== undefined) {
      fs.mkdirSync(this.options.freshTmpdirUnder, { recursive: true });
      env.TMPDIR = fs.mkdtempSync(path.join(this.options.freshTmpdirUnder, "hook-"));
    }
    return { env, tmpdir: env.TMPDIR };
  }

  run(spec: BashSpec): Promise<BashRunResult> {
    if (spec.signal?.aborted) return Promise.reject(new Error("aborted before spawn"));
    const { env, tmpdir } = this.childEnv(spec);
    const record: SpawnRecord = {
      command: spec.command,
      workdir: spec.workdir,
      stdin: spec.stdin,
      tmpdir,
      tmpdirWasEmpty: tmpdir !== undefined && fs.existsSync(tmpdir) && fs.readdirSync(tmpdir).length === 0,
    };
    this.spawns.push(record);
    return new Promise<BashRunResult>((resolve, reject) => {
      const child = spawn("bash", ["-c", spec.command], {
        cwd: spec.workdir,
        env,
        stdio: [spec.stdin !== undefined ? "pipe" : "ignore", "pipe", "pipe"],
        detached: true,
      });
      const pid = child.pid ?? -1;
      let stdout = "";
      let stderr = "";
      let timedOut = false;
      let aborted = false;
      const killGroup = (): void => {
        if (pid <= 0) return;
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          /* already gone */
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup();
      }, spec.timeoutMs);
      const onAbort = (): void => {
        aborted = true;
        killGroup();
      };
      spec.signal?.addEventListener("abort", onAbort, { once: true });
      if (pid > 0) this.running.set(pid, killGroup);
      const finish = (): void => {
        clearTimeout(timer);
        spec.signal?.removeEventListener("abort", onAbort);
        killGroup(); // nothing a hook left behind outlives it
        this.running.delete(pid);
        if (this.running.size === 0) for (const w of this.waiters.splice(0)) w();
      };
      child.stdout!.setEncoding("utf8").on("data", (d: string) => {
        if (stdout.length < spec.stdoutMaxBytes) stdout += d;
      });
      child.stderr!.setEncoding("utf8").on("data", (d: string) => {
        if (stderr.length < OUTPUT_CAP) stderr += d;
      });
      if (child.stdin) {
        child.stdin.on("error", () => {});
        child.stdin.end(spec.stdin);
      }
      child.on("error", (error) => {
        finish();
        reject(error);
      });
      child.on("close", (code, signal) => {
        finish();
        record.result = {
          exitCode: code,
          signal,
          timedOut,
          aborted: aborted && !timedOut,
          timeoutMs: spec.timeoutMs,
          stdout: { text: stdout, truncated: false },
          stderr: { text: stderr, truncated: false },
        };
        resolve(record.result);
      });
    });
  }

  /** Resolves when no spawned process is running (bounded). */
  idle(timeoutMs = MAX_RUN_MS + 5_000): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`hook processes still running after ${timeoutMs}ms`)), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Kill every process group still running. */
  killAll(): void {
    for (const kill of this.running.values()) kill();
  }
}

// ---------------------------------------------------------------------------------------------
// The agent and the context the bridge is applied to
// ---------------------------------------------------------------------------------------------

export interface TextBlock {
  type: "text";
  text: string;
}

export interface PluginMessage {
  role: string;
  content: TextBlock[];
  source?: { kind: string; plugin?: string };
}

export interface SessionEvent {
  type: string;
  data: Record<string, unknown>;
}

export const messageText = (m: PluginMessage): string => m.content.map((b) => b.text).join("");

export class FakeAgent {
  readonly session: {
    header: { id: string; cwd: string };
    events: SessionEvent[];
    append(type: string, data: Record<string, unknown>): void;
  };
  readonly injected: PluginMessage[] = [];
  readonly steered: PluginMessage[] = [];
  private turnCounter = 0;

  constructor(id: string, cwd: string) {
    const events: SessionEvent[] = [];
    this.session = { header: { id, cwd }, events, append: (type, data) => void events.push({ type, data }) };
  }

  inject(message: PluginMessage): void {
    this.injected.push(message);
  }

  steer(message: PluginMessage): void {
    this.steered.push(message);
  }

  /** Opens the next turn (the bridge reads turn_id from the last `turn/start`). */
  startTurn(): number {
    this.turnCounter += 1;
    this.session.events.push({ type: "turn/start", data: { turn: this.turnCounter } });
    return this.turnCounter;
  }

  get turn(): number {
    return this.turnCounter;
  }

  /** The `hook/result` events of one hook point, in order. */
  hookResults(point: string): Record<string, unknown>[] {
    return this.session.events.filter((e) => e.type === "hook/result" && e.data.point === point).map((e) => e.data);
  }

  hookInvocations(point: string): Record<string, unknown>[] {
    return this.session.events.filter((e) => e.type === "hook/invoked" && e.data.point === point).map((e) => e.data);
  }
}

/** What the model sees for one tool call, as the harness's tool loop would record it. */
export interface ToolOutcome {
  readonly name: string;
  /** "denied" by tools/pre-execute, else the tool ran ("ran") and post-execute decided. */
  readonly stage: "denied" | "ran";
  readonly isError: boolean;
  /** The model-visible result text. A deny renders as `Error: <reason>` (bridge README). */
  readonly text: string;
  readonly additionalContexts: string[];
}

type Listener = (...args: any[]) => unknown;

export interface BridgeOptions {
  configPath: string;
  model?: string;
  bash: FakeBash;
  /** Directory whose session files stand in for `sessionPersistence.locate(header).path`. */
  sessionsDir?: string;
}

/** The real bridge applied to a minimal cordis-like context. */
export class DshBridge {
  readonly warnings: string[] = [];
  private readonly listeners = new Map<string, Listener[]>();
  private readonly disposers: (() => unknown)[] = [];
  private callCounter = 0;
  private readonly lifetime = new AbortController();

  constructor(private readonly options: BridgeOptions) {
    const sessionsDir = options.sessionsDir;
    const ctx = {
      bash: options.bash,
      logger: {
        warn: (m: string) => void this.warnings.push(String(m)),
        info: () => {},
        debug: () => {},
        error: (m: string) => void this.warnings.push(String(m)),
      },
      on: (name: string, listener: Listener) => {
        const list = this.listeners.get(name) ?? [];
        list.push(listener);
        this.listeners.set(name, list);
        return () => list.splice(list.indexOf(listener), 1);
      },
      effect: (execute: () => unknown, _label?: string) => {
        const dispose = execute();
        if (typeof dispose === "function") this.disposers.push(dispose as () => unknown);
        return () => (typeof dispose === "function" ? dispose() : undefined);
      },
      get: (name: string) =>
        name === "sessionPersistence" && sessionsDir !== undefined
          ? { locate: (header: { id: string }) => ({ path: path.join(sessionsDir, header.id, "session.jsonl.zstd") }) }
          : undefined,
    };
    applyBridge(ctx as unknown as Parameters<typeof applyBridge>[0], {
      configPath: options.configPath,
      model: options.model ?? "deepseek-v4-pro",
    });
  }

  /** Event names the bridge registered a listener for. */
  get registered(): string[] {
    return [...this.listeners.keys()];
  }

  private list(name: string): Listener[] {
    return this.listeners.get(name) ?? [];
  }

  /** Waterfall: listeners in registration order, each with `next` to the rest, then `last`. */
  private waterfall<T>(name: string, args: unknown[], last: () => Promise<T>): Promise<T> {
    const chain = this.list(name);
    const step = (i: number): Promise<T> =>
      i >= chain.length ? last() : Promise.resolve(chain[i]!(...args, () => step(i + 1)) as T);
    return step(0);
  }

  /**
   * agent/session-start: emitted, not awaited (the bridge runs SessionStart detached). Waits,
   * bounded, until the hook processes it started have exited and their continuations ran.
   */
  async sessionStart(agent: FakeAgent, source = "startup"): Promise<void> {
    for (const listener of this.list("agent/session-start")) listener({ agent, source });
    await this.settle();
  }

  /** agent/pre-step (UserPromptSubmit) for a user prompt; returns the waterfall's decision. */
  preStep(agent: FakeAgent, prompt: string): Promise<unknown> {
    const messages = [{ role: "user", content: [{ type: "text", text: prompt }], source: { kind: "user" } }];
    return this.waterfall(
      "agent/pre-step",
      [{ agent, messages, turn: agent.turn, signal: this.lifetime.signal }],
      async () => ({
        kind: "enter",
        messages,
      }),
    );
  }

  /**
   * One tool call through the tool loop: tools/pre-execute; on deny the tool does not run and
   * the model gets an error result with the reason; else `execute` runs and tools/post-execute
   * decides (accept keeps the result, block replaces it with the feedback as an error).
   */
  async toolCall(
    agent: FakeAgent,
    name: string,
    args: Record<string, unknown>,
    execute: () => { content: TextBlock[]; isError?: boolean },
  ): Promise<ToolOutcome> {
    const exec = {
      callId: `call_${++this.callCounter}`,
      name,
      arguments: Object.freeze({ ...args }),
      agent,
      signal: this.lifetime.signal,
    };
    const pre = (await this.waterfall("tools/pre-execute", [exec], async () => ({ kind: "allow" }))) as {
      kind: string;
      reason?: string;
    };
    if (pre.kind === "deny" || pre.kind === "ask") {
      return { name, stage: "denied", isError: true, text: `Error: ${pre.reason ?? "denied"}`, additionalContexts: [] };
    }
    const raw = execute();
    const result = { content: raw.content, isError: raw.isError ?? false };
    const post = (await this.waterfall("tools/post-execute", [exec, result], async () => ({ kind: "accept" }))) as {
      kind: string;
      content?: TextBlock[];
      feedback?: TextBlock[];
      additionalContexts?: PluginMessage[];
    };
    const contexts = (post.additionalContexts ?? []).map(messageText);
    if (post.kind === "block") {
      return {
        name,
        stage: "ran",
        isError: true,
        text: (post.feedback ?? []).map((b) => b.text).join(""),
        additionalContexts: contexts,
      };
    }
    return {
      name,
      stage: "ran",
      isError: result.isError,
      text: (post.content ?? result.content).map((b) => b.text).join(""),
      additionalContexts: contexts,
    };
  }

  /** agent/turn-stopping: serial listeners, awaited. */
  async turnStopping(agent: FakeAgent): Promise<void> {
    for (const listener of this.list("agent/turn-stopping"))
      await listener({ agent, turn: agent.turn, signal: this.lifetime.signal });
  }

  /** Bounded wait until no hook process runs and pending continuations had a chance to run. */
  async settle(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.options.bash.idle(Math.max(1, deadline - Date.now()));
      const spawned = this.options.bash.spawns.length;
      await Bun.sleep(10);
      if (this.options.bash.inflight === 0 && this.options.bash.spawns.length === spawned) return;
      if (Date.now() > deadline) throw new Error(`bridge did not settle within ${timeoutMs}ms`);
    }
  }

  /** Disposes the bridge (drains detached runs) and kills whatever still runs. */
  async dispose(): Promise<void> {
    this.lifetime.abort(new Error("test over"));
    await Promise.race([Promise.allSettled(this.disposers.map((d) => d())), Bun.sleep(5_000)]);
    this.options.bash.killAll();
  }
}

// ---------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------

/**
 * doubleToolResult("structured") → what the velesdb-memory double answers a recall_fused, as the
 * tool result this fake harness hands the bridge. The DeepSeek harness's own MCP client is not
 * published (only its hook bridge is), so a result passes as its content blocks and isError,
 * and a JSON-RPC error as the MCP SDKs word it: `MCP error <code>: <message>`, isError.
 */
export function doubleToolResult(
  mode: DoubleMode,
  args: Record<string, unknown> = { query: "parser" },
): { content: TextBlock[]; isError: boolean } {
  const message = JSON.parse(
    answerLine(mode, { id: 1, method: "tools/call", params: { name: "recall_fused", arguments: args } })!,
  );
  if (message.error)
    return {
      content: [{ type: "text", text: `MCP error ${message.error.code}: ${message.error.message}` }],
      isError: true,
    };
  return { content: message.result.content, isError: message.result.isError === true };
}

export const DSH_PROJECT = { project: "dsh-e2e", session: "dsh-slot" } as const;

export interface DshCaseOptions {
  mode: HooksMode;
  /** Written as <workspace>/.velesdb-hooks.json (default DSH_PROJECT); null writes none. */
  projectConfig?: Record<string, unknown> | null;
  freshTmpdirPerSpawn?: boolean;
  /**
   * Runs after the case directories and .velesdb-hooks.json exist, before the bridge is applied;
   * returns extra variables of the harness process (hooks inherit them).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a case that sets no variable is a block with no return, which a `| undefined` return type refuses
  prepare?: (dirs: { root: string; home: string; workspace: string }) => Record<string, string> | void;
}

export interface DshCase {
  readonly name: string;
  readonly mode: HooksMode;
  readonly root: string;
  readonly home: string;
  readonly tmp: string;
  readonly workspace: string;
  readonly hooksJson: string;
  /** The binary the installer placed for this case's home, which hooks.json names. */
  readonly hooksBin: string;
  readonly bash: FakeBash;
  readonly bridge: DshBridge;
  readonly agents: FakeAgent[];
  newAgent(id?: string): FakeAgent;
}

const live: DshCase[] = [];

/** createDshCase(name, options) → private dirs, hooks.json for the mode, the bridge applied. */
export function createDshCase(name: string, options: DshCaseOptions): DshCase {
  const slug = `${name}-${options.mode}`.replace(/[^A-Za-z0-9_-]/g, "_");
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `vh-e2e-dsh-${slug}-`)));
  const home = path.join(root, "home");
  const tmp = path.join(root, "tmp");
  const workspace = path.join(root, "ws");
  for (const d of [home, tmp, workspace]) fs.mkdirSync(d, { recursive: true, mode: 0o700 });
  const config = options.projectConfig === undefined ? DSH_PROJECT : options.projectConfig;
  if (config) fs.writeFileSync(path.join(workspace, ".velesdb-hooks.json"), `${JSON.stringify(config)}\n`);
  const hooksJson = path.join(home, ".dsh", "velesdb-hooks.json");
  writeHooksFor(options.mode, hooksJson, home);
  const extraEnv = options.prepare?.({ root, home, workspace }) ?? {};
  // The harness process's environment: the test's own, made hermetic (private HOME/TMPDIR, no
  // ambient velesdb settings, no freshness lookup: this suite needs no network at all).
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("VELESDB_")) env[k] = v;
  Object.assign(env, { HOME: home, TMPDIR: tmp, VELESDB_HOOK_FRESHNESS: "off" }, extraEnv);
  const bash = new FakeBash({
    env,
    defaultWorkdir: workspace,
    ...(options.freshTmpdirPerSpawn ? { freshTmpdirUnder: path.join(root, "hook-tmp") } : {}),
  });
  const bridge = new DshBridge({ configPath: hooksJson, bash, sessionsDir: path.join(home, ".dsh", "sessions") });
  const agents: FakeAgent[] = [];
  const c: DshCase = {
    name,
    mode: options.mode,
    root,
    home,
    tmp,
    workspace,
    hooksJson,
    hooksBin: dshInstalledBinary(home),
    bash,
    bridge,
    agents,
    newAgent(id = `drive-${process.pid}-${agents.length + 1}`) {
      const agent = new FakeAgent(id, workspace);
      agents.push(agent);
      return agent;
    },
  };
  live.push(c);
  return c;
}

/** Disposes every case's bridge, kills leftovers, lifts chattr +i, removes the directories. */
export async function cleanupDshCases(): Promise<void> {
  for (const c of live.splice(0)) {
    await c.bridge.dispose();
    if (process.getuid?.() === 0) Bun.spawnSync(["chattr", "-R", "-i", c.root], { stdout: "ignore", stderr: "ignore" });
    if (!process.env.VH_E2E_KEEP) fs.rmSync(c.root, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Checks: each returns its problems, so the negative control can assert that it FAILS.
// ---------------------------------------------------------------------------------------------

export interface DshCheck<T> {
  readonly name: string;
  problems(run: T): string[];
}

export function dshCheck<T>(name: string, problems: (run: T) => string[]): DshCheck<T> {
  return { name, problems };
}

function describeCase(c: DshCase): string {
  const lines = [
    `case ${c.name} (${c.mode}) in ${c.root}; bridge listeners: ${c.bridge.registered.join(", ") || "none"}`,
  ];
  if (c.bridge.warnings.length) lines.push(`bridge warnings: ${c.bridge.warnings.join(" | ")}`);
  lines.push(`${c.bash.spawns.length} hook process(es):`);
  for (const s of c.bash.spawns.slice(-12)) {
    lines.push(
      `  ${s.command} → exit ${s.result?.exitCode} stdout ${JSON.stringify(s.result?.stdout.text.slice(0, 160))} stderr ${JSON.stringify(s.result?.stderr.text.slice(0, 160))}`,
    );
  }
  for (const a of c.agents)
    lines.push(`agent ${a.session.header.id}: ${a.injected.length} inject(s), ${a.steered.length} steer(s)`);
  return lines.join("\n");
}

/** expectDsh(check, run, case).toPass() / .toFail() with the case described on failure. */
export function expectDsh<T>(c: DshCheck<T>, run: T, dshCase: DshCase) {
  return {
    toPass(): void {
      const problems = c.problems(run);
      if (problems.length > 0)
        throw new Error(`check "${c.name}" failed:\n- ${problems.join("\n- ")}\n${describeCase(dshCase)}`);
    },
    toFail(): void {
      const problems = c.problems(run);
      if (process.env.VH_E2E_VERBOSE)
        console.log(`negative control ${dshCase.name} (${dshCase.mode}) fails as it must:\n- ${problems.join("\n- ")}`);
      if (problems.length === 0) {
        throw new Error(
          `negative control: check "${c.name}" passed with hooks ${dshCase.mode}, so it proves nothing\n${describeCase(dshCase)}`,
        );
      }
    },
  };
}
