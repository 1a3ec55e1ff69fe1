// Qwen Code (measured on @qwen-code/qwen-code 0.24.4 under Node 22, offline against an OpenAI
// chat-completions mock; payloads in fixtures/payloads/qwen/). Claude-shaped hooks in
// ~/.qwen/settings.json, with these differences that shape this host:
// - SessionStart additionalContext lands at the END of the system message, inside
//   `<qwen:session-start-context hidden="true">\nSessionStart additional context:\n…`, with
//   `<`, `>` (and `&`) HTML-escaped. After a compaction it fires again with source "compact",
//   and its context is in the next request's system message.
// - PreToolUse `hookSpecificOutput.permissionDecision:"deny"` reaches the model as a role:"tool"
//   message whose text is our reason, verbatim (no prefix); the tool does not run.
// - Stop takes `{"decision":"block","reason":…}`: the reason becomes one role:"user" message and
//   the model takes another turn. The next Stop has `stop_hook_active: true`; the host ends the
//   turn after 8 consecutive blocks (QWEN_CODE_STOP_HOOK_BLOCK_CAP).
// - PreCompact `hookSpecificOutput.additionalContext` is appended to the compression system
//   prompt after "Additional Instructions:" (escaped as above, cut at 4000 characters), for
//   manual (/compress) and automatic compaction alike. So docs/contract.md §5.3's instructions work here,
//   as JSON — not as Claude's plain stdout.
// - Tool names are runtime ids: edit and write_file (target `file_path`), notebook_edit
//   (`notebook_path`). MCP tools are `mcp__<server>__<tool>`, also when the model reaches them
//   through the `tool_call` meta-tool (the payload names the inner tool).
// - PostToolUse fires only for a successful call; its `tool_response` is
//   `{llmContent: [{text}], returnDisplay}` (Gemini-style parts, no `type`). A failed MCP call
//   fires PostToolUseFailure instead, which we do not register: a failed recall never unlocks.
// - PostToolUse cannot replace a tool result (additionalContext only), so a replacement maps
//   to a pass; we register no shell hook.
// - The hook environment has QWEN_PROJECT_DIR, CLAUDE_PROJECT_DIR and GEMINI_PROJECT_DIR = the
//   workspace; the payload's `cwd` is the workspace too, and it is what we read.
//
// The shared first steps (tool events, the edit guard, the compression gates) are imported statically:
// they are in the entry's chunk (src/hosts/loaders.ts). The rest of an event's rules are imported
// inside the event, so a hook loads only its own event's code (docs/contract.md §12).
import { jsonAnswer, jsonDenyAnswer, type Decision, type HookAnswer } from "../core/decision.ts";
import type { HookInput } from "../core/hook-input.ts";
import { pathFieldsOf } from "./descriptors/descriptor.ts";
import { QWEN } from "./descriptors/qwen.ts";
import {
  eventsOf,
  hookSpecificOutput,
  mcpToolOf,
  SESSION_START_EVENT,
  STOP_EVENT,
  tempStateProfile,
  type HostModule,
  PRE_COMPACT_EVENT,
} from "./host.ts";
import { guardNamedEditTool, mcpResultOfLlmContent, recordEvidenceAndPass } from "./tool-events.ts";

// The installer reads this host's descriptor through this module (docs/development/architecture.md, "One descriptor per host", says why).
export { QWEN };

const QWEN_EDIT_TARGET_FIELD = pathFieldsOf(QWEN);

export function encodeQwenAnswer(wireName: string, decision: Decision): HookAnswer {
  switch (decision.kind) {
    // A pass's userMessage has no measured channel to the user here (systemMessage was not
    // measured): it stays in the stderr note.
    case "pass":
    case "replaceOutput":
      return jsonAnswer({}, decision.note);
    case "addContext":
    case "summariserInstructions":
      return jsonAnswer(hookSpecificOutput(wireName, { additionalContext: decision.text }), decision.note);
    case "continue":
      return jsonAnswer({ decision: "block", reason: decision.text }, decision.note);
    case "deny":
      // Exit 2 also blocks on Qwen (its hook docs: stderr goes to the model): the fallback should stdout fail.
      return jsonDenyAnswer(
        hookSpecificOutput(wireName, { permissionDecision: "deny", permissionDecisionReason: decision.reason }),
        decision.reason,
        decision.note,
      );
    default:
      return decision satisfies never;
  }
}

/** PostToolUse: recall evidence from a velesdb-memory MCP call (docs/contract.md §6.2). */
async function qwenPostToolUse(input: HookInput): Promise<Decision> {
  return recordEvidenceAndPass(input, {
    toolName: input.payload.tool_name,
    toolInput: input.payload.tool_input,
    toolResponse: mcpResultOfLlmContent(input.payload.tool_response),
    form: "structured",
  });
}

export const qwen: HostModule = {
  descriptor: QWEN,
  profile: { ...tempStateProfile("qwen", "qwen-", mcpToolOf(QWEN)), transcriptFormat: "qwen-jsonl" },
  payloadNamesEvent: true,
  events: eventsOf(QWEN, {
    "session-start": SESSION_START_EVENT,
    stop: STOP_EVENT,
    "pre-compact": PRE_COMPACT_EVENT,
    "pre-tool-use": {
      failure: "closed",
      run: (input) => guardNamedEditTool(input, QWEN_EDIT_TARGET_FIELD),
    },
    "post-tool-use": { failure: "open", run: qwenPostToolUse },
  }),
  encode: encodeQwenAnswer,
};
