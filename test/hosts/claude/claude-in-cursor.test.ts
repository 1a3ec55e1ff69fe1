// Claude Code's hooks run by other hosts (docs/hosts/claude.md): Cursor and Devin CLI run the hooks in
// ~/.claude/settings.json with their own payloads. The `claude` entries must never crash,
// never deny a non-edit, and never answer in a shape the caller misreads.
//
// Cursor payloads (fixtures/payloads/cursor/) are written from Cursor's documentation, not
// captured (no Cursor runs here): https://cursor.com/docs/hooks (common fields, per-event
// input and output) and https://cursor.com/docs/reference/third-party-hooks (Claude hooks in
// Cursor: event and tool-name mapping, Stop as a follow-up message).
// Devin CLI rows follow its documented Claude-compatible payloads (tool names `edit`, `exec`,
// MCP `mcp__<server>__<tool>`; environment DEVIN_PROJECT_DIR); see docs/hosts/claude.md.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { cursorIsCalling } from "../../../src/hosts/claude.ts";
import { encodeCursorAnswer } from "../../../src/hosts/claude-in-cursor.ts";
import {
  loadPayload,
  makeSandbox,
  parseOneJsonAnswer,
  runBinary,
  writeConfig,
  type Sandbox,
} from "../../support/hook-runner.ts";

let box: Sandbox;
beforeEach(() => {
  box = makeSandbox("cursor");
  writeConfig(box.workspace, { project: "cur-app", session: "slot", enforce_learning_loop: true });
});
afterEach(() => box.cleanup());

const LOAD = 'load_working_context(project="cur-app", session="slot/';
const SAVE = 'save_working_context(project="cur-app", session="slot/';

/** A Cursor fixture with its /e2e paths moved into this sandbox's workspace. */
function cursorPayload(name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const text = fs.readFileSync(
    path.join(import.meta.dir, "..", "..", "..", "fixtures", "payloads", "cursor", `${name}.json`),
    "utf8",
  );
  return { ...(JSON.parse(text.replaceAll("/e2e/ws", box.workspace)) as Record<string, unknown>), ...overrides };
}

const claudeRun = (event: string, payload: Record<string, unknown> | string, env: Record<string, string> = {}) => {
  const result = runBinary(["claude", event], payload, { env: { ...box.env, ...env }, cwd: box.home });
  expect(result.exitCode).toBe(0);
  return result;
};
const answerOf = (event: string, payload: Record<string, unknown> | string, env: Record<string, string> = {}) =>
  parseOneJsonAnswer(claudeRun(event, payload, env).stdout);
const claudeWrite = () =>
  loadPayload("claude", "pre-tool-use.write", {
    cwd: box.workspace,
    tool_input: { file_path: path.join(box.workspace, "a.ts"), content: "x\n" },
  });
const denied = (answer: Record<string, unknown>) =>
  (answer.hookSpecificOutput as Record<string, unknown> | undefined)?.permissionDecision === "deny";

describe("who is calling", () => {
  test.each([
    ["a Cursor payload", { cursor_version: "2.1.0", hook_event_name: "stop" }, {}, true],
    ["a Cursor payload, without the variable", { cursor_version: "2.1.0" }, {}, true],
    ["nothing parsed, CURSOR_VERSION set", {}, { CURSOR_VERSION: "2.1.0" }, true],
    // Claude Code started from Cursor's terminal may inherit the variable: its payload decides.
    [
      "a Claude payload, CURSOR_VERSION set",
      { session_id: "s", hook_event_name: "Stop" },
      { CURSOR_VERSION: "2.1.0" },
      false,
    ],
    ["a Claude payload", { session_id: "s", hook_event_name: "Stop" }, {}, false],
    ["an empty cursor_version", { cursor_version: "" }, {}, false],
    ["a cursor_version that is not a string", { cursor_version: 2 }, {}, false],
  ])("%s", (_name, payload, env, expected) => {
    expect(cursorIsCalling(payload, env)).toBe(expected);
  });
});

describe("Cursor's answer shapes", () => {
  test.each([
    [{ kind: "addContext", text: "t" }, { additional_context: "t" }],
    [{ kind: "continue", text: "t" }, { followup_message: "t" }],
    [
      { kind: "deny", reason: "r" },
      { permission: "deny", user_message: "r", agent_message: "r" },
    ],
    [{ kind: "pass" }, {}],
    [{ kind: "summariserInstructions", text: "t" }, {}],
    [{ kind: "replaceOutput", toolResponse: { stdout: "" } }, {}],
  ] as const)("%o", (decision, expected) => {
    const answer = encodeCursorAnswer("X", decision);
    expect(answer.exitCode).toBe(0);
    expect(parseOneJsonAnswer(answer.stdout)).toEqual(expected);
  });
});

