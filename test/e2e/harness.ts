// End-to-end harness: drives the REAL hosts (pinned in test/e2e/package.json) offline against the mock
// model APIs of mock-llm.ts, with our compiled binary registered as their hooks.
//
// Per case: a private directory with HOME, TMPDIR, CODEX_HOME and a workspace (holding
// `.velesdb-hooks.json`), a scenario name (= the mock's URL prefix), and bounded runs
// (the whole process group is killed by pid on timeout).
//
// How each host delivers our answers into the NEXT model request (measured on claude 2.1.328
// and codex-cli 0.169.0 with these tests; the checks in checks.ts rely on them):
// - Claude SessionStart additionalContext: a user-role message whose text is wrapped in
//   <system-reminder> … "SessionStart hook additional context: <our text>" (see FINDINGS in
//   README.md for the exact spelling).
// - Claude Stop hookSpecificOutput.additionalContext: the host takes one more model turn; the
//   continuation request carries our text as a user-role message "Stop hook feedback: …".
// - Claude PreCompact stdout: appended to the summariser request's last user message under
//   "Additional Instructions:".
// - Codex SessionStart additionalContext: a role:"developer" message item in `input[]`.
// - Codex Stop decision:block: a new user message item "<hook_prompt …>REASON</hook_prompt>".
// - Codex SessionStart(source:"compact") after auto-compaction: a developer item in the first
//   request after the compaction request.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll } from "bun:test";
import { storeLockHolder } from "../../src/install/server/store-lock.ts";
import { testRunDir } from "../support/test-run.ts";
import { HOST_BINS } from "./host-bins.ts";
import { startMockLlm, type LoggedRequest, type MockLlm, type Scenario } from "./mock-llm.ts";
import type { ChatRequest, MockOpenAiChat } from "./mock-openai-chat.ts";

export const E2E_DIR = import.meta.dir;
export const ROOT = path.resolve(E2E_DIR, "..", "..");
export const HOOKS_BIN = path.join(ROOT, "dist", process.platform === "win32" ? "velesdb-hooks.exe" : "velesdb-hooks");
// The real hosts: the e2e package's own dependencies (test/e2e/package.json) unless VH_E2E_HOSTS says otherwise.
export const CLAUDE_BIN = HOST_BINS.claude;
export const CODEX_BIN = HOST_BINS.codex;
export const FAKE_MCP = path.join(E2E_DIR, "fake-velesdb-memory.mjs");

/**
 * NODE_CACHE_ENV → Node's on-disk code cache for the node-based hosts (Gemini, Qwen, Copilot and
 * the MCP double), shared by every run of one `npm test` (scripts/test.ts makes the directory).
 * Node compiles a CLI's multi-megabyte bundle on every start; with the cache it reads the
 * compiled code instead, about half of Gemini's start-up CPU (measured 2.8 → 1.4 s with its
 * relaunch). A cache only: what a host does is the same with or without it.
 */
const RUN_DIR = testRunDir();
export const NODE_CACHE_ENV: Record<string, string> = RUN_DIR
  ? { NODE_COMPILE_CACHE: path.join(RUN_DIR, "node-compile-cache") }
  : {};

export type Host = "claude" | "codex";
export type HookEventArg = "session-start" | "stop" | "pre-compact" | "pre-tool-use" | "post-tool-use";

/** The events each host gets from our installer (docs/contract.md §4). */
export const WIRED_EVENTS: Record<Host, HookEventArg[]> = {
  claude: ["session-start", "stop", "pre-compact", "pre-tool-use", "post-tool-use"],
  codex: ["session-start", "stop", "pre-tool-use", "post-tool-use"],
};

const WIRE_NAME: Record<HookEventArg, string> = {
  "session-start": "SessionStart",
  stop: "Stop",
  "pre-compact": "PreCompact",
  "pre-tool-use": "PreToolUse",
  "post-tool-use": "PostToolUse",
};

let caseCounter = 0;

export interface CodexOptions {
  /** `model_auto_compact_token_limit` in config.toml (auto-compaction scenarios). */
  autoCompactTokenLimit?: number;
}

