// Captures the transcripts the real hosts write into fixtures/transcripts/<host>/ (docs/working-context.md#transcripts-per-host: the
// hooks turn them into compile_transcript's JSONL, src/core/transcript.ts). Run it after building
// the binary and installing the e2e hosts:
//
//   bun scripts/build.ts && bun scripts/capture-transcripts.ts [host …]
//
// Each host runs offline against the e2e mocks (test/e2e/README.md), with our hooks installed by
// our own installer, through the same scripted session (its words: test/support/transcript-session.ts): the user asks PROMPT; the model thinks
// THINKING (a reasoning block, where the host's API has one), says ASSISTANT_FIRST and runs
// TOOL_COMMAND, which prints NOTE_TEXT; it answers ASSISTANT_FINAL; our Stop hook asks for one
// continuation, answered CONTINUATION. Turns are picked by position (mock-llm.ts), so a change of
// our hook texts changes nothing here.
//
// The installed binary is wrapped (harness.ts spyOnInstalledHooks) so that every hook run
// also leaves a copy of the file its payload names (`transcript_path`, Copilot's `transcriptPath`)
// as it was when the hook ran, before our hook itself runs. `<host>/stop.<ext>` is the copy taken
// at the session's LAST Stop (Gemini: AfterAgent, Copilot: agentStop): exactly what a Stop hook
// reads. Claude Code and Codex also go through a compaction (`precompact`, `after-compact`). The
// case directory (a fresh /tmp/vh-e2e-… of the capturing machine) becomes CASE_PLACEHOLDER, also
// in the dash-joined form the hosts name their per-project folders with, and the host's own
// prose (system prompts, tool descriptions) becomes a placeholder (withoutHostProse); no other
// byte changes.
// A capture whose hook received no readable file stops with what the payload said.
import * as fs from "node:fs";
import * as path from "node:path";
import {
  baseEnv,
  claudeSessionId,
  createCase,
  doubleArgs,
  HOOKS_BIN,
  registerHooks,
  runClaude,
  runCodex,
  runInstaller,
  runProcess,
  shellQuote,
  spiedRuns,
  spyOnInstalledHooks,
  writeFileMaking,
  type CaseOptions,
  type E2ECase,
  type RunResult,
  type SpiedRun,
} from "../test/e2e/harness.ts";
import { runCodebuddyLive, writeCodebuddyModel } from "../test/hosts/codebuddy/codebuddy-harness.ts";
import { copilotOfflineEnv } from "../test/hosts/copilot/copilot-harness.ts";
import { droidCustomModel, runDroidExec } from "../test/hosts/droid/droid-harness.ts";
import { HOST_BINS } from "../test/e2e/host-bins.ts";
import { startMockGemini, type GeminiTurn } from "../test/hosts/gemini/mock-gemini.ts";
import { startMockLlm, type ClaudeReply, type CodexReply, type MockLlm, type Scenario } from "../test/e2e/mock-llm.ts";
import { chatText, startMockOpenAiChat, type ChatTurn, type MockOpenAiChat } from "../test/e2e/mock-openai-chat.ts";
import { createGeminiCase, runGemini } from "../test/hosts/gemini/gemini-harness.ts";
import { runQwen, settingsPath, userSettings as qwenUserSettings } from "../test/hosts/qwen/qwen-harness.ts";
import {
  ANSWER_AFTER_COMPACT,
  ASSISTANT_FINAL,
  ASSISTANT_FIRST,
  CASE_PLACEHOLDER,
  CONTINUATION,
  NOTE_TEXT,
  PROMPT,
  PROMPT_AFTER_COMPACT,
  SUMMARY,
  THINKING,
  TOOL_COMMAND,
} from "../test/support/transcript-session.ts";

const ROOT = path.resolve(import.meta.dir, "..");
const OUT = path.join(ROOT, "fixtures", "transcripts");

const HOSTS = ["claude", "codex", "gemini", "qwen", "droid", "codebuddy", "copilot"] as const;
type CaptureHost = (typeof HOSTS)[number];

