// docs/compression.md#host-deadlines-and-a-killed-hook: compression lives inside each host's own registered timeout, and a hook the
// host kills takes its compiler with it and leaves no archive. Run on the compiled binary, with a
// compiler that answers the probe and then never finishes compiling (fixtures/compilers).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { compressionDeadlineMs } from "../src/core/host-timeouts.ts";
import { POST_TOOL_USE_TIMEOUT_S } from "./support/host-descriptors.ts";
import { fake, isAlive, killQuietly, pidsFrom, waitUntilGone } from "./support/compress-fixtures.ts";
import { BINARY, makeSandbox, type Sandbox } from "./support/hook-runner.ts";
import { realOutput } from "./support/real-outputs.ts";

/** A real `cargo test` run with two failures (test/support/real-outputs.ts). */
const CARGO_TEST = realOutput("cargo test");

let box: Sandbox;
let pidFile = "";
beforeEach(() => {
  box = makeSandbox("deadline");
  pidFile = path.join(box.root, "compiler.pids");
});
afterEach(() => {
  killQuietly(pidsFrom(pidFile));
  box.cleanup();
});

const env = (): Record<string, string> => ({
  ...box.env,
  VELESDB_MEMORY_BIN: fake("hangs-on-compile"),
  VELESDB_FAKE_PID_FILE: pidFile,
});
const archives = (): string[] => {
  const dir = path.join(box.stateDir, "tool-output");
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
};

const codexPayload = () => ({
  session_id: "s1",
  cwd: box.workspace,
  hook_event_name: "PostToolUse",
  tool_name: "Bash",
  tool_input: { command: CARGO_TEST.command },
  tool_response: CARGO_TEST.stdout,
});
const claudePayload = () => ({
  session_id: "s1",
  cwd: box.workspace,
  hook_event_name: "PostToolUse",
  tool_name: "Bash",
  tool_input: { command: CARGO_TEST.command },
  tool_response: { stdout: CARGO_TEST.stdout, stderr: CARGO_TEST.stderr, interrupted: false, isImage: false },
});

describe("each host's deadline is its own registered timeout, less a margin", () => {
  test.each(Object.keys(POST_TOOL_USE_TIMEOUT_S) as Array<keyof typeof POST_TOOL_USE_TIMEOUT_S>)("%s", (host) => {
    const timeoutMs = POST_TOOL_USE_TIMEOUT_S[host] * 1000;
    expect(compressionDeadlineMs(POST_TOOL_USE_TIMEOUT_S[host])).toBeLessThanOrEqual(timeoutMs - 1500);
    expect(compressionDeadlineMs(POST_TOOL_USE_TIMEOUT_S[host])).toBeGreaterThan(timeoutMs / 2);
  });

  test("Codex (registered at 10 s): a compilation that never ends is given up before the host's timeout, its compiler gone", async () => {
    const started = performance.now();
    const run = Bun.spawnSync([BINARY, "codex", "post-tool-use"], {
      stdin: Buffer.from(JSON.stringify(codexPayload())),
      env: env(),
      cwd: box.root,
      stdout: "pipe",
      stderr: "pipe",
      timeout: 30_000,
    });
    const elapsed = performance.now() - started;
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout.toString())).toEqual({});
    expect(run.stderr.toString()).toContain("compilation timed out");
    expect(elapsed).toBeLessThan(POST_TOOL_USE_TIMEOUT_S.codex * 1000 - 500);
    // Positive control of the measure: the compiler did start, and ran until the deadline.
    expect(pidsFrom(pidFile).length).toBe(1);
    expect(elapsed).toBeGreaterThan(compressionDeadlineMs(POST_TOOL_USE_TIMEOUT_S.codex) - 2000);
    expect(await waitUntilGone(pidsFrom(pidFile))).toEqual([]);
    expect(archives()).toEqual([]);
  }, 40_000);
});

describe("a hook killed by its host", () => {
  // Linux: the compiler is tied to the hook by PR_SET_PDEATHSIG (src/core/watchdog.ts).
  test.skipIf(process.platform !== "linux")(
    "SIGKILL in the middle of a compilation: the compiler dies with the hook, and no archive is left",
    async () => {
      const hook = Bun.spawn([BINARY, "claude", "post-tool-use"], {
        stdin: Buffer.from(JSON.stringify(claudePayload())),
        env: env(),
        cwd: box.root,
        stdout: "pipe",
        stderr: "pipe",
      });
      const until = performance.now() + 10_000;
      while (pidsFrom(pidFile).length === 0 && performance.now() < until) await Bun.sleep(20);
      const [compiler] = pidsFrom(pidFile);
      expect(compiler).toBeDefined();
      expect(isAlive(compiler!)).toBe(true); // control: it was running when the host struck
      hook.kill("SIGKILL");
      await hook.exited;
      expect(await waitUntilGone([compiler!], 2000)).toEqual([]);
      expect(archives()).toEqual([]);
    },
    30_000,
  );
});
