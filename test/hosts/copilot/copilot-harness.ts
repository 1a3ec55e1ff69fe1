// GitHub Copilot CLI (@github/copilot 1.0.102) driven offline with no login: COPILOT_OFFLINE and a
// BYOK provider pointed at the chat-completions mock on 127.0.0.1, the velesdb-memory double in
// ~/.copilot/mcp-config.json, our hooks registered by `velesdb-hooks install --client copilot`.
import { chatHostSuite } from "../../e2e/chat-host.ts";
import { afterAll, beforeAll } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  baseEnv,
  doubleArgs,
  E2E_PROJECT,
  FAKE_MCP,
  runInstaller,
  runProcess,
  type DoubleMode,
  type E2ECase,
  type Mode,
  type RunResult,
  writeFileMaking,
  chatRequests,
} from "../../e2e/harness.ts";
import { HOST_BINS } from "../../e2e/host-bins.ts";
import type { MockLlm } from "../../e2e/mock-llm.ts";
import type { ChatTurn, MockOpenAiChat } from "../../e2e/mock-openai-chat.ts";

export const COPILOT_BIN = HOST_BINS.copilot;
/** A model Copilot knows, so it offers its `edit` and `create` tools (an unknown one gets apply_patch). */
export const MODEL_WITH_EDIT_TOOLS = "gpt-4.1";
export const COPILOT_OPT_IN = { ...E2E_PROJECT, enforce_learning_loop: true };

export interface CopilotSetup {
  turns: (c: E2ECase) => ChatTurn[];
  mcp?: { mode?: DoubleMode };
  /** Runs in "hooks" mode just before our installer: the user's own files that install must leave as they were. */
  beforeInstall?: (c: E2ECase) => void;
}

export interface CopilotSuite {
  /** The trap proxy, and the URL our sessionStart freshness probe asks. */
  readonly llm: MockLlm;
  readonly chat: MockOpenAiChat;
  /** setup(name, mode, …) → a case with the double in ~/.copilot/mcp-config.json and, in "hooks" mode, our installer run. */
  setup(name: string, mode: Mode, options: CopilotSetup): E2ECase;
  /** run(c, prompt) → `copilot -p <prompt> --allow-all-tools` from the workspace, against the mock. */
  run(
    c: E2ECase,
    prompt: string,
    model?: string,
    providerUrl?: string,
    extraEnv?: Record<string, string>,
    timeoutMs?: number,
  ): Promise<RunResult>;
}

/**
 * copilotOfflineEnv(cacheHome, providerUrl, model) → what runs Copilot with no login and no
 * update check: its unpacked cache, COPILOT_OFFLINE, and a BYOK OpenAI provider at `providerUrl`.
 */
export function copilotOfflineEnv(
  cacheHome: string,
  providerUrl: string,
  model: string = MODEL_WITH_EDIT_TOOLS,
): Record<string, string> {
  return {
    XDG_CACHE_HOME: cacheHome,
    COPILOT_AUTO_UPDATE: "false",
    COPILOT_OFFLINE: "true",
    COPILOT_PROVIDER_TYPE: "openai",
    COPILOT_PROVIDER_BASE_URL: providerUrl,
    COPILOT_PROVIDER_API_KEY: "dummy",
    COPILOT_PROVIDER_MODEL_ID: model,
  };
}

export const copilotInstaller = (c: E2ECase, command: "install" | "uninstall" = "install"): string =>
  runInstaller(c, "copilot", command);

/** copilotSuite() → the mocks and a shared Copilot cache for one test file, its cases removed after. */
export function copilotSuite(): CopilotSuite {
  const mocks = chatHostSuite([COPILOT_BIN]);
  let cacheHome = ""; // Copilot unpacks ~235 MB into $XDG_CACHE_HOME/copilot: once per suite, not per case
  beforeAll(() => {
    cacheHome = fs.mkdtempSync(path.join(os.tmpdir(), "vh-e2e-copilot-cache-"));
    // The first start unpacks the cache (≈4 s); doing it once here lets the runs below share it
    // concurrently without two of them unpacking into the same directory.
    const warm = Bun.spawnSync(["node", COPILOT_BIN, "--version"], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: cacheHome,
        XDG_CACHE_HOME: cacheHome,
        COPILOT_AUTO_UPDATE: "false",
        COPILOT_OFFLINE: "true",
      },
      stdout: "pipe",
      stderr: "pipe",
      timeout: 120_000,
    });
    if (!warm.stdout.toString().includes("1.0.102"))
      throw new Error(`copilot --version: ${warm.stdout.toString()}${warm.stderr.toString()}`);
  });
  afterAll(() => {
    if (cacheHome && !process.env.VH_E2E_KEEP) fs.rmSync(cacheHome, { recursive: true, force: true });
  });
  const suite: CopilotSuite = {
    get llm() {
      return mocks.llm;
    },
    get chat() {
      return mocks.chat;
    },
    setup(name, mode, options) {
      const c = mocks.openCase(`copilot-${name}-${mode}`, options.turns, {
        projectConfig: COPILOT_OPT_IN,
        mcp: options.mcp ?? {},
      });
      const mcpArgs = doubleArgs(c.mcpLog, options.mcp?.mode);
      writeFileMaking(
        path.join(c.home, ".copilot", "mcp-config.json"),
        JSON.stringify({
          mcpServers: { "velesdb-memory": { type: "local", command: "node", args: mcpArgs, tools: ["*"] } },
        }),
      );
      if (mode === "hooks") {
        options.beforeInstall?.(c);
        copilotInstaller(c);
      }
      return c;
    },
    async run(c, prompt, model = MODEL_WITH_EDIT_TOOLS, providerUrl, extraEnv = {}, timeoutMs = 90_000) {
      const { llm, chat } = mocks;
      const env = {
        ...baseEnv(c),
        // Our postToolUse compiles an oversized bash output with this (the double's compile-stdin).
        VELESDB_MEMORY_BIN: FAKE_MCP,
        ...extraEnv,
        ...copilotOfflineEnv(cacheHome, providerUrl ?? chat.baseUrl(c.scenario), model),
      };
      const result = await runProcess(
        ["node", COPILOT_BIN, "-p", prompt, "--allow-all-tools"],
        env,
        c.workspace,
        timeoutMs,
      );
      const { requests, allRequests } = chatRequests(llm, chat, c);
      return { ...result, requests, allRequests, case: c };
    },
  };
  return suite;
}
