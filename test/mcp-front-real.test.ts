// One store, many sessions (docs/shared-memory.md), with the REAL velesdb-memory 0.17.0
// (VELESDB_MEMORY_BIN_REAL; skipped without it, failed under CI=true): several
// `velesdb-hooks mcp` fronts at once share one server; the negative control shows two plain
// servers cannot; a broker or server that dies mid-request costs one error and no re-send; the
// broker exits when idle; a locked store is one stderr line, exit 1, and a "failed" status.
import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { readMcpStatus } from "../src/core/mcp-runtime.ts";
import {
  alive,
  brokersOf,
  callTool,
  childrenOf,
  initialize,
  killTree,
  realServerCases,
  serversOn,
  toolJson,
  until,
} from "./support/mcp-session.ts";

const LOCK_MESSAGE = "another velesdb-memory process holds";
const { skip, server, sandbox, client } = realServerCases("the shared-memory cases");

const working = (goal: string) => ({ goal });
const storeOf = (env: Record<string, string>) => path.join(env.HOME!, ".velesdb-memory");

/**
 * rememberWhileStopped(name, id, fact) → a front whose `remember` (id) is surely in flight: the
 * server is stopped (SIGSTOP) before the request is sent, so whatever dies next, it never ran.
 */
async function rememberWhileStopped(name: string, id: string, fact: string) {
  const box = sandbox(name);
  const front = client(box.env);
  await initialize(front);
  const [broker] = brokersOf(box.stateDir);
  const [child] = childrenOf(broker!);
  process.kill(child!, "SIGSTOP");
  front.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "remember", arguments: { fact } } });
  await Bun.sleep(300);
  return { box, front, broker: broker!, child: child! };
}

