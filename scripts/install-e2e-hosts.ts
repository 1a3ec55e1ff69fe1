// Installs the real hosts the end-to-end suite drives (test/e2e/package.json, its own
// lockfile) with `npm ci`, the first thing `npm test` does. They are kept out of the root
// package because they weigh ~760 MB and building the binary needs none of them: the set-up
// command (`npm ci && npm run build`) stays small.
//
// `npm ci` wipes and re-extracts node_modules every time (~30 s for these hosts), so a stamp
// holding the lockfile's hash skips it when that exact lockfile is already installed.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

const E2E_DIR = path.resolve(import.meta.dir, "..", "test", "e2e");
const LOCKFILE = path.join(E2E_DIR, "package-lock.json");
const STAMP = path.join(E2E_DIR, "node_modules", ".velesdb-hooks-lock.sha256");

const lockHash = createHash("sha256").update(fs.readFileSync(LOCKFILE)).digest("hex");
const installedHash = fs.existsSync(STAMP) ? fs.readFileSync(STAMP, "utf8").trim() : "";

if (installedHash !== lockHash) {
  // Install scripts must run: the Claude Code and Codex packages put their platform binary in
  // place from a postinstall step.
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(npm, ["ci", "--no-audit", "--no-fund"], { cwd: E2E_DIR, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`install-e2e-hosts: npm ci in test/e2e failed (${result.error?.message ?? `exit ${result.status}`})`);
    process.exit(1);
  }
  fs.writeFileSync(STAMP, `${lockHash}\n`);
}
