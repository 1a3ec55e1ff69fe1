// GitHub Copilot CLI end to end: the real CLI (@github/copilot 1.0.102, the platform binary
// from the npm registry), offline with no login (COPILOT_OFFLINE and a BYOK provider pointed
// at the chat-completions mock on 127.0.0.1), the fake velesdb-memory MCP server, and our
// hooks registered by our own installer (`velesdb-hooks install --client copilot`). Each
// scenario runs again without our hooks (or without the one thing it depends on) and the same
// check must then fail. Every run also proves nothing left 127.0.0.1 (the trap proxy).
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { assertOffline, check, expectCheck } from "./checks.ts";
import { copilotInstaller, copilotSuite, MODEL_WITH_EDIT_TOOLS, writeFileMaking } from "./copilot-harness.ts";
import { E2E_DIR, E2E_PROJECT, type E2ECase, type Mode, type RunResult } from "./harness.ts";
import { chatCustomTool, chatText, chatTool, messagesOf, messageText, toolResultsOf, type ChatTurn } from "./mock-openai-chat.ts";

const LOAD_CALL = `load_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}")`;
const SAVE_CALL = `save_working_context(project="${E2E_PROJECT.project}", session="${E2E_PROJECT.session}")`;
const DENIED = "Denied by preToolUse hook: ";

const suite = copilotSuite();
const setup = suite.setup;
const runCopilot = suite.run;
const withAndWithout = suite.withAndWithout;
const install = copilotInstaller;
const writeFile = writeFileMaking;

// ---- Request anatomy (chat completions) -----------------------------------------------------

/** Every tool result the model was shown (deduplicated by call id). */
const toolResults = (r: RunResult): string[] => toolResultsOf(r.requests);

const guardedFile = (c: E2ECase): string => path.join(c.workspace, "guarded.txt");
const createTurn = (c: E2ECase): ChatTurn => ({ reply: chatTool("create", { path: guardedFile(c), file_text: "x\n" }) });
const recallTurn: ChatTurn = { reply: chatTool("velesdb-memory-recall_fused", { query: "guarded.txt" }) };
const done: ChatTurn = { reply: chatText("DONE answer") };

const refused = check("the edit was refused with a reason naming recall_fused, and the file was not written", (r) => {
  const p: string[] = [];
  if (fs.existsSync(guardedFile(r.case))) p.push("guarded.txt was written");
  if (!toolResults(r).some((t) => t.startsWith(DENIED) && t.includes("recall_fused"))) p.push(`no tool result "${DENIED}…recall_fused…" reached the model`);
  return p;
});

