// check and doctor start the server each client is configured with (docs/doctor.md,
// src/install/server/server-probe.ts), shown with the REAL velesdb-memory 0.17.0 (crates.io, built
// with --features http) named by VELESDB_MEMORY_BIN_REAL: skipped without it, failed under
// CI=true. Every cause has its positive control: the same setup without the fault answers.
// The one stand-in (a binary built without http) prints velesdb-memory 0.17.0's own refusal,
// src/daemon_serve.rs:160-164, byte for byte; no http-less build is made here to compare it with.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { PLANTED_SECRET } from "./support/install-fixtures.ts";
import { makeInstallSandbox, write, type InstallSandbox } from "./support/install-sandbox.ts";
import { REAL_VELESDB_MEMORY, requireRealServerUnderCi } from "./support/real-velesdb-memory.ts";

const REAL = REAL_VELESDB_MEMORY;
requireRealServerUnderCi(test, "the server probe");

let box: InstallSandbox;
let store: string;
beforeEach(() => {
  box = makeInstallSandbox("probe", { clients: ["claude", "codex"], mcp: false });
  store = path.join(box.root, "store");
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  box.cleanup();
});

const children: ReturnType<typeof Bun.spawn>[] = [];
/** The probe on (the sandbox turns it off), a quiet server, and a short bound so a hung case stays cheap. */
const PROBE_ENV = { VELESDB_HOOKS_SERVER_PROBE: undefined, VELESDB_HOOKS_PROBE_TIMEOUT_MS: "4000" };

function claudeEntry(entry: Record<string, unknown>): void {
  write(path.join(box.home, ".claude.json"), `${JSON.stringify({ mcpServers: { "velesdb-memory": entry } })}\n`);
}
const stdioEntry = (env: Record<string, string> = {}, args: string[] = []) => ({
  type: "stdio",
  command: REAL!,
  args,
  env: { VELESDB_MEMORY_PATH: store, VELESDB_MEMORY_QUIET: "1", ...env },
});

const check = (cwd?: string) =>
  box.runAsync(["check", "--client", "claude"], { env: PROBE_ENV, ...(cwd ? { cwd } : {}) });
const serverLine = (stdout: string): string =>
  stdout.split("\n").find((line) => line.startsWith("claude: MCP server in ")) ?? `(no probe line in:\n${stdout})`;

