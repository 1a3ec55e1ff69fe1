// The MCP server end to end (docs/mcp-server.md): `install --mcp` wires the velesdb-memory MCP
// server into each real host,
// so that a plain session — no --mcp-config, no extra flag — can recall through it and the
// guard then lets an edit of an opted-in repository through. For Claude Code, Codex, Gemini
// CLI, Qwen Code and Copilot CLI:
// - after `install --client <host> --mcp` (VELESDB_MEMORY_BIN = a launcher of the project's
//   velesdb-memory double), the host's own listing command shows the server;
// - a session recalls through it (the double logs the tools/call) and the edit goes through;
//   negative control: the same session with the hooks but without --mcp cannot recall, and the
//   edit stays refused;
// - after `uninstall` the listing no longer shows it, and the user's other server is as it was.
//
// The launcher runs the velesdb-memory double in its default mode: it answers recall_fused as
// velesdb-memory 0.17.0 does (`Json<RecallFusedResult>`, one text block and structuredContent;
// see fake-velesdb-memory.mjs).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { assertOffline, hostSlots } from "./checks.ts";
import { copilotOfflineEnv } from "../hosts/copilot/copilot-harness.ts";
import { HOST_BINS } from "./host-bins.ts";
import {
  createGeminiCase,
  GEMINI_BIN,
  GEMINI_NO_RELAUNCH,
  removeGeminiCase,
  runGemini,
  type GeminiCase,
} from "../hosts/gemini/gemini-harness.ts";
import {
  baseEnv,
  canonicalJson,
  CLAUDE_BIN,
  CODEX_BIN,
  createCase,
  E2E_PROJECT,
  FAKE_MCP,
  HOOKS_BIN,
  registerHooks,
  removeCase,
  runClaude,
  runCodex,
  runProcess,
  shellQuote,
  writeCodexConfig,
  type E2ECase,
  type RunResult,
  requireFiles,
} from "./harness.ts";
import { geminiCall, geminiText, startMockGemini, type MockGemini } from "../hosts/gemini/mock-gemini.ts";
import { codexText, startMockLlm, text, type MockLlm } from "./mock-llm.ts";
import { chatText, chatTool, startMockOpenAiChat, type MockOpenAiChat } from "./mock-openai-chat.ts";
import { QWEN_CLI, QWEN_MODEL, QWEN_NO_RELAUNCH, QWEN_NODE, runQwen } from "../hosts/qwen/qwen-harness.ts";

const OPT_IN = { ...E2E_PROJECT, enforce_learning_loop: true };
const CLAUDE_QUIET = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_TELEMETRY: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_ERROR_REPORTING: "1",
};
const COPILOT_BIN = HOST_BINS.copilot;

// Each step starts a host CLI (1–3 CPU s) and CI has 2 cores: the hosts' tests overlap, their
// steps waiting for one of HOST_SLOTS (a listing or a session each).
const HOST_SLOTS = 4;
const slot = hostSlots(HOST_SLOTS);

let llm: MockLlm;
let chat: MockOpenAiChat;
let gemini: MockGemini;
let copilotCache: string;
const cleanups: Array<() => void> = [];

beforeAll(async () => {
  requireFiles([]);
  llm = await startMockLlm();
  chat = startMockOpenAiChat();
  gemini = await startMockGemini();
  copilotCache = fs.mkdtempSync(path.join(os.tmpdir(), "vh-e2e-mcp-copilot-cache-"));
  // Copilot unpacks itself into the cache on its first start: once here, not per run.
  Bun.spawnSync(["node", COPILOT_BIN, "--version"], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: copilotCache,
      XDG_CACHE_HOME: copilotCache,
      COPILOT_AUTO_UPDATE: "false",
      COPILOT_OFFLINE: "true",
    },
    timeout: 120_000,
  });
});
afterAll(() => {
  llm?.stop();
  chat?.stop();
  gemini?.stop();
  for (const f of cleanups) f();
  if (copilotCache && !process.env.VH_E2E_KEEP) fs.rmSync(copilotCache, { recursive: true, force: true });
});

type Mode = "mcp" | "hooks only";