/** One fixture: its file name under fixtures/transcripts/<host>/ and its bytes. */
interface Fixture {
  readonly file: string;
  readonly bytes: Buffer;
  /** How it was taken, for the log line. */
  readonly how: string;
}

function fail(message: string): never {
  console.error(`capture-transcripts: ${message}`);
  process.exit(1);
}

// ---- The wrapper around the installed binary -------------------------------------------------------

/**
 * wrapInstalledHooks(c) → the directory where each hook run of the installed binary leaves
 * `<n>.argv`, `<n>.stdin` and, when its payload names a transcript, `<n>.transcript` (copied
 * before the real hook runs) or `<n>.transcript-error`: harness.ts spyOnInstalledHooks with the
 * copy added. The host keeps the command it was given. A run whose second argument is
 * `probe-only` is recorded and answers nothing (an event we do not install, registered only to
 * see what the host hands it).
 */
function wrapInstalledHooks(c: { readonly home: string; readonly root: string }): string {
  const copier = path.join(c.root, "copy-transcript.mjs");
  fs.writeFileSync(
    copier,
    [
      'import * as fs from "node:fs";',
      "const base = process.argv[2];",
      "let payload;",
      'try { payload = JSON.parse(fs.readFileSync(base + ".stdin", "utf8")); } catch { process.exit(0); }',
      "let named = payload?.transcript_path ?? payload?.transcriptPath;",
      // Copilot's sessionEnd names no transcript: look where its agentStop said the file is.
      'if (named === undefined && process.argv[3] && typeof payload?.sessionId === "string") named = process.argv[3].replace("{sessionId}", payload.sessionId);',
      'if (typeof named !== "string" || named === "") process.exit(0);',
      'try { fs.copyFileSync(named, base + ".transcript"); } catch (e) { fs.writeFileSync(base + ".transcript-error", String(e)); }',
      "",
    ].join("\n"),
  );
  const copilotEvents = path.join(c.home, ".copilot", "session-state", "{sessionId}", "events.jsonl");
  return spyOnInstalledHooks(c.home, {
    dir: path.join(c.root, "hook-runs"),
    beforeHook: [
      `node ${shellQuote(copier)} "$n" ${shellQuote(copilotEvents)}`,
      `if [ "$2" = probe-only ]; then exit 0; fi`,
    ],
  });
}

interface HookRun extends SpiedRun {
  readonly transcript: Buffer | undefined;
  readonly copyError: string | undefined;
}

/** hookRuns(dir) → the runs wrapInstalledHooks recorded, oldest first, with the transcript copied at each. */
function hookRuns(dir: string): HookRun[] {
  return spiedRuns(dir).map((run) => ({
    ...run,
    transcript: fs.existsSync(`${run.base}.transcript`) ? fs.readFileSync(`${run.base}.transcript`) : undefined,
    copyError: fs.existsSync(`${run.base}.transcript-error`)
      ? fs.readFileSync(`${run.base}.transcript-error`, "utf8")
      : undefined,
  }));
}

/** lastCopy(dir, event, from) → the copy taken at the last run of `event` (after the first `from` runs), or why none. */
function lastCopy(host: CaptureHost, dir: string, event: string, output: string, from = 0): Buffer {
  const runs = hookRuns(dir).slice(from);
  const last = runs.filter((r) => r.argv[1] === event).at(-1);
  if (!last)
    fail(
      `${host}: no ${event} hook run (runs: ${runs.map((r) => r.argv.join(" ")).join(", ")})\n${output.slice(-4000)}`,
    );
  if (!last.transcript)
    fail(
      `${host}: ${event}: ${last.copyError ?? "the payload names no transcript"}\npayload: ${JSON.stringify(last.payload)}`,
    );
  return last.transcript;
}

