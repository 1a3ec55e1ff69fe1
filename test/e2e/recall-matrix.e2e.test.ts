// The recall matrix (issue 17): host × what velesdb-memory answers → does the next edit apply?
//
// Every cell is one run of the REAL host (the DeepSeek bridge in-process, see dsh-harness.ts) in
// an opted-in repository (`enforce_learning_loop: true`): the model edits (refused), calls
// recall_fused, answered by the velesdb-memory double in one of its modes
// (fake-velesdb-memory.mjs), then makes the same edit again. The verdict is read from what the
// model's LAST request carries for each edit (our refusal, or the tool's success) and checked
// against the file. Each host also runs once without our hooks (negative control: the first edit
// is not refused, so the cell's check fails).
//
// The installed binary is wrapped by a spy (harness.ts spyOnInstalledHooks), so each cell also
// records what the host handed our PostToolUse hook as `tool_response` for the recall: that is
// the measured wire the README's table reports, and it is asserted here, so a host upgrade that
// changes it fails this file.
//
// Cells run concurrently (at most CONCURRENCY host processes at once, on 2 cores).
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { copilotSuite } from "./copilot-harness.ts";
import { createDshCase, cleanupDshCases, doubleToolResult, DSH_PROJECT, type DshCase } from "./dsh-harness.ts";
import { createGeminiCase, functionResponses, removeGeminiCase, runGemini, type GeminiCase } from "./gemini-harness.ts";
import {
  DOUBLE_MODES,
  e2eSuite,
  E2E_PROJECT,
  runClaude,
  runCodex,
  spiedRuns,
  spyOnInstalledHooks,
  type DoubleMode,
  type E2ECase,
  type RunResult,
} from "./harness.ts";
import { codexText, text } from "./mock-llm.ts";
import { geminiCall, geminiText, startMockGemini, type MockGemini } from "./mock-gemini.ts";
import { chatText, chatTool, messagesOf, messageText } from "./mock-openai-chat.ts";
import { qwenSuite, runQwen } from "./qwen-harness.ts";
import { afterAll, beforeAll } from "bun:test";

const OPT_IN = { ...E2E_PROJECT, enforce_learning_loop: true };
const CONCURRENCY = 6;
// A cell's host run may take long on a loaded machine (Qwen Code alone takes 40–50 s a run
// here); a hung run is still killed, just later than the suites' defaults.
const RUN_TIMEOUT_MS = 180_000;

type HostName = "claude" | "codex" | "dsh" | "gemini" | "qwen" | "copilot";
type EditOutcome = "refused" | "applied" | `other: ${string}`;

interface Cell {
  /** What the model's last request carries for each of the two edits, in order. */
  readonly edits: EditOutcome[];
  /** The file after the run: "second" when the second edit applied. */
  readonly file: string | undefined;
  /** The recall's tool_response as our PostToolUse hook got it, described (see shapeOf); "-" when no PostToolUse ran for it. */
  readonly toolResponse: string;
  /** The first recall tool_response, as JSON (for the report). */
  readonly sample?: string;
  readonly detail: string;
}

// ---- What was measured (issue 17) ----------------------------------------------------------
// Per host and double mode: does the same edit apply after the recall, and what did the host hand
// our PostToolUse hook. The README's table is this table.
const UNLOCKS: Record<DoubleMode, boolean> = {
  structured: true,
  empty: true,
  "rpc-error": false,
  "is-error": false,
  "text-only": true,
  "non-json": false,
};

