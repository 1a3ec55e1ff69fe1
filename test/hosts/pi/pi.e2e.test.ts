// Pi coding agent end to end: the real CLI (@mariozechner/pi-coding-agent 0.73.1 with the MCP
// extension pi-mcp-adapter 2.11.0; `npm run e2e:latest` runs the renamed current line instead,
// test/e2e/host-bins.ts), offline (`--offline`, a models.json provider pointed at the
// chat-completions mock on 127.0.0.1, no login), the fake velesdb-memory MCP server in the
// adapter's ~/.pi/agent/mcp.json, and our extension written by our own installer
// (`velesdb-hooks install --client pi`). One `pi -p` run per scenario: Pi queues the Stop
// continuation as a follow-up, which `-p` still sends. Each scenario runs again without our
// extension (or without the one thing it depends on) and the same check must then fail; every
// run proves nothing left 127.0.0.1. A spy on the installed binary records what the extension
// sent each hook.
import { chatHostSuite, optedInCase } from "../../e2e/chat-host.ts";
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { realCommand } from "../../support/real-outputs.ts";
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
  userMessageInFirstRequest,
} from "../../e2e/checks.ts";
import {
  mcpArgs,
  doubleLauncher,
  baseEnv,
  E2E_DIR,
  FAKE_MCP,
  runInstaller,
  runProcess,
  spiedRuns,
  spyOnInstalledHooks,
  type E2ECase,
  type Mode,
  type RunResult,
  E2E_LOAD_CALL,
  E2E_SAVE_CALL,
  writeFileMaking,
  chatRequests,
} from "../../e2e/harness.ts";
import { HOST_BINS } from "../../e2e/host-bins.ts";
import { chatText, chatTool, toolResultFor, type ChatTurn } from "../../e2e/mock-openai-chat.ts";

const suite = chatHostSuite([HOST_BINS.piCli, HOST_BINS.piMcpAdapter, HOST_BINS.qwenNode]);

/** setup(name, mode, …) → a case with the mock provider, the MCP adapter and its server config and, in "hooks" mode, our installer run (and a spy on its binary). */
function setup(
  name: string,
  mode: Mode,
  options: { turns: (c: E2ECase) => ChatTurn[]; mcp?: { failing?: boolean; viaInstaller?: boolean } },
): E2ECase {
  const c = suite.openCase(`pi-${name}-${mode}`, options.turns, optedInCase(options.mcp?.failing));
  const agent = path.join(c.home, ".pi", "agent");
  const provider = {
    baseUrl: suite.chat.baseUrl(c.scenario),
    api: "openai-completions",
    apiKey: "dummy",
    compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
    models: [{ id: "mock-model" }],
  };
  writeFileMaking(path.join(agent, "models.json"), JSON.stringify({ providers: { mock: provider } }));
  // The MCP extension as a user who installed it has it: listed in settings.json.
  writeFileMaking(path.join(agent, "settings.json"), JSON.stringify({ extensions: [HOST_BINS.piMcpAdapter] }));
  if (options.mcp?.viaInstaller) {
    // `install --mcp` writes the server into the adapter's ~/.pi/agent/mcp.json itself.
    runInstaller(c, "pi", "install", { VELESDB_MEMORY_BIN: doubleLauncher(c) }, ["--mcp"]);
  } else {
    writeFileMaking(
      path.join(agent, "mcp.json"),
      JSON.stringify({ mcpServers: { "velesdb-memory": { command: "node", args: mcpArgs(c) } } }),
    );
    if (mode === "hooks") runInstaller(c, "pi", "install");
  }
  if (mode === "hooks") spyOnInstalledHooks(c.home);
  return c;
}

async function runPi(c: E2ECase, prompt: string, env: Record<string, string> = {}): Promise<RunResult> {
  const argv = [
    HOST_BINS.qwenNode,
    HOST_BINS.piCli,
    "--offline",
    "--no-session",
    "--provider",
    "mock",
    "--model",
    "mock-model",
    "-p",
    prompt,
  ];
  const result = await runProcess(
    argv,
    { ...baseEnv(c), PI_OFFLINE: "1", VELESDB_MEMORY_BIN: FAKE_MCP, ...env },
    c.workspace,
    150_000,
  );
  const { requests, allRequests } = chatRequests(suite.llm, suite.chat, c);
  return { ...result, requests, allRequests, case: c };
}

