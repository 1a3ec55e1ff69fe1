// OpenCode end to end: the real CLI (opencode-ai 1.18.33, its platform binary from the npm
// registry), offline with no login (a custom `@ai-sdk/openai-compatible` provider pointed at the
// chat-completions mock on 127.0.0.1), the fake velesdb-memory MCP server, and our plugin written
// by our own installer (`velesdb-hooks install --client opencode`). OpenCode runs served
// (`opencode serve` + `opencode run --attach`): `opencode run` alone exits at the first idle and
// would cut the Stop continuation off. Each scenario runs again without our plugin (or without
// the one thing it depends on) and the same check must then fail. Every run also proves nothing
// left 127.0.0.1 (the trap proxy). A run costs ~11 CPU s, so scenarios whose checks read
// different parts of one session share its runs (5 runs for 7 tests; see "The shared runs").
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { mustKeepOf, realCommand } from "../support/real-outputs.ts";
import { assertOffline, check, expectCheck, hostSlots, once, pairOf, proves } from "./checks.ts";
import { doubleArgs, baseEnv, createCase, E2E_DIR, E2E_PROJECT, FAKE_MCP, HOOKS_BIN, removeCase, runInstaller, runProcess, type E2ECase, type Mode, type RunResult } from "./harness.ts";
import { HOST_BINS } from "./host-bins.ts";
import { startMockLlm, type LoggedRequest, type MockLlm } from "./mock-llm.ts";
import { chatText, chatTool, messagesOf, messageText, startMockOpenAiChat, toolResultsOf, type ChatTurn, type MockOpenAiChat } from "./mock-openai-chat.ts";

const OPENCODE_BIN = HOST_BINS.opencode;
const OPT_IN = { ...E2E_PROJECT, enforce_learning_loop: true };
const LOAD_CALL = `load_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}/`; // the session's own slot (src/core/identity.ts sessionSlot)
const SAVE_CALL = `save_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}/`; // the session's own slot (src/core/identity.ts sessionSlot)

let llm: MockLlm; // the trap proxy, and the URL our session-start freshness probe asks
let chat: MockOpenAiChat;
const cases: E2ECase[] = [];

beforeAll(async () => {
  if (!fs.existsSync(HOOKS_BIN)) throw new Error(`${HOOKS_BIN} is missing: run \`bun run build\` first`);
  if (!fs.existsSync(OPENCODE_BIN)) throw new Error(`${OPENCODE_BIN} is missing: run \`bun scripts/install-e2e-hosts.ts\` first`);
  llm = await startMockLlm();
  chat = startMockOpenAiChat();
});
afterAll(() => {
  llm?.stop();
  chat?.stop();
  cases.forEach(removeCase);
});

interface Setup {
  turns: (c: E2ECase) => ChatTurn[];
  mcp?: { failing?: boolean };
}