const MEASURED_RESPONSE: Record<HostName, Record<DoubleMode, string>> = {
  claude: {
    structured: "json",
    empty: "json",
    "rpc-error": "-",
    "is-error": "-",
    "text-only": "[{text:json,type:\"text\"}]",
    "non-json": "[{text:text,type:\"text\"}]",
  },
  codex: {
    structured: "{content:[{text:json,type:\"text\"}],isError:false,structuredContent:{memories:[{\u2026}]}}",
    empty: "{content:[{text:json,type:\"text\"}],isError:false,structuredContent:{memories:[]}}",
    "rpc-error": "-",
    "is-error": "-",
    "text-only": "{content:[{text:json,type:\"text\"}],isError:false}",
    "non-json": "{content:[{text:text,type:\"text\"}],isError:false}",
  },
  dsh: {
    structured: "json",
    empty: "json",
    "rpc-error": "text",
    "is-error": "text",
    "text-only": "json",
    "non-json": "text",
  },
  gemini: {
    structured: "{llmContent:[{text:text}],returnDisplay:json}",
    empty: "{llmContent:[{text:text}],returnDisplay:json}",
    "rpc-error": "{error:{message:text,type:\"mcp_tool_error\"},llmContent:text,returnDisplay:text}",
    "is-error": "{error:{message:text,type:\"mcp_tool_error\"},llmContent:text,returnDisplay:text}",
    "text-only": "{llmContent:[{text:text}],returnDisplay:json}",
    "non-json": "{llmContent:[{text:text}],returnDisplay:text}",
  },
  qwen: {
    structured: "{llmContent:[{text:json}],returnDisplay:text}",
    empty: "{llmContent:[{text:json}],returnDisplay:json}",
    "rpc-error": "-",
    "is-error": "-",
    "text-only": "{llmContent:[{text:json}],returnDisplay:json}",
    "non-json": "{llmContent:[{text:text}],returnDisplay:text}",
  },
  copilot: {
    structured: "{resultType:\"success\",textResultForLlm:json}",
    empty: "{resultType:\"success\",textResultForLlm:json}",
    "rpc-error": "-",
    "is-error": "-",
    "text-only": "{resultType:\"success\",textResultForLlm:json}",
    "non-json": "{resultType:\"success\",textResultForLlm:text}",
  },
};

/**
 * shapeOf(tool_response) → its wire form in short: a string is `json` or `text` (not JSON); an
 * array lists its items' shapes; an object its keys (sorted) with their shapes, except the flags
 * whose value matters (`isError`, `resultType`, `type`), shown as values. E.g. Codex's
 * `{content:[{text:json,type:"text"}],isError:false,structuredContent:{memories:[…]}}`.
 */
