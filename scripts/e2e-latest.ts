// `npm run e2e:latest`: the end-to-end suite against the NEWEST published version of every host
// it drives, not only the pins. Users update their CLIs on their own schedule (Claude Code and
// Codex ship several versions a week), so the pins of test/e2e/package.json say what we
// measured, this says whether it still holds today.
//
// The hosts are the e2e package's dependencies (test/e2e/package.json), each installed at its
// `latest` dist-tag into a temporary prefix — never the lockfile, never test/e2e/node_modules —
// and the suites find them there through VH_E2E_HOSTS (test/e2e/host-bins.ts). `node` is the
// exception: it is there only because Qwen Code needs a newer Node than the one the rest runs
// on, so it is the newest release of the major line the newest Qwen Code's `engines` asks for
// (the Node such a user installs), not whatever major is newest.
//
//   bun scripts/e2e-latest.ts [bun test args…]   e.g. `-- test/hosts/qwen/qwen.e2e.test.ts`
//
// VH_E2E_KEEP=1 keeps the prefix; GITHUB_STEP_SUMMARY (in CI) gets the version table.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const ROOT = path.resolve(import.meta.dir, "..");
const E2E_DIR = path.join(ROOT, "test", "e2e");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

interface HostVersion {
  /** The package as test/e2e/package.json pins it. */
  name: string;
  /** The package installed for the newest version: the pin's, or its renamed successor's. */
  installName: string;
  pinned: string;
  newest: string;
}

// Hosts that moved to another package name: the newest release is the successor's. Pi was
// renamed after 0.73.1 (its README and npm: @earendil-works/pi-coding-agent 0.74.0 …), and
// test/e2e/host-bins.ts runs the successor when it is installed.
const RENAMED: Readonly<Record<string, string>> = {
  "@mariozechner/pi-coding-agent": "@earendil-works/pi-coding-agent",
};

function fail(message: string): never {
  console.error(`e2e-latest: ${message}`);
  process.exit(1);
}

/** npmView(spec, field) → the registry's answer, parsed from `npm view --json`. */
function npmView(spec: string, field: string): unknown {
  const run = spawnSync(NPM, ["view", spec, field, "--json"], { encoding: "utf8" });
  if (run.status !== 0)
    fail(`npm view ${spec} ${field} failed: ${(run.stderr || run.error?.message || "").trim().split("\n")[0]}`);
  try {
    return JSON.parse(run.stdout);
  } catch {
    fail(`npm view ${spec} ${field} did not answer JSON`);
  }
}

/** The newest version of a spec (a range may match several: npm then answers a list, oldest first). */
function newestVersion(spec: string): string {
  const answer = npmView(spec, "version");
  const version = Array.isArray(answer) ? answer.at(-1) : answer;
  if (typeof version !== "string" || !/^\d+\.\d+\.\d+/.test(version)) fail(`no published version for ${spec}`);
  return version;
}

/** The major line of Node that Qwen Code's newest release asks for (`engines.node`, e.g. ">=22.0.0"). */
function nodeMajorForQwen(qwenVersion: string): string {
  const engines = npmView(`@qwen-code/qwen-code@${qwenVersion}`, "engines");
  const range = engines && typeof engines === "object" ? (engines as Record<string, unknown>).node : undefined;
  const major = typeof range === "string" ? /(\d+)/.exec(range)?.[1] : undefined;
  if (!major) fail(`@qwen-code/qwen-code@${qwenVersion} states no engines.node`);
  return major;
}