describe("copilot", () => {
  test("sessionStart: the load guidance is a user message before the prompt in the first model request", async () => {
    const context = check("the first request carries the load call in a user message before the prompt", (r) => {
      const first = r.requests[0];
      if (!first) return ["no model request"];
      const users = messagesOf(first.body).filter((m) => m?.role === "user").map(messageText);
      const at = users.findIndex((t) => t.includes(LOAD_CALL));
      const prompt = users.findIndex((t) => t.includes("say hello"));
      if (at < 0) return [`no user message carries ${LOAD_CALL}`];
      return at < prompt ? [] : [`the context (user message ${at}) is not before the prompt (user message ${prompt})`];
    });
    await withAndWithout((mode) => runCopilot(setup("session-start", mode, { turns: () => [done] }), "say hello"), context);
  }, 240_000);

  test("edit before recall: create is refused, the model reads why, the file is not written", async () => {
    await withAndWithout((mode) => runCopilot(setup("guard", mode, { turns: (c) => [createTurn(c), done] }), "write a file"), refused);
  }, 240_000);

  test("apply_patch (the edit tool of models Copilot does not know) is refused likewise", async () => {
    const patch = (c: E2ECase): ChatTurn => ({ reply: chatCustomTool("apply_patch", `*** Begin Patch\n*** Add File: ${guardedFile(c)}\n+x\n*** End Patch\n`) });
    await withAndWithout((mode) => runCopilot(setup("guard-patch", mode, { turns: (c) => [patch(c), done] }), "patch a file", "mock-model"), refused);
  }, 240_000);

  test("a failed recall (MCP isError) keeps the edit refused; a successful one unlocks it", async () => {
    const written = check("the create after the recall went through", (r) => (fs.existsSync(guardedFile(r.case)) ? [] : ["guarded.txt was not written"]));
    const run = (failing: boolean) => runCopilot(setup(`recall-${failing ? "failed" : "ok"}`, "hooks", { turns: (c) => [recallTurn, createTurn(c), done], mcp: { mode: failing ? "is-error" : "structured" } }), "recall, then write");
    const [failed, worked] = await Promise.all([run(true), run(false)]);
    for (const r of [failed, worked]) assertOffline(r, suite.llm.escaped());
    expectCheck(refused, failed).toPass();
    expectCheck(written, failed).toFail();
    expectCheck(written, worked).toPass();
    expect(toolResults(worked).filter((t) => t.startsWith(DENIED))).toEqual([]);
    // The unlocked edit is named by the one agentStop checkpoint that follows it.
    expect(worked.requests.filter((q) => q.lastText.includes("Learning checkpoint") && q.lastText.includes(worked.case.workspace))).toHaveLength(1);
    // The recall really reached the MCP fake in both runs (the difference is its answer).
    for (const r of [failed, worked]) expect(fs.readFileSync(r.case.mcpLog, "utf8")).toContain('"name":"recall_fused"');
  }, 240_000);

  test("agentStop: one continuation carrying save_working_context(...), then the run ends", async () => {
    const continued = check("exactly one continuation request ends in the save call; the run exits 0 after it", (r) => {
      const p: string[] = [];
      const continuations = r.requests.filter((q) => q.lastText.includes(SAVE_CALL));
      if (continuations.length !== 1) p.push(`${continuations.length} request(s) end in ${SAVE_CALL}, expected 1`);
      if (r.requests.length !== 2) p.push(`${r.requests.length} model requests, expected 2 (the answer, then the continuation)`);
      if (r.exitCode !== 0 || r.timedOut) p.push(`exit ${r.exitCode}${r.timedOut ? " (timed out)" : ""}`);
      if (!r.stdout.includes("AFTER CONTINUATION")) p.push("the run did not end with the continuation's answer");
      return p;
    });
    const run = (mode: Mode) =>
      runCopilot(setup("stop", mode, { turns: () => [{ match: new RegExp(SAVE_CALL.replace(/[()]/g, "\\$&")), reply: chatText("AFTER CONTINUATION") }, done] }), "answer briefly");
    await withAndWithout(run, continued);
  }, 240_000);

  test("bash: an oversized inline output becomes the compiled view, the <shellId> footer and its exit code kept, the archive holding all of it", async () => {
    // 1100 lines, ≈17 KB: above our 12 000-byte floor, below the ~20 KB from which Copilot saves the output to a file.
    const command = "seq 1 1100 | sed 's/$/ padding-pad/'; exit 3";
    const expected = Array.from({ length: 1100 }, (_, i) => `${i + 1} padding-pad`).join("\n");
    const compiled = check("the model reads the compiled view, then Copilot's footer with exit code 3; the archive holds the output", (r) => {
      const result = toolResults(r).find((t) => t.includes("E2E-COMPILED"));
      if (!result) return ["no compiled view reached the model"];
      const p: string[] = [];
      if (!result.includes("E2E-COMPILED lines=1100 first=1 padding-pad last=1100 padding-pad")) p.push("the compiled view is not of the whole output");
      if (!/\n<shellId: \d+ completed with exit code 3>$/.test(result)) p.push("the <shellId …> footer with exit code 3 is not the end of the result");
      const archive = /saved at "([^"]+)"/.exec(result)?.[1];
      if (!archive || !fs.existsSync(archive)) p.push("no archive named");
      else if ((JSON.parse(fs.readFileSync(archive, "utf8")) as { stdout?: string }).stdout !== expected) p.push("the archive does not hold the complete output");
      return p;
    });
    const turns = () => [{ reply: chatTool("bash", { command, description: "pad" }) }, done];
    await withAndWithout((mode) => runCopilot(setup("bash-inline", mode, { turns }), "pad"), compiled);
  }, 240_000);

  test("bash: an output Copilot saved to a file (deleted when the session ends) is compiled whole and archived by us; no compiler leaves it as it was", async () => {
    const command = "seq 1 5000";
    const compiled = check("the model reads the compiled view of all 5000 lines, an archive of ours, and the footer", (r) => {
      const result = toolResults(r).find((t) => t.includes("E2E-COMPILED"));
      if (!result) return ["no compiled view reached the model"];
      const p: string[] = [];
      if (!result.includes("E2E-COMPILED lines=5000 first=1 last=5000")) p.push("the compiled view is not of the whole output");
      if (result.includes("Output too large")) p.push("Copilot's notice reached the model too");
      if (!/\n<shellId: \d+ completed with exit code 0>$/.test(result)) p.push("the <shellId …> footer is not the end of the result");
      const archive = /saved at "([^"]+)"/.exec(result)?.[1];
      if (!archive || !fs.existsSync(archive)) p.push("the archive it names does not outlive the session");
      else if ((JSON.parse(fs.readFileSync(archive, "utf8")) as { stdout?: string }).stdout?.trimEnd().split("\n").length !== 5000) p.push("the archive does not hold the 5000 lines");
      return p;
    });
    const turns = () => [{ reply: chatTool("bash", { command, description: "count" }) }, done];
    await withAndWithout((mode) => runCopilot(setup("bash-saved", mode, { turns }), "count"), compiled);
    const missing = await runCopilot(setup("bash-no-compiler", "hooks", { turns }), "count", MODEL_WITH_EDIT_TOOLS, undefined, { VELESDB_MEMORY_BIN: path.join(E2E_DIR, "no-such-compiler") });
    assertOffline(missing, suite.llm.escaped());
    expectCheck(compiled, missing).toFail();
    expect(toolResults(missing).some((t) => t.startsWith("Output too large to read at once"))).toBe(true);
  }, 240_000);

  test("install twice changes no byte; uninstall gives the user's Copilot files back byte for byte and Copilot runs none of ours", async () => {
    const c = setup("install", "none", { turns: () => [done] });
    const settings = path.join(c.home, ".copilot", "settings.json");
    const userHooks = path.join(c.home, ".copilot", "hooks", "user.json");
    writeFile(settings, '{\n  // mine\n  "banner": "never"\n}\n');
    writeFile(userHooks, '{"version":1,"hooks":{"agentStop":[{"type":"command","bash":"true"}]}}');
    const before = [settings, userHooks].map((f) => fs.readFileSync(f, "utf8"));
    install(c);
    const ours = path.join(c.home, ".copilot", "hooks", "velesdb-hooks.json");
    const installed = fs.readFileSync(ours, "utf8");
    const withHooks = await runCopilot(c, "say hello");
    install(c);
    expect(fs.readFileSync(ours, "utf8")).toBe(installed);
    install(c, "uninstall");
    expect([settings, userHooks].map((f) => fs.readFileSync(f, "utf8"))).toEqual(before);
    expect(fs.readdirSync(path.dirname(ours))).toEqual(["user.json"]);
    const afterUninstall = await runCopilot(c, "say hello");
    const context = check("some request carries the load call", (r) => (r.requests.some((q) => q.text.includes(LOAD_CALL)) ? [] : ["no request carries the load call"]));
    expectCheck(context, withHooks).toPass();
    // The mock's log is per scenario, so the second run's requests follow the first's.
    expectCheck(context, { ...afterUninstall, requests: afterUninstall.requests.slice(withHooks.requests.length) }).toFail();
    assertOffline(afterUninstall, suite.llm.escaped());
  }, 240_000);

  // Last, since it fills the trap's log on purpose: the proxy really sees Copilot's traffic, so
  // the empty log of every run above means something.
  test("trap self-test: a provider URL off 127.0.0.1 lands in the trap proxy", async () => {
    const c = setup("trap", "none", { turns: () => [done] });
    const before = suite.llm.escaped().length;
    const r = await runCopilot(c, "say hello", MODEL_WITH_EDIT_TOOLS, "http://model.example.test/v1");
    expect(suite.llm.escaped().slice(before).some((line) => line.includes("model.example.test"))).toBe(true);
    expect(r.requests).toEqual([]);
    suite.llm.forgetEscaped(before);
  }, 240_000);
});
