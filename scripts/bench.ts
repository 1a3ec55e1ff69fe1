// bun run bench → for every hook, the compiled binary's median CPU time, wall time and peak RSS
// over repeated runs, as ratios to two floors compiled with the same flags (docs/contract.md §12): the empty
// program, and the I/O floor (scripts/bench/io-floor.ts: stdin, parse, realpath, the config
// walk, one marker read, one record written by rename, one answer — what no guard can skip).
// Ratios of CPU time (user + system of the whole process, from wait4), not of wall time: on a
// shared machine a process waits for a core as long as the load says, and its wall time with
// it; the CPU it burns moves far less. Runs are interleaved (empty, I/O floor, hook, empty, …)
// so a burst of load hits all alike; each ratio is the median of per-run ratios, with their
// interquartile range as the spread.
//
// A guard, not a goal (docs/contract.md §12): a hook that touches state (session-start, stop,
// pre-compact, an opted-in edit guard, a recall) may cost up to 1.5× the I/O floor, any other
// up to 1.15×, judged on the median of its per-run ratios. Measured, the first sit at
// 1.2–1.5× and the rest within ~1.15×: what is left over the floor is the engine loading and
// running the shared rules (docs/performance/2026-12-02-io-floor.md). A hook over its bound in
// either table is marked MISSED and the bench exits 1. Not the upper quartile, which this bench
// judged by until 2026-12-02: a single floor run moves ±20% here, so the quartile of paired
// ratios carries the floor's noise as well as the hook's, and it failed the unchanged tree in
// most runs; the median did not once in eight tables and caught a 0.35 ms regression in four of
// four (docs/performance/2026-12-02-bench-guard.md, "The guard judges the median").
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  type BenchCase,
  type BenchWorkspace,
  guardOf,
  LEARNING_CASES,
  LIFECYCLE_CASES,
  makeBenchWorkspace,
  STATE_GUARD,
  STATELESS_GUARD,
  withinGuard,
} from "./bench/hook-cases.ts";
import { dropPageCache, freshCopy, median, ratioCell, writeBackEverything } from "./bench/measure.ts";
import { compileBinary, packageVersion, ROOT, versionDefine } from "./build.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const GNU_TIME = "/usr/bin/time";

interface Sample {
  readonly ms: number;
  /** User + system CPU time of the process (all its threads), from wait4. */
  readonly cpuMs: number;
  readonly rssKb: number | undefined;
  readonly stdout?: string;
}

function runOnce(
  binary: string,
  args: readonly string[],
  stdin: string,
  env: Record<string, string>,
  cwd: string,
  measureRss: boolean,
): Sample {
  if (measureRss && fs.existsSync(GNU_TIME)) {
    const out = path.join(os.tmpdir(), `vh-bench-time-${process.pid}`);
    Bun.spawnSync([GNU_TIME, "-f", "%M", "-o", out, binary, ...args], { stdin: Buffer.from(stdin), env, cwd });
    const rssKb = Number(fs.readFileSync(out, "utf8").trim().split("\n").pop());
    fs.rmSync(out, { force: true });
    return { ms: Number.NaN, cpuMs: Number.NaN, rssKb };
  }
  const started = performance.now();
  const result = Bun.spawnSync([binary, ...args], {
    stdin: Buffer.from(stdin),
    env,
    cwd,
    stdout: "pipe",
    stderr: "pipe",
  });
  const ms = performance.now() - started;
  if (result.exitCode !== 0)
    throw new Error(`${binary} ${args.join(" ")} exited ${result.exitCode}: ${result.stderr.toString()}`);
  return {
    ms,
    cpuMs: result.resourceUsage ? Number(result.resourceUsage.cpuTime.total) / 1000 : Number.NaN,
    rssKb: undefined,
    stdout: result.stdout.toString(),
  };
}

/** buildFloors() → the empty program and the I/O floor, compiled with the release flags. */
export function buildFloors(): { empty: string; io: string } {
  const empty = path.join(ROOT, ".bench", "empty");
  const io = path.join(ROOT, ".bench", "io-floor");
  compileBinary(path.join(ROOT, "scripts", "bench", "empty.ts"), empty);
  compileBinary(path.join(ROOT, "scripts", "bench", "io-floor.ts"), io);
  return { empty, io };
}

interface Programs {
  readonly empty: string;
  readonly io: string;
  readonly hook: string;
}

/**
 * runBench(cases) → prints the table twice and answers whether every hook stayed within its guard in both.
 *
 * The three programs are measured in one page-cache state, because the state moves CPU time
 * as much as the code does (measured, Linux 6.18 ext4, same binary bytes, 60 interleaved runs
 * per hook: a copy just written cost 16% less CPU than dist/velesdb-hooks read back after an
 * eviction, and the copy dropped from the cache and read back cost 21% more than as written:
 * the fault path maps large folios of a freshly written file). The floors are compiled fresh by
 * every bench; the hook is copied beside them as `install` copies it, and all three, with
 * whatever else is dirty (the build's own output), are written back to disk before anything is
 * measured (measure.ts writeBackEverything). First table: the three as
 * written. Second: the three dropped from the cache and read back by their first run, as an
 * installed binary is after a reboot or under memory pressure.
 */
