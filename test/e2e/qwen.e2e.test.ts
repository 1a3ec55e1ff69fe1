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
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { allOf, check, count, exitedCleanly } from "./checks.ts";
import { E2E_PROJECT, type E2ECase, type Mode, type RunResult } from "./harness.ts";
import { chatText, chatTool, messagesOf, messageText, type ChatRequest, type ChatTurn } from "./mock-openai-chat.ts";
import { installFor, qwenSuite, runQwen, settingsPath } from "./qwen-harness.ts";

const LOAD = `load_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}")`;
const SAVE = `save_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}")`;
const OPT_IN = { ...E2E_PROJECT, enforce_learning_loop: true };
const REFUSAL = "velesdb-hooks refused this edit";
const RECALL = "mcp__velesdb-memory__recall_fused";

const suite = qwenSuite();
const run = (c: E2ECase, prompt = "hello") => runQwen(c, suite.chat, prompt);

/** What the model saw for each call of `tool` (the role:"tool" answers in the last request). */
function toolAnswers(r: RunResult, tool: string): string[] {
  const messages = messagesOf(r.requests.at(-1)?.body);
  const ids = messages.flatMap((m) => (Array.isArray(m?.tool_calls) ? m.tool_calls : [])).filter((t: any) => t?.function?.name === tool).map((t: any) => t.id);
  return ids.map((id: string) => messageText(messages.find((m) => m?.role === "tool" && m.tool_call_id === id)));
}

const guardedFile = (c: E2ECase) => path.join(c.workspace, "guarded.txt");
const writeTurn = (c: E2ECase): ChatTurn => ({ reply: chatTool("write_file", { file_path: guardedFile(c), content: "x\n" }) });
const recallTurn: ChatTurn = { reply: chatTool(RECALL, { query: "the code area", filter: { project: E2E_PROJECT.project } }) };