/** placeholders(c, bytes) → bytes with the case directory replaced by CASE_PLACEHOLDER (plain and dash-joined). */
function placeholders(c: { readonly root: string }, bytes: Buffer): Buffer {
  const forms: [string, string][] = [
    [c.root, CASE_PLACEHOLDER],
    [c.root.replace(/[^A-Za-z0-9]/g, "-"), CASE_PLACEHOLDER.replace(/[^A-Za-z0-9]/g, "-")],
    // CodeBuddy drops the leading dash of that form.
    [
      c.root.replace(/[^A-Za-z0-9]/g, "-").replace(/^-/, ""),
      CASE_PLACEHOLDER.replace(/[^A-Za-z0-9]/g, "-").replace(/^-/, ""),
    ],
  ];
  let text = bytes.toString("latin1");
  for (const [from, to] of forms) text = text.split(from).join(to);
  return Buffer.from(text, "latin1");
}

/** The session's own words and ours: a string holding one of them is conversation (or our hook text) and is kept whole. */
const KEPT_WORDS = [
  PROMPT,
  THINKING,
  ASSISTANT_FIRST,
  TOOL_COMMAND,
  NOTE_TEXT,
  ASSISTANT_FINAL,
  CONTINUATION,
  PROMPT_AFTER_COMPACT,
  ANSWER_AFTER_COMPACT,
  SUMMARY,
  "velesdb",
];
/** A string longer than this that holds none of KEPT_WORDS is the host's own prose. */
const HOST_PROSE_MIN_CHARS = 200;

/**
 * withoutHostProse(host, bytes) → bytes with the host's own prose (system prompts, tool, skill
 * and agent descriptions: strings over HOST_PROSE_MIN_CHARS holding none of KEPT_WORDS) replaced
 * by a placeholder naming its length, so no sentence of a host's is in this repository, as
 * scripts/capture-velesdb-memory-wire.ts does for the server's. A string wrapped in one tag keeps
 * its tags (`<environment_context>…</environment_context>`): the converter must still see, and
 * drop, a wholly tagged message. The literal is replaced in place, so every other byte, key and
 * line stays as the host wrote it; a line whose literal cannot be found is left whole.
 */
function withoutHostProse(host: CaptureHost, bytes: Buffer): Buffer {
  const stub = (prose: string): string => {
    const note = `(${host}'s own text, ${prose.length} characters, not copied)`;
    const open = /^<([A-Za-z][\w-]*)[^>]*>/.exec(prose);
    return open && prose.trimEnd().endsWith(`</${open[1]}>`) ? `${open[0]}${note}</${open[1]}>` : note;
  };
  const lines = bytes
    .toString("utf8")
    .split("\n")
    .map((line) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return line;
      }
      const prose = new Set<string>(); // one text may sit in two places (a tool's description and its schema's)
      const walk = (value: unknown): void => {
        if (typeof value === "string") {
          if (value.length > HOST_PROSE_MIN_CHARS && !KEPT_WORDS.some((word) => value.includes(word))) prose.add(value);
        } else if (Array.isArray(value)) value.forEach(walk);
        else if (value && typeof value === "object") Object.values(value).forEach(walk);
      };
      walk(parsed);
      let out = line;
      for (const text of prose) {
        const literal = JSON.stringify(text);
        if (!out.includes(literal)) return line;
        out = out.split(literal).join(JSON.stringify(stub(text)));
      }
      try {
        JSON.parse(out);
      } catch {
        return line;
      }
      return out;
    });
  return Buffer.from(lines.join("\n"));
}

function removeCaptureCase(c: { readonly root: string }): void {
  if (process.env.VH_E2E_KEEP) console.error(`kept ${c.root}`);
  else fs.rmSync(c.root, { recursive: true, force: true });
}

const notesFile = (workspace: string): void => fs.writeFileSync(path.join(workspace, "notes.txt"), `${NOTE_TEXT}\n`);

/** Runs that failed or timed out stop the capture: a fixture must come from a session that ended normally. */
function ended(host: CaptureHost, r: Pick<RunResult, "exitCode" | "timedOut" | "stdout" | "stderr">): void {
  if (r.timedOut || r.exitCode !== 0)
    fail(
      `${host}: the run ended with ${r.timedOut ? "a timeout" : `exit ${r.exitCode}`}\n${(r.stdout + r.stderr).slice(-4000)}`,
    );
}

