// Qwen Code 0.24.4 end to end, offline, with the hooks `velesdb-hooks install --client qwen`
// registered. Every scenario runs with our hooks and without them (negative control: the same
// check must fail), and asserts on what the model requests carried.
//
// Findings (see src/hosts/qwen.ts for the full list):
// - SessionStart context: end of the system message, `<qwen:session-start-context hidden="true">`.
// - A deny: the role:"tool" message of that call holds our reason, verbatim; the tool never ran.
// - Stop decision:block: one more request ending with a role:"user" message = our reason.
// - PreCompact additionalContext: in the compression request's system prompt after
//   "Additional Instructions:". Auto-compaction runs when a reply reports prompt_tokens near
//   the 200 000 window; the summariser's reply must report a large prompt too (Qwen computes
//   the new size as before − summariser input + summariser output, and refuses an inflation).
//
// A Qwen start costs 1–3 CPU s, and CI has 2 cores: behaviours whose turns and project config
// fit one session share its pair of runs (each keeps its own test and check, asserted on that
// pair), and the tests overlap, at most HOST_SLOTS Qwen runs at a time.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { allOf, assertOffline, check, count, exitedCleanly, hostSlots, pairOf, proves } from "../../e2e/checks.ts";
import { E2E_PROJECT, type E2ECase, type Mode, type RunResult } from "../../e2e/harness.ts";
import {
  chatText,
  chatTool,
  messagesOf,
  messageText,
  type ChatRequest,
  type ChatTurn,
} from "../../e2e/mock-openai-chat.ts";
import { installFor, qwenSuite, runQwen, settingsPath } from "./qwen-harness.ts";

const LOAD = `load_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}/`; // the session's own slot (src/core/identity.ts sessionSlot)
const SAVE = `save_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}/`; // the session's own slot (src/core/identity.ts sessionSlot)
const OPT_IN = { ...E2E_PROJECT, enforce_learning_loop: true };
const REFUSAL = "velesdb-hooks refused this edit";
const RECALL = "mcp__velesdb-memory__recall_fused";
const HOST_SLOTS = 4;

const suite = qwenSuite();
const slot = hostSlots(HOST_SLOTS);
const run = (c: E2ECase, prompt = "hello") => slot(() => runQwen(c, suite.chat, prompt));

/** pair(run) → one scenario with our hooks and without them, made once; both runs stayed offline. */
const pair = (run: (mode: Mode) => Promise<RunResult>) => pairOf(run, (r) => assertOffline(r, suite.trap.escaped()));

/** What the model saw for each call of `tool` (the role:"tool" answers in the last request). */
function toolAnswers(r: RunResult, tool: string): string[] {
  const messages = messagesOf(r.requests.at(-1)?.body);
  const ids = messages
    .flatMap((m) => (Array.isArray(m?.tool_calls) ? m.tool_calls : []))
    .filter((t: any) => t?.function?.name === tool)
    .map((t: any) => t.id);
  return ids.map((id: string) => messageText(messages.find((m) => m?.role === "tool" && m.tool_call_id === id)));
}

const guardedFile = (c: E2ECase) => path.join(c.workspace, "guarded.txt");
const writeTurn = (c: E2ECase): ChatTurn => ({
  reply: chatTool("write_file", { file_path: guardedFile(c), content: "x\n" }),
});
const recallTurn: ChatTurn = {
  reply: chatTool(RECALL, { query: "the code area", filter: { project: E2E_PROJECT.project } }),
};

// ---- The shared sessions ----------------------------------------------------------------------

