// GitHub Copilot CLI end to end: the real CLI (@github/copilot 1.0.102, the platform binary
// from the npm registry), offline with no login (COPILOT_OFFLINE and a BYOK provider pointed
// at the chat-completions mock on 127.0.0.1), the fake velesdb-memory MCP server, and our
// hooks registered by our own installer (`velesdb-hooks install --client copilot`). Each
// scenario runs again without our hooks (or without the one thing it depends on) and the same
// check must then fail. Every run also proves nothing left 127.0.0.1 (the trap proxy).
//
// A Copilot start costs 2–3 CPU s, and CI has 2 cores: behaviours whose turns fit one session
// share its pair of runs (each behaviour keeps its own test and check, asserted on that pair),
// and the tests overlap, at most HOST_SLOTS Copilot runs at a time.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { assertOffline, check, expectCheck, hostSlots, once, pairOf, proves } from "../../e2e/checks.ts";
import { copilotInstaller, copilotSuite, MODEL_WITH_EDIT_TOOLS } from "./copilot-harness.ts";
import {
  E2E_DIR,
  type E2ECase,
  type Mode,
  type RunResult,
  E2E_LOAD_CALL,
  E2E_SAVE_CALL,
  writeFileMaking,
} from "../../e2e/harness.ts";
import {
  chatCustomTool,
  chatText,
  chatTool,
  messagesOf,
  messageText,
  toolResultsOf,
  type ChatTurn,
} from "../../e2e/mock-openai-chat.ts";
import { mustKeepOf, realCommand } from "../../support/real-outputs.ts";

const DENIED = "Denied by preToolUse hook: ";
const HOST_SLOTS = 4;

const suite = copilotSuite();
const setup = suite.setup;
const slot = hostSlots(HOST_SLOTS);
const runCopilot: typeof suite.run = (...args) => slot(() => suite.run(...args));
const install = copilotInstaller;
const writeFile = writeFileMaking;

/** pair(run) → one scenario with our hooks and without them, made once; both runs stayed offline. */
const pair = (run: (mode: Mode) => Promise<RunResult>) => pairOf(run, (r) => assertOffline(r, suite.llm.escaped()));

// ---- Request anatomy (chat completions) -----------------------------------------------------

/** Every tool result the model was shown (deduplicated by call id). */
const toolResults = (r: RunResult): string[] => toolResultsOf(r.requests);

const guardedFile = (c: E2ECase): string => path.join(c.workspace, "guarded.txt");
const createTurn = (c: E2ECase): ChatTurn => ({
  reply: chatTool("create", { path: guardedFile(c), file_text: "x\n" }),
});
const recallTurn: ChatTurn = { reply: chatTool("velesdb-memory-recall_fused", { query: "guarded.txt" }) };
const done: ChatTurn = { reply: chatText("DONE answer") };

const refused = check("the edit was refused with a reason naming recall_fused, and the file was not written", (r) => {
  const p: string[] = [];
  if (fs.existsSync(guardedFile(r.case))) p.push("guarded.txt was written");
  if (!toolResults(r).some((t) => t.startsWith(DENIED) && t.includes("recall_fused")))
    p.push(`no tool result "${DENIED}…recall_fused…" reached the model`);
  return p;
});

/** deniedAt(r, i) → the problem when the i-th tool result the model saw is not our refusal naming recall_fused. */
const deniedAt = (r: RunResult, i: number, which: string): string[] => {
  const result = toolResults(r)[i];
  return result?.startsWith(DENIED) && result.includes("recall_fused")
    ? []
    : [`the model saw ${JSON.stringify(result?.slice(0, 120))} for ${which}, not "${DENIED}…recall_fused…"`];
};

const written = check("the create after the recall went through", (r) =>
  fs.existsSync(guardedFile(r.case)) ? [] : ["guarded.txt was not written"],
);

// ---- The shared sessions ----------------------------------------------------------------------

