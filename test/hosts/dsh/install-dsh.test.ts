// The DeepSeek harness client of the installer (docs/contract.md §4.4, §9), through the compiled binary in
// a fake home: a Codex-format hooks.json at the path the user chooses (--config, default
// ~/.dsh/velesdb-hooks.json) and the plugin row printed for the harness config. The bridge
// itself runs these entries in test/hosts/dsh/dsh-bridge.e2e.test.ts; here: the file, its merge,
// its check, and the commands run the way the bridge runs them (`bash -c`).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { PLANTED_SECRET } from "../../support/install-fixtures.ts";
import { expectUsageError } from "../../support/hook-runner.ts";
import {
  makeInstallSandbox,
  modeOf,
  read,
  treeDigest,
  write,
  type InstallSandbox,
} from "../../support/install-sandbox.ts";

let box: InstallSandbox;
beforeEach(() => {
  box = makeInstallSandbox("dsh", { clients: ["dsh"] });
});
afterEach(() => box.cleanup());

const EVENTS = ["SessionStart", "Stop", "PreToolUse", "PostToolUse"];
const D = ["--client", "dsh"];
const PLUGIN = "@deepseek-ai/dsh-hooks-codex";

const ok = (args: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}) => {
  const run = box.run(args, options);
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};
type Group = { matcher?: string; hooks: Array<Record<string, unknown>> };
const hooksOf = (file: string): Record<string, Group[]> => (parseJsonc(read(file)) as { hooks?: never }).hooks ?? {};

/** pluginRow(stdout) → the YAML list the install printed, parsed (it must be valid YAML). */
function pluginRow(stdout: string): Array<{ name: string; config: { configPath: string; model: string } }> {
  const lines = stdout.split("\n");
  const start = lines.findIndex((l) => l.includes("cordis.patch.yml"));
  expect(start).toBeGreaterThanOrEqual(0);
  const yaml = lines
    .slice(start + 1, start + 5)
    .map((l) => l.slice(2))
    .join("\n");
  return Bun.YAML.parse(yaml) as never;
}

/** A Codex-format file with comments and a foreign hook sharing our events. */
const FOREIGN = `{
  // my harness hooks
  "hooks": {
    "PreToolUse": [
      { "matcher": "^bash$", "hooks": [ { "type": "command", "command": "~/bin/deny-rm.sh", "timeout": 5 } ] }
    ],
    "UserPromptSubmit": [ { "hooks": [ { "type": "command", "command": "echo hi" } ] } ]
  }
}
`;

