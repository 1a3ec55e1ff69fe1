// The installer end to end (docs/contract.md §9), through the compiled binary in a fake home with real
// files and permissions. What users complain about in hook installers — other hooks clobbered
// or duplicated, hooks that silently never fire, drift nobody notices — each has a row here,
// and each negative sits next to the positive control that proves the same setup works.
import { POST_TOOL_USE_TIMEOUT_S } from "./support/host-descriptors.ts";
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { BASH_REFERENCE_SETTINGS, CLAUDE_FIXTURES, PLANTED_SECRET } from "./support/install-fixtures.ts";
import { expectUsageError } from "./support/hook-runner.ts";
import {
  makeInstallSandbox,
  modeOf,
  read,
  treeDigest,
  USER_MCP_FILES,
  USER_MCP_TOML,
  write,
  type InstallSandbox,
} from "./support/install-sandbox.ts";

let box: InstallSandbox;
beforeEach(() => {
  box = makeInstallSandbox("install");
});
afterEach(() => box.cleanup());

const CLAUDE_EVENTS = ["SessionStart", "Stop", "PreCompact", "PreToolUse", "PostToolUse"];
const CODEX_EVENTS = ["SessionStart", "Stop", "PreToolUse", "PostToolUse"];

const ok = (args: string[], env?: Record<string, string | undefined>) => {
  const run = box.run(args, { env });
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};
const hooksOf = (file: string): Record<string, Array<{ matcher?: string; hooks: Array<Record<string, unknown>> }>> =>
  (parseJsonc(read(file)) as { hooks?: never }).hooks ?? {};
const commandsOf = (file: string): string[] =>
  Object.values(hooksOf(file)).flatMap((groups) =>
    groups.flatMap((group) => group.hooks.map((h) => String(h.command))),
  );

describe("merge: everything that is not ours stays byte-identical", () => {
  test.each(CLAUDE_FIXTURES.map((f) => [f.name, f] as const))("%s", (_name, fixture) => {
    write(box.claudeSettings, fixture.text);
    // Reference: the fixture with only our (legacy) entries taken out.
    ok(["uninstall", "--client", "claude"]);
    const withoutOurs = read(box.claudeSettings);
    if (!fixture.hasOurs) expect(withoutOurs).toBe(fixture.text); // positive control: nothing of ours, nothing changed
    write(box.claudeSettings, fixture.text);

    ok(["install", "--client", "claude"]);
    const installed = read(box.claudeSettings);
    for (const piece of fixture.foreign) expect(installed).toContain(piece);
    expect(commandsOf(box.claudeSettings).filter((c) => c.includes("velesdb-memory/"))).toEqual([]);
    expect(box.run(["check", "--client", "claude"]).exitCode).toBe(0);

    ok(["uninstall", "--client", "claude"]);
    expect(read(box.claudeSettings)).toBe(withoutOurs);
  });

  test("a foreign hook in the same group as an old velesdb entry keeps its group", () => {
    write(box.claudeSettings, CLAUDE_FIXTURES[0]!.text);
    ok(["install", "--client", "claude"]);
    const stop = hooksOf(box.claudeSettings).Stop!;
    expect(stop[0]!.hooks).toEqual([{ type: "command", command: "say done" }]);
    expect(stop[1]!.hooks[0]).toEqual({
      type: "command",
      command: box.stableBinary,
      args: ["claude", "stop"],
      timeout: 10,
    });
  });
});

