// Factory Droid end to end: the real CLI (@factory/cli-linux-x64 0.225.2, its `bin/droid` run
// directly: the loader @factory/cli 0.225.1 wants a platform package that was never
// published), offline with no login (a BYOK `customModels` entry pointed at the chat-completions
// mock on 127.0.0.1), the fake velesdb-memory MCP server in ~/.factory/mcp.json, and our hooks
// registered by our own installer (`velesdb-hooks install --client droid`) in the same
// ~/.factory/settings.json. Each scenario runs again without our hooks (or without the one thing
// it depends on) and the same check must then fail. Droid 0.225.2 tries Factory's own service
// (CONNECT api.factory.ai:443, telemetry.factory.ai:443) even with a BYOK model: the trap proxy
// refuses those, and every run proves nothing else tried to leave 127.0.0.1 (assertOfflineButFactory).
// SessionStart, the guard and Stop are read from different parts of one session and share its
// runs (see "The shared runs").
import { chatHostSuite, optedInCase } from "../../e2e/chat-host.ts";
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { assertOffline, check, expectCheck, hostSlots, once, pairOf, proves } from "../../e2e/checks.ts";
import {
  mcpArgs,
  runInstaller,
  type E2ECase,
  type Mode,
  type RunResult,
  E2E_LOAD_CALL,
  E2E_SAVE_CALL,
  writeFileMaking,
  chatRequests,
} from "../../e2e/harness.ts";
import { DROID_BIN, droidCustomModel, runDroidExec } from "./droid-harness.ts";
import {
  chatText,
  chatTool,
  messagesOf,
  messageText,
  toolResultsOf,
  type ChatTurn,
} from "../../e2e/mock-openai-chat.ts";

const suite = chatHostSuite([DROID_BIN]);

/** setup(name, mode, …) → a case with the BYOK model in ~/.factory/settings.json, the MCP fake in ~/.factory/mcp.json and, in "hooks" mode, our installer run. */
function setup(
  name: string,
  mode: Mode,
  options: { turns: (c: E2ECase) => ChatTurn[]; mcp?: { failing?: boolean } },
): E2ECase {
  const c = suite.openCase(`droid-${name}-${mode}`, options.turns, optedInCase(options.mcp?.failing));
  const factory = path.join(c.home, ".factory");
  writeFileMaking(
    path.join(factory, "settings.json"),
    `{\n  // the user's own BYOK model\n  "customModels": [${JSON.stringify(droidCustomModel(c, suite.chat))}]\n}\n`,
  );
  const args = mcpArgs(c);
  writeFileMaking(
    path.join(factory, "mcp.json"),
    JSON.stringify({ mcpServers: { "velesdb-memory": { type: "stdio", command: "node", args } } }),
  );
  if (mode === "hooks") runInstaller(c, "droid", "install");
  return c;
}

async function runDroid(c: E2ECase, prompt: string): Promise<RunResult> {
  const result = await runDroidExec(c, prompt);
  const { requests, allRequests } = chatRequests(suite.llm, suite.chat, c);
  return { ...result, requests, allRequests, case: c };
}

/** The trap's log, less the refused attempts to reach Factory's own service, must be empty. */
function assertOfflineButFactory(r: RunResult): void {
  assertOffline(
    r,
    suite.llm.escaped().filter((line) => !/^CONNECT (api|telemetry)\.factory\.ai:443 /.test(line)),
  );
}

// Droid costs less than a served OpenCode, but CI has 2 cores: 4 host runs at most at once.
const slot = hostSlots(4);

/** Every tool result the model was shown (deduplicated by call id). */
const toolResults = (r: RunResult): string[] => toolResultsOf(r.requests);

const guardedFile = (c: E2ECase): string => path.join(c.workspace, "guarded.txt");
const createTurn = (c: E2ECase): ChatTurn => ({
  reply: chatTool("Create", { file_path: guardedFile(c), content: "x\n" }),
});
const recallTurn: ChatTurn = { reply: chatTool("velesdb-memory___recall_fused", { query: "guarded.txt" }) };
const done: ChatTurn = { reply: chatText("DONE answer") };
const afterContinuation: ChatTurn = {
  matchLast: /Before this session ends, |Learning checkpoint/,
  reply: chatText("AFTER CONTINUATION"),
};

