// SPEC §10, first row: stdin that is not a usable object never crashes a hook, never prints a
// stack trace, and gets the hook's answer for `{}` with one stderr line saying what was wrong.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { additionalContextOf, makeSandbox, parseOneJsonAnswer, runBinary, type Sandbox } from "./support/hook-runner.ts";

let box: Sandbox;
beforeAll(() => {
  box = makeSandbox("badin");
});
afterAll(() => box.cleanup());

const FIVE_MB_PAYLOAD = JSON.stringify({
  session_id: "big",
  cwd: "",
  hook_event_name: "SessionStart",
  source: "startup",
  padding: "x".repeat(5 * 1024 * 1024),
});

const BAD_INPUTS: ReadonlyArray<readonly [string, string | Uint8Array, RegExp | null]> = [
  ["empty stdin", "", /stdin was empty/],
  ["not JSON", "{oops", /stdin is not JSON/],
  ["a JSON array", "[1,2,3]", /not an object/],
  ["a JSON string", '"hello"', /not an object/],
  ["wrong field types", JSON.stringify({ cwd: 5, session_id: { a: 1 }, source: [], transcript_path: 7, stop_hook_active: "yes" }), null],
  ["NUL in cwd", JSON.stringify({ cwd: "/tmp/\u0000x", session_id: "nul" }), null],
  ["invalid UTF-8", new Uint8Array([0xff, 0xfe, 0x7b, 0x80]), /not JSON/],
];

function expectNoStackTrace(text: string) {
  expect(text).not.toMatch(/^\s+at /m);
  expect(text).not.toMatch(/TypeError|ReferenceError|SyntaxError|RangeError/);
  expect(text.split("\n").filter(Boolean).length).toBeLessThanOrEqual(1);
}

describe.each([
  ["claude", "session-start", "json"],
  ["claude", "stop", "json"],
  ["claude", "pre-compact", "text"],
  ["codex", "session-start", "json"],
  ["codex", "stop", "json"],
] as const)("%s %s", (host, event, form) => {
  test.each(BAD_INPUTS)("%s: answered with defaults, exit 0, no stack trace", (_label, stdin, stderrPattern) => {
    const result = runBinary([host, event], stdin, { env: box.env, cwd: box.workspace });
    expect(result.exitCode).toBe(0);
    expectNoStackTrace(result.stderr);
    if (stderrPattern) expect(result.stderr).toMatch(stderrPattern);
    if (form === "text") {
      expect(result.stdout).toContain("save_working_context(");
      return;
    }
    const answer = parseOneJsonAnswer(result.stdout);
    if (event === "session-start") expect(additionalContextOf(answer)).toContain('load_working_context(project="project"');
  });

  test("a 5 MB payload is read whole and answered", () => {
    const result = runBinary([host, event], FIVE_MB_PAYLOAD.replace('"cwd":""', `"cwd":${JSON.stringify(box.workspace)}`), {
      env: box.env,
      cwd: box.root,
    });
    expect(result.exitCode).toBe(0);
    expectNoStackTrace(result.stderr);
    if (form === "json") parseOneJsonAnswer(result.stdout);
    if (event === "session-start") expect(additionalContextOf(parseOneJsonAnswer(result.stdout))).toContain('project="project"');
  });
});

test("stdin treated as {} uses the process cwd (positive control: the payload cwd wins when present)", () => {
  const fromProcess = runBinary(["claude", "session-start"], "not json", { env: box.env, cwd: box.workspace });
  expect(additionalContextOf(parseOneJsonAnswer(fromProcess.stdout))).toContain('project="project"');
  const fromPayload = runBinary(["claude", "session-start"], { cwd: box.home }, { env: box.env, cwd: box.workspace });
  expect(additionalContextOf(parseOneJsonAnswer(fromPayload.stdout))).toContain('project="home"');
});