describe("Claude hooks run by Cursor", () => {
  test("preToolUse Write in an opted-in repository: a pass, where Claude's own Write is denied (control)", () => {
    expect(denied(answerOf("pre-tool-use", claudeWrite()))).toBe(true);
    // No recall can ever be recorded under Cursor (its MCP names never reach our matcher),
    // and its deny reason goes to the user, not the model: a refusal would never lift.
    expect(answerOf("pre-tool-use", cursorPayload("pre-tool-use.write"))).toEqual({});
    // The docs do not say which event name Cursor sends to a Claude hook: Claude's own spelling passes too.
    expect(answerOf("pre-tool-use", cursorPayload("pre-tool-use.write", { hook_event_name: "PreToolUse" }))).toEqual(
      {},
    );
    expect(answerOf("pre-tool-use", cursorPayload("pre-tool-use.shell"))).toEqual({});
  });

  test("postToolUse (Shell, MCP): `{}`, never Claude's updatedToolOutput; no recall is recorded", () => {
    expect(answerOf("post-tool-use", cursorPayload("post-tool-use.shell"))).toEqual({});
    expect(answerOf("post-tool-use", cursorPayload("post-tool-use.mcp-recall"))).toEqual({});
    // The MCP call did not unlock Claude's own guard for the workspace either.
    expect(denied(answerOf("pre-tool-use", claudeWrite()))).toBe(true);
  });

  test("sessionStart: the load guidance as Cursor's additional_context, for the workspace root (no cwd in the payload)", () => {
    const answer = answerOf("session-start", cursorPayload("session-start.startup"));
    expect(Object.keys(answer)).toEqual(["additional_context"]);
    expect(String(answer.additional_context)).toContain(LOAD);
  });

  test("stop: one followup_message with the save call, then `{}`; never Claude's additionalContext", () => {
    const first = answerOf("stop", cursorPayload("stop.completed"));
    expect(Object.keys(first)).toEqual(["followup_message"]);
    expect(String(first.followup_message)).toContain(SAVE);
    expect(answerOf("stop", cursorPayload("stop.completed", { loop_count: 1 }))).toEqual({});
  });

  test("stop with broken state: `{}` — Cursor never marks a continuation, so continuing could loop", () => {
    const file = path.join(box.root, "not-a-dir");
    fs.writeFileSync(file, "x");
    const env = { VELESDB_HOOKS_STATE_DIR: path.join(file, "state") };
    expect(answerOf("stop", cursorPayload("stop.completed"), env)).toEqual({});
    // Control: Claude Code's own first Stop with the same broken state still continues once.
    const claude = answerOf("stop", loadPayload("claude", "stop.first", { cwd: box.workspace }), env);
    expect(claude.hookSpecificOutput).toBeDefined();
  });

  test("preCompact: `{}` (JSON), never the plain-text summariser instructions Claude reads", () => {
    const run = claudeRun("pre-compact", cursorPayload("pre-compact.auto"));
    expect(parseOneJsonAnswer(run.stdout)).toEqual({});
    // Control: Claude Code's own PreCompact gets the instructions as plain text.
    const claude = claudeRun("pre-compact", loadPayload("claude", "pre-compact.auto", { cwd: box.workspace })).stdout;
    expect(claude).toContain(SAVE);
  });

  test.each([
    ["pre-tool-use", []],
    ["pre-compact", []],
    ["post-tool-use", []],
    ["session-start", ["additional_context"]],
    ["stop", ["followup_message"]],
  ])(
    "unparsable stdin with CURSOR_VERSION set, %s: one answer in Cursor's shape, exit 0, one stderr line",
    (event, keys) => {
      const run = claudeRun(event, "not json", { CURSOR_VERSION: "2.1.0" });
      expect(Object.keys(parseOneJsonAnswer(run.stdout))).toEqual(keys);
      expect(run.stderr).toMatch(/^velesdb-hooks: [^\n]*\n$/);
    },
  );
});

describe("Claude hooks run by Devin CLI (Claude-shaped payloads, its own tool names)", () => {
  const devin = (overrides: Record<string, unknown>) => ({
    session_id: "devin-1",
    cwd: box.workspace,
    hook_event_name: "PreToolUse",
    ...overrides,
  });
  const DEVIN_ENV = { DEVIN_PROJECT_DIR: "" };

  test.each([
    ["edit", { file_path: "a.ts", old_string: "a", new_string: "b" }],
    ["exec", { command: "ls" }],
    ["mcp__velesdb-memory__recall_fused", { query: "q" }],
  ])("PreToolUse %s: a Claude pass, never a deny of a tool that is not Claude's edit tool", (tool, input) => {
    expect(
      answerOf("pre-tool-use", devin({ tool_name: tool, tool_input: input }), {
        ...DEVIN_ENV,
        DEVIN_PROJECT_DIR: box.workspace,
      }),
    ).toEqual({});
  });

  test("a recall through Devin counts as evidence (same MCP spelling as Claude), and Stop answers in Claude's shape", () => {
    answerOf("post-tool-use", {
      ...devin({ hook_event_name: "PostToolUse" }),
      tool_name: "mcp__velesdb-memory__recall_fused",
      tool_input: { query: "q" },
      tool_response: [{ type: "text", text: "[]" }],
    });
    expect(answerOf("pre-tool-use", { ...claudeWrite(), session_id: "devin-1" })).toEqual({});
    const stop = answerOf("stop", devin({ hook_event_name: "Stop", stop_hook_active: false }));
    expect(stop.hookSpecificOutput).toBeDefined();
  });
});
