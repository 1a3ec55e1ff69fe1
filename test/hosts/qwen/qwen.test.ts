// Qwen Code profile (src/hosts/qwen.ts): the compiled binary on the payloads Qwen Code 0.24.4
// sent (fixtures/payloads/qwen/). Its encoder rows are in test/encoders.test.ts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mcpResultOfLlmContent } from "../../../src/hosts/tool-events.ts";
import {
  additionalContextOf,
  loadPayload,
  makeSandbox,
  parseOneJsonAnswer,
  runBinary,
  writeConfig,
  type Sandbox,
} from "../../support/hook-runner.ts";

// Qwen Code answers in the Gemini CLI shape it forked (no <untrusted_context> wrapper).
describe("mcpResultOfLlmContent on Qwen tool responses", () => {
  test.each([
    ["parts", { llmContent: [{ text: "[]" }], returnDisplay: "[]" }, { content: [{ type: "text", text: "[]" }] }],
    ["a string", { llmContent: "[]" }, { content: [{ type: "text", text: "[]" }] }],
    [
      "an error field is kept",
      { llmContent: [{ text: "x" }], error: { message: "boom" } },
      { content: [{ type: "text", text: "x" }], error: { message: "boom" } },
    ],
    ["a part without text is no text", { llmContent: [{ inlineData: {} }] }, { content: [{ type: "non-text" }] }],
    ["no llmContent: no text", { returnDisplay: "[]" }, { content: [] }],
    [
      "no llmContent: a content array of its own is not read",
      { content: [{ type: "text", text: "[]" }] },
      { content: [] },
    ],
    ["not an object: untouched", "[]", "[]"],
  ])("%s", (_name, response, expected) => {
    expect(mcpResultOfLlmContent(response)).toEqual(expected);
  });
});

describe("hooks on recorded payloads", () => {
  let box: Sandbox;
  beforeEach(() => {
    box = makeSandbox("qwen");
  });
  afterEach(() => box.cleanup());

  const run = (event: string, payload: Record<string, unknown>) => {
    const result = runBinary(["qwen", event], payload, { env: box.env, cwd: box.workspace });
    expect(result.exitCode).toBe(0);
    return parseOneJsonAnswer(result.stdout);
  };
  const fixture = (name: string, overrides: Record<string, unknown> = {}) =>
    loadPayload("qwen", name, { cwd: box.workspace, ...overrides });
  const target = () => `${box.workspace}/a.txt`;
  const decisionOf = (answer: Record<string, unknown>) =>
    (answer.hookSpecificOutput as Record<string, unknown> | undefined)?.permissionDecision;

  test("SessionStart (startup and compact): the load guidance as additionalContext", () => {
    writeConfig(box.workspace, { project: "qw-app", session: "slot" });
    for (const name of ["session-start.startup", "session-start.compact"]) {
      expect(additionalContextOf(run("session-start", fixture(name)))).toContain(
        'mcp__velesdb-memory__load_working_context(project="qw-app", session="slot/',
      );
    }
  });

  test("PreCompact: the summariser instructions as additionalContext, inside Qwen's 4000-character cut", () => {
    writeConfig(box.workspace, { project: "qw-app", session: "slot" });
    const answer = run("pre-compact", fixture("pre-compact.auto"));
    const text = additionalContextOf(answer) ?? "";
    expect(text).toContain('mcp__velesdb-memory__save_working_context(project="qw-app", session="slot/');
    expect(text.length).toBeLessThan(4000);
  });

  test("Stop: one decision:block, then a pass on the continuation", () => {
    const first = run("stop", fixture("stop.first"));
    expect(first.decision).toBe("block");
    expect(String(first.reason)).toContain("save_working_context(");
    expect(run("stop", fixture("stop.continuation"))).toEqual({});
  });

  test("guard: each edit tool refused before a recall; a failed recall keeps it; a recall (direct or through tool_call) unlocks", () => {
    writeConfig(box.workspace, { project: "qw-app", enforce_learning_loop: true });
    const edits = [
      fixture("pre-tool-use.write-file", { tool_input: { file_path: target(), content: "x\n" } }),
      fixture("pre-tool-use.edit", { tool_input: { file_path: target(), old_string: "a", new_string: "b" } }),
      fixture("pre-tool-use.notebook-edit", {
        tool_input: { notebook_path: `${box.workspace}/n.ipynb`, new_source: "x" },
      }),
    ];
    for (const edit of edits) expect(decisionOf(run("pre-tool-use", edit))).toBe("deny");
    // Positive control for the pass rows: a non-edit tool passes untouched.
    expect(run("pre-tool-use", fixture("pre-tool-use.recall"))).toEqual({});
    // Qwen fires PostToolUseFailure for a failed MCP call; fed to our PostToolUse it still unlocks nothing.
    expect(run("post-tool-use", fixture("post-tool-use-failure.recall"))).toEqual({});
    expect(
      run(
        "post-tool-use",
        fixture("post-tool-use.recall", { tool_response: { llmContent: [{ text: "x" }], error: { message: "boom" } } }),
      ),
    ).toEqual({});
    for (const edit of edits) expect(decisionOf(run("pre-tool-use", edit))).toBe("deny");
    expect(run("post-tool-use", fixture("post-tool-use.recall-fused-via-tool-call"))).toEqual({});
    for (const edit of edits) expect(run("pre-tool-use", edit)).toEqual({});
  });

  test("guard: velesdb-memory's real answer as Qwen hands it (two text blocks: structuredContent re-serialised, then the server's text) unlocks", () => {
    writeConfig(box.workspace, { project: "qw-app", enforce_learning_loop: true });
    const edit = fixture("pre-tool-use.write-file", { tool_input: { file_path: target(), content: "x\n" } });
    expect(decisionOf(run("pre-tool-use", edit))).toBe("deny");
    const real = fixture("post-tool-use.recall");
    expect((real.tool_response as { llmContent: unknown[] }).llmContent).toHaveLength(2);
    // Control: prose in place of the server's text keeps the edit refused.
    const prose = {
      llmContent: [{ text: "Found 1 memory: parser.txt holds the grammar." }],
      returnDisplay: "Found 1 memory",
    };
    expect(run("post-tool-use", fixture("post-tool-use.recall", { tool_response: prose }))).toEqual({});
    expect(decisionOf(run("pre-tool-use", edit))).toBe("deny");
    expect(run("post-tool-use", real)).toEqual({});
    expect(run("pre-tool-use", edit)).toEqual({});
  });

  test("guard: Claude's tool names are not Qwen's edit tools", () => {
    writeConfig(box.workspace, { project: "qw-app", enforce_learning_loop: true });
    expect(
      run(
        "pre-tool-use",
        fixture("pre-tool-use.write-file", { tool_name: "Write", tool_input: { file_path: target() } }),
      ),
    ).toEqual({});
    expect(
      decisionOf(run("pre-tool-use", fixture("pre-tool-use.write-file", { tool_input: { file_path: target() } }))),
    ).toBe("deny");
  });
});
