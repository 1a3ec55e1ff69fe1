// The npm launcher (npm/launcher.js) choosing which platform package to run (docs/hardening.md §1),
// in node_modules trees laid out as npm lays them out (a project's hoisted sibling, a package's
// own nested node_modules), run by the machine's Node. The trees are made here so that each
// hostile variant can be planted exactly; test/npm-registry.test.ts runs the same launcher as
// npm itself installed it from a registry. Every "platform binary" is a script that leaves a
// marker: a refused one must never run.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { IS_ROOT, testIf } from "./support/requires.ts";

const LAUNCHER = path.join(import.meta.dir, "..", "npm", "launcher.js");
const NODE = Bun.which("node");
const VERSION = "0.1.0";
const PLATFORM = `velesdb-hooks-${process.platform}-${process.arch}`;

let root: string;
beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vh-launcher-")));
  fs.chmodSync(root, 0o755);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const marker = () => path.join(root, "ran");

/** launcherIn(project) → the launcher package installed under <project>/node_modules/velesdb-hooks, as npm unpacks it. */
function launcherIn(project: string): string {
  const own = path.join(project, "node_modules", "velesdb-hooks");
  fs.mkdirSync(path.join(own, "bin"), { recursive: true });
  fs.writeFileSync(
    path.join(own, "package.json"),
    JSON.stringify({
      name: "velesdb-hooks",
      version: VERSION,
      optionalDependencies: { [PLATFORM]: VERSION, "velesdb-hooks-win32-x64": VERSION },
    }),
  );
  fs.copyFileSync(LAUNCHER, path.join(own, "bin", "velesdb-hooks.js"));
  return path.join(own, "bin", "velesdb-hooks.js");
}

/** platformAt(dir, version) → a platform package at dir whose binary leaves the marker and says which one it is. */
function platformAt(dir: string, version = VERSION, name = PLATFORM): string {
  fs.mkdirSync(path.join(dir, "bin"), { recursive: true });
  fs.writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name, version, os: [process.platform], cpu: [process.arch] }),
  );
  const binary = path.join(dir, "bin", "velesdb-hooks");
  fs.writeFileSync(binary, `#!/bin/sh\necho "${dir}" > "${marker()}"\necho ran "$@"\n`, { mode: 0o755 });
  for (const d of [dir, path.join(dir, "bin")]) fs.chmodSync(d, 0o755);
  fs.chmodSync(path.join(dir, "package.json"), 0o644);
  return binary;
}

function launch(
  launcher: string,
  args: string[] = ["--version"],
): { exitCode: number; stdout: string; stderr: string } {
  const run = Bun.spawnSync([NODE!, launcher, ...args], {
    cwd: root,
    env: { PATH: "/usr/bin:/bin" },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { exitCode: run.exitCode ?? -1, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

/** refused(run, pattern): exit 1, one stderr line matching, nothing on stdout, no platform binary ran. */
function refused(run: ReturnType<typeof launch>, pattern: RegExp): void {
  expect({ exitCode: run.exitCode, stdout: run.stdout }).toEqual({ exitCode: 1, stdout: "" });
  expect(run.stderr.split("\n")).toHaveLength(2);
  expect(run.stderr).toMatch(pattern);
  expect(fs.existsSync(marker())).toBe(false);
}

describe("which platform package the launcher runs", () => {
  test("node is on PATH", () => expect(NODE).toBeTruthy());

  test("the trial: --omit=optional in a project, a 0.0.1 package planted in a parent directory's node_modules: refused in one line, never run", () => {
    const project = path.join(root, "shared", "project");
    const launcher = launcherIn(project);
    platformAt(path.join(root, "shared", "node_modules", PLATFORM), "0.0.1");
    platformAt(path.join(root, "node_modules", PLATFORM), VERSION); // even at the right version, up the tree is not ours
    refused(launch(launcher, ["install"]), /no binary for .* is installed/);
  });

  test("control: the package npm put beside the launcher (hoisted) runs, with the arguments", () => {
    const project = path.join(root, "project");
    const launcher = launcherIn(project);
    platformAt(path.join(project, "node_modules", PLATFORM));
    const run = launch(launcher, ["a", "b c"]);
    expect({ exitCode: run.exitCode, stdout: run.stdout, stderr: run.stderr }).toEqual({
      exitCode: 0,
      stdout: "ran a b c\n",
      stderr: "",
    });
    expect(fs.readFileSync(marker(), "utf8").trim()).toBe(path.join(project, "node_modules", PLATFORM));
  });

  test("control: the package in the launcher's own node_modules (nested, as npm -g lays it out) runs, before a hoisted one", () => {
    const project = path.join(root, "project");
    const launcher = launcherIn(project);
    const nested = path.join(project, "node_modules", "velesdb-hooks", "node_modules", PLATFORM);
    platformAt(nested);
    platformAt(path.join(project, "node_modules", PLATFORM));
    expect(launch(launcher).exitCode).toBe(0);
    expect(fs.readFileSync(marker(), "utf8").trim()).toBe(nested);
  });

  test("beside the launcher but at another version: refused, naming both versions", () => {
    const project = path.join(root, "project");
    const launcher = launcherIn(project);
    platformAt(path.join(project, "node_modules", PLATFORM), "0.0.1");
    refused(
      launch(launcher),
      new RegExp(
        `refusing to run the platform package .*${PLATFORM} is version "0\\.0\\.1" of "${PLATFORM}", not ${PLATFORM} ${VERSION.replace(/\./g, "\\.")}; reinstall velesdb-hooks with npm`,
      ),
    );
  });

  test("a package.json naming another package: refused", () => {
    const project = path.join(root, "project");
    const launcher = launcherIn(project);
    platformAt(path.join(project, "node_modules", PLATFORM), VERSION, "something-else");
    refused(launch(launcher), /is version "0\.1\.0" of "something-else"/);
  });

  const WRITABLE: ReadonlyArray<readonly [string, (dir: string) => string]> = [
    ["the binary, by its group", (dir) => path.join(dir, "bin", "velesdb-hooks")],
    ["the bin directory, by others", (dir) => path.join(dir, "bin")],
    ["the package directory, by others", (dir) => dir],
    ["the node_modules that holds it, by others", (dir) => path.dirname(dir)],
    ["its package.json, by its group", (dir) => path.join(dir, "package.json")],
  ];
  test.each(WRITABLE)("%s writable: refused in one line naming the mode, never run", (label, at) => {
    const project = path.join(root, "project");
    const launcher = launcherIn(project);
    const dir = path.join(project, "node_modules", PLATFORM);
    platformAt(dir);
    const target = at(dir);
    const mode = fs.statSync(target).mode & 0o777;
    fs.chmodSync(target, mode | (label.includes("others") ? 0o002 : 0o020));
    refused(
      launch(launcher),
      /refusing to run the platform package .* is writable by (its group|others) \(.*, mode \d+\)/,
    );
  });

  testIf(IS_ROOT, "root (to give the package to another user)")(
    "owned by another user (neither the caller nor root): refused, never run; control: given back to root, it runs",
    () => {
      const project = path.join(root, "project");
      const launcher = launcherIn(project);
      const dir = path.join(project, "node_modules", PLATFORM);
      const binary = platformAt(dir);
      fs.chownSync(binary, 4242, 4242);
      refused(launch(launcher), /belongs to uid 4242 \(velesdb-hooks\), neither this user \(uid 0\) nor root/);
      fs.chownSync(binary, 0, 0);
      expect(launch(launcher).exitCode).toBe(0);
    },
  );
});
