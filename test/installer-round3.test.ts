// Installer defects of the third trial from outside (docs/hardening.md §9 and the three "seen, not
// yet checks" on the MCP URL and on check's advice), each through the compiled binary in a fake
// home, each next to the control that proves the setup works. Decisions: docs/hardening.md.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeInstallSandbox, read, treeDigest, write, type InstallSandbox } from "./support/install-sandbox.ts";

let box: InstallSandbox;
let server: string;
beforeEach(() => {
  box = makeInstallSandbox("round3", { clients: ["claude", "codex", "gemini"], mcp: false });
  server = path.join(box.root, "bin", "velesdb-memory");
  write(server, "#!/bin/sh\nexit 0\n", 0o755);
});
afterEach(() => box.cleanup());

const PASSWORD = "PW-d0ntprint";
const TOKEN = "T-d0ntprint";
const SECRET_URL = `https://user:${PASSWORD}@127.0.0.1:18090/mcp?token=${TOKEN}`;

describe("9. usage errors never print URL credentials or query tokens", () => {
  const SPELLINGS: ReadonlyArray<readonly string[]> = [
    [`--mcp-url=${SECRET_URL}`],
    ["--mcp-url", SECRET_URL],
    [SECRET_URL],
    [`--client=${SECRET_URL}`],
    ["--client", SECRET_URL],
    [`--config=${SECRET_URL}`],
  ];
  for (const command of ["check", "doctor", "uninstall", "install"]) {
    test.each(SPELLINGS.map((s) => [s.join(" "), s] as const))(
      `${command} %s: no password, no token (a usage error: exit 64, one line)`,
      (_label, args) => {
        const run = box.run([command, ...args]);
        const said = run.stdout + run.stderr;
        // install takes --mcp-url: with it, the URL is accepted (not a usage error) and shown without its secrets.
        if (command !== "install" || !args[0]!.startsWith("--mcp-url")) {
          expect(run.exitCode).toBe(64);
          expect(run.stderr.trim().split("\n")).toHaveLength(1);
        }
        expect(said).not.toContain(PASSWORD);
        expect(said).not.toContain(TOKEN);
      },
    );
  }
  test("control: the usage error still names the option it refuses, and a plain argument as given", () => {
    const run = box.run(["check", `--mcp-url=${SECRET_URL}`]);
    expect(run.stderr).toContain('check does not take "--mcp-url=…" (value not shown)');
    expect(box.run(["check", "--colour"]).stderr).toContain('check does not take "--colour"');
    expect(box.run(["check", "--client", "claud"]).stderr).toContain('unknown client "claud"');
  });
});

describe("--mcp-url: plain HTTP only on loopback, and no control character ever reaches a file", () => {
  const install = (url: string) =>
    box.run(["install", "--client", "claude", "--client", "codex", "--client", "gemini", "--mcp-url", url]);
  test.each(["http://10.1.2.3/mcp", "http://memory.example/mcp", "http://127.0.0.2:18090/mcp", "http://[::2]/mcp"])(
    "%s: refused in one line naming https and loopback, nothing changed",
    (url) => {
      const before = treeDigest(box.root);
      const run = install(url);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toContain("plain http:// is accepted only to this machine (127.0.0.1, localhost, [::1])");
      expect(run.stderr).toContain("use https://");
      expect(treeDigest(box.root)).toBe(before);
    },
  );
  test.each([
    "http://127.0.0.1:18090/mcp",
    "http://localhost:18090/mcp",
    "http://[::1]:18090/mcp",
    "https://10.1.2.3/mcp",
  ])("control: %s is registered", (url) => {
    const run = install(url);
    expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(read(path.join(box.home, ".claude.json"))).toContain(JSON.stringify(url));
    expect(read(path.join(box.home, ".codex", "config.toml"))).toContain(`url = ${JSON.stringify(url)}`);
  });
  const CONTROLS: ReadonlyArray<readonly [string, string]> = [
    ["a newline", "https://127.0.0.1:18090/mcp\nx = 1"],
    ["a carriage return", "https://127.0.0.1:18090/\rmcp"],
    ["a tab", "https://127.0.0.1:18090/m\tcp"],
    ["a DEL", "https://127.0.0.1:18090/mcp\u007f"],
    ["an ESC", "https://127.0.0.1:18090/\u001b[2Jmcp"],
    ["a C1 control", "https://127.0.0.1:18090/mcp\u0085"],
    ["a line separator", "https://127.0.0.1:18090/mcp\u2028"],
    ["a space", "https://127.0.0.1:18090/m cp"],
  ];
  test.each(CONTROLS)(
    "a URL holding %s: refused in one line saying so, nothing written, the character never printed",
    (_label, url) => {
      const before = treeDigest(box.root);
      for (const args of [["--mcp-url", url], [`--mcp-url=${url}`]]) {
        const run = box.run(["install", "--client", "claude", "--client", "codex", ...args]);
        expect(run.exitCode).toBe(1);
        expect(run.stderr).toContain("--mcp-url holds a space, a line break or another control character");
        expect(
          run.stderr
            .trim()
            .split("\n")
            .every((line) => !/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\t\r]/.test(line)),
        ).toBe(true);
        expect(treeDigest(box.root)).toBe(before);
      }
    },
  );
});

describe("check's advice when ~/.claude.json does not parse", () => {
  test("it says to fix (or move aside) that file, naming where it fails; not `install --mcp`, which refuses for the same reason", () => {
    expect(box.run(["install", "--client", "claude"]).exitCode).toBe(0);
    const claudeJson = path.join(box.home, ".claude.json");
    write(claudeJson, '{\n  "mcpServers": {\n');
    const check = box.run(["check", "--client", "claude"]);
    expect(check.exitCode).toBe(1);
    const repairs = check.stdout.split("\n").filter((line) => line.startsWith("repair: "));
    expect(repairs).toEqual([
      expect.stringContaining("repair: fix ~/.claude.json (it does not parse: line 3, column 1"),
    ]);
    expect(repairs[0]).toContain("or move it aside, then velesdb-hooks install --client claude --mcp");
    expect(check.stdout).not.toContain("missing (looked in");
    // Control: the advice works — with the file fixed, install --mcp adds the server and check is in step.
    write(claudeJson, '{\n  "mcpServers": {}\n}\n');
    expect(box.run(["install", "--client", "claude", "--mcp"], { env: { VELESDB_MEMORY_BIN: server } }).exitCode).toBe(
      0,
    );
    expect(box.run(["check", "--client", "claude"]).exitCode).toBe(0);
  });
  test("control: a readable ~/.claude.json without our server still gets the install --mcp advice", () => {
    expect(box.run(["install", "--client", "claude"]).exitCode).toBe(0);
    write(path.join(box.home, ".claude.json"), "{}\n");
    const check = box.run(["check", "--client", "claude"]);
    expect(check.stdout).toContain("repair: velesdb-hooks install --client claude --mcp");
    expect(fs.existsSync(path.join(box.home, ".claude.json"))).toBe(true);
  });
});
