// Every host × every decision kind, as exact bytes and exit code
// (docs/decisions.md#hook-input-and-answers). A host that
// renames a field (or a refactor that drops one) breaks exactly the rows that use it. The
// encoders are pure, so this runs in-process; the binary's writes are covered elsewhere
// (test/unwritable-answer.test.ts for the deny fallback).
import { describe, expect, test } from "bun:test";
import type { Decision, HookAnswer } from "../src/core/decision.ts";
import { HOSTS } from "../src/hosts/index.ts";

type HostName = keyof typeof HOSTS;
type Row = readonly [label: string, wireName: string, decision: Decision, answer: HookAnswer];

const REASON = "velesdb-hooks refused this edit (recall before edit).\n- why";
const REPLACED = { stdout: "compiled", stderr: "", interrupted: false, isImage: false };
const none = (stdout: string, stderr = "", exitCode: 0 | 2 = 0): HookAnswer => ({ stdout, stderr, exitCode });
const exitTwo = (reason: string): HookAnswer => ({ stdout: "", stderr: `${reason}\n`, exitCode: 2 });
const jsonDeny = (json: string, reason: string, stderr = ""): HookAnswer => ({
  ...none(json, stderr),
  ifStdoutFails: exitTwo(reason),
});

// OpenCode's answers are what its plugin reads (src/install/clients/opencode-plugin.ts).
const OPENCODE_ROWS: readonly Row[] = [
  ["pass", "session.idle", { kind: "pass" }, none("{}\n")],
  [
    "pass with a user message: no channel, stderr only",
    "session.idle",
    { kind: "pass", userMessage: "state is broken", note: "n" },
    none("{}\n", "velesdb-hooks: n\n"),
  ],
  [
    "addContext is the system text the plugin pushes",
    "experimental.chat.system.transform",
    { kind: "addContext", text: "load" },
    none('{"system":"load"}\n'),
  ],
  [
    "continue is the prompt the plugin sends",
    "session.idle",
    { kind: "continue", text: "save" },
    none('{"prompt":"save"}\n'),
  ],
  [
    "deny is the message the plugin throws",
    "tool.execute.before",
    { kind: "deny", reason: REASON },
    jsonDeny(`{"deny":${JSON.stringify(REASON)}}\n`, REASON),
  ],
  [
    "replaceOutput is bash's output",
    "tool.execute.after",
    { kind: "replaceOutput", toolResponse: { output: "compiled" } },
    none('{"output":"compiled"}\n'),
  ],
  [
    "replaceOutput without an output string is a pass",
    "tool.execute.after",
    { kind: "replaceOutput", toolResponse: REPLACED },
    none("{}\n"),
  ],
  [
    "summariserInstructions are compaction context",
    "experimental.session.compacting",
    { kind: "summariserInstructions", text: "keep it" },
    none('{"context":"keep it"}\n'),
  ],
];