/**
 * copyAtLast(host, c, run) → the copy taken at the last `event` (default stop) hook run of one
 * session `run` starts in the case, its hooks wrapped first; the case is removed after. A session
 * that failed stops the capture, unless `mayFail` (CodeBuddy's live run ends by being killed).
 */
async function copyAtLast(
  host: CaptureHost,
  c: { readonly home: string; readonly root: string },
  run: () => Promise<Pick<RunResult, "exitCode" | "timedOut" | "stdout" | "stderr">>,
  options: { event?: string; mayFail?: boolean } = {},
): Promise<Buffer> {
  const dir = wrapInstalledHooks(c);
  const r = await run();
  if (!options.mayFail) ended(host, r);
  const copy = lastCopy(host, dir, options.event ?? "stop", r.stdout + r.stderr);
  removeCaptureCase(c);
  return copy;
}

// ---- One runner per host ----------------------------------------------------------------------

const claudeFirst: ClaudeReply = {
  blocks: [
    { type: "thinking", thinking: THINKING },
    { type: "text", text: ASSISTANT_FIRST },
    { type: "tool_use", name: "Bash", input: { command: TOOL_COMMAND, description: "Read the notes" } },
  ],
};
const claudeText = (text: string): ClaudeReply => ({ blocks: [{ type: "text", text }] });

/** Claude Code: the session (stop), a manual /compact of it (precompact), then one more prompt on the compacted session (after-compact). */
async function captureClaude(llm: MockLlm): Promise<Fixture[]> {
  const c = createCase(llm, "capture-claude");
  llm.script(c.scenario, {
    claude: [
      {
        matchLast: /Please provide your summary/,
        reply: claudeText(`<analysis>ok</analysis>\n<summary>${SUMMARY}</summary>`),
      },
      { matchLast: /Anything else in the notes/, reply: claudeText(ANSWER_AFTER_COMPACT) },
      { reply: claudeFirst },
      { reply: claudeText(ASSISTANT_FINAL) },
      { reply: claudeText(CONTINUATION) },
    ],
  });
  notesFile(c.workspace);
  registerHooks(c, "claude");
  const dir = wrapInstalledHooks(c);
  const first = await runClaude(c, ["-p", PROMPT]);
  ended("claude", first);
  const stop = lastCopy("claude", dir, "stop", first.stdout + first.stderr);
  const sessionId = claudeSessionId(first) ?? fail(`claude: no session id in ${first.stdout}`);
  const before = hookRuns(dir).length;
  const compact = await runClaude(c, ["-p", "/compact", "--resume", sessionId]);
  ended("claude", compact);
  const precompact = lastCopy("claude", dir, "pre-compact", compact.stdout + compact.stderr, before);
  const beforeThird = hookRuns(dir).length;
  const third = await runClaude(c, ["-p", PROMPT_AFTER_COMPACT, "--resume", sessionId]);
  ended("claude", third);
  const afterCompact = lastCopy("claude", dir, "stop", third.stdout + third.stderr, beforeThird);
  removeCaptureCase(c);
  return [
    { file: "stop.jsonl", bytes: placeholders(c, stop), how: "at the last Stop of `claude -p`" },
    {
      file: "precompact.jsonl",
      bytes: placeholders(c, precompact),
      how: "at PreCompact of `claude -p /compact --resume`",
    },
    {
      file: "after-compact.jsonl",
      bytes: placeholders(c, afterCompact),
      how: "at the last Stop of the next `--resume`",
    },
  ];
}

const codexMessage = (text: string) => ({
  type: "message",
  role: "assistant",
  content: [{ type: "output_text", text }],
});
const codexFirst = (totalTokens?: number): CodexReply => ({
  items: [
    {
      type: "reasoning",
      id: "rs_notes",
      summary: [{ type: "summary_text", text: THINKING }],
      content: null,
      encrypted_content: null,
    },
    codexMessage(ASSISTANT_FIRST),
    {
      type: "function_call",
      name: "exec_command",
      arguments: JSON.stringify({ cmd: TOOL_COMMAND }),
      call_id: "call_notes",
    },
  ],
  totalTokens,
});

