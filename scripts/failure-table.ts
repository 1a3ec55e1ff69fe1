// bun scripts/failure-table.ts [--check]
// Writes the failure table of test/support/failure-table.ts into docs/failure-modes.md between
// `<!-- failure-table:begin -->` and `<!-- failure-table:end -->`, replacing only that block.
// --check writes nothing and exits 1 when the page's block differs (test/faults.test.ts runs
// the same comparison).
import * as fs from "node:fs";
import * as path from "node:path";
import { TABLE_BEGIN, TABLE_END, renderFailureTable } from "../test/support/failure-table.ts";

export const FAILURE_PAGE = path.resolve(import.meta.dir, "..", "docs", "failure-modes.md");

/** pageWithTable(text) → the page with its failure-table block regenerated; throws without markers. */
export function pageWithTable(text: string): string {
  const begin = text.indexOf(TABLE_BEGIN);
  const end = text.indexOf(TABLE_END);
  if (begin < 0 || end < begin) throw new Error(`docs/failure-modes.md has no ${TABLE_BEGIN} … ${TABLE_END} block`);
  return `${text.slice(0, begin + TABLE_BEGIN.length)}\n${renderFailureTable()}\n${text.slice(end)}`;
}

if (import.meta.main) {
  const current = fs.readFileSync(FAILURE_PAGE, "utf8");
  const wanted = pageWithTable(current);
  if (process.argv.includes("--check")) {
    if (current !== wanted) {
      console.error("docs/failure-modes.md's failure table is out of date: run bun scripts/failure-table.ts");
      process.exit(1);
    }
    console.log("docs/failure-modes.md's failure table is up to date");
  } else if (current !== wanted) {
    fs.writeFileSync(FAILURE_PAGE, wanted);
    console.log("docs/failure-modes.md: failure table regenerated");
  } else {
    console.log("docs/failure-modes.md: failure table already up to date");
  }
}
