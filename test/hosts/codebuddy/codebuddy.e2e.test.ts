// CodeBuddy Code end to end: the real CLI (2.117.0, shipped whole inside
// @tencent-ai/agent-sdk 0.3.201 under cli/; its own npm package is not on the registry here),
// offline with no login (a models.json entry pointed at the chat-completions mock on 127.0.0.1),
// the fake velesdb-memory MCP server as a user-scope server in ~/.codebuddy/.mcp.json, and our
// hooks registered by our own installer (`velesdb-hooks install --client codebuddy`) in
// ~/.codebuddy/settings.json. CodeBuddy runs live (`--input-format stream-json`, stdin held open
// until the session has been quiet a while): plain `-p "PROMPT"` exits before it sends a Stop
// continuation. Each scenario runs again without our hooks (or without the one thing it depends
// on) and the same check must then fail; every run proves nothing left 127.0.0.1. A spy on the
// installed binary records what CodeBuddy handed each hook (a failed recall's payload included).
import { chatHostSuite, optedInCase } from "../../e2e/chat-host.ts";
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  assertOffline,
  check,
  editGuardChecks,
  expectRecallGate,
  hostSlots,
  once,
  pairOf,
  proves,
  userMessageInFirstRequest,
} from "../../e2e/checks.ts";
import {
  mcpArgs,
  doubleLauncher,
  runInstaller,
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
import { CODEBUDDY_BIN, runCodebuddyLive, writeCodebuddyModel } from "./codebuddy-harness.ts";
import { chatText, chatTool, type ChatTurn } from "../../e2e/mock-openai-chat.ts";

/** The user's own settings, kept byte for byte through install and uninstall. */
const USER_SETTINGS = '{\n  // mine\n  "language": "English"\n}\n';

const suite = chatHostSuite([CODEBUDDY_BIN]);

/** setup(name, mode, …) → a case with the mock model in ~/.codebuddy/models.json, the MCP fake as a user-scope server and, in "hooks" mode, our installer run (and a spy on its binary). */
function setup(
  name: string,
  mode: Mode,
  options: { turns: (c: E2ECase) => ChatTurn[]; mcp?: { failing?: boolean; viaInstaller?: boolean } },
): E2ECase {
  const c = suite.openCase(`codebuddy-${name}-${mode}`, options.turns, optedInCase(options.mcp?.failing));
  const dir = path.join(c.home, ".codebuddy");
  writeCodebuddyModel(c, suite.chat);
  writeFileMaking(path.join(dir, "settings.json"), USER_SETTINGS);
  if (options.mcp?.viaInstaller) {
    // `install --mcp` writes the server into the user scope itself (it creates ~/.codebuddy/.mcp.json).
    runInstaller(c, "codebuddy", "install", { VELESDB_MEMORY_BIN: doubleLauncher(c) }, ["--mcp"]);
  } else {
    writeFileMaking(
      path.join(dir, ".mcp.json"),
      JSON.stringify({
        mcpServers: { "velesdb-memory": { type: "stdio", command: "node", args: mcpArgs(c) } },
      }),
    );
    if (mode === "hooks") runInstaller(c, "codebuddy", "install");
  }
  if (mode === "hooks") spyOnInstalledHooks(c.home);
  return c;
}

/** runCodebuddy(c, prompt) → a live session (codebuddy-harness.ts runCodebuddyLive) and the scenario's requests. */
async function runCodebuddy(c: E2ECase, prompt: string, quietMs = 8000): Promise<RunResult> {
  const result = await runCodebuddyLive(c, suite.chat, prompt, quietMs);
  const { requests, allRequests } = chatRequests(suite.llm, suite.chat, c);
  return { ...result, requests, allRequests, case: c };
}

// Each run costs a Node start of a 16 MB bundle; CI has 2 cores.
const slot = hostSlots(3);
const offline = (r: RunResult): void => assertOffline(r, suite.llm.escaped());
const spied = (r: RunResult) => spiedRuns(path.join(r.case.home, ".velesdb-hooks", "spy"));

const guardedFile = (c: E2ECase): string => path.join(c.workspace, "guarded.txt");
const writeTurn = (c: E2ECase): ChatTurn => ({
  reply: chatTool("Write", { file_path: guardedFile(c), content: "x\n" }),
});
// A user-scope server's tools reach the model only behind DeferExecuteTool.
const recallTurn: ChatTurn = {
  reply: chatTool("DeferExecuteTool", {
    toolName: "mcp__velesdb-memory__recall_fused",
    params: { query: "guarded.txt" },
  }),
};
const done: ChatTurn = { reply: chatText("DONE answer") };
const afterContinuation: ChatTurn = {
  matchLast: /Before this session ends, |Learning checkpoint/,
  reply: chatText("AFTER CONTINUATION"),
};

const guard = editGuardChecks(guardedFile, "Write");
const { refused } = guard;

/** One live session, with our hooks and without: SessionStart, a Write before any recall, then Stop. */
const sessionPair = pairOf(
  (mode) =>
    runCodebuddy(setup("session", mode, { turns: (c) => [afterContinuation, writeTurn(c), done] }), "write a file"),
  offline,
  slot,
);
/** With our hooks and the server `install --mcp` wrote: a recall the MCP fake fails (isError), and one it answers, each before the Write. */
const recallRuns = once(() => {
  const run = (failing: boolean) =>
    slot(async () => {
      const r = await runCodebuddy(
        setup(`recall-${failing ? "failed" : "ok"}`, "hooks", {
          turns: (c) => [afterContinuation, recallTurn, writeTurn(c), done],
          mcp: { failing, viaInstaller: true },
        }),
        "recall, then write",
      );
      offline(r);
      return r;
    });
  return Promise.all([run(true), run(false)]);
});

describe("codebuddy", () => {
  test.concurrent("SessionStart: the load guidance is a hook reminder in the first user message", async () => {
    const context = userMessageInFirstRequest(E2E_LOAD_CALL);
    proves(context, await sessionPair());
  }, 300_000);

  test.concurrent("Write before recall: refused, the model reads why, the file is not written", async () => {
    proves(refused, await sessionPair());
  }, 300_000);

  test.concurrent("a failed recall (MCP isError, which reaches PostToolUse like a success) keeps the Write refused; a successful one unlocks it", async () => {
    const [failed, worked] = await recallRuns();
    expectRecallGate(guard, failed, worked);
    // What CodeBuddy handed the hook: the real tool's name, the content array, no error flag.
    const recallPayload = (r: RunResult) =>
      spied(r).find((run) => run.argv.join(" ") === "codebuddy post-tool-use")?.payload;
    const failedPayload = recallPayload(failed);
    expect(failedPayload?.tool_name).toBe("mcp__velesdb-memory__recall_fused");
    expect(JSON.stringify(failedPayload?.tool_response)).not.toContain("isError");
    expect(recallPayload(worked)?.tool_name).toBe("mcp__velesdb-memory__recall_fused");
  }, 300_000);

  test.concurrent("Stop: one continuation carrying the save guidance, then the session ends", async () => {
    const continued = check("exactly one request ends in the save call, and it is the last one", (r) => {
      const continuations = r.requests.filter((q) => q.lastText.includes(E2E_SAVE_CALL));
      if (continuations.length !== 1) return [`${continuations.length} request(s) end in ${E2E_SAVE_CALL}, expected 1`];
      return r.requests.at(-1) === continuations[0] ? [] : ["requests followed the continuation"];
    });
    proves(continued, await sessionPair());
    // The hook saw the continuation's Stop as stop_hook_active.
    const stops = spied((await sessionPair()).on)
      .filter((run) => run.argv.join(" ") === "codebuddy stop")
      .map((run) => run.payload?.stop_hook_active);
    expect(stops).toEqual([false, true]);
  }, 300_000);

  test.concurrent("uninstall after a session gives the user's settings.json back byte for byte", async () => {
    // The spy's records stay in ~/.velesdb-hooks/spy when uninstall removes the binary.
    const { on } = await sessionPair();
    const settings = path.join(on.case.home, ".codebuddy", "settings.json");
    expect(fs.readFileSync(settings, "utf8")).toContain(" codebuddy pre-tool-use");
    runInstaller(on.case, "codebuddy", "uninstall");
    expect(fs.readFileSync(settings, "utf8")).toBe(USER_SETTINGS);
  }, 300_000);
});
