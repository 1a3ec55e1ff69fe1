// A mock of the two model APIs the real hosts call, bound to 127.0.0.1 on a random port.
//
//   Claude Code → POST <ANTHROPIC_BASE_URL>/v1/messages   (stream:true, Anthropic SSE)
//   Codex CLI   → POST <base_url>/responses                (OpenAI Responses SSE)
//
// Each scenario gets its own URL prefix `/s/<scenario>` (Claude: ANTHROPIC_BASE_URL =
// http://127.0.0.1:PORT/s/<scenario>; Codex: base_url = http://127.0.0.1:PORT/s/<scenario>/v1),
// so concurrent cases never see each other's turns or log entries.
//
// Replies are picked statelessly from the request alone, so host retries and hook
// continuations simply take the next turn:
//   1. the first turn whose `match` regex matches the request's flattened text wins;
//   2. otherwise the turns without `match`, indexed by the number of assistant turns already in
//      the request (Claude: assistant messages; Codex: assistant message / tool-call items),
//      clamped to the last one.
// Every request (including unknown routes, which get 404) is logged with its parsed body.

import * as net from "node:net";

export type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; name: string; input: unknown; id?: string }
  /** An extended-thinking block (streamed as thinking_delta, then signature_delta). */
  | { type: "thinking"; thinking: string; signature?: string };

/** One Anthropic reply: blocks + stop reason + the usage the reply reports. */
export interface ClaudeReply {
  blocks: Block[];
  stopReason?: "end_turn" | "tool_use";
  inputTokens?: number;
  outputTokens?: number;
}

/** One Responses-API reply: output items + the usage the reply reports. */
export interface CodexReply {
  items: unknown[];
  totalTokens?: number;
}

/** What turn picking reads from a logged request (and where it notes its choice). */
export interface PickedRequest {
  text: string;
  lastText: string;
  turnIndex: number;
  picked: string;
}

export interface Turn<R, Q extends PickedRequest = LoggedRequest> {
  /** Picks this turn whenever the request's flattened text matches (checked before indexing). */
  match?: RegExp;
  /** Same, tested on the last user message only (e.g. the summariser's prompt). */
  matchLast?: RegExp;
  /** A reply, or a function of the request giving one (it may wait: a Promise is awaited before answering). */
  reply: R | ((req: Q) => R | Promise<R>);
}

export interface Scenario {
  claude?: Turn<ClaudeReply>[];
  codex?: Turn<CodexReply>[];
}

export interface LoggedRequest {
  scenario: string;
  api: "anthropic" | "openai" | "unknown";
  method: string;
  path: string;
  body: any;
  /** Every string in the body, joined by newlines: what the model would read. */
  text: string;
  /** The strings of the last role:"user" message (Claude: hosts may append system messages after it). */
  lastText: string;
  /** Number of assistant turns already in the request (the turn index). */
  turnIndex: number;
  /** Which turn answered: "match:<i>", "index:<i>" or "none". */
  picked: string;
}

export const text = (t: string): ClaudeReply => ({ blocks: [{ type: "text", text: t }], stopReason: "end_turn" });
export const codexText = (t: string, totalTokens?: number): CodexReply => ({
  items: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: t }] }],
  totalTokens,
});

/** flatten(value) → every string inside value, newline-joined (keys excluded). */
export function flatten(value: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(value);
  return out.join("\n");
}

function lastUserMessage(list: unknown): unknown {
  if (!Array.isArray(list)) return undefined;
  for (let i = list.length - 1; i >= 0; i--) if (list[i]?.role === "user") return list[i];
  return undefined;
}

function claudeTurnIndex(body: any): number {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  return messages.filter((m: any) => m?.role === "assistant").length;
}

function codexTurnIndex(body: any): number {
  const input = Array.isArray(body?.input) ? body.input : [];
  return input.filter(
    (i: any) =>
      (i?.type === "message" && i?.role === "assistant") ||
      i?.type === "function_call" ||
      i?.type === "custom_tool_call" ||
      i?.type === "tool_search_call",
  ).length;
}

