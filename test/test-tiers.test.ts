// `npm run test:unit` (scripts/test.ts --tier=unit, docs/development/testing.md#the-unit-tier):
// every test file except those OUTSIDE_UNIT_TIER names. What is left out must exist (a renamed
// slow suite would otherwise slip into the fast tier), and what is in must be the rest.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { OUTSIDE_UNIT_TIER, unitTierFiles } from "../scripts/test.ts";

const ROOT = path.resolve(import.meta.dir, "..");
const tier = unitTierFiles(ROOT);

describe("the unit tier", () => {
  test("holds the core, hosts and installer tests (positive control: the walk finds files)", () => {
    for (const file of [
      "./test/state.test.ts",
      "./test/encoders.test.ts",
      "./test/install.test.ts",
      "./test/fuzz-regressions.test.ts",
    ]) {
      expect(tier).toContain(file);
    }
  });

  test("leaves out every file and folder OUTSIDE_UNIT_TIER names, each of which exists", () => {
    for (const [name, why] of OUTSIDE_UNIT_TIER) {
      expect(fs.existsSync(path.join(ROOT, name)), `${name} (${why}) does not exist`).toBe(true);
      expect(tier.filter((file) => (name.endsWith("/") ? file.startsWith(`./${name}`) : file === `./${name}`))).toEqual(
        [],
      );
    }
  });

  test("is every other test file outside node_modules", () => {
    const all = [...new Bun.Glob("test/**/*.test.ts").scanSync({ cwd: ROOT })].filter(
      (f) => !f.includes("node_modules/"),
    );
    const outside = all.filter((f) =>
      OUTSIDE_UNIT_TIER.some(([name]) => (name.endsWith("/") ? f.startsWith(name) : f === name)),
    );
    expect(outside.length).toBeGreaterThan(0);
    expect(tier).toEqual(
      all
        .filter((f) => !outside.includes(f))
        .map((f) => `./${f}`)
        .sort(),
    );
  });
});
