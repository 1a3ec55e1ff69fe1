// A mock of the OpenAI Chat Completions API for the hosts that speak it — Qwen Code
// (OPENAI_BASE_URL) and GitHub Copilot CLI with COPILOT_PROVIDER_TYPE=openai
// (COPILOT_PROVIDER_BASE_URL) — bound to 127.0.0.1 on a random port.
//
//   POST <baseUrl(scenario)>/chat/completions   stream:true → SSE `data:` chunks + [DONE];
//                                               otherwise one chat.completion object
//   GET  <baseUrl(scenario)>/models             a one-model list (some clients probe it)
//
// baseUrl(scenario) = http://127.0.0.1:PORT/s/<scenario>/v1, so concurrent cases never see each
// other's turns or log entries. Turns are picked by mock-llm.ts's `pick` (first `match` on the
// messages' text or `matchLast` on the last user message, else indexed by the number of assistant
// messages already in the request), so hook continuations take the next turn. Every request but a
// model listing, known route or not, is logged. The trap proxy stays mock-llm's: start both and
// give the host its proxyUrl.
import { flatten, pick, readScenarioRequest, type LoggedRequest, type Turn } from "./mock-llm.ts";

/**
 * A function call (arguments sent JSON-encoded in `function.arguments`, as the API does) or, with
 * `input`, a freeform custom-tool call (Copilot's apply_patch is a custom tool, not a function).
 */
export type ChatToolCall =
  | { readonly name: string; readonly arguments: unknown; readonly id?: string }
  | { readonly name: string; readonly input: string; readonly id?: string };

/** One assistant reply: text and/or tool calls, plus the usage it reports. */
export interface ChatReply {
  readonly text?: string;
  /** Sent first as `delta.reasoning_content` (the field DeepSeek-style and Qwen providers stream reasoning in). */
  readonly reasoning?: string;
  readonly toolCalls?: readonly ChatToolCall[];
  readonly promptTokens?: number;
  readonly completionTokens?: number;
}

export type ChatTurn = Turn<ChatReply>;

export const chatText = (text: string, promptTokens?: number): ChatReply => ({ text, promptTokens });
export const chatTool = (name: string, args: unknown): ChatReply => ({ toolCalls: [{ name, arguments: args }] });
export const chatCustomTool = (name: string, input: string): ChatReply => ({ toolCalls: [{ name, input }] });

export interface ChatRequest extends LoggedRequest {
  /** Texts of the request's messages with role "system". */
  readonly systemTexts: string[];
}

export interface MockOpenAiChat {
  readonly port: number;
  /** OPENAI_BASE_URL / COPILOT_PROVIDER_BASE_URL for a scenario (ends in /v1). */
  baseUrl(scenario: string): string;
  script(scenario: string, turns: ChatTurn[]): void;
  /** The chat requests a scenario received, in arrival order (other routes excluded). */
  requests(scenario: string): ChatRequest[];
  /** Everything received, any scenario or route (unknown routes get 404). */
  all(): ChatRequest[];
  stop(): void;
}

/** messagesOf(body) → the request's `messages`, or [] when there are none. */
export function messagesOf(body: any): any[] {
  return Array.isArray(body?.messages) ? body.messages : [];
}

/** messageText(message) → the text of one chat message (string content or content parts). */
export function messageText(message: any): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((part: any) => (typeof part?.text === "string" ? part.text : "")).join("\n");
  return "";
}

/** toolResultsOf(requests) → every tool result the model was shown, over all requests (deduplicated by call id). */
export function toolResultsOf(requests: readonly { readonly body: unknown }[]): string[] {
  const byId = new Map<string, string>();
  for (const q of requests)
    for (const m of messagesOf(q.body)) if (m?.role === "tool") byId.set(String(m.tool_call_id), messageText(m));
  return [...byId.values()];
}

/** toolResultFor(requests, "bash", (args) => args.command === "ls") → what the model was shown for the first such call (one session may make several). */
export function toolResultFor(
  requests: readonly { readonly body: unknown }[],
  name: string,
  matches: (args: Record<string, unknown>) => boolean,
): string | undefined {
  for (const q of requests) {
    const messages = messagesOf(q.body);
    for (const m of messages) {
      for (const call of Array.isArray(m?.tool_calls) ? m.tool_calls : []) {
        let args: unknown;
        try {
          args = JSON.parse(String(call?.function?.arguments ?? "{}"));
        } catch {
          continue;
        }
        if (
          call?.function?.name !== name ||
          args === null ||
          typeof args !== "object" ||
          !matches(args as Record<string, unknown>)
        )
          continue;
        const answer = messages.find((a) => a?.role === "tool" && a.tool_call_id === call.id);
        if (answer) return messageText(answer);
      }
    }
  }
  return undefined;
}

