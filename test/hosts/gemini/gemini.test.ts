// Gemini CLI (src/hosts/gemini.ts) against the compiled binary, on the payloads Gemini CLI
// 0.61.0 sent (fixtures/payloads/gemini; its encoder rows are in test/encoders.test.ts): the guard on write_file/replace
// (relative targets), recall evidence from AfterTool's `llmContent` named by `mcp_context`,
// the AfterAgent checkpoint, and the exit codes Gemini must never see (anything but 0 and 1
// denies the tool).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { withoutUntrustedWrapper } from "../../../src/hosts/gemini.ts";
import { mcpResultOfLlmContent } from "../../../src/hosts/tool-events.ts";
import {
  BINARY,
  loadPayload,
  makeSandbox,
  parseOneJsonAnswer,
  runBinary,
  writeConfig,
  type Sandbox,
} from "../../support/hook-runner.ts";

let box: Sandbox;
beforeEach(() => {
  box = makeSandbox("gemini");
});
afterEach(() => box.cleanup());

describe("mcpResultOfLlmContent: Gemini's AfterTool response as the MCP result the core reads", () => {
  test.each<[string, unknown, unknown]>([
    [
      "success, wrapper removed",
      { llmContent: [{ text: '<untrusted_context>\n{"r":[]}\n</untrusted_context>' }], returnDisplay: "x" },
      { content: [{ type: "text", text: '{"r":[]}' }] },
    ],
    [
      "failure keeps its error",
      { llmContent: "MCP tool failed", error: { message: "m", type: "mcp_tool_error" } },
      { content: [{ type: "text", text: "MCP tool failed" }], error: { message: "m", type: "mcp_tool_error" } },
    ],
    ["unwrapped text stays as sent", { llmContent: [{ text: "[]" }] }, { content: [{ type: "text", text: "[]" }] }],
    ["a part without text", { llmContent: [{ inlineData: {} }] }, { content: [{ type: "non-text" }] }],
    ["not an object", "text", "text"],
  ])("%s", (_label, response, expected) => {
    expect(mcpResultOfLlmContent(response, withoutUntrustedWrapper)).toEqual(expected);
  });
});

const SESSION = "g-session-1";
const run = (event: string, payload: Record<string, unknown>) =>
  runBinary(["gemini", event], payload, { env: box.env, cwd: box.workspace });
const beforeTool = (tool: "write_file" | "replace", filePath: string, session = SESSION) =>
  loadPayload("gemini", tool === "write_file" ? "before-tool.write-file" : "before-tool.replace", {
    session_id: session,
    cwd: box.workspace,
    tool_input:
      tool === "write_file"
        ? { file_path: filePath, content: "x\n" }
        : { file_path: filePath, old_string: "", new_string: "x", instruction: "create" },
  });
const afterRecall = (response: unknown, server = "velesdb-memory", session = SESSION) =>
  loadPayload("gemini", "after-tool.recall-fused", {
    session_id: session,
    cwd: box.workspace,
    tool_name: `mcp_${server}_recall_fused`,
    tool_input: { query: "how is fetch retried" },
    tool_response: response,
    mcp_context: { server_name: server, tool_name: "recall_fused", command: "velesdb-memory", args: [] },
  });
const wrapped = (text: string) => ({
  llmContent: [{ text: `<untrusted_context>\n${text}\n</untrusted_context>` }],
  returnDisplay: text,
});
/** What Gemini CLI 0.61.0 handed AfterTool for velesdb-memory's real recall answer (the recorded fixture). */
const REAL_RECALL: unknown = loadPayload("gemini", "after-tool.recall-fused").tool_response;
const afterAgent = (active: boolean) =>
  loadPayload("gemini", active ? "after-agent.continuation" : "after-agent.first", {
    session_id: SESSION,
    cwd: box.workspace,
  });

test("session-start: the load guidance for the workspace's identity, in hookSpecificOutput", () => {
  writeConfig(box.workspace, { project: "gem-app", session: "slot" });
  const result = run("session-start", loadPayload("gemini", "session-start.startup", { cwd: box.workspace }));
  expect(result.exitCode).toBe(0);
  const answer = parseOneJsonAnswer(result.stdout) as {
    hookSpecificOutput: { hookEventName: string; additionalContext: string };
  };
  expect(answer.hookSpecificOutput.hookEventName).toBe("SessionStart");
  expect(answer.hookSpecificOutput.additionalContext).toContain(
    'mcp_velesdb-memory_load_working_context(project="gem-app", session="slot/',
  );
});

