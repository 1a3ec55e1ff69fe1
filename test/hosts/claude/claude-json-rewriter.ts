// Claude Code's side of the ~/.claude.json race (docs/hardening.md §2): a process that rewrites the
// file the way a running Claude does — read it, change a field, write the whole file to a
// temporary name, rename it over. Each rewrite adds `tipsHistory["rewrite-<n>"]`, so a rewrite
// that someone else's rename undid is visible afterwards as a missing key.
//   loop:    rewrite, pause a random 0–<pauseMs> ms, again, until <stop> exists;
//   trigger: prepare one rewrite (read, change, write the temporary file), then rename it the
//            moment the installer's backup is being written (its temporary file,
//            *.velesdb-backup.velesdb-tmp-*, appears beside the target) — the window the fix
//            closes — then stop. Not at the temporary file of the new bytes: a rename that lands
//            after the installer's last stat of the target and before its own rename is the
//            residual window of docs/hardening.md §2 (tens of µs, no compare-and-rename exists),
//            and a loaded machine once slowed this process into it (1 trial in 8 undone).
// Prints {"writes": n} when it stops.
// Usage: bun claude-json-rewriter.ts loop <file> <stop> <pauseMs> | trigger <file> <stop>
import * as fs from "node:fs";
import * as path from "node:path";

const [mode, file, stop, pause] = process.argv.slice(2) as [string, string, string, string | undefined];
const temp = `${file}.tmp.${process.pid}`;
let writes = 0;
const prepare = () => {
  const config = JSON.parse(fs.readFileSync(file, "utf8")) as { tipsHistory: Record<string, number> };
  config.tipsHistory[`rewrite-${writes}`] = writes;
  fs.writeFileSync(temp, JSON.stringify(config, null, 2));
};
if (mode === "trigger") {
  prepare();
  const dir = path.dirname(file);
  while (!fs.existsSync(stop)) {
    if (fs.readdirSync(dir).some((name) => name.includes(".velesdb-backup.velesdb-tmp-"))) {
      fs.renameSync(temp, file);
      writes++;
      break;
    }
  }
  fs.rmSync(temp, { force: true });
} else {
  while (!fs.existsSync(stop)) {
    prepare();
    fs.renameSync(temp, file);
    writes++;
    Bun.sleepSync(Math.random() * Number(pause ?? "0"));
  }
}
process.stdout.write(`${JSON.stringify({ writes })}\n`);
