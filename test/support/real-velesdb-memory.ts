// A stdio client for the REAL velesdb-memory 0.17.0 (VELESDB_MEMORY_BIN_REAL), for suites that
// show a rule against the server itself: newline-delimited JSON-RPC, as rmcp's stdio transport
// speaks it. Each instance owns a private HOME and store, removed by stop().
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const REAL_VELESDB_MEMORY = process.env.VELESDB_MEMORY_BIN_REAL;

/** requireRealServerUnderCi(test, what) → a failing test when CI=true and no real server is named. */
export function requireRealServerUnderCi(test: (name: string, fn: () => void) => void, what: string): void {
  if (REAL_VELESDB_MEMORY || process.env.CI !== "true") return;
  test("the real velesdb-memory is required under CI", () => {
    throw new Error(`VELESDB_MEMORY_BIN_REAL is not set: ${what} cannot be shown against velesdb-memory 0.17.0`);
  });
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
      env: { PATH: "/usr/bin:/bin", HOME: this.dir, VELESDB_MEMORY_PATH: path.join(this.dir, "store"), VELESDB_MEMORY_QUIET: "1" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    });
    this.reader = this.child.stdout.getReader();
  }

  /** RealServer.start() → a server past initialize, on a store of its own. */
  static async start(binary = REAL_VELESDB_MEMORY!): Promise<RealServer> {
    const server = new RealServer(binary);
    await server.call("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "velesdb-hooks-test", version: "0" } });
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