export function pick<R, Q extends PickedRequest>(
  turns: readonly Turn<R, Q>[] | undefined,
  req: Q,
): R | Promise<R> | undefined {
  if (!turns || turns.length === 0) return undefined;
  const matches = (t: Turn<R, Q>): boolean =>
    t.match?.test(req.text) === true || t.matchLast?.test(req.lastText) === true;
  const matched = turns.findIndex(matches);
  let turn: Turn<R, Q> | undefined;
  if (matched >= 0) {
    turn = turns[matched];
    req.picked = `match:${matched}`;
  } else {
    const indexed = turns.filter((t) => !t.match && !t.matchLast);
    if (indexed.length === 0) return undefined;
    const i = Math.min(req.turnIndex, indexed.length - 1);
    turn = indexed[i];
    req.picked = `index:${i}`;
  }
  return typeof turn!.reply === "function" ? (turn!.reply as (r: Q) => R | Promise<R>)(req) : (turn!.reply as R);
}

const sse = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

let counter = 0;
const nextId = (prefix: string): string => `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}`;

function anthropicStream(reply: ClaudeReply, model: string): string {
  const id = nextId("msg");
  const stopReason = reply.stopReason ?? (reply.blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
  const parts = [
    sse("message_start", {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: reply.inputTokens ?? 100,
          output_tokens: 1,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    }),
  ];
  reply.blocks.forEach((block, index) => {
    if (block.type === "text") {
      parts.push(
        sse("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }),
      );
      parts.push(
        sse("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "text_delta", text: block.text },
        }),
      );
    } else if (block.type === "thinking") {
      parts.push(
        sse("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        }),
      );
      parts.push(
        sse("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "thinking_delta", thinking: block.thinking },
        }),
      );
      parts.push(
        sse("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: block.signature ?? "mock-signature" },
        }),
      );
    } else {
      parts.push(
        sse("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: block.id ?? nextId("toolu"), name: block.name, input: {} },
        }),
      );
      parts.push(
        sse("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
        }),
      );
    }
    parts.push(sse("content_block_stop", { type: "content_block_stop", index }));
  });
  parts.push(
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      // Claude reads the final usage from message_delta (input_tokens included, as the real API sends).
      usage: {
        input_tokens: reply.inputTokens ?? 100,
        output_tokens: reply.outputTokens ?? 10,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    }),
  );
  parts.push(sse("message_stop", { type: "message_stop" }));
  return parts.join("");
}

function responsesStream(reply: CodexReply, model: string): string {
  const id = nextId("resp");
  const parts = [
    sse("response.created", { type: "response.created", response: { id, model, status: "in_progress", output: [] } }),
  ];
  reply.items.forEach((item, output_index) => {
    parts.push(sse("response.output_item.added", { type: "response.output_item.added", output_index, item }));
    parts.push(sse("response.output_item.done", { type: "response.output_item.done", output_index, item }));
  });
  const total = reply.totalTokens ?? 100;
  parts.push(
    sse("response.completed", {
      type: "response.completed",
      response: {
        id,
        model,
        status: "completed",
        output: reply.items,
        usage: {
          input_tokens: Math.max(total - 10, 0),
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: Math.min(10, total),
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: total,
        },
      },
    }),
  );
  return parts.join("");
}

/**
 * startTrapProxy() → a listener on 127.0.0.1 that logs the first line of whatever reaches it
 * (`escaped`) and answers 403: the mocks hand it to hosts as HTTP(S)_PROXY.
 */
