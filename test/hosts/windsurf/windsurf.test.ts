// Windsurf Cascade (docs/contract.md §4.3) against the compiled binary: the prompt reminder once per
// trajectory, the guard answering with exit 2 and the reason on stderr, and recall evidence
// read from the `mcp_result` text. No cwd in the payload: the process cwd is the workspace.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { loadPayload, makeSandbox, runBinary, writeConfig, type Sandbox } from "../../support/hook-runner.ts";

let box: Sandbox;
beforeEach(() => {
  box = makeSandbox("wind");
});
afterEach(() => box.cleanup());

const run = (event: string, payload: Record<string, unknown>, cwd = box.workspace) =>
  runBinary(["windsurf", event], payload, { env: box.env, cwd });
const prompt = (trajectory: string) => loadPayload("windsurf", "pre-user-prompt", { trajectory_id: trajectory });
const write = (trajectory: string, file: string) =>
  loadPayload("windsurf", "pre-write-code", { trajectory_id: trajectory, tool_info: { file_path: file, edits: [] } });
const recall = (trajectory: string, result: unknown, server = "velesdb-memory", tool = "recall_fused") =>
  loadPayload("windsurf", "post-mcp-tool-use", {
    trajectory_id: trajectory,
    tool_info: { mcp_server_name: server, mcp_tool_name: tool, mcp_tool_arguments: { query: "q" }, mcp_result: result },
  });

test("pre_user_prompt: the reminder once per trajectory, then nothing; another trajectory gets its own", () => {
  writeConfig(box.workspace, { project: "wind-app" });
  const first = run("pre-user-prompt", prompt("t1"));
  expect(first.exitCode).toBe(0);
  expect(first.stdout).toContain('load_working_context(project="wind-app", session="rolling")');
  expect(first.stdout).toContain('save_working_context(project="wind-app", session="rolling")');
  const second = run("pre-user-prompt", prompt("t1"));
  expect(second).toEqual({ exitCode: 0, stdout: "", stderr: "" });
  expect(run("pre-user-prompt", prompt("t2")).stdout).toContain("load_working_context(");
  expect(fs.readdirSync(box.stateDir).some((n) => n.startsWith("windsurf-prompt-"))).toBe(true);
});

describe("pre_write_code guard", () => {
  test("refused before a recall (exit 2, reason on stderr), allowed after a successful one in the same trajectory", () => {
    writeConfig(box.workspace, { project: "wind-app", enforce_learning_loop: true });
    const file = path.join(box.workspace, "src", "fetch.ts");
    const refused = run("pre-write-code", write("t1", file));
    expect(refused.exitCode).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("recall_fused");
    expect(run("post-mcp-tool-use", recall("t1", "[]")).exitCode).toBe(0);
    expect(run("pre-write-code", write("t1", file))).toEqual({ exitCode: 0, stdout: "", stderr: "" });
    // Another trajectory is still refused.
    expect(run("pre-write-code", write("t2", file)).exitCode).toBe(2);
    // Windsurf has no Stop: no edit queue is written.
    expect(fs.readdirSync(box.stateDir).some((n) => n.includes("learning-dirty"))).toBe(false);
  });

  test.each([
    ["an error object", JSON.stringify({ error: "store is locked" })],
    ["plain prose", "Error: tool failed"],
    ["an empty string", ""],
    ["a JSON string", '"ok"'],
    ["a bare ok", "ok"],
    ["null", null],
    ["not a string", { content: [] }],
    ["a content array", [{ type: "text", text: "[]" }]],
  ])("a recall result that is %s never unlocks", (_label, result) => {
    writeConfig(box.workspace, { project: "wind-app", enforce_learning_loop: true });
    const file = path.join(box.workspace, "src", "a.ts");
    expect(run("pre-write-code", write("t1", file)).exitCode).toBe(2);
    run("post-mcp-tool-use", recall("t1", result));
    expect(run("pre-write-code", write("t1", file)).exitCode).toBe(2);
    // Control: a JSON object without `error` unlocks on the same path.
    run("post-mcp-tool-use", recall("t1", JSON.stringify({ results: [] })));
    expect(run("pre-write-code", write("t1", file)).exitCode).toBe(0);
  });

  test("another server's recall_fused never unlocks; velesdb_memory spelling does", () => {
    writeConfig(box.workspace, { project: "wind-app", enforce_learning_loop: true });
    const file = path.join(box.workspace, "a.ts");
    expect(run("pre-write-code", write("t1", file)).exitCode).toBe(2);
    run("post-mcp-tool-use", recall("t1", "[]", "other-memory"));
    expect(run("pre-write-code", write("t1", file)).exitCode).toBe(2);
    run("post-mcp-tool-use", recall("t1", "[]", "velesdb_memory"));
    expect(run("pre-write-code", write("t1", file)).exitCode).toBe(0);
  });

  test("not opted in: writes pass with nothing printed", () => {
    const file = path.join(box.workspace, "a.ts");
    expect(run("pre-write-code", write("t1", file))).toEqual({ exitCode: 0, stdout: "", stderr: "" });
  });
});

describe("the reminder rule lives in the core; the host module only wires and encodes (docs/hosts/windsurf.md)", () => {
  test("promptReminderDecision: the reminder once per session, then a pass; no session id: every time", async () => {
    const { promptReminderDecision } = await import("../../../src/core/lifecycle.ts");
    const { createHookInput } = await import("../../../src/core/hook-input.ts");
    const { windsurf } = await import("../../../src/hosts/windsurf.ts");
    writeConfig(box.workspace, { project: "wind-app" });
    const input = (payload: Record<string, unknown>) =>
      createHookInput({ ...payload, cwd: box.workspace }, "", windsurf.profile, box.env);
    expect((await promptReminderDecision(input(prompt("t1")))).kind).toBe("addContext");
    expect((await promptReminderDecision(input(prompt("t1")))).kind).toBe("pass");
    const anonymous = { ...prompt("t1") };
    delete anonymous.trajectory_id;
    expect((await promptReminderDecision(input(anonymous))).kind).toBe("addContext");
    expect((await promptReminderDecision(input(anonymous))).kind).toBe("addContext");
  });

  test("src/hosts/windsurf.ts touches no state", () => {
    const source = fs.readFileSync(path.join(import.meta.dir, "..", "..", "..", "src", "hosts", "windsurf.ts"), "utf8");
    expect(source).not.toMatch(/markerPath|readPrivateFile|writePrivateFile/);
  });
});