// Every kind once, plus the variants a host spells differently (notes, userMessage, PreCompact's
// silent pass, Codex's empty-reason deny, its context cut).
const ROWS: Readonly<Record<HostName, readonly Row[]>> = {
  claude: [
    ["pass", "Stop", { kind: "pass" }, none("{}\n")],
    [
      "pass with a note",
      "SessionStart",
      { kind: "pass", note: "bad\ninput" },
      none("{}\n", "velesdb-hooks: bad input\n"),
    ],
    [
      "pass with a user message",
      "Stop",
      { kind: "pass", userMessage: "state is broken", note: "n" },
      none('{"systemMessage":"state is broken"}\n', "velesdb-hooks: n\n"),
    ],
    ["pass at PreCompact is silence", "PreCompact", { kind: "pass", note: "n" }, none("", "velesdb-hooks: n\n")],
    [
      "addContext",
      "SessionStart",
      { kind: "addContext", text: "load" },
      none('{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"load"}}\n'),
    ],
    [
      "continue",
      "Stop",
      { kind: "continue", text: "save" },
      none('{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"save"}}\n'),
    ],
    [
      "deny",
      "PreToolUse",
      { kind: "deny", reason: REASON },
      jsonDeny(
        `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":${JSON.stringify(REASON)}}}\n`,
        REASON,
      ),
    ],
    [
      "replaceOutput",
      "PostToolUse",
      { kind: "replaceOutput", toolResponse: REPLACED },
      none(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":${JSON.stringify(REPLACED)}}}\n`),
    ],
    ["summariserInstructions", "PreCompact", { kind: "summariserInstructions", text: "keep it" }, none("keep it\n")],
  ],
  codex: [
    ["pass", "Stop", { kind: "pass" }, none("{}\n")],
    [
      "pass with a user message: no channel, stderr only",
      "Stop",
      { kind: "pass", userMessage: "state is broken", note: "n" },
      none("{}\n", "velesdb-hooks: n\n"),
    ],
    [
      "addContext",
      "SessionStart",
      { kind: "addContext", text: "load" },
      none('{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"load"}}\n'),
    ],
    [
      "addContext over 9 000 characters is cut at a line",
      "SessionStart",
      { kind: "addContext", text: `load\n${"x".repeat(9000)}` },
      none('{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"load"}}\n'),
    ],
    [
      "continue is decision:block",
      "Stop",
      { kind: "continue", text: "save" },
      none('{"decision":"block","reason":"save"}\n'),
    ],
    [
      "deny",
      "PreToolUse",
      { kind: "deny", reason: REASON, note: "n" },
      jsonDeny(
        `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":${JSON.stringify(REASON)}}}\n`,
        REASON,
        "velesdb-hooks: n\n",
      ),
    ],
    [
      "deny without a reason still has one",
      "PreToolUse",
      { kind: "deny", reason: "" },
      jsonDeny(
        '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"velesdb-hooks refused this edit."}}\n',
        "velesdb-hooks refused this edit.",
      ),
    ],
    [
      "replaceOutput is the block reason (it replaces the output the model reads)",
      "PostToolUse",
      { kind: "replaceOutput", toolResponse: { text: "compiled" } },
      none('{"decision":"block","reason":"compiled"}\n'),
    ],
    [
      "replaceOutput without text is a pass",
      "PostToolUse",
      { kind: "replaceOutput", toolResponse: REPLACED },
      none("{}\n"),
    ],
    [
      "summariserInstructions map to a pass",
      "PreCompact",
      { kind: "summariserInstructions", text: "keep it" },
      none("{}\n"),
    ],
  ],
  dsh: [
    ["pass", "Stop", { kind: "pass" }, none("{}\n")],
    [
      "addContext",
      "SessionStart",
      { kind: "addContext", text: "load" },
      none('{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"load"}}\n'),
    ],
    [
      "continue is decision:block",
      "Stop",
      { kind: "continue", text: "save" },
      none('{"decision":"block","reason":"save"}\n'),
    ],
    [
      "deny",
      "PreToolUse",
      { kind: "deny", reason: REASON },
      jsonDeny(
        `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":${JSON.stringify(REASON)}}}\n`,
        REASON,
      ),
    ],
    ["replaceOutput maps to a pass", "PostToolUse", { kind: "replaceOutput", toolResponse: REPLACED }, none("{}\n")],
    [
      "summariserInstructions map to a pass",
      "PreCompact",
      { kind: "summariserInstructions", text: "keep it" },
      none("{}\n"),
    ],
  ],
  // Gemini: every answer is JSON with exit 0, the deny included; its stdout fallback is the same
  // JSON on stderr (Gemini reads stderr when stdout is empty), never exit 2.
  gemini: [
    ["pass", "AfterAgent", { kind: "pass", note: "n", userMessage: "u" }, none("{}\n", "velesdb-hooks: n\n")],
    [
      "addContext",
      "SessionStart",
      { kind: "addContext", text: "load" },
      none('{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"load"}}\n'),
    ],
    [
      "continue is decision:deny on AfterAgent",
      "AfterAgent",
      { kind: "continue", text: "save" },
      none('{"decision":"deny","reason":"save"}\n'),
    ],
    [
      "deny is top-level decision:deny; its fallback is the JSON on stderr with exit 0",
      "BeforeTool",
      { kind: "deny", reason: REASON, note: "n" },
      {
        ...none(`{"decision":"deny","reason":${JSON.stringify(REASON)}}\n`, "velesdb-hooks: n\n"),
        ifStdoutFails: none("", `{"decision":"deny","reason":${JSON.stringify(REASON)}}\n`),
      },
    ],
    [
      "deny without a reason still has one",
      "BeforeTool",
      { kind: "deny", reason: "" },
      {
        ...none('{"decision":"deny","reason":"velesdb-hooks refused this edit."}\n'),
        ifStdoutFails: none("", '{"decision":"deny","reason":"velesdb-hooks refused this edit."}\n'),
      },
    ],
    [
      "replaceOutput maps to a pass (an AfterTool deny would make the result an error)",
      "AfterTool",
      { kind: "replaceOutput", toolResponse: REPLACED },
      none("{}\n"),
    ],
    [
      "summariserInstructions map to a pass (PreCompress output is unused)",
      "SessionStart",
      { kind: "summariserInstructions", text: "keep it" },
      none("{}\n"),
    ],
  ],
  copilot: [
    ["pass", "agentStop", { kind: "pass" }, none("{}\n")],
    [
      "pass with a user message: no channel, stderr only",
      "agentStop",
      { kind: "pass", userMessage: "state is broken", note: "n" },
      none("{}\n", "velesdb-hooks: n\n"),
    ],
    [
      "addContext is top-level",
      "sessionStart",
      { kind: "addContext", text: "load" },
      none('{"additionalContext":"load"}\n'),
    ],
    [
      "continue is decision:block",
      "agentStop",
      { kind: "continue", text: "save" },
      none('{"decision":"block","reason":"save"}\n'),
    ],
    [
      "deny is top-level",
      "preToolUse",
      { kind: "deny", reason: REASON },
      jsonDeny(`{"permissionDecision":"deny","permissionDecisionReason":${JSON.stringify(REASON)}}\n`, REASON),
    ],
    [
      "replaceOutput is modifiedResult",
      "postToolUse",
      {
        kind: "replaceOutput",
        toolResponse: { resultType: "success", textResultForLlm: "compiled\n<shellId: 0 completed with exit code 0>" },
      },
      none(
        '{"modifiedResult":{"resultType":"success","textResultForLlm":"compiled\\n<shellId: 0 completed with exit code 0>"}}\n',
      ),
    ],
    [
      "replaceOutput without a textResultForLlm is a pass",
      "postToolUse",
      { kind: "replaceOutput", toolResponse: REPLACED },
      none("{}\n"),
    ],
    [
      "summariserInstructions map to a pass",
      "preCompact",
      { kind: "summariserInstructions", text: "keep it" },
      none("{}\n"),
    ],
  ],
  codebuddy: [
    [
      "pass is silence (CodeBuddy adds plain SessionStart stdout to the context)",
      "SessionStart",
      { kind: "pass", note: "n", userMessage: "u" },
      none("", "velesdb-hooks: n\n"),
    ],
    [
      "addContext",
      "SessionStart",
      { kind: "addContext", text: "load" },
      none('{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"load"}}\n'),
    ],
    [
      "continue is continue:false with the reason (CodeBuddy's documented Stop form)",
      "Stop",
      { kind: "continue", text: "save" },
      none('{"continue":false,"reason":"save"}\n'),
    ],
    [
      "deny",
      "PreToolUse",
      { kind: "deny", reason: REASON },
      jsonDeny(
        `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":${JSON.stringify(REASON)}}}\n`,
        REASON,
      ),
    ],
    [
      "replaceOutput maps to a pass (no replacement for built-in tools)",
      "PostToolUse",
      { kind: "replaceOutput", toolResponse: REPLACED },
      none(""),
    ],
    ["summariserInstructions map to a pass", "Stop", { kind: "summariserInstructions", text: "keep it" }, none("")],
  ],
  droid: [
    [
      "pass is silence (Droid reads SessionStart stdout `{}` as a user message)",
      "SessionStart",
      { kind: "pass", note: "n" },
      none("", "velesdb-hooks: n\n"),
    ],
    [
      "addContext",
      "SessionStart",
      { kind: "addContext", text: "load" },
      none('{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"load"}}\n'),
    ],
    [
      "continue is decision:block",
      "Stop",
      { kind: "continue", text: "save" },
      none('{"decision":"block","reason":"save"}\n'),
    ],
    [
      "deny",
      "PreToolUse",
      { kind: "deny", reason: REASON },
      jsonDeny(
        `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":${JSON.stringify(REASON)}}}\n`,
        REASON,
      ),
    ],
    ["replaceOutput maps to a pass", "PostToolUse", { kind: "replaceOutput", toolResponse: REPLACED }, none("")],
    ["summariserInstructions map to a pass", "Stop", { kind: "summariserInstructions", text: "keep it" }, none("")],
  ],
  opencode: OPENCODE_ROWS,
  // Kilo Code is OpenCode's fork, answered through the same plugin (src/hosts/kilo.ts).
  kilo: OPENCODE_ROWS,
  // Pi's extension reads OpenCode's answers (src/hosts/pi.ts; the encoder ignores the wire name).
  pi: OPENCODE_ROWS,
  qwen: [
    ["pass", "Stop", { kind: "pass" }, none("{}\n")],
    [
      "pass with a user message: no measured channel, stderr only",
      "Stop",
      { kind: "pass", userMessage: "state is broken", note: "n" },
      none("{}\n", "velesdb-hooks: n\n"),
    ],
    ["pass at PreCompact is JSON (Qwen reads PreCompact stdout as JSON)", "PreCompact", { kind: "pass" }, none("{}\n")],
    [
      "addContext",
      "SessionStart",
      { kind: "addContext", text: "load" },
      none('{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"load"}}\n'),
    ],
    [
      "continue is decision:block",
      "Stop",
      { kind: "continue", text: "save" },
      none('{"decision":"block","reason":"save"}\n'),
    ],
    [
      "deny",
      "PreToolUse",
      { kind: "deny", reason: REASON, note: "n" },
      jsonDeny(
        `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":${JSON.stringify(REASON)}}}\n`,
        REASON,
        "velesdb-hooks: n\n",
      ),
    ],
    [
      "replaceOutput maps to a pass (PostToolUse only adds context)",
      "PostToolUse",
      { kind: "replaceOutput", toolResponse: REPLACED },
      none("{}\n"),
    ],
    [
      "summariserInstructions are PreCompact additionalContext (appended to the compression prompt)",
      "PreCompact",
      { kind: "summariserInstructions", text: "keep it" },
      none('{"hookSpecificOutput":{"hookEventName":"PreCompact","additionalContext":"keep it"}}\n'),
    ],
  ],
  windsurf: [
    ["pass is silence", "post_mcp_tool_use", { kind: "pass" }, none("")],
    [
      "pass with a note",
      "pre_user_prompt",
      { kind: "pass", note: "n", userMessage: "u" },
      none("", "velesdb-hooks: n\n"),
    ],
    ["addContext is plain stdout", "pre_user_prompt", { kind: "addContext", text: "load" }, none("load\n")],
    [
      "continue maps to a pass (no Stop event)",
      "pre_user_prompt",
      { kind: "continue", text: "save", note: "n" },
      none("", "velesdb-hooks: n\n"),
    ],
    [
      "deny is exit 2 with the reason on stderr",
      "pre_write_code",
      { kind: "deny", reason: REASON, note: "n" },
      exitTwo(REASON),
    ],
    ["replaceOutput maps to a pass", "post_mcp_tool_use", { kind: "replaceOutput", toolResponse: REPLACED }, none("")],
    [
      "summariserInstructions map to a pass",
      "pre_user_prompt",
      { kind: "summariserInstructions", text: "keep it" },
      none(""),
    ],
  ],
};

describe.each(Object.keys(ROWS) as HostName[])("%s encoder", (host) => {
  test.each(ROWS[host])("%s", (_label, wireName, decision, answer) => {
    expect(HOSTS[host].encode(wireName, decision)).toStrictEqual(answer);
  });

  test("every decision kind has a row", () => {
    const kinds: ReadonlyArray<Decision["kind"]> = [
      "pass",
      "addContext",
      "continue",
      "deny",
      "replaceOutput",
      "summariserInstructions",
    ];
    expect(kinds.filter((kind) => !ROWS[host].some(([, , decision]) => decision.kind === kind))).toEqual([]);
  });
});

test("every host has a table", () => {
  expect(Object.keys(ROWS).sort()).toEqual(Object.keys(HOSTS).sort());
});