const slot = hostSlots(3);
const offline = (r: RunResult): void => assertOffline(r, suite.llm.escaped());
const spied = (r: RunResult) => spiedRuns(path.join(r.case.home, ".velesdb-hooks", "spy"));

/** bashResult(r, command) → what the model was shown for the bash call running `command`. */
const bashResult = (r: RunResult, command: string): string | undefined =>
  toolResultFor(r.requests, "bash", (args) => args.command === command);

const guardedFile = (c: E2ECase): string => path.join(c.workspace, "guarded.txt");
const writeTurn = (c: E2ECase): ChatTurn => ({ reply: chatTool("write", { path: guardedFile(c), content: "x\n" }) });
// pi-mcp-adapter's proxy tool: `args` is a JSON string.
const recallTurn: ChatTurn = {
  reply: chatTool("mcp", { tool: "velesdb_memory_recall_fused", args: JSON.stringify({ query: "guarded.txt" }) }),
};
const done: ChatTurn = { reply: chatText("DONE answer") };
const afterContinuation: ChatTurn = {
  matchLast: /Before this session ends, |Learning checkpoint/,
  reply: chatText("AFTER CONTINUATION"),
};
// Two bash outputs over our threshold, made by real tools in the workspace
// (test/support/real-outputs.ts): `find` over 2400 generated files (≈81 KB in 2400 lines, above
// Pi's own cut of 2000 lines or 50 KB: it keeps the tail and saves the whole output to a file)
// and node --test (≈15.5 KB, under it: kept whole). node --test exits 1 on its two failures and
// Pi leaves a failed command's output alone (src/hosts/pi.ts), so its command ends in `exit 0`.
// The commands do not name the workspace, so each is one string for every case.
const CUT_RUNNER = "find";
const INLINE_RUNNER = "node --test: 2 failures among 190";
const commandIn = (runner: string, dir: string): string =>
  realCommand(runner, dir, { exitZero: runner === INLINE_RUNNER }).command;
const [CUT_COMMAND, INLINE_COMMAND] = (() => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "vh-e2e-command-"));
  try {
    return [commandIn(CUT_RUNNER, scratch), commandIn(INLINE_RUNNER, scratch)];
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
})();
const cutTurn = (c: E2ECase): ChatTurn => ({
  reply: chatTool("bash", { command: commandIn(CUT_RUNNER, c.workspace) }),
});
const inlineTurn = (c: E2ECase): ChatTurn => ({
  reply: chatTool("bash", { command: commandIn(INLINE_RUNNER, c.workspace) }),
});

const guard = editGuardChecks(guardedFile, "write");
const { refused } = guard;
const inlineCompiled = compiledKeepingWhole(
  (r) => bashResult(r, INLINE_COMMAND),
  INLINE_RUNNER,
  (stored) => (stored.split("\nok ").length === 191 ? "" : "190 passes"),
);

/** One session, with our extension and without: the context, a write before any recall, both bash outputs, then the Stop continuation. */
const sessionPair = pairOf(
  (mode) =>
    runPi(
      setup("session", mode, { turns: (c) => [afterContinuation, writeTurn(c), cutTurn(c), inlineTurn(c), done] }),
      "write a file, then count",
    ),
  offline,
  slot,
);
/**
 * With our extension and the server `install --mcp` wrote: a recall the MCP fake fails (and no
 * compiler for the bash output), and one it answers, each before the write.
 */
const recallRuns = once(() => {
  const run = (failing: boolean) =>
    slot(async () => {
      const c = setup(`recall-${failing ? "failed" : "ok"}`, "hooks", {
        turns: (c) => [afterContinuation, recallTurn, writeTurn(c), ...(failing ? [inlineTurn(c)] : []), done],
        mcp: { failing, viaInstaller: true },
      });
      const r = await runPi(
        c,
        "recall, then write",
        failing ? { VELESDB_MEMORY_BIN: path.join(E2E_DIR, "no-such-compiler") } : {},
      );
      offline(r);
      return r;
    });
  return Promise.all([run(true), run(false)]);
});