function writeFile(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** setup(name, mode, …) → a case with the mock provider and the MCP fake in opencode.json and, in "hooks" mode, our installer run. */
function setup(name: string, mode: Mode, options: Setup): E2ECase {
  const c = createCase(llm, `opencode-${name}-${mode}`, { projectConfig: OPT_IN, mcp: { mode: options.mcp?.failing ? "is-error" : "structured" } });
  cases.push(c);
  chat.script(c.scenario, options.turns(c));
  const configDir = path.join(c.home, ".config", "opencode");
  const mcpCommand = ["node", ...doubleArgs(c.mcpLog, options.mcp?.failing ? "is-error" : "structured")];
  writeFile(
    path.join(configDir, "opencode.json"),
    JSON.stringify({
      provider: { mock: { npm: "@ai-sdk/openai-compatible", name: "Mock", options: { baseURL: chat.baseUrl(c.scenario), apiKey: "dummy" }, models: { "mock-model": { name: "Mock" } } } },
      model: "mock/mock-model",
      mcp: { "velesdb-memory": { type: "local", command: mcpCommand, enabled: true } },
    }),
  );
  // OpenCode runs `npm install @opencode-ai/plugin` in its config directory at start and waits
  // for it (~70 s offline) unless a node_modules/ and a lockfile naming the package are there,
  // as after one online run. Our plugin needs none of it.
  fs.mkdirSync(path.join(configDir, "node_modules"), { recursive: true });
  writeFile(path.join(configDir, "package.json"), `${JSON.stringify({ dependencies: { "@opencode-ai/plugin": "1.18.33" } })}\n`);
  writeFile(
    path.join(configDir, "package-lock.json"),
    `${JSON.stringify({ name: "opencode", lockfileVersion: 3, requires: true, packages: { "": { dependencies: { "@opencode-ai/plugin": "1.18.33" } }, "node_modules/@opencode-ai/plugin": { version: "1.18.33" } } })}\n`,
  );
  if (mode === "hooks") runInstaller(c, "opencode", "install");
  return c;
}

interface RunOptions {
  env?: Record<string, string>;
  /** After the turn: ask the server to compact the session (POST /session/:id/summarize). */
  compact?: boolean;
  /** How long the mock must see no request before the run counts as over (default 4 s). */
  quietMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** settle(c) → once the scenario's request count has not moved for `quietMs` (the idle continuation runs after `run` exits). */
async function settle(c: E2ECase, quietMs = 4000, maxMs = 60_000): Promise<void> {
  const started = Date.now();
  let count = -1;
  let stableSince = Date.now();
  while (Date.now() - started < maxMs) {
    const now = chat.requests(c.scenario).length;
    if (now !== count) {
      count = now;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= quietMs) return;
    await sleep(250);
  }
}

/** runOpencode(c, prompt) → `opencode serve` in the workspace, `opencode run --attach` against it, then the served session left to settle. */
async function runOpencode(c: E2ECase, prompt: string, options: RunOptions = {}): Promise<RunResult> {
  const env = { ...baseEnv(c), OPENCODE_DISABLE_MODELS_FETCH: "1", VELESDB_MEMORY_BIN: FAKE_MCP, ...options.env };
  const server = spawn(OPENCODE_BIN, ["serve", "--port", "0", "--hostname", "127.0.0.1"], { cwd: c.workspace, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let serverOut = "";
  server.stdout!.setEncoding("utf8").on("data", (d: string) => (serverOut += d));
  server.stderr!.setEncoding("utf8").on("data", (d: string) => (serverOut += d));
  try {
    const started = Date.now();
    let url: string | undefined;
    while (url === undefined && Date.now() - started < 60_000) {
      url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(serverOut)?.[1];
      if (url === undefined) await sleep(200);
    }
    if (url === undefined) throw new Error(`opencode serve did not start: ${serverOut.slice(0, 2000)}`);
    const result = await runProcess([OPENCODE_BIN, "run", "--attach", url, prompt], env, c.workspace, 150_000);
    await settle(c, options.quietMs);
    if (options.compact) {
      const sessions = (await (await fetch(`${url}/session`)).json()) as Array<{ id: string }>;
      const id = sessions[0]?.id;
      if (id === undefined) throw new Error("no session to compact");
      await fetch(`${url}/session/${id}/summarize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ providerID: "mock", modelID: "mock-model" }) });
      await settle(c);
    }
    const requests = chat.requests(c.scenario);
    const allRequests: LoggedRequest[] = [...llm.requests(c.scenario), ...chat.all().filter((q) => q.scenario === c.scenario)];
    if (process.env.VH_E2E_KEEP) fs.writeFileSync(path.join(c.root, "requests.json"), JSON.stringify(allRequests, null, 2));
    return { ...result, stderr: `${result.stderr}\n--- serve ---\n${serverOut}`, requests, allRequests, case: c };
  } finally {
    try {
      if (server.pid !== undefined) process.kill(-server.pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
}

// Each served OpenCode costs ~11 CPU s and CI has 2 cores: the tests share runs and run
// concurrently (most of a run is waiting: the settle, the quiet periods), 4 host runs at most.
const slot = hostSlots(4);
const offline = (r: RunResult): void => assertOffline(r, llm.escaped());

/** Every tool result the model was shown (deduplicated by call id). */
const toolResults = (r: RunResult): string[] => toolResultsOf(r.requests);

/** bashResult(r, command) → what the model was shown for the bash call running `command` (one session may run several). */
function bashResult(r: RunResult, command: string): string | undefined {
  for (const q of r.requests) {
    const messages = messagesOf(q.body);
    for (const m of messages) {
      for (const call of Array.isArray(m?.tool_calls) ? m.tool_calls : []) {
        let args: { command?: unknown } = {};
        try {
          args = JSON.parse(String(call?.function?.arguments ?? "{}"));
        } catch {
          continue;
        }
        if (call?.function?.name !== "bash" || args.command !== command) continue;
        const answer = messages.find((a) => a?.role === "tool" && a.tool_call_id === call.id);
        if (answer) return messageText(answer);
      }
    }
  }
  return undefined;
}

/** The agent's requests (they offer tools), not OpenCode's title generator. */
const agentRequests = (r: RunResult): LoggedRequest[] => r.requests.filter((q) => Array.isArray((q.body as { tools?: unknown })?.tools));

const guardedFile = (c: E2ECase): string => path.join(c.workspace, "guarded.txt");
const writeTurn = (c: E2ECase): ChatTurn => ({ reply: chatTool("write", { filePath: guardedFile(c), content: "x\n" }) });
const recallTurn: ChatTurn = { reply: chatTool("velesdb-memory_recall_fused", { query: "guarded.txt" }) };
const done: ChatTurn = { reply: chatText("DONE answer") };
const afterContinuation: ChatTurn = { matchLast: /save_working_context\(|Learning checkpoint/, reply: chatText("AFTER CONTINUATION") };
// Two bash outputs over our threshold, made by real tools in the workspace
// (test/support/real-outputs.ts): `find` over 2400 generated files (≈81 KB in 2400 lines, above
// OpenCode's own cut: it keeps the tail and saves the output to a file) and node --test (≈15.5 KB,
// under it: kept whole). Measured on 1.18.33: pytest -v's 50 KB in 620 lines stays under the cut;
// a Python traceback after 3000 progress lines (≈114 KB) is saved without its first 222 lines
// (the file holds ≈103 KiB) and without the traceback, which the model then never reads. The
// commands do not name the workspace, so each is one string for every case.
const CUT_RUNNER = "find";
const INLINE_RUNNER = "node --test: 2 failures among 190";
const commandIn = (runner: string, c: E2ECase): string => realCommand(runner, c.workspace).command;
const [CUT_COMMAND, INLINE_COMMAND] = (() => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "vh-e2e-command-"));
  try {
    return [realCommand(CUT_RUNNER, scratch).command, realCommand(INLINE_RUNNER, scratch).command];
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
})();
const cutTurn = (c: E2ECase): ChatTurn => ({ reply: chatTool("bash", { command: commandIn(CUT_RUNNER, c), description: "run the python tests" }) });
const inlineTurn = (c: E2ECase): ChatTurn => ({ reply: chatTool("bash", { command: commandIn(INLINE_RUNNER, c), description: "run the node tests" }) });
/** lostLines(result, original, runner) → the lines the runner marks in the original that the model did not read. */
function lostLines(result: string, original: string, runner: string): string[] {
  // OpenCode's output is both streams in one: the traceback's parser reads it as stderr.
  const needed = mustKeepOf(runner)(original, original);
  if (needed.length === 0) return ["the original holds no line the runner marks"];
  const lines = new Set(result.split("\n"));
  return needed.filter((line) => !lines.has(line)).map((line) => `lost: ${line}`);
}

const refused = check("the write was refused with a reason naming recall_fused, and the file was not written", (r) => {
  const p: string[] = [];
  if (fs.existsSync(guardedFile(r.case))) p.push("guarded.txt was written");
  if (!toolResults(r).some((t) => t.includes("velesdb-hooks refused this edit") && t.includes("recall_fused"))) p.push("no tool result carrying our refusal reached the model");
  return p;
});
const written = check("the write after the recall went through", (r) => (fs.existsSync(guardedFile(r.case)) ? [] : ["guarded.txt was not written"]));
const inlineCompiled = check("the model reads the compiled view of the kept-whole output; the archive it names holds the complete output", (r) => {
  const result = bashResult(r, INLINE_COMMAND);
  if (result === undefined) return ["the bash call never answered"];
  if (!result.includes("E2E-COMPILED")) return ["no compiled view reached the model"];
  const archive = /saved at "([^"]+)"/.exec(result)?.[1];
  if (!archive || !fs.existsSync(archive)) return ["no archive named"];
  const stored = (JSON.parse(fs.readFileSync(archive, "utf8")) as { stdout?: string }).stdout ?? "";
  const p = lostLines(result, stored, INLINE_RUNNER);
  if (stored.split("\nok ").length !== 191) p.push("the archive does not hold the complete output (190 passes)");
  return p;
});

// The shared runs. Each is made once, by the first test that needs it; the tests run
// concurrently, so the runs overlap (at most 4 at once).
/**
 * One session, with our plugin and without: session start, a write before any recall, the two
 * bash outputs, then the idle continuation. No check reads a request the others add: the
 * session-start check reads the first agent request, the guard and bash checks each read their
 * own tool result, and the idle check counts the requests ending in the save guidance (only the
 * continuation does) and wants it last, after a 12 s quiet period.
 */
const sessionPair = pairOf(
  (mode) => runOpencode(setup("session", mode, { turns: (c) => [afterContinuation, writeTurn(c), cutTurn(c), inlineTurn(c), done] }), "write a file, then count", { quietMs: 12_000 }),
  offline,
  slot,
);
/**
 * Kept apart from the session above: the compaction adds summariser requests after the idle
 * continuation, which the idle check would count. It carries the successful recall that unlocks
 * the write: the compaction check reads only the summariser's requests.
 */
const compactPair = pairOf((mode) => runOpencode(setup("compact", mode, { turns: (c) => [afterContinuation, recallTurn, writeTurn(c), done] }), "recall, then write", { compact: true }), offline, slot);
/**
 * Our plugin with the MCP fake answering isError AND no compiler: the recall fails (the write
 * must stay refused), and the bash output must stay as OpenCode gave it. The guard never runs the
 * compiler and the compiler never asks the MCP server, so neither fault hides the other's check.
 */
const faultsRun = once(() =>
  slot(async () => {
    const c = setup("recall-failed-no-compiler", "hooks", { turns: (c) => [afterContinuation, recallTurn, writeTurn(c), inlineTurn(c), done], mcp: { failing: true } });
    const r = await runOpencode(c, "recall, then write, then pad", { env: { VELESDB_MEMORY_BIN: path.join(E2E_DIR, "no-such-compiler") } });
    offline(r);
    return r;
  }),
);

describe("opencode", () => {
  test.concurrent("session start: the load guidance is a system message of the first agent request", async () => {
    const context = check("the first agent request has a system message carrying the load call", (r) => {
      const first = agentRequests(r)[0];
      if (!first) return ["no agent request"];
      return (first as { systemTexts?: string[] }).systemTexts?.some((t) => t.includes(LOAD_CALL)) ? [] : [`no system message carries ${LOAD_CALL}`];
    });
    proves(context, await sessionPair());
  }, 300_000);

  test.concurrent("write before recall: refused, the model reads why, the file is not written", async () => {
    proves(refused, await sessionPair());
  }, 300_000);

  test.concurrent("a failed recall (MCP isError) keeps the write refused; a successful one unlocks it", async () => {
    const [failed, { on: worked }] = await Promise.all([faultsRun(), compactPair()]);
    expectCheck(refused, failed).toPass();
    expectCheck(written, failed).toFail();
    expectCheck(written, worked).toPass();
    // The recall really reached the MCP fake in both runs (the difference is its answer).
    for (const r of [failed, worked]) expect(fs.readFileSync(r.case.mcpLog, "utf8")).toContain('"name":"recall_fused"');
  }, 300_000);

  test.concurrent("idle: one continuation carrying the save guidance, then the session stays idle", async () => {
    const continued = check("exactly one request ends in the save guidance, and it is the last one", (r) => {
      const continuations = r.requests.filter((q) => q.lastText.includes("save_working_context("));
      if (continuations.length !== 1) return [`${continuations.length} request(s) end in the save guidance, expected 1`];
      return r.requests.at(-1) === continuations[0] ? [] : ["requests followed the continuation"];
    });
    proves(continued, await sessionPair());
  }, 300_000);

  test.concurrent("compaction: the summariser's prompt carries our instructions", async () => {
    // The summariser's system prompt opens "You are a context summarization agent" (every agent
    // prompt of OpenCode's mentions "summar" too), and its user message quotes the whole
    // conversation inside <conversation>…</conversation>: the idle continuation, which carries the
    // save call as well, is quoted there. Only what follows the quote is the prompt our context
    // is pushed onto; a check of the whole message passed with the compaction hook broken.
    const instructed = check("a summariser request carries the save call after the quoted conversation", (r) => {
      const summariser = r.requests.filter((q) => (q as { systemTexts?: string[] }).systemTexts?.some((t) => t.includes("context summarization")));
      if (summariser.length === 0) return ["no summariser request"];
      const afterQuote = (q: LoggedRequest): string => q.lastText.slice(q.lastText.lastIndexOf("</conversation>") + 1);
      return summariser.some((q) => q.lastText.includes("</conversation>") && afterQuote(q).includes(SAVE_CALL)) ? [] : [`no summariser request carries ${SAVE_CALL} after the quoted conversation`];
    });
    proves(instructed, await compactPair());
  }, 300_000);

  test.concurrent("bash: an oversized output OpenCode cut is replaced by the compiled view of its whole saved file, with that file's path", async () => {
    const compiled = check("the model reads the compiled view of the whole saved file (every failure and the summary) and the saved file's path", (r) => {
      const result = bashResult(r, CUT_COMMAND);
      if (result === undefined) return ["the bash call never answered"];
      if (!result.includes("E2E-COMPILED")) return ["no compiled view reached the model"];
      const p: string[] = [];
      const saved = /saved at "([^"]+)"/.exec(result)?.[1];
      if (!saved || !fs.existsSync(saved)) return [...p, "the named file does not exist"];
      const whole = fs.readFileSync(saved, "utf8");
      if (whole.trimEnd().split("\n").length !== 2400) p.push("the named file does not hold the 2400 paths");
      p.push(...lostLines(result, whole, CUT_RUNNER));
      if (result.split("\nassets/").length > 200) p.push("the raw output reached the model too");
      return p;
    });
    proves(compiled, await sessionPair());
  }, 300_000);

  test.concurrent("bash: an oversized output OpenCode kept whole is replaced, the archive holds all of it; without a compiler it stays as it was", async () => {
    const [pair, missing] = await Promise.all([sessionPair(), faultsRun()]);
    proves(inlineCompiled, pair);
    expect(pair.on.exitCode).toBe(0);
    // The compiler missing: the plugin is there, the output stays untouched.
    expectCheck(inlineCompiled, missing).toFail();
    expect(bashResult(missing, INLINE_COMMAND)).toMatch(/\nnot ok \d+ - trims the title\n/);
  }, 300_000);
});
