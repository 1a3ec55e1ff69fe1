// check and doctor start the velesdb-memory server each client is configured with, the way
// that client starts it, and ask it what a session would (docs/doctor.md). docs/shared-memory.md says why
// reading the configuration is not enough: velesdb-memory 0.17.0 is single-writer, so the
// second session's server exits at start ("another velesdb-memory process holds …"), and a
// repository's velesdb-memory.toml or an invalid VELESDB_MEMORY_SEARCH_QUALITY stops it the
// same way — while check said everything was in step and the guard refused every edit.
//
// The probe is generic over the entry: a stdio entry is its own command, args, env and working
// directory (whatever program that is: velesdb-memory itself or a front that reaches it); an
// HTTP entry is its URL. stdio: `initialize`, `tools/list`, `memory_status`, then the process
// group is killed — within PROBE_TIMEOUT_MS, so a hung server costs a few seconds and leaves
// nothing behind. What a failed start printed is reduced to one cause line (causeFrom below);
// nothing read from the entry's env or headers is ever printed (the values are masked out of
// the server's own words too).
import * as fs from "node:fs";
import * as path from "node:path";
import { resolveCompiler } from "../../core/compiler.ts";
import { isJsonObject, type JsonObject } from "../entries/entries.ts";
import { printable, quoted } from "../paths.ts";
import {
  INITIALIZE,
  INITIALIZED,
  MEMORY_STATUS,
  resultFrom,
  TOOLS_LIST,
  type ProbeResult,
  type ServerSpec,
} from "./server-conversation.ts";
import { probeHttpServer } from "./server-probe-http.ts";
import { storeLockHolder } from "./store-lock.ts";

/** A few seconds: velesdb-memory 0.17.0 sits out a held lock for 3 × 500 ms before it gives up. */
export const PROBE_TIMEOUT_MS = 5000;
const MAX_STDERR_BYTES = 64 * 1024;
const MAX_STDOUT_BYTES = 4 * 1024 * 1024;
/** The rebuild line velesdb-memory 0.17.0 itself suggests (src/daemon_serve.rs:160-164). */
export const HTTP_REBUILD_COMMAND = "cargo install velesdb-memory --features http";

/**
 * serverSpec(entry, cwd, env) → what starting this entry means, or undefined when it names
 * neither a command nor a URL (describeServer already says so). `cwd` is where the client
 * starts a server without its own `cwd` key.
 */
export function serverSpec(entry: unknown, cwd: string): ServerSpec | undefined {
  if (!isJsonObject(entry)) return undefined;
  const url = [entry.url, entry.httpUrl, entry.serverUrl].find((u) => typeof u === "string") as string | undefined;
  if (url !== undefined)
    return { kind: "http", url, headers: { ...strings(entry.headers), ...strings(entry.http_headers) } };
  // OpenCode's `command` is the argv array; every other client has a string and `args`.
  const argv = Array.isArray(entry.command)
    ? entry.command
    : [entry.command, ...(Array.isArray(entry.args) ? entry.args : [])];
  if (typeof argv[0] !== "string" || argv[0] === "" || !argv.every((a) => typeof a === "string")) return undefined;
  const own = typeof entry.cwd === "string" && path.isAbsolute(entry.cwd) ? entry.cwd : cwd;
  return {
    kind: "stdio",
    command: argv[0],
    args: argv.slice(1) as string[],
    env: { ...strings(entry.env), ...strings(entry.environment) },
    cwd: own,
  };
}

const strings = (value: unknown): Record<string, string> =>
  isJsonObject(value)
    ? Object.fromEntries(Object.entries(value).filter((pair): pair is [string, string] => typeof pair[1] === "string"))
    : {};

/** specKey(spec) → one key per distinct server: two clients running the same thing get one probe. */
export const specKey = (spec: ServerSpec): string =>
  spec.kind === "http"
    ? JSON.stringify([spec.kind, spec.url, spec.headers])
    : JSON.stringify([spec.kind, spec.command, spec.args, Object.entries(spec.env).sort(), spec.cwd]);

