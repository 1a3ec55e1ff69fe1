// A mock of the Gemini API (generativelanguage, v1beta) that Gemini CLI calls, bound to
// 127.0.0.1 on a random port, plus the same kind of trap proxy as mock-llm.ts.
//
//   Gemini CLI → POST <GOOGLE_GEMINI_BASE_URL>/v1beta/models/<model>:streamGenerateContent?alt=sse
//
// (measured on @google/gemini-cli 0.61.0: the CLI keeps a path prefix in GOOGLE_GEMINI_BASE_URL,
// so each scenario gets its own `/s/<scenario>` prefix and concurrent cases never mix.)
//
// Replies are picked statelessly from the request by mock-llm.ts's pick: the first turn whose
// `match` regex matches the request's flattened text wins, else the unmatched turns indexed by
// the number of `role:"model"` entries already in `contents` (clamped to the last one).
// Every request, including unknown routes (404), is logged with its parsed body.
import {
  flatten,
  pick,
  readScenarioRequest,
  startTrapProxy,
  type LoggedRequest,
  type Turn,
} from "../../e2e/mock-llm.ts";

/** One part of a model reply: text, or a function call the CLI will run as a tool. */
export type GeminiPart =
  | { text: string; thought?: boolean }
  | { functionCall: { name: string; args: Record<string, unknown> } };

export interface GeminiReply {
  parts: GeminiPart[];
}

export type GeminiTurn = Turn<GeminiReply, GeminiRequest>;

/** A logged request as mock-llm.ts logs one; `contents` entries play the messages' part. */
export interface GeminiRequest extends Omit<LoggedRequest, "api"> {
  /** "generate" for (stream)GenerateContent, "unknown" otherwise. */
  api: "generate" | "unknown";
}

export const geminiText = (text: string): GeminiReply => ({ parts: [{ text }] });
export const geminiCall = (name: string, args: Record<string, unknown>): GeminiReply => ({
  parts: [{ functionCall: { name, args } }],
});

export interface MockGemini {
  readonly port: number;
  /** HTTP(S)_PROXY for the CLI: anything not sent to 127.0.0.1 lands here and is refused. */
  readonly proxyUrl: string;
  escaped(): string[];
  /** GOOGLE_GEMINI_BASE_URL of a scenario. */
  baseUrl(scenario: string): string;
  script(scenario: string, turns: GeminiTurn[]): void;
  requests(scenario: string): GeminiRequest[];
  stop(): void;
}

function contentsOf(body: any): any[] {
  return Array.isArray(body?.contents) ? body.contents : [];
}

/** The SSE body of one streamed reply: a single chunk with the whole content and a finish reason. */
function geminiStream(reply: GeminiReply): string {
  const chunk = {
    candidates: [{ content: { role: "model", parts: reply.parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
    modelVersion: "mock",
  };
  return `data: ${JSON.stringify(chunk)}\r\n\r\n`;
}

export async function startMockGemini(): Promise<MockGemini> {
  const scenarios = new Map<string, GeminiTurn[]>();
  const log: GeminiRequest[] = [];
  const trap = await startTrapProxy();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(request) {
      const { url, scenario, rest, body } = await readScenarioRequest(request);
      const streaming = /^\/v1beta\/models\/[^/:]+:streamGenerateContent$/.test(rest);
      const contents = contentsOf(body);
      const lastUser = [...contents].reverse().find((c) => c?.role === "user");
      const entry: GeminiRequest = {
        scenario,
        api: streaming ? "generate" : "unknown",
        method: request.method,
        path: url.pathname + url.search,
        body,
        text: flatten(body),
        lastText: flatten(lastUser),
        turnIndex: contents.filter((c) => c?.role === "model").length,
        picked: "none",
      };
      log.push(entry);
      const turns = scenarios.get(scenario);
      if (request.method !== "POST" || !streaming || !turns) {
        return new Response(
          JSON.stringify({ error: { code: 404, message: `mock: no route ${url.pathname}`, status: "NOT_FOUND" } }),
          {
            status: 404,
            headers: { "content-type": "application/json" },
          },
        );
      }
      const reply = (await pick(turns, entry)) ?? geminiText("mock: no scripted turn");
      return new Response(geminiStream(reply), { headers: { "content-type": "text/event-stream" } });
    },
  });
  const port = server.port as number;
  return {
    port,
    proxyUrl: trap.url,
    escaped: () => [...trap.escaped],
    baseUrl: (s) => `http://127.0.0.1:${port}/s/${encodeURIComponent(s)}`,
    script: (s, turns) => void scenarios.set(s, turns),
    requests: (s) => log.filter((r) => r.scenario === s),
    stop: () => {
      server.stop(true);
      trap.close();
    },
  };
}
