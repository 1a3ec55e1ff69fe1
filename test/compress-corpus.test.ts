// The goal of docs/compression.md, held on the corpus of real command outputs
// (test/support/real-outputs.ts): through every host's compiled hook, at least 80 % of the items
// at or above the size floor replaced, at most 25 % of their bytes read, and no line a reader
// needs (parsed from the tool's own report) lost in any replacement. The compiler is the real
// velesdb-memory 0.17.0 when VELESDB_MEMORY_BIN_REAL names it, else the sh double `medium`
// (fixtures/compilers: its whole input back after a label, as the real one answers a view inside
// its budget); the bench (scripts/bench/compress-corpus.ts) prints the same figures.
// A tool missing from the machine makes its item unavailable: a failure under CI=true.
import { describe, expect, test } from "bun:test";
import { aggregate, HOSTS, runItem, SIZE_FLOOR, type ItemResult } from "../scripts/bench/compress-corpus.ts";
import { fake } from "./support/compress-fixtures.ts";
import { realOutputs } from "./support/real-outputs.ts";

const compiler = process.env.VELESDB_MEMORY_BIN_REAL || fake("medium");

describe("compression on real command outputs", () => {
  test("every host: ≥ 80 % of the items over the floor replaced, ≤ 25 % of the bytes read, 0 needed lines lost", async () => {
    const corpus = await realOutputs();
    const unavailable = corpus.filter((item) => !item.ok);
    if (process.env.CI === "true") expect(unavailable).toEqual([]);
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", VELESDB_MEMORY_BIN: compiler };
    const results: ItemResult[] = [];
    for (const host of HOSTS) for (const item of corpus) if (item.ok) results.push(runItem(host, item.output, env));
    // Positive control of the measure: some items are large, and the small ones pass through.
    expect(results.filter((r) => r.bytesBefore >= SIZE_FLOOR).length).toBeGreaterThanOrEqual(10 * HOSTS.length);
    for (const r of results.filter((r) => r.bytesBefore < SIZE_FLOOR)) expect(r.replaced).toBe(false);
    for (const host of HOSTS) {
      const a = aggregate(host, results);
      expect({
        host,
        lost: results.filter((r) => r.host === host).flatMap((r) => r.lost.map((line) => `${r.name}: ${line}`)),
      }).toEqual({ host, lost: [] });
      expect(a.replaced).toBeGreaterThanOrEqual(Math.ceil(0.8 * a.items));
      expect(a.bytesAfter / a.bytesBefore).toBeLessThanOrEqual(0.25);
    }
  }, 900_000);
});