describe("qwen", () => {
  test("SessionStart: the load guidance reaches the first request, at the end of the system message", async () => {
    const loaded = check("SessionStart context in the first request", (r) => {
      const first = r.requests[0] as ChatRequest | undefined;
      if (!first) return ["no model request"];
      const system = first.systemTexts.join("\n");
      const start = system.lastIndexOf('<qwen:session-start-context hidden="true">');
      if (start < 0) return ["no <qwen:session-start-context> block in the system message"];
      return system.slice(start).includes(LOAD) ? [] : [`the session-start block lacks ${LOAD}`];
    });
    await suite.withAndWithout(
      (mode: Mode) => run(suite.setup("qwen-ss", mode, () => [{ reply: chatText("FIRST answer") }, { reply: chatText("SECOND answer") }])),
      allOf("qwen session start", exitedCleanly, loaded),
    );
  });

  test("edit guard: write_file before any recall is refused with our reason and the file is not written", async () => {
    const refused = check("write_file refused, file absent", (r) => {
      const p: string[] = [];
      if (fs.existsSync(guardedFile(r.case))) p.push("the file was written");
      const answers = toolAnswers(r, "write_file");
      if (!answers.some((a) => a.startsWith(REFUSAL) && a.includes("recall_fused"))) p.push(`the model saw ${JSON.stringify(answers)} for write_file, not our refusal`);
      return p;
    });
    await suite.withAndWithout(
      (mode) => run(suite.setup("qwen-guard", mode, (c) => [writeTurn(c), { reply: chatText("DONE") }], { projectConfig: OPT_IN })),
      allOf("qwen guard", exitedCleanly, refused),
    );
  });

  test("edit guard: a failed recall (PostToolUseFailure) keeps write_file refused", async () => {
    const stillRefused = check("recall failed, write_file still refused", (r) => {
      const p: string[] = [];
      if (toolAnswers(r, RECALL).length !== 1) p.push("the recall was not called once");
      if (fs.existsSync(guardedFile(r.case))) p.push("the file was written after a failed recall");
      if (!toolAnswers(r, "write_file").some((a) => a.startsWith(REFUSAL))) p.push("write_file was not refused");
      return p;
    });
    await suite.withAndWithout(
      (mode) => run(suite.setup("qwen-failed-recall", mode, (c) => [recallTurn, writeTurn(c), { reply: chatText("DONE") }], { projectConfig: OPT_IN, mcpMode: "is-error" })),
      allOf("qwen failed recall", exitedCleanly, stillRefused),
    );
  });

  test("edit guard: refused before the recall, allowed after a successful one", async () => {
    const unlocked = check("refused, recall, then written", (r) => {
      const p: string[] = [];
      const answers = toolAnswers(r, "write_file");
      if (answers.length !== 2) return [`expected 2 write_file calls, saw ${answers.length}`];
      if (!answers[0]!.startsWith(REFUSAL)) p.push("the first write_file (before the recall) was not refused");
      if (answers[1]!.startsWith(REFUSAL)) p.push("the write_file after a successful recall was still refused");
      if (!fs.existsSync(guardedFile(r.case))) p.push("the file was not written after the recall");
      return p;
    });
    await suite.withAndWithout(
      (mode) => run(suite.setup("qwen-unlock", mode, (c) => [writeTurn(c), recallTurn, writeTurn(c), { reply: chatText("DONE") }], { projectConfig: OPT_IN })),
      allOf("qwen unlock", exitedCleanly, unlocked),
    );
  });

  test("Stop: one continuation carrying the save call, then the run ends", async () => {
    const once = check("one Stop continuation", (r) => {
      const p: string[] = [];
      if (r.requests.length !== 2) p.push(`expected 2 model requests (answer + one continuation), saw ${r.requests.length}`);
      const last = r.requests.at(-1) as ChatRequest | undefined;
      const users = messagesOf(last?.body).filter((m) => m?.role === "user").map(messageText).join("\n");
      const n = count(users, SAVE);
      if (n !== 1) p.push(`the last request carries ${n} user message(s) with ${SAVE}, expected 1`);
      if (!r.stdout.includes("SECOND answer")) p.push("the run did not end with the continuation's answer");
      return p;
    });
    await suite.withAndWithout(
      (mode) => run(suite.setup("qwen-stop", mode, () => [{ reply: chatText("FIRST answer") }, { reply: chatText("SECOND answer") }, { reply: chatText("THIRD answer") }])),
      allOf("qwen stop", exitedCleanly, once),
    );
  });

  test("PreCompact: the summariser instructions reach the compression prompt; SessionStart(compact) reloads", async () => {
    const SUMMARISER = /produce the <state_snapshot> XML/;
    const turns = (): ChatTurn[] => [
      { matchLast: SUMMARISER, reply: { text: "<analysis>a</analysis><state_snapshot>the goal</state_snapshot>", promptTokens: 189_000 } },
      { reply: { toolCalls: [{ name: "glob", arguments: { pattern: "*.md" } }], promptTokens: 190_000 } },
      { reply: chatText("AFTER compaction") },
    ];
    const instructed = check("instructions in the compression request, load guidance after it", (r) => {
      const requests = r.requests as ChatRequest[];
      const at = requests.findIndex((q) => SUMMARISER.test(q.lastText));
      if (at < 0) return ["no compression request"];
      const p: string[] = [];
      const prompt = requests[at]!.systemTexts.join("\n");
      const extra = prompt.indexOf("Additional Instructions:");
      if (extra < 0 || !prompt.slice(extra).includes(SAVE)) p.push(`the compression prompt has no "Additional Instructions:" with ${SAVE}`);
      const after = requests[at + 1];
      if (!after || !after.systemTexts.join("\n").includes(LOAD)) p.push("the request after compaction lacks the load guidance (SessionStart compact)");
      return p;
    });
    await suite.withAndWithout(
      (mode) => run(suite.setup("qwen-compact", mode, turns)),
      allOf("qwen precompact", exitedCleanly, instructed),
    );
  });

  test("install twice: no byte changes, also after a Qwen run; uninstall: the user's file back byte for byte", async () => {
    const c = suite.setup("qwen-install", "none", () => [{ reply: chatText("FIRST answer") }, { reply: chatText("SECOND answer") }]);
    const original = fs.readFileSync(settingsPath(c));
    installFor(c);
    const installed = fs.readFileSync(settingsPath(c));
    expect(installed.equals(original)).toBe(false); // control: install did write something
    expect(installFor(c)).toContain("already in step");
    expect(fs.readFileSync(settingsPath(c)).equals(installed)).toBe(true);
    const ran = await run(c);
    expect(ran.exitCode).toBe(0);
    expect(ran.requests.length).toBe(2); // the hooks ran: Stop continued once
    installFor(c);
    expect(fs.readFileSync(settingsPath(c)).equals(fs.readFileSync(settingsPath(c)))).toBe(true);
    expect(fs.readFileSync(settingsPath(c)).equals(installed)).toBe(true);
    installFor(c, "uninstall");
    expect(fs.readFileSync(settingsPath(c)).equals(original)).toBe(true);
  });
});
