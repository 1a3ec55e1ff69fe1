// Issue 9, property run: every `<host> <event>` entry of the compiled binary gets at least
// VELESDB_FUZZ_RUNS (default 2 000) generated payloads — real host shapes with mutated fields,
// arbitrary JSON, non-JSON bytes — and every answer must keep the invariants of SPEC §3.4 and
// §10 (test/support/fuzz-harness.ts): an allowed exit code; stdout empty or exactly one answer
// of the host's shape; no stack trace; done within the bound; nothing written outside the state
// directory; PostToolUse {} or a replacement whose archive holds the complete original; the
// guard never passing an edit in the opted-in repository without a recall.
//
// Seed policy: random per run unless VELESDB_FUZZ_SEED is set, printed at the start and in every
// failure together with the commands that replay it. `bun run fuzz -- --seed N --count M` runs
// the same property for longer.
import { describe, expect, test } from "bun:test";
import { ENTRIES } from "./support/fuzz-entries.ts";
import { BATCH, fuzzEntry, fuzzSettings } from "./support/fuzz-harness.ts";

const settings = fuzzSettings();
console.log(`fuzz: seed ${settings.seed} (VELESDB_FUZZ_SEED), ${settings.count} payloads per entry (VELESDB_FUZZ_RUNS), ${settings.jobs} at a time`);

// One payload costs ~10 ms on two cores; the bound leaves room for a loaded CI machine.
const TIMEOUT_MS = Math.max(120_000, settings.count * 150);

describe.each(ENTRIES.map((e) => [e.id, e] as const))("fuzz %s", (_id, entry) => {
  test(
    `${settings.count} generated payloads keep every invariant`,
    async () => {
      const report = await fuzzEntry(entry, settings);
      const kinds = Object.entries(report.kinds).map(([k, n]) => `${k} ${n}`).join(", ");
      console.log(`  ${entry.id}: ${report.cases} payloads in ${(report.elapsedMs / 1000).toFixed(1)} s, slowest ${report.slowestMs.toFixed(0)} ms (${kinds})`);
      if (report.failure) throw new Error(report.failure.message);
      expect(report.cases).toBeGreaterThanOrEqual(Math.ceil(settings.count / BATCH) * BATCH);
    },
    TIMEOUT_MS,
  );
});

test("the fuzzer reaches the answers that matter: replacements, refusals, continuations", async () => {
  // A generator that only ever produced garbage would keep every invariant trivially. With a
  // fixed seed and a small count, the shaped payloads must reach each interesting answer.
  const small = { ...settings, seed: 20_251_130, count: 96 };
  const byId = Object.fromEntries(ENTRIES.map((e) => [e.id, e]));
  const reached = async (id: string) => (await fuzzEntry(byId[id]!, small)).kinds;
  expect((await reached("claude/post-tool-use")).replace).toBeGreaterThan(0);
  expect((await reached("claude/pre-tool-use")).deny).toBeGreaterThan(0);
  expect((await reached("codex/pre-tool-use")).deny).toBeGreaterThan(0);
  expect((await reached("windsurf/pre-write-code")).deny).toBeGreaterThan(0);
  expect((await reached("codex/stop")).continue).toBeGreaterThan(0);
}, 120_000);