describe.skipIf(skip)("the real velesdb-memory 0.17.0 behind velesdb-hooks mcp", () => {
  test("negative control: two plain velesdb-memory processes on one store, the second exits with the lock message", async () => {
    const box = sandbox("plain");
    const env = { ...box.env, VELESDB_MEMORY_PATH: storeOf(box.env) };
    const first = Bun.spawn([server], { env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    try {
      // The first holds the store once it answers initialize.
      (first.stdin as import("bun").FileSink).write(
        `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })}\n`,
      );
      (first.stdin as import("bun").FileSink).flush();
      const reader = (first.stdout as ReadableStream<Uint8Array>).getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain('"serverInfo"');
      const second = Bun.spawnSync([server], { env, stdin: "pipe", stderr: "pipe", timeout: 20_000 });
      expect(second.exitCode).toBe(1);
      expect(second.stderr.toString()).toContain(`[velesdb-memory] ${LOCK_MESSAGE} `);
    } finally {
      first.kill("SIGKILL");
    }
  }, 30_000);

  test("four fronts at once on one store: each initializes, lists the tools, saves, loads and recalls; one server runs", async () => {
    const box = sandbox("four");
    const fronts = [0, 1, 2, 3].map(() => client(box.env));
    const results = await Promise.all(
      fronts.map(async (front, i) => {
        const init = await initialize(front);
        const tools = await front.request("tools/list");
        // Same request id in every client: the broker keeps them apart.
        const saved = await callTool(
          front,
          "save_working_context",
          { project: "shared", session: `s${i}`, working: working(`goal of session ${i}`) },
          7,
        );
        const loaded = await callTool(front, "load_working_context", { project: "shared", session: `s${i}` }, 8);
        const recalled = await callTool(front, "recall_fused", { query: "goal of session", k: 3 }, 9);
        return { init, tools, saved, loaded, recalled };
      }),
    );
    for (const [i, r] of results.entries()) {
      expect(r.init.result.serverInfo).toEqual({ name: "velesdb-memory", version: "0.17.0" });
      expect(r.init.result.protocolVersion).toBe("2025-06-18");
      expect(r.tools.result.tools.length).toBe(27);
      expect(r.saved.result.isError).not.toBe(true);
      expect(JSON.stringify(toolJson(r.loaded))).toContain(`goal of session ${i}`);
      expect(r.recalled.result.isError).not.toBe(true);
    }
    // One broker, one server for the four sessions.
    expect(brokersOf(box.stateDir).length).toBe(1);
    const [broker] = brokersOf(box.stateDir);
    expect(childrenOf(broker!).length).toBe(1);
    expect(serversOn(server, storeOf(box.env))).toEqual(childrenOf(broker!));
    expect(readMcpStatus(box.env)).toMatchObject({ state: "running", pid: broker, store: storeOf(box.env), server });
    // Owner-only: the directory 0700, the socket and the status file 0600.
    const dir = path.join(box.stateDir, "mcp");
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    const modes = Object.fromEntries(
      fs.readdirSync(dir).map((f) => [f.replace(/^m[0-9-]+/, ""), fs.lstatSync(path.join(dir, f)).mode & 0o777]),
    );
    expect(modes).toEqual({ ".sock": 0o600, ".status.json": 0o600, ".log": 0o600, ".front.json": 0o600 });
  }, 90_000);

  test("initialize: a known protocolVersion is echoed per client, an unknown one gets the server's (as velesdb-memory itself answers)", async () => {
    const box = sandbox("versions");
    const [a, b] = [client(box.env), client(box.env)];
    expect((await initialize(a, "2024-11-05")).result.protocolVersion).toBe("2024-11-05");
    expect((await initialize(b, "2099-01-01")).result.protocolVersion).toBe("2025-11-25");
    expect((await a.request("ping")).result).toEqual({});
  }, 60_000);

  test("the ~127 KB tools/list line and a 200 KB request line pass whole", async () => {
    const box = sandbox("large");
    const front = client(box.env);
    await initialize(front);
    const tools = await front.request("tools/list");
    expect(JSON.stringify(tools).length).toBeGreaterThan(100_000);
    const big = "x".repeat(200_000);
    const saved = await callTool(front, "remember", { fact: `large ${big}` });
    // Whatever the server says of it (stored, or refused as too large), it said it to this request.
    expect(saved.result ?? saved.error).toBeDefined();
  }, 60_000);

  test("the server's bytes pass as they are: a u64 id keeps every digit (a JSON round trip would round it)", async () => {
    const box = sandbox("bytes");
    const front = client(box.env);
    await initialize(front);
    await callTool(front, "remember", { fact: "exact digits", metadata: { project: "p" } });
    const recalled = await callTool(front, "recall_fused", { query: "exact digits", k: 1 }, "exact");
    expect(recalled.result.isError).not.toBe(true);
    const line = front.rawLines().find((l) => l.includes('"id":"exact"'))!;
    const idStr = /\\"id_str\\":\\"(\d+)\\"/.exec(line)?.[1];
    expect(idStr).toBeDefined();
    // The id as a JSON number in structuredContent, digit for digit the id_str.
    expect(line).toContain(`"id":${idStr}`);
    // Positive control: this id is past 2^53, where a round trip through a JS number changes it.
    expect(String(Number(idStr))).not.toBe(idStr);
  }, 60_000);

  test("the broker killed mid-request: one error for the request, none re-sent (the fact is not in the store), the next request reaches a fresh broker", async () => {
    const { box, front, broker, child } = await rememberWhileStopped("broker-death", "save-1", "counted fact 41");
    killTree(broker);
    const answer = await front.waitFor((m) => m.id === "save-1");
    expect(answer.error.message).toContain("velesdb-memory stopped");
    expect(await until(() => !alive(broker) && !alive(child), 5000)).toBe(true);
    const listed = await callTool(front, "list_memories", { limit: 50 });
    expect(JSON.stringify(toolJson(listed))).not.toContain("counted fact 41");
    await Bun.sleep(300);
    expect(front.answers("save-1").length).toBe(1);
    expect(brokersOf(box.stateDir)).not.toContain(broker);
  }, 60_000);

  test("the server killed mid-request: the broker answers one error, the front adds none, the next save applies once", async () => {
    const { box, front, child } = await rememberWhileStopped("child-death", "save-2", "counted fact 42");
    process.kill(child, "SIGKILL");
    const answer = await front.waitFor((m) => m.id === "save-2");
    expect(answer.error.message).toContain("velesdb-memory stopped");
    expect(readMcpStatus(box.env).state).not.toBe("running");
    const again = await callTool(front, "remember", { fact: "counted fact 43" });
    expect(again.error).toBeUndefined();
    expect(again.result.isError).not.toBe(true);
    const facts = JSON.stringify(toolJson(await callTool(front, "list_memories", { limit: 50 })));
    expect(facts).not.toContain("counted fact 42");
    expect(facts.split("counted fact 43").length - 1).toBe(1);
    await Bun.sleep(300);
    expect(front.answers("save-2").length).toBe(1);
  }, 60_000);

  test("notifications/cancelled reaches the server under the broker's id; the cancelled request gets no answer, the next one does", async () => {
    const box = sandbox("cancel");
    // rmcp logs each cancellation it honours ("cancelled", with the id it knows) at info.
    const front = client({ ...box.env, VELESDB_MEMORY_LOG: "rmcp=info" });
    await initialize(front);
    const [broker] = brokersOf(box.stateDir);
    const [child] = childrenOf(broker!);
    process.kill(child!, "SIGSTOP");
    front.send({ jsonrpc: "2.0", id: "c1", method: "tools/call", params: { name: "list_memories", arguments: {} } });
    front.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "c1", reason: "test" } });
    await Bun.sleep(200);
    process.kill(child!, "SIGCONT");
    const after = await front.request("tools/list");
    expect(after.result.tools.length).toBe(27);
    await Bun.sleep(300);
    expect(front.answers("c1")).toEqual([]);
    const log = fs.readFileSync(
      fs
        .readdirSync(path.join(box.stateDir, "mcp"))
        .filter((f) => f.endsWith(".log"))
        .map((f) => path.join(box.stateDir, "mcp", f))[0]!,
      "utf8",
    );
    expect(log).not.toContain('"c1"');
    // The server honoured it under the number the broker gave the request (rmcp: `cancelled id=N`).
    expect(log).toMatch(/rmcp::service: cancelled id=\d+ reason="test"/);
  }, 60_000);

  test("a client that disconnects mid-request leaves the others served", async () => {
    const box = sandbox("disconnect");
    const [a, b] = [client(box.env), client(box.env)];
    await Promise.all([initialize(a), initialize(b)]);
    a.send({ jsonrpc: "2.0", id: 5, method: "tools/list" });
    a.proc.kill("SIGKILL");
    const answer = await callTool(b, "list_working_contexts", { project: "shared" }, 5);
    expect(answer.result.isError).not.toBe(true);
  }, 60_000);

  test("idle exit: the broker and its server leave when the last client has gone for the grace period; status absent", async () => {
    const box = sandbox("idle", 500);
    const front = client(box.env);
    await initialize(front);
    const [broker] = brokersOf(box.stateDir);
    const [child] = childrenOf(broker!);
    expect(await front.close()).toBe(0);
    expect(alive(broker!)).toBe(true); // not before the grace
    expect(await until(() => !alive(broker!) && !alive(child!), 10_000)).toBe(true);
    expect(readMcpStatus(box.env).state).toBe("absent");
    expect(fs.readdirSync(path.join(box.stateDir, "mcp")).filter((f) => f.endsWith(".sock"))).toEqual([]);
  }, 30_000);

  test("two fronts starting at the same moment: exactly one broker; a stale socket of a killed broker is replaced", async () => {
    const box = sandbox("race");
    const fronts = [client(box.env), client(box.env)];
    await Promise.all(fronts.map((f) => initialize(f)));
    expect(brokersOf(box.stateDir).length).toBe(1);
    const [broker] = brokersOf(box.stateDir);
    for (const f of fronts) f.proc.kill("SIGKILL");
    killTree(broker!);
    expect(await until(() => serversOn(server, storeOf(box.env)).length === 0 && !alive(broker!), 5000)).toBe(true);
    const socket = fs.readdirSync(path.join(box.stateDir, "mcp")).find((f) => f.endsWith(".sock"));
    expect(socket).toBeDefined(); // left behind by the killed broker
    const next = client(box.env);
    expect((await initialize(next)).result.serverInfo.name).toBe("velesdb-memory");
    expect(brokersOf(box.stateDir).length).toBe(1);
    expect(brokersOf(box.stateDir)[0]).not.toBe(broker);
  }, 60_000);

  test("a locked store: the front says why in one stderr line and exits 1 within its bound; the status says failed", async () => {
    const box = sandbox("locked");
    const store = storeOf(box.env);
    const holder = Bun.spawn([server], {
      env: { ...box.env, VELESDB_MEMORY_PATH: store },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      expect(await until(() => fs.existsSync(store) && fs.readdirSync(store).length > 0, 10_000)).toBe(true);
      await Bun.sleep(500);
      const started = Date.now();
      const front = client(box.env);
      const code = await front.proc.exited;
      expect(code).toBe(1);
      expect(Date.now() - started).toBeLessThan(16_000);
      const lines = front.stderr().trim().split("\n");
      expect(lines.length).toBe(1);
      expect(lines[0]).toContain(LOCK_MESSAGE);
      const status = readMcpStatus(box.env);
      expect(status.state).toBe("failed");
      expect(status.state === "failed" && status.cause).toContain(LOCK_MESSAGE);
    } finally {
      holder.kill("SIGKILL");
    }
  }, 40_000);
});
