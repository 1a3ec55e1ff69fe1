// bun scripts/failure-table.ts [--check]
// Writes the failure table of test/support/failure-table.ts into README.md between
// `<!-- failure-table:begin -->` and `<!-- failure-table:end -->`, replacing only that block.
// --check writes nothing and exits 1 when the README block differs (test/faults.test.ts runs
// the same comparison).
import * as fs from "node:fs";
import * as path from "node:path";
import { README_BEGIN, README_END, renderFailureTable } from "../test/support/failure-table.ts";

export const README = path.resolve(import.meta.dir, "..", "README.md");

/** readmeWithTable(text) → the README with its failure-table block regenerated; throws without markers. */
export function readmeWithTable(text: string): string {
  const begin = text.indexOf(README_BEGIN);
  const end = text.indexOf(README_END);
  if (begin < 0 || end < begin) throw new Error(`README.md has no ${README_BEGIN} … ${README_END} block`);
  return `${text.slice(0, begin + README_BEGIN.length)}\n${renderFailureTable()}\n${text.slice(end)}`;
}

if (import.meta.main) {
  const current = fs.readFileSync(README, "utf8");
  const wanted = readmeWithTable(current);
  if (process.argv.includes("--check")) {
    if (current !== wanted) {
      console.error("README.md's failure table is out of date: run bun scripts/failure-table.ts");
      process.exit(1);
    }
    console.log("README.md's failure table is up to date");
  } else if (current !== wanted) {
    fs.writeFileSync(README, wanted);
    console.log("README.md: failure table regenerated");
  } else {
    console.log("README.md: failure table already up to date");
  }
}
