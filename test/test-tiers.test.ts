// `npm run test:unit` (scripts/test.ts --tier=unit, docs/development/testing.md#the-unit-tier):
// every test file except those OUTSIDE_UNIT_TIER names. What is left out must exist (a renamed
// slow suite would otherwise slip into the fast tier), and what is in must be the rest.
//
// test/timings.json orders both runs, slowest first (docs/development/testing.md#the-runner). A
// file it does not name has no time to be ordered by: 36 test files had none, among them e2e
// suites of two minutes that could then start last and hold the run open alone. So every test
// file has an entry, and every entry names a test file.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { leftOutBy, OUTSIDE_UNIT_TIER, unitTierFiles } from "../scripts/test.ts";

const ROOT = path.resolve(import.meta.dir, "..");
const tier = unitTierFiles(ROOT);
/** Every test file bun test runs, repository-relative: test/**, e2e and windows included, node_modules left out. */
const testFiles = [...new Bun.Glob("test/**/*.test.ts").scanSync({ cwd: ROOT })]
  .filter((f) => !f.includes("node_modules/"))
  .sort();

/** timingProblems(files, timings.json's text) → one line per file without a time and per entry that names no file. */
function timingProblems(files: readonly string[], timingsJson: string): string[] {
  const timed = (JSON.parse(timingsJson) as { files?: Record<string, unknown> }).files ?? {};
  return [
    ...files.filter((f) => !Object.hasOwn(timed, f)).map((f) => `${f} has no entry`),
    ...Object.keys(timed)
      .filter((f) => !files.includes(f))
      .map((f) => `${f} is timed but is no test file`),
    ...Object.entries(timed)
      .filter(([, ms]) => !(Number.isInteger(ms) && (ms as number) > 0))
      .map(([f, ms]) => `${f} has the time ${JSON.stringify(ms)}, not a whole number of milliseconds above 0`),
  ];
}

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
      const exists = name.startsWith("*")
        ? testFiles.some((file) => leftOutBy(name, file))
        : fs.existsSync(path.join(ROOT, name));
      expect(exists, `${name} (${why}) names no file`).toBe(true);
      expect(tier.filter((file) => leftOutBy(name, file.slice(2)))).toEqual([]);
    }
  });

  test("leaves out the e2e suites in a host's folder (control: the host's other tests stay in)", () => {
    expect(tier).not.toContain("./test/hosts/kilo/kilo.e2e.test.ts");
    expect(tier).toContain("./test/hosts/kilo/kilo.test.ts");
    expect(leftOutBy("*.e2e.test.ts", "test/hosts/kilo/kilo.test.ts")).toBe(false);
  });

  test("is every other test file outside node_modules", () => {
    const all = testFiles;
    const outside = all.filter((f) => OUTSIDE_UNIT_TIER.some(([name]) => leftOutBy(name, f)));
    expect(outside.length).toBeGreaterThan(0);
    expect(tier).toEqual(
      all
        .filter((f) => !outside.includes(f))
        .map((f) => `./${f}`)
        .sort(),
    );
  });
});

describe("test/timings.json", () => {
  const timings = fs.readFileSync(path.join(ROOT, "test", "timings.json"), "utf8");

  test("times every test file, e2e and windows included, and names no other", () => {
    expect(testFiles).toContain("test/hosts/pi/pi.e2e.test.ts");
    expect(testFiles).toContain("test/windows/windows.test.ts");
    expect(timingProblems(testFiles, timings)).toEqual([]);
  });

  test("control: a new file without an entry, an entry for a removed file and a time that is none are caught", () => {
    const planted = JSON.parse(timings) as { files: Record<string, unknown> };
    delete planted.files["test/docs-links.test.ts"];
    planted.files["test/renamed-away.test.ts"] = 1200;
    planted.files["test/state.test.ts"] = "fast";
    expect(timingProblems(testFiles, JSON.stringify(planted))).toEqual([
      "test/docs-links.test.ts has no entry",
      "test/renamed-away.test.ts is timed but is no test file",
      'test/state.test.ts has the time "fast", not a whole number of milliseconds above 0',
    ]);
  });
});