describe("entries", () => {
  test("Claude: exec form with matchers and timeouts, one per event", () => {
    ok(["install", "--client", "claude"]);
    const hooks = hooksOf(box.claudeSettings);
    expect(Object.keys(hooks)).toEqual(CLAUDE_EVENTS);
    expect(hooks.PreToolUse).toEqual([
      {
        matcher: "^(Edit|Write|NotebookEdit)$",
        hooks: [{ type: "command", command: box.stableBinary, args: ["claude", "pre-tool-use"], timeout: 10 }],
      },
    ]);
    expect(hooks.PostToolUse![0]!.matcher).toBe("^(Bash|mcp__(plugin_[^_]+_)?velesdb[-_]memory__.+)$");
    expect(hooks.PostToolUse![0]!.hooks[0]!.timeout).toBe(30);
    // The timeout compression keeps its deadline inside (test/compress-deadline.test.ts).
    expect(hooks.PostToolUse![0]!.hooks[0]!.timeout).toBe(POST_TOOL_USE_TIMEOUT_S.claude);
    expect(hooks.SessionStart![0]!.matcher).toBeUndefined();
  });

  test("Codex: POSIX-quoted command, timeout, statusMessage; no commandWindows off Windows", () => {
    ok(["install", "--client", "codex"]);
    const hooks = hooksOf(box.codexHooks);
    expect(Object.keys(hooks)).toEqual(CODEX_EVENTS);
    const pre = hooks.PreToolUse![0]!;
    expect(pre.matcher).toBe("^(apply_patch|Edit|Write)$");
    expect(pre.hooks[0]).toEqual({
      type: "command",
      command: `'${box.stableBinary}' codex pre-tool-use`,
      timeout: 10,
      statusMessage: "velesdb-memory: checking recall before this edit",
    });
    expect(hooks.PostToolUse![0]!.matcher).toBe(
      "^(Bash|mcp__velesdb[-_]memory__(recall|recall_fused|recall_where|compile_context|entity|why))$",
    );
    expect(hooks.PostToolUse![0]!.hooks[0]!.timeout).toBe(POST_TOOL_USE_TIMEOUT_S.codex);
  });

  test("the binary lands at its stable path, executable and identical to the running one", () => {
    ok(["install", "--client", "claude"]);
    expect(fs.lstatSync(box.stableBinary).isFile()).toBe(true);
    expect(modeOf(box.stableBinary)).toBe(0o755);
    const version = Bun.spawnSync([box.stableBinary, "--version"]).stdout.toString();
    expect(version).toMatch(/^velesdb-hooks \d/);
  });

  test("VELESDB_HOOKS_HOME moves the binary, and the entries follow it", () => {
    const elsewhere = path.join(box.root, "tools");
    ok(["install", "--client", "claude"], { VELESDB_HOOKS_HOME: elsewhere });
    expect(commandsOf(box.claudeSettings)).toEqual(
      CLAUDE_EVENTS.map(() => path.join(elsewhere, "bin", "velesdb-hooks")),
    );
    expect(fs.existsSync(box.stableBinary)).toBe(false);
  });
});

describe("bash reference entries and idempotence", () => {
  test("installing over the bash hooks replaces them, in place", () => {
    write(box.claudeSettings, BASH_REFERENCE_SETTINGS);
    const run = ok(["install", "--client", "claude"]);
    expect(run.stdout).toContain("Stop (bash hooks)");
    expect(commandsOf(box.claudeSettings)).toEqual(CLAUDE_EVENTS.map(() => box.stableBinary));
    expect(Object.keys(hooksOf(box.claudeSettings))).toEqual(CLAUDE_EVENTS);
  });

  test("a Codex bash entry (.codex/hooks/velesdb-memory/) is replaced too, a look-alike is not", () => {
    const legacy = { type: "command", command: "bash '/home/u/.codex/hooks/velesdb-memory/stop.sh'" };
    const lookalike = { type: "command", command: "bash '/home/u/velesdb-memory/stop.sh'" };
    write(box.codexHooks, JSON.stringify({ hooks: { Stop: [{ hooks: [legacy, lookalike] }] } }, null, 2));
    ok(["install", "--client", "codex"]);
    const stop = hooksOf(box.codexHooks).Stop!;
    expect(stop[0]!.hooks).toEqual([lookalike]);
    expect(stop[1]!.hooks[0]!.command).toBe(`'${box.stableBinary}' codex stop`);
  });

  test("installing twice changes no byte anywhere in the home", () => {
    write(box.claudeSettings, CLAUDE_FIXTURES[0]!.text);
    ok(["install"]);
    const before = treeDigest(box.home);
    const second = ok(["install"]);
    expect(treeDigest(box.home)).toBe(before);
    expect(second.stdout).toContain("already in step");
  });

  test("uninstall then install returns to the same bytes", () => {
    write(box.claudeSettings, CLAUDE_FIXTURES[0]!.text);
    ok(["install"]);
    const claude = read(box.claudeSettings);
    const codex = read(box.codexHooks);
    ok(["uninstall"]);
    ok(["install"]);
    expect(read(box.claudeSettings)).toBe(claude);
    expect(read(box.codexHooks)).toBe(codex);
  });

  test("uninstall removes ours only and leaves no empty hooks scaffolding", () => {
    ok(["install"]);
    expect(read(box.claudeSettings)).toContain('"hooks"');
    ok(["uninstall"]);
    // Install created both files and they hold nothing else: they go (docs/decisions.md#installer).
    expect(fs.existsSync(box.claudeSettings)).toBe(false);
    expect(fs.existsSync(box.codexHooks)).toBe(false);
    expect(fs.existsSync(box.stableBinary)).toBe(false);

    // Control: with a foreign hook, the hooks object and that event stay; our events go.
    write(
      box.claudeSettings,
      JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: "echo bye" }] }] } }, null, 2),
    );
    ok(["install"]);
    ok(["uninstall"]);
    expect(Object.keys(hooksOf(box.claudeSettings))).toEqual(["Stop"]);
    expect(hooksOf(box.claudeSettings).Stop).toEqual([{ hooks: [{ type: "command", command: "echo bye" }] }]);
  });

  test("uninstall of one client keeps the binary the other still uses", () => {
    ok(["install"]);
    const run = ok(["uninstall", "--client", "codex"]);
    expect(run.stdout).toContain("kept");
    expect(fs.existsSync(box.stableBinary)).toBe(true);
    ok(["uninstall", "--client", "claude"]);
    expect(fs.existsSync(box.stableBinary)).toBe(false);
  });
});

