// The directory `npm test` makes for one run (scripts/test.ts sets VH_TEST_RUN_DIR and removes
// it when bun test ends). Under --parallel no module is shared between test files, so what
// several files share in one run (the release build, Node's code cache) lives there.
import * as fs from "node:fs";
import * as path from "node:path";

/** testRunDir() → the directory scripts/test.ts made for this run, or undefined when bun test runs alone. */
export function testRunDir(): string | undefined {
  const dir = process.env.VH_TEST_RUN_DIR;
  return dir && path.isAbsolute(dir) && fs.existsSync(dir) ? dir : undefined;
}
