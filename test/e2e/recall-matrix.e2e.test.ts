// The recall matrix (docs/how-it-works.md#what-counts-as-a-recall-per-host-measured): host × what
// velesdb-memory answers → does the next edit apply?
//
// Every host runs for real (the DeepSeek bridge in-process, see dsh-harness.ts) in an opted-in
// repository (`enforce_learning_loop: true`): the model edits (refused), calls recall_fused,
// answered by the velesdb-memory double (fake-velesdb-memory.mjs), then makes the same edit
// again. The verdict is read from what the model's LAST request carries for each edit (our
// refusal, or the tool's success) and checked against the file as it was right after that edit.
// Each host also runs once without our hooks (negative control: the first edit is not refused,
// so the cell's check fails).
//
// One host run is one SESSION: a recall that does not unlock leaves the guard closed, so the
// answers that must not unlock are chained in one run (edit refused → recall answered in mode A
// → same edit refused → recall in mode B → … → recall in a mode that unlocks → edit applied; the
// double answers its Nth recall in the Nth mode of a `--mode` list). An unlock opens the guard
// for the rest of the session (docs/contract.md §6.2), so every other mode that unlocks has a run of its own.
// A cell (host × mode) is its recall's part of a session: the edit before it, the edit after it,
// the file after that edit, what the host handed our hook for it. Same checks as one run per
// cell, about half the host runs (each run is mostly host start-up).
//
// The installed binary is wrapped by a spy (harness.ts spyOnInstalledHooks), so each cell also
// records what the host handed our PostToolUse hook as `tool_response` for its recall (told apart
// by the recall's query): that is the measured wire the table of docs/how-it-works.md reports, and it is
// asserted here, so a host upgrade that changes it fails this file.
//
// Sessions run concurrently (at most CONCURRENCY host processes at once, on 2 cores).
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { copilotSuite } from "../hosts/copilot/copilot-harness.ts";
import {
  createDshCase,
  cleanupDshCases,
  doubleToolResult,
  DSH_PROJECT,
  type DshCase,
} from "../hosts/dsh/dsh-harness.ts";
import { answerLine } from "./fake-velesdb-memory.mjs";
import {
  createGeminiCase,
  functionResponses,
  removeGeminiCase,
  runGemini,
  type GeminiCase,
} from "../hosts/gemini/gemini-harness.ts";
import {
  DOUBLE_MODES,
  e2eSuite,
  E2E_PROJECT,
  FAKE_MCP,
  runClaude,
  runCodex,
  spiedRuns,
  spyOnInstalledHooks,
  type DoubleMode,
  type E2ECase,
  type RunResult,
} from "./harness.ts";
import { codexText, text } from "./mock-llm.ts";
import { geminiCall, geminiText, startMockGemini, type MockGemini } from "../hosts/gemini/mock-gemini.ts";
import { chatText, chatTool, messagesOf, messageText, type ChatReply } from "./mock-openai-chat.ts";
import { qwenSuite, runQwen } from "../hosts/qwen/qwen-harness.ts";
import { afterAll, beforeAll } from "bun:test";

const OPT_IN = { ...E2E_PROJECT, enforce_learning_loop: true };
const CONCURRENCY = 6;
// A host run may take long on a loaded machine (Qwen Code alone takes 40–50 s a run here); a
// hung run is still killed, just later than the suites' defaults.
const RUN_TIMEOUT_MS = 180_000;

type HostName = "claude" | "codex" | "dsh" | "gemini" | "qwen" | "copilot";
type EditOutcome = "refused" | "applied" | `other: ${string}`;

/** What one run of a host saw: an edit before each recall and one after the last. */
interface Session {
  /** What the model's last request carries for each edit, in order (one more than recalls). */
  readonly edits: EditOutcome[];
  /** guarded.txt right after each edit (read when the host next asked the model); undefined: no file. */
  readonly files: (string | undefined)[];
  /** Per recall: its tool_response as our PostToolUse hook got it, described (see shapeOf); "-" when no PostToolUse ran for it. */
  readonly recalls: Spied[];
  readonly detail: string;
}

