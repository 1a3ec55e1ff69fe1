// The velesdb-memory MCP server of every client (docs/mcp-server.md, src/install/server/), through the
// compiled binary in a fake home: check fails on hooks without a server, install --mcp /
// --mcp-url add one where each agent reads it, a second install changes nothing, uninstall
// takes out only ours (the user's other servers byte for byte), a user's own entry is never
// replaced, and hostile files are refused with nothing changed.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { PLANTED_SECRET } from "./support/install-fixtures.ts";
import { makeInstallSandbox, modeOf, read, treeDigest, write, type InstallSandbox } from "./support/install-sandbox.ts";
import { IS_ROOT, testIf } from "./support/requires.ts";

let box: InstallSandbox;
let server: string; // a stand-in velesdb-memory: an executable file
beforeEach(() => {
  box = makeInstallSandbox("mcp", {
    clients: [
      "claude",
      "codex",
      "windsurf",
      "dsh",
      "gemini",
      "copilot",
      "opencode",
      "droid",
      "kilo",
      "codebuddy",
      "pi",
    ],
    mcp: false,
  });
  fs.mkdirSync(path.join(box.home, ".qwen"));
  server = path.join(box.root, "bin", "velesdb-memory");
  write(server, "#!/bin/sh\nexit 0\n", 0o755);
});
afterEach(() => box.cleanup());

/** The stable binary every entry runs: the shared front (src/mcp/front.ts). */
const front = (): string => path.join(box.home, ".velesdb-hooks", "bin", "velesdb-hooks");
const withBin = (): Record<string, string> => ({ VELESDB_MEMORY_BIN: server });
const ok = (args: string[], env: Record<string, string> = withBin()) => {
  const run = box.run(args, { env });
  expect({ exitCode: run.exitCode, stderr: run.stderr }).toEqual({ exitCode: 0, stderr: "" });
  return run;
};

interface ClientCase {
  readonly client: string;
  /** The file the agent reads MCP servers from, relative to HOME. */
  readonly file: string;
  /** A user's file holding another server of theirs, in the agent's format. */
  readonly userText: string;
  /** The entry install writes for `command` and `args`, as parsed (no args: an earlier install's direct entry). */
  readonly stdio: (command: string, args: string[]) => unknown;
  readonly url: (url: string) => unknown;
  /** The key of the servers table (default "mcpServers"). */
  readonly key?: string;
  /** A server entry a user wrote, in the agent's own shape (default a `command` string). */
  readonly userEntry?: (secret: string) => unknown;
}

const JSON_USER = `{
  // mine
  "mcpServers": {
    "other": { "command": "other-server", "env": { "TOKEN": "${PLANTED_SECRET}" } }
  }
}
`;

