// Installer defects of the second trial from outside (issue 19, items 5–7 and 11), each through
// the compiled binary in a fake home, each next to the control that proves the setup works.
// The lists of clients and hosts are read from the tables themselves, so a client or host
// added later is expected in the output without editing this file.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { CLIENT_NAMES } from "../src/install/clients/index.ts";
import { HOSTS } from "../src/hosts/index.ts";
import { makeInstallSandbox, read, REPO_ROOT, write, type InstallSandbox } from "./support/install-sandbox.ts";

let box: InstallSandbox;
beforeEach(() => {
  box = makeInstallSandbox("round2");
});
afterEach(() => box.cleanup());

/** expectEveryClient(text): the usage's "(C: …)" line names each client of the table. */
function expectEveryClient(text: string): void {
  const clientLine = text.split("\n").find((line) => line.trimStart().startsWith("(C:"));
  expect(clientLine).toBeDefined();
  for (const name of CLIENT_NAMES) expect(clientLine).toMatch(new RegExp(`[ (:]${name}[,; )]`));
}

describe("11. --help is derived from the tables", () => {
  test("the client list names every installer client, and every host has its line", () => {
    const run = box.run(["--help"]);
    expect(run.exitCode).toBe(0);
    expectEveryClient(run.stdout);
    for (const [name, host] of Object.entries(HOSTS)) {
      const hostLine = run.stdout.split("\n").find((line) => line.trimStart().startsWith(`${name} `));
      expect(hostLine).toBeDefined();
      for (const event of Object.keys(host.events)) expect(hostLine).toContain(event);
    }
  });
  test("a usage error (no arguments) prints the same derived lists on stderr", () => {
    const run = box.run([]);
    expect(run.exitCode).toBe(64);
    expect(run.stdout).toBe("");
    expectEveryClient(run.stderr);
  });
});

describe("6. a registry nested too deep is refused up front, and an internal error is a failure", () => {
  const DEPTH = 200_000;
  const deep = `{"hooks": ${'{"a":'.repeat(DEPTH)}1${"}".repeat(DEPTH)}}`;
  test.each([["install"], ["check --strict"], ["uninstall"]])("%s: exit 1, the file named with where the nesting is too deep; nothing installed", (command) => {
    write(box.claudeSettings, deep);
    const run = box.run([...command.split(" "), "--client", "claude"]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr + run.stdout).not.toContain("internal error");
    expect(run.stderr + run.stdout).toMatch(/~\/\.claude\/settings\.json (does not parse: )?.*line 1, column \d+.*nested deeper than \d+ levels/);
    expect(read(box.claudeSettings)).toBe(deep);
    expect(fs.existsSync(box.stableBinary)).toBe(false);
  });
  test("control: the same file nested 20 deep installs", () => {
    const shallow = `{"x": ${'{"a":'.repeat(20)}1${"}".repeat(20)}}`;
    write(box.claudeSettings, shallow);
    const run = box.run(["install", "--client", "claude"]);
    expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  });
  test.each([["install"], ["uninstall"], ["check"], ["doctor"]])("%s: an error nobody anticipated exits 1 (a fault injected from source)", (command) => {
    // From source with a preload that makes process.cwd() throw: every installer command asks
    // for it first, so this is an internal error outside any handler of its own.
    const preload = path.join(box.root, "fault.ts");
    fs.writeFileSync(preload, 'process.cwd = () => { throw new Error("injected fault"); };\n');
    const bun = path.join(REPO_ROOT, "node_modules", ".bin", "bun");
    const run = Bun.spawnSync([bun, "--preload", preload, path.join(REPO_ROOT, "src", "cli.ts"), command], { env: box.env, cwd: box.home });
    expect(run.stderr.toString()).toContain("internal error: injected fault");
    expect(run.exitCode).toBe(1);
  });
});
