// The Gemini CLI client of the installer (src/install/clients/gemini.ts), through the compiled
// binary in a fake home: ~/.gemini/settings.json entries with millisecond timeouts and a
// shell-quoted command, idempotence judged on parsed entries (Gemini rewrites the file
// itself), the user's bytes back after uninstall, and the loud warning when the registered
// binary is gone (Gemini would then deny every write_file and replace).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { gemini } from "../../../src/install/clients/gemini.ts";
import { ownershipOf } from "../../../src/install/entries/entries.ts";
import { powershellCallProgram } from "../../../src/install/entries/shell-words.ts";
import {
  makeInstallSandbox,
  modeOf,
  read,
  runSessionStartThroughBash,
  write,
  type InstallSandbox,
} from "../../support/install-sandbox.ts";

let box: InstallSandbox;
let settings: string;
beforeEach(() => {
  box = makeInstallSandbox("gemini", { clients: ["gemini"] });
  settings = path.join(box.home, ".gemini", "settings.json");
});
afterEach(() => box.cleanup());

const G = ["--client", "gemini"];
const EVENTS = ["SessionStart", "AfterAgent", "BeforeTool", "AfterTool"];
const ARGV: Record<string, string> = {
  SessionStart: "session-start",
  AfterAgent: "after-agent",
  BeforeTool: "before-tool",
  AfterTool: "after-tool",
};

const ok = (args: string[], env?: Record<string, string | undefined>) => {
  const run = box.run(args, { env });
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};
type Group = { matcher?: string; hooks: Array<Record<string, unknown>> };
const hooksOf = (): Record<string, Group[]> => (parseJsonc(read(settings)) as { hooks?: never }).hooks ?? {};

// A user's file as people write them: a comment, their own keys, a foreign hook under an event
// we use, and their velesdb-memory MCP server (without one, check fails: docs/mcp-server.md).
const USER_SETTINGS = `{
  // my settings
  "model": { "name": "gemini-2.5-pro" },
  "mcpServers": { "velesdb-memory": { "command": "/bin/sh" } },
  "hooks": {
    "BeforeTool": [
      { "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "echo audit", "timeout": 500 }] }
    ]
  }
}
`;

describe("entries", () => {
  test("one group per event: anchored matchers, timeouts in milliseconds, the stable path POSIX-quoted", () => {
    ok(["install", ...G]);
    const hooks = hooksOf();
    expect(Object.keys(hooks)).toEqual(EVENTS);
    for (const event of EVENTS) {
      expect(hooks[event]).toHaveLength(1);
      expect(hooks[event]![0]!.hooks).toEqual([
        {
          type: "command",
          name: `velesdb-hooks ${ARGV[event]}`,
          command: `'${box.stableBinary}' gemini ${ARGV[event]}`,
          timeout: 10_000,
        },
      ]);
    }
    expect(hooks.BeforeTool![0]!.matcher).toBe("^(write_file|replace)$");
    expect(hooks.AfterTool![0]!.matcher).toBe(
      "^mcp_velesdb[-_]memory_(recall|recall_fused|recall_where|compile_context|entity|why)$",
    );
    expect(hooks.SessionStart![0]!.matcher).toBeUndefined();
    expect(modeOf(settings)).toBe(0o600);
  });

  test.each([
    ["mcp_velesdb-memory_recall_fused", true],
    ["mcp_velesdb_memory_why", true],
    ["mcp_velesdb-memory_save_working_context", false],
    ["mcp_other_recall", false],
  ])("the AfterTool matcher on %s: %p", (tool, matches) => {
    ok(["install", ...G]);
    expect(new RegExp(hooksOf().AfterTool![0]!.matcher!).test(tool)).toBe(matches);
  });

  test("a HOME with spaces, quotes and $: the command, run by bash -c as Gemini does, answers; unquoted it does not", () => {
    box.cleanup();
    box = makeInstallSandbox("gemini-awkward", {
      homeName: `it's a "home" with $HOME and \`tick\``,
      clients: ["gemini"],
    });
    settings = path.join(box.home, ".gemini", "settings.json");
    ok(["install", ...G]);
    const command = String(hooksOf().SessionStart![0]!.hooks[0]!.command);
    const run = runSessionStartThroughBash(box, command);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('load_working_context(project=\\"atlas\\", session=\\"main/s1\\")');
    const unquoted = runSessionStartThroughBash(box, `${box.stableBinary} gemini session-start`);
    expect(unquoted.exitCode).not.toBe(0);
  });

  test("Windows: PowerShell's call operator on a single-quoted path, recognised as ours", () => {
    const exe = "C:\\Users\\it's me\\.velesdb-hooks\\bin\\velesdb-hooks.exe";
    const handler = gemini.registry.handler(
      { wireEvent: "AfterAgent", argvEvent: "after-agent", timeout: 10 },
      exe,
      "win32",
    );
    expect(handler.command).toBe("& 'C:\\Users\\it''s me\\.velesdb-hooks\\bin\\velesdb-hooks.exe' gemini after-agent");
    expect(powershellCallProgram(String(handler.command))).toBe(exe);
    expect(ownershipOf(handler, exe)).toBe("ours");
    // Control: the same call of another program is not ours.
    expect(ownershipOf({ ...handler, command: "& 'C:\\other.exe' gemini after-agent" }, exe)).toBe("foreign");
  });

  test("GEMINI_CLI_HOME moves the settings like it moves Gemini's home; a relative value is refused", () => {
    const other = path.join(box.root, "gemini-home");
    fs.mkdirSync(path.join(other, ".gemini"), { recursive: true });
    ok(["install", ...G], { GEMINI_CLI_HOME: other });
    expect(fs.existsSync(path.join(other, ".gemini", "settings.json"))).toBe(true);
    expect(fs.existsSync(settings)).toBe(false);
    const refused = box.run(["install", ...G], { env: { GEMINI_CLI_HOME: "rel/dir" } });
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain("GEMINI_CLI_HOME");
  });
});

