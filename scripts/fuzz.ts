// bun run fuzz -- [--seed N] [--count M] [--entry host/event]… [--shrink] [--bound-ms B]
// bun scripts/fuzz.ts --replay dist/fuzz-failures/<entry>-seed<N>.json
//
// Deep exploration (docs/development/testing.md#deep-fuzzing): CI runs 208 payloads per entry with
// a pinned seed; this runs
// 2 000 per entry by default with a random seed (printed first), and .github/workflows/fuzz.yml
// runs it nightly with larger counts. A failure prints a regression row: paste it into
// REGRESSION_ROWS of test/fuzz-regressions.test.ts with the fix.
//
// The long-run form of test/fuzz.test.ts: the same generators and invariants (test/support/
// fuzz-harness.ts) against dist/velesdb-hooks, as many payloads per entry as asked, entries one
// after another (each runs eight hooks at a time). The seed is printed first; the same seed and
// count generate the same payloads, so a failure seen once is a failure seen again.
import { ENTRIES, entryById } from "../test/support/fuzz-entries.ts";
import {
  coverageShortfall,
  fuzzEntry,
  fuzzSettings,
  replayFailures,
  type FuzzSettings,
} from "../test/support/fuzz-harness.ts";
import type { FuzzCase } from "../test/support/fuzz-payloads.ts";
import * as fs from "node:fs";

interface Options {
  settings: FuzzSettings;
  entries: string[];
  replay?: string;
}

/** Payloads per entry when neither --count nor VELESDB_FUZZ_RUNS says: ten times the CI run. */
const DEEP_RUNS = 2000;

function parseArgs(argv: readonly string[]): Options {
  const base = fuzzSettings({ VELESDB_FUZZ_RUNS: String(DEEP_RUNS), ...process.env });
  let { seed, count, boundMs, shrink } = base;
  const { jobs } = base;
  const entries: string[] = [];
  let replay: string | undefined;
  const args = argv.filter((a) => a !== "--");
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]!;
    const value = (): string => {
      const next = args[++i];
      if (next === undefined) throw new Error(`${flag} needs a value`);
      return next;
    };
    const int = (): number => {
      const text = value();
      if (!/^-?\d{1,10}$/.test(text)) throw new Error(`${flag} ${text}: not an integer`);
      return Number(text);
    };
    if (flag === "--seed") seed = int() | 0;
    else if (flag === "--count") count = int();
    else if (flag === "--bound-ms") boundMs = int();
    else if (flag === "--entry") entries.push(entryById(value()).id);
    else if (flag === "--shrink") shrink = true;
    else if (flag === "--replay") replay = value();
    else throw new Error(`unknown option ${flag}; see the header of scripts/fuzz.ts`);
  }
  return { settings: { seed, count, boundMs, shrink, jobs }, entries, replay };
}

async function replay(file: string, boundMs: number): Promise<number> {
  const saved = JSON.parse(fs.readFileSync(file, "utf8")) as { entry: string; failing: Array<{ case: FuzzCase }> };
  const results = await replayFailures(
    entryById(saved.entry),
    saved.failing.map((f) => f.case),
    boundMs,
  );
  let bad = 0;
  results.forEach((r, i) => {
    console.log(`case ${i}: ${r.violations.length === 0 ? "ok" : r.violations.join("; ")}`);
    if (r.violations.length > 0) bad++;
  });
  return bad === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  if (options.replay) return replay(options.replay, options.settings.boundMs);
  const { settings } = options;
  const selected = options.entries.length > 0 ? ENTRIES.filter((e) => options.entries.includes(e.id)) : ENTRIES;
  console.log(
    `fuzz: seed ${settings.seed}, ${settings.count} payloads per entry, ${selected.length} entries, bound ${settings.boundMs} ms`,
  );
  let failures = 0;
  for (const entry of selected) {
    const report = await fuzzEntry(entry, settings);
    const kinds = Object.entries(report.kinds)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ");
    console.log(
      `${entry.id.padEnd(26)} ${String(report.cases).padStart(6)} payloads in ${(report.elapsedMs / 1000).toFixed(1)} s, slowest ${report.slowestMs.toFixed(0)} ms (${kinds})`,
    );
    if (report.failure) {
      failures++;
      console.log(report.failure.message);
    } else {
      // A short run that missed a branch proves less than it seems; say so, without failing it.
      for (const line of coverageShortfall(entry, report.reached)) console.log(`  coverage: ${line}`);
    }
  }
  if (process.env.GITHUB_STEP_SUMMARY)
    fs.appendFileSync(
      process.env.GITHUB_STEP_SUMMARY,
      `fuzz: seed ${settings.seed}, ${settings.count} payloads per entry, ${failures} failing entr${failures === 1 ? "y" : "ies"}\n`,
    );
  console.log(
    failures === 0
      ? `fuzz: 0 invariant violations (seed ${settings.seed})`
      : `fuzz: ${failures} entr${failures === 1 ? "y" : "ies"} failed (seed ${settings.seed})`,
  );
  return failures === 0 ? 0 : 1;
}

process.exit(await main());