const CASES: readonly ClientCase[] = [
  {
    client: "claude",
    file: ".claude.json",
    userText: JSON_USER,
    stdio: (command, args) => ({ type: "stdio", command, args, env: {} }),
    url: (url) => ({ type: "http", url }),
  },
  {
    client: "codex",
    file: ".codex/config.toml",
    userText: `# mine\n[mcp_servers.other]\ncommand = "other-server"\nenv = { TOKEN = "${PLANTED_SECRET}" }\n`,
    stdio: (command, args) => (args.length > 0 ? { command, args } : { command }),
    url: (url) => ({ url }),
  },
  {
    client: "windsurf",
    file: ".codeium/windsurf/mcp_config.json",
    userText: JSON_USER,
    stdio: (command, args) => ({ command, args }),
    url: (serverUrl) => ({ serverUrl }),
  },
  {
    client: "gemini",
    file: ".gemini/settings.json",
    userText: JSON_USER,
    stdio: (command, args) => ({ command, args }),
    url: (httpUrl) => ({ httpUrl }),
  },
  {
    client: "qwen",
    file: ".qwen/settings.json",
    userText: JSON_USER,
    stdio: (command, args) => ({ command, args }),
    url: (httpUrl) => ({ httpUrl }),
  },
  {
    client: "copilot",
    file: ".copilot/mcp-config.json",
    userText: JSON_USER,
    stdio: (command, args) => ({ type: "local", command, args, tools: ["*"] }),
    url: (url) => ({ type: "http", url, tools: ["*"] }),
  },
  // OpenCode 1.18.33's McpLocalConfig / McpRemoteConfig (its config schema): `command` is the
  // argv array; `opencode mcp list` lists this entry (test/e2e/mcp-wiring.e2e.test.ts).
  {
    client: "opencode",
    file: ".config/opencode/opencode.json",
    key: "mcp",
    userText: `{\n  // mine\n  "$schema": "https://opencode.ai/config.json",\n  "mcp": {\n    "other": { "type": "local", "command": ["other-server"], "environment": { "TOKEN": "${PLANTED_SECRET}" } }\n  }\n}\n`,
    stdio: (command, args) => ({ type: "local", command: [command, ...args], enabled: true }),
    url: (url) => ({ type: "remote", url, enabled: true }),
    userEntry: (secret) => ({ type: "local", command: ["/bin/sh"], environment: { TOKEN: secret } }),
  },
  // Kilo Code 7.7.7 reads OpenCode's entry shape from kilo.json (`kilo mcp list` lists it:
  // test/e2e/mcp-wiring.e2e.test.ts).
  {
    client: "kilo",
    file: ".config/kilo/kilo.json",
    key: "mcp",
    userText: `{\n  // mine\n  "$schema": "https://app.kilo.ai/config.json",\n  "mcp": {\n    "other": { "type": "local", "command": ["other-server"], "environment": { "TOKEN": "${PLANTED_SECRET}" } }\n  }\n}\n`,
    stdio: (command, args) => ({ type: "local", command: [command, ...args], enabled: true }),
    url: (url) => ({ type: "remote", url, enabled: true }),
    userEntry: (secret) => ({ type: "local", command: ["/bin/sh"], environment: { TOKEN: secret } }),
  },
  // CodeBuddy Code 2.117.0: its user scope is the first that exists of ~/.codebuddy/.mcp.json,
  // ~/.codebuddy/mcp.json and ~/.codebuddy.json (test/hosts/codebuddy/install-codebuddy.test.ts).
  {
    client: "codebuddy",
    file: ".codebuddy/.mcp.json",
    userText: JSON_USER,
    stdio: (command, args) => ({ type: "stdio", command, args }),
    url: (url) => ({ type: "http", url }),
  },
  // Pi has no MCP of its own: pi-mcp-adapter 2.11.0 reads this Pi-owned file (its README).
  {
    client: "pi",
    file: ".pi/agent/mcp.json",
    userText: JSON_USER,
    stdio: (command, args) => ({ command, args }),
    url: (url) => ({ url }),
  },
  // What `droid mcp add` (Factory Droid 0.225.2) writes to ~/.factory/mcp.json.
  {
    client: "droid",
    file: ".factory/mcp.json",
    userText: JSON_USER,
    stdio: (command, args) => ({ type: "stdio", command, args, disabled: false }),
    url: (url) => ({ type: "http", url, disabled: false }),
  },
];

/** directEntry(case, text) → the text with the front's entry rewritten to the direct entry earlier installs wrote. */
function directEntry(c: ClientCase, text: string): string {
  const escaped = JSON.stringify(server);
  if (c.client === "codex")
    return text.replace(
      `command = ${JSON.stringify(front())}\nargs = ["mcp", "--server", ${escaped}]\n`,
      `command = ${escaped}\n`,
    );
  if (c.client === "opencode" || c.client === "kilo")
    return text.replace(/"command": \[[^\]]*"--server"[^\]]*\]/, `"command": [${escaped}]`);
  return text
    .replace(`"command": ${JSON.stringify(front())}`, `"command": ${escaped}`)
    .replace(/"args": \[[^\]]*"--server"[^\]]*\]/, '"args": []');
}

/** serverIn(case) → the velesdb-memory entry as the agent would read it. */
function serverIn(c: ClientCase): unknown {
  const text = read(path.join(box.home, c.file));
  if (c.client === "codex") {
    const table = /\[mcp_servers\.velesdb-memory\]\n((?:[^[\n].*\n)*)/.exec(text)?.[1];
    if (table === undefined) return undefined;
    return Object.fromEntries(
      table
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [k, v] = line.split(" = ");
          return [k, JSON.parse(v!)];
        }),
    );
  }
  return (Bun.JSONC.parse(text) as Record<string, Record<string, unknown> | undefined>)[c.key ?? "mcpServers"]?.[
    "velesdb-memory"
  ];
}