describe("entries and the plugin row", () => {
  test("default file ~/.dsh/velesdb-hooks.json: Codex format, bridge matchers, timeouts, POSIX-quoted commands", () => {
    const run = ok(["install", ...D]);
    const hooks = hooksOf(box.dshHooks);
    expect(Object.keys(hooks)).toEqual(EVENTS);
    expect(hooks.PreToolUse).toEqual([
      {
        matcher: "^(edit|write|str_replace_editor)$",
        hooks: [{ type: "command", command: `'${box.stableBinary}' dsh pre-tool-use`, timeout: 10 }],
      },
    ]);
    expect(hooks.PostToolUse![0]!.matcher).toBe(
      "^mcp__velesdb[-_]memory__(recall|recall_fused|recall_where|compile_context|entity|why)$",
    );
    expect(hooks.SessionStart).toEqual([
      { hooks: [{ type: "command", command: `'${box.stableBinary}' dsh session-start`, timeout: 10 }] },
    ]);
    expect(hooks.Stop![0]!.matcher).toBeUndefined();
    expect(modeOf(box.dshHooks)).toBe(0o600);
    expect(pluginRow(run.stdout)).toEqual([
      { name: PLUGIN, config: { configPath: box.dshHooks, model: "deepseek-v4" } },
    ]);
  });

  test("a relative --config is resolved against the cwd, and the row names the absolute path", () => {
    const project = path.join(box.root, "project");
    fs.mkdirSync(project);
    const run = ok(["install", ...D, "--config", ".codex/hooks.json"], { cwd: project });
    const absolute = path.join(project, ".codex", "hooks.json");
    expect(Object.keys(hooksOf(absolute))).toEqual(EVENTS);
    expect(fs.existsSync(box.dshHooks)).toBe(false);
    expect(pluginRow(run.stdout)[0]!.config.configPath).toBe(absolute);
    // The same relative path from elsewhere is another file: check from there does not see it.
    expect(box.run(["check", ...D, "--config", ".codex/hooks.json", "--strict"], { cwd: project }).exitCode).toBe(0);
    expect(box.run(["check", ...D, "--config", ".codex/hooks.json", "--strict"], { cwd: box.root }).exitCode).toBe(1);
  });

  test("a config path with spaces, quotes and $ is printed as YAML that reads back exactly", () => {
    const awkward = path.join(box.root, `it's "odd" $HOME #1`, "hooks.json");
    const run = ok(["install", ...D, "--config", awkward]);
    expect(pluginRow(run.stdout)[0]!.config.configPath).toBe(awkward);
    expect(fs.existsSync(awkward)).toBe(true);
  });

  test("a HOME with spaces, quotes and $: the written command, run as the bridge runs it, gives a real answer", () => {
    box.cleanup();
    box = makeInstallSandbox("dsh-awkward", { homeName: `it's a "home" with $HOME and \`tick\``, clients: ["dsh"] });
    ok(["install", ...D]);
    const command = String(hooksOf(box.dshHooks).SessionStart![0]!.hooks[0]!.command);
    const workspace = path.join(box.root, "ws");
    write(path.join(workspace, ".velesdb-hooks.json"), JSON.stringify({ project: "atlas", session: "main" }));
    const payload = JSON.stringify({
      hook_event_name: "SessionStart",
      session_id: "s1",
      cwd: workspace,
      source: "startup",
      model: "deepseek-v4",
    });
    for (const shell of ["sh", "bash"]) {
      const run = Bun.spawnSync([shell, "-c", command], { stdin: Buffer.from(payload), env: box.env, cwd: workspace });
      expect(run.exitCode).toBe(0);
      const answer = JSON.parse(run.stdout.toString());
      expect(answer.hookSpecificOutput.hookEventName).toBe("SessionStart");
      expect(answer.hookSpecificOutput.additionalContext).toContain(
        'load_working_context(project="atlas", session="main/',
      );
    }
    // Control: the same path without the quoting does not run our binary.
    const unquoted = Bun.spawnSync(["sh", "-c", `${box.stableBinary} dsh session-start`], {
      stdin: Buffer.from(payload),
      env: box.env,
      cwd: workspace,
    });
    expect(unquoted.exitCode).not.toBe(0);
    expect(box.run(["check", "--strict", ...D]).exitCode).toBe(0);
  });
});