// One session, four behaviours in the order a user meets them: sessionStart's guidance in the
// first request; a create before any recall (refused); a recall the server answers with isError;
// the same create again (still refused); the answer; then agentStop's one continuation (the
// repository is opted in and nothing was edited: its checklist, which ends in the save call).
const SAVE_MATCH = new RegExp(E2E_SAVE_CALL.replace(/[()]/g, "\\$&"));
const SESSION_REQUESTS = 5; // create, recall, create again, the answer, the continuation
const mainSession = pair((mode) =>
  runCopilot(
    setup("main", mode, {
      turns: (c) => [
        { match: SAVE_MATCH, reply: chatText("AFTER CONTINUATION") },
        createTurn(c),
        recallTurn,
        createTurn(c),
        done,
      ],
      mcp: { mode: "is-error" },
    }),
    "say hello, then write a file",
  ),
);

// The install test's user files live in the apply_patch session's hooks case: written before
// our installer runs there, compared after uninstall.
const USER_SETTINGS = '{\n  // mine\n  "banner": "never"\n}\n';
const USER_HOOKS = '{"version":1,"hooks":{"agentStop":[{"type":"command","bash":"true"}]}}';
const userFiles = (c: E2ECase): string[] => [
  path.join(c.home, ".copilot", "settings.json"),
  path.join(c.home, ".copilot", "hooks", "user.json"),
];
const ourHooksFile = (c: E2ECase): string => path.join(c.home, ".copilot", "hooks", "velesdb-hooks.json");
let installedAtSetup = "";
const patchTurn = (c: E2ECase): ChatTurn => ({
  reply: chatCustomTool("apply_patch", `*** Begin Patch\n*** Add File: ${guardedFile(c)}\n+x\n*** End Patch\n`),
});
const patchSession = pair((mode) => {
  const c = setup("guard-patch", mode, {
    turns: (c) => [patchTurn(c), done],
    beforeInstall: (c) =>
      userFiles(c).forEach((file, i) => {
        writeFile(file, [USER_SETTINGS, USER_HOOKS][i]!);
      }),
  });
  if (mode === "hooks") installedAtSetup = fs.readFileSync(ourHooksFile(c), "utf8");
  return runCopilot(c, "patch a file", "mock-model");
});

const recallWorked = once(async () => {
  const r = await runCopilot(
    setup("recall-ok", "hooks", { turns: (c) => [recallTurn, createTurn(c), done], mcp: { mode: "structured" } }),
    "recall, then write",
  );
  assertOffline(r, suite.llm.escaped());
  return r;
});

// Both bash outputs in one session, made by real test runners in the workspace
// (test/support/real-outputs.ts): the first result the model reads is inline (node --test, ≈15.5 KB:
// above our 12 000-byte floor, below the ~20 KB from which Copilot saves an output to a file), the
// second the one Copilot saved (pytest -v, ≈50 KB).
const INLINE_RUNNER = "node --test: 2 failures among 190";
const SAVED_RUNNER = "pytest";
const bashTurns = (c: E2ECase): ChatTurn[] => [
  {
    reply: chatTool("bash", {
      command: realCommand(INLINE_RUNNER, c.workspace, { bareProgram: true }).command,
      description: "run the node tests",
    }),
  },
  {
    reply: chatTool("bash", {
      command: realCommand(SAVED_RUNNER, c.workspace, { bareProgram: true }).command,
      description: "run the python tests",
    }),
  },
  done,
];
/** lostLines(result, archive, runner) → the lines the runner marks in the archived original that the model did not read. */
function lostLines(result: string, archive: string, runner: string): string[] {
  const original = (JSON.parse(fs.readFileSync(archive, "utf8")) as { stdout: string }).stdout;
  const needed = mustKeepOf(runner)(original, "");
  if (needed.length === 0) return ["the archived original holds no line the runner marks"];
  const lines = new Set(result.split("\n"));
  return needed.filter((line) => !lines.has(line)).map((line) => `lost: ${line}`);
}
const bashSession = pair((mode) => runCopilot(setup("bash", mode, { turns: bashTurns }), "pad, then count"));
const bashNoCompiler = once(async () => {
  const r = await runCopilot(
    setup("bash-no-compiler", "hooks", { turns: bashTurns }),
    "pad, then count",
    MODEL_WITH_EDIT_TOOLS,
    undefined,
    { VELESDB_MEMORY_BIN: path.join(E2E_DIR, "no-such-compiler") },
  );
  assertOffline(r, suite.llm.escaped());
  return r;
});