describe.each(CASES)("$client", (c) => {
  const target = () => path.join(box.home, c.file);
  const C = ["--client", c.client];

  test("hooks without a server: check exits 1 with the repair line; install --mcp adds it, once; uninstall gives the user's file back byte for byte", () => {
    write(target(), c.userText, 0o640);
    const hooksOnly = ok(["install", ...C]);
    // install without --mcp says at once that the hooks have no server, with the command that adds it.
    expect(hooksOnly.stdout).toContain(`${c.client}: note: no usable velesdb-memory MCP server`);
    expect(hooksOnly.stdout).toContain(`velesdb-hooks install --client ${c.client} --mcp`);
    const missing = box.run(["check", ...C]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stdout).toContain(`${c.client}: MCP server velesdb-memory missing`);
    expect(missing.stdout).toContain(`repair: velesdb-hooks install --client ${c.client} --mcp`);
    expect(missing.stdout + missing.stderr).not.toContain(PLANTED_SECRET);

    const dry = ok(["install", ...C, "--mcp", "--dry-run"]);
    expect(dry.stdout).toContain("would add the velesdb-memory MCP server");
    expect(serverIn(c)).toBeUndefined();

    const added = ok(["install", ...C, "--mcp"]);
    expect(added.stdout).toContain(
      `added the velesdb-memory MCP server (stdio ~/.velesdb-hooks/bin/velesdb-hooks mcp, shared by every session, running ${server})`,
    );
    expect(serverIn(c)).toEqual(c.stdio(front(), ["mcp", "--server", server]));
    expect(read(target())).toContain(c.client === "codex" ? "# mine" : "// mine");
    expect(modeOf(target())).toBe(0o640);
    const check = ok(["check", ...C]);
    expect(check.stdout).toContain(`${c.client}: MCP server velesdb-memory configured`);
    expect(check.stdout + check.stderr).not.toContain(PLANTED_SECRET);
    expect(ok(["doctor", ...C]).stdout).toContain("MCP server velesdb-memory configured");

    const digest = treeDigest(box.home);
    expect(ok(["install", ...C, "--mcp"]).stdout).toContain("already in step");
    expect(treeDigest(box.home)).toBe(digest);
    // Control: with the server in place, a plain install has no such note.
    expect(ok(["install", ...C]).stdout).not.toContain("note: no usable velesdb-memory MCP server");

    const removed = ok(["uninstall", ...C]);
    expect(removed.stdout).toContain("removed the velesdb-memory MCP server");
    expect(read(target())).toBe(c.userText);
    expect(modeOf(target())).toBe(0o640);
  });

  test("an earlier install's direct velesdb-memory entry is upgraded to the front; uninstall of either shape gives the user's file back", () => {
    write(target(), c.userText, 0o640);
    ok(["install", ...C, "--mcp"]);
    // The entry as install wrote it before the front existed (command = velesdb-memory, no arguments), still recorded as ours.
    write(target(), directEntry(c, read(target())), 0o640);
    expect(serverIn(c)).toEqual(c.stdio(server, []));
    const upgraded = ok(["install", ...C, "--mcp"]);
    expect(upgraded.stdout).toContain(
      "updated the velesdb-memory MCP server (stdio ~/.velesdb-hooks/bin/velesdb-hooks mcp",
    );
    expect(serverIn(c)).toEqual(c.stdio(front(), ["mcp", "--server", server]));
    write(target(), directEntry(c, read(target())), 0o640);
    expect(ok(["uninstall", ...C]).stdout).toContain("removed the velesdb-memory MCP server");
    expect(read(target())).toBe(c.userText);
    // Control: an entry of the user's with other arguments is not ours, though install's name is on it.
    write(target(), c.userText, 0o640);
    ok(["install", ...C, "--mcp"]);
    const theirs = read(target()).replace('"--server"', '"--their-flag"');
    write(target(), theirs, 0o640);
    expect(ok(["install", ...C, "--mcp"]).stdout).toContain("configured by you; kept as it is");
    expect(ok(["uninstall", ...C]).stdout).not.toContain("removed the velesdb-memory MCP server");
    expect(JSON.stringify(serverIn(c))).toContain("--their-flag");
  });

  test("--mcp-url registers the daemon; a server of the user's, under either name, is never replaced nor removed", () => {
    ok(["install", ...C, "--mcp-url", "https://127.0.0.1:18090/mcp"]);
    expect(serverIn(c)).toEqual(c.url("https://127.0.0.1:18090/mcp"));
    ok(["uninstall", ...C]);
    for (const name of ["velesdb-memory", "velesdb_memory"]) {
      const entry = c.userEntry?.(PLANTED_SECRET) ?? { command: "/bin/sh", headers: { Authorization: PLANTED_SECRET } };
      const mine =
        c.client === "codex"
          ? `[mcp_servers.${name}]\ncommand = "/bin/sh"\n`
          : `${JSON.stringify({ [c.key ?? "mcpServers"]: { [name]: entry } })}\n`;
      write(target(), mine);
      const kept = ok(["install", ...C, "--mcp"]);
      expect(kept.stdout).toContain(`MCP server ${name} configured by you; kept as it is`);
      const check = ok(["check", ...C]);
      expect(check.stdout).toContain(`MCP server ${name} configured`);
      expect(check.stdout).not.toContain(PLANTED_SECRET);
      ok(["uninstall", ...C]);
      expect(read(target())).toBe(mine);
    }
  });
});