/** freePort() → a loopback port nothing listens on (bound, then released). */
function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** holdStore(env) → a real velesdb-memory on `store`, alive until the test ends; resolves once it answered initialize. */
async function holdStore(
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<ReturnType<typeof Bun.spawn<"pipe", "pipe", "pipe">>> {
  const child = Bun.spawn([REAL!, ...args], {
    env: { PATH: "/usr/bin:/bin", HOME: box.home, VELESDB_MEMORY_PATH: store, VELESDB_MEMORY_QUIET: "1", ...env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  children.push(child);
  if (args.includes("--http")) {
    const port = Number(args[args.indexOf("--http-port") + 1]);
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(`https://127.0.0.1:${port}/health`, { tls: { rejectUnauthorized: false } }).then(
          (r) => r.ok,
          () => false,
        )
      )
        return child;
      await Bun.sleep(100);
    }
    throw new Error("the daemon never answered /health");
  }
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } })}\n`,
  );
  child.stdin.flush();
  const reader = child.stdout.getReader();
  const chunk = await reader.read();
  reader.releaseLock();
  expect(new TextDecoder().decode(chunk.value)).toContain('"serverInfo"');
  return child;
}

describe.skipIf(!REAL)("the real velesdb-memory 0.17.0, started as the client would", () => {
  test("healthy: check passes and names the version; doctor adds the embedder and says once that hash is not semantic", async () => {
    claudeEntry(stdioEntry());
    const run = await check();
    expect(serverLine(run.stdout)).toBe(
      "claude: MCP server in ~/.claude.json (user scope) answers: velesdb-memory 0.17.0, 27 tools",
    );
    expect(run.exitCode).toBe(0);
    const doctor = await box.runAsync(["doctor", "--client", "claude"], { env: PROBE_ENV });
    expect(doctor.stdout).toContain("answers: velesdb-memory 0.17.0, 27 tools, embedder hash\n");
    expect(doctor.stdout.split("\n").filter((line) => line.startsWith("memory:")).length).toBe(1);
    expect(doctor.stdout).toContain("not its meaning");
    // Nothing of the probe is left: the store's lock is free again.
    await holdStore();
  });

  test("a store held by another velesdb-memory: check fails and names the holder's pid and command line; control: once it is gone, check passes", async () => {
    claudeEntry(stdioEntry());
    const holder = await holdStore();
    const run = await check();
    expect(run.exitCode).toBe(1);
    expect(serverLine(run.stdout)).toContain(
      `does not answer: the store ${JSON.stringify(store)} is locked by pid ${holder.pid} (${REAL})`,
    );
    expect(run.stdout).toContain("repair: make the velesdb-memory server of claude start");
    holder.kill("SIGKILL");
    await holder.exited;
    const after = await check();
    expect(serverLine(after.stdout)).toContain("answers: velesdb-memory 0.17.0");
    expect(after.exitCode).toBe(0);
  });

  test("a repository's velesdb-memory.toml with a bad value: check run there names the file and the value; control: the same repository without it", async () => {
    const repo = path.join(box.root, "repo");
    fs.mkdirSync(repo);
    claudeEntry(stdioEntry());
    const control = await check(repo);
    expect(serverLine(control.stdout)).toContain("answers:");
    write(path.join(repo, "velesdb-memory.toml"), '[search]\nquality = "nope"\n');
    const run = await check(repo);
    expect(run.exitCode).toBe(1);
    const line = serverLine(run.stdout);
    expect(line).toContain("Error: VELESDB_MEMORY_SEARCH_QUALITY: Unknown search mode 'nope'");
    expect(line).toContain(`(config file in use: ${JSON.stringify(path.join(repo, "velesdb-memory.toml"))})`);
  });

  test("a store's velesdb-memory.toml with an unknown key: the refused key, never the file's text; control: a valid key", async () => {
    claudeEntry(stdioEntry());
    fs.mkdirSync(store, { recursive: true });
    write(path.join(store, "velesdb-memory.toml"), `quiet = true\n`);
    expect(serverLine((await check()).stdout)).toContain("answers:");
    write(path.join(store, "velesdb-memory.toml"), `bogus_key = "${PLANTED_SECRET}"\n`);
    const run = await check();
    expect(run.exitCode).toBe(1);
    const line = serverLine(run.stdout);
    expect(line).toContain(
      "is not valid: TOML parse error at line 1, column 1: unknown field `bogus_key`, expected one of `path`, `quiet`",
    );
    expect(line).toContain(`config file ${path.join(store, "velesdb-memory.toml")} is not valid`);
    expect(run.stdout).not.toContain(PLANTED_SECRET);
  });

  test("an invalid VELESDB_MEMORY_SEARCH_QUALITY in the entry's env: named, its value not shown; control: a valid one", async () => {
    claudeEntry(stdioEntry({ VELESDB_MEMORY_SEARCH_QUALITY: "fast" }));
    expect((await check()).exitCode).toBe(0);
    claudeEntry(stdioEntry({ VELESDB_MEMORY_SEARCH_QUALITY: "quality-from-env" }));
    const run = await check();
    expect(run.exitCode).toBe(1);
    expect(serverLine(run.stdout)).toContain(
      "Error: VELESDB_MEMORY_SEARCH_QUALITY: Unknown search mode '(a configured value, not shown)'",
    );
    expect(run.stdout).not.toContain("quality-from-env");
  });

  test("an entry that starts an HTTP daemon instead of stdio is stopped at the bound, and nothing is left listening", async () => {
    const port = freePort();
    claudeEntry(
      stdioEntry({ VELESDB_MEMORY_TLS_DIR: path.join(box.root, "tls") }, ["--http", "--http-port", String(port)]),
    );
    const started = performance.now();
    const run = await check();
    expect(run.exitCode).toBe(1);
    expect(serverLine(run.stdout)).toContain("does not answer: did not answer initialize within 4.0 s (stopped)");
    expect(performance.now() - started).toBeLessThan(8000);
    const reached = await fetch(`https://127.0.0.1:${port}/health`, { tls: { rejectUnauthorized: false } }).then(
      () => true,
      () => false,
    );
    expect(reached).toBe(false);
  });

  test("HTTP: a running daemon answers /health and initialize; nothing listening is said as such; credentials in the URL never shown", async () => {
    const port = freePort();
    const url = `https://127.0.0.1:${port}/mcp`;
    claudeEntry({ type: "http", url: `https://someone:${PLANTED_SECRET}@127.0.0.1:${port}/mcp` });
    const nothing = await check();
    expect(nothing.exitCode).toBe(1);
    expect(serverLine(nothing.stdout)).toContain(
      `does not answer: nothing is listening at https://127.0.0.1:${port} (connection refused)`,
    );
    await holdStore(["--http", "--http-port", String(port)], { VELESDB_MEMORY_TLS_DIR: path.join(box.root, "tls") });
    claudeEntry({ type: "http", url });
    const run = await check();
    expect(serverLine(run.stdout)).toBe(
      `claude: MCP server in ~/.claude.json (user scope) answers: velesdb-memory 0.17.0, 27 tools`,
    );
    expect(run.exitCode).toBe(0);
    // Plain http against the daemon's TLS port: a cause, not a hang.
    claudeEntry({ type: "http", url: `http://127.0.0.1:${port}/mcp` });
    const plain = await check();
    expect(plain.exitCode).toBe(1);
    expect(serverLine(plain.stdout)).toContain(
      `does not answer: http://127.0.0.1:${port} closed the connection (a TLS port, as velesdb-memory's daemon is by default? then the URL needs https://)`,
    );
    for (const r of [nothing, run, plain]) expect(r.stdout).not.toContain(PLANTED_SECRET);
  });

  test("HTTP: an https URL on a port that speaks plain HTTP is a TLS refusal, said in one line", async () => {
    const plain = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("OK") });
    try {
      claudeEntry({ type: "http", url: `https://127.0.0.1:${plain.port}/mcp` });
      const run = await check();
      expect(run.exitCode).toBe(1);
      expect(serverLine(run.stdout)).toContain(
        `does not answer: TLS refused at https://127.0.0.1:${plain.port}: the handshake failed`,
      );
      // Control: the same server as http:// is reached, and refused as not an MCP endpoint.
      claudeEntry({ type: "http", url: `http://127.0.0.1:${plain.port}/mcp` });
      expect(serverLine((await check()).stdout)).toContain("without an MCP message");
    } finally {
      plain.stop(true);
    }
  });

  test("two clients with the same entry start it once; control: different entries start twice", async () => {
    const log = path.join(box.root, "starts.log");
    const wrapper = path.join(box.root, "bin", "velesdb-memory");
    write(wrapper, `#!/bin/sh\necho start >> "${log}"\nexec "${REAL}" "$@"\n`, 0o755);
    const same = { command: wrapper, env: { VELESDB_MEMORY_PATH: store, VELESDB_MEMORY_QUIET: "1" } };
    write(
      path.join(box.home, ".claude.json"),
      `${JSON.stringify({ mcpServers: { "velesdb-memory": { ...same, args: [] } } })}\n`,
    );
    write(
      path.join(box.home, ".codex", "config.toml"),
      `[mcp_servers.velesdb-memory]\ncommand = ${JSON.stringify(wrapper)}\nenv = { VELESDB_MEMORY_PATH = ${JSON.stringify(store)}, VELESDB_MEMORY_QUIET = "1" }\n`,
    );
    const run = await box.runAsync(["check", "--client", "claude", "--client", "codex"], { env: PROBE_ENV });
    expect(run.stdout.split("\n").filter((line) => line.includes("answers: velesdb-memory 0.17.0")).length).toBe(2);
    expect(fs.readFileSync(log, "utf8")).toBe("start\n");
    fs.rmSync(log);
    write(
      path.join(box.home, ".codex", "config.toml"),
      `[mcp_servers.velesdb-memory]\ncommand = ${JSON.stringify(wrapper)}\nenv = { VELESDB_MEMORY_PATH = ${JSON.stringify(`${store}-2`)}, VELESDB_MEMORY_QUIET = "1" }\n`,
    );
    await box.runAsync(["check", "--client", "claude", "--client", "codex"], { env: PROBE_ENV });
    expect(fs.readFileSync(log, "utf8")).toBe("start\nstart\n");
  });
});