/** probeServer(spec, env) → what the server said, or the one-line cause. Never throws, never outlives its bound. */
export function probeServer(
  spec: ServerSpec,
  env: NodeJS.ProcessEnv,
  timeoutMs: number = probeTimeout(env),
): Promise<ProbeResult> {
  const secrets = secretValues(spec, env);
  const probe = spec.kind === "http" ? probeHttpServer(spec, timeoutMs) : probeStdioServer(spec, env, timeoutMs);
  return probe.then(
    (result) => (result.ok ? result : { ok: false, cause: masked(result.cause, secrets) }),
    () => ({ ok: false, cause: "the probe failed inside velesdb-hooks" }),
  );
}

/** VELESDB_HOOKS_PROBE_TIMEOUT_MS (tests, slow machines), else PROBE_TIMEOUT_MS. */
function probeTimeout(env: NodeJS.ProcessEnv): number {
  const ms = Number(env.VELESDB_HOOKS_PROBE_TIMEOUT_MS ?? "");
  return Number.isFinite(ms) && ms >= 100 && ms <= 60_000 ? ms : PROBE_TIMEOUT_MS;
}

// ---------------------------------------------------------------------------------------------
// stdio
// ---------------------------------------------------------------------------------------------

/**
 * programPath("velesdb-memory", env) → the absolute program the probe runs: an absolute command
 * as it is, a bare name from PATH's absolute directories only. The spawn itself would look a
 * bare name up in a relative PATH entry ("." or an empty one) from the probe's working
 * directory, the repository being checked, and run the repository's program of that name
 * (docs/hardening.md §4.1); a relative command would run one of its files directly, so it is
 * never started (mcp-check.ts says so before the probe).
 */
export function programPath(
  command: string,
  env: NodeJS.ProcessEnv,
): { ok: true; path: string } | { ok: false; problem: string } {
  if (path.isAbsolute(command)) return { ok: true, path: command };
  if (isRelativeCommand(command))
    return { ok: false, problem: `its command ${quoted(command)} is relative, so it is not started` };
  const found = resolveCompiler({ PATH: env.PATH, PATHEXT: env.PATHEXT, VELESDB_MEMORY_BIN: command });
  return found.ok
    ? found
    : { ok: false, problem: `${quoted(command)} is not on PATH (its absolute directories are searched)` };
}

/** isRelativeCommand("./bin/x") → true: a path with a directory part that is not absolute. */
export const isRelativeCommand = (command: string): boolean =>
  !path.isAbsolute(command) && (command.includes("/") || command.includes("\\"));

type ServerChild = ReturnType<typeof Bun.spawn<"pipe", "pipe", "pipe">>;