const codexSays = (text: string): CodexReply => ({ items: [codexMessage(text)] });

/** codexStopCopy(llm, name, replies, options) → the copy at the last Stop of `codex exec PROMPT` in a fresh case scripted with `replies`, and that case. */
async function codexStopCopy(
  llm: MockLlm,
  name: string,
  replies: NonNullable<Scenario["codex"]>,
  options: CaseOptions = {},
): Promise<{ c: E2ECase; stop: Buffer }> {
  const c = createCase(llm, name, options);
  llm.script(c.scenario, { codex: replies });
  notesFile(c.workspace);
  registerHooks(c, "codex");
  return { c, stop: await copyAtLast("codex", c, () => runCodex(c, PROMPT)) };
}

/** Codex: the session (stop); then the same session with auto-compaction after the tool call (after-compact). */
async function captureCodex(llm: MockLlm): Promise<Fixture[]> {
  const plain = await codexStopCopy(llm, "capture-codex", [
    // Codex counts a reply's message and its function_call as two turns: the continuation is
    // recognised by the host's own wrapper of a Stop reason instead.
    { matchLast: /<hook_prompt/, reply: codexSays(CONTINUATION) },
    { reply: codexFirst() },
    { reply: codexSays(ASSISTANT_FINAL) },
  ]);
  // Auto-compaction as test/e2e/lifecycle.e2e.test.ts provokes it: a reply reporting 50 000 tokens
  // against model_auto_compact_token_limit = 2000.
  const compacted = await codexStopCopy(
    llm,
    "capture-codex-compact",
    [
      { matchLast: /<hook_prompt/, reply: codexSays(CONTINUATION) },
      { matchLast: /CONTEXT CHECKPOINT COMPACTION/, reply: codexSays(SUMMARY) },
      { match: /Another language model started to solve this problem/, reply: codexSays(ASSISTANT_FINAL) },
      { reply: codexFirst(50_000) },
      { reply: codexSays(ASSISTANT_FINAL) },
    ],
    { codex: { autoCompactTokenLimit: 2000 } },
  );
  return [
    { file: "stop.jsonl", bytes: placeholders(plain.c, plain.stop), how: "at the last Stop of `codex exec`" },
    {
      file: "after-compact.jsonl",
      bytes: placeholders(compacted.c, compacted.stop),
      how: "at the last Stop of `codex exec` with auto-compaction after the tool call",
    },
  ];
}

async function captureGemini(): Promise<Fixture[]> {
  const mock = await startMockGemini();
  try {
    const turns: GeminiTurn[] = [
      {
        reply: {
          parts: [
            { text: THINKING, thought: true },
            { text: ASSISTANT_FIRST },
            { functionCall: { name: "run_shell_command", args: { command: TOOL_COMMAND } } },
          ],
        },
      },
      { reply: { parts: [{ text: ASSISTANT_FINAL }] } },
      { reply: { parts: [{ text: CONTINUATION }] } },
    ];
    const c = createGeminiCase(mock, "capture-gemini", "hooks", turns);
    notesFile(c.workspace);
    const stop = await copyAtLast(
      "gemini",
      c,
      async () => {
        const r = await runGemini(c, PROMPT);
        if (mock.escaped().length > 0) fail(`gemini: requests left 127.0.0.1: ${mock.escaped().join(", ")}`);
        return r;
      },
      { event: "after-agent" },
    );
    return [{ file: "stop.jsonl", bytes: placeholders(c, stop), how: "at the last AfterAgent of `gemini -p`" }];
  } finally {
    mock.stop();
  }
}

/** The chat-completions session: the first reply streams reasoning, text and the tool call. */
function chatTurns(toolName: string, args: Record<string, unknown>): ChatTurn[] {
  return [
    {
      reply: {
        reasoning: THINKING,
        text: ASSISTANT_FIRST,
        toolCalls: [{ name: toolName, arguments: args, id: "call_notes" }],
      },
    },
    { reply: chatText(ASSISTANT_FINAL) },
    { reply: chatText(CONTINUATION) },
  ];
}