describe("before-tool guard", () => {
  test.each<["write_file" | "replace", string]>([
    ["write_file", "src/a.ts"],
    ["replace", "src/a.ts"],
    ["write_file", "ABSOLUTE"],
  ])("%s %s: refused before a recall, allowed after a successful one", (tool, target) => {
    writeConfig(box.workspace, { project: "gem-app", enforce_learning_loop: true });
    const file = target === "ABSOLUTE" ? path.join(box.workspace, "b.ts") : target;
    const refused = run("before-tool", beforeTool(tool, file));
    expect(refused.exitCode).toBe(0);
    const answer = parseOneJsonAnswer(refused.stdout);
    expect(answer.decision).toBe("deny");
    expect(answer.reason).toContain("recall");
    expect(answer).not.toHaveProperty("hookSpecificOutput");
    expect(run("after-tool", afterRecall(REAL_RECALL)).stdout).toBe("{}\n");
    expect(run("before-tool", beforeTool(tool, file)).stdout).toBe("{}\n");
    // Another session is still refused.
    expect(parseOneJsonAnswer(run("before-tool", beforeTool(tool, file, "other")).stdout).decision).toBe("deny");
  });

  test("a repository that did not opt in is never refused (positive control: the same edit opted in is)", () => {
    writeConfig(box.workspace, { project: "gem-app" });
    expect(run("before-tool", beforeTool("write_file", "a.ts")).stdout).toBe("{}\n");
    writeConfig(box.workspace, { project: "gem-app", enforce_learning_loop: true });
    expect(parseOneJsonAnswer(run("before-tool", beforeTool("write_file", "a.ts")).stdout).decision).toBe("deny");
  });

  test("other tools pass untouched (positive control: write_file in the same repository is refused)", () => {
    writeConfig(box.workspace, { project: "gem-app", enforce_learning_loop: true });
    const shell = loadPayload("gemini", "before-tool.write-file", {
      session_id: SESSION,
      cwd: box.workspace,
      tool_name: "run_shell_command",
      tool_input: { command: "echo x > a.ts" },
    });
    expect(run("before-tool", shell)).toEqual({ exitCode: 0, stdout: "{}\n", stderr: "" });
    expect(parseOneJsonAnswer(run("before-tool", beforeTool("write_file", "a.ts")).stdout).decision).toBe("deny");
  });

  test.each<[string, unknown, string]>([
    [
      "the bare-array error Gemini makes of `[]`",
      loadPayload("gemini", "after-tool.recall-fused-array-error").tool_response,
      "velesdb-memory",
    ],
    [
      "an error field",
      { llmContent: "failed", returnDisplay: "Error", error: { message: "store locked", type: "mcp_tool_error" } },
      "velesdb-memory",
    ],
    ["an empty answer", { llmContent: [], returnDisplay: "" }, "velesdb-memory"],
    ["another server", REAL_RECALL, "other-memory"],
    ["prose, not JSON", wrapped("Found 1 memory: parser.txt holds the grammar."), "velesdb-memory"],
  ])("a recall that is %s keeps the edit refused", (_label, response, server) => {
    writeConfig(box.workspace, { project: "gem-app", enforce_learning_loop: true });
    expect(parseOneJsonAnswer(run("before-tool", beforeTool("write_file", "a.ts")).stdout).decision).toBe("deny");
    const evidence = run("after-tool", afterRecall(response, server));
    expect(evidence.exitCode).toBe(0);
    expect(evidence.stdout).toBe("{}\n");
    expect(parseOneJsonAnswer(run("before-tool", beforeTool("write_file", "a.ts")).stdout).decision).toBe("deny");
  });
});