/** What the velesdb-memory double answers (fake-velesdb-memory.mjs documents each mode). */
export type DoubleMode = "structured" | "empty" | "rpc-error" | "is-error" | "text-only" | "non-json";
export const DOUBLE_MODES: readonly DoubleMode[] = [
  "structured",
  "empty",
  "rpc-error",
  "is-error",
  "text-only",
  "non-json",
];

export interface McpOptions {
  /** How the double answers the recall tools; default "structured", as velesdb-memory 0.17.0 does. */
  mode?: DoubleMode;
}

/** doubleArgs(log, mode) → the argv after `node` that starts the velesdb-memory double. */
export function doubleArgs(log: string, mode: DoubleMode = "structured"): string[] {
  return [FAKE_MCP, "--mode", mode, "--log", log];
}

export interface E2ECase {
  readonly name: string;
  /** The mock's URL prefix for this case (unique per case). */
  readonly scenario: string;
  readonly root: string;
  readonly home: string;
  readonly tmp: string;
  readonly codexHome: string;
  readonly workspace: string;
  readonly mock: MockLlm;
  /** Where the fake MCP server logs the JSON-RPC messages it received. */
  readonly mcpLog: string;
  /** The MCP server config, when the case declared one. */
  mcp?: McpOptions;
  codex: CodexOptions;
  /** Lines appended to config.toml after the base config (trust state). */
  codexConfigTail: string[];
  /** Which host had hooks registered (and which events), for reports. */
  registered: Partial<Record<Host, HookEventArg[]>>;
  /** How Codex trusts our hooks in this case (set by registerHooks). */
  codexTrustMode?: CodexTrustMode;
}

export interface CaseOptions {
  /** Written as <workspace>/.velesdb-hooks.json; null writes none. */
  projectConfig?: Record<string, unknown> | null;
  codex?: CodexOptions;
  mcp?: McpOptions;
}

export const E2E_PROJECT = { project: "e2e-proj", session: "e2e-slot" } as const;
/** E2E_PROJECT opted in to the recall-before-edit guard. */
export const E2E_OPT_IN = { ...E2E_PROJECT, enforce_learning_loop: true } as const;
/** How the load and save calls of E2E_PROJECT open in our texts: the session's own slot follows (src/core/identity.ts sessionSlot). */
export const E2E_LOAD_CALL = `load_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}/`;
export const E2E_SAVE_CALL = `save_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}/`;

/** writeFileMaking(file, text): writes the file, making its directories first. */
export function writeFileMaking(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/**
 * chatRequests(llm, chat, c) → what a chat-completions host asked in case `c`: `requests`, the
 * chat mock's for this case, and `allRequests`, every request of the case to either mock (our
 * freshness probe asks the other mock's /mcp), saved as requests.json under VH_E2E_KEEP.
 */
export function chatRequests(
  llm: MockLlm,
  chat: MockOpenAiChat,
  c: E2ECase,
): { requests: ChatRequest[]; allRequests: LoggedRequest[] } {
  const requests = chat.requests(c.scenario);
  const allRequests: LoggedRequest[] = [
    ...llm.requests(c.scenario),
    ...chat.all().filter((q) => q.scenario === c.scenario),
  ];
  if (process.env.VH_E2E_KEEP)
    fs.writeFileSync(path.join(c.root, "requests.json"), JSON.stringify(allRequests, null, 2));
  return { requests, allRequests };
}

/** createCase(mock, name) → a fresh private case directory; scenario name is unique. */
export function createCase(mock: MockLlm, name: string, options: CaseOptions = {}): E2ECase {
  fs.chmodSync(FAKE_MCP, 0o755); // it doubles as VELESDB_MEMORY_BIN (compile-stdin), run directly
  const scenario = `${name.replace(/[^A-Za-z0-9_-]/g, "_")}-${process.pid}-${++caseCounter}`;
  const root = fs.realpathSync(
    fs.mkdtempSync(path.join(os.tmpdir(), `vh-e2e-${name.replace(/[^A-Za-z0-9_-]/g, "_")}-`)),
  );
  const dirs = {
    home: path.join(root, "home"),
    tmp: path.join(root, "tmp"),
    codexHome: path.join(root, "codex-home"),
    workspace: path.join(root, "ws"),
  };
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true, mode: 0o700 });
  const config = options.projectConfig === undefined ? E2E_PROJECT : options.projectConfig;
  if (config) fs.writeFileSync(path.join(dirs.workspace, ".velesdb-hooks.json"), `${JSON.stringify(config)}\n`);
  const c: E2ECase = {
    name,
    scenario,
    root,
    ...dirs,
    mock,
    mcpLog: path.join(root, "mcp.log"),
    mcp: options.mcp,
    codex: options.codex ?? {},
    codexConfigTail: [],
    registered: {},
  };
  writeCodexConfig(c);
  return c;
}