export function shapeOf(value: unknown, depth = 0): string {
  if (typeof value === "string") {
    try {
      JSON.parse(value);
      return "json";
    } catch {
      return "text";
    }
  }
  if (Array.isArray(value)) return depth > 2 ? "[…]" : `[${[...new Set(value.map((v) => shapeOf(v, depth + 1)))].join("|")}]`;
  if (value !== null && typeof value === "object") {
    if (depth > 2) return "{…}";
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${k}:${["isError", "is_error", "resultType", "type"].includes(k) ? JSON.stringify((value as any)[k]) : shapeOf((value as any)[k], depth + 1)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "undefined";
}

/** The recall's tool_response our PostToolUse hook got (spy), described; "-" when none ran for it. */
function spiedRecall(spyDir: string | undefined, event: string, recall: (payload: any) => boolean, field: (payload: any) => unknown = (p) => p?.tool_response): { toolResponse: string; sample?: string } {
  const runs = spyDir ? spiedRuns(spyDir).filter((r) => r.argv.at(-1) === event && recall(r.payload)) : [];
  if (runs.length === 0) return { toolResponse: "-" };
  return { toolResponse: runs.map((r) => shapeOf(field(r.payload))).join(" "), sample: JSON.stringify(field(runs[0]!.payload)) };
}

const readFile = (file: string): string | undefined => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim() : undefined);

/** Runs `tasks` with at most `limit` at once, results in order. */
async function pool<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

const REFUSAL = "velesdb-hooks refused this edit";

// ---- The hosts -----------------------------------------------------------------------------

const anthropic = e2eSuite();
const qwen = qwenSuite();
const copilot = copilotSuite();
let gemini: MockGemini;
const geminiCases: GeminiCase[] = [];
beforeAll(async () => {
  gemini = await startMockGemini();
});
afterAll(async () => {
  gemini?.stop();
  geminiCases.forEach(removeGeminiCase);
  await cleanupDshCases();
});

const guarded = (c: { workspace: string }): string => path.join(c.workspace, "guarded.txt");

async function claudeCell(mode: DoubleMode, hooks: boolean): Promise<Cell> {
  const write = (c: E2ECase, content: string) => ({ reply: { blocks: [{ type: "tool_use" as const, name: "Write", input: { file_path: guarded(c), content: `${content}\n` } }] } });
  const c = anthropic.setup(`mx-claude-${mode}`, hooks ? "hooks" : "none", "claude", (c) => ({
    claude: [write(c, "first"), { reply: { blocks: [{ type: "tool_use", name: "mcp__velesdb-memory__recall_fused", input: { query: "guarded.txt" } }] } }, write(c, "second"), { reply: text("DONE answer") }],
  }), { projectConfig: OPT_IN, mcp: { mode } });
  const spy = hooks ? spyOnInstalledHooks(c.home) : undefined;
  const r = await runClaude(c, ["-p", "edit, recall, edit"], { timeoutMs: RUN_TIMEOUT_MS });
  const messages: any[] = r.requests.at(-1)?.body?.messages ?? [];
  const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
  const writes = blocks.filter((b) => b?.type === "tool_use" && b.name === "Write").map((b) => b.id);
  const edits = writes.map((id): EditOutcome => {
    const result = blocks.find((b) => b?.type === "tool_result" && b.tool_use_id === id);
    const body = typeof result?.content === "string" ? result.content : JSON.stringify(result?.content ?? "");
    if (result?.is_error === true && body.includes(REFUSAL)) return "refused";
    if (result && result.is_error !== true) return "applied";
    return `other: ${body.slice(0, 160)}`;
  });
  return cellOf(r, edits, guarded(c), spiedRecall(spy, "post-tool-use", (p) => p?.tool_name === "mcp__velesdb-memory__recall_fused"));
}

async function codexCell(mode: DoubleMode, hooks: boolean): Promise<Cell> {
  const patch = (id: string, content: string) => ({
    reply: { items: [{ type: "custom_tool_call", name: "apply_patch", call_id: id, input: `*** Begin Patch\n*** Add File: guarded.txt\n+${content}\n*** End Patch\n` }] },
  });
  const c = anthropic.setup(`mx-codex-${mode}`, hooks ? "hooks" : "none", "codex", () => ({
    codex: [
      patch("p1", "first"),
      { reply: { items: [{ type: "tool_search_call", call_id: "s1", execution: "client", arguments: { query: "recall" } }] } },
      { reply: { items: [{ type: "function_call", namespace: "mcp__velesdb_memory", name: "recall_fused", arguments: JSON.stringify({ query: "guarded.txt" }), call_id: "r1" }] } },
      patch("p2", "second"),
      { reply: codexText("DONE_FINAL") },
    ],
  }), { projectConfig: OPT_IN, mcp: { mode } });
  const spy = hooks ? spyOnInstalledHooks(c.home) : undefined;
  const r = await runCodex(c, "edit, recall, edit", { timeoutMs: RUN_TIMEOUT_MS });
  const input: any[] = r.requests.at(-1)?.body?.input ?? [];
  const edits = ["p1", "p2"].map((id): EditOutcome => {
    const out = input.find((i) => i?.type === "custom_tool_call_output" && i.call_id === id);
    const body = JSON.stringify(out?.output ?? "");
    if (!out) return "other: no output";
    if (body.includes(REFUSAL)) return "refused";
    return /Success|A guarded\.txt/.test(body) ? "applied" : `other: ${body.slice(0, 160)}`;
  });
  return cellOf(r, edits, guarded(c), spiedRecall(spy, "post-tool-use", (p) => p?.tool_name === "mcp__velesdb_memory__recall_fused"));
}

async function geminiCell(mode: DoubleMode, hooks: boolean): Promise<Cell> {
  const write = (content: string) => geminiCall("write_file", { file_path: "guarded.txt", content: `${content}\n` });
  const turns = [{ reply: write("first") }, { reply: geminiCall("mcp_velesdb-memory_recall_fused", { query: "guarded.txt" }) }, { reply: write("second") }, { reply: geminiText("DONE") }];
  const c = createGeminiCase(gemini, `mx-gemini-${mode}`, hooks ? "hooks" : "none", turns, { projectConfig: OPT_IN, mcpMode: mode });
  geminiCases.push(c);
  const spy = hooks ? spyOnInstalledHooks(c.home) : undefined;
  const r = await runGemini(c, "edit, recall, edit", RUN_TIMEOUT_MS);
  const edits = functionResponses(r)
    .filter((f) => f.name === "write_file")
    .map((f): EditOutcome => {
      const error = f.response.error;
      if (typeof error === "string" && error.includes(REFUSAL)) return "refused";
      if (f.response.output !== undefined && error === undefined) return "applied";
      return `other: ${JSON.stringify(f.response).slice(0, 160)}`;
    });
  const detail = `exit=${r.exitCode} timedOut=${r.timedOut} requests=${r.requests.length} stderr: ${r.stderr.slice(-600)}`;
  return { edits, file: readFile(guarded(c)), ...spiedRecall(spy, "after-tool", (p) => p?.tool_name === "mcp_velesdb-memory_recall_fused"), detail };
}

/** The chat-completions hosts: what the model saw for each call of `tool` in the last request. */
function chatEdits(r: RunResult, tool: string, refused: (answer: string) => boolean): EditOutcome[] {
  const messages = messagesOf(r.requests.at(-1)?.body);
  const ids = messages.flatMap((m) => (Array.isArray(m?.tool_calls) ? m.tool_calls : [])).filter((t: any) => t?.function?.name === tool).map((t: any) => t.id);
  return ids.map((id: string): EditOutcome => {
    const answer = messageText(messages.find((m) => m?.role === "tool" && m.tool_call_id === id));
    if (refused(answer)) return "refused";
    return /success|created|wrote|written/i.test(answer) ? "applied" : `other: ${answer.slice(0, 160)}`;
  });
}

async function qwenCell(mode: DoubleMode, hooks: boolean): Promise<Cell> {
  const write = (c: E2ECase, content: string) => ({ reply: chatTool("write_file", { file_path: guarded(c), content: `${content}\n` }) });
  const recall = { reply: chatTool("mcp__velesdb-memory__recall_fused", { query: "guarded.txt" }) };
  const c = qwen.setup(`mx-qwen-${mode}`, hooks ? "hooks" : "none", (c) => [write(c, "first"), recall, write(c, "second"), { reply: chatText("DONE") }], { projectConfig: OPT_IN, mcpMode: mode });
  const spy = hooks ? spyOnInstalledHooks(c.home) : undefined;
  const r = await runQwen(c, qwen.chat, "edit, recall, edit", RUN_TIMEOUT_MS);
  const edits = chatEdits(r, "write_file", (a) => a.includes(REFUSAL));
  return cellOf(r, edits, guarded(c), spiedRecall(spy, "post-tool-use", (p) => p?.tool_name === "mcp__velesdb-memory__recall_fused"));
}

async function copilotCell(mode: DoubleMode, hooks: boolean): Promise<Cell> {
  const create = (c: E2ECase, content: string) => ({ reply: chatTool("create", { path: guarded(c), file_text: `${content}\n` }) });
  const recall = { reply: chatTool("velesdb-memory-recall_fused", { query: "guarded.txt" }) };
  const c = copilot.setup(`mx-${mode}`, hooks ? "hooks" : "none", { turns: (c) => [create(c, "first"), recall, create(c, "second"), { reply: chatText("DONE answer") }], mcp: { mode } });
  const spy = hooks ? spyOnInstalledHooks(c.home) : undefined;
  const r = await copilot.run(c, "edit, recall, edit", undefined, undefined, {}, RUN_TIMEOUT_MS);
  const edits = chatEdits(r, "create", (a) => a.includes(REFUSAL));
  return cellOf(r, edits, guarded(c), spiedRecall(spy, "post-tool-use", (p) => p?.toolName === "velesdb-memory-recall_fused", (p) => p?.toolResult));
}

async function dshCell(mode: DoubleMode, hooks: boolean): Promise<Cell> {
  const c: DshCase = createDshCase(`mx-${mode}`, { mode: hooks ? "ours" : "absent", projectConfig: { ...DSH_PROJECT, enforce_learning_loop: true } });
  const agent = c.newAgent();
  await c.bridge.sessionStart(agent);
  agent.startTurn();
  await c.bridge.preStep(agent, "edit, recall, edit");
  const target = guarded(c);
  const edit = async (content: string): Promise<EditOutcome> => {
    const o = await c.bridge.toolCall(agent, "write", { path: target, content }, () => {
      fs.writeFileSync(target, `${content}\n`);
      return { content: [{ type: "text", text: `wrote ${target}` }] };
    });
    if (o.stage === "denied" && o.text.includes(REFUSAL)) return "refused";
    return o.stage === "ran" && !o.isError ? "applied" : `other: ${o.stage} ${o.text.slice(0, 160)}`;
  };
  const first = await edit("first");
  await c.bridge.toolCall(agent, "mcp__velesdb-memory__recall_fused", { query: "parser" }, () => doubleToolResult(mode));
  const second = await edit("second");
  const posts = c.bash.spawns.filter((s) => s.stdin !== undefined && JSON.parse(s.stdin).hook_event_name === "PostToolUse").map((s) => JSON.parse(s.stdin!));
  const toolResponse = hooks ? posts.map((p) => shapeOf(p.tool_response)).join(" ") || "-" : "-";
  const sample = posts[0] === undefined ? undefined : JSON.stringify(posts[0].tool_response);
  return { edits: [first, second], file: readFile(target), toolResponse, sample, detail: `${c.bash.spawns.length} hook process(es)` };
}

function cellOf(r: RunResult, edits: EditOutcome[], file: string, spied: { toolResponse: string; sample?: string }): Cell {
  const detail = `exit=${r.exitCode} timedOut=${r.timedOut} requests=${r.requests.length} stderr: ${r.stderr.slice(-600)}`;
  return { edits, file: readFile(file), ...spied, detail };
}

const HOSTS: Record<HostName, (mode: DoubleMode, hooks: boolean) => Promise<Cell>> = {
  claude: claudeCell,
  codex: codexCell,
  dsh: dshCell,
  gemini: geminiCell,
  qwen: qwenCell,
  copilot: copilotCell,
};

/** The cell's check: refused before the recall; after it, applied exactly when the mode unlocks. */
function problemsOf(cell: Cell, unlocks: boolean): string[] {
  const p: string[] = [];
  if (cell.edits.length !== 2) p.push(`${cell.edits.length} edit result(s) in the last request, expected 2: ${JSON.stringify(cell.edits)}`);
  if (cell.edits[0] !== "refused") p.push(`the edit before the recall was ${cell.edits[0]}, expected refused`);
  const expected = unlocks ? "applied" : "refused";
  if (cell.edits[1] !== expected) p.push(`the edit after the recall was ${cell.edits[1]}, expected ${expected}`);
  const file = unlocks ? "second" : undefined;
  if (cell.file !== file) p.push(`guarded.txt holds ${JSON.stringify(cell.file)}, expected ${JSON.stringify(file)}`);
  return p;
}

/** One cell; a cell that throws becomes a failed cell of its own host, not of the whole matrix. */
async function guardedCell(host: HostName, mode: DoubleMode, hooks: boolean): Promise<Cell> {
  try {
    return await HOSTS[host](mode, hooks);
  } catch (error) {
    return { edits: [`other: the run threw: ${String(error).slice(0, 300)}`], file: undefined, toolResponse: "-", detail: String((error as Error)?.stack ?? error) };
  }
}

// All cells of all hosts share one pool, started once: most of a host run is waiting (process
// start-up, MCP handshakes), so packing every host's cells together is what keeps this file short.
type Row = { cells: Cell[]; control: Cell };
let matrix: Promise<Record<HostName, Row>> | undefined;
function runMatrix(): Promise<Record<HostName, Row>> {
  matrix ??= (async () => {
    const hosts = Object.keys(HOSTS) as HostName[];
    const jobs = hosts.flatMap((host) => [...DOUBLE_MODES.map((mode) => ({ host, mode, hooks: true })), { host, mode: "structured" as DoubleMode, hooks: false }]);
    // dsh runs in this process, on the bridge's own listeners, with a bounded wait for its hook
    // processes: its cells go first, one at a time, before the host processes load the machine.
    const inProcess = jobs.filter((j) => j.host === "dsh");
    const spawned = jobs.filter((j) => j.host !== "dsh");
    const dshCells = await pool(inProcess.map((j) => () => guardedCell(j.host, j.mode, j.hooks)), 1);
    const hostCells = await pool(spawned.map((j) => () => guardedCell(j.host, j.mode, j.hooks)), CONCURRENCY);
    const byJob = new Map([...inProcess.map((j, i) => [j, dshCells[i]!] as const), ...spawned.map((j, i) => [j, hostCells[i]!] as const)]);
    const rows = {} as Record<HostName, Row>;
    for (const host of hosts) {
      const mine = jobs.filter((j) => j.host === host);
      rows[host] = { cells: mine.filter((j) => j.hooks).map((j) => byJob.get(j)!), control: byJob.get(mine.find((j) => !j.hooks)!)! };
    }
    return rows;
  })();
  return matrix;
}

describe("recall matrix", () => {
  for (const host of Object.keys(HOSTS) as HostName[]) {
    test(`${host}: refused → recall → the same edit, for every answer of the double; hooks off refuses nothing`, async () => {
      const { cells, control } = (await runMatrix())[host];
      console.log(DOUBLE_MODES.map((mode, i) => `${host} ${mode}: edits ${JSON.stringify(cells[i]!.edits)} tool_response ${cells[i]!.toolResponse}${process.env.VH_E2E_VERBOSE ? `\n  ${cells[i]!.sample?.slice(0, 600)}` : ""}`).join("\n"));
      const failures = DOUBLE_MODES.flatMap((mode, i) => problemsOf(cells[i]!, UNLOCKS[mode]).map((p) => `${mode}: ${p}\n  ${cells[i]!.detail}`));
      expect(failures).toEqual([]);
      // Negative control: without our hooks nothing is refused, so the cell's check fails.
      expect(problemsOf(control, true).length).toBeGreaterThan(0);
      expect(control.edits[0]).toBe("applied");
      const measured = DOUBLE_MODES.map((mode) => `${mode}: ${MEASURED_RESPONSE[host][mode]}`);
      expect(DOUBLE_MODES.map((mode, i) => `${mode}: ${cells[i]!.toolResponse}`)).toEqual(measured);
    }, 900_000);
  }
});
