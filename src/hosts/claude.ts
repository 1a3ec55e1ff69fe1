// Claude Code (measured on 2.1.328; docs/contract.md §4.1). Quirks that shape this encoder:
// - `hookEventName` is mandatory inside hookSpecificOutput; without it the host drops the
//   whole answer silently.
// - Stop continues without an error through hookSpecificOutput.additionalContext; the host
//   sets `stop_hook_active` on the next Stop and caps 8 consecutive continuations.
// - PreCompact stdout is appended verbatim to the summariser prompt, so its pass is *no
//   output at all*: `{}` would reach the summariser as literal text.
// - PreToolUse denies through permissionDecision; exit 2 also blocks but shows the model our
//   command line instead of the reason.
//
// Rules are imported inside each event (with literal paths, so the release build splits them
// into chunks): a hook loads only the code of its own event (docs/contract.md §12).
import { diagnosticLine, jsonAnswer, jsonDenyAnswer, pass, type Decision, type HookAnswer } from "../core/decision.ts";
import type { HookInput } from "../core/hook-input.ts";
import { compressBashThroughGates } from "../core/compress-gates.ts";
import { objectField, stringField, type Payload } from "../core/payload.ts";
import { claudeStyleToolName, hookSpecificOutput, SESSION_START_EVENT, STOP_EVENT, tempStateProfile, type HostModule } from "./host.ts";

// The edit tools the guard covers, and the field that names each one's target (always an
// absolute path; backslashes on Windows).
const CLAUDE_EDIT_TARGET_FIELD: Readonly<Record<string, string>> = {
  Edit: "file_path",
  Write: "file_path",
  NotebookEdit: "notebook_path",
};

/** PreToolUse: the recall-before-edit guard for Edit, Write and NotebookEdit (docs/contract.md §6.1). */
async function claudePreToolUse(input: HookInput): Promise<Decision> {
  const tool = stringField(input.payload, "tool_name");
  const field = tool !== undefined && Object.hasOwn(CLAUDE_EDIT_TARGET_FIELD, tool) ? CLAUDE_EDIT_TARGET_FIELD[tool] : undefined;
  if (field === undefined) return pass(input.inputProblem);
  const target = stringField(objectField(input.payload, "tool_input") ?? {}, field);
  const { guardEditDecision } = await import("../core/guard.ts");
  return guardEditDecision(input, target === undefined ? [] : [target]);
}

/** Where a Bash result's output is: compression reads it as bytes from a large payload on. */
const BASH_OUTPUT_FIELD = ["tool_response", "stdout"] as const;

/**
 * PostToolUse: recall evidence (docs/contract.md §8 gate 1), then Bash compression. Bash is Claude's own
 * tool, never a velesdb-memory recall, so it is no evidence; the many small Bash results stop at
 * the payload-only gates, before the compressor is loaded (docs/performance/2026-12-02-io-floor.md:
 * 10.5 → ~9 ms of CPU).
 */
async function claudePostToolUse(input: HookInput): Promise<Decision> {
  if (input.payload.tool_name === "Bash") return compressBashThroughGates(input);
  return (await import("./tool-events.ts")).evidenceOnlyPostToolUse(input);
}

function encodeClaudeAnswer(wireName: string, decision: Decision): HookAnswer {
  switch (decision.kind) {
    case "pass":
      if (wireName === "PreCompact") return { stdout: "", stderr: diagnosticLine(decision.note), exitCode: 0 };
      // systemMessage is shown to the user, not the model: a pass stays a pass.
      return jsonAnswer(decision.userMessage ? { systemMessage: decision.userMessage } : {}, decision.note);
    case "addContext":
    case "continue":
      return jsonAnswer(hookSpecificOutput(wireName, { additionalContext: decision.text }), decision.note);
    case "deny":
      return jsonDenyAnswer(
        hookSpecificOutput(wireName, { permissionDecision: "deny", permissionDecisionReason: decision.reason }),
        decision.reason,
        decision.note,
      );
    case "replaceOutput":
      return jsonAnswer(hookSpecificOutput(wireName, { updatedToolOutput: decision.toolResponse }), decision.note);
    case "summariserInstructions":
      return { stdout: `${decision.text}\n`, stderr: diagnosticLine(decision.note), exitCode: 0 };
    default:
      return decision satisfies never;
  }
}

/**
 * cursorIsCalling(payload, env) → true when Cursor, not Claude Code, runs these hooks (Cursor
 * reads ~/.claude/settings.json too). Cursor puts `cursor_version` in every payload; its
 * CURSOR_VERSION variable decides only when nothing was parsed, because a Claude Code started
 * from Cursor's terminal could inherit that variable while its payloads stay Claude's.
 */
export function cursorIsCalling(payload: Payload, env: NodeJS.ProcessEnv): boolean {
  if (stringField(payload, "cursor_version") !== undefined) return true;
  return Object.keys(payload).length === 0 && (env.CURSOR_VERSION ?? "") !== "";
}

export const claude: HostModule = {
  profile: tempStateProfile("claude", "", claudeStyleToolName),
  payloadNamesEvent: true,
  events: {
    "session-start": SESSION_START_EVENT,
    stop: STOP_EVENT,
    "pre-compact": { wireName: "PreCompact", failure: "open", run: async (input) => (await import("../core/lifecycle.ts")).preCompactDecision(input) },
    "pre-tool-use": { wireName: "PreToolUse", failure: "closed", run: claudePreToolUse },
    "post-tool-use": { wireName: "PostToolUse", failure: "open", run: claudePostToolUse, bytesField: BASH_OUTPUT_FIELD },
  },
  encode: encodeClaudeAnswer,
  callerOf: async (payload, env) => (cursorIsCalling(payload, env) ? (await import("./claude-in-cursor.ts")).claudeInCursor : undefined),
};
