// Checks over what the model requests carried. A check returns the list of its problems (empty
// = pass), so the same check can be asserted to pass with our hooks registered and to FAIL in
// the negative control (same scenario, no hooks): a check that passes either way proves nothing.
import { expect } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { mustKeepOf } from "../support/real-outputs.ts";
import type { Mode, RunResult } from "./harness.ts";
import type { LoggedRequest } from "./mock-llm.ts";
import { messagesOf, messageText, toolResultsOf } from "./mock-openai-chat.ts";

export interface Check {
  readonly name: string;
  problems(result: RunResult): string[];
}

export function check(name: string, problems: (result: RunResult) => string[]): Check {
  return { name, problems };
}

/** A check made of several: it passes only when all pass. */
export function allOf(name: string, ...checks: Check[]): Check {
  return check(name, (r) => checks.flatMap((c) => c.problems(r).map((p) => `${c.name}: ${p}`)));
}

function describeRun(result: RunResult): string {
  return [
    `exit=${result.exitCode} signal=${result.signal} timedOut=${result.timedOut} ${result.durationMs}ms, ${result.requests.length} model request(s)`,
    ...result.requests.map(
      (q, i) => `  #${i} ${q.api} ${q.path} picked=${q.picked} last user: ${JSON.stringify(q.lastText.slice(0, 160))}`,
    ),
    `stderr: ${result.stderr.slice(-1500)}`,
  ].join("\n");
}

/** expectCheck(check, result).toPass() / .toFail() with the run described on failure. */
export function expectCheck(c: Check, result: RunResult) {
  return {
    toPass(): void {
      const problems = c.problems(result);
      if (problems.length > 0)
        throw new Error(`check "${c.name}" failed:\n- ${problems.join("\n- ")}\n${describeRun(result)}`);
    },
    toFail(): void {
      const problems = c.problems(result);
      if (problems.length === 0) {
        throw new Error(
          `negative control: check "${c.name}" passed without our hooks, so it proves nothing\n${describeRun(result)}`,
        );
      }
    },
  };
}

/** The run ended normally: exit 0, not killed. */
export const exitedCleanly = check("exited cleanly", (r) => {
  const p: string[] = [];
  if (r.timedOut) p.push(`timed out after ${r.durationMs}ms`);
  if (r.exitCode !== 0) p.push(`exit code ${r.exitCode} (signal ${r.signal})`);
  return p;
});

/** Every model request was one the mock knows, and nothing tried to leave 127.0.0.1. */
export function assertOffline(result: RunResult, escaped: string[]): void {
  expect(escaped).toEqual([]);
  const unknown = result.allRequests.filter((q) => q.api === "unknown" && !q.path.endsWith("/mcp"));
  expect(unknown.map((q) => `${q.method} ${q.path}`)).toEqual([]);
}

// ---- Request anatomy ------------------------------------------------------------------------

/** Claude: texts of the messages with a given role (string or block content). */
export function claudeMessages(req: LoggedRequest, role: string): string[] {
  const messages: any[] = Array.isArray(req.body?.messages) ? req.body.messages : [];
  return messages
    .filter((m) => m?.role === role)
    .map((m) =>
      typeof m.content === "string"
        ? m.content
        : Array.isArray(m.content)
          ? m.content
              .map((b: any) => (typeof b?.text === "string" ? b.text : typeof b?.content === "string" ? b.content : ""))
              .join("\n")
          : "",
    );
}

/**
 * Claude: the hook context blocks of an event in role:"system" messages, each from its marker
 * "<Event> hook additional context: " on. The host merges them with its own system text (the
 * environment block, the deferred-tools list), so the marker may sit mid-message.
 */
export function claudeHookContexts(req: LoggedRequest, event: string): string[] {
  const marker = `${event} hook additional context: `;
  return claudeMessages(req, "system")
    .filter((t) => t.includes(marker))
    .map((t) => t.slice(t.indexOf(marker) + marker.length));
}

/** Codex: texts of the `input[]` message items with a given role. */
export function codexMessages(req: LoggedRequest, role: string): string[] {
  const input: any[] = Array.isArray(req.body?.input) ? req.body.input : [];
  return input
    .filter((i) => i?.type === "message" && i?.role === role)
    .map((i) =>
      Array.isArray(i.content)
        ? i.content.map((b: any) => (typeof b?.text === "string" ? b.text : "")).join("\n")
        : String(i.content ?? ""),
    );
}

export const count = (text: string, needle: string): number => text.split(needle).length - 1;

