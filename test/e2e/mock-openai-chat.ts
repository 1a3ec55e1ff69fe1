// A mock of the OpenAI Chat Completions API (`POST …/chat/completions`, streamed as SSE), bound
// to 127.0.0.1 on a random port, for hosts that speak it: GitHub Copilot CLI with
// COPILOT_PROVIDER_TYPE=openai calls `<COPILOT_PROVIDER_BASE_URL>/chat/completions`.
//
// Same conventions as mock-llm.ts: each scenario has its own URL prefix `/s/<scenario>`, and
// replies are picked statelessly from the request — the first turn whose `match` regex matches
// the request's flattened text, else the unmatched turns indexed by the number of assistant
// messages already in `messages` (clamped to the last), so hook continuations take the next
// turn. Every request, known route or not, is logged.
import { flatten, type LoggedRequest } from "./mock-llm.ts";

/** A function call (JSON arguments) or, with `input`, a freeform custom-tool call (apply_patch). */
export type ChatToolCall =
  | { readonly name: string; readonly arguments: Record<string, unknown> }
  | { readonly name: string; readonly input: string };

/** One assistant reply: text and/or tool calls. */
export interface ChatReply {
  readonly text?: string;
  readonly toolCalls?: readonly ChatToolCall[];
}

export interface ChatTurn {
  readonly match?: RegExp;
  readonly reply: ChatReply;
}

export const chatText = (text: string): ChatReply => ({ text });
export const chatTool = (name: string, args: Record<string, unknown>): ChatReply => ({ toolCalls: [{ name, arguments: args }] });
export const chatCustomTool = (name: string, input: string): ChatReply => ({ toolCalls: [{ name, input }] });

export interface MockOpenAiChat {
  readonly port: number;
  /** COPILOT_PROVIDER_BASE_URL for a scenario. */
  baseUrl(scenario: string): string;
  script(scenario: string, turns: readonly ChatTurn[]): void;
  /** The requests a scenario received, in arrival order (`api` is "openai" for chat completions). */
  requests(scenario: string): LoggedRequest[];
  stop(): void;
}

function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return "";
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "user") return flatten(messages[i]?.content);
  return "";
}

function pickTurn(turns: readonly ChatTurn[], entry: LoggedRequest): ChatReply {
  const matched = turns.findIndex((t) => t.match?.test(entry.text));
  if (matched >= 0) {
    entry.picked = `match:${matched}`;
    return turns[matched]!.reply;
  }
  const indexed = turns.filter((t) => !t.match);
  if (indexed.length === 0) return chatText("mock: no scripted turn");
  const i = Math.min(entry.turnIndex, indexed.length - 1);
  entry.picked = `index:${i}`;
  return indexed[i]!.reply;
}

let callCounter = 0;

function wireToolCall(call: ChatToolCall): Record<string, unknown> {
  const id = `call_${(++callCounter).toString(36)}`;
  if ("input" in call) return { id, type: "custom", custom: { name: call.name, input: call.input } };
  return { id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } };
}

function chatStream(reply: ChatReply, model: string): string {
  const id = `chatcmpl_${Date.now().toString(36)}`;
  const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  const parts = [chunk({ role: "assistant", content: "" }, null)];
  if (reply.text) parts.push(chunk({ content: reply.text }, null));
  (reply.toolCalls ?? []).forEach((call, index) => {
    parts.push(chunk({ tool_calls: [{ index, ...wireToolCall(call) }] }, null));
  });
  const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };
  parts.push(chunk({}, reply.toolCalls?.length ? "tool_calls" : "stop", { usage }));
  parts.push("data: [DONE]\n\n");
  return parts.join("");
}

export function startMockOpenAiChat(): MockOpenAiChat {
  const scenarios = new Map<string, readonly ChatTurn[]>();
  const log: LoggedRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(request) {
      const url = new URL(request.url);
      const m = /^\/s\/([^/]+)(\/.*)$/.exec(url.pathname);
      const scenario = m ? decodeURIComponent(m[1]!) : "";
      const route = m ? m[2]! : url.pathname;
      const raw = request.method === "POST" ? await request.text() : "";
      let body: any = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        /* keep the raw text */
      }
      const isChat = request.method === "POST" && route.endsWith("/chat/completions");
      const messages = Array.isArray(body?.messages) ? body.messages : [];
      const entry: LoggedRequest = {
        scenario,
        api: isChat ? "openai" : "unknown",
        method: request.method,
        path: url.pathname + url.search,
        body,
        text: flatten(messages),
        lastText: lastUserText(messages),
        turnIndex: messages.filter((msg: any) => msg?.role === "assistant").length,
        picked: "none",
      };
      log.push(entry);
      const turns = scenarios.get(scenario);
      if (!isChat || !turns) {
        return Response.json({ error: { type: "not_found", message: `mock: no route ${url.pathname}` } }, { status: 404 });
      }
      const reply = pickTurn(turns, entry);
      const model = typeof body?.model === "string" ? body.model : "mock-model";
      if (body?.stream === false) {
        const toolCalls = (reply.toolCalls ?? []).map(wireToolCall);
        const message = { role: "assistant", content: reply.text ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
        return Response.json({ id: "chatcmpl_mock", object: "chat.completion", model, choices: [{ index: 0, message, finish_reason: toolCalls.length ? "tool_calls" : "stop" }], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } });
      }
      return new Response(chatStream(reply, model), { headers: { "content-type": "text/event-stream" } });
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    port: server.port as number,
    baseUrl: (s) => `${base}/s/${encodeURIComponent(s)}/v1`,
    script: (s, turns) => void scenarios.set(s, turns),
    requests: (s) => log.filter((r) => r.scenario === s),
    stop: () => server.stop(true),
  };
}
