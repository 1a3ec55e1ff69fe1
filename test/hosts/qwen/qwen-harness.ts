// Qwen Code (@qwen-code/qwen-code 0.24.4, which needs Node >= 22: it runs under the pinned
// `node` package of test/e2e/package.json) offline against mock-openai-chat.ts, with the hooks
// our installer registers in the case's ~/.qwen/settings.json.
//
// Where the CLI and that node come from: host-bins.ts (VH_E2E_HOSTS, or VH_E2E_QWEN_PREFIX=<dir>
// for <dir>/node_modules, a scratch install).
import * as fs from "node:fs";
import * as path from "node:path";
import { chatHostSuite } from "../../e2e/chat-host.ts";
import {
  baseEnv,
  doubleArgs,
  runInstaller,
  runProcess,
  type DoubleMode,
  type E2ECase,
  type Mode,
  type RunResult,
} from "../../e2e/harness.ts";
import { HOST_BINS } from "../../e2e/host-bins.ts";
import type { MockLlm } from "../../e2e/mock-llm.ts";
import type { ChatTurn, MockOpenAiChat } from "../../e2e/mock-openai-chat.ts";

export const QWEN_CLI = HOST_BINS.qwenCli;
export const QWEN_NODE = HOST_BINS.qwenNode;
export const QWEN_MODEL = "mock-model";

/**
 * Qwen loads its whole bundle, then re-executes itself (process.execve) with heap flags and
 * QWEN_CODE_NO_RELAUNCH=true (chunks/llm-*.js `relaunchAppInChildProcess`, 0.24.4): every run
 * loaded the CLI twice. Set here, it loads once; the session and its hooks see the same
 * variable either way, and the heap flags are nothing these tests look at.
 */
export const QWEN_NO_RELAUNCH = { QWEN_CODE_NO_RELAUNCH: "true" } as const;

export interface QwenCaseOptions {
  /** Written as <workspace>/.velesdb-hooks.json. */
  projectConfig?: Record<string, unknown>;
  /** How the velesdb-memory double answers the recall tools (default "structured"). */
  mcpMode?: DoubleMode;
}

export const settingsPath = (c: E2ECase): string => path.join(c.home, ".qwen", "settings.json");

/**
 * The user's own settings before we install anything: the mock provider, the MCP server, and
 * Qwen's background model calls off (usage statistics leave the machine; memory extraction
 * adds model requests the scenarios did not script). `"$version": 4` keeps Qwen from
 * rewriting the file on its first run.
 */
export function userSettings(c: E2ECase, mcpMode: DoubleMode = "structured"): Record<string, unknown> {
  return {
    security: { auth: { selectedType: "openai" } },
    privacy: { usageStatisticsEnabled: false },
    memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false, enableAutoSkill: false },
    mcpServers: { "velesdb-memory": { command: "node", args: doubleArgs(c.mcpLog, mcpMode) } },
    $version: 4,
  };
}

export interface QwenSuite {
  readonly chat: MockOpenAiChat;
  /** mock-llm's trap proxy: where anything not addressed to 127.0.0.1 lands. */
  readonly trap: MockLlm;
  setup(name: string, mode: Mode, turns: (c: E2ECase) => ChatTurn[], options?: QwenCaseOptions): E2ECase;
}

/** qwenSuite() → the chat mock and mock-llm's trap proxy for one test file, its cases removed after. */
export function qwenSuite(): QwenSuite {
  const mocks = chatHostSuite([QWEN_CLI, QWEN_NODE]);
  return {
    get chat() {
      return mocks.chat;
    },
    get trap() {
      return mocks.llm;
    },
    setup(name, mode, turns, options = {}) {
      const c = mocks.openCase(`${name}-${mode}`, turns, {
        projectConfig: options.projectConfig,
        mcp: { mode: options.mcpMode },
      });
      fs.mkdirSync(path.dirname(settingsPath(c)), { recursive: true });
      fs.writeFileSync(settingsPath(c), `${JSON.stringify(userSettings(c, options.mcpMode), null, 2)}\n`);
      if (mode === "hooks") installFor(c);
      return c;
    },
  };
}

/** installFor(c, "install") → `velesdb-hooks install --client qwen` in the case's HOME, as a user runs it. */
export const installFor = (c: E2ECase, command: "install" | "uninstall" = "install"): string =>
  runInstaller(c, "qwen", command);

/** runQwen(c, chat, prompt) → `qwen -p <prompt> --yolo -o json` from the workspace, against the mock. */
export async function runQwen(
  c: E2ECase,
  chat: MockOpenAiChat,
  prompt: string,
  timeoutMs = 60_000,
): Promise<RunResult> {
  const env = {
    ...baseEnv(c),
    OPENAI_API_KEY: "sk-dummy",
    OPENAI_BASE_URL: chat.baseUrl(c.scenario),
    OPENAI_MODEL: QWEN_MODEL,
    QWEN_CODE_SUPPRESS_YOLO_WARNING: "1",
    QWEN_USAGE_STATISTICS_ENABLED: "false",
    QWEN_TELEMETRY_ENABLED: "false",
    ...QWEN_NO_RELAUNCH,
  };
  const result = await runProcess(
    [QWEN_NODE, QWEN_CLI, "-p", prompt, "--yolo", "-o", "json"],
    env,
    c.workspace,
    timeoutMs,
  );
  const requests = chat.requests(c.scenario);
  if (process.env.VH_E2E_KEEP) fs.writeFileSync(path.join(c.root, "requests.json"), JSON.stringify(requests, null, 2));
  return { ...result, requests, allRequests: chat.all().filter((q) => q.scenario === c.scenario), case: c };
}