export function removeCase(c: E2ECase): void {
  if (process.env.VH_E2E_KEEP) return;
  fs.rmSync(c.root, { recursive: true, force: true });
}

/** mcpArgs(c) → the argv after `node` that starts the case's velesdb-memory double, in the mode the case was made with. */
export const mcpArgs = (c: E2ECase): string[] => doubleArgs(c.mcpLog, c.mcp?.mode);

const tomlString = (s: string): string => JSON.stringify(s); // TOML basic strings accept JSON escapes

/** (Re)writes $CODEX_HOME/config.toml: the mock provider, plus trust state from registerHooks. */
export function writeCodexConfig(c: E2ECase): void {
  const lines = [
    `model = "gpt-5.5"`, // a bundled model slug: it exposes apply_patch
    `model_provider = "mock"`,
    ...(c.codex.autoCompactTokenLimit !== undefined
      ? [`model_auto_compact_token_limit = ${c.codex.autoCompactTokenLimit}`]
      : []),
    "",
    "[features]",
    "plugins = false", // otherwise it tries to reach a git remote
    "",
    "[analytics]",
    "enabled = false", // otherwise it looks up a remote host and stalls at exit
    "",
    "[model_providers.mock]",
    `name = "mock"`,
    `base_url = ${tomlString(c.mock.codexBaseUrl(c.scenario))}`,
    `wire_api = "responses"`,
    `env_key = "MOCK_API_KEY"`,
    "",
  ];
  if (c.mcp) {
    lines.push(
      `[mcp_servers.velesdb-memory]`,
      `command = "node"`,
      `args = [${mcpArgs(c).map(tomlString).join(", ")}]`,
      "",
    );
  }
  lines.push(...c.codexConfigTail);
  fs.writeFileSync(path.join(c.codexHome, "config.toml"), `${lines.join("\n")}\n`);
}

/** POSIX single-quote a word for `sh -c`. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(word) ? `'${word}'` : `'${word.replace(/'/g, `'\\''`)}'`;
}

// ---------------------------------------------------------------------------------------------
// Codex hook trust (codex-cli 0.169.0): a non-managed hook runs only if config.toml holds
//   [hooks.state."<abs hooks.json>:<event_label>:<group index>:<handler index>"]
//   trusted_hash = "sha256:<hex>"
// where hex = sha256 of the canonical JSON (keys sorted, compact, nulls dropped) of
//   {event_name, matcher?, hooks:[{type:"command", command, timeout, async, statusMessage?}]}.
// ---------------------------------------------------------------------------------------------

/** canonicalJson(v) → compact JSON with sorted keys and null/undefined fields dropped. */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== null && v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

const snake = (wire: string): string => wire.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();

export interface CodexHandler {
  type: "command";
  command: string;
  timeout?: number;
  async?: boolean;
  statusMessage?: string;
}

/** codexTrustHash(eventWireName, matcher, handler) → "sha256:<hex>" as Codex computes it. */
export function codexTrustHash(eventWireName: string, matcher: string | undefined, handler: CodexHandler): string {
  const dropsMatcher = eventWireName === "Stop" || eventWireName === "UserPromptSubmit";
  const identity = {
    event_name: snake(eventWireName),
    matcher: dropsMatcher ? undefined : matcher,
    hooks: [
      {
        type: "command",
        command: handler.command,
        timeout: handler.timeout ?? 600,
        async: handler.async ?? false,
        statusMessage: handler.statusMessage,
      },
    ],
  };
  return `sha256:${createHash("sha256").update(canonicalJson(identity)).digest("hex")}`;
}