describe("file modes and backups", () => {
  test("an absent registry is created 0600", () => {
    fs.rmSync(path.join(box.home, ".codex"), { recursive: true });
    ok(["install", "--client", "codex"]);
    expect(modeOf(box.codexHooks)).toBe(0o600);
    expect(fs.existsSync(`${box.codexHooks}.velesdb-backup`)).toBe(false);
  });

  test.each([0o644, 0o640, 0o600])(
    "an existing mode %o is kept, and the backup (same mode) holds the bytes from before",
    (mode) => {
      write(box.claudeSettings, CLAUDE_FIXTURES[0]!.text, mode);
      ok(["install", "--client", "claude"]);
      expect(modeOf(box.claudeSettings)).toBe(mode);
      expect(read(`${box.claudeSettings}.velesdb-backup`)).toBe(CLAUDE_FIXTURES[0]!.text);
      // The backup holds what the file held, so it gets what the file had (docs/decisions.md#installer).
      expect(modeOf(`${box.claudeSettings}.velesdb-backup`)).toBe(mode);
    },
  );

  test("a symlink at the backup name is replaced, not followed", () => {
    const victim = path.join(box.root, "victim.txt");
    write(victim, "do not overwrite\n");
    write(box.claudeSettings, "{}\n");
    fs.symlinkSync(victim, `${box.claudeSettings}.velesdb-backup`);
    ok(["install", "--client", "claude"]);
    expect(read(victim)).toBe("do not overwrite\n");
    expect(fs.lstatSync(`${box.claudeSettings}.velesdb-backup`).isSymbolicLink()).toBe(false);
  });
});