let counter = 0;
const nextId = (prefix: string): string => `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}`;

function usageOf(reply: ChatReply) {
  const prompt = reply.promptTokens ?? 100;
  const completion = reply.completionTokens ?? 10;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function wireToolCall(call: ChatToolCall): Record<string, unknown> {
  const id = call.id ?? nextId("call");
  if ("input" in call) return { id, type: "custom", custom: { name: call.name, input: call.input } };
  return { id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) } };
}

function chatStream(reply: ChatReply, model: string): string {
  const id = nextId("chatcmpl");
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: unknown, finishReason: string | null, extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`;
  const calls = (reply.toolCalls ?? []).map((call, index) => ({ index, ...wireToolCall(call) }));
  const parts = [chunk({ role: "assistant", content: "" }, null)];
  if (reply.reasoning) parts.push(chunk({ reasoning_content: reply.reasoning }, null));
  if (reply.text) parts.push(chunk({ content: reply.text }, null));
  if (calls.length > 0) parts.push(chunk({ tool_calls: calls }, null));
  parts.push(chunk({}, calls.length > 0 ? "tool_calls" : "stop"));
  // The usage chunk (stream_options.include_usage) has no choices; hosts read token counts here.
  parts.push(
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage: usageOf(reply) })}\n\n`,
  );
  parts.push("data: [DONE]\n\n");
  return parts.join("");
}

function chatCompletion(reply: ChatReply, model: string): unknown {
  const calls = (reply.toolCalls ?? []).map(wireToolCall);
  return {
    id: nextId("chatcmpl"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: reply.text ?? null,
          ...(reply.reasoning ? { reasoning_content: reply.reasoning } : {}),
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        },
        finish_reason: calls.length > 0 ? "tool_calls" : "stop",
      },
    ],
    usage: usageOf(reply),
  };
}

export function startMockOpenAiChat(): MockOpenAiChat {
  const scenarios = new Map<string, ChatTurn[]>();
  const log: ChatRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(request) {
      const { url, scenario, rest, body } = await readScenarioRequest(request);
      if (request.method === "GET" && rest === "/v1/models") {
        return Response.json({
          object: "list",
          data: [{ id: "mock-model", object: "model", created: 0, owned_by: "mock" }],
        });
      }
      const isChat = request.method === "POST" && rest === "/v1/chat/completions";
      const messages = messagesOf(body);
      const lastUser = [...messages].reverse().find((message) => message?.role === "user");
      const entry: ChatRequest = {
        scenario,
        api: isChat ? "openai" : "unknown",
        method: request.method,
        path: url.pathname + url.search,
        body,
        // The messages only: tool definitions would let a `match` or a check hit a tool's description.
        text: flatten(messages),
        lastText: messageText(lastUser),
        turnIndex: messages.filter((message) => message?.role === "assistant").length,
        picked: "none",
        systemTexts: messages.filter((message) => message?.role === "system").map(messageText),
      };
      log.push(entry);
      const turns = scenarios.get(scenario);
      if (!isChat || !turns) {
        return Response.json(
          { error: { type: "not_found", message: `mock: no route ${url.pathname}` } },
          { status: 404 },
        );
      }
      const model = typeof body?.model === "string" ? body.model : "mock-model";
      const reply = (await pick(turns, entry)) ?? chatText("mock: no scripted turn");
      if (body?.stream === true)
        return new Response(chatStream(reply, model), { headers: { "content-type": "text/event-stream" } });
      return Response.json(chatCompletion(reply, model));
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    port: server.port as number,
    baseUrl: (s) => `${base}/s/${encodeURIComponent(s)}/v1`,
    script: (s, turns) => void scenarios.set(s, turns),
    requests: (s) => log.filter((r) => r.scenario === s && r.api === "openai"),
    all: () => [...log],
    stop: () => void server.stop(true),
  };
}