export type CodexTrustMode = "trust-state" | "bypass-flag" | "untrusted";

export interface RegisterOptions {
  /** Codex only: how the hooks become trusted (default: write the trust state). */
  codexTrust?: CodexTrustMode;
}

/**
 * registerHooks(c, host) — THE one place our hooks get registered for a case: our own
 * installer, `velesdb-hooks install --client <host>`, run with the case's HOME and CODEX_HOME,
 * exactly as a user runs it. The installed binary (~/.velesdb-hooks/bin in the case's HOME) is
 * what the hosts then execute. Codex trust is the one thing the installer deliberately never
 * writes; the harness writes what a user's `/hooks` approval would (the trust state), or
 * leaves it out for the untrusted scenario.
 */
/** Whether a scenario runs with our hooks registered, or without them (the negative control). */
export type Mode = "hooks" | "none";

export interface E2ESuite {
  readonly mock: MockLlm;
  readonly cases: E2ECase[];
  /** setup(name, mode, host, script) → a fresh case scripted on the mock, hooks registered when mode is "hooks". */
  setup(
    name: string,
    mode: Mode,
    host: Host,
    script: Scenario | ((c: E2ECase) => Scenario),
    options?: CaseOptions,
  ): E2ECase;
}

/**
 * requireFiles([hostBin]) → nothing, or a throw naming what to run: the hooks binary must be
 * built and each of `hostFiles` (a host's entry, test/e2e/host-bins.ts) installed.
 */
export function requireFiles(hostFiles: readonly string[]): void {
  if (!fs.existsSync(HOOKS_BIN)) throw new Error(`${HOOKS_BIN} is missing: run \`bun run build\` first`);
  for (const file of hostFiles)
    if (!fs.existsSync(file)) throw new Error(`${file} is missing: run \`bun scripts/install-e2e-hosts.ts\` first`);
}

/**
 * e2eSuite() → for one test file: the mock model APIs, started before its tests (and only when
 * the binary under test exists), its cases (removed after them, each first handed to
 * `beforeRemove`), and the two steps every scenario shares.
 */
export function e2eSuite(options: { beforeRemove?: (c: E2ECase) => void } = {}): E2ESuite {
  let mock: MockLlm | undefined;
  const cases: E2ECase[] = [];
  beforeAll(async () => {
    requireFiles([]);
    mock = await startMockLlm();
  });
  afterAll(() => {
    mock?.stop();
    if (options.beforeRemove) cases.forEach(options.beforeRemove);
    cases.forEach(removeCase);
  });
  const suite: E2ESuite = {
    get mock() {
      if (!mock) throw new Error("the mock model APIs are not started (e2eSuite's beforeAll has not run)");
      return mock;
    },
    cases,
    setup(name, mode, host, script, options = {}) {
      const c = createCase(suite.mock, `${name}-${mode}`, options);
      cases.push(c);
      suite.mock.script(c.scenario, typeof script === "function" ? script(c) : script);
      if (mode === "hooks") registerHooks(c, host);
      return c;
    },
  };
  return suite;
}

/**
 * doubleLauncher(c) → an executable `velesdb-memory` in the case that runs the MCP double
 * in the case's mode, logging to c.mcpLog: what `install --mcp` is given (VELESDB_MEMORY_BIN) when a test
 * lets our installer write the host's server entry, which runs the program with no arguments.
 */
export function doubleLauncher(c: E2ECase): string {
  const bin = path.join(c.root, "bin", "velesdb-memory");
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  fs.writeFileSync(bin, `#!/bin/sh\nexec ${mcpArgs(c).map(shellQuote).join(" ")} "$@"\n`, {
    mode: 0o755,
  });
  return bin;
}

/** installedHooksBin(c) → the binary the installer placed in the case's HOME (what the hosts run). */
export const installedHooksBin = (c: E2ECase): string =>
  path.join(c.home, ".velesdb-hooks", "bin", path.basename(HOOKS_BIN));

