// doctor's view of the compiler (docs/contract.md §7, §9): which velesdb-memory a hook would run and
// whether it knows `compile-stdin`, asked afresh (doctor neither reads nor writes the
// per-session probe markers, so running it never changes what a live session decided).
// A thin adapter over src/core/compiler.ts so the probe's rules stay in one place.
import { PROBE_BUDGET, PROBE_CORPUS, probeProblem, resolveCompiler } from "../../core/compiler.ts";
import { runWithWatchdog } from "../../core/watchdog.ts";

export type CompilerReport =
  | { readonly state: "missing"; readonly problem: string }
  | { readonly state: "capable"; readonly path: string; readonly elapsedMs: number }
  | { readonly state: "not capable"; readonly path: string; readonly problem: string };

const DEFAULT_PROBE_SECONDS = 10;
const MAX_PROBE_SECONDS = 60;

/** probeTimeoutMs(env) → VELESDB_HOOK_PROBE_TIMEOUT seconds when it is a valid small integer, else 10 s. */
export function probeTimeoutMs(env: NodeJS.ProcessEnv): number {
  const raw = env.VELESDB_HOOK_PROBE_TIMEOUT;
  if (raw !== undefined && /^[0-9]{1,10}$/.test(raw)) {
    const seconds = Number(raw);
    if (seconds > 0 && seconds <= MAX_PROBE_SECONDS) return seconds * 1000;
  }
  return DEFAULT_PROBE_SECONDS * 1000;
}

/** probeCompilerNow(env) → missing, capable (with the time it took) or not capable (with why). */
export async function probeCompilerNow(env: NodeJS.ProcessEnv): Promise<CompilerReport> {
  const location = resolveCompiler(env);
  if (!location.ok) return { state: "missing", problem: location.problem };
  const started = performance.now();
  const outcome = await runWithWatchdog(
    location.path,
    ["compile-stdin", "--budget", String(PROBE_BUDGET)],
    PROBE_CORPUS,
    {
      timeoutMs: probeTimeoutMs(env),
      maxStdoutBytes: 1024 * 1024,
      env,
    },
  );
  const problem = probeProblem(outcome);
  if (problem !== null) return { state: "not capable", path: location.path, problem };
  return { state: "capable", path: location.path, elapsedMs: Math.round(performance.now() - started) };
}
