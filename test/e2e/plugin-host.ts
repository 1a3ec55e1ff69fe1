// The end-to-end suite of an agent whose hooks are our in-process plugin: OpenCode and its
// fork Kilo Code (test/hosts/opencode/opencode.e2e.test.ts, test/hosts/kilo/kilo.e2e.test.ts). The real CLI,
// offline with no login (a custom `@ai-sdk/openai-compatible` provider pointed at the
// chat-completions mock on 127.0.0.1), the fake velesdb-memory MCP server, and our plugin written
// by our own installer (`velesdb-hooks install --client <host>`). The host runs served
// (`<host> serve` + `<host> run --attach`): `run` alone exits at the first idle and would cut
// the Stop continuation off. Each scenario runs again without our plugin (or without the one
// thing it depends on) and the same check must then fail. Every run also proves nothing left
// 127.0.0.1 (the trap proxy). A run costs ~11 CPU s, so scenarios whose checks read different
// parts of one session share its runs (5 runs for 7 tests; see "The shared runs").
import { chatHostSuite, optedInCase } from "./chat-host.ts";
import { describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { realCommand } from "../support/real-outputs.ts";
import {
  assertOffline,
  check,
  compiledKeepingWhole,
  editGuardChecks,
  expectCheck,
  expectRecallGate,
  findViewProblems,
  hostSlots,
  once,
  pairOf,
  proves,
  type Pair,
} from "./checks.ts";
import {
  mcpArgs,
  baseEnv,
  E2E_DIR,
  FAKE_MCP,
  runInstaller,
  runProcess,
  type E2ECase,
  type Mode,
  type RunResult,
  E2E_LOAD_CALL,
  E2E_SAVE_CALL,
  chatRequests,
} from "./harness.ts";
import type { LoggedRequest } from "./mock-llm.ts";
import { chatText, chatTool, toolResultFor, toolResultsOf, type ChatTurn } from "./mock-openai-chat.ts";

const CUT_RUNNER = "find";
const INLINE_RUNNER = "node --test: 2 failures among 190";
const [CUT_COMMAND, INLINE_COMMAND] = (() => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "vh-e2e-command-"));
  try {
    return [realCommand(CUT_RUNNER, scratch).command, realCommand(INLINE_RUNNER, scratch).command];
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
})();

/**
 * postToolRecords(r) → the stats lines our post-tool hook wrote in the case (docs/stats.md:
 * counts, outcome and duration, never output text), so a compression that did not happen says
 * why (a deadline, a compiler failure) in the failure CI prints.
 */
function postToolRecords(r: RunResult): string[] {
  const lines: string[] = [];
  for (const state of fs.readdirSync(r.case.tmp).filter((name) => name.startsWith("velesdb-agent-hooks-"))) {
    const dir = path.join(r.case.tmp, state, "stats");
    if (!fs.existsSync(dir)) continue;
    for (const day of fs.readdirSync(dir))
      lines.push(
        ...fs
          .readFileSync(path.join(dir, day), "utf8")
          .split("\n")
          .filter((l) => l.includes('"tool.execute.after"')),
      );
  }
  return lines.length > 0 ? lines : ["none"];
}

/** What differs between the plugin hosts, as the suite drives them. */
export interface PluginHost {
  /** The installer's client, the config directory under ~/.config and the describe label. */
  readonly name: string;
  /** The host's native binary (test/e2e/host-bins.ts). */
  readonly bin: string;
  /** The config file holding the provider and the MCP server: opencode.json, kilo.json. */
  readonly configFile: string;
  /** The package the host installs into its config directory at start, and its version. */
  readonly pluginPackage: readonly [string, string];
  /** The host's switches for an offline run (no models.dev fetch, no telemetry). */
  readonly env: Readonly<Record<string, string>>;
  /** Keys of the config file besides the provider, model and MCP server (Kilo: its own gateway off). */
  readonly config?: Readonly<Record<string, unknown>>;
  /** afterSetup(c, mode) → extra files of a case, after our installer ran in "hooks" mode. */
  afterSetup?(c: E2ECase, mode: Mode): void;
}

/** The shared runs of a suite, for a host file's own tests (see pluginHostSuite). */
export interface PluginHostRuns {
  readonly sessionPair: () => Promise<Pair>;
  readonly compactPair: () => Promise<Pair>;
  readonly faultsRun: () => Promise<RunResult>;
}