/** metadata(file) → what a change would touch (reading it moves only atime). */
function metadata(file: string): string {
  const st = fs.lstatSync(file);
  return JSON.stringify([st.ino, st.mode, st.size, st.mtimeMs, st.uid, st.gid]);
}

const OWNED_FILES: ReadonlyArray<readonly [client: string, file: string]> = [
  ["claude", ".claude.json"],
  ["opencode", ".config/opencode/opencode.json"],
  ["droid", ".factory/mcp.json"],
  ["kilo", ".config/kilo/kilo.json"],
];
testIf(IS_ROOT, "root").each(OWNED_FILES)(
  "run as root on a user's %s file %s: install --mcp and uninstall keep its owner, group and mode",
  (client, relative) => {
    const file = path.join(box.home, relative);
    const text = CASES.find((c) => c.client === client)?.userText ?? JSON_USER;
    write(file, text, 0o600);
    fs.chownSync(file, 4321, 4321);
    ok(["install", "--client", client, "--mcp"]);
    const owned = (): number[] => {
      const st = fs.statSync(file);
      return [st.uid, st.gid, st.mode & 0o777];
    };
    expect(owned()).toEqual([4321, 4321, 0o600]);
    expect(read(file)).toContain('"velesdb-memory"');
    ok(["uninstall", "--client", client]);
    expect(owned()).toEqual([4321, 4321, 0o600]);
    expect(read(file)).toBe(text);
  },
);

describe("refusals", () => {
  test("neither VELESDB_MEMORY_BIN nor PATH nor --mcp-url: a refusal naming the cargo install line, exit 1, nothing changed", () => {
    const before = treeDigest(box.root);
    const run = box.run(["install", "--mcp"], { env: { VELESDB_MEMORY_BIN: undefined } });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("VELESDB_MEMORY_BIN");
    expect(run.stderr).toContain("`cargo install velesdb-memory`");
    expect(treeDigest(box.root)).toBe(before);
    expect(box.run(["install", "--mcp-url", "ftp://x"]).exitCode).toBe(1);
    // Control: found on PATH, it installs.
    ok(["install", "--mcp"], { PATH: `${path.dirname(server)}:/usr/bin:/bin` });
  });

  const hostile: ReadonlyArray<readonly [string, (file: string) => void, RegExp]> = [
    [
      "a link to nowhere",
      (file) => fs.symlinkSync(path.join(box.root, "nowhere.json"), file),
      /symlink to a file that does not exist/,
    ],
    ["a FIFO", (file) => Bun.spawnSync(["mkfifo", file]), /not a regular file/],
    [
      "a 65 MiB file",
      (file) => {
        fs.writeFileSync(file, "{}");
        fs.truncateSync(file, 65 * 1024 * 1024);
      },
      /larger than 64 MiB/,
    ],
    [
      "nesting 100 000 deep",
      (file) => fs.writeFileSync(file, `{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`),
      /nested too deeply|does not parse/,
    ],
    ["garbage", (file) => fs.writeFileSync(file, "\u0000\u0001garbage{{"), /does not parse/],
  ];
  test.each(hostile)(
    "~/.claude.json as %s: install --mcp is refused with one line, nothing changed; check says it cannot look",
    (_label, make, problem) => {
      make(path.join(box.home, ".claude.json"));
      ok(["install", "--client", "claude"]);
      // Never read the hostile file itself (a FIFO would block the digest): its metadata only.
      const digest = () =>
        `${treeDigest(path.join(box.home, ".claude"))} ${treeDigest(path.join(box.home, ".velesdb-hooks"))} ${metadata(path.join(box.home, ".claude.json"))}`;
      const before = digest();
      const run = box.run(["install", "--client", "claude", "--mcp"], { env: withBin() });
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toMatch(problem);
      expect(run.stderr.split("\n").filter(Boolean).length).toBeLessThanOrEqual(2);
      expect(digest()).toBe(before);
      const check = box.run(["check", "--client", "claude"]);
      expect(check.exitCode).toBe(1);
      expect(check.stdout).toMatch(/claude: MCP servers cannot be checked: ~\/.claude.json/);
    },
  );
});