// Not opted in: SessionStart's guidance, then the answer and Stop's one continuation. Its hooks
// case is also the install test's: installed (twice) by hand, the bytes kept for that test.
interface InstallSteps {
  original: Buffer;
  installed: Buffer;
  secondInstall: string;
  afterSecond: Buffer;
}
let installSteps: InstallSteps | undefined;
const plainSession = pair((mode) => {
  const c = suite.setup("qwen-session", "none", () => [
    { reply: chatText("FIRST answer") },
    { reply: chatText("SECOND answer") },
    { reply: chatText("THIRD answer") },
  ]);
  if (mode === "hooks") {
    const original = fs.readFileSync(settingsPath(c));
    installFor(c);
    const installed = fs.readFileSync(settingsPath(c));
    const secondInstall = installFor(c);
    installSteps = { original, installed, secondInstall, afterSecond: fs.readFileSync(settingsPath(c)) };
  }
  return run(c);
});

// Opted in, the recall failing (isError): write_file before any recall (refused), the recall,
// write_file again (still refused), the answer.
const failedRecallSession = pair((mode) =>
  run(
    suite.setup(
      "qwen-failed-recall",
      mode,
      (c) => [writeTurn(c), recallTurn, writeTurn(c), { reply: chatText("DONE") }],
      { projectConfig: OPT_IN, mcpMode: "is-error" },
    ),
  ),
);

const unlockSession = pair((mode) =>
  run(
    suite.setup("qwen-unlock", mode, (c) => [writeTurn(c), recallTurn, writeTurn(c), { reply: chatText("DONE") }], {
      projectConfig: OPT_IN,
    }),
  ),
);

const SUMMARISER = /produce the <state_snapshot> XML/;
const compactSession = pair((mode) =>
  run(
    suite.setup("qwen-compact", mode, () => [
      {
        matchLast: SUMMARISER,
        reply: { text: "<analysis>a</analysis><state_snapshot>the goal</state_snapshot>", promptTokens: 189_000 },
      },
      { reply: { toolCalls: [{ name: "glob", arguments: { pattern: "*.md" } }], promptTokens: 190_000 } },
      { reply: chatText("AFTER compaction") },
    ]),
  ),
);

const TIMEOUT_MS = 240_000; // a test may wait for its session behind others (HOST_SLOTS)