/**
 * toolAnswerTexts(requests) → the tool answers the model had received by the session's last
 * request (Claude tool_result, Codex function_call_output / custom_tool_call_output, Gemini
 * functionResponse), as JSON text with the backslashes dropped: each host nests the server's
 * JSON text in its own JSON a different number of times, so `"found":true` reads the same in all.
 */
export function toolAnswerTexts(requests: readonly { body: any }[]): string[] {
  const last = requests.at(-1)?.body;
  const list = (v: unknown): any[] => (Array.isArray(v) ? v : []);
  const claude = list(last?.messages)
    .flatMap((m: any) => list(m?.content))
    .filter((b: any) => b?.type === "tool_result")
    .map((b: any) => b.content);
  const codex = list(last?.input)
    .filter((i: any) => i?.type === "function_call_output" || i?.type === "custom_tool_call_output")
    .map((i: any) => i.output);
  const gemini = list(last?.contents)
    .flatMap((c: any) => list(c?.parts))
    .filter((p: any) => p?.functionResponse)
    .map((p: any) => p.functionResponse.response);
  return [...claude, ...codex, ...gemini].map((a) => JSON.stringify(a).replace(/\\/g, ""));
}

// ---- Shared runs ----------------------------------------------------------------------------

/**
 * once(make) → a getter for one promise, made on the first call: one pair of host runs whose
 * transcript several tests assert on (each host start costs 1–3 CPU s; CI has 2 cores).
 */
export function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

/**
 * hostSlots(n) → slot(run): run() starts when fewer than n runs of this file are under way, so
 * tests that overlap (test.concurrent) never start more host CLIs than the cores can carry.
 */
