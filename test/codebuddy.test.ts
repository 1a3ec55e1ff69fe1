// CodeBuddy Code: the compiled binary on the payloads CodeBuddy 2.117.0 really sent our hooks
// (fixtures/payloads/codebuddy, captured by test/e2e/codebuddy.e2e.test.ts's spy). The guard over
// Write/Edit, recall evidence judged by its content alone (a failed MCP call reaches PostToolUse
// as a content array with no error flag), the Stop continuation in CodeBuddy's `continue:false`
// form, and a pass that prints nothing. SessionStart carries no `cwd`: the hook runs in the
// session's directory, which is where the rule looks. Every refusal sits next to the control
// that passes. The encoder's rows: test/encoders.test.ts; the entries: test/install-codebuddy.test.ts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  loadPayload,
  makeSandbox,
  parseOneJsonAnswer,
  runBinary,
  writeConfig,
  type Sandbox,
} from "./support/hook-runner.ts";

let box: Sandbox;
beforeEach(() => {
  box = makeSandbox("codebuddy");
});
afterEach(() => box.cleanup());

/** hook(event, payload, cwd) → the answer: undefined for silence (a pass), else the one JSON object. */
function hook(event: string, payload: Record<string, unknown>, cwd = box.root): Record<string, unknown> | undefined {
  const run = runBinary(["codebuddy", event], payload, { env: box.env, cwd });
  if (run.exitCode !== 0) throw new Error(`codebuddy ${event} exited ${run.exitCode}: ${run.stderr}`);
  return run.stdout === "" ? undefined : parseOneJsonAnswer(run.stdout);
}

function repo(name: string, optedIn: boolean): string {
  const dir = path.join(box.root, "repos", name);
  fs.mkdirSync(dir, { recursive: true });
  writeConfig(dir, { project: name, ...(optedIn ? { enforce_learning_loop: true } : {}) });
  return dir;
}

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
    const guarded = repo("guarded", true);
    expect(denyReason(hook("pre-tool-use", write("s1", guarded))) as string).toContain("recall_fused");
    expect(hook("pre-tool-use", write("s1", repo("plain", false)))).toBeUndefined();
  });

  test("a failed recall, as CodeBuddy hands it (text, no error flag), does not unlock; the real answer does", () => {
    const guarded = repo("guarded", true);
    const failed = loadPayload("codebuddy", "post-tool-use.recall-failed", { session_id: "s1", cwd: guarded });
    expect(JSON.stringify(failed.tool_response)).not.toContain("isError");
    expect(hook("post-tool-use", failed)).toBeUndefined();
    expect(typeof denyReason(hook("pre-tool-use", write("s1", guarded)))).toBe("string");
    expect(hook("post-tool-use", recall("s1", guarded))).toBeUndefined();
    expect(hook("pre-tool-use", write("s1", guarded))).toBeUndefined();
  });

  test("another server's recall_fused does not unlock (control: velesdb-memory's does)", () => {
    const guarded = repo("guarded", true);
    hook("post-tool-use", recall("s1", guarded, { tool_name: "mcp__other__recall_fused" }));
    expect(typeof denyReason(hook("pre-tool-use", write("s1", guarded)))).toBe("string");
    hook("post-tool-use", recall("s1", guarded));
    expect(hook("pre-tool-use", write("s1", guarded))).toBeUndefined();
  });
});

describe("codebuddy lifecycle", () => {
  test("SessionStart without cwd reads the directory it runs in: the load guidance names that project", () => {
    const dir = repo("proj", false);
    const payload = loadPayload("codebuddy", "session-start.startup");
    expect(Object.hasOwn(payload, "cwd")).toBe(false);
    const answer = hook("session-start", payload, dir);
    expect((answer?.hookSpecificOutput as Record<string, unknown> | undefined)?.additionalContext as string).toContain(
      'load_working_context(project="proj"',
    );
  });

  test("Stop continues once as continue:false with the reason, then lets the session end in silence", () => {
    const dir = repo("proj", false);
    const first = hook("stop", loadPayload("codebuddy", "stop.first", { cwd: dir }));
    expect(first?.continue).toBe(false);
    expect(first?.reason as string).toContain('save_working_context(project="proj"');
    expect(hook("stop", loadPayload("codebuddy", "stop.active", { cwd: dir }))).toBeUndefined();
  });
});