interface Dirs {
  readonly root: string;
  readonly home: string;
  readonly tmp: string;
  readonly workspace: string;
}

/** launcher(c) → `<root>/bin/velesdb-memory`: the double on stdio, logging what it receives to <root>/velesdb-memory.log. */
function launcher(c: Dirs): { bin: string; log: string } {
  const bin = path.join(c.root, "bin", "velesdb-memory");
  const log = path.join(c.root, "velesdb-memory.log");
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  fs.chmodSync(FAKE_MCP, 0o755);
  fs.writeFileSync(bin, `#!/bin/sh\nexec ${shellQuote(FAKE_MCP)} --log ${shellQuote(log)} "$@"\n`, { mode: 0o755 });
  return { bin, log };
}

/** The user's own MCP server, which every step must leave as it is. */
const userServer = (c: Dirs) => ({ command: "node", args: [FAKE_MCP, "--log", path.join(c.root, "user-server.log")] });

/** installer(c, args, env) → `velesdb-hooks <args>` as a user runs it in the case's HOME; throws when it fails. */
function installer(c: Dirs, args: string[], env: Record<string, string> = {}): string {
  const run = Bun.spawnSync([HOOKS_BIN, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: c.home, TMPDIR: c.tmp, ...env },
    cwd: c.workspace,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (run.exitCode !== 0)
    throw new Error(
      `velesdb-hooks ${args.join(" ")} exited ${run.exitCode}: ${run.stderr.toString()}${run.stdout.toString()}`,
    );
  return run.stdout.toString();
}

/** recalled(log) → the double received a tools/call of recall_fused. */
function recalled(log: string): boolean {
  if (!fs.existsSync(log)) return false;
  return fs
    .readFileSync(log, "utf8")
    .split("\n")
    .some((line) => line.includes('"tools/call"') && line.includes("recall_fused"));
}

/** The server's name as a word of a listing (the double's own path, fake-velesdb-memory.mjs, is no match). */
const SERVER_LISTED = /(^|\s)velesdb-memory[:\s]/m;

const guarded = (c: Dirs): string => path.join(c.workspace, "guarded.txt");

/** listing(argv, env, cwd) → the host's own listing of its MCP servers (stdout + stderr). */
async function listing(argv: string[], env: Record<string, string>, cwd: string): Promise<string> {
  const r = await runProcess(argv, env, cwd, 60_000);
  return r.stdout + r.stderr;
}

/**
 * proveHost: the scenario for one host, the --mcp case and the hooks-only control run side by
 * side; then uninstall on the --mcp case.
 */
async function proveHost(spec: {
  make(mode: Mode): {
    dirs: Dirs;
    run(): Promise<{ exitCode: number | null; stderr: string }>;
    list(): Promise<string>;
    /** The user's other server(s), as text: equal before install --mcp and after uninstall. */
    userFile(): string;
    /** [now, before any install]: a file uninstall must give back byte for byte. */
    original?(): [string, string];
    install(args: string[]): string;
  };
  client: string;
}): Promise<void> {
  const [on, off] = [spec.make("mcp"), spec.make("hooks only")];
  const tools = { on: launcher(on.dirs), off: launcher(off.dirs) };
  const userBefore = on.userFile();
  on.install(["install", "--client", spec.client, "--mcp"]);
  const [listedOn, listedOff] = await Promise.all([slot(on.list), slot(off.list)]);
  expect(listedOn).toMatch(SERVER_LISTED);
  expect(listedOff).not.toMatch(SERVER_LISTED);

  const [withServer, without] = await Promise.all([slot(on.run), slot(off.run)]);
  const explain = (r: { exitCode: number | null; stderr: string }) =>
    `exit ${r.exitCode}; stderr: ${r.stderr.slice(-1200)}`;
  expect(recalled(tools.on.log), explain(withServer)).toBe(true);
  expect(fs.existsSync(guarded(on.dirs)), explain(withServer)).toBe(true);
  // Negative control: the same hooks, no server: nothing to recall with, the edit stays refused.
  expect(recalled(tools.off.log)).toBe(false);
  expect(fs.existsSync(guarded(off.dirs)), explain(without)).toBe(false);

  const removed = on.install(["uninstall", "--client", spec.client]);
  expect(removed).toContain("removed the velesdb-memory MCP server");
  expect(await slot(on.list)).not.toMatch(SERVER_LISTED);
  expect(on.userFile()).toBe(userBefore);
  if (on.original) {
    const [now, before] = on.original();
    expect(now).toBe(before);
  }
}

/** serversOf(settings) → the file's mcpServers as canonical JSON (the hooks beside them change on install). */
const serversOf = (file: string): string =>
  canonicalJson((JSON.parse(fs.readFileSync(file, "utf8")) as { mcpServers: unknown }).mcpServers);

describe("install --mcp on the real hosts", () => {
  test.concurrent("Claude Code: claude mcp list shows it, a plain -p session recalls and writes; uninstall takes it out", async () => {
    await proveHost({
      client: "claude",
      make(mode) {
        const c = createCase(llm, `mcp-claude-${mode.replace(" ", "-")}`, { projectConfig: OPT_IN });
        cleanups.push(() => removeCase(c));
        const claudeJson = path.join(c.home, ".claude.json");
        fs.writeFileSync(
          claudeJson,
          `${JSON.stringify({ mcpServers: { "user-tools": { type: "stdio", ...userServer(c), env: {} } } }, null, 2)}\n`,
        );
        llm.script(c.scenario, {
          claude: [
            {
              reply: {
                blocks: [
                  { type: "tool_use", name: "mcp__velesdb-memory__recall_fused", input: { query: "guarded.txt" } },
                ],
              },
            },
            {
              reply: {
                blocks: [{ type: "tool_use", name: "Write", input: { file_path: guarded(c), content: "x\n" } }],
              },
            },
            { reply: text("DONE answer") },
          ],
        });
        registerHooks(c, "claude");
        const env = () => ({ ...baseEnv(c), VELESDB_MEMORY_BIN: launcher(c).bin });
        return {
          dirs: c,
          run: () =>
            runClaude(c, ["-p", "recall, then write a file"]).then((r) => {
              assertOffline(r, llm.escaped());
              return r;
            }),
          // The flags runClaude gives the sessions, so the listing's health check stays on 127.0.0.1 too.
          list: () =>
            listing(
              [CLAUDE_BIN, "mcp", "list"],
              {
                ...baseEnv(c),
                ...CLAUDE_QUIET,
                ANTHROPIC_BASE_URL: llm.claudeBaseUrl(c.scenario),
                ANTHROPIC_API_KEY: "sk-ant-dummy",
              },
              c.workspace,
            ),
          // Claude Code rewrites ~/.claude.json as it runs: the user's server is compared, not the file.
          userFile: () =>
            canonicalJson((JSON.parse(fs.readFileSync(claudeJson, "utf8")) as { mcpServers: unknown }).mcpServers),
          install: (args) => installer(c, args, env()),
        };
      },
    });
  }, 240_000);

  test.concurrent("Codex: codex mcp list shows it, codex exec recalls and patches; uninstall gives config.toml back byte for byte", async () => {
    await proveHost({
      client: "codex",
      make(mode) {
        const c = createCase(llm, `mcp-codex-${mode.replace(" ", "-")}`, { projectConfig: OPT_IN });
        cleanups.push(() => removeCase(c));
        llm.script(c.scenario, {
          codex: [
            {
              reply: {
                items: [
                  { type: "tool_search_call", call_id: "c3", execution: "client", arguments: { query: "recall" } },
                ],
              },
            },
            {
              reply: {
                items: [
                  {
                    type: "function_call",
                    namespace: "mcp__velesdb_memory",
                    name: "recall_fused",
                    arguments: JSON.stringify({ query: "guarded.txt" }),
                    call_id: "c4",
                  },
                ],
              },
            },
            {
              reply: {
                items: [
                  {
                    type: "custom_tool_call",
                    name: "apply_patch",
                    call_id: "c2",
                    input: "*** Begin Patch\n*** Add File: guarded.txt\n+x\n*** End Patch\n",
                  },
                ],
              },
            },
            { reply: codexText("DONE_FINAL") },
          ],
        });
        registerHooks(c, "codex");
        const server = userServer(c);
        c.codexConfigTail.push(
          `[mcp_servers.user-tools]`,
          `command = "node"`,
          `args = [${server.args.map((a) => JSON.stringify(a)).join(", ")}]`,
          "",
        );
        writeCodexConfig(c);
        const configToml = path.join(c.codexHome, "config.toml");
        const env = { ...baseEnv(c), CODEX_HOME: c.codexHome, MOCK_API_KEY: "dummy" };
        return {
          dirs: c,
          run: () =>
            runCodex(c, "recall, then write a file").then((r) => {
              assertOffline(r, llm.escaped());
              return r;
            }),
          list: () => listing(["node", CODEX_BIN, "mcp", "list"], env, c.workspace),
          userFile: () => fs.readFileSync(configToml, "utf8"),
          install: (args) => installer(c, args, { CODEX_HOME: c.codexHome, VELESDB_MEMORY_BIN: launcher(c).bin }),
        };
      },
    });
  }, 240_000);

  test.concurrent("Gemini CLI: gemini mcp list shows it, gemini -p recalls and writes; uninstall gives settings.json back byte for byte", async () => {
    await proveHost({
      client: "gemini",
      make(mode) {
        const turns = [
          { reply: geminiCall("mcp_velesdb-memory_recall_fused", { query: "guarded.txt" }) },
          { reply: geminiCall("write_file", { file_path: "guarded.txt", content: "x\n" }) },
          { reply: geminiText("DONE") },
        ];
        const c: GeminiCase = createGeminiCase(gemini, `mcp-gemini-${mode.replace(" ", "-")}`, "none", turns, {
          projectConfig: OPT_IN,
        });
        cleanups.push(() => removeGeminiCase(c));
        const settings = {
          security: { auth: { selectedType: "gemini-api-key" } },
          model: { name: "gemini-2.5-flash" },
          privacy: { usageStatisticsEnabled: false },
          mcpServers: { "user-tools": userServer(c) },
        };
        fs.writeFileSync(c.settings, `${JSON.stringify(settings, null, 2)}\n`);
        const before = fs.readFileSync(c.settings, "utf8");
        installer(c, ["install", "--client", "gemini"]);
        const proxy = gemini.proxyUrl;
        const env = {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: c.home,
          TMPDIR: c.tmp,
          NO_COLOR: "1",
          HTTP_PROXY: proxy,
          HTTPS_PROXY: proxy,
          NO_PROXY: "127.0.0.1,localhost",
          ...GEMINI_NO_RELAUNCH,
        };
        return {
          dirs: c,
          run: async () => {
            const r = await runGemini(c, "recall, then write a file");
            expect(gemini.escaped()).toEqual([]);
            return r;
          },
          list: () => listing(["node", GEMINI_BIN, "mcp", "list"], env, c.workspace),
          userFile: () => serversOf(c.settings),
          // The hooks' uninstall came with it: the user's file is back to its bytes before any install.
          original: () => [fs.readFileSync(c.settings, "utf8"), before],
          install: (args) => installer(c, args, { VELESDB_MEMORY_BIN: launcher(c).bin }),
        };
      },
    });
  }, 240_000);

  test.concurrent("Qwen Code: qwen mcp list shows it, qwen -p recalls and writes; uninstall gives settings.json back byte for byte", async () => {
    await proveHost({
      client: "qwen",
      make(mode) {
        const c = createCase(llm, `mcp-qwen-${mode.replace(" ", "-")}`, { projectConfig: OPT_IN });
        cleanups.push(() => removeCase(c));
        const file = path.join(c.home, ".qwen", "settings.json");
        fs.mkdirSync(path.dirname(file), { recursive: true });
        const settings = {
          security: { auth: { selectedType: "openai" } },
          privacy: { usageStatisticsEnabled: false },
          memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false, enableAutoSkill: false },
          mcpServers: { "user-tools": userServer(c) },
          $version: 4,
        };
        fs.writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`);
        const before = fs.readFileSync(file, "utf8");
        chat.script(c.scenario, [
          { reply: chatTool("mcp__velesdb-memory__recall_fused", { query: "guarded.txt" }) },
          { reply: chatTool("write_file", { file_path: guarded(c), content: "x\n" }) },
          { reply: chatText("DONE") },
        ]);
        installer(c, ["install", "--client", "qwen"]);
        const env = {
          ...baseEnv(c),
          OPENAI_API_KEY: "sk-dummy",
          OPENAI_BASE_URL: chat.baseUrl(c.scenario),
          OPENAI_MODEL: QWEN_MODEL,
          ...QWEN_NO_RELAUNCH,
        };
        return {
          dirs: c,
          run: () =>
            runQwen(c, chat, "recall, then write a file").then((r) => {
              assertOffline(r, llm.escaped());
              return r;
            }),
          list: () => listing([QWEN_NODE, QWEN_CLI, "mcp", "list"], env, c.workspace),
          userFile: () => serversOf(file),
          original: () => [fs.readFileSync(file, "utf8"), before],
          install: (args) => installer(c, args, { VELESDB_MEMORY_BIN: launcher(c).bin }),
        };
      },
    });
  }, 240_000);

  test.concurrent("Copilot CLI: copilot mcp list shows it, copilot -p recalls and creates; uninstall gives mcp-config.json back byte for byte", async () => {
    await proveHost({
      client: "copilot",
      make(mode) {
        const c = createCase(llm, `mcp-copilot-${mode.replace(" ", "-")}`, { projectConfig: OPT_IN });
        cleanups.push(() => removeCase(c));
        const file = path.join(c.home, ".copilot", "mcp-config.json");
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(
          file,
          `${JSON.stringify({ mcpServers: { "user-tools": { type: "local", ...userServer(c), tools: ["*"] } } }, null, 2)}\n`,
        );
        chat.script(c.scenario, [
          { reply: chatTool("velesdb-memory-recall_fused", { query: "guarded.txt" }) },
          { reply: chatTool("create", { path: guarded(c), file_text: "x\n" }) },
          { reply: chatText("DONE") },
        ]);
        installer(c, ["install", "--client", "copilot"]);
        const env = {
          ...baseEnv(c),
          ...copilotOfflineEnv(copilotCache, chat.baseUrl(c.scenario), "gpt-4.1"),
        };
        return {
          dirs: c,
          run: async (): Promise<RunResult> => {
            const r = await runProcess(
              ["node", COPILOT_BIN, "-p", "recall, then create a file", "--allow-all-tools"],
              env,
              c.workspace,
              90_000,
            );
            const result: RunResult = { ...r, requests: chat.requests(c.scenario), allRequests: [], case: c };
            assertOffline(result, llm.escaped());
            return result;
          },
          list: () => listing(["node", COPILOT_BIN, "mcp", "list"], env, c.workspace),
          userFile: () => fs.readFileSync(file, "utf8"),
          install: (args) => installer(c, args, { VELESDB_MEMORY_BIN: launcher(c).bin }),
        };
      },
    });
  }, 240_000);
});

// OpenCode, Factory Droid and Kilo Code: the listing only (their sessions with the hooks are
// proved in opencode.e2e.test.ts, droid.e2e.test.ts and kilo.e2e.test.ts). Each listing starts
// each server and says whether it answered, so "listed and connected" shows the entry install
// wrote is one the host can run. These run after the sessions above, one at a time (not
// concurrent): `droid mcp list` reaches for api.factory.ai, telemetry.factory.ai and
// registry.npmjs.org, which the trap proxy catches and logs, and that log must stay empty while
// the sessions assert they stayed offline.
const OPENCODE_BIN = HOST_BINS.opencode;
const DROID_BIN = HOST_BINS.droid;
const KILO_BIN = HOST_BINS.kilo;

/** The listing's line for velesdb-memory (OpenCode prints the command on a line of its own after it). */
const listedLine = (listing: string): string => listing.split("\n").find((line) => SERVER_LISTED.test(line)) ?? "";

async function proveListing(spec: {
  client: string;
  /** The file the user's own server is in, relative to HOME, and its text. */
  userFile: string;
  userText(c: E2ECase): string;
  list(c: E2ECase): Promise<string>;
  /**
   * The host rewrites its config file whenever it starts (Kilo 7.7.7 adds `"permission":
   * {"bash":"allow"}` and re-indents): the user's file is then taken as one listing left it, as
   * any Kilo user's file is, and that listing must have changed it (measured, not assumed).
   */
  hostRewritesFile?: boolean;
}): Promise<void> {
  const [on, off] = (["mcp", "hooks-only"] as const).map((mode) => {
    const c = createCase(llm, `mcp-${spec.client}-${mode}`, { projectConfig: OPT_IN });
    cleanups.push(() => removeCase(c));
    const file = path.join(c.home, spec.userFile);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, spec.userText(c));
    return { c, file, before: fs.readFileSync(file, "utf8") };
  }) as [{ c: E2ECase; file: string; before: string }, { c: E2ECase; file: string; before: string }];
  if (spec.hostRewritesFile) {
    for (const side of [on, off]) {
      await slot(() => spec.list(side.c));
      const rewritten = fs.readFileSync(side.file, "utf8");
      expect(rewritten).not.toBe(side.before);
      side.before = rewritten;
    }
  }
  installer(on.c, ["install", "--client", spec.client, "--mcp"], { VELESDB_MEMORY_BIN: launcher(on.c).bin });
  installer(off.c, ["install", "--client", spec.client]);
  const [withServer, without] = await Promise.all([slot(() => spec.list(on.c)), slot(() => spec.list(off.c))]);
  expect(withServer).toMatch(SERVER_LISTED);
  expect(listedLine(withServer)).toMatch(/connected/i);
  expect(listedLine(withServer)).not.toMatch(/failed/i);
  expect(withServer).toMatch(/user-tools/);
  // Negative control: the same hooks without --mcp: no such server.
  expect(without).not.toMatch(SERVER_LISTED);
  expect(without).toMatch(/user-tools/);

  expect(installer(on.c, ["uninstall", "--client", spec.client])).toContain("removed the velesdb-memory MCP server");
  const after = await slot(() => spec.list(on.c));
  expect(after).not.toMatch(SERVER_LISTED);
  expect(after).toMatch(/user-tools/);
  expect(fs.readFileSync(on.file, "utf8")).toBe(on.before);
}

describe("install --mcp on OpenCode, Factory Droid and Kilo Code: the host's own listing", () => {
  test("OpenCode: opencode mcp list shows velesdb-memory connected after install --mcp, not without it nor after uninstall", async () => {
    await proveListing({
      client: "opencode",
      userFile: path.join(".config", "opencode", "opencode.json"),
      userText: (c) =>
        `${JSON.stringify({ $schema: "https://opencode.ai/config.json", mcp: { "user-tools": { type: "local", command: ["node", ...userServer(c).args] } } }, null, 2)}\n`,
      list: (c) =>
        listing([OPENCODE_BIN, "mcp", "list"], { ...baseEnv(c), OPENCODE_DISABLE_MODELS_FETCH: "1" }, c.workspace),
    });
  }, 240_000);

  test("Kilo Code: kilo mcp list shows velesdb-memory connected after install --mcp, not without it nor after uninstall", async () => {
    await proveListing({
      client: "kilo",
      userFile: path.join(".config", "kilo", "kilo.json"),
      userText: (c) =>
        `${JSON.stringify({ $schema: "https://app.kilo.ai/config.json", mcp: { "user-tools": { type: "local", command: ["node", ...userServer(c).args] } } }, null, 2)}\n`,
      list: (c) =>
        listing(
          [KILO_BIN, "mcp", "list"],
          { ...baseEnv(c), KILO_DISABLE_MODELS_FETCH: "1", KILO_TELEMETRY_LEVEL: "off" },
          c.workspace,
        ),
      hostRewritesFile: true,
    });
  }, 240_000);

  test("Factory Droid: droid mcp list shows velesdb-memory connected after install --mcp, not without it nor after uninstall", async () => {
    await proveListing({
      client: "droid",
      userFile: path.join(".factory", "mcp.json"),
      userText: (c) =>
        `${JSON.stringify({ mcpServers: { "user-tools": { type: "stdio", ...userServer(c), disabled: false } } }, null, 2)}\n`,
      list: (c) => listing([DROID_BIN, "mcp", "list"], baseEnv(c), c.workspace),
    });
  }, 240_000);
});