test("after-agent: one checkpoint continuation naming save_working_context after an edit batch, then the session may end", () => {
  writeConfig(box.workspace, { project: "gem-app", session: "slot", enforce_learning_loop: true });
  run("before-tool", beforeTool("write_file", "a.ts"));
  run("after-tool", afterRecall(REAL_RECALL));
  expect(run("before-tool", beforeTool("write_file", "a.ts")).stdout).toBe("{}\n");
  const first = run("after-agent", afterAgent(false));
  expect(first.exitCode).toBe(0);
  const answer = parseOneJsonAnswer(first.stdout);
  expect(Object.keys(answer).sort()).toEqual(["decision", "reason"]);
  expect(answer.decision).toBe("deny");
  expect(answer.reason).toContain(
    'mcp_velesdb-memory_save_working_context(project="gem-app", session="slot/g-session-1")',
  );
  expect(run("after-agent", afterAgent(true)).stdout).toBe("{}\n");
});

describe("exit codes: Gemini denies the tool on any code but 0 and 1", () => {
  test.each<[string, string[]]>([
    ["an unknown event", ["gemini", "pre-tool-use"]],
    ["an extra argument", ["gemini", "before-tool", "extra"]],
  ])("%s is a usage error with exit 1, not 64", (_label, args) => {
    const result = runBinary(args, "{}", { env: box.env, cwd: box.workspace });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^velesdb-hooks: [^\n]+\n$/);
  });

  test("positive control: the same mistakes for claude still exit 64", () => {
    expect(runBinary(["claude", "before-tool"], "{}", { env: box.env, cwd: box.workspace }).exitCode).toBe(64);
  });

  test.each(["not json", "[1,2]", ""])("stdin %j still gets a JSON answer with exit 0 on every event", (stdin) => {
    for (const event of ["session-start", "before-tool", "after-tool", "after-agent"]) {
      const result = runBinary(["gemini", event], stdin, { env: box.env, cwd: box.workspace });
      expect([event, result.exitCode]).toEqual([event, 0]);
      parseOneJsonAnswer(result.stdout);
    }
  });
});

describe("a deny whose stdout cannot be written: the same JSON on stderr with exit 0, never exit 2", () => {
  // Gemini parses stderr when stdout is empty; exit 2 is the other hosts' fallback and must not
  // reach Gemini (it reads any code but 0 and 1 with a non-JSON answer as its own verdict).
  const REDIRECT = { closed: ">&-", full: ">/dev/full", "closed pipe": "| true", readable: '>"$OUT"' } as const;
  function runWithStdout(stdout: keyof typeof REDIRECT) {
    writeConfig(box.workspace, { project: "gem-app", enforce_learning_loop: true });
    const files = {
      IN: path.join(box.tmp, "in.json"),
      OUT: path.join(box.tmp, "out.txt"),
      ERR: path.join(box.tmp, "err.txt"),
      BIN: BINARY,
    };
    fs.writeFileSync(files.IN, JSON.stringify(beforeTool("write_file", "a.ts")));
    // The payload arrives late, so the pipe's reader (`true`) is gone before the hook writes.
    const script = `{ sleep 0.2; cat "$IN"; } | "$BIN" gemini before-tool 2>"$ERR" ${REDIRECT[stdout]}; echo "\${PIPESTATUS[1]}"`;
    const run = Bun.spawnSync(["bash", "-c", script], {
      env: { ...box.env, ...files },
      cwd: box.workspace,
      stdout: "pipe",
      timeout: 20_000,
    });
    return {
      exitCode: Number(run.stdout.toString().trim()),
      stdout: fs.existsSync(files.OUT) ? fs.readFileSync(files.OUT, "utf8") : "",
      stderr: fs.readFileSync(files.ERR, "utf8"),
    };
  }

  test("positive control: with a readable stdout the deny is on stdout", () => {
    const run = runWithStdout("readable");
    expect(run.exitCode).toBe(0);
    expect(parseOneJsonAnswer(run.stdout).decision).toBe("deny");
  });

  test.each(["closed", "full", "closed pipe"] as const)("stdout %s", (stdout) => {
    const run = runWithStdout(stdout);
    expect(run.exitCode).toBe(0);
    const answer = parseOneJsonAnswer(run.stderr);
    expect(answer.decision).toBe("deny");
    expect(String(answer.reason)).toContain("velesdb-hooks refused this edit");
  });
});
