// The real velesdb-memory, for the suites that check a double against it, run on it, or show a
// rule against the server itself (docs/real-server.md). `.ci/run` builds crates.io velesdb-memory 0.17.0
// with `--features http` into a cache outside the clone and exports VELESDB_MEMORY_BIN_REAL
// (docs/real-server.md). On a developer's machine without it those suites skip, saying so once;
// with CI=true they FAIL instead, so a CI run can never pass without having run them. Also here:
// a stdio client for it (RealServer), newline-delimited JSON-RPC as rmcp's stdio transport
// speaks it, each instance with a private HOME and store, removed by stop().
import { describe, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** The release every double is derived from (test/e2e/velesdb-memory-wire.json says how). */
export const REAL_VERSION = "0.17.0";
/** Where that release came from: the crate's .cargo_vcs_info.json names the VelesDB commit. */
export const REAL_SOURCE =
  "crates.io velesdb-memory 0.17.0 (packaged from VelesDB a9eeabadcc96777cc42770fcc1492b472217e726), built with --features http";

export type RealBinary = { readonly ok: true; readonly bin: string } | { readonly ok: false; readonly why: string };

/**
 * findRealVelesdbMemory(env) → the binary VELESDB_MEMORY_BIN_REAL names when it is absolute and
 * answers `--version` with velesdb-memory 0.17.0; otherwise why not, in one line.
 */
export function findRealVelesdbMemory(env: NodeJS.ProcessEnv = process.env): RealBinary {
  const bin = env.VELESDB_MEMORY_BIN_REAL;
  if (!bin)
    return { ok: false, why: "VELESDB_MEMORY_BIN_REAL is not set (.ci/run builds velesdb-memory 0.17.0 and sets it)" };
  if (!path.isAbsolute(bin))
    return { ok: false, why: `VELESDB_MEMORY_BIN_REAL=${JSON.stringify(bin)} is not an absolute path` };
  let said = "";
  try {
    const run = Bun.spawnSync([bin, "--version"], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      timeout: 10_000,
      env: { PATH: "/usr/bin:/bin" },
    });
    said = run.stdout.toString().trim();
  } catch (error) {
    return {
      ok: false,
      why: `VELESDB_MEMORY_BIN_REAL=${JSON.stringify(bin)} does not run (${(error as Error).message})`,
    };
  }
  if (said !== `velesdb-memory ${REAL_VERSION}`) {
    return {
      ok: false,
      why: `VELESDB_MEMORY_BIN_REAL=${JSON.stringify(bin)} says ${JSON.stringify(said)}, not "velesdb-memory ${REAL_VERSION}" (the doubles are derived from ${REAL_VERSION})`,
    };
  }
  return { ok: true, bin };
}

const found = findRealVelesdbMemory();
const warned = new Set<string>();

/** realBinary() → the real binary's path; only call it inside a test of describeWithReal. */
export function realBinary(): string {
  if (!found.ok) throw new Error(found.why);
  return found.bin;
}

/** The real binary, when VELESDB_MEMORY_BIN_REAL names a velesdb-memory 0.17.0 (checked above); else undefined. */
export const REAL_VELESDB_MEMORY = found.ok ? found.bin : undefined;

/** requireRealServerUnderCi(test, what) → a failing test when CI=true and no real server is at hand. */
export function requireRealServerUnderCi(test: (name: string, fn: () => void) => void, what: string): void {
  if (found.ok || process.env.CI !== "true") return;
  test("the real velesdb-memory is required under CI", () => {
    throw new Error(`${found.why}: ${what} cannot be shown against velesdb-memory ${REAL_VERSION}`);
  });
}

/**
 * describeWithReal(name, body) → `describe(name, body)` when the real binary is at hand. Without
 * it: under CI=true one failing test naming why; elsewhere the block is skipped, with one warning.
 * `body` must only reach the binary inside its tests (realBinary()), never while collecting.
 */
export function describeWithReal(name: string, body: () => void): void {
  if (found.ok) {
    describe(name, body);
    return;
  }
  if (process.env.CI === "true") {
    describe(name, () => {
      test("the real velesdb-memory is there (CI=true: this suite may not skip)", () => {
        throw new Error(found.why);
      });
    });
    return;
  }
  if (!warned.has(found.why)) {
    warned.add(found.why);
    console.warn(`skipped, needs the real velesdb-memory: ${found.why} (with CI=true this fails)`);
  }
  describe.skip(name, body);
}

export interface RpcAnswer {
  readonly result?: { readonly isError?: boolean; readonly structuredContent?: Record<string, unknown> };
  readonly error?: { readonly code: number; readonly message: string };
}

export class RealServer {
  private readonly child: ReturnType<typeof Bun.spawn<"pipe", "pipe", "ignore">>;
  private readonly reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> };
  private buffer = "";
  private nextId = 0;
  readonly dir: string;

  private constructor(binary: string) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), "vh-real-server-"));
    this.child = Bun.spawn([binary], {
      env: {
        PATH: "/usr/bin:/bin",
        HOME: this.dir,
        VELESDB_MEMORY_PATH: path.join(this.dir, "store"),
        VELESDB_MEMORY_QUIET: "1",
      },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    });
    this.reader = this.child.stdout.getReader();
  }

  /** RealServer.start() → a server past initialize, on a store of its own. */
  static async start(binary = REAL_VELESDB_MEMORY!): Promise<RealServer> {
    const server = new RealServer(binary);
    await server.call("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "velesdb-hooks-test", version: "0" },
    });
    server.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    return server;
  }

  async call(method: string, params: unknown): Promise<RpcAnswer> {
    const id = ++this.nextId;
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    this.child.stdin.flush();
    for (;;) {
      const cut = this.buffer.indexOf("\n");
      if (cut >= 0) {
        const message = JSON.parse(this.buffer.slice(0, cut)) as RpcAnswer & { id?: number };
        this.buffer = this.buffer.slice(cut + 1);
        if (message.id === id) return message;
        continue;
      }
      const chunk = await this.reader.read();
      if (chunk.done) throw new Error("velesdb-memory exited");
      this.buffer += new TextDecoder().decode(chunk.value);
    }
  }

  /** tool("save_working_context", {...}) → the tool's answer. */
  tool(name: string, args: Record<string, unknown>): Promise<RpcAnswer> {
    return this.call("tools/call", { name, arguments: args });
  }

  stop(): void {
    this.child.kill("SIGKILL");
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
