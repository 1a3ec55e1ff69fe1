// The hook cases `bun run bench` measures (scripts/bench.ts runs them), the guard each is held
// to, and the workspace they run in: a repository opted in to the learning loop, one that is
// not, and a private state directory, all in a temporary home.
// Each case runs the compiled binary on a payload recorded from its host (fixtures/payloads/),
// states the answer it must give (a run that answers otherwise measured another path), and
// says whether the hook touches state: those are held to STATE_GUARD, the rest to
// STATELESS_GUARD (docs/contract.md §12). test/hot-path.test.ts runs the same cases for the
// chunk graph and the engine's warm-up thread.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ROOT } from "../build.ts";
import { median, pairedRatios } from "./measure.ts";

const recordedPayload = (host: string, name: string): Record<string, unknown> =>
  JSON.parse(fs.readFileSync(path.join(ROOT, "fixtures", "payloads", host, `${name}.json`), "utf8"));
const recordedRecallResponse = (host: string): unknown =>
  recordedPayload(host, "post-tool-use.recall-fused").tool_response;
const CODEX_RECALL_RESPONSE = recordedRecallResponse("codex");
const CLAUDE_RECALL_RESPONSE = recordedRecallResponse("claude");

export interface BenchCase {
  readonly label: string;
  readonly args: readonly string[];
  /** The payload, given the bench workspace (a repository with `.velesdb-hooks.json`). */
  readonly payload: (ws: BenchWorkspace) => string;
  /** Prepares state before each run (e.g. removes a marker so the path measured is the same). */
  readonly before?: (ws: BenchWorkspace) => void;
  /** What the hook's stdout must match on every run: a case whose path drifted (a first Stop that
   * found its marker, a refusal that let the edit through) is measuring something else. */
  readonly answers?: RegExp;
  readonly env?: (ws: BenchWorkspace) => Record<string, string>;
  /** Whether the hook opens the private state (docs/contract.md §12: its guard is STATE_GUARD, else STATELESS_GUARD). */
  readonly touchesState: boolean;
}

/** The guard for a hook that touches state: the median of its per-run CPU-time ratios to the I/O floor (docs/contract.md §12). */
export const STATE_GUARD = 1.5;
/** The guard for every other hook (a pass-through, a guard outside an opted-in repository). */
export const STATELESS_GUARD = 1.15;
export const guardOf = (c: BenchCase): number => (c.touchesState ? STATE_GUARD : STATELESS_GUARD);

export interface BenchWorkspace {
  readonly root: string;
  readonly repo: string;
  readonly optedIn: string;
  readonly env: Record<string, string>;
  readonly stateDir: string;
}

const json = (value: unknown) => JSON.stringify(value);
/** A shell command's usual result: `seq 1 100`, 292 bytes (the recorded Claude payload holds its first 291 characters only). */
const SMALL_SHELL_OUTPUT = `${Array.from({ length: 100 }, (_, i) => i + 1).join("\n")}\n`;

/**
 * forgetSessions(ws): every session's markers, claims and records go; the state directory and its
 * subdirectories (the stats directory, the I/O floor's own) stay. A session's first Stop comes
 * after its SessionStart, which made the state directory and wrote the day's stats record, so
 * this is the state a first Stop meets. Removing the whole directory, as this bench did first,
 * measured the first hook ever run on the machine instead: creating the stats directory and the
 * day's file cost those rows 0.05–0.1× of the floor (docs/performance/2026-12-02-bench-guard.md).
 */
function forgetSessions(ws: BenchWorkspace): void {
  if (!fs.existsSync(ws.stateDir)) return;
  for (const entry of fs.readdirSync(ws.stateDir, { withFileTypes: true }))
    if (!entry.isDirectory()) fs.rmSync(path.join(ws.stateDir, entry.name), { force: true });
}