/**
 * runInstaller(c, "qwen", "install") → the stdout of `velesdb-hooks <command> --client <client>`
 * (then `extra`, e.g. ["--mcp"]) run with the case's HOME and TMPDIR (plus `env`), as a user runs
 * it; throws when it fails.
 */
export function runInstaller(
  c: { readonly home: string; readonly tmp: string },
  client: string,
  command: "install" | "uninstall" | "check",
  env: Record<string, string> = {},
  extra: readonly string[] = [],
): string {
  const run = Bun.spawnSync([HOOKS_BIN, command, "--client", client, ...extra], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: c.home, TMPDIR: c.tmp, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (run.exitCode !== 0)
    throw new Error(
      `velesdb-hooks ${command} --client ${client} exited ${run.exitCode}: ${run.stderr.toString()}${run.stdout.toString()}`,
    );
  return run.stdout.toString();
}

/** installWithMcp(c, clients, server) → `install --client <client> --mcp` for each client, VELESDB_MEMORY_BIN = server. */
export function installWithMcp(c: E2ECase, clients: readonly string[], server: string): void {
  for (const client of clients)
    runInstaller(c, client, "install", { CODEX_HOME: c.codexHome, VELESDB_MEMORY_BIN: server }, ["--mcp"]);
}

/** writeClaudeServer(c, command) → ~/.claude.json naming `command` as the user-scope stdio velesdb-memory server. */
export function writeClaudeServer(c: E2ECase, command: string): void {
  fs.writeFileSync(
    path.join(c.home, ".claude.json"),
    `${JSON.stringify({ mcpServers: { "velesdb-memory": { type: "stdio", command, args: [], env: {} } } }, null, 2)}\n`,
  );
}

/**
 * wireServerDirectly(c, server) → velesdb-memory as Claude Code's and Codex's own stdio server,
 * in the shapes install --mcp writes, with no front: the memory proofs' "server wired" control.
 *
 * `codexWaits` adds `required = true` to Codex's entry, for the proofs whose positive control is
 * "Codex's requests name the server's tools". Codex 0.169.0 sends its first model request without
 * waiting for its MCP servers: measured with the real server behind a `sleep N` wrapper, the only
 * request named mcp__velesdb_memory for N = 0 but not for N = 4 or 12 (sent after ~1.3 s), and
 * under a full CI run the real server's own start (0.3 s idle) lost that race. With `required`
 * Codex waits for the handshake (tools seen for 0, 4 and 12 s) and refuses to start, exit 1 and
 * "required MCP servers failed to initialize", when the server cannot start, so a held store
 * fails loudly instead of passing as "no tools". install --mcp does not write it (docs/hosts/codex.md).
 */
export function wireServerDirectly(c: E2ECase, server: string, options: { codexWaits?: boolean } = {}): void {
  writeClaudeServer(c, server);
  c.codexConfigTail.push(
    "[mcp_servers.velesdb-memory]",
    `command = ${JSON.stringify(server)}`,
    ...(options.codexWaits ? ["required = true"] : []),
    "",
  );
  writeCodexConfig(c);
}

/**
 * storeReleased(c) → once no process holds the case's store (~/.velesdb-memory): "one after
 * another" as a user has them. Without our hooks each host starts its own velesdb-memory, which
 * lets go of the store only when it reads the end of its stdin after the host exits (seen held
 * 120 ms after a session ended, under load). A second server on a held store exits (0.17.0:
 * "another velesdb-memory process holds …", tried by hand), and Codex, which waits for it here
 * (wireServerDirectly's codexWaits), would then refuse to start. With our hooks the sessions
 * share one broker, which holds the store on purpose: only chains wired without hooks wait.
 */
export async function storeReleased(c: E2ECase): Promise<void> {
  const store = path.join(c.home, ".velesdb-memory");
  const deadline = Date.now() + 30_000;
  for (let holder = storeLockHolder(store); holder; holder = storeLockHolder(store)) {
    if (Date.now() > deadline)
      throw new Error(`the store of ${c.name} is still held 30 s after its session ended, by pid ${holder.pid}`);
    await Bun.sleep(100);
  }
}

export function registerHooks(c: E2ECase, host: Host, options: RegisterOptions = {}): void {
  runInstaller(c, host, "install", { CODEX_HOME: c.codexHome });
  const registry =
    host === "claude" ? path.join(c.home, ".claude", "settings.json") : path.join(c.codexHome, "hooks.json");
  const hooks = (
    JSON.parse(fs.readFileSync(registry, "utf8")) as {
      hooks: Record<string, Array<{ matcher?: string; hooks: CodexHandler[] }>>;
    }
  ).hooks;
  const argvEvents = Object.entries(WIRE_NAME)
    .filter(([, wire]) => hooks[wire] !== undefined)
    .map(([event]) => event as HookEventArg);
  c.registered[host] = argvEvents;
  if (host === "claude") return;
  const tail: string[] = [];
  for (const [wire, groups] of Object.entries(hooks)) {
    groups.forEach((group, g) => {
      group.hooks.forEach((handler, h) => {
        tail.push(
          `[hooks.state.${tomlString(`${registry}:${snake(wire)}:${g}:${h}`)}]`,
          `trusted_hash = ${tomlString(codexTrustHash(wire, group.matcher, handler))}`,
          "",
        );
      });
    });
  }
  c.codexConfigTail = (options.codexTrust ?? "trust-state") === "trust-state" ? tail : [];
  c.codexTrustMode = options.codexTrust ?? "trust-state";
  writeCodexConfig(c);
}

// ---------------------------------------------------------------------------------------------
// Running the hosts
// ---------------------------------------------------------------------------------------------

export interface RunResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** The model requests (Anthropic or Responses API) of this case's scenario, after the run. */
  requests: LoggedRequest[];
  /** Everything the mock received for this scenario, model requests or not (e.g. our
   *  SessionStart freshness probe, which asks VELESDB_MCP_URL). */
  allRequests: LoggedRequest[];
  /** The case the run belongs to (checks may look at its workspace). */
  case: E2ECase;
}

