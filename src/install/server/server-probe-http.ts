// The HTTP half of the server probe (server-probe.ts; the conversation itself: server-conversation.ts): `/health`, then the MCP conversation over
// Streamable HTTP, each within what is left of the bound. velesdb-memory 0.17.0 built with
// `--features http` serves `/health` → `OK` and `/mcp` with stateful sessions
// (`mcp-session-id`; src/http.rs:377-379,437-439), HTTPS by default with a certificate of its
// own local CA (src/tls.rs:134-149): accepted on a loopback host only, as the freshness probe
// does (src/core/freshness.ts). Each failure is one cause: nothing listening, TLS refused (and
// why), an HTTP status, or no MCP answer. The URL is shown without query or credentials; the
// entry's headers are sent (the client sends them) and never shown.
import { isLoopback, mcpMessages, readAnswerUntil } from "../../core/freshness.ts";
import { isJsonObject, type JsonObject } from "../entries/entries.ts";
import {
  INITIALIZE,
  INITIALIZED,
  MEMORY_STATUS,
  resultFrom,
  TOOLS_LIST,
  type ProbeResult,
  type ServerSpec,
} from "./server-conversation.ts";

const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export async function probeHttpServer(
  spec: Extract<ServerSpec, { kind: "http" }>,
  timeoutMs: number,
): Promise<ProbeResult> {
  let url: URL;
  try {
    url = new URL(spec.url);
  } catch {
    return { ok: false, cause: "its URL does not parse" };
  }
  const where = `${url.protocol}//${url.host}`;
  const deadline = Date.now() + timeoutMs;
  const loopback = isLoopback(url.hostname);
  const request = (target: URL, init: RequestInit & { tls?: unknown }): Promise<Response> =>
    fetch(target, {
      ...init,
      redirect: "manual",
      signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
      tls: { rejectUnauthorized: !loopback },
    } as RequestInit);

  let health: Response;
  try {
    health = await request(new URL("/health", url), { method: "GET", headers: spec.headers });
    await health.arrayBuffer().catch(() => undefined);
  } catch (error) {
    return { ok: false, cause: transportCause(error, where, timeoutMs) };
  }
  if (!health.ok)
    return {
      ok: false,
      cause: `${where}/health answered HTTP ${health.status}: not a velesdb-memory daemon, or not this URL`,
    };

  const answers = new Map<number, JsonObject>();
  let session: string | undefined;
  const post = async (message: JsonObject): Promise<JsonObject | undefined> => {
    const headers: Record<string, string> = {
      ...spec.headers,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    if (session) headers["mcp-session-id"] = session;
    const response = await request(url, { method: "POST", headers, body: JSON.stringify(message) });
    session ??= response.headers.get("mcp-session-id") ?? undefined;
    if (typeof message.id !== "number") {
      await response.arrayBuffer().catch(() => undefined);
      return undefined;
    }
    if (!response.ok) throw new HttpStatus(response.status);
    const id = message.id;
    return response.body
      ? readAnswerUntil(response.body, MAX_ANSWER_BYTES, (body) => messageFrom(body, id))
      : undefined;
  };
  try {
    for (const message of [INITIALIZE, INITIALIZED, TOOLS_LIST, MEMORY_STATUS] as JsonObject[]) {
      const answer = await post(message);
      if (typeof message.id !== "number") continue;
      if (answer === undefined) {
        if (message.id === 3 && answers.has(2)) break; // an older server without memory_status
        return { ok: false, cause: `${where} answered ${message.method} without an MCP message` };
      }
      answers.set(message.id, answer);
      if (isJsonObject(answer.error)) break;
    }
  } catch (error) {
    if (error instanceof HttpStatus)
      return {
        ok: false,
        cause: `${url.protocol}//${url.host}${url.pathname} answered HTTP ${error.status} to an MCP request: not an MCP endpoint at this path`,
      };
    return { ok: false, cause: transportCause(error, where, timeoutMs) };
  } finally {
    if (session)
      void request(url, { method: "DELETE", headers: { ...spec.headers, "mcp-session-id": session } }).catch(
        () => undefined,
      );
  }
  return resultFrom(answers);
}

class HttpStatus extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

/** transportCause(error) → nothing listening / TLS refused (code) / no answer within the bound. */
function transportCause(error: unknown, where: string, timeoutMs: number): string {
  const code = String((error as { code?: unknown })?.code ?? "");
  const name = String((error as { name?: unknown })?.name ?? "");
  if (name === "TimeoutError" || name === "AbortError")
    return `${where} did not answer within ${(timeoutMs / 1000).toFixed(1)} s`;
  if (code === "ConnectionRefused" || code === "ECONNREFUSED")
    return `nothing is listening at ${where} (connection refused): the daemon is not running`;
  // Bun: EPROTO when the port does not speak TLS ("Does the server speak TLS on this port?").
  if (code === "EPROTO")
    return `TLS refused at ${where}: the handshake failed (the server there speaks plain HTTP? then the URL needs http://)`;
  if (/CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY|HANDSHAKE/i.test(code))
    return `TLS refused at ${where} (${code}): ${where.startsWith("https:") ? "the certificate is not accepted (a self-signed one is accepted on a loopback host only)" : "the server speaks TLS: the URL needs https://"}`;
  if (code === "ECONNRESET" || code === "ConnectionClosed")
    return `${where} closed the connection${where.startsWith("http:") ? " (a TLS port, as velesdb-memory's daemon is by default? then the URL needs https://)" : ""}`;
  return `${where} could not be reached${code ? ` (${code})` : ""}`;
}

/** messageFrom(body, id) → the JSON-RPC answer with that id, from a JSON body or the SSE `data:` lines. */
function messageFrom(body: string, id: number): JsonObject | undefined {
  return mcpMessages(body).find((message): message is JsonObject => isJsonObject(message) && message.id === id);
}
