// Factory Droid: the compiled binary on the payloads Droid 0.225.2 really sent
// (fixtures/payloads/droid): the guard over Create/Edit/MultiEdit, recall evidence from
// `velesdb-memory___<tool>` with the MCP text as a string, and passes that print nothing (Droid
// would show a `{}` to the model). The encoder's rows: test/encoders.test.ts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as path from "node:path";
import { hook, loadPayload, makeSandbox, repository, type Sandbox } from "../../support/hook-runner.ts";

let box: Sandbox;
beforeEach(() => {
  box = makeSandbox("droid");
});
afterEach(() => box.cleanup());

const create = (session: string, cwd: string, target: string, tool = "Create") =>
  loadPayload("droid", "pre-tool-use.create", {
    session_id: session,
    cwd,
    tool_name: tool,
    tool_input: { file_path: target, content: "x\n" },
  });
const recall = (session: string, cwd: string, overrides: Record<string, unknown> = {}) =>
  loadPayload("droid", "post-tool-use.recall-fused", { session_id: session, cwd, ...overrides });
const denied = (stdout: string): boolean =>
  (JSON.parse(stdout) as { hookSpecificOutput?: { permissionDecision?: string } }).hookSpecificOutput
    ?.permissionDecision === "deny";

describe("droid", () => {
  test.each(["Create", "Edit", "MultiEdit"])(
    "%s before a recall is refused in an opted-in repository; it passes silently elsewhere",
    (tool) => {
      const guarded = repository(box, "guarded", true);
      const plain = repository(box, "plain", false);
      expect(
        denied(hook(box, "droid", "pre-tool-use", create("s1", guarded, path.join(guarded, "a.ts"), tool)).stdout),
      ).toBe(true);
      expect(hook(box, "droid", "pre-tool-use", create("s1", plain, path.join(plain, "a.ts"), tool)).stdout).toBe("");
    },
  );

  test("the string answer of velesdb-memory___recall_fused unlocks; another server's and a non-recall tool's do not", () => {
    const guarded = repository(box, "guarded", true);
    const target = path.join(guarded, "a.ts");
    expect(
      hook(box, "droid", "post-tool-use", recall("s1", guarded, { tool_name: "other___recall_fused" })).stdout,
    ).toBe("");
    expect(
      hook(
        box,
        "droid",
        "post-tool-use",
        loadPayload("droid", "post-tool-use.create", { session_id: "s1", cwd: guarded }),
      ).stdout,
    ).toBe("");
    expect(denied(hook(box, "droid", "pre-tool-use", create("s1", guarded, target)).stdout)).toBe(true);
    expect(hook(box, "droid", "post-tool-use", recall("s1", guarded)).stdout).toBe("");
    expect(hook(box, "droid", "pre-tool-use", create("s1", guarded, target)).stdout).toBe("");
  });

  test("SessionStart is Claude's additionalContext; Stop is decision:block once, then silence on stop_hook_active", () => {
    const dir = repository(box, "proj", false);
    const start = JSON.parse(
      hook(box, "droid", "session-start", loadPayload("droid", "session-start.startup", { session_id: "s1", cwd: dir }))
        .stdout,
    ) as { hookSpecificOutput: { additionalContext: string } };
    expect(start.hookSpecificOutput.additionalContext).toContain('load_working_context(project="proj"');
    const stop = JSON.parse(
      hook(box, "droid", "stop", loadPayload("droid", "stop.first", { session_id: "s1", cwd: dir })).stdout,
    ) as { decision: string; reason: string };
    expect(stop.decision).toBe("block");
    expect(stop.reason).toContain('save_working_context(project="proj"');
    expect(
      hook(
        box,
        "droid",
        "stop",
        loadPayload("droid", "stop.first", { session_id: "s1", cwd: dir, stop_hook_active: true }),
      ).stdout,
    ).toBe("");
  });
});