async function captureQwen(llm: MockLlm, chat: MockOpenAiChat): Promise<Fixture[]> {
  const c = createCase(llm, "capture-qwen", { mcp: {} });
  fs.mkdirSync(path.dirname(settingsPath(c)), { recursive: true });
  fs.writeFileSync(settingsPath(c), `${JSON.stringify(qwenUserSettings(c), null, 2)}\n`);
  chat.script(c.scenario, chatTurns("run_shell_command", { command: TOOL_COMMAND }));
  notesFile(c.workspace);
  runInstaller(c, "qwen", "install");
  const stop = await copyAtLast("qwen", c, () => runQwen(c, chat, PROMPT));
  return [{ file: "stop.jsonl", bytes: placeholders(c, stop), how: "at the last Stop of `qwen -p`" }];
}

async function captureDroid(llm: MockLlm, chat: MockOpenAiChat): Promise<Fixture[]> {
  const c = createCase(llm, "capture-droid");
  // Droid 0.225.2 refuses an Execute call without its risk fields (measured: "missing required parameters").
  chat.script(
    c.scenario,
    chatTurns("Execute", { command: TOOL_COMMAND, riskLevelReason: "It only reads one file.", riskLevel: "low" }),
  );
  notesFile(c.workspace);
  writeFileMaking(
    path.join(c.home, ".factory", "settings.json"),
    `${JSON.stringify({ customModels: [droidCustomModel(c, chat)] }, null, 2)}\n`,
  );
  runInstaller(c, "droid", "install");
  const stop = await copyAtLast("droid", c, () => runDroidExec(c, PROMPT));
  return [{ file: "stop.jsonl", bytes: placeholders(c, stop), how: "at the last Stop of `droid exec`" }];
}

/** CodeBuddy runs live, as test/hosts/codebuddy/codebuddy.e2e.test.ts runs it: `-p "PROMPT"` exits before the Stop continuation. */
async function captureCodebuddy(llm: MockLlm, chat: MockOpenAiChat): Promise<Fixture[]> {
  const c = createCase(llm, "capture-codebuddy");
  chat.script(c.scenario, chatTurns("Bash", { command: TOOL_COMMAND, description: "Read the notes" }));
  notesFile(c.workspace);
  writeCodebuddyModel(c, chat);
  runInstaller(c, "codebuddy", "install");
  const stop = await copyAtLast("codebuddy", c, () => runCodebuddyLive(c, chat, PROMPT), { mayFail: true });
  return [
    {
      file: "stop.jsonl",
      bytes: placeholders(c, stop),
      how: "at the last Stop of a live `codebuddy -p` (stream-json)",
    },
  ];
}

/**
 * Copilot: `copilot -p` wrote events.jsonl only when it exited (at both agentStops of the first
 * run the file did not exist yet), so the session is resumed once: the agentStop of the second run
 * finds the file the first run left. A sessionEnd hook (which we do not install) is registered
 * as probe-only, to see whether the file exists by then.
 */
