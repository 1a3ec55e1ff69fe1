// The Qwen Code client of the installer (src/install/clients/qwen.ts), through the compiled
// binary in a fake home: ~/.qwen/settings.json belongs to the user, so every test checks what
// must stay byte-identical, and each negative sits next to the positive control.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { qwen as qwenClient } from "../../../src/install/clients/qwen.ts";
import {
  makeInstallSandbox,
  modeOf,
  read,
  runSessionStartThroughBash,
  treeDigest,
  write,
  type InstallSandbox,
} from "../../support/install-sandbox.ts";

let box: InstallSandbox;
let settings: string;
beforeEach(() => {
  box = makeInstallSandbox("qwen", { clients: [] });
  fs.mkdirSync(path.join(box.home, ".qwen"));
  settings = path.join(box.home, ".qwen", "settings.json");
});
afterEach(() => box.cleanup());

const Q = ["--client", "qwen"];
const EVENTS = ["SessionStart", "Stop", "PreCompact", "PreToolUse", "PostToolUse"];
const ok = (args: string[], env?: Record<string, string | undefined>) => {
  const run = box.run(args, { env });
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};
type Group = { matcher?: string; hooks: Array<{ type: string; command: string; timeout: number }> };
const parsed = (): { $version?: number; hooks: Record<string, Group[]> } => parseJsonc(read(settings));

// A user's file as Qwen itself writes it (2-space indent, "$version" last), with a hook of theirs.
const USER_SETTINGS = `{
  "security": {
    "auth": {
      "selectedType": "openai"
    }
  },
  "mcpServers": {
    "velesdb-memory": {
      "command": "/bin/sh"
    }
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "^run_shell_command$",
        "hooks": [
          {
            "type": "command",
            "command": "python3 ~/bin/audit.py",
            "timeout": 5
          }
        ]
      }
    ]
  },
  "$version": 4
}
`;

describe("entries", () => {
  test("a new settings.json: $version 4, five events, the quoted stable binary, millisecond timeouts ≥ 1000", () => {
    ok(["install", ...Q]);
    const file = parsed();
    expect(file.$version).toBe(4);
    expect(Object.keys(file.hooks)).toEqual(EVENTS);
    const argv = ["session-start", "stop", "pre-compact", "pre-tool-use", "post-tool-use"];
    EVENTS.forEach((event, i) => {
      const [group] = file.hooks[event]!;
      expect(group!.hooks).toEqual([
        { type: "command", command: `'${box.stableBinary}' qwen ${argv[i]}`, timeout: 10000 },
      ]);
    });
    expect(file.hooks.PreToolUse![0]!.matcher).toBe("^(edit|write_file|notebook_edit)$");
    expect(new RegExp(file.hooks.PostToolUse![0]!.matcher!).test("mcp__velesdb-memory__recall_fused")).toBe(true);
    expect(new RegExp(file.hooks.PostToolUse![0]!.matcher!).test("mcp__velesdb-memory__save_working_context")).toBe(
      false,
    );
    expect(modeOf(settings)).toBe(0o600);
  });

  test("a HOME with spaces, quotes and $: the written command, run by bash -c as Qwen does, gives a real answer", () => {
    box.cleanup();
    box = makeInstallSandbox("qwen-awkward", { homeName: `it's a "home" with $HOME and \`tick\``, clients: [] });
    fs.mkdirSync(path.join(box.home, ".qwen"));
    settings = path.join(box.home, ".qwen", "settings.json");
    ok(["install", ...Q]);
    const command = parsed().hooks.SessionStart![0]!.hooks[0]!.command;
    const run = runSessionStartThroughBash(box, command);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('load_working_context(project=\\"atlas\\", session=\\"main/s1\\")');
    // Control: the same path without the quoting does not even start the binary.
    const unquoted = runSessionStartThroughBash(box, `${box.stableBinary} qwen session-start`);
    expect(unquoted.stdout).not.toContain("load_working_context");
  });
});

