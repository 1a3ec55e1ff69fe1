// Factory Droid (@factory/cli-linux-x64 0.225.2, its `bin/droid` run directly) offline with no
// login: a BYOK `customModels` entry pointed at the chat-completions mock on 127.0.0.1. Shared by
// droid.e2e.test.ts and scripts/capture-transcripts.ts, which drive it the same way.
import { baseEnv, runProcess, type E2ECase, type RunResult } from "../../e2e/harness.ts";
import { HOST_BINS } from "../../e2e/host-bins.ts";
import type { MockOpenAiChat } from "../../e2e/mock-openai-chat.ts";

export const DROID_BIN = HOST_BINS.droid;
/** Droid names a custom model `custom:<model>-<index>`: the first (only) entry of droidCustomModel's list. */
export const DROID_MODEL = "custom:mock-model-0";

/** droidCustomModel(c, chat) → the `customModels` entry of ~/.factory/settings.json for the scenario's chat-completions URL. */
export function droidCustomModel(c: E2ECase, chat: MockOpenAiChat): Record<string, unknown> {
  return {
    model: "mock-model",
    baseUrl: chat.baseUrl(c.scenario),
    apiKey: "dummy",
    provider: "generic-chat-completion-api",
    maxOutputTokens: 4000,
  };
}

/** runDroidExec(c, prompt) → `droid exec -m <DROID_MODEL> --auto high <prompt>` from the workspace, bounded. */
export function runDroidExec(
  c: E2ECase,
  prompt: string,
): Promise<Omit<RunResult, "requests" | "allRequests" | "case">> {
  return runProcess([DROID_BIN, "exec", "-m", DROID_MODEL, "--auto", "high", prompt], baseEnv(c), c.workspace, 120_000);
}