interface Spied {
  readonly toolResponse: string;
  /** The first such tool_response, as JSON (for the report). */
  readonly sample?: string;
}

// ---- What was measured (docs/how-it-works.md#what-counts-as-a-recall-per-host-measured)
// ----------------------------------------------------------
// Per host and double mode: does the same edit apply after the recall, and what did the host hand
// our PostToolUse hook. The table in docs/how-it-works.md is this table.
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
    "text-only": '[{text:json,type:"text"}]',
    "non-json": '[{text:text,type:"text"}]',
  },
  codex: {
    structured: '{content:[{text:json,type:"text"}],isError:false,structuredContent:{memories:[{\u2026}]}}',
    empty: '{content:[{text:json,type:"text"}],isError:false,structuredContent:{memories:[]}}',
    "rpc-error": "-",
    "is-error": "-",
    "text-only": '{content:[{text:json,type:"text"}],isError:false}',
    "non-json": '{content:[{text:text,type:"text"}],isError:false}',
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
    "rpc-error": '{error:{message:text,type:"mcp_tool_error"},llmContent:text,returnDisplay:text}',
    "is-error": '{error:{message:text,type:"mcp_tool_error"},llmContent:text,returnDisplay:text}',
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
    structured: '{resultType:"success",textResultForLlm:json}',
    empty: '{resultType:"success",textResultForLlm:json}',
    "rpc-error": "-",
    "is-error": "-",
    "text-only": '{resultType:"success",textResultForLlm:json}',
    "non-json": '{resultType:"success",textResultForLlm:text}',
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
  if (Array.isArray(value))
    return depth > 2 ? "[…]" : `[${[...new Set(value.map((v) => shapeOf(v, depth + 1)))].join("|")}]`;
  if (value !== null && typeof value === "object") {
    if (depth > 2) return "{…}";
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${k}:${["isError", "is_error", "resultType", "type"].includes(k) ? JSON.stringify((value as any)[k]) : shapeOf((value as any)[k], depth + 1)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "undefined";
}

// The host runs: the modes that do not unlock chained in one session ending on a mode that
// unlocks, and every other mode that unlocks alone. The failing modes and text-only share a
// session because together they are one server (a text server: tools/list without outputSchema,
// see fake-velesdb-memory.mjs), as structured and empty are.
const SESSIONS: readonly (readonly DoubleMode[])[] = [
  ["rpc-error", "is-error", "non-json", "text-only"],
  ["structured"],
  ["empty"],
];

/** The edit a session makes before its recall `k` (and, k = recalls, after the last), as the file then holds it. */
const editContent = (k: number): string => `edit ${k + 1}`;
/** The recall's query, which tells the spied PostToolUse runs of one session apart. */
const recallQuery = (i: number, n: number): string => `guarded.txt [recall ${i + 1}/${n}]`;
/** The double's --mode for a session: a comma list answers one recall per mode (fake-velesdb-memory.mjs). */
const modeArg = (modes: readonly DoubleMode[]): DoubleMode => modes.join(",") as DoubleMode;

/** Per recall of a session, what our PostToolUse hook got for it (spy), told apart by the recall's query. */
function spiedRecalls(
  spyDir: string | undefined,
  n: number,
  event: string,
  recall: (payload: any) => boolean,
  field: (payload: any) => unknown = (p) => p?.tool_response,
  input: (payload: any) => unknown = (p) => p?.tool_input,
): Spied[] {
  const runs = spyDir ? spiedRuns(spyDir).filter((r) => r.argv.at(-1) === event && recall(r.payload)) : [];
  return Array.from({ length: n }, (_, i) => {
    const mine = runs.filter((r) => JSON.stringify(input(r.payload) ?? "").includes(recallQuery(i, n)));
    if (mine.length === 0) return { toolResponse: "-" };
    return {
      toolResponse: mine.map((r) => shapeOf(field(r.payload))).join(" "),
      sample: JSON.stringify(field(mine[0]!.payload)),
    };
  });
}

const readFile = (file: string): string | undefined =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim() : undefined;

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

/**
 * sessionScript(modes, file, edit, recall, done) → the model's turns for one session: edit 0,
 * recall 0, edit 1, …, the last edit, done; the turn after each edit reads file() when the host
 * asks for it (the edit has run by then), into `files`.
 */
function sessionScript<R>(
  modes: readonly DoubleMode[],
  file: () => string,
  edit: (k: number) => R,
  recall: (i: number, n: number) => R[],
  done: R,
): { turns: { reply: R | (() => R) }[]; files: (string | undefined)[] } {
  const files: (string | undefined)[] = [];
  const read: boolean[] = [];
  const after = (k: number, reply: R) => () => {
    if (!read[k]) {
      read[k] = true;
      files[k] = readFile(file());
    }
    return reply;
  };
  const n = modes.length;
  const turns: { reply: R | (() => R) }[] = [];
  for (let k = 0; k <= n; k++) {
    turns.push({ reply: edit(k) });
    const next = k < n ? recall(k, n) : [done];
    turns.push({ reply: after(k, next[0]!) }, ...next.slice(1).map((reply) => ({ reply })));
  }
  return { turns, files };
}

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
const label = (modes: readonly DoubleMode[]): string => modes.join("_");

async function claudeSession(modes: readonly DoubleMode[], hooks: boolean): Promise<Session> {
  let files: (string | undefined)[] = [];
  const c = anthropic.setup(
    `mx-claude-${label(modes)}`,
    hooks ? "hooks" : "none",
    "claude",
    (c) => {
      const script = sessionScript(
        modes,
        () => guarded(c),
        (k) => ({
          blocks: [
            {
              type: "tool_use" as const,
              name: "Write",
              input: { file_path: guarded(c), content: `${editContent(k)}\n` },
            },
          ],
        }),
        (i, n) => [
          {
            blocks: [
              {
                type: "tool_use" as const,
                name: "mcp__velesdb-memory__recall_fused",
                input: { query: recallQuery(i, n) },
              },
            ],
          },
        ],
        text("DONE answer"),
      );
      files = script.files;
      return { claude: script.turns };
    },
    { projectConfig: OPT_IN, mcp: { mode: modeArg(modes) } },
  );
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
  return sessionOf(
    r,
    edits,
    files,
    spiedRecalls(spy, modes.length, "post-tool-use", (p) => p?.tool_name === "mcp__velesdb-memory__recall_fused"),
  );
}

async function codexSession(modes: readonly DoubleMode[], hooks: boolean): Promise<Session> {
  let files: (string | undefined)[] = [];
  const c = anthropic.setup(
    `mx-codex-${label(modes)}`,
    hooks ? "hooks" : "none",
    "codex",
    (c) => {
      const script = sessionScript(
        modes,
        () => guarded(c),
        (k) => ({
          items: [
            {
              type: "custom_tool_call",
              name: "apply_patch",
              call_id: `p${k}`,
              input: `*** Begin Patch\n*** Add File: guarded.txt\n+${editContent(k)}\n*** End Patch\n`,
            },
          ],
        }),
        // Codex defers MCP tools: the first recall is found by a tool search, then called.
        (i, n) => [
          ...(i === 0
            ? [
                {
                  items: [
                    { type: "tool_search_call", call_id: "s1", execution: "client", arguments: { query: "recall" } },
                  ],
                },
              ]
            : []),
          {
            items: [
              {
                type: "function_call",
                namespace: "mcp__velesdb_memory",
                name: "recall_fused",
                arguments: JSON.stringify({ query: recallQuery(i, n) }),
                call_id: `r${i}`,
              },
            ],
          },
        ],
        codexText("DONE_FINAL"),
      );
      files = script.files;
      return { codex: script.turns };
    },
    { projectConfig: OPT_IN, mcp: { mode: modeArg(modes) } },
  );
  const spy = hooks ? spyOnInstalledHooks(c.home) : undefined;
  const r = await runCodex(c, "edit, recall, edit", { timeoutMs: RUN_TIMEOUT_MS });
  const input: any[] = r.requests.at(-1)?.body?.input ?? [];
  const edits = Array.from({ length: modes.length + 1 }, (_, k): EditOutcome => {
    const out = input.find((i) => i?.type === "custom_tool_call_output" && i.call_id === `p${k}`);
    const body = JSON.stringify(out?.output ?? "");
    if (!out) return "other: no output";
    if (body.includes(REFUSAL)) return "refused";
    return /Success|A guarded\.txt/.test(body) ? "applied" : `other: ${body.slice(0, 160)}`;
  });
  return sessionOf(
    r,
    edits,
    files,
    spiedRecalls(spy, modes.length, "post-tool-use", (p) => p?.tool_name === "mcp__velesdb_memory__recall_fused"),
  );
}

async function geminiSession(modes: readonly DoubleMode[], hooks: boolean): Promise<Session> {
  const name = `mx-gemini-${label(modes)}`;
  // The case (its workspace) is made from the turns: the file is named once it exists, before
  // any turn runs.
  let file = "";
  const script = sessionScript(
    modes,
    () => file,
    (k) => geminiCall("write_file", { file_path: "guarded.txt", content: `${editContent(k)}\n` }),
    (i, n) => [geminiCall("mcp_velesdb-memory_recall_fused", { query: recallQuery(i, n) })],
    geminiText("DONE"),
  );
  const c = createGeminiCase(gemini, name, hooks ? "hooks" : "none", script.turns, {
    projectConfig: OPT_IN,
    mcpMode: modeArg(modes),
  });
  file = guarded(c);
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
  return {
    edits,
    files: script.files,
    recalls: spiedRecalls(spy, modes.length, "after-tool", (p) => p?.tool_name === "mcp_velesdb-memory_recall_fused"),
    detail,
  };
}

/** The chat-completions hosts: what the model saw for each call of `tool` in the last request. */
function chatEdits(r: RunResult, tool: string, refused: (answer: string) => boolean): EditOutcome[] {
  const messages = messagesOf(r.requests.at(-1)?.body);
  const ids = messages
    .flatMap((m) => (Array.isArray(m?.tool_calls) ? m.tool_calls : []))
    .filter((t: any) => t?.function?.name === tool)
    .map((t: any) => t.id);
  return ids.map((id: string): EditOutcome => {
    const answer = messageText(messages.find((m) => m?.role === "tool" && m.tool_call_id === id));
    if (refused(answer)) return "refused";
    return /success|created|wrote|written/i.test(answer) ? "applied" : `other: ${answer.slice(0, 160)}`;
  });
}

/** The chat-completions hosts' session script: `edit(content)` writes guarded.txt, `recallTool` recalls. */
function chatScript(
  modes: readonly DoubleMode[],
  c: E2ECase,
  edit: (content: string) => ChatReply,
  recallTool: string,
  done: string,
) {
  return sessionScript(
    modes,
    () => guarded(c),
    (k) => edit(`${editContent(k)}\n`),
    (i, n) => [chatTool(recallTool, { query: recallQuery(i, n) })],
    chatText(done),
  );
}

async function qwenSession(modes: readonly DoubleMode[], hooks: boolean): Promise<Session> {
  let files: (string | undefined)[] = [];
  const c = qwen.setup(
    `mx-qwen-${label(modes)}`,
    hooks ? "hooks" : "none",
    (c) => {
      const script = chatScript(
        modes,
        c,
        (content) => chatTool("write_file", { file_path: guarded(c), content }),
        "mcp__velesdb-memory__recall_fused",
        "DONE",
      );
      files = script.files;
      return script.turns;
    },
    { projectConfig: OPT_IN, mcpMode: modeArg(modes) },
  );
  const spy = hooks ? spyOnInstalledHooks(c.home) : undefined;
  const r = await runQwen(c, qwen.chat, "edit, recall, edit", RUN_TIMEOUT_MS);
  const edits = chatEdits(r, "write_file", (a) => a.includes(REFUSAL));
  return sessionOf(
    r,
    edits,
    files,
    spiedRecalls(spy, modes.length, "post-tool-use", (p) => p?.tool_name === "mcp__velesdb-memory__recall_fused"),
  );
}

async function copilotSession(modes: readonly DoubleMode[], hooks: boolean): Promise<Session> {
  let files: (string | undefined)[] = [];
  const c = copilot.setup(`mx-${label(modes)}`, hooks ? "hooks" : "none", {
    turns: (c) => {
      const script = chatScript(
        modes,
        c,
        (content) => chatTool("create", { path: guarded(c), file_text: content }),
        "velesdb-memory-recall_fused",
        "DONE answer",
      );
      files = script.files;
      return script.turns;
    },
    mcp: { mode: modeArg(modes) },
  });
  const spy = hooks ? spyOnInstalledHooks(c.home) : undefined;
  const r = await copilot.run(c, "edit, recall, edit", undefined, undefined, {}, RUN_TIMEOUT_MS);
  const edits = chatEdits(r, "create", (a) => a.includes(REFUSAL));
  const recalls = spiedRecalls(
    spy,
    modes.length,
    "post-tool-use",
    (p) => p?.toolName === "velesdb-memory-recall_fused",
    (p) => p?.toolResult,
    (p) => p?.toolArgs,
  );
  return sessionOf(r, edits, files, recalls);
}

async function dshSession(modes: readonly DoubleMode[], hooks: boolean): Promise<Session> {
  const c: DshCase = createDshCase(`mx-${label(modes)}`, {
    mode: hooks ? "ours" : "absent",
    projectConfig: { ...DSH_PROJECT, enforce_learning_loop: true },
  });
  const agent = c.newAgent();
  await c.bridge.sessionStart(agent);
  agent.startTurn();
  await c.bridge.preStep(agent, "edit, recall, edit");
  const target = guarded(c);
  const edits: EditOutcome[] = [];
  const files: (string | undefined)[] = [];
  const edit = async (k: number): Promise<void> => {
    const content = editContent(k);
    const o = await c.bridge.toolCall(agent, "write", { path: target, content }, () => {
      fs.writeFileSync(target, `${content}\n`);
      return { content: [{ type: "text", text: `wrote ${target}` }] };
    });
    if (o.stage === "denied" && o.text.includes(REFUSAL)) edits.push("refused");
    else edits.push(o.stage === "ran" && !o.isError ? "applied" : `other: ${o.stage} ${o.text.slice(0, 160)}`);
    files.push(readFile(target));
  };
  // The bridge's MCP client is not published: each recall's result is the double's answer in
  // that recall's mode, as doubleToolResult hands it over. The bridge hands a hook no tool
  // arguments (`tool_input: {command: ""}` for any tool but a shell), so a recall's PostToolUse
  // is the one spawned while that recall ran.
  const recalls: Spied[] = [];
  for (const [i, mode] of modes.entries()) {
    await edit(i);
    const spawned = c.bash.spawns.length;
    const args = { query: recallQuery(i, modes.length) };
    await c.bridge.toolCall(agent, "mcp__velesdb-memory__recall_fused", args, () => doubleToolResult(mode, args));
    const posts = c.bash.spawns
      .slice(spawned)
      .flatMap((s) =>
        s.stdin !== undefined && JSON.parse(s.stdin).hook_event_name === "PostToolUse" ? [JSON.parse(s.stdin)] : [],
      );
    recalls.push(
      posts.length === 0
        ? { toolResponse: "-" }
        : {
            toolResponse: posts.map((p) => shapeOf(p.tool_response)).join(" "),
            sample: JSON.stringify(posts[0].tool_response),
          },
    );
  }
  await edit(modes.length);
  return { edits, files, recalls, detail: `${c.bash.spawns.length} hook process(es)` };
}

function sessionOf(r: RunResult, edits: EditOutcome[], files: (string | undefined)[], recalls: Spied[]): Session {
  const detail = `exit=${r.exitCode} timedOut=${r.timedOut} requests=${r.requests.length} stderr: ${r.stderr.slice(-600)}`;
  return { edits, files, recalls, detail };
}

const HOSTS: Record<HostName, (modes: readonly DoubleMode[], hooks: boolean) => Promise<Session>> = {
  claude: claudeSession,
  codex: codexSession,
  dsh: dshSession,
  gemini: geminiSession,
  qwen: qwenSession,
  copilot: copilotSession,
};

/**
 * The check of recall `i` of a session whose recalls are answered in `modes`: the edit before it
 * refused (no file); the edit after it applied (the file holds that edit) exactly when its mode
 * unlocks, else refused (still no file).
 */
function problemsOf(session: Session, modes: readonly DoubleMode[], i: number): string[] {
  const p: string[] = [];
  const expectedEdits = modes.length + 1;
  if (session.edits.length !== expectedEdits)
    p.push(
      `${session.edits.length} edit result(s) in the last request, expected ${expectedEdits}: ${JSON.stringify(session.edits)}`,
    );
  if (session.edits[i] !== "refused") p.push(`the edit before the recall was ${session.edits[i]}, expected refused`);
  if (session.files[i] !== undefined)
    p.push(`guarded.txt held ${JSON.stringify(session.files[i])} before the recall, expected no file`);
  const unlocks = UNLOCKS[modes[i]!];
  const expected = unlocks ? "applied" : "refused";
  if (session.edits[i + 1] !== expected)
    p.push(`the edit after the recall was ${session.edits[i + 1]}, expected ${expected}`);
  const file = unlocks ? editContent(i + 1) : undefined;
  if (session.files[i + 1] !== file)
    p.push(`guarded.txt held ${JSON.stringify(session.files[i + 1])} after the edit, expected ${JSON.stringify(file)}`);
  return p;
}

/** One session; one that throws becomes a failed session of its own host, not of the whole matrix. */
async function guardedSession(host: HostName, modes: readonly DoubleMode[], hooks: boolean): Promise<Session> {
  try {
    return await HOSTS[host](modes, hooks);
  } catch (error) {
    return {
      edits: [`other: the run threw: ${String(error).slice(0, 300)}`],
      files: [],
      recalls: modes.map(() => ({ toolResponse: "-" })),
      detail: String((error as Error)?.stack ?? error),
    };
  }
}

// All sessions of all hosts share one pool, started once: most of a host run is waiting (process
// start-up, MCP handshakes), so packing every host's runs together is what keeps this file short.
type Row = { sessions: Session[]; control: Session };
const CONTROL: readonly DoubleMode[] = ["structured"];
let matrix: Promise<Record<HostName, Row>> | undefined;
function runMatrix(): Promise<Record<HostName, Row>> {
  matrix ??= (async () => {
    const hosts = Object.keys(HOSTS) as HostName[];
    const jobs = hosts.flatMap((host) => [
      ...SESSIONS.map((modes) => ({ host, modes, hooks: true })),
      { host, modes: CONTROL, hooks: false },
    ]);
    // dsh runs in this process, on the bridge's own listeners, with a bounded wait for its hook
    // processes: its runs go first, one at a time, before the host processes load the machine.
    const inProcess = jobs.filter((j) => j.host === "dsh");
    const spawned = jobs.filter((j) => j.host !== "dsh");
    const dshRuns = await pool(
      inProcess.map((j) => () => guardedSession(j.host, j.modes, j.hooks)),
      1,
    );
    const hostRuns = await pool(
      spawned.map((j) => () => guardedSession(j.host, j.modes, j.hooks)),
      CONCURRENCY,
    );
    const byJob = new Map([
      ...inProcess.map((j, i) => [j, dshRuns[i]!] as const),
      ...spawned.map((j, i) => [j, hostRuns[i]!] as const),
    ]);
    const rows = {} as Record<HostName, Row>;
    for (const host of hosts) {
      const mine = jobs.filter((j) => j.host === host);
      rows[host] = {
        sessions: mine.filter((j) => j.hooks).map((j) => byJob.get(j)!),
        control: byJob.get(mine.find((j) => !j.hooks)!)!,
      };
    }
    return rows;
  })();
  return matrix;
}

/** Where each mode's recall is: its session (index into SESSIONS) and its place in it. */
const PLACE = Object.fromEntries(
  SESSIONS.flatMap((modes, s) => modes.map((mode, i) => [mode, { s, i }] as const)),
) as Record<DoubleMode, { s: number; i: number }>;

describe("recall matrix", () => {
  test("the sessions answer every mode of the double once, each chain failing until its last recall", () => {
    expect([...SESSIONS.flat()].sort()).toEqual([...DOUBLE_MODES].sort());
    for (const modes of SESSIONS)
      expect(modes.map((m) => UNLOCKS[m])).toEqual(modes.map((_, i) => i === modes.length - 1));
  });

  test("the double answers a session's Nth recall as its Nth mode alone does, and nothing else differently", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "matrix", version: "0" } },
    };
    const call = (id: number, name: string, args: unknown) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name, arguments: args },
    });
    for (const modes of SESSIONS) {
      const requests = [
        init,
        ...modes.flatMap((_, i) => [
          call(2 * i + 1, "recall_fused", { query: recallQuery(i, modes.length) }),
          call(2 * i + 2, "load_working_context", { project: "p", session: "s" }),
        ]),
      ];
      const proc = Bun.spawn(["node", FAKE_MCP, "--mode", modeArg(modes)], {
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
      });
      proc.stdin.write(requests.map((r) => `${JSON.stringify(r)}\n`).join(""));
      proc.stdin.end();
      const lines = (await new Response(proc.stdout).text()).split("\n").filter((l) => l !== "");
      const server = modes.find((m) => m === "text-only" || m === "non-json") ?? modes[0]!;
      const session = { protocolVersion: "2025-06-18" };
      const alone = (mode: DoubleMode, r: any) => answerLine(mode, r, session)!.trimEnd();
      expect(lines).toEqual([
        alone(server, init),
        ...modes.flatMap((mode, i) => [alone(mode, requests[2 * i + 1]), alone(server, requests[2 * i + 2])]),
      ]);
    }
  });

  for (const host of Object.keys(HOSTS) as HostName[]) {
    test(`${host}: refused → recall → the same edit, for every answer of the double; hooks off refuses nothing`, async () => {
      const { sessions, control } = (await runMatrix())[host];
      const cell = (mode: DoubleMode) => ({
        session: sessions[PLACE[mode].s]!,
        modes: SESSIONS[PLACE[mode].s]!,
        i: PLACE[mode].i,
      });
      const shown = (mode: DoubleMode) => {
        const { session, i } = cell(mode);
        const recall = session.recalls[i]!;
        return `${host} ${mode}: edits ${JSON.stringify(session.edits.slice(i, i + 2))} tool_response ${recall.toolResponse}${process.env.VH_E2E_VERBOSE ? `\n  ${recall.sample?.slice(0, 600)}` : ""}`;
      };
      console.log(DOUBLE_MODES.map(shown).join("\n"));
      const failures = DOUBLE_MODES.flatMap((mode) => {
        const { session, modes, i } = cell(mode);
        return problemsOf(session, modes, i).map((p) => `${mode}: ${p}\n  ${session.detail}`);
      });
      expect(failures).toEqual([]);
      // Negative control: without our hooks nothing is refused, so the cell's check fails.
      expect(problemsOf(control, CONTROL, 0).length).toBeGreaterThan(0);
      expect(control.edits[0]).toBe("applied");
      const measured = DOUBLE_MODES.map((mode) => `${mode}: ${MEASURED_RESPONSE[host][mode]}`);
      expect(DOUBLE_MODES.map((mode) => `${mode}: ${cell(mode).session.recalls[cell(mode).i]!.toolResponse}`)).toEqual(
        measured,
      );
    }, 900_000);
  }
});
