// Installs the real hosts the end-to-end suite drives (test/e2e/package.json, its own
// lockfile), the first thing `npm test` does; and the same way the npm registry the npm-package
// tests publish to (test/registry: Verdaccio, which would otherwise add ~330 packages to the
// root set-up). They are kept out of the root package because
// they weigh ~1 GB and building the binary needs none of them: the set-up command
// (`npm ci && npm run build`) stays small.
//
// `npm install` against the committed lockfile, not `npm ci`: Qwen Code's clipboard package
// lists platform packages that were never published (404 for all but linux-x64), and `npm ci`
// refuses a lockfile without them while `npm install` skips them as the optional packages they
// are. The lockfile must come out unchanged (else the pins drifted and the run stops), and a
// stamp holding its hash skips the ~30 s install when that exact lockfile is installed.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

const TEST_DIR = path.resolve(import.meta.dir, "..", "test");

/** installPinned(dir) → dir/node_modules installed from dir's lockfile, unchanged; exits 1 on failure. */
function installPinned(dir: string): void {
  const label = path.relative(path.dirname(TEST_DIR), dir);
  const lockfile = path.join(dir, "package-lock.json");
  const stamp = path.join(dir, "node_modules", ".velesdb-hooks-lock.sha256");
  const lockHash = createHash("sha256").update(fs.readFileSync(lockfile)).digest("hex");
  const installedHash = fs.existsSync(stamp) ? fs.readFileSync(stamp, "utf8").trim() : "";
  if (installedHash === lockHash) return;
  // Install scripts must run: the Claude Code and Codex packages put their platform binary in
  // place from a postinstall step.
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const result = spawnSync(npm, ["install", "--no-audit", "--no-fund"], { cwd: dir, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(
      `install-e2e-hosts: npm install in ${label} failed (${result.error?.message ?? `exit ${result.status}`})`,
    );
    process.exit(1);
  }
  const lockAfter = fs.readFileSync(lockfile);
  if (createHash("sha256").update(lockAfter).digest("hex") !== lockHash) {
    console.error(
      `install-e2e-hosts: npm rewrote ${label}/package-lock.json: the pins and the lockfile disagree; commit the new lockfile after checking its diff`,
    );
    process.exit(1);
  }
  fs.writeFileSync(stamp, `${lockHash}\n`);
}

installPinned(path.join(TEST_DIR, "e2e"));
installPinned(path.join(TEST_DIR, "registry"));