/** The environment every host run gets: private dirs, nothing that reaches the network. */
export function baseEnv(c: E2ECase): Record<string, string> {
  // PATH without node_modules/.bin or bun's own dirs: hooks and the MCP fake must not need bun.
  const pathDirs = (process.env.PATH ?? "/usr/bin:/bin")
    .split(path.delimiter)
    .filter((d) => d && !d.includes("node_modules") && !/bun/i.test(d));
  const proxy = c.mock.proxyUrl;
  return {
    PATH: pathDirs.join(path.delimiter),
    // Anything not addressed to 127.0.0.1 goes to the mock's trap proxy and is logged there.
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    ALL_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    all_proxy: proxy,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    // Our SessionStart freshness probe (docs/contract.md §5.1) asks this URL: the mock answers 404, i.e. silence.
    VELESDB_MCP_URL: `http://127.0.0.1:${c.mock.port}/s/${encodeURIComponent(c.scenario)}/mcp`,
    HOME: c.home,
    TMPDIR: c.tmp,
    LANG: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
    USER: process.env.USER ?? "e2e",
    SHELL: "/bin/sh",
    ...NODE_CACHE_ENV,
  };
}

export interface RunOptions {
  timeoutMs?: number;
  /** Claude: the model name passed with --model (default: a model the CLI knows). */
  model?: string;
  env?: Record<string, string>;
  cwd?: string;
}

/** runProcess(argv, options) → exit status and output; the process group is killed on timeout. */
export function runProcess(
  argv: string[],
  env: Record<string, string>,
  cwd: string,
  timeoutMs: number,
): Promise<Omit<RunResult, "requests" | "allRequests" | "case">> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({
        exitCode: null,
        signal: null,
        timedOut,
        stdout,
        stderr: `${stderr}\nspawn error: ${error.message}`,
        durationMs: Date.now() - started,
      });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      killGroup(); // leftovers of the host (MCP servers, hooks) die with the run
      // Judged by the time measured too: a late event loop may handle the exit before a due timer (docs/hardening.md#tests-that-could-not-fail).
      const durationMs = Date.now() - started;
      resolve({ exitCode: code, signal, timedOut: timedOut || durationMs > timeoutMs, stdout, stderr, durationMs });
    });
  });
}

