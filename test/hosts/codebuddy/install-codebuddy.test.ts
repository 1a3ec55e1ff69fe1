// The CodeBuddy Code client of the installer, through the compiled binary in a fake home:
// grouped Claude-shaped entries in ~/.codebuddy/settings.json beside the user's settings (JSONC
// kept), POSIX-quoted commands, timeouts in seconds, the edit-tool and velesdb-memory matchers
// and no Bash or PreCompact row; install twice changes no byte; uninstall gives the user's bytes
// back; $CODEBUDDY_CONFIG_DIR is honoured; `install --mcp` writes into the user-scope file
// CodeBuddy actually reads (the first that exists of three), never beside it.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeInstallSandbox, read, write, type InstallSandbox } from "../../support/install-sandbox.ts";

let box: InstallSandbox;
let server: string;
beforeEach(() => {
  box = makeInstallSandbox("codebuddy", { clients: ["codebuddy"], mcp: false });
  server = path.join(box.root, "bin", "velesdb-memory");
  write(server, "#!/bin/sh\nexit 0\n", 0o755);
});
afterEach(() => box.cleanup());

const dir = (): string => path.join(box.home, ".codebuddy");
const settings = (): string => path.join(dir(), "settings.json");
const USER = '{\n  // mine\n  "language": "English"\n}\n';
const ok = (args: string[], env: Record<string, string | undefined> = {}) => {
  const run = box.run(args, { env: { VELESDB_MEMORY_BIN: server, ...env } });
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};
const C = ["--client", "codebuddy"];
/** The entry install --mcp writes: the shared front, run by the stable binary (docs/shared-memory.md). */
const frontEntry = () => ({
  type: "stdio",
  command: path.join(box.home, ".velesdb-hooks", "bin", "velesdb-hooks"),
  args: ["mcp", "--server", server],
});

describe("codebuddy entries", () => {
  test("grouped handlers per event, POSIX-quoted, timeout in seconds, matchers on the tool events; the user's settings stay", () => {
    write(settings(), USER);
    ok(["install", ...C]);
    const parsed = Bun.JSONC.parse(read(settings())) as { language: string; hooks: Record<string, unknown> };
    expect(parsed.language).toBe("English");
    const handler = (event: string) => ({
      type: "command",
      command: `'${box.stableBinary}' codebuddy ${event}`,
      timeout: 10,
    });
    expect(parsed.hooks).toEqual({
      SessionStart: [{ hooks: [handler("session-start")] }],
      Stop: [{ hooks: [handler("stop")] }],
      PreToolUse: [{ matcher: "^(Write|Edit|MultiEdit|NotebookEdit)$", hooks: [handler("pre-tool-use")] }],
      PostToolUse: [{ matcher: "^mcp__velesdb[-_]memory__.+$", hooks: [handler("post-tool-use")] }],
    });
  });

  test("install twice changes no byte; uninstall gives the user's bytes back", () => {
    write(settings(), USER);
    ok(["install", ...C]);
    const installed = read(settings());
    ok(["install", ...C]);
    expect(read(settings())).toBe(installed);
    ok(["uninstall", ...C]);
    expect(read(settings())).toBe(USER);
  });

  test("CODEBUDDY_CONFIG_DIR is CodeBuddy's home, so install writes there; a relative one is refused", () => {
    const other = path.join(box.root, "cb-home");
    ok(["install", ...C], { CODEBUDDY_CONFIG_DIR: other });
    expect(fs.existsSync(path.join(other, "settings.json"))).toBe(true);
    expect(fs.existsSync(settings())).toBe(false);
    const relative = box.run(["install", ...C], { env: { CODEBUDDY_CONFIG_DIR: "rel" } });
    expect(relative.exitCode).toBe(1);
    expect(relative.stderr).toContain("CODEBUDDY_CONFIG_DIR");
  });

  test("install without --client picks CodeBuddy when ~/.codebuddy exists (control: not without it)", () => {
    fs.mkdirSync(dir(), { recursive: true });
    ok(["install"]);
    expect(fs.existsSync(settings())).toBe(true);
    ok(["uninstall"]);
    fs.rmSync(dir(), { recursive: true });
    expect(box.run(["install"]).exitCode).toBe(1);
    expect(fs.existsSync(settings())).toBe(false);
  });
});

describe("codebuddy MCP server", () => {
  const mine = '{\n  // mine\n  "mcpServers": { "other": { "type": "stdio", "command": "other-server" } }\n}\n';
  const serverIn = (file: string) =>
    (Bun.JSONC.parse(read(file)) as { mcpServers?: Record<string, unknown> }).mcpServers?.["velesdb-memory"];

  test("no user-scope file: install --mcp creates ~/.codebuddy/.mcp.json; check finds it; uninstall removes what it created", () => {
    fs.mkdirSync(dir(), { recursive: true });
    ok(["install", ...C, "--mcp"]);
    expect(serverIn(path.join(dir(), ".mcp.json"))).toEqual(frontEntry());
    expect(ok(["check", ...C]).stdout).toContain("codebuddy: MCP server velesdb-memory configured");
    const doctor = ok(["doctor", ...C]).stdout;
    expect(doctor).toContain("codebuddy");
    expect(doctor).toContain("MCP server velesdb-memory configured");
    ok(["uninstall", ...C]);
    expect(fs.existsSync(path.join(dir(), ".mcp.json"))).toBe(false);
  });

  test.each([
    ["~/.codebuddy/mcp.json", () => path.join(dir(), "mcp.json")],
    ["~/.codebuddy.json", () => path.join(box.home, ".codebuddy.json")],
  ])(
    "a user's %s is the file CodeBuddy reads: install --mcp adds to it, creates no .mcp.json that would hide it, and uninstall gives its bytes back",
    (_label, file) => {
      write(file(), mine);
      ok(["install", ...C, "--mcp"]);
      expect(fs.existsSync(path.join(dir(), ".mcp.json"))).toBe(false);
      expect(serverIn(file())).toEqual(frontEntry());
      ok(["uninstall", ...C]);
      expect(read(file())).toBe(mine);
    },
  );

  test("check reads only the first user-scope file, as CodeBuddy does: a server in a shadowed file is missing", () => {
    write(path.join(dir(), ".mcp.json"), '{"mcpServers":{}}\n');
    write(
      path.join(dir(), "mcp.json"),
      '{"mcpServers":{"velesdb-memory":{"type":"stdio","command":"/bin/sh","args":[]}}}\n',
    );
    ok(["install", ...C]);
    const shadowed = box.run(["check", ...C]);
    expect(shadowed.exitCode).toBe(1);
    expect(shadowed.stdout).toContain("codebuddy: MCP server velesdb-memory missing");
    // Control: with the empty .mcp.json gone, the same server is found.
    fs.rmSync(path.join(dir(), ".mcp.json"));
    expect(ok(["check", ...C]).stdout).toContain("codebuddy: MCP server velesdb-memory configured");
  });
});