export function runBench(cases: readonly BenchCase[]): boolean {
  const dist = path.join(ROOT, "dist", "velesdb-hooks");
  if (!fs.existsSync(dist)) compileBinary(path.join(ROOT, "src", "cli.ts"), dist, versionDefine(packageVersion()));
  const floors = buildFloors();
  const hook = freshCopy(dist, path.join(ROOT, ".bench", "velesdb-hooks"));
  const programs: Programs = { ...floors, hook };
  // The floors were compiled just now and a build run just before the bench left dist/ dirty:
  // all of it is written back before the first table (the hook's copy already is, by freshCopy).
  writeBackEverything();
  const ws = makeBenchWorkspace();
  try {
    console.log("The three programs as written (floors compiled, the hook copied, just now; written back to disk):");
    let ok = measureTable(programs, cases, ws);
    const dropped = [programs.empty, programs.io, programs.hook].every(dropPageCache);
    console.log(
      `\nThe same three ${dropped ? "dropped from the page cache and read back" : "again (not dropped: no GNU dd)"}:`,
    );
    ok = measureTable(programs, cases, ws) && ok;
    return ok;
  } finally {
    fs.rmSync(ws.root, { recursive: true, force: true });
  }
}

function measureTable(programs: Programs, cases: readonly BenchCase[], ws: BenchWorkspace): boolean {
  let allWithinGuard = true;
  const rows: string[][] = [
    [
      "hook",
      "CPU ms",
      "empty CPU",
      "I/O CPU",
      "×empty (IQR)",
      "×I/O floor (IQR)",
      "wall ms",
      "peak RSS MB",
      "RSS ×empty",
      "guard",
    ],
  ];
  for (const c of cases) {
    const env = { ...ws.env, ...(c.env?.(ws) ?? {}) };
    const hookTimes: number[] = [];
    const emptyTimes: number[] = [];
    const ioTimes: number[] = [];
    const hookWall: number[] = [];
    const hookRss: number[] = [];
    const emptyRss: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      c.before?.(ws);
      emptyTimes.push(runOnce(programs.empty, [], "", env, ws.repo, false).cpuMs);
      ioTimes.push(runOnce(programs.io, [], c.payload(ws), env, ws.repo, false).cpuMs);
      const hook = runOnce(programs.hook, c.args, c.payload(ws), env, ws.repo, false);
      if (c.answers && !c.answers.test(hook.stdout ?? ""))
        throw new Error(`${c.label}: the answer ${JSON.stringify(hook.stdout?.slice(0, 120))} is not the one measured`);
      hookTimes.push(hook.cpuMs);
      hookWall.push(hook.ms);
      if (i < 5) {
        c.before?.(ws);
        emptyRss.push(runOnce(programs.empty, [], "", env, ws.repo, true).rssKb ?? Number.NaN);
        hookRss.push(runOnce(programs.hook, c.args, c.payload(ws), env, ws.repo, true).rssKb ?? Number.NaN);
      }
    }
    const within = withinGuard(hookTimes, ioTimes, guardOf(c));
    allWithinGuard &&= within;
    const r = median(hookRss) / 1024;
    const fr = median(emptyRss) / 1024;
    rows.push([
      c.label,
      median(hookTimes).toFixed(2),
      median(emptyTimes).toFixed(2),
      median(ioTimes).toFixed(2),
      ratioCell(hookTimes, emptyTimes),
      ratioCell(hookTimes, ioTimes),
      median(hookWall).toFixed(2),
      Number.isFinite(r) ? r.toFixed(1) : "n/a",
      Number.isFinite(r / fr) ? (r / fr).toFixed(2) : "n/a",
      `median ≤${guardOf(c)}× I/O ${within ? "ok" : "MISSED"}`,
    ]);
  }
  printTable(rows);
  console.log(
    `\n${RUNS} interleaved runs per hook (empty, I/O floor, hook); ratios are medians of per-run CPU-time ratios with their interquartile range; RSS from ${fs.existsSync(GNU_TIME) ? "GNU time (5 runs)" : "unavailable: install Debian's `time`"}.`,
  );
  return allWithinGuard;
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const [index, row] of rows.entries()) {
    console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  "));
    if (index === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
  }
}

if (import.meta.main) {
  const ok = runBench([...LIFECYCLE_CASES, ...LEARNING_CASES]);
  console.log(
    ok
      ? `every hook within its guard (${STATE_GUARD}× the I/O floor if it touches state, else ${STATELESS_GUARD}×)`
      : "some hook is over its guard (see MISSED)",
  );
  console.log("\nPostToolUse compression (docs/contract.md §12):");
  await (await import("./bench-compress.ts")).runCompressionBench();
  if (!ok) process.exit(1);
}