describe("symlinked registries", () => {
  test("a link to a real file: the target is updated and the link stays a link", () => {
    const target = path.join(box.root, "dotfiles", "claude-settings.json");
    write(target, '{ "model": "opus" }\n', 0o640);
    fs.symlinkSync(target, box.claudeSettings);
    ok(["install", "--client", "claude"]);
    expect(fs.lstatSync(box.claudeSettings).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(box.claudeSettings)).toBe(target);
    expect(Object.keys(hooksOf(target))).toEqual(CLAUDE_EVENTS);
    expect(modeOf(target)).toBe(0o640);
  });

  type Setup = (b: InstallSandbox) => void;
  const EVERY_COMMAND = [["install"], ["uninstall"], ["install", "--dry-run"]];
  const REFUSED: ReadonlyArray<readonly [string, Setup, RegExp, string[][]?]> = [
    [
      "a broken link",
      (b) => fs.symlinkSync(path.join(b.root, "missing.json"), b.claudeSettings),
      /symlink to a file that does not exist/,
    ],
    ["a directory", (b) => fs.mkdirSync(b.claudeSettings), /is a directory/],
    ["a link to a directory", (b) => fs.symlinkSync(b.root, b.claudeSettings), /symlink to a directory/],
    [
      "a link into our own tree",
      (b) => {
        write(path.join(b.home, ".velesdb-hooks", "settings.json"), "{}\n");
        fs.symlinkSync(path.join(b.home, ".velesdb-hooks", "settings.json"), b.claudeSettings);
      },
      /velesdb-hooks' own directory/,
    ],
    [
      "a file that does not parse",
      (b) => write(b.claudeSettings, '{\n  "hooks": {\n    "Stop": [\n'),
      /does not parse: line \d+, column \d+/,
    ],
    ["a JSON array", (b) => write(b.claudeSettings, "[]\n"), /is not a JSON object/],
    [
      "hooks that is not an object",
      (b) => write(b.claudeSettings, '{"hooks": []}\n'),
      /"hooks" value that is not an object/,
    ],
    // Uninstall has nothing of ours to take out of it, so only install refuses.
    [
      "an event that is not a list",
      (b) => write(b.claudeSettings, '{"hooks": {"Stop": {}}}\n'),
      /"hooks.Stop" value that is not a list/,
      [["install"], ["install", "--dry-run"]],
    ],
  ];

  test.each(REFUSED)("refused before any change: %s", (_name, setup, reason, commands = EVERY_COMMAND) => {
    setup(box);
    const before = treeDigest(box.root);
    for (const command of commands) {
      const run = box.run(command);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toMatch(reason);
      expect(run.stderr).toContain("nothing was changed");
      expect(treeDigest(box.root)).toBe(before); // binary not placed, codex not written either
    }
    expect(fs.existsSync(box.stableBinary)).toBe(false);
    expect(fs.existsSync(box.codexHooks)).toBe(false);
    // Control: the same home without the problem installs.
    fs.rmSync(box.claudeSettings, { recursive: true, force: true });
    ok(["install"]);
    expect(fs.existsSync(box.stableBinary)).toBe(true);
  });

  test("a blocked stable binary path (a symlink) is refused before any registry is written", () => {
    fs.mkdirSync(path.dirname(box.stableBinary), { recursive: true });
    fs.symlinkSync("/bin/true", box.stableBinary);
    const run = box.run(["install"]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("is a symlink");
    expect(fs.existsSync(box.claudeSettings)).toBe(false);
    fs.rmSync(box.stableBinary);
    ok(["install"]);
  });
});

describe("--dry-run", () => {
  test.each([
    [
      "install on a home with bash entries",
      () => write(box.claudeSettings, BASH_REFERENCE_SETTINGS),
      ["install", "--dry-run"],
      /would remove SessionStart \(bash hooks\)/,
    ],
    ["install on an empty home", () => {}, ["install", "--dry-run"], /would create it \(mode 600\)/],
    ["uninstall after install", () => ok(["install"]), ["uninstall", "--dry-run"], /would remove .*SessionStart/],
  ] as const)("%s writes nothing and lists what it would do", (_name, setup, args, listed) => {
    setup();
    const before = treeDigest(box.home);
    const run = ok([...args]);
    expect(treeDigest(box.home)).toBe(before);
    expect(run.stdout).toContain("dry run: nothing is written");
    expect(run.stdout).toMatch(listed);
    // Control: the same command without --dry-run does change the home.
    ok(args.filter((a) => a !== "--dry-run"));
    expect(treeDigest(box.home)).not.toBe(before);
  });
});

describe("check", () => {
  test("absent → exit 0, or 1 with --strict (with the command that installs)", () => {
    const plain = box.run(["check"]);
    expect(plain.exitCode).toBe(0);
    expect(plain.stdout).toContain("claude: entries absent");
    expect(plain.stdout).toContain("claude: binary absent");
    const strict = box.run(["check", "--strict"]);
    expect(strict.exitCode).toBe(1);
    expect(strict.stdout).toContain("repair: velesdb-hooks install --client claude");
  });

  test("in step → exit 0, also with --strict", () => {
    ok(["install"]);
    const run = box.run(["check", "--strict"]);
    expect(run.exitCode).toBe(0);
    for (const line of [
      "claude: entries in step",
      "claude: binary in step",
      "codex: entries in step",
      "codex: binary in step",
    ]) {
      expect(run.stdout).toContain(line);
    }
  });

  type Drift = (b: InstallSandbox) => void;
  const edit = (file: string, change: (hooks: Record<string, any>) => void) => {
    const value = JSON.parse(read(file));
    change(value.hooks);
    write(file, JSON.stringify(value, null, 2));
  };
  const DRIFTS: ReadonlyArray<readonly [string, Drift, RegExp]> = [
    [
      "a changed timeout",
      (b) => edit(b.claudeSettings, (h) => (h.Stop[0].hooks[0].timeout = 99)),
      /claude: entries drifted .*Stop differs/,
    ],
    ["a removed event", (b) => edit(b.claudeSettings, (h) => delete h.PreCompact), /PreCompact missing/],
    [
      "a changed matcher",
      (b) => edit(b.codexHooks, (h) => (h.PreToolUse[0].matcher = "Edit")),
      /codex: entries drifted .*PreToolUse differs/,
    ],
    ["a duplicate", (b) => edit(b.claudeSettings, (h) => h.Stop.push(h.Stop[0])), /Stop registered more than once/],
    [
      "a bash entry left behind",
      (b) =>
        edit(
          b.claudeSettings,
          (h) => (h.Stop[0].hooks[0] = { type: "command", command: "bash '/x/.claude/hooks/velesdb-memory/stop.sh'" }),
        ),
      /Stop still runs the bash hooks/,
    ],
    [
      "an owned entry under an unexpected event",
      (b) =>
        edit(
          b.claudeSettings,
          (h) =>
            (h.UserPromptSubmit = [
              { hooks: [{ type: "command", command: b.stableBinary, args: ["claude", "stop"] }] },
            ]),
        ),
      /UserPromptSubmit holds an entry of ours \(not an event velesdb-hooks uses\)/,
    ],
    ["the binary removed", (b) => fs.rmSync(b.stableBinary), /claude: binary absent/],
    [
      "the binary replaced",
      (b) => write(b.stableBinary, "#!/bin/sh\n", 0o755),
      /binary drifted: differs from this velesdb-hooks/,
    ],
    [
      "our entry also in Codex config.toml",
      (b) =>
        write(
          b.codexConfig,
          `[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "'${b.stableBinary}' codex stop"\n`,
        ),
      /velesdb-hooks entries also in ~\/\.codex\/config\.toml \[hooks\] \(Stop\)/,
    ],
  ];

  test.each(DRIFTS)("drifted → exit 1 with a repair: %s", (_name, drift, reported) => {
    ok(["install"]);
    expect(box.run(["check"]).exitCode).toBe(0); // control: in step before the change
    drift(box);
    const run = box.run(["check"]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(reported);
    expect(run.stdout).toMatch(/^repair: /m);
  });

  test("install repairs every registry drift it owns", () => {
    ok(["install"]);
    edit(box.claudeSettings, (h) => {
      h.Stop[0].hooks[0].timeout = 99;
      h.UserPromptSubmit = [{ hooks: [{ type: "command", command: box.stableBinary, args: ["claude", "stop"] }] }];
    });
    ok(["install"]);
    expect(box.run(["check"]).exitCode).toBe(0);
    expect(Object.keys(hooksOf(box.claudeSettings))).not.toContain("UserPromptSubmit");
  });

  test("a registry that cannot be read is drift, named with its problem", () => {
    write(box.claudeSettings, "{ not json");
    const run = box.run(["check", "--client", "claude"]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(/claude: entries cannot be checked: ~\/\.claude\/settings\.json does not parse/);
  });
});

describe("awkward home directories", () => {
  test("a HOME with spaces, quotes and $ gives commands that run as one literal path", () => {
    box.cleanup();
    box = makeInstallSandbox("awkward", { homeName: `it's a "home" with $HOME and \`tick\`` });
    ok(["install"]);
    const command = String(hooksOf(box.codexHooks).SessionStart![0]!.hooks[0]!.command);
    const payload = JSON.stringify({
      hook_event_name: "SessionStart",
      session_id: "s1",
      cwd: box.home,
      source: "startup",
    });
    const run = Bun.spawnSync(["sh", "-c", command], { stdin: Buffer.from(payload), env: box.env, cwd: box.home });
    expect(run.exitCode).toBe(0);
    const answer = JSON.parse(run.stdout.toString());
    expect(answer.hookSpecificOutput.hookEventName).toBe("SessionStart");
    // Claude's exec form needs no quoting: the command is the path itself.
    const claude = hooksOf(box.claudeSettings).Stop![0]!.hooks[0]!;
    expect(claude.command).toBe(box.stableBinary);
    expect(fs.existsSync(String(claude.command))).toBe(true);
    expect(box.run(["check", "--strict"]).exitCode).toBe(0);
  });
});

describe("the registry content never appears in any output", () => {
  test("install, dry run, check, doctor, uninstall and refusals stay silent about it", () => {
    const settings = `{\n  "env": { "ANTHROPIC_API_KEY": "${PLANTED_SECRET}" },\n  ${BASH_REFERENCE_SETTINGS.slice(1)}`;
    write(box.claudeSettings, settings);
    write(box.codexConfig, `[mcp_servers.x]\nenv = { TOKEN = "${PLANTED_SECRET}" }\n`);
    const outputs: string[] = [];
    for (const args of [
      ["install", "--dry-run"],
      ["install"],
      ["check"],
      ["doctor"],
      ["uninstall", "--dry-run"],
      ["uninstall"],
    ]) {
      const run = box.run(args);
      outputs.push(run.stdout, run.stderr);
    }
    // Refusals: a parse error right next to the secret, in JSON and in TOML.
    write(box.claudeSettings, `{ "env": { "KEY": "${PLANTED_SECRET}" } "hooks": {} }`);
    write(box.codexConfig, `token = "${PLANTED_SECRET}"\n[hooks\n`);
    for (const args of [["install"], ["check"], ["doctor"]]) {
      const run = box.run(args);
      outputs.push(run.stdout, run.stderr);
    }
    const all = outputs.join("\n");
    expect(all).toContain("does not parse"); // control: the refusals did happen
    expect(all).not.toContain(PLANTED_SECRET);
    expect(all).not.toContain("PLANTED");
  });
});

describe("environment", () => {
  test("CLAUDE_CONFIG_DIR and CODEX_HOME are honoured", () => {
    const claudeDir = path.join(box.root, "cfg", "claude");
    const codexDir = path.join(box.root, "cfg", "codex");
    fs.mkdirSync(claudeDir, { recursive: true });
    fs.mkdirSync(codexDir, { recursive: true });
    const env = { CLAUDE_CONFIG_DIR: claudeDir, CODEX_HOME: codexDir };
    // The user's MCP servers where each agent reads them under these variables (docs/mcp-server.md).
    fs.writeFileSync(path.join(claudeDir, ".claude.json"), USER_MCP_FILES.claude![1]);
    fs.writeFileSync(path.join(codexDir, "config.toml"), USER_MCP_TOML);
    ok(["install"], env);
    expect(Object.keys(hooksOf(path.join(claudeDir, "settings.json")))).toEqual(CLAUDE_EVENTS);
    expect(Object.keys(hooksOf(path.join(codexDir, "hooks.json")))).toEqual(CODEX_EVENTS);
    expect(fs.existsSync(box.claudeSettings)).toBe(false);
    expect(fs.existsSync(box.codexHooks)).toBe(false);
    expect(box.run(["check", "--strict"], { env }).exitCode).toBe(0);
  });

  test("a relative CODEX_HOME is refused with nothing changed", () => {
    const before = treeDigest(box.root);
    const run = box.run(["install"], { env: { CODEX_HOME: "rel/codex" } });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("CODEX_HOME is set to a relative path");
    expect(treeDigest(box.root)).toBe(before);
    ok(["install"], { CODEX_HOME: path.join(box.home, ".codex") }); // control
  });

  test("install without --client acts on the agents present; none present is an error", () => {
    fs.rmSync(path.join(box.home, ".codex"), { recursive: true });
    const run = ok(["install"]);
    expect(run.stdout).toContain("claude:");
    expect(run.stdout).not.toContain("codex:");
    expect(fs.existsSync(path.join(box.home, ".codex"))).toBe(false);
    fs.rmSync(path.join(box.home, ".claude"), { recursive: true });
    const none = box.run(["install"]);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain("no supported agent found");
  });

  test.each([
    [["install", "--strict"], /install does not take "--strict"/],
    [["check", "--dry-run"], /check does not take "--dry-run"/],
    [["install", "--client"], /--client needs a value/],
    [["install", "--config", "x.json"], /use it with --client dsh/],
    [["install", "--client", "vim"], /unknown client "vim"/],
  ])("usage error %j → exit 64, one stderr line, nothing on stdout", (args, message) => {
    expectUsageError(box.run(args), message);
  });
});

describe("Codex trust", () => {
  test("install and uninstall point at our entries in config.toml, which they never edit", () => {
    const toml = `[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "'${box.stableBinary}' codex stop"\n`;
    write(box.codexConfig, toml);
    for (const command of ["install", "uninstall"]) {
      const run = ok([command, "--client", "codex"]);
      expect(run.stdout).toContain("config.toml [hooks] also holds velesdb-hooks entries (Stop)");
      expect(read(box.codexConfig)).toBe(toml);
    }
  });

  test("install says that Codex skips the new entries until they are trusted in /hooks, and writes no approval", () => {
    const run = ok(["install", "--client", "codex"]);
    expect(run.stdout).toMatch(
      /Codex will skip SessionStart, Stop, PreToolUse, PostToolUse until you trust them: .*open \/hooks/,
    );
    expect(read(box.codexConfig)).toBe(USER_MCP_TOML); // the sandbox's MCP server only: no approval
  });
});