/** A model the CLI knows: an unknown name leaves the auto-compact threshold unenforced. */
export const CLAUDE_MODEL = "claude-opus-5-5";

/**
 * runClaude(c, args) → `claude <args>` from the workspace, against the mock.
 * Hooks come from $HOME/.claude/settings.json (what the installer writes).
 */
export async function runClaude(c: E2ECase, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const env = {
    ...baseEnv(c),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_BUG_COMMAND: "1",
    ANTHROPIC_BASE_URL: c.mock.claudeBaseUrl(c.scenario),
    ANTHROPIC_API_KEY: "sk-ant-dummy",
    IS_SANDBOX: "1", // root may then use --dangerously-skip-permissions
    ...options.env,
  };
  const extra: string[] = [];
  if (c.mcp) {
    const mcpConfig = path.join(c.root, "mcp.json");
    fs.writeFileSync(
      mcpConfig,
      JSON.stringify({ mcpServers: { "velesdb-memory": { type: "stdio", command: "node", args: mcpArgs(c) } } }),
    );
    extra.push("--mcp-config", mcpConfig, "--strict-mcp-config");
  }
  const argv = [
    CLAUDE_BIN,
    ...args,
    "--output-format",
    "json",
    "--dangerously-skip-permissions",
    "--model",
    options.model ?? CLAUDE_MODEL,
    ...extra,
  ];
  const result = await runProcess(argv, env, options.cwd ?? c.workspace, options.timeoutMs ?? 60_000);
  return finish(c, result);
}

/** runCodex(c, prompt) → `codex exec` from the workspace, against the mock. */
export async function runCodex(
  c: E2ECase,
  prompt: string,
  options: RunOptions & { extraArgs?: string[] } = {},
): Promise<RunResult> {
  const env = { ...baseEnv(c), CODEX_HOME: c.codexHome, MOCK_API_KEY: "dummy", ...options.env };
  const args = ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"];
  if (c.codexTrustMode === "bypass-flag") args.push("--dangerously-bypass-hook-trust");
  args.push(...(options.extraArgs ?? []), prompt);
  const result = await runProcess(
    ["node", CODEX_BIN, ...args],
    env,
    options.cwd ?? c.workspace,
    options.timeoutMs ?? 60_000,
  );
  return finish(c, result);
}

function finish(c: E2ECase, result: Omit<RunResult, "requests" | "allRequests" | "case">): RunResult {
  const allRequests = c.mock.requests(c.scenario);
  const requests = allRequests.filter((q) => q.api !== "unknown");
  // VH_E2E_KEEP=1 keeps case directories; the model requests are saved there for inspection.
  if (process.env.VH_E2E_KEEP)
    fs.writeFileSync(path.join(c.root, "requests.json"), JSON.stringify(allRequests, null, 2));
  return { ...result, requests, allRequests, case: c };
}

/** claudeSessionId(result) → the session id printed by `--output-format json`. */
export function claudeSessionId(result: RunResult): string | undefined {
  try {
    const parsed = JSON.parse(result.stdout.trim().split("\n").pop() ?? "");
    return typeof parsed.session_id === "string" ? parsed.session_id : undefined;
  } catch {
    return undefined;
  }
}

export interface CodexListedHook {
  key: string;
  eventName: string;
  command: string;
  matcher: string | null;
  currentHash: string;
  trustStatus: string;
}

/**
 * codexHooksList(c) → what `codex app-server` reports for `hooks/list` in the case's workspace:
 * each hook's key, current hash and trust status (JSON-RPC over stdio, bounded, killed by pid).
 */
