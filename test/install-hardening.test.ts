// Installer defects found by trials from outside (docs/decisions.md#installer), each through
// the compiled binary in a fake home, each next to the control that proves the setup works.
// The suite runs as root here, so "another user" is a file chowned to an unused uid, and "a
// file system that refuses the write" is an immutable file or directory (chattr +i).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import {
  makeInstallSandbox,
  read,
  snapshotBinary,
  treeDigest,
  write,
  type InstallSandbox,
} from "./support/install-sandbox.ts";
import { IS_ROOT, testIf } from "./support/requires.ts";

let box: InstallSandbox;
const immutable: string[] = [];
beforeEach(() => {
  box = makeInstallSandbox("hardening");
});
afterEach(() => {
  for (const p of immutable.splice(0)) Bun.spawnSync(["chattr", "-i", p]);
  box.cleanup();
});

const OTHER_UID = 12345;
const OTHER_GID = 12346;

const ok = (args: string[], env?: Record<string, string | undefined>) => {
  const run = box.run(args, { env });
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};
type Group = { matcher?: string; hooks: Array<Record<string, unknown>> };
const hooksOf = (file: string): Record<string, Group[]> => (parseJsonc(read(file)) as { hooks?: never }).hooks ?? {};
const ownerOf = (p: string) => {
  const st = fs.statSync(p);
  return { uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 };
};
const makeImmutable = (p: string): void => {
  expect(Bun.spawnSync(["chattr", "+i", p]).exitCode).toBe(0);
  immutable.push(p);
};

const FOREIGN = `${JSON.stringify({ model: "opus", hooks: { Stop: [{ hooks: [{ type: "command", command: "say done" }] }] } }, null, 2)}\n`;

describe("2. owner, group and mode of a user's file survive an install by root", () => {
  testIf(IS_ROOT, "root")(
    "a registry owned by another user keeps its owner, group and mode; so does its backup",
    () => {
      write(box.claudeSettings, FOREIGN, 0o640);
      fs.chownSync(box.claudeSettings, OTHER_UID, OTHER_GID);
      ok(["install", "--client", "claude"]);
      expect(hooksOf(box.claudeSettings).SessionStart).toBeDefined(); // control: it was written
      expect(ownerOf(box.claudeSettings)).toEqual({ uid: OTHER_UID, gid: OTHER_GID, mode: 0o640 });
      expect(ownerOf(`${box.claudeSettings}.velesdb-backup`)).toEqual({ uid: OTHER_UID, gid: OTHER_GID, mode: 0o640 });
      ok(["uninstall", "--client", "claude"]);
      expect(read(box.claudeSettings)).toBe(FOREIGN);
      expect(ownerOf(box.claudeSettings)).toEqual({ uid: OTHER_UID, gid: OTHER_GID, mode: 0o640 });
    },
  );

  testIf(IS_ROOT, "root")("a registry created in another user's directory belongs to that user", () => {
    fs.chownSync(path.join(box.home, ".codex"), OTHER_UID, OTHER_GID);
    ok(["install", "--client", "codex"]);
    expect(ownerOf(box.codexHooks)).toEqual({ uid: OTHER_UID, gid: OTHER_GID, mode: 0o600 });
  });

  testIf(IS_ROOT, "root")(
    "root installing into another user's home: our directory, the binary and the record of files belong to that user",
    () => {
      fs.chownSync(box.home, OTHER_UID, OTHER_GID);
      ok(["install", "--client", "codex"]);
      const tree = path.join(box.home, ".velesdb-hooks");
      for (const p of [tree, path.dirname(box.stableBinary), box.stableBinary, path.join(tree, "installed.json")]) {
        expect({ p, uid: ownerOf(p).uid, gid: ownerOf(p).gid }).toEqual({ p, uid: OTHER_UID, gid: OTHER_GID });
      }
      expect(ownerOf(box.stableBinary).mode).toBe(0o755);
    },
  );

  testIf(IS_ROOT, "root")(
    "run as a user who cannot give the file back to its owner: refused before any change, naming the owner",
    () => {
      // A world-writable registry of another uid in a directory the installing user owns: the
      // rename would succeed and the file would change hands, so only the owner check stops it.
      const runner = OTHER_UID;
      fs.chmodSync(box.root, 0o755);
      const bin = path.join(box.root, "bin");
      fs.mkdirSync(bin, { mode: 0o755 });
      const binary = path.join(bin, "velesdb-hooks");
      fs.linkSync(snapshotBinary(), binary);
      for (const dir of [box.home, path.join(box.home, ".claude"), path.join(box.home, ".codex")])
        fs.chownSync(dir, runner, runner);
      write(box.claudeSettings, FOREIGN, 0o666);
      fs.chownSync(box.claudeSettings, 4242, 4242);
      const asUser = (args: string[]) =>
        Bun.spawnSync(["setpriv", `--reuid=${runner}`, `--regid=${runner}`, "--clear-groups", binary, ...args], {
          env: box.env,
          cwd: box.home,
        });
      const before = treeDigest(box.home);
      const run = asUser(["install", "--client", "claude"]);
      expect(run.exitCode).toBe(1);
      expect(run.stderr.toString()).toMatch(/settings\.json is owned by uid 4242/);
      expect(treeDigest(box.home)).toBe(before);
      expect(ownerOf(box.claudeSettings).uid).toBe(4242);
      // Control: the user's own file installs.
      fs.chownSync(box.claudeSettings, runner, runner);
      expect(asUser(["install", "--client", "claude"]).exitCode).toBe(0);
      expect(hooksOf(box.claudeSettings).SessionStart).toBeDefined();
    },
  );
});