const refused = check("the Create was refused with our reason, and the file was not written", (r) => {
  const p: string[] = [];
  if (fs.existsSync(guardedFile(r.case))) p.push("guarded.txt was written");
  if (!toolResults(r).some((t) => t.includes("velesdb-hooks refused this edit") && t.includes("recall_fused")))
    p.push("no tool result carrying our refusal reached the model");
  return p;
});

// The shared runs, each made once by the first test that needs it; the tests run concurrently.
/**
 * One session, with our hooks and without: SessionStart, a Create before any recall, then Stop.
 * The SessionStart check reads the first request, the guard check the Create's result and the
 * file, the Stop check the requests ending in the save call (only the continuation does) and the
 * exit: none of them reads what another scenario's turn adds.
 */
const sessionPair = pairOf(
  (mode) =>
    runDroid(setup("session", mode, { turns: (c) => [afterContinuation, createTurn(c), done] }), "write a file"),
  assertOfflineButFactory,
  slot,
);
const recallRuns = once(() => {
  const run = (failing: boolean) =>
    slot(async () => {
      const r = await runDroid(
        setup(`recall-${failing ? "failed" : "ok"}`, "hooks", {
          turns: (c) => [afterContinuation, recallTurn, createTurn(c), done],
          mcp: { failing },
        }),
        "recall, then write",
      );
      assertOfflineButFactory(r);
      return r;
    });
  return Promise.all([run(true), run(false)]);
});

describe("droid", () => {
  test.concurrent("SessionStart: the load guidance is a user message after the system message of the first request", async () => {
    const context = check(
      "the first request carries the load call in a user message, and no bare `{}` message",
      (r) => {
        const first = r.requests[0];
        if (!first) return ["no model request"];
        const messages = messagesOf(first.body);
        const at = messages.findIndex((m) => m?.role === "user" && messageText(m).includes(E2E_LOAD_CALL));
        const p: string[] = [];
        if (at < 0) p.push(`no user message carries ${E2E_LOAD_CALL}`);
        else if (messages[0]?.role !== "system" || at < 1) p.push("the context is not after the system message");
        if (messages.some((m) => m?.role === "user" && messageText(m).trim() === "{}"))
          p.push("a bare {} reached the model");
        return p;
      },
    );
    proves(context, await sessionPair());
  }, 240_000);

  test.concurrent("Create before recall: refused, the model reads why, the file is not written", async () => {
    proves(refused, await sessionPair());
  }, 240_000);

  test.concurrent("a failed recall (MCP isError) keeps the Create refused; a successful one unlocks it", async () => {
    const written = check("the Create after the recall went through", (r) =>
      fs.existsSync(guardedFile(r.case)) ? [] : ["guarded.txt was not written"],
    );
    const [failed, worked] = await recallRuns();
    expectCheck(refused, failed).toPass();
    expectCheck(written, failed).toFail();
    expectCheck(written, worked).toPass();
    for (const r of [failed, worked]) expect(fs.readFileSync(r.case.mcpLog, "utf8")).toContain('"name":"recall_fused"');
  }, 240_000);

  test.concurrent("Stop: one continuation carrying the save guidance, then the run ends", async () => {
    const continued = check("exactly one request ends in the save call; the run exits 0 after its answer", (r) => {
      const p: string[] = [];
      const continuations = r.requests.filter((q) => q.lastText.includes(E2E_SAVE_CALL));
      if (continuations.length !== 1) p.push(`${continuations.length} request(s) end in ${E2E_SAVE_CALL}, expected 1`);
      if (r.exitCode !== 0 || r.timedOut) p.push(`exit ${r.exitCode}${r.timedOut ? " (timed out)" : ""}`);
      return p;
    });
    proves(continued, await sessionPair());
  }, 240_000);

  test("install keeps the user's settings; uninstall gives their bytes back", () => {
    const c = setup("install", "none", { turns: () => [done] });
    const settings = path.join(c.home, ".factory", "settings.json");
    const before = fs.readFileSync(settings, "utf8");
    runInstaller(c, "droid", "install");
    const installed = fs.readFileSync(settings, "utf8");
    expect(installed).toContain("customModels");
    expect(installed).toContain(" droid pre-tool-use");
    runInstaller(c, "droid", "uninstall");
    expect(fs.readFileSync(settings, "utf8")).toBe(before);
  });
});