describe("qwen", () => {
  test.concurrent(
    "SessionStart: the load guidance reaches the first request, at the end of the system message",
    async () => {
      const loaded = check("SessionStart context in the first request", (r) => {
        const first = r.requests[0] as ChatRequest | undefined;
        if (!first) return ["no model request"];
        const system = first.systemTexts.join("\n");
        const start = system.lastIndexOf('<qwen:session-start-context hidden="true">');
        if (start < 0) return ["no <qwen:session-start-context> block in the system message"];
        return system.slice(start).includes(LOAD) ? [] : [`the session-start block lacks ${LOAD}`];
      });
      proves(allOf("qwen session start", exitedCleanly, loaded), await plainSession());
    },
    TIMEOUT_MS,
  );

  test.concurrent(
    "edit guard: write_file before any recall is refused with our reason and the file is not written",
    async () => {
      const refused = check("the write_file before any recall refused, file absent", (r) => {
        const p: string[] = [];
        if (fs.existsSync(guardedFile(r.case))) p.push("the file was written");
        const answers = toolAnswers(r, "write_file");
        if (!(answers[0]?.startsWith(REFUSAL) && answers[0].includes("recall_fused")))
          p.push(`the model saw ${JSON.stringify(answers[0])} for the first write_file, not our refusal`);
        return p;
      });
      proves(allOf("qwen guard", exitedCleanly, refused), await failedRecallSession());
    },
    TIMEOUT_MS,
  );

  test.concurrent(
    "edit guard: a failed recall (PostToolUseFailure) keeps write_file refused",
    async () => {
      const stillRefused = check("recall failed, write_file still refused", (r) => {
        const p: string[] = [];
        if (toolAnswers(r, RECALL).length !== 1) p.push("the recall was not called once");
        if (fs.existsSync(guardedFile(r.case))) p.push("the file was written after a failed recall");
        const answers = toolAnswers(r, "write_file");
        if (answers.length !== 2 || !answers[1]!.startsWith(REFUSAL))
          p.push(`the write_file after the recall was not refused (the model saw ${JSON.stringify(answers)})`);
        return p;
      });
      proves(allOf("qwen failed recall", exitedCleanly, stillRefused), await failedRecallSession());
    },
    TIMEOUT_MS,
  );

  test.concurrent(
    "edit guard: refused before the recall, allowed after a successful one",
    async () => {
      const unlocked = check("refused, recall, then written", (r) => {
        const p: string[] = [];
        const answers = toolAnswers(r, "write_file");
        if (answers.length !== 2) return [`expected 2 write_file calls, saw ${answers.length}`];
        if (!answers[0]!.startsWith(REFUSAL)) p.push("the first write_file (before the recall) was not refused");
        if (answers[1]!.startsWith(REFUSAL)) p.push("the write_file after a successful recall was still refused");
        if (!fs.existsSync(guardedFile(r.case))) p.push("the file was not written after the recall");
        return p;
      });
      proves(allOf("qwen unlock", exitedCleanly, unlocked), await unlockSession());
    },
    TIMEOUT_MS,
  );

  test.concurrent(
    "Stop: one continuation carrying the save call, then the run ends",
    async () => {
      const once = check("one Stop continuation", (r) => {
        const p: string[] = [];
        if (r.requests.length !== 2)
          p.push(`expected 2 model requests (answer + one continuation), saw ${r.requests.length}`);
        const last = r.requests.at(-1) as ChatRequest | undefined;
        const users = messagesOf(last?.body)
          .filter((m) => m?.role === "user")
          .map(messageText)
          .join("\n");
        const n = count(users, SAVE);
        if (n !== 1) p.push(`the last request carries ${n} user message(s) with ${SAVE}, expected 1`);
        if (!r.stdout.includes("SECOND answer")) p.push("the run did not end with the continuation's answer");
        return p;
      });
      proves(allOf("qwen stop", exitedCleanly, once), await plainSession());
    },
    TIMEOUT_MS,
  );

  test.concurrent(
    "PreCompact: the summariser instructions reach the compression prompt; SessionStart(compact) reloads",
    async () => {
      const instructed = check("instructions in the compression request, load guidance after it", (r) => {
        const requests = r.requests as ChatRequest[];
        const at = requests.findIndex((q) => SUMMARISER.test(q.lastText));
        if (at < 0) return ["no compression request"];
        const p: string[] = [];
        const prompt = requests[at]!.systemTexts.join("\n");
        const extra = prompt.indexOf("Additional Instructions:");
        if (extra < 0 || !prompt.slice(extra).includes(SAVE))
          p.push(`the compression prompt has no "Additional Instructions:" with ${SAVE}`);
        const after = requests[at + 1];
        if (!after?.systemTexts.join("\n").includes(LOAD))
          p.push("the request after compaction lacks the load guidance (SessionStart compact)");
        return p;
      });
      proves(allOf("qwen precompact", exitedCleanly, instructed), await compactSession());
    },
    TIMEOUT_MS,
  );

  test.concurrent(
    "install twice: no byte changes, also after a Qwen run; uninstall: the user's file back byte for byte",
    async () => {
      // The hooks case of the plain session, installed twice by hand before its run.
      const { on: ran } = await plainSession();
      const c = ran.case;
      const steps = installSteps!;
      expect(steps.installed.equals(steps.original)).toBe(false); // control: install did write something
      expect(steps.secondInstall).toContain("already in step");
      expect(steps.afterSecond.equals(steps.installed)).toBe(true);
      expect(ran.exitCode).toBe(0);
      expect(ran.requests.length).toBe(2); // the hooks ran: Stop continued once
      installFor(c);
      expect(fs.readFileSync(settingsPath(c)).equals(steps.installed)).toBe(true);
      installFor(c, "uninstall");
      expect(fs.readFileSync(settingsPath(c)).equals(steps.original)).toBe(true);
    },
    TIMEOUT_MS,
  );
});
