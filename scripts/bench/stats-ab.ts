// bun scripts/bench/stats-ab.ts <base binary> → what the stats record costs each bench hook
// (docs/stats.md): for every case of scripts/bench/hook-cases.ts, the CPU time (user + system,
// from wait4) of a build without stats (the base, e.g. main's dist/velesdb-hooks), of this
// build recording, and of this build with VELESDB_HOOK_STATS=off, runs interleaved (base, on,
// off, base, …) so a burst of load on the shared machine hits all three alike. Each ratio is the
// median of per-run ratios with its interquartile range, as the bench reports its own.
// STATS_AB_CASES=<regex> measures only the cases whose label matches; BENCH_RUNS sets the runs.
import * as fs from "node:fs";
import * as path from "node:path";
import { LEARNING_CASES, LIFECYCLE_CASES, makeBenchWorkspace } from "./hook-cases.ts";
import { freshCopy, median, ratioCell } from "./measure.ts";
import { ROOT } from "../build.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const baseArg = process.argv[2];
if (!baseArg || !fs.existsSync(baseArg)) {
  console.error("usage: bun scripts/bench/stats-ab.ts <binary built without stats>");
  process.exit(64);
}
fs.mkdirSync(path.join(ROOT, ".bench"), { recursive: true });
const base = freshCopy(path.resolve(baseArg), path.join(ROOT, ".bench", "ab-base"));
const candidate = freshCopy(path.join(ROOT, "dist", "velesdb-hooks"), path.join(ROOT, ".bench", "ab-stats"));

function cpuMs(
  binary: string,
  args: readonly string[],
  stdin: string,
  env: Record<string, string>,
  cwd: string,
): number {
  const result = Bun.spawnSync([binary, ...args], {
    stdin: Buffer.from(stdin),
    env,
    cwd,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (result.exitCode !== 0)
    throw new Error(`${binary} ${args.join(" ")} exited ${result.exitCode}: ${result.stderr.toString()}`);
  return Number(result.resourceUsage!.cpuTime.total) / 1000;
}

const ws = makeBenchWorkspace();
const rows: string[][] = [["hook", "base ms", "stats on ms", "on/base (IQR)", "off/base (IQR)"]];
try {
  const only = new RegExp(process.env.STATS_AB_CASES ?? "");
  for (const c of [...LIFECYCLE_CASES, ...LEARNING_CASES].filter((c) => only.test(c.label))) {
    const env = { ...ws.env, ...(c.env?.(ws) ?? {}) };
    const times = { base: [] as number[], on: [] as number[], off: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      for (const [name, binary, extra] of [
        ["base", base, {}],
        ["on", candidate, {}],
        ["off", candidate, { VELESDB_HOOK_STATS: "off" }],
      ] as const) {
        c.before?.(ws);
        times[name].push(cpuMs(binary, c.args, c.payload(ws), { ...env, ...extra }, ws.repo));
      }
    }
    rows.push([
      c.label,
      median(times.base).toFixed(2),
      median(times.on).toFixed(2),
      ratioCell(times.on, times.base, 3),
      ratioCell(times.off, times.base, 3),
    ]);
    console.log(rows.at(-1)!.join(" | "));
  }
} finally {
  fs.rmSync(ws.root, { recursive: true, force: true });
}
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
console.log(`\n${rows.map((r) => r.map((v, i) => v.padEnd(widths[i]!)).join("  ")).join("\n")}`);