describe("merge, idempotence, uninstall", () => {
  test("foreign hooks and comments stay byte-identical; uninstall gives back the original bytes", () => {
    write(box.dshHooks, FOREIGN, 0o644);
    ok(["uninstall", ...D]);
    expect(read(box.dshHooks)).toBe(FOREIGN); // control: nothing of ours, nothing changed
    ok(["install", ...D]);
    const installed = read(box.dshHooks);
    for (const piece of [
      "// my harness hooks",
      `{ "matcher": "^bash$", "hooks": [ { "type": "command", "command": "~/bin/deny-rm.sh", "timeout": 5 } ] }`,
      `"UserPromptSubmit": [ { "hooks": [ { "type": "command", "command": "echo hi" } ] } ]`,
    ]) {
      expect(installed).toContain(piece);
    }
    expect(hooksOf(box.dshHooks).PreToolUse).toHaveLength(2);
    expect(modeOf(box.dshHooks)).toBe(0o644);
    expect(read(`${box.dshHooks}.velesdb-backup`)).toBe(FOREIGN);
    ok(["uninstall", ...D]);
    expect(read(box.dshHooks)).toBe(FOREIGN);
  });

  test("installing twice changes no byte in the home; uninstall then install gives the same bytes", () => {
    write(box.dshHooks, FOREIGN);
    ok(["install", ...D]);
    const before = treeDigest(box.home);
    const text = read(box.dshHooks);
    expect(ok(["install", ...D]).stdout).toContain("is already in step");
    expect(treeDigest(box.home)).toBe(before);
    ok(["uninstall", ...D]);
    ok(["install", ...D]);
    expect(read(box.dshHooks)).toBe(text);
  });

  test("uninstall --config removes our entries from that file only, and the binary once nothing uses it", () => {
    box.cleanup();
    box = makeInstallSandbox("dsh-shared", { clients: ["dsh", "claude"] });
    const custom = path.join(box.root, "proj", "hooks.json");
    ok(["install", ...D, "--config", custom]);
    ok(["install"]); // claude and the default dsh file
    expect(ok(["uninstall", ...D, "--config", custom]).stdout).toContain("kept");
    expect(fs.existsSync(custom)).toBe(false); // install created it and it held nothing else (docs/decisions.md#installer)
    expect(Object.keys(hooksOf(box.dshHooks))).toEqual(EVENTS); // the default file is another registry
    ok(["uninstall"]);
    expect(fs.existsSync(box.stableBinary)).toBe(false);
  });

  test("Codex's own hooks.json is refused as the dsh file before anything changes; another file installs", () => {
    const codexHooks = path.join(box.home, ".codex", "hooks.json");
    write(codexHooks, "{}\n");
    const before = treeDigest(box.root);
    const run = box.run(["install", ...D, "--config", codexHooks]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("is Codex's own hooks.json");
    expect(treeDigest(box.root)).toBe(before);
    ok(["install", ...D, "--config", path.join(box.home, ".codex", "dsh-hooks.json")]);
  });
});

describe("symlinks and refusals", () => {
  test("a linked config is written at its target; the link stays a link", () => {
    const target = path.join(box.root, "dotfiles", "dsh-hooks.json");
    write(target, FOREIGN, 0o640);
    fs.symlinkSync(target, box.dshHooks);
    ok(["install", ...D]);
    expect(fs.lstatSync(box.dshHooks).isSymbolicLink()).toBe(true);
    expect(Object.keys(hooksOf(target))).toEqual([
      "PreToolUse",
      "UserPromptSubmit",
      "SessionStart",
      "Stop",
      "PostToolUse",
    ]);
    expect(modeOf(target)).toBe(0o640);
    ok(["uninstall", ...D]);
    expect(read(target)).toBe(FOREIGN);
  });

  test.each([
    [
      "a broken link",
      (b: InstallSandbox) => fs.symlinkSync(path.join(b.root, "missing.json"), b.dshHooks),
      /symlink to a file that does not exist/,
    ],
    [
      "a file that does not parse",
      (b: InstallSandbox) => write(b.dshHooks, '{ "hooks": { "Stop": [ '),
      /does not parse: line \d+, column \d+/,
    ],
    ["a directory", (b: InstallSandbox) => fs.mkdirSync(b.dshHooks), /is a directory/],
  ])("refused before any change: %s", (_name, setup, reason) => {
    setup(box);
    const before = treeDigest(box.root);
    for (const args of [
      ["install", ...D],
      ["uninstall", ...D],
      ["install", "--dry-run", ...D],
    ]) {
      const run = box.run(args);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toMatch(reason);
      expect(run.stderr).toContain("nothing was changed");
      expect(treeDigest(box.root)).toBe(before);
    }
    fs.rmSync(box.dshHooks, { recursive: true, force: true });
    ok(["install", ...D]); // control
  });
});

describe("--dry-run", () => {
  test.each([
    [
      "install on an empty home",
      () => {},
      ["install", "--dry-run", ...D],
      /would create it \(mode 600\)[\s\S]*configPath: /,
    ],
    [
      "install into an existing file",
      () => write(box.dshHooks, FOREIGN),
      ["install", "--dry-run", ...D],
      /would add SessionStart, Stop, PreToolUse, PostToolUse/,
    ],
    [
      "uninstall after install",
      () => ok(["install", ...D]),
      ["uninstall", "--dry-run", ...D],
      /would remove SessionStart, Stop, PreToolUse, PostToolUse/,
    ],
  ] as const)("%s writes nothing and lists what it would do", (_name, setup, args, listed) => {
    setup();
    const before = treeDigest(box.root);
    const run = ok([...args]);
    expect(treeDigest(box.root)).toBe(before);
    expect(run.stdout).toContain("dry run: nothing is written");
    expect(run.stdout).toMatch(listed);
    ok(args.filter((a) => a !== "--dry-run")); // control
    expect(treeDigest(box.root)).not.toBe(before);
  });
});

describe("check and doctor", () => {
  test("absent → exit 0, or 1 with --strict and the install command", () => {
    expect(box.run(["check", ...D]).stdout).toContain("dsh: entries absent (~/.dsh/velesdb-hooks.json, no such file)");
    expect(box.run(["check", ...D]).exitCode).toBe(0);
    const strict = box.run(["check", "--strict", ...D]);
    expect(strict.exitCode).toBe(1);
    expect(strict.stdout).toContain("repair: velesdb-hooks install --client dsh\n");
  });

  test("in step at a custom path only when check is told that path", () => {
    const custom = path.join(box.root, "proj", "hooks.json");
    ok(["install", ...D, "--config", custom]);
    const told = box.run(["check", "--strict", ...D, "--config", custom]);
    expect(told.exitCode).toBe(0);
    expect(told.stdout).toContain(`dsh: entries in step (${custom})`);
    const untold = box.run(["check", "--strict", ...D]);
    expect(untold.exitCode).toBe(1);
    expect(untold.stdout).toContain("dsh: entries absent (~/.dsh/velesdb-hooks.json");
  });

  const edit = (file: string, change: (hooks: Record<string, any>) => void) => {
    const value = JSON.parse(read(file));
    change(value.hooks);
    write(file, JSON.stringify(value, null, 2));
  };
  test.each([
    [
      "a changed matcher",
      (f: string) => edit(f, (h) => (h.PreToolUse[0].matcher = "^(edit|write)$")),
      /dsh: entries drifted .*PreToolUse differs/,
    ],
    ["a removed event", (f: string) => edit(f, (h) => delete h.Stop), /Stop missing/],
    [
      "a changed timeout",
      (f: string) => edit(f, (h) => (h.SessionStart[0].hooks[0].timeout = 600)),
      /SessionStart differs/,
    ],
  ])("drifted → exit 1 with a repair naming the same --config: %s", (_name, drift, reported) => {
    const custom = path.join(box.root, "my hooks.json");
    ok(["install", ...D, "--config", custom]);
    expect(box.run(["check", ...D, "--config", custom]).exitCode).toBe(0); // control
    drift(custom);
    const run = box.run(["check", ...D, "--config", custom]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(reported);
    expect(run.stdout).toContain(`repair: velesdb-hooks install --client dsh --config '${custom}'`);
    ok(["install", ...D, "--config", custom]);
    expect(box.run(["check", ...D, "--config", custom]).exitCode).toBe(0);
  });

  test("doctor shows each entry's state for the file --config names", () => {
    const custom = path.join(box.root, "proj", "hooks.json");
    ok(["install", ...D, "--config", custom]);
    edit(custom, (h) => (h.Stop[0].hooks[0].timeout = 99));
    const screen = ok(["doctor", ...D, "--config", custom]).stdout;
    expect(screen).toContain(`dsh:       entries drifted (${custom}): Stop differs`);
    expect(screen).toContain("dsh:         SessionStart in step");
    expect(screen).toContain("dsh:         Stop differs from what install writes");
  });
});

describe("detection and usage", () => {
  test("install without --client picks dsh when ~/.dsh exists, and not otherwise", () => {
    expect(ok(["install"]).stdout).toContain("dsh:");
    expect(fs.existsSync(box.dshHooks)).toBe(true);
    box.cleanup();
    box = makeInstallSandbox("dsh-none", { clients: ["claude"] });
    expect(ok(["install"]).stdout).not.toContain("dsh:");
    expect(fs.existsSync(path.join(box.home, ".dsh"))).toBe(false);
  });

  test.each([
    [["install", "--config", "x.json"], /use it with --client dsh/],
    [["check", "--client", "claude", "--config", "x.json"], /use it with --client dsh/],
    [["install", "--client", "dsh", "--config"], /--config needs the path/],
    [["install", "--client", "dsh", "--config="], /--config needs the path/],
    [["install", "--client", "dsh", "--strict"], /install does not take "--strict"/],
  ])("usage error %j → exit 64, one stderr line, nothing on stdout", (args, message) => {
    expectUsageError(box.run(args), message);
  });

  test("--config=PATH and --client all are accepted forms", () => {
    const custom = path.join(box.root, "eq.json");
    ok(["install", "--client", "all", `--config=${custom}`]);
    expect(Object.keys(hooksOf(custom))).toEqual(EVENTS);
  });
});

describe("the file's content never appears in any output", () => {
  test("install, dry run, check, doctor, uninstall and a refusal stay silent about it", () => {
    write(box.dshHooks, `{ "env": { "DEEPSEEK_API_KEY": "${PLANTED_SECRET}" }, "hooks": {} }\n`);
    const outputs: string[] = [];
    for (const args of [
      ["install", "--dry-run"],
      ["install"],
      ["check"],
      ["doctor"],
      ["uninstall", "--dry-run"],
      ["uninstall"],
    ]) {
      const run = box.run([...args, ...D]);
      outputs.push(run.stdout, run.stderr);
    }
    write(box.dshHooks, `{ "key": "${PLANTED_SECRET}" "hooks": {} }`);
    for (const args of [["install"], ["check"], ["doctor"]]) {
      const run = box.run([...args, ...D]);
      outputs.push(run.stdout, run.stderr);
    }
    const all = outputs.join("\n");
    expect(all).toContain("does not parse"); // control: the refusal did happen
    expect(all).not.toContain(PLANTED_SECRET);
    expect(all).not.toContain("PLANTED");
  });
});
