// Stop with unusable state (docs/decisions.md#the-learning-loop). "This notice does not repeat" was untrue: every
// first Stop of every user turn continued again, an extra paid model turn each time. Now:
// - a repository that is not opted in gets no continuation: a pass, one stderr line, and on
//   Claude one systemMessage line the user sees;
// - an opted-in one continues at most once per continuation chain (never when stop_hook_active),
//   and says truthfully that this repeats until the state directory is repaired;
// - the diagnostic names the path once and says whether reading or writing failed.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { continuation } from "./support/learning.ts";
import {
  BINARY,
  loadPayload,
  makeSandbox,
  parseOneJsonAnswer,
  runBinary,
  writeConfig,
  type HookRun,
  type Sandbox,
} from "./support/hook-runner.ts";
import { mountNamespaceProblem } from "./support/fuzz-faults.ts";
import { testIf } from "./support/requires.ts";

let box: Sandbox;
let plain: string;
let optedIn: string;
let stateDir: string;
beforeEach(() => {
  box = makeSandbox("stopstate");
  plain = path.join(box.root, "plain");
  optedIn = path.join(box.root, "guarded");
  for (const dir of [plain, optedIn]) fs.mkdirSync(dir, { recursive: true });
  writeConfig(optedIn, { project: "guarded", enforce_learning_loop: true });
  // The state directory is a symlink: unsafe, whatever it points to.
  stateDir = path.join(box.root, "state");
  const elsewhere = path.join(box.root, "elsewhere");
  fs.mkdirSync(elsewhere, { mode: 0o700 });
  fs.symlinkSync(elsewhere, stateDir);
});
afterEach(() => box.cleanup());

type Host = "claude" | "codex" | "dsh";
const env = () => ({ ...box.env, VELESDB_HOOKS_STATE_DIR: stateDir });
const stop = (host: Host, cwd: string, active: boolean): HookRun =>
  runBinary(
    [host, "stop"],
    loadPayload(host, host === "dsh" ? "stop" : "stop.first", { session_id: "s1", cwd, stop_hook_active: active }),
    { env: env(), cwd },
  );
const occurrences = (text: string, fragment: string) => text.split(fragment).length - 1;

describe.each(["claude", "codex", "dsh"] as const)("%s Stop with an unsafe state directory", (host) => {
  test("not opted in: no continuation, one stderr line naming the directory once", () => {
    for (const active of [false, true]) {
      const run = stop(host, plain, active);
      expect(run.exitCode).toBe(0);
      expect(
        continuation(host === "dsh" ? "codex" : host, {
          json: parseOneJsonAnswer(run.stdout),
          stderr: run.stderr,
          exitCode: 0,
        }),
      ).toBeUndefined();
      expect(run.stderr.split("\n").filter(Boolean)).toHaveLength(1);
      expect(occurrences(run.stderr, stateDir)).toBe(1);
      const answer = parseOneJsonAnswer(run.stdout);
      if (host === "claude") {
        // Claude shows systemMessage to the user: one line, naming the directory.
        expect(Object.keys(answer)).toEqual(["systemMessage"]);
        expect(answer.systemMessage).not.toContain("\n");
        expect(answer.systemMessage).toContain(JSON.stringify(stateDir));
      } else {
        expect(answer).toEqual({});
      }
    }
  });

  test(
    host === "dsh"
      ? "opted in: still a pass (the bridge never sets stop_hook_active)"
      : "opted in: continue once per chain, saying it repeats until the directory is repaired",
    () => {
      const first = stop(host, optedIn, false);
      const text = continuation(host === "dsh" ? "codex" : host, {
        json: parseOneJsonAnswer(first.stdout),
        stderr: first.stderr,
        exitCode: 0,
      });
      if (host === "dsh") {
        expect(text).toBeUndefined();
        expect(occurrences(first.stderr, stateDir)).toBe(1);
        return;
      }
      expect(text).toBeDefined();
      expect(text).not.toContain("does not repeat");
      expect(text).toContain(`until the state directory ${JSON.stringify(stateDir)} is repaired`);
      expect(text).toContain("is a symlink");
      expect(occurrences(text!, stateDir)).toBeLessThanOrEqual(2);
      // The Stop that follows the continuation passes: the chain ends.
      const next = stop(host, optedIn, true);
      expect(parseOneJsonAnswer(next.stdout)).toEqual({});
      // The next user turn's first Stop continues again, as the text said it would.
      expect(
        continuation(host, { json: parseOneJsonAnswer(stop(host, optedIn, false).stdout), stderr: "", exitCode: 0 }),
      ).toBe(text);
    },
  );
});

// A read-only state directory fails on *write*; the diagnostic says so (it used to read
// "cannot read … state" whatever had failed).
const namespaceProblem = mountNamespaceProblem();
testIf(namespaceProblem === null, `a mount namespace (${namespaceProblem})`)(
  "read-only state: the Stop diagnostic says writing failed and names the marker once",
  () => {
    const tmp = box.tmp;
    const state = path.join(tmp, "state");
    const input = path.join(box.root, "stop.json");
    fs.writeFileSync(
      input,
      JSON.stringify(loadPayload("codex", "stop.first", { session_id: "s1", cwd: optedIn, stop_hook_active: false })),
    );
    const script = [
      `mount -t tmpfs -o size=64k,mode=0755 tmpfs "$T"`,
      `mkdir -m 700 "$S"`,
      `mount -o remount,ro "$T"`,
      `cd "$W" && "$B" codex stop <"$I"`,
    ].join(" && ");
    const result = spawnSync("unshare", ["-m", "--propagation", "private", "sh", "-c", script], {
      env: { ...box.env, VELESDB_HOOKS_STATE_DIR: state, T: tmp, S: state, W: optedIn, B: BINARY, I: input },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(result.status).toBe(0);
    const answer = JSON.parse(result.stdout);
    expect(answer.decision).toBe("block");
    expect(answer.reason).toContain("cannot write");
    expect(answer.reason).not.toContain("cannot read");
    expect(result.stderr).toMatch(/^velesdb-hooks: state unavailable: write failed: storage: /);
    const marker = result.stderr.match(/"([^"]+)"/)?.[1] ?? "";
    expect(marker.startsWith(state)).toBe(true);
    expect(occurrences(result.stderr, marker)).toBe(1);
    expect(answer.reason).toContain(`until the state directory ${JSON.stringify(state)} is repaired`);
  },
);