export async function codexHooksList(c: E2ECase, timeoutMs = 30_000): Promise<CodexListedHook[]> {
  const env = { ...baseEnv(c), CODEX_HOME: c.codexHome, MOCK_API_KEY: "dummy" };
  const child = spawn("node", [CODEX_BIN, "app-server"], {
    cwd: c.workspace,
    env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  const kill = (): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      /* gone */
    }
  };
  try {
    return await new Promise<CodexListedHook[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("codex app-server: no hooks/list answer in time")), timeoutMs);
      let buffer = "";
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
        buffer += chunk;
        for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          let message: any;
          try {
            message = JSON.parse(line);
          } catch {
            continue;
          }
          if (message.id === 2) {
            clearTimeout(timer);
            if (message.error) reject(new Error(`hooks/list: ${JSON.stringify(message.error)}`));
            else resolve((message.result?.data ?? []).flatMap((d: any) => d.hooks ?? []));
          }
        }
      });
      child.on("error", (e) => reject(e));
      const send = (m: unknown): void => void child.stdin!.write(`${JSON.stringify(m)}\n`);
      send({ id: 1, method: "initialize", params: { clientInfo: { name: "velesdb-hooks-e2e", version: "0" } } });
      send({ method: "initialized" });
      send({ id: 2, method: "hooks/list", params: { cwds: [c.workspace] } });
    });
  } finally {
    kill();
  }
}

/**
 * spyOnInstalledHooks(home) → a directory where every run of the installed binary leaves its
 * argv and stdin (`<n>.argv`, `<n>.stdin`): the binary at ~/.velesdb-hooks/bin is swapped for a
 * sh wrapper that saves both and then runs the real copy. The hosts keep the command they were
 * given, so what they hand a hook can be read as it arrived (e.g. a recall's tool_response).
 * With `{stderr: true}` the hook's stderr is kept too (`<n>.stderr`) and then handed to the host
 * as it was, with the hook's exit code: the hosts do not show a hook's stderr to the model, and
 * the fail-open cases check that line (memory-without-model.e2e.test.ts). `dir` puts the records
 * elsewhere, and `beforeHook` adds sh lines run after the recording and before the real hook,
 * with `$n` the run's path prefix (scripts/capture-transcripts.ts copies the transcript there).
 */
export function spyOnInstalledHooks(
  home: string,
  options: { stderr?: boolean; dir?: string; beforeHook?: readonly string[] } = {},
): string {
  const installed = path.join(home, ".velesdb-hooks", "bin", path.basename(HOOKS_BIN));
  const real = `${installed}.spied`;
  const dir = options.dir ?? path.join(home, ".velesdb-hooks", "spy");
  fs.mkdirSync(dir, { recursive: true });
  fs.renameSync(installed, real);
  const script = [
    "#!/bin/sh",
    // The MCP front (`velesdb-hooks mcp`, what install --mcp registers) is a stdio server whose
    // stdin never ends: recording it first would hang the host's MCP client. It runs unspied.
    `if [ "$1" = mcp ]; then exec ${shellQuote(real)} "$@"; fi`,
    `n="${dir}/$(date +%s%N)-$$"`,
    `printf '%s\\n' "$@" > "$n.argv"`,
    `cat > "$n.stdin"`,
    ...(options.beforeHook ?? []),
    ...(options.stderr
      ? [`${shellQuote(real)} "$@" < "$n.stdin" 2> "$n.stderr"`, "code=$?", `cat "$n.stderr" >&2`, 'exit "$code"']
      : [`exec ${shellQuote(real)} "$@" < "$n.stdin"`]),
    "",
  ].join("\n");
  fs.writeFileSync(installed, script, { mode: 0o755 });
  return dir;
}

export interface SpiedRun {
  /** The path prefix of the run's files (`<base>.argv`, `<base>.stdin`, …). */
  readonly base: string;
  readonly argv: string[];
  readonly payload: any;
  /** What the hook wrote on stderr, when the spy keeps it ({stderr: true}). */
  readonly stderr?: string;
}

/** spiedRuns(dir) → the hook runs a spy directory recorded, oldest first, payloads parsed. */
export function spiedRuns(dir: string): SpiedRun[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".argv"))
    .sort()
    .map((f) => {
      const base = path.join(dir, f.slice(0, -".argv".length));
      const argv = fs
        .readFileSync(`${base}.argv`, "utf8")
        .split("\n")
        .filter((a) => a !== "");
      let payload: unknown;
      try {
        payload = JSON.parse(fs.readFileSync(`${base}.stdin`, "utf8"));
      } catch {
        payload = undefined;
      }
      const stderr = fs.existsSync(`${base}.stderr`) ? fs.readFileSync(`${base}.stderr`, "utf8") : undefined;
      return { base, argv, payload, stderr };
    });
}