export const LIFECYCLE_CASES: BenchCase[] = [
  {
    label: "claude session-start",
    args: ["claude", "session-start"],
    payload: (ws) => json({ session_id: "bench", cwd: ws.repo, hook_event_name: "SessionStart", source: "startup" }),
    answers: /"hookEventName":"SessionStart","additionalContext":"mcp__velesdb-memory__load/,
    touchesState: true,
  },
  {
    label: "claude stop (first: continue)",
    args: ["claude", "stop"],
    payload: (ws) => json({ session_id: "bench-stop", cwd: ws.repo, hook_event_name: "Stop", stop_hook_active: false }),
    before: forgetSessions,
    answers: /"additionalContext":"Before this session ends/,
    touchesState: true,
  },
  {
    label: "claude stop (later: pass)",
    args: ["claude", "stop"],
    payload: (ws) =>
      json({ session_id: "bench-stop-pass", cwd: ws.repo, hook_event_name: "Stop", stop_hook_active: true }),
    touchesState: true,
  },
  {
    label: "claude pre-compact",
    args: ["claude", "pre-compact"],
    payload: (ws) => json({ session_id: "bench", cwd: ws.repo, hook_event_name: "PreCompact", trigger: "auto" }),
    answers: /^Keep these verbatim in the summary/,
    touchesState: true,
  },
  {
    label: "codex session-start (compact)",
    args: ["codex", "session-start"],
    payload: (ws) =>
      json({
        session_id: "bench",
        cwd: ws.repo,
        hook_event_name: "SessionStart",
        source: "compact",
        transcript_path: "/t/r.jsonl",
      }),
    answers: /"hookEventName":"SessionStart","additionalContext":"mcp__velesdb_memory__load/,
    touchesState: true,
  },
  {
    label: "codex stop (first: block)",
    args: ["codex", "stop"],
    payload: (ws) => json({ session_id: "bench-stop", cwd: ws.repo, hook_event_name: "Stop", stop_hook_active: false }),
    before: forgetSessions,
    answers: /^\{"decision":"block","reason":"Before this session ends/,
    touchesState: true,
  },
];

const recallMarkerFor = (ws: BenchWorkspace) => ({
  session_id: "bench-guard",
  cwd: ws.optedIn,
  hook_event_name: "PostToolUse",
  tool_name: "mcp__velesdb-memory__recall_fused",
  tool_input: { query: "prior patterns" },
  // What Claude Code hands the hook for velesdb-memory's real answer (the recorded fixture).
  tool_response: CLAUDE_RECALL_RESPONSE,
});

export const LEARNING_CASES: BenchCase[] = [
  {
    label: "claude pre-tool-use (unlocked)",
    args: ["claude", "pre-tool-use"],
    before: (ws) => {
      // A recall before every run makes every run take the unlocked path. It was made only
      // "when there is no state directory", which the cases before this one always leave, so
      // this case measured a refusal until `answers` caught it; the Stop cases' forgetSessions
      // removes the recall's record as well.
      Bun.spawnSync([path.join(ROOT, "dist", "velesdb-hooks"), "claude", "post-tool-use"], {
        stdin: Buffer.from(json(recallMarkerFor(ws))),
        env: ws.env,
      });
    },
    payload: (ws) =>
      json({
        session_id: "bench-guard",
        cwd: ws.optedIn,
        hook_event_name: "PreToolUse",
        tool_name: "Edit",
        tool_input: { file_path: path.join(ws.optedIn, "src", "a.ts") },
      }),
    answers: /^\{\}\n$/,
    touchesState: true,
  },
  {
    label: "claude pre-tool-use (refused)",
    args: ["claude", "pre-tool-use"],
    payload: (ws) =>
      json({
        session_id: "bench-refused",
        cwd: ws.optedIn,
        hook_event_name: "PreToolUse",
        tool_name: "Write",
        tool_input: { file_path: path.join(ws.optedIn, "src", "b.ts") },
      }),
    answers: /"permissionDecision":"deny"/,
    touchesState: true,
  },
  {
    label: "claude pre-tool-use (not opted in)",
    args: ["claude", "pre-tool-use"],
    payload: (ws) =>
      json({
        session_id: "bench",
        cwd: ws.repo,
        hook_event_name: "PreToolUse",
        tool_name: "Edit",
        tool_input: { file_path: path.join(ws.repo, "src", "a.ts") },
      }),
    answers: /^\{\}\n$/,
    touchesState: false,
  },
  {
    label: "codex pre-tool-use (patch, refused)",
    args: ["codex", "pre-tool-use"],
    payload: (ws) =>
      json({
        session_id: "bench-refused",
        cwd: ws.optedIn,
        hook_event_name: "PreToolUse",
        tool_name: "apply_patch",
        tool_input: { command: "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** End Patch" },
      }),
    answers: /"permissionDecision":"deny"/,
    touchesState: true,
  },
  {
    label: "claude post-tool-use (recall)",
    args: ["claude", "post-tool-use"],
    payload: (ws) => json(recallMarkerFor(ws)),
    answers: /^\{\}\n$/,
    touchesState: true,
  },
  {
    label: "codex post-tool-use (recall)",
    args: ["codex", "post-tool-use"],
    payload: (ws) =>
      json({
        session_id: "bench-guard",
        cwd: ws.optedIn,
        hook_event_name: "PostToolUse",
        tool_name: "mcp__velesdb_memory__recall_fused",
        tool_input: { query: "q" },
        // What Codex hands the hook for velesdb-memory's real answer (the recorded fixture).
        tool_response: CODEX_RECALL_RESPONSE,
      }),
    answers: /^\{\}\n$/,
    touchesState: true,
  },
  // The hook agents call most: every shell command's result, nearly always under the 12 000-byte
  // compression threshold. It reads no state, so it is expected under the I/O floor.
  {
    label: "claude post-tool-use (small Bash)",
    args: ["claude", "post-tool-use"],
    payload: (ws) => {
      const recorded = recordedPayload("claude", "post-tool-use.bash-small");
      return json({
        ...recorded,
        cwd: ws.repo,
        tool_response: { ...(recorded.tool_response as object), stdout: SMALL_SHELL_OUTPUT },
      });
    },
    answers: /^\{\}\n$/,
    touchesState: false,
  },
  // Every other tool's result (Read, Edit, Grep, …) is recall evidence only when it is a
  // velesdb-memory recall; a Read passes.
  {
    label: "claude post-tool-use (Read)",
    args: ["claude", "post-tool-use"],
    payload: (ws) => json({ ...recordedPayload("claude", "post-tool-use.read"), cwd: ws.repo }),
    answers: /^\{\}\n$/,
    touchesState: false,
  },
  {
    label: "codex post-tool-use (small Bash)",
    args: ["codex", "post-tool-use"],
    payload: (ws) =>
      json({ ...recordedPayload("codex", "post-tool-use.bash"), cwd: ws.repo, tool_response: SMALL_SHELL_OUTPUT }),
    answers: /^\{\}\n$/,
    touchesState: false,
  },
];

/**
 * withinGuard(hook, floor, bound) → whether the median of the per-run ratios, each hook run
 * against the floor run just before it, is within the bound (see the header: why not the upper
 * quartile). A run without a CPU time (NaN) is left out, as the table's cells leave it; with
 * none at all the hook is over.
 */
export function withinGuard(hook: readonly number[], floor: readonly number[], bound: number): boolean {
  return median(pairedRatios(hook, floor)) <= bound;
}

export function makeBenchWorkspace(): BenchWorkspace {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-bench-")));
  const repo = path.join(root, "repo");
  const optedIn = path.join(root, "guarded");
  fs.mkdirSync(path.join(repo, "src"), { recursive: true });
  fs.mkdirSync(path.join(optedIn, "src"), { recursive: true });
  fs.writeFileSync(path.join(repo, ".velesdb-hooks.json"), json({ project: "bench", session: "rolling" }));
  fs.writeFileSync(
    path.join(optedIn, ".velesdb-hooks.json"),
    json({ project: "bench-guarded", enforce_learning_loop: true }),
  );
  const tmp = path.join(root, "tmp");
  fs.mkdirSync(tmp);
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root, TMPDIR: tmp };
  return { root, repo, optedIn, env, stateDir: path.join(tmp, `velesdb-agent-hooks-${process.getuid?.() ?? 0}`) };
}