const e2ePackage = JSON.parse(fs.readFileSync(path.join(E2E_DIR, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
};
const pins = e2ePackage.dependencies;

const hosts: HostVersion[] = [];
for (const [name, pinned] of Object.entries(pins)) {
  if (name === "node") continue;
  const installName = RENAMED[name] ?? name;
  hosts.push({ name, installName, pinned, newest: newestVersion(`${installName}@latest`) });
}
if (pins.node) {
  const qwen = hosts.find((h) => h.name === "@qwen-code/qwen-code");
  const major = qwen ? nodeMajorForQwen(qwen.newest) : "22";
  hosts.push({ name: "node", installName: "node", pinned: pins.node, newest: newestVersion(`node@${major}`) });
}

const prefix = fs.mkdtempSync(path.join(os.tmpdir(), "vh-e2e-latest-"));
const cleanUp = (): void => {
  if (!process.env.VH_E2E_KEEP) fs.rmSync(prefix, { recursive: true, force: true });
  else console.log(`e2e-latest: kept ${prefix}`);
};

// Exact versions (the ones printed), so what ran is what the table says even if a release
// lands mid-install. No lockfile: this is a one-off prefix.
fs.writeFileSync(
  path.join(prefix, "package.json"),
  `${JSON.stringify({ name: "velesdb-hooks-e2e-latest", private: true, type: "module", dependencies: Object.fromEntries(hosts.map((h) => [h.installName, h.newest])) }, null, 2)}\n`,
);
// The same npm settings as the pinned install (legacy-peer-deps: the DeepSeek packages' rc
// peer ranges disagree with one another, and npm's strict resolver refuses the set).
const npmrc = path.join(E2E_DIR, ".npmrc");
if (fs.existsSync(npmrc)) fs.copyFileSync(npmrc, path.join(prefix, ".npmrc"));
console.log(`e2e-latest: installing the newest hosts into ${prefix}`);
// `npm install`, not `npm ci` (no lockfile; and Qwen Code's clipboard package lists platform
// packages that were never published, which only install skips). Install scripts must run:
// Claude Code and Codex put their platform binary in place from a postinstall step.
const install = spawnSync(NPM, ["install", "--no-audit", "--no-fund", "--no-package-lock"], {
  cwd: prefix,
  stdio: "inherit",
});
if (install.status !== 0) {
  cleanUp();
  fail(`npm install in ${prefix} failed (${install.error?.message ?? `exit ${install.status}`})`);
}

// What npm actually put there (the table reads the installed package.json, not our request).
const installed = (name: string): string => {
  try {
    return (
      (
        JSON.parse(fs.readFileSync(path.join(prefix, "node_modules", name, "package.json"), "utf8")) as {
          version?: string;
        }
      ).version ?? "?"
    );
  } catch {
    return "missing";
  }
};
const rows = hosts.map((h) => ({ ...h, installed: installed(h.installName) }));
const label = (r: HostVersion): string => (r.installName === r.name ? r.name : `${r.name} -> ${r.installName}`);
const width = Math.max(...rows.map((r) => label(r).length));
console.log(`\n${"host".padEnd(width)}  pinned          newest (installed)`);
for (const r of rows)
  console.log(
    `${label(r).padEnd(width)}  ${r.pinned.padEnd(14)}  ${r.installed}${r.installed === r.pinned && r.installName === r.name ? "" : "  (newer than the pin)"}`,
  );
console.log("");
const missing = rows.filter((r) => r.installed !== r.newest);
if (missing.length > 0) {
  cleanUp();
  fail(
    `not installed as asked: ${missing.map((r) => `${r.installName} (asked ${r.newest}, found ${r.installed})`).join(", ")}`,
  );
}

const bun = process.execPath;
const build = spawnSync(bun, [path.join(ROOT, "scripts", "build.ts")], { cwd: ROOT, stdio: "inherit" });
if (build.status !== 0) {
  cleanUp();
  fail("the build failed");
}

const testArgs = process.argv.slice(2).filter((a) => a !== "--");
// bun test runs every file whose path holds one of these: the shared suites of test/e2e, and each
// host's own e2e suite in its folder (test/hosts/<host>/<host>.e2e.test.ts).
const E2E_SUITES = ["test/e2e", ".e2e.test.ts"];
const suite = spawnSync(bun, ["test", "--timeout", "60000", ...(testArgs.length > 0 ? testArgs : E2E_SUITES)], {
  cwd: ROOT,
  stdio: "inherit",
  env: { ...process.env, VH_E2E_HOSTS: path.join(prefix, "node_modules") },
});
const passed = suite.status === 0;

if (process.env.GITHUB_STEP_SUMMARY) {
  const table = [
    `### e2e on the newest hosts: ${passed ? "passed" : "FAILED"}`,
    "",
    "| host | pinned | newest |",
    "| --- | --- | --- |",
    ...rows.map((r) => `| \`${label(r)}\` | ${r.pinned} | ${r.installed} |`),
    "",
  ].join("\n");
  fs.appendFileSync(process.env.GITHUB_STEP_SUMMARY, table);
}
cleanUp();
console.log(
  `e2e-latest: the suite ${passed ? "passed" : "FAILED"} on ${rows.map((r) => `${r.installName}@${r.installed}`).join(", ")}`,
);
process.exit(passed ? 0 : 1);