describe("the user's file", () => {
  test("install twice: no byte changes; uninstall: the user's file back byte for byte", () => {
    write(settings, USER_SETTINGS);
    ok(["install", ...G]);
    const once = read(settings);
    expect(once).toContain("// my settings");
    expect(hooksOf().BeforeTool!.map((g) => g.matcher)).toEqual(["run_shell_command", "^(write_file|replace)$"]);
    ok(["install", ...G]);
    expect(read(settings)).toBe(once);
    ok(["uninstall", ...G]);
    expect(read(settings)).toBe(USER_SETTINGS);
  });

  test("after Gemini rewrote the file (re-indented, keys reordered), check is in step and install changes nothing", () => {
    write(settings, USER_SETTINGS);
    ok(["install", ...G]);
    // What Gemini's own settings migration writes: plain JSON, 2-space indent, its key order.
    const parsed = parseJsonc(read(settings)) as Record<string, unknown>;
    const rewritten = `${JSON.stringify({ hooks: parsed.hooks, mcpServers: parsed.mcpServers, model: parsed.model, general: { previewFeatures: false } }, null, 2)}\n`;
    write(settings, rewritten, 0o600);
    expect(ok(["check", ...G]).stdout).toContain("gemini: entries in step");
    expect(ok(["install", ...G]).stdout).toContain("already in step");
    expect(read(settings)).toBe(rewritten);
    // Control: an entry whose timeout was changed to seconds is drift.
    write(settings, rewritten.replace('"timeout": 10000', '"timeout": 10'), 0o600);
    const drifted = box.run(["check", ...G]);
    expect(drifted.exitCode).toBe(1);
    expect(drifted.stdout).toMatch(/gemini: entries drifted/);
  });
});

describe("a missing binary", () => {
  const WARNING =
    /gemini:\s+WARNING: the registered binary .* is missing or not executable, and Gemini CLI DENIES every write_file and replace/;

  test("check and doctor say loudly that Gemini would deny every edit; positive control: with the binary, no warning", () => {
    write(settings, USER_SETTINGS);
    ok(["install", ...G]);
    expect(ok(["check", ...G]).stdout).not.toMatch(WARNING);
    fs.rmSync(box.stableBinary);
    const check = box.run(["check", ...G]);
    expect(check.exitCode).toBe(1);
    expect(check.stdout).toMatch(WARNING);
    expect(box.run(["doctor", ...G]).stdout).toMatch(WARNING);
    // install puts it back, and the warning goes.
    ok(["install", ...G]);
    expect(ok(["check", ...G]).stdout).not.toMatch(WARNING);
  });

  test("what the warning is about: Gemini's shell answers a missing program with exit 127 (a deny), our binary never exits above 1", () => {
    const missing = Bun.spawnSync(
      ["bash", "-c", `'${path.join(box.root, "nowhere", "velesdb-hooks")}' gemini before-tool`],
      { stdin: Buffer.from("{}") },
    );
    expect(missing.exitCode).toBe(127);
    ok(["install", ...G]);
    const present = Bun.spawnSync(["bash", "-c", `'${box.stableBinary}' gemini before-tool`], {
      stdin: Buffer.from("{}"),
      env: box.env,
    });
    expect(present.exitCode).toBe(0);
  });
});

test("hooksConfig.enabled false and hooksConfig.disabled naming ours are reported; positive control: without them, silence", () => {
  write(settings, USER_SETTINGS);
  ok(["install", ...G]);
  expect(ok(["check", ...G]).stdout).not.toContain("hooksConfig");
  const text = read(settings).replace(
    '"model"',
    '"hooksConfig": { "enabled": false, "disabled": ["velesdb-hooks before-tool"] },\n  "model"',
  );
  write(settings, text, 0o600);
  const check = box.run(["check", ...G]).stdout;
  expect(check).toContain("hooksConfig.enabled is false");
  expect(check).toContain("hooksConfig.disabled skips velesdb-hooks before-tool");
});

test("install without --client includes Gemini when ~/.gemini exists, and leaves it alone when it does not", () => {
  ok(["install"]);
  expect(Object.keys(hooksOf())).toEqual(EVENTS);
  box.cleanup();
  box = makeInstallSandbox("gemini-absent", { clients: ["claude"] });
  settings = path.join(box.home, ".gemini", "settings.json");
  ok(["install"]);
  expect(fs.existsSync(path.join(box.home, ".gemini"))).toBe(false);
  expect(fs.existsSync(box.claudeSettings)).toBe(true);
});
