// Pi: the compiled binary on the payloads our extension really sent while Pi 0.73.1 ran
// (fixtures/payloads/pi, captured by test/hosts/pi/pi.e2e.test.ts's spy): the guard over write/edit
// (a relative path resolved against the session's cwd), recall evidence from a velesdb-memory call
// through pi-mcp-adapter's proxy tool (its raw MCP result, with Pi's error flag kept), bash
// compression from Pi's saved whole output, and the Stop continuation. Every refusal sits next to
// the control that passes. The encoder's rows: test/encoders.test.ts; the extension file:
// test/hosts/pi/install-pi.test.ts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { fake } from "../../support/compress-fixtures.ts";
import { realOutput } from "../../support/real-outputs.ts";
import { hook, loadPayload, makeSandbox, repository, type Sandbox } from "../../support/hook-runner.ts";

/** A real `go test -v` run with two failures (test/support/real-outputs.ts). */
const GO_TEST = realOutput("go test");

let box: Sandbox;

/** answer(event, payload, env) → the one JSON object the hook printed. */
const answer = (event: string, payload: Record<string, unknown>, env: Record<string, string> = {}) =>
  hook(box, "pi", event, payload, env).json;

beforeEach(() => {
  box = makeSandbox("pi");
});
afterEach(() => box.cleanup());

const write = (session: string, cwd: string, target = path.join(cwd, "guarded.txt")) =>
  loadPayload("pi", "pre-tool-use.write", { session_id: session, cwd, tool_input: { path: target, content: "x\n" } });
const recall = (session: string, cwd: string, response: Record<string, unknown> = {}) => {
  const payload = loadPayload("pi", "post-tool-use.recall-fused", { session_id: session, cwd });
  return { ...payload, tool_response: { ...(payload.tool_response as Record<string, unknown>), ...response } };
};

describe("pi guard and evidence", () => {
  test("write before a recall is refused in an opted-in repository, also by a relative path; elsewhere it passes", () => {
    const guarded = repository(box, "guarded", true);
    expect(answer("pre-tool-use", write("s1", guarded)).deny as string).toContain("recall_fused");
    expect(typeof answer("pre-tool-use", write("s1", guarded, "guarded.txt")).deny).toBe("string");
    expect(answer("pre-tool-use", write("s1", repository(box, "plain", false)))).toEqual({});
  });

  test("a recall through the adapter unlocks the write; one flagged isError, one from another server and one naming no tool do not", () => {
    const guarded = repository(box, "guarded", true);
    answer("post-tool-use", recall("s1", guarded, { isError: true }));
    answer("post-tool-use", recall("s1", guarded, { server: "other" }));
    answer("post-tool-use", recall("s1", guarded, { tool: undefined }));
    expect(typeof answer("pre-tool-use", write("s1", guarded)).deny).toBe("string");
    expect(answer("post-tool-use", recall("s1", guarded))).toEqual({});
    expect(answer("pre-tool-use", write("s1", guarded))).toEqual({});
  });
});

describe("pi lifecycle", () => {
  test("session-start answers the load guidance as system text; stop continues once, then lets the run end", () => {
    const dir = repository(box, "proj", false);
    expect(
      answer("session-start", loadPayload("pi", "session-start.startup", { cwd: dir })).system as string,
    ).toContain('load_working_context(project="proj"');
    expect(answer("stop", loadPayload("pi", "stop.first", { cwd: dir })).prompt as string).toContain(
      'save_working_context(project="proj"',
    );
    expect(answer("stop", loadPayload("pi", "stop.active", { cwd: dir }))).toEqual({});
  });
});

describe("pi bash compression", () => {
  test("Pi's cut output is compiled from its saved whole output, archived by us (the temp file is Pi's)", () => {
    const saved = path.join(box.root, "pi-bash-x.log");
    const log = GO_TEST.stdout;
    fs.writeFileSync(saved, log);
    const payload = loadPayload("pi", "post-tool-use.bash-truncated", { cwd: box.workspace });
    const response = { ...(payload.tool_response as Record<string, unknown>), fullOutputPath: saved };
    const output = answer(
      "post-tool-use",
      { ...payload, tool_response: response },
      { VELESDB_MEMORY_BIN: fake("medium") },
    ).output as string;
    expect(output.length).toBeLessThan(log.length);
    const archive = JSON.parse(/saved at ("(?:[^"\\]|\\.)*")/.exec(output)![1]!) as string;
    for (const line of GO_TEST.mustKeep) expect(output.split("\n")).toContain(line);
    expect(archive).not.toBe(saved);
    expect((JSON.parse(fs.readFileSync(archive, "utf8")) as { stdout: string }).stdout).toBe(log);
  });

  test("a small output, a failed command and no compiler stay untouched (control: the same big output with a compiler is replaced)", () => {
    const log = GO_TEST.stdout;
    const bash = (text: string, extra: Record<string, unknown> = {}) => ({
      ...loadPayload("pi", "post-tool-use.bash-truncated", { cwd: box.workspace }),
      tool_response: { content: [{ type: "text", text }], isError: false, truncated: false, ...extra },
    });
    expect(answer("post-tool-use", bash("ok\n"), { VELESDB_MEMORY_BIN: fake("medium") })).toEqual({});
    expect(answer("post-tool-use", bash(log, { isError: true }), { VELESDB_MEMORY_BIN: fake("medium") })).toEqual({});
    expect(answer("post-tool-use", bash(log), { VELESDB_MEMORY_BIN: path.join(box.root, "nope") })).toEqual({});
    expect(typeof answer("post-tool-use", bash(log), { VELESDB_MEMORY_BIN: fake("medium") }).output).toBe("string");
  });
});