describe("copilot", () => {
  test.concurrent("sessionStart: the load guidance is a user message before the prompt in the first model request", async () => {
    const context = check("the first request carries the load call in a user message before the prompt", (r) => {
      const first = r.requests[0];
      if (!first) return ["no model request"];
      const users = messagesOf(first.body)
        .filter((m) => m?.role === "user")
        .map(messageText);
      const at = users.findIndex((t) => t.includes(E2E_LOAD_CALL));
      const prompt = users.findIndex((t) => t.includes("say hello"));
      if (at < 0) return [`no user message carries ${E2E_LOAD_CALL}`];
      return at < prompt ? [] : [`the context (user message ${at}) is not before the prompt (user message ${prompt})`];
    });
    proves(context, await mainSession());
  }, 240_000);

  test.concurrent("edit before recall: create is refused, the model reads why, the file is not written", async () => {
    const refusedFirst = check(
      "the create before any recall was refused with a reason naming recall_fused, and the file was not written",
      (r) => {
        const p = deniedAt(r, 0, "the first create");
        if (fs.existsSync(guardedFile(r.case))) p.push("guarded.txt was written");
        return p;
      },
    );
    proves(refusedFirst, await mainSession());
  }, 240_000);

  test.concurrent("apply_patch (the edit tool of models Copilot does not know) is refused likewise", async () => {
    proves(refused, await patchSession());
  }, 240_000);

  test.concurrent("a failed recall (MCP isError) keeps the edit refused; a successful one unlocks it", async () => {
    const stillRefused = check(
      "the create after the failed recall was refused again, and the file was not written",
      (r) => {
        const p = deniedAt(r, 2, "the create after the recall");
        if (fs.existsSync(guardedFile(r.case))) p.push("guarded.txt was written");
        return p;
      },
    );
    const [{ on: failed, off: unguarded }, worked] = await Promise.all([mainSession(), recallWorked()]);
    expectCheck(stillRefused, failed).toPass();
    expectCheck(stillRefused, unguarded).toFail();
    expectCheck(written, failed).toFail();
    expectCheck(written, worked).toPass();
    expect(toolResults(worked).filter((t) => t.startsWith(DENIED))).toEqual([]);
    // The unlocked edit is named by the one agentStop checkpoint that follows it.
    expect(
      worked.requests.filter(
        (q) => q.lastText.includes("Learning checkpoint") && q.lastText.includes(worked.case.workspace),
      ),
    ).toHaveLength(1);
    // The recall really reached the MCP fake in both runs (the difference is its answer).
    for (const r of [failed, worked]) expect(fs.readFileSync(r.case.mcpLog, "utf8")).toContain('"name":"recall_fused"');
  }, 240_000);

  test.concurrent("agentStop: one continuation carrying save_working_context(...), then the run ends", async () => {
    const continued = check(
      "exactly one continuation request ends in the save call, as the last request; the run exits 0 after it",
      (r) => {
        const p: string[] = [];
        const continuations = r.requests.filter((q) => q.lastText.includes(E2E_SAVE_CALL));
        if (continuations.length !== 1)
          p.push(`${continuations.length} request(s) end in ${E2E_SAVE_CALL}, expected 1`);
        else if (r.requests.at(-1) !== continuations[0]) p.push("the continuation is not the last request");
        if (r.requests.length !== SESSION_REQUESTS)
          p.push(
            `${r.requests.length} model requests, expected ${SESSION_REQUESTS} (the session's four, then the continuation)`,
          );
        if (r.exitCode !== 0 || r.timedOut) p.push(`exit ${r.exitCode}${r.timedOut ? " (timed out)" : ""}`);
        if (!r.stdout.includes("AFTER CONTINUATION")) p.push("the run did not end with the continuation's answer");
        return p;
      },
    );
    proves(continued, await mainSession());
  }, 240_000);

  test.concurrent("bash: an oversized inline output becomes the compiled view, every failure kept, the <shellId> footer and its exit code kept, the archive holding all of it", async () => {
    const compiled = check(
      "the model reads the compiled view with every failing test and the tally, then Copilot's footer with exit code 1; the archive holds the output",
      (r) => {
        const result = toolResults(r)[0];
        if (!result?.includes("E2E-COMPILED")) return ["no compiled view reached the model for the first bash call"];
        const p: string[] = [];
        if (!/\n<shellId: \d+ completed with exit code 1>$/.test(result))
          p.push("the <shellId …> footer with exit code 1 is not the end of the result");
        const archive = /saved at "([^"]+)"/.exec(result)?.[1];
        if (!archive || !fs.existsSync(archive)) return [...p, "no archive named"];
        p.push(...lostLines(result, archive, INLINE_RUNNER));
        if (result.split("\nok ").length > 40) p.push("the passing tests were not folded");
        return p;
      },
    );
    proves(compiled, await bashSession());
  }, 240_000);

  test.concurrent("bash: an output Copilot saved to a file (deleted when the session ends) is compiled whole, every failure kept, and archived by us; no compiler leaves it as it was", async () => {
    const compiled = check(
      "the model reads the compiled view of the whole saved output (every failure and the summary), an archive of ours, and the footer",
      (r) => {
        const result = toolResults(r)[1];
        if (!result?.includes("E2E-COMPILED")) return ["no compiled view reached the model for the second bash call"];
        const p: string[] = [];
        if (result.includes("Output too large")) p.push("Copilot's notice reached the model too");
        if (!/\n<shellId: \d+ completed with exit code 1>$/.test(result))
          p.push("the <shellId …> footer is not the end of the result");
        const archive = /saved at "([^"]+)"/.exec(result)?.[1];
        if (!archive || !fs.existsSync(archive)) return [...p, "the archive it names does not outlive the session"];
        p.push(...lostLines(result, archive, SAVED_RUNNER));
        if (
          (JSON.parse(fs.readFileSync(archive, "utf8")) as { stdout?: string }).stdout?.split(" PASSED").length !== 601
        )
          p.push("the archive does not hold the 600 passes");
        return p;
      },
    );
    const [pair, missing] = await Promise.all([bashSession(), bashNoCompiler()]);
    proves(compiled, pair);
    expectCheck(compiled, missing).toFail();
    expect(toolResults(missing)[1]?.startsWith("Output too large to read at once")).toBe(true);
  }, 240_000);

  test.concurrent("install twice changes no byte; uninstall gives the user's Copilot files back byte for byte and Copilot runs none of ours", async () => {
    // The hooks case of the apply_patch session: the user's files were there before our install.
    const { on: withHooks } = await patchSession();
    const c = withHooks.case;
    expect(installedAtSetup).not.toBe("");
    install(c);
    expect(fs.readFileSync(ourHooksFile(c), "utf8")).toBe(installedAtSetup);
    install(c, "uninstall");
    expect(userFiles(c).map((f) => fs.readFileSync(f, "utf8"))).toEqual([USER_SETTINGS, USER_HOOKS]);
    expect(fs.readdirSync(path.dirname(ourHooksFile(c)))).toEqual(["user.json"]);
    suite.chat.script(c.scenario, [done]);
    const afterUninstall = await runCopilot(c, "say hello");
    const context = check("some request carries the load call", (r) =>
      r.requests.some((q) => q.text.includes(E2E_LOAD_CALL)) ? [] : ["no request carries the load call"],
    );
    expectCheck(context, withHooks).toPass();
    // The mock's log is per scenario, so the second run's requests follow the first's.
    expectCheck(context, {
      ...afterUninstall,
      requests: afterUninstall.requests.slice(withHooks.requests.length),
    }).toFail();
    assertOffline(afterUninstall, suite.llm.escaped());
  }, 240_000);

  // Last, and alone (not concurrent), since it fills the trap's log on purpose: the proxy really
  // sees Copilot's traffic, so the empty log of every run above means something.
  test("trap self-test: a provider URL off 127.0.0.1 lands in the trap proxy", async () => {
    const c = setup("trap", "none", { turns: () => [done] });
    const before = suite.llm.escaped().length;
    const r = await runCopilot(c, "say hello", MODEL_WITH_EDIT_TOOLS, "http://model.example.test/v1");
    expect(
      suite.llm
        .escaped()
        .slice(before)
        .some((line) => line.includes("model.example.test")),
    ).toBe(true);
    expect(r.requests).toEqual([]);
    suite.llm.forgetEscaped(before);
  }, 240_000);
});