export function hostSlots(n: number): <T>(run: () => Promise<T>) => Promise<T> {
  let busy = 0;
  const waiting: Array<() => void> = [];
  return async (run) => {
    if (busy >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    else busy++;
    try {
      return await run();
    } finally {
      const next = waiting.shift();
      if (next)
        next(); // the slot passes straight to the next waiter
      else busy--;
    }
  };
}

/** One scenario run with our hooks ("hooks") and without them ("none", the negative control). */
export interface Pair<R = RunResult> {
  readonly on: R;
  readonly off: R;
}

const unslotted = <T>(run: () => Promise<T>): Promise<T> => run();

/** pairOf(run, offline, slot) → a getter for one pair: both modes side by side (each through `slot`), made once, each run proven offline by offline(r). */
export function pairOf<R>(
  run: (mode: Mode) => Promise<R>,
  offline: (r: R) => void,
  slot: <T>(run: () => Promise<T>) => Promise<T> = unslotted,
): () => Promise<Pair<R>> {
  return once(async () => {
    const [on, off] = await Promise.all([slot(() => run("hooks")), slot(() => run("none"))]);
    for (const r of [on, off]) offline(r);
    return { on, off };
  });
}

/**
 * withAndWithoutIn(suite) → withAndWithout(run, check): runs with and without hooks, both proven
 * offline against the suite's mock; the check must pass, then fail. (Here rather than in the
 * harness, which runs hosts and knows no check.)
 */
export function withAndWithoutIn(suite: {
  readonly mock: { escaped(): string[] };
}): (run: (mode: Mode) => Promise<RunResult>, check: Check) => Promise<RunResult> {
  return async (run, check) => {
    const on = await run("hooks");
    const off = await run("none");
    assertOffline(on, suite.mock.escaped());
    assertOffline(off, suite.mock.escaped());
    expectCheck(check, on).toPass();
    expectCheck(check, off).toFail();
    return on;
  };
}

/** proves(check, pair) → with our hooks the check passes, without them it fails. */
export function proves(c: Check, pair: Pair): void {
  expectCheck(c, pair.on).toPass();
  expectCheck(c, pair.off).toFail();
}

/**
 * The recall-before-edit checks of the chat-completions hosts, for an edit of `fileOf(case)` by
 * the tool `tool`: refused (our reason, naming recall_fused, in a tool result; the file not
 * written) and written.
 */
export function editGuardChecks(
  fileOf: (c: RunResult["case"]) => string,
  tool: string,
): { readonly refused: Check; readonly written: Check } {
  const refused = check(
    `the ${tool} was refused with a reason naming recall_fused, and the file was not written`,
    (r) => {
      const p: string[] = [];
      if (fs.existsSync(fileOf(r.case))) p.push(`${path.basename(fileOf(r.case))} was written`);
      if (
        !toolResultsOf(r.requests).some(
          (t) => t.includes("velesdb-hooks refused this edit") && t.includes("recall_fused"),
        )
      )
        p.push("no tool result carrying our refusal reached the model");
      return p;
    },
  );
  const written = check(`the ${tool} after the recall went through`, (r) =>
    fs.existsSync(fileOf(r.case)) ? [] : [`${path.basename(fileOf(r.case))} was not written`],
  );
  return { refused, written };
}

/** expectRecallGate(checks, failed, worked) → a failed recall kept the edit refused, a good one unlocked it, and both reached the MCP fake (the difference is its answer). */
export function expectRecallGate(
  checks: { readonly refused: Check; readonly written: Check },
  failed: RunResult,
  worked: RunResult,
): void {
  expectCheck(checks.refused, failed).toPass();
  expectCheck(checks.written, failed).toFail();
  expectCheck(checks.written, worked).toPass();
  for (const r of [failed, worked]) expect(fs.readFileSync(r.case.mcpLog, "utf8")).toContain('"name":"recall_fused"');
}

/** userMessageInFirstRequest(text) → the check: a user message of the first model request carries `text` (chat-completions hosts). */
export function userMessageInFirstRequest(text: string): Check {
  return check("the first request carries the load call in a user message", (r) => {
    const first = r.requests[0];
    if (!first) return ["no model request"];
    return messagesOf(first.body).some((m) => m?.role === "user" && messageText(m).includes(text))
      ? []
      : [`no user message carries ${text}`];
  });
}

/** lostLines(result, original, runner) → the lines the runner marks in the original that the model did not read. */
export function lostLines(result: string, original: string, runner: string): string[] {
  // A plugin host's output is both streams in one: the runner's parser reads it as stderr too.
  const needed = mustKeepOf(runner)(original, original);
  if (needed.length === 0) return ["the original holds no line the runner marks"];
  const lines = new Set(result.split("\n"));
  return needed.filter((line) => !lines.has(line)).map((line) => `lost: ${line}`);
}

/** OpenCode's bash cut: 2000 lines or 51 200 bytes (`MAX_LINES`, `MAX_BYTES` in opencode-ai 1.18.33's binary), whichever comes first. */
const OPENCODE_CUT_BYTES = 51_200;

/**
 * findViewProblems(result, whole, savedBy) → what is wrong with `result`, the compiled view of
 * the real `find` output over 2400 generated files (test/support/real-outputs.ts) whose whole
 * text we archived (`savedBy` "us") or the host saved (`savedBy` "host") as `whole`: the output
 * not kept whole, a line find marks lost, or the raw listing read by the model too.
 *
 * A host's own file is held to less than our archive: OpenCode 1.18.33's bash tool
 * (`ShellTool.run` in its binary) ends its read of the command's output when the exit code
 * arrives, so on a loaded machine its saved file (and the tail it hands the model) can stop short
 * of the last lines (read in its code, not reproduced here; a CI run saw this case fail once and
 * print nothing). What is ours to prove is that the file was compiled rather than the cut output:
 * the file holds more than OpenCode's 50 KiB cut, and its first and last lines reach the model.
 */
export function findViewProblems(result: string, whole: string, savedBy: "us" | "host" = "us"): string[] {
  const p: string[] = [];
  const paths = whole.trimEnd().split("\n").length;
  if (savedBy === "us" && paths !== 2400) p.push(`the archive holds ${paths} of the 2400 paths`);
  if (savedBy === "host" && Buffer.byteLength(whole) <= OPENCODE_CUT_BYTES)
    p.push(`the host's saved file holds ${Buffer.byteLength(whole)} bytes, no more than its cut keeps`);
  p.push(...lostLines(result, whole, "find"));
  if (result.split("\nassets/").length > 200) p.push("the raw output reached the model too");
  return p;
}

/**
 * compiledKeepingWhole(resultOf, runner, whole) → the check: the tool result `resultOf(r)` is the
 * compiled view (the e2e compiler's E2E-COMPILED) keeping every line the runner marks, and the
 * archive it names holds the complete output (`whole(stored)` says what is missing, or "").
 */
export function compiledKeepingWhole(
  resultOf: (r: RunResult) => string | undefined,
  runner: string,
  whole: (stored: string) => string,
): Check {
  return check(
    "the model reads the compiled view of the kept-whole output; the archive it names holds the complete output",
    (r) => {
      const result = resultOf(r);
      if (result === undefined) return ["the bash call never answered"];
      if (!result.includes("E2E-COMPILED")) return ["no compiled view reached the model"];
      const archive = /saved at "([^"]+)"/.exec(result)?.[1];
      if (!archive || !fs.existsSync(archive)) return ["no archive named"];
      const stored = (JSON.parse(fs.readFileSync(archive, "utf8")) as { stdout?: string }).stdout ?? "";
      const p = lostLines(result, stored, runner);
      const missing = whole(stored);
      if (missing !== "") p.push(`the archive does not hold the complete output (${missing})`);
      return p;
    },
  );
}