export async function startTrapProxy(): Promise<{ readonly url: string; readonly escaped: string[]; close(): void }> {
  const escaped: string[] = [];
  const trap = net.createServer((socket) => {
    socket.once("data", (chunk) => {
      escaped.push(chunk.toString("latin1").split("\r\n")[0] ?? "");
      socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => trap.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(trap.address() as net.AddressInfo).port}`,
    escaped,
    close: () => void trap.close(),
  };
}

export interface ScenarioRequest {
  readonly url: URL;
  /** The `<scenario>` of a `/s/<scenario>/…` path ("" without that prefix). */
  readonly scenario: string;
  /** The path after the scenario prefix (the whole path without one). */
  readonly rest: string;
  /** A POST body parsed as JSON, or its raw text when it is not JSON; undefined when empty. */
  readonly body: any;
}

/** readScenarioRequest(POST /s/a/v1/messages {…}) → { scenario: "a", rest: "/v1/messages", body }, as every mock routes. */
export async function readScenarioRequest(request: Request): Promise<ScenarioRequest> {
  const url = new URL(request.url);
  const m = /^\/s\/([^/]+)(\/.*)$/.exec(url.pathname);
  const raw = request.method === "POST" ? await request.text() : "";
  let body: any = raw;
  try {
    body = raw ? JSON.parse(raw) : undefined;
  } catch {
    /* keep the raw text */
  }
  return { url, scenario: m ? decodeURIComponent(m[1]!) : "", rest: m ? m[2]! : url.pathname, body };
}

export interface MockLlm {
  readonly port: number;
  /**
   * A trap proxy on 127.0.0.1: hosts get it as HTTP(S)_PROXY with NO_PROXY=127.0.0.1, so any
   * request to another address lands here (logged, then the connection is closed) instead of
   * leaving the machine. A clean run leaves `escaped()` empty.
   */
  readonly proxyUrl: string;
  escaped(): string[];
  /** Truncates the trap's log to its first n entries (after a deliberate self-test). */
  forgetEscaped(n: number): void;
  /** Base URL for Claude (ANTHROPIC_BASE_URL) of a scenario. */
  claudeBaseUrl(scenario: string): string;
  /** Base URL for a Codex model provider (`base_url`) of a scenario. */
  codexBaseUrl(scenario: string): string;
  script(scenario: string, turns: Scenario): void;
  /** The requests a scenario received, in arrival order. */
  requests(scenario: string): LoggedRequest[];
  /** Every request received, any scenario or route. */
  all(): LoggedRequest[];
  stop(): void;
}

export async function startMockLlm(): Promise<MockLlm> {
  const scenarios = new Map<string, Scenario>();
  const log: LoggedRequest[] = [];
  const trap = await startTrapProxy();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(request) {
      const { url, scenario, rest, body } = await readScenarioRequest(request);
      const api = rest === "/v1/messages" ? "anthropic" : rest === "/v1/responses" ? "openai" : "unknown";
      const entry: LoggedRequest = {
        scenario,
        api,
        method: request.method,
        path: url.pathname + url.search,
        body,
        text: flatten(body),
        lastText: flatten(
          lastUserMessage(api === "anthropic" ? body?.messages : api === "openai" ? body?.input : undefined),
        ),
        turnIndex: api === "anthropic" ? claudeTurnIndex(body) : api === "openai" ? codexTurnIndex(body) : 0,
        picked: "none",
      };
      log.push(entry);
      const script = scenarios.get(scenario);
      if (request.method !== "POST" || api === "unknown" || !script) {
        return new Response(
          JSON.stringify({ error: { type: "not_found", message: `mock: no route ${url.pathname}` } }),
          {
            status: 404,
            headers: { "content-type": "application/json" },
          },
        );
      }
      const model = typeof body?.model === "string" ? body.model : "mock-model";
      if (api === "anthropic") {
        const reply = (await pick(script.claude, entry)) ?? text("mock: no scripted turn");
        return new Response(anthropicStream(reply, model), { headers: { "content-type": "text/event-stream" } });
      }
      const reply = (await pick(script.codex, entry)) ?? codexText("mock: no scripted turn");
      return new Response(responsesStream(reply, model), { headers: { "content-type": "text/event-stream" } });
    },
  });
  const port = server.port as number;
  const base = `http://127.0.0.1:${port}`;
  return {
    port,
    proxyUrl: trap.url,
    escaped: () => [...trap.escaped],
    forgetEscaped: (n) => void trap.escaped.splice(n),
    claudeBaseUrl: (s) => `${base}/s/${encodeURIComponent(s)}`,
    codexBaseUrl: (s) => `${base}/s/${encodeURIComponent(s)}/v1`,
    script: (s, turns) => void scenarios.set(s, turns),
    requests: (s) => log.filter((r) => r.scenario === s),
    all: () => [...log],
    stop: () => {
      server.stop(true);
      trap.close();
    },
  };
}