/** pluginHostSuite(host) → registers the suite's tests under describe(host.name) and returns its shared runs. */
export function pluginHostSuite(host: PluginHost): PluginHostRuns {
  const suite = chatHostSuite([host.bin]);

  interface Setup {
    turns: (c: E2ECase) => ChatTurn[];
    mcp?: { failing?: boolean };
  }

  function writeFile(file: string, text: string): void {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }

  /** setup(name, mode, …) → a case with the mock provider and the MCP fake in the host's config file and, in "hooks" mode, our installer run. */
  function setup(name: string, mode: Mode, options: Setup): E2ECase {
    const c = suite.openCase(`${host.name}-${name}-${mode}`, options.turns, optedInCase(options.mcp?.failing));
    const configDir = path.join(c.home, ".config", host.name);
    const mcpCommand = ["node", ...mcpArgs(c)];
    writeFile(
      path.join(configDir, host.configFile),
      JSON.stringify({
        provider: {
          mock: {
            npm: "@ai-sdk/openai-compatible",
            name: "Mock",
            options: { baseURL: suite.chat.baseUrl(c.scenario), apiKey: "dummy" },
            models: { "mock-model": { name: "Mock" } },
          },
        },
        model: "mock/mock-model",
        mcp: { "velesdb-memory": { type: "local", command: mcpCommand, enabled: true } },
        ...host.config,
      }),
    );
    // OpenCode (and Kilo) runs `npm install <its plugin package>` in its config directory at start
    // and waits for it (~70 s offline) unless a node_modules/ and a lockfile naming the package
    // are there, as after one online run. Our plugin needs none of it.
    const [pkg, version] = host.pluginPackage;
    fs.mkdirSync(path.join(configDir, "node_modules"), { recursive: true });
    writeFile(path.join(configDir, "package.json"), `${JSON.stringify({ dependencies: { [pkg]: version } })}\n`);
    writeFile(
      path.join(configDir, "package-lock.json"),
      `${JSON.stringify({ name: host.name, lockfileVersion: 3, requires: true, packages: { "": { dependencies: { [pkg]: version } }, [`node_modules/${pkg}`]: { version } } })}\n`,
    );
    if (mode === "hooks") runInstaller(c, host.name, "install");
    host.afterSetup?.(c, mode);
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
      const now = suite.chat.requests(c.scenario).length;
      if (now !== count) {
        count = now;
        stableSince = Date.now();
      } else if (Date.now() - stableSince >= quietMs) return;
      await sleep(250);
    }
  }

  /** runHost(c, prompt) → `<host> serve` in the workspace, `<host> run --attach` against it, then the served session left to settle. */
  async function runHost(c: E2ECase, prompt: string, options: RunOptions = {}): Promise<RunResult> {
    const env = { ...baseEnv(c), ...host.env, VELESDB_MEMORY_BIN: FAKE_MCP, ...options.env };
    const server = spawn(host.bin, ["serve", "--port", "0", "--hostname", "127.0.0.1"], {
      cwd: c.workspace,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
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
      if (url === undefined) throw new Error(`${host.name} serve did not start: ${serverOut.slice(0, 2000)}`);
      const result = await runProcess([host.bin, "run", "--attach", url, prompt], env, c.workspace, 150_000);
      await settle(c, options.quietMs);
      if (options.compact) {
        const sessions = (await (await fetch(`${url}/session`)).json()) as Array<{ id: string }>;
        const id = sessions[0]?.id;
        if (id === undefined) throw new Error("no session to compact");
        await fetch(`${url}/session/${id}/summarize`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ providerID: "mock", modelID: "mock-model" }),
        });
        await settle(c);
      }
      const { requests, allRequests } = chatRequests(suite.llm, suite.chat, c);
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
  const offline = (r: RunResult): void => assertOffline(r, suite.llm.escaped());

  /** Every tool result the model was shown (deduplicated by call id). */
  const _toolResults = (r: RunResult): string[] => toolResultsOf(r.requests);

  /** bashResult(r, command) → what the model was shown for the bash call running `command` (one session may run several). */
  const bashResult = (r: RunResult, command: string): string | undefined =>
    toolResultFor(r.requests, "bash", (args) => args.command === command);

  /** The agent's requests (they offer tools), not OpenCode's title generator. */
  const agentRequests = (r: RunResult): LoggedRequest[] =>
    r.requests.filter((q) => Array.isArray((q.body as { tools?: unknown })?.tools));

  const guardedFile = (c: E2ECase): string => path.join(c.workspace, "guarded.txt");
  const writeTurn = (c: E2ECase): ChatTurn => ({
    reply: chatTool("write", { filePath: guardedFile(c), content: "x\n" }),
  });
  const recallTurn: ChatTurn = { reply: chatTool("velesdb-memory_recall_fused", { query: "guarded.txt" }) };
  const done: ChatTurn = { reply: chatText("DONE answer") };
  const afterContinuation: ChatTurn = {
    matchLast: /Before this session ends, |Learning checkpoint/,
    reply: chatText("AFTER CONTINUATION"),
  };
  // Two bash outputs over our threshold, made by real tools in the workspace
  // (test/support/real-outputs.ts): `find` over 2400 generated files (≈81 KB in 2400 lines, above
  // OpenCode's own cut: it keeps the tail and saves the output to a file) and node --test (≈15.5 KB,
  // under it: kept whole). Measured on OpenCode 1.18.33: pytest -v's 50 KB in 620 lines stays
  // under the cut; a Python traceback after 3000 progress lines (≈114 KB) is saved without its
  // first 222 lines (the file holds ≈103 KiB) and without the traceback, which the model then
  // never reads. The commands do not name the workspace, so each is one string for every case.
  const cutTurn = (c: E2ECase): ChatTurn => ({
    reply: chatTool("bash", { command: realCommand(CUT_RUNNER, c.workspace).command, description: "list the assets" }),
  });
  const inlineTurn = (c: E2ECase): ChatTurn => ({
    reply: chatTool("bash", {
      command: realCommand(INLINE_RUNNER, c.workspace).command,
      description: "run the node tests",
    }),
  });

  const guard = editGuardChecks(guardedFile, "write");
  const { refused } = guard;
  const inlineCompiled = compiledKeepingWhole(
    (r) => bashResult(r, INLINE_COMMAND),
    INLINE_RUNNER,
    (stored) => (stored.split("\nok ").length === 191 ? "" : "190 passes"),
  );

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
    (mode) =>
      runHost(
        setup("session", mode, { turns: (c) => [afterContinuation, writeTurn(c), cutTurn(c), inlineTurn(c), done] }),
        "write a file, then count",
        { quietMs: 12_000 },
      ),
    offline,
    slot,
  );
  /**
   * Kept apart from the session above: the compaction adds summariser requests after the idle
   * continuation, which the idle check would count. It carries the successful recall that unlocks
   * the write: the compaction check reads only the summariser's requests.
   */
  const compactPair = pairOf(
    (mode) =>
      runHost(
        setup("compact", mode, { turns: (c) => [afterContinuation, recallTurn, writeTurn(c), done] }),
        "recall, then write",
        { compact: true },
      ),
    offline,
    slot,
  );
  /**
   * Our plugin with the MCP fake answering isError AND no compiler: the recall fails (the write
   * must stay refused), and the bash output must stay as OpenCode gave it. The guard never runs the
   * compiler and the compiler never asks the MCP server, so neither fault hides the other's check.
   */
  const faultsRun = once(() =>
    slot(async () => {
      const c = setup("recall-failed-no-compiler", "hooks", {
        turns: (c) => [afterContinuation, recallTurn, writeTurn(c), inlineTurn(c), done],
        mcp: { failing: true },
      });
      const r = await runHost(c, "recall, then write, then pad", {
        env: { VELESDB_MEMORY_BIN: path.join(E2E_DIR, "no-such-compiler") },
      });
      offline(r);
      return r;
    }),
  );

  describe(host.name, () => {
    test.concurrent("session start: the load guidance is a system message of the first agent request", async () => {
      const context = check("the first agent request has a system message carrying the load call", (r) => {
        const first = agentRequests(r)[0];
        if (!first) return ["no agent request"];
        return (first as { systemTexts?: string[] }).systemTexts?.some((t) => t.includes(E2E_LOAD_CALL))
          ? []
          : [`no system message carries ${E2E_LOAD_CALL}`];
      });
      proves(context, await sessionPair());
    }, 300_000);

    test.concurrent("write before recall: refused, the model reads why, the file is not written", async () => {
      proves(refused, await sessionPair());
    }, 300_000);

    test.concurrent("a failed recall (MCP isError) keeps the write refused; a successful one unlocks it", async () => {
      const [failed, { on: worked }] = await Promise.all([faultsRun(), compactPair()]);
      expectRecallGate(guard, failed, worked);
    }, 300_000);

    test.concurrent("idle: one continuation carrying the save guidance, then the session stays idle", async () => {
      // Agent requests only: Kilo titles the session again after the continuation's user
      // message (a request without tools), OpenCode does not.
      const continued = check("exactly one agent request ends in the save guidance, and it is the last one", (r) => {
        const agent = agentRequests(r);
        const continuations = agent.filter((q) => q.lastText.includes("save_working_context("));
        if (continuations.length !== 1)
          return [`${continuations.length} agent request(s) end in the save guidance, expected 1`];
        return agent.at(-1) === continuations[0] ? [] : ["agent requests followed the continuation"];
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
        const summariser = r.requests.filter((q) =>
          (q as { systemTexts?: string[] }).systemTexts?.some((t) => t.includes("context summarization")),
        );
        if (summariser.length === 0) return ["no summariser request"];
        const afterQuote = (q: LoggedRequest): string =>
          q.lastText.slice(q.lastText.lastIndexOf("</conversation>") + 1);
        return summariser.some((q) => q.lastText.includes("</conversation>") && afterQuote(q).includes(E2E_SAVE_CALL))
          ? []
          : [`no summariser request carries ${E2E_SAVE_CALL} after the quoted conversation`];
      });
      proves(instructed, await compactPair());
    }, 300_000);

    test.concurrent("bash: an oversized output OpenCode cut is replaced by the compiled view of its whole saved file, with that file's path", async () => {
      const compiled = check(
        "the model reads the compiled view of the whole saved file (every line find marks) and the saved file's path",
        (r) => {
          const result = bashResult(r, CUT_COMMAND);
          if (result === undefined) return ["the bash call never answered"];
          if (!result.includes("E2E-COMPILED"))
            return ["no compiled view reached the model", ...postToolRecords(r).map((line) => `hook record: ${line}`)];
          const saved = /saved at "([^"]+)"/.exec(result)?.[1];
          if (!saved || !fs.existsSync(saved)) return ["the named file does not exist"];
          return findViewProblems(result, fs.readFileSync(saved, "utf8"), "host");
        },
      );
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
  return { sessionPair, compactPair, faultsRun };
}
