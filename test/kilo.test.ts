// Kilo Code: the compiled binary on the payloads our plugin really sent while Kilo 7.7.7 ran
// (fixtures/payloads/kilo, captured by test/e2e/kilo.e2e.test.ts's spy): OpenCode's rules
// (src/hosts/kilo.ts) — the guard over write, recall evidence from `velesdb-memory_<tool>`
// results, the idle continuation — under Kilo's own state. Every refusal sits next to the
// control that passes. The encoder's rows: test/encoders.test.ts; the plugin file:
// test/install-kilo.test.ts.
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
  box = makeSandbox("kilo");
});
afterEach(() => box.cleanup());

function hook(host: "kilo" | "opencode", event: string, payload: Record<string, unknown>): Record<string, unknown> {
  const run = runBinary([host, event], payload, { env: box.env, cwd: box.root });
  if (run.exitCode !== 0) throw new Error(`${host} ${event} exited ${run.exitCode}: ${run.stderr}`);
  return parseOneJsonAnswer(run.stdout);
}

function repo(name: string, optedIn: boolean): string {
  const dir = path.join(box.root, "repos", name);
  fs.mkdirSync(dir, { recursive: true });
  writeConfig(dir, { project: name, ...(optedIn ? { enforce_learning_loop: true } : {}) });
  return dir;
}

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
    const guarded = repo("guarded", true);
    expect(hook("kilo", "pre-tool-use", write("s1", guarded)).deny as string).toContain("recall_fused");
    expect(hook("kilo", "pre-tool-use", write("s1", repo("plain", false)))).toEqual({});
  });

  test("a successful velesdb-memory_recall_fused unlocks the write; an isError one does not", () => {
    const guarded = repo("guarded", true);
    hook(
      "kilo",
      "post-tool-use",
      recall("s1", guarded, { tool_response: { content: [{ type: "text", text: "boom" }], isError: true } }),
    );
    expect(typeof hook("kilo", "pre-tool-use", write("s1", guarded)).deny).toBe("string");
    expect(hook("kilo", "post-tool-use", recall("s1", guarded))).toEqual({});
    expect(hook("kilo", "pre-tool-use", write("s1", guarded))).toEqual({});
  });

  test("Kilo's evidence is Kilo's: the same session id under OpenCode is still refused (control: under Kilo it passes)", () => {
    const guarded = repo("guarded", true);
    hook("kilo", "post-tool-use", recall("s1", guarded));
    expect(hook("kilo", "pre-tool-use", write("s1", guarded))).toEqual({});
    expect(typeof hook("opencode", "pre-tool-use", write("s1", guarded)).deny).toBe("string");
    expect(fs.readdirSync(box.stateDir).some((name) => name.startsWith("kilo-"))).toBe(true);
  });
});

describe("kilo lifecycle", () => {
  test("session-start answers the load guidance as system text; stop continues once, then lets the session end", () => {
    const dir = repo("proj", false);
    expect(
      hook("kilo", "session-start", loadPayload("kilo", "session-start.startup", { cwd: dir })).system as string,
    ).toContain('load_working_context(project="proj"');
    expect(hook("kilo", "stop", loadPayload("kilo", "stop.first", { cwd: dir })).prompt as string).toContain(
      'save_working_context(project="proj"',
    );
    expect(hook("kilo", "stop", loadPayload("kilo", "stop.active", { cwd: dir }))).toEqual({});
  });
});
