// Local stand-ins for the network the freshness check talks to: a velesdb-memory daemon on
// 127.0.0.1 with a self-signed certificate (made at test time with openssl), and a registry
// answering the latest published version. Nothing here leaves the loopback interface.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const HAS_OPENSSL = Bun.spawnSync(["sh", "-c", "command -v openssl"]).exitCode === 0;

let cert: { cert: string; key: string } | undefined;

/** selfSignedCertificate() → a throwaway certificate for 127.0.0.1 (one per test file). */
export function selfSignedCertificate(): { cert: string; key: string } {
  if (cert) return cert;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vh-cert-"));
  const keyFile = path.join(dir, "key.pem");
  const certFile = path.join(dir, "cert.pem");
  const made = Bun.spawnSync([
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=127.0.0.1",
    "-addext",
    "subjectAltName=IP:127.0.0.1",
    "-keyout",
    keyFile,
    "-out",
    certFile,
  ]);
  if (made.exitCode !== 0) throw new Error(`openssl failed: ${made.stderr.toString()}`);
  cert = { cert: fs.readFileSync(certFile, "utf8"), key: fs.readFileSync(keyFile, "utf8") };
  fs.rmSync(dir, { recursive: true, force: true });
  return cert;
}

export type DaemonMode = "json" | "sse" | "hangs" | "fails" | "not-mcp";

export interface LocalServer {
  readonly url: string;
  /** How many requests arrived (DELETEs that close MCP sessions included). */
  readonly requests: string[];
  stop(): void;
}

/** startDaemon("0.4.1", "sse") → an HTTPS MCP endpoint answering `initialize` with that version. */
export function startDaemon(version: string, mode: DaemonMode = "json"): LocalServer {
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: selfSignedCertificate(),
    async fetch(request) {
      requests.push(request.method);
      if (request.method === "DELETE") return new Response(null, { status: 204 });
      const body = (await request.json()) as { id?: number; method?: string };
      const answer = {
        jsonrpc: "2.0",
        id: body.id,
        result: { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "velesdb-memory", version } },
      };
      switch (mode) {
        case "hangs":
          return new Promise<Response>(() => {});
        case "fails":
          return new Response("no", { status: 500 });
        case "not-mcp":
          return new Response("<html>hello</html>", { headers: { "content-type": "text/html" } });
        case "sse": {
          // The stream stays open after the message, as a Streamable HTTP server may keep it.
          const stream = new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode(`event: message\ndata: ${JSON.stringify(answer)}\n\n`));
            },
          });
          return new Response(stream, { headers: { "content-type": "text/event-stream", "mcp-session-id": "s-1" } });
        }
        default:
          return Response.json(answer, { headers: { "mcp-session-id": "s-1" } });
      }
    },
  });
  return { url: `https://127.0.0.1:${server.port}/mcp`, requests, stop: () => server.stop(true) };
}

/** startRegistry("0.5.0") → an HTTP endpoint answering like crates.io; "hangs" never answers. */
export function startRegistry(version: string | "hangs" | "fails"): LocalServer {
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      requests.push(request.method);
      if (version === "hangs") return new Promise<Response>(() => {});
      if (version === "fails") return new Response("down", { status: 503 });
      return Response.json({ crate: { name: "velesdb-memory", max_version: version, max_stable_version: version } });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/api/v1/crates/velesdb-memory`,
    requests,
    stop: () => server.stop(true),
  };
}

/** A port nothing listens on (bound, read, released). */
export function closedPortUrl(): string {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = server.port;
  server.stop(true);
  return `https://127.0.0.1:${port}/mcp`;
}
