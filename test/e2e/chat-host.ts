// The e2e setup shared by the suites of the hosts that reach their model through OpenAI's
// chat-completions API (Copilot, Qwen Code, Factory Droid, CodeBuddy Code, Pi, OpenCode and Kilo
// Code): the two mock model APIs started once per file, and each case made the same way — a
// repository (opted in unless told otherwise), the velesdb-memory double, the chat mock playing
// the case's turns. What differs per host (where
// its model and server are written, how it runs) stays in the host's folder, test/hosts/<host>/.
import { afterAll, beforeAll } from "bun:test";
import { type CaseOptions, createCase, E2E_OPT_IN, type E2ECase, removeCase, requireFiles } from "./harness.ts";
import { type MockLlm, startMockLlm } from "./mock-llm.ts";
import { type ChatTurn, type MockOpenAiChat, startMockOpenAiChat } from "./mock-openai-chat.ts";

export interface ChatHostSuite {
  /** The Anthropic-API mock: the trap proxy the hosts' other traffic meets, and the URL our session-start freshness probe asks. */
  readonly llm: MockLlm;
  /** The chat-completions mock the host's model entry points at. */
  readonly chat: MockOpenAiChat;
  /**
   * openCase("droid-recall-hooks", turns, options) → a case made with `options` (default:
   * optedInCase()) whose scenario the chat mock plays; removed after the file's tests.
   */
  openCase(name: string, turns: (c: E2ECase) => ChatTurn[], options?: CaseOptions): E2ECase;
}

/** optedInCase(failing) → an opted-in repository whose velesdb-memory double answers structured results, or isError ones when `failing`. */
export function optedInCase(failing = false): CaseOptions {
  return { projectConfig: E2E_OPT_IN, mcp: { mode: failing ? "is-error" : "structured" } };
}

/** chatHostSuite([hostBin]) → the suite's mocks, started before the file's tests (after checking the hooks binary and `hostFiles` exist) and stopped after. */
export function chatHostSuite(hostFiles: readonly string[]): ChatHostSuite {
  let llm: MockLlm | undefined;
  let chat: MockOpenAiChat | undefined;
  const cases: E2ECase[] = [];
  beforeAll(async () => {
    requireFiles(hostFiles);
    llm = await startMockLlm();
    chat = startMockOpenAiChat();
  });
  afterAll(() => {
    llm?.stop();
    chat?.stop();
    cases.forEach(removeCase);
  });
  const started = (): { llm: MockLlm; chat: MockOpenAiChat } => {
    if (!llm || !chat) throw new Error("the mock model APIs are not started (chatHostSuite's beforeAll has not run)");
    return { llm, chat };
  };
  return {
    get llm() {
      return started().llm;
    },
    get chat() {
      return started().chat;
    },
    openCase(name, turns, options = optedInCase()) {
      const mocks = started();
      const c = createCase(mocks.llm, name, options);
      cases.push(c);
      mocks.chat.script(c.scenario, turns(c));
      return c;
    },
  };
}
