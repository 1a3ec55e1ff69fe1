// CodeBuddy Code: the compiled binary on the payloads CodeBuddy 2.117.0 really sent our hooks
// (fixtures/payloads/codebuddy, captured by test/hosts/codebuddy/codebuddy.e2e.test.ts's spy). The guard over
// Write/Edit, recall evidence judged by its content alone (a failed MCP call reaches PostToolUse
// as a content array with no error flag), the Stop continuation in CodeBuddy's `continue:false`
// form, and a pass that prints nothing. SessionStart carries no `cwd`: the hook runs in the
// session's directory, which is where the rule looks. Every refusal sits next to the control
// that passes. The encoder's rows: test/encoders.test.ts; the entries: test/hosts/codebuddy/install-codebuddy.test.ts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as path from "node:path";
import { hook, loadPayload, makeSandbox, repository, type Sandbox } from "../../support/hook-runner.ts";

let box: Sandbox;

/** answer(event, payload, cwd) → undefined for silence (CodeBuddy reads it as a pass), else the one JSON object. */
function answer(event: string, payload: Record<string, unknown>, cwd = box.root): Record<string, unknown> | undefined {
  const run = hook(box, "codebuddy", event, payload, {}, cwd);
  return run.stdout === "" ? undefined : run.json;
}

beforeEach(() => {
  box = makeSandbox("codebuddy");
});
afterEach(() => box.cleanup());

const write = (session: string, cwd: string) =>
  loadPayload("codebuddy", "pre-tool-use.write", {
    session_id: session,
    cwd,
    tool_input: { file_path: path.join(cwd, "guarded.txt"), content: "x\n" },
  });
const recall = (session: string, cwd: string, overrides: Record<string, unknown> = {}) =>
  loadPayload("codebuddy", "post-tool-use.recall-fused", { session_id: session, cwd, ...overrides });
const denyReason = (answer: Record<string, unknown> | undefined): unknown =>
  (answer?.hookSpecificOutput as Record<string, unknown> | undefined)?.permissionDecisionReason;

describe("codebuddy guard and evidence", () => {
  test("Write before a recall is refused in an opted-in repository; elsewhere it passes in silence", () => {
    const guarded = repository(box, "guarded", true);
    expect(denyReason(answer("pre-tool-use", write("s1", guarded))) as string).toContain("recall_fused");
    expect(answer("pre-tool-use", write("s1", repository(box, "plain", false)))).toBeUndefined();
  });

  test("a failed recall, as CodeBuddy hands it (text, no error flag), does not unlock; the real answer does", () => {
    const guarded = repository(box, "guarded", true);
    const failed = loadPayload("codebuddy", "post-tool-use.recall-failed", { session_id: "s1", cwd: guarded });
    expect(JSON.stringify(failed.tool_response)).not.toContain("isError");
    expect(answer("post-tool-use", failed)).toBeUndefined();
    expect(typeof denyReason(answer("pre-tool-use", write("s1", guarded)))).toBe("string");
    expect(answer("post-tool-use", recall("s1", guarded))).toBeUndefined();
    expect(answer("pre-tool-use", write("s1", guarded))).toBeUndefined();
  });

  test("another server's recall_fused does not unlock (control: velesdb-memory's does)", () => {
    const guarded = repository(box, "guarded", true);
    answer("post-tool-use", recall("s1", guarded, { tool_name: "mcp__other__recall_fused" }));
    expect(typeof denyReason(answer("pre-tool-use", write("s1", guarded)))).toBe("string");
    answer("post-tool-use", recall("s1", guarded));
    expect(answer("pre-tool-use", write("s1", guarded))).toBeUndefined();
  });
});

describe("codebuddy lifecycle", () => {
  test("SessionStart without cwd reads the directory it runs in: the load guidance names that project", () => {
    const dir = repository(box, "proj", false);
    const payload = loadPayload("codebuddy", "session-start.startup");
    expect(Object.hasOwn(payload, "cwd")).toBe(false);
    const start = answer("session-start", payload, dir);
    expect((start?.hookSpecificOutput as Record<string, unknown> | undefined)?.additionalContext as string).toContain(
      'load_working_context(project="proj"',
    );
  });

  test("Stop continues once as continue:false with the reason, then lets the session end in silence", () => {
    const dir = repository(box, "proj", false);
    const first = answer("stop", loadPayload("codebuddy", "stop.first", { cwd: dir }));
    expect(first?.continue).toBe(false);
    expect(first?.reason as string).toContain('save_working_context(project="proj"');
    expect(answer("stop", loadPayload("codebuddy", "stop.active", { cwd: dir }))).toBeUndefined();
  });
});
