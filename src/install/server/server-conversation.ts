// What the server probe says to a velesdb-memory server and how it reads the answers, the same
// over both transports (server-probe.ts: stdio, server-probe-http.ts: Streamable HTTP): the
// three requests a session's first moments make, and the three answers reduced to a result.
// Apart from both probes so that neither imports the other for it.
import { VERSION } from "../../version.ts";
import { isJsonObject, type JsonObject } from "../entries/entries.ts";
import { printable } from "../paths.ts";

/** The tools the hook texts ask for: a server without them is not velesdb-memory as the hooks know it. */
export const TOOLS_THE_HOOKS_NAME = ["load_working_context", "save_working_context", "recall_fused"] as const;

/** What a client would run: the entry reduced to what starts or reaches the server. */
export type ServerSpec =
  | {
      readonly kind: "stdio";
      readonly command: string;
      readonly args: readonly string[];
      readonly env: Readonly<Record<string, string>>;
      readonly cwd: string;
    }
  | { readonly kind: "http"; readonly url: string; readonly headers: Readonly<Record<string, string>> };

export type ProbeResult =
  | {
      readonly ok: true;
      readonly version: string;
      readonly tools: number;
      readonly missing: readonly string[];
      readonly embedder: Embedder | undefined;
    }
  | { readonly ok: false; readonly cause: string };

export interface Embedder {
  readonly model: string;
  readonly semantic: boolean;
}

export const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "velesdb-hooks-doctor", version: VERSION },
  },
};
export const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };
export const TOOLS_LIST = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
export const MEMORY_STATUS = {
  jsonrpc: "2.0",
  id: 3,
  method: "tools/call",
  params: { name: "memory_status", arguments: {} },
};

/** What the three answers (by id) say, once all three are in; a JSON-RPC error becomes the cause. */
export function resultFrom(answers: ReadonlyMap<number, JsonObject>): ProbeResult {
  const init = answers.get(1)!;
  if (isJsonObject(init.error)) return { ok: false, cause: `initialize was refused: ${rpcError(init.error)}` };
  const info = isJsonObject(init.result) && isJsonObject(init.result.serverInfo) ? init.result.serverInfo : {};
  const version = `${printable(typeof info.name === "string" ? info.name.slice(0, 60) : "an unnamed server")} ${printable(typeof info.version === "string" ? info.version.slice(0, 40) : "(no version)")}`;
  const list = answers.get(2)!;
  if (isJsonObject(list.error))
    return { ok: false, cause: `${version} answered initialize but refused tools/list: ${rpcError(list.error)}` };
  const tools =
    isJsonObject(list.result) && Array.isArray(list.result.tools)
      ? list.result.tools.filter(isJsonObject).map((t) => t.name)
      : [];
  const missing = TOOLS_THE_HOOKS_NAME.filter((name) => !tools.includes(name));
  const status = answers.get(3);
  const content =
    status && isJsonObject(status.result) && isJsonObject(status.result.structuredContent)
      ? status.result.structuredContent
      : undefined;
  const embedder =
    content && isJsonObject(content.embedder) && typeof content.embedder.model === "string"
      ? { model: printable(content.embedder.model.slice(0, 80)), semantic: content.embedder.semantic === true }
      : undefined;
  return { ok: true, version, tools: tools.length, missing, embedder };
}

const rpcError = (error: JsonObject): string =>
  printable(
    `${typeof error.code === "number" ? `${error.code} ` : ""}${typeof error.message === "string" ? error.message.slice(0, 200) : ""}`.trim(),
  );