describe("pi", () => {
  test.concurrent("session start: the load guidance is a message of the first request", async () => {
    const context = userMessageInFirstRequest(E2E_LOAD_CALL);
    proves(context, await sessionPair());
  }, 300_000);

  test.concurrent("write before recall: refused, the model reads why, the file is not written", async () => {
    proves(refused, await sessionPair());
  }, 300_000);

  test.concurrent("a failed recall (MCP isError) keeps the write refused; a successful one unlocks it", async () => {
    const [failed, worked] = await recallRuns();
    expectRecallGate(guard, failed, worked);
    // What the extension sent: the adapter's proxy call, with the server and tool it reached. A
    // failed call's details name no server in pi-mcp-adapter 2.11.0 ({error: "tool_error",
    // mcpResult}), so it is not sent; 2.36.0 (the current Pi line) names it, flagged isError.
    const recall = (r: RunResult) =>
      spied(r).find((run) => run.argv.join(" ") === "pi post-tool-use" && run.payload?.tool_name === "mcp")?.payload;
    expect(recall(worked)?.tool_response).toMatchObject({ server: "velesdb-memory", tool: "recall_fused" });
    const sentFailure = recall(failed)?.tool_response;
    if (sentFailure !== undefined) expect(sentFailure).toMatchObject({ server: "velesdb-memory", isError: true });
  }, 300_000);

  test.concurrent("Stop: one continuation carrying the save guidance, then the run ends", async () => {
    const continued = check("exactly one request ends in the save call, and it is the last one", (r) => {
      const continuations = r.requests.filter((q) => q.lastText.includes(E2E_SAVE_CALL));
      if (continuations.length !== 1) return [`${continuations.length} request(s) end in ${E2E_SAVE_CALL}, expected 1`];
      return r.requests.at(-1) === continuations[0] ? [] : ["requests followed the continuation"];
    });
    proves(continued, await sessionPair());
    expect((await sessionPair()).on.exitCode).toBe(0);
  }, 300_000);

  test.concurrent("bash: an output Pi cut is replaced by the compiled view of its whole saved file", async () => {
    const compiled = check(
      "the model reads the compiled view of the whole saved file (every line find marks), with an archive of it",
      (r) => {
        const result = bashResult(r, CUT_COMMAND);
        if (result === undefined) return ["the bash call never answered"];
        if (!result.includes("E2E-COMPILED")) return ["no compiled view reached the model"];
        const archive = /saved at "([^"]+)"/.exec(result)?.[1];
        if (!archive || !fs.existsSync(archive)) return ["no archive named"];
        return findViewProblems(
          result,
          (JSON.parse(fs.readFileSync(archive, "utf8")) as { stdout?: string }).stdout ?? "",
        );
      },
    );
    proves(compiled, await sessionPair());
  }, 300_000);

  test.concurrent("bash: an output Pi kept whole is replaced, the archive holds all of it; without a compiler it stays as it was", async () => {
    const [pair, [missing]] = await Promise.all([sessionPair(), recallRuns()]);
    proves(inlineCompiled, pair);
    expectCheck(inlineCompiled, missing).toFail();
    expect(bashResult(missing, INLINE_COMMAND)).toMatch(/\nnot ok \d+ - trims the title\n/);
  }, 300_000);

  test.concurrent("uninstall after a session deletes our extension and nothing else", async () => {
    const { on } = await sessionPair();
    const extensions = path.join(on.case.home, ".pi", "agent", "extensions");
    expect(fs.readdirSync(extensions)).toEqual(["velesdb-hooks.ts"]);
    runInstaller(on.case, "pi", "uninstall");
    expect(fs.existsSync(path.join(extensions, "velesdb-hooks.ts"))).toBe(false);
    expect(fs.readFileSync(path.join(on.case.home, ".pi", "agent", "mcp.json"), "utf8")).toContain('"velesdb-memory"');
  }, 300_000);
});
