// Claude Code (measured on 2.1.328; docs/contract.md §4.1). Quirks that shape this encoder:
// - `hookEventName` is mandatory inside hookSpecificOutput; without it the host drops the
//   whole answer silently.
// - Stop continues without an error through hookSpecificOutput.additionalContext; the host
//   sets `stop_hook_active` on the next Stop and caps 8 consecutive continuations.
// - PreCompact stdout is appended verbatim to the summariser prompt, so its pass is *no
//   output at all*: `{}` would reach the summariser as literal text.
// - PreToolUse denies through permissionDecision; exit 2 also blocks but shows the model our
//   command line instead of the reason.
// - A Bash result is `{stdout, stderr, interrupted, isImage, …}`; the model reads both streams.
//   Above its inline limit Claude keeps the whole stdout in its own file (`persistedOutputPath`)
//   and cuts `stdout`. PostToolUse `updatedToolOutput` replaces the object the model reads.
//
// The shared first steps (tool events, the edit guard, the compression gates) are imported statically:
// they are in the entry's chunk (src/hosts/loaders.ts). The rest of an event's rules are imported
// inside the event, so a hook loads only its own event's code (docs/contract.md §12).
import { diagnosticLine, jsonAnswer, jsonDenyAnswer, pass, type Decision, type HookAnswer } from "../core/decision.ts";
import type { HookInput } from "../core/hook-input.ts";
import { compressCommandOutput } from "../core/compress-gates.ts";
import { guardEditDecision } from "../core/guard.ts";
import { Utf8Literal } from "../core/json-bytes.ts";
import { isPlainObject, objectField, stringField, type Payload } from "../core/payload.ts";
import { CLAUDE } from "./descriptors/claude.ts";
import { pathFieldsOf } from "./descriptors/descriptor.ts";
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
import { evidenceOnlyPostToolUse } from "./tool-events.ts";

// The installer reads this host's descriptor through this module (docs/development/architecture.md, "One descriptor per host", says why).
export { CLAUDE };

// The edit tools the guard covers (the descriptor's), and the field that names each one's target.
const CLAUDE_EDIT_TARGET_FIELD = pathFieldsOf(CLAUDE);

/** PreToolUse: the recall-before-edit guard for Edit, Write and NotebookEdit (docs/contract.md §6.1). */
async function claudePreToolUse(input: HookInput): Promise<Decision> {
  const tool = stringField(input.payload, "tool_name");
  const field =
    tool !== undefined && Object.hasOwn(CLAUDE_EDIT_TARGET_FIELD, tool) ? CLAUDE_EDIT_TARGET_FIELD[tool] : undefined;
  if (field === undefined) return pass(input.inputProblem);
  const target = stringField(objectField(input.payload, "tool_input") ?? {}, field);
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
  if (input.payload.tool_name === CLAUDE.shellTool) return compressClaudeBash(input);
  return evidenceOnlyPostToolUse(input);
}

/** Bash: both streams compiled into one view that becomes stdout (stderr emptied: it is in the view). */
async function compressClaudeBash(input: HookInput): Promise<Decision> {
  const response = input.payload.tool_response;
  if (!isPlainObject(response)) return pass("tool_response is not an object; Bash output left as is");
  if (response.isImage === true) return pass();
  // A large payload's stdout is a Utf8Literal (BASH_OUTPUT_FIELD asks for it as bytes): the same text.
  const stdout = response.stdout;
  if (
    (typeof stdout !== "string" && !(stdout instanceof Utf8Literal)) ||
    typeof response.stderr !== "string" ||
    typeof response.interrupted !== "boolean" ||
    typeof response.isImage !== "boolean"
  ) {
    return pass("tool_response does not have the Bash shape {stdout, stderr, interrupted, isImage}; output left as is");
  }
  const persisted = response.persistedOutputPath;
  if (persisted !== undefined && typeof persisted !== "string")
    return pass("persistedOutputPath is not a string; output left as is");
  const compressed = await compressCommandOutput(input, {
    toolName: "Bash",
    command: stringField(objectField(input.payload, "tool_input") ?? {}, "command"),
    stdout: stdout instanceof Utf8Literal ? stdout.bytes : stdout,
    stderr: response.stderr,
    // Claude's own file stays where it is: it is the archive the footer names.
    saved: persisted === undefined ? undefined : { path: persisted, temporary: false },
    original: response,
    timeoutS: CLAUDE.events["post-tool-use"].timeoutS,
  });
  if (compressed.kind === "untouched") return compressed.decision;
  // The persisted keys go, so the host shows the view inline.
  const { persistedOutputPath: _path, persistedOutputSize: _size, ...kept } = response;
  return {
    kind: "replaceOutput",
    toolResponse: { ...kept, stdout: compressed.text, stderr: "" },
    note: compressed.note,
  };
}

function encodeClaudeAnswer(wireName: string, decision: Decision): HookAnswer {
  switch (decision.kind) {
    case "pass":
      if (wireName === CLAUDE.events["pre-compact"].wire)
        return { stdout: "", stderr: diagnosticLine(decision.note), exitCode: 0 };
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
  descriptor: CLAUDE,
  profile: { ...tempStateProfile("claude", "", mcpToolOf(CLAUDE)), transcriptFormat: "claude-jsonl" },
  payloadNamesEvent: true,
  events: eventsOf(CLAUDE, {
    "session-start": SESSION_START_EVENT,
    stop: STOP_EVENT,
    "pre-compact": PRE_COMPACT_EVENT,
    "pre-tool-use": { failure: "closed", run: claudePreToolUse },
    "post-tool-use": { failure: "open", run: claudePostToolUse, bytesField: BASH_OUTPUT_FIELD },
  }),
  encode: encodeClaudeAnswer,
  callerOf: async (payload, env) =>
    cursorIsCalling(payload, env) ? (await import("./claude-in-cursor.ts")).claudeInCursor : undefined,
};