describe("3. duplicate keys are refused, never edited", () => {
  const CASES = [
    [
      "hooks twice",
      `{\n  "hooks": {},\n  "model": "x",\n  "hooks": {\n    "Stop": []\n  }\n}\n`,
      /"hooks" twice \(again on line 4\)/,
    ],
    [
      "an event twice",
      `{\n  "hooks": {\n    "Stop": [],\n    "PreToolUse": [],\n    "Stop": []\n  }\n}\n`,
      /"hooks\.Stop" twice \(again on line 5\)/,
    ],
  ] as const;
  test.each(CASES)(
    "%s: install, check and uninstall refuse; nothing changes, the binary stays",
    (_name, text, message) => {
      ok(["install", "--client", "codex"]);
      write(box.claudeSettings, text);
      const before = treeDigest(box.home);
      const install = box.run(["install", "--client", "claude"]);
      expect(install.exitCode).toBe(1);
      expect(install.stderr).toMatch(message);
      const check = box.run(["check", "--client", "claude"]);
      expect(check.exitCode).toBe(1);
      expect(check.stdout).toMatch(message);
      const uninstall = box.run(["uninstall"]);
      expect(uninstall.exitCode).toBe(1);
      expect(uninstall.stderr).toMatch(message);
      expect(treeDigest(box.home)).toBe(before);
      expect(fs.existsSync(box.stableBinary)).toBe(true);
    },
  );

  test("control: the same keys once each install", () => {
    write(box.claudeSettings, `{\n  "hooks": {\n    "Stop": [],\n    "PreToolUse": []\n  }\n}\n`);
    ok(["install", "--client", "claude"]);
  });
});

describe("4. the installer remembers every registry it wrote", () => {
  test("uninstall without --client cleans a custom dsh --config file too, then removes the binary", () => {
    const custom = path.join(box.root, "proj", "hooks.json");
    write(custom, FOREIGN);
    ok(["install", "--client", "dsh", "--config", custom]);
    ok(["install", "--client", "claude"]);
    ok(["uninstall"]);
    expect(read(custom)).toBe(FOREIGN);
    expect(fs.existsSync(box.stableBinary)).toBe(false);
  });

  test("entries of ours in Codex config.toml keep the binary, and the message names that file", () => {
    ok(["install", "--client", "claude"]);
    write(
      box.codexConfig,
      `[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "'${box.stableBinary}' codex stop"\n`,
    );
    const run = ok(["uninstall"]);
    expect(fs.existsSync(box.stableBinary)).toBe(true);
    expect(run.stdout).toContain(
      "binary: kept at ~/.velesdb-hooks/bin/velesdb-hooks (~/.codex/config.toml still uses it)",
    );
    // Control: without them, the binary goes.
    fs.rmSync(box.codexConfig);
    ok(["uninstall"]);
    expect(fs.existsSync(box.stableBinary)).toBe(false);
  });

  test("a registry of ours that uninstall was not asked about keeps the binary, and is named", () => {
    const custom = path.join(box.root, "proj", "hooks.json");
    ok(["install", "--client", "dsh", "--config", custom]);
    ok(["install", "--client", "claude"]);
    const run = ok(["uninstall", "--client", "claude"]);
    expect(run.stdout).toContain(`(${custom} still uses it)`);
    expect(fs.existsSync(box.stableBinary)).toBe(true);
  });
});

