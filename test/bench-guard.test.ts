// The bench's guard verdict (scripts/bench/hook-cases.ts withinGuard, docs/contract.md §12) on runs the
// bench measured (test/support/bench-guard-runs.json, provenance in its "about"): the unchanged
// tree's edit outside an opted-in repository, whose upper quartile of ratios was over 1.15 in
// both tables while its median was 1.10 and 1.12, and the same hook with 0.35 ms of CPU added
// (docs/performance/2026-12-02-bench-guard.md, "The guard judges the median").
import { describe, expect, test } from "bun:test";
import { pairedRatios, quantile } from "../scripts/bench/measure.ts";
import { STATELESS_GUARD, withinGuard } from "../scripts/bench/hook-cases.ts";
import runs from "./support/bench-guard-runs.json";

type Run = { hook: number[]; floor: number[] };

describe("the bench guard judges the median of paired ratios", () => {
  test("the unchanged tree holds 1.15×, though its upper quartile is over it (the old verdict failed it)", () => {
    for (const run of [runs.unchanged, runs.unchangedReadBack] as Run[]) {
      expect(run.hook.length).toBe(40);
      expect(quantile(pairedRatios(run.hook, run.floor), 0.75)).toBeGreaterThan(STATELESS_GUARD);
      expect(withinGuard(run.hook, run.floor, STATELESS_GUARD)).toBe(true);
    }
  });

  test("control: the same hook with 0.35 ms of CPU added is over", () => {
    const run = runs.plus035ms as Run;
    expect(withinGuard(run.hook, run.floor, STATELESS_GUARD)).toBe(false);
  });

  test("each hook run is paired with its own floor run, not with the floor's median", () => {
    // Runs where a slow floor run matches a slow hook run: paired, every ratio is 1.1; the
    // hook's times against the floor's median would spread 0.55–2.2.
    const floor = [2, 4, 8, 4, 2, 8, 4];
    const hook = floor.map((t) => t * 1.1);
    expect(withinGuard(hook, floor, 1.1 + 1e-9)).toBe(true);
    expect(withinGuard(hook, floor, 1.09)).toBe(false);
  });

  test("a run without a CPU time is left out; with none at all the hook is over", () => {
    expect(withinGuard([1, Number.NaN, 1], [1, 1, 1], 1)).toBe(true);
    expect(withinGuard([Number.NaN], [1], 1.5)).toBe(false);
  });
});
