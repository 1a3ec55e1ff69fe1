// The property run (docs/development/testing.md#deep-fuzzing): every `<host> <event>` entry of
// the compiled binary gets at least VELESDB_FUZZ_RUNS (default 208) generated payloads — real
// host shapes with mutated fields, arbitrary JSON, non-JSON bytes — and every answer must keep
// the invariants of docs/contract.md §3.4 and §10 (test/support/fuzz-harness.ts): an allowed exit
// code; stdout empty or exactly one answer
// of the host's shape; no stack trace; done within the bound; nothing written outside the state
// directory; PostToolUse {} or a replacement whose archive holds the complete original; the
// guard never passing an edit in the opted-in repository without a recall.
//
// docs/development/testing.md#deep-fuzzing: this is the CI-sized run. Each entry must also reach
// every checked branch at least
// its floor (coverageFloors: each input form, each answer that matters, both guard sides, both
// archive forms), so the short run still exercises every invariant. Deep exploration — random
// seeds, tens of thousands of payloads — is `bun run fuzz` and .github/workflows/fuzz.yml.
//
// Seed policy: random per run unless VELESDB_FUZZ_SEED is set (.ci/run pins 12345), printed at
// the start and in every failure together with the commands that replay it.
import { describe, expect, test } from "bun:test";
import { ENTRIES } from "./support/fuzz-entries.ts";
import { BATCH, coverageShortfall, fuzzEntry, fuzzSettings } from "./support/fuzz-harness.ts";

const settings = fuzzSettings();
console.log(
  `fuzz: seed ${settings.seed} (VELESDB_FUZZ_SEED), ${settings.count} payloads per entry (VELESDB_FUZZ_RUNS), ${settings.jobs} at a time`,
);

// One payload costs ~10 ms on two cores; the bound leaves room for a loaded CI machine.
const TIMEOUT_MS = Math.max(120_000, settings.count * 150);

describe.each(ENTRIES.map((e) => [e.id, e] as const))("fuzz %s", (_id, entry) => {
  test(
    `${settings.count} generated payloads keep every invariant and reach every checked branch`,
    async () => {
      const report = await fuzzEntry(entry, settings);
      const kinds = Object.entries(report.kinds)
        .map(([k, n]) => `${k} ${n}`)
        .join(", ");
      console.log(
        `  ${entry.id}: ${report.cases} payloads in ${(report.elapsedMs / 1000).toFixed(1)} s, slowest ${report.slowestMs.toFixed(0)} ms (${kinds})`,
      );
      if (report.failure) throw new Error(report.failure.message);
      expect(report.cases).toBeGreaterThanOrEqual(Math.ceil(settings.count / BATCH) * BATCH);
      // Not a hook verdict: the generator (or a count set too low) no longer reaches a branch.
      expect(
        coverageShortfall(entry, report.reached).map(
          (line) => `${line} (seed ${settings.seed}, ${settings.count} payloads)`,
        ),
      ).toEqual([]);
    },
    TIMEOUT_MS,
  );
});

test("a coverage floor fails a run that never reaches its branch (negative control)", () => {
  const claudePost = ENTRIES.find((e) => e.id === "claude/post-tool-use")!;
  const claudePre = ENTRIES.find((e) => e.id === "claude/pre-tool-use")!;
  const everyInput = {
    "input:object": 3,
    "input:json-not-object": 1,
    "input:text": 1,
    "input:bytes": 1,
    "input:deep": 1,
    "input:payload-cwd": 1,
  };
  // Only passes, never a replacement: the compression invariants were never checked.
  expect(coverageShortfall(claudePost, { ...everyInput, "answer:pass": 3 })).toEqual([
    "claude/post-tool-use: answer:replace reached 0 time(s), floor 1",
    "claude/post-tool-use: replace:own-archive reached 0 time(s), floor 1",
    "claude/post-tool-use: replace:host-persisted reached 0 time(s), floor 1",
  ]);
  // Positive control: a guard run that reached both sides of the oracle.
  const guardRun = {
    ...everyInput,
    "answer:deny": 2,
    "answer:pass": 1,
    "guard:edit-in-opted-in-repo": 2,
    "guard:edit-elsewhere": 1,
    "state:written": 2,
  };
  expect(coverageShortfall(claudePre, guardRun)).toEqual([]);
  expect(coverageShortfall(claudePre, { ...guardRun, "input:bytes": 0 })).toEqual([
    "claude/pre-tool-use: input:bytes reached 0 time(s), floor 1",
  ]);
});