describe("4. the installer's record of files", () => {
  test("it names paths and keys only, and disappears with the last registry", () => {
    write(box.claudeSettings, `{\n  "token": "secret-value"\n}\n`);
    ok(["install", "--client", "claude"]);
    const record = read(path.join(box.home, ".velesdb-hooks", "installed.json"));
    expect(JSON.parse(record).files.map((f: { path: string }) => f.path)).toEqual([box.claudeSettings]);
    expect(record).not.toContain("secret-value");
    ok(["uninstall"]);
    expect(fs.existsSync(path.join(box.home, ".velesdb-hooks"))).toBe(false);
  });

  test("check and doctor without --client also look at a remembered dsh --config file", () => {
    const custom = path.join(box.root, "proj", "hooks.json");
    ok(["install", "--client", "dsh", "--config", custom]);
    expect(ok(["check"]).stdout).toContain(`dsh: entries in step (${custom})`);
    write(custom, read(custom).replace('"timeout": 10', '"timeout": 11'));
    const run = box.run(["check"]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain(`dsh: entries drifted (${custom})`);
    expect(run.stdout).toContain(`repair: velesdb-hooks install --client dsh --config '${custom}'`);
    expect(box.run(["doctor"]).stdout).toContain(`dsh:       entries drifted (${custom})`);
  });

  test("a record that cannot be read stops install and uninstall before any change, naming it", () => {
    ok(["install", "--client", "claude"]);
    write(path.join(box.home, ".velesdb-hooks", "installed.json"), "{ not json");
    const before = treeDigest(box.home);
    for (const command of ["install", "uninstall"]) {
      const run = box.run([command]);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain(
        "~/.velesdb-hooks/installed.json (velesdb-hooks' record of what it installed) is not valid JSON; move it aside",
      );
    }
    expect(treeDigest(box.home)).toBe(before);
    fs.rmSync(path.join(box.home, ".velesdb-hooks", "installed.json")); // control: without it, uninstall works
    ok(["uninstall"]);
  });
});

describe("6. a relative HOME is refused", () => {
  test.each([["install"], ["uninstall"], ["check"]])("%s", (command) => {
    const before = treeDigest(box.root);
    const run = box.run([command], { env: { HOME: "home" }, cwd: box.root });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("HOME is set to a relative path");
    expect(treeDigest(box.root)).toBe(before);
  });
  test("control: the same HOME, absolute, installs", () => {
    ok(["install"], { HOME: box.home });
  });
});

describe("18. a failed write is reported as such, and this run's earlier writes are undone", () => {
  test.each([
    ["an immutable registry", () => write(box.codexHooks, "{}\n"), () => box.codexHooks],
    ["an immutable directory", () => undefined, () => path.join(box.home, ".codex")],
  ])("%s", (_name, setUp, target) => {
    write(box.claudeSettings, FOREIGN);
    setUp();
    makeImmutable(target());
    const run = box.run(["install", "--client", "claude", "--client", "codex"]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/codex: could not write ~\/\.codex\/hooks\.json \(E[A-Z]+\)/);
    expect(run.stderr).toContain("claude: ~/.claude/settings.json restored");
    expect(run.stdout).not.toMatch(/codex: .*added/);
    expect(read(box.claudeSettings)).toBe(FOREIGN);
    expect(fs.existsSync(`${box.claudeSettings}.velesdb-backup`)).toBe(false);
    expect(fs.existsSync(box.stableBinary)).toBe(false);
  });

  test("control: without the immutable flag both are written and reported", () => {
    write(box.claudeSettings, FOREIGN);
    const run = ok(["install", "--client", "claude", "--client", "codex"]);
    expect(run.stdout).toMatch(/codex: ~\/\.codex\/hooks\.json: created \(mode 600\); added/);
  });
});

describe("19. uninstall removes only what install added", () => {
  test.each([
    ["an empty hooks object", `{\n  "hooks": {}\n}\n`],
    ["an empty event list", `{\n  "hooks": {\n    "PreToolUse": []\n  }\n}\n`],
    [
      "an empty event list among others",
      `{\n  "model": "x",\n  "hooks": {\n    "Stop": [],\n    "PreToolUse": []\n  },\n  "env": {}\n}\n`,
    ],
  ])("%s survives install then uninstall, byte for byte", (_name, text) => {
    write(box.claudeSettings, text);
    ok(["install", "--client", "claude"]);
    ok(["uninstall", "--client", "claude"]);
    expect(read(box.claudeSettings)).toBe(text);
  });

  test("a file install created and that holds nothing else is deleted by uninstall", () => {
    ok(["install", "--client", "claude", "--client", "codex"]);
    ok(["uninstall"]);
    expect(fs.existsSync(box.claudeSettings)).toBe(false);
    expect(fs.existsSync(box.codexHooks)).toBe(false);
  });

  test("control: a file install created and the user then added to is kept with the user's part", () => {
    ok(["install", "--client", "claude"]);
    const text = read(box.claudeSettings).replace("{\n", `{\n  "model": "opus",\n`);
    write(box.claudeSettings, text);
    ok(["uninstall", "--client", "claude"]);
    expect(parseJsonc(read(box.claudeSettings))).toEqual({ model: "opus" });
  });
});

describe("20. a stale entry of ours is replaced where it stands", () => {
  test("grouped: a Stop entry of ours between two foreign groups stays second", () => {
    const stale = { hooks: [{ type: "command", command: box.stableBinary, args: ["claude", "stop"], timeout: 99 }] };
    const first = { hooks: [{ type: "command", command: "echo first" }] };
    const last = { hooks: [{ type: "command", command: "echo last" }] };
    write(box.claudeSettings, JSON.stringify({ hooks: { Stop: [first, stale, last] } }, null, 2));
    const run = ok(["install", "--client", "claude"]);
    expect(run.stdout).toContain("Stop");
    const stop = hooksOf(box.claudeSettings).Stop!;
    expect(stop.map((g) => g.hooks[0]!.command)).toEqual(["echo first", box.stableBinary, "echo last"]);
    expect(stop[1]!.hooks[0]!.timeout).toBe(10);
  });

  test("flat (Windsurf): a stale handler of ours between two foreign ones stays second", () => {
    const command = `'${box.stableBinary}' windsurf pre-write-code`;
    write(
      box.windsurfHooks,
      JSON.stringify(
        {
          hooks: {
            pre_write_code: [{ command: "echo first" }, { command, show_output: true }, { command: "echo last" }],
          },
        },
        null,
        2,
      ),
    );
    ok(["install", "--client", "windsurf"]);
    const list = (parseJsonc(read(box.windsurfHooks)) as { hooks: Record<string, Array<Record<string, unknown>>> })
      .hooks.pre_write_code!;
    expect(list).toEqual([{ command: "echo first" }, { command, show_output: false }, { command: "echo last" }]);
  });
});

describe("21. the dominant indentation is used", () => {
  test("one tab-indented line in a two-space file: inserted lines use two spaces", () => {
    const text = `{\n  "model": "x",\n\t"env": {},\n  "permissions": {\n    "allow": []\n  }\n}\n`;
    write(box.claudeSettings, text);
    ok(["install", "--client", "claude"]);
    const added = read(box.claudeSettings)
      .split("\n")
      .filter((line) => line.includes("SessionStart") || line.includes('"matcher"'));
    expect(added.length).toBeGreaterThan(0);
    for (const line of added) expect(line).toMatch(/^ +\S/);
  });
});