test("Windows: PowerShell runs the command (Qwen's `shell` field), the path double-quoted with PowerShell's escapes", () => {
  const row = qwenClient.registry.rows.find((r) => r.argvEvent === "stop")!;
  expect(qwenClient.registry.handler(row, "C:\\Users\\o'neil\\velesdb-hooks.exe", "win32")).toEqual({
    type: "command",
    command: '& "C:\\Users\\o\'neil\\velesdb-hooks.exe" qwen stop',
    shell: "powershell",
    timeout: 10000,
  });
  // Control: elsewhere bash runs it, with no shell field.
  expect(qwenClient.registry.handler(row, "/home/o'neil/velesdb-hooks", "linux")).toEqual({
    type: "command",
    command: `'/home/o'\\''neil/velesdb-hooks' qwen stop`,
    timeout: 10000,
  });
});

describe("the user's file", () => {
  test("install keeps their hook beside ours; uninstall gives back the exact bytes and mode", () => {
    write(settings, USER_SETTINGS, 0o640);
    ok(["install", ...Q]);
    const file = parsed();
    expect(file.hooks.PreToolUse!.map((g) => g.hooks[0]!.command)).toEqual([
      "python3 ~/bin/audit.py",
      `'${box.stableBinary}' qwen pre-tool-use`,
    ]);
    expect(read(settings)).toContain('"$version": 4');
    expect(modeOf(settings)).toBe(0o640);
    ok(["uninstall", ...Q]);
    expect(read(settings)).toBe(USER_SETTINGS);
    expect(modeOf(settings)).toBe(0o640);
  });

  test("installing twice changes no byte anywhere in the home; check says in step", () => {
    write(settings, USER_SETTINGS);
    ok(["install"]);
    const before = treeDigest(box.home);
    const second = ok(["install"]);
    expect(second.stdout).toContain("qwen: ~/.qwen/settings.json is already in step");
    expect(treeDigest(box.home)).toBe(before);
    expect(box.run(["check", ...Q]).exitCode).toBe(0);
  });

  test("after Qwen rewrites the file its own way, install sees the same entries and changes nothing", () => {
    ok(["install", ...Q]);
    // Qwen reformats settings on its first run (measured on 0.24.4): same data, other bytes.
    const data = JSON.parse(read(settings));
    // With the user's velesdb-memory server (without one, check fails: docs/mcp-server.md).
    const rewritten = `${JSON.stringify({ ...data, mcpServers: { "velesdb-memory": { command: "/bin/sh" } }, general: { checkpointing: false } }, null, 2)}\n`;
    write(settings, rewritten, 0o600);
    ok(["install", ...Q]);
    expect(read(settings)).toBe(rewritten);
    expect(box.run(["check", ...Q]).exitCode).toBe(0);
  });

  test("a file we created, holding only its skeleton again, is removed by uninstall", () => {
    ok(["install", ...Q]);
    ok(["uninstall", ...Q]);
    expect(fs.existsSync(settings)).toBe(false);
  });
});

describe("detection", () => {
  test("`install` with no --client includes qwen when ~/.qwen exists, and leaves it alone when it does not", () => {
    ok(["install"]);
    expect(fs.existsSync(settings)).toBe(true);
    box.cleanup();
    box = makeInstallSandbox("qwen-absent", { clients: ["claude"] });
    ok(["install"]);
    expect(fs.existsSync(path.join(box.home, ".qwen"))).toBe(false);
    expect(fs.existsSync(box.claudeSettings)).toBe(true); // control: the run did install something
  });

  test("QWEN_HOME moves the registry; a relative QWEN_HOME is refused", () => {
    const elsewhere = path.join(box.root, "qwen-home");
    fs.mkdirSync(elsewhere);
    ok(["install", ...Q], { QWEN_HOME: elsewhere });
    expect(fs.existsSync(path.join(elsewhere, "settings.json"))).toBe(true);
    expect(fs.existsSync(settings)).toBe(false);
    const relative = box.run(["install", ...Q], { env: { QWEN_HOME: "rel/qwen" } });
    expect(relative.exitCode).not.toBe(0);
  });
});
