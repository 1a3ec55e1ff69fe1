// Concurrent hooks lose no stats record and tear none (docs/stats.md): 200 real hook
// processes of the compiled binary started at once, every one appending to the same day's file
// (src/core/stats-record.ts: O_APPEND, one write(2) per line). Afterwards the file holds exactly
// one whole, parseable line per process, each session's record once. The negative control shows
// the check can fail: the same lines written the way a naive logger would (read, add, write the
// whole file back) from as many processes lose records.
import { afterEach, beforeEach, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { sessionKey } from "../src/core/stats-note.ts";
import { MAX_LINE_BYTES } from "../src/core/stats-record.ts";
import { parseRecordLine } from "../src/stats/aggregate.ts";
import { BINARY, loadPayload, makeSandbox, type Sandbox } from "./support/hook-runner.ts";

const HOOKS = 200;
let box: Sandbox;
beforeEach(() => {
  box = makeSandbox("stats-conc");
});
afterEach(() => box.cleanup());

/** The i-th hook: a mix of the commonest calls, each its own session. */
function hookCall(i: number): { args: string[]; payload: Record<string, unknown> } {
  const session = `concurrent-${i}`;
  switch (i % 4) {
    case 0:
      return {
        args: ["claude", "post-tool-use"],
        payload: loadPayload("claude", "post-tool-use.bash-small", { session_id: session, cwd: box.workspace }),
      };
    case 1:
      return {
        args: ["claude", "pre-tool-use"],
        payload: loadPayload("claude", "pre-tool-use.edit", { session_id: session, cwd: box.workspace }),
      };
    case 2:
      return {
        args: ["codex", "stop"],
        payload: loadPayload("codex", "stop.first", { session_id: session, cwd: box.workspace }),
      };
    default:
      return {
        args: ["claude", "post-tool-use"],
        payload: loadPayload("claude", "post-tool-use.read", { session_id: session, cwd: box.workspace }),
      };
  }
}

/** runAtOnce(n) → the n hooks started together, once all have exited; then every record in the one day file. */
async function runAtOnce(n: number): Promise<string[]> {
  const env = { ...box.env, VELESDB_HOOK_FRESHNESS: "off" };
  const runs = Array.from({ length: n }, (_, i) => {
    const { args, payload } = hookCall(i);
    return Bun.spawn([BINARY, ...args], {
      stdin: new Blob([JSON.stringify(payload)]),
      env,
      cwd: box.root,
      stdout: "pipe",
      stderr: "pipe",
    });
  });
  const codes = await Promise.all(runs.map((p) => p.exited));
  expect(codes.filter((c) => c !== 0)).toEqual([]);
  const files = fs.readdirSync(path.join(box.stateDir, "stats"));
  expect(files).toHaveLength(1);
  const text = fs.readFileSync(path.join(box.stateDir, "stats", files[0]!), "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text.split("\n").slice(0, -1);
}

test(`${HOOKS} hook processes at once: ${HOOKS} whole records, none lost, none torn`, async () => {
  // Created first, so every hook appends to an existing file (the creation race is the next test's).
  fs.mkdirSync(path.join(box.stateDir, "stats"), { recursive: true, mode: 0o700 });
  fs.chmodSync(box.stateDir, 0o700);
  const lines = await runAtOnce(HOOKS);
  expect(lines).toHaveLength(HOOKS);
  const records = lines.map((line) => parseRecordLine(line));
  expect(records.filter((r) => r === undefined)).toHaveLength(0);
  expect(Math.max(...lines.map((l) => Buffer.byteLength(l) + 1))).toBeLessThanOrEqual(MAX_LINE_BYTES);
  const expected = Array.from({ length: HOOKS }, (_, i) => sessionKey(`concurrent-${i}`)).sort();
  expect(records.map((r) => r!.s!).sort()).toEqual(expected);
  expect(records.filter((r) => r!.e === "Stop" && r!.h === "codex")).toHaveLength(HOOKS / 4);
}, 120_000);

test("40 hook processes at once on no state directory at all: they race to create it, and none loses its record", async () => {
  expect(fs.existsSync(box.stateDir)).toBe(false);
  const lines = await runAtOnce(40);
  expect(lines.map((line) => parseRecordLine(line)?.s).sort()).toEqual(
    Array.from({ length: 40 }, (_, i) => sessionKey(`concurrent-${i}`)).sort(),
  );
}, 120_000);

test("negative control: the same lines written back whole by as many processes lose records", async () => {
  const file = path.join(box.root, "naive.jsonl");
  fs.writeFileSync(file, "");
  // A read-modify-write appender, the way a log is often kept; it is what O_APPEND avoids.
  const writer = `const fs=require("fs");const f=${JSON.stringify(file)};const line=process.argv[1];for(let k=0;k<5;k++){const old=fs.readFileSync(f,"utf8");Bun.sleepSync(1);fs.writeFileSync(f,old+line+"\\n");}`;
  const runs = Array.from({ length: 40 }, (_, i) =>
    Bun.spawn([process.execPath, "-e", writer, `line-${i}`], { stdout: "ignore", stderr: "pipe" }),
  );
  await Promise.all(runs.map((p) => p.exited));
  const lines = fs.readFileSync(file, "utf8").split("\n").filter(Boolean);
  expect(lines.length).toBeLessThan(40 * 5);
}, 60_000);
