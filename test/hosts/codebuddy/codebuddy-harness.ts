// CodeBuddy Code (2.117.0, inside @tencent-ai/agent-sdk 0.3.201) offline with no login: a
// models.json entry pointed at the chat-completions mock on 127.0.0.1, run live with stdin held
// open (plain `-p "PROMPT"` exits before it sends a Stop continuation). Shared by
// codebuddy.e2e.test.ts and scripts/capture-transcripts.ts, which drive it the same way.
import { spawn } from "node:child_process";
import * as path from "node:path";
import { baseEnv, writeFileMaking, type E2ECase, type RunResult } from "../../e2e/harness.ts";
import { HOST_BINS } from "../../e2e/host-bins.ts";
import type { MockOpenAiChat } from "../../e2e/mock-openai-chat.ts";

export const CODEBUDDY_BIN = HOST_BINS.codebuddy;

/** writeCodebuddyModel(c, chat) → ~/.codebuddy/models.json naming "mock-model", the scenario's chat-completions URL. */
export function writeCodebuddyModel(c: E2ECase, chat: MockOpenAiChat): void {
  const model = {
    id: "mock-model",
    name: "mock-model",
    vendor: "OpenAI",
    apiKey: "dummy",
    url: `${chat.baseUrl(c.scenario)}/chat/completions`,
    maxInputTokens: 100000,
    maxOutputTokens: 4000,
    supportsToolCall: true,
    supportsImages: false,
  };
  writeFileMaking(path.join(c.home, ".codebuddy", "models.json"), JSON.stringify({ models: [model] }));
}

/**
 * The environment of a run: the case's, no login, no marketplace clone, no telemetry (measured:
 * reports to www.codebuddy.ai/v2/report without DISABLE_TELEMETRY), and no remote product
 * config (the bundle's CloudProductProvider fetches <endpoint>/v3/config unless
 * CODEBUDDY_REMOTE_CONFIG_DISABLED is set; a slow run once reached for www.codebuddy.ai).
 */
export function codebuddyEnv(c: E2ECase): Record<string, string> {
  return {
    ...baseEnv(c),
    CODEBUDDY_API_KEY: "dummy",
    CODEBUDDY_SKIP_BUILTIN_MARKETPLACE: "1",
    DISABLE_TELEMETRY: "1",
    CODEBUDDY_REMOTE_CONFIG_DISABLED: "1",
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * runCodebuddyLive(c, chat, prompt) → a live session: `codebuddy -p -y --input-format
 * stream-json`, the prompt as one stream-json user message, stdin held open until the mock has
 * seen no request for `quietMs` (so a Stop continuation can run), then closed; the process group
 * is killed if it outlives the bound (then timedOut).
 */
export async function runCodebuddyLive(
  c: E2ECase,
  chat: MockOpenAiChat,
  prompt: string,
  quietMs = 8000,
): Promise<Omit<RunResult, "requests" | "allRequests" | "case">> {
  const started = Date.now();
  const child = spawn(
    "node",
    [
      CODEBUDDY_BIN,
      "-p",
      "-y",
      "--model",
      "mock-model",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--verbose",
    ],
    {
      cwd: c.workspace,
      env: codebuddyEnv(c),
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  child.stdin!.write(
    `${JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "text", text: prompt }] } })}\n`,
  );
  const killGroup = (): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  };
  let timedOut = false;
  try {
    // Wait for the first request, then for quiet.
    let count = 0;
    let stableSince = Date.now();
    while (Date.now() - started < 150_000) {
      const now = chat.requests(c.scenario).length;
      if (now !== count) {
        count = now;
        stableSince = Date.now();
      } else if (count > 0 && Date.now() - stableSince >= quietMs) break;
      await sleep(250);
    }
    child.stdin!.end();
    const bound = sleep(20_000).then(() => "bound" as const);
    if ((await Promise.race([exited, bound])) === "bound") timedOut = true;
  } finally {
    killGroup();
  }
  const { code, signal } = await exited;
  return { exitCode: code, signal, timedOut, stdout, stderr, durationMs: Date.now() - started };
}
