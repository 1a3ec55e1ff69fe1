// `velesdb-hooks stats` after a real Claude Code session (docs/stats.md): hooks
// registered by our installer, the scripted model makes a Write (refused by the guard), a
// velesdb-memory recall_fused (the double), the same Write (allowed), a Bash command whose
// ~28 KB build log PostToolUse compresses, then ends its turn: Stop asks for the learning
// checkpoint and the continuation's Stop passes. `stats` and `stats --json` must then show each
// of those events with the right counts. Negative control: the same session without our hooks
// leaves no record, and the same check fails.
// The compiler is the real velesdb-memory 0.17.0 (crates.io, --features http) when the CI
// cache step built it; without it the repository's realistic stand-in compiles the log
// (fixtures/compilers/realistic.ts, checked against the real wire by test/compiler-contract.test.ts).
import { expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { check, withAndWithoutIn } from "./checks.ts";
import { e2eSuite, E2E_PROJECT, HOOKS_BIN, runClaude, type E2ECase, type Mode, type RunResult } from "./harness.ts";
import { text } from "./mock-llm.ts";
import { realisticCompiler } from "../support/compress-fixtures.ts";

const suite = e2eSuite();
const REAL_COMPILER = path.join(
  process.env.HOME ?? "/root",
  ".cache",
  "velesdb-hooks-ci",
  "velesdb-memory-0.17.0-http",
  "bin",
  "velesdb-memory",
);
const compiler = (): string => (fs.existsSync(REAL_COMPILER) ? REAL_COMPILER : realisticCompiler());

// A build log as a shell loop prints it: progress lines repeated, one error line among them.
const BUILD_LOG =
  "for i in $(seq 1 200); do echo '   Compiling crate-alpha (build script) ... ok'; echo '   Downloaded crate-beta from the local mirror'; done; " +
  `echo "error[E0463]: can't find crate for core"; ` +
  "for i in $(seq 1 200); do echo '   Compiling crate-alpha (build script) ... ok'; done";

/** stats(c, args) → `velesdb-hooks stats …` run as the user of that case runs it. */
function stats(c: E2ECase, args: string[]): { exitCode: number | null; stdout: string; stderr: string } {
  const run = Bun.spawnSync([HOOKS_BIN, "stats", ...args], {
    env: { PATH: "/usr/bin:/bin", HOME: c.home, TMPDIR: c.tmp },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { exitCode: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

const counted = check(
  "stats --json counts the session's refusal, recall, edit, checkpoint and compressed output",
  (r: RunResult) => {
    const run = stats(r.case, ["--json"]);
    if (run.exitCode !== 0) return [`stats --json exited ${run.exitCode}: ${run.stderr}`];
    let summary: any;
    try {
      summary = JSON.parse(run.stdout);
    } catch {
      return [`stats --json printed no JSON: ${run.stdout.slice(0, 200)}`];
    }
    const t = summary.totals;
    const want: Record<string, number> = {
      sessionsWithContext: 1,
      editsRefused: 1,
      recallsSuccessful: 1,
      recallsFailed: 0,
      editsAllowed: 1,
      checkpointsAsked: 1,
      checkpointsDelivered: 1,
      outputsReplaced: 1,
      errors: 0,
    };
    const problems = Object.entries(want)
      .filter(([k, v]) => t?.[k] !== v)
      .map(([k, v]) => `${k} is ${t?.[k]}, expected ${v}`);
    if (!(t?.tokensSaved > 1000)) problems.push(`tokensSaved is ${t?.tokensSaved}`);
    if (!(t?.bytesBefore > 20_000 && t?.bytesAfter < t?.bytesBefore / 4))
      problems.push(`bytes ${t?.bytesBefore} → ${t?.bytesAfter}`);
    const loop = summary.loop;
    if (loop?.refusedSessions !== 1 || loop?.recalledAndEdited !== 1) problems.push(`loop ${JSON.stringify(loop)}`);
    if (
      !summary.groups?.some(
        (g: any) => g.host === "claude" && g.project === E2E_PROJECT.project && g.editsRefused === 1,
      )
    )
      problems.push("no claude/e2e-proj row with the refusal");
    return problems;
  },
);

test("claude: after refused edit → recall → edit → compressed Bash → Stop checkpoint, stats shows each event", async () => {
  const run = (mode: Mode) => {
    const c = suite.setup(
      "stats-claude-session",
      mode,
      "claude",
      (c) => {
        const write = {
          reply: {
            blocks: [
              {
                type: "tool_use" as const,
                name: "Write",
                input: { file_path: path.join(c.workspace, "guarded.txt"), content: "x\n" },
              },
            ],
          },
        };
        return {
          claude: [
            write,
            {
              reply: {
                blocks: [
                  { type: "tool_use", name: "mcp__velesdb-memory__recall_fused", input: { query: "guarded.txt" } },
                ],
              },
            },
            write,
            {
              reply: {
                blocks: [{ type: "tool_use", name: "Bash", input: { command: BUILD_LOG, description: "build" } }],
              },
            },
            { reply: text("DONE answer") },
            { reply: text("AFTER CHECKPOINT") },
            { reply: text("EXTRA") },
          ],
        };
      },
      { projectConfig: { ...E2E_PROJECT, enforce_learning_loop: true }, mcp: {} },
    );
    return runClaude(c, ["-p", "write, recall, write, build, stop"], { env: { VELESDB_MEMORY_BIN: compiler() } });
  };
  const on = await withAndWithoutIn(suite)(run, counted);
  expect(on.exitCode).toBe(0);
  expect(fs.existsSync(path.join(on.case.workspace, "guarded.txt"))).toBe(true);

  // The screen a person reads: the same counts, plain text (not a terminal: no colour).
  const screen = stats(on.case, []);
  expect(screen.exitCode).toBe(0);
  for (const line of [
    /^ {2}sessions +1 started with their context named$/m,
    /^ {2}guard +1 edit refused in 1 session: 1 then recalled and edited, 0 recalled without editing, 0 never recalled; 1 guarded edit allowed$/m,
    /^ {2}recalls +1 successful, 0 failed$/m,
    /^ {2}checkpoints +1 asked at Stop, 1 delivered$/m,
    /^ {2}compression +1 output replaced, \d+ passed through.*; [\d ]+ bytes and [\d ]+ tokens the model did not read$/m,
    /^ {2}claude PreToolUse +[\d.]+ ms \/ +[\d.]+ ms {2}\d+ calls$/m,
  ]) {
    expect(screen.stdout).toMatch(line);
  }
  expect(screen.stdout).not.toContain("\u001b[");
  expect(stats(on.case, ["--project", "another-project"]).stdout).toMatch(
    /^no stats records for project "another-project" in the last 7 days \(.+\)\n$/,
  );
}, 180_000);