describe("causes no real server is needed for", () => {
  test("a binary built without http given --http: its own message and the rebuild command; control: without --http it is started as stdio", async () => {
    // velesdb-memory 0.17.0 src/daemon_serve.rs:160-164 (requested_http_bind, not(feature = "http")).
    const stand = path.join(box.root, "bin", "velesdb-memory-stdio-only");
    write(
      stand,
      `#!/bin/sh\nfor a in "$@"; do [ "$a" = --http ] && { echo '[velesdb-memory] --http / VELESDB_MEMORY_HTTP=1 requires a binary built with \`--features http\` (e.g. \`cargo install velesdb-memory --features http\`) — this binary was built without it' >&2; exit 1; }; done\necho "Error: stand-in started" >&2\nexit 1\n`,
      0o755,
    );
    claudeEntry({ command: stand, args: ["--http"] });
    const run = await check();
    expect(run.exitCode).toBe(1);
    expect(serverLine(run.stdout)).toContain(
      "requires a binary built with `--features http` (e.g. `cargo install velesdb-memory --features http`) — this binary was built without it; rebuild it with cargo install velesdb-memory --features http",
    );
    claudeEntry({ command: stand, args: [] });
    expect(serverLine((await check()).stdout)).toContain("does not answer: Error: stand-in started");
  });

  test("a server that hangs, with a child of its own: both are gone when check answers, at the bound", async () => {
    const pidFile = path.join(box.root, "child.pid");
    const hung = path.join(box.root, "bin", "hung-server");
    write(hung, `#!/bin/sh\nsleep 45 &\necho $! > "${pidFile}"\nexec sleep 45\n`, 0o755);
    claudeEntry({ command: hung, args: [] });
    const started = performance.now();
    const run = await box.runAsync(["check", "--client", "claude"], {
      env: { ...PROBE_ENV, VELESDB_HOOKS_PROBE_TIMEOUT_MS: "1000" },
    });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(serverLine(run.stdout)).toContain("does not answer: did not answer initialize within 1.0 s (stopped)");
    const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
    await Bun.sleep(100);
    const state =
      (fs.existsSync(`/proc/${pid}/stat`)
        ? fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0]
        : undefined) ?? "gone";
    expect(["gone", "Z", "X"]).toContain(state);
  });

  test("the probe off: nothing is started, and check says so", async () => {
    claudeEntry({ command: "/bin/true", args: [] });
    const run = await box.runAsync(["check", "--client", "claude"]);
    expect(run.stdout).toContain("claude: MCP server not started (VELESDB_HOOKS_SERVER_PROBE=off)");
    expect((await check()).stdout).toContain(
      "claude: MCP server in ~/.claude.json (user scope) does not answer: exited with code 0 before answering initialize, printing nothing",
    );
  });
});
