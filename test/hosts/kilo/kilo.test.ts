// Kilo Code: the compiled binary on the payloads our plugin really sent while Kilo 7.7.7 ran
// (fixtures/payloads/kilo, captured by test/hosts/kilo/kilo.e2e.test.ts's spy): OpenCode's rules
// (src/hosts/kilo.ts) — the guard over write, recall evidence from `velesdb-memory_<tool>`
// results, the idle continuation — under Kilo's own state. Every refusal sits next to the
// control that passes. The encoder's rows: test/encoders.test.ts; the plugin file:
// test/hosts/kilo/install-kilo.test.ts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { hook, loadPayload, makeSandbox, repository, type Sandbox } from "../../support/hook-runner.ts";

let box: Sandbox;

/** answer("kilo", event, payload) → the one JSON object the hook printed. */
const answer = (host: "kilo" | "opencode", event: string, payload: Record<string, unknown>) =>
  hook(box, host, event, payload).json;

beforeEach(() => {
  box = makeSandbox("kilo");
});
afterEach(() => box.cleanup());

const write = (session: string, cwd: string) =>
  loadPayload("kilo", "pre-tool-use.write", {
    session_id: session,
    cwd,
    tool_input: { filePath: path.join(cwd, "guarded.txt"), content: "x\n" },
  });
const recall = (session: string, cwd: string, overrides: Record<string, unknown> = {}) =>
  loadPayload("kilo", "post-tool-use.recall-fused", { session_id: session, cwd, ...overrides });

describe("kilo guard and evidence", () => {
  test("write before a recall is refused in an opted-in repository, passes elsewhere", () => {
    const guarded = repository(box, "guarded", true);
    expect(answer("kilo", "pre-tool-use", write("s1", guarded)).deny as string).toContain("recall_fused");
    expect(answer("kilo", "pre-tool-use", write("s1", repository(box, "plain", false)))).toEqual({});
  });

  test("a successful velesdb-memory_recall_fused unlocks the write; an isError one does not", () => {
    const guarded = repository(box, "guarded", true);
    answer(
      "kilo",
      "post-tool-use",
      recall("s1", guarded, { tool_response: { content: [{ type: "text", text: "boom" }], isError: true } }),
    );
    expect(typeof answer("kilo", "pre-tool-use", write("s1", guarded)).deny).toBe("string");
    expect(answer("kilo", "post-tool-use", recall("s1", guarded))).toEqual({});
    expect(answer("kilo", "pre-tool-use", write("s1", guarded))).toEqual({});
  });

  test("Kilo's evidence is Kilo's: the same session id under OpenCode is still refused (control: under Kilo it passes)", () => {
    const guarded = repository(box, "guarded", true);
    answer("kilo", "post-tool-use", recall("s1", guarded));
    expect(answer("kilo", "pre-tool-use", write("s1", guarded))).toEqual({});
    expect(typeof answer("opencode", "pre-tool-use", write("s1", guarded)).deny).toBe("string");
    expect(fs.readdirSync(box.stateDir).some((name) => name.startsWith("kilo-"))).toBe(true);
  });
});

describe("kilo lifecycle", () => {
  test("session-start answers the load guidance as system text; stop continues once, then lets the session end", () => {
    const dir = repository(box, "proj", false);
    expect(
      answer("kilo", "session-start", loadPayload("kilo", "session-start.startup", { cwd: dir })).system as string,
    ).toContain('load_working_context(project="proj"');
    expect(answer("kilo", "stop", loadPayload("kilo", "stop.first", { cwd: dir })).prompt as string).toContain(
      'save_working_context(project="proj"',
    );
    expect(answer("kilo", "stop", loadPayload("kilo", "stop.active", { cwd: dir }))).toEqual({});
  });
});