async function probeStdioServer(
  spec: Extract<ServerSpec, { kind: "stdio" }>,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<ProbeResult> {
  if (!isDirectory(spec.cwd)) return { ok: false, cause: `its working directory ${quoted(spec.cwd)} does not exist` };
  // A front that starts a broker of its own (`velesdb-hooks mcp`, notes in docs/doctor.md) lets
  // it idle this long once its last client is gone: none, for a probe, so nothing outlives it.
  const childEnv = { ...env, ...spec.env, VELESDB_HOOKS_MCP_IDLE_MS: "0" } as Record<string, string>;
  const program = programPath(spec.command, childEnv);
  if (!program.ok) return { ok: false, cause: program.problem };
  let child: ServerChild;
  try {
    child = Bun.spawn([program.path, ...spec.args], {
      cwd: spec.cwd,
      env: childEnv,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return {
      ok: false,
      cause: `${quoted(spec.command)} could not be started${typeof code === "string" ? ` (${code})` : ""}`,
    };
  }
  const { answers, outcome, stderr } = await converse(child, timeoutMs);
  // memory_status unanswered (an older server): the result has no embedder.
  if (answers.has(1) && (answers.has(2) || isJsonObject(answers.get(1)!.error))) return resultFrom(answers);
  const said = causeFrom(stderr, spec, childEnv, storePath(childEnv));
  if (outcome === "limit")
    return {
      ok: false,
      cause: `did not answer ${answers.has(1) ? "tools/list" : "initialize"} within ${(timeoutMs / 1000).toFixed(1)} s (stopped)${said ? `; it printed: ${said}` : ""}`,
    };
  return {
    ok: false,
    cause: said ?? `exited with code ${child.exitCode ?? "?"} before answering initialize, printing nothing`,
  };
}

/**
 * converse(child, timeoutMs) → the server's answers by request id, how the conversation ended
 * (all three answered, the server exited, or the bound), and the start of what it printed on
 * stderr. The server is killed, with its process group, before this returns.
 */
async function converse(
  child: ServerChild,
  timeoutMs: number,
): Promise<{ answers: Map<number, JsonObject>; outcome: "answered" | "exited" | "limit"; stderr: string }> {
  const answers = new Map<number, JsonObject>();
  let answered: () => void = () => {};
  const complete = new Promise<"answered">((resolve) => {
    answered = () => resolve("answered");
  });
  let stderr = "";
  const stderrDone = drain(child.stderr, (text) => {
    if (stderr.length < MAX_STDERR_BYTES) stderr += text;
  });
  const send = (message: unknown): void => {
    try {
      child.stdin.write(`${JSON.stringify(message)}\n`);
      child.stdin.flush();
    } catch {
      // The server is gone; its exit is what the probe reports.
    }
  };
  // Answers come one JSON object a line (rmcp's stdio transport); each one asks the next question.
  let pending = "";
  let read = 0;
  const conversation = drain(child.stdout, (text) => {
    read += text.length;
    if (read > MAX_STDOUT_BYTES) return; // a server that floods its stdout is answered by the bound
    pending += text;
    for (let cut = pending.indexOf("\n"); cut >= 0; cut = pending.indexOf("\n")) {
      const line = pending.slice(0, cut).trim();
      pending = pending.slice(cut + 1);
      const message = parseMessage(line);
      if (message === undefined || typeof message.id !== "number" || answers.has(message.id)) continue;
      answers.set(message.id, message);
      if (isJsonObject(message.error) || message.id === 3) answered();
      else if (message.id === 1) {
        send(INITIALIZED);
        send(TOOLS_LIST);
      } else if (message.id === 2) send(MEMORY_STATUS);
    }
  });
  send(INITIALIZE);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<"limit">((resolve) => {
    timer = setTimeout(() => resolve("limit"), timeoutMs);
  });
  const outcome = await Promise.race([complete, child.exited.then(() => "exited" as const), limit]);
  clearTimeout(timer);
  if (outcome === "exited") {
    // Its last words may still be in the pipe: a short wait, never the whole bound.
    await Promise.race([Promise.all([stderrDone, conversation]), sleep(300)]);
  }
  killGroup(child.pid);
  // Where there are no process groups (Windows), the server itself at least.
  child.kill("SIGKILL");
  try {
    child.stdin.end();
  } catch {
    // Already closed.
  }
  return { answers, outcome, stderr };
}

/**
 * causeFrom(stderr, …) → the one line that says why the server did not start, from what
 * velesdb-memory 0.17.0 prints: the lock message (src/daemon_startup.rs:127-131), the
 * no-http refusal (src/daemon_serve.rs:160-164), or `Error: <Display>` (src/main.rs:68); else
 * its last line. undefined when it printed nothing.
 */
export function causeFrom(
  stderr: string,
  spec: Extract<ServerSpec, { kind: "stdio" }>,
  env: NodeJS.ProcessEnv,
  storeDir: string,
): string | undefined {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  if (lines.length === 0) return undefined;
  const locked = lines
    .map((line) => /another velesdb-memory process holds (.+?) — /.exec(line))
    .find((m) => m !== null);
  if (locked) {
    const dir = locked[1]!;
    const holder = storeLockHolder(dir);
    const who = holder
      ? `pid ${holder.pid}${holder.commandLine ? ` (${holder.commandLine})` : ""}`
      : "another process (not identified on this system)";
    return `the store ${quoted(dir)} is locked by ${who}: velesdb-memory allows one process per store, so this session's server cannot start while that one runs`;
  }
  const noHttp = lines.find((line) => line.includes("requires a binary built with"));
  if (noHttp) return `${oneLine(noHttp)}; rebuild it with ${HTTP_REBUILD_COMMAND}`;
  const at = lines.findIndex((line) => line.startsWith("Error:"));
  // A config file's parse error spans lines: the file's own text behind `|` (never shown: it
  // may hold a token), then what was refused ("unknown field `x`, expected one of …").
  const detail =
    at < 0
      ? undefined
      : lines
          .slice(at + 1)
          .filter((line) => !/^(\d+\s*)?\|/.test(line) && !/^\^/.test(line))
          .pop();
  const chosen = oneLine(at < 0 ? lines[lines.length - 1]! : detail ? `${lines[at]}: ${detail}` : lines[at]!);
  const config = configFileInUse(env, storeDir, spec.cwd);
  // The server names a working-directory config file relatively; say which directory it was.
  if (config && !chosen.includes(config)) return `${chosen} (config file in use: ${quoted(config)})`;
  return chosen;
}

/**
 * configFileInUse(env, store, cwd) → the velesdb-memory.toml the server reads, in its order
 * (velesdb-memory 0.17.0 src/config.rs:223-248): $VELESDB_MEMORY_CONFIG, the store's, then the
 * working directory's. A repository's own file steers a server started inside it.
 */
export function configFileInUse(env: NodeJS.ProcessEnv, storeDir: string, cwd: string): string | undefined {
  const fromEnv = env.VELESDB_MEMORY_CONFIG;
  if (fromEnv !== undefined && fromEnv.trim() !== "") return path.resolve(cwd, fromEnv);
  for (const candidate of [path.join(storeDir, "velesdb-memory.toml"), path.join(cwd, "velesdb-memory.toml")]) {
    if (isFile(candidate)) return candidate;
  }
  return undefined;
}

/** storePath(env) → the store as velesdb-memory 0.17.0 resolves it (src/daemon_startup.rs:349-360). */
export function storePath(env: NodeJS.ProcessEnv): string {
  if (env.VELESDB_MEMORY_PATH) return env.VELESDB_MEMORY_PATH;
  const home = env.HOME || env.USERPROFILE;
  return home ? path.join(home, ".velesdb-memory") : "./velesdb-memory-store";
}

/** A server's line, shown: printable, one line, bounded, URL credentials dropped. */
function oneLine(text: string): string {
  const cut = text.length > 300 ? `${text.slice(0, 300)}…` : text;
  return printable(cut.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, "$1"));
}

/** velesdb-memory's variables that hold a path it names itself in its messages (the store in the lock line): shown. */
const PATH_VARIABLES: ReadonlySet<string> = new Set([
  "VELESDB_MEMORY_PATH",
  "VELESDB_MEMORY_CONFIG",
  "VELESDB_MEMORY_TLS_DIR",
]);

/**
 * The values the probe must never print (but the paths of PATH_VARIABLES): the entry's env and header values, and the caller's
 * own environment values whose names say they are secrets. A server that echoes one in its
 * error line gets it masked.
 */
function secretValues(spec: ServerSpec, env: NodeJS.ProcessEnv): string[] {
  const own =
    spec.kind === "http"
      ? Object.values(spec.headers)
      : Object.entries(spec.env)
          .filter(([key]) => !PATH_VARIABLES.has(key))
          .map(([, value]) => value);
  const named = Object.entries(env)
    .filter(([key, value]) => /TOKEN|SECRET|PASSWORD|KEY|CREDENTIAL/i.test(key) && typeof value === "string")
    .map(([, value]) => value!);
  return [...own, ...named].filter((value) => value.length >= 3).sort((a, b) => b.length - a.length);
}

/** masked(text, secrets) → text with each secret (as it is, or JSON-escaped) replaced. */
function masked(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    for (const form of new Set([secret, JSON.stringify(secret).slice(1, -1)])) {
      const escaped = form.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      // A short value ("fast", "1") is masked only where it stands alone, or the server's own list of valid values would go too.
      const pattern = form.length >= 8 ? escaped : `(?<![\\w-])${escaped}(?![\\w-])`;
      out = out.replace(new RegExp(pattern, "g"), "(a configured value, not shown)");
    }
  }
  return out;
}

function parseMessage(line: string): JsonObject | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

async function drain(stream: ReadableStream<Uint8Array>, onText: (text: string) => void): Promise<void> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      onText(decoder.decode(chunk.value, { stream: true }));
    }
  } catch {
    // The group was killed under us.
  }
}

/** killGroup(pid): SIGKILL to the probe's process group (it was started detached, so it leads one). */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // ESRCH: nothing is left in the group.
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
