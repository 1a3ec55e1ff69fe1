// Installer defects of the second trial from outside
// (docs/decisions.md#installer-second-trial-from-outside), each through
// the compiled binary in a fake home, each next to the control that proves the setup works.
// The lists of clients and hosts are read from the tables themselves, so a client or host
// added later is expected in the output without editing this file.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { CLIENT_NAMES } from "../src/install/clients/index.ts";
import { HOSTS } from "../src/hosts/index.ts";
import {
  makeInstallSandbox,
  read,
  REPO_ROOT,
  snapshotBinary,
  write,
  type InstallSandbox,
} from "./support/install-sandbox.ts";

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
  test.each([["install"], ["check --strict"], ["uninstall"]])(
    "%s: exit 1, the file named with where the nesting is too deep; nothing installed",
    (command) => {
      write(box.claudeSettings, deep);
      const run = box.run([...command.split(" "), "--client", "claude"]);
      expect(run.exitCode).toBe(1);
      expect(run.stderr + run.stdout).not.toContain("internal error");
      expect(run.stderr + run.stdout).toMatch(
        /~\/\.claude\/settings\.json (does not parse: )?.*line 1, column \d+.*nested deeper than \d+ levels/,
      );
      expect(read(box.claudeSettings)).toBe(deep);
      expect(fs.existsSync(box.stableBinary)).toBe(false);
    },
  );
  test("control: the same file nested 20 deep installs", () => {
    const shallow = `{"x": ${'{"a":'.repeat(20)}1${"}".repeat(20)}}`;
    write(box.claudeSettings, shallow);
    const run = box.run(["install", "--client", "claude"]);
    expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  });
  test.each([["install"], ["uninstall"], ["check"], ["doctor"]])(
    "%s: an error nobody anticipated exits 1 (a fault injected from source)",
    (command) => {
      // From source with a preload that makes process.cwd() throw: every installer command asks
      // for it first, so this is an internal error outside any handler of its own.
      const preload = path.join(box.root, "fault.ts");
      fs.writeFileSync(preload, 'process.cwd = () => { throw new Error("injected fault"); };\n');
      const bun = path.join(REPO_ROOT, "node_modules", ".bin", "bun");
      const run = Bun.spawnSync([bun, "--preload", preload, path.join(REPO_ROOT, "src", "cli.ts"), command], {
        env: box.env,
        cwd: box.home,
      });
      expect(run.stderr.toString()).toContain("internal error: injected fault");
      expect(run.exitCode).toBe(1);
    },
  );
});

