// `velesdb-hooks mcp` (src/mcp/front.ts) where no velesdb-memory is needed: its refusals (a
// planted link, another user's directory, a bad command line), its bounded start against a
// server that never answers or does not exist, and the line framing both sides use. The real
// server's cases are in test/mcp-front-real.test.ts.
import { afterEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { acquireStartLock, processStartTime } from "../src/mcp/channel.ts";
import { LineSplitter, MAX_LINE_BYTES, withTopLevelId } from "../src/mcp/lines.ts";
import { mcpRuntimePaths, readMcpStatus, resolveStore } from "../src/core/mcp-runtime.ts";
import { brokersOf, HOOKS_BINARY, killTree, mcpSandbox, startClient } from "./support/mcp-session.ts";
import { IS_ROOT, testIf } from "./support/requires.ts";

let boxes: Array<ReturnType<typeof mcpSandbox>> = [];
const sandbox = (name: string) => {
  const box = mcpSandbox(name);
  boxes.push(box);
  return box;
};
afterEach(() => {
  for (const box of boxes) box.cleanup();
  boxes = [];
});

/** run(args, env) → the front's exit code and stderr, stdin closed at once. */
function run(args: string[], env: Record<string, string>, timeout = 20_000) {
  const started = Date.now();
  const result = Bun.spawnSync([HOOKS_BINARY, "mcp", ...args], {
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout,
  });
  return {
    exitCode: result.exitCode,
    stderr: result.stderr.toString(),
    stdout: result.stdout.toString(),
    ms: Date.now() - started,
  };
}

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
if (!isRoot && process.env.CI === "true")
  throw new Error("the foreign-owned directory case needs root (chown) and cannot run here under CI=true");

describe("the front's refusals", () => {
  test("no --server, or a relative one: exit 64 and one usage line", () => {
    const box = sandbox("usage");
    for (const args of [[], ["--server", "velesdb-memory"], ["--server", "/x", "--what"]]) {
      const r = run(args, box.env);
      expect(r.exitCode).toBe(64);
      expect(r.stderr.trim().split("\n").length).toBe(1);
      expect(r.stderr).toStartWith("velesdb-hooks mcp: ");
    }
  });

  test("a planted symlink in place of the private directory is refused, its target left empty; positive control: a real directory is made 0700", () => {
    const box = sandbox("link");
    const elsewhere = path.join(box.root, "elsewhere");
    fs.mkdirSync(elsewhere, { mode: 0o700 });
    fs.mkdirSync(box.stateDir, { mode: 0o700 });
    fs.symlinkSync(elsewhere, path.join(box.stateDir, "mcp"));
    const r = run(["--server", "/nonexistent/velesdb-memory"], box.env);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(`velesdb-hooks mcp: ${path.join(box.stateDir, "mcp")} is a symlink\n`);
    expect(fs.readdirSync(elsewhere)).toEqual([]);

    const control = sandbox("link-control");
    const c = run(["--server", "/nonexistent/velesdb-memory"], { ...control.env, VELESDB_HOOKS_MCP_START_MS: "3000" });
    expect(c.exitCode).toBe(1);
    expect(c.stderr).toContain("velesdb-memory cannot be started: /nonexistent/velesdb-memory does not exist");
    expect(fs.statSync(path.join(control.stateDir, "mcp")).mode & 0o777).toBe(0o700);
  });

  test("a state directory that is a link is refused before anything is created", () => {
    const box = sandbox("statelink");
    const elsewhere = path.join(box.root, "elsewhere");
    fs.mkdirSync(elsewhere, { mode: 0o700 });
    fs.symlinkSync(elsewhere, box.stateDir);
    const r = run(["--server", "/nonexistent/velesdb-memory"], box.env);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("is a symlink");
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  test("a regular file planted at the socket's name is refused and left as it is: the broker's cause reaches the front at once", () => {
    const box = sandbox("planted");
    const paths = mcpRuntimePaths(box.env, box.env.HOME);
    fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(path.dirname(paths.dir), 0o700);
    fs.writeFileSync(paths.socket, "not a socket");
    const r = run(["--server", "/nonexistent/velesdb-memory"], box.env);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(`velesdb-hooks mcp: ${paths.socket} exists and is not a socket of ours; remove it\n`);
    expect(r.ms).toBeLessThan(10_000);
    expect(fs.readFileSync(paths.socket, "utf8")).toBe("not a socket");
  });

  test.skipIf(!isRoot)("a private directory owned by another user is refused (never used, never repaired)", () => {
    const box = sandbox("foreign");
    fs.mkdirSync(path.join(box.stateDir, "mcp"), { recursive: true, mode: 0o700 });
    fs.chmodSync(box.stateDir, 0o700);
    fs.chownSync(path.join(box.stateDir, "mcp"), 65534, 65534);
    const r = run(["--server", "/nonexistent/velesdb-memory"], box.env);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(`velesdb-hooks mcp: ${path.join(box.stateDir, "mcp")} is owned by another user\n`);
    expect(fs.readdirSync(path.join(box.stateDir, "mcp"))).toEqual([]);
  });
});

describe("a bounded start", () => {
  test("a server that does not exist: one stderr line naming it, exit 1, status failed", () => {
    const box = sandbox("missing");
    const r = run(["--server", "/nonexistent/velesdb-memory"], box.env);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(
      "velesdb-hooks mcp: velesdb-memory cannot be started: /nonexistent/velesdb-memory does not exist\n",
    );
    const status = readMcpStatus(box.env);
    expect(status.state).toBe("failed");
  });

  test("a server that never answers initialize: the front gives up within its bound, exit 1, one line", async () => {
    const box = sandbox("silent");
    const silent = path.join(box.root, "silent-server");
    fs.writeFileSync(silent, "#!/bin/sh\nexec sleep 30\n", { mode: 0o755 });
    const front = startClient(silent, { ...box.env, VELESDB_HOOKS_MCP_START_MS: "1500" });
    const started = Date.now();
    expect(await front.proc.exited).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(front.stderr()).toMatch(
      /^velesdb-hooks mcp: velesdb-memory did not start within 2 s \(the broker is still waiting for its answer to initialize\); its log: .*\.log\n$/,
    );
  });
});

describe("the store and its names", () => {
  test("resolved as velesdb-memory 0.17.0 resolves it (src/daemon_startup.rs): VELESDB_MEMORY_PATH against the cwd, else $HOME/.velesdb-memory", () => {
    expect(resolveStore({ VELESDB_MEMORY_PATH: "rel/store", HOME: "/h" }, "/work")).toEqual({
      ok: true,
      store: "/work/rel/store",
    });
    expect(resolveStore({ HOME: "/h" }, "/work")).toEqual({ ok: true, store: "/h/.velesdb-memory" });
    expect(resolveStore({ USERPROFILE: "/u" }, "/work")).toEqual({ ok: true, store: "/u/.velesdb-memory" });
    expect(resolveStore({ VELESDB_MEMORY_PATH: " " }, "/work").ok).toBe(false);
    expect(resolveStore({}, "/work").ok).toBe(false);
  });

  test("two stores, two sockets in one directory; each socket path fits a Unix socket (≤ 104 bytes) under a usual home", () => {
    const a = mcpRuntimePaths({ HOME: "/home/a", VELESDB_MEMORY_PATH: "/data/one" });
    const b = mcpRuntimePaths({ HOME: "/home/a", VELESDB_MEMORY_PATH: "/data/two" });
    expect(a.socket).not.toBe(b.socket);
    expect(a.dir).toBe(b.dir);
    expect(Buffer.byteLength(a.socket)).toBeLessThan(104);
    expect(path.dirname(a.status)).toBe(a.dir);
  });
});

describe("4.6 one store through a link is one store", () => {
  test("a store named through a link, existing or not yet created, resolves to the real directory; its broker's files are the same", () => {
    const box = sandbox("storelink");
    const real = path.join(box.root, "real");
    fs.mkdirSync(path.join(real, "store"), { recursive: true });
    fs.symlinkSync(real, path.join(box.root, "via"));
    fs.symlinkSync(path.join(real, "store"), path.join(box.env.HOME!, ".velesdb-memory"));
    const direct = resolveStore({ VELESDB_MEMORY_PATH: path.join(real, "store") }, "/");
    expect(direct).toEqual({ ok: true, store: path.join(fs.realpathSync(real), "store") });
    expect(resolveStore({ VELESDB_MEMORY_PATH: path.join(box.root, "via", "store") }, "/")).toEqual(direct);
    expect(resolveStore({ HOME: box.env.HOME }, "/")).toEqual(direct);
    // Not created yet: the part that exists is resolved, the rest kept as named.
    expect(resolveStore({ VELESDB_MEMORY_PATH: "via/new/store" }, box.root)).toEqual({
      ok: true,
      store: path.join(fs.realpathSync(real), "new", "store"),
    });
    const viaLink = mcpRuntimePaths({ ...box.env, VELESDB_MEMORY_PATH: path.join(box.root, "via", "store") });
    expect(viaLink.socket).toBe(mcpRuntimePaths(box.env).socket);
    expect(viaLink.store).toBe(direct.ok ? direct.store : "");
    // Positive control: another directory is another store.
    fs.mkdirSync(path.join(box.root, "other"));
    expect(mcpRuntimePaths({ ...box.env, VELESDB_MEMORY_PATH: path.join(box.root, "other") }).socket).not.toBe(
      viaLink.socket,
    );
  });
});

describe("4.8 the broker's files live in the home, not in a shared temp directory", () => {
  /** A sandbox as a user has it: no VELESDB_HOOKS_STATE_DIR, a TMPDIR of the case's own. */
  const userBox = (name: string) => {
    const box = sandbox(name);
    const env: Record<string, string> = { ...box.env, TMPDIR: path.join(box.root, "tmp") };
    delete env.VELESDB_HOOKS_STATE_DIR;
    fs.mkdirSync(env.TMPDIR!);
    return { box, env, tmp: env.TMPDIR! };
  };
  const uid = process.getuid?.() ?? 0;

  test("without VELESDB_HOOKS_STATE_DIR: ~/.velesdb-hooks/run (0700), where the guard reads the same status; nothing in TMPDIR", () => {
    const { box, env, tmp } = userBox("homerun");
    const paths = mcpRuntimePaths(env, env.HOME);
    expect(paths.dir).toBe(path.join(fs.realpathSync(box.env.HOME!), ".velesdb-hooks", "run"));
    const r = run(["--server", "/nonexistent/velesdb-memory"], { ...env, VELESDB_HOOKS_MCP_START_MS: "3000" });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("velesdb-memory cannot be started");
    expect(fs.statSync(paths.dir).mode & 0o777).toBe(0o700);
    expect(fs.existsSync(paths.status)).toBe(true);
    expect(readMcpStatus(env, env.HOME).state).toBe("failed");
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  testIf(IS_ROOT, "root (chown to another user)")(
    "a squatted /tmp/velesdb-agent-hooks-<uid> (made by another user first) does not deny the front; control: with the state there, it is refused",
    () => {
      const { env, tmp } = userBox("squat");
      const squatted = path.join(tmp, `velesdb-agent-hooks-${uid}`);
      fs.mkdirSync(squatted, { mode: 0o777 });
      fs.chownSync(squatted, 65534, 65534);
      const r = run(["--server", "/nonexistent/velesdb-memory"], { ...env, VELESDB_HOOKS_MCP_START_MS: "3000" });
      expect(r.stderr).not.toContain("owned by another user");
      expect(r.stderr).toContain("velesdb-memory cannot be started");
      expect(fs.readdirSync(squatted)).toEqual([]);
      // Negative control: the same squatted directory named as the state directory is refused, as any state is.
      const c = run(["--server", "/nonexistent/velesdb-memory"], { ...env, VELESDB_HOOKS_STATE_DIR: squatted });
      expect(c.exitCode).toBe(1);
      expect(c.stderr).toContain("is owned by another user");
    },
  );

  test("a home too long for a socket path falls back to the state directory; a usual one does not", () => {
    const long = `/${"h".repeat(80)}`;
    const paths = mcpRuntimePaths({ HOME: long, TMPDIR: "/tmp" });
    expect(paths.holder).toBe("state");
    expect(paths.dir).toBe(path.join("/tmp", `velesdb-agent-hooks-${uid}`, "mcp"));
    expect(mcpRuntimePaths({ HOME: "/home/someone", TMPDIR: "/tmp" }).holder).toBe("home");
  });

  test("a ~/.velesdb-hooks others can write to is refused with one line naming it; control: mode 755 (the installer's) is used", () => {
    const { box, env } = userBox("groupw");
    const hooksDir = path.join(box.env.HOME!, ".velesdb-hooks");
    fs.mkdirSync(hooksDir);
    fs.chmodSync(hooksDir, 0o777);
    const r = run(["--server", "/nonexistent/velesdb-memory"], env);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe(
      `velesdb-hooks mcp: ${fs.realpathSync(hooksDir)} can be written by other users (mode 777); chmod go-w it\n`,
    );
    expect(fs.readdirSync(hooksDir)).toEqual([]);
    fs.chmodSync(hooksDir, 0o755);
    const c = run(["--server", "/nonexistent/velesdb-memory"], { ...env, VELESDB_HOOKS_MCP_START_MS: "3000" });
    expect(c.stderr).toContain("velesdb-memory cannot be started");
    expect(fs.statSync(path.join(hooksDir, "run")).mode & 0o777).toBe(0o700);
  });
});

describe("4.5 a stale start lock is taken over; a held one is named", () => {
  const lockOf = (name: string) => {
    const box = sandbox(name);
    const paths = mcpRuntimePaths(box.env, box.env.HOME);
    fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(path.dirname(paths.dir), 0o700);
    return { box, paths };
  };
  const backdate = (file: string, seconds: number) => {
    const then = new Date(Date.now() - seconds * 1000);
    fs.utimesSync(file, then, then);
  };
  const self = processStartTime("self");
  const pid1 = processStartTime(1);

  test.each([
    ["the test's own pid, with another start time (a reused pid)", `${process.pid} ${Number(self) + 1} x\n`, 0],
    ["pid 1, with another start time (a reused pid)", `1 ${Number(pid1) + 1} x\n`, 0],
    ["pid 1 in the older format (no start time), written 60 s ago", "1\n", 60],
    ["an empty file, 5 s old", "", 5],
    ["garbage, 5 s old", "not a lock at all", 5],
    ["a pid that is gone", "2147483646 - x\n", 0],
  ])("%s: taken over at once", async (_name, content, ageSeconds) => {
    const { paths } = lockOf("stalelock");
    fs.writeFileSync(paths.lock, content);
    if (ageSeconds > 0) backdate(paths.lock, ageSeconds);
    const lock = await acquireStartLock(paths.lock, 3000);
    expect(lock).toMatchObject({ ok: true });
    if (lock.ok) lock.release();
    expect(fs.existsSync(paths.lock)).toBe(false);
  });

  test.each([
    ["a live holder (this process, its own start time)", `${process.pid} ${self} x\n`, `pid ${process.pid}`],
    ["pid 1 in the older format, fresh (it may be starting now)", "1\n", "pid 1"],
    ["a file being written this instant", "", "a process still writing it"],
  ])("control — %s: waited for, then refused naming the lock file", async (_name, content, holder) => {
    const { paths } = lockOf("heldlock");
    fs.writeFileSync(paths.lock, content);
    const lock = await acquireStartLock(paths.lock, 300);
    expect(lock).toEqual({ ok: false, problem: `the start lock ${paths.lock} is held by ${holder}` });
    expect(fs.readFileSync(paths.lock, "utf8")).toBe(content);
  });

  test("something other than a file at the lock's name is refused at once, named, and left as it is", async () => {
    const { paths } = lockOf("dirlock");
    fs.mkdirSync(paths.lock);
    const lock = await acquireStartLock(paths.lock, 3000);
    expect(lock).toEqual({ ok: false, problem: `the start lock ${paths.lock} is not a regular file; remove it` });
    expect(fs.statSync(paths.lock).isDirectory()).toBe(true);
  });

  test("six processes taking over one stale lock at once: never two holders at a time", async () => {
    const { box, paths } = lockOf("lockrace");
    fs.writeFileSync(paths.lock, "2147483646 - x\n");
    const log = path.join(box.root, "holds.log");
    const script = `
      import * as fs from "node:fs";
      import { acquireStartLock } from ${JSON.stringify(path.join(import.meta.dir, "..", "src", "mcp", "channel.ts"))};
      const lock = await acquireStartLock(${JSON.stringify(paths.lock)}, 20000);
      if (!lock.ok) { console.error(lock.problem); process.exit(1); }
      const start = performance.timeOrigin + performance.now();
      await Bun.sleep(150);
      const end = performance.timeOrigin + performance.now();
      fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify([start, end]) + "\\n");
      lock.release();
    `;
    const racers = Array.from({ length: 6 }, () =>
      Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" }),
    );
    expect(await Promise.all(racers.map((r) => r.exited))).toEqual([0, 0, 0, 0, 0, 0]);
    const holds = fs
      .readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as [number, number])
      .sort((a, b) => a[0] - b[0]);
    expect(holds.length).toBe(6);
    for (let i = 1; i < holds.length; i++) expect(holds[i]![0]).toBeGreaterThanOrEqual(holds[i - 1]![1]);
  }, 60_000);

  test("the front: a reused pid's lock does not block it; a held lock is named in its one line, not the socket", () => {
    const { box, paths } = lockOf("frontlock");
    fs.writeFileSync(paths.lock, `1 ${Number(pid1) + 1} x\n`);
    const r = run(["--server", "/nonexistent/velesdb-memory"], { ...box.env, VELESDB_HOOKS_MCP_START_MS: "3000" });
    expect(r.stderr).toContain("velesdb-memory cannot be started");
    for (const pid of brokersOf(box.stateDir)) killTree(pid);
    // Control: a lock a live process holds (this test's, with its start time) keeps every broker out.
    fs.writeFileSync(paths.lock, `${process.pid} ${self} x\n`);
    const held = run(["--server", "/nonexistent/velesdb-memory"], { ...box.env, VELESDB_HOOKS_MCP_START_MS: "1500" });
    expect(held.exitCode).toBe(1);
    expect(held.stderr).toBe(
      `velesdb-hooks mcp: velesdb-memory did not start within 2 s: the start lock ${paths.lock} is held by pid ${process.pid}; remove it if no velesdb-hooks mcp is starting\n`,
    );
  });
});

describe("line framing", () => {
  test("a line split over many chunks comes out whole; several lines in one chunk come out apart", () => {
    const splitter = new LineSplitter();
    const long = JSON.stringify({ x: "y".repeat(200_000) });
    const bytes = Buffer.from(`${long}\n{"a":1}\n{"b":`);
    const out = [];
    for (let i = 0; i < bytes.length; i += 4096) out.push(...splitter.push(bytes.subarray(i, i + 4096)));
    expect(out).toEqual([
      { kind: "line", text: long },
      { kind: "line", text: '{"a":1}' },
    ]);
    expect(splitter.push(Buffer.from("2}\n"))).toEqual([{ kind: "line", text: '{"b":2}' }]);
  });

  test("a line over 16 MiB is dropped (as the server drops it) and the next line is intact; positive control: one byte under passes", () => {
    const splitter = new LineSplitter();
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    const out = [];
    for (let i = 0; i < 17; i++) out.push(...splitter.push(chunk));
    out.push(...splitter.push(Buffer.from('\n{"ok":true}\n')));
    expect(out).toEqual([
      { kind: "oversized", bytes: 17 * 1024 * 1024 },
      { kind: "line", text: '{"ok":true}' },
    ]);
    const under = new LineSplitter().push(Buffer.concat([Buffer.alloc(MAX_LINE_BYTES, 0x61), Buffer.from("\n")]));
    expect(under.length).toBe(1);
    expect(under[0]!.kind).toBe("line");
  });
});

describe("ids rewritten in the bytes", () => {
  test("only the top-level id changes; every other byte (a u64 number, a nested id, escaped quotes) stays", () => {
    const line =
      '{"jsonrpc":"2.0","id":7,"result":{"structuredContent":{"memories":[{"id":16439525647125867986,"text":"say \\"id\\":1"}]}}}';
    expect(withTopLevelId(line, "c-1")).toBe(line.replace('"id":7', '"id":"c-1"'));
    expect(withTopLevelId('{ "id" : "abc" , "method":"x"}', 12)).toBe('{ "id" : 12 , "method":"x"}');
    expect(withTopLevelId('{"params":{"id":1},"method":"x","id":2}', 9)).toBe(
      '{"params":{"id":1},"method":"x","id":9}',
    );
    expect(withTopLevelId('{"method":"x","params":{"id":1}}', 9)).toBeUndefined();
    // Positive control: a JSON round trip does change the u64.
    expect(JSON.stringify(JSON.parse(line))).not.toBe(line);
  });
});