async function captureCopilot(llm: MockLlm, chat: MockOpenAiChat): Promise<Fixture[]> {
  const c = createCase(llm, "capture-copilot", { mcp: {} });
  chat.script(c.scenario, [
    { matchLast: /Anything else in the notes/, reply: chatText(ANSWER_AFTER_COMPACT) },
    ...chatTurns("bash", { command: TOOL_COMMAND, description: "Read the notes" }),
  ]);
  notesFile(c.workspace);
  writeFileMaking(
    path.join(c.home, ".copilot", "mcp-config.json"),
    JSON.stringify({
      mcpServers: { "velesdb-memory": { type: "local", command: "node", args: doubleArgs(c.mcpLog), tools: ["*"] } },
    }),
  );
  runInstaller(c, "copilot", "install");
  const dir = wrapInstalledHooks(c);
  const hooksFile = path.join(c.home, ".copilot", "hooks", "velesdb-hooks.json");
  const hooks = JSON.parse(fs.readFileSync(hooksFile, "utf8"));
  const bin = path.join(c.home, ".velesdb-hooks", "bin", path.basename(HOOKS_BIN));
  hooks.hooks.sessionEnd = [{ type: "command", bash: `${shellQuote(bin)} copilot probe-only`, timeoutSec: 10 }];
  fs.writeFileSync(hooksFile, JSON.stringify(hooks, null, 2));
  const env = {
    ...baseEnv(c),
    ...copilotOfflineEnv(path.join(c.root, "cache"), chat.baseUrl(c.scenario), "gpt-4.1"),
  };
  const run = (args: string[]) =>
    runProcess(["node", HOST_BINS.copilot, ...args, "--allow-all-tools"], env, c.workspace, 180_000);
  const first = await run(["-p", PROMPT]);
  ended("copilot", first);
  const firstRuns = hookRuns(dir);
  const report = firstRuns
    .filter((r) => r.argv[1] === "stop" || r.argv[1] === "probe-only")
    .map(
      (r) =>
        `${r.argv[1]}: ${r.transcript ? `${r.transcript.length} bytes` : (r.copyError ?? "no path").split("\n")[0]}`,
    );
  console.error(`copilot, first run: ${report.join("; ")}`);
  const sessionId = firstRuns.find((r) => typeof r.payload?.sessionId === "string")?.payload?.sessionId as string;
  const second = await run(["-p", PROMPT_AFTER_COMPACT, `--resume=${sessionId}`]);
  ended("copilot", second);
  const stop = lastCopy("copilot", dir, "stop", second.stdout + second.stderr, firstRuns.length);
  const end = fs.readFileSync(path.join(c.home, ".copilot", "session-state", sessionId, "events.jsonl"));
  removeCaptureCase(c);
  return [
    { file: "stop.jsonl", bytes: placeholders(c, stop), how: "at the last agentStop of a resumed `copilot -p`" },
    { file: "end.jsonl", bytes: placeholders(c, end), how: "after the resumed `copilot -p` exited" },
  ];
}

// ---- Main ---------------------------------------------------------------------------------------

if (import.meta.main) {
  if (!fs.existsSync(HOOKS_BIN)) fail(`${HOOKS_BIN} is missing: run \`bun scripts/build.ts\` first`);
  const asked = process.argv.slice(2);
  for (const h of asked) if (!HOSTS.includes(h as CaptureHost)) fail(`unknown host ${h} (one of ${HOSTS.join(", ")})`);
  const hosts = asked.length > 0 ? (asked as CaptureHost[]) : [...HOSTS];
  const llm = await startMockLlm();
  const chat = startMockOpenAiChat();
  const runners: Record<CaptureHost, () => Promise<Fixture[]>> = {
    claude: () => captureClaude(llm),
    codex: () => captureCodex(llm),
    gemini: () => captureGemini(),
    qwen: () => captureQwen(llm, chat),
    droid: () => captureDroid(llm, chat),
    codebuddy: () => captureCodebuddy(llm, chat),
    copilot: () => captureCopilot(llm, chat),
  };
  try {
    for (const host of hosts) {
      for (const fixture of await runners[host]()) {
        const out = path.join(OUT, host, fixture.file);
        const bytes = withoutHostProse(host, fixture.bytes);
        fs.mkdirSync(path.dirname(out), { recursive: true });
        fs.writeFileSync(out, bytes);
        console.log(
          `${path.relative(ROOT, out)}: ${bytes.length} bytes (${fixture.bytes.length} as written), ${fixture.how}`,
        );
      }
    }
    // Droid also tries Factory's own service (test/hosts/droid/droid.e2e.test.ts); anything else is a leak.
    const escaped = llm.escaped().filter((line) => !/^CONNECT (api|telemetry)\.factory\.ai:443 /.test(line));
    if (escaped.length > 0) fail(`requests left 127.0.0.1: ${escaped.join(", ")}`);
  } finally {
    llm.stop();
    chat.stop();
  }
}