describe("5. every file the installer reads is read bounded, and only when it is a regular file", () => {
  const LIMIT_S = 10;
  const runBounded = (args: string[]) => {
    const started = performance.now();
    const run = Bun.spawnSync([snapshotBinary(), ...args], {
      env: box.env,
      cwd: box.home,
      stdin: "ignore",
      timeout: LIMIT_S * 1000,
    });
    return {
      exitCode: run.exitCode,
      signal: run.signalCode,
      stdout: run.stdout.toString(),
      stderr: run.stderr.toString(),
      seconds: (performance.now() - started) / 1000,
    };
  };
  const commands = [
    ["check", "--client", "codex"],
    ["doctor", "--client", "codex"],
    ["install", "--client", "codex"],
    ["uninstall", "--client", "codex"],
  ];
  test.each(commands)(
    "a FIFO at ~/.codex/config.toml: %s %s %s finishes (check and doctor name it as not a regular file)",
    (...args) => {
      fs.rmSync(box.codexConfig, { force: true }); // the sandbox's user-configured MCP server
      expect(Bun.spawnSync(["mkfifo", box.codexConfig]).exitCode).toBe(0);
      const run = runBounded(args);
      expect(run.signal ?? undefined).toBeUndefined();
      expect(run.seconds).toBeLessThan(LIMIT_S);
      if (args[0] === "check" || args[0] === "doctor")
        expect(run.stdout + run.stderr).toContain("config.toml is not a regular file");
      else expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
    },
  );
  test("~/.codex/config.toml linked to /dev/zero: check finishes without reading it", () => {
    fs.rmSync(box.codexConfig, { force: true });
    fs.symlinkSync("/dev/zero", box.codexConfig);
    const run = runBounded(["check", "--client", "codex"]);
    expect(run.signal ?? undefined).toBeUndefined();
    expect(run.stdout + run.stderr).toContain("config.toml is not a regular file");
  });
  test("a sparse 1 GB ~/.codex/config.toml: check reads at most the bound and says it is too large", () => {
    const fd = fs.openSync(box.codexConfig, "w");
    fs.ftruncateSync(fd, 1 << 30);
    fs.closeSync(fd);
    const run = runBounded(["check", "--client", "codex"]);
    expect(run.stdout + run.stderr).toMatch(/config\.toml is larger than \d+ MiB/);
  });
  test("a FIFO installed.json: install and check finish, naming it", () => {
    fs.mkdirSync(path.join(box.home, ".velesdb-hooks"));
    expect(Bun.spawnSync(["mkfifo", path.join(box.home, ".velesdb-hooks", "installed.json")]).exitCode).toBe(0);
    const install = runBounded(["install", "--client", "claude"]);
    expect(install.exitCode).toBe(1);
    expect(install.stderr).toContain(
      "installed.json (velesdb-hooks' record of what it installed) is not a regular file",
    );
    const uninstall = runBounded(["uninstall"]);
    expect(uninstall.exitCode).toBe(1);
  });
  test("control: a regular config.toml is read (its parse error is reported by line)", () => {
    write(box.codexConfig, "[hooks\n");
    const run = runBounded(["check", "--client", "codex"]);
    expect(run.stdout + run.stderr).toContain("config.toml does not parse (line 1)");
  });
});

describe("7. check and doctor quote every value that came from a file", () => {
  const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/;
  const HOSTILE = "x\u001b[31m\u0007\nforged: in step";
  const noRawControl = (text: string) => {
    for (const line of text.split("\n")) expect(RAW.test(line) ? JSON.stringify(line) : "clean").toBe("clean");
    expect(text.split("\n").filter((line) => line.startsWith("forged"))).toEqual([]);
  };
  test("a recorded dsh --config path holding ESC, BEL and a newline", () => {
    fs.mkdirSync(path.join(box.home, ".dsh"), { recursive: true });
    const weird = path.join(box.root, HOSTILE, "hooks.json");
    const installed = box.run(["install", "--client", "dsh", "--config", weird]);
    expect(installed.exitCode).toBe(0);
    // Positive control: the record names that path, so check and doctor do look at it.
    expect(read(path.join(box.home, ".velesdb-hooks", "installed.json"))).toContain(JSON.stringify(weird).slice(1, -1));
    for (const command of [["check"], ["doctor"], ["uninstall", "--dry-run"]]) {
      const run = box.run(command);
      expect(run.stdout).toContain("\\u001b[31m\\u0007\\nforged: in step");
      noRawControl(run.stdout + run.stderr);
    }
  });
  test("an event key of a settings file holding ESC and a newline", () => {
    const installed = box.run(["install", "--client", "claude"]);
    expect(installed.exitCode).toBe(0);
    const settings = JSON.parse(read(box.claudeSettings)) as { hooks: Record<string, unknown> };
    settings.hooks[`Bad${HOSTILE}`] = settings.hooks.Stop;
    write(box.claudeSettings, JSON.stringify(settings, null, 2));
    for (const command of [
      ["check", "--client", "claude"],
      ["doctor", "--client", "claude"],
      ["uninstall", "--client", "claude", "--dry-run"],
    ]) {
      const run = box.run(command);
      // Positive control: the key is reported (it holds an entry of ours).
      expect(run.stdout).toContain("Bad");
      noRawControl(run.stdout + run.stderr);
    }
  });
});
